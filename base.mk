# The pinned base kernels: Debian's linux-source-* binary packages.
#
# BASE picks one (make tree BASE=6.12 ...):
#   7.3   the series to post upstream, in patches/ (the default)
#   6.12  the LTS backport that distribution kernels on NUMA servers run,
#         in patches/6.12/
# Each has its own work tree, build/linux-$(BASE), and build outputs under
# build/$(BASE)/.  To move a base, change its VERSION and SHA256 together
# (see README); a suite other than the machine's own is reached through a
# private apt sources list (scripts/series.sh), never the machine's.
BASE  ?= 7.3
BASES := 7.3 6.12

BASE_PKG_7.3     := linux-source-7.3
BASE_VERSION_7.3 := 7.3.4-1~bpo13+1
BASE_SHA256_7.3  := 703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3
BASE_SUITE_7.3   := trixie-backports
BASE_PATCHES_7.3 := patches

BASE_PKG_6.12     := linux-source-6.12
BASE_VERSION_6.12 := 6.12.117-1~deb12u1
BASE_SHA256_6.12  := e849faf31ca3555757f3a8877cb01af92122f744f75d1f3102734651c4e14703
BASE_SUITE_6.12   := bookworm-security
BASE_PATCHES_6.12 := patches/6.12

ifeq ($(filter $(BASE),$(BASES)),)
$(error BASE=$(BASE) is not a pinned base; the bases are: $(BASES))
endif
BASE_PKG     := $(BASE_PKG_$(BASE))
BASE_VERSION := $(BASE_VERSION_$(BASE))
BASE_SHA256  := $(BASE_SHA256_$(BASE))
BASE_SUITE   := $(BASE_SUITE_$(BASE))
PATCHES      := $(BASE_PATCHES_$(BASE))
TREE         := build/linux-$(BASE)
OUT          := build/$(BASE)
