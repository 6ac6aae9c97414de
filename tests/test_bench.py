import json
import os

import pytest

from zlctool import bench


def rec(kernel, zlc, nodes, sys, pct=90, threads=2, rep=0, miss=100, skip=0):
    return dict(kernel=kernel, zlc=zlc, nodes=nodes, mem_pct=pct, threads=threads, rep=rep,
                mib=1800, sys=sys, user=0.1, real=sys / 2, zlc_skip=skip,
                zlc_mark_full=0, numa_miss=miss)


RECORDS = (
    [rec("base", "n/a", 1, s, miss=0, rep=i) for i, s in enumerate([1.0, 1.1, 0.9])] +
    [rec("patched", "off", 1, s, miss=0, rep=i) for i, s in enumerate([1.0, 1.0, 1.2])] +
    [rec("patched", "on", 1, s, miss=0, rep=i) for i, s in enumerate([1.0, 0.95, 1.05])] +
    [rec("base", "n/a", 64, s, rep=i) for i, s in enumerate([3.5, 3.4, 3.6])] +
    [rec("patched", "off", 64, s, rep=i) for i, s in enumerate([2.5, 2.6, 2.4])] +
    [rec("patched", "on", 64, s, rep=i, skip=10) for i, s in enumerate([1.1, 1.0, 1.2])]
)


def test_headline_ratios_use_medians():
    h = bench.headline(RECORDS)
    assert h["nodes"] == 64
    assert h["on/off"] == pytest.approx(1.1 / 2.5)
    assert h["on/floor"] == pytest.approx(1.1 / 1.0)
    assert h["base/floor"] == pytest.approx(3.5 / 1.0)
    assert h["on/off 1 node"] == pytest.approx(1.0 / 1.0)
    assert "no spill row" not in h      # every multi-node row spilled


def test_no_spill_row_is_found():
    extra = ([rec("patched", "off", 4, 0.5, pct=12, miss=0, rep=i) for i in range(3)] +
             [rec("patched", "on", 4, 0.51, pct=12, miss=0, rep=i) for i in range(3)])
    h = bench.headline(RECORDS + extra)
    assert h["no spill row"] == "4 nodes, 12%, 2 threads"
    assert h["on/off no spill"] == pytest.approx(0.51 / 0.5)


def test_table_has_all_variants_and_delta():
    text = bench.table(RECORDS)
    lines = text.splitlines()
    assert len(lines) == 3                       # header, 1 node, 64 nodes
    row64 = [l for l in lines if l.lstrip().startswith("64")][0]
    assert "3.50" in row64 and "2.50" in row64 and "1.10" in row64
    assert "-1.40" in row64                      # on - off
    assert "56.0%" in row64                      # (2.5 - 1.1) / 2.5


def test_table_marks_missing_variants():
    only_base = [r for r in RECORDS if r["kernel"] == "base"]
    row = bench.table(only_base).splitlines()[1]
    assert row.count(" - ") >= 2


def test_parse_console_records_rows():
    lines = [
        "zlc-guest: running /cmd",
        "zlc-row pct=90 threads=2",
        "# zlc-run " + json.dumps(dict(zlc="off", rep=0, mib=1800, threads=2, sys=1.5, user=0.2,
                                       real=1.0, zlc_skip=0, zlc_mark_full=0, numa_miss=5)),
        "[   12.3] random kernel line",
        "# zlc-run " + json.dumps(dict(zlc="on", rep=0, mib=1800, threads=2, sys=1.2, user=0.2,
                                       real=0.9, zlc_skip=77, zlc_mark_full=3, numa_miss=5)),
    ]
    recs = bench.parse_console(lines, "patched", 64)
    assert [r["zlc"] for r in recs] == ["off", "on"]
    assert recs[1]["zlc_skip"] == 77 and recs[1]["mem_pct"] == 90 and recs[1]["nodes"] == 64
    for key in ("kernel", "zlc", "nodes", "mem_pct", "threads", "rep", "sys", "user", "real",
                "zlc_skip", "numa_miss"):
        assert key in recs[0]


def test_guest_script_warms_up_then_runs_each_row():
    s = bench.guest_script([12, 90], [1, 2], 5, "compare").splitlines()
    assert "MemAvailable" in s[0]
    assert s[1].startswith("zonelist_cache_memhog -m asis -s $((avail * 90 / 100))")
    assert s.count("echo 'zlc-row pct=90 threads=2'") == 1
    assert "zonelist_cache_memhog -m compare -f -s $((avail * 12 / 100)) -t 1 -r 5 -j || exit 1" in s
    assert len([l for l in s if l.startswith("echo 'zlc-row")]) == 4
    # The headline rows (90%) also run placed passes; the base kernel has no -P.
    assert "zonelist_cache_memhog -m compare -P -f -s $((avail * 90 / 100)) -t 2 -r 5 -j " \
           "|| exit 1" in s
    assert not any("-P" in l for l in s if "avail * 12 / 100" in l)
    assert not any("-P" in l for l in bench.guest_script([90], [2], 5, "asis").splitlines())


def test_passes_per_row_counts_placed_passes():
    assert bench.passes_per_row(90, 2, "compare") == 6       # off, on, placed
    assert bench.passes_per_row(12, 2, "compare") == 4       # off, on
    assert bench.passes_per_row(90, 2, "asis") == 2          # base kernel


PLACED = [rec("patched", "placed", 64, s, rep=i, miss=3) for i, s in enumerate([1.04, 1.0, 1.08])]


def test_placed_ratios_split_on_floor():
    # on/floor = on/placed * placed/floor: the walk's share and the topology's.
    h = bench.headline(RECORDS + PLACED)
    assert h["on/placed"] == pytest.approx(1.1 / 1.04)
    assert h["placed/floor"] == pytest.approx(1.04 / 1.0)
    assert h["on/placed"] * h["placed/floor"] == pytest.approx(h["on/floor"])
    text = bench.headline_text(h)
    assert "on/placed at 64 nodes:     %.3f" % (1.1 / 1.04) in text
    assert "placed/floor at 64 nodes:  1.040" in text
    # The other floor: the base kernel's own 1-node boots (median 1.0 here too,
    # so it is checked below with a base floor that differs).
    recs = [dict(r, sys=r["sys"] * 1.25) if (r["kernel"], r["nodes"]) == ("base", 1) else r
            for r in RECORDS]
    assert bench.headline(recs)["on/base floor"] == pytest.approx(1.1 / 1.25)
    assert "on/base-floor at 64 nodes: %.3f" % (1.1 / 1.25) in bench.headline_text(
        bench.headline(recs))
    # Without placed passes the ratios are n/a, not made up.
    h = bench.headline(RECORDS)
    assert h["on/placed"] is None and "on/placed at 64 nodes:     n/a" in bench.headline_text(h)


def test_parse_console_keeps_placed_passes():
    lines = ["zlc-row pct=90 threads=2",
             "# zlc-run " + json.dumps(dict(zlc="placed", rep=1, mib=1800, threads=2, sys=1.0,
                                            user=0.2, real=0.8, zlc_skip=4, zlc_mark_full=0,
                                            numa_miss=9))]
    (r,) = bench.parse_console(lines, "patched", 64)
    assert bench.variant(r) == "placed" and r["numa_miss"] == 9


def test_report_writes_json_atomically_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    bench.report(RECORDS, {"quick": True}, str(tmp_path))
    data = json.loads((tmp_path / "bench.json").read_text())
    assert len(data["records"]) == len(RECORDS)
    assert data["headline"]["nodes"] == 64
    assert not (tmp_path / "bench.json.partial").exists()
    assert (tmp_path / "bench.png").read_bytes()[:4] == b"\x89PNG"
    assert "on/off at 64 nodes" in (tmp_path / "bench.txt").read_text()


def test_boot_order_is_abba_over_rounds():
    order = bench.boot_order(dict(nodes=[1, 64], rounds=3))
    one = [(1, "base"), (1, "patched"), (64, "base"), (64, "patched")]
    assert [(n, k) for r, n, k in order if r == 0] == one
    assert [(n, k) for r, n, k in order if r == 1] == one[::-1]
    assert [(n, k) for r, n, k in order if r == 2] == one
    assert len(order) == 12
    assert bench.boot_order(dict(nodes=[4]))[-1] == (0, 4, "patched")   # one round by default


def test_floor_ratios_compare_cost_per_gib():
    # The 64-node guest left the hog less memory: the same seconds for
    # fewer GiB is a dearer GiB, and the ratio must say so.
    recs = [dict(r, mib=1600) if r["nodes"] == 64 else r for r in RECORDS]
    h = bench.headline(recs)
    assert h["on/floor"] == pytest.approx((1.1 / 1600) / (1.0 / 1800))
    assert h["on/off"] == pytest.approx(1.1 / 2.5)          # same guest: unchanged


def test_headline_spread_over_rounds():
    # Round 0 and round 1 disagree; the headline pools them and the spread
    # keeps each round's own ratio.
    r0 = [dict(r, round=0) for r in RECORDS]
    r1 = [dict(r, round=1, sys=r["sys"] * (2.0 if r["zlc"] == "on" and r["nodes"] == 64 else 1.0))
          for r in RECORDS]
    h = bench.headline(r0 + r1)
    med, lo, hi = h["spread"]["on/floor"]
    assert lo == pytest.approx(1.1) and hi == pytest.approx(2.2)
    assert med == pytest.approx(1.65)
    assert "rounds: min 1.100, median 1.650, max 2.200" in bench.headline_text(h)
    assert "spread" not in bench.headline(r0)                 # one round: nothing to spread


def test_one_node_ratio_over_all_rows():
    extra = ([rec("patched", "off", 1, 1.0, pct=12, miss=0, rep=i) for i in range(3)] +
             [rec("patched", "on", 1, 1.04, pct=12, miss=0, rep=i) for i in range(3)] +
             [rec("patched", "off", 1, 1.0, pct=38, miss=0, rep=i) for i in range(3)] +
             [rec("patched", "on", 1, 0.99, pct=38, miss=0, rep=i) for i in range(3)])
    h = bench.headline(RECORDS + extra)
    # rows 12%: 1.04, 38%: 0.99, 90%: 1.0 -> median 1.0
    assert h["on/off 1 node, all rows"] == pytest.approx(1.0)


def test_report_can_be_remade_from_json(tmp_path):
    pytest.importorskip("matplotlib")
    bench.report(RECORDS, {"quick": True}, str(tmp_path))
    out = tmp_path / "again"
    assert bench.main(["--from-json", str(tmp_path / "bench.json"), "--out", str(out)]) == 0
    assert (out / "bench.txt").read_text() == (tmp_path / "bench.txt").read_text()


def test_icount_headline_uses_elapsed_time():
    # real is made independent of sys here, so a ratio taken from the wrong
    # field cannot come out right.
    recs = [dict(r, real=r["real"] * (3.0 if r["nodes"] == 64 else 1.0)) for r in RECORDS]
    h = bench.headline(recs, field="real")
    assert h["field"] == "real"
    assert h["on/floor"] == pytest.approx(3.0 * 1.1 / 1.0)
    assert bench.headline(recs)["on/floor"] == pytest.approx(1.1 / 1.0)
    assert "instructions executed" in bench.headline_text(h)
    assert "system time" in bench.headline_text(bench.headline(recs))


def test_icount_table_reports_instructions_per_gib():
    text = bench.icount_table(RECORDS)
    rows = {int(line.split()[0]): line for line in text.splitlines()[1:]}
    # real = sys / 2 in RECORDS; 1800 MiB per pass: median real * 1024 / 1800
    assert "%.4f" % (0.55 * 1024 / 1800) in rows[64]            # on: median 1.1 / 2
    assert rows[64].rstrip().endswith("%.3f" % (1.1 / 2.5))
    assert rows[1].split("|")[1].strip() == "%.4f" % (0.5 * 1024 / 1800)


def test_icount_table_has_placed_column():
    text = bench.icount_table(RECORDS + PLACED)
    assert "placed Ginsn/GiB" in text.splitlines()[0]
    row = [l for l in text.splitlines()[1:] if int(l.split()[0]) == 64][0]
    assert row.split("|")[4].strip() == "%.4f" % (0.52 * 1024 / 1800)   # median 1.04 / 2
    row1 = [l for l in text.splitlines()[1:] if int(l.split()[0]) == 1][0]
    assert row1.split("|")[4].strip() == "-"


def test_icount_report_writes_its_own_files(tmp_path):
    bench.report(RECORDS, {"icount": True}, str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["icount.json", "icount.txt"]
    data = json.load(open(tmp_path / "icount.json"))
    assert data["headline"]["field"] == "real"
    assert "Ginsn/GiB" in (tmp_path / "icount.txt").read_text()


def test_icount_refuses_hw():
    with pytest.raises(SystemExit):
        bench.main(["--icount", "--hw"])
