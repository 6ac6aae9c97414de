#!/bin/sh
# shellcheck shell=sh
# make bench's workloads, in the guest (zlctool/workloads.py writes the
# command): one sample per variant, in the order given, each framed by
#
#   zlc-sample workload=W variant=V key=value...
#   zlc-snap begin|end KEY=VALUE...           /proc/vmstat
#   zlc-numastat begin|end NODE KEY=VALUE...  each node's numastat
#   ... what the workload printed (zlc-run, zlc-load, zlc-yaml, zlc-stress)
#   zlc-sample-end
#
# Variants: base (the unpatched kernel, nothing to set), off and on
# (vm.zonelist_cache).  Usage, VARIANTS="off on on off" in the environment:
#
#   workload.sh stutter SECONDS HOG_PCT      (needs /dev/vda: ext4, /big)
#   workload.sh churn PCT CHURN_MIB          (hog alone, then with churn)
#   workload.sh busy PCT "THREADS..."
#   workload.sh stress SECONDS "STRESSOR ARGS;..."
#   workload.sh storm SECONDS HOG_PCT CHURN_MIB
#   workload.sh pagefault MIB SECONDS HOLD_PCT "TASKS..."
#   workload.sh placement MIB THREADS "STEP_KIB..."
set -u

# Wipes of the zonelist cache's marks by cause, "zlc_wipe_CAUSE=N ...",
# from the histogram trigger main sets on kmem:mm_zlc_wipe.
wipe_ev=/sys/kernel/tracing/events/kmem/mm_zlc_wipe
causes=""
wipes() {
	[ -n "$causes" ] || return 0
	grep '^{' $wipe_ev/hist | tr '{}:,' '    ' |
		awk -v causes="$causes" '
			BEGIN { n = split(causes, c, " ")
				for (i = 1; i <= n; i++) { split(c[i], kv, "="); name[kv[1]] = kv[2] } }
			{ printf "zlc_wipe_%s=%s ", name[$2], $4 }'
}

# Marked zones found passing again, "zlc_recover=N", from the histogram
# trigger main sets on kmem:mm_zlc_recover.
recover_ev=/sys/kernel/tracing/events/kmem/mm_zlc_recover
recovers() {
	[ -n "$causes" ] || return 0
	grep '^{' $recover_ev/hist | tr '{}:,' '    ' |
		awk '{ n += $4 } END { printf "zlc_recover=%d ", n }'
}

# The guest clock, "uptime_ms=N": a sample's length in guest time (under
# -icount, the instructions of all vCPUs).
uptime_ms() {
	awk '{ printf "uptime_ms=%d ", $1 * 1000 }' /proc/uptime
}

snap() {
	echo "zlc-snap $1 $(tr ' \n' '= ' < /proc/vmstat)$(wipes)$(recovers)$(uptime_ms)"
	for d in /sys/devices/system/node/node[0-9]*; do
		echo "zlc-numastat $1 ${d##*node} $(tr ' \n' '= ' < "$d/numastat")"
	done
}

# variant V: set the cache for V; fails on a kernel that cannot.
variant() {
	case $1 in
	base) [ ! -e /proc/sys/vm/zonelist_cache ] ;;
	off) echo 0 > /proc/sys/vm/zonelist_cache ;;
	on) echo 1 > /proc/sys/vm/zonelist_cache ;;
	*) false ;;
	esac || { echo "workload.sh: cannot run variant $1 on this kernel" >&2; exit 1; }
}

post=""

# sample WORKLOAD VARIANT KEY=VALUE... -- COMMAND...: one framed sample.
sample() {
	w=$1 v=$2
	shift 2
	keys=""
	while [ "$1" != -- ]; do keys="$keys $1"; shift; done
	shift
	variant "$v"
	sync
	echo 3 > /proc/sys/vm/drop_caches
	echo "zlc-sample workload=$w variant=$v$keys"
	snap begin
	"$@" || { echo "workload.sh: $w ($v$keys) failed" >&2; exit 1; }
	snap end
	# $post: a command of the sample that its counters leave out.
	[ -z "$post" ] || $post || { echo "workload.sh: $w ($v$keys): $post failed" >&2; exit 1; }
	echo "zlc-sample-end"
}

avail_mib() {
	awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo
}

# stutter: an anonymous hog past memory, a copy of a file larger than a
# node, and the THP fault probe on CPU 0, all for SECONDS.
stutter_one() {
	secs=$1 mib=$2
	zlcload hog "$mib" "$secs" > /tmp/hog.out &
	hog=$!
	sh -c 'while :; do dd if=/mnt/big of=/mnt/copy bs=1M 2>/dev/null; rm -f /mnt/copy; done' &
	copy=$!
	zlcload probe "$secs" 0 || return 1
	wait "$hog" || return 1
	kill "$copy"
	killall dd 2> /dev/null
	wait "$copy"
	rm -f /mnt/copy
	cat /tmp/hog.out
}

stutter() {
	secs=$1 pct=$2
	mkdir -p /mnt
	mount -t ext4 /dev/vda /mnt || exit 1
	[ -f /mnt/big ] || { echo "workload.sh: no /mnt/big on /dev/vda" >&2; exit 1; }
	swapon /dev/vdb || exit 1
	echo always > /sys/kernel/mm/transparent_hugepage/enabled
	total=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
	for v in $VARIANTS; do
		sample stutter "$v" secs="$secs" hog_mib=$((total * pct / 100)) -- \
			stutter_one "$secs" $((total * pct / 100))
	done
}

# churn: the hog spills (one thread), alone and then while zlcload churn
# maps, faults and unmaps THP-advised memory preferring node 0.
churn_one() {
	mib=$1 cmib=$2
	if [ "$cmib" -gt 0 ]; then
		zlcload churn "$cmib" 0 0 > /tmp/churn.out &
		churn=$!
	fi
	zonelist_cache_memhog -m asis -f -s "$mib" -t 1 -r 1 -j || return 1
	if [ "$cmib" -gt 0 ]; then
		kill -TERM "$churn"
		wait "$churn" || return 1
		cat /tmp/churn.out
	fi
}

churn() {
	pct=$1 cmib=$2
	mib=$(($(avail_mib) * pct / 100))
	for c in 0 "$cmib"; do
		for v in $VARIANTS; do
			sample churn "$v" churn_mib="$c" -- churn_one "$mib" "$c"
		done
	done
}

# busy: the hog with each thread count, thread i on CPU i (node i); after
# the sample's counters, one more pass of the same shape, untimed, after
# which each thread counts where its own pages are (zlcload fill).
busy() {
	pct=$1 threads=$2
	mib=$(($(avail_mib) * pct / 100))
	for t in $threads; do
		post="zlcload fill $mib $t"
		for v in $VARIANTS; do
			sample busy "$v" threads="$t" -- \
				zonelist_cache_memhog -m asis -f -s "$mib" -t "$t" -r 1 -j
		done
		post=""
	done
}

# placement: where the pages of one pass of the hog's shape go (zlcload
# fill, MIB in all, the same on every kernel, THREADS threads, thread i on CPU
# i), free-running (step 0) and in lock step (every thread touches
# STEP_KIB, then waits for the others): which thread runs faster decides
# where the pages of a contested node go in the first, not in the second.
# The steps' order is reversed from one variant to the next.
placement() {
	mib=$1 threads=$2 steps=$3
	for v in $VARIANTS; do
		for st in $steps; do
			sample placement "$v" threads="$threads" step_kib="$st" -- \
				zlcload fill "$mib" "$threads" "$st"
		done
		steps=$(echo "$steps" | tr ' ' '\n' | sed -n '1!G;h;$p' | tr '\n' ' ')
	done
}

# storm: a hog holds HOG_PCT% of the memory available, idle, so that the
# zones sit near their low watermarks, while a churner on every CPU maps,
# faults and unmaps CHURN_MIB preferring its own node (node i for CPU i),
# for SECONDS: zones flip between marked and recovered on frees and
# refills, and every recovery makes every zonelist wipe its marks.
storm_one() {
	secs=$1 mib=$2 cmib=$3
	# The hog faults its memory in and then holds it idle, so that the
	# guest's instructions are the churners' and the kernel's alone; the
	# churners start once it holds it.
	# A ready line left by the previous sample must not start them early.
	rm -f /tmp/hog.out
	zlcload hold "$mib" > /tmp/hog.out &
	hog=$!
	until grep -qs '^zlc-hold-ready' /tmp/hog.out; do
		kill -0 "$hog" 2> /dev/null || return 1
		sleep 0.1
	done
	pids=""
	for d in /sys/devices/system/cpu/cpu[0-9]*; do
		c=${d##*cpu}
		n=0
		for l in "$d"/node[0-9]*; do
			[ -e "$l" ] && n=${l##*node}
			break
		done
		taskset -c "$c" zlcload churn "$cmib" "$n" "$secs" > "/tmp/storm.$c" &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p" || { kill -TERM "$hog"; return 1; }; done
	kill -TERM "$hog"
	wait "$hog" || return 1
	cat /tmp/storm.[0-9]*
	grep -v '^zlc-hold-ready' /tmp/hog.out
	rm -f /tmp/storm.[0-9]*
}

storm() {
	secs=$1 pct=$2 cmib=$3
	mib=$(($(avail_mib) * pct / 100))
	for v in $VARIANTS; do
		sample storm "$v" secs="$secs" hog_mib="$mib" churn_mib="$cmib" -- \
			storm_one "$secs" "$mib" "$cmib"
	done
}

# pagefault: page fault churn, for each kind and task count: TASKS
# processes, task i on CPU i, each mapping MIB, writing a word into every
# page and unmapping it, in a loop, for SECONDS (zlcload pf): anonymous
# memory (anon), or a private mapping of a file of its own in the page
# cache, every write a COW fault (file).  With HOLD_PCT > 0, holds fill
# each CPU's node but 16 MiB (preferring it), then HOLD_PCT % of the
# memory still available, idle, through all the samples, so that the
# faults spill off the CPUs' own nodes.
# The nodes of the CPUs, each once.
cpu_nodes() {
	for c in /sys/devices/system/cpu/cpu[0-9]*; do
		for n in "$c"/node[0-9]*; do
			echo "${n##*node}"
		done
	done | sort -un
}

hold_start() {
	rm -f "/tmp/hold.$1.out"
	# shellcheck disable=SC2086 # $3 is a node or nothing
	zlcload hold "$2" ${3:-} > "/tmp/hold.$1.out" &
	holds="$holds $!"
	until grep -qs '^zlc-hold-ready' "/tmp/hold.$1.out"; do
		kill -0 "$!" 2> /dev/null ||
			{ echo "workload.sh: pagefault: a hold failed" >&2; exit 1; }
		sleep 0.1
	done
}

pagefault() {
	mib=$1 secs=$2 pct=$3 tasks=$4
	holds="" hmib=0
	if [ "$pct" -gt 0 ]; then
		for node in $(cpu_nodes); do
			free=$(awk '/MemFree/ { print int($4 / 1024) }' \
				"/sys/devices/system/node/node$node/meminfo")
			[ "$free" -le 16 ] && continue
			hold_start "node$node" $((free - 16)) "$node"
			hmib=$((hmib + free - 16))
		done
		rest=$(($(avail_mib) * pct / 100))
		hold_start rest "$rest"
		hmib=$((hmib + rest))
	fi
	# Once, not recorded: the first faults of a boot.
	zlcload pf anon "$mib" 1 1 > /dev/null ||
		{ echo "workload.sh: pagefault: the warm-up failed" >&2; exit 1; }
	for v in $VARIANTS; do
		for k in anon file; do
			for t in $tasks; do
				sample pagefault "$v" kind="$k" tasks="$t" secs="$secs" hold_mib="$hmib" -- \
					zlcload pf "$k" "$mib" "$secs" "$t"
			done
		done
	done
	for h in $holds; do
		kill -TERM "$h"
		wait "$h" || { echo "workload.sh: pagefault: a hold failed" >&2; exit 1; }
	done
}

# stress: stress-ng, one stressor line at a time, each with --verify
# where the stressor has it; its YAML metrics and exit status printed.
stress_one() {
	secs=$1
	shift
	rm -f /tmp/stress.yaml
	stress-ng "$@" --timeout "${secs}s" --temp-path /tmp --yaml /tmp/stress.yaml \
		--metrics-brief > /tmp/stress.out 2>&1
	echo "zlc-stress exit=$?"
	sed 's/^/zlc-stress-out /' /tmp/stress.out
	sed 's/^/zlc-yaml /' /tmp/stress.yaml
}

stress() {
	secs=$1 list=$2 ifs=$IFS
	IFS=';'
	for line in $list; do
		IFS=$ifs
		[ -n "$line" ] || continue
		name=$(echo "$line" | tr ' ' '_' | tr -d '-')
		for v in $VARIANTS; do
			# shellcheck disable=SC2086 # the stressor's arguments, split
			sample stress "$v" stressor="$name" -- stress_one "$secs" $line
		done
		IFS=';'
	done
	IFS=$ifs
}

: "${VARIANTS:?}"
work=$1
shift
case $work in
stutter | churn | busy | stress | storm | pagefault | placement)
	# With one CPU a node, 7.3's per-cpu list tuning lets every CPU keep
	# up to an eighth of each zone: what the warm-up frees stays there in
	# amounts that differ from boot to boot, and the storm's churners grow
	# the lists from sample to sample until 7.3.4 as shipped runs out of
	# memory in its fourth (results/storm-80-base-oom-20261126).  Where
	# placement's pages go depends on them too: after the warm-up, node
	# 0's lists held 739 pages on 7.3.4 and 460 on the series (flex32,
	# one boot each), pages a thread of the other node takes there.  Hold
	# each list at 1/512 of its zone (64 MiB at most on all of them
	# together), from before the warm-up, for every kernel and variant.
	if [ "$work" = storm ] || [ "$work" = placement ]; then
		echo 512 > /proc/sys/vm/percpu_pagelist_high_fraction || exit 1
	fi
	# The host faults the guest's memory in on its first touch, far slower
	# than anything measured: touch it all once first.
	zonelist_cache_memhog -m asis -s $(($(avail_mib) * 90 / 100)) -t 2 -r 1 > /dev/null || exit 1
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	if [ -f $wipe_ev/format ]; then
		# '{ 0, "interval" }, ...' in the event's print format.
		causes=$(grep -o '{ [0-9]*, "[a-z]*" }' $wipe_ev/format | tr -d '{},"' |
			awk '{ printf "%s=%s ", $1, $2 }')
		echo "hist:keys=cause" > $wipe_ev/trigger ||
			{ echo "workload.sh: no histogram on mm_zlc_wipe" >&2; exit 1; }
		echo "hist:keys=node_id" > $recover_ev/trigger ||
			{ echo "workload.sh: no histogram on mm_zlc_recover" >&2; exit 1; }
	fi
	"$work" "$@"
	;;
*) echo "workload.sh: unknown workload $work" >&2; exit 2 ;;
esac
