#!/bin/sh
# hogprof.sh MODE N: the hog's warm-up, then N passes with -m MODE, 90 %, 2 threads.
set -u
echo 0 > /proc/sys/kernel/numa_balancing
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
zonelist_cache_memhog -m asis -s $((avail * ${PCT:-90} / 100)) -t 2 -r 1 > /dev/null || exit 1
i=0
while [ $i -lt "$2" ]; do
	zonelist_cache_memhog -m "$1" -s $((avail * ${PCT:-90} / 100)) -t 2 -r 1 -j 2>&1 | grep zlc-run |
		sed 's/.*"zlc": "\([a-z]*\)".*"real": \([0-9.]*\).*"zlc_skip": \([0-9]*\).*/\1 real \2 skip \3/'
	i=$((i + 1))
done
