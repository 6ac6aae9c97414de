"""make profile: where the instructions of memory hog passes go, per kernel
function, counted by QEMU itself.

    python3 -m zlctool.profile --kernel patched --topology 64 --kinds 'on on on on off off'

One guest boots under QEMU -icount with the plugin of zlctool/tbprof
(scripts/tbprof.sh builds it), touches its memory once, then runs one
zonelist_cache_memhog pass per kind (-m KIND -w -r 1: on, off or asis,
the share of memory and threads of make bench's headline row), each
between two sync(2) calls. Kind "placed" is the hog's -P pass, which
only runs beside a pass as is: the cache is switched off, the two passes
run between the same two syncs, and the median off pass of the same boot
is taken from their counts (so placed needs off among the kinds), then
what is left is scaled to the off passes' size: a placed pass touches
less where the nodes with room hold less. The plugin counts every kernel
translation block's executions and writes the counts out each time the
guest enters sys_sync(), so each pass has its own file; System.map names
the functions. The tool checks its own reference: a pass's counted
instructions (kernel and user) must match the pass's length on the guest
clock, which under -icount is the instructions of both vCPUs, within 2 %
(the dump also holds the process's start and exit).

It prints each pass (its guest time and counted instructions), then the
functions with the most instructions, the median per kind; where the
first kind spends more than each other kind (on against off: what the
cache costs, and where it saves); and for each kind of at least two
passes the difference between its slower and its faster half: where a
slow pass spends what a fast one does not.  TCG
models no caches: these are instructions, not cycles.
"""

import argparse
import bisect
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from . import guest
from .report import HEADLINE, WALK_COUNTERS, walked
from .topology import Topology, TopologyError

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLUGIN = os.path.join(TOP, "build", "tools", "tbprof.so")
HOG = os.path.join(guest.OUT, "selftests", "zonelist_cache_memhog")
TRIGGER = "__x64_sys_sync"
USER = "<user space>"
PASS_LINE = re.compile(r"zlc-profile kind=(\S+) (\{.*\})")
END_LINE = re.compile(r"zlc-profile-end kind=(\S+)")
KINDS = ("on", "off", "asis", "placed")
# The "zlc" the hog prints for a pass of each kind (-m asis: "n/a").
HOG_KIND = {"asis": "n/a"}

# The guest's side: warm-up, then one pass per kind between two syncs
# (the plugin's dumps: the second one of each pair holds the pass).
SCRIPT = """
avail=$(awk '/^MemAvailable:/ {{ print int($2 / 1024) }}' /proc/meminfo)
size=$((avail * {pct} / 100))
zonelist_cache_memhog -m asis -s $size -t {threads} -r 1 > /dev/null || exit 1
orig=$(cat /proc/sys/vm/zonelist_cache 2>/dev/null)
for kind in {kinds}; do
	mode="-m $kind"
	if [ $kind = placed ]; then
		echo 0 > /proc/sys/vm/zonelist_cache ||
			{{ echo "profile: kind placed needs the series' vm.zonelist_cache"; exit 1; }}
		mode="-m asis -P"
	fi
	sync
	zonelist_cache_memhog $mode -w -f -s $size -t {threads} -r 1 -j > /tmp/pass.log 2>&1 ||
		{{ cat /tmp/pass.log; exit 1; }}
	sync
	[ $kind != placed ] || echo "$orig" > /proc/sys/vm/zonelist_cache || exit 1
	sed -n "s/^# zlc-run /zlc-profile kind=$kind /p" /tmp/pass.log
	echo "zlc-profile-end kind=$kind"
done
"""


def symbols(system_map):
    """Sorted (address, name) of the text symbols of a System.map."""
    syms = []
    with open(system_map) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in "tTwW":
                syms.append((int(parts[0], 16), parts[2]))
    syms.sort()
    return syms


def per_function(path, syms):
    """{function: instructions} of one dump of the plugin."""
    addrs = [a for a, _ in syms]
    out = {}
    with open(path) as f:
        for line in f:
            vaddr, n = line.split()
            vaddr, n = int(vaddr, 16), int(n)
            if vaddr == 0:
                name = USER
            else:
                i = bisect.bisect_right(addrs, vaddr) - 1
                name = syms[i][1] if i >= 0 else "?"
            out[name] = out.get(name, 0) + n
    return out


def pass_reals(lines):
    """[(kind, guest seconds, MiB, the placed pass's record or None, the
    pass as is beside it's seconds or None)] of the guest's passes: a
    placed kind's dump holds a pass as is and the placed pass, its seconds
    are both's, its MiB the placed pass's own (it touches less where the
    nodes with room hold less).  ValueError if a kind's lines are not
    what it runs."""
    runs, recs = [], []
    for line in lines:
        m = PASS_LINE.search(line)
        if m:
            try:
                recs.append(json.loads(m.group(2)))
            except ValueError:
                raise ValueError(f"a pass's record does not parse: {line.strip()[:200]}")
            continue
        m = END_LINE.search(line)
        if not m:
            continue
        kind = m.group(1)
        zlc = sorted(r.get("zlc", "?") for r in recs)
        if kind == "placed":
            if zlc != ["n/a", "placed"]:
                raise ValueError(f"a placed kind printed passes {zlc}, not a pass as is "
                                 "and a placed one")
            placed = next(r for r in recs if r["zlc"] == "placed")
            asis = next(r for r in recs if r["zlc"] == "n/a")
            runs.append((kind, placed["real"] + asis["real"], placed["mib"], placed,
                         asis["real"]))
        else:
            if len(recs) != 1:
                raise ValueError(f"kind {kind} printed {len(recs)} passes, not one")
            if zlc != [HOG_KIND.get(kind, kind)]:
                raise ValueError(f"kind {kind} printed a pass of kind {zlc[0]}")
            runs.append((kind, recs[0]["real"], recs[0]["mib"], None, None))
        recs = []
    return runs


def placed_alone(passes):
    """The passes, each placed one less the median off pass, function by
    function (its dump also holds a pass as is, the cache off), then
    scaled to the off passes' MiB.  ValueError without off passes, or
    for a placed pass that walked (report.walked()): no reference."""
    if not any(p["kind"] == "placed" for p in passes):
        return passes
    off = [p for p in passes if p["kind"] == "off"]
    if not off:
        raise ValueError("kind placed needs off passes in the same boot")
    names = set().union(*(p["funcs"] for p in off))
    median = {n: statistics.median(p["funcs"].get(n, 0) for p in off) for n in names}
    real = statistics.median(p["real"] for p in off)
    mib = statistics.median(p["mib"] for p in off)
    out = []
    for p in passes:
        if p["kind"] == "placed":
            if walked(p["placed"]):
                raise ValueError(f"a placed pass walked ({walk_summary(p['placed'])}): "
                                 "not a reference")
            if not p["mib"]:
                raise ValueError("a placed pass touched nothing: no nodes with room")
            scale = mib / p["mib"]
            funcs = dict(p["funcs"])
            for n, v in median.items():
                funcs[n] = funcs.get(n, 0) - v
            # The pass as is beside it against the off passes: how far off
            # the subtraction is, in the same seconds (instructions).
            p = dict(p, real=(p["real"] - real) * scale, mib=mib, placed_mib=p["mib"],
                     residual=(p["asis_real"] - real) * scale,
                     funcs={n: v * scale for n, v in funcs.items()})
        out.append(p)
    return out


def walk_summary(rec):
    return ", ".join(f"{k} {rec.get(k)}" for k in WALK_COUNTERS)


def halves(passes):
    """The faster and the slower half of passes, by counted instructions."""
    ranked = sorted(passes, key=lambda p: sum(p["funcs"].values()))
    k = len(ranked) // 2
    return ranked[:k], ranked[len(ranked) - k:]


def mean(passes, name):
    return sum(p["funcs"].get(name, 0) for p in passes) / len(passes)


def table(passes, top):
    """The report's lines."""
    kinds = list(dict.fromkeys(p["kind"] for p in passes))
    lines = ["pass  kind    guest s   counted Ginsn  (kernel, user)   MiB"]
    for i, p in enumerate(passes):
        total = sum(p["funcs"].values())
        lines.append(f"{i + 1:4d}  {p['kind']:6s} {p['real']:8.3f}   {total / 1e9:8.3f}"
                     f"       ({(total - p['funcs'].get(USER, 0)) / 1e9:.3f}, "
                     f"{p['funcs'].get(USER, 0) / 1e9:.3f})   {p.get('mib') or '?'}"
                     + (f" (placed {p['placed_mib']}; the pass as is beside it "
                        f"{p['residual'] * 1e3:+.1f} Minsn from the off median, scaled)"
                        if p.get("placed_mib") else ""))
    split = [k for k in kinds if sum(p["kind"] == k for p in passes) >= 2]
    names = set()
    for p in passes:
        names |= set(p["funcs"])
    med = {k: {n: statistics.median(p["funcs"].get(n, 0) for p in passes if p["kind"] == k)
               for n in names} for k in kinds}
    total = {k: statistics.median(sum(p["funcs"].values()) for p in passes if p["kind"] == k)
             for k in kinds}
    diff = {}
    for k in split:
        fast, slow = halves([p for p in passes if p["kind"] == k])
        diff[k] = {n: mean(slow, n) - mean(fast, n) for n in names}
    head = f"{'function':40s}" + "".join(f"{k + ' median':>16s}" for k in kinds) + \
        "".join(f"{k + ' slow-fast':>16s}" for k in split)
    lines += ["", f"Minsn per pass, the {top} functions with the most in any kind:", head]

    def row(n):
        return f"{n[:40]:40s}" + "".join(f"{med[k][n] / 1e6:16.2f}" for k in kinds) + \
            "".join(f"{diff[k][n] / 1e6:+16.2f}" for k in split)
    busiest = sorted(names, key=lambda n: -max(med[k][n] for k in kinds))[:top]
    lines += [row(n) for n in busiest]
    for k in kinds[1:]:
        lines += ["", f"Minsn per pass, the {top} functions where {kinds[0]} spends most "
                      f"over {k} (medians; a pass's median total {total[kinds[0]] / 1e6:.2f} "
                      f"against {total[k] / 1e6:.2f}):", head]
        lines += [row(n) for n in sorted(names, key=lambda n: med[k][n] - med[kinds[0]][n])[:top]]
    for k in split:
        lines += ["", f"Minsn per pass, the {top} functions where {k}'s slower half "
                      f"spends most over its faster half:", head]
        lines += [row(n) for n in sorted(names, key=lambda n: -diff[k][n])[:top]]
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m zlctool.profile", description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernel", default="patched",
                    help="bzImage (System.map beside its build), or 'patched' / 'base'")
    ap.add_argument("--topology", default="64")
    ap.add_argument("--kinds", default="on on on on on on",
                    help="one hog pass per word: on, off, placed (patched kernel) or asis")
    ap.add_argument("--pct", type=int, default=HEADLINE["pct"])
    ap.add_argument("--threads", type=int, default=HEADLINE["threads"])
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--append", default="nokaslr numa_balancing=disable")
    args = ap.parse_args(argv)
    try:
        topo = Topology.parse(args.topology)
    except TopologyError as e:
        print(f"profile: {e}", file=sys.stderr)
        return 2
    kinds = args.kinds.split()
    if not kinds or any(k not in KINDS for k in kinds):
        print(f"profile: kinds are {', '.join(KINDS)}, not '{args.kinds}'", file=sys.stderr)
        return 2
    if "placed" in kinds and "off" not in kinds:
        print("profile: kind placed needs off passes in the same boot", file=sys.stderr)
        return 2
    kernel = guest.KERNELS.get(args.kernel, args.kernel)
    build = kernel.split("/arch/")[0]
    system_map = os.path.join(build, "System.map")
    if not os.path.isfile(system_map):
        print(f"profile: no System.map beside {kernel}", file=sys.stderr)
        return 2
    syms = symbols(system_map)
    trigger = [a for a, n in syms if n == TRIGGER]
    if not trigger:
        print(f"profile: no {TRIGGER} in {system_map}", file=sys.stderr)
        return 2
    subprocess.run([os.path.join(TOP, "scripts", "tbprof.sh")], check=True)
    with tempfile.TemporaryDirectory() as d:
        prefix = os.path.join(d, "dump")
        extra = guest.ICOUNT_ARGS + ["-plugin", f"{PLUGIN},trigger={trigger[0]:x},prefix={prefix}"]
        cmd = SCRIPT.format(pct=args.pct, threads=args.threads, kinds=" ".join(kinds))
        try:
            res = guest.run(kernel, topo, cmd, [HOG], timeout=600 + 300 * len(kinds),
                            stage="profile", append=args.append, extra=extra)
        except guest.GuestError as e:
            print(f"profile: {e}", file=sys.stderr)
            return 1
        if res.status:
            print(f"profile: the guest exited {res.status} (console: {res.log})", file=sys.stderr)
            return 1
        try:
            runs = pass_reals(res.lines)
        except ValueError as e:
            print(f"profile: {e} (console: {res.log})", file=sys.stderr)
            return 1
        dumps = sorted((int(f.rsplit(".", 1)[1]) for f in os.listdir(d)))
        # Dump 0: boot and warm-up; then a pair per pass: the pass (with its
        # process's start and exit), then the guest between two passes.
        if [r[0] for r in runs] != kinds or len(dumps) < 2 * len(kinds) + 1:
            print(f"profile: passes {' '.join(r[0] for r in runs)} and {len(dumps)} dumps "
                  f"for kinds {' '.join(kinds)} (console: {res.log})", file=sys.stderr)
            return 1
        passes = [dict(kind=k, real=real, mib=mib, placed=placed, asis_real=asis,
                       funcs=per_function(f"{prefix}.{2 * i + 1}", syms))
                  for i, (k, real, mib, placed, asis) in enumerate(runs)]
    for p in passes:
        counted = sum(p["funcs"].values()) / 1e9
        if abs(counted - p["real"]) > 0.02 * p["real"]:
            print(f"profile: a {p['kind']} pass counted {counted:.3f} G instructions, but "
                  f"lasted {p['real']:.3f} s of guest time: the counts are not the pass",
                  file=sys.stderr)
            return 1
    try:
        passes = placed_alone(passes)
    except ValueError as e:
        print(f"profile: {e}", file=sys.stderr)
        return 1
    print(f"profile: {os.path.relpath(kernel, TOP)}, {topo.describe()}, hog at {args.pct}% of "
          f"MemAvailable, {args.threads} threads; counted by QEMU (-icount, plugin tbprof)")
    print("\n".join(table(passes, args.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
