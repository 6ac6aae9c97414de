#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The C compiler every kernel build here uses (kbuild.sh, kunit.py,
# check.sh, deb.sh): gcc through ccache when it is installed; with
# CROSS_COMPILE set (aarch64-linux-gnu-), that cross gcc.
if command -v ccache >/dev/null 2>&1; then
	echo "ccache ${CROSS_COMPILE:-}gcc"
else
	echo "${CROSS_COMPILE:-}gcc"
fi
