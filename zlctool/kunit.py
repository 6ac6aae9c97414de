"""Run KUnit suites through tools/testing/kunit/kunit.py under several NUMA
topologies, and hold the results to the project's rules.

kunit.py builds the kernel once and runs it once per topology (its
--qemu_args carry the -numa options).  On top of kunit.py's verdict this
adds two checks: a case that skipped with "needs at least N online nodes"
on a topology of N or more nodes is a failure (it should have run), and
a console showing a kernel WARNING, BUG or the like is a failure even when
every case passed.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

from .qemu import trouble_report, unrelated_kcsan
from .topology import Topology, TopologyError
from . import summary

NEEDS = re.compile(r"needs at least (\d+) online nodes")
# QEMU's pc machine puts at most 3 GiB below 4 GiB: a larger node 0 has a
# Normal zone beside DMA32.
NEEDS_BIG_NODE0 = re.compile(r"needs node 0 with more than 4 GiB")


def parse_topology(spec, cpus):
    """'4' or '4:8G' (nodes[:total memory]) -> Topology."""
    nodes, _, mem = spec.partition(":")
    return Topology.make(nodes, mem or "2G", cpus)


def flatten(group, prefix=""):
    """KernelCI JSON from kunit.py -> [(suite.case, status)]."""
    name = group.get("name", "")
    here = prefix if name == "KUnit Test Group" else (f"{prefix}.{name}" if prefix else name)
    out = [(f"{here}.{c['name']}" if here else c["name"], c["status"])
           for c in group.get("test_cases", [])]
    for sub in group.get("sub_groups", []):
        out += flatten(sub, here)
    return out


def skip_reasons(log_lines):
    """TAP '# SKIP reason' lines of the console -> {case: reason}."""
    reasons = {}
    for line in log_lines:
        m = re.search(r"ok \d+ (\S+) # SKIP(.*)$", line)
        if m:
            reasons[m.group(1)] = m.group(2).strip()
    return reasons


def judge(cases, reasons, topo):
    """Apply the skip rules: [(case, status, note)] with status PASS/FAIL/SKIP.
    A case that skipped for want of something this topology has, fails."""
    judged = []
    for case, status in cases:
        note = ""
        short = case.rsplit(".", 1)[-1]
        if status == "SKIP":
            note = reasons.get(short, "")
            m = NEEDS.search(note)
            has = (m and topo.nodes >= int(m.group(1))) or \
                (not m and NEEDS_BIG_NODE0.search(note) and topo.nodes >= 2
                 and topo.mem_mib[0] > 4096)
            if has:
                status = "FAIL"
                note = f"skipped on {topo.describe()}: {note}"
        elif status not in ("PASS",):
            status = "FAIL"
        judged.append((case, status, note))
    return judged


def kunit_py(tree, *args):
    return [sys.executable, os.path.join(tree, "tools/testing/kunit/kunit.py"), *args]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m zlctool.kunit", description=__doc__)
    p.add_argument("--tree", required=True, help="kernel source tree")
    p.add_argument("--build-dir", required=True)
    p.add_argument("--kunitconfig", action="append", required=True)
    p.add_argument("--kconfig-add", action="append", default=[])
    p.add_argument("--topology", action="append", required=True,
                   help="nodes[:total memory], e.g. 4 or 2:6G; repeatable")
    p.add_argument("--cpus", default="2", help="CPUs of node 0, or one count per node")
    p.add_argument("--filter", default="", help="kunit.py filter_glob")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--jobs", type=int, default=os.cpu_count())
    p.add_argument("--summary", help="file to write the counts to (see zlctool.summary)")
    p.add_argument("--label", default="kunit")
    p.add_argument("--kcsan-scope",
                   help="regex: only KCSAN reports naming a match fail the run")
    args = p.parse_args(argv)

    try:
        topologies = [(spec, parse_topology(spec, args.cpus)) for spec in args.topology]
    except TopologyError as e:
        print(f"topology: {e}", file=sys.stderr)
        return 2

    tree = os.path.abspath(args.tree)
    build_dir = os.path.abspath(args.build_dir)
    os.makedirs(build_dir, exist_ok=True)
    common = ["--arch=x86_64", f"--build_dir={build_dir}"]
    cc = "CC=ccache gcc" if subprocess.run(["sh", "-c", "command -v ccache"],
                                            capture_output=True).returncode == 0 else "CC=gcc"
    build = kunit_py(tree, "build", *common, f"--jobs={args.jobs}", f"--make_options={cc}")
    for k in args.kunitconfig:
        build.append(f"--kunitconfig={os.path.abspath(k)}")
    for k in args.kconfig_add:
        build.append(f"--kconfig_add={k}")
    t0 = time.monotonic()
    print(f"[{args.label}] building with kunit.py into {os.path.relpath(build_dir)}", flush=True)
    r = subprocess.run(build, cwd=tree, capture_output=True, text=True)
    if r.returncode:
        sys.stdout.write(r.stdout[-6000:])
        sys.stderr.write(r.stderr[-6000:])
        print(f"[{args.label}] kunit.py build failed", file=sys.stderr)
        summary.write(args.summary, passed=0, failed=1, skipped=0)
        return 1
    print(f"[{args.label}] built in {time.monotonic() - t0:.0f}s", flush=True)

    passed = failed = skipped = 0
    for spec, topo in topologies:
        out_json = os.path.join(build_dir, f"results-{spec.replace(':', '-')}.json")
        qemu_args = " ".join(["-accel", "tcg"] + topo.qemu_args())
        cmd = kunit_py(tree, "exec", *common, f"--timeout={args.timeout}",
                       f"--qemu_args={qemu_args}", f"--json={out_json}")
        if args.filter:
            cmd.append(args.filter)
        t0 = time.monotonic()
        if os.path.exists(out_json):
            os.unlink(out_json)
        r = subprocess.run(cmd, cwd=tree, capture_output=True, text=True)
        with open(os.path.join(build_dir, f"kunit-{spec.replace(':', '-')}.out"), "w") as f:
            f.write(r.stdout + r.stderr)
        log_path = os.path.join(build_dir, "test.log")
        log_lines = open(log_path, errors="replace").read().splitlines() \
            if os.path.exists(log_path) else []
        cases = []
        if os.path.exists(out_json):
            with open(out_json) as f:
                cases = flatten(json.load(f))
        judged = judge(cases, skip_reasons(log_lines), topo)
        head = f"[{args.label}] {topo.describe()}"
        for case, status, note in judged:
            print(f"{head}: {case}: {status}" + (f" ({note})" if note else ""))
        p_ = sum(1 for _, s, _ in judged if s == "PASS")
        f_ = sum(1 for _, s, _ in judged if s == "FAIL")
        s_ = sum(1 for _, s, _ in judged if s == "SKIP")
        trouble = trouble_report(log_lines, kcsan_scope=args.kcsan_scope)
        if args.kcsan_scope:
            for line in unrelated_kcsan(log_lines, args.kcsan_scope):
                print(f"{head}: KCSAN report outside the zonelist cache (not counted): {line}")
        if trouble:
            print(f"{head}: the kernel reported trouble:\n" +
                  "\n".join("  | " + l for l in trouble), file=sys.stderr)
            f_ += 1
        if not judged:
            print(f"{head}: no test results (kunit.py exited {r.returncode})", file=sys.stderr)
            sys.stderr.write("\n".join(r.stdout.splitlines()[-30:]) + "\n")
            f_ += 1
        elif r.returncode and not f_:
            print(f"{head}: kunit.py exited {r.returncode}", file=sys.stderr)
            sys.stderr.write("\n".join(r.stdout.splitlines()[-30:]) + "\n")
            f_ += 1
        print(f"{head}: {p_} passed, {f_} failed, {s_} skipped "
              f"in {time.monotonic() - t0:.0f}s", flush=True)
        passed, failed, skipped = passed + p_, failed + f_, skipped + s_

    summary.write(args.summary, passed=passed, failed=failed, skipped=skipped)
    print(f"[{args.label}] {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
