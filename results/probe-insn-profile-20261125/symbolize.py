"""Per-function guest instructions from tbprof.so outputs, against System.map:
python3 symbolize.py SYSTEM.MAP A.txt [B.txt]  (B: also print A-B per function)"""
import bisect, collections, sys

def load_map(path):
    addrs, names = [], []
    for line in open(path):
        a, t, n = line.split()[:3]
        if t.lower() in "tw":
            addrs.append(int(a, 16)); names.append(n)
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]

def profile(path, addrs, names):
    per = collections.Counter()
    for line in open(path):
        va, n, e = line.split()
        i = bisect.bisect_right(addrs, int(va, 16)) - 1
        per[names[i] if i >= 0 else "?"] += int(n) * int(e)
    return per

addrs, names = load_map(sys.argv[1])
a = profile(sys.argv[2], addrs, names)
ta = sum(a.values())
if len(sys.argv) == 3:
    for n, v in a.most_common(40):
        print(f"{v / 1e6:12.2f}M {100 * v / ta:6.2f}%  {n}")
    print(f"total {ta / 1e9:.3f} G")
else:
    b = profile(sys.argv[3], addrs, names)
    tb = sum(b.values())
    print(f"total A {ta / 1e9:.4f} G, B {tb / 1e9:.4f} G, A-B {(ta - tb) / 1e6:.1f} M")
    d = {n: a[n] - b[n] for n in set(a) | set(b)}
    for n in sorted(d, key=lambda n: -abs(d[n]))[:45]:
        print(f"{d[n] / 1e6:10.2f}M  A {a[n] / 1e6:10.2f}M  B {b[n] / 1e6:10.2f}M  {n}")
