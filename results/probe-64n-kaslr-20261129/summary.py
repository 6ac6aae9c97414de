#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Ginsn/GiB of probe.txt's passes (the guest clock under -icount, per GiB
touched), median (min..max) per kernel, kind and boot option, and ratios
as the bench gives them: medians' ratio, all-pairs min..max."""
import json
import os
import re
import statistics as st

here = os.path.dirname(os.path.abspath(__file__))
rows, where = {}, None
for line in open(os.path.join(here, "probe.txt")):
    m = re.match(r"### boot=(\d) (\S+) (\S+)", line)
    if m:
        where = m.group(2), m.group(3)
        continue
    m = re.match(r"probe kind=(\S+) (\{.*\})", line)
    if m:
        d = json.loads(m.group(2))
        rows.setdefault(where + (m.group(1),), []).append(d["real"] / (d["mib"] / 1024))


def ratio(a, b):
    r = [x / y for x in a for y in b]
    return f"{st.median(a) / st.median(b):.3f} ({min(r):.3f}..{max(r):.3f})"


for opt in ("nokaslr", "kaslr"):
    print(f"{opt}:")
    for k in sorted(k for k in rows if k[0] == opt):
        v = rows[k]
        print(f"  {k[1]:4} {k[2]:4} {st.median(v):.3f} ({min(v):.3f}..{max(v):.3f})  {len(v)} passes")
    base = rows[(opt, "base", "asis")]
    for kern in ("v1", "v25"):
        for kind in ("on", "off"):
            print(f"  {kern} {kind}/7.3.4: {ratio(rows[(opt, kern, kind)], base)}")
    print(f"  v25 on/v1 on: {ratio(rows[(opt, 'v25', 'on')], rows[(opt, 'v1', 'on')])}")
