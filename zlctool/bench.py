"""make bench: the memory-hog benchmark, base kernel vs cache off vs cache on.

For each kernel (the unpatched base and the patched series, built from the
same guest config) and each topology (1, 4, 16, 64 nodes of equal total
memory, 2 vCPUs on node 0), one guest boots, touches all its memory once,
then runs the selftest zonelist_cache_memhog at each memory fraction and
thread count.  On the patched kernel the selftest interleaves the cache off
and on inside the same boot (off, on, on, off, ...); on the base kernel it
runs as is.  In the headline rows (90%) the patched kernel also runs
"placed" passes (the selftest's -P): each thread's memory preferred chunk
by chunk to nodes with room, so that no page fault walks the zonelist.
They measure what the topology itself costs, the lower bound of any walk,
cached or not.  The boots come in rounds, each round booting every kernel and
topology once, in the opposite order of the round before (ABBA), so that
the host's drift over the run falls on every column alike.  Every measured
pass becomes one record of results/bench.json; the table, the headline
ratios and results/bench.png are made from those.
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

from . import qemu
from .topology import Topology

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(TOP, "results")
HOG = "zonelist_cache_memhog"

FULL = dict(nodes=[1, 4, 16, 64], pcts=[12, 38, 64, 90], threads=[1, 2], reps=2, rounds=3)
QUICK = dict(nodes=[64, 1], pcts=[90], threads=[2], reps=2, rounds=2)
# --icount: QEMU counts instructions and the guest clock follows the count,
# so a pass's elapsed time is the instructions both vCPUs executed (1 ns
# each).  The host's drift does not reach it, so one round will do; what
# is left (where earlier passes left free pages) is a few percent at most.
ICOUNT = dict(nodes=[64, 16, 2, 1], pcts=[12, 90], threads=[2], reps=2, rounds=1)
ICOUNT_ARGS = ["-icount", "shift=0,sleep=off"]
HEADLINE = dict(pct=90, threads=2)
VARIANTS = [("base", "n/a"), ("patched", "off"), ("patched", "on")]
VARIANT_NAMES = {("base", "n/a"): "base", ("patched", "off"): "off", ("patched", "on"): "on",
                 ("patched", "placed"): "placed"}

RUN_LINE = re.compile(r"zlc-run (\{.*\})")
ROW_LINE = re.compile(r"zlc-row pct=(\d+) threads=(\d+)")


# --- records, tables and ratios (pure, tested in tests/test_bench.py) --------

def variant(rec):
    return VARIANT_NAMES[(rec["kernel"], rec["zlc"])]


def group(records):
    """{(variant, nodes, pct, threads): [sys, ...]}"""
    out = {}
    for r in records:
        out.setdefault((variant(r), r["nodes"], r["mem_pct"], r["threads"]), []).append(r)
    return out


def mmm(values):
    """(median, min, max) of a list of numbers."""
    return statistics.median(values), min(values), max(values)


def cell(recs, field="sys"):
    if not recs:
        return None
    return mmm([r[field] for r in recs])


def ratio(a, b):
    return a / b if a is not None and b else None


def per_gib(rec, field="sys"):
    """Seconds (of system time by default) per GiB the pass touched: the
    topologies' guests leave the hog slightly different amounts of memory,
    so ratios across them compare the cost of a GiB, not of a pass."""
    return rec[field] * 1024.0 / rec["mib"]


def median_per_gib(recs, field="sys"):
    """The median of per_gib() over some records, or None without any."""
    return statistics.median(per_gib(r, field) for r in recs) if recs else None


def _ratios(records, pct, threads, field="sys"):
    g = group(records)
    nodes = sorted({r["nodes"] for r in records})
    most = max(nodes) if nodes else None

    def med(v, n, p=pct, t=threads):
        return median_per_gib(g.get((v, n, p, t), []), field)

    out = {"pct": pct, "threads": threads, "nodes": most, "field": field}
    if most is None:
        return out
    out["on/off"] = ratio(med("on", most), med("off", most))
    out["on/floor"] = ratio(med("on", most), med("on", 1))
    out["off/floor"] = ratio(med("off", most), med("off", 1))
    out["base/floor"] = ratio(med("base", most), med("base", 1))
    out["on/base"] = ratio(med("on", most), med("base", most))
    out["on/off 1 node"] = ratio(med("on", 1), med("off", 1))
    # Placed passes walk no zonelist: what is left of on/floor above
    # placed/floor is the walk's.
    out["on/placed"] = ratio(med("on", most), med("placed", most))
    out["placed/floor"] = ratio(med("placed", most), med("on", 1))
    # The same against the base kernel's 1-node boots: those are other
    # boots than the patched kernel's, and the host drifts between boots,
    # so the two floors can differ by more than the bar.
    out["on/base floor"] = ratio(med("on", most), med("base", 1))
    # One row says little about a difference of a percent or two: the
    # median over every 1-node row of its own on/off ratio says more.
    rows = sorted({(k[2], k[3]) for k in g if k[1] == 1})
    per_row = [ratio(med("on", 1, p, t), med("off", 1, p, t)) for p, t in rows]
    per_row = [x for x in per_row if x is not None]
    if per_row:
        out["on/off 1 node, all rows"] = statistics.median(per_row)
    # A no-spill run: more than one node, yet the cache-on passes never
    # missed their node.  The largest such row says the most.
    nospill = [k for k, recs in g.items()
               if k[0] == "on" and k[1] > 1 and all(r["numa_miss"] == 0 for r in recs)]
    if nospill:
        _, n, p, t = max(nospill, key=lambda k: (k[1], k[2]))
        out["on/off no spill"] = ratio(med("on", n, p, t), med("off", n, p, t))
        out["no spill row"] = f"{n} nodes, {p}%, {t} threads"
    return out


RATIO_KEYS = ("on/off", "on/floor", "off/floor", "base/floor", "on/base", "on/off 1 node",
              "on/off 1 node, all rows", "on/off no spill", "on/placed", "placed/floor", "on/base floor")


def headline(records, pct=HEADLINE["pct"], threads=HEADLINE["threads"], field="sys"):
    """The ratios the series is judged by, from medians of system time (or
    of another field of the records) per GiB over all rounds; "spread"
    holds each ratio's (min, median, max) over the rounds, each round's
    ratio made from that round's medians."""
    out = _ratios(records, pct, threads, field)
    rounds = sorted({r.get("round", 0) for r in records})
    if len(rounds) > 1:
        per_round = [_ratios([r for r in records if r.get("round", 0) == k], pct, threads, field)
                     for k in rounds]
        out["spread"] = {}
        for key in RATIO_KEYS:
            vals = [h[key] for h in per_round if h.get(key) is not None]
            if vals:
                out["spread"][key] = mmm(vals)
    return out


def fmt_cell(c):
    return "%6.2f %5.2f..%-5.2f" % c if c else "%19s" % "-"


def table(records):
    """The original's table, one row per topology, fraction and thread count:
    sys/user/real for base, cache off and cache on (median, min..max for sys),
    the on-off delta and the percentage of system time the cache saved."""
    g = group(records)
    rows = sorted({(r["nodes"], r["mem_pct"], r["threads"]) for r in records})
    lines = [
        "nodes  mem  thr | base sys med min..max  user  real | off sys med min..max  user  real"
        " |  on sys med min..max  user  real | delta sys user real | sys better",
    ]
    for n, p, t in rows:
        parts = [f"{n:5d} {p:3d}% {t:4d}"]
        meds = {}
        for v in ("base", "off", "on"):
            recs = g.get((v, n, p, t), [])
            s, u, r = cell(recs, "sys"), cell(recs, "user"), cell(recs, "real")
            meds[v] = (s[0] if s else None, u[0] if u else None, r[0] if r else None)
            parts.append(fmt_cell(s) + (" %5.2f %5.2f" % (u[0], r[0]) if s else " %5s %5s" % ("-", "-")))
        off, on = meds["off"], meds["on"]
        if off[0] is not None and on[0] is not None:
            parts.append("%6.2f %5.2f %5.2f" % (on[0] - off[0], on[1] - off[1], on[2] - off[2]))
            parts.append("%9.1f%%" % (100.0 * (off[0] - on[0]) / off[0] if off[0] else 0.0))
        else:
            parts.append("%18s" % "-")
            parts.append("%10s" % "-")
        lines.append(" | ".join(parts))
    return "\n".join(lines)


def headline_text(h):
    spread = h.get("spread", {})

    def f(key):
        v = h.get(key)
        if v is None:
            return "n/a"
        if key in spread:
            return "%.3f  (rounds: min %.3f, median %.3f, max %.3f)" % (
                v, spread[key][1], spread[key][0], spread[key][2])
        return "%.3f" % v
    what = {"sys": "system time",
            "real": "instructions executed (icount elapsed time)"}.get(h.get("field", "sys"))
    lines = [f"headline ratios (medians of {what} per GiB touched, {h['pct']}% of memory, "
             f"{h['threads']} threads, {h.get('nodes')} nodes vs 1 node):",
             f"  on/off at {h.get('nodes')} nodes:        {f('on/off')}",
             f"  on/floor at {h.get('nodes')} nodes:      {f('on/floor')}",
             f"  off/floor at {h.get('nodes')} nodes:     {f('off/floor')}",
             f"  base/floor at {h.get('nodes')} nodes:    {f('base/floor')}",
             f"  on/base at {h.get('nodes')} nodes:       {f('on/base')}",
             f"  on/placed at {h.get('nodes')} nodes:     {f('on/placed')}",
             f"  placed/floor at {h.get('nodes')} nodes:  {f('placed/floor')}",
             f"  on/base-floor at {h.get('nodes')} nodes: {f('on/base floor')}",
             f"  on/off on 1 node:           {f('on/off 1 node')}",
             f"  on/off on 1 node, all rows: {f('on/off 1 node, all rows')}"]
    if "no spill row" in h:
        lines.append(f"  on/off with no spill:       {f('on/off no spill')}")
        lines.append(f"    (no-spill row: {h['no spill row']})")
    else:
        lines.append("  on/off with no spill:       n/a (no multi-node row without numa_miss)")
    lines.append("  (floor: the same variant on 1 node, the cache-on one for placed; "
                 "rounds: each round's ABBA boots alone)")
    lines.append("  (placed: no zonelist walk at all; placed/floor is what the topology "
                 "itself costs)")
    return "\n".join(lines)


def icount_table(records):
    """--icount: instructions per GiB touched (icount elapsed seconds, i.e.
    1e9 instructions), median of the passes, for base, off, on and placed."""
    g = group(records)
    rows = sorted({(r["nodes"], r["mem_pct"], r["threads"]) for r in records})
    kinds = ("base", "off", "on", "placed")
    lines = ["nodes  mem  thr | base Ginsn/GiB | off Ginsn/GiB |  on Ginsn/GiB | "
             "placed Ginsn/GiB | on/off"]
    for n, p, t in rows:
        meds = {v: median_per_gib(g.get((v, n, p, t), []), "real") for v in kinds}
        cells = ["%14.4f" % meds[v] if meds[v] is not None else "%14s" % "-" for v in kinds]
        onoff = ratio(meds["on"], meds["off"])
        lines.append(f"{n:5d} {p:3d}% {t:4d} | " + " | ".join(cells) +
                     (" | %6.3f" % onoff if onoff is not None else " |      -"))
    return "\n".join(lines)


def plot(records, path, pct=HEADLINE["pct"], threads=HEADLINE["threads"]):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    g = group(records)
    nodes = sorted({r["nodes"] for r in records})
    fig, ax = plt.subplots(figsize=(7, 4.5))
    styles = {"base": ("tab:gray", "s"), "off": ("tab:blue", "o"), "on": ("tab:red", "^"),
              "placed": ("tab:green", "v")}
    for v, (color, marker) in styles.items():
        xs, ys, lo, hi = [], [], [], []
        for n in nodes:
            c = cell(g.get((v, n, pct, threads), []))
            if c:
                xs.append(n)
                ys.append(c[0])
                lo.append(c[0] - c[1])
                hi.append(c[2] - c[0])
        if xs:
            label = {"base": "6.12 as shipped", "off": "patched, cache off",
                     "on": "patched, cache on", "placed": "placed, no walk"}[v]
            ax.errorbar(xs, ys, yerr=[lo, hi], color=color, marker=marker, capsize=4, label=label)
    floor = cell(g.get(("base", 1, pct, threads), []) or g.get(("off", 1, pct, threads), []))
    if floor:
        ax.axhline(floor[0], color="black", linestyle=":", label="1-node floor")
    ax.set_xscale("log", base=2)
    ax.set_xticks(nodes)
    ax.set_xticklabels([str(n) for n in nodes])
    ax.set_xlabel("NUMA nodes (same total memory)")
    ax.set_ylabel("system time, s (median, min-max bars)")
    ax.set_title(f"memory hog, {pct}% of memory, {threads} threads, QEMU TCG")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- running ------------------------------------------------------------------

def placed_row(pct, mode):
    """Whether a row also runs placed passes: the headline rows, in compare mode."""
    return mode == "compare" and pct == HEADLINE["pct"]


def passes_per_row(pct, reps, mode):
    return reps * ((3 if placed_row(pct, mode) else 2) if mode == "compare" else 1)


def guest_script(pcts, threads, reps, mode):
    """The guest command: warm up on all memory, then one selftest run per row.

    The fractions are of MemAvailable when the guest starts, not MemTotal:
    in a 2 GiB guest the kernel's own share is large enough that 90% of
    MemTotal leaves the hog at the edge of the OOM killer (pages parked on
    the other CPU's per-cpu lists are not counted free)."""
    lines = ["avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)",
             f"{HOG} -m asis -s $((avail * 90 / 100)) -t 2 -r 1 > /dev/null || exit 1"]
    for p in pcts:
        for t in threads:
            lines.append(f"echo 'zlc-row pct={p} threads={t}'")
            placed = " -P" if placed_row(p, mode) else ""
            lines.append(f"{HOG} -m {mode}{placed} -f -s $((avail * {p} / 100)) -t {t} "
                         f"-r {reps} -j || exit 1")
    return "\n".join(lines)


def parse_console(lines, kernel, nodes, rnd=0):
    """zlc-row and zlc-run lines of a guest console -> records."""
    records, pct, threads = [], None, None
    for line in lines:
        m = ROW_LINE.search(line)
        if m:
            pct, threads = int(m.group(1)), int(m.group(2))
            continue
        m = RUN_LINE.search(line)
        if m and pct is not None:
            run = json.loads(m.group(1))
            records.append(dict(kernel=kernel, zlc=run["zlc"], nodes=nodes, round=rnd, mem_pct=pct,
                                threads=threads, rep=run["rep"], mib=run["mib"],
                                sys=run["sys"], user=run["user"], real=run["real"],
                                zlc_skip=run["zlc_skip"], zlc_mark_full=run["zlc_mark_full"],
                                numa_miss=run["numa_miss"]))
    return records


def sh(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=TOP, **kw)


def build_hog():
    """The selftest, statically, so that it runs in the busybox guests."""
    hog = os.path.join(TOP, "build", "selftests", HOG)
    sh(["make", "-s", "tree"])
    sh(["make", "-s", os.path.relpath(hog, TOP)])
    return hog


def build(args):
    """Both kernels from configs/guest.config, and the selftest, statically."""
    sh(["make", "-s", "tree"])
    base_tree = os.path.join(TOP, "build", "linux-base")
    if not os.path.isdir(base_tree):
        sh(["git", "-C", "build/linux", "worktree", "add", "--quiet", "--detach", base_tree, "base"])
    else:
        sh(["git", "-C", base_tree, "checkout", "-q", "--detach", "base"])
    sh(["scripts/kbuild.sh", "guest"])
    sh(["scripts/kbuild.sh", "guest"], env=dict(os.environ, TREE=base_tree,
                                                KBUILD_OUT=os.path.join(TOP, "build", "guest-base")))
    hog = build_hog()
    return {"base": os.path.join(TOP, "build/guest-base/arch/x86/boot/bzImage"),
            "patched": os.path.join(TOP, "build/guest/arch/x86/boot/bzImage")}, hog


def boot_order(plan):
    """[(round, nodes, kernel), ...]: every kernel and topology once a round,
    each round in the reverse order of the one before."""
    one = [(n, k) for n in plan["nodes"] for k in ("base", "patched")]
    order = []
    for rnd in range(plan.get("rounds", 1)):
        order += [(rnd, n, k) for n, k in (one if rnd % 2 == 0 else one[::-1])]
    return order


def run_guests(kernels, hog, plan, mem, cpus, t0, extra=()):
    records = []
    rounds = plan.get("rounds", 1)
    for rnd, nodes, kernel in boot_order(plan):
        topo = Topology.make(nodes, mem, cpus)
        mode = "asis" if kernel == "base" else "compare"
        script = guest_script(plan["pcts"], plan["threads"], plan["reps"], mode)
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

        log = os.path.join(TOP, "build", "bench-logs", f"{kernel}-{nodes}-r{rnd + 1}.log")
        print(f"[bench] round {rnd + 1}/{rounds}: booting {kernel} kernel, {topo.describe()}",
              flush=True)
        res = qemu.run(kernels[kernel], topo, script, binaries=[hog], timeout=7200,
                       log=log, on_line=progress, extra=extra)
        if res.status != 0:
            raise qemu.GuestError(f"the hog failed in the {kernel} guest with {nodes} nodes "
                                  f"(exit {res.status}); log: {log}")
        got = parse_console(res.lines, kernel, nodes, rnd)
        want = sum(passes_per_row(p, plan["reps"], mode) for p in plan["pcts"]) * \
            len(plan["threads"])
        if len(got) != want:
            raise qemu.GuestError(f"expected {want} passes from the {kernel} guest with "
                                  f"{nodes} nodes, got {len(got)}; log: {log}")
        records += got
    return records




def run_host(hog, plan):
    """HW=1: the selftest on this machine, as booted, into the same records."""
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
    return parse_console(lines, kernel, nodes)


def report(records, meta, out_dir):
    """bench.{json,txt,png}; with meta["icount"], icount.{json,txt} instead."""
    icount = meta.get("icount", False)
    name = "icount" if icount else "bench"
    h = headline(records, field="real" if icount else "sys")
    text = (icount_table(records) if icount else table(records)) + "\n\n" + headline_text(h)
    print("\n" + text + "\n")
    os.makedirs(out_dir, exist_ok=True)
    partial = os.path.join(out_dir, f"{name}.json.partial")
    with open(partial, "w") as f:
        json.dump({"meta": meta, "headline": h, "records": records}, f, indent=1)
    os.replace(partial, os.path.join(out_dir, f"{name}.json"))
    with open(os.path.join(out_dir, f"{name}.txt"), "w") as f:
        f.write(text + "\n")
    if icount:
        print(f"wrote {os.path.relpath(out_dir)}/icount.json and icount.txt")
        return
    plot(records, os.path.join(out_dir, "bench.png"))
    print(f"wrote {os.path.relpath(out_dir)}/bench.json, bench.txt and bench.png")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m zlctool.bench", description=__doc__)
    p.add_argument("--quick", action="store_true",
                   help="64 and 1 nodes, 90%%, 2 threads, 2 rounds of 2 passes")
    p.add_argument("--hw", action="store_true", help="run the selftest on this host instead")
    p.add_argument("--icount", action="store_true",
                   help="count instructions instead of timing (QEMU -icount): "
                        "64, 16, 2 and 1 nodes, one round, into results/icount.*")
    p.add_argument("--mem", default="2G", help="guest memory in all (default 2G)")
    p.add_argument("--cpus", default="2", help="vCPUs on node 0 (default 2)")
    p.add_argument("--nodes", help="override: comma list of node counts")
    p.add_argument("--reps", type=int, help="override: passes per variant, row and round")
    p.add_argument("--rounds", type=int, help="override: rounds of boots (ABBA order)")
    p.add_argument("--out", default=RESULTS)
    p.add_argument("--from-json", metavar="FILE",
                   help="only remake the table, ratios and plot from a bench.json")
    args = p.parse_args(argv)
    if args.from_json:
        with open(args.from_json) as f:
            data = json.load(f)
        report(data["records"], data["meta"], args.out)
        return 0

    if args.icount and args.hw:
        p.error("--icount runs guests; it does not go with --hw")
    plan = dict(ICOUNT if args.icount else QUICK if args.quick else FULL)
    if args.nodes:
        plan["nodes"] = [int(n) for n in args.nodes.split(",")]
    if args.reps:
        plan["reps"] = args.reps
    if args.rounds:
        plan["rounds"] = args.rounds
    for n in plan["nodes"]:
        Topology.make(n, args.mem, args.cpus)       # refuse a bad topology up front

    # SIGTERM unwinds like ^C: the runner kills its guest, no JSON is written.
    signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    t0 = time.monotonic()
    try:
        if args.hw:
            records = run_host(build_hog(), plan)
        else:
            kernels, hog = build(args)
            records = run_guests(kernels, hog, plan, args.mem, args.cpus, t0,
                                 extra=ICOUNT_ARGS if args.icount else ())
    except KeyboardInterrupt:
        print("\n[bench] interrupted: no results written", file=sys.stderr)
        return 130
    except (qemu.GuestError, subprocess.CalledProcessError) as e:
        print(f"[bench] failed: {e}", file=sys.stderr)
        return 1
    meta = dict(plan=plan, mem=args.mem, cpus=args.cpus, quick=args.quick, hw=args.hw,
                icount=args.icount,
                seconds=round(time.monotonic() - t0),
                date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    report(records, meta, args.out)
    print(f"[bench] done in {time.monotonic() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
