"""Memory hotplug under a spilling hog, then the KUnit suite again.

    python3 -m zlctool.hotplug --kernel bzImage --hog zonelist_cache_memhog \
        --summary build/test-results/hotplug.counts

The kernel is the guest config with ACPI memory hotplug and the
zonelist_cache KUnit suite built in (configs/hotplug.config).  The guest
has 4 nodes and a 256 MiB DIMM on node 3 that the kernel hot-adds through
ACPI at boot and leaves offline (memhp_default_state=offline).  While the
selftest hog allocates past the local node with the cache on, the DIMM's
memory blocks are onlined into ZONE_MOVABLE, which node 3 did not have,
then taken offline and online again, several times: each time the zone
fills or empties, the zonelists are rebuilt under the running allocations
and zonerefs move.  Afterwards the
suite is run again through /sys/kernel/debug/kunit/zonelist_cache/run, so
that its cases (z_to_n against the rebuilt zonelists among them) check the
cache as hotplug left it.  Before that, /sys/kernel/debug/zonelist_cache
must list the zonelist of every node.  Any warning, oops or KCSAN report on the console
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
DIMM_MIB = 256

GUEST = r"""
set -u
mount -t debugfs none /sys/kernel/debug
node=/sys/devices/system/node/node{node}
total() {{ awk '/MemTotal/ {{ print $4 }}' $node/meminfo; }}
# The hot-added DIMM: node {node}'s blocks that the kernel left offline.
blocks=""
for b in $node/memory*; do
	[ "$(cat $b/state)" = offline ] && blocks="$blocks $b"
done
[ -n "$blocks" ] || {{ echo "zlc-hotplug: no hot-added block on node {node}"; exit 1; }}
echo "zlc-hotplug: hot-added blocks$(for b in $blocks; do printf ' %s' ${{b##*/}}; done)"
# Pages present in node {node}'s Movable zone: it fills and empties with the
# DIMM, and each of those transitions rebuilds the zonelists.
movable() {{ awk '/^Node {node}, zone *Movable/ {{ f = 1 }} f && /present/ {{ print $2; exit }}' /proc/zoneinfo; }}
[ "$(movable)" = 0 ] || {{ echo "zlc-hotplug: node {node} has a Movable zone before the DIMM"; exit 1; }}
before=$(total)
avail=$(awk '/^MemAvailable:/ {{ print int($2 / 1024) }}' /proc/meminfo)
(while [ ! -f /tmp/stop ]; do
	zonelist_cache_memhog -m on -s $((avail * 55 / 100)) -t 2 -r 1 -j >> /tmp/hog.log 2>&1 ||
		echo "not ok - the hog exited with $?" >> /tmp/hog.log
done) &
hog=$!
sleep 1
online() {{
	for b in $blocks; do
		echo online_movable > $b/state || {{ echo "zlc-hotplug: $b would not come online"; exit 1; }}
	done
	grown=$(total)
	echo "zlc-hotplug: $1 online node{node} MemTotal $grown kB (was $before), Movable present $(movable)"
	[ "$grown" -gt "$before" ] || {{ echo "zlc-hotplug: node {node} did not grow"; exit 1; }}
	[ "$(movable)" -gt 0 ] || {{ echo "zlc-hotplug: node {node} Movable zone still empty"; exit 1; }}
	sleep 1
}}
online hot-add
for cycle in $(seq {cycles}); do
	for b in $blocks; do
		echo offline > $b/state || {{ echo "zlc-hotplug: $b would not go offline"; exit 1; }}
	done
	echo "zlc-hotplug: cycle $cycle offline node{node} MemTotal $(total) kB, Movable present $(movable)"
	[ "$(total)" -eq "$before" ] || {{ echo "zlc-hotplug: node {node} did not shrink back"; exit 1; }}
	[ "$(movable)" = 0 ] || {{ echo "zlc-hotplug: node {node} Movable zone not emptied"; exit 1; }}
	sleep 1
	online "cycle $cycle"
done
# What the cache holds now, as a user would look at it: the zonelist of
# every node must be listed (the marks it shows are not checked).
dbg=/sys/kernel/debug/zonelist_cache
sed 's/^/zlc-debugfs: /' $dbg
[ "$(grep -c '^node [0-9]* zonelist:' $dbg)" = 4 ] ||
	{{ echo "zlc-hotplug: $dbg does not list the 4 zonelists"; exit 1; }}
touch /tmp/stop; wait $hog
grep -q '^ok ' /tmp/hog.log || {{ echo "zlc-hotplug: the hog passed nothing"; cat /tmp/hog.log; exit 1; }}
grep '^not ok' /tmp/hog.log && exit 1
echo "zlc-hotplug: $(grep -E '^(zlc_|numa_miss)' /proc/vmstat | tr '\n' ' ')"
echo "zlc-hotplug: hog runs $(grep -c zlc-run /tmp/hog.log), checks passed $(grep -c '^ok ' /tmp/hog.log)"
echo "zlc-hotplug: rerun"
echo go > /sys/kernel/debug/kunit/zonelist_cache/run
sed 's/^/zlc-rerun: /' /sys/kernel/debug/kunit/zonelist_cache/results
"""


def dimm_args(topo):
    """QEMU options for a DIMM on node NODE, added to the topology's memory."""
    return ["-m", f"{topo.total_mib}M,slots=2,maxmem={topo.total_mib + 2 * DIMM_MIB}M",
            "-object", f"memory-backend-ram,id=hp0,size={DIMM_MIB}M",
            "-device", f"pc-dimm,id=dimm0,memdev=hp0,node={NODE}"]


def rerun_reported(lines):
    """Did the kernel log a suite summary after the re-run was asked for?
    Without one, the results file could still be the boot-time run's."""
    try:
        start = next(i for i, l in enumerate(lines) if "zlc-hotplug: rerun" in l)
    except StopIteration:
        return False
    return any(re.search(r"# zonelist_cache: pass:\d+ fail:0", l) for l in lines[start:])


def count_rerun(lines):
    """(passed, failed, skipped) of the suite's re-run (zlc-rerun: KTAP)."""
    found = (re.search(r"zlc-rerun: \s*(not ok|ok) \d+ (zlc_test_\w+)(.*)$", line) for line in lines)
    return summary.tally((m.group(1), m.group(3)) for m in found if m)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m zlctool.hotplug", description=__doc__)
    p.add_argument("--kernel", required=True, help="guest kernel with the KUnit suite built in")
    p.add_argument("--hog", required=True, help="the statically built selftest")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--summary")
    p.add_argument("--log", help="keep the guest's console here (default: a temporary file)")
    args = p.parse_args(argv)

    passed = failed = skipped = 0
    try:
        topo = Topology.make(4, "2G", "2")
        res = qemu.run(args.kernel, topo,
                       GUEST.format(node=NODE, cycles=CYCLES), binaries=[args.hog],
                       timeout=args.timeout, log=args.log,
                       # loglevel=7: the KUnit run at boot prints its TAP at
                       # KERN_INFO, so a console that stops says where.
                       append="memhp_default_state=offline loglevel=7",
                       extra=dimm_args(topo))
        for line in res.lines:
            if re.search(r"zlc-(hotplug|debugfs)", line) or re.search(r"zlc-rerun: \s*(not )?ok", line):
                print(f"[hotplug] {line}")
        p_, f_, s_ = count_rerun(res.lines)
        offlined = sum(1 for l in res.lines if re.search(r"zlc-hotplug: cycle \d+ offline", l))
        fresh = rerun_reported(res.lines)
        ok = res.status == 0 and offlined == CYCLES and p_ > 0 and f_ == 0 and fresh
        if not fresh:
            print("[hotplug] the kernel logged no passing suite summary after the re-run")
        print(f"[hotplug] exit {res.status}, {offlined}/{CYCLES} offline/online cycles, re-run: "
              f"{p_} passed, {f_} failed, {s_} skipped" + ("" if ok else "  <-- expected all to pass"))
        passed, failed, skipped = p_ + (1 if ok else 0), f_ + (0 if ok else 1), s_
    except qemu.GuestError as e:
        print(f"[hotplug] {e}", file=sys.stderr)
        failed += 1
    return summary.finish("hotplug", args.summary, passed, failed, skipped)


if __name__ == "__main__":
    sys.exit(main())
