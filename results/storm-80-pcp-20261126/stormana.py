import sys, statistics as st
sys.path.insert(0, "/work/main")
from zlctool import workloads
samples = []
for path, kernel in zip(sys.argv[1::2], sys.argv[2::2]):
    lines = open(path, errors="replace").read().splitlines()
    samples += [s for s in workloads.parse_console(lines, kernel) if s.get("workload") == "storm"]
for s in samples:
    v = s["vmstat"]
    ch = [l for l in s["loads"] if l["load"] == "churn"]
    own = sum(l["pages_per_node"][l["node"]] if len(l["pages_per_node"]) > l["node"] else 0 for l in ch)
    tot = sum(sum(l["pages_per_node"]) for l in ch)
    hog = [l for l in s["loads"] if l["load"] == "hog"][0]
    print("hog passes %5d" % hog.get("passes", 0), end=" ")
    print("%-5s us/pg %.3f loops %5d compact_stall %5d thp %5d fb %4d remote %.2f churn-own %.1f%% rec %5d wipe %5d mark %5d" % (
        s["variant"], workloads.storm_us_per_page(s) or 0, sum(l["loops"] for l in ch), v.get("compact_stall", 0),
        v.get("thp_fault_alloc", 0), v.get("thp_fault_fallback", 0), s.get("remote_pct") or 0,
        100.0 * own / tot if tot else 0, v.get("zlc_recover", 0), v.get("zlc_wipe", 0), v.get("zlc_mark_full", 0)))
