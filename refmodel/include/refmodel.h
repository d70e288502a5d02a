/* SPDX-License-Identifier: MIT */
/*
 * refmodel.h - extent-map reference model of Linux 6.1 file semantics.
 *
 * One struct rm_file models one regular file on ext4 or XFS as Linux 6.1
 * ships them: its size, its bytes, and the state of every logical block
 * (hole, unwritten, written).  Every operation returns what the kernel
 * returns: a count or 0 on success, a negative errno on failure, checked
 * in the same order as the kernel checks it (the implementation cites the
 * kernel function each rule comes from).  A failed operation changes
 * nothing, except where the kernel itself changes something before failing
 * (ext4 insert range whose shift would pass EXT_MAX_BLOCKS: -EINVAL with
 * i_size already grown by len, as ext4_insert_range() leaves it).
 *
 * Where a correct file system has latitude (XFS speculative preallocation,
 * delayed allocation, ext4's zero-out of small unwritten extents, what a
 * partial-block punch or zero leaves allocated) the model keeps, per block,
 * the set of FIEMAP states a correct kernel may report: the "may" mask of
 * struct rm_run.  The state it reports itself ("state") is always in that
 * set.  Data is never latitude: bytes, size and errno are exact.
 * "state" is what FIEMAP shows after write-back (FIEMAP_FLAG_SYNC, or
 * fsync first): a block written by pwrite is exactly RM_DATA.  A block
 * opened by insert range, freed by a full-block punch, truncate or
 * collapse is exactly RM_HOLE.  The may-mask rules (M1 XFS speculative
 * preallocation, M3 ext4 zero-out around converted unwritten blocks, M4
 * ext4 zeroed-and-dirtied partial unwritten blocks) are listed with their
 * kernel functions at the top of src/ops.c.  What FIEMAP shows before
 * write-back (dirty page-cache blocks, delayed allocation) is a second
 * view, rm_walk_cached() below (rules W1-W13 in refmodel/RULES.md).
 *
 * Cost: the map is a piece table in an augmented balanced tree (a treap,
 * see src/internal.h) keyed by implicit byte offset, so insert, collapse,
 * punch, zero, write and read cost O(log n + k) expected for n extents and
 * k extents touched.  Stored bytes
 * never move on insert or collapse.  There is no global mutable state:
 * files are independent and a file may be used by one thread at a time
 * (callers serialise, as the kernel's inode lock does).
 */
#ifndef RANGESHIFT_REFMODEL_H
#define RANGESHIFT_REFMODEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* fallocate(2) mode bits, as in <linux/falloc.h> (kept here so the model
 * does not depend on the build host's headers). */
#define RM_FALLOC_FL_KEEP_SIZE		0x01
#define RM_FALLOC_FL_PUNCH_HOLE		0x02
#define RM_FALLOC_FL_NO_HIDE_STALE	0x04
#define RM_FALLOC_FL_COLLAPSE_RANGE	0x08
#define RM_FALLOC_FL_ZERO_RANGE		0x10
#define RM_FALLOC_FL_INSERT_RANGE	0x20
#define RM_FALLOC_FL_UNSHARE_RANGE	0x40

/* lseek(2) whence values the model answers (same numbers as Linux). */
#define RM_SEEK_SET	0
#define RM_SEEK_CUR	1
#define RM_SEEK_END	2
#define RM_SEEK_DATA	3
#define RM_SEEK_HOLE	4

enum rm_profile {
	RM_PROFILE_EXT4 = 0,	/* ext4, extents, 4.x+ defaults */
	RM_PROFILE_XFS = 1,	/* XFS v5, reflink=1 (rm_clone_range()), no rtdev */
	RM_PROFILE_BYTES = 2,	/* extension: byte-granular insert/collapse/punch/zero */
};

/* Block states, as bits so that a set of allowed states is a mask. */
#define RM_HOLE		0x1u	/* no block: FIEMAP shows nothing */
#define RM_UNWRITTEN	0x2u	/* allocated, reads as zeros: FIEMAP_EXTENT_UNWRITTEN */
#define RM_DATA		0x4u	/* allocated and written (or delalloc): a plain extent */
#define RM_ANY		(RM_HOLE | RM_UNWRITTEN | RM_DATA)
/* Cached view only (rm_walk_cached()): dirty page-cache blocks whose
 * allocation is delayed (ext4 delalloc, XFS delayed allocation): FIEMAP
 * without FIEMAP_FLAG_SYNC shows FIEMAP_EXTENT_DELALLOC|UNKNOWN. */
#define RM_DELALLOC	0x8u
#define RM_ANY_CACHED	(RM_ANY | RM_DELALLOC)

/* Which kernel's behaviour the model copies where kernels differ (rules
 * that changed between releases, and the kernel's known errata). */
enum rm_kernel {
	RM_KERNEL_6_1 = 0,	/* Debian linux-source-6.1 (the default) */
	RM_KERNEL_6_12 = 1,	/* Debian linux-source-6.12 */
};

struct rm_opts {
	enum rm_profile profile;
	uint32_t blocksize;	/* power of two, 512..65536; 0 means 4096 */
	int64_t maxbytes;	/* s_maxbytes; 0 means the profile's own */
	enum rm_kernel kernel;	/* 0 (RM_KERNEL_6_1) unless set */
	int strict;		/* 1: intended semantics, no kernel errata */
	/* 1: every write is written back at once, so no block is ever dirty
	 * (the cached view equals the after-write-back one).  0 (default):
	 * writes leave dirty page-cache blocks that rm_walk_cached() and
	 * rm_dirty_bytes() see until write-back; rm_walk() and every other
	 * call answer as after write-back either way.  The bytes profile is
	 * always write-through. */
	int write_through;
};

struct rm_file;

/* One run of blocks (bytes, in the bytes profile) with one state and one
 * may-mask.  Runs returned by rm_walk() are maximal: two adjacent runs never
 * have both the same state and the same may-mask. */
struct rm_run {
	int64_t off;		/* byte offset, block aligned except in bytes profile */
	int64_t len;		/* bytes */
	unsigned state;		/* exactly one of RM_HOLE, RM_UNWRITTEN, RM_DATA */
	unsigned may;		/* states a correct kernel may report; includes state */
};

/* One FIEMAP extent, as struct fiemap_extent reports it (no physical
 * address: the model has no disk). */
#define RM_FIEMAP_LAST		0x0001u	/* FIEMAP_EXTENT_LAST */
#define RM_FIEMAP_UNKNOWN	0x0002u	/* FIEMAP_EXTENT_UNKNOWN (with DELALLOC) */
#define RM_FIEMAP_DELALLOC	0x0004u	/* FIEMAP_EXTENT_DELALLOC */
#define RM_FIEMAP_UNWRITTEN	0x0800u	/* FIEMAP_EXTENT_UNWRITTEN */
struct rm_extent {
	int64_t logical;	/* bytes */
	int64_t length;		/* bytes */
	uint32_t flags;		/* RM_FIEMAP_* */
};

struct rm_stats {
	int64_t size;		/* i_size */
	int64_t alloc_bytes;	/* bytes in allocated blocks (for st_blocks) */
	int64_t data_bytes;	/* bytes held in stored buffers (memory use) */
	size_t nodes;		/* tree nodes (extents of the piece table) */
	int depth;		/* tree height */
	uint64_t fsyncs;	/* fsync calls recorded */
	uint64_t ops;		/* operations applied (successful or not) */
};

/* Create an empty file.  -EINVAL for a bad block size or profile,
 * -ENOMEM on allocation failure.  *out untouched on error. */
int rm_file_new(const struct rm_opts *opts, struct rm_file **out);
void rm_file_free(struct rm_file *f);
/* Deep copy (shares immutable data buffers by reference count). */
int rm_file_clone(const struct rm_file *f, struct rm_file **out);

int64_t rm_size(const struct rm_file *f);
uint32_t rm_blocksize(const struct rm_file *f);
enum rm_profile rm_profile_of(const struct rm_file *f);
int64_t rm_maxbytes(const struct rm_file *f);
enum rm_kernel rm_kernel_of(const struct rm_file *f);
int rm_strict(const struct rm_file *f);

/* Known kernel errata: places where a kernel departs from the intended
 * semantics and the model copies it unless rm_opts.strict is set
 * (refmodel/ERRATA.md has each one's evidence).  The table is keyed by
 * profile and kernel, so an erratum fixed in a later kernel names only the
 * kernels it applies to. */
enum rm_erratum_id {
	/* ext4_insert_range() grows i_size before ext4_ext_shift_extents()
	 * refuses to move the last extent past EXT_MAX_BLOCKS: the failing
	 * insert (-EINVAL) leaves the file longer by len */
	RM_ERRATUM_EXT4_INSERT_EINVAL_GROWS_SIZE = 0,
	/* xfs_iomap_write_unwritten() computes the new size of a direct
	 * write into holes or unwritten extents as the end of its last block,
	 * 2^63 (negative as xfs_fsize_t) for the block below MAX_LFS_FILESIZE,
	 * and then updates neither size: the write succeeds, the size stays */
	RM_ERRATUM_XFS_DIO_WRITE_AT_2_63_KEEPS_SIZE = 1,
	/* iomap_dio_iter() fails a direct read with -EIO on a delalloc
	 * mapping, also one wholly beyond EOF that the read never returns:
	 * speculative preallocation split from the dirty range (a punch or
	 * zero range past EOF) is not converted by the read's write-back */
	RM_ERRATUM_XFS_DIO_READ_DELALLOC_PAST_EOF_EIO = 2,
	RM_ERRATUM_COUNT
};

#define RM_KERNEL_BIT(k)	(1u << (unsigned)(k))

struct rm_erratum {
	enum rm_erratum_id id;
	const char *name;	/* stable short name, as in ERRATA.md */
	enum rm_profile profile;
	unsigned kernels;	/* RM_KERNEL_BIT() of every kernel it applies to */
	const char *upstream;	/* upstream status, with its sources */
	const char *tests;	/* the rule tests that pin it (default and strict) */
	const char *summary;	/* one line: kernel behaviour vs intended */
};

/* The whole table (RM_ERRATUM_COUNT entries, indexed by id). */
const struct rm_erratum *rm_errata(size_t *n);
/* 1 when f copies erratum id (profile and kernel match, not strict), else 0;
 * an unknown id is never active. */
int rm_erratum_active(const struct rm_file *f, enum rm_erratum_id id);
/* Default s_maxbytes of a profile at a block size (ext4_max_size() for ext4,
 * MAX_LFS_FILESIZE for XFS and bytes). */
int64_t rm_profile_maxbytes(enum rm_profile p, uint32_t blocksize);
/* "ext4" / "xfs" / "bytes" <-> enum; parse returns -EINVAL if unknown. */
const char *rm_profile_name(enum rm_profile p);
int rm_profile_parse(const char *name, enum rm_profile *out);
/* Versioned profile names: "ext4-6.1", "xfs-6.1", "ext4-6.12", "xfs-6.12",
 * and "bytes" (no kernel: it follows no file system).  parse2 also takes
 * the plain "ext4" and "xfs", which mean 6.1; it sets *kernel to 6.1 for
 * "bytes".  -EINVAL (outputs untouched) for anything else.  name2 gives the
 * versioned name ("bytes" for the bytes profile whatever the kernel). */
int rm_profile_parse2(const char *name, enum rm_profile *profile, enum rm_kernel *kernel);
const char *rm_profile_name2(enum rm_profile p, enum rm_kernel k);
/* "6.1" / "6.12" ("?" for another value). */
const char *rm_kernel_name(enum rm_kernel k);
/* The version at the start of a Linux release string (uname -r, or a
 * version in a range such as "6.12.118 - 6.15"): "6.18.44-fc" -> {6, 18,
 * 44}; the components read, 2 or 3 (a missing third is 0), with *end (if
 * not NULL) after the last; -EINVAL when no "MAJOR.MINOR" starts s or a
 * component is over 100000.  The one parser of releases: difftest's
 * known-difference ranges and rm_kernel_from_release() use it. */
int rm_release_version(const char *s, int v[3], const char **end);
/* The model kernel for a Linux release string (uname -r): "6.1.x" -> 6.1,
 * "6.12.x" -> 6.12, 0; another release -> the nearest of the two (before
 * 6.12: 6.1) and 1, so the caller can say the choice is an approximation;
 * -EINVAL when no "MAJOR.MINOR" can be read (*out untouched). */
int rm_kernel_from_release(const char *release, enum rm_kernel *out);

/* pwrite(2): bytes written, or -errno.  Short write when off+len passes
 * s_maxbytes (generic_write_checks_count), -EFBIG when off >= s_maxbytes,
 * -EINVAL for off < 0 (ksys_pwrite64). */
ssize_t rm_pwrite(struct rm_file *f, const void *buf, size_t len, int64_t off);
/* pread(2): bytes read (short at EOF, 0 past it), or -errno. */
ssize_t rm_pread(const struct rm_file *f, void *buf, size_t len, int64_t off);
/* ftruncate(2). */
int rm_truncate(struct rm_file *f, int64_t size);
/* fsync(2): recorded, no data effect.  It ends the write-back latitude of
 * blocks holding dirty data over unwritten extents inside EOF (they become
 * exactly RM_DATA); O(extents). */
int rm_fsync(struct rm_file *f);
/* fallocate(2) with any mode, validated in vfs_fallocate()'s order, then as
 * the profile's file system validates it (ext4_fallocate(), xfs_file_fallocate()). */
int rm_fallocate(struct rm_file *f, int mode, int64_t off, int64_t len);
/* The checks vfs_fallocate() makes before calling the file system, in its
 * order, for a super block with this s_maxbytes: 0 or -errno.  rm_fallocate()
 * starts with it; a tester of a stacked file system (FUSE: s_maxbytes is
 * MAX_LFS_FILESIZE whatever the server's) calls it with that layer's limit. */
int rm_vfs_fallocate_check(int mode, int64_t off, int64_t len, int64_t maxbytes);
/* The same for the given kernel's vfs_fallocate() (rm_vfs_fallocate_check()
 * is this for 6.1).  6.12 answers every mode combination it refuses with
 * -EOPNOTSUPP, where 6.1 gave -EINVAL for some. */
int rm_vfs_fallocate_check_k(enum rm_kernel k, int mode, int64_t off, int64_t len,
			     int64_t maxbytes);
/* lseek(2) SEEK_DATA / SEEK_HOLE: the offset, or -ENXIO (off < 0 or off >=
 * size), -EINVAL for another whence.  The answer is the one a file system
 * with a cold page cache gives: unwritten blocks count as holes, except
 * unwritten blocks holding not yet written-back data, which are data. */
int64_t rm_lseek(const struct rm_file *f, int64_t off, int whence);
/* Is `result` (an offset or a negative errno) a legitimate answer of a
 * correct kernel to lseek(off, whence)?  Unwritten blocks may count as data
 * when their pages are cached (mapping_seek_hole_data()), and may-masks
 * apply.  Returns 1 yes, 0 no. */
int rm_lseek_ok(const struct rm_file *f, int64_t off, int whence, int64_t result);
/* A byte range [start, end). */
struct rm_span {
	int64_t start, end;
};
/* rm_lseek_ok() with more latitude: inside the spans (sorted, disjoint) a
 * hole may count as data too.  XFS reports a CoW fork extent over a data
 * fork hole as unwritten, so that iomap probes the page cache there
 * (xfs_seek_iomap_begin()); the caller knows where CoW staging may be
 * (difftest: cowlat.c).  rm_lseek_ok() is this with no spans. */
int rm_lseek_ok_lat(const struct rm_file *f, int64_t off, int whence, int64_t result,
		    const struct rm_span *lat, size_t nlat);

/* ioctl(dst, FICLONERANGE, {src, soff, len, doff}) (src/clone.c): 0 or
 * -errno.  -EXDEV when the two files are not of one file system (profile,
 * block size or s_maxbytes differ), -EOPNOTSUPP unless the profile is XFS
 * (reflink=1, the mkfs.xfs default; ext4 and FUSE have no
 * ->remap_file_range in 6.1), then the -EINVAL/-EFBIG rules of
 * generic_remap_checks() (block-aligned offsets, a length that is block
 * aligned or ends at the source EOF, no overlap within one file, len 0 =
 * to the source EOF).  The destination blocks take the source's bytes and
 * states (written stays written, holes and unwritten blocks become holes
 * unless both blocks are unwritten, xfs_reflink_remap_extent()); the size
 * becomes max(size, doff + len).  src may be dst. */
int rm_clone_range(struct rm_file *dst, const struct rm_file *src,
		   int64_t soff, int64_t doff, int64_t len);

/* O_DIRECT pwrite(2) / pread(2) (src/dio.c, RULES.md O1-O5).  align is
 * the device's logical block size (statx()'s dio_offset_align; 0 means
 * 512, 1 means no alignment rule, as FUSE has none).  XFS refuses a write
 * whose offset or length is not a multiple of it (-EINVAL, nothing
 * changed); ext4 fails it with -EINVAL after allocating unwritten blocks
 * over the first mapping's holes (latitude); a read fails with -EINVAL
 * only when a misaligned edge lies in a written block.  A successful
 * write is rm_pwrite() whose blocks are then exactly written and clean
 * (no write-back latitude); both write the range back first, as
 * rm_writeback() (a read only when it starts before EOF).  rm_dio_pread() answers by the blocks' states;
 * rm_dio_pread_ok() says whether `result` is an answer a correct kernel
 * may give (either, where an edge block's may-set has written and
 * unwritten or hole). */
ssize_t rm_dio_pwrite(struct rm_file *f, const void *buf, size_t len, int64_t off,
		      uint32_t align);
ssize_t rm_dio_pread(struct rm_file *f, void *buf, size_t len, int64_t off,
		     uint32_t align);
int rm_dio_pread_ok(const struct rm_file *f, int64_t off, size_t len, uint32_t align,
		    int64_t result);

/* copy_file_range(2) of len bytes from src at soff to dst at doff (flags 0)
 * (src/copy.c, RULES.md X1-X3): bytes copied, possibly short, or -errno.
 * On XFS a block-aligned request is cloned (rm_clone_range()) and may be
 * shortened to whole blocks; otherwise the bytes are copied through the
 * page cache (written data, zeros over the source's holes, dirty until
 * write-back as rm_pwrite()); the clone writes both ranges back first
 * (rm_clone_range_wb()).
 * RM_COPY_NO_REMAP: the file system cannot remap (FUSE over an xfs
 * profile): always the page-cache copy. */
#define RM_COPY_NO_REMAP	0x1u
ssize_t rm_copy_file_range(struct rm_file *dst, struct rm_file *src,
			   int64_t soff, int64_t doff, uint64_t len, unsigned flags);

/* FIDEDUPERANGE from src [soff, soff+len) to one destination dst at doff
 * (src/copy.c, RULES.md X4-X7).  Returns the ioctl's answer (0 or
 * -errno: -EOPNOTSUPP unless XFS, -EINVAL for a bad source range); on 0,
 * *status is the destination's status (RM_DEDUPE_SAME, RM_DEDUPE_DIFFERS
 * or -errno) and *bytes its bytes_deduped.  Both ranges are written back
 * before the bytes are compared (__generic_remap_file_range_prep()). */
#define RM_DEDUPE_SAME		0	/* FILE_DEDUPE_RANGE_SAME */
#define RM_DEDUPE_DIFFERS	1	/* FILE_DEDUPE_RANGE_DIFFERS */
int rm_dedupe_range(struct rm_file *dst, struct rm_file *src, int64_t soff,
		    int64_t doff, int64_t len, int64_t *bytes, int *status);

/* FIEMAP of [start, start+len) rounded out to blocks: fills up to max
 * extents (allocated extents only, adjacent extents of one state merged,
 * extents past EOF included, clipped to the range, RM_FIEMAP_LAST on the
 * last extent of the range as iomap_fiemap() sets it, i.e. the file's last
 * extent for a whole-file query) and returns the number of extents that
 * exist in the range (which may exceed max, as fm_mapped_extents does with
 * fm_extent_count 0), or -errno: start and len are read as the ioctl's
 * __u64 fm_start and fm_length, so -EINVAL for len 0, -EFBIG for start >=
 * s_maxbytes (or negative), a length past s_maxbytes (or negative) is
 * clamped to it (fiemap_prep()).  ext may be NULL when max is 0. */
int64_t rm_fiemap(const struct rm_file *f, int64_t start, int64_t len,
		  struct rm_extent *ext, size_t max);

/* Walk the full map of [start, end), holes included, block by block runs
 * with may-masks, calling fn for each maximal run.  end may exceed the size
 * (blocks past EOF are reported too).  Stops and returns fn's value if fn
 * returns nonzero; returns 0 otherwise, or -errno for a bad range. */
typedef int (*rm_run_fn)(void *ctx, const struct rm_run *run);
int rm_walk(const struct rm_file *f, int64_t start, int64_t end,
	    rm_run_fn fn, void *ctx);
/* End of the last allocated or may-allocated block (>= size when blocks
 * past EOF exist).  Useful as the `end` of a whole-file walk. */
int64_t rm_map_end(const struct rm_file *f);

/* ---- Write-back: the cached view (refmodel/RULES.md W1-W13) ----
 *
 * Every call above answers as after write-back (what FIEMAP_FLAG_SYNC
 * shows).  Besides, each block knows whether its pages are dirty in the
 * page cache (or under write-back I/O), and what FIEMAP without
 * FIEMAP_FLAG_SYNC shows until write-back completes: a dirty block over a
 * hole is a delayed allocation (RM_DELALLOC), over an unwritten extent
 * still unwritten, over a written extent written.  The kernel may start
 * write-back by itself at any time (memory pressure, the flusher threads),
 * so the cached may-set of a dirty block always allows the states that
 * write-back passes through and ends in (unwritten at submission on both
 * file systems, then written).  SEEK_DATA/SEEK_HOLE answer the same in
 * both views (page-cache data counts as data: ext4_seek_data() via
 * iomap_seek_data() with ext4_iomap_report_ops, xfs_seek_iomap_begin()),
 * so rm_lseek() and rm_lseek_ok() serve both. */

/* rm_walk() as FIEMAP without FIEMAP_FLAG_SYNC sees the map now: state is
 * one of RM_HOLE, RM_UNWRITTEN, RM_DATA, RM_DELALLOC and may a subset of
 * RM_ANY_CACHED that includes it.  Runs are maximal as rm_walk()'s. */
int rm_walk_cached(const struct rm_file *f, int64_t start, int64_t end,
		   rm_run_fn fn, void *ctx);
/* rm_fiemap() of the cached view: delayed allocations are extents with
 * RM_FIEMAP_DELALLOC|RM_FIEMAP_UNKNOWN (iomap_to_fiemap() for
 * IOMAP_DELALLOC), the rest as rm_fiemap().  Same errors. */
int64_t rm_fiemap_cached(const struct rm_file *f, int64_t start, int64_t len,
			 struct rm_extent *ext, size_t max);
/* Write back [off, off+len) (len 0: to the end of the file) and wait, as
 * filemap_write_and_wait_range() does: its dirty and in-flight blocks
 * reach the after-write-back state, and the write-back latitude of blocks
 * written over unwritten extents there (inside EOF) ends, as rm_fsync()
 * ends it for the whole file.  0, or -EINVAL for off < 0 or len < 0. */
int rm_writeback(struct rm_file *f, int64_t off, int64_t len);
/* fdatasync(2): the whole file, as rm_fsync() (file_write_and_wait_range()
 * from ext4_sync_file() / xfs_file_fsync()). */
int rm_fdatasync(struct rm_file *f);
/* sync_file_range(2), with ksys_sync_file_range()'s checks and order:
 * -EINVAL for unknown flags, off < 0, off + len < 0 or wrapping; len 0
 * means to the end of the file.  WAIT_BEFORE waits for write-back already
 * under way in the range (file_fdatawait_range()); WRITE starts write-back
 * of the dirty blocks (__filemap_fdatawrite_range(): allocation happens at
 * submission, so their delayed allocations become unwritten extents, and
 * they stay in flight until a wait); WAIT_AFTER waits again.  Only WRITE
 * starts write-back. */
#define RM_SYNC_FILE_RANGE_WAIT_BEFORE	1
#define RM_SYNC_FILE_RANGE_WRITE	2
#define RM_SYNC_FILE_RANGE_WAIT_AFTER	4
int rm_sync_file_range(struct rm_file *f, int64_t off, int64_t len, unsigned flags);
/* Bytes in blocks whose pages are dirty (not counting blocks whose
 * write-back I/O is in flight).  O(extents). */
int64_t rm_dirty_bytes(const struct rm_file *f);
/* A write through a shared writable mmap of the file: the bytes of buf at
 * off, and every block of each touched page up to EOF becomes dirty and
 * allocated as by a write (ext4_page_mkwrite() -> block_page_mkwrite(),
 * iomap_page_mkwrite(); zeros where nothing was written).  The mapping
 * cannot grow the file: -EFAULT when a touched page lies wholly past EOF
 * (the process would get SIGBUS), bytes past EOF inside the last page are
 * dropped (the kernel zeroes them at write-back); -EINVAL for off < 0.
 * Returns len, or -errno with nothing changed. */
ssize_t rm_mwrite(struct rm_file *f, const void *buf, size_t len, int64_t off);
/* FICLONERANGE as rm_clone_range(), which cannot write back its const
 * source: this one also writes back both ranges where
 * __generic_remap_file_range_prep() does (after generic_remap_checks(),
 * before generic_remap_check_len()), and the destination range as
 * xfs_reflink_remap_prep() flushes it (xfs_flush_unmap_range()).
 * With rm_clone_range(), call rm_writeback(src, soff, len) first. */
int rm_clone_range_wb(struct rm_file *dst, struct rm_file *src,
		      int64_t soff, int64_t doff, int64_t len);

/* XXH3-64 of the bytes in [off, off+len) clipped to the size (whole file:
 * rm_hash(f, 0, INT64_MAX)).  Zero runs are streamed from a small static
 * buffer, never allocated; the cost is O(bytes hashed), so hash sub-ranges
 * of files near s_maxbytes. */
uint64_t rm_hash(const struct rm_file *f, int64_t off, int64_t len);

/* Statistics of the whole file: O(n) in its runs (it counts them and the
 * stored bytes); per-operation callers use the two below. */
void rm_stats(const struct rm_file *f, struct rm_stats *st);
/* rm_stats()'s alloc_bytes in O(1) (the tree's augmentation keeps it):
 * what a server accounts after every write. */
int64_t rm_alloc_bytes(const struct rm_file *f);
/* rm_stats()'s nodes (the model's runs) in O(n / 8): one visit per tree
 * node, not per run. */
size_t rm_runs(const struct rm_file *f);

/* Integrity check of every invariant: tree order, balance and
 * augmentation, no overlap or gap, profile alignment of allocation
 * boundaries, buffer reference counts, size and stats consistent.
 * Returns 0, or -EUCLEAN and writes a description into msg (if non-NULL). */
int rm_check(const struct rm_file *f, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif /* RANGESHIFT_REFMODEL_H */
