#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the kernel in build/linux with a config fragment from configs/,
# out of tree in its own directory:
#
#   kbuild.sh NAME [make targets...]      (default target: bzImage)
#
# The .config is configs/NAME.config on top of every other option's default
# (alldefconfig), remade whenever the fragment changes; every option the
# fragment sets must survive, or the build stops naming the ones that did
# not.  ccache is used when installed.  Extra make arguments come from
# KBUILD_ARGS (e.g. "W=1" or "C=2"); the output directory from KBUILD_OUT.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
name=${1:?usage: kbuild.sh NAME [targets...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(bzImage)

src=${TREE:-$top/build/linux}
frag=${FRAGMENT:-$top/configs/$name.config}
out=${KBUILD_OUT:-$top/build/$name}
[ -f "$src/Makefile" ] || { echo "kbuild.sh: no kernel tree in $src: run 'make tree'" >&2; exit 1; }
[ -f "$frag" ] || { echo "kbuild.sh: no config fragment $frag" >&2; exit 1; }
mkdir -p "$out"

cc=gcc
if command -v ccache >/dev/null 2>&1; then
	cc="ccache gcc"
fi
# shellcheck disable=SC2206
extra=(${KBUILD_ARGS:-})
kmake() { make -s -C "$src" O="$out" ARCH=x86_64 CC="$cc" "$@"; }

stamp="$out/.fragment"
if [ ! -f "$out/.config" ] || ! cmp -s "$frag" "$stamp"; then
	kmake KCONFIG_ALLCONFIG="$frag" alldefconfig >/dev/null
	cp "$frag" "$stamp"
fi

# Every option the fragment names must have kept its value.
missing=$(grep -E '^(CONFIG_[A-Za-z0-9_]+=|# CONFIG_[A-Za-z0-9_]+ is not set)' "$frag" |
	while read -r line; do
		case "$line" in
		"# "*)	opt=${line#\# }; opt=${opt%% *}
			grep -q "^$opt=" "$out/.config" && echo "$line" ;;
		*)	grep -qxF "$line" "$out/.config" || echo "$line" ;;
		esac
	done)
if [ -n "$missing" ]; then
	echo "kbuild.sh: configs/$name.config asks for options Kconfig did not keep:" >&2
	echo "$missing" | sed 's/^/  /' >&2
	rm -f "$stamp"
	exit 1
fi

kmake -j"$(nproc)" "${extra[@]}" "${targets[@]}"
