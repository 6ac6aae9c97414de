echo 0 > /proc/sys/kernel/numa_balancing
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
zonelist_cache_memhog_r -m asis -s $((avail * 90 / 100)) -t 2 -r 1 > /dev/null || exit 1
zonelist_cache_memhog_r -m compare -P -s $((avail * 90 / 100)) -t 2 -r 4 -j 2>&1 | grep zlc-run
