"""The tools make check and make test start.

Kernel scripts started through '#!/usr/bin/env python3' find the Python
'make deps' provisions, whatever python3 comes first on PATH (issue 20: a
pyenv python3 without ply crashed checkpatch's SPDX check); and a check
whose tool crashes fails as a crash, not with findings; and a sparse too
old for the tree fails the warnings check instead of checking nothing.  Needs the work
tree of BASE (build/linux-7.3), which 'make test' fetches before pytest
runs."""

import os
import subprocess

import pytest

from zlctool import guest

TOP = guest.TOP
TREE = guest.TREE
SERIES_DIR = os.path.join(TOP, os.environ.get("PATCHES", "patches"))


def spdx_patch():
    """The first patch of the series that adds a file with an SPDX line."""
    for name in sorted(os.listdir(SERIES_DIR)):
        path = os.path.join(SERIES_DIR, name)
        if name[:4].isdigit() and name.endswith(".patch") and \
                "+// SPDX-License-Identifier" in open(path).read():
            return path
    raise AssertionError(f"no patch in {SERIES_DIR} adds an SPDX line")


@pytest.fixture
def plyless(tmp_path):
    """A directory whose python3 is Debian's without its site directories:
    no ply, no GitPython, like a pyenv build."""
    d = tmp_path / "bin"
    d.mkdir()
    py = d / "python3"
    py.write_text("#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n")
    py.chmod(0o755)
    r = subprocess.run([str(py), "-c", "import ply"], capture_output=True, text=True)
    assert r.returncode != 0 and "ply" in r.stderr, "the stand-in python3 must lack ply"
    return d


def env_with(first, **extra):
    env = dict(os.environ, PATH=f"{first}:{os.environ['PATH']}", **extra)
    env.pop("PY", None)
    env.update(extra)
    return env


def test_the_trap_is_real_without_the_fix(plyless):
    # checkpatch.pl run bare with that python3 first: spdxcheck.py crashes
    # on the patch's SPDX line (and checkpatch takes the license as valid).
    r = subprocess.run(["scripts/checkpatch.pl", "--strict", "--terse", "--no-summary", spdx_patch()],
                       cwd=TREE, capture_output=True, text=True, env=env_with(plyless))
    assert "No module named 'ply'" in r.stderr


def test_checkpatch_check_passes_with_a_plyless_python3_first(plyless):
    r = subprocess.run(["scripts/check.sh"], cwd=TOP, capture_output=True, text=True,
                       env=env_with(plyless, CHECKS="checkpatch"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "check: checkpatch ok" in r.stdout
    log = open(os.path.join(guest.OUT, "check", "checkpatch.log")).read()
    assert "Traceback" not in log and "CRASH" not in log


def test_a_crashing_checkpatch_fails_as_a_crash_not_as_findings(plyless):
    # Provision the ply-less Python on purpose: the check must say it crashed.
    r = subprocess.run(["scripts/check.sh"], cwd=TOP, capture_output=True, text=True,
                       env=env_with(plyless, CHECKS="checkpatch", PY=str(plyless / "python3")))
    assert r.returncode == 1
    assert "checkpatch.pl CRASHED on" in r.stdout
    log = open(os.path.join(guest.OUT, "check", "checkpatch.log")).read()
    assert "CRASH: " + os.path.basename(spdx_patch())[:5] in log and "No module named 'ply'" in log
    assert "FINDING:" not in log


def test_make_runs_kernel_scripts_with_the_provisioned_python(plyless):
    # What every target sees: 'python3' on make's PATH is PY (it imports ply).
    r = subprocess.run(["make", "-s", "--no-print-directory", "-f", "-", "show"], cwd=TOP,
                       input="include Makefile\nshow:\n\t@python3 -c 'import ply, sys; print(sys.executable)'\n",
                       capture_output=True, text=True, env=env_with(plyless))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "/usr/bin/python3"


def test_a_warnings_check_whose_sparse_is_too_old_for_the_tree_fails():
    # Debian 12's sparse lacks __typeof_unqual__: 7.3's kbuild switches C=2
    # off with a warning, and a check that checked nothing must not pass.
    if guest.BASE == "6.12":
        pytest.skip("6.12 takes Debian 12's sparse")
    r = subprocess.run(["scripts/check.sh"], cwd=TOP, capture_output=True, text=True,
                       env=dict(os.environ, CHECKS="warnings", SPARSE="/usr/bin/sparse"))
    assert r.returncode == 1, r.stdout
    log = open(os.path.join(guest.OUT, "check", "warnings.log")).read()
    assert "sparse did not run on" in log
