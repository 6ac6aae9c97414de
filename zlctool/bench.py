"""make bench: base kernel vs cache off vs cache on, on the memory hog and the
workloads of zlctool/workloads.py (stutter, churn, busy, stress).

By default make bench runs all of them: the hog for one round, then each
workload ("about 25 minutes warm here").  WORKLOADS=hog,stutter picks some;
WORKLOADS=hog alone runs the hog's three rounds; QUICK=1 and ICOUNT=1 run
the hog only unless WORKLOADS says otherwise (QUICK=1 with workloads: their
reduced plans, as make test runs them).  The rest of this describes the hog.

For each kernel (the unpatched base and the patched series, built from the
same guest config) and each topology (node counts of equal total memory
with 2 vCPUs on node 0, or presets of machines that ship: nps4, cxl,
flex32; zlctool/topology.py), one guest boots, touches all its memory
once, then runs the selftest zonelist_cache_memhog at each memory fraction
and thread count (zlctool/in_guest/bench.sh).  On the patched kernel the
selftest runs the cache off and on inside the same boot; on the base
kernel it runs as is.  In the headline rows (90%) both kernels also run
"placed" passes (the selftest's -P, the cache switched off): each thread's
memory preferred chunk by chunk to nodes with room above their first
zone's high watermark, its own node first, so that no fault should walk
the zonelist.  Whether one did is measured, not assumed: every pass
records the counters of report.WALK_COUNTERS, and the report calls a
kind "placed" only where none of its passes counted a walk
(report.walked()).  Inside a boot the kinds take turns in a Williams
design (every kind in every position equally often over a full cycle of
repetitions, and after every other kind equally often inside one).  The boots come in rounds, each round booting every kernel
and topology once, in the opposite order of the round before (ABBA), so
that the host's drift over the run falls on every column alike; counted
runs take two rounds, so that a boot's own offset shows as a spread.

Each run is a named run, results/NAME/: run.json holds its provenance
(kernel release, series hash, QEMU version, host CPU, date, plan) and every
measured pass; report.txt and plot.png are made from it by zlctool.report,
which also compares runs (make compare).
"""

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

from . import guest, report, workloads
from .report import HEADLINE
from .topology import PRESETS, Topology, TopologyError

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(TOP, "results")
HOG = "zonelist_cache_memhog"

# --timed (and HW=1): the same topologies, one and two threads, timed.
FULL = dict(nodes=["1", "2", "nps4", "cxl", "flex32", "64"], pcts=[12, 90], threads=[1, 2],
            reps=6, rounds=2)
QUICK = dict(nodes=["64", "1"], pcts=[90], threads=[2], reps=2, rounds=2)
# --icount: QEMU counts instructions and the guest clock follows the count,
# so a pass's elapsed time is the instructions both vCPUs executed (1 ns
# each).  The host's drift does not reach it; a boot's own offset (where
# the kernel and its first allocations landed) does, so two rounds.  Six
# repetitions: the Williams design of the patched kernel's three kinds.
ICOUNT = dict(nodes=["1", "2", "nps4", "cxl", "flex32", "64"], pcts=[12, 90], threads=[2],
              reps=6, rounds=2)
ICOUNT_ARGS = guest.ICOUNT_ARGS

RUN_LINE = re.compile(r"zlc-run (\{.*\})")
ROW_LINE = re.compile(r"zlc-row pct=(\d+) threads=(\d+)")
ROW_END_LINE = re.compile(r"zlc-row-end numa_balancing=(\S+) hint_faults=(\d+)")


# --- running ------------------------------------------------------------------

def placed_row(pct, mode):
    """Whether a row also runs placed passes: the headline rows, on either kernel."""
    return pct == HEADLINE["pct"] and mode in ("compare", "asis")


def passes_per_row(pct, reps, mode):
    return reps * ((2 if mode == "compare" else 1) + placed_row(pct, mode))


def guest_command(pcts, threads, reps, mode):
    """The guest command: zlctool/in_guest/bench.sh with the run's rows."""
    return (f"PCTS='{' '.join(map(str, pcts))}' THREADS='{' '.join(map(str, threads))}' "
            f"REPS={reps} MODE={mode} PLACED_PCT={HEADLINE['pct']} sh /scripts/bench.sh")


# Counters a pass records beside the ones every run had (-1: not in this
# kernel, None: not in the hog that ran).
EVENTS = ("zlc_skip", "zlc_mark_full", "numa_miss", "pageoutrun", "numa_local", "numa_other",
          "allocstall", "lower_zone_pages")


def parse_console(lines, kernel, nodes, rnd=0, topology=None):
    """zlc-row and zlc-run lines of a guest console -> records.  A row's
    zlc-row-end line gives each of its passes the row's NUMA balancing
    setting and hint faults (numa_balancing, row_hint_faults).  topology:
    the topology's label (Topology.label()), kept with every record."""
    records, pct, threads, row_start = [], None, None, 0
    for line in lines:
        m = ROW_END_LINE.search(line)
        if m:
            for r in records[row_start:]:
                r.update(numa_balancing=m.group(1), row_hint_faults=int(m.group(2)))
            continue
        m = ROW_LINE.search(line)
        if m:
            pct, threads, row_start = int(m.group(1)), int(m.group(2)), len(records)
            continue
        m = RUN_LINE.search(line)
        if m and pct is not None:
            run = json.loads(m.group(1))
            rec = dict(kernel=kernel, zlc=run["zlc"], nodes=nodes, round=rnd, mem_pct=pct,
                       threads=threads, rep=run["rep"], mib=run["mib"],
                       sys=run["sys"], user=run["user"], real=run["real"],
                       **{e: run.get(e) for e in EVENTS})
            if topology is not None:
                rec.update(topology=topology, pos=run.get("pos"), prev=run.get("prev"))
            records.append(rec)
    return records


def sh(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=TOP, **kw)


def build_hog():
    """The selftest, statically, so that it runs in the busybox guests."""
    hog = os.path.join(guest.OUT, "selftests", HOG)
    sh(["make", "-s", "tree"])
    sh(["make", "-s", os.path.relpath(hog, TOP)])
    return hog


def config_fragments(args):
    """The config fragments both kernels are built from, and the suffix of
    their build directories: configs/guest.config alone (--config small),
    or with the distribution-like options on top (--config distro, the
    default: configs/distro.config and configs/distro-BASE.config), or
    with configs/nodes10.config (--config small --nodes-shift 10)."""
    frags = ["configs/guest.config"]
    if args.config == "distro":
        frags += ["configs/distro.config", f"configs/distro-{guest.BASE}.config"]
        return frags, "-distro"
    if args.nodes_shift != 6:
        frags.append("configs/nodes%d.config" % args.nodes_shift)
        return frags, "-nodes%d" % args.nodes_shift
    return frags, ""


def build(args):
    """Both kernels from the same config fragments (config_fragments()),
    the patched one in build/BASE/guest[-SUFFIX], the base in
    build/BASE/guest-base[-SUFFIX], and the selftest, statically."""
    frags, suffix = config_fragments(args)
    sh(["make", "-s", "tree"])
    kernels = {"patched": guest.TREE}
    if not getattr(args, "patched_only", False):
        sh(["make", "-s", "base-tree"])
        kernels["base"] = guest.TREE + "-base"
    out = {}
    for kernel, tree in kernels.items():
        out[kernel] = os.path.join(guest.OUT, ("guest" if kernel == "patched" else "guest-base")
                                   + suffix)
        sh(["scripts/kbuild.sh", "guest"], env=dict(
            os.environ, FRAGMENT=" ".join(frags), TREE=os.path.join(TOP, tree),
            KBUILD_OUT=os.path.join(TOP, out[kernel])))
    hog = build_hog()
    return {k: os.path.join(TOP, v, "arch/x86/boot/bzImage") for k, v in out.items()}, hog


def bloat(kernels, run_dir):
    """What the series adds to the kernel: the kernel's own
    scripts/bloat-o-meter on the base's vmlinux against the patched one
    (both from the same config), into RUN_DIR/bloat.txt.  Returns its last
    line (the total), or None without both kernels."""
    if set(kernels) != {"base", "patched"}:
        return None
    vmlinux = {k: os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.dirname(v)))), "vmlinux") for k, v in kernels.items()}
    out = subprocess.run([os.path.join(TOP, guest.TREE, "scripts", "bloat-o-meter"),
                          vmlinux["base"], vmlinux["patched"]],
                         check=True, capture_output=True, text=True).stdout
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, "bloat.txt"), "w") as f:
        f.write(f"# scripts/bloat-o-meter {os.path.relpath(vmlinux['base'], TOP)} "
                f"{os.path.relpath(vmlinux['patched'], TOP)}\n" + out)
    return out.strip().splitlines()[-1]


def boot_order(plan):
    """[(round, topology, kernel), ...]: every kernel and topology once a
    round, each round in the reverse order of the one before."""
    one = [(n, k) for n in plan["nodes"] for k in ("base", "patched")]
    order = []
    for rnd in range(plan.get("rounds", 1)):
        order += [(rnd, n, k) for n, k in (one if rnd % 2 == 0 else one[::-1])]
    return order


def run_guests(kernels, hog, plan, mem, cpus, t0, name, extra=(), nodes_shift=6, append="",
               failures=None):
    """Boot every kernel and topology of the plan, in boot_order(); the
    records of every pass.  A boot whose hog failed one of its own checks
    (a "not ok" line) but ran every pass is a finding, not a lost run: its
    failed checks go to failures, a list, and the boots go on."""
    records = []
    failures = [] if failures is None else failures
    rounds = plan.get("rounds", 1)
    order = boot_order(plan)
    progress_boot = guest.Progress("bench", len(order))
    for rnd, spec, kernel in order:
        topo = plan_topology(spec, mem, cpus, nodes_shift)
        nodes = topo.nodes
        mode = "asis" if kernel == "base" else "compare"
        script = guest_command(plan["pcts"], plan["threads"], plan["reps"], mode)
        state = {"row": None, "n": 0, "of": 0}

        def progress(line, kernel=kernel, state=state, mode=mode):
            m = ROW_LINE.search(line)
            if m:
                state["row"], state["n"] = f"{m.group(1)}% {m.group(2)} thr", 0
                state["of"] = passes_per_row(int(m.group(1)), plan["reps"], mode)
            m = RUN_LINE.search(line)
            if m:
                run = json.loads(m.group(1))
                state["n"] += 1
                print(f"[bench] round {rnd + 1}/{rounds} {topo.nodes:2d} nodes {kernel:7s} {state['row']}: "
                      f"{run['zlc']:3s} rep {run['rep'] + 1}/{plan['reps']} "
                      f"({state['n']}/{state['of']}) sys {run['sys']:.2f}s "
                      f"elapsed {time.monotonic() - t0:.0f}s", flush=True)

        progress_boot.start(f"round {rnd + 1}/{rounds}, {kernel} kernel, {topo.describe()}")
        res = guest.run(kernels[kernel], topo, script, binaries=[hog], timeout=7200,
                        stage=f"bench-{name}", name=f"{kernel}-{topo.label()}-r{rnd + 1}",
                        on_line=progress, extra=extra, append=append, quiet=True)
        log = os.path.relpath(res.log, TOP)
        progress_boot.finish(f"round {rnd + 1}/{rounds}, {kernel} kernel, {topo.describe()}")
        got = parse_console(res.lines, kernel, nodes, rnd, topo.label())
        want = sum(passes_per_row(p, plan["reps"], mode) for p in plan["pcts"]) * \
            len(plan["threads"])
        failed = [l.strip() for l in res.lines if l.startswith("not ok")]
        if res.status != 0 and (not failed or len(got) != want):
            raise guest.GuestError(f"the hog failed in the {kernel} guest on {topo.label()} "
                                  f"(exit {res.status}); log: {log}")
        if len(got) != want:
            raise guest.GuestError(f"expected {want} passes from the {kernel} guest on "
                                  f"{topo.label()}, got {len(got)}; log: {log}")
        for line in failed:
            failures.append(f"{kernel} kernel, {topo.label()}, round {rnd + 1}: {line} "
                            f"(log: {log})")
            print(f"[bench] the hog's own check failed: {failures[-1]}", flush=True)
        records += got
    return records




def plan_topology(spec, mem, cpus, nodes_shift):
    """A plan's topology: a node count (NODES equal nodes of MEM, CPUS vCPUs
    on node 0) or a preset's name (zlctool.topology.PRESETS)."""
    spec = str(spec)
    if spec.isdigit():
        return Topology.even(int(spec), mem, cpus, nodes_shift)
    if spec not in PRESETS:
        raise TopologyError(f"{spec}: a node count or one of the presets "
                            + ", ".join(PRESETS))
    return Topology.parse(spec, nodes_shift=nodes_shift)


def run_host(hog, plan, failures):
    """HW=1: the selftest on this machine, as booted, into the same records;
    a check of the hog's that fails goes to failures, as in run_guests()."""
    nodes = len([d for d in os.listdir("/sys/devices/system/node") if re.fullmatch(r"node\d+", d)])
    mode = "compare" if os.path.exists("/proc/sys/vm/zonelist_cache") and os.geteuid() == 0 else "asis"
    kernel = "patched" if mode == "compare" else "base"
    lines = []
    for p in plan["pcts"]:
        for t in plan["threads"]:
            lines.append(f"zlc-row pct={p} threads={t}")
            out = subprocess.run([hog, "-m", mode, "-p", str(p), "-t", str(t),
                                  "-r", str(plan["reps"]), "-j"] +
                                 (["-P"] if placed_row(p, mode) else []),
                                 capture_output=True, text=True)
            sys.stdout.write(out.stdout)
            lines += out.stdout.splitlines()
            failed = [l.strip() for l in out.stdout.splitlines() if l.startswith("not ok")]
            if out.returncode and not failed:
                raise guest.GuestError(f"the hog failed on this machine (exit {out.returncode}): "
                                       + out.stderr.strip()[-300:])
            failures += [f"this machine, {p}%, {t} threads: {l}" for l in failed]
    return parse_console(lines, kernel, nodes)


def source():
    """The project's commit a run starts from, and why the run is only a
    draft if it is (draft_reason()): taken before anything is built or run,
    so that commits made while it runs are not credited with it."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                          cwd=TOP).stdout.strip()
    return dict(commit=head or "?", draft=draft_reason())


def provenance(kernel_dir=None, start=None):
    """What a run was measured on: kernel release (of the patched guest
    kernel built in kernel_dir, or the running one), series hash (the git
    tree of patches/), QEMU version and host CPU model."""
    def first_line(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=TOP).stdout \
                .splitlines()[0].strip()
        except (OSError, IndexError):
            return "?"
    release = os.path.join(kernel_dir or "/nonexistent", "include", "config", "kernel.release")
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return dict(kernel=open(release).read().strip() if os.path.exists(release)
                else os.uname().release,
                # The commit the kernel was built from (the work tree's
                # HEAD: the series applied, make tree refuses otherwise),
                # and the git tree of patches/ in the project's commit, or
                # "uncommitted" if patches/ differs from it, the cover
                # letters (prose) aside, as for drafts.
                base=guest.BASE,
                series=first_line(["git", "-C", guest.TREE, "rev-parse", "--short", "HEAD"]),
                patches=first_line(["sh", "-c", "[ -z \"$(git status --porcelain -- patches "
                                    + " ".join(f"'{x}'" for x in NOT_MEASURED
                                               if x.startswith(":!patches/"))
                                    + ")\" ] && git rev-parse --short HEAD:patches "
                                    "|| echo uncommitted"]),
                # The project's commit the run was made from, and why it
                # is only a draft if it is (draft_reason()).
                **(start or source()),
                qemu=first_line(["qemu-system-x86_64", "--version"]),
                host_cpu=cpu, host_cpus=os.cpu_count())


def draft_reason():
    """Why a run is a draft rather than a run of record, or "": the
    project's files (patches/ and the tooling, untracked ones too that git
    does not ignore; the prose and results/ aside: NOT_MEASURED) differ
    from its commit, a kernel work tree holds work that its series does not
    (make check-export), or the unpatched base's tree
    (build/linux-BASE-base) is not the base as fetched."""
    dirty = subprocess.run(["git", "status", "--porcelain", "--", ".", *NOT_MEASURED],
                           capture_output=True, text=True, cwd=TOP)
    if dirty.returncode or dirty.stdout.strip():
        return "the project's files differ from its commit"
    export = subprocess.run(["make", "-s", "check-export"], capture_output=True, text=True,
                            cwd=TOP)
    if export.returncode:
        return "a kernel work tree differs from its series (make check-export)"
    base = os.path.join(TOP, guest.TREE + "-base")
    if os.path.isdir(base):
        head = subprocess.run(["git", "-C", base, "rev-parse", "HEAD", "base"],
                              capture_output=True, text=True).stdout.split()
        dirty = subprocess.run(["git", "-C", base, "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True)
        if len(head) != 2 or head[0] != head[1] or dirty.stdout.strip():
            return f"{guest.TREE}-base is not the base as fetched"
    return ""


# What no run measures: where runs are written, and the prose (the cover
# letters among it).
NOT_MEASURED = (":!results", ":!docs", ":!*.md", ":!patches/0000-cover-letter.patch",
                ":!patches/6.12/0000-cover-letter.patch")


def still_source(start):
    """start (source()), its draft reason set if the project changed while
    the run ran, other than in NOT_MEASURED: what ran may then not be
    start's commit."""
    end = source()
    if start["draft"]:
        return start
    if end["draft"]:
        return dict(start, draft="the project changed while the run ran: " + end["draft"])
    moved = subprocess.run(["git", "diff", "--quiet", start["commit"], end["commit"], "--",
                            ".", *NOT_MEASURED], cwd=TOP).returncode
    if moved:
        return dict(start, draft="the project changed while the run ran: its commit moved "
                    f"to {end['commit'][:12]}")
    return start


def make_command(args, name):
    """The one make command that runs this run again: the Makefile's
    variables for the options given."""
    words = ["make", "bench", f"NAME={name}"]
    for flag, var in (("quick", "QUICK"), ("icount", "ICOUNT"), ("hw", "HW"),
                      ("timed", "TIMED"), ("kaslr", "KASLR")):
        if getattr(args, flag):
            words.append(f"{var}=1")
    for opt, var in (("workloads", "WORKLOADS"), ("rounds", "ROUNDS"), ("reps", "REPS"),
                     ("boots", "BOOTS"), ("variants", "VARIANTS"),
                     ("nodes", "BENCH_NODES"), ("mem", "MEM"), ("append", "APPEND")):
        value = getattr(args, opt)
        if value and not (opt == "mem" and value == "2G"):
            words.append(f"{var}='{value}'" if " " in str(value) else f"{var}={value}")
    if args.config != "distro":
        words.append(f"CONFIG={args.config}")
        if args.nodes_shift != 6:
            words.append(f"NODES_SHIFT={args.nodes_shift}")
    return " ".join(words)


def run_name(args, works):
    kind = "hog" if works == ["hog"] else "bench"
    return args.name or (kind + ("-icount-" if args.icount else "-quick-" if args.quick else "-")
                         + time.strftime("%Y%m%d-%H%M", time.gmtime()))


def default_workloads(args):
    """make bench: every workload; QUICK=1 and ICOUNT=1 alone: the hog."""
    return ["hog"] if args.quick or args.icount or args.hw else \
        ["hog", *workloads.NAMES]


def workload_plans(quick, rounds=None, boots=None, variants=None):
    """The workloads' plans; rounds (else the plan's own, else one) repeats
    each boot's variants (ABBA); boots (else the plan's own, else one)
    boots each kernel that many times per topology (ABBA); variants, if
    given, replaces the patched kernel's variants of a boot (e.g. "off off":
    the cache never switched on in that boot)."""
    plans = {w: dict(p) for w, p in workloads.PLANS["quick" if quick else "full"].items()}
    for p in plans.values():
        p["rounds"] = rounds or p.get("rounds", 1)
        p["boots"] = boots or p.get("boots", 1)
        if variants:
            p["patched"] = variants
    return plans


# Every bench guest boots with its kernel where the kernel asks to be, not
# at a random physical address: with KASLR the image and its reservations
# (15 MB here) land on a random node each boot, so that the nodes of a
# topology differ in size from boot to boot, and with them where a spilling
# load's pages go, which no comparison between two boots should carry.
BENCH_APPEND = "nokaslr"


def command_line(args):
    """The kernel command line the run adds: nokaslr unless KASLR=1, then
    APPEND.  With nokaslr and 32 MiB nodes, node 0's DMA32 zone keeps
    about 920 managed pages, with watermarks of 0 (docs/measuring.md)."""
    return " ".join(a for a in ("" if args.kaslr else BENCH_APPEND, args.append) if a)


def run_workloads(works, kernels, hog, name, plans, t0, append=BENCH_APPEND):
    """The workloads beside the hog (zlctool/workloads.py): {work: samples}."""
    zlcload = workloads.build_zlcload()
    steps = sum(len(workloads.boots(w, plans[w])) * len(kernels) * plans[w].get("boots", 1)
                for w in works)
    progress = guest.Progress("bench", steps)
    out = {}
    for work in works:
        out[work] = workloads.run(work, kernels, plans[work], name, hog, zlcload, progress,
                                  append=append)
        print(f"[bench] {work}: {len(out[work])} samples, "
              f"{guest.fmt_time(time.monotonic() - t0)} elapsed", flush=True)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m zlctool.bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--name", help="the run's name: it goes to results/NAME/ "
                   "(default hog-[icount-|quick-]DATE-TIME)")
    p.add_argument("--quick", action="store_true",
                   help="64 and 1 nodes, 90%%, 2 threads, 2 rounds of 2 passes")
    p.add_argument("--hw", action="store_true", help="run the selftest on this host instead")
    p.add_argument("--icount", action="store_true",
                   help="count instructions instead of timing (QEMU -icount): "
                        "64, 16, 2 and 1 nodes, one round")
    p.add_argument("--mem", default="2G", help="guest memory in all (default 2G)")
    p.add_argument("--cpus", default="2", help="vCPUs on node 0 (default 2)")
    p.add_argument("--nodes", help="override: comma list of topologies, node counts "
                   "or presets (" + ", ".join(PRESETS) + ")")
    p.add_argument("--config", default="distro", choices=("distro", "small"),
                   help="distro (default): configs/guest.config with the allocator-relevant "
                   "options of Debian's own config on top (configs/distro*.config: JUMP_LABEL, "
                   "NODES_SHIFT=10, memcg, cpusets, the preemption model); small: "
                   "configs/guest.config alone, the fast tests' config")
    p.add_argument("--append", default="",
                   help="more kernel command line for every guest of the run, after nokaslr "
                   "(unless --kaslr), "
                   "e.g. movablecore=50%%")
    p.add_argument("--kaslr", action="store_true",
                   help="boot without nokaslr: the kernel image goes where KASLR puts it, "
                   "and node 0's DMA32 zone is not left at about 920 pages (64 nodes of 32 MiB)")
    p.add_argument("--nodes-shift", type=int, default=6, choices=(6, 10),
                   help="the kernels' CONFIG_NODES_SHIFT (10: configs/nodes10.config, "
                        "up to 128 nodes)")
    p.add_argument("--reps", type=int, help="override: passes per variant, row and round")
    p.add_argument("--rounds", type=int, help="override: rounds of boots (ABBA order); "
                   "for the workloads, rounds of variants in each boot (ABBA)")
    p.add_argument("--boots", type=int, help="workloads: boots of each kernel per topology "
                   "(ABBA; default the plan's, else 1)")
    p.add_argument("--variants", help="workloads: the patched kernel's variants in a boot, "
                   "e.g. 'off off' (default the plan's, e.g. 'off on on off')")
    p.add_argument("--results", default=RESULTS, help="where named runs go (default results/)")
    p.add_argument("--workloads", help="comma list of hog," + ",".join(workloads.NAMES) +
                   " (default: all; with --quick or --icount: hog)")
    p.add_argument("--timed", action="store_true",
                   help="time the hog instead of counting its instructions (the default "
                   "counts, as with --icount)")
    p.add_argument("--check", action="store_true",
                   help="then check the workloads' records (make test): fail on a problem")
    p.add_argument("--patched-only", action="store_true",
                   help="workloads: boot only the patched kernel (off and on; make test)")
    args = p.parse_args(argv)
    if args.config == "distro":
        args.nodes_shift = 10       # configs/distro.config has NODES_SHIFT=10

    if args.icount and args.hw:
        p.error("--icount runs guests; it does not go with --hw")
    if args.kaslr and args.hw:
        p.error("--kaslr boots guests; it does not go with --hw")
    if args.icount and args.timed:
        p.error("--icount and --timed: pick one")
    # The hog is counted unless told to be timed (or a quick smoke run, or
    # on this host): bars are judged on counted figures.
    counted = args.icount or not (args.timed or args.quick or args.hw)
    works = args.workloads.split(",") if args.workloads else default_workloads(args)
    unknown = [w for w in works if w not in ("hog", *workloads.NAMES)]
    if unknown or not works:
        p.error(f"unknown workload(s) {','.join(unknown)}: pick from hog,"
                + ",".join(workloads.NAMES))
    if args.patched_only and "hog" in works:
        p.error("--patched-only is for the workloads: the hog compares with the base kernel")
    if args.hw and works != ["hog"]:
        p.error("--hw runs the hog only")
    name = run_name(args, works)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        p.error(f"run name {name!r}: letters, digits, '.', '_' and '-' only")
    run_dir = os.path.join(args.results, name)
    if any(os.path.exists(os.path.join(run_dir, f)) for f in ("run.json", "workloads.json")):
        p.error(f"{os.path.relpath(run_dir, TOP)} exists: give the run another NAME")
    plan = dict(ICOUNT if counted else QUICK if args.quick else FULL)
    if args.nodes:
        plan["nodes"] = args.nodes.split(",")
    if args.reps:
        plan["reps"] = args.reps
    if args.rounds:
        plan["rounds"] = args.rounds
    try:
        for n in plan["nodes"]:
            plan_topology(n, args.mem, args.cpus, args.nodes_shift)   # refuse a bad one now
    except TopologyError as e:
        p.error(f"topology: {e}")

    # SIGTERM unwinds like ^C: the runner kills its guest, no JSON is written.
    signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    t0 = time.monotonic()
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    start = source()
    records, samples, failures = [], {}, []
    append = command_line(args)
    try:
        kernel_dir = None
        if args.hw:
            records = run_host(build_hog(), plan, failures)
        else:
            kernels, hog = build(args)
            kernel_dir = os.path.dirname(os.path.dirname(os.path.dirname(
                os.path.dirname(kernels["patched"]))))
            if "hog" in works:
                records = run_guests(kernels, hog, plan, args.mem, args.cpus, t0, name,
                                     failures=failures,
                                     extra=ICOUNT_ARGS if counted else (),
                                     nodes_shift=args.nodes_shift, append=append)
            others = [w for w in works if w != "hog"]
            if others:
                if args.patched_only:
                    kernels = {"patched": kernels["patched"]}
                samples = run_workloads(others, kernels, hog, name,
                                        workload_plans(args.quick, args.rounds, args.boots, args.variants), t0, append)
    except KeyboardInterrupt:
        print("\n[bench] interrupted: no results written", file=sys.stderr)
        return 130
    except (guest.GuestError, subprocess.CalledProcessError) as e:
        print(f"[bench] failed: {e}", file=sys.stderr)
        return 1
    meta = dict(name=name, plan=plan, mem=args.mem, cpus=args.cpus, quick=args.quick,
                nodes_shift=args.nodes_shift, workloads=works,
                config=None if args.hw else " ".join(config_fragments(args)[0]),
                append="" if args.hw else append,
                hw=args.hw, icount=counted, date=date, hog_failures=failures, command=make_command(args, name),
                seconds=round(time.monotonic() - t0), provenance=provenance(kernel_dir, still_source(start)))
    if records:
        print("\n" + report.write_run(run_dir, records, meta) + "\n")
    if kernel_dir:
        total = bloat(kernels, run_dir)
        if total:
            print(f"[bench] bloat-o-meter, base against patched: {total}")
    if samples:
        meta["plans"] = {w: p for w, p in workload_plans(args.quick, args.rounds, args.boots, args.variants).items()
                         if w in samples}
        print("\n" + workloads.write(run_dir, samples, meta, records) + "\n")
    print(f"[bench] wrote {os.path.relpath(run_dir, TOP)}/ in "
          f"{guest.fmt_time(time.monotonic() - t0)}")
    if args.check:
        problems = workloads.check(samples, [w for w in works if w != "hog"])
        for pr in problems:
            print(f"[bench] check: {pr}", file=sys.stderr)
        if problems:
            return 1
        print(f"[bench] check: every workload made records with locality figures; "
              f"stress-ng verified")
    if failures:
        print(f"[bench] the hog's own checks failed {len(failures)} time(s): see the top of "
              f"{os.path.relpath(run_dir, TOP)}/report.txt", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
