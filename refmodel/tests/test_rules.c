/* SPDX-License-Identifier: MIT */
/*
 * test_rules.c - one cmocka test per operation and per errno / semantic
 * rule of librefmodel, named after the rule, for the ext4, xfs and bytes
 * profiles where they differ.  Every test runs rm_check() after every
 * operation, and every failing operation is checked to change nothing
 * (size, content hash, block map with may-masks, FIEMAP).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refmodel.h"
#include "rmtest.h"

#define KEEP RM_FALLOC_FL_KEEP_SIZE
#define PUNCH RM_FALLOC_FL_PUNCH_HOLE
#define COLLAPSE RM_FALLOC_FL_COLLAPSE_RANGE
#define ZERO RM_FALLOC_FL_ZERO_RANGE
#define INSERT RM_FALLOC_FL_INSERT_RANGE
#define UNSHARE RM_FALLOC_FL_UNSHARE_RANGE
#define K 4096

static struct rm_file *mk(enum rm_profile p, uint32_t bs)
{
	struct rm_opts o = { .profile = p, .blocksize = bs };
	struct rm_file *f = NULL;
	assert_int_equal(rm_file_new(&o, &f), 0);
	assert_non_null(f);
	return f;
}

/* ---- digests of everything observable ---- */
struct snap {
	int64_t size;
	uint64_t hash;
	char map[4096];
	char fie[2048];
};

static void take(const struct rm_file *f, struct snap *s)
{
	memset(s, 0, sizeof(*s));
	s->size = rm_size(f);
	/* content: the first and the last MiB (hashing is O(bytes) and some
	 * tests use files near s_maxbytes); the map string covers the rest */
	s->hash = rm_hash(f, 0, 1 << 20) ^
		  (rm_hash(f, s->size > (1 << 20) ? s->size - (1 << 20) : 0, 1 << 20) * 31);
	map_str(f, s->map, sizeof(s->map));
	struct rm_extent e[64];
	int64_t n = rm_fiemap(f, 0, INT64_MAX, e, 64);
	char *p = s->fie;
	for (int64_t i = 0; i < n && i < 64; i++)
		p += sprintf(p, "%lld+%lld:%x ", (long long)e[i].logical,
			     (long long)e[i].length, e[i].flags);
}

static void same(const struct snap *a, const struct snap *b)
{
	assert_int_equal(a->size, b->size);
	assert_true(a->hash == b->hash);
	assert_string_equal(a->map, b->map);
	assert_string_equal(a->fie, b->fie);
}

/* Run a fallocate expected to fail with -err, and prove nothing changed. */
static void falloc_fails(struct rm_file *f, int mode, int64_t off, int64_t len, int err)
{
	struct snap a, b;
	take(f, &a);
	assert_int_equal(rm_fallocate(f, mode, off, len), -err);
	chk(f);
	take(f, &b);
	same(&a, &b);
}

static void falloc_ok(struct rm_file *f, int mode, int64_t off, int64_t len)
{
	assert_int_equal(rm_fallocate(f, mode, off, len), 0);
	chk(f);
}

static void write_pat(struct rm_file *f, int64_t off, size_t len, int c)
{
	unsigned char *b = malloc(len);
	assert_non_null(b);
	memset(b, c, len);
	assert_int_equal(rm_pwrite(f, b, len, off), (ssize_t)len);
	free(b);
	chk(f);
}

/* State and may of the block containing off. */
struct one {
	int64_t off;
	unsigned state, may;
};
static int one_cb(void *ctx, const struct rm_run *r)
{
	struct one *o = ctx;
	o->state = r->state;
	o->may = r->may;
	return 1;
}
static struct one at(const struct rm_file *f, int64_t off)
{
	struct one o = { off, 0, 0 };
	assert_int_equal(rm_walk(f, off, off + 1, one_cb, &o), 1);
	return o;
}
#define assert_block(f, off, st, my) do { struct one o_ = at(f, off); \
	assert_int_equal(o_.state, (st)); assert_int_equal(o_.may, (my)); } while (0)

static int all_zero(const struct rm_file *f, int64_t off, size_t len)
{
	unsigned char *b = malloc(len);
	assert_non_null(b);
	ssize_t n = rm_pread(f, b, len, off);
	int z = n >= 0;
	for (ssize_t i = 0; i < n; i++)
		z &= b[i] == 0;
	free(b);
	return z;
}

static int byte_at(const struct rm_file *f, int64_t off)
{
	unsigned char c;
	assert_int_equal(rm_pread(f, &c, 1, off), 1);
	return c;
}

static const enum rm_profile all_profiles[] = { RM_PROFILE_EXT4, RM_PROFILE_XFS, RM_PROFILE_BYTES };

/* ================= creation ================= */

static void test_file_new_rejects_bad_blocksize_einval(void **st)
{
	(void)st;
	struct rm_file *f = NULL;
	uint32_t bad[] = { 256, 1000, 3000, 131072 };
	for (size_t i = 0; i < 4; i++) {
		struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = bad[i] };
		assert_int_equal(rm_file_new(&o, &f), -EINVAL);
		assert_null(f);
	}
	struct rm_opts o = { .profile = (enum rm_profile)7, .blocksize = 4096 };
	assert_int_equal(rm_file_new(&o, &f), -EINVAL);
	enum rm_profile p;
	assert_int_equal(rm_profile_parse("zfs", &p), -EINVAL);
	assert_int_equal(rm_profile_parse("xfs", &p), 0);
	assert_int_equal(p, RM_PROFILE_XFS);
	assert_string_equal(rm_profile_name(RM_PROFILE_BYTES), "bytes");
}

static void test_maxbytes_per_profile(void **st)
{
	(void)st;
	/* ext4_max_size(): ((1 << 32) - 1) << blkbits; XFS: MAX_LFS_FILESIZE */
	assert_true(rm_profile_maxbytes(RM_PROFILE_EXT4, 4096) == (int64_t)(((1ULL << 32) - 1) << 12));
	assert_true(rm_profile_maxbytes(RM_PROFILE_EXT4, 1024) == (int64_t)(((1ULL << 32) - 1) << 10));
	assert_true(rm_profile_maxbytes(RM_PROFILE_XFS, 4096) == INT64_MAX);
	assert_true(rm_profile_maxbytes(RM_PROFILE_BYTES, 4096) == INT64_MAX);
	struct rm_file *f = mk(RM_PROFILE_EXT4, 4096);
	assert_true(rm_maxbytes(f) == rm_profile_maxbytes(RM_PROFILE_EXT4, 4096));
	assert_int_equal(rm_blocksize(f), 4096);
	assert_int_equal(rm_profile_of(f), RM_PROFILE_EXT4);
	rm_file_free(f);
}

/* ================= vfs_fallocate() order ================= */

static void test_vfs_fallocate_negative_offset_einval(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 3 * K, 0xab);
		falloc_fails(f, 0, -1, K, EINVAL);
		falloc_fails(f, PUNCH | KEEP, -K, K, EINVAL);
		rm_file_free(f);
	}
}

static void test_vfs_fallocate_len_not_positive_einval(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 3 * K, 0xab);
		falloc_fails(f, 0, 0, 0, EINVAL);
		falloc_fails(f, INSERT, 0, -K, EINVAL);
		/* EINVAL comes before EOPNOTSUPP for a bad mode */
		falloc_fails(f, 0x80, 0, 0, EINVAL);
		rm_file_free(f);
	}
}

static void test_vfs_fallocate_unsupported_mode_bits_eopnotsupp(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 3 * K, 0xab);
		falloc_fails(f, 0x80, 0, K, EOPNOTSUPP);
		falloc_fails(f, RM_FALLOC_FL_NO_HIDE_STALE | PUNCH | KEEP, 0, K, EOPNOTSUPP);
		falloc_fails(f, -1, 0, K, EOPNOTSUPP);
		rm_file_free(f);
	}
}

static void test_vfs_fallocate_punch_and_zero_eopnotsupp(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	write_pat(f, 0, 3 * K, 0xab);
	falloc_fails(f, PUNCH | ZERO | KEEP, 0, K, EOPNOTSUPP);
	falloc_fails(f, PUNCH | ZERO, 0, K, EOPNOTSUPP);
	rm_file_free(f);
}

static void test_vfs_fallocate_punch_without_keep_size_eopnotsupp(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 3 * K, 0xab);
		falloc_fails(f, PUNCH, 0, K, EOPNOTSUPP);
		rm_file_free(f);
	}
}

static void test_vfs_fallocate_collapse_not_alone_einval(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, 8 * K, 0xab);
	falloc_fails(f, COLLAPSE | KEEP, 0, K, EINVAL);
	/* PUNCH|COLLAPSE without KEEP_SIZE: the punch rule fires first */
	falloc_fails(f, COLLAPSE | PUNCH, 0, K, EOPNOTSUPP);
	falloc_fails(f, COLLAPSE | ZERO, 0, K, EINVAL);
	rm_file_free(f);
}

static void test_vfs_fallocate_insert_not_alone_einval(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	write_pat(f, 0, 8 * K, 0xab);
	falloc_fails(f, INSERT | KEEP, 0, K, EINVAL);
	falloc_fails(f, INSERT | UNSHARE, 0, K, EINVAL);
	/* collapse is checked before insert */
	falloc_fails(f, INSERT | COLLAPSE, 0, K, EINVAL);
	rm_file_free(f);
}

static void test_vfs_fallocate_unshare_with_other_than_keep_size_einval(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	write_pat(f, 0, 8 * K, 0xab);
	falloc_fails(f, UNSHARE | ZERO, 0, K, EINVAL);
	falloc_fails(f, UNSHARE | PUNCH | KEEP, 0, K, EINVAL);
	rm_file_free(f);
}

static void test_vfs_fallocate_past_maxbytes_or_wrap_efbig(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 2 * K, 0xab);
		int64_t mb = rm_maxbytes(f);
		falloc_fails(f, 0, INT64_MAX - K + 1, 2 * K, EFBIG);	/* wraps */
		if (mb < INT64_MAX) {
			falloc_fails(f, KEEP, mb - K, 2 * K, EFBIG);
			falloc_fails(f, PUNCH | KEEP, mb, K, EFBIG);
		}
		/* EOPNOTSUPP (mode) comes before EFBIG */
		falloc_fails(f, PUNCH, INT64_MAX - K + 1, 2 * K, EOPNOTSUPP);
		rm_file_free(f);
	}
}

/* ================= ext4 / xfs validation ================= */

static void test_ext4_unshare_eopnotsupp(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, 2 * K, 0xab);
	falloc_fails(f, UNSHARE, 0, K, EOPNOTSUPP);
	falloc_fails(f, UNSHARE | KEEP, 0, K, EOPNOTSUPP);
	rm_file_free(f);
}

static void test_xfs_unshare_allocates_like_mode0(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	falloc_ok(f, UNSHARE, K, K);
	assert_int_equal(rm_size(f), 2 * K);
	assert_block(f, K, RM_UNWRITTEN, RM_UNWRITTEN);
	assert_block(f, 0, RM_HOLE, RM_HOLE);
	falloc_ok(f, UNSHARE | KEEP, 4 * K, K);
	assert_int_equal(rm_size(f), 2 * K);
	assert_block(f, 4 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	rm_file_free(f);
}

static void test_collapse_unaligned_einval(void **st)
{
	(void)st;
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 16 * K, 0xab);
		falloc_fails(f, COLLAPSE, 100, K, EINVAL);
		falloc_fails(f, COLLAPSE, K, 100, EINVAL);
		rm_file_free(f);
	}
}

static void test_insert_unaligned_einval(void **st)
{
	(void)st;
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 16 * K, 0xab);
		falloc_fails(f, INSERT, 100, K, EINVAL);
		falloc_fails(f, INSERT, K, 512, EINVAL);
		rm_file_free(f);
	}
}

static void test_ext4_insert_at_eof_einval(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 4 * K, 0xab);
		falloc_fails(f, INSERT, 4 * K, K, EINVAL);
		falloc_fails(f, INSERT, 8 * K, K, EINVAL);
		rm_file_free(f);
	}
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	falloc_fails(f, INSERT, 0, K, EINVAL);	/* empty file: offset 0 is EOF */
	rm_file_free(f);
}

static void test_insert_growth_past_maxbytes_efbig_before_einval(void **st)
{
	(void)st;
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		int64_t mb = rm_maxbytes(f);
		int64_t sz = (mb - 2 * K) - (mb - 2 * K) % K;
		assert_int_equal(rm_truncate(f, sz), 0);
		write_pat(f, 0, K, 0x11);
		/* ext4_insert_range()/xfs_file_fallocate(): s_maxbytes - i_size < len */
		falloc_fails(f, INSERT, 0, 4 * K, EFBIG);
		/* EFBIG is checked before "offset >= i_size" */
		falloc_fails(f, INSERT, sz, 4 * K, EFBIG);
		falloc_ok(f, INSERT, 0, K);
		assert_int_equal(rm_size(f), sz + K);
		rm_file_free(f);
	}
}

static void test_ext4_insert_shifting_last_extent_past_ext_max_blocks_einval_size_grows(void **st)
{
	(void)st;
	/* ext4_ext_shift_extents(): the last extent (post-EOF preallocation
	 * included) must not pass EXT_MAX_BLOCKS; ext4_insert_range() has
	 * already grown i_size by len when that -EINVAL comes back */
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 3459990, 15, 0xbf);
	falloc_ok(f, KEEP, 3465216, 4);
	int64_t len = 17592182575104LL, size = rm_size(f);
	char before[4096], after[4096];
	map_str(f, before, sizeof(before));
	assert_int_equal(rm_fallocate(f, INSERT, 1241088, len), -EINVAL);
	chk(f);
	assert_true(rm_size(f) == size + len);
	map_str(f, after, sizeof(after));
	/* the map is unchanged but for the longer hole up to the new EOF */
	assert_memory_equal(before, after, strlen("0+3457024:1/1 3457024+4096:4/4 3461120+4096:1/1 3465216+4096:2/2"));
	assert_int_equal(byte_at(f, 3459990), 0xbf);
	rm_file_free(f);
}

static void test_pwrite_block_straddling_int64_max(void **st)
{
	(void)st;
	/* XFS s_maxbytes = LLONG_MAX: the last block ends at 2^63 */
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	assert_int_equal(rm_pwrite(f, "\xb0\xb0\xb0\xb0", 4, 9223372036854771711LL), 4);
	chk(f);
	assert_int_equal(byte_at(f, 9223372036854771712LL), 0xb0);
	assert_true(rm_size(f) == 9223372036854771715LL);
	assert_int_equal(rm_fiemap(f, 0, INT64_MAX, NULL, 0), 1);
	rm_file_free(f);
}

/* D-DT12: the block that ends at 2^63 is stored one byte short (the map
 * ends at INT64_MAX).  A collapse moves it down whole, and an insert that
 * lands a block exactly below 2^63 keeps it (difftest --huge found both:
 * rm_check() saw an unaligned map end). */
static void test_shift_block_ending_at_2_63(void **st)
{
	(void)st;
	const int64_t top = INT64_MAX - 3 * K + 1;	/* 2^63 - 3 blocks */
	const int64_t mid = (int64_t)1 << 60;
	struct rm_extent e[4];
	struct rm_file *f = mk(RM_PROFILE_XFS, K);

	write_pat(f, top + 6, 2 * K, 0x54);	/* blocks 2^51-3 .. 2^51-1 */
	chk(f);
	falloc_ok(f, COLLAPSE, mid, 52 * K);
	chk(f);
	assert_int_equal(rm_fiemap(f, 0, INT64_MAX, e, 4), 1);
	assert_true(e[0].logical == top - 52 * K && e[0].length == 3 * K);
	assert_int_equal(byte_at(f, top - 52 * K + 6), 0x54);
	/* back up by the same 52 blocks: the last one ends at 2^63 again */
	falloc_ok(f, INSERT, mid, 52 * K);
	chk(f);
	assert_int_equal(rm_fiemap(f, 0, INT64_MAX, e, 4), 1);
	assert_true(e[0].logical == top && e[0].length == 3 * K - 1);
	assert_int_equal(byte_at(f, top + 2 * K + 5), 0x54);
	rm_file_free(f);
}

/* D-DT13: 6.1 ext4 punch starting past s_bitmap_maxbytes - blocksize
 * (about 4 TiB) removes nothing but zeroes the rest of its first block
 * (found by difftest --huge on 6.1: the byte at the punch offset read 0) */
static void test_ext4_punch_past_bitmap_limit_zeroes_first_block(void **st)
{
	(void)st;
	const int64_t at = (int64_t)5 << 40, off = at + 100;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);

	write_pat(f, at, 2 * K, 0x25);
	falloc_ok(f, PUNCH | KEEP, off, 16 * K);
	assert_int_equal(byte_at(f, off - 1), 0x25);
	assert_int_equal(byte_at(f, off), 0);
	assert_int_equal(byte_at(f, at + K - 1), 0);
	assert_int_equal(byte_at(f, at + K), 0x25);	/* no block removed */
	/* aligned: nothing to zero, nothing removed */
	falloc_ok(f, PUNCH | KEEP, at + K, K);
	assert_int_equal(byte_at(f, at + K), 0x25);
	rm_file_free(f);
}

static void test_collapse_reaching_eof_einval(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 4 * K, 0xab);
		falloc_fails(f, COLLAPSE, 3 * K, K, EINVAL);	/* ends at EOF */
		falloc_fails(f, COLLAPSE, 2 * K, 4 * K, EINVAL);	/* past EOF */
		falloc_fails(f, COLLAPSE, 0, 4 * K, EINVAL);	/* whole file */
		falloc_ok(f, COLLAPSE, 2 * K, K);
		assert_int_equal(rm_size(f), 3 * K);
		rm_file_free(f);
	}
}

static void test_collapse_alignment_checked_before_eof(void **st)
{
	(void)st;
	/* both ext4 and xfs check alignment before the EOF rule; an empty
	 * file with an aligned collapse gets the EOF EINVAL */
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	falloc_fails(f, COLLAPSE, 0, K, EINVAL);
	falloc_fails(f, COLLAPSE, 1, K, EINVAL);
	rm_file_free(f);
}

/* ================= pwrite / pread ================= */

static void test_pwrite_negative_offset_einval(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, 100, 1);
	struct snap a, b;
	take(f, &a);
	assert_int_equal(rm_pwrite(f, "x", 1, -1), -EINVAL);
	chk(f);
	take(f, &b);
	same(&a, &b);
	rm_file_free(f);
}

static void test_pwrite_offset_plus_len_wrap_einval(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	char buf[16] = { 0 };
	struct snap a, b;
	take(f, &a);
	/* rw_verify_area(): pos + count wraps negative */
	assert_int_equal(rm_pwrite(f, buf, 16, INT64_MAX - 8), -EINVAL);
	chk(f);
	take(f, &b);
	same(&a, &b);
	rm_file_free(f);
}

static void test_pwrite_zero_len_returns_zero(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	struct snap a, b;
	take(f, &a);
	assert_int_equal(rm_pwrite(f, "", 0, 12345), 0);
	/* generic_write_checks() returns 0 before the s_maxbytes check */
	assert_int_equal(rm_pwrite(f, "", 0, rm_maxbytes(f) + 1), 0);
	chk(f);
	take(f, &b);
	same(&a, &b);
	rm_file_free(f);
}

static void test_pwrite_at_or_past_maxbytes_efbig(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	struct snap a, b;
	take(f, &a);
	assert_int_equal(rm_pwrite(f, "x", 1, rm_maxbytes(f)), -EFBIG);
	assert_int_equal(rm_pwrite(f, "x", 1, rm_maxbytes(f) + K), -EFBIG);
	chk(f);
	take(f, &b);
	same(&a, &b);
	rm_file_free(f);
}

static void test_pwrite_short_at_maxbytes(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	char buf[100];
	memset(buf, 7, sizeof(buf));
	int64_t mb = rm_maxbytes(f);
	/* generic_write_check_limits(): count = min(count, s_maxbytes - pos) */
	assert_int_equal(rm_pwrite(f, buf, 100, mb - 10), 10);
	chk(f);
	assert_true(rm_size(f) == mb);
	assert_int_equal(byte_at(f, mb - 1), 7);
	rm_file_free(f);
}

static void test_pwrite_partial_block_into_hole_allocates_block_with_zeros(void **st)
{
	(void)st;
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		assert_int_equal(rm_truncate(f, 4 * K), 0);
		write_pat(f, K + 100, 50, 0xee);
		assert_block(f, K, RM_DATA, RM_DATA);
		struct rm_extent e[4];
		assert_int_equal(rm_fiemap(f, 0, INT64_MAX, e, 4), 1);
		assert_int_equal(e[0].logical, K);
		assert_int_equal(e[0].length, K);
		assert_int_equal(e[0].flags, RM_FIEMAP_LAST);
		assert_true(all_zero(f, K, 100));
		assert_int_equal(byte_at(f, K + 100), 0xee);
		assert_true(all_zero(f, K + 150, K - 150));
		rm_file_free(f);
	}
}

static void test_pwrite_into_unwritten_may_show_unwritten_until_fsync(void **st)
{
	(void)st;
	/* the extent converts at write-back (xfs_end_ioend()), so FIEMAP
	 * without sync may still say unwritten; after fsync it is exact */
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	falloc_ok(f, 0, 0, 16 * K);
	write_pat(f, 4 * K, 10, 0x5a);
	assert_block(f, 4 * K, RM_DATA, RM_DATA | RM_UNWRITTEN);
	assert_int_equal(rm_fsync(f), 0);
	chk(f);
	assert_block(f, 4 * K, RM_DATA, RM_DATA);
	assert_int_equal(byte_at(f, 4 * K), 0x5a);
	/* XFS has no zero-out: neighbours stay exactly unwritten */
	assert_block(f, 3 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	assert_block(f, 5 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	rm_file_free(f);
}

static void test_ext4_write_into_unwritten_zeroout_may_data(void **st)
{
	(void)st;
	/* ext4_ext_convert_to_initialized(): max_zeroout = 32 KiB / 4 KiB = 8 */
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	falloc_ok(f, 0, 0, 64 * K);
	write_pat(f, 20 * K, 10, 0x5a);
	assert_block(f, 20 * K, RM_DATA, RM_DATA | RM_UNWRITTEN);
	assert_block(f, 12 * K, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
	assert_block(f, 19 * K, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
	assert_block(f, 11 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	assert_block(f, 28 * K, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
	assert_block(f, 29 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	assert_true(all_zero(f, 0, 20 * K));
	/* a write into a hole next to unwritten blocks does not zero out */
	struct rm_file *g = mk(RM_PROFILE_EXT4, K);
	falloc_ok(g, 0, 0, 4 * K);
	write_pat(g, 4 * K, 10, 1);
	assert_block(g, 3 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	rm_file_free(g);
	rm_file_free(f);
}

static void test_pread_negative_offset_einval(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	char c;
	assert_int_equal(rm_pread(f, &c, 1, -1), -EINVAL);
	rm_file_free(f);
}

static void test_pread_short_at_eof_and_zero_past(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	write_pat(f, 0, 1000, 3);
	char buf[2000];
	assert_int_equal(rm_pread(f, buf, sizeof(buf), 500), 500);
	assert_int_equal(buf[499], 3);
	assert_int_equal(rm_pread(f, buf, sizeof(buf), 1000), 0);
	assert_int_equal(rm_pread(f, buf, sizeof(buf), 5000), 0);
	rm_file_free(f);
}

static void test_pread_holes_and_unwritten_read_zero(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 8 * K, K, 9);
	falloc_ok(f, KEEP, 2 * K, 2 * K);
	assert_true(all_zero(f, 0, 8 * K));
	rm_file_free(f);
}

/* ================= truncate / fsync ================= */

static void test_truncate_negative_einval(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, K, 1);
	struct snap a, b;
	take(f, &a);
	assert_int_equal(rm_truncate(f, -1), -EINVAL);
	chk(f);
	take(f, &b);
	same(&a, &b);
	rm_file_free(f);
}

static void test_truncate_past_maxbytes_efbig(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	struct snap a, b;
	take(f, &a);
	assert_int_equal(rm_truncate(f, rm_maxbytes(f) + 1), -EFBIG);
	chk(f);
	take(f, &b);
	same(&a, &b);
	assert_int_equal(rm_truncate(f, rm_maxbytes(f)), 0);
	chk(f);
	rm_file_free(f);
}

static void test_truncate_shrink_frees_blocks_and_zeroes_tail(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 4 * K, 0x77);
		assert_int_equal(rm_truncate(f, K + 10), 0);
		chk(f);
		assert_int_equal(rm_size(f), K + 10);
		if (all_profiles[i] != RM_PROFILE_BYTES) {
			/* the partial last block stays allocated */
			assert_block(f, K, RM_DATA, RM_DATA);
			assert_block(f, 2 * K, RM_HOLE, RM_HOLE);
		}
		assert_int_equal(rm_truncate(f, 4 * K), 0);
		chk(f);
		assert_int_equal(byte_at(f, K + 9), 0x77);
		assert_true(all_zero(f, K + 10, 3 * K - 10));
		assert_block(f, 3 * K, RM_HOLE, RM_HOLE);
		rm_file_free(f);
	}
}

static void test_ext4_truncate_tail_of_unwritten_block_may_become_data(void **st)
{
	(void)st;
	/* ext4_truncate() -> ext4_block_truncate_page(): the unwritten last
	 * block's page is zeroed and dirtied (M4); XFS's iomap_truncate_page()
	 * skips unwritten blocks */
	struct rm_file *f = mk(RM_PROFILE_EXT4, 512);
	falloc_ok(f, ZERO, 7168, 1536);
	assert_int_equal(rm_truncate(f, 8442), 0);
	chk(f);
	assert_block(f, 8192, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
	assert_block(f, 7168, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
	rm_file_free(f);
	f = mk(RM_PROFILE_XFS, 512);
	falloc_ok(f, ZERO, 7168, 1536);
	assert_int_equal(rm_truncate(f, 8442), 0);
	chk(f);
	assert_block(f, 8192, RM_UNWRITTEN, RM_UNWRITTEN);
	rm_file_free(f);
}

static void test_truncate_grow_leaves_hole(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	assert_int_equal(rm_truncate(f, 100 * K), 0);
	chk(f);
	assert_int_equal(rm_fiemap(f, 0, INT64_MAX, NULL, 0), 0);
	assert_block(f, 50 * K, RM_HOLE, RM_HOLE);
	assert_true(all_zero(f, 0, 100 * K));
	rm_file_free(f);
}

static void test_truncate_same_size_frees_post_eof_prealloc(void **st)
{
	(void)st;
	/* ext4_setattr(): "Call ext4_truncate() even if i_size didn't change";
	 * xfs_setattr_size(): xfs_itruncate_extents() for newsize <= oldsize */
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, K, 1);
		falloc_ok(f, KEEP, K, 8 * K);
		assert_int_equal(rm_fiemap(f, 0, INT64_MAX, NULL, 0), 2);
		assert_int_equal(rm_truncate(f, K), 0);
		chk(f);
		assert_int_equal(rm_fiemap(f, 0, INT64_MAX, NULL, 0), 1);
		rm_file_free(f);
	}
}

static void test_fsync_recorded_no_effect(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, K, 1);
	struct snap a, b;
	take(f, &a);
	assert_int_equal(rm_fsync(f), 0);
	assert_int_equal(rm_fsync(f), 0);
	take(f, &b);
	same(&a, &b);
	struct rm_stats s;
	rm_stats(f, &s);
	assert_int_equal(s.fsyncs, 2);
	rm_file_free(f);
}

/* ================= allocate (mode 0 / KEEP_SIZE) ================= */

static void test_falloc_mode0_extends_size_unaligned(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		falloc_ok(f, 0, 100, 5000);
		/* ext4_fallocate(): new_size = offset + len, even unaligned */
		assert_int_equal(rm_size(f), 5100);
		if (all_profiles[i] != RM_PROFILE_BYTES)
			assert_block(f, 0, RM_UNWRITTEN, RM_UNWRITTEN);
		assert_true(all_zero(f, 0, 5100));
		rm_file_free(f);
	}
}

static void test_falloc_keeps_written_blocks_written(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, K, K, 0x42);
	falloc_ok(f, 0, 0, 4 * K);
	assert_block(f, 0, RM_UNWRITTEN, RM_UNWRITTEN);
	assert_block(f, K, RM_DATA, RM_DATA);
	assert_block(f, 2 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	assert_int_equal(byte_at(f, K), 0x42);
	rm_file_free(f);
}

static void test_falloc_keep_size_past_eof_shows_in_fiemap_with_last(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, K, 1);
	falloc_ok(f, KEEP, 4 * K, 4 * K);
	assert_int_equal(rm_size(f), K);
	struct rm_extent e[4];
	assert_int_equal(rm_fiemap(f, 0, INT64_MAX, e, 4), 2);
	assert_int_equal(e[0].logical, 0);
	assert_int_equal(e[0].flags, 0);
	assert_int_equal(e[1].logical, 4 * K);
	assert_int_equal(e[1].length, 4 * K);
	assert_int_equal(e[1].flags, RM_FIEMAP_UNWRITTEN | RM_FIEMAP_LAST);
	assert_true(rm_map_end(f) == 8 * K);
	rm_file_free(f);
}

/* ================= punch ================= */

static void test_punch_full_blocks_become_exact_holes(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 8 * K, 0x33);
		falloc_ok(f, PUNCH | KEEP, 2 * K, 3 * K);
		assert_int_equal(rm_size(f), 8 * K);
		assert_block(f, 2 * K, RM_HOLE, RM_HOLE);
		assert_block(f, 4 * K, RM_HOLE, RM_HOLE);
		assert_block(f, 5 * K, RM_DATA, RM_DATA);
		assert_true(all_zero(f, 2 * K, 3 * K));
		assert_int_equal(byte_at(f, 5 * K), 0x33);
		rm_file_free(f);
	}
}

static void test_punch_partial_blocks_zeroed_stay_allocated(void **st)
{
	(void)st;
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 4 * K, 0x33);
		falloc_ok(f, PUNCH | KEEP, 100, 2 * K);
		assert_block(f, 0, RM_DATA, RM_DATA);
		assert_block(f, K, RM_HOLE, RM_HOLE);
		assert_block(f, 2 * K, RM_DATA, RM_DATA);
		assert_int_equal(byte_at(f, 99), 0x33);
		assert_true(all_zero(f, 100, 2 * K));
		assert_int_equal(byte_at(f, 2 * K + 100), 0x33);
		rm_file_free(f);
	}
}

static void test_bytes_punch_is_byte_granular(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_BYTES, K);
	write_pat(f, 0, 4 * K, 0x33);
	falloc_ok(f, PUNCH | KEEP, 100, 10);
	assert_block(f, 100, RM_HOLE, RM_HOLE);
	assert_block(f, 99, RM_DATA, RM_DATA);
	assert_block(f, 110, RM_DATA, RM_DATA);
	assert_int_equal(rm_fiemap(f, 0, INT64_MAX, NULL, 0), 2);
	rm_file_free(f);
}

static void test_ext4_punch_partial_unwritten_may_become_data(void **st)
{
	(void)st;
	/* __ext4_block_zero_page_range() zeroes and dirties a mapped
	 * unwritten buffer; writeback may convert it */
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	falloc_ok(f, 0, 0, 16 * K);
	falloc_ok(f, PUNCH | KEEP, 100, 100);
	assert_block(f, 0, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
	/* and its conversion may zero out max_zeroout blocks around it */
	assert_block(f, 8 * K, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
	assert_block(f, 9 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	/* fsync does not settle it: 6.1 was seen to keep such a block
	 * UNWRITTEN after fsync (difftest finding D-DT9), so both stay */
	assert_int_equal(rm_fsync(f), 0);
	chk(f);
	assert_block(f, 0, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
	assert_block(f, 8 * K, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
	assert_true(all_zero(f, 0, 16 * K));
	/* XFS: iomap_zero_range() skips unwritten blocks */
	struct rm_file *g = mk(RM_PROFILE_XFS, K);
	falloc_ok(g, 0, 0, 4 * K);
	falloc_ok(g, PUNCH | KEEP, 100, 100);
	assert_block(g, 0, RM_UNWRITTEN, RM_UNWRITTEN);
	rm_file_free(g);
	rm_file_free(f);
}

static void test_ext4_punch_beyond_eof_does_nothing(void **st)
{
	(void)st;
	/* ext4_punch_hole(): "No need to punch hole beyond i_size" */
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, K, 1);
	falloc_ok(f, KEEP, 2 * K, 4 * K);
	struct snap a, b;
	take(f, &a);
	falloc_ok(f, PUNCH | KEEP, 2 * K, 4 * K);
	take(f, &b);
	same(&a, &b);
	rm_file_free(f);
}

static void test_ext4_punch_clipped_to_page_after_eof(void **st)
{
	(void)st;
	/* length clipped to end after the page that contains i_size: blocks
	 * further out stay allocated */
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, K + 10, 1);
	falloc_ok(f, KEEP, 0, 8 * K);
	falloc_ok(f, PUNCH | KEEP, 0, 8 * K);
	assert_block(f, 0, RM_HOLE, RM_HOLE);
	assert_block(f, K, RM_HOLE, RM_HOLE);
	assert_block(f, 2 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	assert_block(f, 7 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	rm_file_free(f);
}

static struct rm_file *mk_k(enum rm_profile p, enum rm_kernel k)
{
	struct rm_opts o = { .profile = p, .blocksize = K, .kernel = k };
	struct rm_file *f = NULL;
	assert_int_equal(rm_file_new(&o, &f), 0);
	return f;
}

static void test_ext4_612_punch_past_page_aligned_eof_stops_at_eof(void **st)
{
	(void)st;
	/* 6.1 ext4_punch_hole() ends a hole past EOF at i_size + PAGE_SIZE -
	 * (i_size & (PAGE_SIZE - 1)): a full page past a page-aligned EOF.
	 * 6.12 ends it at round_up(i_size, PAGE_SIZE), i.e. at EOF. */
	for (int k = RM_KERNEL_6_1; k <= RM_KERNEL_6_12; k++) {
		struct rm_file *f = mk_k(RM_PROFILE_EXT4, (enum rm_kernel)k);
		write_pat(f, 0, 2 * K, 1);
		falloc_ok(f, KEEP, 2 * K, 2 * K);
		falloc_ok(f, PUNCH | KEEP, K, 4 * K);
		assert_block(f, 0, RM_DATA, RM_DATA);
		assert_block(f, K, RM_HOLE, RM_HOLE);
		if (k == RM_KERNEL_6_1)
			assert_block(f, 2 * K, RM_HOLE, RM_HOLE);
		else
			assert_block(f, 2 * K, RM_UNWRITTEN, RM_UNWRITTEN);
		assert_block(f, 3 * K, RM_UNWRITTEN, RM_UNWRITTEN);
		assert_int_equal(rm_size(f), 2 * K);
		rm_file_free(f);
	}
}

static void test_ext4_612_punch_clamped_at_s_maxbytes_not_bitmap_limit(void **st)
{
	(void)st;
	/* 6.1 clamps every ext4 punch at s_bitmap_maxbytes - blocksize (the
	 * indirect-block limit, about 4 TiB at 4 KiB blocks), so a punch of
	 * an extent file beyond it does nothing; 6.12 ext4_punch_hole() uses
	 * that limit for indirect-block files only and s_maxbytes otherwise. */
	const int64_t far = (int64_t)5 << 40;	/* 5 TiB */
	for (int k = RM_KERNEL_6_1; k <= RM_KERNEL_6_12; k++) {
		struct rm_file *f = mk_k(RM_PROFILE_EXT4, (enum rm_kernel)k);
		write_pat(f, far, 2 * K, 1);
		falloc_ok(f, PUNCH | KEEP, far, K);
		assert_block(f, far, k == RM_KERNEL_6_1 ? RM_DATA : RM_HOLE,
			     k == RM_KERNEL_6_1 ? RM_DATA : RM_HOLE);
		assert_block(f, far + K, RM_DATA, RM_DATA);
		rm_file_free(f);
	}
}

static void test_vfs_612_refused_mode_mixes_are_eopnotsupp(void **st)
{
	(void)st;
	/* 6.12 vfs_fallocate(): "Modes are exclusive", one switch on
	 * mode & FALLOC_FL_MODE_MASK, -EOPNOTSUPP for every refused mix;
	 * 6.1 answered some of them -EINVAL. */
	static const struct { int mode, e61, e612; } c[] = {
		{ INSERT | KEEP, EINVAL, EOPNOTSUPP },
		{ COLLAPSE | KEEP, EINVAL, EOPNOTSUPP },
		{ INSERT | COLLAPSE, EINVAL, EOPNOTSUPP },
		{ COLLAPSE | PUNCH | KEEP, EINVAL, EOPNOTSUPP },
		{ UNSHARE | ZERO, EINVAL, EOPNOTSUPP },
		{ UNSHARE | PUNCH | KEEP, EINVAL, EOPNOTSUPP },
		{ PUNCH | ZERO | KEEP, EOPNOTSUPP, EOPNOTSUPP },
		{ PUNCH, EOPNOTSUPP, EOPNOTSUPP },
		{ 0x80, EOPNOTSUPP, EOPNOTSUPP },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		assert_int_equal(rm_vfs_fallocate_check(c[i].mode, 0, K, INT64_MAX), -c[i].e61);
		assert_int_equal(rm_vfs_fallocate_check_k(RM_KERNEL_6_12, c[i].mode, 0, K,
							  INT64_MAX), -c[i].e612);
		for (int p = RM_PROFILE_EXT4; p <= RM_PROFILE_XFS; p++) {
			struct rm_file *f = mk_k((enum rm_profile)p, RM_KERNEL_6_12);
			write_pat(f, 0, 4 * K, 1);
			falloc_fails(f, c[i].mode, 0, K, c[i].e612);
			rm_file_free(f);
		}
	}
	/* what both accept, and the checks around the mode: unchanged */
	static const int okm[] = { 0, KEEP, PUNCH | KEEP, ZERO, ZERO | KEEP, INSERT, COLLAPSE,
				   UNSHARE, UNSHARE | KEEP };
	for (size_t i = 0; i < sizeof(okm) / sizeof(okm[0]); i++) {
		assert_int_equal(rm_vfs_fallocate_check_k(RM_KERNEL_6_12, okm[i], 0, K, INT64_MAX), 0);
		assert_int_equal(rm_vfs_fallocate_check(okm[i], 0, K, INT64_MAX), 0);
		assert_int_equal(rm_vfs_fallocate_check_k(RM_KERNEL_6_12, okm[i], -1, K, INT64_MAX),
				 -EINVAL);
		assert_int_equal(rm_vfs_fallocate_check_k(RM_KERNEL_6_12, okm[i], 1, INT64_MAX,
							  INT64_MAX), -EFBIG);
	}
}

static void test_profile_names_versioned_and_aliases(void **st)
{
	(void)st;
	enum rm_profile p = RM_PROFILE_BYTES;
	enum rm_kernel k = RM_KERNEL_6_12;
	static const struct { const char *name; enum rm_profile p; enum rm_kernel k; } n[] = {
		{ "ext4", RM_PROFILE_EXT4, RM_KERNEL_6_1 },
		{ "xfs", RM_PROFILE_XFS, RM_KERNEL_6_1 },
		{ "bytes", RM_PROFILE_BYTES, RM_KERNEL_6_1 },
		{ "ext4-6.1", RM_PROFILE_EXT4, RM_KERNEL_6_1 },
		{ "xfs-6.1", RM_PROFILE_XFS, RM_KERNEL_6_1 },
		{ "ext4-6.12", RM_PROFILE_EXT4, RM_KERNEL_6_12 },
		{ "xfs-6.12", RM_PROFILE_XFS, RM_KERNEL_6_12 },
	};
	for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
		assert_int_equal(rm_profile_parse2(n[i].name, &p, &k), 0);
		assert_int_equal(p, n[i].p);
		assert_int_equal(k, n[i].k);
		if (strchr(n[i].name, '-') || p == RM_PROFILE_BYTES)
			assert_string_equal(rm_profile_name2(p, k), n[i].name);
	}
	assert_string_equal(rm_profile_name2(RM_PROFILE_BYTES, RM_KERNEL_6_12), "bytes");
	static const char *const bad[] = { "ext4-6.2", "xfs-", "bytes-6.12", "EXT4", "", "zfs" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = RM_PROFILE_BYTES;
		k = RM_KERNEL_6_12;
		assert_int_equal(rm_profile_parse2(bad[i], &p, &k), -EINVAL);
		assert_int_equal(p, RM_PROFILE_BYTES);	/* untouched */
		assert_int_equal(k, RM_KERNEL_6_12);
	}
	assert_int_equal(rm_profile_parse2(NULL, &p, &k), -EINVAL);
	/* the old API: plain names only */
	assert_int_equal(rm_profile_parse("ext4-6.12", &p), -EINVAL);
	assert_string_equal(rm_kernel_name(RM_KERNEL_6_12), "6.12");
	assert_string_equal(rm_kernel_name(RM_KERNEL_6_1), "6.1");
}

static void test_kernel_from_uname_release(void **st)
{
	(void)st;
	static const struct { const char *rel; int rc; enum rm_kernel k; } r[] = {
		{ "6.1.0-41-amd64", 0, RM_KERNEL_6_1 },
		{ "6.1.192", 0, RM_KERNEL_6_1 },
		{ "6.12.118", 0, RM_KERNEL_6_12 },
		{ "6.12.0-rc1", 0, RM_KERNEL_6_12 },
		{ "5.10.0-30-amd64", 1, RM_KERNEL_6_1 },
		{ "6.6.60", 1, RM_KERNEL_6_1 },
		{ "6.16.3", 1, RM_KERNEL_6_12 },
		{ "7.0.0", 1, RM_KERNEL_6_12 },
		{ "6.10", 1, RM_KERNEL_6_12 },
	};
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		enum rm_kernel k = (enum rm_kernel)7;
		assert_int_equal(rm_kernel_from_release(r[i].rel, &k), r[i].rc);
		assert_int_equal(k, r[i].k);
	}
	enum rm_kernel k = RM_KERNEL_6_12;
	assert_int_equal(rm_kernel_from_release("linux", &k), -EINVAL);
	assert_int_equal(rm_kernel_from_release("6", &k), -EINVAL);
	assert_int_equal(rm_kernel_from_release(NULL, &k), -EINVAL);
	assert_int_equal(rm_kernel_from_release("6.1000000", &k), -EINVAL);
	assert_int_equal(k, RM_KERNEL_6_12);
	/* the parser under it: components, and where they end */
	int v[3];
	const char *end = NULL;
	assert_int_equal(rm_release_version("6.12.118 - 6.15", v, &end), 3);
	assert_int_equal(v[1], 12);
	assert_int_equal(v[2], 118);
	assert_string_equal(end, " - 6.15");
	assert_int_equal(rm_release_version("6.15-rc1", v, &end), 2);
	assert_int_equal(v[2], 0);
	assert_string_equal(end, "-rc1");
	assert_int_equal(rm_release_version("6.", v, NULL), -EINVAL);
	assert_int_equal(rm_release_version(" 6.1", v, NULL), -EINVAL);
}

static void test_xfs_punch_frees_past_eof(void **st)
{
	(void)st;
	/* xfs_free_file_space() unmaps without an EOF clip */
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	write_pat(f, 0, K, 1);
	falloc_ok(f, KEEP, 2 * K, 4 * K);
	falloc_ok(f, PUNCH | KEEP, 2 * K, 4 * K);
	assert_int_equal(rm_fiemap(f, 0, INT64_MAX, NULL, 0), 1);
	assert_int_equal(rm_size(f), K);
	rm_file_free(f);
}

/* ================= zero range ================= */

static void test_zero_range_aligned_interior_becomes_unwritten(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 8 * K, 0x44);
		falloc_ok(f, ZERO | KEEP, 2 * K, 3 * K);
		/* ext4: EXT4_GET_BLOCKS_CONVERT_UNWRITTEN; xfs: free + prealloc */
		assert_block(f, 2 * K, RM_UNWRITTEN, RM_UNWRITTEN);
		assert_block(f, 4 * K, RM_UNWRITTEN, RM_UNWRITTEN);
		assert_block(f, 5 * K, RM_DATA, RM_DATA);
		assert_true(all_zero(f, 2 * K, 3 * K));
		assert_int_equal(rm_size(f), 8 * K);
		rm_file_free(f);
	}
}

static void test_zero_range_without_keep_size_extends(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, K, 1);
		falloc_ok(f, ZERO, 2 * K, 1000);
		assert_int_equal(rm_size(f), 2 * K + 1000);
		falloc_ok(f, ZERO | KEEP, 8 * K, K);
		assert_int_equal(rm_size(f), 2 * K + 1000);
		assert_true(all_zero(f, K, K + 1000));
		rm_file_free(f);
	}
}

static void test_zero_range_partial_written_block_stays_data(void **st)
{
	(void)st;
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		write_pat(f, 0, 4 * K, 0x44);
		falloc_ok(f, ZERO | KEEP, 100, 200);
		assert_block(f, 0, RM_DATA, RM_DATA);
		assert_int_equal(byte_at(f, 99), 0x44);
		assert_true(all_zero(f, 100, 200));
		assert_int_equal(byte_at(f, 300), 0x44);
		rm_file_free(f);
	}
}

static void test_zero_range_partial_hole_edge_gets_allocated(void **st)
{
	(void)st;
	/* ext4: "Preallocate the range including the unaligned edges", then
	 * the zeroed unwritten page may be written back (M4);
	 * xfs: xfs_alloc_file_space() over the rounded range, exact */
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	assert_int_equal(rm_truncate(f, 4 * K), 0);
	falloc_ok(f, ZERO | KEEP, 100, 200);
	assert_block(f, 0, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
	rm_file_free(f);
	f = mk(RM_PROFILE_XFS, K);
	assert_int_equal(rm_truncate(f, 4 * K), 0);
	falloc_ok(f, ZERO | KEEP, 100, 200);
	assert_block(f, 0, RM_UNWRITTEN, RM_UNWRITTEN);
	rm_file_free(f);
}

/* ================= insert / collapse ================= */

static void test_insert_opens_exact_hole_and_shifts(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		for (int b = 0; b < 4; b++)
			write_pat(f, b * K, K, 0x10 + b);
		falloc_ok(f, INSERT, K, 2 * K);
		assert_int_equal(rm_size(f), 6 * K);
		assert_int_equal(byte_at(f, 0), 0x10);
		assert_block(f, K, RM_HOLE, RM_HOLE);
		assert_block(f, 2 * K, RM_HOLE, RM_HOLE);
		assert_true(all_zero(f, K, 2 * K));
		assert_int_equal(byte_at(f, 3 * K), 0x11);
		assert_int_equal(byte_at(f, 5 * K), 0x13);
		rm_file_free(f);
	}
}

static void test_insert_never_moves_stored_bytes(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	for (int b = 0; b < 64; b += 2)
		write_pat(f, b * K, K, b);
	struct rm_stats s0, s1;
	rm_stats(f, &s0);
	uint64_t h_tail = rm_hash(f, 10 * K, INT64_MAX);
	falloc_ok(f, INSERT, 10 * K, 1000 * K);
	rm_stats(f, &s1);
	/* same stored bytes, a constant number of new nodes, content shifted */
	assert_true(s1.data_bytes == s0.data_bytes);
	assert_true(s1.nodes <= s0.nodes + 1);
	assert_true(rm_hash(f, 1010 * K, INT64_MAX) == h_tail);
	rm_file_free(f);
}

static void test_insert_shifts_post_eof_blocks(void **st)
{
	(void)st;
	/* ext4_ext_shift_extents() moves every extent after the offset,
	 * including KEEP_SIZE blocks past EOF */
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, 2 * K, 1);
	falloc_ok(f, KEEP, 4 * K, K);
	falloc_ok(f, INSERT, K, 3 * K);
	assert_block(f, 7 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	assert_block(f, 4 * K, RM_DATA, RM_DATA);
	assert_int_equal(rm_size(f), 5 * K);
	rm_file_free(f);
}

static void test_bytes_insert_and_collapse_any_offset(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_BYTES, K);
	write_pat(f, 0, 100, 0x61);
	falloc_ok(f, INSERT, 37, 3);
	assert_int_equal(rm_size(f), 103);
	assert_int_equal(byte_at(f, 36), 0x61);
	assert_int_equal(byte_at(f, 37), 0);
	assert_int_equal(byte_at(f, 40), 0x61);
	assert_block(f, 38, RM_HOLE, RM_HOLE);
	falloc_ok(f, COLLAPSE, 37, 3);
	assert_int_equal(rm_size(f), 100);
	unsigned char buf[100];
	assert_int_equal(rm_pread(f, buf, 100, 0), 100);
	for (int i = 0; i < 100; i++)
		assert_int_equal(buf[i], 0x61);
	assert_int_equal(rm_fiemap(f, 0, INT64_MAX, NULL, 0), 1);
	rm_file_free(f);
}

static void test_collapse_removes_range_and_shifts_left(void **st)
{
	(void)st;
	for (int i = 0; i < 3; i++) {
		struct rm_file *f = mk(all_profiles[i], K);
		for (int b = 0; b < 6; b++)
			write_pat(f, b * K, K, 0x20 + b);
		falloc_ok(f, COLLAPSE, K, 2 * K);
		assert_int_equal(rm_size(f), 4 * K);
		assert_int_equal(byte_at(f, 0), 0x20);
		assert_int_equal(byte_at(f, K), 0x23);
		assert_int_equal(byte_at(f, 3 * K), 0x25);
		rm_file_free(f);
	}
}

static void test_ext4_collapse_keeps_post_eof_blocks_xfs_frees_them(void **st)
{
	(void)st;
	/* ext4_collapse_range() shifts extents past EOF left; XFS changes the
	 * size through xfs_vn_setattr_size(), which truncates past EOF */
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, 4 * K, 1);
	falloc_ok(f, KEEP, 6 * K, K);
	falloc_ok(f, COLLAPSE, 0, K);
	assert_block(f, 5 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	rm_file_free(f);
	f = mk(RM_PROFILE_XFS, K);
	write_pat(f, 0, 4 * K, 1);
	falloc_ok(f, KEEP, 6 * K, K);
	falloc_ok(f, COLLAPSE, 0, K);
	assert_int_equal(rm_fiemap(f, 0, INT64_MAX, NULL, 0), 1);
	rm_file_free(f);
}

/* ================= XFS latitude ================= */

static int64_t count_may_runs(const struct rm_file *f, int64_t s, int64_t e, unsigned may)
{
	int64_t n = 0;
	for (int64_t p = s; p < e; p += K)
		n += at(f, p).may == may;
	return n;
}

static void test_xfs_speculative_prealloc_past_eof_may_any(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	write_pat(f, 0, 64 * K, 1);
	/* blocks past EOF may be anything; the state is still a hole */
	assert_block(f, 64 * K, RM_HOLE, RM_ANY);
	assert_true(rm_map_end(f) > 64 * K);
	assert_int_equal(rm_fiemap(f, 0, INT64_MAX, NULL, 0), 1);
	/* truncate up: the gap keeps may ANY, content zero */
	assert_int_equal(rm_truncate(f, 80 * K), 0);
	chk(f);
	assert_block(f, 70 * K, RM_HOLE, RM_ANY);
	assert_true(all_zero(f, 64 * K, 16 * K));
	/* truncate down frees them for sure */
	assert_int_equal(rm_truncate(f, 10 * K), 0);
	chk(f);
	assert_int_equal(rm_truncate(f, 80 * K), 0);
	chk(f);
	assert_int_equal(count_may_runs(f, 10 * K, 80 * K, RM_HOLE), 70);
	rm_file_free(f);
	/* ext4 and bytes have no speculative preallocation */
	f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, 64 * K, 1);
	assert_true(rm_map_end(f) == 64 * K);
	rm_file_free(f);
}

static void test_xfs_non_extending_write_no_prealloc(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	assert_int_equal(rm_truncate(f, 64 * K), 0);
	write_pat(f, 0, K, 1);
	assert_block(f, 2 * K, RM_HOLE, RM_HOLE);
	rm_file_free(f);
}

static void test_xfs_prealloc_blocks_past_eof_never_freed_by_eofblocks(void **st)
{
	(void)st;
	/* xfs_free_eofblocks(): on XFS_DIFLAG_PREALLOC inodes (set by
	 * xfs_alloc_file_space()) only delalloc past EOF is punched, so
	 * KEEP_SIZE blocks stay exactly unwritten even after delalloc writes */
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	falloc_ok(f, KEEP, 8 * K, 2 * K);
	write_pat(f, 0, 10, 1);	/* into a hole: delalloc */
	assert_block(f, 8 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	falloc_ok(f, KEEP, 1000 * K, K);
	assert_block(f, 1000 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	falloc_ok(f, INSERT, 0, K);
	assert_block(f, 1001 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	rm_file_free(f);
}

static void test_xfs_prealloc_when_write_starts_in_allocated_block(void **st)
{
	(void)st;
	/* the last iomap iteration of the write starts in the hole past the
	 * old EOF: its eof check sees no extent after it */
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	write_pat(f, 0, 16 * K, 1);
	write_pat(f, 15 * K, 64 * K, 2);
	assert_block(f, 79 * K, RM_HOLE, RM_ANY);
	/* a KEEP_SIZE extent after the write: no preallocation */
	struct rm_file *g = mk(RM_PROFILE_XFS, K);
	falloc_ok(g, KEEP, 100 * K, K);
	write_pat(g, 0, 16 * K, 1);
	assert_block(g, 16 * K, RM_HOLE, RM_HOLE);
	rm_file_free(g);
	rm_file_free(f);
}

static void test_ext4_zeroout_only_within_extent_of_converted_edge(void **st)
{
	(void)st;
	/* ext4_ext_convert_to_initialized(): zero_ex1/zero_ex2 lie inside the
	 * extent holding the converted range (D6(b)).  Blocks 0-1 and 3
	 * unwritten, 2 a hole; a write over 2-3 converts only block 3's
	 * extent, so 0-1 keep exactly UNWRITTEN. */
	struct rm_file *f = mk(RM_PROFILE_EXT4, 512);
	falloc_ok(f, 0, 0, 1024);
	falloc_ok(f, 0, 1536, 512);
	write_pat(f, 1024, 1024, 1);
	assert_block(f, 0, RM_UNWRITTEN, RM_UNWRITTEN);
	assert_block(f, 512, RM_UNWRITTEN, RM_UNWRITTEN);
	/* the edge block in the run: its neighbours may be zeroed out */
	struct rm_file *g = mk(RM_PROFILE_EXT4, 512);
	falloc_ok(g, 0, 0, 2048);
	write_pat(g, 1024, 512, 1);
	assert_block(g, 512, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
	assert_block(g, 1536, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
	rm_file_free(g);
	rm_file_free(f);
}

static void test_xfs_insert_frees_speculative_blocks_past_eof(void **st)
{
	(void)st;
	/* xfs_prepare_shift() -> xfs_free_eofblocks(): without
	 * XFS_DIFLAG_PREALLOC every block past the new EOF is freed before
	 * the shift (D8(a)); with it (a fallocate ran) they are kept. */
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	write_pat(f, 0, 16 * K, 1);
	assert_block(f, 40 * K, RM_HOLE, RM_ANY);
	falloc_ok(f, INSERT, 0, K);
	assert_block(f, 40 * K, RM_HOLE, RM_HOLE);
	struct rm_file *g = mk(RM_PROFILE_XFS, K);
	falloc_ok(g, KEEP, 200 * K, K);
	write_pat(g, 0, 16 * K, 1);
	falloc_ok(g, INSERT, 0, K);
	assert_block(g, 201 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	rm_file_free(g);
	rm_file_free(f);
}

static void test_bytes_profile_has_no_latitude(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_BYTES, K);
	write_pat(f, 0, 64 * K, 1);
	falloc_ok(f, 0, 100 * K, 10 * K);
	falloc_ok(f, ZERO | KEEP, 5, 7);
	write_pat(f, 101 * K + 3, 10, 2);
	assert_true(rm_map_end(f) == 110 * K);
	assert_block(f, 64 * K, RM_HOLE, RM_HOLE);
	assert_block(f, 100 * K, RM_UNWRITTEN, RM_UNWRITTEN);
	assert_block(f, 101 * K + 5, RM_DATA, RM_DATA);
	rm_file_free(f);
}

/* ================= lseek ================= */

static void test_lseek_data_hole_basic(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 2 * K, K, 1);
	assert_int_equal(rm_truncate(f, 8 * K), 0);
	assert_int_equal(rm_lseek(f, 0, RM_SEEK_DATA), 2 * K);
	assert_int_equal(rm_lseek(f, 2 * K + 5, RM_SEEK_DATA), 2 * K + 5);
	assert_int_equal(rm_lseek(f, 0, RM_SEEK_HOLE), 0);
	assert_int_equal(rm_lseek(f, 2 * K + 5, RM_SEEK_HOLE), 3 * K);
	assert_int_equal(rm_lseek(f, 4 * K, RM_SEEK_DATA), -ENXIO);
	assert_int_equal(rm_lseek(f, 8 * K, RM_SEEK_HOLE), -ENXIO);
	assert_int_equal(rm_lseek(f, -1, RM_SEEK_DATA), -ENXIO);
	assert_int_equal(rm_lseek(f, 0, RM_SEEK_SET), -EINVAL);
	for (int64_t o = 0; o < 8 * K; o += 1000) {
		assert_true(rm_lseek_ok(f, o, RM_SEEK_DATA, rm_lseek(f, o, RM_SEEK_DATA)));
		assert_true(rm_lseek_ok(f, o, RM_SEEK_HOLE, rm_lseek(f, o, RM_SEEK_HOLE)));
	}
	assert_false(rm_lseek_ok(f, 0, RM_SEEK_DATA, 0));
	assert_false(rm_lseek_ok(f, 0, RM_SEEK_DATA, 3 * K));
	assert_false(rm_lseek_ok(f, 0, RM_SEEK_DATA, -ENXIO));
	rm_file_free(f);
}

/* rm_lseek_ok_lat(): inside a span (XFS CoW staging over a hole) a hole
 * may count as data; outside it, and for data, nothing changes.  File:
 * hole [0, 8K), data [8K, 9K), hole to 16K; span [2K, 6K). */
static void test_lseek_span_latitude(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	write_pat(f, 8 * K, K, 1);
	assert_int_equal(rm_truncate(f, 16 * K), 0);
	const struct rm_span sp[] = { { 2 * K, 6 * K } };
	/* SEEK_DATA may stop inside the span, not before or after it */
	assert_false(rm_lseek_ok(f, 0, RM_SEEK_DATA, 2 * K));
	assert_true(rm_lseek_ok_lat(f, 0, RM_SEEK_DATA, 2 * K, sp, 1));
	assert_true(rm_lseek_ok_lat(f, 0, RM_SEEK_DATA, 5 * K, sp, 1));
	assert_false(rm_lseek_ok_lat(f, 0, RM_SEEK_DATA, 6 * K, sp, 1));
	assert_false(rm_lseek_ok_lat(f, 0, RM_SEEK_DATA, K, sp, 1));
	assert_true(rm_lseek_ok_lat(f, 0, RM_SEEK_DATA, 8 * K, sp, 1));
	/* SEEK_HOLE may pass over the span only: from 2K, a hole at 2K..6K */
	assert_true(rm_lseek_ok_lat(f, 2 * K, RM_SEEK_HOLE, 2 * K, sp, 1));
	assert_true(rm_lseek_ok_lat(f, 2 * K, RM_SEEK_HOLE, 6 * K, sp, 1));
	assert_false(rm_lseek_ok(f, 2 * K, RM_SEEK_HOLE, 6 * K));
	assert_false(rm_lseek_ok_lat(f, 2 * K, RM_SEEK_HOLE, 7 * K, sp, 1));
	assert_false(rm_lseek_ok_lat(f, K, RM_SEEK_HOLE, 3 * K, sp, 1));
	/* the model's own answers stay good with or without spans */
	for (int64_t o = 0; o < 16 * K; o += 700)
		for (int wh = RM_SEEK_DATA; wh <= RM_SEEK_HOLE; wh++) {
			int64_t r = rm_lseek(f, o, wh);
			assert_true(rm_lseek_ok_lat(f, o, wh, r, sp, 1));
			assert_true(rm_lseek_ok_lat(f, o, wh, r, NULL, 0));
		}
	rm_file_free(f);
}

static void test_lseek_unwritten_is_hole_cold_but_may_be_data(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	falloc_ok(f, 0, 0, 4 * K);
	write_pat(f, 3 * K, K, 1);
	assert_int_equal(rm_lseek(f, 0, RM_SEEK_DATA), 3 * K);
	assert_int_equal(rm_lseek(f, 0, RM_SEEK_HOLE), 0);
	/* mapping_seek_hole_data(): cached unwritten pages count as data */
	assert_true(rm_lseek_ok(f, 0, RM_SEEK_DATA, 0));
	assert_true(rm_lseek_ok(f, 0, RM_SEEK_DATA, K));
	assert_true(rm_lseek_ok(f, 0, RM_SEEK_HOLE, 4 * K));
	assert_false(rm_lseek_ok(f, 0, RM_SEEK_DATA, 100));
	assert_false(rm_lseek_ok(f, 3 * K, RM_SEEK_HOLE, 3 * K));
	rm_file_free(f);
}

/* ================= fiemap / walk / hash / clone ================= */

static void test_fiemap_merges_by_state_and_flags_last(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, K, 1);
	write_pat(f, K, K, 2);
	falloc_ok(f, 0, 2 * K, 2 * K);
	write_pat(f, 6 * K, K, 3);
	struct rm_extent e[8];
	assert_int_equal(rm_fiemap(f, 0, INT64_MAX, e, 8), 3);
	assert_int_equal(e[0].length, 2 * K);
	assert_int_equal(e[0].flags, 0);
	assert_int_equal(e[1].flags, RM_FIEMAP_UNWRITTEN);
	assert_int_equal(e[2].flags, RM_FIEMAP_LAST);
	/* a sub-range: iomap_fiemap() flags the last extent it reports */
	assert_int_equal(rm_fiemap(f, 0, 3 * K, e, 8), 2);
	assert_int_equal(e[1].flags, RM_FIEMAP_UNWRITTEN | RM_FIEMAP_LAST);
	assert_int_equal(e[1].length, K);
	/* fewer slots than extents: the count is still the total */
	assert_int_equal(rm_fiemap(f, 0, INT64_MAX, e, 1), 3);
	/* fiemap_prep(): len 0 EINVAL, start past s_maxbytes EFBIG */
	assert_int_equal(rm_fiemap(f, 0, 0, e, 8), -EINVAL);
	assert_int_equal(rm_fiemap(f, rm_maxbytes(f), K, e, 8), -EFBIG);
	rm_file_free(f);
}

static int count_cb(void *ctx, const struct rm_run *r)
{
	int64_t *n = ctx;
	(void)r;
	(*n)++;
	return 0;
}

static void test_walk_runs_are_maximal_and_cover_range(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, 100, 1);	/* DATA + ZERO in one block: one run */
	write_pat(f, 100, 100, 2);
	int64_t n = 0;
	assert_int_equal(rm_walk(f, 0, 10 * K, count_cb, &n), 0);
	assert_int_equal(n, 2);	/* data block, then hole to the end */
	assert_int_equal(rm_walk(f, 5, 1, count_cb, &n), -EINVAL);
	rm_file_free(f);
}

static void test_hash_is_xxh3_of_content(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 5000, 3000, 0x99);
	assert_int_equal(rm_truncate(f, 20000), 0);
	struct rm_file *g = mk(RM_PROFILE_BYTES, K);
	unsigned char *b = calloc(1, 20000);
	assert_non_null(b);
	memset(b + 5000, 0x99, 3000);
	assert_int_equal(rm_pwrite(g, b, 20000, 0), 20000);
	free(b);
	assert_true(rm_hash(f, 0, INT64_MAX) == rm_hash(g, 0, INT64_MAX));
	assert_true(rm_hash(f, 4000, 2000) == rm_hash(g, 4000, 2000));
	assert_true(rm_hash(f, 0, INT64_MAX) != rm_hash(f, 0, 19999));
	rm_file_free(g);
	rm_file_free(f);
}

static void test_clone_is_independent(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS, K);
	write_pat(f, 0, 4 * K, 1);
	struct rm_file *c = NULL;
	assert_int_equal(rm_file_clone(f, &c), 0);
	chk(c);
	uint64_t h = rm_hash(f, 0, INT64_MAX);
	falloc_ok(c, PUNCH | KEEP, 0, 4 * K);
	assert_true(rm_hash(f, 0, INT64_MAX) == h);
	assert_true(rm_hash(c, 0, INT64_MAX) != h);
	rm_file_free(f);
	chk(c);
	rm_file_free(c);
}

static void test_stats_track_size_alloc_and_ops(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, K);
	write_pat(f, 0, 100, 1);
	falloc_ok(f, KEEP, 4 * K, 2 * K);
	assert_int_equal(rm_fallocate(f, PUNCH, 0, K), -EOPNOTSUPP);
	struct rm_stats s;
	rm_stats(f, &s);
	assert_int_equal(s.size, 100);
	assert_int_equal(s.alloc_bytes, 3 * K);
	assert_int_equal(s.data_bytes, 100);
	assert_int_equal(s.ops, 3);
	rm_file_free(f);
}

static void test_small_blocksize_alignment(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS, 1024);
	write_pat(f, 0, 8192, 1);
	falloc_ok(f, INSERT, 1024, 1024);
	falloc_fails(f, INSERT, 512, 1024, EINVAL);
	falloc_ok(f, COLLAPSE, 3072, 2048);
	assert_int_equal(rm_size(f), 8192 - 1024);
	rm_file_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_new_rejects_bad_blocksize_einval),
		cmocka_unit_test(test_maxbytes_per_profile),
		cmocka_unit_test(test_vfs_fallocate_negative_offset_einval),
		cmocka_unit_test(test_vfs_fallocate_len_not_positive_einval),
		cmocka_unit_test(test_vfs_fallocate_unsupported_mode_bits_eopnotsupp),
		cmocka_unit_test(test_vfs_fallocate_punch_and_zero_eopnotsupp),
		cmocka_unit_test(test_vfs_fallocate_punch_without_keep_size_eopnotsupp),
		cmocka_unit_test(test_vfs_fallocate_collapse_not_alone_einval),
		cmocka_unit_test(test_vfs_fallocate_insert_not_alone_einval),
		cmocka_unit_test(test_vfs_fallocate_unshare_with_other_than_keep_size_einval),
		cmocka_unit_test(test_vfs_fallocate_past_maxbytes_or_wrap_efbig),
		cmocka_unit_test(test_ext4_unshare_eopnotsupp),
		cmocka_unit_test(test_xfs_unshare_allocates_like_mode0),
		cmocka_unit_test(test_collapse_unaligned_einval),
		cmocka_unit_test(test_insert_unaligned_einval),
		cmocka_unit_test(test_ext4_insert_at_eof_einval),
		cmocka_unit_test(test_insert_growth_past_maxbytes_efbig_before_einval),
		cmocka_unit_test(test_ext4_insert_shifting_last_extent_past_ext_max_blocks_einval_size_grows),
		cmocka_unit_test(test_pwrite_block_straddling_int64_max),
		cmocka_unit_test(test_shift_block_ending_at_2_63),
		cmocka_unit_test(test_ext4_punch_past_bitmap_limit_zeroes_first_block),
		cmocka_unit_test(test_collapse_reaching_eof_einval),
		cmocka_unit_test(test_collapse_alignment_checked_before_eof),
		cmocka_unit_test(test_pwrite_negative_offset_einval),
		cmocka_unit_test(test_pwrite_offset_plus_len_wrap_einval),
		cmocka_unit_test(test_pwrite_zero_len_returns_zero),
		cmocka_unit_test(test_pwrite_at_or_past_maxbytes_efbig),
		cmocka_unit_test(test_pwrite_short_at_maxbytes),
		cmocka_unit_test(test_pwrite_partial_block_into_hole_allocates_block_with_zeros),
		cmocka_unit_test(test_pwrite_into_unwritten_may_show_unwritten_until_fsync),
		cmocka_unit_test(test_ext4_write_into_unwritten_zeroout_may_data),
		cmocka_unit_test(test_pread_negative_offset_einval),
		cmocka_unit_test(test_pread_short_at_eof_and_zero_past),
		cmocka_unit_test(test_pread_holes_and_unwritten_read_zero),
		cmocka_unit_test(test_truncate_negative_einval),
		cmocka_unit_test(test_truncate_past_maxbytes_efbig),
		cmocka_unit_test(test_truncate_shrink_frees_blocks_and_zeroes_tail),
		cmocka_unit_test(test_ext4_truncate_tail_of_unwritten_block_may_become_data),
		cmocka_unit_test(test_truncate_grow_leaves_hole),
		cmocka_unit_test(test_truncate_same_size_frees_post_eof_prealloc),
		cmocka_unit_test(test_fsync_recorded_no_effect),
		cmocka_unit_test(test_falloc_mode0_extends_size_unaligned),
		cmocka_unit_test(test_falloc_keeps_written_blocks_written),
		cmocka_unit_test(test_falloc_keep_size_past_eof_shows_in_fiemap_with_last),
		cmocka_unit_test(test_punch_full_blocks_become_exact_holes),
		cmocka_unit_test(test_punch_partial_blocks_zeroed_stay_allocated),
		cmocka_unit_test(test_bytes_punch_is_byte_granular),
		cmocka_unit_test(test_ext4_punch_partial_unwritten_may_become_data),
		cmocka_unit_test(test_ext4_punch_beyond_eof_does_nothing),
		cmocka_unit_test(test_ext4_punch_clipped_to_page_after_eof),
		cmocka_unit_test(test_xfs_punch_frees_past_eof),
		cmocka_unit_test(test_ext4_612_punch_past_page_aligned_eof_stops_at_eof),
		cmocka_unit_test(test_ext4_612_punch_clamped_at_s_maxbytes_not_bitmap_limit),
		cmocka_unit_test(test_vfs_612_refused_mode_mixes_are_eopnotsupp),
		cmocka_unit_test(test_profile_names_versioned_and_aliases),
		cmocka_unit_test(test_kernel_from_uname_release),
		cmocka_unit_test(test_zero_range_aligned_interior_becomes_unwritten),
		cmocka_unit_test(test_zero_range_without_keep_size_extends),
		cmocka_unit_test(test_zero_range_partial_written_block_stays_data),
		cmocka_unit_test(test_zero_range_partial_hole_edge_gets_allocated),
		cmocka_unit_test(test_insert_opens_exact_hole_and_shifts),
		cmocka_unit_test(test_insert_never_moves_stored_bytes),
		cmocka_unit_test(test_insert_shifts_post_eof_blocks),
		cmocka_unit_test(test_bytes_insert_and_collapse_any_offset),
		cmocka_unit_test(test_collapse_removes_range_and_shifts_left),
		cmocka_unit_test(test_ext4_collapse_keeps_post_eof_blocks_xfs_frees_them),
		cmocka_unit_test(test_xfs_speculative_prealloc_past_eof_may_any),
		cmocka_unit_test(test_xfs_non_extending_write_no_prealloc),
		cmocka_unit_test(test_xfs_prealloc_blocks_past_eof_never_freed_by_eofblocks),
		cmocka_unit_test(test_xfs_prealloc_when_write_starts_in_allocated_block),
		cmocka_unit_test(test_ext4_zeroout_only_within_extent_of_converted_edge),
		cmocka_unit_test(test_xfs_insert_frees_speculative_blocks_past_eof),
		cmocka_unit_test(test_bytes_profile_has_no_latitude),
		cmocka_unit_test(test_lseek_data_hole_basic),
		cmocka_unit_test(test_lseek_span_latitude),
		cmocka_unit_test(test_lseek_unwritten_is_hole_cold_but_may_be_data),
		cmocka_unit_test(test_fiemap_merges_by_state_and_flags_last),
		cmocka_unit_test(test_walk_runs_are_maximal_and_cover_range),
		cmocka_unit_test(test_hash_is_xxh3_of_content),
		cmocka_unit_test(test_clone_is_independent),
		cmocka_unit_test(test_stats_track_size_alloc_and_ops),
		cmocka_unit_test(test_small_blocksize_alignment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
