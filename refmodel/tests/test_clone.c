/* SPDX-License-Identifier: MIT */
/*
 * test_clone.c - cmocka rule tests of rm_clone_range() (FICLONERANGE):
 * one test per errno rule of do_clone_file_range() /
 * generic_remap_checks() / generic_remap_check_len() and per effect rule of
 * xfs_reflink_remap_extent() (bytes and states of the destination, size
 * growth, unwritten-over-unwritten, holes), plus a randomized check
 * against a byte/state array.  Every failing call is checked to change
 * nothing, and rm_check() runs after every call.
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

#define K 4096
#define KEEP RM_FALLOC_FL_KEEP_SIZE
#define PUNCH RM_FALLOC_FL_PUNCH_HOLE
#define COLLAPSE RM_FALLOC_FL_COLLAPSE_RANGE
#define INSERT RM_FALLOC_FL_INSERT_RANGE

static struct rm_file *mk(enum rm_profile p)
{
	struct rm_opts o = { .profile = p, .blocksize = K };
	struct rm_file *f = NULL;
	assert_int_equal(rm_file_new(&o, &f), 0);
	return f;
}

static void wr(struct rm_file *f, int64_t off, size_t len, int c)
{
	unsigned char *b = malloc(len);
	assert_non_null(b);
	memset(b, c, len);
	assert_int_equal(rm_pwrite(f, b, len, off), (ssize_t)len);
	free(b);
	chk(f);
}

struct snap { int64_t size; uint64_t hash; char map[4096]; };
static void take(const struct rm_file *f, struct snap *s)
{
	memset(s, 0, sizeof(*s));
	s->size = rm_size(f);
	s->hash = rm_hash(f, 0, INT64_MAX);
	map_str(f, s->map, sizeof(s->map));
}

static void clone_fails(struct rm_file *d, const struct rm_file *s, int64_t so,
			int64_t dof, int64_t len, int err)
{
	struct snap a, b, c, e;
	take(d, &a);
	take(s, &c);
	assert_int_equal(rm_clone_range(d, s, so, dof, len), -err);
	chk(d);
	take(d, &b);
	take(s, &e);
	assert_int_equal(a.size, b.size);
	assert_true(a.hash == b.hash);
	assert_string_equal(a.map, b.map);
	assert_string_equal(c.map, e.map);
}

/* State (and may-mask) of the block holding off. */
static unsigned st_at(const struct rm_file *f, int64_t off, unsigned *may)
{
	char buf[256];
	struct mapbuf m = { buf, sizeof(buf) };
	long long a, b;
	unsigned s = 0, my = 0;
	assert_int_equal(rm_walk(f, off, off + 1, map_cb, &m), 0);
	assert_int_equal(sscanf(buf, "%lld+%lld:%u/%u", &a, &b, &s, &my), 4);
	if (may)
		*may = my;
	return s;
}

static int byte_at(const struct rm_file *f, int64_t off)
{
	unsigned char c = 0xee;
	assert_int_equal(rm_pread(f, &c, 1, off), 1);
	return c;
}

/* ---------- errno rules ---------- */

/* do_clone_file_range(): ext4 and FUSE have no ->remap_file_range. */
static void test_clone_ext4_and_bytes_eopnotsupp(void **st)
{
	(void)st;
	enum rm_profile ps[] = { RM_PROFILE_EXT4, RM_PROFILE_BYTES };
	for (int i = 0; i < 2; i++) {
		struct rm_file *s = mk(ps[i]), *d = mk(ps[i]);
		wr(s, 0, 2 * K, 'a');
		clone_fails(d, s, 0, 0, K, EOPNOTSUPP);
		/* before remap_verify_area(): even bad offsets */
		clone_fails(d, s, -1, 0, K, EOPNOTSUPP);
		rm_file_free(s);
		rm_file_free(d);
	}
}

/* do_clone_file_range(): i_sb differs -> -EXDEV, checked first. */
static void test_clone_other_fs_exdev(void **st)
{
	(void)st;
	struct rm_file *s = mk(RM_PROFILE_EXT4), *d = mk(RM_PROFILE_XFS);
	wr(s, 0, K, 'a');
	clone_fails(d, s, 0, 0, K, EXDEV);
	clone_fails(d, s, 1, 0, K, EXDEV);
	rm_file_free(s);
	rm_file_free(d);
}

/* remap_verify_area(): negative offsets or lengths, or wrapping. */
static void test_clone_negative_or_wrapping_einval(void **st)
{
	(void)st;
	struct rm_file *s = mk(RM_PROFILE_XFS), *d = mk(RM_PROFILE_XFS);
	wr(s, 0, 2 * K, 'a');
	clone_fails(d, s, -K, 0, K, EINVAL);
	clone_fails(d, s, 0, -K, K, EINVAL);
	clone_fails(d, s, 0, 0, -K, EINVAL);
	clone_fails(d, s, 0, INT64_MAX - K + 1, 2 * K, EINVAL);
	rm_file_free(s);
	rm_file_free(d);
}

/* generic_remap_checks(): block-aligned starts; source range inside the
 * source; a length not ending at the source EOF must be block aligned. */
static void test_clone_alignment_and_source_range_einval(void **st)
{
	(void)st;
	struct rm_file *s = mk(RM_PROFILE_XFS), *d = mk(RM_PROFILE_XFS);
	wr(s, 0, 3 * K + 100, 'a');
	clone_fails(d, s, 1, 0, K, EINVAL);
	clone_fails(d, s, 0, 512, K, EINVAL);
	clone_fails(d, s, 0, 0, K + 1, EINVAL);		/* would shorten */
	clone_fails(d, s, 4 * K, 0, K, EINVAL);		/* soff >= src size */
	clone_fails(d, s, 2 * K, 0, 4 * K, EINVAL);	/* passes src EOF */
	clone_fails(d, s, 5 * K, 0, 0, EINVAL);		/* len 0, soff > size */
	rm_file_free(s);
	rm_file_free(d);
}

/* generic_remap_file_range_prep(): len 0 means "to the source EOF"; at
 * the source EOF there is nothing to do (0, no change). */
static void test_clone_len0_at_source_eof_noop(void **st)
{
	(void)st;
	struct rm_file *s = mk(RM_PROFILE_XFS), *d = mk(RM_PROFILE_XFS);
	wr(s, 0, 2 * K, 'a');
	wr(d, 0, K, 'd');
	struct snap a, b;
	take(d, &a);
	assert_int_equal(rm_clone_range(d, s, 2 * K, 0, 0), 0);
	take(d, &b);
	assert_string_equal(a.map, b.map);
	assert_true(a.hash == b.hash);
	/* an empty source: soff 0 == size, also nothing */
	struct rm_file *e = mk(RM_PROFILE_XFS);
	assert_int_equal(rm_clone_range(d, e, 0, 0, 0), 0);
	/* but a length past an empty source's EOF is -EINVAL */
	clone_fails(d, e, 0, 0, K, EINVAL);
	rm_file_free(e);
	rm_file_free(s);
	rm_file_free(d);
}

/* generic_write_check_limits(): doff >= s_maxbytes -> -EFBIG (with XFS's
 * LLONG_MAX limit the wrap check fires first, so use a smaller one). */
static void test_clone_past_maxbytes_efbig(void **st)
{
	(void)st;
	struct rm_opts o = { .profile = RM_PROFILE_XFS, .blocksize = K, .maxbytes = (int64_t)1 << 40 };
	struct rm_file *s = NULL, *d = NULL;
	assert_int_equal(rm_file_new(&o, &s), 0);
	assert_int_equal(rm_file_new(&o, &d), 0);
	wr(s, 0, 2 * K, 'a');
	clone_fails(d, s, 0, (int64_t)1 << 40, K, EFBIG);
	/* the count is clipped to s_maxbytes, which shortens it: -EINVAL */
	clone_fails(d, s, 0, ((int64_t)1 << 40) - K, 2 * K, EINVAL);
	/* with XFS's own limit, a range wrapping past LLONG_MAX is -EINVAL */
	struct rm_file *x = mk(RM_PROFILE_XFS), *y = mk(RM_PROFILE_XFS);
	wr(x, 0, K, 'a');
	clone_fails(y, x, 0, INT64_MAX - (INT64_MAX % K), K, EINVAL);
	rm_file_free(x);
	rm_file_free(y);
	rm_file_free(s);
	rm_file_free(d);
}

/* generic_remap_checks(): overlapping ranges of one file -> -EINVAL;
 * disjoint ranges of one file are fine. */
static void test_clone_same_file_overlap_einval(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS);
	wr(f, 0, 4 * K, 'a');
	wr(f, 2 * K, K, 'b');
	clone_fails(f, f, 0, K, 2 * K, EINVAL);
	clone_fails(f, f, K, 0, 2 * K, EINVAL);
	assert_int_equal(rm_clone_range(f, f, 2 * K, 0, K), 0);
	chk(f);
	assert_int_equal(byte_at(f, 0), 'b');
	assert_int_equal(byte_at(f, K), 'a');
	assert_int_equal(rm_size(f), 4 * K);
	rm_file_free(f);
}

/* generic_remap_check_len(): a partial EOF block may not land inside the
 * destination (below its EOF). */
static void test_clone_partial_eof_block_inside_dest_einval(void **st)
{
	(void)st;
	struct rm_file *s = mk(RM_PROFILE_XFS), *d = mk(RM_PROFILE_XFS);
	wr(s, 0, K + 100, 'a');
	wr(d, 0, 4 * K, 'd');
	clone_fails(d, s, 0, 0, K + 100, EINVAL);
	/* at the destination EOF it is fine: the size grows to doff + len */
	assert_int_equal(rm_clone_range(d, s, 0, 4 * K, K + 100), 0);
	chk(d);
	assert_int_equal(rm_size(d), 5 * K + 100);
	assert_int_equal(byte_at(d, 5 * K + 99), 'a');
	rm_file_free(s);
	rm_file_free(d);
}

/* ---------- effect rules ---------- */

/* Written source blocks become written destination blocks with the same
 * bytes; len 0 clones to the source EOF; the size becomes doff + len. */
static void test_clone_copies_bytes_and_grows_size(void **st)
{
	(void)st;
	struct rm_file *s = mk(RM_PROFILE_XFS), *d = mk(RM_PROFILE_XFS);
	wr(s, 0, K, 'x');
	wr(s, K, K + 10, 'y');
	wr(d, 0, K, 'd');
	assert_int_equal(rm_clone_range(d, s, 0, 8 * K, 0), 0);
	chk(d);
	assert_int_equal(rm_size(d), 10 * K + 10);
	assert_int_equal(byte_at(d, 8 * K), 'x');
	assert_int_equal(byte_at(d, 9 * K + 9), 'y');
	assert_int_equal(byte_at(d, 4 * K), 0);		/* gap stays a hole */
	assert_int_equal(st_at(d, 4 * K, NULL), RM_HOLE);
	assert_int_equal(st_at(d, 8 * K, NULL), RM_DATA);
	/* the source is unchanged, and later writes stay private */
	wr(s, 0, 1, 'z');
	assert_int_equal(byte_at(d, 8 * K), 'x');
	wr(d, 8 * K + 1, 1, 'q');
	assert_int_equal(byte_at(s, 1), 'x');
	/* a clone inside the destination EOF does not change its size */
	assert_int_equal(rm_clone_range(d, s, 0, 0, K), 0);
	assert_int_equal(rm_size(d), 10 * K + 10);
	assert_int_equal(byte_at(d, 0), 'z');
	chk(d);
	rm_file_free(s);
	rm_file_free(d);
}

/* xfs_reflink_remap_extent(): a source hole unmaps the destination
 * blocks: data there is gone and the blocks are holes. */
static void test_clone_source_hole_punches_destination(void **st)
{
	(void)st;
	struct rm_file *s = mk(RM_PROFILE_XFS), *d = mk(RM_PROFILE_XFS);
	wr(s, 0, K, 'a');
	wr(s, 3 * K, K, 'b');	/* hole [K, 3K) */
	wr(d, 0, 4 * K, 'd');
	assert_int_equal(rm_clone_range(d, s, 0, 0, 4 * K), 0);
	chk(d);
	assert_int_equal(st_at(d, K, NULL), RM_HOLE);
	assert_int_equal(st_at(d, 2 * K, NULL), RM_HOLE);
	assert_int_equal(byte_at(d, K), 0);
	assert_int_equal(byte_at(d, 3 * K), 'b');
	struct rm_extent e[8];
	assert_int_equal(rm_fiemap(d, 0, INT64_MAX, e, 8), 2);
	rm_file_free(s);
	rm_file_free(d);
}

/* xfs_reflink_remap_extent(): an unwritten source extent is not shared;
 * the destination becomes a hole, unless it is unwritten too ("if both
 * extents are unwritten, leave them alone"). */
static void test_clone_unwritten_source(void **st)
{
	(void)st;
	struct rm_file *s = mk(RM_PROFILE_XFS), *d = mk(RM_PROFILE_XFS);
	assert_int_equal(rm_fallocate(s, 0, 0, 4 * K), 0);
	wr(d, 0, 2 * K, 'd');
	assert_int_equal(rm_fallocate(d, KEEP, 2 * K, 2 * K), 0);
	assert_int_equal(rm_truncate(d, 4 * K), 0);
	assert_int_equal(st_at(d, 3 * K, NULL), RM_UNWRITTEN);
	assert_int_equal(rm_clone_range(d, s, 0, 0, 4 * K), 0);
	chk(d);
	assert_int_equal(st_at(d, 0, NULL), RM_HOLE);
	assert_int_equal(st_at(d, K, NULL), RM_HOLE);
	assert_int_equal(st_at(d, 2 * K, NULL), RM_UNWRITTEN);
	assert_int_equal(st_at(d, 3 * K, NULL), RM_UNWRITTEN);
	assert_true(rm_hash(d, 0, INT64_MAX) == rm_hash(s, 0, INT64_MAX));
	rm_file_free(s);
	rm_file_free(d);
}

/* Pending (M5) source blocks were written back by the clone's flush: the
 * destination gets exactly written blocks. */
static void test_clone_pending_source_is_written(void **st)
{
	(void)st;
	struct rm_file *s = mk(RM_PROFILE_XFS), *d = mk(RM_PROFILE_XFS);
	assert_int_equal(rm_fallocate(s, 0, 0, 2 * K), 0);
	wr(s, 0, K, 'p');
	unsigned may = 0;
	assert_int_equal(st_at(s, 0, &may), RM_DATA);
	assert_true(may & RM_UNWRITTEN);
	assert_int_equal(rm_clone_range(d, s, 0, 0, 2 * K), 0);
	chk(d);
	assert_int_equal(st_at(d, 0, &may), RM_DATA);
	assert_int_equal(may, RM_DATA);
	assert_int_equal(st_at(d, K, NULL), RM_HOLE);
	rm_file_free(s);
	rm_file_free(d);
}

/* Clone then shift: the cloned bytes move with insert and collapse like
 * any other (the generic/458 shape). */
static void test_clone_then_shift(void **st)
{
	(void)st;
	struct rm_file *s = mk(RM_PROFILE_XFS), *d = mk(RM_PROFILE_XFS);
	wr(s, 0, 64 * K, 's');
	assert_int_equal(rm_clone_range(d, s, 0, 0, 64 * K), 0);
	assert_int_equal(rm_fallocate(d, COLLAPSE, 40 * K, 12 * K), 0);
	assert_int_equal(rm_fallocate(d, INSERT, 0, 8 * K), 0);
	assert_int_equal(rm_truncate(d, 8 * K), 0);
	chk(d);
	assert_int_equal(rm_size(d), 8 * K);
	assert_int_equal(st_at(d, 0, NULL), RM_HOLE);
	assert_int_equal(byte_at(s, 63 * K), 's');
	rm_file_free(s);
	rm_file_free(d);
}

/* Randomized: clones between two files against a flat byte array. */
static void test_clone_random_vs_array(void **st)
{
	(void)st;
	enum { N = 64 * K };
	static unsigned char arr[2][N + 16 * K];
	struct rm_file *f[2] = { mk(RM_PROFILE_XFS), mk(RM_PROFILE_XFS) };
	int64_t size[2] = { 0, 0 };
	memset(arr, 0, sizeof(arr));
	uint64_t r = 88172645463325252ULL;
	unsigned char *buf = malloc(N);
	assert_non_null(buf);
	for (int step = 0; step < 3000; step++) {
		r ^= r << 13; r ^= r >> 7; r ^= r << 17;
		int i = (int)(r % 2), j = (int)((r >> 8) % 2);
		int64_t a = (int64_t)((r >> 12) % 16) * K, b = (int64_t)((r >> 20) % 16) * K;
		int64_t len = (int64_t)((r >> 28) % 5) * K + ((r >> 40) % 4 == 0 ? (int64_t)((r >> 44) % K) : 0);
		int op = (int)((r >> 52) % 4);
		if (op == 0) {
			memset(buf, (int)(step % 250) + 1, (size_t)len);
			if (!len)
				continue;
			assert_int_equal(rm_pwrite(f[i], buf, (size_t)len, a), len);
			memset(arr[i] + a, (int)(step % 250) + 1, (size_t)len);
			if (a + len > size[i])
				size[i] = a + len;
		} else if (op == 1) {
			int64_t ns = (int64_t)((r >> 30) % (20 * K));
			assert_int_equal(rm_truncate(f[i], ns), 0);
			if (ns < size[i])
				memset(arr[i] + ns, 0, (size_t)(size[i] - ns));
			size[i] = ns;
		} else {
			int ret = rm_clone_range(f[i], f[j], a, b, len);
			if (ret == 0) {
				int64_t l = len ? len : size[j] - a;
				if (l > 0) {
					memmove(arr[i] + b, arr[j] + a, (size_t)l);
					if (b + l > size[i])
						size[i] = b + l;
				}
			}
		}
		for (int k = 0; k < 2; k++) {
			chk(f[k]);
			assert_int_equal(rm_size(f[k]), size[k]);
			assert_int_equal(rm_pread(f[k], buf, N, 0), size[k] < N ? size[k] : N);
			assert_memory_equal(buf, arr[k], (size_t)(size[k] < N ? size[k] : N));
		}
	}
	free(buf);
	rm_file_free(f[0]);
	rm_file_free(f[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clone_ext4_and_bytes_eopnotsupp),
		cmocka_unit_test(test_clone_other_fs_exdev),
		cmocka_unit_test(test_clone_negative_or_wrapping_einval),
		cmocka_unit_test(test_clone_alignment_and_source_range_einval),
		cmocka_unit_test(test_clone_len0_at_source_eof_noop),
		cmocka_unit_test(test_clone_past_maxbytes_efbig),
		cmocka_unit_test(test_clone_same_file_overlap_einval),
		cmocka_unit_test(test_clone_partial_eof_block_inside_dest_einval),
		cmocka_unit_test(test_clone_copies_bytes_and_grows_size),
		cmocka_unit_test(test_clone_source_hole_punches_destination),
		cmocka_unit_test(test_clone_unwritten_source),
		cmocka_unit_test(test_clone_pending_source_is_written),
		cmocka_unit_test(test_clone_then_shift),
		cmocka_unit_test(test_clone_random_vs_array),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
