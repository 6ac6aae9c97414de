#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the path of a sparse that checks the bases' sources, building it
# first when it is not there.  Debian 12's sparse (0.6.4) lacks
# __typeof_unqual__, so 7.3's scripts/checker-valid.sh rejects it and a C=2
# build silently checks nothing.  This builds sid's source package, pinned
# below, into build/tools/sparse-VERSION/ (apt verifies the source against
# the archive's signed index): a few seconds, no library from sid needed.
set -euo pipefail

# SPARSE=/path/to/sparse: use that one instead.
if [ -n "${SPARSE:-}" ]; then
	echo "$SPARSE"
	exit 0
fi
top=$(cd "$(dirname "$0")/.." && pwd)
SPARSE_SUITE=${SPARSE_SUITE:-sid}
SPARSE_VERSION=${SPARSE_VERSION:-0.6.5~rc1-2}
dir=$top/build/tools/sparse-$SPARSE_VERSION
bin=$dir/sparse

if [ ! -x "$bin" ]; then
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp"
	echo "sparse.sh: building sparse $SPARSE_VERSION from Debian's $SPARSE_SUITE source" >&2
	(cd "$dir.tmp" && "$top/scripts/apt-suite.sh" "$SPARSE_SUITE" apt-get source -qq --download-only \
		"sparse=$SPARSE_VERSION" > download.log 2>&1) || true
	orig=$(find "$dir.tmp" -maxdepth 1 -name 'sparse_*.orig.tar.*' | head -n 1)
	if [ -z "$orig" ]; then
		cat "$dir.tmp/download.log" >&2
		echo "sparse.sh: sparse $SPARSE_VERSION is not in $SPARSE_SUITE; it has:" >&2
		"$top/scripts/apt-suite.sh" "$SPARSE_SUITE" apt-cache madison sparse >&2 || true
		echo "  set SPARSE_VERSION (scripts/sparse.sh) to one of them" >&2
		exit 1
	fi
	tar -xf "$orig" -C "$dir.tmp"
	src=$(find "$dir.tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	if ! make -C "$src" -j"$(nproc)" sparse HAVE_LLVM=no HAVE_SQLITE=no HAVE_GTK=no \
			> "$dir.tmp/build.log" 2>&1; then
		tail -n 20 "$dir.tmp/build.log" >&2
		echo "sparse.sh: building sparse failed (log: ${dir#"$top"/}.tmp/build.log)" >&2
		exit 1
	fi
	mkdir -p "$dir"
	cp "$src/sparse" "$bin"
	rm -rf "$dir.tmp"
fi
echo "$bin"
