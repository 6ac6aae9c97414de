"""scripts/series.sh export / check-export / tree on a small stand-in tree."""
import hashlib
import os
import shutil
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERIES = os.path.join(TOP, "scripts", "series.sh")


# The developer's own identity, for the commits the tests make in the tree
# (which, like the tree 'series.sh tree' creates, has none of its own).
DEVELOPER = dict(GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@example.org",
                 GIT_COMMITTER_NAME="T", GIT_COMMITTER_EMAIL="t@example.org")


def git(tree, *args):
    return subprocess.run(["git", "-C", str(tree), *args], check=True,
                          capture_output=True, text=True,
                          env=dict(os.environ, **DEVELOPER)).stdout


def no_identity(env, home):
    """env on a machine where git knows no one: no identity in the
    environment, an empty home, no system config."""
    env = {k: v for k, v in env.items()
           if k not in ("EMAIL", "GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME")
           and not k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_"))}
    home.mkdir(exist_ok=True)
    return dict(env, HOME=str(home), GIT_CONFIG_NOSYSTEM="1")


@pytest.fixture
def work(tmp_path):
    tree = tmp_path / "linux"
    patches = tmp_path / "patches"
    tree.mkdir()
    patches.mkdir()
    git(tree, "init", "-q", "-b", "work")
    (tree / "mm.c").write_text("int a;\n")
    git(tree, "add", ".")
    git(tree, "commit", "-q", "-m", "base")
    git(tree, "tag", "base")
    (tree / ".git" / "zlc-base").write_text("pkg 1.0\n")
    env = dict(os.environ, TREE=str(tree), PATCHES=str(patches),
               BASE_PKG="pkg", BASE_VERSION="1.0", BASE_SHA256="0")
    return tree, patches, env


def run(env, cmd):
    return subprocess.run([SERIES, cmd], env=env, capture_output=True, text=True)


def commit(tree, text, msg):
    (tree / "mm.c").write_text(text)
    git(tree, "commit", "-q", "-a", "-m", msg)


def test_export_round_trip_and_check(work):
    tree, patches, env = work
    assert run(env, "check-export").returncode == 0
    commit(tree, "int a;\nint b;\n", "mm: add b")
    r = run(env, "check-export")
    assert r.returncode != 0 and "0001-mm-add-b.patch" in r.stderr
    assert run(env, "export").returncode == 0
    assert (patches / "series").read_text() == "0001-mm-add-b.patch\n"
    text = (patches / "0001-mm-add-b.patch").read_text()
    assert text.startswith("From 0000000000000000000000000000000000000000 ")
    assert run(env, "check-export").returncode == 0


def test_export_does_not_churn(work):
    tree, patches, env = work
    commit(tree, "int a;\nint b;\n", "mm: add b")
    run(env, "export")
    before = {p.name: p.read_bytes() for p in patches.iterdir()}
    r = run(env, "export")
    assert "already matches" in r.stdout
    assert {p.name: p.read_bytes() for p in patches.iterdir()} == before


def test_a_message_git_am_would_change_is_not_exported(work):
    """A message with blank lines in a row (a cherry-pick can keep them)
    exports a patch that 'git am' applies with one blank line: the stored
    series then never matches a tree made from it (CI's check-export)."""
    tree, patches, env = work
    (tree / "mm.c").write_text("int a;\nint b;\n")
    git(tree, "commit", "-q", "-a", "--cleanup=verbatim",
        "-m", "mm: add b\n\nOne.\n\n\nTwo.\n")
    r = run(env, "export")
    assert r.returncode != 0 and "mm: add b" in r.stderr
    assert not (patches / "series").exists()
    r = run(env, "check-export")
    assert r.returncode != 0 and "does not come back from its patch" in r.stderr
    git(tree, "commit", "-q", "--amend", "--no-edit", "--cleanup=strip")
    assert run(env, "export").returncode == 0
    assert run(env, "check-export").returncode == 0


@pytest.mark.parametrize("message", [
    "mm: add b\nand more of the subject\n\nBody.\n",      # folded into one Subject:
    "mm: add b\n\nBefore.\n---\nAfter, which git am drops.\n",
])
def test_a_message_that_does_not_survive_its_patch_is_named(work, message):
    tree, patches, env = work
    (tree / "mm.c").write_text("int a;\nint b;\n")
    git(tree, "commit", "-q", "-a", "-m", message)
    r = run(env, "export")
    assert r.returncode != 0 and "mm: add b" in r.stderr
    assert run(env, "check-export").returncode != 0


def test_uncommitted_change_fails_check(work):
    tree, patches, env = work
    (tree / "mm.c").write_text("int changed;\n")
    r = run(env, "check-export")
    assert r.returncode != 0 and "uncommitted" in r.stderr
    assert run(env, "export").returncode != 0


def test_cover_letter_is_kept_and_stale_patches_go(work):
    tree, patches, env = work
    commit(tree, "int a;\nint b;\n", "mm: add b")
    commit(tree, "int a;\nint b;\nint c;\n", "mm: add c")
    run(env, "export")
    (patches / "0000-cover-letter.patch").write_text("cover\n")
    git(tree, "reset", "-q", "--hard", "HEAD~1")
    run(env, "export")
    assert (patches / "0000-cover-letter.patch").read_text() == "cover\n"
    assert not (patches / "0002-mm-add-c.patch").exists()
    assert (patches / "series").read_text() == "0001-mm-add-b.patch\n"


def test_tree_keeps_unexported_commits(work):
    tree, patches, env = work
    commit(tree, "int a;\nint b;\n", "mm: add b")
    run(env, "export")
    commit(tree, "int a;\nint b;\nint c;\n", "mm: add c")
    head = git(tree, "rev-parse", "HEAD")
    r = run(env, "tree")
    assert r.returncode != 0 and f"holds commits that are not in {patches}/" in r.stderr
    assert git(tree, "rev-parse", "HEAD") == head


def test_tree_applies_newer_patches(work):
    tree, patches, env = work
    commit(tree, "int a;\nint b;\n", "mm: add b")
    run(env, "export")
    saved = (patches / "0001-mm-add-b.patch").read_text()
    # Someone else's newer series arrives in patches/ (e.g. a git pull).
    git(tree, "reset", "-q", "--hard", "base")
    commit(tree, "int a;\nint z;\n", "mm: add z")
    run(env, "export")
    newer = {p.name: p.read_text() for p in patches.iterdir()}
    git(tree, "reset", "-q", "--hard", "base")
    commit(tree, "int a;\nint b;\n", "mm: add b")
    for p in patches.iterdir():
        p.unlink()
    (patches / "0001-mm-add-b.patch").write_text(saved)
    (patches / "series").write_text("0001-mm-add-b.patch\n")
    run(env, "export")                      # tree and patches/ in sync on 'add b'
    for p in patches.iterdir():
        p.unlink()
    for name, text in newer.items():        # the pull
        (patches / name).write_text(text)
    r = run(env, "tree")
    assert r.returncode == 0, r.stderr
    assert "re-applying" in r.stdout
    assert (tree / "mm.c").read_text() == "int a;\nint z;\n"
    assert "backup/" in git(tree, "branch")
    assert run(env, "check-export").returncode == 0


def test_tree_is_idempotent(work):
    tree, patches, env = work
    commit(tree, "int a;\nint b;\n", "mm: add b")
    run(env, "export")
    head = git(tree, "rev-parse", "HEAD")
    r = run(env, "tree")
    assert r.returncode == 0 and "up to date" in r.stdout
    assert git(tree, "rev-parse", "HEAD") == head


def fake_deb(tmp_path, env):
    """A linux-source package holding the fixture's base (mm.c), in DL,
    its hash pinned in env."""
    pkg = tmp_path / "pkg"
    (pkg / "DEBIAN").mkdir(parents=True)
    (pkg / "DEBIAN" / "control").write_text(
        "Package: pkg\nVersion: 1.0\nArchitecture: all\nMaintainer: T <t@example.org>\n"
        "Description: a stand-in kernel source\n")
    src = tmp_path / "src" / "linux-source-1.0"
    src.mkdir(parents=True)
    (src / "mm.c").write_text("int a;\n")
    (pkg / "usr" / "src").mkdir(parents=True)
    subprocess.run(["tar", "-cJf", str(pkg / "usr" / "src" / "linux-source-1.0.tar.xz"),
                    "-C", str(src.parent), src.name], check=True)
    dl = tmp_path / "dl"
    dl.mkdir()
    deb = dl / "pkg_1.0_all.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(pkg), str(deb)],
                   check=True, capture_output=True)
    return dict(env, DL=str(dl), BASE_SHA256=hashlib.sha256(deb.read_bytes()).hexdigest())


@pytest.mark.skipif(not shutil.which("dpkg-deb"), reason="needs dpkg-deb")
def test_tree_applies_the_series_with_no_git_identity(work, tmp_path):
    tree, patches, env = work
    commit(tree, "int a;\nint b;\n", "mm: add b")
    run(env, "export")
    shutil.rmtree(tree)
    env = no_identity(fake_deb(tmp_path, env), tmp_path / "home")
    r = run(env, "tree")
    assert r.returncode == 0, r.stderr
    assert "1 patches applied" in r.stdout
    assert (tree / "mm.c").read_text() == "int a;\nint b;\n"
    # The tree has no identity of its own: the developer's applies to
    # their commits, never a made-up one.
    for key in ("user.name", "user.email"):
        assert subprocess.run(["git", "-C", str(tree), "config", "--local", key],
                              capture_output=True).returncode == 1
    assert run(env, "check-export").returncode == 0


def test_sign_offs_are_neither_stored_nor_compared(work):
    tree, patches, env = work
    commit(tree, "int a;\nint b;\n", "mm: add b\n\nBecause b.")
    commit(tree, "int a;\nint b;\nint c;\n", "mm: add c")       # a subject alone
    assert run(env, "export").returncode == 0
    stored = {p.name: p.read_text() for p in patches.iterdir()}
    # A poster signs the commits off in the tree: the series still matches it.
    git(tree, "rebase", "-q", "--exec", "git commit -q --amend --no-edit --signoff", "base")
    assert git(tree, "log", "--format=%(trailers:key=Signed-off-by,valueonly)",
               "base..").split() == ["T", "<t@example.org>"] * 2
    r = run(env, "check-export")
    assert r.returncode == 0, r.stderr
    assert "up to date" in run(env, "tree").stdout
    # ... and export writes the same files, with no sign-off in them.
    assert "already matches" in run(env, "export").stdout
    assert {p.name: p.read_text() for p in patches.iterdir()} == stored
    assert "Signed-off-by" not in "".join(stored.values())
    # A stored patch that carries one matches too; export takes it out.
    name = "0001-mm-add-b.patch"
    (patches / name).write_text(stored[name].replace(
        "Because b.\n---\n", "Because b.\n\nSigned-off-by: Someone <s@example.org>\n---\n"))
    assert run(env, "check-export").returncode == 0
    assert run(env, "export").returncode == 0
    assert (patches / name).read_text() == stored[name]
    # Everything else still counts: the code differs.
    (tree / "mm.c").write_text("int a;\nint b;\nint d;\n")
    git(tree, "commit", "-q", "-a", "--amend", "--no-edit")
    r = run(env, "check-export")
    assert r.returncode != 0 and "differs from" in r.stderr and "0002-mm-add-c.patch" in r.stderr


POSTER = "A Poster <poster@kernel.invalid>"
COVER = """\
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Lead Developer <lead@example.org>
Date: Tue, 24 Nov 2026 09:45:12 +0000
Subject: [PATCH 0/2] mm: add b and c

From: Lead Developer <lead@example.org> stays in the body.

Lead Developer (2):
  mm: add b
  mm: add c
"""


@pytest.fixture
def posting(work, tmp_path):
    """A series of two patches and a cover letter, in a tree and stored."""
    tree, patches, env = work
    # The poster has signed the first commit off already, and another
    # trailer follows (commit --signoff would sign it again).
    commit(tree, "int a;\nint b;\n",
           f"mm: add b\n\nBecause b.\n\nSigned-off-by: {POSTER}\nLink: https://example.org/b")
    commit(tree, "int a;\nint b;\nint c;\n", "mm: add c")
    run(env, "export")
    (patches / "0000-cover-letter.patch").write_text(COVER)
    return tree, patches, dict(env, OUT=str(tmp_path / "out")), tmp_path / "out" / "post"


def test_post_needs_a_git_identity(posting, tmp_path):
    tree, patches, env, post = posting
    r = run(no_identity(env, tmp_path / "home"), "post")
    assert r.returncode != 0
    assert r.stderr == ("series.sh: post: no git identity: set git config user.name and "
                        "user.email (they sign the series)\n")
    assert not post.parent.exists()


def poster_env(env, tmp_path):
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = A Poster\n\temail = poster@kernel.invalid\n")
    return dict(no_identity(env, tmp_path / "home"), GIT_CONFIG_GLOBAL=str(config))


def test_post_signs_every_patch_as_the_poster(posting, tmp_path):
    tree, patches, env, post = posting
    head, branch = git(tree, "rev-parse", "HEAD"), git(tree, "symbolic-ref", "HEAD")
    stored = {p.name: p.read_text() for p in patches.iterdir()}
    r = run(poster_env(env, tmp_path), "post")
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in post.iterdir())
    assert names == ["0000-cover-letter.patch", "0001-mm-add-b.patch", "0002-mm-add-c.patch"]
    for name in names[1:]:
        text = (post / name).read_text()
        lines = text.splitlines()
        assert lines[1] == f"From: {POSTER}"
        assert [l for l in lines if l.startswith("Signed-off-by:")] == [f"Signed-off-by: {POSTER}"]
        assert f"[PATCH {name[3]}/2]" in text
    assert "Link: https://example.org/b\n" in (post / "0001-mm-add-b.patch").read_text()
    cover = (post / "0000-cover-letter.patch").read_text()
    assert cover == COVER.replace("From: Lead Developer <lead@example.org>\n",
                                  f"From: {POSTER}\n", 1)
    # Nothing of the tree's or the stored series moved.
    assert git(tree, "rev-parse", "HEAD") == head
    assert git(tree, "symbolic-ref", "HEAD") == branch
    assert {p.name: p.read_text() for p in patches.iterdir()} == stored
    assert run(env, "check-export").returncode == 0


def test_post_refuses_another_persons_sign_off(posting, tmp_path):
    tree, patches, env, post = posting
    git(tree, "commit", "-q", "--amend", "--no-edit", "--signoff")     # T signs it off
    r = run(poster_env(env, tmp_path), "post")
    assert r.returncode != 0
    assert "'mm: add c' is signed off by T <t@example.org>" in r.stderr
    assert not post.exists()


CHECKPATCH = """#!/bin/sh
# checkpatch.pl's sign-off check alone: the last argument is the patch.
for p; do :; done
case " $* " in *" --no-signoff "*) exit 0 ;; esac
grep -q '^Signed-off-by:' "$p" && exit 0
echo "$p:1: ERROR: Missing Signed-off-by: line(s)"
exit 1
"""


def test_checkpatch_does_not_ask_the_stored_series_for_sign_offs(posting, tmp_path):
    tree, patches, env, post = posting
    (tree / "scripts").mkdir()
    (tree / "scripts" / "checkpatch.pl").write_text(CHECKPATCH)
    (tree / "scripts" / "checkpatch.pl").chmod(0o755)
    base = git(tree, "rev-parse", "base").strip()
    with open(patches / "0000-cover-letter.patch", "a") as f:
        f.write(f"\nbase-commit: {base}\n")
    r = subprocess.run([os.path.join(TOP, "scripts", "check.sh")], capture_output=True, text=True,
                       env=dict(env, CHECKS="checkpatch"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "check: checkpatch ok" in r.stdout
