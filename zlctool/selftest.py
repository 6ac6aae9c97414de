"""Run the zonelist cache kselftests in QEMU guests and count their TAP.

    python3 -m zlctool.selftest --kernel bzImage --hog zonelist_cache_memhog \
        --locality zonelist_cache_locality --summary build/test-results/selftest.counts

On 4 nodes the selftest must run and pass (every touched word reads back,
zlc_skip rose with the cache on and stayed flat with it off, the placed
passes of -P stayed on their nodes); on 1 node it
must skip with its reason ("needs at least 2 NUMA nodes").  The locality
test runs on 4 nodes (freeing into node 1) and must pass: the cache on
places pages as near as the cache off.  With --vmtests, a 2-node guest
runs the zonelist_cache category as kselftest does by default,
run_vmtests.sh -t zonelist_cache under bash: the trace test (a spill's
marks, and every marked zone that passes its watermarks again traced
recovering) and the locality test freeing into node 0 must pass, and the
memory hog, a benchmark for -a only, must not run.  Each guest's TAP
lines are counted as kselftest reports them: ok, not ok, # SKIP.
"""

import argparse
import os
import re
import sys

from . import guest, summary
from .topology import Topology

KSFT_SKIP = 4


def counts(lines):
    """(passed, failed, skipped, plan_skip_reason) of kselftest TAP,
    parsed by kunit_parser (see zlctool.guest.results)."""
    r = guest.results(lines)
    # A result the plan does not hold, or a missing one, is a parse error;
    # a '1..0 # SKIP' plan holds nothing to parse.
    return r.passed, r.failed + (0 if r.plan_skip else r.errors), r.skipped, r.plan_skip


def run_binary(kernel, binary, topo, command, name, timeout, kcsan_scope=None,
               stage="selftest"):
    res = guest.run(kernel, topo, command, binaries=[binary], timeout=timeout,
                    stage=stage, name=name, kcsan_scope=kcsan_scope)
    if kcsan_scope:
        for line in guest.unrelated_kcsan(res.lines, kcsan_scope):
            print(f"[selftest {name}] KCSAN report outside the zonelist cache "
                  f"(not counted): {line}")
    tap = [l for l in res.lines if re.match(r"^(ok|not ok|1\.\.|TAP|#)", l)]
    return res.status, tap, counts(res.lines)


def run_case(kernel, hog, nodes, args_line, timeout, kcsan_scope=None, stage="selftest"):
    return run_binary(kernel, hog, Topology.even(nodes), f"zonelist_cache_memhog {args_line}",
                      f"memhog-{nodes}n", timeout, kcsan_scope, stage)


def run_locality(kernel, binary, nodes, window, timeout, kcsan_scope=None, stage="selftest"):
    """zonelist_cache_locality in a guest of `nodes` nodes of 1 GiB (2 GiB in
    all beyond two nodes), freeing into node `window`: (status, tap, counts)."""
    return run_binary(kernel, binary, Topology.even(nodes),
                      f"zonelist_cache_locality -w {window}", f"locality-{nodes}n-w{window}",
                      timeout, kcsan_scope, stage)


def judge_run(label, status, tap, counts, min_passed):
    """Print a guest's TAP and verdict; (passed, failed, skipped) to add.
    A run that must pass fails on a bad exit, a failure, any skip (which
    would leave something unchecked) or fewer than min_passed results."""
    passed, failed, skipped, why = counts
    for line in tap:
        print(f"{label} {line}")
    ok = status == 0 and failed == 0 and skipped == 0 and passed >= min_passed and why is None
    print(f"{label} exit {status}: {passed} passed, {failed} failed, {skipped} skipped"
          + ("" if ok else "  <-- expected a run that passes"))
    return passed, failed + (0 if ok else 1), skipped


def hog_cases(args):
    """(passed, failed, skipped) of the memory hog on 4 nodes and on 1."""
    # Four nodes: the selftest runs and every result must pass.  At 70%
    # of memory the hog spills past node 0, so nothing may skip: a skip
    # ("did not spill") would leave zlc_skip and placement unchecked.
    status, tap, counts = run_case(args.kernel, args.hog, 4, args.args,
                                   args.timeout, args.kcsan_scope, args.label)
    passed, failed, skipped = judge_run("[selftest 4 nodes]", status, tap, counts, 5)

    # One node: the selftest skips, with its reason, and nothing fails.
    status, tap, (p1, f1, s1, why) = run_case(args.kernel, args.hog, 1, args.args,
                                              args.timeout, args.kcsan_scope, args.label)
    for line in tap:
        print(f"[selftest 1 node] {line}")
    ok = status == KSFT_SKIP and why is not None and f1 == 0
    print(f"[selftest 1 node] exit {status}: skipped ({why})"
          + ("" if ok else "  <-- expected a clean skip"))
    return passed + ok, failed + (not ok), skipped


def locality_cases(args):
    """(passed, failed, skipped) of the locality test on 2 and 4 nodes: the
    node freed into gets the pages with the cache on as with it off.  A
    skip (the scene could not be set) fails: it would leave placement
    unchecked."""
    passed = failed = skipped = 0
    for nodes, window in ((4, 1),) if args.vmtests else ((2, 0), (4, 1)):
        status, tap, counts = run_locality(args.kernel, args.locality, nodes, window,
                                           args.timeout, args.kcsan_scope, args.label)
        pl, fl, sl = judge_run(f"[locality {nodes} nodes, window node {window}]",
                               status, tap, counts, 1)
        passed, failed, skipped = passed + pl, failed + fl, skipped + sl
    return passed, failed, skipped


# What run_vmtests.sh -t zonelist_cache runs by default, in order.
VMTESTS_DEFAULT = ["zonelist_cache_trace.sh", "zonelist_cache_locality"]


def vmtests_ran(lines):
    """The programs run_vmtests.sh said it was running, in order."""
    return [m.group(1) for l in lines
            for m in [re.search(r"running \./(\S+)", l)] if m]


def vmtests_tap(lines):
    """run_vmtests.sh's own TAP lines (each program's, behind '# ', are not
    its results), its plan moved up after the version line: it prints the
    plan last, as TAP allows and kunit_parser does not."""
    tap = [l for l in lines if re.match(r"^(ok|not ok|1\.\.|TAP)", l)]
    head = [l for l in tap if l.startswith(("TAP", "1.."))]
    return sorted(head, key=lambda l: not l.startswith("TAP")) + \
        [l for l in tap if not l.startswith(("TAP", "1.."))]


def vmtests_case(args):
    """(passed, failed, skipped) of run_vmtests.sh -t zonelist_cache, as
    kselftest runs the category by default, in a 2-node guest."""
    mm = args.vmtests
    copies = {"/mm/run_vmtests.sh": os.path.join(mm, "run_vmtests.sh"),
              "/mm/zonelist_cache_trace.sh": os.path.join(mm, "zonelist_cache_trace.sh"),
              "/mm/zonelist_cache_memhog": args.hog,
              "/mm/zonelist_cache_locality": args.locality,
              **guest.host_program("bash")}
    res = guest.run(args.kernel, Topology.even(2), "cd /mm && bash ./run_vmtests.sh -t zonelist_cache",
                    copies=copies, timeout=args.timeout, stage="selftest", name="vmtests-2n",
                    kcsan_scope=args.kcsan_scope)
    tap = vmtests_tap(res.lines)
    label = "[run_vmtests.sh -t zonelist_cache, 2 nodes]"
    for line in res.lines:
        if line.startswith("# ") and "zlc-guest" not in line:
            print(f"{label} {line}")
    passed, failed, skipped = judge_run(label, res.status, tap, counts(tap), len(VMTESTS_DEFAULT))
    ran = vmtests_ran(res.lines)
    if ran != VMTESTS_DEFAULT:
        print(f"{label} ran {ran}, expected {VMTESTS_DEFAULT}  <-- the default run is those alone")
        failed += 1
    return passed, failed, skipped


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m zlctool.selftest", description=__doc__)
    p.add_argument("--kernel", required=True)
    p.add_argument("--hog", help="the statically built zonelist_cache_memhog")
    p.add_argument("--locality", help="the statically built zonelist_cache_locality")
    p.add_argument("--vmtests", help="tools/testing/selftests/mm of the tree: run its "
                   "run_vmtests.sh -t zonelist_cache (needs --hog and --locality)")
    p.add_argument("--args", default="-p 70 -t 2 -r 1 -P", help="selftest arguments")
    p.add_argument("--timeout", type=int, default=600)
    p.add_argument("--summary")
    p.add_argument("--label", default="selftest",
                   help="the stage's name: its consoles go to build/test-results/BASE/LABEL/")
    p.add_argument("--kcsan-scope",
                   help="regex: only KCSAN reports naming a match fail the run")
    args = p.parse_args(argv)
    if not args.hog and not args.locality:
        p.error("give --hog, --locality or both")
    if args.vmtests and not (args.hog and args.locality):
        p.error("--vmtests needs --hog and --locality")

    passed = failed = skipped = 0
    try:
        for run in ([hog_cases] if args.hog else []) + ([locality_cases] if args.locality else []) \
                + ([vmtests_case] if args.vmtests else []):
            p_, f_, s_ = run(args)
            passed, failed, skipped = passed + p_, failed + f_, skipped + s_
    except guest.GuestError as e:
        print(f"[selftest] {e}", file=sys.stderr)
        failed += 1
    return summary.finish(args.label, args.summary, passed, failed, skipped)


if __name__ == "__main__":
    sys.exit(main())
