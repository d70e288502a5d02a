/* SPDX-License-Identifier: MIT */
/*
 * test_copy.c - cmocka rule tests of rm_copy_file_range() (RULES.md
 * X1-X3) and rm_dedupe_range() (X4-X7) on the ext4, xfs and bytes
 * profiles: errno order, clipping at the source EOF and s_maxbytes, the
 * clone path of XFS (shortened to whole blocks, holes stay holes) against
 * the page-cache copy (zeros written as data), dedupe's statuses and its
 * bytes_deduped.  A refused call changes nothing; rm_check() after each.
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
#include "rmfile.h"

static int byte_at(const struct rm_file *f, int64_t off)
{
	unsigned char c = 0xee;
	assert_int_equal(rm_pread(f, &c, 1, off), 1);
	return c;
}

struct snap { int64_t size; uint64_t hash; char map[2048]; };
static void take(const struct rm_file *f, struct snap *s)
{
	s->size = rm_size(f);
	s->hash = rm_hash(f, 0, INT64_MAX);
	map_str(f, s->map, sizeof(s->map));
}
static void same(const struct snap *a, const struct snap *b)
{
	assert_int_equal(a->size, b->size);
	assert_true(a->hash == b->hash);
	assert_string_equal(a->map, b->map);
}

static void copy_fails(struct rm_file *d, struct rm_file *s, int64_t so, int64_t dof,
		       uint64_t len, int err)
{
	struct snap a, b;
	take(d, &a);
	assert_int_equal(rm_copy_file_range(d, s, so, dof, len, 0), -err);
	chk(d);
	take(d, &b);
	same(&a, &b);
}

static const enum rm_profile all[] = { RM_PROFILE_EXT4, RM_PROFILE_XFS, RM_PROFILE_BYTES };

/* X1: the order of generic_copy_file_checks() and rw_verify_area(). */
static void test_copy_x1_errors(void **state)
{
	(void)state;
	struct rm_file *e = mk(RM_PROFILE_EXT4), *x = mk(RM_PROFILE_XFS);
	wr(e, 0, 2 * K, 'a');
	copy_fails(x, e, 0, 0, K, EXDEV);
	copy_fails(x, e, -K, 0, 2 * K, EXDEV);	/* first */
	for (int i = 0; i < 3; i++) {
		struct rm_file *s = mk(all[i]), *d = mk(all[i]);
		wr(s, 0, 4 * K, 'a');
		/* offset + len wraps as u64 */
		copy_fails(d, s, -K, 0, 2 * K, EOVERFLOW);
		copy_fails(d, s, 0, -K, 2 * K, EOVERFLOW);
		/* -EFBIG at s_maxbytes before the overlap check */
		copy_fails(s, s, 0, rm_maxbytes(s), K, EFBIG);
		/* overlap in one file */
		copy_fails(s, s, 0, K, 2 * K, EINVAL);
		copy_fails(s, s, K, 0, 2 * K, EINVAL);
		/* negative offsets that do not wrap: rw_verify_area() */
		copy_fails(d, s, -K, 0, 100, EINVAL);
		copy_fails(d, s, 0, -K, 100, EINVAL);
		/* at or past the source EOF: 0, nothing done */
		struct snap a, b;
		take(d, &a);
		assert_int_equal(rm_copy_file_range(d, s, 4 * K, 0, K, 0), 0);
		assert_int_equal(rm_copy_file_range(d, s, INT64_MAX, 0, 2, 0), 0);
		assert_int_equal(rm_copy_file_range(d, s, 0, 0, 0, 0), 0);
		take(d, &b);
		same(&a, &b);
		rm_file_free(s);
		rm_file_free(d);
	}
	rm_file_free(e);
	rm_file_free(x);
	/* K4: nothing to copy at s_maxbytes: -EFBIG on 6.1, 0 on 6.12 */
	struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = K };
	struct rm_file *a = NULL, *z = NULL;
	assert_int_equal(rm_file_new(&o, &a), 0);
	assert_int_equal(rm_copy_file_range(a, a, 0, rm_maxbytes(a), K, 0), -EFBIG);
	o.kernel = RM_KERNEL_6_12;
	assert_int_equal(rm_file_new(&o, &z), 0);
	assert_int_equal(rm_copy_file_range(z, z, 0, rm_maxbytes(z), K, 0), 0);
	wr(z, 0, K, 'a');
	assert_int_equal(rm_copy_file_range(z, z, 0, rm_maxbytes(z), K, 0), -EFBIG);
	rm_file_free(a);
	rm_file_free(z);
}

/* X3: the page-cache copy (ext4, bytes, unaligned XFS): bytes copied,
 * clipped at the source EOF, holes of the source written as zeros. */
static void test_copy_x3_splice(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++) {
		struct rm_file *s = mk(all[i]), *d = mk(all[i]);
		wr(s, 0, K, 'a');
		wr(s, 3 * K, K, 'b');
		int64_t so = all[i] == RM_PROFILE_XFS ? 100 : 0;	/* unaligned on XFS */
		ssize_t want = 4 * K - so;
		assert_int_equal(rm_copy_file_range(d, s, so, 8 * K, 100 * K, 0), want);
		chk(d);
		assert_int_equal(rm_size(d), 8 * K + want);
		assert_int_equal(byte_at(d, 8 * K), 'a');
		assert_int_equal(byte_at(d, 8 * K + 2 * K), 0);
		assert_int_equal(byte_at(d, 8 * K + want - 1), 'b');
		/* the source's hole became written zeros */
		assert_int_equal(st_at(d, 8 * K + 2 * K), RM_DATA);
		assert_int_equal(st_at(d, 0), RM_HOLE);
		rm_file_free(s);
		rm_file_free(d);
	}
}

/* X2: XFS clones block-aligned requests: holes stay holes, the count is
 * shortened to whole blocks; RM_COPY_NO_REMAP copies instead. */
static void test_copy_x2_xfs_clone(void **state)
{
	(void)state;
	struct rm_file *s = mk(RM_PROFILE_XFS), *d = mk(RM_PROFILE_XFS);
	wr(s, 0, K, 'a');
	wr(s, 3 * K, K, 'b');
	wr(d, 0, 16 * K, 'z');
	/* 2.5 blocks inside the destination: 2 blocks cloned */
	assert_int_equal(rm_copy_file_range(d, s, 0, 4 * K, 2 * K + 2048, 0), 2 * K);
	chk(d);
	assert_int_equal(byte_at(d, 4 * K), 'a');
	assert_int_equal(st_at(d, 5 * K), RM_HOLE);	/* a hole of the source */
	assert_int_equal(byte_at(d, 5 * K), 0);
	assert_int_equal(byte_at(d, 6 * K), 'z');	/* not copied */
	assert_int_equal(rm_size(d), 16 * K);
	/* less than a block: the page-cache copy, all of it */
	assert_int_equal(rm_copy_file_range(d, s, K, 8 * K, 100, 0), 100);
	chk(d);
	assert_int_equal(st_at(d, 8 * K), RM_DATA);
	assert_int_equal(byte_at(d, 8 * K), 0);
	assert_int_equal(byte_at(d, 8 * K + 100), 'z');
	/* no remap: the hole is written */
	assert_int_equal(rm_copy_file_range(d, s, 0, 12 * K, 2 * K, RM_COPY_NO_REMAP), 2 * K);
	chk(d);
	assert_int_equal(st_at(d, 13 * K), RM_DATA);
	/* to the source EOF with a partial last block, past the destination
	 * EOF: cloned whole, the size grows */
	struct rm_file *t = mk(RM_PROFILE_XFS);
	wr(t, 0, K + 100, 'c');
	assert_int_equal(rm_copy_file_range(d, t, 0, 16 * K, 8 * K, 0), K + 100);
	chk(d);
	assert_int_equal(rm_size(d), 17 * K + 100);
	assert_int_equal(byte_at(d, 17 * K + 99), 'c');
	/* the same, ending inside the destination: shortened to the block */
	assert_int_equal(rm_copy_file_range(d, t, 0, 0, 8 * K, 0), K);
	chk(d);
	assert_int_equal(byte_at(d, K), 'z');
	rm_file_free(s);
	rm_file_free(d);
	rm_file_free(t);
}

static void dedupe(struct rm_file *d, struct rm_file *s, int64_t so, int64_t dof,
		   int64_t len, int ret, int status, int64_t bytes)
{
	int64_t b = -1;
	int st = 99;
	assert_int_equal(rm_dedupe_range(d, s, so, dof, len, &b, &st), ret);
	chk(d);
	if (!ret) {
		assert_int_equal(st, status);
		assert_int_equal(b, bytes);
	}
}

/* X4-X7: FIDEDUPERANGE. */
static void test_dedupe(void **state)
{
	(void)state;
	struct rm_file *e = mk(RM_PROFILE_EXT4), *b = mk(RM_PROFILE_BYTES);
	wr(e, 0, K, 'a');
	wr(b, 0, K, 'a');
	dedupe(e, e, 0, 0, K, -EOPNOTSUPP, 0, 0);			/* X4 */
	dedupe(b, b, 0, 0, K, -EOPNOTSUPP, 0, 0);
	struct rm_file *s = mk(RM_PROFILE_XFS), *d = mk(RM_PROFILE_XFS);
	wr(s, 0, 4 * K, 'a');
	wr(d, 0, 2 * K, 'a');
	wr(d, 2 * K, 2 * K, 'x');
	assert_int_equal(rm_truncate(d, 8 * K), 0);
	dedupe(d, s, -K, 0, K, -EINVAL, 0, 0);
	dedupe(d, s, 0, 0, 4 * K + 1, -EINVAL, 0, 0);		/* past the source EOF */
	dedupe(d, s, 0, -K, K, 0, -EINVAL, 0);			/* X5 */
	dedupe(e, s, 0, 0, K, 0, -EXDEV, 0);
	dedupe(d, s, 0, 0, 0, 0, RM_DEDUPE_SAME, 0);
	dedupe(d, s, 100, 0, K, 0, -EINVAL, 0);
	dedupe(d, s, 0, 7 * K, 2 * K, 0, -EINVAL, 0);		/* past the dest EOF */
	dedupe(s, s, 0, K, 2 * K, 0, -EINVAL, 0);		/* overlap */
	dedupe(d, s, 0, 0, 3 * K, 0, RM_DEDUPE_DIFFERS, 0);	/* X6 */
	struct snap a1, a2;
	take(d, &a1);
	dedupe(d, s, 0, 0, 2 * K, 0, RM_DEDUPE_SAME, 2 * K);	/* X7 */
	take(d, &a2);
	assert_true(a1.hash == a2.hash);
	/* shortened to whole blocks, bytes_deduped the full length */
	dedupe(d, s, 0, 0, K + 100, 0, RM_DEDUPE_SAME, K + 100);
	dedupe(d, s, 0, 0, 100, 0, RM_DEDUPE_SAME, 100);	/* nothing remapped */
	/* zeros: a hole source block makes an unwritten destination a hole */
	struct rm_file *h = mk(RM_PROFILE_XFS), *u = mk(RM_PROFILE_XFS);
	assert_int_equal(rm_truncate(h, 4 * K), 0);
	assert_int_equal(rm_fallocate(u, 0, 0, 4 * K), 0);
	assert_int_equal(st_at(u, K), RM_UNWRITTEN);
	dedupe(u, h, 0, 0, 2 * K, 0, RM_DEDUPE_SAME, 2 * K);
	assert_int_equal(st_at(u, K), RM_HOLE);
	assert_int_equal(st_at(u, 2 * K), RM_UNWRITTEN);
	rm_file_free(h);
	rm_file_free(u);
	rm_file_free(s);
	rm_file_free(d);
	rm_file_free(e);
	rm_file_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_x1_errors),
		cmocka_unit_test(test_copy_x3_splice),
		cmocka_unit_test(test_copy_x2_xfs_clone),
		cmocka_unit_test(test_dedupe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
