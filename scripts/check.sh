#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: what linux-mm looks at before anyone runs the series.
#
#   checkpatch  scripts/checkpatch.pl --strict --no-signoff on every patch
#               (the stored series carries no sign-off: 'make post'); a finding
#               fails unless checkpatch.justified beside the series lists it and the
#               cover letter explains it
#   kernel-doc  scripts/kernel-doc -none -Wall on the touched kernel files:
#               no warning that the base tree does not have
#   bisect      the guest config builds after each patch in turn
#   configs     CONFIG_NUMA=n, allnoconfig, CPUSETS=n and VM_EVENT_COUNTERS=n
#               (the last two with NUMA on) build
#   warnings    W=1 and sparse (C=2) on the touched .c files, with
#               configs/warnings.config so that every added line compiles
#               (zlctool.cppcover checks): no warning that the base tree
#               built the same way does not have
#   htmldocs    make SPHINXDIRS=mm htmldocs: no warning from the new page
#               or the kernel-doc it pulls in
#   litmus      the litmus tests in litmus/ give, under the base tree's
#               memory model (tools/memory-model, herd7), the result each
#               states in its header: checked by the kernel's own
#               scripts/checktheselitmus.sh
#   deb         make deb builds installable packages (the guest config)
#   cross       W=1 and sparse on the touched .c files for riscv64 and
#               ppc64le, each from its architecture's defconfig with NUMA,
#               KUnit and the suite on (scripts/config): no warning that
#               the base tree built the same way does not have
#   arm64       make arm64: the series cross-built for arm64, a weakly
#               ordered CPU, its KUnit suite on 2 and 4 nodes and on a 6G
#               node 0 (DMA and Normal zones), and the locality kselftest,
#               under qemu-system-aarch64 (virt board)
#
# CHECKS="checkpatch kernel-doc" runs a subset.  One line per check, a
# summary line last; the exit status is 1 when any check failed.  Logs go
# to build/BASE/check/NAME.log; BASE (base.mk) picks the series and tree.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# Kernel scripts run '#!/usr/bin/env python3': give them the provisioned one.
PATH="$("$top/scripts/python-bin.sh"):$PATH"
cd "$top" || exit 2
# The base's work tree and build outputs (base.mk; the Makefile exports them).
TREE=${TREE:-build/linux-7.3}
OUT=${OUT:-build/7.3}
PATCHES=${PATCHES:-patches}
case $PATCHES in /*) ;; *) PATCHES=$top/$PATCHES ;; esac
case $TREE in /*) ;; *) TREE=$top/$TREE ;; esac
case $OUT in /*) ;; *) OUT=$top/$OUT ;; esac
tree=$TREE
base_tree=$TREE-base
out=$OUT/check
ALL="checkpatch kernel-doc bisect configs warnings htmldocs litmus deb cross arm64"
CHECKS=${CHECKS:-$ALL}
mkdir -p "$out"

[ -e "$tree/.git" ] || { echo "check: no kernel tree in $tree: run 'make tree'" >&2; exit 2; }
for c in $CHECKS; do
	case " $ALL " in *" $c "*) ;; *) echo "check: unknown check '$c' (known: $ALL)" >&2; exit 2 ;; esac
done

# The base tree, for comparisons: a worktree of the work tree at tag base.
base_worktree() {
	if [ ! -d "$base_tree" ]; then
		git -C "$tree" worktree add --quiet --detach "$base_tree" base
	else
		git -C "$base_tree" checkout -q --detach base
	fi
}

# Kernel files the series touches (not tools/, not Documentation/).
touched() {
	git -C "$tree" diff --name-only base HEAD -- "$@" ':!tools' ':!Documentation'
}

# "file:123:45: warning: text" -> "file: warning: text", and kernel-doc's
# "Warning: file:123 text" -> "Warning: file: text", so that moved lines
# compare equal; then one finding per line, sorted.
normalize() {
	sed -E -e 's|^'"$tree"'/||; s|^'"$base_tree"'/||; s|^\.\./linux(-base)?/||' \
	       -e 's/^([^: ]+):[0-9]+(:[0-9]+)?:/\1:/' \
	       -e 's/^(Warning|Error): ([^: ]+):[0-9]+ /\1: \2: /' | sort
}

# New findings: lines of $2 (patched) that $1 (base) does not have, as multisets.
new_findings() {
	comm -13 <(normalize < "$1") <(normalize < "$2")
}

detail=""

# A finding is a line checkpatch printed as one ("FILE:LINE: TYPE: text");
# anything else it prints, on either stream, or an exit status other than
# 0 (clean) or 1 (findings), means it crashed, e.g. a script it runs could
# not start, and the check fails as a crash, not with findings.
CHECKPATCH_FINDING='^[^ ]+(:[0-9]+)?: (ERROR|WARNING|CHECK): '

check_checkpatch() {
	local p f n=0 bad=0 justified=0 crashed=0 findings rc stray err=$out/checkpatch.stderr
	for p in "$PATCHES"/[0-9]*.patch; do
		f=$(basename "$p")
		[ "$f" = 0000-cover-letter.patch ] && continue
		n=$((n + 1))
		# --no-signoff: the stored series carries no Signed-off-by: on
		# purpose (only its poster signs, 'make post'); all else is --strict.
		findings=$(cd "$tree" && scripts/checkpatch.pl --strict --no-signoff --terse --no-summary "$p" 2> "$err")
		rc=$?
		stray=$(grep -vE "$CHECKPATCH_FINDING" <<< "$findings" | grep .)
		if [ "$rc" -gt 1 ] || [ -s "$err" ] || [ -n "$stray" ]; then
			crashed=$((crashed + 1))
			echo "CRASH: $f: checkpatch.pl exited $rc and printed what is not a finding:"
			{ cat "$err"; echo "$stray"; } | grep . | head -n 20 | sed 's/^/    /'
			continue
		fi
		while IFS= read -r line; do
			[ -n "$line" ] || continue
			if is_justified "$f" "$line"; then
				justified=$((justified + 1))
				echo "justified: $f: $line"
			else
				bad=$((bad + 1))
				echo "FINDING: $f: $line"
			fi
		done <<< "$findings"
	done
	if [ "$crashed" -gt 0 ]; then
		detail="checkpatch.pl CRASHED on $crashed of $n patches (see the log); $bad findings in the others"
	else
		detail="$n patches, $bad unjustified findings, $justified justified in the cover letter"
	fi
	check_cover_letter || bad=$((bad + 1))
	[ "$bad" -eq 0 ] && [ "$crashed" -eq 0 ]
}

# The cover letter names every patch of the series and the pinned base.
check_cover_letter() {
	local cl=$PATCHES/0000-cover-letter.patch p subject base rc=0
	[ -f "$cl" ] || { echo "no ${PATCHES#"$top"/}/0000-cover-letter.patch"; detail="$detail; no cover letter"; return 1; }
	for p in "$PATCHES"/[0-9]*.patch; do
		[ "$p" = "$cl" ] && continue
		# A long Subject: is folded onto lines that start with a space.
		subject=$(awk '/^Subject: /{ s = $0; while ((getline l) > 0 && l ~ /^ /) s = s l; print s; exit }' "$p" |
			sed 's/^Subject: \[PATCH[^]]*\] //')
		grep -qF "  $subject" "$cl" ||
			{ echo "the cover letter's shortlog lacks: $subject"; rc=1; }
	done
	base=$(git -C "$tree" rev-parse base)
	grep -qx "base-commit: $base" "$cl" ||
		{ echo "the cover letter does not say 'base-commit: $base'"; rc=1; }
	[ $rc -eq 0 ] || detail="$detail; the cover letter is stale"
	return $rc
}

# checkpatch.justified beside the series: "patch-name-prefix<TAB>text of the finding";
# the cover letter must quote the text.
is_justified() {
	local prefix text
	while IFS=$'\t' read -r prefix text; do
		case "$prefix" in ''|'#'*) continue ;; esac
		case "$1" in "$prefix"*) ;; *) continue ;; esac
		case "$2" in *"$text"*) ;; *) continue ;; esac
		grep -qF "$text" "$PATCHES/0000-cover-letter.patch" 2>/dev/null && return 0
		echo "  ($1: '$text' is listed but the cover letter does not explain it)"
	done < "$PATCHES/checkpatch.justified"
	return 1
}

# kernel-doc -none prints only warnings ("FILE:LINE: warning: text"); any
# other line, or a failure to start, is a crash and fails the check.
KERNEL_DOC_FINDING='^[^ ]+:[0-9]+: (warning|error): |^(Warning|Error): |^[^ ]+:[0-9]+ '

check_kernel_doc() {
	local files f new crash
	base_worktree
	mapfile -t files < <(touched '*.c' '*.h')
	: > "$out/kernel-doc.base"
	: > "$out/kernel-doc.patched"
	for f in "${files[@]}"; do
		(cd "$tree" && scripts/kernel-doc -none -Wall "$f") >> "$out/kernel-doc.patched" 2>&1 ||
			[ $? -lt 126 ] || echo "kernel-doc could not run on $f" >> "$out/kernel-doc.patched"
		[ -f "$base_tree/$f" ] &&
			(cd "$base_tree" && scripts/kernel-doc -none -Wall "$f") >> "$out/kernel-doc.base" 2>&1
	done
	crash=$(grep -vE "$KERNEL_DOC_FINDING" "$out/kernel-doc.patched" | grep .)
	if [ -n "$crash" ]; then
		echo "CRASH: kernel-doc printed what is not a warning:"
		head -n 20 <<< "$crash" | sed 's/^/    /'
		detail="kernel-doc CRASHED (see the log)"
		return 1
	fi
	new=$(new_findings "$out/kernel-doc.base" "$out/kernel-doc.patched")
	[ -z "$new" ] || echo "$new"
	detail="${#files[@]} files, $(grep -c . <<< "$new") new warnings ($(grep -c . < "$out/kernel-doc.base") in base)"
	[ -z "$new" ]
}

check_bisect() {
	local src=$OUT/check-bisect-src commits c i=0
	if [ ! -d "$src" ]; then
		git -C "$tree" worktree add --quiet --detach "$src" base || return 1
	fi
	mapfile -t commits < <(git -C "$tree" rev-list --reverse base..HEAD)
	for c in "${commits[@]}"; do
		i=$((i + 1))
		git -C "$src" checkout -q --detach "$c" || return 1
		echo "== $i/${#commits[@]} $(git -C "$src" log -1 --format='%h %s')"
		if ! TREE=$src KBUILD_OUT=$OUT/check-bisect FRAGMENT=$top/configs/guest.config \
				"$top/scripts/kbuild.sh" guest; then
			detail="patch $i/${#commits[@]} does not build: $(git -C "$src" log -1 --format=%s)"
			return 1
		fi
	done
	detail="the guest config builds after each of ${#commits[@]} patches"
}

check_configs() {
	local broken=() name frags
	for name in nonuma nocpusets novmevents; do
		echo "== $name"
		# nonuma is whole; the others switch one thing off in the guest config.
		frags=$top/configs/$name.config
		[ "$name" = nonuma ] || frags="$top/configs/guest.config $frags"
		FRAGMENT=$frags KBUILD_OUT=$OUT/check-$name "$top/scripts/kbuild.sh" "$name" ||
			broken+=("$name")
	done
	echo "== allnoconfig"
	if ! { make -s -C "$tree" O="$OUT/check-allnoconfig" ARCH=x86_64 allnoconfig &&
	       make -s -C "$tree" O="$OUT/check-allnoconfig" ARCH=x86_64 \
			CC="$("$top/scripts/cc.sh")" \
			-j"$(nproc)" bzImage; }; then
		broken+=(allnoconfig)
	fi
	if [ ${#broken[@]} -eq 0 ]; then
		detail="NUMA=n, CPUSETS=n, VM_EVENT_COUNTERS=n and allnoconfig build"
	else
		detail="failed: ${broken[*]}"
	fi
	[ ${#broken[@]} -eq 0 ]
}

# Build the touched objects with W=1 C=2 in a tree, their findings to $2.
w1_sparse() {
	local src=$1 log=$2 name=$3 frag=$4 objs=("${@:5}") o
	for o in "${objs[@]}"; do
		rm -f "$OUT/$name/$o"
	done
	local sparse rc
	sparse=$("$top/scripts/sparse.sh") || return 1
	TREE=$src KBUILD_OUT=$OUT/$name FRAGMENT=$frag KBUILD_ARGS="W=1 C=2 CHECK=$sparse" \
		"$top/scripts/kbuild.sh" "$name" "${objs[@]}" > "$log.full" 2>&1
	rc=$?
	# A checker the tree finds too old is switched off with a warning: a
	# build that checked nothing must not pass as a clean one.
	if grep -q 'specified, but .* is not available or not up to date' "$log.full"; then
		echo "sparse did not run on $src: $(grep -m1 'not available' "$log.full")"
		return 1
	fi
	grep -E '(warning|error):' "$log.full" > "$log"
	return $rc
}

# Built with configs/warnings.config on top of the guest config, and the
# series' own options, so that every line the series adds is compiled:
# zlctool.cppcover fails the check when an #if around added lines names an
# option this build did not set.
check_warnings() {
	local objs new opts
	base_worktree
	mapfile -t objs < <(touched '*.c' | sed 's/\.c$/.o/')
	echo CONFIG_ZONELIST_CACHE_KUNIT_TEST=y > "$out/zlc-kunit-on.config"
	w1_sparse "$base_tree" "$out/warnings.base" check-warn-base \
		"$top/configs/guest.config $top/configs/warnings.config" "${objs[@]}" ||
		{ detail="the base tree did not build ${objs[*]}"; return 1; }
	w1_sparse "$tree" "$out/warnings.patched" check-warn \
		"$top/configs/guest.config $top/configs/warnings.config $out/zlc-kunit-on.config" \
		"${objs[@]}" ||
		{ detail="${objs[*]} did not build with W=1 C=2"; return 1; }
	echo "options the added lines need, and this build's values:"
	if ! (cd "$top" && "${PY:-/usr/bin/python3}" -m zlctool.cppcover --tree "$tree" \
			--config "$OUT/check-warn/.config") > "$out/warnings.options"; then
		sed 's/^/  /' "$out/warnings.options"
		detail="the build left out lines the series adds: $(grep -c 'NOT SET' "$out/warnings.options") options not set"
		return 1
	fi
	sed 's/^/  /' "$out/warnings.options"
	opts=$(sed -n 's/=y .*//p' "$out/warnings.options" | tr '\n' ' ')
	new=$(new_findings "$out/warnings.base" "$out/warnings.patched")
	[ -z "$new" ] || echo "$new"
	detail="${objs[*]} with ${opts% }: $(grep -c . <<< "$new") new W=1/sparse warnings ($(grep -c . < "$out/warnings.base") in base)"
	[ -z "$new" ]
}

check_htmldocs() {
	local log=$out/htmldocs.full new
	"$top/scripts/deps.sh" docs || return 1
	make -C "$tree" O="$OUT/check-docs" SPHINXDIRS=mm htmldocs > "$log" 2>&1 ||
		{ detail="htmldocs failed, see $log"; return 1; }
	[ -f "$OUT/check-docs/Documentation/output/mm/zonelist_cache.html" ] ||
		{ detail="no zonelist_cache.html was made"; return 1; }
	new=$(grep -E 'WARNING|ERROR|warning:' "$log" | grep -E 'zonelist_cache|page_alloc\.c|mmzone\.h')
	# Every identifier the page asks kernel-doc for must have made it in.
	local html=$OUT/check-docs/Documentation/output/mm/zonelist_cache.html id missing=""
	# shellcheck disable=SC2013 # identifiers are words, not lines
	for id in $(awk '/:identifiers:/ { f = 1; sub(/.*:identifiers:/, "") } f && /^ *$/ { f = 0 } f' \
			"$tree/Documentation/mm/zonelist_cache.rst"); do
		grep -q "id=\"c\.$id\"" "$html" || missing="$missing $id"
	done
	[ -z "$missing" ] || new="$new${new:+$'\n'}kernel-doc left out:$missing"
	[ -z "$new" ] || echo "$new"
	detail="Documentation/output/mm/zonelist_cache.html, $(grep -c . <<< "$new") problems"
	[ -z "$new" ]
}

check_litmus() {
	local herd lkmm=$OUT/lkmm tests n
	herd=$("$top/scripts/herd7.sh") || { detail="no herd7"; return 1; }
	# A copy of the tree's memory model, so that the work tree stays clean.
	rm -rf "$lkmm" "$lkmm-out"
	cp -r "$tree/tools/memory-model" "$lkmm"
	mkdir -p "$lkmm/zlc" "$lkmm-out/zlc"
	cp "$top"/litmus/*.litmus "$lkmm/zlc/"
	tests=$(cd "$lkmm" && ls zlc/*.litmus)
	n=$(wc -l <<< "$tests")
	# shellcheck disable=SC2086 # one word per test
	if ! (cd "$lkmm" && PATH=$herd:$PATH scripts/checktheselitmus.sh --destdir "$lkmm-out" -- $tests); then
		detail="$n litmus tests: a result is not the one its header states"
		return 1
	fi
	detail="$n litmus tests give the results their headers state ($(grep -h '^Observation' "$lkmm-out"/zlc/*.out |
		awk '{ print $2 ": " $3 }' | paste -sd, - | sed 's/,/, /g'))"
}

check_deb() {
	KCONFIG=$top/configs/guest.config "$top/scripts/deb.sh" || { detail="make deb failed"; return 1; }
	detail="$(find "$OUT/deb" -maxdepth 1 -name 'linux-image-*.deb' | wc -l) linux-image package(s) in ${OUT#"$top"/}/deb"
}

# The other weakly ordered architectures a reviewer builds: ARCH, its
# cross compiler and the defconfig target to start from.
CROSS_ARCHES="riscv:riscv64-linux-gnu-:defconfig powerpc:powerpc64le-linux-gnu-:ppc64le_defconfig"

# cross_build SRC ARCH CROSS DEFCONFIG NAME OBJS...: the defconfig with NUMA
# and the suite on, then OBJS with W=1 C=2; the findings to $out/NAME.
cross_build() {
	local src=$1 arch=$2 cross=$3 defconfig=$4 name=$5 objs=("${@:6}") o=$OUT/check-$5 sparse
	local mk=(make -s -C "$src" O="$o" ARCH="$arch" CROSS_COMPILE="$cross")
	sparse=$("$top/scripts/sparse.sh") || return 1
	mkdir -p "$o"
	"${mk[@]}" "$defconfig" > "$out/$name.full" 2>&1 || return 1
	"$src/scripts/config" --file "$o/.config" -e SMP -e NUMA -e CGROUPS -e CPUSETS \
		-e VM_EVENT_COUNTERS -e TRANSPARENT_HUGEPAGE -e MEMCG -e CMA -e DEBUG_FS \
		-e KUNIT -e ZONELIST_CACHE_KUNIT_TEST
	"${mk[@]}" olddefconfig >> "$out/$name.full" 2>&1 || return 1
	if ! grep -q '^CONFIG_NUMA=y' "$o/.config"; then
		echo "$arch: CONFIG_NUMA did not stay set in $o/.config"
		return 1
	fi
	[ ${#objs[@]} -gt 0 ] || { echo "no touched objects to build"; return 1; }
	for f in "${objs[@]}"; do rm -f "$o/$f"; done
	"${mk[@]}" CC="$("$top/scripts/cc.sh" "$cross")" -j"$(nproc)" \
		W=1 C=2 CHECK="$sparse" "${objs[@]}" >> "$out/$name.full" 2>&1 || return 1
	# As in w1_sparse: a build that checked nothing is no clean build.
	if grep -q 'specified, but .* is not available or not up to date' "$out/$name.full"; then
		echo "sparse did not run on $src ($arch): $(grep -m1 'not available' "$out/$name.full")"
		return 1
	fi
	for f in "${objs[@]}"; do
		[ -f "$o/$f" ] || { echo "$arch: $f was not built"; return 1; }
	done
	grep -E '(warning|error):' "$out/$name.full" > "$out/$name"
	return 0
}

check_cross() {
	local objs spec arch cross defconfig new total=0 parts=()
	"$top/scripts/deps.sh" cross || return 1
	base_worktree
	mapfile -t objs < <(touched '*.c' | sed 's/\.c$/.o/')
	for spec in $CROSS_ARCHES; do
		IFS=: read -r arch cross defconfig <<< "$spec"
		echo "== $arch ($defconfig, ${cross}gcc)"
		cross_build "$base_tree" "$arch" "$cross" "$defconfig" "cross-$arch-base" "${objs[@]}" ||
			{ tail -n 20 "$out/cross-$arch-base.full"; detail="$arch: the base tree did not build"; return 1; }
		if ! cross_build "$tree" "$arch" "$cross" "$defconfig" "cross-$arch" "${objs[@]}"; then
			tail -n 20 "$out/cross-$arch.full"
			detail="$arch: ${objs[*]} did not build with W=1 C=2"
			return 1
		fi
		if ! grep -q '^CONFIG_ZONELIST_CACHE_KUNIT_TEST=y' "$OUT/check-cross-$arch/.config"; then
			detail="$arch: the KUnit suite did not stay on"
			return 1
		fi
		new=$(new_findings "$out/cross-$arch-base" "$out/cross-$arch")
		[ -z "$new" ] || echo "$new"
		total=$((total + $(grep -c . <<< "$new")))
		parts+=("$arch $(grep -c . <<< "$new") new ($(grep -c . < "$out/cross-$arch-base") in base)")
	done
	detail="${objs[*]} with W=1 and sparse: $(printf '%s, ' "${parts[@]}" | sed 's/, $//')"
	[ "$total" -eq 0 ]
}

check_arm64() {
	local r=$top/build/test-results/ c p f sk
	# The Makefile's COUNTS: 6.12's stages write 6.12-NAME.counts.
	[ "${BASE:-7.3}" = 7.3 ] || r=$r${BASE}-
	make -s --no-print-directory -C "$top" arm64 || { detail="make arm64 failed"; return 1; }
	for c in arm64-kunit arm64-locality; do
		read -r _ p _ f _ sk < "$r$c.counts"
		detail="$detail${detail:+, }$c $p passed, $f failed, $sk skipped"
	done
}

summary=()
failed=0
for c in $CHECKS; do
	detail=""
	start=$(date +%s)
	echo "check: $c ..."
	"check_${c//-/_}" > "$out/$c.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ $rc -eq 0 ]; then
		line=$(printf 'check: %-10s ok      %4ss  %s' "$c" "$secs" "$detail")
	else
		failed=$((failed + 1))
		line=$(printf 'check: %-10s FAILED  %4ss  %s (log: %s/%s.log)' "$c" "$secs" "$detail" "${out#"$top"/}" "$c")
		tail -n 15 "$out/$c.log" | sed 's/^/    | /'
	fi
	echo "$line"
	summary+=("$line")
done
echo
printf '%s\n' "${summary[@]}"
n=$(wc -w <<< "$CHECKS")
echo "check: $((n - failed)) passed, $failed failed"
[ $failed -eq 0 ]
