"""One row per storm sample of a make bench run, from its workloads.json:
python3 stormana.py results/RUN/workloads.json
The hog's passes, guest us per churned page (as zlctool/workloads.py's
storm_us_per_page), the churners' loops, THP faults and fallbacks,
compaction stalls, remote % of all pages, the churners' pages on their own
node (move_pages), and the cache's recoveries, wipes and marks."""
import json
import os
import sys

# The project's own storm figures, from the checkout this file is in.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from zlctool import workloads  # noqa: E402

for s in json.load(open(sys.argv[1]))["samples"]["storm"]:
    v = s["vmstat"]
    ch = [l for l in s["loads"] if l["load"] == "churn"]
    hog = next(l for l in s["loads"] if l["load"] == "hog")
    us = workloads.storm_us_per_page(s)
    own = sum(l["pages_per_node"][l["node"]] for l in ch if len(l["pages_per_node"]) > l["node"])
    tot = sum(sum(l["pages_per_node"]) for l in ch)
    print("%-5s hog passes %5d us/page %.3f loops %5d thp %5d fallback %4d compact_stall %5d "
          "remote %5.2f%% churn own node %5.1f%% recover %5d wipe %5d mark %5d" % (
              s["variant"], hog.get("passes", 0), us, sum(l["loops"] for l in ch),
              v.get("thp_fault_alloc", 0), v.get("thp_fault_fallback", 0),
              v.get("compact_stall", 0), s.get("remote_pct") or 0, 100.0 * own / tot,
              v.get("zlc_recover", 0), v.get("zlc_wipe", 0), v.get("zlc_mark_full", 0)))
