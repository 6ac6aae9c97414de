#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The C compiler every kernel build here uses (kbuild.sh, kunit.py,
# check.sh, deb.sh): gcc through ccache when it is installed.
#   cc.sh                      gcc for this machine
#   cc.sh aarch64-linux-gnu-   that cross gcc (an argument, not the
#                              environment's CROSS_COMPILE, which a
#                              developer may have exported for another
#                              tree)
if command -v ccache >/dev/null 2>&1; then
	echo "ccache ${1:-}gcc"
else
	echo "${1:-}gcc"
fi
