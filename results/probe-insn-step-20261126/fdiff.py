import bisect, collections, subprocess, sys
vm = sys.argv[1]
syms = []
for l in subprocess.run(["nm", "-n", vm], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if len(f) == 3 and f[1] in "tTwW":
        syms.append((int(f[0], 16), f[2]))
addrs = [a for a, _ in syms]
def load(fn):
    d = collections.Counter()
    for l in open(fn):
        a, n, e = l.split(); a = int(a, 16)
        i = bisect.bisect_right(addrs, a) - 1
        if i >= 0: d[syms[i][1]] += int(n) * int(e)
    return d
A = [load(f) for f in sys.argv[2:6]]  # on2 on1 cmpP cmp
keys = set().union(*A)
on = {k: A[0][k] - A[1][k] for k in keys}
pl = {k: A[2][k] - A[3][k] for k in keys}
print("total on pass %.1fM placed pass %.1fM" % (sum(on.values())/1e6, sum(pl.values())/1e6))
rows = sorted(keys, key=lambda k: -abs(on[k] - pl[k]))
for k in rows[:40]:
    print("%-40s on %9.2fM placed %9.2fM diff %8.2fM" % (k, on[k]/1e6, pl[k]/1e6, (on[k]-pl[k])/1e6))
