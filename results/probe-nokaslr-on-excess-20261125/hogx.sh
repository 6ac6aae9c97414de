#!/bin/sh
set -u
T=/sys/kernel/tracing
mount -t tracefs nodev $T 2>/dev/null
echo 4096 > $T/buffer_size_kb
echo 0 > /proc/sys/kernel/numa_balancing
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
zonelist_cache_memhog -m asis -s $((avail * 90 / 100)) -t 2 -r 1 > /dev/null || exit 1
cnt() { awk '/^entries:|^overrun:/ { s += $2 } END { printf "%d", s }' $T/per_cpu/cpu0/stats; printf ' '; awk '/^entries:|^overrun:/ { s += $2 } END { print s }' $T/per_cpu/cpu1/stats; }
for ev in ${EVENTS:-mm_page_alloc_extfrag}; do echo 1 > $T/events/kmem/$ev/enable; done
for i in 1 2 3 4 5 6; do
	echo > $T/trace
	zonelist_cache_memhog -m ${MODE:-on} -s $((avail * 90 / 100)) -t 1 -r 1 -j 2>&1 | grep zlc-run | sed 's/"zlc_skip"/\n  &/'
	echo "events (cpu0 cpu1): $(cnt)"
done
