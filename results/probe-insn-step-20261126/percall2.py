"""Instructions per call of the allocator's walk, from tbprof outputs:
python3 percall2.py VMLINUX TB-ON TB-OFF.  Each boot ran the hog's default
(cache on) warm-up once and MODE passes after it; calls that reached the
cache's walk are told apart by its entry block (or, in a kernel with one
function for both walks, by the block that tests ALLOC_ZLC)."""
import collections, subprocess, sys
vmlinux = sys.argv[1]
want = ("get_page_from_freelist", "get_page_from_freelist_walk",
        "get_page_from_freelist_zlc", "__alloc_frozen_pages_noprof")
syms = {}
for l in subprocess.run(["nm", "-S", vmlinux], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if len(f) == 4 and f[3] in want:
        syms[f[3]] = (int(f[0], 16), int(f[1], 16))
for fn in sys.argv[2:]:
    d = collections.defaultdict(lambda: [0, 0])
    for l in open(fn):
        a, n, e = l.split(); a = int(a, 16); d[a][0] = int(n); d[a][1] += int(e)
    print(fn)
    for k, (a, s) in sorted(syms.items()):
        tot = sum(n * e for x, (n, e) in d.items() if a <= x < a + s)
        print(f"  {k:30s} {tot/1e6:8.2f}M instructions, {d[a][1]:7d} calls, {tot/max(d[a][1],1):6.1f} a call")
