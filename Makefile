# The zonelist cache: a patch series for Linux 7.3 (patches/), its LTS
# backport to 6.12 (patches/6.12/), and the tooling that builds, boots,
# tests and measures them.  BASE=7.3 (default) or BASE=6.12 picks the
# series every target works on (base.mk).  'make help' lists the targets;
# the README explains the work cycle.

include base.mk
export BASE BASE_PKG BASE_VERSION BASE_SHA256 BASE_SUITE PATCHES TREE OUT

# Debian's own Python, with the modules make deps installs from Debian.
PY       ?= /usr/bin/python3
# Kernel scripts start '#!/usr/bin/env python3' (checkpatch's spdxcheck.py,
# kunit.py): let that be $(PY) too, whatever python3 PATH finds first.
export PATH := $(shell PY=$(PY) scripts/python-bin.sh):$(PATH)
RESULTS  := build/test-results
# A stage's counts: build/test-results/NAME.counts for 7.3, 6.12-NAME.counts
# for the backport, so that one 'make test' sums both.
COUNTS    = $(RESULTS)/$(if $(filter-out 7.3,$(BASE)),$(BASE)-)$(1).counts
BZIMAGE   = $(OUT)/$(1)/arch/x86/boot/bzImage
STAGE    := $(PY) -m zlctool.stage $(RESULTS)

# KUnit: the topologies the suite runs under (zlctool/topology.py);
# 6G,cpus=0-1/1G gives node 0 a DMA32 and a Normal zone.
KUNIT_TOPOLOGIES ?= 1 2 4 64 6G,cpus=0-1/1G
KUNIT_CONFIGS    := configs/kunit.config $(TREE)/mm/tests/.kunitconfig

.PHONY: help deps tree export check-export check-export-base post kunit kunit-debug arm64 selftest locality hotplug pytest test bench profile compare guest base-tree base-guest run shell check deb

help: ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | \
		sed -e 's/^[^:]*Makefile://' | \
		awk -F':.*## ' '{ printf "  make %-14s %s\n", $$1, $$2 }'

# --- the kernel tree and the series ---------------------------------------

deps: ## install the Debian packages and Python modules the work needs
	@scripts/deps.sh

tree: ## fetch the pinned base into build/linux-BASE and apply its series (BASE=7.3|6.12)
	@scripts/series.sh tree

export: ## write build/linux-BASE's commits since 'base' to its series (patches/, patches/6.12/)
	@scripts/series.sh export

check-export: ## fail if a work tree (build/linux-7.3, build/linux-6.12) holds work that its series does not
	@rc=0; for b in $(BASES); do \
		$(MAKE) -s --no-print-directory BASE=$$b check-export-base || rc=1; \
	done; exit $$rc

check-export-base:
	@scripts/series.sh check-export

# No 'tree' prerequisite: without an identity, post fails before anything.
post: ## the series to send, From: and Signed-off-by: you (git config user.name/email), into build/BASE/post/
	@scripts/series.sh post

# --- builds -----------------------------------------------------------------

guest: tree ## build the patched guest kernel (configs/guest.config) into build/BASE/guest
	@scripts/deps.sh
	@scripts/kbuild.sh guest

base-tree: tree ## the unpatched base, checked out beside the work tree in build/linux-BASE-base
	@git -C $(TREE) worktree list | grep -q '$(TREE)-base ' || \
		git -C $(TREE) worktree add --quiet --detach $(CURDIR)/$(TREE)-base base
	@git -C $(TREE)-base checkout -q --detach base

base-guest: base-tree ## build the unpatched base kernel, same config, into build/BASE/guest-base
	@scripts/deps.sh
	@TREE=$(CURDIR)/$(TREE)-base KBUILD_OUT=$(CURDIR)/$(OUT)/guest-base scripts/kbuild.sh guest

# --- booting it -------------------------------------------------------------

NODES  ?= 2
KERNEL ?= patched
RUN     = $(PY) -m zlctool.guest --kernel $(KERNEL) --topology '$(NODES)'

run: $(if $(filter base,$(KERNEL)),base-guest,guest) ## boot it and run CMD: make run NODES=4 CMD='cat /proc/zoneinfo' (KERNEL=base, DRY=1)
	@$(RUN) $(if $(DRY),--dry-run) -- '$(subst ','\'',$(value CMD))'

shell: $(if $(filter base,$(KERNEL)),base-guest,guest) ## boot it with a shell on this terminal (NODES=..., KERNEL=base; Ctrl-A X quits)
	@$(RUN) --shell $(if $(DRY),--dry-run)

$(OUT)/selftests/%: $(TREE)/tools/testing/selftests/mm/%.c
	@mkdir -p $(dir $@)
	gcc -Wall -O2 -static -pthread -I $(TREE)/tools/testing/selftests -o $@ $<

$(OUT)/arm64/selftests/%: $(TREE)/tools/testing/selftests/mm/%.c
	@mkdir -p $(dir $@)
	aarch64-linux-gnu-gcc -Wall -O2 -static -pthread -I $(TREE)/tools/testing/selftests -o $@ $<

# --- tests ------------------------------------------------------------------

selftest: guest $(OUT)/selftests/zonelist_cache_memhog $(OUT)/selftests/zonelist_cache_locality ## the memhog (4 nodes passes, 1 node skips), locality (4 nodes) and run_vmtests.sh -t zonelist_cache (2 nodes) kselftests
	$(PY) -m zlctool.selftest --kernel $(call BZIMAGE,guest) \
		--hog $(OUT)/selftests/zonelist_cache_memhog \
		--locality $(OUT)/selftests/zonelist_cache_locality \
		$(if $(wildcard $(TREE)/tools/testing/selftests/mm/zonelist_cache_trace.sh),--vmtests $(TREE)/tools/testing/selftests/mm) \
		--summary $(call COUNTS,selftest)

locality: guest $(OUT)/selftests/zonelist_cache_locality ## the locality kselftest alone (2 and 4 nodes)
	$(PY) -m zlctool.selftest --kernel $(call BZIMAGE,guest) \
		--locality $(OUT)/selftests/zonelist_cache_locality --summary $(call COUNTS,locality)

hotplug: tree $(OUT)/selftests/zonelist_cache_memhog ## memory blocks offline/online under a spilling hog, then the KUnit suite again
	@FRAGMENT="configs/guest.config configs/hotplug.config" scripts/kbuild.sh guest-hotplug
	$(PY) -m zlctool.hotplug --kernel $(call BZIMAGE,guest-hotplug) \
		--hog $(OUT)/selftests/zonelist_cache_memhog $(if $(filter 0,$(BESIDE_HOG)),--no-beside-hog) \
		--summary $(call COUNTS,hotplug)

pytest: tree ## test the tooling itself (console parsing, topologies, reports; needs kunit_parser)
	@scripts/deps.sh
	$(PY) -m pytest -q tests --ignore=tests/guest

kunit: tree ## the zonelist_cache KUnit suite on each of KUNIT_TOPOLOGIES (1 2 4 64 nodes, a 6G node 0)
	$(PY) -m zlctool.kunit --tree $(TREE) --build-dir $(OUT)/kunit \
		$(addprefix --kunitconfig ,$(KUNIT_CONFIGS)) \
		$(addprefix --topology ,$(KUNIT_TOPOLOGIES)) \
		--filter 'zonelist_cache' --timeout 600 --summary $(call COUNTS,kunit)

KCSAN_SCOPE := zlc_|zonelist_cache|get_page_from_freelist

# arm64, a weakly ordered CPU: cross-built (kunit.py --arch=arm64) and
# booted on QEMU's virt board with NUMA nodes from its device tree.
ARM64_IMAGE := $(OUT)/arm64/arch/arm64/boot/Image

arm64: tree ## KUnit on 2 and 4 arm64 nodes and a 6G node 0, and the locality kselftest, under qemu-system-aarch64
	@scripts/deps.sh arm64
	@$(MAKE) -s $(OUT)/arm64/selftests/zonelist_cache_locality
	$(PY) -m zlctool.kunit --arch arm64 --tree $(TREE) --build-dir $(OUT)/arm64 --label arm64-kunit \
		--kunitconfig configs/arm64.config --kunitconfig $(TREE)/mm/tests/.kunitconfig \
		--topology 2 --topology 4 --topology 6G,cpus=0-1/1G --filter 'zonelist_cache' \
		--timeout 900 --summary $(call COUNTS,arm64-kunit)
	$(PY) -m zlctool.selftest --kernel $(ARM64_IMAGE) --label arm64-locality \
		--locality $(OUT)/arm64/selftests/zonelist_cache_locality \
		--summary $(call COUNTS,arm64-locality)

kunit-debug: tree $(OUT)/selftests/zonelist_cache_memhog ## KUnit and a spilling hog under KCSAN, DEBUG_VM, lockdep
	$(PY) -m zlctool.kunit --tree $(TREE) --build-dir $(OUT)/kunit-debug --label kunit-debug \
		$(addprefix --kunitconfig ,$(KUNIT_CONFIGS) configs/debug.config) \
		--topology 2 --topology 4 --filter 'zonelist_cache' --timeout 1800 \
		--kcsan-scope '$(KCSAN_SCOPE)' --summary $(call COUNTS,kunit-debug)
	@FRAGMENT="configs/guest.config configs/debug.config" scripts/kbuild.sh guest-debug
	$(PY) -m zlctool.selftest --kernel $(call BZIMAGE,guest-debug) --timeout 1800 \
		--hog $(OUT)/selftests/zonelist_cache_memhog --kcsan-scope '$(KCSAN_SCOPE)' \
		--summary $(call COUNTS,selftest-debug)

# The parts of 'make check' that fit in CI's budget.
TEST_CHECKS ?= checkpatch kernel-doc warnings litmus
# The backport's part of 'make test': its tree, its KUnit suite on 2 and 64
# nodes (which builds it) and its locality selftest (which builds its guest).
BACKPORT := 6.12
BACKPORT_KUNIT_TOPOLOGIES := 2 64
IN_BACKPORT := $(MAKE) -s BASE=$(BACKPORT)

test: ## what CI runs: every stage of 7.3, the 6.12 backport's part, timed; last line: test: N passed, M failed
	@rm -rf $(RESULTS); mkdir -p $(RESULTS)
	@scripts/deps.sh
	-@$(STAGE) tree -- $(MAKE) -s tree
	-@$(STAGE) $(BACKPORT)-tree -- $(IN_BACKPORT) tree
	-@$(STAGE) check-export -- $(MAKE) -s check-export
	-@$(STAGE) pytest --pytest -- $(PY) -m pytest -q tests --ignore=tests/guest
	-@$(STAGE) kunit -- $(MAKE) -s kunit
	-@$(STAGE) guest-build -- $(MAKE) -s guest
	-@$(STAGE) guest-runner --pytest -- env ZLC_GUEST_KERNEL=$(call BZIMAGE,guest) \
		$(PY) -m pytest -q tests/guest
	-@$(STAGE) selftest -- $(MAKE) -s selftest
	-@$(STAGE) hotplug -- $(MAKE) -s hotplug
	-@$(STAGE) workloads -- $(PY) -m zlctool.bench --quick --patched-only --check --config small \
		--workloads stutter,churn,busy,stress --name smoke --results $(RESULTS)/bench
	-@$(STAGE) check -- env CHECKS="$(TEST_CHECKS)" scripts/check.sh
	-@$(STAGE) $(BACKPORT)-kunit -- $(IN_BACKPORT) kunit KUNIT_TOPOLOGIES='$(BACKPORT_KUNIT_TOPOLOGIES)'
	-@$(STAGE) $(BACKPORT)-locality -- $(IN_BACKPORT) locality
	@echo "stage timings:"; sed 's/^/  /' $(RESULTS)/timings
	@$(PY) -m zlctool.summary $(RESULTS)

# --- upstream hygiene and packages -----------------------------------------

check: tree ## checkpatch, kernel-doc, per-patch builds, configs, W=1/sparse, htmldocs, litmus (herd7), deb, riscv64/ppc64le builds, arm64 (CHECKS=...)
	@scripts/deps.sh
	@scripts/check.sh

deb: tree ## Debian packages of the patched kernel in build/BASE/deb (KCONFIG=file, default the running config)
	@scripts/deps.sh
	@scripts/deb.sh

# --- measuring --------------------------------------------------------------

bench: ## base vs off vs on: the hog and the workloads, into results/NAME/ (WORKLOADS=hog,stutter,churn,busy,stress,storm,pagefault,placement ROUNDS= REPS= BOOTS= VARIANTS='off off' NAME= QUICK=1 ICOUNT=1 TIMED=1 HW=1 CONFIG=distro|small NODES_SHIFT=10 KASLR=1 MEM= BENCH_NODES=1,nps4,cxl,flex32,64 APPEND='movablecore=50%')
	@scripts/deps.sh
	$(PY) -m zlctool.bench $(if $(NAME),--name $(NAME)) $(if $(QUICK),--quick) $(if $(HW),--hw) \
		$(if $(TIMED),--timed) \
		$(if $(WORKLOADS),--workloads $(WORKLOADS)) $(if $(ROUNDS),--rounds $(ROUNDS)) $(if $(REPS),--reps $(REPS)) \
		$(if $(ICOUNT),--icount) $(if $(KASLR),--kaslr) $(if $(NODES_SHIFT),--nodes-shift $(NODES_SHIFT)) \
		$(if $(BOOTS),--boots $(BOOTS)) $(if $(VARIANTS),--variants '$(VARIANTS)') \
		$(if $(MEM),--mem $(MEM)) $(if $(BENCH_NODES),--nodes $(BENCH_NODES)) \
		$(if $(CONFIG),--config $(CONFIG)) $(if $(APPEND),--append '$(APPEND)')

# 'make compare A B': the words after 'compare' are run names, not targets.
ifeq (compare,$(firstword $(MAKECMDGOALS)))
RUNS ?= $(wordlist 2,$(words $(MAKECMDGOALS)),$(MAKECMDGOALS))
$(eval $(RUNS):;@:)
endif

profile: $(if $(filter base,$(KERNEL)),base-guest,guest) $(OUT)/selftests/zonelist_cache_memhog ## where hog passes' instructions go, per kernel function, counted by QEMU: make profile NODES=64 KINDS='on on on on off off' (PCT=12; KERNEL=base KINDS='asis asis', or a bzImage; kind placed beside off)
	@scripts/deps.sh
	$(PY) -m zlctool.profile --kernel '$(KERNEL)' --topology '$(NODES)' $(if $(KINDS),--kinds '$(KINDS)') $(if $(PCT),--pct $(PCT))

compare: ## compare named runs side by side, mmtests style: make compare NAME1 NAME2 ...
	@$(PY) -m zlctool.compare $(addprefix results/,$(or $(RUNS),$(error name the runs: make compare NAME1 NAME2)))
