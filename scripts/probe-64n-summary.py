#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""What scripts/probe-64n.sh's record says: per boot option, each kernel's
release and node 0's DMA32 zone, each kind's Ginsn/GiB (the guest clock
under -icount, per GiB touched), median (min..max), and ratios as the
bench gives them: the medians' ratio, then min..max over all pairs."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from zlctool.report import fmt_pairs, mmm, pairs  # noqa: E402


def main(path):
    rows, seen, where = {}, {}, None
    lines = open(path).read().splitlines()
    for line in lines:
        m = re.match(r"### boot=(\d) (\S+) (\S+)", line)
        if m:
            where = m.group(2), m.group(3)
            continue
        if line.startswith(("release ", "node0-dma32")):
            seen.setdefault(where, set()).add(line)
            continue
        m = re.match(r"probe kind=(\S+) (\{.*\})", line)
        if m:
            d = json.loads(m.group(2))
            rows.setdefault(where + (m.group(1),), []).append(d["real"] / (d["mib"] / 1024))
        elif line.startswith("guest:") and "exited 0" not in line:
            sys.exit(f"probe-64n-summary: a boot failed: {line}")

    def ratio(a, b):
        return fmt_pairs(pairs(a, b))

    for line in lines[:2]:
        print(line.lstrip("# "))
    for opt in ("nokaslr", "kaslr"):
        print(f"{opt}:")
        for k in sorted(k for k in seen if k[0] == opt):
            for line in sorted(seen[k]):
                print(f"  {k[1]:6} {line}")
        for k in sorted(k for k in rows if k[0] == opt):
            v = rows[k]
            print(f"  {k[1]:6} {k[2]:4} {fmt_pairs(mmm(v))}  {len(v)} passes")
        base = rows[(opt, "base", "asis")]
        # v1x is in the records from probe-64n-v1x-20261129 on.
        kerns = [k for k in ("v1", "v1x", "series") if (opt, k, "on") in rows]
        for kern in kerns:
            for kind in ("on", "off"):
                print(f"  {kern} {kind}/7.3.4: {ratio(rows[(opt, kern, kind)], base)}")
        for a, b in (("series", "v1"), ("series", "v1x"), ("v1x", "v1")):
            if a in kerns and b in kerns:
                print(f"  {a} on/{b} on: {ratio(rows[(opt, a, 'on')], rows[(opt, b, 'on')])}")


if __name__ == "__main__":
    main(sys.argv[1])
