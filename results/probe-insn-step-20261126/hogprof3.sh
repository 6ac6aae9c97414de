#!/bin/sh
# hogprof2.sh ARGS...: the hog's default warm-up, then the hog with ARGS, 90 %, 2 threads.
set -u
echo 0 > /proc/sys/kernel/numa_balancing
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
zonelist_cache_memhog -m asis -s $((avail * ${PCT:-90} / 100)) -t 2 -r 1 > /dev/null || exit 1
HOG_PLACED=1 zonelist_cache_memhog_p -s $((avail * ${PCT:-90} / 100)) -t 2 "$@" -j 2>&1 | grep zlc-run |
	sed 's/.*"zlc": "\([a-z]*\)".*"real": \([0-9.]*\).*"zlc_skip": \([0-9]*\).*/\1 real \2 skip \3/'
grep -E 'zlc|numa_miss' /proc/vmstat
