#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building, booting and testing the series needs, only what is
# missing, all from Debian's archive with apt-get, Python modules included:
# the tooling runs on Debian's own /usr/bin/python3, which is externally
# managed (PEP 668) and takes no pip installs.
#   deps.sh          for 'make test' and friends
#   deps.sh docs     also Sphinx, for 'make check' (htmldocs)
#   deps.sh cross    also the riscv64 and ppc64le cross compilers (make
#                    check's cross check)
#   deps.sh arm64    also the arm64 cross compiler, QEMU for arm64 and an
#                    arm64 static busybox for its guests (make arm64)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)

pkgs=(
	# kernel build (libdw-dev: 7.3's make deb lists it among its build dependencies)
	gcc make flex bison bc libelf-dev libdw-dev libssl-dev dwarves kmod cpio
	xz-utils rsync git ccache sparse python3 perl file dpkg-dev debhelper
	# guests: QEMU (with its BIOS images) and a static busybox
	qemu-system-x86 qemu-system-data seabios busybox-static gzip
	# the tooling: Debian's Python and its modules, shellcheck, addr2line for
	# scripts/decode_stacktrace.sh
	python3-pytest python3-git python3-ply python3-matplotlib shellcheck binutils
	# make bench's workloads: disk images (mkfs.ext4, mkswap) and stress-ng
	e2fsprogs util-linux stress-ng
)
[ "${1:-}" = docs ] && pkgs+=(python3-sphinx python3-sphinx-rtd-theme python3-yaml)
[ "${1:-}" = cross ] && pkgs+=(gcc-riscv64-linux-gnu gcc-powerpc64le-linux-gnu)
[ "${1:-}" = arm64 ] && pkgs+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm)

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	SUDO=
	[ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null
fi

# The guests' busybox for arm64: Debian's own arm64 package of the
# machine's release, unpacked in build/tools/ (never installed here).
if [ "${1:-}" = arm64 ] && [ ! -x "$top/build/tools/arm64/bin/busybox" ]; then
	# shellcheck source=/dev/null
	. /etc/os-release
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	# Owned by apt's _apt user, which downloads into it (as root, apt
	# would download unsandboxed and say so).
	chown _apt "$tmp" 2>/dev/null || true
	echo "deps: fetching busybox-static for arm64 ($VERSION_CODENAME)"
	if ! (cd "$tmp" && APT_ARCH=arm64 "$top/scripts/apt-suite.sh" "$VERSION_CODENAME" \
			apt-get download -qq busybox-static 2>&1); then
		echo "deps: could not download busybox-static:arm64" >&2
		exit 1
	fi
	dpkg-deb -x "$tmp"/busybox-static_*_arm64.deb "$tmp/x"
	install -D -m 755 "$tmp/x/bin/busybox" "$top/build/tools/arm64/bin/busybox"
fi

echo "deps: all present"
