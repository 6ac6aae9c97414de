#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Do marks end late under reclaim?  The stutter load (make bench's: 2 nodes
of 1 GiB, THP always, a hog past memory with swap, a file copied in a loop,
the THP fault probe) on the series with scripts/probe-late.patch on top.
At every jump past marked zones the patch counts the zones passed (jumped),
those that would pass the request at that moment (late: a mark that has
outlived its zone's failure), those of them whose kswapd sleeps (7.3.4's
first pass would take them), and the pages of the requests that passed
such a zone for a farther one (late_far_pages: a bound, not a count; a
request counts at each jump, 2^order pages, even if its marked pass then
fails and the pass without marks places it); and of the late zones,
those whose lock is held (late_locked: a free under way, whose hook comes
after the unlock) and those without their class's flag (late_unflagged:
a recovery or a mark under way).  The probe's check of
itself: vm.zlc_probe_norecover=1 ends marks only at the one-second clear,
and then late must be large.

  scripts/probe-late.py DIR
  scripts/probe-late.py --summary DIR     (DIR/summary.txt again, from DIR/probe.txt)

Boots: recover, norecover, norecover, recover; each runs two 45 s samples
with the cache on.  DIR/probe.txt gets the consoles' lines, DIR/summary.txt
the sums per mode; an existing record is not overwritten.  Needs the kernel
work tree (make apply) and the stutter disks (made here if missing)."""
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TOP)
from zlctool import bench, guest, workloads  # noqa: E402
from zlctool.topology import Topology  # noqa: E402

TREE = os.path.join(TOP, "build", "linux-7.3")
PROBE_TREE = os.path.join(TOP, "build", "linux-7.3-probe")
OUT = os.path.join(TOP, "build", "7.3", "probe-distro")
PATCH = os.path.join(TOP, "scripts", "probe-late.patch")
MODES = ["recover", "norecover", "norecover", "recover"]
COUNTERS = ["jumped", "late", "late_idle", "late_locked", "late_unflagged", "late_far_pages"]


def git(tree, *args, **kw):
    return subprocess.run(["git", "-C", tree, *args], check=True, text=True,
                          capture_output=True, **kw).stdout.strip()


def build():
    """The series' work tree HEAD plus the probe patch, built from the
    bench's distro config into build/7.3/probe-distro."""
    head = git(TREE, "rev-parse", "HEAD")
    if not os.path.isdir(PROBE_TREE):
        git(TREE, "worktree", "prune")
        git(TREE, "worktree", "add", "--quiet", "--detach", PROBE_TREE, head)
    def patch_id(text):
        return subprocess.run(["git", "patch-id", "--stable"], input=text, check=True,
                              text=True, capture_output=True).stdout.split()[:1]

    # Applied again only when the tree is not already the series plus the patch
    # (a checkout touches mm/page_alloc.c, and make would rebuild it).
    if (subprocess.run(["git", "-C", PROBE_TREE, "rev-parse", "HEAD^"], text=True,
                       capture_output=True).stdout.strip() != head or
            git(PROBE_TREE, "status", "--porcelain", "--untracked-files=no") or
            patch_id(git(PROBE_TREE, "show", "HEAD")) != patch_id(open(PATCH).read())):
        subprocess.run(["git", "-C", PROBE_TREE, "am", "--abort"], capture_output=True)
        git(PROBE_TREE, "checkout", "-q", "--detach", head)
        env = dict(os.environ, GIT_COMMITTER_NAME="zlc probe",
                   GIT_COMMITTER_EMAIL="probe@localhost")
        git(PROBE_TREE, "am", "-q", "--committer-date-is-author-date", PATCH, env=env)
    cfg = " ".join(os.path.join(TOP, "configs", c)
                   for c in ("guest.config", "distro.config", "distro-7.3.config"))
    subprocess.run([os.path.join(TOP, "scripts", "kbuild.sh"), "guest"], check=True, cwd=TOP,
                   env=dict(os.environ, FRAGMENT=cfg, TREE=PROBE_TREE, KBUILD_OUT=OUT))
    return head


def command(mode):
    read = ("for c in " + " ".join(COUNTERS) + "; do echo \"probe-count $c "
            "$(cat /proc/sys/vm/zlc_probe_$c)\"; done; "
            "grep -E '^numa_(local|other) ' /proc/vmstat | sed 's/^/probe-count /'")
    return (f"echo {int(mode == 'norecover')} > /proc/sys/vm/zlc_probe_norecover; "
            f"echo probe-mode {mode}; {read}; "
            "VARIANTS='on on' sh /scripts/workload.sh stutter 45 105 > /dev/null || exit 1; "
            f"echo probe-end; {read}")


def summary(lines):
    """Per mode, the counters' sums over its boots (after less before)."""
    sums, mode, seen, before, after = {}, None, 0, {}, None
    for line in lines:
        if line.startswith("### boot"):
            mode, before, after = line.split()[-1], {}, None
        elif line == "probe-end":
            after = {}
        elif line.startswith("probe-count "):
            _, key, val = line.split()
            (before if after is None else after)[key] = int(val)
            if after is not None and len(after) == len(COUNTERS) + 2:
                tot = sums.setdefault(mode, dict(boots=0))
                tot["boots"] += 1
                for k in after:
                    tot[k] = tot.get(k, 0) + after[k] - before[k]
                seen += 1
    out = ["mode        boots     jumped       late  late %  late_idle  late_locked"
           "  late_unflagged  late_far_pages  numa_other  remote %"]
    for mode in ("recover", "norecover"):
        t = sums.get(mode)
        if not t:
            continue
        pct = 100.0 * t["late"] / t["jumped"] if t["jumped"] else 0.0
        placed = t["numa_other"] + t["numa_local"]
        remote = 100.0 * t["numa_other"] / placed if placed else 0.0
        out.append(f"{mode:<10} {t['boots']:>6} {t['jumped']:>10} {t['late']:>10} {pct:>7.3f}"
                   f" {t['late_idle']:>10} {t['late_locked']:>12} {t['late_unflagged']:>15}"
                   f" {t['late_far_pages']:>15} {t['numa_other']:>11}"
                   f" {remote:>9.2f}")
    return out, seen


def main(d):
    os.makedirs(d, exist_ok=True)
    rec = os.path.join(d, "probe.txt")
    if os.path.exists(rec):
        sys.exit(f"probe-late.py: {rec} exists: give another DIR")
    head = build()
    draft = ""
    if subprocess.run(["git", "-C", TOP, "diff", "--quiet", "HEAD"]).returncode:
        draft = "DRAFT (uncommitted changes) "
    elif subprocess.run(["make", "-s", "-C", TOP, "check-export"], capture_output=True).returncode:
        draft = "DRAFT (work tree differs from its series) "
    plan = workloads.PLANS["full"]["stutter"]
    topo = Topology.parse(workloads.TOPOLOGY["stutter"])
    extra = workloads.stutter_disks(topo.total_mib // topo.nodes, plan["file_pct"])
    kernel = os.path.join(OUT, "arch", "x86", "boot", "bzImage")
    binaries = [bench.build_hog(), workloads.build_zlcload()]
    lines = [f"# {draft}probe-late: project {git(TOP, 'rev-parse', '--short', 'HEAD')}, "
             f"series tree {head[:12]} + scripts/probe-late.patch",
             f"# again: scripts/probe-late.py {os.path.relpath(os.path.abspath(d), TOP)}"]
    for boot, mode in enumerate(MODES, 1):
        print(f"[probe-late] boot {boot}: {mode}", flush=True)
        res = guest.run(kernel, topo, command(mode), binaries=binaries,
                        timeout=3600, stage="probe-late", name=f"b{boot}-{mode}",
                        extra=extra, quiet=True)
        if res.status != 0:
            sys.exit(f"probe-late.py: boot {boot} failed; log: {res.log}")
        lines.append(f"### boot {boot} {mode}")
        lines += [l for l in res.lines if re.match(r"probe-(count|end|mode)", l)]
    with open(rec + ".partial", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(rec + ".partial", rec)
    write_summary(d, lines)


def write_summary(d, lines):
    table, seen = summary(lines)
    if seen != len(MODES):
        sys.exit(f"probe-late.py: {seen} complete boots in {d}/probe.txt, not {len(MODES)}")
    with open(os.path.join(d, "summary.txt"), "w") as f:
        f.write("\n".join(lines[:2] + table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--summary":
        write_summary(sys.argv[2], open(os.path.join(sys.argv[2], "probe.txt")).read().splitlines())
    elif len(sys.argv) == 2:
        main(sys.argv[1])
    else:
        sys.exit("usage: scripts/probe-late.py [--summary] DIR")
