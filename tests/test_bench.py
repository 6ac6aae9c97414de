import json
import os
import subprocess

import pytest

from zlctool import bench, report, workloads


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


def test_guest_command_runs_bench_sh_with_the_rows():
    cmd = bench.guest_command([12, 90], [1, 2], 5, "compare")
    assert cmd == "PCTS='12 90' THREADS='1 2' REPS=5 MODE=compare PLACED_PCT=90 sh /scripts/bench.sh"
    # The base kernel runs the hog as is, with placed passes too.
    assert "MODE=asis PLACED_PCT=90 " in bench.guest_command([90], [2], 5, "asis")


def test_passes_per_row_counts_placed_passes():
    assert bench.passes_per_row(90, 2, "compare") == 6       # off, on, placed
    assert bench.passes_per_row(12, 2, "compare") == 4       # off, on
    assert bench.passes_per_row(90, 2, "asis") == 4          # base kernel: as is, placed
    assert bench.passes_per_row(12, 2, "asis") == 2


def test_parse_console_keeps_topology_order_and_counters():
    lines = ["zlc-row pct=90 threads=2",
             "# zlc-run " + json.dumps(dict(zlc="placed", rep=0, pos=1, prev="n/a", mib=1800,
                                            threads=2, sys=1.0, user=0.2, real=0.8,
                                            zlc_skip=-1, zlc_mark_full=-1, numa_miss=0,
                                            pageoutrun=0, numa_local=10, numa_other=2,
                                            allocstall=0, lower_zone_pages=0))]
    (r,) = bench.parse_console(lines, "base", 8, topology="nps4")
    assert report.variant(r) == "base placed" and report.where(r) == "nps4"
    assert (r["pos"], r["prev"], r["numa_local"], r["lower_zone_pages"]) == (1, "n/a", 10, 0)


def test_plan_topologies_take_presets_and_counts():
    assert bench.plan_topology("64", "2G", "2", 10).label() == "64n"
    t = bench.plan_topology("nps4", "2G", "2", 10)
    assert t.label() == "nps4" and t.nodes == 8 and t.cpu_counts()[4] == 1
    with pytest.raises(bench.TopologyError):
        bench.plan_topology("nps5", "2G", "2", 10)


def test_a_run_from_a_tree_that_differs_is_a_draft(tmp_path, monkeypatch):
    """draft_reason() names a change to a tracked file, and nothing for a
    clean checkout whose kernel trees match their series."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "f.py").write_text("x = 1\n")
    (tmp_path / "Makefile").write_text("check-export:\n\t@true\n")
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", "x"], check=True)
    monkeypatch.setattr(bench, "TOP", str(tmp_path))
    assert bench.draft_reason() == ""
    (tmp_path / "f.py").write_text("x = 2\n")
    assert "differ from its commit" in bench.draft_reason()
    (tmp_path / "f.py").write_text("x = 1\n")
    (tmp_path / "new.py").write_text("y = 1\n")       # untracked, not ignored
    assert "differ from its commit" in bench.draft_reason()
    start = bench.source()
    (tmp_path / "new.py").unlink()
    assert bench.still_source(start) == start          # a draft stays what it was
    start = bench.source()
    assert start["draft"] == "" and bench.still_source(start) == start
    (tmp_path / "f.py").write_text("x = 3\n")
    assert "changed while the run ran" in bench.still_source(start)["draft"]
    (tmp_path / "f.py").write_text("x = 1\n")
    # Prose and results committed while it runs leave it a run of record;
    # a commit of anything else does not.
    (tmp_path / "README.md").write_text("figures\n")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.json").write_text("{}\n")
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", "prose"], check=True)
    assert bench.still_source(start) == start
    (tmp_path / "f.py").write_text("x = 4\n")
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qam", "code"], check=True)
    assert "its commit moved" in bench.still_source(start)["draft"]
    (tmp_path / "f.py").write_text("x = 1\n")
    (tmp_path / "Makefile").write_text("check-export:\n\t@false\n")
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qam", "y"], check=True)
    assert "check-export" in bench.draft_reason()


def test_boot_order_is_abba_over_rounds():
    order = bench.boot_order(dict(nodes=[1, 64], rounds=3))
    one = [(1, "base"), (1, "patched"), (64, "base"), (64, "patched")]
    assert [(n, k) for r, n, k in order if r == 0] == one
    assert [(n, k) for r, n, k in order if r == 1] == one[::-1]
    assert [(n, k) for r, n, k in order if r == 2] == one
    assert len(order) == 12
    assert bench.boot_order(dict(nodes=[4]))[-1] == (0, 4, "patched")   # one round by default


def test_icount_refuses_hw():
    with pytest.raises(SystemExit):
        bench.main(["--icount", "--hw"])
    with pytest.raises(SystemExit):
        bench.main(["--kaslr", "--hw"])


def test_a_run_name_is_checked_and_never_overwritten(tmp_path, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--name", "../x"])
    assert "letters, digits" in capsys.readouterr().err
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "run.json").write_text("{}")
    with pytest.raises(SystemExit):
        bench.main(["--name", "taken", "--results", str(tmp_path)])
    assert "exists: give the run another NAME" in capsys.readouterr().err


def test_a_bad_plan_topology_is_one_line(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--nodes", "3", "--name", "t"])
    assert "does not split into 3 equal nodes" in capsys.readouterr().err


def test_parse_console_keeps_placed_passes():
    lines = ["zlc-row pct=90 threads=2",
             "# zlc-run " + json.dumps(dict(zlc="placed", rep=1, mib=1800, threads=2, sys=1.0,
                                            user=0.2, real=0.8, zlc_skip=4, zlc_mark_full=0,
                                            numa_miss=9))]
    (r,) = bench.parse_console(lines, "patched", 64)
    assert report.variant(r) == "placed" and r["numa_miss"] == 9


def test_128_nodes_need_nodes_shift_10(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--config", "small", "--nodes", "128", "--mem", "4G", "--name", "t"])
    assert "this kernel takes 1..64" in capsys.readouterr().err


def test_config_fragments():
    """The distro config (the default) is guest.config with Debian's options
    on top, for the base being measured; small is guest.config alone."""
    class A:
        config, nodes_shift = "distro", 10
    frags, suffix = bench.config_fragments(A)
    assert frags == ["configs/guest.config", "configs/distro.config",
                     f"configs/distro-{bench.guest.BASE}.config"]
    assert suffix == "-distro"
    assert all(os.path.exists(os.path.join(bench.TOP, f)) for f in frags)
    A.config, A.nodes_shift = "small", 6
    assert bench.config_fragments(A) == (["configs/guest.config"], "")
    A.nodes_shift = 10
    assert bench.config_fragments(A) == (["configs/guest.config", "configs/nodes10.config"],
                                         "-nodes10")


def test_bloat_needs_both_kernels(tmp_path):
    # Without the base kernel there is nothing to compare: no file, no call.
    assert bench.bloat({"patched": "/x/guest/arch/x86/boot/bzImage"}, str(tmp_path)) is None
    assert not (tmp_path / "bloat.txt").exists()


def test_bloat_runs_the_kernels_script_on_both_vmlinux(tmp_path, monkeypatch):
    calls = []

    class Done:
        stdout = "add/remove: 1/0 grow/shrink: 2/0 up/down: 30/0 (30)\nf\t-\t30\t+30\nTotal: Before=100, After=130, chg +30.00%\n"

    def run(cmd, **kw):
        calls.append(cmd)
        return Done()
    monkeypatch.setattr(bench.subprocess, "run", run)
    total = bench.bloat({"base": "/b/guest-base/arch/x86/boot/bzImage",
                         "patched": "/b/guest/arch/x86/boot/bzImage"}, str(tmp_path))
    assert calls[0][0].endswith("scripts/bloat-o-meter")
    assert calls[0][1:] == ["/b/guest-base/vmlinux", "/b/guest/vmlinux"]
    assert total == "Total: Before=100, After=130, chg +30.00%"
    assert (tmp_path / "bloat.txt").read_text().startswith("# scripts/bloat-o-meter ")


def test_every_bench_guest_boots_without_kaslr(tmp_path, monkeypatch):
    """The hog's and the workloads' guests get nokaslr before any APPEND:
    with KASLR the kernel's 15 MB land on a random node each boot."""
    seen = {}

    def fake_build(args):
        k = str(tmp_path / "linux" / "arch" / "x86" / "boot" / "bzImage")
        return {"patched": k, "base": k}, "hog"

    def fake_guests(kernels, hog, plan, *a, append="", **kw):
        seen["hog"] = append
        return [dict(kernel="base", zlc="n/a", nodes=1, round=0, mem_pct=90, threads=2, rep=0,
                     mib=100, sys=1.0, user=0.0, real=1.0, zlc_skip=-1, zlc_mark_full=-1,
                     numa_miss=0)]

    def fake_workloads(works, kernels, hog, name, plans, t0, append=None):
        seen["workloads"] = append
        return {}

    monkeypatch.setattr(bench, "build", fake_build)
    monkeypatch.setattr(bench, "run_guests", fake_guests)
    monkeypatch.setattr(bench, "run_workloads", fake_workloads)
    monkeypatch.setattr(bench, "bloat", lambda *a: None)
    monkeypatch.setattr(bench.report, "write_run", lambda d, r, meta: seen.setdefault("meta", meta)
                        and "")
    monkeypatch.setattr(bench.workloads, "write", lambda *a, **kw: None)
    bench.main(["--name", "k", "--results", str(tmp_path), "--workloads", "hog,busy",
                "--append", "movablecore=50%"])
    assert seen["hog"] == seen["workloads"] == "nokaslr movablecore=50%"
    assert seen["meta"]["append"] == "nokaslr movablecore=50%"
    seen.clear()
    bench.main(["--name", "k2", "--results", str(tmp_path), "--workloads", "hog,busy",
                "--append", "movablecore=50%", "--kaslr"])
    assert seen["hog"] == seen["workloads"] == seen["meta"]["append"] == "movablecore=50%"


def test_a_rows_numa_balancing_and_hint_faults_reach_its_passes_and_the_report():
    run = dict(rep=0, mib=1800, threads=2, sys=1.5, user=0.2, real=1.0, zlc_skip=0,
               zlc_mark_full=0, numa_miss=5)
    lines = ["zlc-row pct=12 threads=2",
             "# zlc-run " + json.dumps(dict(run, zlc="off")),
             "zlc-row-end numa_balancing=1 hint_faults=7",
             "zlc-row pct=90 threads=2",
             "# zlc-run " + json.dumps(dict(run, zlc="off")),
             "# zlc-run " + json.dumps(dict(run, zlc="on")),
             "zlc-row-end numa_balancing=1 hint_faults=3000"]
    recs = bench.parse_console(lines, "patched", 64)
    assert [(r["mem_pct"], r["row_hint_faults"]) for r in recs] == [(12, 7), (90, 3000), (90, 3000)]
    assert all(r["numa_balancing"] == "1" for r in recs)
    line = report.numa_balancing_line(recs)
    # 3000 over the row's two passes and the hog's warm-up pass.
    assert line.endswith("patched 1 at 64 node(s); hint faults per pass at 64 nodes, 90%, "
                         "2 threads (warm-up and every kind of pass): patched 1000")
    one = bench.parse_console([l.replace("numa_balancing=1", "numa_balancing=0") for l in lines],
                              "base", 1)
    assert "base 0 at 1 node(s); patched 1 at 64 node(s);" in report.numa_balancing_line(recs + one)
    # A 1-thread row at 90 % is not the headline row.
    thr1 = bench.parse_console([l.replace("threads=2", "threads=1").replace("=3000", "=90000")
                                for l in lines], "patched", 64)
    assert report.numa_balancing_line(recs + thr1).endswith(": patched 1000")
    # A run from before the line existed says so rather than guess.
    assert report.numa_balancing_line(bench.parse_console(
        [l for l in lines if "row-end" not in l], "patched", 64)).endswith("not recorded")


def test_bench_sh_ends_every_row_with_its_numa_balancing_line(tmp_path):
    """bench.sh itself, run here with a stand-in hog on PATH: each row's
    passes get this machine's NUMA balancing setting and a hint-fault count."""
    hog = tmp_path / bench.HOG
    run = dict(zlc="off", rep=0, mib=10, threads=2, sys=1.0, user=0.1, real=1.0,
               zlc_skip=0, zlc_mark_full=0, numa_miss=0)
    hog.write_text("#!/bin/sh\n"
                   "case \"$*\" in *-j*) echo '# zlc-run " + json.dumps(run) + "';; esac\n")
    hog.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}", PCTS="12 90",
               THREADS="2", REPS="1", MODE="asis")
    out = subprocess.run(["sh", os.path.join(bench.TOP, "zlctool", "in_guest", "bench.sh")],
                         env=env, capture_output=True, text=True, check=True).stdout
    recs = bench.parse_console(out.splitlines(), "base", 1)
    assert [r["mem_pct"] for r in recs] == [12, 90]
    try:
        with open("/proc/sys/kernel/numa_balancing") as f:
            want = f.read().strip()
    except OSError:
        want = "none"
    assert all(r["numa_balancing"] == want and r["row_hint_faults"] >= 0 for r in recs)


def test_workload_rounds_come_from_the_plan_unless_overridden():
    # The storm's plan asks for three rounds of its variants a boot (six
    # samples of each); ROUNDS= overrides every workload's; the others
    # run their variants once.
    plans = bench.workload_plans(False)
    assert plans["storm"]["rounds"] == 3 and plans["busy"]["rounds"] == 1
    assert workloads.variants("patched", plans["storm"]).split().count("on") == 6
    assert all(p["rounds"] == 5 for p in bench.workload_plans(False, 5).values())


def test_kswapd_runs_per_pass_reach_the_report_per_kind():
    """The hog's pageoutrun per pass goes into the records, and the report
    gives its median (min..max) per kind of pass in the headline rows: with
    a movable zone on every node, spilling walks woke kswapd ~500 times a
    pass and placed passes 8 to 417 times (results/probe-kswapd-movable-20261126)."""
    def run(zlc, n):
        return "# zlc-run " + json.dumps(dict(zlc=zlc, rep=0, mib=1800, threads=2, sys=1.0,
                                              user=0.1, real=1.0, zlc_skip=0, zlc_mark_full=0,
                                              numa_miss=5, pageoutrun=n))
    lines = ["zlc-row pct=90 threads=2", run("off", 500), run("on", 540), run("placed", 8),
             run("placed", 417), run("on", 600), run("off", -1),
             "zlc-row-end numa_balancing=0 hint_faults=0",
             "zlc-row pct=12 threads=2", run("on", 9999)]
    recs = bench.parse_console(lines, "patched", 64)
    assert [r["pageoutrun"] for r in recs[:3]] == [500, 540, 8]
    line = report.kswapd_line(recs)
    # -1 (no such counter) is left out; the 12 % row is not the headline row.
    assert line.endswith("at 64 nodes, 90%, 2 threads: off 500 (500..500), "
                         "on 570 (540..600), placed 212.5 (8..417)")
    # A hog from before the field: the report says so.
    old = bench.parse_console([l.replace(', "pageoutrun": 500', "") for l in lines[:2]],
                              "patched", 64)
    assert old[0]["pageoutrun"] is None
    assert report.kswapd_line(old).endswith("not recorded")


def test_make_command_gives_the_run_again():
    import argparse
    args = argparse.Namespace(quick=False, icount=True, hw=False, timed=False, kaslr=False,
                              nodes_shift=10, workloads="hog", rounds=None,
                              reps=6, nodes="1,nps4", mem="2G", boots=None, variants=None,
                              append="numa_balancing=disable", config="distro")
    assert bench.make_command(args, "r") == ("make bench NAME=r ICOUNT=1 WORKLOADS=hog REPS=6 "
                                             "BENCH_NODES=1,nps4 APPEND=numa_balancing=disable")
    args.append, args.config = "a b", "small"
    assert bench.make_command(args, "r").endswith("APPEND='a b' CONFIG=small NODES_SHIFT=10")
    args.kaslr = True
    assert "ICOUNT=1 KASLR=1 " in bench.make_command(args, "r")


def test_kaslr_drops_nokaslr_alone():
    import argparse
    args = argparse.Namespace(kaslr=False, append="numa_balancing=disable")
    assert bench.command_line(args) == "nokaslr numa_balancing=disable"
    args.kaslr = True
    assert bench.command_line(args) == "numa_balancing=disable"
    args.append = ""
    assert bench.command_line(args) == ""


def test_workload_plans_take_boots_and_variants():
    plans = bench.workload_plans(False, boots=2, variants="off off")
    assert plans["stutter"]["boots"] == 2 and plans["stutter"]["patched"] == "off off"
    assert plans["stutter"]["base"] == "base base base base"
    plans = bench.workload_plans(False)
    # stutter's reclaim grows with a sample's position in its boot: the
    # base boots take as many samples as the patched ones, so that each
    # variant has a base sample at its own positions.
    assert len(plans["stutter"]["base"].split()) == len(plans["stutter"]["patched"].split())
    assert plans["stutter"]["boots"] == 1 and plans["pagefault"]["boots"] == 2
    assert plans["stutter"]["patched"] == "off on on off"


def test_a_failed_check_of_the_hog_is_kept_as_a_finding(monkeypatch, tmp_path):
    """A boot whose hog ran every pass but failed a check of its own (the
    placement check, say) keeps its records and names the failure; one that
    lost passes still stops the run."""
    run = json.dumps(dict(zlc="n/a", rep=0, mib=10, threads=2, sys=1.0, user=0.0, real=1.0,
                          zlc_skip=-1, zlc_mark_full=-1, numa_miss=0))
    lines = ["zlc-row pct=12 threads=2", "# zlc-run " + run,
             "not ok 4 the cache on missed its node no more than off"]

    class Res:
        status, log = 1, str(tmp_path / "x.log")

    Res.lines = lines
    monkeypatch.setattr(bench.guest, "run", lambda *a, **k: Res)
    plan = dict(nodes=["2"], pcts=[12], threads=[2], reps=1, rounds=1)
    failures = []
    monkeypatch.setattr(bench, "passes_per_row", lambda pct, reps, mode: 1)
    recs = bench.run_guests({"base": "k", "patched": "k"}, "hog", plan, "2G", "2", 0, "t",
                            failures=failures)
    assert len(recs) == 2 and len(failures) == 2
    assert "not ok 4 the cache on missed its node" in failures[0]
    assert len(bench.run_guests({"base": "k", "patched": "k"}, "hog", plan, "2G", "2", 0, "t")) == 2
    Res.lines = lines[:1] + lines[2:]          # no pass: a lost boot, not a finding
    with pytest.raises(bench.guest.GuestError):
        bench.run_guests({"base": "k"}, "hog", plan, "2G", "2", 0, "t", failures=[])


def test_provenance_names_the_committed_patches_whatever_the_cover_letters(tmp_path, monkeypatch):
    """patches: the git tree of patches/ when it is committed, the cover
    letters (prose, which no run measures) aside; else "uncommitted"."""
    import subprocess as sp
    from zlctool import bench as b

    def git(*args):
        return sp.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True,
                      text=True).stdout.strip()

    (tmp_path / "patches" / "6.12").mkdir(parents=True)
    for f in ("0000-cover-letter.patch", "0001-a.patch", "6.12/0000-cover-letter.patch"):
        (tmp_path / "patches" / f).write_text("x\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "t")
    monkeypatch.setattr(b, "TOP", str(tmp_path))
    tree = git("rev-parse", "--short", "HEAD:patches")
    start = dict(commit="c", draft="")
    assert b.provenance(start=start)["patches"] == tree
    for f in ("0000-cover-letter.patch", "6.12/0000-cover-letter.patch"):
        (tmp_path / "patches" / f).write_text("edited\n")
    assert b.provenance(start=start)["patches"] == tree
    (tmp_path / "patches" / "0001-a.patch").write_text("edited\n")
    assert b.provenance(start=start)["patches"] == "uncommitted"


def test_probe_64n_summary_gives_all_pairs_ratios(tmp_path):
    import sys
    rec = '{"mib": 1024, "real": %s}'
    passes = (("base", "asis", (2.0, 2.2)), ("series", "on", (1.0, 1.5)),
              ("series", "off", (2.0, 2.0)), ("v1", "on", (1.0, 1.2)), ("v1", "off", (2.0, 2.0)),
              ("v1x", "on", (1.6, 1.8)), ("v1x", "off", (2.0, 2.0)))

    def summary(kerns, last="guest: 64 nodes: command exited 0 after 1s"):
        lines = ["# probe-64n: project x", "# again: scripts/probe-64n.sh d"]
        for opt in ("nokaslr", "kaslr"):
            for kern, kind, reals in passes:
                if kern in kerns:
                    lines.append(f"### boot=1 {opt} {kern}")
                    lines += [f"probe kind={kind} " + rec % r for r in reals]
                    lines.append("guest: 64 nodes: command exited 0 after 1s")
        lines[-1] = last
        (tmp_path / "probe.txt").write_text("\n".join(lines) + "\n")
        return subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..",
                                                            "scripts", "probe-64n-summary.py"),
                               str(tmp_path / "probe.txt")], capture_output=True, text=True)

    out = summary(("base", "series", "v1", "v1x")).stdout
    # medians 1.25 over 1.1; all pairs 1.0/1.2 .. 1.5/1.0
    assert "  series on/v1 on: 1.136 (0.833..1.500)" in out
    # v1x: medians 1.25 over 1.7, 1.7 over 1.1
    assert "  series on/v1x on: 0.735 (0.556..0.938)" in out
    assert "  v1x on/v1 on: 1.545 (1.333..1.800)" in out
    # A record made before v1x was booted gives what it has.
    r = summary(("base", "series", "v1"))
    assert r.returncode == 0 and "v1x" not in r.stdout
    assert "  series on/v1 on: 1.136 (0.833..1.500)" in r.stdout
    r = summary(("base", "series", "v1", "v1x"), last="guest: 64 nodes: hung")
    assert r.returncode != 0 and "a boot failed" in r.stderr


def test_probe_late_summary_sums_each_mode_and_variant_over_its_samples():
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "probe_late", os.path.join(os.path.dirname(__file__), "..", "scripts", "probe-late.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    keys = mod.COUNTERS + mod.VMSTAT

    def sample(variant, before, after):
        out = [f"probe-sample {variant}"]
        out += [f"probe-count {k} {before.get(k, 0)}" for k in keys]
        out.append("probe-end")
        return out + [f"probe-count {k} {after.get(k, 0)}" for k in keys]

    lines = ["# probe-late: project x", "# again: scripts/probe-late.py NEWDIR"]
    lines += ["### boot 1 recover"]
    lines += sample("off", {"numa_local": 5}, {"numa_local": 905, "numa_other": 100})
    lines += sample("on", {"jumps": 10}, dict(jumps=1010, zones=2000, late=3, late_locked=2,
                                              late_unflagged=1, late_far=1, numa_local=900,
                                              numa_other=100))
    lines += ["### boot 2 norecover"]
    lines += sample("on", {}, dict(jumps=1000, zones=1000, late=600, late_far=50,
                                   numa_local=600, numa_other=400))
    lines += ["### boot 3 recover"]
    lines += sample("on", {}, dict(jumps=1000, zones=1000, late=1, late_locked=1,
                                   numa_local=700, numa_other=300))
    table, seen = mod.summary(lines)
    assert seen == 4
    on = next(l for l in table if l.startswith("recover    on")).split()
    # two samples: 2000 jumps, 4 late (0.200 %; 3 locked, 1 unflagged), 1 far;
    # 400 of 2000 allocations remote, 10 % and 30 % by sample
    assert on[2:13] == ["2", "2000", "3000", "4", "0.200", "3", "1", "1", "2000", "20.00",
                        "(10.0"] and on[13] == "30.0)"
    off = next(l for l in table if l.startswith("recover    off")).split()
    assert off[2:4] == ["1", "0"] and off[11] == "10.00"
    norec = next(l for l in table if l.startswith("norecover")).split()
    assert norec[5:7] == ["600", "60.000"]
    # a sample without its closing counters is not summed
    table, seen = mod.summary(lines[:-3])
    assert seen == 3
