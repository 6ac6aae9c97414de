import os

from zlctool import guest, hotplug


def test_rerun_counts_only_the_suite_cases():
    lines = [
        "zlc-rerun: KTAP version 1",
        "zlc-rerun: # Subtest: zonelist_cache",
        "zlc-rerun: 1..3",
        "zlc-rerun:     ok 1 zlc_test_z_to_n",
        "zlc-rerun:     not ok 2 zlc_test_zap",
        "zlc-rerun:     ok 3 zlc_test_thp_failure # SKIP needs node 0 with more than 4 GiB",
        "zlc-rerun: not ok 1 zonelist_cache",          # the suite line is not a case
        "[   3.1] ok 4 zlc_test_spill",                 # the boot-time run is not the re-run
    ]
    assert hotplug.count_rerun(lines) == (1, 1, 1)


def test_guest_script_cycles_the_movable_blocks_of_one_node():
    with open(os.path.join(guest.SCRIPTS, "hotplug.sh")) as f:
        script = f.read()
    assert "node=/sys/devices/system/node/node$NODE" in script
    assert 'echo offline > "$b/state"' in script and 'echo online_movable > "$b/state"' in script
    assert "online hot-add" in script
    assert 'seq "$CYCLES"' in script
    assert "sed 's/^/zlc-rerun: /' /sys/kernel/debug/kunit/zonelist_cache/results" in script
    # The second re-run has a hog beside it.
    hog = script.index("zlc-hotplug: rerun beside a hog")
    assert "start_hog asis" in script[script.index("zlc-rerun: "):hog]
    assert "zlc-rerun-hog: " in script[hog:]


def test_guest_script_counts_marks_and_recoveries_per_node():
    with open(os.path.join(guest.SCRIPTS, "hotplug.sh")) as f:
        script = f.read()
    assert 'echo "hist:keys=node_id:size=512" > $ev/mm_zlc_$e/trigger' in script
    assert "for e in full recover; do" in script
    assert "rec=$(( $(count 0) - rec0 ))" in script


def test_each_rerun_needs_its_own_summary():
    summary = "[   31.2] # zonelist_cache: pass:11 fail:0 skip:2 total:13"
    lines = ["zlc-hotplug: rerun", summary, "zlc-hotplug: rerun beside a hog"]
    assert hotplug.rerun_reported(lines, 0) and not hotplug.rerun_reported(lines, 1)
    lines = ["zlc-hotplug: rerun", "zlc-hotplug: rerun beside a hog", summary]
    assert not hotplug.rerun_reported(lines, 0) and hotplug.rerun_reported(lines, 1)
    ktap = ["KTAP version 1", "# Subtest: zonelist_cache", "1..2",
            "    ok 1 zlc_test_z_to_n", "    not ok 2 zlc_test_zap", "not ok 1 zonelist_cache"]
    lines = [f"zlc-rerun: {l}" for l in ktap[:4]] + [f"zlc-rerun-hog: {l}" for l in ktap]
    assert hotplug.count_rerun(lines, 1) == (1, 1, 0)


def test_rerun_must_be_logged_after_it_was_asked_for():
    boot = "[    0.67] # zonelist_cache: pass:11 fail:0 skip:2 total:13"
    assert not hotplug.rerun_reported([boot, "zlc-hotplug: rerun"])
    assert hotplug.rerun_reported([boot, "zlc-hotplug: rerun",
                                   "[   31.2] # zonelist_cache: pass:11 fail:0 skip:2 total:13"])
    assert not hotplug.rerun_reported(["zlc-hotplug: rerun",
                                       "[   31.2] # zonelist_cache: pass:10 fail:1 skip:2 total:13"])


def test_the_echoed_results_file_does_not_prove_a_rerun():
    echoed = "zlc-rerun: # zonelist_cache: pass:16 fail:0 skip:2 total:18"
    assert not hotplug.rerun_reported(["zlc-hotplug: rerun", echoed])


def test_the_rerun_must_give_each_case_its_boot_time_status():
    with open(os.path.join(os.path.dirname(__file__), "data", "hotplug-console.log")) as f:
        lines = f.read().splitlines()
    assert hotplug.rerun_differs(lines) == []
    # A case that passed at boot and skips in the re-run is caught by name.
    i = next(i for i, l in enumerate(lines) if l.startswith("zlc-rerun:") and "ok 1 zlc_test_z_to_n" in l)
    lines[i] = lines[i].replace("ok 1 zlc_test_z_to_n", "ok 1 zlc_test_z_to_n # SKIP no nodes")
    assert hotplug.rerun_differs(lines) == ["zonelist_cache.zlc_test_z_to_n"]


def test_beside_the_hog_only_its_own_precondition_may_skip():
    with open(os.path.join(os.path.dirname(__file__), "data", "hotplug-console.log")) as f:
        lines = f.read().splitlines()
    hog = [l.replace("zlc-rerun: ", "zlc-rerun-hog: ") for l in lines
           if l.startswith("zlc-rerun: ")]
    i = next(i for i, l in enumerate(hog) if "ok 1 zlc_test_z_to_n" in l)
    # The suite's own words for what the held spill can take away.
    for why, caught in (("zone DMA32 of node 0 fails its low watermark", []),
                        ("kswapd of node 0 stays awake", []),
                        ("needs 512 pages of the first zone", []),
                        ("needs a first zone with 4 MiB free", []),
                        ("no nodes", ["zonelist_cache.zlc_test_z_to_n"]),
                        ("needs at least 2 online nodes with memory, has 1",
                         ["zonelist_cache.zlc_test_z_to_n"])):
        beside = list(hog)
        beside[i] = beside[i].replace("ok 1 zlc_test_z_to_n", f"ok 1 zlc_test_z_to_n # SKIP {why}")
        assert hotplug.rerun_differs(lines + beside, 1) == caught
    # The first re-run, after hotplug without a load, allows no skip for
    # the load...
    first = [l.replace("ok 1 zlc_test_z_to_n",
                       "ok 1 zlc_test_z_to_n # SKIP zone DMA32 of node 0 fails its low watermark")
             if l.startswith("zlc-rerun: ") else l for l in lines]
    assert hotplug.rerun_differs(first) == ["zonelist_cache.zlc_test_z_to_n"]
    # ...but one for a kswapd awake at that moment, in the re-run or at boot.
    awake = "ok 1 zlc_test_z_to_n # SKIP kswapd of node 2 stays awake"
    first = [l.replace("ok 1 zlc_test_z_to_n", awake) if l.startswith("zlc-rerun: ") else l
             for l in lines]
    assert hotplug.rerun_differs(first) == []
    cut = lines.index(next(l for l in lines if "zlc-guest: running /cmd" in l))
    at_boot = [l.replace("ok 1 zlc_test_z_to_n", awake) if i < cut else l
               for i, l in enumerate(lines)]
    assert any(awake in l for l in at_boot[:cut])
    assert hotplug.rerun_differs(at_boot) == []


def _suite(names, prefix="", skip=()):
    out = ["KTAP version 1", "1..1", "    KTAP version 1", "    # Subtest: zonelist_cache",
           f"    1..{len(names)}"]
    out += [f"    ok {k} {n}" + (" # SKIP kswapd of node 0 stays awake" if n in skip else "")
            for k, n in enumerate(names, 1)]
    out += ["ok 1 zonelist_cache"]
    return [prefix + l for l in out]


def test_beside_the_hog_a_case_it_is_for_must_pass():
    names = ["zlc_test_rebuild"] + hotplug.LOAD_CASES[1]
    boot = _suite(names) + ["zlc-guest: running /cmd"]
    tag = hotplug.RERUNS[1][1]
    # Every case it is for skipped: the run proved nothing.
    rerun = _suite(names, tag, skip=hotplug.LOAD_CASES[1])
    assert hotplug.load_cases_passed(boot + rerun) == (0, len(hotplug.LOAD_CASES[1]))
    # One of them passed.
    rerun = _suite(names, tag, skip=hotplug.LOAD_CASES[1][1:])
    assert hotplug.load_cases_passed(boot + rerun) == (1, len(hotplug.LOAD_CASES[1]))
    # A case renamed in the suite is not silently dropped from the list.
    renamed = [n.replace("zlc_test_off", "zlc_test_switched_off") for n in names]
    both = _suite(renamed) + ["zlc-guest: running /cmd"] + _suite(renamed, tag)
    assert hotplug.load_cases_passed(both) == (len(hotplug.LOAD_CASES[1]) - 1,
                                               len(hotplug.LOAD_CASES[1]) - 1)


def test_the_cases_beside_the_hog_are_the_suites():
    # Each name the judge waits for is a case of the series' KUnit suite.
    patch = next(f for f in os.listdir(os.path.join(guest.TOP, "patches"))
                 if "KUnit" in f)
    with open(os.path.join(guest.TOP, "patches", patch)) as f:
        text = f.read()
    for name in hotplug.LOAD_CASES[1]:
        assert f"KUNIT_CASE({name})" in text, name


def test_the_hog_is_stopped_while_the_suite_runs_beside_it():
    with open(os.path.join(guest.SCRIPTS, "hotplug.sh")) as f:
        script = f.read()
    beside = script[script.index('if [ "${BESIDE_HOG:-1}" = 1 ]'):]
    stop, run = beside.index("pause_hog STOP"), beside.index("zlc-hotplug: rerun beside a hog")
    results, cont = beside.index("sed 's/^/zlc-rerun-hog: /'"), beside.index("pause_hog CONT")
    assert stop < run < results < cont
    # No fixed wait decides whether the hog spilled: a pass ends, or it spills.
    assert "-lt 60" not in beside and "grep -q -e zlc-run -e '^not ok' /tmp/hog2.log" in beside


def test_markers_come_through_the_kernel_log():
    # A marker the guest echoed to the console could be cut by the suite's
    # own lines ("zlc-hotplug: rer[   13.1]     KTAP version 1"); through
    # /dev/kmsg it is a line of its own, after a timestamp.
    with open(os.path.join(guest.SCRIPTS, "hotplug.sh")) as f:
        script = f.read()
    for marker, _ in hotplug.RERUNS:
        assert f'echo "{marker}" > /dev/kmsg' in script
    summary = "[   31.2] # zonelist_cache: pass:11 fail:0 skip:2 total:13"
    assert hotplug.rerun_reported(["[   30.9] zlc-hotplug: rerun", summary], 0)
    assert not hotplug.rerun_reported(["zlc-hotplug: rer[   30.9]     KTAP version 1", summary], 0)
    assert not hotplug.is_marker("[   30.9] zlc-hotplug: rerun beside a hog", "zlc-hotplug: rerun")


def test_a_failing_rerun_case_prints_its_log():
    lines = [
        "zlc-rerun-hog: KTAP version 1",
        "zlc-rerun-hog: # Subtest: zonelist_cache",
        "zlc-rerun-hog: 1..3",
        "zlc-rerun-hog:     # zlc_test_a: a note of a passing case",
        "zlc-rerun-hog:     ok 1 zlc_test_a",
        "zlc-rerun-hog:     # zlc_test_b: EXPECTATION FAILED at mm/x.c:10",
        "zlc-rerun-hog:     Expected marked to be true",
        "zlc-rerun-hog:     not ok 2 zlc_test_b",
        "zlc-rerun-hog:     ok 3 zlc_test_c",
        "zlc-rerun-hog: not ok 1 zonelist_cache",
    ]
    assert hotplug.rerun_failures(lines, 1) == [
        "    # zlc_test_b: EXPECTATION FAILED at mm/x.c:10",
        "    Expected marked to be true",
        "not ok zlc_test_b",
    ]
    # The boot-time run, untagged, is not re-run 0's.
    assert hotplug.rerun_failures(lines, 0) == []
