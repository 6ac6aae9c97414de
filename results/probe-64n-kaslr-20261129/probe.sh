#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The 64-node hog's 90 % row, counted (QEMU -icount), booted with and
# without nokaslr, on 7.3.4, on v1 (project 3041e97's series, as in
# hog-ref-73-20261126) and on v2.5 (series 4093a7f02a1b): is v2.5's
# 64-node spread node 0's small DMA32 zone under nokaslr, and where does
# v2.5 stand against v1 without it?  The bench runs one series only, so
# this probe boots the three kernels itself, the bench's distro config
# for all three.  Each boot warms up, prints node 0's DMA32 watermarks,
# then runs 8 passes (cache on/off in ABBA order; 7.3.4: 4 passes as is).
#
#   results/probe-64n-kaslr-20261129/probe.sh KERNELS > probe.txt
#
# KERNELS: any of v25 base v1 (the record ran "v25 base", then "v1").
# v25 and base are the kernels make bench ICOUNT=1 builds
# (build/7.3/guest-distro, guest-base-distro); v1's is built here.
set -euo pipefail
cd "$(dirname "$0")/../.."
HOG=build/7.3/selftests/zonelist_cache_memhog
DISTRO="$PWD/configs/guest.config $PWD/configs/distro.config $PWD/configs/distro-7.3.config"

if [[ " $* " == *" v1 "* && ! -f build/7.3/v1-distro/arch/x86/boot/bzImage ]]; then
	mkdir -p build/v1p
	git archive 3041e97 patches | tar -x -C build/v1p
	[ -d build/linux-7.3-v1 ] ||
		git -C build/linux-7.3 worktree add --quiet --detach ../linux-7.3-v1 base
	git -C build/linux-7.3-v1 -c user.name=probe -c user.email=probe@localhost am -q \
		$(sed "s#^#$PWD/build/v1p/patches/#" build/v1p/patches/series)
	FRAGMENT="$DISTRO" TREE=build/linux-7.3-v1 KBUILD_OUT=build/7.3/v1-distro \
		scripts/kbuild.sh guest
fi

for boot in 1 2; do
for app in "nokaslr numa_balancing=disable" "numa_balancing=disable"; do
	case $app in nokaslr*) tag=nokaslr ;; *) tag=kaslr ;; esac
	for k in "$@"; do
		kinds="on off off on on off off on"
		case $k in
		v25)  kern=build/7.3/guest-distro/arch/x86/boot/bzImage ;;
		v1)   kern=build/7.3/v1-distro/arch/x86/boot/bzImage ;;
		base) kern=build/7.3/guest-base-distro/arch/x86/boot/bzImage
		      kinds="asis asis asis asis" ;;
		*)    echo "probe.sh: kernels are v25, base and v1" >&2; exit 2 ;;
		esac
		script='avail=$(awk "/^MemAvailable:/ {print int(\$2/1024)}" /proc/meminfo)
size=$((avail * 90 / 100))
zonelist_cache_memhog -m asis -s $size -t 2 -r 1 > /dev/null || exit 1
grep -A4 "^Node 0, zone    DMA32" /proc/zoneinfo | tr -s " " | tr "\n" " "; echo
for k in '"$kinds"'; do
	zonelist_cache_memhog -m $k -w -f -s $size -t 2 -r 1 -j > /tmp/l 2>&1 || { cat /tmp/l; exit 1; }
	sed -n "s/^# zlc-run /probe kind=$k /p" /tmp/l
done'
		echo "### boot=$boot $tag $k"
		/usr/bin/python3 -m zlctool.guest --kernel "$kern" --topology 64 --icount \
			--append "$app" --bin "$HOG" --timeout 1800 -- sh -c "$script" 2>&1 |
			grep -E "^probe|^Node|exited|rror"
	done
done
done
