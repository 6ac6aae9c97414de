#!/bin/sh
# shellcheck shell=sh
# make hotplug, in the guest (see zlctool/hotplug.py): node NODE's
# hot-added DIMM goes online and offline CYCLES times under a spilling
# hog, CPU 1 as many times, node NODE is filled and emptied, then the
# KUnit suite runs again.
#
#   NODE=3 CYCLES=3 hotplug.sh
set -u
: "${NODE:?}" "${CYCLES:?}"
mount -t debugfs none /sys/kernel/debug
mount -t tracefs nodev /sys/kernel/tracing
node=/sys/devices/system/node/node$NODE
total() { awk '/MemTotal/ { print $4 }' "$node/meminfo"; }
# The hot-added DIMM: node $NODE's blocks that the kernel left offline.
blocks=""
for b in "$node"/memory*; do
	[ "$(cat "$b/state")" = offline ] && blocks="$blocks $b"
done
[ -n "$blocks" ] || { echo "zlc-hotplug: no hot-added block on node $NODE"; exit 1; }
echo "zlc-hotplug: hot-added blocks$(for b in $blocks; do printf ' %s' "${b##*/}"; done)"
# Pages present in node $NODE's Movable zone: it fills and empties with the
# DIMM, and each of those transitions rebuilds the zonelists.
movable() {
	awk -v zone="^Node $NODE, zone *Movable" '$0 ~ zone { f = 1 } f && /present/ { print $2; exit }' \
		/proc/zoneinfo
}
[ "$(movable)" = 0 ] || { echo "zlc-hotplug: node $NODE has a Movable zone before the DIMM"; exit 1; }
before=$(total)
# What hotplug does to the cache, from its tracepoints: the marks the
# spilling hog makes meanwhile (kmem:mm_zlc_full) and the recoveries
# (kmem:mm_zlc_recover), counted per node by a histogram trigger.  A rebuilt
# zonelist's marks are cleared without a tracepoint; the KUnit suite, run
# again below, checks that.
ev=/sys/kernel/tracing/events/kmem
for e in full recover; do
	echo "hist:keys=node_id:size=512" > $ev/mm_zlc_$e/trigger
done
# hist FULL: "NODE COUNT" per line, marks (1) or recoveries (0).
hist() {
	e=full
	[ "${1:-1}" = 0 ] && e=recover
	grep '^{' $ev/mm_zlc_$e/hist | tr '{}:,' '    ' | awk '{ print $2, $4 }'
}
# start_hog MODE PCT THREADS LOG: the selftest hog in a loop, in the
# background ($hog), touching PCT% of the memory available now, until
# /tmp/stop exists; a pass that fails leaves 'not ok' in LOG.
start_hog() {
	avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
	rm -f /tmp/stop
	(while [ ! -f /tmp/stop ]; do
		zonelist_cache_memhog -m "$1" -s $((avail * $2 / 100)) -t "$3" -r 1 -j >> "$4" 2>&1 ||
			echo "not ok - the hog exited with $?" >> "$4"
	done) &
	hog=$!
	sleep 1
}
start_hog on 55 2 /tmp/hog.log
online() {
	for b in $blocks; do
		echo online_movable > "$b/state" || { echo "zlc-hotplug: $b would not come online"; exit 1; }
	done
	grown=$(total)
	echo "zlc-hotplug: $1 online node$NODE MemTotal $grown kB (was $before), Movable present $(movable)"
	[ "$grown" -gt "$before" ] || { echo "zlc-hotplug: node $NODE did not grow"; exit 1; }
	[ "$(movable)" -gt 0 ] || { echo "zlc-hotplug: node $NODE Movable zone still empty"; exit 1; }
	sleep 1
}
online hot-add
for cycle in $(seq "$CYCLES"); do
	for b in $blocks; do
		echo offline > "$b/state" || { echo "zlc-hotplug: $b would not go offline"; exit 1; }
	done
	echo "zlc-hotplug: cycle $cycle offline node$NODE MemTotal $(total) kB, Movable present $(movable)"
	[ "$(total)" -eq "$before" ] || { echo "zlc-hotplug: node $NODE did not shrink back"; exit 1; }
	[ "$(movable)" = 0 ] || { echo "zlc-hotplug: node $NODE Movable zone not emptied"; exit 1; }
	sleep 1
	online "cycle $cycle"
done
for n in 0 1 2 3; do
	m=$(hist 1 | awk -v n=$n '$1 == n { print $2 }')
	echo "zlc-trace: node $n: ${m:-0} zones marked"
done
touch /tmp/stop; wait $hog
grep -q '^ok ' /tmp/hog.log || { echo "zlc-hotplug: the hog passed nothing"; cat /tmp/hog.log; exit 1; }
grep '^not ok' /tmp/hog.log && exit 1
echo "zlc-hotplug: $(grep -E '^(zlc_|numa_miss)' /proc/vmstat | tr '\n' ' ')"
echo "zlc-hotplug: hog runs $(grep -c zlc-run /tmp/hog.log), checks passed $(grep -c '^ok ' /tmp/hog.log)"
# CPU 1 offline and online, CYCLES times, under a spilling hog: an
# offline CPU's pending counter deltas are folded into its zones
# (cpu_vm_stats_fold()), one of the paths that give a zone free pages.
# The hog runs one thread (on CPU 0: its threads are pinned, and one on
# a CPU that goes away fails); a load that maps, faults and unmaps runs
# on CPU 1, so that CPU 1 has deltas to fold.  While CPU 1 is away the
# kernel moves the load and widens its affinity for good: it is pinned
# to CPU 1 again each time CPU 1 is back.
start_hog on 55 1 /tmp/hog-cpu.log
taskset -c 1 zlcload churn 64 0 0 > /tmp/churn-cpu.log &
churn=$!
cpu=/sys/devices/system/cpu/cpu1/online
[ -w $cpu ] || { echo "zlc-hotplug: cpu1 cannot go offline"; exit 1; }
for cycle in $(seq "$CYCLES"); do
	sleep 1
	echo 0 > $cpu || { echo "zlc-hotplug: cpu1 would not go offline"; exit 1; }
	[ "$(cat $cpu)" = 0 ] || { echo "zlc-hotplug: cpu1 still online"; exit 1; }
	sleep 1
	echo 1 > $cpu || { echo "zlc-hotplug: cpu1 would not come back"; exit 1; }
	[ "$(cat $cpu)" = 1 ] || { echo "zlc-hotplug: cpu1 still offline"; exit 1; }
	taskset -p -c 1 $churn > /dev/null || { echo "zlc-hotplug: the load on cpu1 is gone"; exit 1; }
	echo "zlc-hotplug: cpu cycle $cycle: cpu1 offline and online under the hog"
done
kill -TERM $churn; wait $churn || { echo "zlc-hotplug: the load on cpu1 failed"; exit 1; }
touch /tmp/stop; wait $hog
grep -q '^ok ' /tmp/hog-cpu.log || { echo "zlc-hotplug: the hog passed nothing"; cat /tmp/hog-cpu.log; exit 1; }
grep '^not ok' /tmp/hog-cpu.log && { tail -20 /tmp/hog-cpu.log; exit 1; }
echo "zlc-hotplug: during the cpu cycles the hog ran $(grep -c zlc-run /tmp/hog-cpu.log) times and the load on cpu1 $(sed 's/.*"loops": \([0-9]*\).*/\1/' /tmp/churn-cpu.log) times"
# Empty node $NODE and give its pages back, the hog stopped: a load that
# prefers node $NODE and is larger than it fills its zones until the fast
# path fails them and marks them (full=1 on node $NODE); each time
# the load unmaps, the zones pass again and their marks end
# (full=0 on node $NODE): at least one recovery per fill.  Then
# a small load preferring the node must land there, every page.
count() { hist "$1" | awk -v n="$NODE" '$1 == n { c = $2 } END { print c + 0 }'; }
marks0=$(count 1)
rec0=$(count 0)
mib=$(( $(total) * 3 / 2048 ))
# Order-0 faults: a THP that fails a zone marks nothing in v2 (the zone
# still has room for order-0 pages), so the fill must reach the order-0
# low watermark itself.
thp=/sys/kernel/mm/transparent_hugepage/enabled
thp_was=$(sed -n 's/.*\[\(.*\)\].*/\1/p' $thp 2>/dev/null)
[ -z "$thp_was" ] || echo never > $thp
zlcload churn $mib "$NODE" 4 > /tmp/fill.log || { echo "zlc-hotplug: the filling load failed"; exit 1; }
marks=$(( $(count 1) - marks0 ))
rec=$(( $(count 0) - rec0 ))
fills=$(sed -n 's/.*"loops": \([0-9]*\).*/\1/p' /tmp/fill.log)
echo "zlc-hotplug: filling node $NODE ($mib MiB preferring it): $marks marks and $rec recoveries on node $NODE; ${fills:-no} fills"
[ "${fills:-0}" -gt 0 ] || { echo "zlc-hotplug: the filling load reported no fill"; exit 1; }
[ "$marks" -gt 0 ] || { echo "zlc-hotplug: a full node $NODE was never marked"; exit 1; }
[ "$rec" -ge "$fills" ] ||
	{ echo "zlc-hotplug: node $NODE's marks did not end each time its pages came back"; exit 1; }
# 7.3's first walk passes a node whose kswapd is awake, cache or not: the
# small load starts once the kswapds have stopped running balance passes
# (pageoutrun still for a second; the fill may have boosted node $NODE's
# watermarks and woken its kswapd), order-0 as the fill, so that a THP
# cannot fall back to another node on a node the fill fragmented.
runs() { awk '$1 == "pageoutrun" { print $2 }' /proc/vmstat; }
i=0
prev=$(runs)
while sleep 1 && [ "$(runs)" != "$prev" ] && [ $i -lt 30 ]; do prev=$(runs); i=$((i + 1)); done
zlcload churn 32 "$NODE" 1 > /tmp/small.log || { echo "zlc-hotplug: the small load failed"; exit 1; }
[ -z "$thp_was" ] || echo "$thp_was" > $thp
per=$(sed 's/.*"pages_per_node": \[\([^]]*\)\].*/\1/' /tmp/small.log | tr -d ' ')
here=$(echo "$per" | awk -F, -v n="$NODE" '{ print $(n + 1) + 0 }')
all=$(echo "$per" | awk -F, '{ for (i = 1; i <= NF; i++) s += $i; print s + 0 }')
echo "zlc-hotplug: after the fill, a small load preferring node $NODE has $here of $all sampled pages there"
if [ "$all" -eq 0 ] || [ "$here" -ne "$all" ]; then
	echo "zlc-hotplug: node $NODE, given its pages back, did not get the load"; exit 1
fi
# The line before each run goes through the kernel's log, so that the
# suite's own lines on the console cannot cut into it.
echo "zlc-hotplug: rerun" > /dev/kmsg
echo go > /sys/kernel/debug/kunit/zonelist_cache/run
sed 's/^/zlc-rerun: /' /sys/kernel/debug/kunit/zonelist_cache/results
# Once more in the same boot, beside a hog that has spilled past node 0:
# the suite must restore what it changes and hold the conditions it
# needs.  The hog is stopped while the suite runs, its memory held where
# the spill left it, so that no case's verdict depends on how far the
# hog got (a case whose zone the spill left failing skips, saying so;
# zlctool/hotplug.py judges).  The suite starts only once the hog has
# spilled (numa_miss moved), or the run would prove nothing; a hog pass
# that ends without a spill fails the run.  BESIDE_HOG=0 leaves it out.
numa_miss() { awk '$1 == "numa_miss" { print $2 }' /proc/vmstat; }
# pause_hog STOP|CONT: the hog's loop, then its passes.  The loop first,
# so that it starts no new pass; a pass it had forked but not yet
# exec'd is there a moment later, hence the rounds.
pause_hog() {
	[ "$1" = CONT ] || kill -STOP "$hog"
	for _ in 1 2 3; do
		for p in $(pidof zonelist_cache_memhog); do kill "-$1" "$p"; done
		[ "$1" = CONT ] || sleep 1
	done
	[ "$1" = STOP ] || kill -CONT "$hog"
}
if [ "${BESIDE_HOG:-1}" = 1 ]; then
	m0=$(numa_miss)
	start_hog asis 30 1 /tmp/hog2.log
	while [ "$(numa_miss)" -le "$m0" ] && ! grep -q -e zlc-run -e '^not ok' /tmp/hog2.log; do
		sleep 1
	done
	pause_hog STOP
	m1=$(numa_miss)
	[ "$m1" -gt "$m0" ] || { echo "zlc-hotplug: a hog pass ended without a spill past node 0"; exit 1; }
	echo "zlc-hotplug: rerun beside a hog" > /dev/kmsg
	echo go > /sys/kernel/debug/kunit/zonelist_cache/run
	m2=$(numa_miss)
	sed 's/^/zlc-rerun-hog: /' /sys/kernel/debug/kunit/zonelist_cache/results
	pause_hog CONT
	touch /tmp/stop; wait $hog
	echo "zlc-hotplug: the hog, stopped beside the suite, had spilled $((m1 - m0)) pages; the suite's own walks spilled $((m2 - m1))"
	if grep '^not ok' /tmp/hog2.log; then exit 1; fi
fi
