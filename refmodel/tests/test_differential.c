/* SPDX-License-Identifier: MIT */
/*
 * test_differential.c - differential self-test of librefmodel.
 *
 * Seeded random operation sequences run on the tree model (librefmodel)
 * and on the naive flat-array model of flatmodel.c, an independent reading
 * of the kernel written only for this test.  After every operation the
 * two must agree on the result or errno, the size, every byte (XXH3 of the
 * whole content, and the bytes pread returns), the state and may-mask of
 * every block (rm_walk), FIEMAP, SEEK_DATA/SEEK_HOLE, allocated bytes and
 * the fsync count, and rm_check() must pass.  On the first mismatch the
 * test prints the seed, the operation index and the sequence that leads
 * there (greedily shrunk), then fails.
 *
 * Environment: RM_DIFF_SEED (default 1), RM_DIFF_OPS (total operations,
 * default RM_DIFF_DEFAULT_OPS = 108000, spread over profiles x block sizes;
 * sanitized builds get a smaller default from CMake because ASan makes the
 * per-operation full-map comparison several times slower), RM_DIFF_VERBOSE=1
 * prints per-configuration counts.
 *
 * The first tests check the flat model alone against hand-computed cases
 * and its own invariants, so that a bug in the oracle shows up as such.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <xxhash.h>

#include "pair.h"
#include "rm_arith.h"

#define KEEP	RM_FALLOC_FL_KEEP_SIZE
#define PUNCH	RM_FALLOC_FL_PUNCH_HOLE
#define NOHIDE	RM_FALLOC_FL_NO_HIDE_STALE
#define COLL	RM_FALLOC_FL_COLLAPSE_RANGE
#define ZERO	RM_FALLOC_FL_ZERO_RANGE
#define INS	RM_FALLOC_FL_INSERT_RANGE
#define UNSH	RM_FALLOC_FL_UNSHARE_RANGE

/* ---- hand-computed cases for the flat model -------------------------- */

static struct fm_file fm_mk(enum rm_profile p, uint32_t bs, int64_t maxbytes)
{
	struct fm_file f;
	struct rm_opts o = { .profile = p, .blocksize = bs, .maxbytes = maxbytes };
	assert_int_equal(fm_new(&o, &f), 0);
	return f;
}

static unsigned fm_state(const struct fm_file *f, int64_t off)
{
	struct rm_run r;
	assert_true(fm_walk(f, off, off + 1, &r, 1) >= 1);
	return r.state;
}

static unsigned fm_mayat(const struct fm_file *f, int64_t off)
{
	struct rm_run r;
	assert_true(fm_walk(f, off, off + 1, &r, 1) >= 1);
	return r.may;
}

static void flat_write_read_seek(void **state)
{
	(void)state;
	struct fm_file f = fm_mk(RM_PROFILE_EXT4, 4096, 0);
	uint8_t buf[8192], out[8192];
	struct rm_extent ext[4];

	memset(buf, 0xab, sizeof(buf));
	assert_int_equal(fm_pwrite(&f, buf, 100, 5000), 100);
	assert_int_equal(f.size, 5100);
	assert_int_equal(fm_state(&f, 0), RM_HOLE);
	assert_int_equal(fm_state(&f, 4096), RM_DATA);
	assert_int_equal(fm_lseek(&f, 0, RM_SEEK_DATA), 4096);
	assert_int_equal(fm_lseek(&f, 0, RM_SEEK_HOLE), 0);
	assert_int_equal(fm_lseek(&f, 4097, RM_SEEK_HOLE), 5100);
	assert_int_equal(fm_lseek(&f, 5100, RM_SEEK_HOLE), -ENXIO);
	assert_int_equal(fm_lseek(&f, 0, RM_SEEK_SET), -EINVAL);
	assert_int_equal(fm_fiemap(&f, 0, INT64_MAX, ext, 4), 1);
	assert_int_equal(ext[0].logical, 4096);
	assert_int_equal(ext[0].length, 4096);
	assert_int_equal(ext[0].flags, RM_FIEMAP_LAST);
	/* short read at EOF, zeros before the data */
	assert_int_equal(fm_pread(&f, out, 8192, 0), 5100);
	for (int i = 0; i < 5000; i++)
		assert_int_equal(out[i], 0);
	assert_int_equal(out[5000], 0xab);
	assert_int_equal(fm_pread(&f, out, 10, 5100), 0);
	assert_int_equal(fm_pread(&f, out, 10, -1), -EINVAL);
	assert_int_equal(fm_pread(&f, out, (size_t)-1, 0), -EINVAL);
	assert_int_equal(fm_pwrite(&f, buf, 0, INT64_MAX), 0);
	assert_int_equal(fm_pwrite(&f, buf, 10, -5), -EINVAL);
	assert_int_equal(fm_pwrite(&f, buf, 10, INT64_MAX - 5), -EINVAL);
	assert_int_equal(fm_pwrite(&f, buf, 10, f.maxbytes), -EFBIG);
	assert_int_equal(fm_pwrite(&f, buf, 10, f.maxbytes - 3), -ENOMEM); /* beyond the flat span */
	assert_int_equal(f.size, 5100);
	fm_free(&f);

	/* short write at s_maxbytes (small maxbytes so the arrays stay small) */
	f = fm_mk(RM_PROFILE_XFS, 4096, 100000);
	assert_int_equal(fm_pwrite(&f, buf, 4096, 99990), 10);
	assert_int_equal(f.size, 100000);
	assert_int_equal(fm_pwrite(&f, buf, 1, 100000), -EFBIG);
	assert_int_equal(fm_truncate(&f, 100001), -EFBIG);
	assert_int_equal(fm_truncate(&f, -1), -EINVAL);
	assert_int_equal(fm_fallocate(&f, 0, 99999, 2), -EFBIG);
	assert_int_equal(fm_fallocate(&f, 0, 99999, 1), 0);
	fm_free(&f);
}

static void flat_vfs_fallocate_order(void **state)
{
	(void)state;
	for (int p = 0; p < 3; p++) {
		struct fm_file f = fm_mk((enum rm_profile)p, 4096, 0);
		assert_int_equal(fm_fallocate(&f, 0, -1, 10), -EINVAL);
		assert_int_equal(fm_fallocate(&f, 0, 0, 0), -EINVAL);
		assert_int_equal(fm_fallocate(&f, 0x80, 0, 10), -EOPNOTSUPP);
		assert_int_equal(fm_fallocate(&f, NOHIDE | PUNCH | KEEP, 0, 10), -EOPNOTSUPP);
		assert_int_equal(fm_fallocate(&f, PUNCH | ZERO | KEEP, 0, 10), -EOPNOTSUPP);
		assert_int_equal(fm_fallocate(&f, PUNCH, 0, 10), -EOPNOTSUPP);
		assert_int_equal(fm_fallocate(&f, COLL | KEEP, 0, 4096), -EINVAL);
		assert_int_equal(fm_fallocate(&f, INS | ZERO, 0, 4096), -EINVAL);
		assert_int_equal(fm_fallocate(&f, UNSH | ZERO, 0, 4096), -EINVAL);
		assert_int_equal(fm_fallocate(&f, 0, INT64_MAX, 1), -EFBIG);
		assert_int_equal(fm_fallocate(&f, 0, 1, INT64_MAX), -EFBIG);
		assert_int_equal(fm_fallocate(&f, UNSH | KEEP, 0, 4096),
				 p == RM_PROFILE_EXT4 ? -EOPNOTSUPP : 0);
		/* insert/collapse on an empty file */
		assert_int_equal(fm_fallocate(&f, INS, 0, 4096), -EINVAL);
		assert_int_equal(fm_fallocate(&f, COLL, 0, 4096), -EINVAL);
		assert_int_equal(f.size, 0);
		fm_free(&f);
	}
}

static void flat_shift_ops(void **state)
{
	(void)state;
	uint8_t blk[3][4096], out[16384];
	for (int p = 0; p < 3; p++) {
		struct fm_file f = fm_mk((enum rm_profile)p, 4096, 0);
		for (int i = 0; i < 3; i++) {
			memset(blk[i], 'A' + i, 4096);
			assert_int_equal(fm_pwrite(&f, blk[i], 4096, i * 4096), 4096);
		}
		if (p != RM_PROFILE_BYTES) {
			assert_int_equal(fm_fallocate(&f, COLL, 100, 4096), -EINVAL);
			assert_int_equal(fm_fallocate(&f, INS, 4096, 100), -EINVAL);
		}
		assert_int_equal(fm_fallocate(&f, COLL, 4096, 8192), -EINVAL); /* reaches EOF */
		assert_int_equal(fm_fallocate(&f, COLL, 4096, 4096), 0);
		assert_int_equal(f.size, 8192);
		assert_int_equal(fm_pread(&f, out, 16384, 0), 8192);
		assert_int_equal(out[0], 'A');
		assert_int_equal(out[4096], 'C');
		assert_int_equal(fm_fallocate(&f, INS, 8192, 4096), -EINVAL); /* at EOF */
		assert_int_equal(fm_fallocate(&f, INS, 4096, 4096), 0);
		assert_int_equal(f.size, 12288);
		assert_int_equal(fm_state(&f, 4096), RM_HOLE);
		assert_int_equal(fm_mayat(&f, 4096), RM_HOLE);
		assert_int_equal(fm_pread(&f, out, 16384, 0), 12288);
		assert_int_equal(out[4096], 0);
		assert_int_equal(out[8192], 'C');
		assert_int_equal(fm_lseek(&f, 0, RM_SEEK_HOLE), 4096);
		assert_int_equal(fm_lseek(&f, 4096, RM_SEEK_DATA), 8192);
		fm_free(&f);
	}
	/* insert past s_maxbytes */
	struct fm_file f = fm_mk(RM_PROFILE_EXT4, 4096, 16384);
	assert_int_equal(fm_pwrite(&f, blk[0], 4096, 0), 4096);
	assert_int_equal(fm_fallocate(&f, INS, 0, 12288), 0);
	assert_int_equal(fm_fallocate(&f, INS, 0, 4096), -EFBIG);
	fm_free(&f);
}

static void flat_punch_zero_profiles(void **state)
{
	(void)state;
	uint8_t buf[16384], out[16384];
	memset(buf, 0xcd, sizeof(buf));

	/* ext4 punch at or past EOF does nothing, even to KEEP_SIZE blocks */
	struct fm_file f = fm_mk(RM_PROFILE_EXT4, 4096, 0);
	assert_int_equal(fm_pwrite(&f, buf, 4096, 0), 4096);
	assert_int_equal(fm_fallocate(&f, KEEP, 4096, 8192), 0);
	assert_int_equal(fm_fallocate(&f, PUNCH | KEEP, 4096, 8192), 0);
	assert_int_equal(fm_state(&f, 4096), RM_UNWRITTEN);
	/* ext4 zero range: interior block becomes unwritten, edges stay data */
	assert_int_equal(fm_pwrite(&f, buf, 12288, 0), 12288);
	assert_int_equal(fm_fallocate(&f, ZERO, 100, 8192), 0);
	assert_int_equal(fm_state(&f, 0), RM_DATA);
	assert_int_equal(fm_state(&f, 4096), RM_UNWRITTEN);
	assert_int_equal(fm_state(&f, 8192), RM_DATA);
	assert_int_equal(fm_pread(&f, out, 12288, 0), 12288);
	assert_int_equal(out[99], 0xcd);
	assert_int_equal(out[100], 0);
	assert_int_equal(out[8291], 0);
	assert_int_equal(out[8292], 0xcd);
	/* the collapse keeps the blocks past EOF on ext4 */
	assert_int_equal(fm_fallocate(&f, KEEP, 12288, 4096), 0);
	assert_int_equal(fm_fallocate(&f, COLL, 0, 4096), 0);
	assert_int_equal(fm_state(&f, 8192), RM_UNWRITTEN);
	/* truncate to the same size frees it */
	assert_int_equal(fm_truncate(&f, f.size), 0);
	assert_int_equal(fm_state(&f, 8192), RM_HOLE);
	fm_free(&f);

	/* XFS punch past EOF frees the KEEP_SIZE blocks; collapse drops post-EOF */
	f = fm_mk(RM_PROFILE_XFS, 4096, 0);
	assert_int_equal(fm_pwrite(&f, buf, 8192, 0), 8192);
	assert_int_equal(fm_fallocate(&f, KEEP, 8192, 16384), 0);
	assert_int_equal(fm_fallocate(&f, PUNCH | KEEP, 12288, 4096), 0);
	assert_int_equal(fm_state(&f, 8192), RM_UNWRITTEN);
	assert_int_equal(fm_state(&f, 12288), RM_HOLE);
	assert_int_equal(fm_state(&f, 16384), RM_UNWRITTEN);
	assert_int_equal(fm_fallocate(&f, COLL, 0, 4096), 0);
	assert_int_equal(fm_state(&f, 4096), RM_HOLE);
	assert_int_equal(fm_state(&f, 12288), RM_HOLE);
	/* zero range on XFS: partial data edge stays data */
	assert_int_equal(fm_fallocate(&f, ZERO, 10, 100), 0);
	assert_int_equal(fm_state(&f, 0), RM_DATA);
	fm_free(&f);

	/* speculative preallocation latitude after an extending XFS write */
	f = fm_mk(RM_PROFILE_XFS, 4096, 0);
	assert_int_equal(fm_pwrite(&f, buf, 4096, 0), 4096);
	/* bounded: end + max(64K, 2 * end) rounded to 64K */
	assert_int_equal(fm_mayat(&f, 100000), RM_ANY);
	assert_int_equal(fm_state(&f, 100000), RM_HOLE);
	assert_int_equal(fm_mayat(&f, 1 << 20), RM_HOLE);
	assert_int_equal(fm_truncate(&f, 4096), 0);
	assert_int_equal(fm_mayat(&f, 100000), RM_HOLE);
	fm_free(&f);

	/* bytes profile: byte-exact punch */
	f = fm_mk(RM_PROFILE_BYTES, 4096, 0);
	assert_int_equal(fm_pwrite(&f, buf, 1000, 0), 1000);
	assert_int_equal(fm_fallocate(&f, PUNCH | KEEP, 10, 5), 0);
	assert_int_equal(fm_state(&f, 9), RM_DATA);
	assert_int_equal(fm_state(&f, 10), RM_HOLE);
	assert_int_equal(fm_state(&f, 15), RM_DATA);
	assert_int_equal(fm_fallocate(&f, COLL, 10, 5), 0);
	assert_int_equal(f.size, 995);
	assert_int_equal(fm_state(&f, 10), RM_DATA);
	fm_free(&f);
}

#ifndef RM_DIFF_DEFAULT_OPS
#define RM_DIFF_DEFAULT_OPS 108000	/* >= 100,000 operations in CI */
#endif

/* ---- the generator ---------------------------------------------------- */

struct gen {
	struct rng r;
	int64_t span;		/* bytes the file should roughly stay within */
	int64_t maxbytes;	/* effective s_maxbytes */
	uint32_t bs;
};

/* A boundary of the current map (run edge), for bias. */
static int64_t some_boundary(struct gen *G, struct pair *p)
{
	size_t n = fm_walk(&p->f, 0, p->f.cap * p->f.g + 1, p->r2, MAXRUNS);
	if (n == 0)
		return 0;
	if (n > MAXRUNS)
		n = MAXRUNS;
	return p->r2[rbelow(&G->r, (int64_t)n)].off;
}

static int64_t gen_off(struct gen *G, struct pair *p)
{
	struct rng *r = &G->r;
	int64_t bs = G->bs, size = p->f.size, x;
	switch (rbelow(r, 10)) {
	case 0: x = 0; break;
	case 1: case 2: x = rbelow(r, G->span / bs + 1) * bs; break;
	case 3: x = size; break;
	case 4: x = (size / bs + rbelow(r, 3) - 1) * bs; break;
	case 5: case 6: x = some_boundary(G, p); break;
	case 7: x = rbelow(r, G->span / 4096 + 1) * 4096; break;
	default: x = rbelow(r, G->span); break;
	}
	if (rpct(r, 20))
		x += rbelow(r, 3) - 1;	/* off by one byte */
	if (x < 0)
		x = 0;
	return x;
}

static int64_t gen_len(struct gen *G, struct pair *p, int64_t off, int aligned)
{
	struct rng *r = &G->r;
	int64_t bs = G->bs, x;
	switch (rbelow(r, 8)) {
	case 0: x = 1 + rbelow(r, 64); break;
	case 1: x = bs; break;
	case 2: x = (1 + rbelow(r, 8)) * bs; break;
	case 3: x = p->f.size - off; break;	/* to EOF */
	case 4: x = some_boundary(G, p) - off; break;
	case 5: x = rbelow(r, G->span / 4) + 1; break;
	default: x = rbelow(r, 4 * bs) + 1; break;
	}
	if (aligned)
		x = (x / bs) * bs;
	if (rpct(r, 15))
		x += rbelow(r, 3) - 1;
	if (x <= 0)
		x = aligned ? bs : 1;
	return x;
}

/* Offsets and lengths no file system accepts, or only at the limits. */
static void gen_invalid(struct gen *G, struct pair *p, int64_t *off, int64_t *len)
{
	struct rng *r = &G->r;
	int64_t mb = G->maxbytes;
	switch (rbelow(r, 9)) {
	case 0: *off = -1 - rbelow(r, 5000); break;
	case 1: *off = INT64_MIN; break;
	case 2: *len = 0; break;
	case 3: *len = -rbelow(r, 5000) - 1; break;
	case 4: *off = INT64_MAX - rbelow(r, 3); *len = 1 + rbelow(r, 5000); break;
	case 5: *len = INT64_MAX - rbelow(r, 2); break;
	case 6: *off = mb - rbelow(r, 2); *len = 1 + rbelow(r, 2 * G->bs); break;
	case 7: *off = p->f.size; *len = rm_sat_add(mb - p->f.size, 1 + rbelow(r, 2)); break;
	default: *off = rm_sat_add(mb, rbelow(r, 3) - 1); break;
	}
}

static const int modes_valid[] = {
	0, KEEP, PUNCH | KEEP, ZERO, ZERO | KEEP, COLL, INS, UNSH, UNSH | KEEP,
};

static void gen_op(struct gen *G, struct pair *p, struct op *o)
{
	struct rng *r = &G->r;
	int64_t bs = G->bs;
	for (;;) {
		memset(o, 0, sizeof(*o));
		int64_t k = rbelow(r, 100);
		if (k < 28) {
			o->kind = OP_PWRITE;
			o->off = gen_off(G, p);
			o->len = gen_len(G, p, o->off, 0);
			if (o->len > MAXBUF)
				o->len = MAXBUF;
			o->dseed = rnext(r);
			if (rpct(r, 4))
				gen_invalid(G, p, &o->off, &o->len);
			if (o->len < 0 || o->len > MAXBUF) {
				/* (size_t)len beyond the buffer: only as a certain
				 * failure (negative ssize_t, or pos + count wraps) */
				if (!(o->len < 0 || o->off < 0 || o->off > INT64_MAX - o->len))
					continue;
			}
		} else if (k < 36) {
			o->kind = OP_PREAD;
			o->off = rpct(r, 5) ? (rpct(r, 50) ? -1 : INT64_MAX - 1) : gen_off(G, p);
			o->len = gen_len(G, p, o->off >= 0 ? o->off : 0, 0);
			if (o->len > MAXBUF)
				o->len = MAXBUF;
			if (rpct(r, 3))
				o->len = 0;
		} else if (k < 44) {
			o->kind = OP_TRUNC;
			o->len = rpct(r, 30) ? p->f.size + rbelow(r, 2 * bs) - bs : gen_off(G, p);
			if (rpct(r, 4))
				o->len = rpct(r, 50) ? -1 - rbelow(r, 10) : rm_sat_add(G->maxbytes, rbelow(r, 2));
			if (o->len < 0 && rpct(r, 50))
				o->len = 0;
		} else if (k < 45) {
			o->kind = OP_FSYNC;
		} else if (k < 46) {
			/* a write-back point (FIEMAP_FLAG_SYNC, sync_file_range
			 * with a wait, the write-back of an operation) */
			o->kind = OP_WRITEBACK;
			o->off = rpct(r, 30) ? 0 : gen_off(G, p);
			o->len = rpct(r, 30) ? 0 : gen_len(G, p, o->off, 0);
			if (rpct(r, 3))
				o->off = -1;
		} else if (k < 47) {
			o->kind = OP_MWRITE;
			o->off = p->f.size > 0 ? rbelow(r, p->f.size + 2 * bs) : rbelow(r, bs);
			o->len = 1 + rbelow(r, 2 * bs);
			o->dseed = rnext(r);
		} else if (k < 94) {
			o->kind = OP_FALLOC;
			if (rpct(r, 8))
				o->mode = rpct(r, 70) ? (int)rbelow(r, 128) : (int)rnext(r);
			else
				o->mode = modes_valid[rbelow(r, sizeof(modes_valid) / sizeof(modes_valid[0]))];
			int aligned = (o->mode & (COLL | INS)) ? !rpct(r, 15) : rpct(r, 40);
			if (G->bs != p->f.g && (o->mode & (COLL | INS)))
				aligned = rpct(r, 30);	/* bytes profile: any offset */
			o->off = gen_off(G, p);
			if (aligned)
				o->off = (o->off / bs) * bs;
			o->len = gen_len(G, p, o->off, aligned);
			if ((o->mode & (COLL | INS)) && rpct(r, 50))
				o->len = (1 + rbelow(r, 4)) * (aligned ? bs : 1 + rbelow(r, 3 * bs));
			if (rpct(r, 6))
				gen_invalid(G, p, &o->off, &o->len);
		} else if (k < 97) {
			o->kind = OP_SEEK;
			o->mode = rpct(r, 50) ? RM_SEEK_DATA : RM_SEEK_HOLE;
			if (rpct(r, 3))
				o->mode = (int)rbelow(r, 3);
			o->off = rpct(r, 5) ? -1 : gen_off(G, p);
		} else {
			o->kind = OP_FIEMAP;
			o->off = rpct(r, 50) ? 0 : gen_off(G, p);
			o->len = rpct(r, 30) ? INT64_MAX : gen_len(G, p, o->off, 0);
			if (rpct(r, 5))
				o->len = 0;
		}
		if (!pair_too_big(p, o))
			return;
	}
}

/* ---- running, replaying and shrinking -------------------------------- */

/* Replay ops[0..n) on fresh models; return the index of the first op after
 * which they disagree, or -1. */
static long replay(const struct rm_opts *opts, const struct op *ops, size_t n,
		   char *why, size_t whylen)
{
	struct pair p;
	struct rng r = { 12345 };
	long bad = -1;
	if (pair_open(&p, opts) != 0) {
		pair_close(&p);
		return -2;
	}
	for (size_t i = 0; i < n; i++) {
		if (pair_apply(&p, &ops[i]) || pair_compare(&p, &r)) {
			bad = (long)i;
			if (why)
				snprintf(why, whylen, "%s", p.why);
			break;
		}
	}
	pair_close(&p);
	return bad;
}

static void report_failure(const struct rm_opts *o, uint64_t seed, unsigned long seq,
			   size_t idx, struct op *ops, const char *why)
{
	size_t n = idx + 1;
	char why2[1024];

	fprintf(stderr, "\nDIFFERENTIAL MISMATCH: profile %s, blocksize %u, maxbytes %" PRId64
		", RM_DIFF_SEED=%" PRIu64 ", sequence %lu, op index %zu\n  %s\n",
		rm_profile_name(o->profile), o->blocksize, o->maxbytes, seed, seq, idx, why);
	fprintf(stderr, "full sequence up to the mismatch:\n");
	for (size_t i = 0; i < n; i++)
		print_op(stderr, i, &ops[i]);
	/* Greedy shrink: drop ops one at a time while some mismatch remains. */
	time_t t0 = time(NULL);
	for (size_t i = n; i-- > 0 && time(NULL) - t0 < 20;) {
		struct op saved = ops[i];
		memmove(&ops[i], &ops[i + 1], (n - i - 1) * sizeof(*ops));
		long bad = replay(o, ops, n - 1, NULL, 0);
		if (bad >= 0) {
			n = (size_t)bad + 1;
		} else {
			memmove(&ops[i + 1], &ops[i], (n - i - 1) * sizeof(*ops));
			ops[i] = saved;
		}
		if (i > n)
			i = n;
	}
	long bad = replay(o, ops, n, why2, sizeof(why2));
	fprintf(stderr, "shrunk sequence (%zu ops; mismatch: %s):\n", n,
		bad >= 0 ? why2 : "(lost while shrinking)");
	for (size_t i = 0; i < n; i++)
		print_op(stderr, i, &ops[i]);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	unsigned long long v = strtoull(s, &end, 0);
	if (*end) {
		fprintf(stderr, "%s=%s: not a number\n", name, s);
		exit(2);
	}
	return v;
}

#define SEQ_LEN 300
static const uint32_t blocksizes[] = { 512, 4096, 65536 };

static void run_profile(enum rm_profile prof)
{
	uint64_t seed = env_u64("RM_DIFF_SEED", 1);
	uint64_t total = env_u64("RM_DIFF_OPS", RM_DIFF_DEFAULT_OPS);
	int verbose = (int)env_u64("RM_DIFF_VERBOSE", 0);
	uint64_t per_cfg = total / (3 * 3) + 1;
	struct op *ops = calloc(SEQ_LEN, sizeof(*ops));
	assert_non_null(ops);

	for (size_t bi = 0; bi < 3; bi++) {
		uint32_t bs = blocksizes[bi];
		uint64_t done = 0, failed_ops = 0;
		for (unsigned long seq = 0; done < per_cfg; seq++) {
			struct gen G;
			G.r.s = mix64(seed ^ mix64(((uint64_t)prof << 48) ^ ((uint64_t)bs << 16) ^ seq));
			G.bs = bs;
			/* Span: how far the file roams.  The bytes profile keeps one
			 * state byte per byte, so it stays smaller. */
			int64_t spans[] = { 16 * (int64_t)bs, 256 << 10, 2 << 20 };
			G.span = spans[rbelow(&G.r, 3)];
			if (prof == RM_PROFILE_BYTES && G.span > (32 << 10))
				G.span = 32 << 10;
			struct rm_opts o = { .profile = prof, .blocksize = bs, .maxbytes = 0 };
			/* A third of the sequences use a small s_maxbytes, so the
			 * limits (short writes, EFBIG) are reached inside the span. */
			if (rpct(&G.r, 33)) {
				o.maxbytes = G.span + rbelow(&G.r, G.span);
				if (rpct(&G.r, 50))
					o.maxbytes = (o.maxbytes / bs) * bs;
			}
			G.maxbytes = o.maxbytes ? o.maxbytes : fm_profile_maxbytes(prof, bs);
			if (rm_profile_maxbytes(prof, bs) != fm_profile_maxbytes(prof, bs))
				fail_msg("default s_maxbytes (%s, bs %u): tree %" PRId64 " flat %" PRId64,
					 rm_profile_name(prof), bs, rm_profile_maxbytes(prof, bs),
					 fm_profile_maxbytes(prof, bs));

			struct pair p;
			if (pair_open(&p, &o) != 0)
				fail_msg("cannot create the models (profile %s bs %u maxbytes %" PRId64 ")",
					 rm_profile_name(prof), bs, o.maxbytes);
			if (rm_maxbytes(p.t) != p.f.maxbytes)
				fail_msg("s_maxbytes: tree %" PRId64 " flat %" PRId64,
					 rm_maxbytes(p.t), p.f.maxbytes);
			struct rng cr = { mix64(G.r.s) };
			for (size_t i = 0; i < SEQ_LEN && done < per_cfg; i++) {
				gen_op(&G, &p, &ops[i]);
				done++;
				if (pair_apply(&p, &ops[i]) || pair_compare(&p, &cr)) {
					char why[1024];
					snprintf(why, sizeof(why), "%s", p.why);
					pair_close(&p);
					report_failure(&o, seed, seq, i, ops, why);
					failed_ops = done;
					free(ops);
					fail_msg("tree and flat models disagree (see above)");
				}
			}
			pair_close(&p);
		}
		if (verbose)
			fprintf(stderr, "differential %s bs %u: %" PRIu64 " ops agree%s\n",
				rm_profile_name(prof), bs, done, failed_ops ? " (failed)" : "");
	}
	free(ops);
}

/* The flat model against its own invariants, on the same random
 * sequences (no tree model involved): bytes at and past EOF are zero,
 * bytes of holes and unwritten granules are zero, every state is in its
 * may-mask, a failed operation changes nothing, SEEK_DATA lands on data,
 * SEEK_HOLE on a non-data granule or EOF, FIEMAP covers exactly the
 * allocated granules. */
static void flat_check(const struct fm_file *f, const struct fm_file *before, int64_t rc)
{
	for (int64_t i = 0; i < f->cap; i++) {
		assert_true(f->st[i] & f->may[i] & RM_ANY);
		for (int64_t k = 0; k < f->g; k++) {
			int64_t at = i * f->g + k;
			if (at >= f->size || f->st[i] != RM_DATA)
				assert_int_equal(f->data[at], 0);
		}
	}
	assert_true(f->size <= f->cap * f->g || f->cap == 0);
	if (rc < 0 && before) {
		assert_int_equal(f->size, before->size);
		assert_int_equal(f->tail_may, before->tail_may);
		int64_t n = f->cap < before->cap ? f->cap : before->cap;
		if (n > 0)
			assert_memory_equal(f->st, before->st, (size_t)n);
		if (n > 0)
			assert_memory_equal(f->may, before->may, (size_t)n);
		if (n > 0)
			assert_memory_equal(f->data, before->data, (size_t)(n * f->g));
	}
	for (int64_t o = 0; o < f->size; o += 1 + f->size / 7) {
		int64_t d = fm_lseek(f, o, RM_SEEK_DATA), h = fm_lseek(f, o, RM_SEEK_HOLE);
		assert_true(h >= o && h <= f->size);
		/* data: the written state (cold-cache answer: an M4 block,
		 * unwritten with a dirtied page, is a hole; see D-DT9) */
		if (h < f->size)
			assert_false(f->st[h / f->g] == RM_DATA);
		if (d != -ENXIO) {
			assert_true(d >= o && d < f->size);
			assert_true(f->st[d / f->g] == RM_DATA);
		}
	}
	static struct rm_extent ext[MAXEXT];
	int64_t n = fm_fiemap(f, 0, INT64_MAX, ext, MAXEXT), covered = 0;
	for (int64_t i = 0; i < n && i < MAXEXT; i++) {
		covered += ext[i].length;
		assert_int_equal(!!(ext[i].flags & RM_FIEMAP_LAST), i == n - 1);
	}
	/* FIEMAP stops at s_maxbytes (fiemap_prep()); an insert may have
	 * shifted blocks past EOF beyond it. */
	if (n <= MAXEXT)
		assert_true(covered <= fm_alloc_bytes(f));
	if (n <= MAXEXT && fm_map_end(f) <= f->maxbytes - f->g)
		assert_int_equal(covered, fm_alloc_bytes(f));
}

static struct fm_file fm_copy(const struct fm_file *f)
{
	struct fm_file c = *f;
	c.st = malloc((size_t)f->cap + 1);
	c.may = malloc((size_t)f->cap + 1);
	c.data = malloc((size_t)(f->cap * f->g) + 1);
	assert_non_null(c.st);
	assert_non_null(c.may);
	assert_non_null(c.data);
	if (f->cap) {
		memcpy(c.st, f->st, (size_t)f->cap);
		memcpy(c.may, f->may, (size_t)f->cap);
		memcpy(c.data, f->data, (size_t)(f->cap * f->g));
	}
	return c;
}

static int64_t flat_apply(struct fm_file *f, const struct op *o, uint8_t *buf)
{
	switch (o->kind) {
	case OP_PWRITE:
		if (o->len >= 0 && o->len <= MAXBUF)
			fill_bytes(buf, (size_t)o->len, o->dseed);
		return fm_pwrite(f, buf, (size_t)o->len, o->off);
	case OP_PREAD: return fm_pread(f, buf, (size_t)o->len, o->off);
	case OP_TRUNC: return fm_truncate(f, o->len);
	case OP_FSYNC: return fm_fsync(f);
	case OP_WRITEBACK: return fm_writeback(f, o->off, o->len);
	case OP_MWRITE:
		fill_bytes(buf, o->len >= 0 && o->len <= MAXBUF ? (size_t)o->len : 0, o->dseed);
		return fm_mwrite(f, buf, (size_t)o->len, o->off);
	case OP_FALLOC: return fm_fallocate(f, o->mode, o->off, o->len);
	case OP_SEEK: return fm_lseek(f, o->off, o->mode);
	case OP_FIEMAP: return 0;
	}
	return 0;
}

static void flat_random_invariants(void **state)
{
	(void)state;
	uint8_t *buf = malloc(MAXBUF);
	struct rm_run *runs = malloc(MAXRUNS * sizeof(*runs));
	assert_non_null(buf);
	assert_non_null(runs);
	for (int prof = 0; prof < 3; prof++) {
		for (size_t bi = 0; bi < 3; bi++) {
			for (int seq = 0; seq < 4; seq++) {
				struct gen G;
				G.r.s = mix64(0xf1a7 + (uint64_t)prof * 1000 + bi * 10 + (uint64_t)seq);
				G.bs = blocksizes[bi];
				G.span = prof == RM_PROFILE_BYTES ? (64 << 10) : 32 * (int64_t)G.bs;
				struct rm_opts o = { .profile = (enum rm_profile)prof, .blocksize = G.bs };
				if (seq & 1)
					o.maxbytes = G.span + 1234;
				G.maxbytes = o.maxbytes ? o.maxbytes : fm_profile_maxbytes(o.profile, G.bs);
				/* the generator reads the flat model through a pair */
				struct pair p;
				memset(&p, 0, sizeof(p));
				assert_int_equal(fm_new(&o, &p.f), 0);
				p.r2 = runs;
				for (int i = 0; i < 150; i++) {
					struct op op;
					gen_op(&G, &p, &op);
					struct fm_file before = fm_copy(&p.f);
					int64_t rc = flat_apply(&p.f, &op, buf);
					assert_int_not_equal(rc, -ENOMEM);
					flat_check(&p.f, &before, op.kind == OP_PREAD ||
						   op.kind == OP_SEEK ? 0 : rc);
					fm_free(&before);
				}
				fm_free(&p.f);
			}
		}
	}
	free(runs);
	free(buf);
}

static void diff_ext4(void **state) { (void)state; run_profile(RM_PROFILE_EXT4); }
static void diff_xfs(void **state) { (void)state; run_profile(RM_PROFILE_XFS); }
static void diff_bytes(void **state) { (void)state; run_profile(RM_PROFILE_BYTES); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flat_write_read_seek),
		cmocka_unit_test(flat_vfs_fallocate_order),
		cmocka_unit_test(flat_shift_ops),
		cmocka_unit_test(flat_punch_zero_profiles),
		cmocka_unit_test(flat_random_invariants),
		cmocka_unit_test(diff_ext4),
		cmocka_unit_test(diff_xfs),
		cmocka_unit_test(diff_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
