/* SPDX-License-Identifier: MIT */
/*
 * test_difftest.c - difftest's tests (cmocka):
 *  - unit: op log text round trip, weights parsing, report merge;
 *  - generator: the fragmenter file passes 1360 extents in 20000 ops
 *    (deterministic from the seed); depth/fsck parsers on captured
 *    debugfs/xfs_db output, the tool runner's timeout;
 *  - each test-only faulty target (insert-off-by-one, lost-unwritten,
 *    wrong-errno) is caught, shrunk to <= 10 ops, and its reproducer log
 *    replays to the same divergence, twice identically (determinism);
 *  - the model against itself is clean (no false alarms from the oracle);
 *  - host directories run clean: tmpfs (insert/collapse/zero detected as
 *    unsupported up front and skipped), and as root loop-mounted ext4 and
 *    XFS images (the host kernel's own), and a host-mounted
 *    rangeshift-fusefs when the server is built and /dev/fuse exists;
 *  - bad input: clear message, exit 2.
 * The end-to-end tests run the difftest binary under timeout(1), so every
 * wait is bounded.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "campaign.h"
#include "dt.h"
#include "optab.h"

static char tmp[256];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *b = calloc(1, 1 << 20);
	if (b)
		fread(b, 1, (1 << 20) - 1, f);
	fclose(f);
	return b;
}

/* value of the first "key": NUMBER after `from` in s, -1 if absent */
static long long json_num(const char *s, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\": ", key);
	const char *p = s ? strstr(s, k) : NULL;
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

static void test_op_roundtrip(void **state)
{
	(void)state;
	struct dt_gen g;
	struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = 4096 };
	struct rm_file *m[2];
	int live[DT_MAXFILES] = { 1, 1 };
	char line[256], err[128];

	assert_int_equal(rm_file_new(&o, &m[0]), 0);
	assert_int_equal(rm_file_new(&o, &m[1]), 0);
	/* non-empty files, so that mapped I/O (inside EOF only) is generated */
	static char data[1 << 16];
	assert_int_equal(rm_pwrite(m[0], data, sizeof(data), 0), (ssize_t)sizeof(data));
	assert_int_equal(rm_pwrite(m[1], data, sizeof(data), 0), (ssize_t)sizeof(data));
	dt_gen_init(&g, 42, 2, 4096, rm_profile_maxbytes(RM_PROFILE_EXT4, 4096));
	g.weights[DT_REFLINK] = 15;	/* opt-in by default; its syntax is tested too */
	g.weights[DT_CHMOD] = 10;	/* so is chmod's (--user) */
	dt_weights_writeback(g.weights);	/* so are the write-back points' */
	g.weights[DT_DIO_WRITE] = g.weights[DT_DIO_READ] = 10;	/* and fsx's other ops */
	g.weights[DT_COPY_RANGE] = g.weights[DT_DEDUPE] = 10;
	int seen[DT_NKINDS] = { 0 };
	for (int k = 0; k < 20000; k++) {
		struct dt_op a, b;
		dt_gen_next(&g, m, live, &a);
		seen[a.kind] = 1;
		dt_op_format(&a, line, sizeof(line));
		assert_int_equal(dt_op_parse(line, &b, err, sizeof(err)), 0);
		if (dt_kind_is_global(a.kind))
			b.file = a.file;	/* global ops carry no file */
		if (a.kind != DT_PWRITE && a.kind != DT_MWRITE)
			b.pat = a.pat;
		if (a.kind != DT_FMODE && a.kind != DT_SYNC_RANGE)
			b.mode = a.mode;
		if (a.kind == DT_FSYNC || a.kind == DT_FDATASYNC || a.kind == DT_REOPEN ||
		    dt_kind_is_global(a.kind) ||
		    a.kind == DT_TRUNCATE || a.kind == DT_SEEK_DATA || a.kind == DT_SEEK_HOLE ||
		    a.kind == DT_CHMOD)
			b.len = a.len;
		if (a.kind == DT_FSYNC || a.kind == DT_FDATASYNC || a.kind == DT_REOPEN ||
		    dt_kind_is_global(a.kind))
			b.off = a.off;
		assert_memory_equal(&a, &b, sizeof(a));
	}
	for (int k = 0; k < DT_NKINDS; k++)	/* the mix reaches every kind it may */
		assert_true(seen[k] == !(dt_ops[k].flags & DT_OPF_NOGEN));
	struct dt_op x;
	assert_int_not_equal(dt_op_parse("f0 pwrite 0 10", &x, err, sizeof(err)), 0);
	assert_int_not_equal(dt_op_parse("f99 fsync", &x, err, sizeof(err)), 0);
	assert_int_not_equal(dt_op_parse("f0 frobnicate 1 2", &x, err, sizeof(err)), 0);
	rm_file_free(m[0]);
	rm_file_free(m[1]);
}

static void test_generator_deterministic(void **state)
{
	(void)state;
	struct rm_opts o = { .profile = RM_PROFILE_XFS, .blocksize = 4096 };
	struct rm_file *m[1];
	int live[DT_MAXFILES] = { 1 };
	struct dt_gen g1, g2, g3;
	assert_int_equal(rm_file_new(&o, &m[0]), 0);
	dt_gen_init(&g1, 7, 1, 4096, INT64_MAX);
	dt_gen_init(&g2, 7, 1, 4096, INT64_MAX);
	dt_gen_init(&g3, 8, 1, 4096, INT64_MAX);
	int differ = 0;
	for (int k = 0; k < 1000; k++) {
		struct dt_op a, b, c;
		dt_gen_next(&g1, m, live, &a);
		dt_gen_next(&g2, m, live, &b);
		dt_gen_next(&g3, m, live, &c);
		assert_memory_equal(&a, &b, sizeof(a));
		differ |= memcmp(&a, &c, sizeof(a)) != 0;
	}
	assert_true(differ);
	rm_file_free(m[0]);
}

static void test_weights(void **state)
{
	(void)state;
	unsigned w[DT_NKINDS];
	char err[128];
	dt_weights_default(w);
	assert_int_equal(dt_weights_parse(w, "insert=0,collapse=7", err, sizeof(err)), 0);
	assert_int_equal(w[DT_INSERT], 0);
	assert_int_equal(w[DT_COLLAPSE], 7);
	unsigned before = w[DT_PWRITE];
	assert_int_not_equal(dt_weights_parse(w, "pwrite=3,bogus=1", err, sizeof(err)), 0);
	assert_int_equal(w[DT_PWRITE], before);	/* nothing changed on error */
	assert_int_not_equal(dt_weights_parse(w, "all=0", err, sizeof(err)), 0);
}

/* Non-hole runs of a model file (a lower bound of its real extents: the
 * model merges neighbours of the same state, a file system keeps
 * separately allocated blocks apart). */
static int count_runs(void *ctx, const struct rm_run *r)
{
	if (r->state != RM_HOLE)
		(*(int64_t *)ctx)++;
	return 0;
}

/* Apply a generated op to a model (as the shrinker's script writer does). */
static void apply(struct rm_file *f, const struct dt_op *op, unsigned char *buf)
{
	switch (op->kind) {
	case DT_PWRITE:
	case DT_MWRITE:
		if (op->kind == DT_MWRITE && op->off + op->len > rm_size(f))
			break;
		memset(buf, op->pat, (size_t)op->len);
		rm_pwrite(f, buf, (size_t)op->len, op->off);
		break;
	case DT_TRUNCATE:
		rm_truncate(f, op->off);
		break;
	default:
		if (dt_kind_is_falloc(op->kind))
			rm_fallocate(f, dt_kind_mode(op), op->off, op->len);
	}
}

/* Deep trees: in a CI-sized run (20000 ops, 4 files, default weights) the
 * fragmenter file of an ext4-profile session passes 4*340 = 1360 extents
 * (ext4 depth 2 needs more than that with full leaves), even counting the
 * model's merged runs; the same seed gives the same ops; and with the
 * shifting kinds' weights at 0 the fragmenter generates none of them. */
static void deep(uint64_t seed, const char *weights, int64_t *best, uint64_t *hash,
		 uint64_t *shifts)
{
	struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = 4096 };
	o.maxbytes = rm_profile_maxbytes(RM_PROFILE_EXT4, 4096);
	struct rm_file *m[4];
	int live[DT_MAXFILES] = { 1, 1, 1, 1 };
	unsigned char *buf = malloc(DT_MAX_IO);
	struct dt_gen g;
	char err[128];

	assert_non_null(buf);
	for (int i = 0; i < 4; i++)
		assert_int_equal(rm_file_new(&o, &m[i]), 0);
	dt_gen_init(&g, seed, 4, 4096, o.maxbytes);
	if (weights)
		assert_int_equal(dt_weights_parse(g.weights, weights, err, sizeof(err)), 0);
	int nfrag = 0;
	for (int i = 0; i < 4; i++)
		nfrag += g.frag[i];
	assert_int_equal(nfrag, 1);
	*best = 0;
	*hash = 1469598103934665603ull;
	*shifts = 0;
	for (int k = 0; k < 20000; k++) {
		struct dt_op op;
		dt_gen_next(&g, m, live, &op);
		*hash = (*hash ^ ((uint64_t)op.kind << 56 ^ (uint64_t)op.off ^ (uint64_t)op.len << 7 ^
				  op.file)) * 1099511628211ull;
		*shifts += op.kind == DT_INSERT || op.kind == DT_COLLAPSE;
		apply(m[op.file], &op, buf);
		if ((k + 1) % 500 == 0)
			for (int i = 0; i < 4; i++) {
				int64_t n = 0;
				rm_walk(m[i], 0, rm_map_end(m[i]), count_runs, &n);
				if (n > *best)
					*best = n;
			}
	}
	for (int i = 0; i < 4; i++)
		rm_file_free(m[i]);
	free(buf);
}

/* shiftmap.c: dropping a shift from a log moves the later ops back onto
 * the data they met.  Take a random log B without shifts, inject an insert
 * (or a collapse of a range B's later ops never touch) at a random point
 * and move B's later ops as that shift moves their data: relocating the
 * result with the shift dropped must give B back exactly, op for op.
 * Keeping everything must be the identity, whatever shifted.  A random
 * block-aligned log stays aligned. */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void random_op(uint64_t *x, struct dt_op *op, int64_t lo, int64_t hi)
{
	static const uint8_t kinds[] = { DT_PWRITE, DT_PREAD, DT_PUNCH, DT_FALLOC,
					 DT_ZERO_KEEP, DT_TRUNCATE, DT_FSYNC, DT_SEEK_DATA };
	const int64_t bs = 4096;
	memset(op, 0, sizeof(*op));
	op->kind = kinds[rnd(x) % sizeof(kinds)];
	op->pat = 0x41;
	int64_t a = lo + (int64_t)(rnd(x) % (uint64_t)((hi - lo) / bs)) * bs;
	int64_t l = (1 + (int64_t)(rnd(x) % 4)) * bs;
	if (a + l > hi)
		l = hi - a;
	op->off = op->kind == DT_FSYNC ? 0 : a;	/* fsync has no offset */
	op->len = op->kind == DT_TRUNCATE || op->kind == DT_FSYNC || op->kind == DT_SEEK_DATA ? 0 : l;
	if (op->kind == DT_TRUNCATE)
		op->off = a + bs;	/* a size; never 0 */
}

static void test_relocate_inverts_shifts(void **state)
{
	(void)state;
	const int64_t bs = 4096, span = 64 * bs;
	enum { N = 300 };
	struct dt_op b[N], h[N + 1], out[N + 1];
	uint8_t sh[N + 1], keep[N + 1];
	uint64_t x = 88172645463325252ull;

	for (int round = 0; round < 400; round++) {
		int collapse = round & 1;
		int64_t X = (int64_t)(1 + rnd(&x) % 60) * bs, L = (int64_t)(1 + rnd(&x) % 8) * bs;
		size_t p = rnd(&x) % N;
		for (size_t j = 0; j < N; j++) {
			/* after a collapse, B's ops stay out of [X, X+L) */
			do
				random_op(&x, &b[j], 0, span);
			while (collapse && j >= p && b[j].off <= X + L &&
			       (b[j].kind == DT_TRUNCATE ? b[j].off > X	/* X+L: the seam, ambiguous */
							  : b[j].off < X + L &&
								b[j].off + (b[j].len ? b[j].len : 1) > X));
		}
		size_t k = 0;
		for (size_t j = 0; j < N; j++) {
			if (j == p) {
				h[k] = (struct dt_op){ .kind = collapse ? DT_COLLAPSE : DT_INSERT,
						       .off = X, .len = L };
				sh[k++] = 1;
			}
			h[k] = b[j];
			if (j >= p) {
				int64_t e = b[j].off + b[j].len;
				if (b[j].kind == DT_FSYNC) {
					/* no offset to move */
				} else if (b[j].kind == DT_TRUNCATE) {
					if (b[j].off > X)
						h[k].off += collapse ? -L : L;
				} else if (b[j].off >= X) {
					h[k].off += collapse ? -L : L;
				} else if (!collapse && e > X) {
					h[k].len += L;	/* the range holds the hole too */
				}
			}
			sh[k++] = 0;
		}
		assert_int_equal(k, N + 1);
		for (size_t j = 0; j < k; j++)
			keep[j] = j != p;
		assert_int_equal(dt_relocate(h, sh, keep, k, 1, out), N);
		for (size_t j = 0; j < N; j++) {
			if (memcmp(&out[j], &b[j], sizeof(b[j]))) {
				print_message("round %d (%s X=%lld L=%lld at %zu): op %zu is %lld+%lld, "
					      "want %lld+%lld\n", round, collapse ? "collapse" : "insert",
					      (long long)X, (long long)L, p, j, (long long)out[j].off,
					      (long long)out[j].len, (long long)b[j].off,
					      (long long)b[j].len);
				fail();
			}
		}
		/* keeping all: the identity, with any op marked as shifted */
		for (size_t j = 0; j < k; j++) {
			keep[j] = 1;
			sh[j] = (h[j].kind == DT_INSERT || h[j].kind == DT_COLLAPSE ||
				 rnd(&x) % 4 == 0);
		}
		assert_int_equal(dt_relocate(h, sh, keep, k, 1, out), N + 1);
		assert_memory_equal(out, h, k * sizeof(*h));
		/* dropping a random half keeps every offset block-aligned */
		for (size_t j = 0; j < k; j++) {
			keep[j] = rnd(&x) & 1;
			if (h[j].kind == DT_INSERT || h[j].kind == DT_COLLAPSE)
				h[j].off = (int64_t)(rnd(&x) % 64) * bs;
		}
		ssize_t m = dt_relocate(h, sh, keep, k, 1, out);
		assert_true(m >= 0 && m <= N + 1);
		for (ssize_t j = 0; j < m; j++) {
			assert_int_equal(out[j].off % bs, 0);
			assert_int_equal(out[j].len % bs, 0);
			assert_true(out[j].off >= 0);
		}
	}
	/* a file index the session has not: refused */
	struct dt_op bad = { .kind = DT_PWRITE, .file = 3, .off = 0, .len = 4096 };
	uint8_t one = 1;
	assert_int_equal(dt_relocate(&bad, NULL, &one, 1, 2, out), -EINVAL);
}

/* cowlat.c: staging only around the shared part of a write (aligned to
 * 32 blocks, widened by that length on both sides), shared ranges move with insert/collapse and end where
 * written, staging never moves and a successful shift cancels it from one
 * block before its offset, a truncate down past the new EOF block; a
 * refused shift (size unchanged) changes nothing. */
static void test_cowlat(void **state)
{
	(void)state;
	const int64_t bs = 4096, W = 32 * bs;
	struct dt_cowlat c = { 0 }, src = { 0 };
	struct dt_op w = { .kind = DT_PWRITE, .off = 5 * bs, .len = 100 };

	assert_int_equal(dt_cowlat_op(&c, &w, bs, 0, 6 * bs), 0);
	assert_int_equal(c.st.n, 0);	/* never reflinked: no staging */
	/* blocks [2W, 2W + 8) and [4W, 5W) shared */
	assert_int_equal(dt_cowlat_reflink(&c, &src, bs, 0, 2 * W, 8 * bs), 0);
	assert_int_equal(dt_cowlat_reflink(&c, &src, bs, W, 4 * W, W - 1), 0);
	assert_true(src.reflinked && src.sh.n == 2 && src.sh.v[1].end == 2 * W);
	assert_true(c.sh.n == 2 && c.sh.v[1].start == 4 * W && c.sh.v[1].end == 5 * W);
	assert_int_equal(dt_cowlat_op(&c, &w, bs, 0, 6 * W), 0);
	assert_int_equal(c.st.n, 0);	/* nothing shared there */
	w.off = 2 * W + 3 * bs + 7;	/* a shared block: its window */
	assert_int_equal(dt_cowlat_op(&c, &w, bs, 6 * W, 6 * W), 0);
	assert_true(c.st.n == 1 && c.st.v[0].start == W && c.st.v[0].end == 4 * W);
	/* written, so unshared: the shared range splits around block 3 */
	assert_true(c.sh.n == 3 && c.sh.v[0].end == 2 * W + 3 * bs &&
		    c.sh.v[1].start == 2 * W + 4 * bs);
	/* an insert at W moves the shared ranges and cancels staging from
	 * W - 1 block; a refused one changes nothing */
	struct dt_op sh = { .kind = DT_INSERT, .off = W, .len = 2 * bs };
	assert_int_equal(dt_cowlat_op(&c, &sh, bs, 6 * W, 6 * W), 0);
	assert_true(c.st.n == 1 && c.sh.v[0].start == 2 * W);
	assert_int_equal(dt_cowlat_op(&c, &sh, bs, 6 * W, 6 * W + 2 * bs), 0);
	assert_int_equal(c.st.n, 0);
	assert_true(c.sh.n == 3 && c.sh.v[0].start == 2 * W + 2 * bs &&
		    c.sh.v[2].start == 4 * W + 2 * bs && c.sh.v[2].end == 5 * W + 2 * bs);
	/* a collapse of [4W, 4W + 4 blocks): the last range loses its first
	 * 2 blocks and moves back by 4 */
	sh = (struct dt_op){ .kind = DT_COLLAPSE, .off = 4 * W, .len = 4 * bs };
	assert_int_equal(dt_cowlat_op(&c, &sh, bs, 6 * W, 6 * W - 4 * bs), 0);
	assert_true(c.sh.n == 3 && c.sh.v[2].start == 4 * W && c.sh.v[2].end == 5 * W - 2 * bs);
	/* a write over two shared ranges stages both windows, [W, 4W) and
	 * [3W, 6W) widened: one span */
	w.off = 2 * W;
	w.len = 3 * W;
	assert_int_equal(dt_cowlat_op(&c, &w, bs, 6 * W, 6 * W), 0);
	assert_true(c.st.n == 1 && c.st.v[0].start == W && c.st.v[0].end == 6 * W);
	/* truncate down into the first window: cut past the EOF block */
	struct dt_op tr = { .kind = DT_TRUNCATE, .off = 2 * W + 10 };
	assert_int_equal(dt_cowlat_op(&c, &tr, bs, 6 * W, 2 * W + 10), 0);
	assert_true(c.st.n == 1 && c.st.v[0].end == 2 * W + bs && c.sh.n == 0);
	dt_cowlat_reset(&c);
	dt_cowlat_reset(&src);
	assert_true(c.st.n == 0 && !c.reflinked && !c.st.v && !c.sh.v);
}

static void test_generator_deep_trees(void **state)
{
	(void)state;
	int64_t b1, b2, b3;
	uint64_t h1, h2, h3, s1, s2, s3;

	deep(1, NULL, &b1, &h1, &s1);
	deep(1, NULL, &b2, &h2, &s2);
	assert_int_equal(h1, h2);	/* deterministic from the seed */
	assert_int_equal(b1, b2);
	assert_true(b1 > 4 * 340);
	deep(2, NULL, &b2, &h2, &s2);
	assert_true(h1 != h2);
	assert_true(b2 > 4 * 340);
	assert_true(s1 > 0);
	/* --weights still rules the fragmenter */
	deep(3, "insert=0,collapse=0", &b3, &h3, &s3);
	assert_int_equal(s3, 0);
}

/* The fragmenter's life cycle (gen.c): first cycle to frag_peak0, rest as
 * a general file, regrow fast, churn, rest again; scaled down here. */
static void test_fragmenter_cycle(void **state)
{
	(void)state;
	struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = 4096 };
	o.maxbytes = rm_profile_maxbytes(RM_PROFILE_EXT4, 4096);
	struct rm_file *m[4];
	int live[DT_MAXFILES] = { 1, 1, 1, 1 };
	unsigned char *buf = malloc(DT_MAX_IO);
	struct dt_gen g;

	assert_non_null(buf);
	for (int i = 0; i < 4; i++)
		assert_int_equal(rm_file_new(&o, &m[i]), 0);
	dt_gen_init(&g, 5, 4, 4096, o.maxbytes);
	g.frag_peak0 = 600;
	g.frag_peak = 600;
	g.frag_rest = 4000;
	g.frag_churn = 300;
	int fi = -1;
	for (int i = 0; i < 4; i++)
		if (g.frag[i])
			fi = i;
	assert_true(fi >= 0);
	int last = FRAG_FIRST, seq[16], nseq = 0;
	uint64_t at[16], ops_on[4] = { 0 }, rest_ops = 0, rest_on = 0;
	int64_t grow_start_runs = 0;
	for (uint64_t k = 0; k < 60000 && nseq < 8; k++) {
		struct dt_op op;
		dt_gen_next(&g, m, live, &op);
		if (g.frag_phase[fi] != last) {
			last = g.frag_phase[fi];
			seq[nseq] = last;
			at[nseq++] = k;
			if (last == FRAG_GROW) {
				struct rm_stats st;
				rm_stats(m[fi], &st);
				grow_start_runs = (int64_t)st.nodes;
			}
		}
		if (last == FRAG_REST) {
			rest_ops++;
			rest_on += op.file == fi;
		}
		ops_on[op.file]++;
		apply(m[op.file], &op, buf);
	}
	/* FIRST -> REST -> GROW -> CHURN -> REST -> GROW ... */
	assert_true(nseq >= 5);
	assert_int_equal(seq[0], FRAG_REST);
	assert_int_equal(seq[1], FRAG_GROW);
	assert_int_equal(seq[2], FRAG_CHURN);
	assert_int_equal(seq[3], FRAG_REST);
	assert_int_equal(seq[4], FRAG_GROW);
	/* the rest lasts frag_rest ops */
	assert_true(at[1] - at[0] >= 4000 && at[1] - at[0] <= 4001);
	/* regrowing is fast: ~1 extent per fragmenter op, which gets ~40%
	 * of the ops (2.5 ops per fragmenter op; 4x leaves room for the
	 * truncated file's first ops and for collisions) */
	assert_true(grow_start_runs < 600);
	assert_true(at[2] - at[1] < 4 * 2.5 * 600);
	/* churning takes frag_churn of its ops: at least that many ops */
	assert_true(at[3] - at[2] >= 300);
	/* resting, it is a general file: ~1/4 of the ops, not ~40% */
	assert_true(rest_on * 100 < rest_ops * 32);
	for (int i = 0; i < 4; i++)
		rm_file_free(m[i]);
	free(buf);
}

/* Tool output captured in the 6.1 guest (e2fsprogs 1.47.0, xfsprogs
 * 6.1.0) on files of 3, 100 and 3000 one-block extents. */
static void test_depth_parsers(void **state)
{
	(void)state;
	static const char dbg_d2[] =
		"debugfs 1.47.0 (5-Feb-2023)\n"
		"Level Entries       Logical        Physical Length Flags\n"
		" 0/ 2   1/  1     0 -  5998  33801            5999\n"
		" 1/ 2   1/  9     0 -   679  33793             680\n"
		" 1/ 2   2/  9   680 -  1359  33795             680\n";
	static const char dbg_d1[] =
		"debugfs 1.47.0 (5-Feb-2023)\n"
		"Level Entries       Logical        Physical Length Flags\n"
		" 0/ 1   1/  1     0 -   198  33025             199\n";
	static const char dbg_d0[] =
		"debugfs 1.47.0 (5-Feb-2023)\n"
		"Level Entries       Logical        Physical Length Flags\n";
	static const char dbg_err[] =
		"debugfs 1.47.0 (5-Feb-2023)\n"
		"dump_extents: Bad magic number in super-block while opening filesystem\n";
	assert_int_equal(dt_parse_debugfs_depth(dbg_d2), 2);
	assert_int_equal(dt_parse_debugfs_depth(dbg_d1), 1);
	assert_int_equal(dt_parse_debugfs_depth(dbg_d0), 0);
	assert_int_equal(dt_parse_debugfs_depth(dbg_err), -1);
	assert_int_equal(dt_parse_debugfs_depth(""), -1);

	int bt = -1;
	static const char x2[] = "core.format = 3 (btree)\ncore.nextents = 5989\n"
				 "u3.bmbt.level = 2\nu3.bmbt.numrecs = 1\n";
	static const char x1[] = "core.format = 3 (btree)\nu3.bmbt.level = 1\n";
	static const char x0[] = "core.format = 2 (extents)\ncore.nextents = 3\n"
				 "field bmbt not found\n";
	static const char xerr[] = "xfs_db: /dev/vdb is not a valid XFS filesystem (unexpected SB magic number 0x00000000)\n";
	assert_int_equal(dt_parse_xfs_db_depth(x2, &bt), 2);
	assert_int_equal(bt, 1);
	assert_int_equal(dt_parse_xfs_db_depth(x1, &bt), 1);
	assert_int_equal(dt_parse_xfs_db_depth(x0, &bt), 0);
	assert_int_equal(bt, 0);
	assert_int_equal(dt_parse_xfs_db_depth(xerr, &bt), -1);
	assert_int_equal(dt_parse_xfs_db_depth("core.format = 3 (btree)\nfield bmbt not found\n", &bt), -1);

	/* fsck verdicts: e2fsck -n 0 clean, 4 errors left; 8 operational */
	assert_int_equal(dt_fsck_verdict("ext4", 0), 0);
	assert_int_equal(dt_fsck_verdict("ext4", 4), 1);
	assert_int_equal(dt_fsck_verdict("ext4", 8), -1);
	assert_int_equal(dt_fsck_verdict("ext4", 127), -1);
	assert_int_equal(dt_fsck_verdict("xfs", 0), 0);
	assert_int_equal(dt_fsck_verdict("xfs", 1), 1);
	assert_int_equal(dt_fsck_verdict("xfs", 2), -1);

	/* the runner: output, status, not-found, timeout (bounded) */
	char out[256];
	char *ok[] = { "sh", "-c", "echo hello; echo err >&2; exit 3", NULL };
	assert_int_equal(dt_run_tool(ok, 10, out, sizeof(out)), 3);
	assert_non_null(strstr(out, "hello"));
	assert_non_null(strstr(out, "err"));
	char *nf[] = { "difftest-no-such-tool", NULL };
	assert_int_equal(dt_run_tool(nf, 10, out, sizeof(out)), 127);
	char *slow[] = { "sleep", "30", NULL };
	assert_int_equal(dt_run_tool(slow, 1, out, sizeof(out)), -ETIMEDOUT);
}

/* A faulty target must be caught and shrunk to <= 10 ops; the shrunk log
 * must replay to a divergence, identically twice. */
static void faulty(const char *kind, int journal)
{
	char out[512], cmd[1024];
	snprintf(out, sizeof(out), "%s/%s", tmp, kind);
	int rc = sh("timeout 600 %s -t faulty:%s -N 20000 -S 3 --max-div 1 -q --out %s %s %s 2>%s.err",
		    DIFFTEST_BIN, kind, out, journal ? "--journal" : "", journal ? out : "", out);
	assert_int_equal(rc, 1);
	snprintf(cmd, sizeof(cmd), "%s/report.json", out);
	char *j = slurp(cmd);
	assert_non_null(j);
	assert_int_equal(json_num(j, "divergence_count"), 1);
	/* the shrunk log's length, under the divergence's "shrunk" */
	long long shrunk = json_num(strstr(j, "\"shrunk\": {"), "ops");
	assert_true(shrunk >= 1 && shrunk <= 10);
	assert_non_null(strstr(j, "\"result\": \"shrunk\""));
	assert_non_null(strstr(j, "\"complete\": true"));
	free(j);
	/* the reproducer directory: op log, xfs_io script, maps */
	char log[700], r1[700], r2[700];
	snprintf(log, sizeof(log), "%s/div-faulty_%s-1/ops.log", out, kind);
	struct stat st;
	assert_int_equal(stat(log, &st), 0);
	snprintf(cmd, sizeof(cmd), "%s/div-faulty_%s-1/repro.sh", out, kind);
	assert_int_equal(stat(cmd, &st), 0);
	snprintf(cmd, sizeof(cmd), "%s/div-faulty_%s-1/maps.txt", out, kind);
	assert_int_equal(stat(cmd, &st), 0);
	snprintf(r1, sizeof(r1), "%s/replay1.txt", out);
	snprintf(r2, sizeof(r2), "%s/replay2.txt", out);
	assert_int_equal(sh("timeout 120 %s --replay %s > %s", DIFFTEST_BIN, log, r1), 1);
	assert_int_equal(sh("timeout 120 %s --replay %s > %s", DIFFTEST_BIN, log, r2), 1);
	assert_int_equal(sh("cmp -s %s %s", r1, r2), 0);
	char *t = slurp(r1);
	assert_non_null(t);
	assert_non_null(strstr(t, "DIVERGENCE"));
	free(t);
	/* the same log against a correct model is clean: the bug is the target's */
	assert_int_equal(sh("timeout 120 %s --replay %s -t model > /dev/null", DIFFTEST_BIN, log), 0);
	if (!journal)
		return;
	/* --journal: the main journal ends with the diverging op, and the
	 * shrinker left its last candidate whole, as a log that replays */
	char jl[700];
	snprintf(jl, sizeof(jl), "%s/shrink-candidate-faulty_%s.log", out, kind);
	assert_int_equal(stat(jl, &st), 0);
	t = slurp(jl);
	assert_non_null(t);
	assert_non_null(strstr(t, "# target: faulty:"));
	free(t);
	rc = sh("timeout 120 %s --replay %s > /dev/null", DIFFTEST_BIN, jl);
	assert_true(rc == 0 || rc == 1);
	snprintf(jl, sizeof(jl), "%s/journal-faulty_%s.log", out, kind);
	assert_int_equal(stat(jl, &st), 0);
}

static void test_faulty_insert(void **state)
{
	(void)state;
	faulty("insert-off-by-one", 0);
}

static void test_faulty_unwritten(void **state)
{
	(void)state;
	faulty("lost-unwritten", 0);
}

static void test_faulty_errno(void **state)
{
	(void)state;
	faulty("wrong-errno", 1);
}

static void test_model_clean(void **state)
{
	(void)state;
	static const char *const profs[] = { "ext4", "xfs", "bytes" };
	for (int i = 0; i < 3; i++) {
		char out[512];
		snprintf(out, sizeof(out), "%s/model-%s", tmp, profs[i]);
		int rc = sh("timeout 600 %s -t model:%s -N 20000 -S %d -q --no-shrink --out %s",
			    DIFFTEST_BIN, profs[i], 11 + i, out);
		if (rc)
			fprintf(stderr, "model:%s: exit %d (see %s)\n", profs[i], rc, out);
		assert_int_equal(rc, 0);
	}
}

/* mapped I/O at a negative offset does nothing on either side (it is
 * clipped to [0, EOF), like xfs_io's mmap commands in repro.sh): a replay
 * of such ops against the model is clean.  A shrinker relocation once made
 * one. */
static void test_mapped_negative_offset(void **state)
{
	(void)state;
	char log[512];
	snprintf(log, sizeof(log), "%s/neg.log", tmp);
	FILE *f = fopen(log, "w");
	assert_non_null(f);
	fprintf(f, "# difftest op log v1\n# target: model\n# files: 1\n# profile: ext4\n"
		"# blocksize: 4096\nf0 pwrite -S 0x11 0 8192\nf0 mread -4096 4096\n"
		"f0 mwrite -S 0x22 -4096 8192\nf0 mread 4096 4096\nf0 pread -4096 10\n");
	fclose(f);
	assert_int_equal(sh("timeout 60 %s --replay %s -t model >/dev/null", DIFFTEST_BIN, log), 0);
}

static void test_bad_input(void **state)
{
	(void)state;
	assert_int_equal(sh("%s -t nosuch -N 10 2>/dev/null", DIFFTEST_BIN), 2);
	assert_int_equal(sh("%s -N abc 2>/dev/null", DIFFTEST_BIN), 2);
	assert_int_equal(sh("%s --shard 3/2 -t model 2>/dev/null", DIFFTEST_BIN), 2);
	assert_int_equal(sh("%s --weights pwrite=x -t model 2>/dev/null", DIFFTEST_BIN), 2);
	assert_int_equal(sh("%s --replay /nonexistent.log 2>/dev/null", DIFFTEST_BIN), 2);
	assert_int_equal(sh("%s -t faulty:nonsense 2>/dev/null", DIFFTEST_BIN), 2);
	assert_int_equal(sh("%s --help >/dev/null", DIFFTEST_BIN), 0);
}

/* pin.c: slot k takes the (k mod n)-th allowed CPU; dt_pin() leaves the
 * process on exactly that one */
/* DIFFTEST_PRISTINE parsing: the entry of exactly this device, no prefix
 * matches (/dev/vda vs /dev/vda1), malformed entries skipped, too-long
 * paths refused rather than cut. */
static void test_pristine_for(void **state)
{
	(void)state;
	char map[64], img[64];
	const char *old = getenv("DIFFTEST_PRISTINE");
	char *saved = old ? strdup(old) : NULL;

	setenv("DIFFTEST_PRISTINE", "/dev/vda1=/x.map:/x.img;/dev/vda=:/no-map;"
	       "/dev/vda=/run/ctl/ext4.map:/run/pristine/ext4.img;/dev/vdb=/m:/i", 1);
	assert_int_equal(dt_pristine_for("/dev/vda", map, img, sizeof(map)), 1);
	assert_string_equal(map, "/run/ctl/ext4.map");
	assert_string_equal(img, "/run/pristine/ext4.img");
	assert_int_equal(dt_pristine_for("/dev/vdb", map, img, sizeof(map)), 1);
	assert_string_equal(map, "/m");
	assert_string_equal(img, "/i");
	assert_int_equal(dt_pristine_for("/dev/vd", map, img, sizeof(map)), 0);
	assert_int_equal(dt_pristine_for("/dev/ram0", map, img, sizeof(map)), 0);
	assert_int_equal(dt_pristine_for("/dev/vda", map, img, 8), 0);
	setenv("DIFFTEST_PRISTINE", "/dev/ram0=/m", 1);	/* no image */
	assert_int_equal(dt_pristine_for("/dev/ram0", map, img, sizeof(map)), 0);
	unsetenv("DIFFTEST_PRISTINE");
	assert_int_equal(dt_pristine_for("/dev/vda", map, img, sizeof(map)), 0);
	if (saved)
		setenv("DIFFTEST_PRISTINE", saved, 1);
	free(saved);
}

static void test_pin(void **state)
{
	(void)state;
	cpu_set_t set;
	CPU_ZERO(&set);
	assert_int_equal(dt_cpu_pick(&set, 0), -1);
	CPU_SET(1, &set);
	CPU_SET(3, &set);
	CPU_SET(6, &set);
	assert_int_equal(dt_cpu_pick(&set, 0), 1);
	assert_int_equal(dt_cpu_pick(&set, 1), 3);
	assert_int_equal(dt_cpu_pick(&set, 2), 6);
	assert_int_equal(dt_cpu_pick(&set, 4), 3);
	assert_int_equal(dt_cpu_pick(&set, -1), -1);

	/* in a child, so the test runner keeps its CPUs */
	cpu_set_t mine;
	assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
	int slot = CPU_COUNT(&mine) > 1 ? 1 : 0, want = dt_cpu_pick(&mine, slot);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		cpu_set_t after;
		int cpu = dt_pin(slot);
		_exit(cpu == want && !sched_getaffinity(0, sizeof(after), &after) &&
		      CPU_COUNT(&after) == 1 && CPU_ISSET(want, &after) ? 0 : 1);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* shards are disjoint and deterministic; -j merges their reports */
static void test_shards_merge(void **state)
{
	(void)state;
	char out[512], p[700];
	snprintf(out, sizeof(out), "%s/shards", tmp);
	assert_int_equal(sh("timeout 600 %s -t model -N 4000 -j 2 -q --out %s 2>/dev/null",
			    DIFFTEST_BIN, out), 0);
	snprintf(p, sizeof(p), "%s/report.json", out);
	char *j = slurp(p);
	assert_non_null(j);
	assert_non_null(strstr(j, "\"shard\": \"merged\""));
	assert_int_equal(json_num(j, "ops"), 4000);
	/* each shard ran pinned, shard k to the (k mod n)-th CPU we may use
	 * (pin.c); the merged report lists both */
	cpu_set_t set;
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	char want[64];
	snprintf(want, sizeof(want), "\"cpus\":[%d,%d]", dt_cpu_pick(&set, 0), dt_cpu_pick(&set, 1));
	size_t w = 0;	/* the merged report is indented: compare without blanks */
	for (size_t r = 0; j[r]; r++)
		if (!strchr(" \n\t", j[r]))
			j[w++] = j[r];
	j[w] = 0;
	if (!strstr(j, want))
		fprintf(stderr, "merged report lacks %s\n", want);
	assert_non_null(strstr(j, want));
	free(j);
	/* merge by hand of the two shard reports gives the same totals */
	assert_int_equal(sh("%s --merge %s/shard-0/report.json %s/shard-1/report.json --json %s/m.json",
			    DIFFTEST_BIN, out, out, out), 0);
	snprintf(p, sizeof(p), "%s/m.json", out);
	j = slurp(p);
	assert_int_equal(json_num(j, "ops"), 4000);
	free(j);
	assert_int_not_equal(sh("cmp -s %s/shard-0/report.json %s/shard-1/report.json", out, out), 0);
}

/* exit status of a dir: run (0 clean); the caller cleans up, then asserts */
static int run_dir_rc(const char *dir, const char *what, long long ops)
{
	char out[512];
	snprintf(out, sizeof(out), "%s/run-%s", tmp, what);
	/* fmode=0: the host kernel is not 6.1, and since 6.11 vfs_fallocate()
	 * answers some invalid mode words (INSERT|UNSHARE...) with EOPNOTSUPP
	 * where 6.1 says EINVAL; the guest (6.1) runs them all */
	int rc = sh("timeout 900 %s -t dir:%s -N %lld -S 5 -q --max-div 1 --weights fmode=0 "
		    "--out %s 2>%s.err", DIFFTEST_BIN, dir, ops, out, out);
	if (rc) {
		fprintf(stderr, "difftest on %s (%s): exit %d; log:\n", dir, what, rc);
		sh("cat %s.err >&2", out);
	}
	return rc;
}

static void test_dir_tmpfs(void **state)
{
	(void)state;
	char d[300];
	snprintf(d, sizeof(d), "/dev/shm/difftest-test-%d", (int)getpid());
	if (mkdir(d, 0755)) {
		skip();
	}
	int rc = run_dir_rc(d, "tmpfs", 5000);
	sh("rm -rf %s", d);
	assert_int_equal(rc, 0);
	/* tmpfs has no insert/collapse: detected up front, not reported */
	char p[700];
	snprintf(p, sizeof(p), "%s/run-tmpfs/report.json", tmp);
	char *j = slurp(p);
	assert_non_null(j);
	const char *dk = strstr(j, "\"disabled_kinds\": [");
	assert_non_null(dk);
	const char *end = strchr(dk, ']');
	const char *ins = strstr(dk, "\"insert\"");
	assert_true(ins && ins < end);
	/* nor FICLONERANGE (the XFS-profile model would clone) */
	const char *rl = strstr(dk, "\"reflink\"");
	assert_true(rl && rl < end);
	free(j);
}

static void loopfs(const char *fstype, const char *mkfs)
{
	struct utsname u;
	/* The model is Linux 6.1; a newer host ext4/XFS differs in legitimate
	 * ways (e.g. 6.18 leaves a partially zeroed block unwritten, clamps
	 * punch past EOF differently), so the "runs clean" claim is only
	 * tested against a 6.1 host kernel.  The guest (vm/) is 6.1. */
	if (geteuid() != 0 || sh("command -v %s >/dev/null", mkfs) != 0 || uname(&u) ||
	    strncmp(u.release, "6.1.", 4)) {
		fprintf(stderr, "(skipped: needs root and a 6.1 host kernel)\n");
		skip();
	}
	char img[600], mnt[600];
	snprintf(img, sizeof(img), "%s/%s.img", tmp, fstype);
	snprintf(mnt, sizeof(mnt), "%s/%s-mnt", tmp, fstype);
	mkdir(mnt, 0755);
	assert_int_equal(sh("truncate -s 1G %s && %s -q %s %s >/dev/null 2>&1", img, mkfs,
			    !strcmp(fstype, "xfs") ? "-f -b size=4096" : "-F -b 4096", img), 0);
	if (sh("timeout 60 mount -o loop %s %s 2>/dev/null", img, mnt) != 0) {
		unlink(img);
		skip();	/* no loop devices in this container */
	}
	int rc = run_dir_rc(mnt, fstype, 5000);
	assert_int_equal(sh("timeout 60 umount %s", mnt), 0);
	unlink(img);
	rmdir(mnt);
	assert_int_equal(rc, 0);
}

static void test_dir_loop_ext4(void **state)
{
	(void)state;
	loopfs("ext4", "mkfs.ext4");
}

static void test_dir_loop_xfs(void **state)
{
	(void)state;
	loopfs("xfs", "mkfs.xfs");
}

static void test_dir_fusefs(void **state)
{
	(void)state;
	const char *bin = FUSEFS_BIN;
	if (!bin[0] || access(bin, X_OK) || access("/dev/fuse", R_OK | W_OK) ||
	    sh("command -v fusermount3 >/dev/null") != 0)
		skip();
	char mnt[600];
	snprintf(mnt, sizeof(mnt), "%s/fuse-mnt", tmp);
	mkdir(mnt, 0755);
	if (sh("timeout 60 %s %s -o profile=ext4", bin, mnt) != 0)
		skip();
	int rc = run_dir_rc(mnt, "fusefs", 5000);
	/* A direct write the server refuses past its s_maxbytes (-EFBIG at
	 * 16 TiB on the ext4 profile) makes fuse_direct_IO() truncate to the
	 * old size, which drops the preallocation past EOF: the oracle must
	 * expect that, in both checking disciplines (a long strict run once
	 * reported it as a divergence).  A copy of nothing to past the
	 * server's s_maxbytes is 0: FUSE's own limit is checked. */
	char log[512];
	snprintf(log, sizeof(log), "%s/fuse-efbig.log", tmp);
	FILE *f = fopen(log, "w");
	assert_non_null(f);
	fprintf(f, "# difftest op log v1\n# target: fusefs\n# files: 1\n# profile: ext4-6.1\n"
		"# blocksize: 4096\nf0 fzero -k 2666496 8388608\n"
		"f0 dio_pwrite -S 0x1d 17592186044416 32768\nf0 fiemap 0 16777216\n"
		"f0 copy_range f0 3396 17592186040320 4096\n");
	fclose(f);
	int r1 = sh("timeout 120 %s --replay %s -t dir:%s --map-sync --strict >/dev/null",
		    DIFFTEST_BIN, log, mnt);
	int r2 = sh("timeout 120 %s --replay %s -t dir:%s --no-map-sync >/dev/null",
		    DIFFTEST_BIN, log, mnt);
	/* unmount first: a failed assertion must not leave the server running */
	assert_int_equal(sh("timeout 60 fusermount3 -u %s", mnt), 0);
	rmdir(mnt);
	assert_int_equal(rc, 0);
	assert_int_equal(r1, 0);
	assert_int_equal(r2, 0);
}

/* argv[1]: run only the tests whose name contains it; "-NAME": all but
 * those (ctest registers the host-fusefs test separately). */
int main(int argc, char **argv)
{
	snprintf(tmp, sizeof(tmp), "/tmp/difftest-test-%d", (int)getpid());
	if (mkdir(tmp, 0755)) {
		perror(tmp);
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_op_roundtrip),
		cmocka_unit_test(test_generator_deterministic),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_generator_deep_trees),
		cmocka_unit_test(test_relocate_inverts_shifts),
		cmocka_unit_test(test_cowlat),
		cmocka_unit_test(test_pristine_for),
		cmocka_unit_test(test_pin),
		cmocka_unit_test(test_fragmenter_cycle),
		cmocka_unit_test(test_depth_parsers),
		cmocka_unit_test(test_mapped_negative_offset),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_faulty_insert),
		cmocka_unit_test(test_faulty_unwritten),
		cmocka_unit_test(test_faulty_errno),
		cmocka_unit_test(test_model_clean),
		cmocka_unit_test(test_shards_merge),
		cmocka_unit_test(test_dir_tmpfs),
		cmocka_unit_test(test_dir_loop_ext4),
		cmocka_unit_test(test_dir_loop_xfs),
		cmocka_unit_test(test_dir_fusefs),
	};
	struct CMUnitTest sel[sizeof(tests) / sizeof(tests[0])];
	size_t n = 0;
	for (size_t k = 0; k < sizeof(tests) / sizeof(tests[0]); k++) {
		const char *f = argc > 1 ? argv[1] : NULL;
		int hit = f && strstr(tests[k].name, f[0] == '-' ? f + 1 : f);
		if (!f || (f[0] == '-' ? !hit : hit))
			sel[n++] = tests[k];
	}
	int rc = _cmocka_run_group_tests("difftest", sel, n, NULL, NULL);
	if (!rc)
		sh("rm -rf %s", tmp);	/* keep the evidence of a failure */
	return rc;
}
