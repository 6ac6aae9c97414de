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
    for why, caught in (("node 0's first zone fails its low watermark", []),
                        ("no nodes", ["zonelist_cache.zlc_test_z_to_n"])):
        beside = list(hog)
        beside[i] = beside[i].replace("ok 1 zlc_test_z_to_n", f"ok 1 zlc_test_z_to_n # SKIP {why}")
        assert hotplug.rerun_differs(lines + beside, 1) == caught
    # The first re-run, after hotplug without a load, allows no skip.
    first = [l.replace("ok 1 zlc_test_z_to_n", "ok 1 zlc_test_z_to_n # SKIP first zone")
             if l.startswith("zlc-rerun: ") else l for l in lines]
    assert hotplug.rerun_differs(first) == ["zonelist_cache.zlc_test_z_to_n"]


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
