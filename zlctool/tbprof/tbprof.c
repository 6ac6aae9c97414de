// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for make profile: the kernel instructions a guest
 * executes, per translation block.  Each block's executions are counted
 * inline; every time the guest enters the block at the address given as
 * trigger=HEX (the guest's sys_sync(), say), the counts so far go to
 * PREFIX.N, one "ADDRESS INSTRUCTIONS" line per block, and start again at
 * zero.  User-space blocks share one line, address 0.  Under -icount the
 * guest's clock follows the instructions the vCPUs execute, which this
 * adds nothing to.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define KERNEL_START	0xffff800000000000ull
#define SLOTS		(1u << 20)	/* open addressing, a power of two */

struct block {
	uint64_t vaddr;
	uint64_t execs;		/* for user space: instructions */
	uint32_t insns;
	int used;
};

static struct block *blocks;
static unsigned int nr_blocks;
static uint64_t trigger;
static const char *prefix = "tbprof";
static int dumps;

static struct block *block_of(uint64_t vaddr, uint32_t insns)
{
	uint64_t h = (vaddr * 0x9e3779b97f4a7c15ull) ^ insns;

	for (h &= SLOTS - 1; blocks[h].used; h = (h + 1) & (SLOTS - 1))
		if (blocks[h].vaddr == vaddr && blocks[h].insns == insns)
			return &blocks[h];
	if (++nr_blocks > SLOTS / 2) {
		fprintf(stderr, "tbprof: more than %u blocks\n", SLOTS / 2);
		abort();
	}
	blocks[h].used = 1;
	blocks[h].vaddr = vaddr;
	blocks[h].insns = insns;
	return &blocks[h];
}

static void dump(unsigned int vcpu, void *unused)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s.%d", prefix, dumps++);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		abort();
	}
	for (unsigned int i = 0; i < SLOTS; i++) {
		struct block *b = &blocks[i];

		if (!b->used || !b->execs)
			continue;
		fprintf(f, "%" PRIx64 " %" PRIu64 "\n", b->vaddr,
			b->vaddr ? b->execs * b->insns : b->execs);
		b->execs = 0;
	}
	fclose(f);
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	uint32_t insns = qemu_plugin_tb_n_insns(tb);
	struct block *b;

	if (vaddr < KERNEL_START) {
		b = block_of(0, 0);
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &b->execs, insns);
		return;
	}
	b = block_of(vaddr, insns);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->execs, 1);
	if (vaddr == trigger)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, dump, QEMU_PLUGIN_CB_NO_REGS, NULL);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "trigger=", 8)) {
			trigger = strtoull(argv[i] + 8, NULL, 16);
		} else if (!strncmp(argv[i], "prefix=", 7)) {
			prefix = strdup(argv[i] + 7);
		} else {
			fprintf(stderr, "tbprof: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	if (!trigger) {
		fprintf(stderr, "tbprof: no trigger=HEX\n");
		return -1;
	}
	blocks = calloc(SLOTS, sizeof(*blocks));
	if (!blocks)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	return 0;
}
