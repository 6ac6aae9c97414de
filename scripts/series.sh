#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel work tree and the patch series of one base: fetch the pinned
# base, keep it as a git repository in build/linux-BASE, apply the base's
# series file, and export the commits on top of the base back to it.
#
#   series.sh tree           fetch, verify, extract, commit as 'base', apply
#   series.sh export         write NNNN-*.patch and series into PATCHES
#   series.sh check-export   fail when the work tree holds work not in PATCHES
#   series.sh post           write the series to send into OUT/post: the
#                            cover letter and every patch, From: and
#                            Signed-off-by: the poster (git's identity)
#
# The stored series carries no Signed-off-by: lines: only a person can sign
# off (the DCO), and that is whoever posts the series.  'export' leaves them
# out, and 'check-export' and 'tree' compare without them, so that a work
# tree whose commits a poster signed off still matches; 'post' signs.
#
# Settings come from the environment (the Makefile passes base.mk along):
#   BASE_PKG BASE_VERSION BASE_SHA256  the pinned Debian package
#   BASE_SUITE                         its Debian suite; one the machine's
#                                      apt does not list is reached through
#                                      a private sources list in build/apt/
#   TREE PATCHES                       the work tree and the series directory
#   OUT                                the base's build outputs ('post')
#   SKIP_HASH=1                        accept a .deb whose hash is not pinned
#   FORCE=1                            'tree' may reset a tree holding
#                                      unexported work (a backup ref is kept)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
TREE=${TREE:-$top/build/linux-7.3}
case $TREE in /*) ;; *) TREE=$top/$TREE ;; esac
DL=${DL:-$top/build/dl}
PATCHES=${PATCHES:-$top/patches}
case $PATCHES in /*) ;; *) PATCHES=$top/$PATCHES ;; esac
: "${BASE_PKG:?set BASE_PKG (see base.mk)}"
: "${BASE_VERSION:?set BASE_VERSION (see base.mk)}"
BASE_SHA256=${BASE_SHA256:-}
BASE_SUITE=${BASE_SUITE:-}
# Names for messages: relative to the top.
tname=${TREE#"$top"/}
pname=${PATCHES#"$top"/}/

# The caller's identity as git's environment gives it, kept before the
# fixed one below takes its place: 'post' signs with it (or with git's
# config, user.name and user.email).
POSTER_NAME=${GIT_AUTHOR_NAME:-}
POSTER_EMAIL=${GIT_AUTHOR_EMAIL:-}
OUT=${OUT:-build/7.3}
case $OUT in /*) ;; *) OUT=$top/$OUT ;; esac

# A fixed identity and date for the base commit, so that every machine
# creates the same 'base' commit id and 'base-commit:' lines do not churn.
# It is also the committer of what 'git am' applies, so that 'tree' works on
# a machine with no git identity; the tree itself gets none: commits made
# there are the developer's own.
export GIT_AUTHOR_NAME="zlc base" GIT_AUTHOR_EMAIL="base@localhost"
export GIT_COMMITTER_NAME="zlc base" GIT_COMMITTER_EMAIL="base@localhost"

die() { echo "series.sh: $*" >&2; exit 1; }
say() { echo "series.sh: $*"; }
tgit() { git -C "$TREE" "$@"; }

# Options that make format-patch output depend on the commits alone.
FP_OPTS=(--zero-commit --no-signature --abbrev=12 --no-numbered --no-thread)

deb_path() {
	# apt-get download names the file with ':' in the epoch escaped.
	echo "$DL/${BASE_PKG}_${BASE_VERSION//:/%3a}_all.deb"
}

# apt-get or apt-cache for BASE_SUITE: the machine's own when its apt lists
# the suite, else through a private sources list (scripts/apt-suite.sh),
# so that the machine's apt configuration is never changed.
apt_for_base() {
	# shellcheck disable=SC2016 # apt's own $(FIELD) placeholders
	if [ -z "$BASE_SUITE" ] ||
	   apt-get indextargets --format '$(RELEASE)' 'Created-By: Packages' 2>/dev/null |
			grep -qx "$BASE_SUITE"; then
		"$@"
	else
		"$top/scripts/apt-suite.sh" "$BASE_SUITE" "$@"
	fi
}

# apt-cache show exits 0 for a version it does not know: ask for output
# (whole, so that no early exit of grep fails the pipe).
known_version() {
	local shown
	shown=$(apt_for_base apt-cache show "$BASE_PKG=$BASE_VERSION" 2>/dev/null || true)
	grep -q '^Package:' <<< "$shown"
}

fetch_deb() {
	local deb where=${BASE_SUITE:-"the machine's suites"}
	deb=$(deb_path)
	mkdir -p "$DL"
	if [ ! -f "$deb" ]; then
		if ! known_version; then
			say "apt does not know $BASE_PKG $BASE_VERSION yet: apt-get update ($where)"
			apt_for_base apt-get update -qq || die "apt-get update failed ($where)"
		fi
		if ! known_version; then
			echo "series.sh: $BASE_PKG $BASE_VERSION is not in $where (any more)." >&2
			echo "  Versions apt offers now:" >&2
			apt_for_base apt-cache madison "$BASE_PKG" 2>/dev/null | awk '!seen[$3]++ { print "    " $3 }' | grep . >&2 ||
				echo "    none" >&2
			echo "  Pick one and run: make tree BASE_VERSION=<version> BASE_SHA256=<sha256>" >&2
			echo "  (or SKIP_HASH=1 instead of BASE_SHA256 to skip the hash check)," >&2
			echo "  then update base.mk once the series applies." >&2
			exit 1
		fi
		say "downloading $BASE_PKG $BASE_VERSION ($where)"
		(cd "$DL" && apt_for_base apt-get download -q "$BASE_PKG=$BASE_VERSION" 2>&1 |
			grep -v 'unsandboxed as root' || true)
		[ -f "$deb" ] || die "apt-get download did not produce $deb"
	fi
	verify_deb "$deb"
}

verify_deb() {
	local deb=$1 sum
	sum=$(sha256sum "$deb" | cut -d' ' -f1)
	if [ "$sum" = "$BASE_SHA256" ]; then
		return 0
	fi
	if [ "${SKIP_HASH:-0}" = 1 ]; then
		say "WARNING: hash check skipped on request; $deb has sha256 $sum"
		return 0
	fi
	rm -f "$deb"
	die "sha256 of $(basename "$deb") is $sum, expected ${BASE_SHA256:-<unset>}; removed it. Pin the new hash in base.mk, or pass SKIP_HASH=1."
}

create_tree() {
	local deb tmp tarball
	deb=$(deb_path)
	tmp="$TREE.tmp"
	rm -rf "$tmp"
	mkdir -p "$tmp/deb"
	say "extracting $(basename "$deb")"
	dpkg-deb -x "$deb" "$tmp/deb"
	tarball=$(ls "$tmp"/deb/usr/src/linux-source-*.tar.xz 2>/dev/null | head -n 1)
	[ -n "$tarball" ] || die "no linux-source tarball inside $deb"
	mkdir "$tmp/src"
	tar -xJf "$tarball" -C "$tmp/src" --strip-components=1
	rm -rf "$tmp/deb"
	say "committing the pristine tree as 'base'"
	git -C "$tmp/src" init -q -b work
	git -C "$tmp/src" config core.abbrev 12
	git -C "$tmp/src" config gc.auto 0
	git -C "$tmp/src" add -f -A .
	GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
		git -C "$tmp/src" commit -q -m "base: $BASE_PKG $BASE_VERSION"
	git -C "$tmp/src" tag base
	echo "$BASE_PKG $BASE_VERSION" > "$tmp/src/.git/zlc-base"
	rm -rf "$TREE"
	mv "$tmp/src" "$TREE"
	rmdir "$tmp"
}

# The patches named in the series file, in order.
series_files() {
	[ -f "$PATCHES/series" ] || return 0
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$PATCHES/series"
}

# One patch (stdin) as the stored series keeps it: without its Signed-off-by:
# lines, and without the blank line that then ends its message, as
# format-patch writes a commit that has none.  Only the message, before the
# first '---', is touched.
unsigned() {
	awk '
		diff { print; next }
		/^---$/ { diff = 1; held = 0; print; next }
		!body { print; body = ($0 == ""); next }
		/^Signed-off-by:/ { next }
		$0 == "" { if (held) print ""; held = 1; next }
		{ if (held) print ""; held = 0; print }
		END { if (held) print "" }
	'
}

# Fingerprint of what the series directory holds; and of what the tree would export.
patches_sum() {
	local f
	series_files | while read -r f; do
		unsigned < "$PATCHES/$f"
	done | sha256sum | cut -d' ' -f1
}

# Export base..HEAD into directory $1 (NNNN-subject.patch plus series).
# A commit whose message would not come back from its patch as it is
# exports a patch that 'tree' applies as another commit, so that a fresh
# tree never matches its series: blank lines in a row or trailing spaces
# (a cherry-pick or 'commit --cleanup=verbatim' keeps them; git am strips
# them), a first paragraph of several lines (format-patch folds it into
# one Subject: line), a '---' or 'diff ' line in the body (git am ends the
# message there).  Each commit's message goes through format-patch and
# git mailinfo, as git am reads it; name those that do not come back.
messages_git_am_keeps() {
	local c bad=0 tmp subject
	tmp=$(mktemp -d)
	for c in $(tgit rev-list --reverse base..HEAD); do
		tgit format-patch -1 --stdout "${FP_OPTS[@]}" "$c" |
			git mailinfo "$tmp/msg" "$tmp/patch" > "$tmp/info"
		subject=$(sed -n 's/^Subject: //p' "$tmp/info")
		if ! { printf '%s\n\n' "$subject"; cat "$tmp/msg"; } | git stripspace |
		     cmp -s - <(tgit cat-file commit "$c" | sed -e '1,/^$/d'); then
			echo "$tname: commit $(tgit log -1 --format='%h ("%s")' "$c")'s message does not come back from its patch as it is (blank lines in a row, trailing spaces, a first paragraph of several lines, or a '---' or 'diff ' line in the body): fix it with 'git commit --amend' (or reword it in a rebase)" >&2
			bad=1
		fi
	done
	rm -rf "$tmp"
	return $bad
}

export_to() {
	local out=$1 f
	mkdir -p "$out"
	tgit format-patch -q "${FP_OPTS[@]}" -o "$out" base..HEAD >/dev/null
	: > "$out/series"
	for f in $(cd "$out" && ls [0-9][0-9][0-9][0-9]-*.patch 2>/dev/null); do
		unsigned < "$out/$f" > "$out/$f.tmp"
		mv "$out/$f.tmp" "$out/$f"
		echo "$f" >> "$out/series"
	done
}

tree_sum() {
	local tmp sum
	tmp=$(mktemp -d)
	export_to "$tmp"
	sum=$(cd "$tmp" && while read -r f; do cat "$f"; done < series | sha256sum | cut -d' ' -f1)
	rm -rf "$tmp"
	echo "$sum"
}

dirty_files() {
	tgit status --porcelain --untracked-files=normal
}

apply_series() {
	local f n=0
	for f in $(series_files); do
		[ -f "$PATCHES/$f" ] || die "${pname}series names $f, which does not exist"
		if ! tgit am -q --committer-date-is-author-date "$PATCHES/$f"; then
			tgit am --abort || true
			die "patch $f does not apply to the base; the tree is left at the last good patch"
		fi
		n=$((n + 1))
	done
	patches_sum > "$TREE/.git/zlc-synced"
	say "$n patches applied on top of base"
}

cmd_tree() {
	if [ -d "$TREE/.git" ]; then
		local have
		have=$(cat "$TREE/.git/zlc-base" 2>/dev/null || echo unknown)
		if [ "$have" != "$BASE_PKG $BASE_VERSION" ]; then
			die "$tname is based on '$have', base.mk pins '$BASE_PKG $BASE_VERSION'. Export and commit any work, then remove $tname and run 'make tree' again."
		fi
	else
		fetch_deb
		create_tree
		apply_series
		return 0
	fi

	if [ -n "$(dirty_files)" ]; then
		dirty_files | head -n 20 >&2
		die "$tname has uncommitted changes (above): commit them there and 'make export', or discard them. Nothing was changed."
	fi
	local want now synced
	want=$(patches_sum)
	now=$(tree_sum)
	if [ "$want" = "$now" ]; then
		say "$tname is up to date with $pname ($(series_files | wc -l) patches)"
		return 0
	fi
	synced=$(cat "$TREE/.git/zlc-synced" 2>/dev/null || true)
	if [ "$now" != "$synced" ] && [ "${FORCE:-0}" != 1 ]; then
		echo "series.sh: $tname holds commits that are not in $pname:" >&2
		tgit log --oneline base..HEAD >&2
		die "run 'make export' and commit $pname (or FORCE=1 to reset to $pname; a backup ref is kept). Nothing was changed."
	fi
	local backup
	backup="backup/$(date +%Y%m%d-%H%M%S)"
	tgit branch -f "$backup" HEAD
	say "$pname changed: re-applying the series (old HEAD kept as $backup)"
	tgit reset -q --hard base
	apply_series
}

cmd_export() {
	[ -d "$TREE/.git" ] || die "no $tname: run 'make tree' first"
	if [ -n "$(dirty_files)" ]; then
		dirty_files | head -n 20 >&2
		die "$tname has uncommitted changes (above): commit them first; only commits are exported"
	fi
	messages_git_am_keeps || die "nothing was exported"
	local tmp f changed=0
	tmp=$(mktemp -d)
	export_to "$tmp"
	mkdir -p "$PATCHES"
	# Drop numbered patches that are no longer in the series; keep the
	# cover letter (0000-cover-letter.patch), which is written by hand.
	for f in $(cd "$PATCHES" && ls [0-9][0-9][0-9][0-9]-*.patch 2>/dev/null); do
		[ "$f" = 0000-cover-letter.patch ] && continue
		if [ ! -f "$tmp/$f" ]; then
			rm -f "$PATCHES/$f"
			echo "  removed $f"
			changed=1
		fi
	done
	for f in $(cat "$tmp/series") series; do
		if ! cmp -s "$tmp/$f" "$PATCHES/$f"; then
			cp "$tmp/$f" "$PATCHES/$f"
			echo "  wrote $f"
			changed=1
		fi
	done
	rm -rf "$tmp"
	patches_sum > "$TREE/.git/zlc-synced"
	if [ $changed = 0 ]; then
		say "$pname already matches $tname ($(series_files | wc -l) patches)"
	else
		say "exported $(series_files | wc -l) patches; review 'git diff $pname' and commit"
	fi
}

cmd_check_export() {
	if [ ! -d "$TREE/.git" ]; then
		say "no $tname work tree: nothing to lose"
		return 0
	fi
	local bad=0 tmp f
	if [ -n "$(dirty_files)" ]; then
		echo "$tname has uncommitted changes:" >&2
		dirty_files | head -n 20 >&2
		bad=1
	fi
	messages_git_am_keeps || bad=1
	tmp=$(mktemp -d)
	export_to "$tmp"
	for f in $(cat "$tmp/series"); do
		if [ ! -f "$PATCHES/$f" ]; then
			echo "not in $pname: $f" >&2
			bad=1
		elif ! unsigned < "$PATCHES/$f" | cmp -s "$tmp/$f" -; then
			echo "differs from $tname: $pname$f" >&2
			bad=1
		fi
	done
	for f in $(series_files); do
		if [ ! -f "$tmp/$f" ]; then
			echo "in ${pname}series but not a commit in $tname: $f" >&2
			bad=1
		fi
	done
	if ! cmp -s "$tmp/series" "$PATCHES/series" 2>/dev/null &&
	   [ -n "$(cat "$tmp/series")$(series_files)" ]; then
		echo "${pname}series differs from base..HEAD in $tname" >&2
		bad=1
	fi
	rm -rf "$tmp"
	if [ $bad != 0 ]; then
		echo "check-export: $tname and $pname differ: 'make export' (or 'make tree' if $pname is newer)" >&2
		return 1
	fi
	say "check-export: $pname matches $tname ($(series_files | wc -l) patches)"
}

# The series as its poster sends it, into OUT/post: the tree's commits
# (which must match the stored series) made again with the poster as
# author and committer and their Signed-off-by: added, then format-patch;
# and the cover letter with its From: header set to the poster.  The new
# commits are made with commit-tree from the trees git already has, so that
# nothing is checked out and no branch moves; nothing refers to them after.
cmd_post() {
	local name email dir=$top
	[ -d "$TREE/.git" ] && dir=$TREE
	name=${POSTER_NAME:-$(git -C "$dir" config user.name || true)}
	email=${POSTER_EMAIL:-$(git -C "$dir" config user.email || true)}
	if [ -z "$name" ] || [ -z "$email" ]; then
		die "post: no git identity: set git config user.name and user.email (they sign the series)"
	fi
	local me="$name <$email>" cover=$PATCHES/0000-cover-letter.patch post=$OUT/post
	[ -d "$TREE/.git" ] || die "post: no $tname: run 'make tree' first"
	[ -f "$cover" ] || die "post: no ${pname}0000-cover-letter.patch"
	cmd_check_export > /dev/null ||
		die "post: $tname and $pname differ (above): the series sent is what both hold"

	# The cover letter's "[PREFIX 00/N]" gives the patches theirs.
	local subject prefix total n
	subject=$(sed -n 's/^Subject: \[\([^]]*\) 0*\/\([0-9][0-9]*\)\].*/\1 \2/p' "$cover" | head -n 1)
	[ -n "$subject" ] || die "post: the cover letter's Subject: does not start [PATCH 00/N]"
	prefix=${subject% *}
	total=$((10#${subject##* }))
	n=$(tgit rev-list --count base..HEAD)
	[ "$n" -gt 0 ] || die "post: $tname has no commits on top of base"
	[ "$n" = "$total" ] || die "post: the cover letter is for $total patches, $tname has $n"

	# Only the poster signs: another's sign-off is refused, not sent on;
	# the poster's own, if a commit has it already, is not added twice
	# (commit --signoff would add it again when another trailer follows it).
	local c who msg head
	head=$(tgit rev-parse base)
	for c in $(tgit rev-list --reverse base..HEAD); do
		while IFS= read -r who; do
			[ -z "$who" ] || [ "$who" = "$me" ] ||
				die "post: '$(tgit log -1 --format=%s "$c")' is signed off by $who: only the poster signs (drop the line from the commit)"
		done < <(tgit log -1 --format='%(trailers:key=Signed-off-by,valueonly,unfold)' "$c")
		msg=$(tgit log -1 --format=%B "$c" |
			tgit interpret-trailers --no-divider --where end --if-exists addIfDifferent \
				--trailer "Signed-off-by: $me")
		head=$(printf '%s\n' "$msg" |
			GIT_AUTHOR_NAME=$name GIT_AUTHOR_EMAIL=$email \
			GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email \
			tgit commit-tree "$c^{tree}" -p "$head")
	done

	local tmp=$post.tmp from
	rm -rf "$tmp"
	mkdir -p "$tmp"
	tgit format-patch -q "${FP_OPTS[@]}" --numbered --subject-prefix="$prefix" \
		-o "$tmp" "base..$head" > /dev/null
	# The From: header as format-patch writes it (quoted, encoded, folded).
	from=$(awk '/^From: / { f = 1; print; next } f && /^[ \t]/ { print; next } f { exit }' \
		"$tmp"/0001-*.patch)
	FROM=$from awk '
		!body && /^From: / { print ENVIRON["FROM"]; skip = 1; next }
		skip && /^[ \t]/ { next }
		{ skip = 0 }
		$0 == "" { body = 1 }
		{ print }
	' "$cover" > "$tmp/0000-cover-letter.patch"
	rm -rf "$post"
	mv "$tmp" "$post"
	say "wrote ${post#"$top"/}/: the cover letter and $n patches, from and signed off by $me"
}

case "${1:-}" in
tree)		cmd_tree ;;
export)		cmd_export ;;
check-export)	cmd_check_export ;;
post)		cmd_post ;;
*)		echo "usage: $0 tree|export|check-export|post" >&2; exit 2 ;;
esac
