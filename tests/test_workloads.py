"""make bench's workloads: the guest consoles they print, their records,
tables and checks (zlctool/workloads.py), and the C load (zlcload.c).

The consoles in tests/data/workload-*-console.log were captured from the
patched kernel in 'make test''s reduced run (QUICK plans, off and on)."""

import json
import os
import re
import shutil
import signal
import subprocess

import pytest

from zlctool import workloads

DATA = os.path.join(os.path.dirname(__file__), "data")


def console(name):
    with open(os.path.join(DATA, f"workload-{name}-console.log")) as f:
        return f.read().splitlines()


def samples(name, **extra):
    return workloads.parse_console(console(name), "patched", extra)


def test_stress_console_gives_one_sample_per_variant_and_stressor():
    got = samples("stress", nodes=4)
    assert [s["variant"] for s in got] == ["off", "on"] * 4
    assert [s["stressor"] for s in got[::2]] == [
        "vm_2_vmbytes_40%_vmmethod_flip_verify", "numa_2_verify",
        "malloc_2_mallocbytes_16K_mallocmax_32768_verify", "mmap_2_mmapbytes_20%_verify"]
    for s in got:
        assert s["stress"] == 0 and s["stress_fail"] == 0
        assert [m["stressor"] for m in s["stress_metrics"]] == [s["stressor"].split("_")[0]]
        assert s["ops_s"] > 0 and s["stress_sys"] >= 0
        assert sorted(s["numa_per_node"]) == ["0", "1", "2", "3"]
    vm = got[0]["stress_metrics"][0]
    assert vm["bogo-ops"] == 54446 and round(vm["bogo-ops-per-second-real-time"]) == 17771


def test_locality_is_the_sum_of_the_nodes_deltas():
    for s in samples("stress") + samples("churn"):
        per = s["numa_per_node"].values()
        for k in workloads.NUMASTAT:
            assert s["numa"][k] == sum(n[k] for n in per)
        placed = s["numa"]["local_node"] + s["numa"]["other_node"]
        assert placed > 0
        assert s["remote_pct"] == pytest.approx(100.0 * s["numa"]["other_node"] / placed)


def test_churn_console_has_the_hog_alone_then_with_the_churner():
    got = samples("churn", nodes=16)
    assert [(s["churn_mib"], s["variant"]) for s in got] == [
        (0, "off"), (0, "on"), (32, "off"), (32, "on")]
    for s in got:
        assert len(s["runs"]) == 1 and s["mib"] > 1000 and s["sys"] > 0
        churners = [l for l in s["loads"] if l["load"] == "churn"]
        assert len(churners) == (1 if s["churn_mib"] else 0)
    # The cache's own counters move only with it on.
    off, on = got[0]["vmstat"], got[1]["vmstat"]
    assert off["zlc_skip"] == 0 and on["zlc_skip"] > 0
    assert got[3]["loads"][0]["loops"] > 0 and sum(got[3]["loads"][0]["pages_per_node"]) > 0


def test_tables_and_headline_name_every_workload():
    by = {"stress": samples("stress", nodes=4), "churn": samples("churn", nodes=16),
          "busy": samples("busy", nodes=8, icount=True)}
    for work, s in by.items():
        text = workloads.TABLES[work](s)
        assert "remote_pct" in text and "base" in text and "on" in text
    head = workloads.headline(by).splitlines()
    assert head[0] == "| workload | figure | base | off | on | on/off |"
    works = {line.split("|")[1].strip() for line in head[2:]}
    assert works == {"stress", "churn", "busy"}
    busy7 = next(line for line in head if "7 threads" in line)
    assert "Ginsn/GiB" in busy7
    # Locality pooled over a workload's samples; on - off in points.
    remote = [line for line in head if "remote % (pooled)" in line]
    assert len(remote) == 3 and all(line.rstrip(" |").endswith("pt") for line in remote)
    s = by["churn"]
    on = [x for x in s if x["variant"] == "on"]
    want = 100.0 * sum(x["numa"]["other_node"] for x in on) / sum(
        x["numa"]["other_node"] + x["numa"]["local_node"] for x in on)
    assert f"{want:.2f}" in next(line for line in remote if line.startswith("| churn"))
    # on/off is the ratio of the two medians shown.
    cells = [c.strip() for c in busy7.split("|")[1:-1]]
    assert float(cells[5]) == pytest.approx(float(cells[4]) / float(cells[3]), abs=1e-3)


def test_check_accepts_the_reduced_run_and_names_what_is_missing():
    by = {"stress": samples("stress"), "churn": samples("churn"), "busy": samples("busy")}
    assert workloads.check(by, ["stress", "churn", "busy"]) == []
    assert workloads.check(by, ["stutter"]) == ["stutter: no samples"]
    bad = json.loads(json.dumps(by))
    bad["stress"][1]["stress"] = 2
    bad["stress"][2]["stress_fail"] = 1
    bad["churn"][0]["remote_pct"] = None
    problems = workloads.check(bad, ["stress", "churn", "busy"])
    assert len(problems) == 3
    assert any("stress-ng exit 2" in p for p in problems)
    assert any("1 failures" in p for p in problems)
    assert any(p.startswith("churn patched off: no locality") for p in problems)


def test_a_stressor_that_fails_with_the_cache_off_and_on_alike_is_not_the_caches(capsys):
    by = {"stress": samples("stress")}
    for s in by["stress"]:
        if s["stressor"] == "numa_2_verify":
            s["stress"], s["stress_fail"] = 2, 2
    assert workloads.check(by, ["stress"]) == []
    assert "with the cache off and on alike" in capsys.readouterr().out
    # With the cache on alone, it is.
    next(s for s in by["stress"] if s["stressor"] == "numa_2_verify" and s["variant"] == "off")["stress"] = 0
    next(s for s in by["stress"] if s["stressor"] == "numa_2_verify" and s["variant"] == "off")["stress_fail"] = 0
    assert len(workloads.check(by, ["stress"])) == 1


def test_a_stressor_short_of_a_resource_is_said_not_failed(capsys):
    by = {"stress": samples("stress")}
    on = next(s for s in by["stress"] if s["stressor"] == "numa_2_verify" and s["variant"] == "on")
    # Exit 3 (no resource) and 7 (untrustworthy metrics), no verify failure,
    # no metrics: the moment's, not the kernel's.
    for code in (3, 7):
        on["stress"], on["stress_fail"], on["stress_metrics"] = code, 0, {}
        assert workloads.check(by, ["stress"]) == []
        assert "not counted against it" in capsys.readouterr().out
    # With a verify failure, or another exit, it fails.
    on["stress"], on["stress_fail"] = 3, 1
    assert len(workloads.check(by, ["stress"])) == 1
    on["stress"], on["stress_fail"] = 5, 0
    assert len(workloads.check(by, ["stress"])) == 1


def test_a_sample_cut_short_is_not_a_record():
    lines = console("busy")
    end = max(i for i, l in enumerate(lines) if l.startswith("zlc-sample-end"))
    assert len(workloads.parse_console(lines[:end], "patched")) == 3


def test_yaml_metrics_of_several_stressors():
    text = ["---", "system-info:", "      cpus: 2", "", "metrics:",
            "    - stressor: vm", "      bogo-ops: 10", "      system-time: 1.5",
            "    - stressor: mmap", "      bogo-ops: 3", "      bogo-ops-per-second-real-time: 1.25",
            "", "..."]
    m = workloads.parse_yaml_metrics(text)
    assert m == [{"stressor": "vm", "bogo-ops": 10.0, "system-time": 1.5},
                 {"stressor": "mmap", "bogo-ops": 3.0, "bogo-ops-per-second-real-time": 1.25}]


@pytest.fixture(scope="module")
def zlcload(tmp_path_factory):
    assert shutil.which("gcc"), "gcc is missing: make deps installs it"
    out = str(tmp_path_factory.mktemp("zlcload") / "zlcload")
    src = os.path.join(os.path.dirname(workloads.__file__), "in_guest", "zlcload.c")
    subprocess.run(["gcc", "-Wall", "-Wextra", "-Werror", "-O2", "-static", "-pthread", "-o",
                    out, src], check=True)
    return out


def load_line(out):
    lines = [l for l in out.splitlines() if l.startswith("zlc-load ")]
    assert len(lines) == 1, out
    return json.loads(lines[0][len("zlc-load "):])


def test_zlcload_probe_prints_an_ordered_distribution(zlcload):
    # A second, for a handful of samples: a round trip takes well under a
    # millisecond, a host busy with a build or not.
    r = subprocess.run([zlcload, "probe", "1", "0"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    p = load_line(r.stdout)
    assert p["samples"] >= 5 and len(p["cdf"]) == 101
    order = [p[k] for k in ("min", "q1", "median", "q3", "p90", "p95", "p99", "max")]
    assert order == sorted(order) and p["cdf"] == sorted(p["cdf"])
    assert p["cdf"][0] == p["min"] and p["cdf"][-1] == p["max"]
    assert p["min"] <= p["mean"] <= p["max"]
    # One page counted every 2 MiB: one per sample, on some node.
    assert sum(p["pages_per_node"]) + p["pages_unknown"] == p["samples"]


def test_zlcload_hog_and_churn_count_their_pages(zlcload):
    p = load_line(subprocess.run([zlcload, "hog", "8", "0.1"], capture_output=True,
                                 text=True, check=True).stdout)
    assert p["passes"] >= 1 and sum(p["pages_per_node"]) + p["pages_unknown"] == 4
    # Bounded by time: the first loop runs whatever the host's load.
    c = load_line(subprocess.run([zlcload, "churn", "4", "0", "0.2"], capture_output=True,
                                 text=True, check=True).stdout)
    assert c["loops"] >= 1 and sum(c["pages_per_node"]) + c["pages_unknown"] == 2 * c["loops"]
    # Until SIGTERM, sent once the handler is in place (SigCgt), so that the
    # signal ends the loop rather than the process, however slow its start.
    proc = subprocess.Popen([zlcload, "churn", "4", "0", "0"], stdout=subprocess.PIPE, text=True)
    import time
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with open(f"/proc/{proc.pid}/status") as f:
            caught = next(int(l.split()[1], 16) for l in f if l.startswith("SigCgt:"))
        if caught & (1 << (signal.SIGTERM - 1)):
            break
        time.sleep(0.01)
    proc.terminate()
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    c = load_line(out)
    assert c["loops"] >= 0 and sum(c["pages_per_node"]) + c["pages_unknown"] == 2 * c["loops"]


def test_zlcload_hold_says_when_it_holds_its_memory_and_ends_on_sigterm(zlcload):
    import time
    proc = subprocess.Popen([zlcload, "hold", "8"], stdout=subprocess.PIPE, text=True)
    # The ready line comes once the memory is touched, before any signal.
    assert proc.stdout.readline() == "zlc-hold-ready\n"
    time.sleep(0.2)
    assert proc.poll() is None          # holding, until told to stop
    proc.terminate()
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    h = load_line(out)
    # The storm's tables read it as the hog: one pass over 8 MiB, its 4
    # huge-page-sized chunks counted.
    assert h["load"] == "hog" and h["mib"] == 8 and h["passes"] == 1
    assert h["seconds"] >= 0.2 and sum(h["pages_per_node"]) + h["pages_unknown"] == 4


def test_zlcload_refuses_bad_usage(zlcload):
    r = subprocess.run([zlcload, "churn", "4", "-1", "1"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage" in r.stderr
    r = subprocess.run([zlcload, "fill", "4", "0"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage" in r.stderr


def test_zlcload_fill_counts_each_threads_pages_on_its_cpus_node(zlcload):
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("needs 2 CPUs")
    out = subprocess.run([zlcload, "fill", "8", "2"], capture_output=True, text=True,
                         check=True).stdout
    lines = [json.loads(l[len("zlc-load "):]) for l in out.splitlines()]
    assert sorted(l["thread"] for l in lines) == [0, 1]
    for l in lines:
        # 4 MiB a thread, one page counted every 64 KiB, thread i on the
        # i-th CPU it may use, as the hog's threads.
        assert l["load"] == "fill" and l["cpu"] == allowed[l["thread"]] and l["mib"] == 4
        assert sum(l["pages_per_node"]) + l["pages_unknown"] == 64
        # Each node's MemFree before and after: the CPU's node has a record.
        for key in ("free_kib", "left_kib", "slab_kib"):
            assert len(l[key]) > l["node"] and l[key][l["node"]] > 0
        if not os.path.exists("/sys/devices/system/node/node1"):
            # On one node every page is where the CPU is.
            assert l["pages_per_node"][l["node"]] == 64
    r = subprocess.run([zlcload, "fill", "4", str(len(allowed) + 1)], capture_output=True,
                       text=True)
    assert r.returncode == 1 and "CPUs allowed" in r.stderr


def fill_sample(variant, threads, per_thread):
    """A busy sample whose fill put thread i's pages as per_thread[i] says:
    (its CPU's node, pages per node)."""
    return dict(variant=variant, threads=threads, workload="busy", mib=1024, real=1.0,
                sys=1.0, user=0.0, icount=True,
                numa=dict(other_node=1, local_node=1, numa_miss=1),
                remote_pct=50.0, vmstat={}, loads=[
                    dict(load="fill", thread=i, cpu=i, node=node, mib=4, pages_per_node=per,
                         pages_unknown=0) for i, (node, per) in enumerate(per_thread)])


def test_busy_placement_is_each_threads_share_on_its_own_node():
    s = fill_sample("on", 2, [(0, [30, 10]), (1, [0, 20, 20])])
    assert workloads.local_pct(s, 0) == 75.0
    assert workloads.local_pct(s, 1) == 50.0
    assert workloads.local_pct(s) == 100.0 * 50 / 80
    # A node beyond the pages' list holds none of them.
    assert workloads.local_pct(fill_sample("on", 1, [(3, [5])]), 0) == 0.0
    assert workloads.local_pct(dict(loads=[])) is None
    samples = [fill_sample(v, 2, [(0, [30, 10]), (1, [0, 20, 20])]) for v in ("base", "off")]
    samples += [fill_sample("on", 2, [(0, [10, 30]), (1, [20, 20])])]
    table = workloads.busy_table(samples)
    assert "busy placement" in table
    row0 = next(l for l in table.splitlines() if l.lstrip().startswith("2/0 "))
    assert row0.split()[1:] == ["75.0", "75.0", "25.0"]
    head = workloads.headline({"busy": samples})
    fill_row = next(l for l in head.splitlines() if "off their thread's node" in l)
    cells = [c.strip() for c in fill_row.split("|")[1:-1]]
    # Pooled over the fills: base and off 30 of 80 pages off their node, on 50 of 80.
    assert cells[2:6] == ["37.50", "37.50", "62.50", "+25.00 pt"]
    assert workloads.pooled_off_node([dict(loads=[])]) is None


def test_make_compare_puts_workload_runs_side_by_side(tmp_path, capsys):
    from zlctool import compare
    by = {"stress": samples("stress", nodes=4), "churn": samples("churn", nodes=16)}
    slower = json.loads(json.dumps(by))
    for s in slower["churn"]:
        s["sys"] *= 2
    for name, data in (("a", by), ("b", slower)):
        workloads.write(str(tmp_path / name), data, {"name": name})
        assert (tmp_path / name / "headline.md").read_text().startswith("| workload |")
        for work in ("stress", "churn"):
            png = tmp_path / name / f"{work}.png"
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("workloads, change against a")
    row = next(l for l in out.splitlines()
               if l.startswith("Amean  on    churn 16n churn 32M sys s/GiB"))
    assert "100.00%" in row
    # A directory with neither run.json nor workloads.json is refused.
    (tmp_path / "empty").mkdir()
    assert compare.main([str(tmp_path / "empty")]) == 2


def test_rounds_repeat_each_boots_variants_abba():
    plan = dict(workloads.PLANS["full"]["busy"], rounds=2)
    assert workloads.variants("patched", plan) == "off on on off"
    assert workloads.variants("base", plan) == "base base"
    assert workloads.expected("busy", "patched", plan) == 4 * len(plan["threads"])
    plan = dict(workloads.PLANS["full"]["stutter"])         # no rounds: one
    assert workloads.variants("patched", plan) == "off on on off"


def test_the_headline_starts_with_the_hogs_rows():
    rec = dict(kernel="patched", nodes=64, mem_pct=90, threads=2, mib=1024, numa_miss=10)
    hog = [dict(rec, zlc="off", sys=2.0), dict(rec, zlc="on", sys=1.0),
           dict(rec, zlc="on", sys=1.2), dict(rec, kernel="base", zlc="n/a", sys=2.2),
           dict(rec, nodes=1, zlc="on", sys=0.5)]
    head = workloads.headline({"churn": samples("churn", nodes=16)}, hog).splitlines()
    assert head[2] == "| hog | sys s/GiB, 64 nodes | 2.200 | 2.000 | 1.100 (1.000..1.200) | 0.550 |"
    assert head[3].startswith("| hog | numa_miss per pass | 10 | 10 | 10 |")
    assert head[4].startswith("| churn |")


def test_churn_wipes_must_agree_with_the_trace():
    from zlctool.workloads import wipes_disagree
    assert wipes_disagree({"vmstat": {"zlc_wipe": 190, "zlc_wipe_interval": 40,
                                      "zlc_wipe_recovery": 150, "zlc_wipe_rebuild": 0}}) is None
    # No histogram (the trigger did not take): the counter rose, the trace says nothing.
    assert "traced 0" in wipes_disagree({"vmstat": {"zlc_wipe": 190}})
    # The unpatched kernel has neither.
    assert wipes_disagree({"vmstat": {"zlc_skip": 0}}) is None


def test_storm_boots_16_nodes_counted_with_a_churner_per_cpu():
    plan = workloads.PLANS["full"]["storm"]
    (topo, extra, icount, label), = workloads.boots("storm", plan)
    assert topo.nodes == 16 and icount and label == "16n"
    assert workloads.command("storm", "patched", plan) == \
        "VARIANTS='off on on off off on on off off on on off' sh /scripts/workload.sh storm 4 80 4"
    assert workloads.expected("storm", "base", plan) == 6
    with open(os.path.join(workloads.TOP, "zlctool", "in_guest", "workload.sh")) as f:
        script = f.read()
    body = script[script.index("storm_one() {"):script.index("storm() {")]
    # One churner per CPU, pinned there and preferring that CPU's node.
    assert 'taskset -c "$c" zlcload churn "$cmib" "$n" "$secs"' in body
    # The hog holds its memory idle, and the churners start once it does,
    # not on the ready line of the sample before.
    assert body.index("rm -f /tmp/hog.out") < body.index('zlcload hold "$mib"') < \
        body.index("zlc-hold-ready") < body.index("zlcload churn") < \
        body.index('kill -TERM "$hog"')
    assert 'echo "hist:keys=node_id" > $recover_ev/trigger' in script
    # The storm's and placement's per-cpu lists are held small from before
    # the warm-up, so that what it leaves there is alike in every boot.
    main = script[script.index('case $work in'):]
    fixed = main.index("echo 512 > /proc/sys/vm/percpu_pagelist_high_fraction")
    assert main.index('if [ "$work" = storm ] || [ "$work" = placement ]') < fixed < \
        main.index("zonelist_cache_memhog")


def test_storm_rates_are_per_second_of_the_whole_sample():
    # The events are counted from before the hog fills memory to after it
    # ends, not over the churn alone: rates divide by the sample's guest
    # time, and the per-page time is the churners' own.
    churn = [dict(load="churn", mib=4, node=i, loops=100, seconds=4.0) for i in range(2)]
    s = dict(variant="on", secs=4, loads=churn + [dict(load="hog", seconds=7.9)],
             vmstat=dict(zlc_recover=40, uptime_ms=8000))
    assert workloads.storm_seconds(s) == 8.0
    assert workloads.storm_per_s("zlc_recover")(s) == 5.0
    assert workloads.storm_us_per_page(s) == pytest.approx(1e6 * 4.0 / (2 * 100 * 4 * 256))
    # Runs from before the guest clock was recorded: the hog's own time.
    del s["vmstat"]["uptime_ms"]
    assert workloads.storm_seconds(s) == 7.9


def test_stress_failures_are_counted_in_the_variant_that_had_them():
    by = {"stress": samples("stress")}
    for s in by["stress"]:
        if s["stressor"] == "numa_2_verify" and s["variant"] == "off":
            s["stress"], s["stress_fail"] = 2, 3
    head = workloads.headline(by).splitlines()
    row = next(line for line in head if "verify failures" in line)
    assert [c.strip() for c in row.split("|")[3:6]] == ["-", "3/1", "0/0"]
    # A sample with no exit status (a guest cut short) counts as a nonzero exit.
    next(s for s in by["stress"] if s["variant"] == "on")["stress"] = None
    assert workloads.stress_failures([s for s in by["stress"] if s["variant"] == "on"]) == "0/1"
    numa = next(line for line in workloads.stress_table(by["stress"]).splitlines()
                if line.startswith("numa_2_verify"))
    assert numa.split()[-3:] == ["-", "3/1", "0/0"]


def pf_console(variant, kind, tasks, per_task, local=900, other=100):
    """The lines of one pagefault sample as workload.sh prints them."""
    load = dict(load=f"pf-{kind}", tasks=tasks, mib=16, faults=int(sum(per_task)),
                seconds=1.0, per_task=per_task, numa_local=local, numa_other=other,
                numa_miss=other)
    return [f"zlc-sample workload=pagefault variant={variant} kind={kind} tasks={tasks} "
            "secs=1 hold_mib=1600",
            "zlc-snap begin zlc_skip=5 uptime_ms=1000",
            "zlc-numastat begin 0 numa_hit=10 numa_miss=0 numa_foreign=0 local_node=10 "
            "other_node=0",
            "zlc-numastat begin 1 numa_hit=0 numa_miss=0 numa_foreign=0 local_node=0 other_node=0",
            "zlc-load " + json.dumps(load),
            "zlc-snap end zlc_skip=9 uptime_ms=2100",
            f"zlc-numastat end 0 numa_hit={10 + local} numa_miss=0 numa_foreign={other} "
            f"local_node={10 + local} other_node=0",
            f"zlc-numastat end 1 numa_hit=0 numa_miss={other} numa_foreign=0 local_node=0 "
            f"other_node={other}",
            "zlc-sample-end"]


def pf_samples(topology="nps4", hold_pct=85, rates=None):
    """Pagefault samples of one boot of each kernel: rates {variant: [per
    task faults/s of each sample]} for anon with 1 task; file with 1 task
    at half of them."""
    rates = rates or dict(base=[100.0, 110.0], off=[90.0, 100.0], on=[120.0, 130.0])
    out = []
    for kernel, vs in (("base", ["base"]), ("patched", ["off", "on"])):
        lines = [line for v in vs for i in range(len(rates[v])) for kind in ("anon", "file")
                 for line in pf_console(v, kind, 1, [rates[v][i] / (1 if kind == "anon" else 2)],
                                        local=900 if v != "on" else 950,
                                        other=100 if v != "on" else 50)]
        out += workloads.parse_console(lines, kernel, dict(nodes=8, icount=True,
                                                            topology=topology, hold_pct=hold_pct))
    return out


def test_pagefault_console_gives_a_sample_per_variant_kind_and_task_count():
    got = pf_samples()
    assert [(s["variant"], s["kind"], s["tasks"]) for s in got[:4]] == [
        ("base", "anon", 1), ("base", "file", 1), ("base", "anon", 1), ("base", "file", 1)]
    s = got[0]
    # The boot's topology and hold from run()'s extra, the rest from the guest.
    assert s["topology"] == "nps4" and s["hold_pct"] == 85 and s["hold_mib"] == 1600
    assert workloads.pf_load(s)["load"] == "pf-anon" and workloads.pf_rate(s) == 100.0
    assert workloads.pf_local_pct(s) == 90.0
    assert s["vmstat"]["zlc_skip"] == 4 and s["vmstat"]["uptime_ms"] == 1100
    assert s["remote_pct"] == pytest.approx(10.0)
    # Each sample's rate per task: the mean over its tasks.
    two = workloads.parse_console(pf_console("on", "anon", 2, [10.0, 30.0]), "patched")
    assert workloads.pf_rate(two[0]) == 20.0
    assert workloads.pf_local_pct(dict(loads=[])) is None


def test_pagefault_plans_boots_and_counts():
    plan = workloads.PLANS["full"]["pagefault"]
    boots = workloads.boots("pagefault", plan)
    assert [b[3] for b in boots] == ["1n", "2n", "nps4", "cxl", "flex32", "64n"]
    assert all(b[1] == workloads.guest.ICOUNT_ARGS and b[2] for b in boots)
    assert boots[-1][0] == workloads.Topology.even(64, "2G", "2")
    assert [workloads.hold_pct("pagefault", plan, b[3]) for b in boots] == [0, 0, 60, 60, 60, 60]
    assert workloads.hold_pct("storm", workloads.PLANS["full"]["storm"], "16n") == 0
    assert workloads.command("pagefault", "patched", plan, "1n") == \
        "VARIANTS='off on on off' sh /scripts/workload.sh pagefault 64 2 0 '1 2'"
    assert workloads.command("pagefault", "base", plan, "flex32") == \
        "VARIANTS='base base' sh /scripts/workload.sh pagefault 64 2 60 '1 2'"
    # Variants x kinds x task counts.
    assert workloads.expected("pagefault", "patched", plan) == 4 * 2 * 2
    assert workloads.expected("pagefault", "base", plan) == 2 * 2 * 2
    quick = workloads.PLANS["quick"]["pagefault"]
    (topo, _, icount, label), = workloads.boots("pagefault", quick)
    assert icount and label == "nps4" and topo.nodes == 8
    assert workloads.expected("pagefault", "patched", quick) == 2 * 2 * 1
    assert workloads.command("pagefault", "patched", quick, "nps4") == \
        "VARIANTS='off on' sh /scripts/workload.sh pagefault 16 1 60 '1'"
    assert "pagefault" in workloads.NAMES and "pagefault" in workloads.TABLES


def test_pagefault_table_gives_rates_ratios_against_base_and_locality():
    s = pf_samples() + pf_samples("1n", 0)
    table = workloads.pagefault_table(s)
    lines = table.splitlines()
    anon = next(l for l in lines if l.startswith("nps4 hold 85%/anon/1 "))
    # Medians 105 (100..110), 95 (90..100), 125 (120..130); on/base 125/105
    # with the range over every pair 120/110..130/100; off/base 95/105, 90/110..100/100.
    assert anon.split()[3:] == ["105", "(100..110)", "95", "(90..100)", "125", "(120..130)",
                                "1.190", "(1.091..1.300)", "0.905", "(0.818..1.000)"]
    assert next(l for l in lines if l.startswith("nps4 hold 85%/file/1 ")).split()[3:5] == \
        ["52", "(50..55)"]
    # The boots without a hold say none.
    assert any(l.startswith("1n/anon/1 ") for l in lines)
    loc = [l for l in lines if l.startswith("nps4 hold 85%/anon/1 ")][1]
    assert loc.split()[3:] == ["90.0", "90.0", "95.0"]
    assert "nps4 remote_pct" in table and "1n remote_pct" in table
    # Without base, the ratios are not there.
    lines = workloads.pagefault_table([x for x in s if x["variant"] != "base"]).splitlines()
    assert next(l for l in lines if l.startswith("1n/anon/1 ")).split()[-2:] == ["-", "-"]


def test_pagefault_headline_figures_and_check():
    s = pf_samples()
    head = workloads.headline({"pagefault": s}).splitlines()
    row = next(l for l in head if "nps4 anon, 1 tasks" in l)
    assert [c.strip() for c in row.split("|")[3:7]] == [
        "105 (100..110)", "95 (90..100)", "125 (120..130)", f"{125 / 95:.3f}"]
    assert any(l.startswith("| pagefault | remote % (pooled)") for l in head)
    figs = workloads.figures({"pagefault": s})
    assert figs["pagefault nps4 file 1t faults/s/task"]["on"] == [60.0, 65.0]
    assert workloads.check({"pagefault": s}, ["pagefault"]) == []
    bad = json.loads(json.dumps(s))
    workloads.pf_load(bad[3])["faults"] = 0
    bad[4]["loads"] = []
    problems = workloads.check({"pagefault": bad}, ["pagefault"])
    assert problems == ["pagefault base base: no page faults",
                        "pagefault patched off: no page faults"]


def test_pagefault_writes_its_table_and_plot(tmp_path):
    text = workloads.write(str(tmp_path), {"pagefault": pf_samples()}, {"name": "t"})
    assert "faults per second of guest time per task" in text
    assert (tmp_path / "pagefault.txt").read_text().startswith("pagefault:")
    assert (tmp_path / "pagefault.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_pagefault_script_holds_memory_around_the_samples():
    with open(os.path.join(workloads.TOP, "zlctool", "in_guest", "workload.sh")) as f:
        script = f.read()
    body = script[script.index("pagefault() {"):script.index("# stress: stress-ng")]
    start = script[script.index("hold_start() {"):script.index("pagefault() {")]
    # A hold is ready before the next starts; the CPUs' nodes are held
    # first, the rest after, all before the warm-up; the warm-up comes
    # before the first sample, and the holds end after the last.
    assert start.index('zlcload hold "$2" ${3:-}') < start.index("zlc-hold-ready")
    assert body.index('hold_start "node$node"') < body.index("hold_start rest") < \
        body.index('zlcload pf anon "$mib" 1 1') < body.index("sample pagefault") < \
        body.index('kill -TERM "$h"')
    assert 'zlcload pf "$k" "$mib" "$secs" "$t"' in body
    assert "| storm | pagefault | placement)" in script


def test_zlcload_pf_counts_every_page_it_wrote(zlcload, tmp_path):
    for kind in ("anon", "file"):
        path = str(tmp_path / "pf.file")
        r = subprocess.run([zlcload, "pf", kind, "4", "0.1", "1", path], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr
        p = load_line(r.stdout)
        assert p["load"] == f"pf-{kind}" and p["tasks"] == 1 and p["mib"] == 4
        # Whole loops of 4 MiB: 1024 pages each.
        assert p["faults"] >= 1024 and p["faults"] % 1024 == 0
        assert p["seconds"] >= 0.1 and len(p["per_task"]) == 1
        assert p["per_task"][0] == pytest.approx(p["faults"] / p["seconds"], rel=0.02)
        assert {"numa_local", "numa_other", "numa_miss"} <= set(p)
        # The file goes when the run ends.
        assert not os.path.exists(path)
    r = subprocess.run([zlcload, "pf", "huge", "4", "1", "1"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage" in r.stderr
    r = subprocess.run([zlcload, "pf", "anon", "4", "1", str(len(os.sched_getaffinity(0)) + 1)],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "CPUs allowed" in r.stderr
    r = subprocess.run([zlcload, "pf", "file", "4", "1", "1", str(tmp_path / "no" / "f")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "open" in r.stderr


def test_stutter_table_gives_direct_reclaim_by_boot():
    """With two boots of a kernel (BOOTS=2) the stutter table lists each
    boot's allocstall_movable per sample, so that a boot's offset shows."""
    base = samples("churn", nodes=16)[0]
    ss = []
    for boot, variant, stalls in ((0, "base", 10), (1, "base", 12), (0, "off", 30),
                                  (1, "off", 11)):
        s = json.loads(json.dumps(base))
        s.update(variant=variant, boot=boot, loads=[])
        s["vmstat"]["allocstall_movable"] = stalls
        ss.append(s)
    text = workloads.stutter_table(ss)
    assert "base  boot 2: 12" in text and "off   boot 1: 30" in text
    assert "by boot" not in workloads.stutter_table([s for s in ss if s["boot"] == 0])
    # NUMA balancing's migrations are allocations too: the table gives them
    # per variant, and "-" where a record has none (made before they were
    # kept, or on a kernel without NUMA balancing).
    assert re.search(r"^numa_pages_migrated +- +- +-", text, re.M)
    # A sample records them from the guest's /proc/vmstat snapshots.
    lines = [line.replace(" uptime_ms=", " numa_hint_faults=%d numa_pages_migrated=%d uptime_ms="
                          % ((3, 40) if " begin " in line else (8, 52)))
             if line.startswith("zlc-snap") else line
             for line in pf_console("on", "anon", 1, [10.0])]
    got = workloads.parse_console(lines, "patched")[0]["vmstat"]
    assert got["numa_hint_faults"] == 5 and got["numa_pages_migrated"] == 12
    for s, n in zip(ss, (5, 7, 100, 300)):
        s["vmstat"]["numa_pages_migrated"] = n
    assert re.search(r"^numa_pages_migrated +6 \(5\.\.7\) +200 \(100\.\.300\) +-",
                     workloads.stutter_table(ss), re.M)


def test_zlcload_pf_gives_each_task_a_file_and_removes_them(zlcload, tmp_path):
    path = str(tmp_path / "pf")
    r = subprocess.run([zlcload, "pf", "file", "4", "0.2", "2", path], capture_output=True,
                       text=True)
    if r.returncode == 1 and "CPUs allowed" in r.stderr:
        pytest.fail("this test needs 2 CPUs")
    assert r.returncode == 0, r.stderr
    p = load_line(r.stdout)
    assert p["tasks"] == 2 and len(p["per_task"]) == 2 and all(x > 0 for x in p["per_task"])
    assert os.listdir(tmp_path) == []


def test_zlcload_hold_prefers_its_node(zlcload):
    r = subprocess.run(f"{zlcload} hold 8 0 & pid=$!; sleep 1; kill -TERM $pid; wait $pid",
                       shell=True, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert "zlc-hold-ready" in r.stdout and '"load": "hog", "mib": 8' in r.stdout


def test_pagefault_holds_start_with_and_without_a_node(tmp_path):
    """hold_start and cpu_nodes of workload.sh under sh -u, with a stand-in
    zlcload that records its arguments: a hold without a node (the rest)
    and one preferring node 0 both start and are waited for."""
    with open(os.path.join(workloads.TOP, "zlctool", "in_guest", "workload.sh")) as f:
        script = f.read()
    funcs = script[script.index("# The nodes of the CPUs, each once."):
                   script.index("pagefault() {")]
    stub = tmp_path / "zlcload"
    stub.write_text(f"#!/bin/sh\necho \"$*\" >> {tmp_path}/args\necho zlc-hold-ready\n"
                    "trap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n")
    stub.chmod(0o755)
    test = tmp_path / "t.sh"
    test.write_text("set -u\nholds=''\n" + funcs.replace("/tmp/hold.", f"{tmp_path}/hold.") +
                    "hold_start rest 8\nhold_start node0 4 0\n"
                    "for h in $holds; do kill -TERM $h; wait $h; done\ncpu_nodes\n")
    r = subprocess.run(["sh", str(test)], capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "args").read_text().split("\n")[:2] == ["hold 8", "hold 4 0"]
    assert r.stdout.split() and all(n.isdigit() for n in r.stdout.split())


def test_every_other_boot_runs_the_variants_in_reverse():
    plan = dict(patched="off on", base="base", rounds=1)
    assert workloads.variants("patched", plan) == "off on"
    assert workloads.variants("patched", plan, boot=1) == "on off"
    plan["rounds"] = 2
    assert workloads.variants("patched", plan, boot=1) == "off on on off"   # ABBA reversed


def test_zlcload_fill_in_lock_step_counts_and_gives_its_nodes_distances(zlcload):
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("needs 2 CPUs")
    out = subprocess.run([zlcload, "fill", "8", "2", "256"], capture_output=True, text=True,
                         check=True).stdout
    lines = [json.loads(l[len("zlc-load "):]) for l in out.splitlines()]
    assert sorted(l["thread"] for l in lines) == [0, 1]
    with open(f"/sys/devices/system/node/node{lines[0]['node']}/distance") as f:
        row = [int(x) for x in f.read().split()]
    for l in lines:
        assert l["step_kib"] == 256 and l["mib"] == 4 and l["touch_s"] > 0
        assert sum(l["pages_per_node"]) + l["pages_unknown"] == 64
        assert l["distance"] == row and l["distance"][l["node"]] == 10
    free = subprocess.run([zlcload, "fill", "8", "2"], capture_output=True, text=True,
                          check=True).stdout
    assert all(json.loads(l[len("zlc-load "):])["step_kib"] == 0 for l in free.splitlines())
    # A share that is no multiple of the step: the last step is shorter.
    odd = subprocess.run([zlcload, "fill", "8", "2", "12"], capture_output=True, text=True,
                         check=True).stdout
    assert sorted(sum(json.loads(l[len("zlc-load "):])["pages_per_node"]) +
                  json.loads(l[len("zlc-load "):])["pages_unknown"]
                  for l in odd.splitlines()) == [64, 64]
    for bad in ("-4", "3", "4k"):
        r = subprocess.run([zlcload, "fill", "8", "2", bad], capture_output=True, text=True)
        assert r.returncode == 2 and "usage" in r.stderr


def placement_sample(variant, step, topology, per_thread, dist, secs=0.008):
    """A placement sample whose fill put thread i's pages as per_thread[i]
    says: (its CPU's node, pages per node); dist[n]: node n's distances."""
    return dict(kernel="base" if variant == "base" else "patched", variant=variant,
                workload="placement", topology=topology, step_kib=step,
                threads=len(per_thread), numa=dict(other_node=1, local_node=1),
                remote_pct=50.0, vmstat={"zlc_skip": 0}, loads=[
                    dict(load="fill", thread=i, cpu=i, node=node, mib=4, step_kib=step,
                         touch_s=secs + i * 0.001, pages_per_node=per, pages_unknown=0,
                         distance=dist[node])
                    for i, (node, per) in enumerate(per_thread)])


def test_placement_plans_boots_and_counts():
    plan = workloads.PLANS["full"]["placement"]
    boots = workloads.boots("placement", plan)
    assert [b[3] for b in boots] == ["2n", "nps4", "cxl", "flex32"]
    # Counted, as the hog's runs of record; two boots of each kernel.
    assert all(b[2] and "-icount" in b[1] for b in boots) and plan["boots"] == 2
    assert workloads.command("placement", "patched", plan, "nps4") == \
        "VARIANTS='off on' sh /scripts/workload.sh placement 1536 2 '0 256'"
    # The second boot reverses the first: every kind at every position.
    assert workloads.command("placement", "patched", plan, "nps4", boot=1) == \
        "VARIANTS='on off' sh /scripts/workload.sh placement 1536 2 '0 256'"
    assert workloads.command("placement", "base", plan, "cxl", boot=1) == \
        "VARIANTS='base base' sh /scripts/workload.sh placement 1536 2 '0 256'"
    # 7.3.4 takes as many samples a boot as the series.
    assert workloads.expected("placement", "patched", plan) == 2 * 2
    assert workloads.expected("placement", "base", plan) == 2 * 2
    quick = workloads.PLANS["quick"]["placement"]
    assert [b[3] for b in workloads.boots("placement", quick)] == ["nps4"]
    # The same MiB on every kernel: a share of the topology, not of
    # MemAvailable, which differs by kernel.
    assert workloads.command("placement", "base", quick, "nps4") == \
        "VARIANTS='base' sh /scripts/workload.sh placement 716 2 '0 256'"
    assert "placement" in workloads.NAMES and "placement" in workloads.TABLES


def test_placement_script_reverses_the_steps_from_one_variant_to_the_next(tmp_path):
    with open(os.path.join(workloads.TOP, "zlctool", "in_guest", "workload.sh")) as f:
        script = f.read()
    body = script[script.index("placement() {"):script.index("# storm: a hog holds")]
    stub = ("sample() { w=$1 v=$2; shift 2; echo \"$w $v $*\"; }\n"
            "avail_mib() { echo 1000; }\n" + body + "\nVARIANTS='off on on off'\n"
            "placement 900 2 '0 2048'\n")
    out = subprocess.run(["sh", "-c", stub], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    steps = [(l.split()[1], l.split()[3]) for l in out]
    assert steps == [("off", "step_kib=0"), ("off", "step_kib=2048"),
                     ("on", "step_kib=2048"), ("on", "step_kib=0"),
                     ("on", "step_kib=0"), ("on", "step_kib=2048"),
                     ("off", "step_kib=2048"), ("off", "step_kib=0")]
    assert all(l.endswith("-- zlcload fill 900 2 " + l.split("step_kib=")[1].split()[0])
               for l in out)


def test_placement_table_gives_each_threads_own_node_share_and_distance():
    dist = {0: [10, 20, 30], 1: [20, 10, 30]}
    # Thread 0 on node 0: 30 of its 40 pages there, 10 on node 1; thread 1
    # on node 1: 20 there, 20 on node 2.
    base = placement_sample("base", 2048, "nps4", [(0, [30, 10]), (1, [0, 20, 20])], dist)
    assert workloads.mean_distance(base, 0) == (30 * 10 + 10 * 20) / 40
    assert workloads.mean_distance(base) == (300 + 200 + 200 + 600) / 80
    # A page on a node its distances leave out: no distance.
    assert workloads.mean_distance(placement_sample(
        "on", 0, "nps4", [(0, [1, 1, 1, 1])], dist)) is None
    # on: thread 1 lost 10 pages of its node to thread 0.
    on = placement_sample("on", 2048, "nps4", [(0, [30, 20]), (1, [0, 10, 20])], dist)
    off = json.loads(json.dumps(base))
    off["variant"] = "off"
    table = workloads.placement_table([base, off, on])
    lines = table.splitlines()
    t1 = next(l for l in lines if l.split()[:1] == ["t1"])
    assert t1.split() == ["t1", "%", "50.00", "50.00", "33.33", "-16.67", "+0.00"]
    first = next(l for l in lines if l.startswith("nps4 2048 KiB"))
    assert first.split()[3:] == ["t0", "%", "75.00", "75.00", "60.00", "-15.00", "+0.00"]
    every = next(l for l in lines if l.split()[:2] == ["all", "%"])
    assert every.split()[2:] == ["62.50", "62.50", "50.00", "-12.50", "+0.00"]
    # Mean distance: base and off 1,300 over 80 pages, on 1,400 over 80.
    dist = next(l for l in lines if l.split()[:1] == ["dist"])
    assert dist.split()[1:] == ["16.250", "16.250", "17.500", "+1.250", "+0.000"]
    head = workloads.headline({"placement": [base, off, on]})
    row = next(l for l in head.splitlines() if "nps4 lock step" in l)
    assert [c.strip() for c in row.split("|")[3:6]] == ["62.50", "62.50", "50.00"]
    assert workloads.check({"placement": [base, off, on]}, ["placement"]) == []
    # Per GiB: the slower thread's time over both threads' 8 MiB.
    assert workloads.fill_per_gib(on) == pytest.approx(0.009 / (8 / 1024))
    slow = placement_sample("on", 2048, "nps4", [(0, [30, 20]), (1, [0, 10, 20])], dist,
                            secs=0.010)
    cost = next(l for l in workloads.placement_table([base, off, on, slow]).splitlines()
                if l.startswith("nps4 2048 KiB") and "(" in l and "%" not in l)
    # on: 1.152 and 1.408 (median 1.280) against base's 1.152: 1.111, pairs 1.000..1.222.
    assert cost.split()[-4:] == ["1.111", "(1.000..1.222)", "1.000", "(1.000..1.000)"]
    assert workloads.fill_per_gib(dict(base, loads=[])) is None
    old = json.loads(json.dumps(base))
    del old["loads"][0]["touch_s"]
    assert workloads.fill_per_gib(old) is None
    short = json.loads(json.dumps(on))
    short["loads"].pop()
    assert workloads.check({"placement": [short]}, ["placement"]) == \
        ["placement patched on: 1 fills of 2 threads, or pages without a distance"]


def test_placement_table_gives_the_room_each_fill_took():
    dist = {0: [10, 20], 1: [20, 10]}
    # Both threads on node 0; 64 KiB a sampled page: 160 + 96 pages on
    # node 0 are 16 MiB, of 32 MiB free there at the start (base), of 20
    # MiB (on: less room on that boot, the same placement rule).
    base = placement_sample("base", 2048, "2n", [(0, [160, 0]), (0, [96, 160])], dist)
    on = json.loads(json.dumps(base))
    on["variant"] = "on"
    for s, free in ((base, 32), (on, 20)):
        for l in s["loads"]:
            l["free_kib"] = [free * 1024, 4096]
    assert workloads.own_free_mib(base) == 32
    assert workloads.own_taken_pct(base) == 50.0
    assert workloads.own_taken_pct(on) == 80.0
    lines = workloads.placement_table([base, on]).splitlines()
    taken = next(l for l in lines if l.split()[:2] == ["taken", "%"])
    assert taken.split()[2:] == ["50.00", "-", "80.00", "+30.00", "-"]
    room = next(l for l in lines if l.split()[:1] == ["room"])
    assert room.split()[1:] == ["32.0", "-", "20.0", "-12.0", "-"]
    # Threads on nodes 0 and 1: each node's room counted once, and the
    # pages thread 0 put on thread 1's node took that node's room too.
    two = placement_sample("on", 2048, "nps4", [(0, [64, 32]), (1, [0, 64])], dist)
    for l in two["loads"]:
        l["free_kib"] = [8 * 1024, 8 * 1024, 1024]
    assert workloads.own_free_mib(two) == 16
    assert workloads.own_taken_pct(two) == 100.0 * (64 + 32 + 64) * 64 / 1024 / 16
    # A node without a record (-1) or missing: no room figure.
    for l in two["loads"]:
        l["free_kib"] = [8 * 1024, -1]
    assert workloads.own_free_mib(two) is None and workloads.own_taken_pct(two) is None
    two["loads"][0]["free_kib"] = two["loads"][1]["free_kib"] = [8 * 1024]
    assert workloads.own_free_mib(two) is None
    # left_kib: what the walks left free there, each node once.
    for s, left in ((base, 2.5), (on, 3)):
        for l in s["loads"]:
            l["left_kib"] = [int(left * 1024), 1024]
    assert workloads.own_left_mib(base) == 2.5
    lines = workloads.placement_table([base, on]).splitlines()
    left = next(l for l in lines if l.split()[:1] == ["left"])
    assert left.split()[1:] == ["2.5", "-", "3.0", "+0.5", "-"]
    # slab_kib: the unreclaimable slab there at the start.
    assert not any(l.split()[:1] == ["slab"] for l in lines)
    for s, slab in ((base, 3.5), (on, 5.5)):
        for l in s["loads"]:
            l["slab_kib"] = [int(slab * 1024), 2048]
    slab = next(l for l in workloads.placement_table([base, on]).splitlines()
                if l.split()[:1] == ["slab"])
    assert slab.split()[1:] == ["3.50", "-", "5.50", "+2.00", "-"]
    # Records without free_kib and left_kib (runs before them): no such rows.
    for l in base["loads"] + on["loads"]:
        del l["free_kib"], l["left_kib"]
    assert workloads.own_free_mib(base) is None
    assert not any(l.split()[:1] in (["room"], ["left"]) for l in workloads.placement_table(
        [base, on]).splitlines())
