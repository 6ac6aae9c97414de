#!/bin/sh
set -u
P=/sys/module/page_alloc/parameters
echo 0 > /proc/sys/kernel/numa_balancing
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
zonelist_cache_memhog -m asis -s $((avail * 90 / 100)) -t 2 -r 1 > /dev/null || exit 1
for m in on on on on on on off off; do
	e0=$(cat $P/diag_rmqueue_empty); s0=$(cat $P/diag_rmqueue_empty_snap0)
	zonelist_cache_memhog -m $m -s $((avail * 90 / 100)) -t 1 -r 1 -j 2>&1 | grep zlc-run | sed 's/.*"zlc": "\([a-z]*\)".*"real": \([0-9.]*\).*"zlc_skip": \([0-9]*\).*/\1 real \2 skip \3/'
	echo "  rmqueue empty after a passed check: $(( $(cat $P/diag_rmqueue_empty) - e0 )) (counter <= 0 by snapshot: $(( $(cat $P/diag_rmqueue_empty_snap0) - s0 ))), last zone nid*10+idx $(cat $P/diag_rmqueue_empty_zone) counter $(cat $P/diag_rmqueue_empty_free)"
done
