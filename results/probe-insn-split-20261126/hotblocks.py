"""A function's translation blocks that ran at least MIN times, with their
disassembly: python3 hotblocks.py VMLINUX TB.txt FUNCTION MIN"""
import collections, sys, subprocess
vmlinux, fn, sym, minexec = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
nm = subprocess.run(["nm", "-S", vmlinux], capture_output=True, text=True).stdout.splitlines()
a0, sz = [(int(f[0], 16), int(f[1], 16)) for f in (l.split() for l in nm) if len(f) == 4 and f[3] == sym][0]
dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", vmlinux, f"--disassemble={sym}"], capture_output=True, text=True).stdout.splitlines()
idx = {}
for i, l in enumerate(dis):
    try: idx[int(l.strip().split(':')[0], 16)] = i
    except ValueError: pass
d = collections.defaultdict(lambda: [0, 0])
for l in open(fn):
    a, n, e = l.split(); a = int(a, 16); d[a][0] = int(n); d[a][1] += int(e)
tot = 0
for x in sorted(d):
    if a0 <= x < a0 + sz and d[x][1] >= minexec:
        n, e = d[x]; tot += n
        print(f"--- {hex(x)} {n} insns x{e}")
        print("\n".join(dis[idx[x]:idx[x] + n]))
print("hot path instructions:", tot)
