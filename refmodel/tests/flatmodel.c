/* SPDX-License-Identifier: MIT */
/*
 * flatmodel.c - naive flat-array model of Linux 6.1 ext4/XFS file semantics,
 * the oracle of the differential self-test of librefmodel.
 *
 * Written from the kernel source (linux-source-6.1) without reading
 * refmodel/src, so that the two models are independent readings.  Every
 * operation walks or moves whole arrays: O(size), obviously correct,
 * slow.  Conventions shared with refmodel.h:
 *  - state: what the model itself reports, the state after writeback
 *    settles on a typical kernel;
 *  - may: every state a correct kernel may show there.
 * Bytes at and past i_size are kept zero, because every path that extends
 * a file must expose zeros there (ext4_block_truncate_page(),
 * xfs_truncate_page(), the EOF zeroing of xfs_file_write_checks()).
 */
#include "flatmodel.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* High bit of a may byte: an unwritten granule whose page ext4 zeroed and
 * dirtied (ext4_dirty_block(), M4).  While the page is cached SEEK_DATA
 * finds it (iomap_seek_data_iter() -> mapping_seek_hole_data() for
 * IOMAP_UNWRITTEN); once clean and evicted it is a hole again, since 6.1
 * keeps it unwritten (D-DT9).  fm_lseek() gives the cold-cache answer, like
 * rm_lseek().  Any assignment of the may byte clears it; shifts move it. */
#define FM_DIRTY 0x80u
/* Next bit: M5 (ops.c, D-DT1/D7).  A granule that was unwritten when a
 * buffered write copied data into it: the extent stays unwritten until
 * write-back (ext4_da_map_blocks() maps the buffer unwritten, not delayed;
 * xfs_buffered_write_iomap_begin() returns IOMAP_UNWRITTEN; the conversion
 * runs in ext4_end_io_end() / xfs_end_ioend() after the I/O).  State DATA,
 * may DATA|UNWRITTEN until fsync writes it back (fm_fsync() settles it
 * inside EOF).  Same lifetime rules as FM_DIRTY. */
#define FM_PENDING 0x40u
#define FM_PAGE_SIZE 4096ll	/* x86-64 PAGE_SIZE, used by ext4_punch_hole() */
#define FM_MAX_RW_COUNT ((int64_t)(INT_MAX & ~(FM_PAGE_SIZE - 1)))	/* MAX_RW_COUNT */

#define KEEP	RM_FALLOC_FL_KEEP_SIZE
#define PUNCH	RM_FALLOC_FL_PUNCH_HOLE
#define COLL	RM_FALLOC_FL_COLLAPSE_RANGE
#define ZERO	RM_FALLOC_FL_ZERO_RANGE
#define INS	RM_FALLOC_FL_INSERT_RANGE
#define UNSH	RM_FALLOC_FL_UNSHARE_RANGE
/* FALLOC_FL_SUPPORTED_MASK (include/linux/falloc.h): NO_HIDE_STALE is not in it. */
#define VFS_SUPPORTED (KEEP | PUNCH | COLL | ZERO | INS | UNSH)

int64_t fm_profile_maxbytes(enum rm_profile p, uint32_t bs)
{
	if (p == RM_PROFILE_EXT4) {
		/* ext4_max_size(blkbits, has_huge_files=1): 2^32-1 blocks. */
		int bits = __builtin_ctz(bs);
		int64_t res = ((1ll << 32) - 1) << bits;
		return res;
	}
	return INT64_MAX;	/* MAX_LFS_FILESIZE on 64-bit (xfs_fs_fill_super()) */
}

int fm_new(const struct rm_opts *o, struct fm_file *f)
{
	uint32_t bs = o->blocksize ? o->blocksize : 4096;

	memset(f, 0, sizeof(*f));
	if (bs < 512 || bs > 65536 || (bs & (bs - 1)))
		return -EINVAL;
	if (o->profile != RM_PROFILE_EXT4 && o->profile != RM_PROFILE_XFS &&
	    o->profile != RM_PROFILE_BYTES)
		return -EINVAL;
	f->profile = o->profile;
	f->bs = bs;
	f->g = o->profile == RM_PROFILE_BYTES ? 1 : bs;
	f->maxbytes = o->maxbytes ? o->maxbytes : fm_profile_maxbytes(o->profile, bs);
	f->tail_may = RM_HOLE;
	return 0;
}

void fm_free(struct fm_file *f)
{
	free(f->st);
	free(f->may);
	free(f->data);
	memset(f, 0, sizeof(*f));
}

/* ---- array functions ------------------------------------------------ */

static unsigned st_at(const struct fm_file *f, int64_t i)
{
	return i < f->cap ? f->st[i] : RM_HOLE;
}

static int64_t gdown(const struct fm_file *f, int64_t b) { return b / f->g; }
static int64_t gup(const struct fm_file *f, int64_t b) { return b / f->g + (b % f->g != 0); }

/* may-mask of a granule past the arrays */
static unsigned may_beyond(const struct fm_file *f, int64_t i)
{
	return f->tail_may != RM_HOLE && i < f->tail_end ? f->tail_may : RM_HOLE;
}

/* Make the arrays cover granules [0, n). */
static int ensure(struct fm_file *f, int64_t n)
{
	int64_t ncap;
	uint8_t *st, *may, *data;

	if (n <= f->cap)
		return 0;
	if (n > FM_MAX_SPAN / f->g)
		return -ENOMEM;
	ncap = f->cap ? f->cap : 16;
	while (ncap < n)
		ncap *= 2;
	if (ncap > FM_MAX_SPAN / f->g)
		ncap = FM_MAX_SPAN / f->g;
	st = realloc(f->st, ncap);
	if (!st)
		return -ENOMEM;
	f->st = st;
	may = realloc(f->may, ncap);
	if (!may)
		return -ENOMEM;
	f->may = may;
	data = realloc(f->data, (size_t)(ncap * f->g));
	if (!data)
		return -ENOMEM;
	f->data = data;
	memset(f->st + f->cap, RM_HOLE, ncap - f->cap);
	for (int64_t i = f->cap; i < ncap; i++)
		f->may[i] = (uint8_t)may_beyond(f, i);
	memset(f->data + f->cap * f->g, 0, (size_t)((ncap - f->cap) * f->g));
	f->cap = ncap;
	return 0;
}

/* Free granules [from, infinity): what truncation does to the map
 * (ext4_truncate() -> ext4_ext_remove_space(last_block..EXT_MAX_BLOCKS),
 * xfs_itruncate_extents(new_size)).  Also zeroes the bytes from `zfrom`. */
static void free_from(struct fm_file *f, int64_t from, int64_t zfrom)
{
	for (int64_t i = from; i < f->cap; i++) {
		f->st[i] = RM_HOLE;
		f->may[i] = RM_HOLE;
	}
	f->tail_may = RM_HOLE;
	if (zfrom < f->cap * f->g)
		memset(f->data + zfrom, 0, (size_t)(f->cap * f->g - zfrom));
}

static void zero_bytes(struct fm_file *f, int64_t from, int64_t to)
{
	if (to > f->size)
		to = f->size;
	if (from < to)
		memset(f->data + from, 0, (size_t)(to - from));
}

/*
 * ext4 zero-out latitude.  When unwritten blocks [a, b) are converted to
 * written (write-back of a write or of a partially zeroed unwritten block),
 * ext4_ext_convert_to_initialized() may zero out up to max_zeroout
 * (s_extent_max_zeroout_kb = 32 KiB) of the same unwritten extent before
 * and after the range and mark it written instead of splitting.  Extents
 * are within runs of one state, so: unwritten blocks of the run containing
 * the edge block, within max_zeroout blocks of the range, may be data.
 * Uses the states before the conversion.
 */
static void ext4_zeroout_may(struct fm_file *f, int64_t a, int64_t b)
{
	int64_t m = 32768 / f->bs;

	if (f->profile != RM_PROFILE_EXT4 || m == 0)
		return;
	if (st_at(f, a) == RM_UNWRITTEN)
		for (int64_t i = a - 1; i >= 0 && i >= a - m && f->st[i] == RM_UNWRITTEN; i--)
			f->may[i] |= RM_DATA;
	if (st_at(f, b - 1) == RM_UNWRITTEN)
		for (int64_t i = b; i < b + m && i < f->cap && f->st[i] == RM_UNWRITTEN; i++)
			f->may[i] |= RM_DATA;
}

/*
 * ext4: a partially zeroed block.  __ext4_block_zero_page_range() maps the
 * buffer (ext4_get_block() maps unwritten blocks as mapped+unwritten),
 * zeroes part of the page and dirties it; write-back then converts the
 * unwritten block to written (mpage_add_bh_to_extent() maps dirty unwritten
 * buffers).  A hole stays a hole ("unmapped? It's a hole - nothing to do"),
 * data stays data.  So an unwritten block may become data; the model keeps
 * reporting it unwritten.
 */
static void ext4_dirty_block(struct fm_file *f, int64_t blk)
{
	if (blk >= f->cap || f->st[blk] != RM_UNWRITTEN)
		return;
	ext4_zeroout_may(f, blk, blk + 1);
	f->may[blk] |= RM_DATA | FM_DIRTY;
}

/* ext4_zero_partial_blocks(lstart, length): the partial blocks it zeroes. */
static void ext4_zero_partial(struct fm_file *f, int64_t lstart, int64_t length)
{
	int64_t bs = f->bs;
	int64_t byte_end = lstart + length - 1;
	int64_t ps = lstart & (bs - 1), pe = byte_end & (bs - 1);
	int64_t start = lstart / bs, end = byte_end / bs;

	if (start == end && (ps || pe != bs - 1)) {
		ext4_dirty_block(f, start);
		return;
	}
	if (ps)
		ext4_dirty_block(f, start);
	if (pe != bs - 1)
		ext4_dirty_block(f, end);
}

/* Allocate granules [a, b) as preallocation: holes become unwritten,
 * allocated granules keep their state (ext4_alloc_file_blocks() with
 * EXT4_GET_BLOCKS_CREATE_UNWRIT_EXT; xfs_alloc_file_space() with
 * XFS_BMAPI_PREALLOC).  A hole that may hold an XFS delalloc reservation
 * is converted unwritten too: xfs_bmapi_allocate() sets XFS_EXT_NORM and
 * then XFS_EXT_UNWRITTEN for XFS_BMAPI_PREALLOC, wasdel or not. */
/* A hole whose may-mask has DATA keeps it (verdict D6(a)): on XFS that is
 * speculative preallocation (M1) that xfs_zero_range() may have zeroed in
 * the page cache (xfs_file_write_checks() for [isize, pos),
 * xfs_setattr_size() for a truncate up, which also writes it back): such a
 * block can already be a written extent, which xfs_bmapi_write() leaves
 * alone, or a delalloc one with dirty pages whose write-back converts the
 * new unwritten extent to written. */
static void alloc_range(struct fm_file *f, int64_t a, int64_t b)
{
	for (int64_t i = a; i < b; i++) {
		if (f->st[i] != RM_HOLE)
			continue;
		f->st[i] = RM_UNWRITTEN;
		f->may[i] = (uint8_t)((f->may[i] & RM_DATA) | RM_UNWRITTEN);
	}
}

static void hole_range(struct fm_file *f, int64_t a, int64_t b)
{
	for (int64_t i = a; i < b && i < f->cap; i++) {
		f->st[i] = RM_HOLE;
		f->may[i] = RM_HOLE;
	}
}

/* Remove granules [a, a+n) and shift the rest down (collapse). */
static void shift_left(struct fm_file *f, int64_t a, int64_t n)
{
	int64_t g = f->g;

	if (a + n < f->cap) {
		memmove(f->st + a, f->st + a + n, f->cap - a - n);
		memmove(f->may + a, f->may + a + n, f->cap - a - n);
		memmove(f->data + a * g, f->data + (a + n) * g,
			(size_t)((f->cap - a - n) * g));
	}
	int64_t from = f->cap - n > a ? f->cap - n : a;
	memset(f->st + from, RM_HOLE, f->cap - from);
	for (int64_t i = from; i < f->cap; i++)
		f->may[i] = (uint8_t)may_beyond(f, i + n);
	memset(f->data + from * g, 0, (size_t)((f->cap - from) * g));
	f->tail_end -= n;
}

/* Open a hole of n granules at a (insert); caller ensured cap covers the
 * shifted map. */
static void shift_right(struct fm_file *f, int64_t a, int64_t n)
{
	int64_t g = f->g;

	memmove(f->st + a + n, f->st + a, f->cap - a - n);
	memmove(f->may + a + n, f->may + a, f->cap - a - n);
	memmove(f->data + (a + n) * g, f->data + a * g, (size_t)((f->cap - a - n) * g));
	memset(f->st + a, RM_HOLE, n);
	memset(f->may + a, RM_HOLE, n);
	memset(f->data + a * g, 0, (size_t)(n * g));
	f->tail_end += n;
}

/* Highest granule index + 1 that differs from the tail (a hole with the
 * tail's may-mask); the arrays past it may be dropped by a shift. */
static int64_t last_nontail(const struct fm_file *f)
{
	for (int64_t i = f->cap; i > 0; i--)
		if (f->st[i - 1] != RM_HOLE || f->may[i - 1] != may_beyond(f, i - 1))
			return i;
	return 0;
}

/* Highest granule index + 1 whose state is not a hole. */
static int64_t last_alloc(const struct fm_file *f)
{
	for (int64_t i = f->cap; i > 0; i--)
		if (f->st[i - 1] != RM_HOLE)
			return i;
	return 0;
}

/* ---- pwrite / pread / truncate / fsync ------------------------------- */

ssize_t fm_pwrite(struct fm_file *f, const void *buf, size_t count, int64_t off)
{
	int64_t len, end, a, b;
	int err;

	if (off < 0)				/* ksys_pwrite64() */
		return -EINVAL;
	if ((ssize_t)count < 0)			/* rw_verify_area() */
		return -EINVAL;
	if ((uint64_t)off + count > (uint64_t)INT64_MAX)	/* rw_verify_area(): pos + count < 0 */
		return -EINVAL;
	len = (int64_t)count;
	if (len > FM_MAX_RW_COUNT)		/* vfs_write() */
		len = FM_MAX_RW_COUNT;
	if (len == 0)				/* generic_write_checks_count(), xfs_file_write_iter() */
		return 0;
	if (off >= f->maxbytes)			/* generic_write_check_limits() */
		return -EFBIG;
	if (len > f->maxbytes - off)
		len = f->maxbytes - off;

	end = off + len;
	a = gdown(f, off);
	b = gup(f, end);
	err = ensure(f, b);
	if (err)
		return err;

	/* Latitude, from the states before the write. */
	if (f->profile == RM_PROFILE_EXT4) {
		ext4_zeroout_may(f, a, b);
	} else if (f->profile == RM_PROFILE_XFS) {
		/*
		 * xfs_buffered_write_iomap_begin(): a write whose last chunk
		 * lies in a hole with no extent after it ("eof") and past
		 * i_size reserves speculative delalloc blocks past its end
		 * (xfs_iomap_prealloc_size(), up to XFS_MAX_BMBT_EXTLEN
		 * blocks); later flushes may turn them into written or (for
		 * zeroing past EOF) unwritten extents.  So every hole after
		 * the write may show as allocated, up to s_maxbytes
		 * ("p_end_fsb = min(p_end_fsb, XFS_B_TO_FSB(mp, s_maxbytes))").
		 */
		if (end > f->size && st_at(f, b - 1) == RM_HOLE && last_alloc(f) <= b) {
			/*
			 * Bound, default mount (allocsize 64 KiB): p_end_fsb =
			 * XFS_ALLOC_ALIGN(end - 1) + prealloc_blocks, where
			 * xfs_iomap_prealloc_size() gives at most
			 * max(64 KiB, min(XFS_MAX_BMBT_EXTLEN blocks, 2 * the
			 * preceding extents)) and the preceding extents lie
			 * below the write; so end + max(64K, min(2^21 blocks,
			 * 2 * end)), rounded up to 64 KiB, is never exceeded.
			 * Then capped at XFS_B_TO_FSB(s_maxbytes) (rounds up).
			 */
			int64_t e = b * f->g, A = 65536;
			int64_t pre = (int64_t)f->bs << 21;
			if (e < pre / 2)
				pre = 2 * e;
			if (pre < A)
				pre = A;
			int64_t spec = ((end + A - 1) / A) * A + pre;
			spec = ((spec + A - 1) / A) * A;
			int64_t lat_end = gup(f, spec);
			if (lat_end > gup(f, f->maxbytes))
				lat_end = gup(f, f->maxbytes);
			for (int64_t i = b; i < f->cap && i < lat_end; i++)
				f->may[i] |= RM_ANY;
			if (lat_end > f->cap) {
				/* granules past the arrays: extend the arrays
				 * (the span is small) or use the tail */
				if (ensure(f, lat_end) == 0) {
					for (int64_t i = b; i < lat_end; i++)
						f->may[i] |= RM_ANY;
				} else {
					f->tail_may = RM_ANY;
					f->tail_end = lat_end;
				}
			}
		}
	}
	for (int64_t i = a; i < b; i++) {
		/* M5; the bytes profile is an idealised file system with
		 * no latitude at all */
		if (f->st[i] == RM_UNWRITTEN && f->profile != RM_PROFILE_BYTES)
			f->may[i] = RM_DATA | RM_UNWRITTEN | FM_PENDING;
		else if (!(f->st[i] == RM_DATA && (f->may[i] & FM_PENDING)))
			f->may[i] = RM_DATA;	/* a pending one stays pending */
		f->st[i] = RM_DATA;
	}
	memcpy(f->data + off, buf, (size_t)len);
	if (end > f->size)
		f->size = end;
	return len;
}

ssize_t fm_pread(const struct fm_file *f, void *buf, size_t count, int64_t off)
{
	int64_t len;

	if (off < 0)				/* ksys_pread64() */
		return -EINVAL;
	if ((ssize_t)count < 0)			/* rw_verify_area() */
		return -EINVAL;
	if ((uint64_t)off + count > (uint64_t)INT64_MAX)
		return -EINVAL;
	len = (int64_t)count;
	if (len > FM_MAX_RW_COUNT)		/* vfs_read() */
		len = FM_MAX_RW_COUNT;
	if (off >= f->maxbytes)			/* filemap_read() */
		return 0;
	if (len == 0 || off >= f->size)
		return 0;
	if (len > f->size - off)		/* short read at EOF */
		len = f->size - off;
	memcpy(buf, f->data + off, (size_t)len);
	return len;
}

int fm_truncate(struct fm_file *f, int64_t size)
{
	if (size < 0)				/* do_sys_ftruncate() */
		return -EINVAL;
	if (size > f->size && size > f->maxbytes)	/* inode_newsize_ok() */
		return -EFBIG;
	if (size <= f->size) {
		/*
		 * Shrinking, or truncating to the same size: both ext4
		 * ("Call ext4_truncate() even if i_size didn't change to
		 * truncate possible preallocated blocks", ext4_setattr())
		 * and XFS (xfs_setattr_size(): newsize <= oldsize ->
		 * xfs_itruncate_extents()) free every block past the new
		 * EOF block.  ext4_truncate() zeroes the EOF block's tail
		 * through ext4_block_truncate_page(), dirtying it.
		 */
		free_from(f, gup(f, size), size);
		/* after the blocks past it are gone: the write-back that
		 * converts the tail block sees the truncated extent tree */
		if (f->profile == RM_PROFILE_EXT4 && (size & (f->bs - 1)))
			ext4_dirty_block(f, size / f->bs);
	}
	/* Growing allocates nothing (pagecache_isize_extended(); on XFS
	 * xfs_zero_range() only zeroes mapped and delalloc blocks); the
	 * arrays still cover the size so that reads stay simple. */
	int err = ensure(f, gup(f, size));
	if (err)
		return err;
	f->size = size;
	return 0;
}

/* fsync(2) writes back every dirty page inside EOF (ext4_writepages() and
 * iomap_writepages() stop at i_size), converting M5 granules: exactly DATA.
 * Granules past EOF keep the latitude.  M4 granules (FM_DIRTY) are not
 * settled: 6.1 keeps a partially zeroed unwritten block unwritten after
 * fsync (D-DT9).  The bytes profile has no write-back rule (as ops.c). */
int fm_fsync(struct fm_file *f)
{
	f->fsyncs++;
	if (f->profile == RM_PROFILE_BYTES)
		return 0;
	int64_t e = gup(f, f->size);
	for (int64_t i = 0; i < e && i < f->cap; i++)
		if (f->may[i] & FM_PENDING)
			f->may[i] = RM_DATA;
	return 0;
}

/* Write-back of the pages over [off, off + len) (len 0: to the end) and a
 * wait: the M5 granules wholly inside those pages and inside EOF are
 * converted (filemap_write_and_wait_range(); ext4_writepages() and
 * iomap_writepages() stop at i_size), as fsync converts all of them. */
int fm_writeback(struct fm_file *f, int64_t off, int64_t len)
{
	if (off < 0 || len < 0)
		return -EINVAL;
	if (f->profile == RM_PROFILE_BYTES)
		return 0;
	int64_t lo = off / FM_PAGE_SIZE * FM_PAGE_SIZE;
	int64_t hi = len == 0 || len > INT64_MAX - off - FM_PAGE_SIZE ? INT64_MAX
		     : (off + len + FM_PAGE_SIZE - 1) / FM_PAGE_SIZE * FM_PAGE_SIZE;
	int64_t e = gup(f, f->size);
	for (int64_t i = 0; i < e && i < f->cap; i++) {
		int64_t s0 = i * f->g;
		if (s0 >= lo && (hi == INT64_MAX || s0 + f->g <= hi) && (f->may[i] & FM_PENDING))
			f->may[i] = RM_DATA;
	}
	return 0;
}

/* A write through a shared mapping: the faulted pages (blocks when larger)
 * become written up to the granule holding EOF, as a write makes them
 * (block_page_mkwrite(), iomap_page_mkwrite()); bytes past EOF are lost; a
 * page wholly past EOF is SIGBUS (-EFAULT). */
ssize_t fm_mwrite(struct fm_file *f, const void *buf, size_t count, int64_t off)
{
	if (off < 0 || (ssize_t)count < 0 || (uint64_t)off + count > (uint64_t)INT64_MAX)
		return -EINVAL;
	if (count == 0)
		return 0;
	int64_t end = off + (int64_t)count, P = FM_PAGE_SIZE;
	int64_t eofpage = (f->size + P - 1) / P * P;
	if ((end - 1) / P * P >= eofpage)
		return -EFAULT;
	int64_t G = f->bs > P ? f->bs : P;
	int64_t a = gdown(f, off / G * G);
	int64_t b = gdown(f, (end + G - 1) / G * G);
	if (b > gup(f, f->size))
		b = gup(f, f->size);
	if (a < b) {
		ext4_zeroout_may(f, a, b);
		for (int64_t i = a; i < b; i++) {
			if (f->st[i] == RM_UNWRITTEN && f->profile != RM_PROFILE_BYTES)
				f->may[i] = RM_DATA | RM_UNWRITTEN | FM_PENDING;
			else if (!(f->st[i] == RM_DATA && (f->may[i] & FM_PENDING)))
				f->may[i] = RM_DATA;
			f->st[i] = RM_DATA;
		}
	}
	int64_t dend = end < f->size ? end : f->size;
	if (dend > off)
		memcpy(f->data + off, buf, (size_t)(dend - off));
	return (ssize_t)count;
}

/* ---- fallocate ------------------------------------------------------- */

/* ext4_punch_hole() */
static int ext4_punch(struct fm_file *f, int64_t off, int64_t len)
{
	int64_t end = off + len, bs = f->bs;

	if (off >= f->size)		/* "No need to punch hole beyond i_size" */
		return 0;
	if (end > f->size)		/* end after the page that contains i_size */
		end = f->size + FM_PAGE_SIZE - (f->size & (FM_PAGE_SIZE - 1));
	int err = ensure(f, (end + bs - 1) / bs);
	if (err)
		return err;
	zero_bytes(f, off, end);
	int64_t first = (off + bs - 1) / bs, stop = end / bs;
	if (stop > first)
		hole_range(f, first, stop);
	/* The dirtied edge blocks are converted at write-back, after the
	 * punch: their zero-out latitude comes from the extents left by
	 * ext4_ext_remove_space() (D8(b)). */
	ext4_zero_partial(f, off, end - off);
	return 0;
}

/* ext4_zero_range() */
static int ext4_zero(struct fm_file *f, int mode, int64_t off, int64_t len)
{
	int64_t bs = f->bs, end = off + len;
	int64_t start = (off + bs - 1) & ~(bs - 1), rend = end & ~(bs - 1);
	int64_t new_size = 0;
	int pb = (off & (bs - 1)) != 0, pe = (end & (bs - 1)) != 0;
	int err = ensure(f, (end + bs - 1) / bs);

	if (err)
		return err;
	if (!(mode & KEEP) && end > f->size)
		new_size = end;
	/* Preallocate the range including the unaligned edges. */
	if (pb || pe)
		alloc_range(f, off / bs, (end + bs - 1) / bs);
	/* Interior: EXT4_GET_BLOCKS_CONVERT_UNWRITTEN turns data to unwritten
	 * and allocates holes unwritten. */
	for (int64_t i = start / bs; i < rend / bs; i++) {
		f->st[i] = RM_UNWRITTEN;
		f->may[i] = RM_UNWRITTEN;
	}
	zero_bytes(f, off, end);
	if (new_size > f->size)
		f->size = new_size;
	if (pb || pe)
		ext4_zero_partial(f, off, len);
	return 0;
}

/* ext4_fallocate() mode 0 / KEEP_SIZE */
static int ext4_alloc(struct fm_file *f, int mode, int64_t off, int64_t len)
{
	int64_t bs = f->bs, end = off + len;
	int err = ensure(f, (end + bs - 1) / bs);

	if (err)
		return err;
	alloc_range(f, off / bs, (end + bs - 1) / bs);
	if (!(mode & KEEP) && end > f->size)
		f->size = end;
	return 0;
}

/* ext4_collapse_range() */
static int ext4_collapse(struct fm_file *f, int64_t off, int64_t len)
{
	if ((off | len) & (f->bs - 1))	/* IS_ALIGNED(offset | len, cluster) */
		return -EINVAL;
	if (off + len >= f->size)	/* "effectively a truncate" */
		return -EINVAL;
	/* Remove [off, off+len) and shift every later extent, those past
	 * EOF included (ext4_ext_shift_extents(..., SHIFT_LEFT)). */
	shift_left(f, off / f->bs, len / f->bs);
	f->size -= len;
	return 0;
}

/* ext4_insert_range() */
static int ext4_insert(struct fm_file *f, int64_t off, int64_t len)
{
	if ((off | len) & (f->bs - 1))
		return -EINVAL;
	if (len > f->maxbytes - f->size)	/* "maximum file size would be exceeded" */
		return -EFBIG;
	if (off >= f->size)			/* "Offset must be less than i_size" */
		return -EINVAL;
	int64_t n = len / f->bs;
	int64_t need = last_nontail(f) + n;
	if (need < gup(f, f->size + len))
		need = gup(f, f->size + len);
	int err = ensure(f, need);
	if (err)
		return err;
	shift_right(f, off / f->bs, n);
	f->size += len;
	return 0;
}

/* xfs_free_file_space(): unmap whole blocks (also past EOF), then zero
 * the partial ones inside EOF with xfs_zero_range(), which skips holes
 * and unwritten extents and so changes no state. */
static void xfs_free_space(struct fm_file *f, int64_t off, int64_t len)
{
	int64_t a = gup(f, off), b = gdown(f, off + len);

	if (b > a)
		hole_range(f, a, b);
	zero_bytes(f, off, off + len);
}

static int64_t xfs_aligned(const struct fm_file *f, int64_t off, int64_t len)
{
	/* xfs_is_falloc_aligned(); the bytes profile lifts the rule. */
	if (f->profile == RM_PROFILE_BYTES)
		return 1;
	return !((off | len) & (f->bs - 1));
}

/* xfs_prepare_shift() -> xfs_free_eofblocks(): post-EOF blocks are freed
 * unless the file has XFS_DIFLAG_PREALLOC, in which case only delalloc
 * reservations go (and those are already only latitude here). */
static void xfs_trim_eof(struct fm_file *f)
{
	if (!f->xfs_prealloc)
		free_from(f, gup(f, f->size), f->size);
}

/* xfs_file_fallocate(); also the bytes profile (XFS rules, byte granule). */
static int xfs_fallocate(struct fm_file *f, int mode, int64_t off, int64_t len)
{
	int64_t end = off + len;
	int err;

	if (mode & PUNCH) {
		err = ensure(f, gup(f, end));
		if (err)
			return err;
		xfs_free_space(f, off, len);
		return 0;
	}
	if (mode & COLL) {
		if (!xfs_aligned(f, off, len))
			return -EINVAL;
		if (end >= f->size)
			return -EINVAL;
		/* xfs_collapse_file_space(): free, trim EOF blocks, shift. */
		xfs_trim_eof(f);
		shift_left(f, gdown(f, off), len / f->g);
		f->size -= len;
		/* then xfs_vn_setattr_size(new_size < old): xfs_setattr_size()
		 * truncates every block past the new EOF. */
		free_from(f, gup(f, f->size), f->size);
		return 0;
	}
	if (mode & INS) {
		if (!xfs_aligned(f, off, len))
			return -EINVAL;
		if (f->maxbytes - f->size < len)
			return -EFBIG;
		if (off >= f->size)
			return -EINVAL;
		/* The size grows first (xfs_vn_setattr_size()), then
		 * xfs_insert_file_space() -> xfs_prepare_shift() trims the
		 * blocks past the *new* EOF, then shifts. */
		int64_t n = len / f->g;
		f->size += len;
		xfs_trim_eof(f);
		int64_t need = last_nontail(f) + n;
		if (need < gup(f, f->size))
			need = gup(f, f->size);
		err = ensure(f, need);
		if (err) {
			f->size -= len;
			return err;
		}
		shift_right(f, gdown(f, off), n);
		return 0;
	}
	/* allocate / zero / unshare */
	err = ensure(f, gup(f, end));
	if (err)
		return err;
	int64_t new_size = (!(mode & KEEP) && end > f->size) ? end : 0;
	if (mode & ZERO)
		xfs_free_space(f, off, len);
	/* xfs_reflink_unshare() is a no-op without reflink; then
	 * xfs_alloc_file_space() runs for unshare too. */
	alloc_range(f, gdown(f, off), gup(f, end));
	f->xfs_prealloc = true;
	if (new_size)
		f->size = new_size;
	return 0;
}

int fm_fallocate(struct fm_file *f, int mode, int64_t off, int64_t len)
{
	/* vfs_fallocate(), in its order. */
	if (off < 0 || len <= 0)
		return -EINVAL;
	if (mode & ~VFS_SUPPORTED)
		return -EOPNOTSUPP;
	if ((mode & (PUNCH | ZERO)) == (PUNCH | ZERO))
		return -EOPNOTSUPP;
	if ((mode & PUNCH) && !(mode & KEEP))
		return -EOPNOTSUPP;
	if ((mode & COLL) && (mode & ~COLL))
		return -EINVAL;
	if ((mode & INS) && (mode & ~INS))
		return -EINVAL;
	if ((mode & UNSH) && (mode & ~(UNSH | KEEP)))
		return -EINVAL;
	if (len > INT64_MAX - off || off + len > f->maxbytes)	/* "wrap through zero too" */
		return -EFBIG;

	if (f->profile == RM_PROFILE_EXT4) {
		/* ext4_fallocate(): no UNSHARE. */
		if (mode & ~(KEEP | PUNCH | COLL | ZERO | INS))
			return -EOPNOTSUPP;
		if (mode & PUNCH)
			return ext4_punch(f, off, len);
		if (mode & COLL)
			return ext4_collapse(f, off, len);
		if (mode & INS)
			return ext4_insert(f, off, len);
		if (mode & ZERO)
			return ext4_zero(f, mode, off, len);
		return ext4_alloc(f, mode, off, len);
	}
	return xfs_fallocate(f, mode, off, len);
}

/* ---- queries ---------------------------------------------------------- */

int64_t fm_lseek(const struct fm_file *f, int64_t off, int whence)
{
	/* iomap_seek_data() / iomap_seek_hole() with a cold page cache:
	 * unwritten extents count as holes. */
	if (whence != RM_SEEK_DATA && whence != RM_SEEK_HOLE)
		return -EINVAL;
	if (off < 0 || off >= f->size)
		return -ENXIO;
	for (int64_t i = gdown(f, off); i * f->g < f->size; i++) {
		/* An FM_DIRTY (M4) granule is data only while its page is
		 * cached; the cold-cache answer treats it as a hole, as
		 * rm_lseek() does since M4 is no longer pending (D-DT9), and
		 * rm_lseek_ok() accepts both. */
		int data = st_at(f, i) == RM_DATA;
		int64_t pos = i * f->g > off ? i * f->g : off;
		if (whence == RM_SEEK_DATA && data)
			return pos;
		if (whence == RM_SEEK_HOLE && !data)
			return pos;
	}
	return whence == RM_SEEK_DATA ? -ENXIO : f->size;
}

int64_t fm_fiemap(const struct fm_file *f, int64_t start, int64_t len,
		  struct rm_extent *ext, size_t max)
{
	uint64_t ulen = (uint64_t)len, ustart = (uint64_t)start;
	uint64_t maxb = (uint64_t)f->maxbytes;
	int64_t n = 0;

	/* fiemap_prep() */
	if (ulen == 0)
		return -EINVAL;
	if (ustart >= maxb)
		return -EFBIG;
	if (ulen > maxb || maxb - ulen < ustart)
		ulen = maxb - ustart;
	int64_t lo = gdown(f, start);
	int64_t hi_b = (int64_t)(ustart + ulen);
	int64_t hi = hi_b / f->g + (hi_b % f->g != 0);
	if (hi > f->cap)
		hi = f->cap;
	for (int64_t i = lo; i < hi;) {
		unsigned s = f->st[i];
		int64_t j = i + 1;
		if (s == RM_HOLE) {
			i++;
			continue;
		}
		while (j < hi && f->st[j] == s)
			j++;
		if ((size_t)n < max) {
			ext[n].logical = i * f->g;
			ext[n].length = (j - i) * f->g;
			ext[n].flags = s == RM_UNWRITTEN ? RM_FIEMAP_UNWRITTEN : 0;
		}
		n++;
		i = j;
	}
	/* iomap_fiemap(): FIEMAP_EXTENT_LAST on the last extent reported. */
	if (n > 0 && (size_t)(n - 1) < max)
		ext[n - 1].flags |= RM_FIEMAP_LAST;
	return n;
}

/* State and may-mask of any granule, and the next granule where they may
 * change. */
static void granule(const struct fm_file *f, int64_t i, unsigned *st, unsigned *may,
		    int64_t *next)
{
	if (i < f->cap) {
		*st = f->st[i];
		*may = f->may[i] & RM_ANY;
		*next = i + 1;
		return;
	}
	*st = RM_HOLE;
	*may = may_beyond(f, i);
	*next = (f->tail_may != RM_HOLE && i < f->tail_end) ? f->tail_end : INT64_MAX;
}

size_t fm_walk(const struct fm_file *f, int64_t start, int64_t end,
	       struct rm_run *out, size_t max)
{
	size_t n = 0;
	int64_t i = gdown(f, start), lim = gup(f, end);

	while (i < lim) {
		unsigned s, m, s2, m2;
		int64_t j, k;
		granule(f, i, &s, &m, &j);
		while (j < lim) {
			granule(f, j, &s2, &m2, &k);
			if (s2 != s || m2 != m)
				break;
			j = k;
		}
		if (j > lim)
			j = lim;
		int64_t ro = i * f->g > start ? i * f->g : start;
		int64_t re = j * f->g < end ? j * f->g : end;
		if (n < max) {
			out[n].off = ro;
			out[n].len = re - ro;
			out[n].state = s;
			out[n].may = m;
		}
		n++;
		i = j;
	}
	return n;
}

int64_t fm_map_end(const struct fm_file *f)
{
	int64_t e = 0;
	if (f->tail_may != RM_HOLE && f->tail_end > f->cap)
		e = f->tail_end > INT64_MAX / f->g ? INT64_MAX : f->tail_end * f->g;
	for (int64_t i = f->cap; i > 0 && e == 0; i--)
		if (f->st[i - 1] != RM_HOLE || (f->may[i - 1] & RM_ANY) != RM_HOLE)
			e = i * f->g;
	return e;
}

uint64_t fm_hash(const struct fm_file *f)
{
	return XXH3_64bits(f->size ? (const void *)f->data : (const void *)"", (size_t)f->size);
}

int64_t fm_alloc_bytes(const struct fm_file *f)
{
	int64_t n = 0;

	for (int64_t i = 0; i < f->cap; i++)
		if (f->st[i] != RM_HOLE)
			n += f->g;
	return n;
}
