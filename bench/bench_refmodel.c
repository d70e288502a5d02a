/* SPDX-License-Identifier: MIT */
/*
 * bench_refmodel.c - benchmark of librefmodel: prints a table of the cost
 * of insert range and collapse range at offset 0 on files with n = 1e3 ..
 * 1e6 extents (alternating data and hole blocks, ext4 profile, 4 KiB), and
 * a table of the throughput of a mixed random stream of metadata
 * operations starting from n = 1e3 .. 1e6 extents.
 *
 * Targets: cost at n = 1e6 at most 3x the cost at n = 1e3 (insert and
 * collapse stay O(log n)), and at least 1,000,000 mixed metadata
 * operations per second on one core starting from 1e5 extents.
 *
 * Times are the CPU time of the benchmarking thread.  On a shared machine
 * they still vary with the load (caches and memory bandwidth are shared),
 * so each configuration runs --runs times and the table gives the median
 * and the best run.  Cache misses per op come from the CPU's counters
 * (perf_event_open); where there are none (most VMs) the column says n/a
 * and `valgrind --tool=cachegrind bench_refmodel --mixed N` counts them
 * instead (the operation stream is fixed, so those counts are exact and
 * load-independent).
 *
 * Usage: bench_refmodel [--quick] [--runs K] [--ops N] [--mixed N]
 *   --quick    n up to 1e5, fewer operations
 *   --runs K   run each configuration K times (default 3)
 *   --ops N    operations per mixed run (default 2e6, --quick 3e5)
 *   --mixed N  only the mixed stream, once, from N extents
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* syscall() */
#endif
#include "refmodel.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* xorshift64 with a fixed seed: every run replays the same stream */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void die(const char *what, long long r)
{
	fprintf(stderr, "bench_refmodel: %s failed (%lld)\n", what, r);
	exit(1);
}

/* Hardware cache-miss counter of this thread, counting from now on, or -1
 * when the machine has none (a VM without a virtual PMU,
 * perf_event_paranoid too high). */
static int miss_counter_open(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CACHE_MISSES;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static long long miss_counter_read(int fd)
{
	long long v;
	if (fd < 0 || read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return -1;
	return v;
}

/* n extents: data block, hole block, data block, ... (small writes at the
 * start of every other block keep buffer memory small). */
static struct rm_file *build(long n)
{
	struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = 4096 };
	struct rm_file *f;
	if (rm_file_new(&o, &f))
		die("rm_file_new", 0);
	const char pat[8] = "rangeshf";
	for (long i = 0; i < (n + 1) / 2; i++) {
		ssize_t r = rm_pwrite(f, pat, sizeof(pat), (int64_t)i * 8192);
		if (r != (ssize_t)sizeof(pat))
			die("pwrite", r);
	}
	/* end with a hole extent so the count is exactly n for even n */
	if (rm_truncate(f, (int64_t)((n + 1) / 2) * 8192))
		die("truncate", 0);
	return f;
}

static long count_extents(struct rm_file *f)
{
	return (long)rm_fiemap(f, 0, INT64_MAX, NULL, 0);
}

static void check(struct rm_file *f)
{
	char msg[200];
	if (rm_check(f, msg, sizeof(msg)))
		die(msg, 0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One insert/collapse-at-0 measurement: ns per insert and per collapse. */
static void shift_run(struct rm_file *f, int reps, double *ins, double *col)
{
	/* warm up, then time inserts and the collapses that undo them */
	for (int i = 0; i < 1000; i++) {
		if (rm_fallocate(f, RM_FALLOC_FL_INSERT_RANGE, 0, 4096))
			die("insert", 0);
		if (rm_fallocate(f, RM_FALLOC_FL_COLLAPSE_RANGE, 0, 4096))
			die("collapse", 0);
	}
	double t0 = now_ns();
	for (int i = 0; i < reps; i++)
		if (rm_fallocate(f, RM_FALLOC_FL_INSERT_RANGE, 0, 4096))
			die("insert", i);
	double t1 = now_ns();
	for (int i = 0; i < reps; i++)
		if (rm_fallocate(f, RM_FALLOC_FL_COLLAPSE_RANGE, 0, 4096))
			die("collapse", i);
	double t2 = now_ns();
	*ins = (t1 - t0) / reps;
	*col = (t2 - t1) / reps;
	check(f);
}

struct mixed_result {
	double ns;		/* CPU ns in the op loop */
	long long misses;	/* -1: no counter */
	long fails;		/* operations that returned an errno (expected) */
	long end_extents;
};

/* Mixed random metadata operations (insert, collapse, punch, zero,
 * allocate, truncate near EOF, small writes) on a file of n extents. */
static struct mixed_result mixed_run(long n, long ops)
{
	struct rm_file *f = build(n);
	const char pat[64] = "mixed";
	uint64_t rs = 0x243F6A8885A308D3ULL;
	struct mixed_result res = { 0, -1, 0, 0 };
	int fd = miss_counter_open();	/* counting from here on */
	long long m0 = miss_counter_read(fd);
	double t0 = now_ns();
	for (long i = 0; i < ops; i++) {
		int64_t size = rm_size(f);
		int64_t blocks = size / 4096;
		int64_t off = (int64_t)(rnd(&rs) % (uint64_t)(blocks ? blocks : 1)) * 4096;
		int64_t len = (int64_t)(1 + rnd(&rs) % 4) * 4096;
		int r = 0;
		switch (rnd(&rs) % 8) {
		case 0: r = rm_fallocate(f, RM_FALLOC_FL_INSERT_RANGE, off, len); break;
		case 1: r = rm_fallocate(f, RM_FALLOC_FL_COLLAPSE_RANGE, off, len); break;
		case 2: r = rm_fallocate(f, RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE, off + 100, len); break;
		case 3: r = rm_fallocate(f, RM_FALLOC_FL_ZERO_RANGE | RM_FALLOC_FL_KEEP_SIZE, off + 100, len); break;
		case 4: r = rm_fallocate(f, RM_FALLOC_FL_KEEP_SIZE, off, len); break;
		case 5: r = rm_truncate(f, size + (int64_t)(rnd(&rs) % 16384) - 8000); break;
		default: r = (int)rm_pwrite(f, pat, 1 + rnd(&rs) % sizeof(pat), off + (int64_t)(rnd(&rs) % 4096)); break;
		}
		if (r < 0)
			res.fails++;
	}
	double t1 = now_ns();
	long long m1 = miss_counter_read(fd);
	if (fd >= 0)
		close(fd);
	res.ns = t1 - t0;
	res.misses = m0 >= 0 && m1 >= 0 ? m1 - m0 : -1;
	check(f);
	res.end_extents = count_extents(f);
	rm_file_free(f);
	return res;
}

int main(int argc, char **argv)
{
	int quick = 0, runs = 3;
	long ops = 0, only = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			quick = 1;
		} else if (i + 1 < argc && strcmp(argv[i], "--runs") == 0) {
			runs = atoi(argv[++i]);
		} else if (i + 1 < argc && strcmp(argv[i], "--ops") == 0) {
			ops = (long)strtod(argv[++i], NULL);
		} else if (i + 1 < argc && strcmp(argv[i], "--mixed") == 0) {
			only = (long)strtod(argv[++i], NULL);
		} else {
			fprintf(stderr, "usage: bench_refmodel [--quick] [--runs K] [--ops N] [--mixed N]\n");
			return 2;
		}
	}
	if (runs < 1 || runs > 99 || ops < 0 || only < 0) {
		fprintf(stderr, "bench_refmodel: --runs 1..99, --ops and --mixed >= 0\n");
		return 2;
	}
	if (!ops)
		ops = quick ? 300000 : 2000000;
	if (only) {
		struct mixed_result r = mixed_run(only, ops);
		printf("mixed from %ld extents: %ld ops, %.1f ns/op, %ld errnos, %ld end extents\n",
		       only, ops, r.ns / ops, r.fails, r.end_extents);
		return 0;
	}

	const long sizes[] = { 1000, 10000, 100000, 1000000 };
	const int nsizes = quick ? 3 : 4;
	const int reps = 200000;
	double ins[4], col[4], v[99], w[99];

	printf("insert/collapse range of 4 KiB at offset 0, median of %d runs (best in brackets)\n", runs);
	printf("%-10s %-8s %-6s %-24s %-24s\n", "extents", "nodes", "depth",
	       "insert@0 ns/op", "collapse@0 ns/op");
	for (int s = 0; s < nsizes; s++) {
		struct rm_file *f = build(sizes[s]);
		struct rm_stats st;
		rm_stats(f, &st);
		for (int k = 0; k < runs; k++)
			shift_run(f, reps, &v[k], &w[k]);
		ins[s] = median(v, runs);
		col[s] = median(w, runs);
		char a[40], b[40];
		snprintf(a, sizeof(a), "%.1f (%.1f)", ins[s], v[0]);
		snprintf(b, sizeof(b), "%.1f (%.1f)", col[s], w[0]);
		printf("%-10ld %-8zu %-6d %-24s %-24s\n", sizes[s], st.nodes, st.depth, a, b);
		rm_file_free(f);
	}
	printf("ratio n=%ld/n=1e3: insert %.2fx, collapse %.2fx (target <= 3x)\n",
	       sizes[nsizes - 1], ins[nsizes - 1] / ins[0], col[nsizes - 1] / col[0]);

	printf("\nmixed metadata ops (insert, collapse, punch, zero, falloc -k, truncate, small writes),"
	       " %ld ops per run, median of %d runs (best in brackets)\n", ops, runs);
	printf("%-10s %-22s %-18s %-10s %-8s %-12s\n", "extents", "ops/s", "ns/op",
	       "misses/op", "errnos", "end extents");
	for (int s = 0; s < nsizes; s++) {
		struct mixed_result r = { 0, -1, 0, 0 };
		double mis[99];
		for (int k = 0; k < runs; k++) {
			r = mixed_run(sizes[s], ops);
			v[k] = r.ns / ops;
			mis[k] = r.misses >= 0 ? (double)r.misses / ops : -1;
		}
		double ns = median(v, runs), best = v[0], m = median(mis, runs);
		char a[40], b[40], c[20];
		snprintf(a, sizeof(a), "%.0f (%.0f)", 1e9 / ns, 1e9 / best);
		snprintf(b, sizeof(b), "%.1f (%.1f)", ns, best);
		if (m >= 0)
			snprintf(c, sizeof(c), "%.2f", m);
		else
			snprintf(c, sizeof(c), "n/a");
		printf("%-10ld %-22s %-18s %-10s %-8ld %-12ld\n", sizes[s], a, b, c, r.fails,
		       r.end_extents);
	}
	printf("(target: >= 1000000 mixed metadata ops/s on one core from 1e5 extents;"
	       " times are thread CPU time)\n");
	return 0;
}
