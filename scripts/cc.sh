#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The C compiler every kernel build here uses (kbuild.sh, kunit.py,
# check.sh, deb.sh): gcc through ccache when it is installed.
if command -v ccache >/dev/null 2>&1; then
	echo "ccache gcc"
else
	echo "gcc"
fi
