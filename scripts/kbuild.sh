#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the kernel in build/linux-BASE with config fragments from configs/,
# out of tree in its own directory:
#
#   kbuild.sh NAME [make targets...]      (default target: bzImage)
#
# The fragments are configs/NAME.config, or those FRAGMENT lists (space
# separated, later ones override earlier ones).  They are merged by the
# kernel's scripts/kconfig/merge_config.sh on top of every other option's
# default (alldefconfig), again whenever a fragment changes; an option
# that Kconfig did not keep as asked stops the build, named.  The compiler
# comes from scripts/cc.sh (ccache when installed).  Extra make arguments
# come from KBUILD_ARGS (e.g. "W=1" or "C=2"); the output directory from
# KBUILD_OUT.  A line every minute tells that the build goes on.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# Kernel scripts run '#!/usr/bin/env python3': give them the provisioned one.
PATH="$("$top/scripts/python-bin.sh"):$PATH"
name=${1:?usage: kbuild.sh NAME [targets...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(bzImage)

# The base's work tree and build outputs (base.mk; the Makefile exports them).
TREE=${TREE:-build/linux-7.3}
OUT=${OUT:-build/7.3}
case $TREE in /*) ;; *) TREE=$top/$TREE ;; esac
case $OUT in /*) ;; *) OUT=$top/$OUT ;; esac
src=$TREE
read -r -a frags <<< "${FRAGMENT:-$top/configs/$name.config}"
out=${KBUILD_OUT:-$OUT/$name}
[ -f "$src/Makefile" ] || { echo "kbuild.sh: no kernel tree in $src: run 'make tree'" >&2; exit 1; }
for i in "${!frags[@]}"; do
	f=${frags[$i]}
	[ -f "$f" ] || { echo "kbuild.sh: no config fragment $f" >&2; exit 1; }
	# merge_config.sh runs in the source tree: give it absolute paths.
	frags[i]=$(cd "$(dirname "$f")" && pwd)/$(basename "$f")
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
cc=$("$top/scripts/cc.sh")
# shellcheck disable=SC2206
extra=(${KBUILD_ARGS:-})

stamp="$out/.fragment"
if [ ! -f "$out/.config" ] || ! cat "${frags[@]}" | cmp -s - "$stamp"; then
	rm -f "$stamp"
	if ! (cd "$src" && ARCH=x86_64 scripts/kconfig/merge_config.sh -O "$out" "${frags[@]}") \
			> "$out/merge_config.log" 2>&1; then
		echo "kbuild.sh: merge_config.sh failed (log: $out/merge_config.log)" >&2
		tail -20 "$out/merge_config.log" >&2
		exit 1
	fi
	# "Value requested for CONFIG_X not in final .config" (7.3 puts
	# "WARNING: " before it).
	if grep -qE '^(WARNING: )?Value requested for' "$out/merge_config.log"; then
		echo "kbuild.sh: Kconfig did not keep options that ${frags[*]##*/} ask for:" >&2
		grep -A2 -E '^(WARNING: )?Value requested for' "$out/merge_config.log" | sed 's/^/  /' >&2
		exit 1
	fi
	cat "${frags[@]}" > "$stamp"
fi

start=$SECONDS
touch "$out/.build-start"
# The ticker ends with this script, however it ends: bash killed by a signal
# runs no EXIT trap.
(while sleep 60 && kill -0 $$ 2>/dev/null; do
	echo "[build $name] $(( (SECONDS - start) / 60 ))m, $(find "$out" -name '*.o' -newer "$out/.build-start" | wc -l) objects built"
done) &
ticker=$!
trap 'kill $ticker 2>/dev/null' EXIT
make -s -C "$src" O="$out" ARCH=x86_64 CC="$cc" -j"$(nproc)" "${extra[@]}" "${targets[@]}"
