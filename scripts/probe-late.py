#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Do marks end late under reclaim?  The stutter load (make bench's: 2 nodes
of 1 GiB, THP always, a hog past memory with swap, a file copied in a loop,
the THP fault probe; nokaslr, as the bench boots) on the series with
scripts/probe-late.patch on top.  At every jump past marked zones of a
fast-path walk the patch counts the zones passed that the walk could use
(zones), and whether 7.3.4's walk, in the same pass, would have taken one
of them (late: a zone that meets the request's watermark and that 7.3.4's
kswapd, dirty and cpuset tests would not skip there; one per jump, classed
by the zone's lock held or its class's flag clear), and the allocations
that passed a late zone and were placed farther from their zonelist's node
(late_far).  /proc/vmstat's numa_local and numa_other count allocations,
whatever their order.  The probe's checks of itself: mode norecover ends
marks only at the one-second clear, mode lag drops three recoveries in
four (marks end a few frees late); late must then stand far above
recover's.

  scripts/probe-late.py NEWDIR
  scripts/probe-late.py --summary DIR     (DIR/summary.txt again, from DIR/probe.txt)

Boots, in this order: recover (samples off on on off), lag (on on),
norecover (on on), recover (off on on off); 45 s a sample, wall clock.
Between samples the file system is unmounted and swap switched off, so
each sample starts as the bench's first does.  DIR/probe.txt gets each
sample's counters before and after, DIR/summary.txt the sums per mode and
variant; an existing record is not overwritten.  The probe kernel is the
series' work tree HEAD (build/linux-7.3; make tree) plus the patch."""
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
MODES = [("recover", "off on on off"), ("lag", "on on"), ("norecover", "on on"),
         ("recover", "off on on off")]
SWITCH = {"recover": 0, "norecover": 1, "lag": 2}
COUNTERS = ["jumps", "zones", "late", "late_locked", "late_unflagged", "late_far"]
VMSTAT = ["numa_local", "numa_other", "zlc_skip", "thp_fault_alloc"]


def git(tree, *args, **kw):
    r = subprocess.run(["git", "-C", tree, *args], text=True, capture_output=True, **kw)
    if r.returncode:
        sys.exit(f"probe-late.py: git -C {tree} {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout.strip()


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
        git(PROBE_TREE, "checkout", "-q", "-f", "--detach", head)
        env = dict(os.environ, GIT_COMMITTER_NAME="zlc probe",
                   GIT_COMMITTER_EMAIL="probe@localhost")
        git(PROBE_TREE, "am", "-q", "--committer-date-is-author-date", PATCH, env=env)
    cfg = " ".join(os.path.join(TOP, "configs", c)
                   for c in ("guest.config", "distro.config", "distro-7.3.config"))
    subprocess.run([os.path.join(TOP, "scripts", "kbuild.sh"), "guest"], check=True, cwd=TOP,
                   env=dict(os.environ, FRAGMENT=cfg, TREE=PROBE_TREE, KBUILD_OUT=OUT))
    return head


def command(mode, variants):
    read = ("for c in " + " ".join(COUNTERS) + "; do echo \"probe-count $c "
            "$(cat /proc/sys/vm/zlc_probe_$c)\"; done; "
            "grep -E '^(" + "|".join(VMSTAT) + ") ' /proc/vmstat | sed 's/^/probe-count /'")
    return (f"echo {SWITCH[mode]} > /proc/sys/vm/zlc_probe_norecover || exit 1; "
            f"for v in {variants}; do echo probe-sample $v; {read}; "
            "VARIANTS=$v sh /scripts/workload.sh stutter 45 105 > /tmp/w.out || "
            "{ tail -20 /tmp/w.out; exit 1; }; "
            f"echo probe-end; {read}; umount /mnt && swapoff /dev/vdb || exit 1; done")


def remote_pct(other, local):
    """Allocations off their CPU's node, % (workloads.pooled_remote()'s
    share, on counter deltas)."""
    return 100.0 * other / (other + local) if other + local else 0.0


def summary(lines):
    """Per mode and variant, the counters' sums over its samples (after
    less before), and its samples' remote shares; the samples summed."""
    keys = COUNTERS + VMSTAT
    sums, mode, seen, before, after = {}, None, 0, None, None
    for line in lines:
        if line.startswith("### boot"):
            mode = line.split()[-1]
        elif line.startswith("probe-sample "):
            variant, before, after = line.split()[1], {}, None
        elif line == "probe-end":
            after = {}
        elif line.startswith("probe-count "):
            f = line.split()
            if len(f) != 3 or not f[2].isdigit():
                sys.exit(f"probe-late.py: a counter without its value: {line!r}")
            (before if after is None else after)[f[1]] = int(f[2])
            if after is not None and len(after) == len(keys):
                if set(before) != set(keys):
                    sys.exit(f"probe-late.py: a sample of {mode} lacks counters before it")
                tot = sums.setdefault((mode, variant), dict(samples=0, remote=[]))
                tot["samples"] += 1
                for k in keys:
                    tot[k] = tot.get(k, 0) + after[k] - before[k]
                tot["remote"].append(remote_pct(after["numa_other"] - before["numa_other"],
                                                after["numa_local"] - before["numa_local"]))
                before, after = None, None
                seen += 1
    out = ["mode       variant samples   jumps     zones   late  late %  locked  unflagged"
           "  late_far  allocations  remote %  (per sample)"]
    for mode in ("recover", "lag", "norecover"):
        for variant in ("off", "on"):
            t = sums.get((mode, variant))
            if not t:
                continue
            pct = 100.0 * t["late"] / t["jumps"] if t["jumps"] else 0.0
            placed = t["numa_other"] + t["numa_local"]
            remote = remote_pct(t["numa_other"], t["numa_local"])
            each = " ".join(f"{r:.1f}" for r in t["remote"])
            out.append(f"{mode:<10} {variant:<7} {t['samples']:>7} {t['jumps']:>7} {t['zones']:>9}"
                       f" {t['late']:>6} {pct:>7.3f} {t['late_locked']:>7} {t['late_unflagged']:>10}"
                       f" {t['late_far']:>9} {placed:>12} {remote:>9.2f}  ({each})")
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
             "# again: scripts/probe-late.py NEWDIR (a new directory)"]
    for boot, (mode, variants) in enumerate(MODES, 1):
        print(f"[probe-late] boot {boot}: {mode}", flush=True)
        res = guest.run(kernel, topo, command(mode, variants), binaries=binaries,
                        timeout=5400, stage="probe-late", name=f"b{boot}-{mode}",
                        extra=extra, quiet=True, append=bench.BENCH_APPEND)
        if res.status != 0:
            sys.exit(f"probe-late.py: boot {boot} failed; log: {res.log}")
        lines.append(f"### boot {boot} {mode}")
        lines += [l for l in res.lines if re.match(r"probe-(count|end|sample)", l)]
    with open(rec + ".partial", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(rec + ".partial", rec)
    write_summary(d, lines)


def write_summary(d, lines):
    table, seen = summary(lines)
    want = sum(len(v.split()) for _, v in MODES)
    if seen != want:
        sys.exit(f"probe-late.py: {seen} complete samples in {d}/probe.txt, not {want}")
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
