/* SPDX-License-Identifier: MIT */
/*
 * test_dio.c - cmocka rule tests of rm_dio_pwrite(), rm_dio_pread() and
 * rm_dio_pread_ok() (O_DIRECT, RULES.md O1-O5), on the ext4 and xfs
 * profiles: errno order, the misaligned cases of each file system, what a
 * refused write leaves (nothing on XFS; ext4's allocation latitude and its
 * truncate past EOF), and the exact written state after a direct write.
 * rm_check() runs after every changing call.
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

#define KEEP RM_FALLOC_FL_KEEP_SIZE

static const enum rm_profile both[] = { RM_PROFILE_EXT4, RM_PROFILE_XFS };

/* O1: the syscall's own checks, and a zero count. */
static void test_dio_o1_args(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(both[i]);
		assert_int_equal(rm_dio_pwrite(f, buf, K, -K, 512), -EINVAL);
		assert_int_equal(rm_dio_pwrite(f, buf, 0, 0, 512), 0);
		assert_int_equal(rm_dio_pwrite(f, buf, 0, 7, 512), 0);	/* before alignment */
		assert_int_equal(rm_dio_pread(f, buf, K, -K, 512), -EINVAL);
		assert_int_equal(rm_dio_pread(f, buf, 0, 0, 512), 0);
		assert_int_equal(rm_size(f), 0);
		rm_file_free(f);
	}
}

/* O3 + M3: the blocks a refused ext4 direct write may have allocated
 * unwritten are zeroed out by the conversion of a buffered write next to
 * them, if they are unwritten: D joins their may-set (the campaign's
 * ext4:nodelalloc control, 6.1: "truncate 2310987; dio_pwrite 1229187
 * 55511; pwrite 1232896 3268" leaves block 300 written). */
static void test_dio_o3_then_write_m3(void **state)
{
	(void)state;
	struct rm_file *f = mk(RM_PROFILE_EXT4);
	unsigned may;

	assert_int_equal(rm_truncate(f, 2310987), 0);
	memset(buf, 0xef, sizeof(buf));
	assert_int_equal(rm_dio_pwrite(f, buf, 55511, 1229187, 512), -EINVAL);
	chk(f);
	assert_int_equal(st_may(f, 300 * K, &may), RM_HOLE);
	assert_int_equal(may, RM_HOLE | RM_UNWRITTEN);
	assert_int_equal(rm_pwrite(f, buf, 3268, 1232896), 3268);
	chk(f);
	assert_int_equal(st_may(f, 300 * K, &may), RM_HOLE);
	assert_int_equal(may, RM_HOLE | RM_UNWRITTEN | RM_DATA);
	/* a plain hole next to a write stays a hole */
	assert_int_equal(st_may(f, 290 * K, &may), RM_HOLE);
	assert_int_equal(may, RM_HOLE);
	rm_file_free(f);
}

/* O5: an aligned write is a write whose blocks are exactly written, also
 * over unwritten blocks (no M5 latitude), and extends the file. */
static void test_dio_o5_write_exactly_written(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(both[i]);
		assert_int_equal(rm_fallocate(f, 0, 0, 8 * K), 0);
		memset(buf, 'd', 2 * K);
		assert_int_equal(rm_dio_pwrite(f, buf, 2 * K, K, 512), 2 * K);
		chk(f);
		unsigned may;
		assert_int_equal(st_may(f, K, &may), RM_DATA);
		assert_int_equal(may, RM_DATA);
		assert_int_equal(st_may(f, 2 * K, &may), RM_DATA);
		assert_int_equal(may, RM_DATA);
		/* the buffered write over unwritten space keeps M5 latitude */
		wr(f, 4 * K, K, 'b');
		st_may(f, 4 * K, &may);
		assert_int_equal(may, RM_DATA | RM_UNWRITTEN);
		/* sub-block but sector-aligned: the block is written, zeros
		 * around the data */
		memset(buf, 's', 512);
		assert_int_equal(rm_dio_pwrite(f, buf, 512, 6 * K + 1024, 512), 512);
		chk(f);
		assert_int_equal(st_may(f, 6 * K, &may), RM_DATA);
		assert_int_equal(may, RM_DATA);
		unsigned char c[2];
		assert_int_equal(rm_pread(f, c, 2, 6 * K + 1023), 2);
		assert_int_equal(c[0], 0);
		assert_int_equal(c[1], 's');
		/* extending */
		assert_int_equal(rm_dio_pwrite(f, buf, 512, 20 * K, 512), 512);
		assert_int_equal(rm_size(f), 20 * K + 512);
		chk(f);
		rm_file_free(f);
	}
}

/* O2: XFS refuses a write not aligned to the logical block size before
 * anything else, changing nothing; alignment 1 (FUSE) refuses nothing. */
static void test_dio_o2_xfs_misaligned_write(void **state)
{
	(void)state;
	struct rm_file *f = mk(RM_PROFILE_XFS);
	wr(f, 0, 4 * K, 'a');
	char m0[1024], m1[1024];
	map_str(f, m0, sizeof(m0));
	uint64_t h = rm_hash(f, 0, INT64_MAX);
	assert_int_equal(rm_dio_pwrite(f, buf, K, 100, 512), -EINVAL);
	assert_int_equal(rm_dio_pwrite(f, buf, 100, 0, 512), -EINVAL);
	assert_int_equal(rm_dio_pwrite(f, buf, 512, 16 * K + 1, 512), -EINVAL);
	/* before generic_write_checks(): -EINVAL, not -EFBIG */
	assert_int_equal(rm_dio_pwrite(f, buf, 512, INT64_MAX - 3, 512), -EINVAL);
	/* 4096-byte sectors refuse a 512-aligned write */
	assert_int_equal(rm_dio_pwrite(f, buf, 512, 512, 4096), -EINVAL);
	map_str(f, m1, sizeof(m1));
	assert_string_equal(m0, m1);
	assert_true(h == rm_hash(f, 0, INT64_MAX));
	assert_int_equal(rm_size(f), 4 * K);
	memset(buf, 'z', 100);
	assert_int_equal(rm_dio_pwrite(f, buf, 100, 3, 1), 100);
	chk(f);
	rm_file_free(f);
}

/* O3: ext4 fails a misaligned write after mapping the first extent: no
 * byte changes, holes of the range inside EOF may be unwritten; an
 * extending write then truncates what lies past EOF. */
static void test_dio_o3_ext4_misaligned_write(void **state)
{
	(void)state;
	struct rm_file *f = mk(RM_PROFILE_EXT4);
	wr(f, 0, K, 'a');
	assert_int_equal(rm_truncate(f, 8 * K), 0);
	uint64_t h = rm_hash(f, 0, INT64_MAX);
	assert_int_equal(rm_dio_pwrite(f, buf, K, 2 * K + 100, 512), -EINVAL);
	chk(f);
	assert_true(h == rm_hash(f, 0, INT64_MAX));
	assert_int_equal(rm_size(f), 8 * K);
	unsigned may;
	assert_int_equal(st_may(f, 2 * K, &may), RM_HOLE);
	assert_int_equal(may, RM_HOLE | RM_UNWRITTEN);
	assert_int_equal(st_may(f, 3 * K, &may), RM_HOLE);
	assert_int_equal(may, RM_HOLE | RM_UNWRITTEN);
	assert_int_equal(st_may(f, 4 * K, &may), RM_HOLE);
	assert_int_equal(may, RM_HOLE);
	/* -EFBIG before the alignment rule */
	assert_int_equal(rm_dio_pwrite(f, buf, 512, rm_maxbytes(f) + 1, 512), -EFBIG);
	/* extending: KEEP_SIZE blocks past EOF are truncated */
	assert_int_equal(rm_fallocate(f, KEEP, 8 * K, 4 * K), 0);
	assert_int_equal(st_at(f, 9 * K), RM_UNWRITTEN);
	assert_int_equal(rm_dio_pwrite(f, buf, K, 8 * K + 1, 512), -EINVAL);
	chk(f);
	assert_int_equal(st_may(f, 9 * K, &may), RM_HOLE);
	assert_int_equal(may, RM_HOLE);
	assert_int_equal(rm_size(f), 8 * K);
	rm_file_free(f);

	/* not extending, but delayed writes past it keep i_disksize below
	 * i_size: the blocks past EOF may go (ext4_dio_write_checks()'s
	 * extend); once written back, they stay */
	f = mk(RM_PROFILE_EXT4);
	wr(f, 0, 4 * K, 'a');
	assert_int_equal(rm_fallocate(f, KEEP, 4 * K, K), 0);
	assert_int_equal(rm_dio_pwrite(f, buf, K, 100, 512), -EINVAL);
	chk(f);
	assert_int_equal(st_may(f, 4 * K, &may), RM_UNWRITTEN);
	assert_int_equal(may, RM_UNWRITTEN | RM_HOLE);
	rm_file_free(f);
	/* the delayed write past the write's end is the rest of its own
	 * block: i_disksize is compared before iomap_dio_rw() writes that
	 * block back (difftest, 6.12: falloc -k 3162112 4096; pwrite 3145728
	 * 12288; dio_pwrite 3153964 2293 left block 772 a hole) */
	f = mk(RM_PROFILE_EXT4);
	assert_int_equal(rm_fallocate(f, KEEP, 772 * K, K), 0);
	wr(f, 768 * K, 3 * K, 'a');
	assert_int_equal(rm_dio_pwrite(f, buf, 2293, 3153964, 512), -EINVAL);
	chk(f);
	assert_int_equal(st_may(f, 772 * K, &may), RM_UNWRITTEN);
	assert_int_equal(may, RM_UNWRITTEN | RM_HOLE);
	rm_file_free(f);
	f = mk(RM_PROFILE_EXT4);
	wr(f, 0, 4 * K, 'a');
	assert_int_equal(rm_fsync(f), 0);
	assert_int_equal(rm_fallocate(f, KEEP, 4 * K, K), 0);
	assert_int_equal(rm_dio_pwrite(f, buf, K, 100, 512), -EINVAL);
	assert_int_equal(st_may(f, 4 * K, &may), RM_UNWRITTEN);
	assert_int_equal(may, RM_UNWRITTEN);
	rm_file_free(f);

	/* a file that is one hole up to an unaligned size: the EOF block
	 * takes the latitude whole, so an allocation after it leaves
	 * aligned boundaries (found by difftest: rm_check() failed on the
	 * next fallocate) */
	f = mk(RM_PROFILE_EXT4);
	assert_int_equal(rm_truncate(f, 3 * K + 100), 0);
	assert_int_equal(rm_dio_pwrite(f, buf, K, 2 * K + 100, 512), -EINVAL);
	chk(f);
	assert_int_equal(st_may(f, 3 * K + 200, &may), RM_HOLE);
	assert_int_equal(may, RM_HOLE | RM_UNWRITTEN);
	assert_int_equal(rm_fallocate(f, 0, 5 * K, K), 0);
	chk(f);
	rm_file_free(f);
}

/* O7: a write aligned to the sector but not to the block is direct on an
 * XFS file, buffered (dirty pages, no write-back) once the file is a
 * reflink inode; a block-aligned one stays direct. */
static void test_dio_o7_xfs_reflink_bounce(void **state)
{
	(void)state;
	struct rm_file *f = mk(RM_PROFILE_XFS), *g = mk(RM_PROFILE_XFS);
	wr(f, 0, 4 * K, 'a');
	wr(g, 0, 4 * K, 'b');
	assert_int_equal(rm_fsync(f), 0);
	assert_int_equal(rm_fsync(g), 0);
	memset(buf, 'c', 2 * K);
	assert_int_equal(rm_dio_pwrite(f, buf, 512, 512, 512), 512);
	assert_int_equal(rm_dirty_bytes(f), 0);
	/* g shares f's blocks: both are reflink inodes now */
	assert_int_equal(rm_clone_range_wb(g, f, 0, 0, 2 * K), 0);
	assert_int_equal(rm_dio_pwrite(f, buf, 512, 2 * K + 512, 512), 512);
	chk(f);
	assert_int_equal(rm_dirty_bytes(f), K);
	assert_int_equal(rm_dio_pwrite(g, buf, 1024, 3 * K, 512), 1024);
	assert_int_equal(rm_dirty_bytes(g), K);
	assert_int_equal(rm_dio_pwrite(g, buf, 2 * K, 0, 512), 2 * K);
	assert_int_equal(rm_dirty_bytes(g), K);	/* aligned: direct */
	unsigned char r[512];
	assert_int_equal(rm_pread(f, r, 512, 2 * K + 512), 512);
	assert_memory_equal(r, buf, 512);
	rm_file_free(f);
	rm_file_free(g);
}

/* O4: a misaligned read fails only where a misaligned edge lies in a
 * written block; at or past EOF it is 0 first; the answer is clipped at
 * EOF. */
static void test_dio_o4_read(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(both[i]);
		/* not extending: no XFS speculative preallocation (M1) */
		assert_int_equal(rm_truncate(f, 6 * K), 0);
		wr(f, 0, 2 * K, 'a');
		assert_int_equal(rm_fallocate(f, 0, 4 * K, K), 0);
		unsigned char r[4 * K];
		/* aligned */
		assert_int_equal(rm_dio_pread(f, r, K, 512, 512), K);
		assert_int_equal(r[0], 'a');
		/* misaligned start in data */
		assert_int_equal(rm_dio_pread(f, r, K, 100, 512), -EINVAL);
		assert_true(rm_dio_pread_ok(f, 100, K, 512, -EINVAL));
		assert_false(rm_dio_pread_ok(f, 100, K, 512, K));
		/* misaligned end in data */
		assert_int_equal(rm_dio_pread(f, r, 100, 0, 512), -EINVAL);
		/* both edges in holes, a written block between them: the rest
		 * of the request is misaligned when iomap reaches it */
		struct rm_file *h = mk(both[i]);
		assert_int_equal(rm_truncate(h, 8 * K), 0);
		wr(h, 2 * K, K, 'm');
		assert_int_equal(rm_dio_pread(h, r, 3 * K, 100, 512), -EINVAL);
		assert_false(rm_dio_pread_ok(h, 100, 3 * K, 512, 3 * K));
		assert_int_equal(rm_dio_pread(h, r, 3 * K, 3 * K + 100, 512), 3 * K);
		rm_file_free(h);
		/* misaligned edges in a hole and in unwritten blocks: zeros */
		assert_int_equal(rm_dio_pread(f, r, K, 2 * K + 100, 512), K);
		assert_int_equal(r[0], 0);
		assert_int_equal(rm_dio_pread(f, r, 100, 4 * K + 7, 512), 100);
		assert_true(rm_dio_pread_ok(f, 4 * K + 7, 100, 512, 100));
		assert_false(rm_dio_pread_ok(f, 4 * K + 7, 100, 512, -EINVAL));
		/* over holes and unwritten blocks only */
		assert_int_equal(rm_dio_pread(f, r, 2 * K + 1000, 2 * K + 100, 512), 2 * K + 1000);
		/* at or past EOF: 0, before the alignment rule */
		assert_int_equal(rm_dio_pread(f, r, 100, 6 * K, 512), 0);
		assert_int_equal(rm_dio_pread(f, r, 100, 7 * K + 3, 512), 0);
		/* clipped at EOF */
		assert_int_equal(rm_dio_pread(f, r, 2 * K, 5 * K, 512), K);
		assert_true(rm_dio_pread_ok(f, 5 * K, 2 * K, 512, K));
		/* alignment 1: no rule */
		assert_int_equal(rm_dio_pread(f, r, 100, 3, 1), 100);
		rm_file_free(f);
	}
}

/* O4 with latitude: a pending (M5) block may be written or unwritten, so
 * either answer is correct; the model's own answer is one of them. */
static void test_dio_o4_read_latitude(void **state)
{
	(void)state;
	struct rm_file *f = mk(RM_PROFILE_XFS);
	assert_int_equal(rm_fallocate(f, 0, 0, 4 * K), 0);
	wr(f, 0, K, 'p');
	unsigned may;
	st_may(f, 0, &may);
	assert_int_equal(may, RM_DATA | RM_UNWRITTEN);
	unsigned char r[K];
	assert_true(rm_dio_pread_ok(f, 10, 100, 512, -EINVAL));
	assert_true(rm_dio_pread_ok(f, 10, 100, 512, 100));
	assert_false(rm_dio_pread_ok(f, 10, 100, 512, 99));
	/* the read writes its range back first: the block is then written,
	 * and only -EINVAL is right */
	assert_int_equal(rm_dio_pread(f, r, 100, 10, 512), -EINVAL);
	st_may(f, 0, &may);
	assert_int_equal(may, RM_DATA);
	assert_false(rm_dio_pread_ok(f, 10, 100, 512, 100));
	rm_file_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dio_o1_args),
		cmocka_unit_test(test_dio_o5_write_exactly_written),
		cmocka_unit_test(test_dio_o2_xfs_misaligned_write),
		cmocka_unit_test(test_dio_o3_ext4_misaligned_write),
		cmocka_unit_test(test_dio_o3_then_write_m3),
		cmocka_unit_test(test_dio_o7_xfs_reflink_bounce),
		cmocka_unit_test(test_dio_o4_read),
		cmocka_unit_test(test_dio_o4_read_latitude),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
