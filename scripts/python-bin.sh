#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Print a directory to put first on PATH, holding a 'python3' that runs the
# Python 'make deps' provisions: $PY, by default Debian's /usr/bin/python3,
# which has ply, GitPython, PyYAML and Sphinx from Debian's packages.
#
# Kernel scripts start Python as '#!/usr/bin/env python3' (spdxcheck.py from
# checkpatch.pl, kunit.py, kernel-doc in newer trees).  Without this, they
# find whatever python3 comes first on PATH, e.g. a pyenv build without
# those modules, and checkpatch's SPDX check crashes.
#
#   PATH="$(scripts/python-bin.sh):$PATH"
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
py=${PY:-/usr/bin/python3}
dir=$top/build/python-bin
want="#!/bin/sh
exec $py \"\$@\""

mkdir -p "$dir"
# Rewritten only when $PY changes, so that parallel callers do not race.
if [ "$(cat "$dir/python3" 2>/dev/null)" != "$want" ]; then
	printf '%s\n' "$want" > "$dir/python3.$$"
	chmod +x "$dir/python3.$$"
	mv -f "$dir/python3.$$" "$dir/python3"
fi
echo "$dir"
