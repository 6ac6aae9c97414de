"""Memory hotplug under a spilling hog, then the KUnit suite again.

    python3 -m zlctool.hotplug --kernel bzImage --hog zonelist_cache_memhog \
        --summary build/test-results/hotplug.counts

The kernel is the guest config with the zonelist_cache KUnit suite built in
(configs/hotplug.config).  The guest has 4 nodes, half of each node's
memory in ZONE_MOVABLE (movablecore=50%), so that its memory blocks can go
offline.  While the selftest hog allocates past the local node with the
cache on, every movable block of the last node goes offline and comes back
online, several times: each time the node's Movable zone empties or fills,
the zonelists are rebuilt under the running allocations.  Afterwards the
suite is run again through /sys/kernel/debug/kunit/zonelist_cache/run, so
that its cases (z_to_n against the rebuilt zonelists among them) check the
cache as hotplug left it.  Any warning, oops or KCSAN report on the console
fails the run (zlctool.qemu); so does a block that would not go offline
or online, a node whose memory did not shrink and grow back, or a hog that
failed.
"""

import argparse
import re
import sys

from . import qemu, summary
from .topology import Topology

NODE = 3
CYCLES = 3

GUEST = r"""
set -u
mount -t debugfs none /sys/kernel/debug
node=/sys/devices/system/node/node{node}
total() {{ awk '/MemTotal/ {{ print $4 }}' $node/meminfo; }}
blocks=""
for b in $node/memory*; do
	grep -q Movable $b/valid_zones && blocks="$blocks $b"
done
[ -n "$blocks" ] || {{ echo "zlc-hotplug: no movable block on node {node}"; exit 1; }}
echo "zlc-hotplug: blocks$(for b in $blocks; do printf ' %s' ${{b##*/}}; done)"
before=$(total)
avail=$(awk '/^MemAvailable:/ {{ print int($2 / 1024) }}' /proc/meminfo)
(while [ ! -f /tmp/stop ]; do
	zonelist_cache_memhog -m on -s $((avail * 55 / 100)) -t 2 -r 1 -j >> /tmp/hog.log 2>&1 ||
		echo "not ok - the hog exited with $?" >> /tmp/hog.log
done) &
hog=$!
sleep 1
for cycle in $(seq {cycles}); do
	for b in $blocks; do
		echo offline > $b/state || {{ echo "zlc-hotplug: $b would not go offline"; exit 1; }}
	done
	echo "zlc-hotplug: cycle $cycle offline node{node} MemTotal $(total) kB (was $before)"
	[ "$(total)" -lt "$before" ] || {{ echo "zlc-hotplug: node {node} did not shrink"; exit 1; }}
	sleep 1
	for b in $blocks; do
		echo online_movable > $b/state || {{ echo "zlc-hotplug: $b would not come online"; exit 1; }}
	done
	echo "zlc-hotplug: cycle $cycle online node{node} MemTotal $(total) kB"
	[ "$(total)" -eq "$before" ] || {{ echo "zlc-hotplug: node {node} did not grow back"; exit 1; }}
	sleep 1
done
touch /tmp/stop; wait $hog
grep -q '^ok ' /tmp/hog.log || {{ echo "zlc-hotplug: the hog passed nothing"; cat /tmp/hog.log; exit 1; }}
grep '^not ok' /tmp/hog.log && exit 1
echo "zlc-hotplug: $(grep -E '^(zlc_|numa_miss)' /proc/vmstat | tr '\n' ' ')"
echo "zlc-hotplug: hog runs $(grep -c zlc-run /tmp/hog.log), checks passed $(grep -c '^ok ' /tmp/hog.log)"
echo go > /sys/kernel/debug/kunit/zonelist_cache/run
echo "zlc-hotplug: rerun"
sed 's/^/zlc-rerun: /' /sys/kernel/debug/kunit/zonelist_cache/results
"""


def count_rerun(lines):
    """(passed, failed, skipped) of the suite's re-run (zlc-rerun: KTAP)."""
    passed = failed = skipped = 0
    for line in lines:
        m = re.search(r"zlc-rerun: \s*(not ok|ok) \d+ (zlc_test_\w+)(.*)$", line)
        if not m:
            continue
        if "# SKIP" in m.group(3):
            skipped += 1
        elif m.group(1) == "ok":
            passed += 1
        else:
            failed += 1
    return passed, failed, skipped


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m zlctool.hotplug", description=__doc__)
    p.add_argument("--kernel", required=True, help="guest kernel with the KUnit suite built in")
    p.add_argument("--hog", required=True, help="the statically built selftest")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--summary")
    args = p.parse_args(argv)

    passed = failed = skipped = 0
    try:
        res = qemu.run(args.kernel, Topology.make(4, "2G", "2"),
                       GUEST.format(node=NODE, cycles=CYCLES), binaries=[args.hog],
                       timeout=args.timeout, append="movablecore=50%")
        for line in res.lines:
            if "zlc-hotplug" in line or re.search(r"zlc-rerun: \s*(not )?ok", line):
                print(f"[hotplug] {line}")
        p_, f_, s_ = count_rerun(res.lines)
        offlined = sum(1 for l in res.lines if re.search(r"zlc-hotplug: cycle \d+ offline", l))
        ok = res.status == 0 and offlined == CYCLES and p_ > 0 and f_ == 0
        print(f"[hotplug] exit {res.status}, {offlined}/{CYCLES} offline/online cycles, re-run: "
              f"{p_} passed, {f_} failed, {s_} skipped" + ("" if ok else "  <-- expected all to pass"))
        passed, failed, skipped = p_ + (1 if ok else 0), f_ + (0 if ok else 1), s_
    except qemu.GuestError as e:
        print(f"[hotplug] {e}", file=sys.stderr)
        failed += 1
    summary.write(args.summary, passed, failed, skipped)
    print(f"[hotplug] {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
