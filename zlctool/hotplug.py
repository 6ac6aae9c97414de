"""Memory hotplug under a spilling hog, then the KUnit suite again.

    python3 -m zlctool.hotplug --kernel bzImage --hog zonelist_cache_memhog \
        --summary build/test-results/hotplug.counts

The kernel is the guest config with ACPI memory hotplug and the
zonelist_cache KUnit suite built in (configs/hotplug.config).  The guest
has 4 nodes and a 256 MiB DIMM on node 3 that the kernel hot-adds through
ACPI at boot and leaves offline (memhp_default_state=offline).  While the
selftest hog allocates past the local node with the cache on, the DIMM's
memory blocks are onlined into ZONE_MOVABLE, which node 3 did not have,
then taken offline and online again, several times: each time the zone
fills or empties, the zonelists are rebuilt under the running allocations
and zonerefs move.  Afterwards the suite is run again through
/sys/kernel/debug/kunit/zonelist_cache/run, so that its cases (the
rebuild case among them) check the cache as hotplug left it, then a
third time in the same boot beside a hog that has spilled past node 0,
stopped while the suite runs so that its spill is held and no verdict
depends on how far it got (--no-beside-hog, make hotplug BESIDE_HOG=0,
leaves that out): a case that finds the room or the passing zone it
needs gone skips, saying so, and at least one of the cases that run is
for (LOAD_CASES) must pass.  Before
that, histogram triggers on kmem:mm_zlc_full and kmem:mm_zlc_recover count
per node the marks the hog made meanwhile.  Still under the
hog, CPU 1 goes offline and online as many times (the offline CPU's
counter deltas are folded into its zones, a path that gives free pages
back).  With the hog stopped, a load preferring node 3 and larger than it
fills the node, several times: its zones must be marked, and their marks
must end at least once each time the load gives the pages back
(kmem:mm_zlc_recover on node 3); a small load preferring node 3 must
then land there, every page sampled.
The guest's side is zlctool/in_guest/hotplug.sh.  Any
warning, oops or KCSAN report on the console fails the run
(zlctool.guest); so does a block that would not go offline
or online, a node whose memory did not shrink and grow back, or a hog that
failed.
"""

import argparse
import re
import sys

from . import guest, summary, workloads
from .topology import Topology

NODE = 3
CYCLES = 3
DIMM_MIB = 256

def dimm_args(topo):
    """QEMU options for a DIMM on node NODE, added to the topology's memory."""
    return ["-m", f"{topo.total_mib}M,slots=2,maxmem={topo.total_mib + 2 * DIMM_MIB}M",
            "-object", f"memory-backend-ram,id=hp0,size={DIMM_MIB}M",
            "-device", f"pc-dimm,id=dimm0,memdev=hp0,node={NODE}"]


# The suite's runs after the boot-time one, in order: the line the guest
# prints before asking for it, and the tag it puts before its results.
RERUNS = [("zlc-hotplug: rerun", "zlc-rerun: "),
          ("zlc-hotplug: rerun beside a hog", "zlc-rerun-hog: ")]
# Skips a re-run may add to the boot's statuses, or take away: a kswapd
# that stays awake (7.3's first walk would pass its node), in any run; and
# beside the hog, whose spill is held while the suite runs, a case that
# needs room or a passing zone on node 0 may find it gone.  Such a case
# skips, saying so, and is counted as skipped.
KSWAPD_SKIP = r"kswapd of node \d+ stays awake"
LOAD_SKIPS = [re.compile(KSWAPD_SKIP),
              re.compile(KSWAPD_SKIP + r"|fails its low watermark|"
                         r"pages of the first zone|first zone with")]
# The cases each re-run is for: they make node 0's zones fail themselves
# and check what the walks past them do, after hotplug's rebuilds, then
# with the spill held.  At least one must pass in each.
LOAD_CASE_NAMES = ["zlc_test_skip_places_as_off", "zlc_test_walk_resumes_past_marks",
                   "zlc_test_thisnode_marks_nothing", "zlc_test_node_reclaim_marks_nothing",
                   "zlc_test_slow_path_ignores_marks", "zlc_test_nolock",
                   "zlc_test_stale_mark_zap_later", "zlc_test_off"]
LOAD_CASES = [LOAD_CASE_NAMES, LOAD_CASE_NAMES]


def is_marker(line, marker):
    """Is `line` the guest's marker line, as the kernel's log printed it
    (after its timestamp, if any)?"""
    return re.fullmatch(r"(\[\s*[\d.]+\] )?" + re.escape(marker), line.strip()) is not None


def rerun_reported(lines, which=0):
    """Did the kernel log a passing suite summary after re-run `which` was
    asked for, and before the next one?  Without one, the results file
    could still be an earlier run's."""
    marks = [next((i for i, l in enumerate(lines) if is_marker(l, m)), None) for m, _ in RERUNS]
    start = marks[which]
    if start is None:
        return False
    end = next((m for m in marks[which + 1:] if m is not None), len(lines))
    # The kernel's own line, not the results files the guest echoed.
    return any(re.search(r"# zonelist_cache: pass:\d+ fail:0", l) for l in lines[start:end]
               if not any(tag in l for _, tag in RERUNS))


def rerun_ktap(lines, which=0):
    tag = RERUNS[which][1]
    return [l.split(tag, 1)[1] for l in lines if tag in l]


def count_rerun(lines, which=0):
    """(passed, failed, skipped) of re-run `which`: the KTAP the guest
    printed behind its tag, parsed by kunit_parser."""
    r = guest.results(rerun_ktap(lines, which))
    return r.passed, r.failed + r.errors, r.skipped


def rerun_failures(lines, which=0):
    """The log kunit_parser kept for each case that failed in re-run
    `which`, then its name: so that a failure says why."""
    kp = guest.kunit_parser()
    out = []

    def walk(t):
        for sub in t.subtests:
            walk(sub)
        if not t.subtests and t.status not in (kp.TestStatus.SUCCESS, kp.TestStatus.SKIPPED):
            out.extend(t.log + [f"not ok {t.name}"])

    test = kp.zlc_parse(rerun_ktap(lines, which))
    # No results at all: rerun_reported() says so.
    if test.name != "<missing>":
        walk(test)
    return out


def rerun_differs(lines, which=0):
    """Cases whose status in re-run `which` is not their status at boot, in
    the same guest: a case that passed at boot and skips after hotplug has
    stopped testing what it did, which a count of skips would not show.
    A skip, there or at boot, for what the re-run's moment may lack
    (LOAD_SKIPS) is not one."""
    cut = next((i for i, l in enumerate(lines) if "zlc-guest: running /cmd" in l), len(lines))
    boot = {n: (st, why) for n, st, why in guest.results(lines[:cut]).cases}
    rerun = guest.results(rerun_ktap(lines, which))
    load = LOAD_SKIPS[which] if which < len(LOAD_SKIPS) else None

    def excused(st, why):
        return st == "SKIP" and load is not None and load.search(why) is not None

    return sorted(n for n, st, why in rerun.cases
                  if boot.get(n, (None, ""))[0] != st and
                  not excused(st, why) and not excused(*boot.get(n, (None, "")))) + \
        sorted(n for n in boot if n not in {c for c, _, _ in rerun.cases})


def load_cases_passed(lines, which=1):
    """(passed, named) of the cases re-run `which` exists for (LOAD_CASES):
    how many passed there, and how many the suite has at boot.  A name the
    suite does not have counts in neither, so that a renamed case shows."""
    names = (LOAD_CASES[which] if which < len(LOAD_CASES) else None) or []
    cut = next((i for i, l in enumerate(lines) if "zlc-guest: running /cmd" in l), len(lines))
    boot = {n.rsplit(".", 1)[-1] for n, _, _ in guest.results(lines[:cut]).cases}
    rerun = {n.rsplit(".", 1)[-1]: st for n, st, _ in guest.results(rerun_ktap(lines, which)).cases}
    return sum(1 for n in names if rerun.get(n) == "PASS"), sum(1 for n in names if n in boot)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m zlctool.hotplug", description=__doc__)
    p.add_argument("--kernel", required=True, help="guest kernel with the KUnit suite built in")
    p.add_argument("--hog", required=True, help="the statically built selftest")
    # About 3 minutes here: the margin is for a slow host, not a wait.
    p.add_argument("--timeout", type=int, default=1800)
    p.add_argument("--summary")
    p.add_argument("--no-beside-hog", dest="beside_hog", action="store_false",
                   help="leave out the suite's third run, beside a hog spilling past node 0")
    args = p.parse_args(argv)
    reruns = RERUNS if args.beside_hog else RERUNS[:1]

    passed = failed = skipped = 0
    try:
        topo = Topology.even(4)
        res = guest.run(args.kernel, topo, f"NODE={NODE} CYCLES={CYCLES} "
                        f"BESIDE_HOG={int(args.beside_hog)} sh /scripts/hotplug.sh",
                        binaries=[args.hog, workloads.build_zlcload()],
                        timeout=args.timeout, stage="hotplug",
                       # loglevel=7: the KUnit run at boot prints its TAP at
                       # KERN_INFO, so a console that stops says where.
                        append="memhp_default_state=offline loglevel=7",
                        extra=dimm_args(topo))
        for line in res.lines:
            if re.search(r"zlc-(hotplug|trace)", line) or \
                    re.search(r"zlc-rerun(-hog)?: \s*(not )?ok", line):
                print(f"[hotplug] {line}")
        offlined = sum(1 for l in res.lines if re.search(r"zlc-hotplug: cycle \d+ offline", l))
        cpus = sum(1 for l in res.lines if re.search(r"zlc-hotplug: cpu cycle \d+:", l))
        ok = res.status == 0 and offlined == CYCLES and cpus == CYCLES
        for which, (marker, _) in enumerate(reruns):
            p_, f_, s_ = count_rerun(res.lines, which)
            fresh = rerun_reported(res.lines, which)
            for line in rerun_failures(res.lines, which):
                print(f"[hotplug] {marker[len('zlc-hotplug: '):]}: {line}")
            differ = rerun_differs(res.lines, which)
            if differ:
                print(f"[hotplug] cases whose status in '{marker}' is not their status at "
                      f"boot: {', '.join(differ)}")
            if not fresh:
                print(f"[hotplug] the kernel logged no passing suite summary for '{marker}'")
            ok = ok and p_ > 0 and f_ == 0 and fresh and not differ
            if which < len(LOAD_CASES):
                ran, named = load_cases_passed(res.lines, which)
                print(f"[hotplug] {marker[len('zlc-hotplug: '):]}: {ran} of the {named} "
                      f"cases it is for passed")
                if named < len(LOAD_CASES[which]):
                    print("[hotplug] the suite lacks cases this run is for: "
                          f"{', '.join(LOAD_CASES[which])}")
                ok = ok and ran > 0 and named == len(LOAD_CASES[which])
            print(f"[hotplug] {marker[len('zlc-hotplug: '):]}: {p_} passed, {f_} failed, "
                  f"{s_} skipped")
            passed, failed, skipped = passed + p_, failed + f_, skipped + s_
        print(f"[hotplug] exit {res.status}, {offlined}/{CYCLES} memory and {cpus}/{CYCLES} "
              "CPU offline/online cycles"
              + ("" if ok else "  <-- expected all to pass"))
        passed, failed = passed + (1 if ok else 0), failed + (0 if ok else 1)
    except guest.GuestError as e:
        print(f"[hotplug] {e}", file=sys.stderr)
        failed += 1
    return summary.finish("hotplug", args.summary, passed, failed, skipped)


if __name__ == "__main__":
    sys.exit(main())
