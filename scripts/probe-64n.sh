#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 64 nodes of 32 MiB with and without nokaslr, counted (QEMU -icount):
# the hog's 90 % row on 7.3.4, on v1 (project 3041e97's series, the
# series of hog-ref-73-20261126), on v1x (v1 with the two conditions
# under which its patches 9 and 10 mark a zone that passes its watermark
# made false: scripts/probe-64n-v1x.patch) and on this project's series,
# each kernel from the bench's distro config.  The bench runs one
# series, so this probe boots the four kernels itself.
#
#   scripts/probe-64n.sh DIR
#
# Needs a full clone (v1's series is read from commit 3041e97) and the
# kernels of a counted bench (make bench ICOUNT=1: build/7.3/guest-distro
# and guest-base-distro, and the hog); v1's kernel is built here into
# build/7.3/v1-distro, v1x's into build/7.3/v1x-distro, from the same
# work tree with the patch applied for that build and taken off after
# it.  Per kernel and option, 2 boots: each warms up, prints its release
# and node 0's DMA32 zone, then runs 8 passes (cache on and off in ABBA
# order; 7.3.4: 4 passes as is).  DIR/probe.txt gets the consoles'
# lines, DIR/summary.txt what scripts/probe-64n-summary.py makes of
# them; an existing record is not overwritten.  v1's work tree is
# applied again unless it holds v1's tree (cb1e8160e86a), local changes
# discarded.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: probe-64n.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cd "$top"
[ ! -e "$dir/probe.txt" ] || { echo "probe-64n.sh: $dir/probe.txt exists: give another DIR" >&2; exit 1; }
PY=${PY:-/usr/bin/python3}
HOG=build/7.3/selftests/zonelist_cache_memhog
V1=build/7.3/v1-distro/arch/x86/boot/bzImage
V1X=build/7.3/v1x-distro/arch/x86/boot/bzImage
declare -A KERNEL=([base]=build/7.3/guest-base-distro/arch/x86/boot/bzImage
		   [series]=build/7.3/guest-distro/arch/x86/boot/bzImage [v1]=$V1 [v1x]=$V1X)
for f in "$HOG" "${KERNEL[base]}" "${KERNEL[series]}"; do
	[ -f "$f" ] || { echo "probe-64n.sh: no $f: run make bench ICOUNT=1 first" >&2; exit 1; }
done

if [ "$(git -C build/linux-7.3-v1 rev-parse --short=12 'HEAD^{tree}' 2>/dev/null)" != cb1e8160e86a ] ||
   ! git -C build/linux-7.3-v1 diff --quiet HEAD; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	git archive 3041e97 patches | tar -x -C "$tmp"
	git -C build/linux-7.3 worktree prune
	[ -d build/linux-7.3-v1 ] ||
		git -C build/linux-7.3 worktree add --quiet --detach ../linux-7.3-v1 base
	git -C build/linux-7.3-v1 am --abort 2>/dev/null || true
	git -C build/linux-7.3-v1 checkout -q -f --detach base
	sed "s#^#$tmp/patches/#" "$tmp/patches/series" |
		GIT_COMMITTER_NAME="zlc base" GIT_COMMITTER_EMAIL="base@localhost" \
		xargs git -C build/linux-7.3-v1 am -q --committer-date-is-author-date
fi
fragment="$top/configs/guest.config $top/configs/distro.config $top/configs/distro-7.3.config"
FRAGMENT=$fragment TREE=build/linux-7.3-v1 KBUILD_OUT=build/7.3/v1-distro scripts/kbuild.sh guest
trap 'git -C "$top/build/linux-7.3-v1" checkout -q -- .; rm -rf "${tmp:-}"' EXIT
git -C build/linux-7.3-v1 apply "$top/scripts/probe-64n-v1x.patch"
FRAGMENT=$fragment TREE=build/linux-7.3-v1 KBUILD_OUT=build/7.3/v1x-distro scripts/kbuild.sh guest
git -C build/linux-7.3-v1 checkout -q -- .
trap 'rm -rf "${tmp:-}"' EXIT

draft=
git diff --quiet HEAD || draft="DRAFT (uncommitted changes) "
make -s check-export > /dev/null 2>&1 || draft="DRAFT (work tree differs from its series) "

{
	echo "# ${draft}probe-64n: project $(git rev-parse --short HEAD), $(qemu-system-x86_64 --version | head -1)"
	echo "# again: scripts/probe-64n.sh ${dir#"$top"/}"
	for boot in 1 2; do
		for opt in nokaslr kaslr; do
			append=numa_balancing=disable
			[ $opt = kaslr ] || append="nokaslr $append"
			for k in base series v1 v1x; do
				kinds="on off off on on off off on"
				[ $k != base ] || kinds="asis asis asis asis"
				echo "### boot=$boot $opt $k"
				"$PY" -m zlctool.guest --kernel "${KERNEL[$k]}" --topology 64 --icount \
					--append "$append" --bin "$HOG" --timeout 1800 -- sh -c '
avail=$(awk "/^MemAvailable:/ {print int(\$2 / 1024)}" /proc/meminfo)
size=$((avail * 90 / 100))
zonelist_cache_memhog -m asis -s $size -t 2 -r 1 > /dev/null || exit 1
echo "release $(uname -r)"
awk "/^Node 0, zone +DMA32/ {p = 1; next} /^Node/ {p = 0} p" /proc/zoneinfo |
	grep -E "^ +(boost|min|low|high|spanned|present|managed|nr_free_pages) " |
	tr -s " " | tr "\n" " " | sed "s/^/node0-dma32/"; echo
for k in '"$kinds"'; do
	zonelist_cache_memhog -m $k -w -f -s $size -t 2 -r 1 -j > /tmp/l 2>&1 ||
		{ cat /tmp/l; exit 1; }
	sed -n "s/^# zlc-run /probe kind=$k /p" /tmp/l
done' 2>&1 | grep -E "^(probe|release|node0-dma32|guest:)|rror" ||
					{ echo "probe-64n.sh: boot $boot, $opt, $k failed: $dir/probe.txt.partial" >&2
					  exit 1; }
			done
		done
	done
} > "$dir/probe.txt.partial"
mv "$dir/probe.txt.partial" "$dir/probe.txt"
"$PY" scripts/probe-64n-summary.py "$dir/probe.txt" > "$dir/summary.txt"
cat "$dir/summary.txt"
