"""zlctool.selftest.judge_run: the verdict on one guest's kselftest run."""

from zlctool.selftest import judge_run


def test_a_run_that_passes_counts_its_results():
    assert judge_run("[t]", 0, ["ok 1 a", "ok 2 b"], (2, 0, 0, None), 2) == (2, 0, 0)


def test_a_skip_fails_the_run():
    # A skipped scene leaves placement unchecked: one failure on top.
    assert judge_run("[t]", 0, [], (1, 0, 1, None), 2) == (1, 1, 1)


def test_too_few_results_fail_the_run():
    assert judge_run("[t]", 0, [], (1, 0, 0, None), 2) == (1, 1, 0)


def test_a_bad_exit_or_a_plan_skip_fails_the_run():
    assert judge_run("[t]", 1, [], (2, 0, 0, None), 2) == (2, 1, 0)
    assert judge_run("[t]", 4, [], (0, 0, 0, "needs 2 nodes"), 2) == (0, 1, 0)


def test_counts_of_captured_consoles():
    import os
    from zlctool.selftest import counts
    data = os.path.join(os.path.dirname(__file__), "data")
    with open(os.path.join(data, "memhog-1n-console.log")) as f:
        assert counts(f.read().splitlines()) == \
            (0, 0, 0, "needs at least 2 NUMA nodes with memory, has 1")
    with open(os.path.join(data, "memhog-4n-console.log")) as f:
        assert counts(f.read().splitlines()) == (4, 0, 0, None)
    # A result the plan promised and the console lacks (a test cut short)
    # fails.  (One beyond the plan, kunit_parser drops; kselftest's own
    # ksft_finished() fails the exit status for it.)
    assert counts(["TAP version 13", "1..2", "ok 1 a"])[:2] == (1, 2)


def test_vmtests_ran_lists_what_run_vmtests_sh_ran():
    from zlctool.selftest import VMTESTS_DEFAULT, vmtests_ran
    lines = ["# ----------------------------------",
             "# running ./zonelist_cache_trace.sh",
             "# ----------------------------------",
             "# # CPU 0 on node 0: touching 964 MiB",
             "ok 1 zonelist_cache_trace.sh",
             "# running ./zonelist_cache_locality",
             "ok 2 zonelist_cache_locality"]
    assert vmtests_ran(lines) == VMTESTS_DEFAULT
    # The hog, run by default, is what the check is there to catch.
    assert vmtests_ran(lines + ["# running ./zonelist_cache_memhog -p 60 -r 3"])[-1] == \
        "zonelist_cache_memhog"


def test_run_vmtests_trailing_plan_is_counted():
    from zlctool.selftest import counts, vmtests_tap
    lines = ["# # ok 1 node 0 in its low..high window", "# SUMMARY: PASS=2 SKIP=0 FAIL=0",
             "TAP version 13", "ok 1 zonelist_cache_trace.sh", "ok 2 zonelist_cache_locality",
             "1..2"]
    assert counts(vmtests_tap(lines))[:3] == (2, 0, 0)
    # As printed, kunit_parser takes the trailing plan for errors.
    assert counts([l for l in lines if not l.startswith("#")])[1] > 0
