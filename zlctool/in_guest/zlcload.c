// SPDX-License-Identifier: GPL-2.0
/*
 * zlcload: the loads of make bench's workloads (zlctool/workloads.py),
 * run in the guest next to the selftest's memory hog.
 *
 *   zlcload probe SECONDS CPU     map a THP-sized, THP-aligned region,
 *                                 fault every page of it, unmap it, and
 *                                 time each round trip, for SECONDS
 *   zlcload hog MIB SECONDS       touch MIB of anonymous memory, one store
 *                                 a page, over and over, for SECONDS
 *   zlcload hold MIB [NODE]       touch MIB of anonymous memory once (NODE:
 *                                 preferring that node), say
 *                                 "zlc-hold-ready", and keep it, idle,
 *                                 until SIGTERM (its line: load "hog",
 *                                 one pass)
 *   zlcload churn MIB NODE SECONDS
 *                                 map MIB with MADV_HUGEPAGE preferring
 *                                 NODE, fault it, unmap it, in a loop;
 *                                 SECONDS 0: until SIGTERM
 *   zlcload fill MIB THREADS [STEP_KIB]
 *                                 what one pass of the selftest's hog does
 *                                 (-t THREADS, without THP): thread i on
 *                                 the i-th CPU it may run on, as the hog's
 *                                 threads, touches its share of MIB once;
 *                                 when all have, each counts where its own
 *                                 pages are (one page every 64 KiB) and
 *                                 prints a line, with its CPU's node and
 *                                 that node's distances and the seconds
 *                                 from the threads' start to the moment
 *                                 all had touched theirs, and each
 *                                 node's MemFree before the threads
 *                                 start ("free_kib") and once all had
 *                                 touched theirs ("left_kib"): the
 *                                 floor the walks took each node to;
 *                                 and each node's unreclaimable slab
 *                                 at the start ("slab_kib");
 *                                 STEP_KIB > 0:
 *                                 in lock step, every thread touches
 *                                 STEP_KIB, then waits for all the others
 *                                 to have touched theirs, so that where
 *                                 pages go does not depend on which
 *                                 thread runs faster
 *   zlcload pf anon|file MIB SECONDS TASKS [FILE]
 *                                 TASKS processes, task i on the i-th CPU
 *                                 it may run on, each mapping MIB with
 *                                 MADV_NOHUGEPAGE, writing a word into
 *                                 every 4 KiB page and unmapping it, in a
 *                                 loop, for SECONDS: anonymous memory
 *                                 (anon), or a private mapping of task
 *                                 i's own file FILE.i (FILE default
 *                                 /tmp/zlcload-pf), written first so that
 *                                 its pages are in the page cache and
 *                                 every write is a COW fault (file); the
 *                                 tasks start together; faults per second
 *                                 of each task, and /proc/vmstat's
 *                                 numa_local, numa_other and numa_miss
 *                                 over the run instead of move_pages()
 *
 * Each prints one line when it is done (fill: one a thread): "zlc-load
 * {json}" with what it measured and where its pages were, counted per node
 * with move_pages() (one page every 2 MiB, before each unmap, unless said
 * otherwise).  The probe's line has the
 * latency distribution in ns: min, quartiles, p90, p95, p99, max, mean
 * and 100 points of its CDF.  A failed system call exits with status 1
 * and says which.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096UL
#define HUGE		(2UL << 20)
#define MAX_NODES	1024
#define MPOL_PREFERRED	1

static long pages_on[MAX_NODES];
static long pages_unknown;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "zlcload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static char *map(size_t bytes, int advice)
{
	/* 2 MiB more than asked, so that a 2 MiB aligned run of it can be kept. */
	char *raw = mmap(NULL, bytes + HUGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *mem;

	if (raw == MAP_FAILED)
		die("mmap");
	mem = (char *)(((unsigned long)raw + HUGE - 1) & ~(HUGE - 1));
	if (mem > raw)
		munmap(raw, mem - raw);
	munmap(mem + bytes, raw + HUGE - mem);
	if (advice >= 0 && madvise(mem, bytes, advice))
		die("madvise");
	return mem;
}

static void touch(char *mem, size_t bytes, unsigned long seed)
{
	size_t off;

	for (off = 0; off < bytes; off += PAGE)
		*(volatile unsigned long *)(mem + off) = seed + off;
}

/* Count where a region's pages are, one page every STRIDE bytes, into on[]. */
static void count_pages(char *mem, size_t bytes, size_t stride, long *on, long *unknown)
{
	enum { BATCH = 512 };
	void *pages[BATCH];
	int status[BATCH];
	size_t off = 0;

	while (off < bytes) {
		int n = 0, i;

		for (; n < BATCH && off < bytes; off += stride)
			pages[n++] = mem + off;
		if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0))
			die("move_pages");
		for (i = 0; i < n; i++) {
			if (status[i] >= 0 && status[i] < MAX_NODES)
				on[status[i]]++;
			else
				(*unknown)++;
		}
	}
}

/* Count where the region's pages are: one page every 2 MiB. */
static void count_nodes(char *mem, size_t bytes)
{
	count_pages(mem, bytes, HUGE, pages_on, &pages_unknown);
}

static void print_counts(FILE *f, const long *on, long unknown)
{
	int n, last = -1;

	for (n = 0; n < MAX_NODES; n++)
		if (on[n])
			last = n;
	fprintf(f, "\"pages_per_node\": [");
	for (n = 0; n <= last; n++)
		fprintf(f, "%s%ld", n ? ", " : "", on[n]);
	fprintf(f, "], \"pages_unknown\": %ld", unknown);
}

static void print_nodes(void)
{
	print_counts(stdout, pages_on, pages_unknown);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double quantile(const double *v, long n, double q)
{
	long i = (long)(q * (n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static int probe(double seconds, int cpu)
{
	long n = 0, cap = 1 << 16, i;
	double *lat = malloc(cap * sizeof(*lat)), sum = 0, end;

	if (!lat)
		die("malloc");
	pin(cpu);
	end = now() + seconds;
	while (now() < end) {
		double t0 = now(), t1, t2;
		char *mem = map(HUGE, MADV_HUGEPAGE);

		touch(mem, HUGE, n);
		t1 = now();
		count_nodes(mem, HUGE);		/* not timed */
		t2 = now();
		munmap(mem, HUGE);
		lat[n] = (t1 - t0 + now() - t2) * 1e9;
		sum += lat[n];
		if (++n == cap) {
			cap *= 2;
			lat = realloc(lat, cap * sizeof(*lat));
			if (!lat)
				die("realloc");
		}
	}
	if (!n) {
		fprintf(stderr, "zlcload: the probe made no sample in %.1fs\n", seconds);
		return 1;
	}
	qsort(lat, n, sizeof(*lat), cmp_double);
	printf("zlc-load {\"load\": \"probe\", \"samples\": %ld, \"min\": %.0f, \"q1\": %.0f, "
	       "\"median\": %.0f, \"q3\": %.0f, \"p90\": %.0f, \"p95\": %.0f, \"p99\": %.0f, "
	       "\"max\": %.0f, \"mean\": %.0f, \"cdf\": [",
	       n, lat[0], quantile(lat, n, 0.25), quantile(lat, n, 0.5),
	       quantile(lat, n, 0.75), quantile(lat, n, 0.90), quantile(lat, n, 0.95),
	       quantile(lat, n, 0.99), lat[n - 1], sum / n);
	for (i = 0; i <= 100; i++)
		printf("%s%.0f", i ? ", " : "", quantile(lat, n, i / 100.0));
	printf("], ");
	print_nodes();
	printf("}\n");
	return 0;
}

static int hog(size_t bytes, double seconds)
{
	char *mem = map(bytes, -1);	/* THP as the system is set */
	double t0 = now();
	long passes = 0;

	while (now() - t0 < seconds)
		touch(mem, bytes, passes++);
	count_nodes(mem, bytes);
	printf("zlc-load {\"load\": \"hog\", \"mib\": %zu, \"passes\": %ld, \"seconds\": %.2f, ",
	       bytes >> 20, passes, now() - t0);
	print_nodes();
	printf("}\n");
	return 0;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * Hold memory without using a CPU, so that other loads get all of them;
 * node >= 0: preferring that node, so that it fills first.
 */
static int hold(size_t bytes, int node)
{
	unsigned long mask[MAX_NODES / (8 * sizeof(long))] = { 0 };
	char *mem = map(bytes, -1);	/* THP as the system is set */
	double t0 = now();

	if (node >= 0) {
		mask[node / (8 * sizeof(long))] |= 1UL << (node % (8 * sizeof(long)));
		if (syscall(SYS_mbind, mem, bytes, MPOL_PREFERRED, mask, MAX_NODES, 0))
			die("mbind");
	}
	signal(SIGTERM, on_term);
	touch(mem, bytes, 0);
	printf("zlc-hold-ready\n");
	/* A signal cuts the sleep short; one just before it costs a tenth of a second. */
	while (!stop)
		usleep(100000);
	count_nodes(mem, bytes);
	printf("zlc-load {\"load\": \"hog\", \"mib\": %zu, \"passes\": 1, \"seconds\": %.2f, ",
	       bytes >> 20, now() - t0);
	print_nodes();
	printf("}\n");
	return 0;
}

static int churn(size_t bytes, int node, double seconds)
{
	unsigned long mask[MAX_NODES / (8 * sizeof(long))] = { 0 };
	double t0 = now();
	long loops = 0;

	signal(SIGTERM, on_term);
	mask[node / (8 * sizeof(long))] |= 1UL << (node % (8 * sizeof(long)));
	while (!stop && (seconds <= 0 || now() - t0 < seconds)) {
		char *mem = map(bytes, MADV_HUGEPAGE);

		if (syscall(SYS_mbind, mem, bytes, MPOL_PREFERRED, mask, MAX_NODES, 0))
			die("mbind");
		touch(mem, bytes, loops);
		count_nodes(mem, bytes);
		munmap(mem, bytes);
		loops++;
	}
	printf("zlc-load {\"load\": \"churn\", \"mib\": %zu, \"node\": %d, \"loops\": %ld, "
	       "\"seconds\": %.2f, ", bytes >> 20, node, loops, now() - t0);
	print_nodes();
	printf("}\n");
	return 0;
}

struct filler {
	pthread_t tid;
	int index, cpu;
	size_t bytes, step;
	long on[MAX_NODES];
	long unknown;
};

static pthread_barrier_t filled;
static double fill_start;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static long free_kib[MAX_NODES], left_kib[MAX_NODES], slab_kib[MAX_NODES];
static int free_nodes;

/*
 * Each node's MemFree in KiB into @kib (-1 where a node has none), and,
 * if @slab, its SUnreclaim; the number of node ids up to the highest
 * present into free_nodes.
 */
static void read_free(long *kib, long *slab)
{
	char path[64], line[128];
	long val;
	FILE *f;
	int n;

	for (n = 0; n < MAX_NODES; n++) {
		kib[n] = -1;
		if (slab)
			slab[n] = -1;
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", n);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "Node %*d MemFree: %ld kB", &val) == 1)
				kib[n] = val;
			if (slab && sscanf(line, "Node %*d SUnreclaim: %ld kB", &val) == 1)
				slab[n] = val;
		}
		fclose(f);
		free_nodes = n + 1;
	}
}

static void print_kib(const char *key, const long *kib)
{
	int i;

	printf(", \"%s\": [", key);
	for (i = 0; i < free_nodes; i++)
		printf("%s%ld", i ? ", " : "", kib[i]);
	printf("]");
}

/* "distance": [...], the node's row of /sys/devices/system/node/nodeN/distance */
static void print_distances(unsigned int node)
{
	char path[64];
	FILE *f;
	int d, n = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%u/distance", node);
	f = fopen(path, "r");
	printf("\"distance\": [");
	while (f && fscanf(f, "%d", &d) == 1)
		printf("%s%d", n++ ? ", " : "", d);
	printf("]");
	if (f)
		fclose(f);
}

static void *fill_one(void *arg)
{
	struct filler *t = arg;
	unsigned int cpu, node;
	size_t off, len;
	double touched;
	char *mem;

	pin(t->cpu);
	mem = map(t->bytes, MADV_NOHUGEPAGE);
	if (!t->step) {
		touch(mem, t->bytes, t->index);
	} else {
		/* Every thread has the same share: the same number of steps. */
		for (off = 0; off < t->bytes; off += len) {
			len = t->bytes - off < t->step ? t->bytes - off : t->step;
			touch(mem + off, len, t->index);
			pthread_barrier_wait(&filled);
		}
	}
	/* As the hog: nobody frees before all have placed their pages. */
	pthread_barrier_wait(&filled);
	touched = now() - fill_start;
	/* What the walks left free on each node, before anyone frees */
	if (!t->index)
		read_free(left_kib, NULL);
	pthread_barrier_wait(&filled);
	if (syscall(SYS_getcpu, &cpu, &node, NULL))
		die("getcpu");
	count_pages(mem, t->bytes, 16 * PAGE, t->on, &t->unknown);
	pthread_mutex_lock(&print_lock);
	printf("zlc-load {\"load\": \"fill\", \"thread\": %d, \"cpu\": %u, \"node\": %u, "
	       "\"mib\": %zu, \"step_kib\": %zu, \"touch_s\": %.6f, ", t->index, cpu, node,
	       t->bytes >> 20, t->step >> 10, touched);
	print_counts(stdout, t->on, t->unknown);
	printf(", ");
	print_distances(node);
	print_kib("free_kib", free_kib);
	print_kib("left_kib", left_kib);
	print_kib("slab_kib", slab_kib);
	printf("}\n");
	pthread_mutex_unlock(&print_lock);
	pthread_barrier_wait(&filled);
	munmap(mem, t->bytes);
	return NULL;
}

static int fill(size_t bytes, int threads, size_t step)
{
	struct filler *t = calloc(threads, sizeof(*t));
	cpu_set_t allowed;
	int i, cpu = -1;

	if (!t)
		die("calloc");
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		die("sched_getaffinity");
	if (threads > CPU_COUNT(&allowed)) {
		fprintf(stderr, "zlcload: %d threads, %d CPUs allowed\n", threads,
			CPU_COUNT(&allowed));
		free(t);
		return 1;
	}
	if (pthread_barrier_init(&filled, NULL, threads))
		die("pthread_barrier_init");
	read_free(free_kib, slab_kib);
	fill_start = now();
	for (i = 0; i < threads; i++) {
		while (!CPU_ISSET(++cpu, &allowed))
			;
		t[i].index = i;
		t[i].cpu = cpu;
		t[i].bytes = bytes / threads & ~(PAGE - 1);
		t[i].step = step;
		errno = pthread_create(&t[i].tid, NULL, fill_one, &t[i]);
		if (errno)
			die("pthread_create");
	}
	for (i = 0; i < threads; i++)
		pthread_join(t[i].tid, NULL);
	pthread_barrier_destroy(&filled);
	free(t);
	return 0;
}

struct pf_result {
	long faults;
	double seconds;
};

/* /proc/vmstat's counter KEY, or 0 when it has none (a kernel without NUMA). */
static long counter(const char *key)
{
	FILE *f = fopen("/proc/vmstat", "r");
	char name[64];
	long value;

	if (!f)
		die("/proc/vmstat");
	while (fscanf(f, "%63s %ld", name, &value) == 2) {
		if (!strcmp(name, key)) {
			fclose(f);
			return value;
		}
	}
	fclose(f);
	return 0;
}

/* The file of pf file: BYTES written at PATH, all of it in the page cache. */
static int pf_file(const char *path, size_t bytes)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	size_t off;

	if (fd < 0)
		die("open");
	memset(buf, 0x5a, sizeof(buf));
	for (off = 0; off < bytes; off += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			die("write");
	return fd;
}

/* One task of pf: map, write a word into every page, unmap, for SECONDS. */
static void pf_one(int fd, size_t bytes, double seconds, struct pf_result *r)
{
	int flags = fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_PRIVATE;
	double t0 = now();

	while (now() - t0 < seconds) {
		char *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, flags, fd, 0);

		if (mem == MAP_FAILED)
			die("mmap");
		if (madvise(mem, bytes, MADV_NOHUGEPAGE))
			die("madvise");
		touch(mem, bytes, r->faults);
		if (munmap(mem, bytes))
			die("munmap");
		r->faults += bytes / PAGE;
	}
	r->seconds = now() - t0;
}

static int pagefault(const char *kind, size_t bytes, double seconds, int tasks,
		     const char *path)
{
	static const char * const keys[] = { "numa_local", "numa_other", "numa_miss" };
	long before[3], faults = 0;
	struct pf_result *r;
	cpu_set_t allowed;
	int i, cpu = -1, failed = 0, go[2];
	double longest = 0;
	char name[4096];
	int *fd;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		die("sched_getaffinity");
	if (tasks > CPU_COUNT(&allowed)) {
		fprintf(stderr, "zlcload: %d tasks, %d CPUs allowed\n", tasks,
			CPU_COUNT(&allowed));
		return 1;
	}
	/* Where the tasks leave what they counted. */
	r = mmap(NULL, tasks * sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		die("mmap");
	/* Each task its own file, as each of page_fault2's has. */
	fd = calloc(tasks, sizeof(*fd));
	if (!fd)
		die("calloc");
	for (i = 0; i < tasks; i++) {
		snprintf(name, sizeof(name), "%s.%d", path, i);
		fd[i] = strcmp(kind, "file") ? -1 : pf_file(name, bytes);
	}
	/* The tasks start together: when the parent closes this pipe. */
	if (pipe(go))
		die("pipe");
	for (i = 0; i < 3; i++)
		before[i] = counter(keys[i]);
	for (i = 0; i < tasks; i++) {
		pid_t pid;

		while (!CPU_ISSET(++cpu, &allowed))
			;
		pid = fork();
		if (pid < 0)
			die("fork");
		if (!pid) {
			char c;

			pin(cpu);
			close(go[1]);
			if (read(go[0], &c, 1) < 0)
				die("read");
			pf_one(fd[i], bytes, seconds, &r[i]);
			_exit(0);
		}
	}
	close(go[0]);
	close(go[1]);
	for (i = 0; i < tasks; i++) {
		int status;

		if (wait(&status) < 0)
			die("wait");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	}
	for (i = 0; i < 3; i++)
		before[i] = counter(keys[i]) - before[i];
	for (i = 0; i < tasks; i++) {
		if (fd[i] < 0)
			continue;
		close(fd[i]);
		snprintf(name, sizeof(name), "%s.%d", path, i);
		unlink(name);
	}
	free(fd);
	if (failed) {
		fprintf(stderr, "zlcload: a pf task failed\n");
		return 1;
	}
	for (i = 0; i < tasks; i++) {
		faults += r[i].faults;
		if (r[i].seconds > longest)
			longest = r[i].seconds;
	}
	printf("zlc-load {\"load\": \"pf-%s\", \"tasks\": %d, \"mib\": %zu, ",
	       kind, tasks, bytes >> 20);
	printf("\"faults\": %ld, \"seconds\": %.3f, \"per_task\": [", faults, longest);
	for (i = 0; i < tasks; i++)
		printf("%s%.1f", i ? ", " : "",
		       r[i].seconds > 0 ? r[i].faults / r[i].seconds : 0.0);
	printf("], \"numa_local\": %ld, \"numa_other\": %ld, \"numa_miss\": %ld}\n",
	       before[0], before[1], before[2]);
	munmap(r, tasks * sizeof(*r));
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: zlcload probe SECONDS CPU | hog MIB SECONDS | hold MIB [NODE] | "
		"churn MIB NODE SECONDS | fill MIB THREADS [STEP_KIB]\n");
	fprintf(stderr, "       zlcload pf anon|file MIB SECONDS TASKS [FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "probe"))
		return probe(atof(argv[2]), atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "hog"))
		return hog(strtoul(argv[2], NULL, 0) << 20, atof(argv[3]));
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "hold"))
		return hold(strtoul(argv[2], NULL, 0) << 20, argc == 4 ? atoi(argv[3]) : -1);
	if (argc == 5 && !strcmp(argv[1], "churn")) {
		int node = atoi(argv[3]);

		if (node < 0 || node >= MAX_NODES)
			usage();
		return churn(strtoul(argv[2], NULL, 0) << 20, node, atof(argv[4]));
	}
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "fill")) {
		int threads = atoi(argv[3]);
		char *end = "";
		long step = argc == 5 ? strtol(argv[4], &end, 10) : 0;

		if (threads < 1 || threads > CPU_SETSIZE || *end || step < 0 || step % 4)
			usage();
		return fill(strtoul(argv[2], NULL, 0) << 20, threads, (size_t)step << 10);
	}
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "pf")) {
		int tasks = atoi(argv[5]);

		if ((strcmp(argv[2], "anon") && strcmp(argv[2], "file")) ||
		    tasks < 1 || tasks > CPU_SETSIZE)
			usage();
		return pagefault(argv[2], strtoul(argv[3], NULL, 0) << 20, atof(argv[4]),
				 tasks, argc == 7 ? argv[6] : "/tmp/zlcload-pf");
	}
	usage();
	return 2;
}
