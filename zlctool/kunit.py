"""Run KUnit suites under several NUMA topologies and hold the results to
the project's rules.

The kernel is built by the kernel's own tools/testing/kunit/kunit.py
('kunit.py build', which merges the kunitconfigs and checks that every
option stayed set).  Each topology then boots it through zlctool.guest, like
every other guest run here, so that each console is kept under
build/test-results/LABEL/, trouble is caught the same way everywhere, and the
KTAP goes through kunit_parser.  On top of the suite's verdict:

  - a case that skipped with "needs at least N online nodes" on a topology
    of N or more nodes fails (it should have run), as does one that needed
    a node 0 above 4 GiB on a topology that has one;
  - a console showing a kernel WARNING, BUG or the like fails even when
    every case passed.
"""

import argparse
import os
import re
import subprocess
import sys
import time

from . import guest, summary
from .topology import Topology, TopologyError

NEEDS = re.compile(r"needs at least (\d+) online nodes")
# QEMU's pc machine puts at most 3 GiB below 4 GiB: a larger node 0 has a
# Normal zone beside DMA32.  (arm64's virt board puts all memory below
# 4 GiB in ZONE_DMA, and its DMA32 stays empty: no node 0 has both.)
NEEDS_BIG_NODE0 = re.compile(r"needs node 0 with more than 4 GiB")


def judge(cases, topo, arch="x86_64"):
    """Apply the skip rules to [(case, status, reason)]: a case that
    skipped for want of something this topology has, fails."""
    judged = []
    for case, status, note in cases:
        if status == "SKIP":
            m = NEEDS.search(note)
            has = (m and topo.nodes >= int(m.group(1))) or \
                (not m and NEEDS_BIG_NODE0.search(note) and topo.nodes >= 2
                 and topo.mem_mib[0] > 4096 and arch == "x86_64")
            if has:
                status, note = "FAIL", f"skipped on {topo.describe()}: {note}"
        elif status != "PASS":
            status = "FAIL"
        judged.append((case, status, note))
    return judged


# kunit.py's --arch, the cross compiler it needs and the image it leaves.
ARCHES = {"x86_64": ("", "arch/x86/boot/bzImage"),
          "arm64": ("aarch64-linux-gnu-", "arch/arm64/boot/Image")}


def build(tree, build_dir, kunitconfigs, jobs, label, arch="x86_64"):
    """kunit.py build; the path of the kernel image, or None when it failed."""
    cross, image = ARCHES[arch]
    cc = "CC=" + subprocess.run([os.path.join(guest.TOP, "scripts", "cc.sh"), cross],
                                capture_output=True, text=True, check=True).stdout.strip()
    cmd = [sys.executable, os.path.join(tree, "tools/testing/kunit/kunit.py"), "build",
           f"--arch={arch}", f"--build_dir={build_dir}", f"--jobs={jobs}", f"--make_options={cc}"]
    if cross:
        cmd.append(f"--cross_compile={cross}")
    cmd += [f"--kunitconfig={os.path.abspath(k)}" for k in kunitconfigs]
    t0 = time.monotonic()
    print(f"[{label}] building with kunit.py into {os.path.relpath(build_dir, guest.TOP)}",
          flush=True)
    log = guest.log_path(label, "build")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    # 6.12's kunit.py makes the build directory with os.mkdir(): not its parent.
    os.makedirs(build_dir, exist_ok=True)
    with open(log, "w") as f:
        r = subprocess.run(cmd, cwd=tree, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode:
        print(open(log).read()[-6000:], end="")
        print(f"[{label}] kunit.py build failed (log: {os.path.relpath(log, guest.TOP)})",
              file=sys.stderr)
        return None
    print(f"[{label}] built in {guest.fmt_time(time.monotonic() - t0)}", flush=True)
    return os.path.join(build_dir, image)


def run_one(kernel, topo, args):
    """Boot one topology: (passed, failed, skipped)."""
    head = f"[{args.label} {topo.label()}]"
    append = "loglevel=7 kunit.enable=1" + \
        (f" kunit.filter_glob={args.filter}" if args.filter else "")
    try:
        res = guest.run(kernel, topo, "true", timeout=args.timeout, stage=args.label,
                        append=append, kcsan_scope=args.kcsan_scope)
    except guest.GuestError as e:
        print(f"{head} {e}", file=sys.stderr)
        return 0, 1, 0
    got = guest.results(res.lines)
    judged = judge(got.cases, topo, args.arch)
    for case, status, note in judged:
        print(f"{head} {case}: {status}" + (f" ({note})" if note else ""))
    p = sum(1 for _, s, _ in judged if s == "PASS")
    f = sum(1 for _, s, _ in judged if s == "FAIL")
    s = sum(1 for _, s, _ in judged if s == "SKIP")
    if args.kcsan_scope:
        for line in guest.unrelated_kcsan(res.lines, args.kcsan_scope):
            print(f"{head} KCSAN report outside the zonelist cache (not counted): {line}")
    if not judged:
        print(f"{head} no KUnit results in the console ({os.path.relpath(res.log, guest.TOP)})",
              file=sys.stderr)
        f += 1
    elif got.errors:
        print(f"{head} kunit_parser found {got.errors} error(s) in the KTAP "
              f"({os.path.relpath(res.log, guest.TOP)})", file=sys.stderr)
        f += 1
    return p, f, s


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m zlctool.kunit", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tree", required=True, help="kernel source tree")
    p.add_argument("--build-dir", required=True)
    p.add_argument("--kunitconfig", action="append", required=True)
    p.add_argument("--topology", action="append", required=True,
                   help="a topology (zlctool.topology), e.g. 4 or 6G,cpus=0-1/1G; repeatable")
    p.add_argument("--filter", default="", help="kunit.filter_glob")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--jobs", type=int, default=os.cpu_count())
    p.add_argument("--summary", help="file to write the counts to (see zlctool.summary)")
    p.add_argument("--label", default="kunit")
    p.add_argument("--arch", choices=sorted(ARCHES), default="x86_64",
                   help="the guests' architecture (arm64: cross-built, QEMU's virt board)")
    p.add_argument("--kcsan-scope",
                   help="regex: only KCSAN reports naming a match fail the run")
    args = p.parse_args(argv)

    try:
        topologies = [Topology.parse(spec) for spec in args.topology]
    except TopologyError as e:
        print(f"topology: {e}", file=sys.stderr)
        return 2
    kernel = build(os.path.abspath(args.tree), os.path.abspath(args.build_dir),
                   args.kunitconfig, args.jobs, args.label, args.arch)
    if not kernel:
        return summary.finish(args.label, args.summary, 0, 1, 0)
    passed = failed = skipped = 0
    progress = guest.Progress(args.label, len(topologies), guess=90)
    for topo in topologies:
        progress.start(topo.describe())
        p_, f_, s_ = run_one(kernel, topo, args)
        progress.finish(topo.describe(), f"{p_} passed, {f_} failed, {s_} skipped")
        passed, failed, skipped = passed + p_, failed + f_, skipped + s_
    return summary.finish(args.label, args.summary, passed, failed, skipped)


if __name__ == "__main__":
    sys.exit(main())
