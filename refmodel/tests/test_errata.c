/* SPDX-License-Identifier: MIT */
/*
 * test_errata.c - the kernel errata table (src/errata.c, ERRATA.md): every
 * erratum is pinned twice, as the kernels it names show it (the model's
 * default) and as the intended semantics have it (rm_opts.strict).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "refmodel.h"
#include "rmtest.h"

#define K 4096

static struct rm_file *mk(enum rm_profile p, enum rm_kernel k, int strict)
{
	struct rm_opts o = { .profile = p, .blocksize = K, .kernel = k, .strict = strict };
	struct rm_file *f = NULL;
	assert_int_equal(rm_file_new(&o, &f), 0);
	return f;
}

static void test_errata_table_is_indexed_by_id_and_complete(void **st)
{
	(void)st;
	size_t n = 0;
	const struct rm_erratum *e = rm_errata(&n);
	assert_int_equal(n, RM_ERRATUM_COUNT);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(e[i].id, (int)i);
		assert_true(e[i].name && e[i].name[0]);
		assert_true(e[i].upstream && e[i].upstream[0]);
		assert_true(e[i].tests && strstr(e[i].tests, "test_strict_"));
		assert_true(e[i].summary && e[i].summary[0]);
		/* only kernels the model knows */
		assert_int_not_equal(e[i].kernels, 0);
		assert_int_equal(e[i].kernels & ~(RM_KERNEL_BIT(RM_KERNEL_6_1) |
						  RM_KERNEL_BIT(RM_KERNEL_6_12)), 0);
	}
}

static void test_erratum_active_only_for_its_profile_kernels_and_not_strict(void **st)
{
	(void)st;
	const enum rm_erratum_id id = RM_ERRATUM_EXT4_INSERT_EINVAL_GROWS_SIZE;
	const enum rm_kernel ks[] = { RM_KERNEL_6_1, RM_KERNEL_6_12 };
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(RM_PROFILE_EXT4, ks[i], 0);
		assert_int_equal(rm_erratum_active(f, id), 1);
		assert_int_equal(rm_erratum_active(f, RM_ERRATUM_COUNT), 0);
		rm_file_free(f);
		f = mk(RM_PROFILE_EXT4, ks[i], 1);
		assert_int_equal(rm_erratum_active(f, id), 0);
		rm_file_free(f);
		f = mk(RM_PROFILE_XFS, ks[i], 0);
		assert_int_equal(rm_erratum_active(f, id), 0);
		assert_int_equal(rm_erratum_active(f, RM_ERRATUM_XFS_DIO_WRITE_AT_2_63_KEEPS_SIZE), 1);
		rm_file_free(f);
		f = mk(RM_PROFILE_XFS, ks[i], 1);
		assert_int_equal(rm_erratum_active(f, RM_ERRATUM_XFS_DIO_WRITE_AT_2_63_KEEPS_SIZE), 0);
		rm_file_free(f);
		f = mk(RM_PROFILE_EXT4, ks[i], 0);
		assert_int_equal(rm_erratum_active(f, RM_ERRATUM_XFS_DIO_WRITE_AT_2_63_KEEPS_SIZE), 0);
		rm_file_free(f);
	}
}

/* The finding's sequence (difftest/findings/ext4-6.1-insert-past-EXT_MAX_BLOCKS):
 * a KEEP_SIZE preallocation past EOF is the last extent; the insert's
 * size + len passes the EFBIG check, but the shift would move that extent
 * past EXT_MAX_BLOCKS (2^32 blocks). */
static int64_t setup_finding(struct rm_file *f)
{
	assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_ZERO_RANGE, 3280896, 61411), 0);
	assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_ZERO_RANGE | RM_FALLOC_FL_KEEP_SIZE,
				      3305472, 163840), 0);
	chk(f);
	return rm_size(f);
}

static void test_erratum_ext4_insert_einval_grows_size(void **st)
{
	(void)st;
	const enum rm_kernel ks[] = { RM_KERNEL_6_1, RM_KERNEL_6_12 };
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(RM_PROFILE_EXT4, ks[i], 0);
		int64_t size = setup_finding(f), len = 17592182587392LL;
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_INSERT_RANGE, 745472, len), -EINVAL);
		chk(f);
		/* ext4_insert_range(): i_size += len before ext4_ext_shift_extents() */
		assert_true(rm_size(f) == size + len);
		rm_file_free(f);
	}
}

static void test_strict_ext4_insert_einval_keeps_size(void **st)
{
	(void)st;
	const enum rm_kernel ks[] = { RM_KERNEL_6_1, RM_KERNEL_6_12 };
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(RM_PROFILE_EXT4, ks[i], 1);
		int64_t size = setup_finding(f);
		char before[1024], after[1024];
		uint64_t h = rm_hash(f, 0, size);
		map_str(f, before, sizeof(before));
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_INSERT_RANGE, 745472,
					      17592182587392LL), -EINVAL);
		chk(f);
		/* a refused call changes nothing: size, bytes, map */
		assert_true(rm_size(f) == size);
		assert_true(rm_hash(f, 0, size) == h);
		map_str(f, after, sizeof(after));
		assert_string_equal(before, after);
		/* a shorter insert whose shift fits still works */
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_INSERT_RANGE, 745472,
					      17592182587392LL - 4 * K * 10000), 0);
		chk(f);
		rm_file_free(f);
	}
}

/* The finding's write (difftest/findings/xfs-6.1-dio-write-ending-at-2-63-keeps-size):
 * 512-byte aligned, its last block ends at 2^63. */
#define DIO_OFF 9223372036854771200LL	/* 2^63 - 4608 */
#define DIO_END 9223372036854775296LL	/* 2^63 - 512 */

static int first_run(void *ctx, const struct rm_run *run)
{
	*(struct rm_run *)ctx = *run;
	return 1;
}

/* the state of the block holding byte off */
static unsigned state_at(const struct rm_file *f, int64_t off)
{
	struct rm_run r = { 0 };
	int64_t b = off / K * K;
	/* the last block ends at 2^63: INT64_MAX as an end */
	assert_int_equal(rm_walk(f, b, b > INT64_MAX - K ? INT64_MAX : b + K, first_run, &r), 1);
	return r.state;
}

static void test_erratum_xfs_dio_write_ending_at_2_63_keeps_size(void **st)
{
	(void)st;
	static unsigned char buf[2 * K];
	memset(buf, 0x5a, sizeof(buf));
	const enum rm_kernel ks[] = { RM_KERNEL_6_1, RM_KERNEL_6_12 };
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(RM_PROFILE_XFS, ks[i], 0);
		assert_int_equal(rm_erratum_active(f, RM_ERRATUM_XFS_DIO_WRITE_AT_2_63_KEEPS_SIZE), 1);
		/* xfs_iomap_write_unwritten(): XFS_FSB_TO_B() of the block
		 * after the write is 2^63, negative: neither size moves */
		assert_int_equal(rm_dio_pwrite(f, buf, K, DIO_OFF, 512), K);
		chk(f);
		assert_true(rm_size(f) == 0);
		/* the two blocks are written, past EOF; nothing to read */
		assert_int_equal(state_at(f, DIO_OFF), RM_DATA);
		assert_int_equal(state_at(f, DIO_END - 1), RM_DATA);
		unsigned char rd[16];
		assert_int_equal(rm_pread(f, rd, sizeof(rd), DIO_OFF), 0);
		/* the same write again meets written blocks only: no unwritten
		 * conversion, xfs_dio_write_end_io() sets offset + size */
		assert_int_equal(rm_dio_pwrite(f, buf, K, DIO_OFF, 512), K);
		chk(f);
		assert_true(rm_size(f) == DIO_END);
		rm_file_free(f);

		/* the size already past the write's end: nothing to lose */
		f = mk(RM_PROFILE_XFS, ks[i], 0);
		assert_int_equal(rm_truncate(f, DIO_END + 100), 0);
		assert_int_equal(rm_dio_pwrite(f, buf, K, DIO_OFF, 512), K);
		assert_true(rm_size(f) == DIO_END + 100);
		assert_int_equal(rm_pread(f, rd, sizeof(rd), DIO_OFF), (ssize_t)sizeof(rd));
		assert_int_equal(rd[0], 0x5a);
		rm_file_free(f);

		/* a write whose last block ends below 2^63 grows the size */
		f = mk(RM_PROFILE_XFS, ks[i], 0);
		assert_int_equal(rm_dio_pwrite(f, buf, K, DIO_OFF - K, 512), K);
		assert_true(rm_size(f) == DIO_END - K);
		rm_file_free(f);

		/* a written or delayed EOF block: 6.1's zeroing before the
		 * write (xfs_file_write_checks() -> xfs_zero_range()) raises
		 * the size to the block's end in iomap_write_end(), and that
		 * size stays; 6.12's zeroing leaves the size */
		f = mk(RM_PROFILE_XFS, ks[i], 0);
		assert_int_equal(rm_pwrite(f, buf, 100, 0), 100);
		assert_int_equal(rm_dio_pwrite(f, buf, K, DIO_OFF, 512), K);
		chk(f);
		assert_true(rm_size(f) == (ks[i] == RM_KERNEL_6_1 ? K : 100));
		assert_int_equal(rm_pread(f, rd, sizeof(rd), 90), ks[i] == RM_KERNEL_6_1 ? 16 : 10);
		assert_int_equal(rd[9], 0x5a);
		if (ks[i] == RM_KERNEL_6_1)
			assert_int_equal(rd[10], 0);	/* the zeroed tail */
		rm_file_free(f);
		/* a mapped write into an unwritten EOF block: written back by
		 * the time of the write (difftest's checks, FIEMAP_FLAG_SYNC),
		 * zeroed on 6.1 (the 6.1 guest: falloc 1433575 2; finsert
		 * 1118208 32768; mwrite 1285214 186505; this write: 1466368) */
		f = mk(RM_PROFILE_XFS, ks[i], 0);
		assert_int_equal(rm_fallocate(f, 0, 0, 100), 0);
		assert_int_equal(rm_mwrite(f, buf, 100, 0), 100);
		assert_int_equal(rm_dio_pwrite(f, buf, K, DIO_OFF, 512), K);
		chk(f);
		assert_true(rm_size(f) == (ks[i] == RM_KERNEL_6_1 ? K : 100));
		rm_file_free(f);
		/* an unwritten EOF block is skipped by the zeroing */
		f = mk(RM_PROFILE_XFS, ks[i], 0);
		assert_int_equal(rm_fallocate(f, 0, 0, 100), 0);
		assert_int_equal(rm_dio_pwrite(f, buf, K, DIO_OFF, 512), K);
		chk(f);
		assert_true(rm_size(f) == 100);
		rm_file_free(f);

		/* FUSE (no alignment rule) sends it to its server: no erratum */
		f = mk(RM_PROFILE_XFS, ks[i], 0);
		assert_int_equal(rm_dio_pwrite(f, buf, K, DIO_OFF, 1), K);
		assert_true(rm_size(f) == DIO_END);
		rm_file_free(f);
	}
}

static void test_strict_xfs_dio_write_ending_at_2_63_grows_size(void **st)
{
	(void)st;
	static unsigned char buf[K];
	memset(buf, 0x5a, sizeof(buf));
	const enum rm_kernel ks[] = { RM_KERNEL_6_1, RM_KERNEL_6_12 };
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(RM_PROFILE_XFS, ks[i], 1);
		assert_int_equal(rm_dio_pwrite(f, buf, K, DIO_OFF, 512), K);
		chk(f);
		/* the write's end, as a buffered write gives */
		assert_true(rm_size(f) == DIO_END);
		unsigned char rd[K];
		assert_int_equal(rm_pread(f, rd, sizeof(rd), DIO_OFF), K);
		assert_memory_equal(rd, buf, K);
		assert_int_equal(state_at(f, DIO_OFF), RM_DATA);
		rm_file_free(f);
	}
}

/* The finding's ops (difftest/findings/xfs-dio-read-past-eof-delalloc-eio):
 * an extending buffered write, a zero range past EOF that splits its
 * speculative preallocation, a direct read reaching past EOF. */
static struct rm_file *split_prealloc(enum rm_kernel k, int strict)
{
	static unsigned char buf[32768];
	memset(buf, 0x5c, sizeof(buf));
	struct rm_file *f = mk(RM_PROFILE_XFS, k, strict);
	assert_int_equal(rm_fallocate(f, 0, 3633152, 19050), 0);
	assert_int_equal(rm_pwrite(f, buf, sizeof(buf), 10366976), (ssize_t)sizeof(buf));
	assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_ZERO_RANGE, 10403840, K), 0);
	chk(f);
	assert_true(rm_size(f) == 10407936);
	return f;
}

static void test_erratum_xfs_dio_read_delalloc_past_eof_eio(void **st)
{
	(void)st;
	static unsigned char rd[53248];
	const enum rm_kernel ks[] = { RM_KERNEL_6_1, RM_KERNEL_6_12 };
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = split_prealloc(ks[i], 0);
		assert_int_equal(rm_erratum_active(f, RM_ERRATUM_XFS_DIO_READ_DELALLOC_PAST_EOF_EIO), 1);
		/* the model reads the block up to EOF; the kernel may fail
		 * the read instead (iomap_dio_iter(), IOMAP_DELALLOC) */
		assert_int_equal(rm_dio_pread(f, rd, sizeof(rd), 10403840, 512), K);
		assert_true(rm_dio_pread_ok(f, 10403840, sizeof(rd), 512, K));
		assert_true(rm_dio_pread_ok(f, 10403840, sizeof(rd), 512, -EIO));
		/* a read that ends at EOF maps nothing past it */
		assert_false(rm_dio_pread_ok(f, 10403840, K, 512, -EIO));
		/* another errno is still wrong */
		assert_false(rm_dio_pread_ok(f, 10403840, sizeof(rd), 512, -EINVAL));
		rm_file_free(f);

		/* no buffered write, no speculative preallocation: past EOF
		 * is a hole and the read must succeed */
		f = mk(RM_PROFILE_XFS, ks[i], 0);
		assert_int_equal(rm_fallocate(f, 0, 0, 2 * K), 0);
		assert_int_equal(rm_dio_pread(f, rd, sizeof(rd), 0, 512), 2 * K);
		assert_false(rm_dio_pread_ok(f, 0, sizeof(rd), 512, -EIO));
		rm_file_free(f);

		/* ext4 has no such erratum */
		f = mk(RM_PROFILE_EXT4, ks[i], 0);
		assert_int_equal(rm_erratum_active(f, RM_ERRATUM_XFS_DIO_READ_DELALLOC_PAST_EOF_EIO), 0);
		rm_file_free(f);
	}
}

static void test_strict_xfs_dio_read_delalloc_past_eof_reads(void **st)
{
	(void)st;
	static unsigned char rd[53248];
	const enum rm_kernel ks[] = { RM_KERNEL_6_1, RM_KERNEL_6_12 };
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = split_prealloc(ks[i], 1);
		assert_int_equal(rm_dio_pread(f, rd, sizeof(rd), 10403840, 512), K);
		assert_true(rm_dio_pread_ok(f, 10403840, sizeof(rd), 512, K));
		/* intended: the bytes up to EOF, never EIO */
		assert_false(rm_dio_pread_ok(f, 10403840, sizeof(rd), 512, -EIO));
		rm_file_free(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errata_table_is_indexed_by_id_and_complete),
		cmocka_unit_test(test_erratum_active_only_for_its_profile_kernels_and_not_strict),
		cmocka_unit_test(test_erratum_ext4_insert_einval_grows_size),
		cmocka_unit_test(test_strict_ext4_insert_einval_keeps_size),
		cmocka_unit_test(test_erratum_xfs_dio_write_ending_at_2_63_keeps_size),
		cmocka_unit_test(test_strict_xfs_dio_write_ending_at_2_63_grows_size),
		cmocka_unit_test(test_erratum_xfs_dio_read_delalloc_past_eof_eio),
		cmocka_unit_test(test_strict_xfs_dio_read_delalloc_past_eof_reads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
