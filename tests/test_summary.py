import pytest

from zlctool import summary, stage


def test_sum_of_stages_and_closing_line(tmp_path, capsys):
    summary.write(str(tmp_path / "1-a.counts"), 3, 0, 1)
    summary.write(str(tmp_path / "2-b.counts"), 10, 0, 2)
    assert summary.main([str(tmp_path)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == "test: 13 passed, 0 failed, 3 skipped"


def test_failure_makes_it_fail(tmp_path, capsys):
    summary.write(str(tmp_path / "1-a.counts"), 3, 2)
    assert summary.main([str(tmp_path)]) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1] == "test: 3 passed, 2 failed"


def test_nothing_ran_is_a_failure(tmp_path, capsys):
    assert summary.main([str(tmp_path)]) == 1
    assert "1 failed" in capsys.readouterr().out


def test_bad_counts_file(tmp_path):
    (tmp_path / "x.counts").write_text("garbage\n")
    with pytest.raises(ValueError):
        summary.total(str(tmp_path))


def test_pytest_closing_line():
    assert stage.pytest_counts(["....", "===== 12 passed, 1 skipped in 0.5s ====="]) == (12, 0, 1)
    assert stage.pytest_counts(["== 2 failed, 3 passed, 1 error in 1s =="]) == (3, 3, 0)
    assert stage.pytest_counts(["no summary here"]) is None
    assert stage.pytest_counts([".....", "58 passed in 2.98s"]) == (58, 0, 0)
    assert stage.pytest_counts(["1 failed, 4 passed, 2 skipped in 21.5s"]) == (4, 1, 2)


def test_stage_counts_a_failing_command(tmp_path):
    assert stage.main([str(tmp_path), "s", "--", "false"]) == 1
    c = summary.read(str(tmp_path / "s.counts"))
    assert c == {"passed": 0, "failed": 1, "skipped": 0}
    assert stage.main([str(tmp_path), "t", "--", "true"]) == 0
    assert summary.read(str(tmp_path / "t.counts"))["passed"] == 1


def test_finish_writes_counts_and_returns_status(tmp_path, capsys):
    path = tmp_path / "x.counts"
    assert summary.finish("x", str(path), 3, 0, 1) == 0
    assert path.read_text() == "passed 3 failed 0 skipped 1\n"
    assert "[x] 3 passed, 0 failed, 1 skipped" in capsys.readouterr().out
    assert summary.finish("x", str(path), 3, 2) == 1
