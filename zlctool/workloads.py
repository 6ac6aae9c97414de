"""make bench's workloads beside the hog: stutter, churn, busy, stress, storm,
pagefault and placement.

The workloads that removed the cache in Linux 4.4 were not a memory hog
but mixed loads with reclaim, THP and frees.  Each workload here boots the
unpatched base kernel (variant "base") and the patched one (variants "off"
and "on", interleaved off, on, on, off in one boot), runs the same load
for each variant (zlctool/in_guest/workload.sh) and records what it measured,
the /proc/vmstat deltas and every node's numastat deltas:

  stutter  2 nodes of 1 GiB, one vCPU on each, THP always, a virtio disk
           with ext4 (a file larger than a node) and a swap disk, both made
           here with mkfs.ext4 and mkswap and attached snapshot=on.  An
           anonymous hog past memory, a copy of the file in a loop and a
           probe that maps, faults and unmaps 2 MiB of THP-advised memory
           and times each round trip (zlctool/in_guest/zlcload.c).
           Reclaim grows with a sample's position in its boot (swap and
           page cache fill): the base boots take four samples too, so
           that off (first and fourth) and on (second and third) each
           have base samples at their own positions.
  churn    the hog (one thread) spilling across 16 and 64 nodes, alone and
           while zlcload churn maps, faults and unmaps THP-advised memory
           preferring node 0, one of the full nodes.
  busy     8 nodes with one vCPU each, the hog with 1, 3, 5 and 7 threads,
           thread i on CPU i, so that every node allocates and is spilled
           onto (the thread counts of the 2.6.20 table, scaled).  Counted
           with QEMU -icount: deterministic for any number of vCPUs.
  stress   stress-ng from Debian (its binary and shared libraries copied
           into the initramfs): --vm with several methods and --verify,
           --numa, --malloc and --mmap, on 4 nodes.
  storm    16 nodes with one vCPU each (a kernel with NR_CPUS >= 16: the
           distribution-like config): a hog holds 80% of the memory available,
           idle once it has faulted it in (the guest's instructions are the
           churners' and the kernel's), so that
           zones sit at their low watermarks, while a churner on every CPU
           maps, faults and unmaps THP-advised memory preferring its own
           node.  Zones flip between marked and recovered, and each
           recovery makes every zonelist wipe: recoveries and wipes per
           second, and instructions per churned page, off against on,
           six samples of each a boot.  The per-cpu lists are held at
           1/512 of their zone (vm.percpu_pagelist_high_fraction) for
           every kernel: with one CPU a node, 7.3 lets them grow until the
           hog runs out of memory in the fourth sample, unpatched too.
           Counted with QEMU -icount, which runs the vCPUs one at a time:
           it counts wipes and instructions, not cache-line contention.
  pagefault  page fault churn in the shapes of the kernel test robot's
           will-it-scale page_fault1 and page_fault2: each task, pinned
           to a CPU of its own, maps anonymous memory (anon) or a private
           mapping of a file in the page cache (file: every write a COW
           fault that allocates an anonymous page), writes a word into
           every 4 KiB page, unmaps it, over and over (zlcload pf), with
           1 and 2 tasks, on 1 and 2 nodes with room to spare and on the
           presets nps4, cxl, flex32 and 64 nodes with idle holds that
           fill each CPU's node but 16 MiB, then 60% of the memory still
           available, so that the faults spill off the CPUs' own nodes.
           Faults per second of guest time per task and the pages on the
           CPUs' own nodes (/proc/vmstat numa_local against numa_other).
           Counted with QEMU -icount: the guest clock follows the
           instructions of both vCPUs, so a task's rate with 2 tasks is
           about half its rate alone; compare kernels at one task count.
  placement  where the pages of one pass of the hog's shape go (zlcload
           fill: 75% of the topology's memory, the same MiB on every
           kernel, 2 threads, one on each vCPU, each counting where its
           own pages are), on 2 nodes and the presets nps4, cxl and
           flex32, two boots of each kernel, the per-cpu lists held at
           1/512 of their zone as in storm (what the warm-up leaves on
           them differs by boot, and a thread takes another node's).
           Free-running, as the hog: the node a CPU's zonelist falls
           back to first can be the other CPU's own, and which thread
           runs faster decides how much of it each gets.  Faster spill
           walks (the cache's) then cost the other CPU local pages with
           every allocation placed as 7.3.4 places it.  In lock step
           (each thread touches 256 KiB, then waits for the other), each
           thread gets its share of a contested node whatever its speed,
           up to a step: the reference for "never farther than 7.3.4".
           With 2 MiB steps, on placed 0.12 points fewer pages than off
           at flex32, about one step: the faster thread took more of the
           contested node's last step.  Counted with
           QEMU -icount, as the hog's runs of record: the time from the
           threads' start to all pages touched is also the instructions
           of both vCPUs, Ginsn per GiB, without the race's share in it.

Each sample's locality: numa_hit, numa_miss, numa_foreign, local_node and
other_node summed over the nodes, and remote% = other_node / (local_node +
other_node); loads that know their pages also count them per node with
move_pages().  The records go to results/NAME/workloads.json, each
workload's table to NAME/WORKLOAD.txt, its plot to NAME/WORKLOAD.png (for
stutter the latency CDF), and the one-table headline to NAME/headline.md.
"""

import json
import os
import re
import shutil
import statistics
import subprocess

from . import guest, report
from .topology import Topology

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAMES = ("stutter", "churn", "busy", "stress", "storm", "pagefault", "placement")
HOG = "zonelist_cache_memhog"

# Stressors: one stress-ng command line each ('make bench' runs them all).
STRESSORS = [
    "--vm 2 --vm-bytes 40% --vm-method flip --verify",
    "--vm 2 --vm-bytes 40% --vm-method walk-1d --verify",
    "--vm 2 --vm-bytes 40% --vm-method zero-one --verify",
    "--numa 2 --verify",
    "--malloc 2 --malloc-bytes 16K --malloc-max 32768 --verify",
    "--mmap 2 --mmap-bytes 20% --verify",
]

# What each workload runs: the full plan (make bench) and the reduced one
# (QUICK=1 and make test: every workload once, records only).
PLANS = {
    "full": dict(
        stutter=dict(secs=45, hog_pct=105, file_pct=125, patched="off on on off",
                     base="base base base base"),
        churn=dict(nodes=[16, 64], pct=90, churn_mib=64, patched="off on on off",
                   base="base base"),
        busy=dict(threads=[1, 3, 5, 7], pct=90, patched="off on", base="base"),
        stress=dict(secs=8, stressors=STRESSORS, patched="off on on off", base="base base"),
        storm=dict(secs=4, hog_pct=80, churn_mib=4, rounds=3, patched="off on on off",
                   base="base base"),
        # (topology, HOLD_PCT): room on the CPUs' own nodes, then spilling.
        pagefault=dict(secs=2, mib=64, tasks=[1, 2], boots=2,
                       topologies=[("1", 0), ("2", 0), ("nps4", 60), ("cxl", 60),
                                   ("flex32", 60), ("64", 60)],
                       patched="off on on off", base="base base"),
        # Every kind at every position of a boot, 7.3.4 as often as off
        # and on (the second boot reverses the first): pages on a CPU's
        # node drift with a sample's position in its boot.
        # A share of the topology's memory, not of MemAvailable (which
        # differs by kernel): every kernel fills the same MiB.
        placement=dict(mem_pct=75, threads=2, steps=[0, 256], boots=2,
                       topologies=["2", "nps4", "cxl", "flex32"],
                       patched="off on", base="base base"),
    ),
    "quick": dict(
        stutter=dict(secs=10, hog_pct=105, file_pct=125, patched="off on", base="base"),
        churn=dict(nodes=[16], pct=60, churn_mib=32, patched="off on", base="base"),
        busy=dict(threads=[1, 7], pct=40, patched="off on", base="base"),
        stress=dict(secs=3, stressors=[STRESSORS[0], STRESSORS[3], STRESSORS[4],
                                       STRESSORS[5]], patched="off on", base="base"),
        storm=dict(secs=2, hog_pct=80, churn_mib=4, patched="off on", base="base"),
        pagefault=dict(secs=1, mib=16, tasks=[1], topologies=[("nps4", 60)],
                       patched="off on", base="base"),
        placement=dict(mem_pct=35, threads=2, steps=[0, 256], topologies=["nps4"],
                       patched="off on", base="base"),
    ),
}

TOPOLOGY = {
    "stutter": "1G,cpus=0/1G,cpus=1",
    "busy": "/".join(f"256M,cpus={i}" for i in range(8)),
    "stress": "512M,cpus=0/512M,cpus=1/512M/512M",
    "storm": "/".join(f"128M,cpus={i}" for i in range(16)),
}

VMSTAT = ["allocstall_dma32", "allocstall_normal", "allocstall_movable", "pgscan_direct",
          "pgscan_kswapd", "pgsteal_direct", "compact_stall", "compact_success",
          "thp_fault_alloc", "thp_fault_fallback", "pswpin", "pswpout",
          # NUMA balancing: its hint faults, and the pages it migrates, each
          # of them an allocation that numa_hit or numa_miss counts.
          "numa_hint_faults", "numa_pages_migrated",
          "zlc_skip", "zlc_mark_full", "zlc_wipe",
          # Not /proc/vmstat's: wipes by cause, counted by a histogram
          # trigger on kmem:mm_zlc_wipe (in_guest/workload.sh).
          "zlc_wipe_interval", "zlc_wipe_recovery", "zlc_wipe_rebuild",
          # and marked zones found passing again (kmem:mm_zlc_recover).
          "zlc_recover",
          # and the sample's length on the guest clock (in_guest/workload.sh).
          "uptime_ms"]
NUMASTAT = ["numa_hit", "numa_miss", "numa_foreign", "local_node", "other_node"]


# --- tools and disks ------------------------------------------------------------

def sh(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=TOP, **kw)


def build_zlcload():
    """zlctool/in_guest/zlcload.c, static, into build/tools/zlcload."""
    src = os.path.join(TOP, "zlctool", "in_guest", "zlcload.c")
    out = os.path.join(TOP, "build", "tools", "zlcload")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        sh(["gcc", "-Wall", "-Wextra", "-Werror", "-O2", "-static", "-pthread", "-o", out, src])
    return out


def stress_ng():
    """stress-ng and the shared libraries it needs, at the paths it needs
    them: {guest path: host path}."""
    return guest.host_program("stress-ng")


def stutter_disks(node_mib, file_pct):
    """build/disks/: an ext4 image with /big (file_pct% of a node, random
    bytes, so that nothing of it is a hole) and a swap image, made once and
    reused; the guests attach them snapshot=on and never write them."""
    d = os.path.join(TOP, "build", "disks")
    big_mib = node_mib * file_pct // 100
    img = os.path.join(d, f"stutter-ext4-{big_mib}M.img")
    swap = os.path.join(d, "swap-1536M.img")
    os.makedirs(d, exist_ok=True)
    if not os.path.exists(img):
        src = os.path.join(d, "src")
        shutil.rmtree(src, ignore_errors=True)
        os.makedirs(src)
        with open(os.path.join(src, "big"), "wb") as f:
            for _ in range(big_mib):
                f.write(os.urandom(1 << 20))
        size = f"{big_mib * 3 + 256}M"
        sh(["mkfs.ext4", "-q", "-F", "-d", src, img + ".tmp", size])
        shutil.rmtree(src)
        os.replace(img + ".tmp", img)
    if not os.path.exists(swap):
        with open(swap + ".tmp", "wb") as f:
            f.truncate(1536 << 20)
        sh(["mkswap", "-q", swap + ".tmp"])
        os.replace(swap + ".tmp", swap)
    return ["-drive", f"file={img},format=raw,if=virtio,snapshot=on",
            "-drive", f"file={swap},format=raw,if=virtio,snapshot=on"]


# --- the console ------------------------------------------------------------------

def _kv(words):
    out = {}
    for w in words:
        k, sep, v = w.partition("=")
        if sep:
            try:
                out[k] = int(v)
            except ValueError:
                out[k] = v
    return out


def parse_yaml_metrics(lines):
    """stress-ng's --yaml metrics: [{stressor, bogo-ops-per-second-real-time, ...}]."""
    metrics, cur, inside = [], None, False
    for line in lines:
        if line.startswith("metrics:"):
            inside = True
            continue
        if not inside:
            continue
        if line and not line.startswith(" "):
            inside = False
            continue
        m = re.match(r"\s*(-\s+)?([\w-]+):\s*(.*)$", line)
        if not m:
            continue
        if m.group(1):
            cur = {}
            metrics.append(cur)
        if cur is not None:
            try:
                cur[m.group(2)] = float(m.group(3))
            except ValueError:
                cur[m.group(2)] = m.group(3).strip("'\"")
    return metrics


def parse_console(lines, kernel, extra=None):
    """zlc-sample ... zlc-sample-end blocks of a console -> samples."""
    samples, cur = [], None
    for line in lines:
        i = line.find("zlc-")
        if i < 0:
            continue
        body = line[i:]
        word, _, rest = body.partition(" ")
        if word == "zlc-sample":
            cur = dict(kernel=kernel, **(extra or {}), **_kv(rest.split()),
                       snap={}, numastat={}, runs=[], loads=[], stress=None, yaml=[], out=[])
        elif cur is None:
            continue
        elif word == "zlc-snap":
            when, _, kv = rest.partition(" ")
            cur["snap"][when] = _kv(kv.split())
        elif word == "zlc-numastat":
            parts = rest.split()
            cur["numastat"].setdefault(parts[0], {})[int(parts[1])] = _kv(parts[2:])
        elif word == "zlc-run":
            cur["runs"].append(json.loads(rest))
        elif word == "zlc-load":
            cur["loads"].append(json.loads(rest))
        elif word == "zlc-stress":
            cur["stress"] = _kv(rest.split()).get("exit")
        elif word == "zlc-stress-out":
            cur["out"].append(rest)
        elif word == "zlc-yaml":
            cur["yaml"].append(body[len("zlc-yaml "):])
        elif word == "zlc-sample-end":
            samples.append(finish(cur))
            cur = None
    return samples


def finish(s):
    """A raw sample -> its record: deltas, locality and what the load measured."""
    b, e = s["snap"].get("begin", {}), s["snap"].get("end", {})
    rec = {k: v for k, v in s.items() if k not in ("snap", "numastat", "yaml", "out")}
    # A histogram has no line for a cause before its first event.
    rec["vmstat"] = {k: e[k] - b.get(k, 0) for k in VMSTAT if k in e}
    nb, ne = s["numastat"].get("begin", {}), s["numastat"].get("end", {})
    numa = {k: sum(ne[n].get(k, 0) - nb.get(n, {}).get(k, 0) for n in ne) for k in NUMASTAT}
    rec["numa"] = numa
    rec["numa_per_node"] = {str(n): {k: ne[n].get(k, 0) - nb.get(n, {}).get(k, 0)
                                    for k in NUMASTAT} for n in sorted(ne)}
    placed = numa["local_node"] + numa["other_node"]
    rec["remote_pct"] = 100.0 * numa["other_node"] / placed if placed else None
    if s["yaml"] or s["stress"] is not None:
        m = parse_yaml_metrics(s["yaml"])
        rec["stress_metrics"] = m
        rec["stress_fail"] = sum(1 for l in s["out"] if ": fail:" in l)
        rec["ops_s"] = sum(x.get("bogo-ops-per-second-real-time", 0) for x in m)
        rec["stress_sys"] = sum(x.get("system-time", 0) for x in m)
    for r in s["runs"]:
        for k in ("sys", "user", "real", "mib"):
            rec[k] = rec.get(k, 0) + r[k]
    return rec


# --- running ----------------------------------------------------------------------

def variants(kernel, plan, boot=0):
    """The variants of one boot, in order: the plan's, once per round,
    each round in the reverse order of the one before (off on, on off),
    and every other boot (BOOTS=) the whole in reverse."""
    one = (plan["base"] if kernel == "base" else plan["patched"]).split()
    order = [" ".join(one if r % 2 == 0 else one[::-1]) for r in range(plan.get("rounds", 1))]
    words = " ".join(order).split()
    return " ".join(words[::-1] if boot % 2 else words)


def hold_pct(work, plan, label):
    """The HOLD_PCT of one of a workload's boots (its label): pagefault's
    plan pairs each topology with one; 0 for the other workloads."""
    if work != "pagefault":
        return 0
    return next(h for t, h in plan["topologies"] if Topology.parse(t).label() == label)


def fill_mib(plan, label):
    """placement's fill on one of its boots (label): mem_pct of the
    topology's memory, in MiB."""
    topo = next(t for t in map(Topology.parse, plan["topologies"]) if t.label() == label)
    return topo.total_mib * plan["mem_pct"] // 100


def command(work, kernel, plan, label=None, boot=0):
    """The guest's command for a workload on one kernel; label: the boot's
    (boots()), for pagefault's HOLD_PCT; boot: which boot of the kernel
    (variants())."""
    v = variants(kernel, plan, boot)
    if work == "stutter":
        args = f"{plan['secs']} {plan['hog_pct']}"
    elif work == "churn":
        args = f"{plan['pct']} {plan['churn_mib']}"
    elif work == "busy":
        args = f"{plan['pct']} '{' '.join(map(str, plan['threads']))}'"
    elif work == "storm":
        args = f"{plan['secs']} {plan['hog_pct']} {plan['churn_mib']}"
    elif work == "pagefault":
        args = (f"{plan['mib']} {plan['secs']} {hold_pct(work, plan, label)} "
                f"'{' '.join(map(str, plan['tasks']))}'")
    elif work == "placement":
        args = (f"{fill_mib(plan, label)} {plan['threads']} "
                f"'{' '.join(map(str, plan['steps']))}'")
    else:
        args = f"{plan['secs']} '{';'.join(plan['stressors'])}'"
    return f"VARIANTS='{v}' sh /scripts/workload.sh {work} {args}"


def expected(work, kernel, plan):
    n = len(variants(kernel, plan).split())
    return n * {"stutter": lambda: 1, "churn": lambda: 2,
                "busy": lambda: len(plan["threads"]),
                "stress": lambda: len(plan["stressors"]), "storm": lambda: 1,
                "pagefault": lambda: 2 * len(plan["tasks"]),
                "placement": lambda: len(plan["steps"])}[work]()


def boots(work, plan):
    """[(Topology, extra QEMU args, icount, label)] of a workload."""
    if work == "churn":
        return [(Topology.even(n, "2G", "2"), [], False, f"{n}n") for n in plan["nodes"]]
    if work == "pagefault":
        return [(t, list(guest.ICOUNT_ARGS), True, t.label())
                for t in (Topology.parse(name) for name, _ in plan["topologies"])]
    if work == "placement":
        return [(t, list(guest.ICOUNT_ARGS), True, t.label())
                for t in (Topology.parse(name) for name in plan["topologies"])]
    topo = Topology.parse(TOPOLOGY[work])
    if work == "stutter":
        return [(topo, stutter_disks(topo.total_mib // topo.nodes, plan["file_pct"]), False,
                 "2n")]
    if work == "busy":
        return [(topo, list(guest.ICOUNT_ARGS), True, "8n")]
    if work == "storm":
        return [(topo, list(guest.ICOUNT_ARGS), True, "16n")]
    return [(topo, [], False, "4n")]


def run(work, kernels, plan, name, hog, zlcload, progress, append=""):
    """Boot each kernel for one workload (kernel command line + append);
    its samples."""
    files = {}
    binaries = [hog, zlcload]
    if work == "stress":
        files = stress_ng()
    samples = []
    # boots: each kernel booted that many times per topology, the kernels'
    # order reversed each time (ABBA), so that a boot's own offset shows.
    order = [(b, k) for b in range(plan.get("boots", 1))
             for k in (list(kernels) if b % 2 == 0 else list(kernels)[::-1])]
    for topo, extra, icount, label in boots(work, plan):
        for boot, kernel in order:
            what = f"{work}, {kernel} kernel, {topo.describe()}" + \
                (f", boot {boot + 1}" if len(order) > len(kernels) else "")
            progress.start(what)
            res = guest.run(kernels[kernel], topo, command(work, kernel, plan, label, boot),
                            binaries=binaries, copies=files, timeout=5400,
                            stage=f"bench-{name}",
                            name=f"{work}-{kernel}-{label}" + (f"-b{boot + 1}" if boot else ""),
                            extra=extra, quiet=True, append=append,
                            on_line=lambda l: l.startswith("zlc-sample ") and
                            print(f"[bench] {work} {kernel} {label}: {l[11:]}", flush=True))
            log = os.path.relpath(res.log, TOP)
            if res.status != 0:
                raise guest.GuestError(f"{what}: the workload failed (exit {res.status}); "
                                       f"log: {log}")
            keys = dict(nodes=topo.nodes, icount=icount, boot=boot)
            if work == "pagefault":
                keys.update(topology=label, hold_pct=hold_pct(work, plan, label))
            elif work == "placement":
                keys.update(topology=label)
            got = parse_console(res.lines, kernel, keys)
            if len(got) != expected(work, kernel, plan):
                raise guest.GuestError(f"{what}: expected {expected(work, kernel, plan)} "
                                       f"samples, got {len(got)}; log: {log}")
            samples += got
            progress.finish(what)
    return samples


# --- reports ----------------------------------------------------------------------

VARIANTS = ("base", "off", "on")


def mmm(values):
    """report.mmm() of the values that are there, or None without any."""
    values = [v for v in values if v is not None]
    return report.mmm(values) if values else None


def fmt(c, digits=2):
    """(median, min, max) as 'median (min..max)'; digits "g": 4 significant."""
    if c is None:
        return "-"
    spec = ".4g" if digits == "g" else f".{digits}f"
    med, lo, hi = c
    if lo == hi:
        return f"{med:{spec}}"
    return f"{med:{spec}} ({lo:{spec}}..{hi:{spec}})"


def pooled_remote(samples):
    """other_node / (local_node + other_node) over several samples, %."""
    other = sum(s["numa"]["other_node"] for s in samples)
    placed = other + sum(s["numa"]["local_node"] for s in samples)
    return 100.0 * other / placed if placed else None


def pick(samples, **kw):
    return [s for s in samples if all(s.get(k) == v for k, v in kw.items())]


def ratio(a, b):
    """The ratio of two mmm() medians."""
    return report.ratio(a and a[0], b and b[0])


def probe(s):
    return next((l for l in s["loads"] if l["load"] == "probe"), None)


def stutter_table(samples):
    stats = ["min", "q1", "median", "q3", "p90", "p95", "p99", "max", "mean"]
    lines = ["stutter: THP fault probe latency, ms (median over samples, min..max)",
             f"{'':10s}" + "".join(f"{v:>30s}" for v in VARIANTS)]
    for st in stats:
        row = [mmm([probe(s)[st] / 1e6 for s in pick(samples, variant=v) if probe(s)])
               for v in VARIANTS]
        lines.append(f"{st:10s}" + "".join(f"{fmt(c, 3):>26s}" for c in row))
    lines.append("")
    lines.append(f"{'vmstat delta':20s}" + "".join(f"{v:>30s}" for v in VARIANTS))
    for k in ["allocstall_normal", "allocstall_movable", "pgscan_direct", "pgscan_kswapd",
              "compact_stall", "thp_fault_alloc", "thp_fault_fallback", "numa_hint_faults",
              "numa_pages_migrated", "zlc_skip"]:
        row = [mmm([s["vmstat"].get(k) for s in pick(samples, variant=v)]) for v in VARIANTS]
        lines.append(f"{k:20s}" + "".join(f"{fmt(c, 0):>30s}" for c in row))
    boots = sorted({s.get("boot", 0) for s in samples})
    if len(boots) > 1:
        lines.append("direct reclaim by boot (allocstall_movable per sample, in order):")
        for v in VARIANTS:
            for b in boots:
                got = [s["vmstat"].get("allocstall_movable") for s in pick(samples, variant=v)
                       if s.get("boot", 0) == b]
                if got:
                    lines.append(f"  {v:5s} boot {b + 1}: " + " ".join(map(str, got)))
    lines.append(locality_rows(samples, [{}]))
    return "\n".join(lines)


def locality_rows(samples, keys, label=lambda k: ""):
    lines = [f"{'locality':20s}" + "".join(f"{v:>30s}" for v in VARIANTS)]
    for k in keys:
        for field in ("remote_pct", "numa_miss", "other_node"):
            row = []
            for v in VARIANTS:
                ss = pick(samples, variant=v, **k)
                vals = [s["remote_pct"] if field == "remote_pct" else s["numa"][field]
                        for s in ss]
                row.append(mmm(vals))
            name = (label(k) + " " + field).strip()
            lines.append(f"{name:20s}" + "".join(
                f"{fmt(c, 2 if field == 'remote_pct' else 0):>30s}" for c in row))
    return "\n".join(lines)


def per_gib(s, field):
    """report.per_gib() of a sample that ran the hog, else None."""
    return report.per_gib(s, field) if s.get("mib") else None


def hog_table(samples, key, keys, field, title):
    lines = [title, f"{key:>10s}" + "".join(f"{v:>24s}" for v in VARIANTS)
             + f"{'on/off':>8s}{'on/base':>8s}{'% better':>9s}"]
    for k in keys:
        cells = [mmm([per_gib(s, field) for s in pick(samples, variant=v, **k)])
                 for v in VARIANTS]
        r, rb = ratio(cells[2], cells[1]), ratio(cells[2], cells[0])
        lines.append(f"{'/'.join(str(x) for x in k.values()):>10s}"
                     + "".join(f"{fmt(c, 3):>24s}" for c in cells)
                     + (f"{r:8.3f}" if r else f"{'-':>8s}") + (f"{rb:8.3f}" if rb else f"{'-':>8s}")
                     + (f"{(1 - r) * 100:8.1f}%" if r else f"{'-':>9s}"))
    return "\n".join(lines)


def churn_table(samples):
    keys = [dict(nodes=n, churn_mib=c) for n in sorted({s["nodes"] for s in samples})
            for c in sorted({s["churn_mib"] for s in samples})]
    lines = [hog_table(samples, "nodes/churn", keys, "sys",
                       "churn: the hog's system s per GiB (median, min..max)"), ""]
    lines.append("wipes per second of the hog's run, cache on, by cause (median; kmem:mm_zlc_wipe)")
    for k in keys:
        ss = pick(samples, variant="on", **k)
        causes = ("interval", "recovery", "rebuild")
        vals = {c: mmm([s["vmstat"].get(f"zlc_wipe_{c}", 0) / s["real"] for s in ss
                        if s.get("real")]) for c in causes}
        lines.append(f"  {k['nodes']} nodes, churn {k['churn_mib']} MiB: "
                     + ", ".join(f"{c} {fmt(vals[c], 1)}" for c in causes))
    lines.append("churner pages on its preferred node 0 (cache on / off / base, median %)")
    for k in keys:
        if not k["churn_mib"]:
            continue
        row = []
        for v in VARIANTS:
            pcts = []
            for s in pick(samples, variant=v, **k):
                for l in s["loads"]:
                    tot = sum(l["pages_per_node"]) + l["pages_unknown"]
                    if l["load"] == "churn" and tot:
                        pcts.append(100.0 * l["pages_per_node"][0] / tot)
            row.append(fmt(mmm(pcts), 1))
        lines.append(f"  {k['nodes']} nodes: base {row[0]}, off {row[1]}, on {row[2]}")
    lines.append(locality_rows(samples, keys, lambda k: f"{k['nodes']}n/{k['churn_mib']}"))
    return "\n".join(lines)


def busy_table(samples):
    """The seed's table shape: sys, user and real, each with % better.
    Under -icount the vCPUs run in turn and the guest clock follows the
    instructions of all of them: real is the count to read, while a
    thread's sys and user also hold what the other vCPUs ran meanwhile."""
    keys = [dict(threads=t) for t in sorted({s["threads"] for s in samples})]
    icount = bool(samples and samples[0].get("icount"))
    lines = []
    for f in ("sys", "user", "real"):
        lines.append(hog_table(samples, "threads", keys, f,
                               f"busy: 8 nodes, thread i on node i: {f} s per GiB"
                               + (" (QEMU -icount: real is Ginsn of all vCPUs)"
                                  if icount else "")))
        lines.append("")
    lines.append(locality_rows(samples, keys, lambda k: f"{k['threads']}t"))
    if any(fills(s) for s in samples):
        lines += ["", "busy placement: % of each thread's pages on its own CPU's node, after "
                  "one more pass of the hog's shape (zlcload fill; move_pages(), a page "
                  "every 64 KiB), median (min..max) over samples",
                  f"{'threads/thread':>16s}" + "".join(f"{v:>24s}" for v in VARIANTS)]
        for k in keys:
            t = k["threads"]
            for i in list(range(t)) + [None]:
                cells = [mmm([local_pct(s, i) for s in pick(samples, variant=v, **k)])
                         for v in VARIANTS]
                lines.append(f"{t:>6d}/{'all' if i is None else i:<9}"
                             + "".join(f"{fmt(c, 1):>24s}" for c in cells))
    return "\n".join(lines)


# zlcload fill counts one page every SAMPLE_KIB (count_pages()'s stride).
SAMPLE_KIB = 64


def fills(s):
    """The zlcload fill lines of a sample, one a thread."""
    return [l for l in s.get("loads", []) if l["load"] == "fill"]


def fill_pages(samples, thread=None):
    """(pages on the node of the CPU that touched them, all pages) of the
    fills of several samples: thread i's, or every thread's."""
    local = total = 0
    for s in samples:
        for l in fills(s):
            if thread is not None and l["thread"] != thread:
                continue
            per = l["pages_per_node"]
            total += sum(per) + l["pages_unknown"]
            local += per[l["node"]] if l["node"] < len(per) else 0
    return local, total


def pooled_off_node(samples):
    """% of the fills' pages, over several samples, on another node than
    the CPU that touched them; None without a fill."""
    local, total = fill_pages(samples)
    return 100.0 * (total - local) / total if total else None


def own_nodes(s):
    """The nodes of a fill's CPUs, each once."""
    return sorted({l["node"] for l in fills(s)})


def own_free_mib(s, key="free_kib"):
    """MiB free on the nodes of the fill's CPUs (each node once) before
    the fill started (key "left_kib": once every thread had touched its
    share, before any freed: the floor the walks took them to); None
    without that record, or where a node's is missing."""
    ls = fills(s)
    if not ls or any(key not in l for l in ls):
        return None
    free = ls[0][key]
    if any(n >= len(free) or free[n] < 0 for n in own_nodes(s)):
        return None
    return sum(free[n] for n in own_nodes(s)) / 1024


def own_left_mib(s):
    return own_free_mib(s, "left_kib")


def own_slab_mib(s):
    return own_free_mib(s, "slab_kib")


def own_taken_pct(s):
    """% of the memory free on the fill's CPUs' nodes at its start that
    the fill's pages took there, every thread's (a sampled page stands
    for SAMPLE_KIB): the room taken, whatever the room was on that boot;
    None without a record."""
    free = own_free_mib(s)
    if not free:
        return None
    pages = sum(l["pages_per_node"][n] for l in fills(s) for n in own_nodes(s)
                if n < len(l["pages_per_node"]))
    return 100.0 * pages * SAMPLE_KIB / 1024 / free


def local_pct(s, thread=None):
    """% of the pages of a fill (thread i's, or all threads' together) on
    the node of the CPU that touched them; None without a fill."""
    local, total = fill_pages([s], thread)
    return 100.0 * local / total if total else None


def stress_table(samples):
    names = []
    for s in samples:
        if s["stressor"] not in names:
            names.append(s["stressor"])
    lines = ["stress: stress-ng bogo ops/s (real time), median (min..max)",
             f"{'stressor':36s}" + "".join(f"{v:>30s}" for v in VARIANTS)
             + f"{'on/off':>8s}  failures/exits " + "/".join(VARIANTS)]
    for n in names:
        cells = [mmm([s.get("ops_s") for s in pick(samples, variant=v, stressor=n)])
                 for v in VARIANTS]
        ss = pick(samples, stressor=n)
        r = ratio(cells[2], cells[1])
        lines.append(f"{n[:36]:36s}" + "".join(f"{fmt(c, 'g'):>26s}" for c in cells)
                     + (f"{r:8.3f}" if r else f"{'-':>8s}")
                     + "  " + " ".join(stress_failures(pick(ss, variant=v)) for v in VARIANTS))
    lines.append("")
    lines.append(f"{'system s':36s}" + "".join(
        f"{fmt(mmm([s.get('stress_sys') for s in pick(samples, variant=v)]), 2):>26s}"
        for v in VARIANTS))
    lines.append(locality_rows(samples, [dict(stressor=n) for n in names],
                               lambda k: k["stressor"][:12]))
    return "\n".join(lines)


def storm_pages(s):
    """Pages the churners faulted in a sample: loops times their size."""
    return sum(l["loops"] * l["mib"] * 256 for l in s["loads"] if l["load"] == "churn")


def storm_seconds(s):
    """How long a sample lasted on the guest clock: the hog's fill, the
    churn and the hog's end, over which its events are counted.  Runs
    before the clock was recorded fall back on the hog's own measured
    time, which is all of that but the sample's few first steps."""
    ms = s["vmstat"].get("uptime_ms")
    if ms:
        return ms / 1000.0
    return next((l["seconds"] for l in s["loads"] if l["load"] == "hog"), None)


def storm_churn_seconds(s):
    """The churners' own measured time, the mean over them."""
    t = [l["seconds"] for l in s["loads"] if l["load"] == "churn"]
    return sum(t) / len(t) if t else None


def storm_per_s(key):
    """Events of one counter per second of the sample's guest time."""
    return lambda s: (s["vmstat"].get(key, 0) / storm_seconds(s)
                      if storm_seconds(s) else None)


def storm_us_per_page(s):
    """Guest microseconds of the churn per page the churners faulted:
    under -icount, instructions of all vCPUs per page."""
    t, n = storm_churn_seconds(s), storm_pages(s)
    return 1e6 * t / n if t and n else None


def storm_table(samples):
    """Events per second of each sample's guest time, and the churn's
    guest time per churned page (under -icount, guest time follows the
    instructions of all vCPUs)."""
    lines = ["storm: 16 nodes, a churner on each CPU, zones at their low watermarks "
             "(median, min..max)",
             f"{'':24s}" + "".join(f"{v:>26s}" for v in VARIANTS) + f"{'on/off':>8s}"]

    def row(name, f, digits):
        cells = [mmm([f(s) for s in pick(samples, variant=v)]) for v in VARIANTS]
        r = ratio(cells[2], cells[1])
        lines.append(f"{name:24s}" + "".join(f"{fmt(c, digits):>26s}" for c in cells)
                     + (f"{r:8.3f}" if r else f"{'-':>8s}"))

    row("sample, guest s", storm_seconds, 2)
    row("recoveries/s", storm_per_s("zlc_recover"), 1)
    row("wipes/s, recovery", storm_per_s("zlc_wipe_recovery"), 1)
    row("wipes/s, interval", storm_per_s("zlc_wipe_interval"), 1)
    row("marks/s", storm_per_s("zlc_mark_full"), 1)
    row("guest us/churned page", storm_us_per_page, 3)
    lines.append(locality_rows(samples, [{}]))
    return "\n".join(lines)


def pf_load(s):
    """The zlcload pf line of a pagefault sample, or None."""
    return next((l for l in s["loads"] if l["load"].startswith("pf-")), None)


def pf_rate(s):
    """Faults per second of guest time per task of a pagefault sample: the
    mean over its tasks (under -icount, per instruction)."""
    l = pf_load(s)
    return sum(l["per_task"]) / len(l["per_task"]) if l and l["per_task"] else None


def pf_local_pct(s):
    """% of the pages a pagefault sample allocated on the node of the CPU
    that asked: numa_local / (numa_local + numa_other) over its run."""
    l = pf_load(s)
    placed = l and l["numa_local"] + l["numa_other"]
    return 100.0 * l["numa_local"] / placed if placed else None


def pf_keys(samples):
    """[{topology, hold_pct, kind, tasks}] of some pagefault samples, the
    topologies in the order they ran."""
    topos = list(dict.fromkeys((s["topology"], s["hold_pct"]) for s in samples))
    return [dict(topology=t, hold_pct=h, kind=k, tasks=n) for t, h in topos
            for k in ("anon", "file") for n in sorted({s["tasks"] for s in samples})
            if pick(samples, topology=t, kind=k, tasks=n)]


def pagefault_table(samples):
    """Faults per second per task (median, min..max over samples), the
    ratios of the medians against base with the range over every pair of
    samples, and the pages on the CPUs' own nodes."""
    def name(k):
        return (f"{k['topology']}{' hold ' + str(k['hold_pct']) + '%' if k['hold_pct'] else ''}"
                f"/{k['kind']}/{k['tasks']}")

    keys = pf_keys(samples)
    lines = ["pagefault: faults per second of guest time per task, median (min..max) over "
             "samples (QEMU -icount: per instruction);",
             "on/base and off/base: the medians' ratio (the range over every pair of samples)",
             f"{'topology/kind/tasks':28s}" + "".join(f"{v:>26s}" for v in VARIANTS)
             + f"{'on/base':>24s}{'off/base':>24s}"]
    for k in keys:
        rates = {v: [x for x in (pf_rate(s) for s in pick(samples, variant=v, **k))
                     if x is not None] for v in VARIANTS}
        lines.append(f"{name(k):28s}" + "".join(f"{fmt(mmm(rates[v]), 0):>26s}" for v in VARIANTS)
                     + f"{ratio_range(rates['on'], rates['base']):>24s}"
                     + f"{ratio_range(rates['off'], rates['base']):>24s}")
    lines += ["", "pagefault: % of the pages on the CPUs' own nodes, numa_local / (numa_local + "
              "numa_other) over each run, median (min..max)",
              f"{'topology/kind/tasks':28s}" + "".join(f"{v:>26s}" for v in VARIANTS)]
    for k in keys:
        lines.append(f"{name(k):28s}" + "".join(
            f"{fmt(mmm([pf_local_pct(s) for s in pick(samples, variant=v, **k)]), 1):>26s}"
            for v in VARIANTS))
    lines.append("")
    lines.append(locality_rows(samples, [dict(topology=t) for t in
                                         dict.fromkeys(k["topology"] for k in keys)],
                               lambda k: k["topology"]))
    return "\n".join(lines)


def mean_distance(s, thread=None):
    """The mean distance (SLIT units) of the pages of a fill (thread i's,
    or all threads' together) from the node of the CPU that touched them,
    over the pages whose node move_pages() gave (local_pct() counts the
    others as off the node); None without a fill, or a page on a node its
    distances leave out."""
    far = total = 0
    for l in fills(s):
        if thread is not None and l["thread"] != thread:
            continue
        per, dist = l["pages_per_node"], l.get("distance", [])
        if any(n >= len(dist) for n, p in enumerate(per) if p):
            return None
        far += sum(p * dist[n] for n, p in enumerate(per))
        total += sum(per)
    return far / total if total else None


def fill_per_gib(s):
    """Seconds (under -icount: Ginsn) per GiB of a fill, from the threads'
    start to all pages touched; None without a fill."""
    ls = fills(s)
    if not ls or any("touch_s" not in l for l in ls):
        return None
    return max(l["touch_s"] for l in ls) / (sum(l["mib"] for l in ls) / 1024)


def ratio_range(a, b):
    """'median ratio (min..max over every pair)' of two lists of values."""
    r = ratio(mmm(a), mmm(b))
    if r is None or not min(b):
        return "-"
    return f"{r:.3f} ({min(a) / max(b):.3f}..{max(a) / min(b):.3f})"


def placement_keys(samples):
    """[{topology, step_kib}] of some placement samples, as they ran."""
    return [dict(topology=t, step_kib=st)
            for t in dict.fromkeys(s["topology"] for s in samples)
            for st in sorted({s["step_kib"] for s in samples})
            if pick(samples, topology=t, step_kib=st)]


def placement_table(samples):
    """Each thread's pages on its own CPU's node, %, and all threads' mean
    distance, per topology and step (free-running or lock step): median
    (min..max) over samples, and on against base."""
    def diff(a, b, digits):
        return f"{a[0] - b[0]:+.{digits}f}" if a and b else "-"

    threads = sorted({l["thread"] for s in samples for l in fills(s)})
    lines = ["placement: % of a thread's pages on its own CPU's node, then every thread's "
             "pages' mean distance from it (SLIT units), median (min..max) over samples;",
             "room: MiB free on the CPUs' own nodes (each once) as the fill starts; "
             "taken: % of that room the fill's pages (every thread's) took; left: MiB "
             "still free there once all had touched theirs (the floor the walks spilled at); "
             "slab: MiB of unreclaimable slab there at the start;",
             "zlcload fill: each thread counts its pages with move_pages(), a page every "
             "64 KiB; step: free-running (0), or lock step every STEP KiB",
             f"{'topology step':20s}{'':>7s}" + "".join(f"{v:>22s}" for v in VARIANTS)
             + f"{'on-base':>9s}{'off-base':>9s}"]
    for k in placement_keys(samples):
        name = f"{k['topology']} {'free' if not k['step_kib'] else str(k['step_kib']) + ' KiB'}"
        rows = [(f"t{i} %", lambda s, i=i: local_pct(s, i), 2) for i in threads]
        rows += [("all %", local_pct, 2), ("dist", mean_distance, 3)]
        if all(own_free_mib(x) for x in pick(samples, **k)):
            rows += [("room", own_free_mib, 1), ("taken %", own_taken_pct, 2)]
        if all(own_left_mib(x) is not None for x in pick(samples, **k)):
            rows += [("left", own_left_mib, 1)]
        if all(own_slab_mib(x) is not None for x in pick(samples, **k)):
            rows += [("slab", own_slab_mib, 2)]
        for what, fn, digits in rows:
            cells = [mmm([fn(s) for s in pick(samples, variant=v, **k)]) for v in VARIANTS]
            lines.append(f"{name:20s}{what:>7s}" + "".join(f"{fmt(c, digits):>22s}" for c in cells)
                         + f"{diff(cells[2], cells[0], digits):>9s}"
                         + f"{diff(cells[1], cells[0], digits):>9s}")
            name = ""
    lines += ["", "placement: Ginsn (else seconds) per GiB, from the threads' start to all "
              "pages touched, median (min..max); on/base and off/base: the medians' ratio "
              "(every pair)", f"{'topology step':20s}" + "".join(f"{v:>22s}" for v in VARIANTS)
              + f"{'on/base':>24s}{'off/base':>24s}"]
    for k in placement_keys(samples):
        name = f"{k['topology']} {'free' if not k['step_kib'] else str(k['step_kib']) + ' KiB'}"
        got = {v: [x for x in (fill_per_gib(s) for s in pick(samples, variant=v, **k))
                   if x is not None] for v in VARIANTS}
        lines.append(f"{name:20s}" + "".join(f"{fmt(mmm(got[v]), 4):>22s}" for v in VARIANTS)
                     + f"{ratio_range(got['on'], got['base']):>24s}"
                     + f"{ratio_range(got['off'], got['base']):>24s}")
    return "\n".join(lines)


TABLES = dict(stutter=stutter_table, churn=churn_table, busy=busy_table, stress=stress_table,
              storm=storm_table, pagefault=pagefault_table, placement=placement_table)


def stutter_plot(samples, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    colors = dict(base="tab:gray", off="tab:blue", on="tab:red")
    for v in VARIANTS:
        for i, s in enumerate(pick(samples, variant=v)):
            p = probe(s)
            if p:
                ax.plot([x / 1e6 for x in p["cdf"]], [q / 100 for q in range(len(p["cdf"]))],
                        color=colors[v], alpha=0.8, linewidth=2 if v == "on" else 1.2,
                        label=v if i == 0 else None)
    ax.set_xscale("log")
    ax.set_xlabel("map + fault + unmap of 2 MiB THP-advised, ms (log)")
    ax.set_ylabel("fraction of samples")
    ax.set_title(title, fontsize=9)
    report.save_plot(fig, ax, path)


def bars_plot(groups, path, ylabel, title):
    """Grouped bars, one group per label, one bar per variant (median,
    min..max whiskers).  groups: [(label, {variant: [values]})]."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    colors = dict(base="tab:gray", off="tab:blue", on="tab:red")
    width = 0.8 / len(VARIANTS)
    for j, v in enumerate(VARIANTS):
        xs, ys, lo, hi = [], [], [], []
        for i, (_, by) in enumerate(groups):
            c = mmm(by.get(v, []))
            if c:
                xs.append(i + (j - 1) * width)
                ys.append(c[0])
                lo.append(c[0] - c[1])
                hi.append(c[2] - c[0])
        if xs:
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, color=colors[v], label=v)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([label for label, _ in groups], fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    report.save_plot(fig, ax, path)


def workload_plot(work, samples, path, title):
    """The plot of a workload other than stutter: its headline figure by
    variant (churn, busy), each stressor's ops/s relative to cache off, or
    pagefault's faults per second per task relative to base."""
    def by_variant(ss, fn):
        return {v: [x for x in (fn(s) for s in pick(ss, variant=v)) if x is not None]
                for v in VARIANTS}

    if work == "churn":
        groups = [(f"{n} nodes\n{'churn ' + str(c) + ' MiB' if c else 'alone'}",
                   by_variant(pick(samples, nodes=n, churn_mib=c), lambda x: per_gib(x, "sys")))
                  for n in sorted({x["nodes"] for x in samples})
                  for c in sorted({x["churn_mib"] for x in samples})]
        bars_plot(groups, path, "hog system s per GiB", title)
    elif work == "busy":
        field = "real" if samples and samples[0].get("icount") else "sys"
        groups = [(f"{t} threads", by_variant(pick(samples, threads=t),
                                              lambda x: per_gib(x, field)))
                  for t in sorted({x["threads"] for x in samples})]
        bars_plot(groups, path, "Ginsn per GiB (-icount)" if field == "real"
                  else "system s per GiB", title)
    elif work == "stress":
        groups = []
        for nm in dict.fromkeys(x["stressor"] for x in samples):
            ss = pick(samples, stressor=nm)
            off = mmm([x["ops_s"] for x in pick(ss, variant="off")])
            if off and off[0]:
                groups.append((stressor_label(nm), by_variant(ss, lambda x: x["ops_s"] / off[0])))
        bars_plot(groups, path, "bogo ops/s relative to cache off", title)
    elif work == "storm":
        groups = [("recoveries/s", by_variant(samples, storm_per_s("zlc_recover"))),
                  ("recovery wipes/s", by_variant(samples, storm_per_s("zlc_wipe_recovery")))]
        bars_plot(groups, path, "per guest second", title)
    elif work == "pagefault":
        groups = []
        for k in pf_keys(samples):
            ss = pick(samples, **k)
            ref = mmm([pf_rate(x) for x in pick(ss, variant="base")]) or \
                mmm([pf_rate(x) for x in pick(ss, variant="off")])
            if ref and ref[0]:
                groups.append((f"{k['topology']}\n{k['kind']} {k['tasks']}t",
                               by_variant(ss, lambda x: pf_rate(x) / ref[0])))
        bars_plot(groups, path, "faults/s per task relative to base (else off)", title)
    elif work == "placement":
        groups = [(f"{k['topology']}\n{'free' if not k['step_kib'] else 'lock step'}",
                   by_variant(pick(samples, **k), local_pct)) for k in placement_keys(samples)]
        bars_plot(groups, path, "% of pages on their CPU's own node", title)


def stressor_label(name):
    """vm_2_vmbytes_40%_vmmethod_flip_verify -> 'vm flip'."""
    parts = name.split("_")
    if "vmmethod" in parts[:-1]:
        return f"{parts[0]} {parts[parts.index('vmmethod') + 1]}"
    return parts[0]


def hog_rows(records, field="sys"):
    """The hog's headline rows (zlctool/bench.py records): its cost per GiB
    at the most nodes, 90%, 2 threads, and its misses per pass."""
    if not records:
        return []
    n = max(r["nodes"] for r in records)
    pick_ = [r for r in records if r["nodes"] == n and r["mem_pct"] == report.HEADLINE["pct"]
             and r["threads"] == report.HEADLINE["threads"]]
    rows = []
    for what, fn, digits in ((f"{'Ginsn' if field == 'real' else 'sys s'}/GiB, {n} nodes",
                              lambda r: per_gib(r, field), 3),
                             ("numa_miss per pass", lambda r: r["numa_miss"], 0)):
        cells = [mmm([fn(r) for r in pick_ if report.variant(r) == v]) for v in VARIANTS]
        r = ratio(cells[2], cells[1])
        rows.append(("hog", what, *(fmt(c, digits) for c in cells), f"{r:.3f}" if r else "-"))
    return rows


def headline(samples_by_work, hog_records=None, hog_field="sys"):
    """One row per workload: its headline figure for base, off and on."""
    rows = hog_rows(hog_records, hog_field)

    def row(work, what, vals, digits=3):
        b, o, n = (mmm(vals(v)) for v in VARIANTS)
        r = ratio(n, o)
        rows.append((work, what, fmt(b, digits), fmt(o, digits), fmt(n, digits),
                     f"{r:.3f}" if r else "-"))

    def remote(work, s):
        """Pages placed on another node than the allocating CPU's, pooled
        over the samples; the last column is on - off in points."""
        b, o, n = (pooled_remote(pick(s, variant=v)) for v in VARIANTS)
        rows.append((work, "remote % (pooled)", *(f"{x:.2f}" if x is not None else "-"
                                                  for x in (b, o, n)),
                     f"{n - o:+.2f} pt" if n is not None and o is not None else "-"))

    s = samples_by_work.get("stutter")
    if s:
        for st in ("p99", "max"):
            row("stutter", f"probe {st}, ms", lambda v, st=st: [
                probe(x)[st] / 1e6 for x in pick(s, variant=v) if probe(x)], 1)
        remote("stutter", s)
    s = samples_by_work.get("churn")
    if s:
        n = max(x["nodes"] for x in s)
        for c in sorted({x["churn_mib"] for x in s}):
            row("churn", f"hog sys s/GiB, {n} nodes, churn {c} MiB",
                lambda v, c=c: [per_gib(x, "sys") for x in pick(s, variant=v, nodes=n,
                                                                churn_mib=c)])
        remote("churn", s)
    s = samples_by_work.get("busy")
    if s:
        for t in sorted({x["threads"] for x in s}):
            row("busy", f"{t} threads, Ginsn/GiB" if s[0].get("icount") else
                f"{t} threads, sys s/GiB",
                lambda v, t=t: [per_gib(x, "real" if x.get("icount") else "sys")
                                for x in pick(s, variant=v, threads=t)])
        remote("busy", s)
        if any(fills(x) for x in s):
            off_node = [pooled_off_node(pick(s, variant=v)) for v in VARIANTS]
            rows.append(("busy", "fill pages off their thread's node, % (pooled)",
                         *(f"{x:.2f}" if x is not None else "-" for x in off_node),
                         f"{off_node[2] - off_node[1]:+.2f} pt"
                         if None not in off_node[1:] else "-"))
    s = samples_by_work.get("stress")
    if s:
        names = list(dict.fromkeys(x["stressor"] for x in s))
        for nm in names:
            row("stress", f"{stressor_label(nm)} bogo ops/s", lambda v, nm=nm: [
                x["ops_s"] for x in pick(s, variant=v, stressor=nm)], "g")
        rows.append(("stress", "verify failures / nonzero exits",
                     *(stress_failures(pick(s, variant=v)) for v in VARIANTS), ""))
        remote("stress", s)
    s = samples_by_work.get("storm")
    if s:
        for key, what in (("zlc_recover", "recoveries/s"), ("zlc_wipe_recovery", "wipes/s")):
            row("storm", what, lambda v, key=key: [
                storm_per_s(key)(x) for x in pick(s, variant=v)], 1)
        row("storm", "guest us/churned page", lambda v: [
            storm_us_per_page(x) for x in pick(s, variant=v)], 3)
        remote("storm", s)
    s = samples_by_work.get("pagefault")
    if s:
        t = max(x["tasks"] for x in s)
        for k in pf_keys(pick(s, tasks=t)):
            row("pagefault", f"{k['topology']} {k['kind']}, {t} tasks, faults/s/task",
                lambda v, k=k: [pf_rate(x) for x in pick(s, variant=v, **k)], 0)
        remote("pagefault", s)
    s = samples_by_work.get("placement")
    if s:
        for k in placement_keys(s):
            row("placement", f"{k['topology']} {'free' if not k['step_kib'] else 'lock step'}, "
                "% on own node", lambda v, k=k: [local_pct(x) for x in pick(s, variant=v, **k)],
                2)
    out = ["| workload | figure | base | off | on | on/off |", "|---|---|---|---|---|---|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def load(run_dir):
    """results/NAME/workloads.json -> (samples by workload, meta)."""
    with open(os.path.join(run_dir, "workloads.json")) as f:
        data = json.load(f)
    return data["samples"], data["meta"]


def write(run_dir, samples_by_work, meta, hog_records=None):
    """workloads.json (whole or not at all), WORKLOAD.txt, WORKLOAD.png
    (the latency CDF for stutter), headline.md (with the hog's rows first when hog_records are given)."""
    os.makedirs(run_dir, exist_ok=True)
    partial = os.path.join(run_dir, "workloads.json.partial")
    with open(partial, "w") as f:
        json.dump({"meta": meta, "samples": samples_by_work}, f, indent=1)
    os.replace(partial, os.path.join(run_dir, "workloads.json"))
    texts = []
    for work, samples in samples_by_work.items():
        text = TABLES[work](samples)
        with open(os.path.join(run_dir, f"{work}.txt"), "w") as f:
            f.write(text + "\n")
        texts.append(text)
        prov = meta.get("provenance", {})
        under = f"{prov.get('kernel', '?')}, {meta.get('date', '?')}, QEMU TCG"
        if work == "stutter":
            stutter_plot(samples, os.path.join(run_dir, "stutter.png"),
                         f"stutter: THP fault probe, 2 nodes, 1 vCPU each\n{under}")
        else:
            workload_plot(work, samples, os.path.join(run_dir, f"{work}.png"),
                          f"{work} (median, min..max)\n{under}")
    head = headline(samples_by_work, hog_records, "real" if meta.get("icount") else "sys")
    with open(os.path.join(run_dir, "headline.md"), "w") as f:
        f.write(head + "\n")
    return "\n\n".join(texts + [head])


def check(samples_by_work, works):
    """What make test asks of a reduced run: records, stress-ng verified,
    locality figures.  The list of problems (empty: good)."""
    problems = []
    for work in works:
        samples = samples_by_work.get(work) or []
        if not samples:
            problems.append(f"{work}: no samples")
            continue
        for s in samples:
            what = f"{work} {s['kernel']} {s['variant']}"
            if not s.get("numa") or s["remote_pct"] is None:
                problems.append(f"{what}: no locality figures")
            if not s.get("vmstat"):
                problems.append(f"{what}: no vmstat deltas")
            if work == "stutter" and not (probe(s) and probe(s)["samples"] > 0):
                problems.append(f"{what}: the probe made no samples")
            if work in ("churn", "busy") and not s.get("mib"):
                problems.append(f"{what}: the hog reported no pass")
            if work == "pagefault" and not (pf_load(s) and pf_load(s)["faults"] > 0):
                problems.append(f"{what}: no page faults")
            if work == "placement" and (len(fills(s)) != s.get("threads")
                                        or mean_distance(s) is None):
                problems.append(f"{what}: {len(fills(s))} fills of {s.get('threads')} threads, "
                                "or pages without a distance")
            if work == "churn" and wipes_disagree(s):
                problems.append(f"{what}: {wipes_disagree(s)}")
            if work == "stress":
                failed = stress_failed(s)
                if not failed and s.get("stress") in STRESS_NOT_FAILED:
                    print(f"[check] {what} {s['stressor']}: stress-ng exit {s['stress']} "
                          f"({STRESS_NOT_FAILED[s['stress']]}), not counted against it",
                          flush=True)
                if failed and not fails_both_ways(samples, s):
                    problems.append(f"{what} {s['stressor']}: {failed}")
                elif failed:
                    # stress-ng against this kernel whatever the cache does
                    # (Debian 12's 0.15.06 --numa: mbind() EINVAL on 7.3):
                    # said, not charged to the cache.
                    print(f"[check] {what} {s['stressor']}: {failed}, with the cache off "
                          "and on alike", flush=True)
    return problems


def wipes_disagree(s):
    """On a kernel with the cache, the walks' wipes counted in /proc/vmstat
    (zlc_wipe) are the mm_zlc_wipe events of causes interval and recovery:
    what is wrong when they do not agree (within 2, for the wipes that fall
    between the two reads), else None."""
    v = s.get("vmstat", {})
    if "zlc_wipe" not in v:
        return None
    traced = v.get("zlc_wipe_interval", 0) + v.get("zlc_wipe_recovery", 0)
    if abs(traced - v["zlc_wipe"]) > 2:
        return (f"zlc_wipe rose by {v['zlc_wipe']}, but mm_zlc_wipe traced {traced} "
                "wipes for interval and recovery")
    return None


def stress_failures(samples):
    """'F/E' for some stress samples: their verify failures, and how many
    exited nonzero or gave no exit status; '-' when there are none (a
    variant a run left out)."""
    if not samples:
        return "-"
    return (f"{sum(x['stress_fail'] for x in samples)}/"
            f"{sum(1 for x in samples if x.get('stress') != 0)}")


# stress-ng's exit statuses that say nothing against the kernel: 3, a
# resource the stressor wanted was short (memory a moment, under the
# other stressors); 7, its metrics were untrustworthy (a timing of its
# own).  Whether it hits them depends on how the moment went, not on the
# cache: said, not failed, unless it also reported a verify failure.
STRESS_NOT_FAILED = {3: "a resource was short", 7: "untrustworthy metrics"}


def stress_failed(s):
    """Why a stress-ng sample failed, or None."""
    if s.get("stress_fail") or (s.get("stress") != 0 and
                                s.get("stress") not in STRESS_NOT_FAILED):
        return f"stress-ng exit {s.get('stress')}, {s.get('stress_fail')} failures"
    if s.get("stress") == 0 and not s.get("stress_metrics"):
        return "no stress-ng metrics"
    return None


def fails_both_ways(samples, s):
    """Did the same stressor fail on the same kernel with the cache off and
    with it on?"""
    same = [o for o in samples if o["stressor"] == s["stressor"] and o["kernel"] == s["kernel"]]
    return {o["variant"] for o in same if stress_failed(o)} >= {"off", "on"}


def figures(by):
    """{figure: {variant: [one value per sample]}}: what make compare
    puts side by side for the workloads."""
    out = {}

    def add(label, ss, fn):
        for v in VARIANTS:
            vals = [x for x in (fn(s) for s in pick(ss, variant=v)) if x is not None]
            if vals:
                out.setdefault(label, {})[v] = vals

    s = by.get("stutter") or []
    for st in ("p99", "max", "mean"):
        add(f"stutter probe {st} ms", s, lambda x, st=st: probe(x)[st] / 1e6 if probe(x) else None)
    add("stutter allocstall", s, lambda x: sum(x["vmstat"].get(f"allocstall_{z}", 0)
                                               for z in ("dma32", "normal", "movable")))
    add("stutter pgscan_direct", s, lambda x: x["vmstat"].get("pgscan_direct"))
    s = by.get("churn") or []
    for n in sorted({x["nodes"] for x in s}):
        for c in sorted({x["churn_mib"] for x in s}):
            add(f"churn {n}n churn {c}M sys s/GiB", pick(s, nodes=n, churn_mib=c),
                lambda x: per_gib(x, "sys"))
    s = by.get("busy") or []
    for t in sorted({x["threads"] for x in s}):
        add(f"busy {t}thr {'Ginsn' if s[0].get('icount') else 'sys s'}/GiB",
            pick(s, threads=t), lambda x: per_gib(x, "real" if x.get("icount") else "sys"))
    s = by.get("stress") or []
    for nm in dict.fromkeys(x["stressor"] for x in s):
        add(f"stress {stressor_label(nm)} ops/s", pick(s, stressor=nm),
            lambda x: x.get("ops_s"))
    s = by.get("storm") or []
    add("storm recoveries/s", s, storm_per_s("zlc_recover"))
    add("storm us/churned page", s, storm_us_per_page)
    s = by.get("pagefault") or []
    for k in pf_keys(s):
        add(f"pagefault {k['topology']} {k['kind']} {k['tasks']}t faults/s/task",
            pick(s, **k), pf_rate)
    s = by.get("placement") or []
    for k in placement_keys(s):
        add(f"placement {k['topology']} step {k['step_kib']}K % own node", pick(s, **k),
            local_pct)
        add(f"placement {k['topology']} step {k['step_kib']}K per GiB", pick(s, **k),
            fill_per_gib)
    for work in NAMES:
        add(f"{work} remote %", by.get(work) or [], lambda x: x["remote_pct"])
    return out


def compare(runs):
    """make compare for the workloads of runs [(name, samples by workload)]:
    each figure and variant in rows, runs in columns, mmtests style."""
    figs = [figures(by) for _, by in runs]
    labels = list(dict.fromkeys(k for f in figs for k in f))
    heads = [name for name, _ in runs]
    colw = max([22] + [len(h) for h in heads]) + 1
    width = max([len(l) for l in labels] + [10]) + 14
    out = [f"workloads, change against {heads[0]} ('*': Welch's t-test, 5%)",
           " " * width + "".join(h.rjust(colw) for h in heads)]
    for label in labels:
        for v in VARIANTS:
            row = [f.get(label, {}).get(v, []) for f in figs]
            if not any(row):
                continue
            for stat, fn in (("Amean", statistics.fmean), ("Min", min), ("Max", max)):
                vals = [fn(x) if x else None for x in row]
                cells = [report._cell(val, vals[0], stat == "Amean" and i
                                      and report.significant(row[0], x))
                         for i, (val, x) in enumerate(zip(vals, row))]
                out.append(f"{stat:<6} {v:<5} {label:<{width - 13}}"
                           + "".join(c.rjust(colw) for c in cells))
    return "\n".join(out)


def main(argv=None):
    import argparse
    p = argparse.ArgumentParser(prog="python3 -m zlctool.workloads",
                                description="Write a named run's workload tables, plot and "
                                            "headline again from its workloads.json.")
    p.add_argument("run", help="results/NAME")
    args = p.parse_args(argv)
    samples, meta = load(args.run)
    hog = None
    if os.path.isfile(os.path.join(args.run, "run.json")):
        with open(os.path.join(args.run, "run.json")) as f:
            hog = json.load(f)["records"]
    print(write(args.run, samples, meta, hog))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
