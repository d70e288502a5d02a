/* SPDX-License-Identifier: MIT */
/*
 * dio.c - O_DIRECT pwrite/pread in librefmodel (Linux 6.1): rm_dio_pwrite(),
 * rm_dio_pread() and rm_dio_pread_ok().  Rules O1-O6 of refmodel/RULES.md.
 *
 * The model has no device, so the caller passes the device's logical
 * block size (what statx() reports as STATX_DIOALIGN's dio_offset_align:
 * bdev_logical_block_size(), 512 on virtio and ram disks); 1 means no
 * alignment rule at all (FUSE: fuse_direct_IO() takes any offset and
 * length).  Buffers are assumed aligned to the device's DMA alignment
 * (bdev_iter_is_aligned()): the model has no memory addresses.
 *
 * Alignment (O2-O4).  iomap_dio_bio_iter() refuses an iteration whose
 * (pos | length) is not a multiple of the logical block size with
 * -EINVAL; iterations run per mapping (iomap_iter()), and a mapping starts
 * and ends on file system blocks, so only the iterations holding the
 * request's first and last byte can be misaligned.  Reads of holes and
 * unwritten extents go through iomap_dio_hole_iter() without that check.
 * XFS checks writes up front (xfs_file_dio_write(): bt_logical_sectormask);
 * ext4 has no such check (ext4_dio_write_iter()) and meets the iomap one
 * after ext4_iomap_begin() has mapped, and for holes allocated, the first
 * mapping.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

#define MAX_RW_COUNT ((int64_t)(0x7fffffff & ~4095))	/* INT_MAX & PAGE_MASK */

static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

static int64_t dio_align(uint32_t align)
{
	return align ? (int64_t)align : 512;
}

/* Apply fn to every segment of [a, b) (block aligned). */
static int for_segs(struct rm_file *f, int64_t a, int64_t b,
		    void (*fn)(struct seg *s))
{
	if (a >= b)
		return 0;
	struct rop r;
	int err = rop_open(f, a, b, &r);
	if (err)
		return err;
	size_t i = v_cut(f, &r, a);
	size_t j = v_cut(f, &r, b);
	for (size_t k = i; k < j; k++)
		fn(&f->vec.v[k]);
	rop_close(f, &r);
	return 0;
}

/* O5: what a completed direct write leaves: written blocks, exactly. */
static void fn_written(struct seg *s)
{
	if (s->kind == K_UNWRITTEN || s->kind == K_HOLE)
		return;		/* not written by this op (cannot happen in range) */
	s->may = RM_DATA;
}

/* O6: past EOF the written bytes read as zeros (rm_check(): no stored
 * data past EOF; a later extension zeroes them, xfs_setattr_size() and
 * xfs_file_write_checks() -> xfs_zero_range()): the blocks stay written. */
static void fn_zero_data(struct seg *s)
{
	if (s->kind == K_DATA) {
		v_drop_seg(s);
		s->kind = K_ZERO;
	}
}

static int scan_not_data(void *ctx, const struct rm_run *run)
{
	(void)ctx;
	return run->state != RM_DATA;	/* 1 stops the walk */
}

struct zero_scan {
	int64_t eof_block_end;	/* end of the block holding the old EOF */
	int64_t end;		/* end of the last range zeroing writes */
};

static int scan_zeroed(void *ctx, const struct rm_run *run)
{
	struct zero_scan *z = ctx;
	if (run->state == RM_DATA)
		z->end = run->off + run->len;
	else if (run->state == RM_DELALLOC && run->off < z->eof_block_end)
		z->end = run->off + run->len < z->eof_block_end ? run->off + run->len
								 : z->eof_block_end;
	return 0;
}

/*
 * O6, 6.1: the size the zeroing of [size, off) leaves before a direct write
 * at off past EOF.  xfs_file_write_checks() calls xfs_zero_range() there;
 * iomap_zero_iter() skips holes and unwritten extents, writes zeros into
 * written ones and into a delayed allocation of the EOF block
 * (xfs_buffered_write_iomap_begin() turns one past it into an unwritten
 * extent for IOMAP_ZERO), and 6.1's iomap_write_end() raises i_size to the
 * end of every range it wrote.  The direct write's own size update then
 * fails (O6), so that size is the one that stays.  6.12 raises i_size in
 * iomap_write_iter() only: zeroing leaves it.  The map at the
 * call (before the direct write's own write-back), as after write-back.
 */
static int64_t dio_zeroed_size(const struct rm_file *f, int64_t off)
{
	if (f->kernel != RM_KERNEL_6_1 || off <= f->size)
		return f->size;
	struct zero_scan z = { .eof_block_end = rup(f->size, f->bs), .end = f->size };
	/* the states after write-back: with difftest's checks (FIEMAP_FLAG_SYNC)
	 * the kernel has written the file back, so a dirty page over an
	 * unwritten EOF block is a written block by now (in the cached view
	 * it is still unwritten, and iomap_zero_iter() would skip it) */
	(void)rm_walk(f, rdown(f->size, f->bs), off, scan_zeroed, &z);
	return z.end < off ? (z.end > f->size ? z.end : f->size) : off;
}

/*
 * O6 (erratum RM_ERRATUM_XFS_DIO_WRITE_AT_2_63_KEEPS_SIZE): does a direct
 * write of n bytes at off, about to succeed, leave the size as it is?
 * xfs_dio_write_end_io() hands a write that met a hole or an unwritten
 * extent (IOMAP_DIO_UNWRITTEN: direct writes allocate unwritten,
 * xfs_iomap_write_direct()) to xfs_iomap_write_unwritten(..., true), which
 * takes the new size as XFS_FSB_TO_B(offset_fsb + count_fsb), the end of
 * the last block, clamped to offset + count.  For the block that ends at
 * 2^63 that is negative as xfs_fsize_t: no i_size_write(), and
 * xfs_new_eof() keeps the old on-disk size.  A write over written blocks
 * only takes the "offset + size > i_size" path, which is right.  FUSE
 * (align 1) sends the write to its server: not XFS.
 */
static bool dio_top_write(const struct rm_file *f, int64_t off, int64_t n, uint32_t align)
{
	if (align == 1 || !rm_erratum_active(f, RM_ERRATUM_XFS_DIO_WRITE_AT_2_63_KEEPS_SIZE))
		return false;
	if (off >= f->maxbytes)
		return false;			/* -EFBIG */
	n = imin(n, f->maxbytes - off);	/* generic_write_check_limits() */
	/* rup() saturates at INT64_MAX exactly for the block ending at 2^63 */
	return off + n > f->size && rup(off + n, f->bs) == INT64_MAX;
}

static bool dio_keeps_size(const struct rm_file *f, int64_t off, int64_t n, uint32_t align)
{
	/* the range's blocks, the last one ending at 2^63 */
	return dio_top_write(f, off, n, align) &&
	       rm_walk(f, rdown(off, f->bs), INT64_MAX, scan_not_data, NULL) == 1;
}

/* O3: ext4 allocated the first mapping before iomap refused it. */
static void fn_may_hole(struct seg *s)
{
	s->may |= RM_HOLE;
}

/* Whether a block of [a, b) has pages not yet written back: the tree's
 * count of segments with write-back state finds the first one after a in
 * O(log n), however many clean segments lie between. */
static bool dirty_in(const struct rm_file *f, int64_t a, int64_t b)
{
	int64_t len, p = tree_wb_find(f->root, a, &len);
	return p >= 0 && p < b;
}

static void fn_may_unwritten(struct seg *s)
{
	if (s->may & RM_HOLE)
		s->may |= RM_UNWRITTEN;
}

/*
 * pwrite(2) on an O_DIRECT file descriptor.
 *  O1 ksys_pwrite64() / rw_verify_area() / vfs_write() as rm_pwrite(); a
 *     zero count is 0 (xfs_file_write_iter(); generic_write_checks() for
 *     ext4).
 *  O2 XFS: (pos | count) not a multiple of the logical block size: -EINVAL
 *     before anything else (xfs_file_dio_write()), nothing changed.
 *  O3 ext4: generic_write_checks() first (-EFBIG, short count at
 *     s_maxbytes), then iomap_dio_rw(): the first mapping is looked up and,
 *     unless it is written and inside EOF, allocated by ext4_iomap_alloc()
 *     (unwritten inside EOF: EXT4_GET_BLOCKS_IO_CREATE_EXT), then
 *     iomap_dio_bio_iter() refuses it: -EINVAL, no byte written, holes of
 *     the range inside EOF may now be unwritten; an extending write then
 *     truncates everything past EOF (ext4_inode_extension_cleanup() ->
 *     ext4_truncate_failed_write() -> ext4_truncate(), which also zeroes
 *     the tail block: rm_truncate() to the same size).  The first
 *     iteration always fails: a write maps (allocates) every mapping, and
 *     with a misaligned offset its pos is misaligned, with a misaligned
 *     length what is left of the request is (bdev_iter_is_aligned()), so
 *     no byte is ever written.
 *  O5 success: the range is written back and its page cache invalidated
 *     first (iomap_dio_rw(): filemap_write_and_wait_range(),
 *     invalidate_inode_pages2_range()), then written; partial blocks of new
 *     or unwritten extents are zeroed around the data (iomap_dio_zero()),
 *     unwritten extents are converted at completion (ext4_dio_write_end_io()
 *     / xfs_dio_write_end_io()), an extending write grows i_size.  Bytes
 *     and size as rm_pwrite(); every block of the range is exactly written
 *     (no M5 latitude), the M1 and M3 latitude rm_pwrite() gives around it
 *     is kept (wider than direct I/O needs).
 *  O6 XFS on the kernels of erratum RM_ERRATUM_XFS_DIO_WRITE_AT_2_63_KEEPS_SIZE:
 *     an extending write over a hole or unwritten block whose last block
 *     ends at 2^63 is written, and the size stays (dio_keeps_size()) as
 *     the zeroing before the write left it (6.1: dio_zeroed_size()).
 */
ssize_t rm_dio_pwrite(struct rm_file *f, const void *buf, size_t len, int64_t off,
		      uint32_t align)
{
	int64_t al = dio_align(align);
	if (off < 0 || (ssize_t)len < 0 || (len && (int64_t)len > INT64_MAX - off)) {
		f->ops++;
		return -EINVAL;
	}
	if (len == 0) {
		f->ops++;
		return 0;
	}
	int64_t n = imin((int64_t)len, MAX_RW_COUNT);
	bool mis = ((off | n) & (al - 1)) != 0;
	if (mis && f->profile == RM_PROFILE_XFS) {		/* O2 */
		f->ops++;
		return -EINVAL;
	}
	/* O7: on a reflink inode xfs_file_dio_write_unaligned() bounces a
	 * write that is not block aligned with -ENOTBLK (xfs_is_cow_inode():
	 * "can't unshare a partial block") before anything else, and
	 * xfs_file_write_iter() does it buffered */
	if (f->profile == RM_PROFILE_XFS && f->xfs_reflink && ((off | n) & (f->bs - 1)))
		return rm_pwrite(f, buf, len, off);
	if (mis && f->profile == RM_PROFILE_EXT4) {		/* O3 */
		f->ops++;
		if (off >= f->maxbytes)
			return -EFBIG;
		n = imin(n, f->maxbytes - off);
		int64_t bs = f->bs, size = f->size;
		/* ext4_dio_write_checks() compares off + count with
		 * i_disksize before iomap_dio_rw() writes anything back:
		 * i_disksize stays below i_size while delayed writes past the
		 * write's end, the rest of its own last block included, are
		 * not written back (found by difftest, 6.12: a write ending
		 * inside a dirty EOF block) */
		bool lag = off + n <= size && dirty_in(f, off + n, size);
		/* iomap_dio_rw() writes the range back before it iterates */
		int err0 = rm_writeback(f, off, n);
		if (err0)
			return err0;
		int64_t a = rdown(off, bs);
		if (a < size) {
			int64_t e = imin(rup(off + n, bs), rup(size, bs));
			/* to e, not to the tree's end: a tree that ends
			 * inside the EOF block (a pure hole up to an unaligned
			 * size) is padded (rop_open()), so the latitude covers
			 * whole blocks (rm_check(): aligned boundaries) */
			int err = for_segs(f, a, e, fn_may_unwritten);
			if (err)
				return err;
		}
		if (lag) {
			/* then the write extends, and on its failure
			 * ext4_handle_inode_extension() ->
			 * ext4_truncate_failed_write() drops the blocks past
			 * EOF: they may be holes (measured in QEMU, 6.1) */
			int err = for_segs(f, rup(size, bs), tree_len(f->root), fn_may_hole);
			if (err)
				return err;
		}
		if (off + n > size) {
			int err = rm_truncate(f, size);
			if (err)
				return err;
		}
		return -EINVAL;
	}
	/* O6: what the zeroing before the write leaves (cached view) */
	int64_t zsize = dio_top_write(f, off, n, align) ? dio_zeroed_size(f, off) : f->size;
	/* O5: the range written back first (what is dirty around the data
	 * in its pages), the data written past the page cache: clean */
	if (off < f->maxbytes) {
		int err0 = rm_writeback(f, off, n);
		if (err0)
			return err0;
	}
	bool keep = dio_keeps_size(f, off, n, align);
	ssize_t r = rm_pwrite(f, buf, len, off);
	if (r <= 0)
		return r;
	int err = rm_writeback(f, off, r);
	if (!err && f->profile != RM_PROFILE_BYTES)
		err = for_segs(f, rdown(off, f->bs), rup(off + r, f->bs), fn_written);
	if (!err && keep) {	/* O6 */
		f->size = zsize;
		err = for_segs(f, zsize, rup(off + r, f->bs), fn_zero_data);
	}
	return err ? err : r;
}

struct readscan {
	bool any_data;		/* some block's state is written */
	bool may_data;		/* some block may be written */
	bool all_may_other;	/* every block may be a hole or unwritten */
};

static int scan_cb(void *ctx, const struct rm_run *run)
{
	struct readscan *r = ctx;
	r->any_data |= run->state == RM_DATA;
	r->may_data |= (run->may & RM_DATA) != 0;
	r->all_may_other &= (run->may & (RM_HOLE | RM_UNWRITTEN)) != 0;
	return 0;
}

/* The blocks a misaligned read iterates over (to the request's end, past
 * EOF too). */
static struct readscan read_scan(const struct rm_file *f, int64_t off, int64_t n)
{
	struct readscan r = { .all_may_other = true };
	int64_t a = rdown(off, f->bs), e = rup(off + n, f->bs);
	if (rm_walk(f, a, e, scan_cb, &r))
		r.any_data = r.may_data = true, r.all_may_other = false;
	return r;
}

/*
 * pread(2) on an O_DIRECT file descriptor.
 *  O1 ksys_pread64() / rw_verify_area() as rm_pread(); a zero count is 0
 *     (ext4_file_read_iter(), xfs_file_read_iter()); a read at or past EOF
 *     is 0 (__iomap_dio_rw()), before any alignment check.
 *  O4 the iterations go on past EOF up to the request's end (only the
 *     answer is clipped to i_size: iomap_dio_complete()).  Holes and
 *     unwritten extents are read as zeros without any check
 *     (iomap_dio_hole_iter()); a written mapping goes through
 *     iomap_dio_bio_iter(), which refuses it with -EINVAL when its own
 *     (pos | length) or what is left of the request is misaligned
 *     (bdev_iter_is_aligned(): the buffer address, advanced by the bytes
 *     before the mapping, against the DMA alignment, 511, and the count
 *     left against the logical block size).  A mapping starts on a block,
 *     so with a misaligned offset or length every written mapping fails:
 *     a misaligned read is -EINVAL exactly when a block of the range is
 *     written.  The model answers by the blocks' states;
 *     rm_dio_pread_ok() takes either answer where the may-sets allow
 *     both.
 * Before the iterations the range is written back
 * (filemap_write_and_wait_range()): rm_writeback().
 */
ssize_t rm_dio_pread(struct rm_file *f, void *buf, size_t len, int64_t off,
		     uint32_t align)
{
	int64_t al = dio_align(align);
	if (off < 0 || (ssize_t)len < 0 || (len && (int64_t)len > INT64_MAX - off))
		return -EINVAL;
	int64_t n = imin((int64_t)len, MAX_RW_COUNT);
	if (n == 0 || off >= f->size)
		return 0;
	int err = rm_writeback(f, off, n);	/* __iomap_dio_rw() */
	if (err)
		return err;
	if (f->profile != RM_PROFILE_BYTES && ((off | n) & (al - 1))) {
		if (read_scan(f, off, n).any_data)	/* O4 */
			return -EINVAL;
	}
	return rm_pread(f, buf, len, off);
}

static int scan_delalloc(void *ctx, const struct rm_run *run)
{
	bool *found = ctx;
	*found |= (run->may & RM_DELALLOC) != 0;
	return *found;	/* 1 stops the walk */
}

/* Erratum xfs-dio-read-delalloc-past-eof-eio (refmodel/ERRATA.md): the
 * read is mapped to its end and iomap_dio_iter() fails it with -EIO on
 * a delalloc mapping, also one starting at or past EOF.  Written-back
 * ranges keep M1's speculative preallocation as RM_DELALLOC in their
 * cached may-set (the model does not know how much of it write-back
 * converted), so -EIO is right where a block from the one after EOF to
 * the request's end may still be delalloc. */
static bool past_eof_delalloc(const struct rm_file *f, int64_t off, int64_t n)
{
	bool found = false;
	int64_t a = rup(f->size, f->bs), e = rup(off + n, f->bs);
	if (a < e && rm_walk_cached(f, a, e, scan_delalloc, &found) < 0)
		return true;	/* cannot tell: allow what the kernel may do */
	return found;
}

int rm_dio_pread_ok(const struct rm_file *f, int64_t off, size_t len, uint32_t align,
		    int64_t result)
{
	int64_t al = dio_align(align);
	if (off < 0 || (ssize_t)len < 0 || (len && (int64_t)len > INT64_MAX - off))
		return result == -EINVAL;
	int64_t n = imin((int64_t)len, MAX_RW_COUNT);
	if (n == 0 || off >= f->size)
		return result == 0;
	int64_t count = imin(n, f->size - off);
	if (result == -EIO && rm_erratum_active(f, RM_ERRATUM_XFS_DIO_READ_DELALLOC_PAST_EOF_EIO) &&
	    past_eof_delalloc(f, off, n))
		return 1;
	if (f->profile == RM_PROFILE_BYTES || !((off | n) & (al - 1)))
		return result == count;
	struct readscan r = read_scan(f, off, n);
	return (r.may_data && result == -EINVAL) || (r.all_may_other && result == count);
}
