/* SPDX-License-Identifier: MIT */
/*
 * copy.c - copy_file_range(2) and FIDEDUPERANGE in librefmodel (Linux 6.1):
 * rm_copy_file_range() and rm_dedupe_range().  Rules X1-X3 and X4-X7 of
 * refmodel/RULES.md.  Both reach the block remapping of rm_clone_range()
 * on XFS (reflink=1); elsewhere copy_file_range() copies through the page
 * cache (splice), which the model runs as reads and buffered writes.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RW_COUNT ((int64_t)(0x7fffffff & ~4095))	/* INT_MAX & PAGE_MASK */
#define SPLICE_CHUNK ((int64_t)65536)	/* pipe: PIPE_DEF_BUFFERS pages */
#define DEDUPE_MAX ((int64_t)1 << 30)	/* vfs_dedupe_file_range()'s 1G limit */

static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* One super block: what the model can tell of it. */
static bool same_sb(const struct rm_file *a, const struct rm_file *b)
{
	return a->profile == b->profile && a->bs == b->bs && a->maxbytes == b->maxbytes;
}

/*
 * The count XFS clones for copy_file_range() (xfs_file_remap_range() with
 * REMAP_FILE_CAN_SHORTEN, through __generic_remap_file_range_prep()):
 * 0 when it refuses or has nothing left after shortening (vfs then falls
 * back to the page-cache copy).
 */
static int64_t remap_count(const struct rm_file *dst, const struct rm_file *src,
			   int64_t soff, int64_t doff, int64_t count)
{
	int64_t bs = dst->bs;
	/* vfs_copy_file_range() falls back to the page-cache copy whatever
	 * the remap's error */
	if (remap_checks(src, soff, dst, doff, &count, REMAP_CAN_SHORTEN) || count == 0)
		return 0;
	/* generic_remap_check_len(): shortened, not refused */
	if ((count % bs) && doff + count < dst->size)
		count = rdown(count, bs);
	return count;
}

/* Page-cache copy of n bytes (do_splice_direct(): the source read into a
 * pipe, written with iter_file_splice_write(), a chunk at a time). */
static ssize_t splice_copy(struct rm_file *dst, const struct rm_file *src,
			   int64_t soff, int64_t doff, int64_t n)
{
	unsigned char *buf = malloc((size_t)imin(n, SPLICE_CHUNK));
	if (!buf)
		return -ENOMEM;
	int64_t done = 0;
	while (done < n) {
		int64_t c = imin(SPLICE_CHUNK, n - done);
		ssize_t r = rm_pread(src, buf, (size_t)c, soff + done);
		if (r <= 0)
			break;
		ssize_t w = rm_pwrite(dst, buf, (size_t)r, doff + done);
		if (w < 0) {
			if (!done)
				done = w;
			break;
		}
		done += w;
		if (w < r)
			break;
	}
	free(buf);
	return (ssize_t)done;
}

/*
 * copy_file_range(fd_in, &soff, fd_out, &doff, len, 0).  Order of Linux 6.1
 * (vfs_copy_file_range(), generic_copy_file_checks()):
 *  X1 -EXDEV for two super blocks (neither ext4 nor XFS has
 *     ->copy_file_range; the model: profile, block size or s_maxbytes
 *     differ); -EOVERFLOW when soff + len or doff + len wraps (as u64);
 *     the count is clipped to the source EOF (0 at or past it);
 *     generic_write_check_limits(): -EFBIG for doff >= s_maxbytes, the
 *     count clipped there; -EINVAL when the ranges overlap in one file;
 *     then rw_verify_area() for both (-EINVAL for a negative offset or
 *     count); a count of 0 is 0.
 *  X2 XFS (reflink=1): ->remap_file_range(..., REMAP_FILE_CAN_SHORTEN)
 *     first: block-aligned offsets and a count that is whole blocks or
 *     ends at the source EOF (else shortened to whole blocks) are cloned
 *     as FICLONERANGE clones them (rm_clone_range_wb(): the destination
 *     shares the source's written blocks, holes stay holes) and the cloned
 *     count is the answer, possibly short.  Nothing left to clone (an
 *     unaligned offset, less than a block): the page-cache copy.
 *  X3 otherwise (ext4, FUSE, an XFS request X2 refuses):
 *     generic_copy_file_range() -> do_splice_direct() of at most
 *     MAX_RW_COUNT bytes: the bytes are read and written with buffered
 *     writes, so the destination range becomes written data (zeros where
 *     the source had holes), exactly as rm_pwrite() of those bytes.
 *  flags RM_COPY_NO_REMAP: the file system has no ->remap_file_range
 *  (FUSE), X3 whatever the profile.
 */
ssize_t rm_copy_file_range(struct rm_file *dst, struct rm_file *src,
			   int64_t soff, int64_t doff, uint64_t len, unsigned flags)
{
	dst->ops++;
	if (!same_sb(dst, src))
		return -EXDEV;
	uint64_t count = len;
	if ((uint64_t)soff + count < (uint64_t)soff || (uint64_t)doff + count < (uint64_t)doff)
		return -EOVERFLOW;
	if (soff >= src->size)
		count = 0;
	else if (count > (uint64_t)src->size - (uint64_t)soff)
		count = (uint64_t)src->size - (uint64_t)soff;
	/* generic_write_check_limits() (loff_t arithmetic); 6.12 skips it
	 * for a count of 0 (RULES.md K4) */
	if (doff >= dst->maxbytes && (count || dst->kernel == RM_KERNEL_6_1))
		return -EFBIG;
	if (count > (uint64_t)dst->maxbytes - (uint64_t)doff)
		count = (uint64_t)dst->maxbytes - (uint64_t)doff;
	if (src == dst && (int64_t)((uint64_t)doff + count) > soff &&
	    doff < (int64_t)((uint64_t)soff + count))
		return -EINVAL;
	/* rw_verify_area(READ, soff), then (WRITE, doff) */
	if ((int64_t)count < 0 || soff < 0 || doff < 0)
		return -EINVAL;
	if ((int64_t)count > INT64_MAX - soff || (int64_t)count > INT64_MAX - doff)
		return -EINVAL;
	if (count == 0)
		return 0;
	int64_t n = (int64_t)count;
	if (dst->profile == RM_PROFILE_XFS && !(flags & RM_COPY_NO_REMAP)) {
		int64_t c = remap_count(dst, src, soff, doff, imin(n, MAX_RW_COUNT));
		if (c > 0) {
			dst->ops--;	/* rm_clone_range_wb() counts it */
			int err = rm_clone_range_wb(dst, src, soff, doff, c);
			return err ? err : (ssize_t)c;
		}
	}
	return splice_copy(dst, src, soff, doff, imin(n, MAX_RW_COUNT));
}

/* Do [soff, soff+n) of src and [doff, doff+n) of dst hold the same bytes?
 * (vfs_dedupe_file_range_compare(), page by page): 1, 0, or -ENOMEM. */
static int same_bytes(const struct rm_file *src, int64_t soff, const struct rm_file *dst,
		      int64_t doff, int64_t n)
{
	unsigned char *a = malloc((size_t)SPLICE_CHUNK), *b = malloc((size_t)SPLICE_CHUNK);
	int same = 1;
	if (!a || !b) {
		free(a);
		free(b);
		return -ENOMEM;
	}
	for (int64_t k = 0; k < n && same; k += SPLICE_CHUNK) {
		int64_t c = imin(SPLICE_CHUNK, n - k);
		ssize_t ra = rm_pread(src, a, (size_t)c, soff + k);
		ssize_t rb = rm_pread(dst, b, (size_t)c, doff + k);
		same = ra == c && rb == c && !memcmp(a, b, (size_t)c);
	}
	free(a);
	free(b);
	return same;
}

/*
 * ioctl(src, FIDEDUPERANGE, {soff, len, one destination {dst, doff}}):
 * Linux 6.1 vfs_dedupe_file_range() and vfs_dedupe_file_range_one().
 *  X4 the ioctl itself: -EOPNOTSUPP without ->remap_file_range (ext4,
 *     FUSE: the model's ext4 and bytes profiles); remap_verify_area():
 *     -EINVAL for soff < 0, len < 0 or soff + len wrapping; -EINVAL when
 *     soff + len passes the source EOF; len is clipped to 1 GiB.
 *  X5 the destination's status (*status; the ioctl answers 0): -EINVAL
 *     for doff < 0 or doff + len wrapping; -EXDEV for another super block;
 *     len 0: same, 0 bytes.  Then XFS with REMAP_FILE_DEDUP |
 *     REMAP_FILE_CAN_SHORTEN (generic_remap_checks()): -EINVAL for offsets
 *     that are not block aligned, for either range not inside its file's
 *     EOF, for overlapping ranges of one file; the count is shortened to
 *     whole blocks unless both ranges end at their files' EOF.
 *  X6 the bytes of the (shortened) ranges differ: status
 *     FILE_DEDUPE_RANGE_DIFFERS (1; vfs_dedupe_file_range_compare()
 *     -> -EBADE), nothing changed.
 *  X7 same: the destination blocks are remapped to the source's
 *     (xfs_reflink_remap_blocks(), as rm_clone_range(); the bytes do not
 *     change, the states do: a hole source block makes the destination
 *     block a hole), status FILE_DEDUPE_RANGE_SAME (0) and *bytes the
 *     requested len (clipped to 1 GiB), not the shortened count, even
 *     when nothing was left to remap.
 */
int rm_dedupe_range(struct rm_file *dst, struct rm_file *src, int64_t soff,
		    int64_t doff, int64_t len, int64_t *bytes, int *status)
{
	dst->ops++;
	*bytes = 0;
	*status = RM_DEDUPE_SAME;
	if (src->profile != RM_PROFILE_XFS)
		return -EOPNOTSUPP;
	if (soff < 0 || len < 0 || len > INT64_MAX - soff)
		return -EINVAL;
	if (soff + len > src->size)
		return -EINVAL;
	len = imin(len, DEDUPE_MAX);
	/* vfs_dedupe_file_range_one() */
	if (doff < 0 || len > INT64_MAX - doff) {
		*status = -EINVAL;
		return 0;
	}
	if (!same_sb(dst, src)) {
		*status = -EXDEV;
		return 0;
	}
	if (len == 0)
		return 0;
	/* its answer is the destination's status, the ioctl's is 0 */
	int64_t count = len;
	int cerr = remap_checks(src, soff, dst, doff, &count, REMAP_DEDUP | REMAP_CAN_SHORTEN);
	if (cerr) {
		*status = cerr;
		return 0;
	}
	if (count > 0) {
		/* __generic_remap_file_range_prep(): both ranges written back
		 * before the comparison */
		int werr = rm_writeback(src, soff, count);
		if (!werr)
			werr = rm_writeback(dst, doff, count);
		if (werr)
			return werr;
		int same = same_bytes(src, soff, dst, doff, count);
		if (same < 0)
			return same;
		if (!same) {
			*status = RM_DEDUPE_DIFFERS;
			return 0;
		}
		dst->ops--;	/* rm_clone_range_wb() counts it */
		int err = rm_clone_range_wb(dst, src, soff, doff, count);
		if (err) {
			*status = err;
			return 0;
		}
	}
	*bytes = len;
	return 0;
}
