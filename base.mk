# The pinned base kernel: Debian's linux-source-6.12 binary package.
# To move the base, change BASE_VERSION and BASE_SHA256 together (see README).
BASE_PKG     ?= linux-source-6.12
BASE_VERSION ?= 6.12.117-1~deb12u1
BASE_SHA256  ?= e849faf31ca3555757f3a8877cb01af92122f744f75d1f3102734651c4e14703
