"""zlctool.report: tables, ratios, plots and comparisons of named runs."""

import json
import os

import pytest

from zlctool import report


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
    h = report.headline(RECORDS)
    assert h["nodes"] == 64
    assert h["on/off"] == pytest.approx(1.1 / 2.5)
    assert h["on/floor"] == pytest.approx(1.1 / 1.0)
    assert h["base/floor"] == pytest.approx(3.5 / 1.0)
    assert h["on/off 1 node"] == pytest.approx(1.0 / 1.0)
    assert "no spill row" not in h      # every multi-node row spilled


def test_no_spill_row_is_found():
    extra = ([rec("patched", "off", 4, 0.5, pct=12, miss=0, rep=i) for i in range(3)] +
             [rec("patched", "on", 4, 0.51, pct=12, miss=0, rep=i) for i in range(3)])
    h = report.headline(RECORDS + extra)
    assert h["no spill row"] == "4 nodes, 12%, 2 threads"
    assert h["on/off no spill"] == pytest.approx(0.51 / 0.5)


def test_table_has_all_variants_and_delta():
    text = report.table(RECORDS)
    lines = text.splitlines()
    assert len(lines) == 3                       # header, 1 node, 64 nodes
    row64 = [l for l in lines if l.lstrip().startswith("64")][0]
    assert "3.50" in row64 and "2.50" in row64 and "1.10" in row64
    assert "-1.40" in row64                      # on - off
    assert "56.0%" in row64                      # (2.5 - 1.1) / 2.5


def test_table_marks_missing_variants():
    only_base = [r for r in RECORDS if r["kernel"] == "base"]
    row = report.table(only_base).splitlines()[1]
    assert row.count(" - ") >= 2


PLACED = [rec("patched", "placed", 64, s, rep=i, miss=3) for i, s in enumerate([1.04, 1.0, 1.08])]


def test_placed_ratios_split_on_floor():
    # on/floor = on/placed * placed/floor: the walk's share and the topology's.
    h = report.headline(RECORDS + PLACED)
    assert h["on/placed"] == pytest.approx(1.1 / 1.04)
    assert h["placed/floor"] == pytest.approx(1.04 / 1.0)
    assert h["on/placed"] * h["placed/floor"] == pytest.approx(h["on/floor"])
    text = report.headline_text(h)
    assert "on/placed at 64 nodes:     %.3f" % (1.1 / 1.04) in text
    assert "placed/floor at 64 nodes:  1.040" in text
    # The other floor: the base kernel's own 1-node boots (median 1.0 here too,
    # so it is checked below with a base floor that differs).
    recs = [dict(r, sys=r["sys"] * 1.25) if (r["kernel"], r["nodes"]) == ("base", 1) else r
            for r in RECORDS]
    assert report.headline(recs)["on/base floor"] == pytest.approx(1.1 / 1.25)
    assert "on/base-floor at 64 nodes: %.3f" % (1.1 / 1.25) in report.headline_text(
        report.headline(recs))
    # Without placed passes the ratios are n/a, not made up.
    h = report.headline(RECORDS)
    assert h["on/placed"] is None and "on/placed at 64 nodes:     n/a" in report.headline_text(h)


def test_floor_ratios_compare_cost_per_gib():
    # The 64-node guest left the hog less memory: the same seconds for
    # fewer GiB is a dearer GiB, and the ratio must say so.
    recs = [dict(r, mib=1600) if r["nodes"] == 64 else r for r in RECORDS]
    h = report.headline(recs)
    assert h["on/floor"] == pytest.approx((1.1 / 1600) / (1.0 / 1800))
    assert h["on/off"] == pytest.approx(1.1 / 2.5)          # same guest: unchanged


def test_headline_spread_over_rounds():
    # Round 0 and round 1 disagree; the headline pools them and the spread
    # keeps each round's own ratio.
    r0 = [dict(r, round=0) for r in RECORDS]
    r1 = [dict(r, round=1, sys=r["sys"] * (2.0 if r["zlc"] == "on" and r["nodes"] == 64 else 1.0))
          for r in RECORDS]
    h = report.headline(r0 + r1)
    med, lo, hi = h["spread"]["on/floor"]
    assert lo == pytest.approx(1.1) and hi == pytest.approx(2.2)
    assert med == pytest.approx(1.65)
    assert "rounds: min 1.100, median 1.650, max 2.200" in report.headline_text(h)
    assert "spread" not in report.headline(r0)                 # one round: nothing to spread


def test_one_node_ratio_over_all_rows():
    extra = ([rec("patched", "off", 1, 1.0, pct=12, miss=0, rep=i) for i in range(3)] +
             [rec("patched", "on", 1, 1.04, pct=12, miss=0, rep=i) for i in range(3)] +
             [rec("patched", "off", 1, 1.0, pct=38, miss=0, rep=i) for i in range(3)] +
             [rec("patched", "on", 1, 0.99, pct=38, miss=0, rep=i) for i in range(3)])
    h = report.headline(RECORDS + extra)
    # rows 12%: 1.04, 38%: 0.99, 90%: 1.0 -> median 1.0
    assert h["on/off 1 node, all rows"] == pytest.approx(1.0)


def test_icount_headline_uses_elapsed_time():
    # real is made independent of sys here, so a ratio taken from the wrong
    # field cannot come out right.
    recs = [dict(r, real=r["real"] * (3.0 if r["nodes"] == 64 else 1.0)) for r in RECORDS]
    h = report.headline(recs, field="real")
    assert h["field"] == "real"
    assert h["on/floor"] == pytest.approx(3.0 * 1.1 / 1.0)
    assert report.headline(recs)["on/floor"] == pytest.approx(1.1 / 1.0)
    assert "instructions executed" in report.headline_text(h)
    assert "system time" in report.headline_text(report.headline(recs))


def test_icount_table_reports_instructions_per_gib():
    text = report.icount_table(RECORDS)
    rows = {int(line.split()[0]): line for line in text.splitlines()[1:]}
    # real = sys / 2 in RECORDS; 1800 MiB per pass: median real * 1024 / 1800
    assert "%.4f" % (0.55 * 1024 / 1800) in rows[64]            # on: median 1.1 / 2
    assert rows[64].rstrip().endswith("%.3f" % (1.1 / 2.5))
    assert rows[1].split("|")[1].strip() == "%.4f" % (0.5 * 1024 / 1800)


def test_icount_table_has_placed_column():
    text = report.icount_table(RECORDS + PLACED)
    assert "placed Ginsn/GiB" in text.splitlines()[0]
    row = [l for l in text.splitlines()[1:] if int(l.split()[0]) == 64][0]
    assert row.split("|")[4].strip() == "%.4f" % (0.52 * 1024 / 1800)   # median 1.04 / 2
    row1 = [l for l in text.splitlines()[1:] if int(l.split()[0]) == 1][0]
    assert row1.split("|")[4].strip() == "-"


META = {"name": "t", "date": "2026-11-23 02:00 UTC", "plan": {"nodes": [1, 64]},
        "provenance": {"kernel": "6.12.117-zlc", "series": "abc1234", "qemu": "QEMU 7.2",
                       "host_cpu": "Test CPU"}}


def test_write_run_writes_json_atomically_with_report_and_plot(tmp_path):
    text = report.write_run(str(tmp_path), RECORDS, META)
    data = json.loads((tmp_path / "run.json").read_text())
    assert len(data["records"]) == len(RECORDS) and data["headline"]["nodes"] == 64
    assert data["meta"]["provenance"]["series"] == "abc1234"
    assert not (tmp_path / "run.json.partial").exists()
    assert (tmp_path / "plot.png").read_bytes()[:4] == b"\x89PNG"
    txt = (tmp_path / "report.txt").read_text()
    assert txt == text + "\n"
    assert txt.startswith("run t: 2026-11-23 02:00 UTC, timed")
    assert "kernel 6.12.117-zlc, series abc1234, QEMU 7.2" in txt
    assert "on/off at 64 nodes" in txt


def test_a_counted_run_reports_instructions(tmp_path):
    report.write_run(str(tmp_path), RECORDS, dict(META, icount=True))
    data = json.loads((tmp_path / "run.json").read_text())
    assert data["headline"]["field"] == "real"
    assert "Ginsn/GiB" in (tmp_path / "report.txt").read_text()


def test_remake_gives_the_same_report(tmp_path):
    report.write_run(str(tmp_path), RECORDS, META)
    before = (tmp_path / "report.txt").read_text()
    (tmp_path / "report.txt").unlink()
    assert report.main([str(tmp_path), "--remake"]) == 0
    assert (tmp_path / "report.txt").read_text() == before


def test_load_run_says_what_a_named_run_is(tmp_path):
    with pytest.raises(ValueError, match="no run.json"):
        report.load_run(str(tmp_path))


def test_welch_t_test():
    assert report.significant([1.0, 1.01, 0.99], [2.0, 2.01, 1.99])
    assert not report.significant([1.0, 1.5, 0.5], [1.1, 0.6, 1.6])
    assert report.significant([1.0], [2.0]) is None
    assert report.significant([1.0, 1.0], [1.0, 1.0]) is None
    assert report.significant([1.0, 1.0], [2.0, 2.0]) is None       # no spread: cannot tell
    # df about 1: t = 6 is not enough (12.7 is needed), though it is for df 2's 4.3
    assert not report.significant([1.0, 1.1], [1.6, 1.7])


def test_compare_two_runs_mmtests_style(tmp_path):
    a = {"meta": dict(META, name="a"), "records": RECORDS}
    faster = [dict(r, sys=r["sys"] * (0.5 if r["zlc"] == "on" and r["nodes"] == 64 else 1.0))
              for r in RECORDS]
    b = {"meta": dict(META, name="b"), "records": faster}
    text = report.compare([("a", a), ("b", b)]).splitlines()
    assert "change against a" in text[0] and text[1].split() == ["a", "b"]
    row = next(l for l in text if l.startswith("Amean") and "on 64n 90% 2thr" in l)
    # a: mean 1.1 s per 1800 MiB; b: half, a significant -50%.
    assert "%.4f" % (1.1 * 1024 / 1800) in row and "*  -50.00%*" in row
    same = next(l for l in text if l.startswith("Amean") and "off 64n 90% 2thr" in l)
    assert "   0.00% " in same and "*" not in same
    assert any(l.startswith("on/off ") for l in text)


def test_compare_one_run_puts_its_variants_side_by_side():
    text = report.compare([("a", {"meta": META, "records": RECORDS})]).splitlines()
    assert text[1].split() == ["base", "off", "on"]
    row = next(l for l in text if l.startswith("Amean") and "64n 90% 2thr" in l)
    assert row.count("%") == 4           # 90% and one change per column


def test_compare_puts_the_kernels_of_two_bases_side_by_side():
    old = {"meta": dict(META, icount=True, provenance=dict(META["provenance"], base="6.12",
                                                         kernel="6.12.117-gabc")),
           "records": RECORDS}
    # The newer base costs twice the older one unpatched at 64 nodes.
    newer = [dict(r, real=r["real"] * (2 if r["kernel"] == "base" and r["nodes"] == 64 else 1))
             for r in RECORDS]
    new = {"meta": dict(META, icount=True, provenance=dict(META["provenance"], base="7.3",
                                                         kernel="7.3.4-gdef")),
           "records": newer}
    text = report.compare([("old", old), ("new", new)])
    table = text[text.index("kernels side by side"):].splitlines()
    assert "against 7.3.4 unpatched (new)" in table[0]
    # Per row: 64 nodes' median (min..max), vs, one node's median (min..max), /1 node.
    rows = {l.split(" (")[0]: l.split()[-6:] for l in table[2:]}
    assert list(rows) == ["6.12.117 unpatched", "7.3.4 unpatched", "6.12.117 series, cache on",
                          "7.3.4 series, cache on"]
    # Median real per GiB: base 64n 3.5/2 s a 1800 MiB, against 1.0/2 on one node.
    per_gib = 3.5 / 2 * 1024 / 1800
    assert rows["6.12.117 unpatched"][0] == "%.4f" % per_gib
    assert rows["6.12.117 unpatched"][2] == "0.500" and rows["7.3.4 unpatched"][2] == "1.000"
    assert rows["7.3.4 unpatched"][5] == "%.3f" % (2 * 3.5 / 1.0)
    assert rows["7.3.4 series, cache on"][2] == "%.3f" % (1.1 / 7.0)
    # Runs of one base are compared as before, without the table.
    assert "kernels side by side" not in report.compare([("a", new), ("b", new)])
    # Nor without a base to tell them apart; and with no node count in common, one line.
    plain = {"meta": dict(META, icount=True), "records": RECORDS}
    assert "kernels side by side" not in report.compare([("a", plain), ("b", new)])
    assert "no node count in common" in report.kernels_table(
        [("a", old), ("b", {"meta": new["meta"], "records": [dict(r, nodes=2) for r in RECORDS]})],
        "real")


def test_compare_refuses_to_mix_counted_and_timed():
    with pytest.raises(ValueError, match="counted run"):
        report.compare([("a", {"meta": META, "records": RECORDS}),
                        ("b", {"meta": dict(META, icount=True), "records": RECORDS})])


def test_a_row_that_spilled_with_the_cache_off_is_not_a_no_spill_row():
    # At 4 nodes, 12%: on never missed but one off pass did (its threads
    # overlapped and the other passes' did not): not a row without spill.
    extra = ([rec("patched", "off", 4, 0.5, pct=12, miss=m, rep=i) for i, m in enumerate([0, 9])] +
             [rec("patched", "on", 4, 0.51, pct=12, miss=0, rep=i) for i in range(2)])
    assert "no spill row" not in report.headline(RECORDS + extra)


def test_each_ratio_takes_its_own_floor():
    # Distinct 1-node medians: base 0.9, off 1.2, on 1.0; placed 1.05 at 64.
    recs = ([rec("base", "n/a", 1, 0.9, miss=0, rep=i) for i in range(3)] +
            [rec("patched", "off", 1, 1.2, miss=0, rep=i) for i in range(3)] +
            [rec("patched", "on", 1, 1.0, miss=0, rep=i) for i in range(3)] +
            [rec("base", "n/a", 64, 3.6, rep=i) for i in range(3)] +
            [rec("patched", "off", 64, 2.4, rep=i) for i in range(3)] +
            [rec("patched", "on", 64, 1.1, rep=i) for i in range(3)] +
            [rec("patched", "placed", 64, 1.05, rep=i) for i in range(3)])
    h = report.headline(recs)
    assert h["on/floor"] == pytest.approx(1.1 / 1.0)
    assert h["off/floor"] == pytest.approx(2.4 / 1.2)
    assert h["base/floor"] == pytest.approx(3.6 / 0.9)
    assert h["placed/floor"] == pytest.approx(1.05 / 1.0)
    assert h["on/base floor"] == pytest.approx(1.1 / 0.9)
    assert h["on/off 1 node"] == pytest.approx(1.0 / 1.2)
    assert h["on/placed"] == pytest.approx(1.1 / 1.05)


def test_report_sits_below_what_it_reports_on():
    # zlctool.workloads reports through this module; make compare, which
    # takes both kinds of run, is zlctool.compare, above the two.
    import ast
    tree = ast.parse(open(report.__file__).read())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {f"{n.module or ''}.{a.name}".lstrip(".") for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) for a in n.names}
    assert not {m for m in imported if m.split(".")[-1] in ("workloads", "bench", "compare")}


def test_remake_and_compare_of_a_run_with_both(tmp_path, capsys):
    from zlctool import compare, workloads
    report.write_run(str(tmp_path), RECORDS, META)
    workloads.write(str(tmp_path), {}, {"name": "t"})
    before = (tmp_path / "report.txt").read_text()
    (tmp_path / "report.txt").unlink()
    (tmp_path / "headline.md").unlink()
    assert compare.main(["--remake", str(tmp_path)]) == 0
    assert (tmp_path / "report.txt").read_text() == before
    assert (tmp_path / "headline.md").is_file()


# --- the reference report (runs with topologies) -------------------------------

def ref_rec(kernel, zlc, topology, real, nodes=8, pct=90, rnd=0, miss=0, lower=0, skip=-1,
            local=236000, other=26144, kswapd=0, stall=0):
    """A pass of 1024 MiB (262,144 pages), as the hog's -j line gives it."""
    return dict(kernel=kernel, zlc=zlc, nodes=nodes, topology=topology, round=rnd, mem_pct=pct,
                threads=2, rep=0, mib=1024, sys=real, user=0.0, real=real, zlc_skip=skip,
                zlc_mark_full=0, numa_miss=miss, pageoutrun=kswapd, numa_local=local,
                numa_other=other, allocstall=stall, lower_zone_pages=lower)


def test_pairs_gives_the_all_pairs_range():
    med, lo, hi = report.pairs([2.0, 3.0], [1.0, 2.0])
    assert (med, lo, hi) == (2.5 / 1.5, 1.0, 3.0)
    assert report.pairs([], [1.0]) is None


def test_a_placed_kind_that_walked_is_no_reference():
    recs = [ref_rec("patched", "on", "nps4", 2.2), ref_rec("patched", "on", "nps4", 2.0),
            ref_rec("patched", "placed", "nps4", 2.0),
            # One page off its node is a walk.
            ref_rec("patched", "placed", "nps4", 1.9, miss=1),
            ref_rec("base", "n/a", "nps4", 2.1), ref_rec("base", "placed", "nps4", 2.0)]
    row = report.reference(recs)["nps4"]
    assert row["placed ok"] == {"placed": False, "base placed": True}
    assert row["on/placed"] is None and row["placed/base placed"] is None
    assert row["on/base"] == report.pairs([2.2, 2.0], [2.1])
    text = report.reference_text(recs)
    assert "WALKED, not a reference: numa_miss max 1," in text
    assert "on/placed:          n/a" in text
    # The same passes without the walk: now a reference.
    recs[3]["numa_miss"] = 0
    row = report.reference(recs)["nps4"]
    assert row["placed ok"]["placed"] and row["on/placed"] == report.pairs([2.2, 2.0], [2.0, 1.9])


def test_every_walk_counter_counts_and_an_unknown_one_is_not_shown_clean():
    assert not report.walked(ref_rec("patched", "placed", "64n", 1.0))
    for kw in (dict(skip=1000), dict(lower=1), dict(kswapd=1), dict(stall=1), dict(miss=1)):
        assert report.walked(ref_rec("patched", "placed", "64n", 1.0, **kw)), kw
    # Not recorded (an older hog), or not readable (-1): cannot be shown.
    for key in ("lower_zone_pages", "allocstall", "pageoutrun", "numa_miss"):
        rec = ref_rec("patched", "placed", "64n", 1.0)
        del rec[key]
        assert report.walked(rec), key
        rec[key] = -1
        assert report.walked(rec), key
    # vm.numa_stat=0: the NUMA counters stay 0 and prove nothing.
    assert report.walked(ref_rec("patched", "placed", "64n", 1.0, local=0, other=0))


def test_floor_is_placed_on_one_node_and_local_share_is_reported():
    recs = [ref_rec("patched", "placed", "1n", 1.0, nodes=1),
            ref_rec("patched", "on", "64n", 1.5, nodes=64, local=26214.4, other=235929.6),
            ref_rec("patched", "placed", "64n", 1.2, nodes=64)]
    ref = report.reference(recs)
    assert ref["64n"]["on/floor"] == (1.5, 1.5, 1.5)
    assert ref["64n"]["placed/floor"] == (1.2, 1.2, 1.2)
    assert ref["64n"]["local"]["on"] == [0.1]
    assert list(ref) == ["1n", "64n"]


def test_nospill_rows_need_every_pass_on_its_node():
    recs = [ref_rec("base", "n/a", "2n", 1.0, pct=12), ref_rec("patched", "off", "2n", 1.0, pct=12),
            ref_rec("patched", "on", "2n", 1.001, pct=12),
            ref_rec("base", "n/a", "64n", 1.0, pct=12, nodes=64, miss=3),
            ref_rec("patched", "off", "64n", 1.0, pct=12, nodes=64),
            ref_rec("patched", "on", "64n", 1.0, pct=12, nodes=64)]
    ns = report.nospill(recs)
    assert list(ns) == [("2n", 12)]
    assert abs(ns[("2n", 12)]["on/base"][0] - 1.001) < 1e-9


def test_a_draft_run_says_so_first(tmp_path):
    recs = [ref_rec("patched", "on", "nps4", 2.0), ref_rec("base", "n/a", "nps4", 2.0)]
    meta = dict(name="t", icount=True, provenance=dict(draft="the project's tracked files "
                                                       "differ from its commit"))
    text = report.write_run(str(tmp_path / "t"), recs, meta)
    assert text.startswith("DRAFT, not a run of record: the project's tracked files")
    assert (tmp_path / "t" / "plot.png").exists()


def test_balance_line_judges_each_boot():
    """The order is judged boot by boot: a Williams order in every boot is
    balanced; v1's fixed order (off, on, placed | placed, on, off: on
    always in the middle) is not, and a boot of it is named even when the
    other boots' counts would even it out when pooled."""
    def recs(orders, topo="64n", rnd=0):
        out, prev = [], "-"
        for rep, order in enumerate(orders):
            for pos, kind in enumerate(order):
                out.append(dict(ref_rec("patched", kind, topo, 1.0, rnd=rnd), rep=rep, pos=pos,
                                prev=prev))
                prev = kind
        return out
    williams = ["off on placed".split(), "on placed off".split(), "placed off on".split(),
                "placed on off".split(), "off placed on".split(), "on off placed".split()]
    both = recs(williams) + recs(williams, rnd=1)
    assert report.balance_line(both) == (
        "order, patched kernel, 90%: in each of its 2 boots every kind in every position "
        "equally often, and after each other equally often (inside a repetition)")
    fixed = ["off on placed".split(), "placed on off".split()] * 3
    line = report.balance_line(recs(williams) + recs(fixed, rnd=1))
    assert "unbalanced in 1 of 2 boots: 64n round 2 (" in line and "on 0,6,0" in line
    # Two boots whose halves mirror each other pool to even counts: still named.
    half = [williams[0]] * 6
    mirror = [williams[3]] * 6
    line = report.balance_line(recs(half) + recs(mirror, rnd=1))
    assert "unbalanced in 2 of 2 boots" in line


def test_compare_runs_with_topologies_and_an_older_run(tmp_path):
    """make compare of two runs with presets, and of one beside an older
    run keyed by node counts: rows for each, no crash, no '64nn'."""
    new = [ref_rec("patched", "on", "nps4", 2.0), ref_rec("patched", "placed", "nps4", 1.9),
           ref_rec("base", "n/a", "nps4", 2.1), ref_rec("patched", "on", "64n", 3.0, nodes=64)]
    old = [dict(kernel="patched", zlc="on", nodes=64, round=0, mem_pct=90, threads=2, rep=0,
                mib=1024, sys=3.1, user=0.0, real=3.1, zlc_skip=5, zlc_mark_full=0, numa_miss=9)]
    meta = dict(icount=True, provenance=dict(base="7.3"))
    runs = [("a", dict(meta=meta, records=new)), ("b", dict(meta=meta, records=new)),
            ("c", dict(meta=meta, records=old))]
    text = report.compare(runs)
    assert "on 64n 90% 2thr" in text and "64nn" not in text and "on nps4 90% 2thr" in text
    assert "nps4 on/placed" in text and "nps4 on/base" in text
    assert "placed" in report.compare(runs[:1])
