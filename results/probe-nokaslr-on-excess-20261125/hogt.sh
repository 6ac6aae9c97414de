#!/bin/sh
set -u
echo ${NB:-1} > /proc/sys/kernel/numa_balancing
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
zonelist_cache_memhog -m asis -s $((avail * 90 / 100)) -t 2 -r 1 > /dev/null || exit 1
for t in ${THREADS:-1 2}; do
zonelist_cache_memhog -m compare -P -f -s $((avail * 90 / 100)) -t $t -r ${REPS:-3} -j 2>&1 | grep zlc-run
done
