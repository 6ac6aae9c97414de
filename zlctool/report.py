"""Reports of benchmark runs: tables, ratios, plots, and comparisons.

A run is a directory results/NAME/ written by zlctool.bench: run.json (its
provenance, plan and every measured pass), report.txt and plot.png.  This
module makes the table, the headline ratios and the plot from run.json, and
compares runs the way mmtests' compare-kernels does:

  python3 -m zlctool.report --remake results/NAME   remake NAME's report
  python3 -m zlctool.report results/A results/B     compare their hog runs

It knows the hog's runs only: 'make compare' (zlctool.compare) puts
workload runs (zlctool.workloads, which reports through this module) beside
them.  Everything here is pure: records in, text and figures out
(tests/test_report.py).
"""

import argparse
import json
import math
import os
import statistics
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADLINE = dict(pct=90, threads=2)
VARIANT_NAMES = {("base", "n/a"): "base", ("patched", "off"): "off", ("patched", "on"): "on",
                 ("patched", "placed"): "placed", ("base", "placed"): "base placed"}


def variant(rec):
    return VARIANT_NAMES[(rec["kernel"], rec["zlc"])]


def where(rec):
    """A record's topology: its label (runs with presets), else its node count."""
    return rec.get("topology", rec["nodes"])


def group(records):
    """{(variant, topology, pct, threads): [record, ...]}, the topology as
    where() gives it."""
    out = {}
    for r in records:
        out.setdefault((variant(r), where(r), r["mem_pct"], r["threads"]), []).append(r)
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
    # Off means off: the patched kernel with the cache switched off against
    # the unpatched base, on the headline topology and on 1 node.
    out["off/base"] = ratio(med("off", most), med("base", most))
    out["off/base 1 node"] = ratio(med("off", 1), med("base", 1))
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
    # A no-spill run: more than one node, yet neither the cache-on nor the
    # cache-off passes ever missed their node.  The largest such row says
    # the most.  (Off counts too: a row that spills with one and not the
    # other had passes whose threads did not overlap, which -icount's
    # round-robin vCPUs do at times, not a row that never spills.)
    nospill = [k for k, recs in g.items()
               if k[0] == "on" and k[1] > 1
               and all(r["numa_miss"] == 0 for r in recs + g.get(("off", *k[1:]), []))]
    if nospill:
        _, n, p, t = max(nospill, key=lambda k: (k[1], k[2]))
        out["on/off no spill"] = ratio(med("on", n, p, t), med("off", n, p, t))
        out["no spill row"] = f"{n} nodes, {p}%, {t} threads"
    return out


RATIO_KEYS = ("on/off", "on/floor", "off/floor", "base/floor", "on/base", "on/off 1 node",
              "off/base", "off/base 1 node",
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


# --- the reference: placed passes, measured to walk nothing ---------------------

PLACED_KINDS = ("placed", "base placed")
# What shows a walk or the slow path, each pass's counters (the hog's
# -j line): pages off the preferred node, pages of zones below every
# node's first zone, zones the cache walked past (-1 without the cache),
# kswapd's runs and direct reclaim.
WALK_COUNTERS = ("numa_miss", "lower_zone_pages", "zlc_skip", "pageoutrun", "allocstall")


def walked_pages(rec):
    """Pages of a pass that did not come from the first zone its fault
    looked at: numa_miss + lower_zone_pages + zlc_skip (zones walked past).
    None where the hog did not record them, or could not read them (-1)."""
    miss, lower = rec.get("numa_miss"), rec.get("lower_zone_pages")
    if miss is None or lower is None or miss < 0 or lower < 0:
        return None
    return miss + lower + max(rec.get("zlc_skip") or 0, 0)


def walked(rec):
    """Whether a pass walked, or cannot be shown not to have: any page
    counted by walked_pages(), any kswapd run or direct reclaim (a fault
    that failed its watermark and went to the slow path), a counter not
    recorded, or numa_local + numa_other short of the pages it touched
    (vm.numa_stat off)."""
    n = walked_pages(rec)
    slow = [rec.get("pageoutrun"), rec.get("allocstall")]
    if n is None or any(v is None or v < 0 for v in slow):
        return True
    loc, other = rec.get("numa_local"), rec.get("numa_other")
    if loc is None or other is None or loc + other < rec["mib"] * 256:
        return True
    return n > 0 or any(slow)


def local_share(rec):
    """The share of a pass's pages on the allocating CPU's own node
    (numa_local / (numa_local + numa_other)), or None."""
    loc, other = rec.get("numa_local"), rec.get("numa_other")
    if loc is None or other is None or loc < 0 or other < 0 or loc + other == 0:
        return None
    return loc / (loc + other)


def walk_counts(recs):
    """The largest of each walk counter over some passes, "?" where one
    was not recorded."""
    def top(key):
        vals = [r.get(key) for r in recs]
        return "?" if any(v is None or v < 0 for v in vals if key != "zlc_skip") \
            else max(vals)
    return ", ".join(f"{k} max {top(k)}" for k in WALK_COUNTERS)


def pairs(a, b):
    """The ratio of medians of a over b and its all-pairs range: every pass
    of a over every pass of b, min..max.  The one convention of every
    range in the reference report.  None without both."""
    if not a or not b:
        return None
    return statistics.median(a) / statistics.median(b), min(a) / max(b), max(a) / min(b)


def fmt_pairs(x):
    return "n/a" if x is None else "%.3f (%.3f..%.3f)" % x


REF_KINDS = ("base", "base placed", "off", "on", "placed")


def reference(records, pct=HEADLINE["pct"], threads=HEADLINE["threads"], field="real"):
    """The reference report's figures, per topology at pct% and threads:
    {topology: {"cost": {kind: [per GiB]}, "local": {kind: [share]},
    "walked": {kind: [pages]}, "placed ok": {kind: bool}, ratios...}},
    and "floor": the patched kernel's placed passes on one node."""
    g = group(records)
    tops = sorted({k[1] for k in g if k[2] == pct and k[3] == threads},
                  key=lambda t: (int(str(t).rstrip("n")) if str(t).rstrip("n").isdigit()
                                 else 1000, str(t)))
    out = {}
    for t in tops:
        row = {"cost": {}, "local": {}, "walked": {}, "placed ok": {}, "recs": {}}
        for kind in REF_KINDS:
            recs = g.get((kind, t, pct, threads), [])
            if not recs:
                continue
            row["cost"][kind] = [per_gib(r, field) for r in recs]
            row["local"][kind] = [x for x in map(local_share, recs) if x is not None]
            row["walked"][kind] = [walked_pages(r) for r in recs]
            row["recs"][kind] = recs
            if kind in PLACED_KINDS:
                row["placed ok"][kind] = not any(walked(r) for r in recs)
        out[t] = row
    floor_top = next((t for t in tops if str(t) in ("1", "1n")), None)
    floor = out.get(floor_top, {}).get("cost", {}).get("placed") if floor_top else None
    floor_ok = floor_top and out[floor_top]["placed ok"].get("placed")
    for t, row in out.items():
        c = row["cost"]
        ok = row["placed ok"]
        row["on/placed"] = pairs(c.get("on"), c.get("placed")) if ok.get("placed") else None
        row["off/base"] = pairs(c.get("off"), c.get("base"))
        row["on/base"] = pairs(c.get("on"), c.get("base"))
        row["on/off"] = pairs(c.get("on"), c.get("off"))
        row["placed/base placed"] = pairs(c.get("placed"), c.get("base placed")) \
            if ok.get("placed") and ok.get("base placed") else None
        row["on/floor"] = pairs(c.get("on"), floor) if floor_ok else None
        row["placed/floor"] = pairs(c.get("placed"), floor) \
            if floor_ok and ok.get("placed") else None
    return out


def nospill(records, threads=HEADLINE["threads"], field="real"):
    """Rows where no pass of base, off or on left its preferred node
    (numa_miss 0): {(topology, pct): {ratio: pairs()}}."""
    g = group(records)
    out = {}
    for t, p in sorted({(k[1], k[2]) for k in g if k[3] == threads}, key=str):
        recs = {v: g.get((v, t, p, threads), []) for v in ("base", "off", "on")}
        if not all(recs.values()) or any(r["numa_miss"] for v in recs.values() for r in v):
            continue
        c = {v: [per_gib(r, field) for r in rs] for v, rs in recs.items()}
        out[(t, p)] = {"on/base": pairs(c["on"], c["base"]), "off/base": pairs(c["off"], c["base"]),
                       "on/off": pairs(c["on"], c["off"])}
    return out


def balance(records):
    """How balanced each boot's order of kinds was: {(kernel, pct,
    topology, round): (positions, followers)}, one entry a boot and row,
    where positions maps each kind to how often it ran at each position of
    its repetition, and followers each ordered pair (kind before, kind) to
    how often it occurred inside a repetition."""
    out = {}
    for r in records:
        if r.get("pos") is None:
            continue
        key = (r["kernel"], r["mem_pct"], str(where(r)), r.get("round", 0))
        pos, fol = out.setdefault(key, ({}, {}))
        counts = pos.setdefault(r["zlc"], {})
        counts[r["pos"]] = counts.get(r["pos"], 0) + 1
        if r["pos"] > 0 and r.get("prev") not in (None, "-", r["zlc"]):
            fol[(r["prev"], r["zlc"])] = fol.get((r["prev"], r["zlc"]), 0) + 1
    return out


def _balanced(pos, fol):
    """(positions balanced, followers balanced) of one balance() entry."""
    npos = max((p for c in pos.values() for p in c), default=0) + 1
    cells = {n for c in pos.values() for n in (c.get(p, 0) for p in range(npos))}
    kinds = sorted(pos)
    after = {fol.get((a, b), 0) for a in kinds for b in kinds if a != b}
    return len(cells) == 1, len(after) <= 1


def balance_line(records):
    """One line per kernel and row: whether in every boot every kind ran
    in every position equally often, and, inside a repetition, after
    every other kind equally often; else the boots that were not."""
    by, lines = {}, []
    for (kernel, pct, topo, rnd), (pos, fol) in sorted(balance(records).items()):
        by.setdefault((kernel, pct), []).append((topo, rnd, _balanced(pos, fol), pos))
    for (kernel, pct), boots in sorted(by.items()):
        bad = [b for b in boots if not all(b[2])]
        if not bad:
            lines.append(f"order, {kernel} kernel, {pct}%: in each of its {len(boots)} boots "
                         "every kind in every position equally often, and after each other "
                         "equally often (inside a repetition)")
            continue
        lines.append(f"order, {kernel} kernel, {pct}%: unbalanced in {len(bad)} of {len(boots)} "
                     "boots: " + "; ".join(
                         f"{t} round {r + 1} (" + ", ".join(
                             f"{k} " + ",".join(str(p[k].get(i, 0)) for i in range(
                                 max(x for c in p.values() for x in c) + 1))
                             for k in sorted(p)) + ")" for t, r, _, p in bad))
    return "\n".join(lines) or "order: not recorded"


def reference_text(records, field="real", pct=HEADLINE["pct"], threads=HEADLINE["threads"]):
    """The reference report: per topology, each kind's cost per GiB and its
    pages on the CPUs' own nodes, whether placed passes walked, and the
    ratios with their all-pairs ranges; then the rows without spill."""
    ref = reference(records, pct, threads, field)
    unit = "Ginsn/GiB" if field == "real" else "sys s/GiB"
    lines = [f"{unit} at {pct}% of memory, {threads} threads: median (min..max) over "
             "every pass of every boot; local: pages on the allocating CPU's own node "
             "(numa_local), median"]
    for t, row in ref.items():
        lines.append(f"  {t}:")
        for kind in REF_KINDS:
            if kind not in row["cost"]:
                continue
            c, loc, w = row["cost"][kind], row["local"][kind], row["walked"][kind]
            walk = "" if kind not in PLACED_KINDS else (
                "  walked nothing" if row["placed ok"][kind] else
                "  WALKED, not a reference: " + walk_counts(row["recs"][kind]))
            lines.append("    %-12s %.4f (%.4f..%.4f)  local %s%s" % (
                kind, statistics.median(c), min(c), max(c),
                "%.2f%%" % (100 * statistics.median(loc)) if loc else "n/a", walk))
        for key in ("on/placed", "on/floor", "placed/floor", "on/base", "off/base",
                    "placed/base placed", "on/off"):
            lines.append(f"    {key + ':':20s}{fmt_pairs(row[key])}")
    lines.append(balance_line(records))
    ns = nospill(records, threads, field)
    lines.append("rows without spill (no pass of base, off or on missed its node):")
    if not ns:
        lines.append("  none")
    for (t, p), r in ns.items():
        lines.append(f"  {t} {p}%: " + ", ".join(f"{k} {fmt_pairs(v)}" for k, v in r.items()))
    lines += ["(ratios: the medians' ratio, then min..max over all pairs of passes, every pass "
              "of one kind over every pass of the other, all boots pooled;",
              " placed: the cache off, each thread's memory preferred node by node, its own "
              "node first, to the room above each node's first zone's high watermark; a",
              " placed kind any of whose passes counted a walk (" + ", ".join(WALK_COUNTERS) +
              ": any above 0) is no reference and its ratios are n/a;",
              " floor: the patched kernel's placed passes on one node)"]
    return "\n".join(lines)


def topo_label(t):
    """A topology as a row names it: a node count as "64n", a label as is."""
    return f"{t}n" if isinstance(t, int) else str(t)


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
             f"  on/off on 1 node, all rows: {f('on/off 1 node, all rows')}",
             f"  off/base at {h.get('nodes')} nodes:      {f('off/base')}",
             f"  off/base on 1 node:         {f('off/base 1 node')}"]
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


def plot(records, path, meta=None, pct=HEADLINE["pct"], threads=HEADLINE["threads"]):
    """Cost per GiB against node count for each variant, as the ratios see
    it: the median per GiB over the passes, min..max bars; the dotted floor
    is the cache-on passes on 1 node, the floor of on/floor.  The cache-on
    line is drawn last, thick, so that it stays visible where it meets
    another.  The title names the kernel, the date and the host."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta = meta or {}
    field = "real" if meta.get("icount") else "sys"
    unit = "Ginsn per GiB" if field == "real" else "system s per GiB"
    g = group(records)
    if any("topology" in r for r in records):
        return reference_plot(records, path, meta, field, unit, pct, threads)
    nodes = sorted({r["nodes"] for r in records})
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    styles = {"base": ("tab:gray", "s", 1.5, 2), "off": ("tab:blue", "o", 1.5, 2),
              "placed": ("tab:green", "v", 1.5, 2), "on": ("tab:red", "^", 3.0, 5)}
    labels = {"base": f"{(meta.get('provenance') or {}).get('base', 'base')} as shipped", "off": "patched, cache off",
              "on": "patched, cache on", "placed": "placed (no walk)"}
    for v, (color, marker, width, z) in styles.items():
        xs, ys, lo, hi = [], [], [], []
        for n in nodes:
            recs = g.get((v, n, pct, threads), [])
            if recs:
                vals = [per_gib(r, field) for r in recs]
                med = statistics.median(vals)
                xs.append(n)
                ys.append(med)
                lo.append(med - min(vals))
                hi.append(max(vals) - med)
        if xs:
            ax.errorbar(xs, ys, yerr=[lo, hi], color=color, marker=marker, capsize=4,
                        linewidth=width, zorder=z, label=labels[v],
                        markerfacecolor="none" if v == "on" else color)
    floor = median_per_gib(g.get(("on", 1, pct, threads), []), field)
    if floor:
        ax.axhline(floor, color="black", linestyle=":", label="floor: cache on, 1 node")
    ax.set_xscale("log", base=2)
    ax.set_xticks(nodes)
    ax.set_xticklabels([str(n) for n in nodes])
    ax.set_xlabel("NUMA nodes (same total memory)")
    ax.set_ylabel(f"{unit} (median, min-max bars)")
    host = (meta.get("provenance") or {}).get("host_cpu", "?")
    hog_title(ax, meta, field, pct, threads, "", f", {host}")
    ax.set_ylim(bottom=0)
    save_plot(fig, ax, path)


def reference_plot(records, path, meta, field, unit, pct, threads):
    """Runs with topologies: each kind's cost per GiB on each topology, a
    bar per kind (median, min-max whiskers); a placed kind that walked is
    hatched."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ref = reference(records, pct, threads, field)
    tops = list(ref)
    colors = {"base": "tab:gray", "base placed": "silver", "off": "tab:blue",
              "on": "tab:red", "placed": "tab:green"}
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    width = 0.8 / len(REF_KINDS)
    for i, kind in enumerate(REF_KINDS):
        xs, ys, lo, hi, hatch = [], [], [], [], []
        for j, t in enumerate(tops):
            c = ref[t]["cost"].get(kind)
            if c:
                med = statistics.median(c)
                xs.append(j + (i - len(REF_KINDS) / 2 + 0.5) * width)
                ys.append(med)
                lo.append(med - min(c))
                hi.append(max(c) - med)
                hatch.append(kind in PLACED_KINDS and not ref[t]["placed ok"][kind])
        if xs:
            bars = ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, color=colors[kind],
                          label=kind)
            for b, h in zip(bars, hatch):
                if h:
                    b.set_hatch("//")
    ax.set_xticks(range(len(tops)))
    ax.set_xticklabels([str(t) for t in tops])
    ax.set_xlabel("topology")
    ax.set_ylabel(f"{unit} (median, min-max whiskers)")
    hog_title(ax, meta, field, pct, threads, " (hatched: placed that walked)", "")
    save_plot(fig, ax, path)


def hog_title(ax, meta, field, pct, threads, note, host):
    """The title of a hog plot: what ran, then the kernel and the date."""
    prov = meta.get("provenance", {})
    ax.set_title(f"memory hog, {pct}% of memory, {threads} threads, QEMU TCG"
                 + (" -icount" if field == "real" else "") + note + "\n"
                 f"{prov.get('kernel', '?')}, {meta.get('date', '?')}{host}", fontsize=9)


def save_plot(fig, ax, path):
    """Grid, legend and layout as every plot here has them; write and close."""
    import matplotlib.pyplot as plt
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- runs on disk -------------------------------------------------------------

def field_of(meta):
    return "real" if meta.get("icount") else "sys"


def numa_balancing_line(records):
    """Whether NUMA balancing ran in the guests (per kernel and node
    count), and the hint faults a pass took in the headline rows (90 %, 2
    threads, the most nodes), per kernel: it scans the hog's memory while
    the hog runs, so a longer pass takes more of them.  A row's count
    covers the hog's unrecorded warm-up pass too, and every kind of pass in
    the row (off, on and placed on the patched kernel)."""
    by_state = {}
    for r in records:
        if "numa_balancing" in r:
            by_state.setdefault((r["kernel"], str(r["numa_balancing"])), set()).add(r["nodes"])
    if not by_state:
        return "  NUMA balancing: not recorded"
    # The kernel turns it off by itself on a machine with one node.
    states = "; ".join(f"{k} {s} at {','.join(map(str, sorted(n)))} node(s)"
                       for (k, s), n in sorted(by_state.items()))
    rows, top = {}, max(r["nodes"] for r in records)
    for r in records:
        if (r["mem_pct"], r["threads"], r["nodes"]) == (HEADLINE["pct"], HEADLINE["threads"], top) \
                and "row_hint_faults" in r:
            row = rows.setdefault((r["kernel"], r["round"]), [r["row_hint_faults"], 1])
            row[1] += 1     # the row's passes, its warm-up counted once
    per = {}
    for (kernel, _), (faults, passes) in rows.items():
        per.setdefault(kernel, [0, 0])
        per[kernel][0] += faults
        per[kernel][1] += passes
    faults = ", ".join(f"{k} {f / n:.0f}" for k, (f, n) in sorted(per.items()))
    return (f"  NUMA balancing (kernel.numa_balancing): {states}"
            + (f"; hint faults per pass at {top} nodes, {HEADLINE['pct']}%, "
               f"{HEADLINE['threads']} threads (warm-up and every kind of pass): {faults}"
               if faults else ""))


def kswapd_line(records, pct=HEADLINE["pct"], threads=HEADLINE["threads"]):
    """kswapd's runs per pass (vmstat pageoutrun) in the headline rows (90 %,
    2 threads, the most nodes), per kind of pass: median (min..max).
    kswapd runs beside the hog and is counted with it.  A walk that stops
    at a zone's watermark can wake it: 7.3 boosts a zone's watermarks when
    a fallback claims a pageblock there, and the next allocation from the
    zone wakes kswapd, which finds nothing to reclaim without swap and
    drops the boost.  Placed passes, which never stop at a watermark, wake
    it less, whatever the cache does.  -1 (the counter missing) is left out."""
    g = group(records)
    most = where(max(records, key=lambda r: r["nodes"])) if records else None
    cells = []
    for v in ("base", "base placed", "off", "on", "placed"):
        runs = [r["pageoutrun"] for r in g.get((v, most, pct, threads), [])
                if r.get("pageoutrun") is not None and r["pageoutrun"] >= 0]
        if runs:
            cells.append("%s %g (%d..%d)" % ((v,) + mmm(runs)))
    if not cells:
        return "  kswapd runs per pass: not recorded"
    return (f"  kswapd runs per pass (pageoutrun) at {most} nodes, {pct}%, {threads} threads: "
            + ", ".join(cells))


def report_text(records, meta):
    """The table and the headline ratios of a run, under its provenance."""
    field = field_of(meta)
    prov = meta.get("provenance", {})
    lines = [f"run {meta.get('name', '?')}: {meta.get('date', '?')}, "
             f"{'instructions counted (QEMU -icount)' if field == 'real' else 'timed'}",
             f"  kernel {prov.get('kernel', '?')}, series {prov.get('series', '?')}, "
             f"{prov.get('qemu', '?')}",
             f"  host {prov.get('host_cpu', '?')}, plan {json.dumps(meta.get('plan', {}))}",
             f"  config {meta.get('config') or 'configs/guest.config'}"
             + (f", kernel command line + {meta['append']}" if meta.get("append") else ""),
             numa_balancing_line(records),
             ""]
    if meta.get("command"):
        lines.insert(1, f"  again: {meta['command']}")
    for f in reversed(meta.get("hog_failures") or []):
        lines.insert(0, f"THE HOG'S OWN CHECK FAILED: {f}")
    if meta.get("provenance", {}).get("draft"):
        lines.insert(0, f"DRAFT, not a run of record: {meta['provenance']['draft']}")
    if any("topology" in r for r in records):
        return "\n".join(lines) + "\n" + reference_text(records, field) + "\n" \
            + kswapd_line(records), reference_summary(records, field)
    h = headline(records, field=field)
    lines.append(icount_table(records) if field == "real" else table(records))
    return "\n".join(lines) + "\n\n" + headline_text(h) + "\n" + kswapd_line(records), h


def reference_summary(records, field):
    """run.json's headline for a run with topologies: each topology's
    ratios (median, all-pairs min, max) and whether its placed kinds
    walked nothing."""
    out = {}
    for t, row in reference(records, field=field).items():
        out[str(t)] = {k: v for k, v in row.items()
                       if k not in ("cost", "local", "walked", "recs")}
    return out


def write_run(run_dir, records, meta):
    """run.json (written whole or not at all), report.txt and plot.png."""
    os.makedirs(run_dir, exist_ok=True)
    text, h = report_text(records, meta)
    partial = os.path.join(run_dir, "run.json.partial")
    with open(partial, "w") as f:
        json.dump({"meta": meta, "headline": h, "records": records}, f, indent=1)
    os.replace(partial, os.path.join(run_dir, "run.json"))
    with open(os.path.join(run_dir, "report.txt"), "w") as f:
        f.write(text + "\n")
    plot(records, os.path.join(run_dir, "plot.png"), meta)
    return text


def load_run(path):
    """A run directory (or its run.json) -> (name, data); ValueError when
    there is none."""
    f = path if path.endswith(".json") else os.path.join(path, "run.json")
    if not os.path.isfile(f):
        raise ValueError(f"{path}: no run.json (a named run is a directory results/NAME/ "
                         "that 'make bench NAME=...' wrote)")
    with open(f) as fh:
        data = json.load(fh)
    name = data["meta"].get("name") or os.path.basename(os.path.dirname(os.path.abspath(f)))
    return name, data


# --- comparing runs, the way mmtests' compare-kernels does -----------------------

# Two-sided 5% critical values of Student's t, by degrees of freedom.
T_CRIT = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
          9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042, 40: 2.021,
          60: 2.000, 120: 1.980}


def t_crit(df):
    """The critical value for the largest tabulated df not above df: erring
    towards 'not significant' between the rows."""
    below = [k for k in T_CRIT if k <= df]
    return T_CRIT[max(below)] if below else T_CRIT[1]


def significant(a, b):
    """Welch's t-test at 5%, two-sided: do samples a and b differ?  None
    when it cannot tell: either has fewer than two values, or neither
    varies (counted runs repeat values; no spread, no test)."""
    if len(a) < 2 or len(b) < 2:
        return None
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    if va + vb == 0:
        return None
    t = abs(ma - mb) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / ((va ** 2 / (len(a) - 1) if va else 0) +
                           (vb ** 2 / (len(b) - 1) if vb else 0))
    return t > t_crit(df)


def _cell(value, first, mark):
    if value is None:
        return f"{'-':>10} {'':11}"
    if first is None or not first:
        return f"{value:10.4f} {'':11}"
    pct = 100.0 * (value - first) / first
    m = "*" if mark else " "
    return f"{value:10.4f} {m}{pct:8.2f}%{m}"


def compare(runs):
    """mmtests-style comparison of runs [(name, data)]: statistics in rows,
    runs in columns (or, for a single run, its variants), each cell with its
    change against the first column; '*' marks a change that Welch's t-test
    finds significant at 5% over the passes."""
    fields = {field_of(d["meta"]) for _, d in runs}
    if len(fields) > 1:
        raise ValueError("cannot compare a counted run (-icount) with a timed one")
    field = fields.pop()
    unit = "Ginsn/GiB" if field == "real" else "sys s/GiB"
    if len(runs) == 1:
        name, data = runs[0]
        g = group(data["records"])
        cols = [v for v in ("base", "base placed", "off", "on", "placed")
                if any(k[0] == v for k in g)]
        rows = {k[1:] for k in g}
        rows = sorted(rows, key=lambda k: (str(k[0]), k[1], k[2]))
        samples = [[[per_gib(r, field) for r in g.get((c, *row), [])] for c in cols] for row in rows]
        labels = [f"{topo_label(n)} {p}% {t}thr" for n, p, t in rows]
        heads = cols
        title = f"{name}: variants side by side, {unit} (lower is better; + is costlier)"
    else:
        gs = [group(d["records"]) for _, d in runs]
        keys = sorted({k for g in gs for k in g}, key=lambda k: (str(k[1]), k[2], k[3], k[0]))
        samples = [[[per_gib(r, field) for r in g.get(k, [])] for g in gs] for k in keys]
        labels = [f"{v} {topo_label(n)} {p}% {t}thr" for v, n, p, t in keys]
        heads = [name for name, _ in runs]
        title = f"{unit} (lower is better; + is costlier), change against {heads[0]}"
    width = max(len(l) for l in labels) + 8
    colw = max([22] + [len(h) for h in heads]) + 1
    out = [title, " " * width + "".join(h.rjust(colw) for h in heads)]
    stats = (("Amean", statistics.fmean), ("Min", min), ("Max", max))
    for label, row in zip(labels, samples):
        for stat, fn in stats:
            vals = [fn(s) if s else None for s in row]
            cells = [_cell(v, vals[0], stat == "Amean" and i and significant(row[0], s))
                     for i, (v, s) in enumerate(zip(vals, row))]
            out.append(f"{stat:<7} {label:<{width - 8}}" + "".join(c.rjust(colw) for c in cells))
    refs = [any("topology" in r for r in d["records"]) for _, d in runs]
    if len(runs) > 1 and any(refs):
        out.append("")
        out.append("reference ratios (medians' ratio)" + " " * (width - 33)
                   + "".join(h.rjust(colw) for h in heads))
        rs = [reference(d["records"], field=field) if ref else {} for (_, d), ref in
              zip(runs, refs)]
        for t in sorted({t for r in rs for t in r}, key=str):
            for key in ("on/placed", "on/floor", "on/base", "off/base"):
                vals = [(r.get(t, {}).get(key) or (None,))[0] for r in rs]
                if any(v is not None for v in vals):
                    out.append(f"{topo_label(t) + ' ' + key:<{width}}" +
                               "".join(_cell(v, vals[0], False).rjust(colw) for v in vals))
    elif len(runs) > 1:
        out.append("")
        out.append("headline ratios" + " " * (width - 15) + "".join(h.rjust(colw) for h in heads))
        hs = [d.get("headline") or headline(d["records"], field=field) for _, d in runs]
        for key in RATIO_KEYS:
            vals = [h.get(key) for h in hs]
            if any(v is not None for v in vals):
                out.append(f"{key:<{width}}" +
                           "".join(_cell(v, vals[0], False).rjust(colw) for v in vals))
    out.append("('*': Welch's t-test over the passes finds the change significant at 5%)")
    bases = [(d["meta"].get("provenance") or {}).get("base") for _, d in runs]
    if None not in bases and len(set(bases)) > 1 and not any(refs):
        out += ["", kernels_table(runs, field)]
    return "\n".join(out)


def kernels_table(runs, field, pct=HEADLINE["pct"], threads=HEADLINE["threads"]):
    """Runs of different base kernels: each run's unpatched base and its
    series with the cache on, as kernels side by side, at the most nodes
    every run has (pct% of memory, threads threads) and on one node, with
    each kernel's cost against the last run's base.  Only a counted
    figure compares kernels across runs: a timed one drifts between boots."""
    common = set.intersection(*({r["nodes"] for r in d["records"]} for _, d in runs))
    if not common:
        return "kernels side by side: the runs have no node count in common"
    nodes = max(common)
    unit = "Ginsn/GiB" if field == "real" else "sys s/GiB"
    rows = []
    for v, what in (("base", "unpatched"), ("on", "series, cache on")):
        for name, d in runs:
            prov = d["meta"].get("provenance") or {}
            kernel = prov.get("kernel", "?").split("-g")[0]
            cells = []
            for n in (nodes, 1):
                recs = [r for r in d["records"] if variant(r) == v and r["nodes"] == n
                        and r["mem_pct"] == pct and r["threads"] == threads]
                cells.append(mmm([per_gib(r, field) for r in recs]) if recs else None)
            rows.append((f"{kernel} {what} ({name})", cells))
    ref = rows[len(runs) - 1][1][0]
    w = max(len(label) for label, _ in rows) + 2
    out = [f"kernels side by side: {unit} at {pct}% of memory, {threads} threads, "
           f"median (min..max); 'vs' against {rows[len(runs) - 1][0]}",
           f"{'kernel':{w}s}{str(nodes) + ' nodes':>26s}{'vs':>7s}{'1 node':>26s}"
           f"{'/1 node':>9s}"]

    def f(c):
        return "%.4f (%.4f..%.4f)" % c if c else "-"

    def r(a, b):
        x = ratio(a and a[0], b and b[0])
        return "-" if x is None else f"{x:.3f}"

    for label, (many, one) in rows:
        out.append(f"{label:{w}s}{f(many):>26s}{r(many, ref):>7s}{f(one):>26s}"
                   f"{r(many, one):>9s}")
    if field != "real":
        out.append("(timed runs: between boots these drift by 10% and more; "
                   "count them, ICOUNT=1)")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m zlctool.report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", help="run directories (results/NAME) or run.json files")
    p.add_argument("--remake", action="store_true",
                   help="write each run's report.txt and plot.png again")
    args = p.parse_args(argv)
    try:
        runs = [(path, load_run(path)) for path in args.runs]
        if args.remake:
            for path, (name, data) in runs:
                print(write_run(path, data["records"], data["meta"]))
            return 0
        print(compare([run for _, run in runs]))
    except ValueError as e:
        print(f"report: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
