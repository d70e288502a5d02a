/* SPDX-License-Identifier: MIT */
/*
 * bench_refmodel.c - benchmark of librefmodel: prints a table of the cost
 * of insert range and collapse range at offset 0 on files with n = 1e3 ..
 * 1e6 extents (alternating data and hole blocks, ext4 profile, 4 KiB), and
 * the throughput of a mixed random stream of metadata operations.
 *
 * Targets (issue 2): cost at n = 1e6 at most 3x the cost at n = 1e3, and at
 * least 1,000,000 mixed metadata operations per second on one core.
 * Usage: bench_refmodel [--quick]   (--quick: n up to 1e5, fewer ops)
 */
#include "refmodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t rng_state = 0x243F6A8885A308D3ULL;
static uint64_t rnd(void)	/* xorshift64: fixed seed, reproducible runs */
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void die(const char *what, long long r)
{
	fprintf(stderr, "bench_refmodel: %s failed (%lld)\n", what, r);
	exit(1);
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

int main(int argc, char **argv)
{
	int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	long sizes[] = { 1000, 10000, 100000, 1000000 };
	int nsizes = quick ? 3 : 4;
	const int reps = 200000;
	double ins[4], col[4];

	printf("%-10s %-10s %-8s %-8s %-16s %-16s\n", "extents", "data-ext", "nodes", "depth",
	       "insert@0 ns/op", "collapse@0 ns/op");
	for (int s = 0; s < nsizes; s++) {
		struct rm_file *f = build(sizes[s]);
		struct rm_stats st;
		rm_stats(f, &st);
		long data_ext = count_extents(f);
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
		ins[s] = (t1 - t0) / reps;
		col[s] = (t2 - t1) / reps;
		char msg[200];
		if (rm_check(f, msg, sizeof(msg)))
			die(msg, 0);
		printf("%-10ld %-10ld %-8zu %-8d %-16.1f %-16.1f\n", sizes[s] , data_ext, st.nodes, st.depth,
		       ins[s], col[s]);
		rm_file_free(f);
	}
	printf("ratio n=%ld/n=1e3: insert %.2fx, collapse %.2fx (target <= 3x)\n",
	       sizes[nsizes - 1], ins[nsizes - 1] / ins[0], col[nsizes - 1] / col[0]);

	/* mixed random metadata operations (insert, collapse, punch, zero,
	 * allocate, truncate near EOF, small writes) at three file sizes */
	printf("\n%-10s %-12s %-14s %-10s %-12s\n", "extents", "ops", "ops/s (CPU)", "errnos", "end extents");
	long mixed_sizes[] = { 1000, 10000, 100000 };
	for (int s = 0; s < (quick ? 2 : 3); s++) {
		struct rm_file *f = build(mixed_sizes[s]);
		const long ops = quick ? 300000 : 2000000;
		const char pat[64] = "mixed";
		long fails = 0;
		double t0 = now_ns();
		for (long i = 0; i < ops; i++) {
			int64_t size = rm_size(f);
			int64_t blocks = size / 4096;
			int64_t off = (int64_t)(rnd() % (uint64_t)(blocks ? blocks : 1)) * 4096;
			int64_t len = (int64_t)(1 + rnd() % 4) * 4096;
			int r = 0;
			switch (rnd() % 8) {
			case 0: r = rm_fallocate(f, RM_FALLOC_FL_INSERT_RANGE, off, len); break;
			case 1: r = rm_fallocate(f, RM_FALLOC_FL_COLLAPSE_RANGE, off, len); break;
			case 2: r = rm_fallocate(f, RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE, off + 100, len); break;
			case 3: r = rm_fallocate(f, RM_FALLOC_FL_ZERO_RANGE | RM_FALLOC_FL_KEEP_SIZE, off + 100, len); break;
			case 4: r = rm_fallocate(f, RM_FALLOC_FL_KEEP_SIZE, off, len); break;
			case 5: r = rm_truncate(f, size + (int64_t)(rnd() % 16384) - 8000); break;
			default: r = (int)rm_pwrite(f, pat, 1 + rnd() % sizeof(pat), off + (int64_t)(rnd() % 4096)); break;
			}
			if (r < 0)
				fails++;
		}
		double t1 = now_ns();
		char msg[200];
		if (rm_check(f, msg, sizeof(msg)))
			die(msg, 0);
		printf("%-10ld %-12ld %-14.0f %-10ld %-12ld\n", mixed_sizes[s], ops,
		       ops / ((t1 - t0) / 1e9), fails, count_extents(f));
		rm_file_free(f);
	}
	printf("(target: >= 1000000 mixed metadata ops/s on one core; times are thread CPU time)\n");
	return 0;
}
