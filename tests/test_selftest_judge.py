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
