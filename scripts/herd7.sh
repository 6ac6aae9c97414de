#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print a directory to put first on PATH that holds 'herd7', the simulator
# the kernel's memory model (tools/memory-model) runs on, fetching it first
# when it is not there.  Debian 12 has no herdtools7; sid's package (pinned
# below) is built against glibc 2.42, newer than Debian 12's, so it runs
# through the dynamic loader of sid's libc6, extracted beside it, with
# HERDLIB naming its model library.  Nothing is installed on the machine.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
HERD_SUITE=${HERD_SUITE:-sid}
HERD_VERSION=${HERD_VERSION:-7.58-2}
root=$top/build/tools/herdtools7-$HERD_VERSION
bin=$root/bin

if [ ! -x "$bin/herd7" ] || ! "$bin/herd7" -version > /dev/null 2>&1; then
	rm -rf "$root"
	mkdir -p "$root/debs" "$bin"
	echo "herd7.sh: fetching herdtools7 $HERD_VERSION and its libc from Debian's $HERD_SUITE" >&2
	fetch() {
		rm -f "$root"/debs/*.deb
		(cd "$root/debs" && "$top/scripts/apt-suite.sh" "$HERD_SUITE" apt-get download -q \
			"herdtools7=$1" libc6 libgmp10 > download.log 2>&1)
	}
	got=$HERD_VERSION
	if ! fetch "$got"; then
		# sid moves on: a cold run takes the version it has now, said here;
		# the litmus tests' headers still judge what it answers.
		got=$("$top/scripts/apt-suite.sh" "$HERD_SUITE" apt-cache madison herdtools7 2>/dev/null |
			awk -F'|' 'NR == 1 { gsub(/ /, "", $2); print $2 }')
		if [ -z "$got" ] || ! fetch "$got"; then
			cat "$root/debs/download.log" >&2
			echo "herd7.sh: herdtools7 $HERD_VERSION could not be fetched from $HERD_SUITE," \
				"nor any other version of it" >&2
			exit 1
		fi
		echo "herd7.sh: $HERD_SUITE no longer has herdtools7 $HERD_VERSION; using its $got" >&2
	fi
	for deb in "$root"/debs/*.deb; do
		dpkg-deb -x "$deb" "$root/sysroot"
	done
	lib=$root/sysroot/usr/lib/x86_64-linux-gnu
	cat > "$bin/herd7" <<EOS
#!/bin/sh
# herdtools7 $got from Debian $HERD_SUITE, on its own libc (scripts/herd7.sh).
HERDLIB=\${HERDLIB:-$root/sysroot/usr/share/herdtools7/herd} \\
exec $lib/ld-linux-x86-64.so.2 --library-path $lib $root/sysroot/usr/bin/herd7 "\$@"
EOS
	chmod +x "$bin/herd7"
	"$bin/herd7" -version > /dev/null || { echo "herd7.sh: herd7 does not run" >&2; exit 1; }
fi
echo "$bin"
