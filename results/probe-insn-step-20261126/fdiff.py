"""Per-function kernel instructions between tbprof boots (probe-insn-profile's
tbprof.c output, plain or gzipped), symbolized against VMLINUX (or a
symbol list in nm's format, such as the guest's /proc/kallsyms):
  python3 fdiff.py VMLINUX A B [N]          boot A against boot B
  python3 fdiff.py VMLINUX A2 A1 B2 B1 [N]  one pass against another: (A2 - A1)
                                            against (B2 - B1), boots that differ
                                            only in how many passes they ran"""
import bisect, collections, gzip, subprocess, sys

args = sys.argv[1:]
top = int(args.pop()) if args[-1].isdigit() else 30
vm, files = args[0], args[1:]


def text(fn):
    return gzip.open(fn, "rt") if fn.endswith(".gz") else open(fn)


with open(vm, "rb") as f:
    elf = f.read(4) == b"\x7fELF"
lines = (subprocess.run(["nm", "-n", vm], capture_output=True, text=True).stdout.splitlines()
         if elf else text(vm))
syms = sorted((int(f[0], 16), f[2]) for f in (l.split() for l in lines)
              if len(f) == 3 and f[1] in "tTwW")
addrs = [a for a, _ in syms]


def load(fn):
    d = collections.Counter()
    for l in text(fn):
        a, n, e = l.split()
        i = bisect.bisect_right(addrs, int(a, 16)) - 1
        if i >= 0:
            d[syms[i][1]] += int(n) * int(e)
    return d


c = [load(f) for f in files]
if len(c) == 4:
    a = {k: c[0][k] - c[1][k] for k in set().union(*c)}
    b = {k: c[2][k] - c[3][k] for k in set().union(*c)}
else:
    a, b = c
keys = set(a) | set(b)
A, B = sum(a.get(k, 0) for k in keys), sum(b.get(k, 0) for k in keys)
print("total A %.1fM B %.1fM diff %.1fM" % (A / 1e6, B / 1e6, (A - B) / 1e6))
for k in sorted(keys, key=lambda k: -abs(a.get(k, 0) - b.get(k, 0)))[:top]:
    print("%-40s A %9.2fM B %9.2fM diff %8.2fM" %
          (k, a.get(k, 0) / 1e6, b.get(k, 0) / 1e6, (a.get(k, 0) - b.get(k, 0)) / 1e6))
