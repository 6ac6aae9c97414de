#!/bin/sh
set -u
nb=${1:-0}
echo $nb > /proc/sys/kernel/numa_balancing
echo "numa_balancing=$(cat /proc/sys/kernel/numa_balancing)"
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
zonelist_cache_memhog -m asis -s $((avail * 90 / 100)) -t 2 -r 1 > /dev/null || exit 1
cat /proc/vmstat > /tmp/v0
zonelist_cache_memhog -m compare -P -f -s $((avail * 90 / 100)) -t 2 -r 4 -j 2>&1 | grep zlc-run
cat /proc/vmstat > /tmp/v1
awk 'NR==FNR { a[$1] = $2; next } { d = $2 - a[$1]; if (d != 0) print "vmstat", $1, d }' /tmp/v0 /tmp/v1 | grep -E "numa_|pgmigrate|compact|pgscan|zlc"
