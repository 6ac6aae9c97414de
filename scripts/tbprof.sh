#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the QEMU plugin of make profile (zlctool/tbprof/tbprof.c) into
# build/tools/tbprof.so, against the plugin header of the QEMU installed
# here: its Debian source package, fetched through a private apt list
# (scripts/apt-suite.sh, which checks it against the signed archive), of
# which only include/qemu/qemu-plugin.h is unpacked.  Nothing is installed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/tools
so=$out/tbprof.so
src=$top/zlctool/tbprof/tbprof.c
ver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86)
hdr=$out/qemu-plugin-${ver//:/_}/qemu-plugin.h
[ -f "$so" ] && [ "$so" -nt "$src" ] && [ -f "$hdr" ] && exit 0

if [ ! -f "$hdr" ]; then
	# shellcheck source=/dev/null
	. /etc/os-release
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	# Owned by apt's _apt user, which downloads into it.
	chown _apt "$tmp" 2>/dev/null || true
	echo "tbprof: fetching the source of qemu $ver for its plugin header"
	(cd "$tmp" && "$top/scripts/apt-suite.sh" "$VERSION_CODENAME" \
		apt-get source --download-only -qq "qemu=$ver" >/dev/null)
	mkdir -p "$(dirname "$hdr")"
	tar -xJf "$tmp"/qemu_*.orig.tar.xz -O --wildcards '*/include/qemu/qemu-plugin.h' > "$hdr"
	[ -s "$hdr" ] || { echo "tbprof: no qemu-plugin.h in qemu $ver" >&2; exit 1; }
fi
gcc -O2 -Wall -shared -fPIC -I "$(dirname "$hdr")" -o "$so" "$src"
echo "tbprof: built $so (QEMU $ver)"
