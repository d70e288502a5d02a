/* SPDX-License-Identifier: MIT */
/*
 * errata.c - the kernel errata the model knows (refmodel/ERRATA.md is the
 * documentation of this table: evidence, reproducers, fixes).  An erratum
 * is a behaviour of a real kernel that departs from the semantics the
 * interface promises; by default the model copies the kernel it is told
 * to copy (rm_opts.kernel), so that a correct run of that kernel shows no
 * divergence, and rm_opts.strict turns every erratum off, so that the
 * same run shows each erratum as a divergence.
 */
#include "internal.h"

static const struct rm_erratum errata[RM_ERRATUM_COUNT] = {
	[RM_ERRATUM_EXT4_INSERT_EINVAL_GROWS_SIZE] = {
		.id = RM_ERRATUM_EXT4_INSERT_EINVAL_GROWS_SIZE,
		.name = "ext4-insert-einval-grows-size",
		.profile = RM_PROFILE_EXT4,
		/* 6.12.118's ext4_insert_range() still grows i_size and
		 * i_disksize before ext4_ext_shift_extents() */
		.kernels = RM_KERNEL_BIT(RM_KERNEL_6_1) | RM_KERNEL_BIT(RM_KERNEL_6_12),
		.upstream = "unfixed in 6.1.192 and 6.12.118; the refusal came with 349fa7d6e193 "
			    "(\"ext4: prevent right-shifting extents beyond EXT_MAX_BLOCKS\"); "
			    "proposed fix: kernel-patches/fixes/",
		.tests = "test_erratum_ext4_insert_einval_grows_size, "
			 "test_strict_ext4_insert_einval_keeps_size",
		.summary = "an insert refused with EINVAL because the last extent would pass "
			   "EXT_MAX_BLOCKS grows the size by len; intended: EINVAL, file unchanged",
	},
	[RM_ERRATUM_XFS_DIO_WRITE_AT_2_63_KEEPS_SIZE] = {
		.id = RM_ERRATUM_XFS_DIO_WRITE_AT_2_63_KEEPS_SIZE,
		.name = "xfs-dio-write-ending-at-2-63-keeps-size",
		.profile = RM_PROFILE_XFS,
		/* the same computation in xfs_iomap_write_unwritten() of
		 * 6.1.192 and 6.12.118 */
		.kernels = RM_KERNEL_BIT(RM_KERNEL_6_1) | RM_KERNEL_BIT(RM_KERNEL_6_12),
		.upstream = "unfixed in 6.1.192 and 6.12.118 (and reproduced on 6.18.44); the "
			    "in-core size follows the overflowed value since ee70daaba82d (\"xfs: "
			    "update i_size after unwritten conversion in dio completion\"); "
			    "proposed fix: kernel-patches/fixes/",
		.tests = "test_erratum_xfs_dio_write_ending_at_2_63_keeps_size, "
			 "test_strict_xfs_dio_write_ending_at_2_63_grows_size",
		.summary = "a direct write into holes or unwritten blocks whose last block ends "
			   "at 2^63 succeeds and leaves the size as it was; intended: the size "
			   "grows to the write's end",
	},
	[RM_ERRATUM_XFS_DIO_READ_DELALLOC_PAST_EOF_EIO] = {
		.id = RM_ERRATUM_XFS_DIO_READ_DELALLOC_PAST_EOF_EIO,
		.name = "xfs-dio-read-delalloc-past-eof-eio",
		.profile = RM_PROFILE_XFS,
		/* the same iomap_dio_iter() and xfs_read_iomap_begin() in
		 * 6.1.192 and 6.12.118 */
		.kernels = RM_KERNEL_BIT(RM_KERNEL_6_1) | RM_KERNEL_BIT(RM_KERNEL_6_12),
		.upstream = "unfixed in 6.1.192, 6.12.118 and the mainline iomap_dio_iter() "
			    "read here; the EIO on IOMAP_DELALLOC dates from ff6a9292e6f6 "
			    "(\"iomap: implement direct I/O\"), its message from a805c111650c; "
			    "proposed fix: kernel-patches/fixes/",
		.tests = "test_erratum_xfs_dio_read_delalloc_past_eof_eio, "
			 "test_strict_xfs_dio_read_delalloc_past_eof_reads",
		.summary = "a direct read reaching past EOF over speculative preallocation that "
			   "write-back did not convert fails with EIO; intended: the bytes up "
			   "to EOF",
	},
};

const struct rm_erratum *rm_errata(size_t *n)
{
	if (n)
		*n = RM_ERRATUM_COUNT;
	return errata;
}

int rm_erratum_active(const struct rm_file *f, enum rm_erratum_id id)
{
	if ((unsigned)id >= RM_ERRATUM_COUNT || f->strict)
		return 0;
	const struct rm_erratum *e = &errata[id];
	return e->profile == f->profile && (e->kernels & RM_KERNEL_BIT(f->kernel)) != 0;
}
