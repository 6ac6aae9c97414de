#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: Debian packages of the patched kernel for a real NUMA machine,
# built with the kernel's own 'make bindeb-pkg' into build/BASE/deb/.
#
#   KCONFIG=FILE   the configuration: a full .config (e.g. a distribution's
#                  /boot/config-*), brought up to date with olddefconfig, or
#                  a fragment from configs/ (alldefconfig on top of it).
#                  Default: /boot/config-$(uname -r) when it exists, else
#                  configs/guest.config.
#   LOCALVERSION   appended to the version (default -zlc).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# Kernel scripts run '#!/usr/bin/env python3': give them the provisioned one.
PATH="$("$top/scripts/python-bin.sh"):$PATH"
# The base's work tree and build outputs (base.mk; the Makefile exports them).
TREE=${TREE:-build/linux-7.3}
OUT=${OUT:-build/7.3}
case $TREE in /*) ;; *) TREE=$top/$TREE ;; esac
case $OUT in /*) ;; *) OUT=$top/$OUT ;; esac
tree=$TREE
debdir=$OUT/deb
obj=$debdir/obj
running=/boot/config-$(uname -r)

kconfig=${KCONFIG:-}
if [ -z "$kconfig" ]; then
	if [ -f "$running" ]; then kconfig=$running; else kconfig=$top/configs/guest.config; fi
fi
[ -f "$kconfig" ] || { echo "deb: no config file '$kconfig'" >&2; exit 1; }
kconfig=$(cd "$(dirname "$kconfig")" && pwd)/$(basename "$kconfig")
[ -f "$tree/Makefile" ] || { echo "deb: no kernel tree in $tree: run 'make tree'" >&2; exit 1; }

cc=$("$top/scripts/cc.sh")
kmake() { make -s -C "$tree" O="$obj" ARCH=x86_64 CC="$cc" LOCALVERSION="${LOCALVERSION:--zlc}" "$@"; }

mkdir -p "$obj"
# A full configuration names CONFIG_NUMA one way or the other; a fragment
# from configs/ names only what it needs.
if [ "$(grep -cE '^(CONFIG_[A-Z0-9_]+=|# CONFIG_[A-Z0-9_]+ is not set)' "$kconfig")" -gt 500 ]; then
	echo "deb: full configuration $kconfig (olddefconfig)"
	cp "$kconfig" "$obj/.config"
	# A distribution's config names its own signing keys, which this
	# build does not have: let the build make a throwaway module key.
	"$tree/scripts/config" --file "$obj/.config" \
		--set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
		--set-str MODULE_SIG_KEY "certs/signing_key.pem"
	kmake olddefconfig
else
	echo "deb: configuration fragment $kconfig (alldefconfig)"
	kmake KCONFIG_ALLCONFIG="$kconfig" alldefconfig
fi
grep -q '^CONFIG_NUMA=y' "$obj/.config" ||
	echo "deb: warning: this configuration has no CONFIG_NUMA: the zonelist cache is compiled out" >&2

# bindeb-pkg leaves the packages next to the output directory, in $debdir.
rm -f "$debdir"/*.deb "$debdir"/*.changes "$debdir"/*.buildinfo
kmake -j"$(nproc)" bindeb-pkg

shopt -s nullglob
debs=("$debdir"/linux-image-*.deb)
[ ${#debs[@]} -gt 0 ] || { echo "deb: bindeb-pkg made no linux-image package" >&2; exit 1; }
release=$(cat "$obj/include/config/kernel.release")
image=("$debdir"/linux-image-"${release}"_*.deb)
contents=$(dpkg-deb --contents "${image[0]}")
grep -q "boot/vmlinuz-$release\$" <<< "$contents" ||
	{ echo "deb: ${image[0]} holds no boot/vmlinuz-$release" >&2; exit 1; }
rel=${debdir#"$top"/}
sel=${OUT#"$top"/}/selftests
cat <<EOF

deb: built in $rel/:
$(cd "$debdir" && ls -1 ./*.deb | sed 's|^\./|  |')

To install it on a NUMA machine running Debian or Ubuntu:
  sudo dpkg -i $rel/linux-image-${release}_*.deb
  sudo reboot          # pick ${release} in the boot menu if it is not the default

Then, on that machine, check that the cache is there and measure it:
  cat /proc/sys/vm/zonelist_cache             # 1: on
  grep zlc_ /proc/vmstat
  make $sel/zonelist_cache_memhog  # or build it from tools/testing/selftests/mm
  sudo $sel/zonelist_cache_memhog -m compare -p 90 -t \$(nproc) -r 5
  sudo make bench HW=1                        # the same, into results/
EOF
