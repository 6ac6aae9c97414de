#!/bin/sh
# shellcheck shell=sh
# make bench, in the guest: touch all memory once (the host faults the
# guest's RAM in on first touch, which is far slower than what is
# measured), then one zonelist_cache_memhog run per row.
#
#   PCTS="12 90" THREADS="2" REPS=3 MODE=compare PLACED_PCT=90 bench.sh
#
# Each row is a fraction of MemAvailable when the guest starts, not of
# MemTotal: in a 2 GiB guest 90% of MemTotal leaves the hog at the edge of
# the OOM killer.  MODE is the hog's -m (compare on the patched kernel,
# asis on the base one); rows at PLACED_PCT also run placed passes (-P),
# on either kernel.
set -u
: "${PCTS:?}" "${THREADS:?}" "${REPS:?}" "${MODE:?}"
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
# NUMA balancing (on in distribution kernels) scans the hog's memory while
# it runs and takes hint faults on its read-back: work that grows with a
# pass's length.  Each row says whether it was on and how many it took.
numa_balancing=$(cat /proc/sys/kernel/numa_balancing 2>/dev/null || echo none)
hint_faults() { awk '$1 == "numa_hint_faults" { n = $2 } END { print n + 0 }' /proc/vmstat; }
zonelist_cache_memhog -m asis -s $((avail * 90 / 100)) -t 2 -r 1 > /dev/null || exit 1
status=0
for pct in $PCTS; do
	for threads in $THREADS; do
		echo "zlc-row pct=$pct threads=$threads"
		placed=""
		[ "$pct" = "${PLACED_PCT:-}" ] && placed=-P
		hints=$(hint_faults)
		# shellcheck disable=SC2086 # $placed is one word or none
		# A check of the hog's that fails (its placement check, say) is a
		# finding: the rows go on, and the guest's status says so.
		zonelist_cache_memhog -m "$MODE" $placed -f -s $((avail * pct / 100)) \
			-t "$threads" -r "$REPS" -j || status=1
		echo "zlc-row-end numa_balancing=$numa_balancing hint_faults=$(($(hint_faults) - hints))"
	done
done
exit $status
