#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run apt-get or apt-cache against one Debian suite the machine's apt is
# not configured for (the 7.3 base from trixie-backports, tools from sid),
# through a private sources list, package lists and cache in build/apt/SUITE,
# so that the machine's apt configuration is never changed:
#
#   apt-suite.sh SUITE apt-get download linux-source-7.3=7.3.4-1~bpo13+1
#   apt-suite.sh SUITE apt-cache madison sparse
#
# The mirror is the one the machine's own sources name for Debian's main
# archive.  The suite's lists are fetched the first time, and again when a
# package=version asked for is not in them.  APT_ARCH=arm64 reads the lists of
# another architecture (in build/apt/SUITE-ARCH), for 'apt-get download'
# of a guest's program: nothing of it is installed on this machine.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
suite=${1:?usage: apt-suite.sh SUITE apt-get|apt-cache ARGS...}
tool=${2:?usage: apt-suite.sh SUITE apt-get|apt-cache ARGS...}
shift 2
case $tool in apt-get|apt-cache) ;; *) echo "apt-suite.sh: runs apt-get or apt-cache, not $tool" >&2; exit 2 ;; esac

d=$top/build/apt/$suite${APT_ARCH:+-$APT_ARCH}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
# shellcheck disable=SC2016 # apt's own $(FIELD) placeholders
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' 2>/dev/null |
	awk '$2 !~ /-security$/ { print $1; exit }')
mirror=${mirror:-http://deb.debian.org/debian/}
mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
signed=
[ -f "$keyring" ] && signed="signed-by=$keyring"
[ -n "${APT_ARCH:-}" ] && signed="arch=$APT_ARCH${signed:+ $signed}"
[ -n "$signed" ] && signed="[$signed] "
printf 'deb %s%s %s main\ndeb-src %s%s %s main\n' "$signed" "$mirror" "$suite" "$signed" "$mirror" "$suite" \
	> "$d/sources.list"
opts=(-o "Dir::Etc::SourceList=$d/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache")
[ -n "${APT_ARCH:-}" ] && opts+=(-o "APT::Architecture=$APT_ARCH" -o "APT::Architectures::=$APT_ARCH")

update() {
	echo "apt-suite.sh: apt-get update ($suite, private lists in ${d#"$top"/})" >&2
	apt-get "${opts[@]}" update -qq || { echo "apt-suite.sh: apt-get update failed ($suite)" >&2; exit 1; }
}
compgen -G "$d/lists/*Packages*" > /dev/null || update
# A pinned package=version the lists do not know yet: they may be old.
for a in "$@"; do
	case $a in
	-*) ;;
	*=*) known=$(apt-cache "${opts[@]}" madison "${a%%=*}" 2> /dev/null || true)
	     grep -qF " ${a#*=} " <<< "$known" || { update; break; } ;;
	esac
done
exec "$tool" "${opts[@]}" "$@"
