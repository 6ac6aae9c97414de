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
A, B = load(sys.argv[2]), load(sys.argv[3])
keys = set(A) | set(B)
print("total A %.1fM B %.1fM diff %.1fM" % (sum(A.values())/1e6, sum(B.values())/1e6, (sum(A.values())-sum(B.values()))/1e6))
for k in sorted(keys, key=lambda k: -abs(A[k] - B[k]))[:int(sys.argv[4]) if len(sys.argv) > 4 else 30]:
    print("%-40s A %9.2fM B %9.2fM diff %8.2fM" % (k, A[k]/1e6, B[k]/1e6, (A[k]-B[k])/1e6))
