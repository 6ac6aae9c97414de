#!/bin/sh
# Two-thread 90% passes, as the bench's headline row, with the probe's counters around each.
set -u
P=/sys/module/page_alloc/parameters
N="diag_empty_first diag_empty_nocache diag_empty_walk_off diag_fold diag_fold_still_passes diag_nofold_passes diag_marked_already"
echo 0 > /proc/sys/kernel/numa_balancing
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
zonelist_cache_memhog -m asis -s $((avail * 90 / 100)) -t 2 -r 1 > /dev/null || exit 1
for m in ${MODES:-on off on on on on off on on}; do
	for n in $N; do eval "b_$n=\$(cat $P/$n)"; done
	zonelist_cache_memhog -m $m -s $((avail * 90 / 100)) -t 2 -r 1 -j 2>&1 | grep zlc-run | sed 's/.*"zlc": "\([a-z]*\)".*"real": \([0-9.]*\).*"zlc_skip": \([0-9]*\).*/\1 real \2 skip \3/'
	out=""
	for n in $N; do eval "v=\$(( \$(cat $P/$n) - b_$n ))"; out="$out ${n#diag_}=$v"; done
	echo " $out last-empty-zone=$(cat $P/diag_empty_zone)"
done
for n in diag_l_counter diag_l_snapshot diag_l_mydelta diag_l_buddy diag_l_cpu diag_l_highatomic diag_l_reserve diag_l_wmark; do echo "$n=$(cat $P/$n)"; done
grep -A12 "zone *DMA32" /proc/zoneinfo | head -14
