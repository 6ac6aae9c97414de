"""The memory hog of patch 18 (zonelist_cache_memhog), from the work tree
of BASE (build/linux-7.3, which 'make test' fetches before pytest): its
order of kinds, and its placed passes and counters on this host."""

import collections
import json
import os
import re
import subprocess

import pytest

from zlctool import guest

SOURCE = os.path.join(guest.TREE, "tools", "testing", "selftests", "mm",
                      "zonelist_cache_memhog.c")


@pytest.fixture(scope="module")
def source():
    if not os.path.exists(SOURCE):
        pytest.fail(f"{SOURCE} is missing: run 'make tree' first")
    with open(SOURCE) as f:
        return f.read()


def orders(source, tmp_path, nr):
    """kind_at()'s rows for nr kinds, one full cycle, compiled from the hog."""
    fn = re.search(r"static int kind_at\(int rep, int k, int nr\)\n\{.*?\n\}\n", source, re.S)
    assert fn, "kind_at() not found in the hog"
    c = tmp_path / "k.c"
    c.write_text("#include <stdio.h>\n" + fn.group(0) + """
int main(int argc, char **argv)
{
	int nr = argv[1][0] - '0', rows = nr % 2 ? 2 * nr : nr, r, k;

	(void)argc;
	for (r = 0; r < rows; r++, printf("\\n"))
		for (k = 0; k < nr; k++)
			printf("%d", kind_at(r, k, nr));
	return 0;
}
""")
    subprocess.run(["gcc", "-Wall", "-Werror", "-o", str(tmp_path / "k"), str(c)], check=True)
    out = subprocess.run([str(tmp_path / "k"), str(nr)], check=True, capture_output=True,
                         text=True).stdout
    return [[int(x) for x in row] for row in out.split()]


@pytest.mark.parametrize("nr", [2, 3, 4, 5])
def test_kind_at_is_a_williams_design(source, tmp_path, nr):
    rows = orders(source, tmp_path, nr)
    assert len(rows) == (2 * nr if nr % 2 else nr)
    for row in rows:
        assert sorted(row) == list(range(nr))          # each kind once a repetition
    # Every kind at every position equally often over the cycle.
    positions = collections.Counter((k, pos) for row in rows for pos, k in enumerate(row))
    assert len(set(positions.values())) == 1 and len(positions) == nr * nr
    # Every kind after every other kind equally often inside a repetition.
    follows = collections.Counter((a, b) for row in rows for a, b in zip(row, row[1:]))
    assert len(set(follows.values())) == 1 and len(follows) == nr * (nr - 1)


@pytest.fixture(scope="module")
def hog(source, tmp_path_factory):
    out = tmp_path_factory.mktemp("hog") / "hog"
    subprocess.run(["gcc", "-Wall", "-Werror", "-O2", "-pthread", "-I",
                    os.path.dirname(os.path.dirname(SOURCE)), "-o", str(out), SOURCE], check=True)
    return str(out)


def test_placed_passes_run_as_is_and_count_their_walks(hog):
    """-m asis -P on this host (no zonelist cache): the two kinds take turns
    (ABBA), every pass prints the walk counters, and placed passes touch no
    more than asked and walk nothing here, one node with room to spare."""
    r = subprocess.run([hog, "-m", "asis", "-P", "-w", "-s", "64", "-t", "2", "-r", "4", "-j"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    runs = [json.loads(l.split("zlc-run ", 1)[1]) for l in r.stdout.splitlines()
            if "zlc-run " in l]
    assert [(x["rep"], x["pos"], x["zlc"]) for x in runs] == [
        (0, 0, "n/a"), (0, 1, "placed"), (1, 0, "placed"), (1, 1, "n/a"),
        (2, 0, "n/a"), (2, 1, "placed"), (3, 0, "placed"), (3, 1, "n/a")]
    assert [x["prev"] for x in runs[:3]] == ["-", "n/a", "placed"]
    for x in runs:
        for key in ("numa_miss", "lower_zone_pages", "allocstall", "pageoutrun", "numa_local",
                    "numa_other"):
            assert key in x and x[key] >= 0, (key, x)
        # -1: no zonelist cache in this kernel (a host running the series
        # switches it off for placed passes, and has 0 there).
        assert x["zlc_skip"] == -1 or os.path.exists("/proc/sys/vm/zonelist_cache")
    for x in (x for x in runs if x["zlc"] == "placed"):
        assert 0 < x["mib"] <= 64
        # 64 MiB fits any node here: nothing should walk.  (Not
        # lower_zone_pages: the host's other tasks allocate from its DMA32
        # zone meanwhile, and the count is the host's.)
        assert x["numa_miss"] == 0, x
    assert "ok 1 every touched word read back (0 bad)" in r.stdout
