#!/bin/sh
set -u
echo ${NB:-1} > /proc/sys/kernel/numa_balancing
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
kt() { for p in /proc/[0-9]*; do c=$(cat $p/comm 2>/dev/null); case "$c" in kswapd*|kcompactd*) awk -v c=$c '{print c, $14+$15}' $p/stat;; esac; done | awk '{split($1,a,/[0-9]/); t[a[1]]+=$2} END {for (k in t) printf "%s=%d ", k, t[k]; print ""}'; }
zonelist_cache_memhog -m asis -s $((avail * 90 / 100)) -t 2 -r 1 > /dev/null || exit 1
for m in on placed off; do
	kt; cat /proc/vmstat > /tmp/v0
	if [ $m = placed ]; then zonelist_cache_memhog -m compare -P -f -s $((avail * 90 / 100)) -t 2 -r 2 -j 2>&1 | grep zlc-run
	else zonelist_cache_memhog -m $m -s $((avail * 90 / 100)) -t 2 -r 2 -j 2>&1 | grep zlc-run; fi
	echo "== $m ticks after/before:"; kt
	cat /proc/vmstat > /tmp/v1
	awk 'NR==FNR { a[$1] = $2; next } { d = $2 - a[$1]; if (d != 0) print "vmstat", $1, d }' /tmp/v0 /tmp/v1 | grep -E "pgscan|pgsteal|kswapd|pageout|compact|migrate|boost|allocstall|drop|zlc"
done
