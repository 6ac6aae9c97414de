#!/bin/sh
set -u
echo 0 > /proc/sys/kernel/numa_balancing
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
zonelist_cache_memhog -m asis -s $((avail * 90 / 100)) -t 2 -r 1 > /dev/null || exit 1
for m in on placed-compare; do
	echo > /proc/profile
	if [ $m = on ]; then zonelist_cache_memhog -m on -s $((avail * 90 / 100)) -t 1 -r 4 -j 2>&1 | grep zlc-run
	else zonelist_cache_memhog -m compare -P -f -s $((avail * 90 / 100)) -t 1 -r 2 -j 2>&1 | grep zlc-run; fi
	echo "=== profile $m"
	cat /proc/profile > /tmp/prof-$m
	od -A d -t x1 /tmp/prof-$m | tail -1
	base64 /tmp/prof-$m > /tmp/prof-$m.b64 2>/dev/null || uuencode /tmp/prof-$m x
	echo "BEGIN-$m"; cat /tmp/prof-$m.b64; echo "END-$m"
done
