/* SPDX-License-Identifier: MIT */
/*
 * ops.c - Linux 6.1 semantics of librefmodel: every file operation with its
 * errno checks in kernel order, and the may-mask rules (where a correct
 * ext4 or XFS may report other FIEMAP states than the model's own).
 * Each rule cites the 6.1 function it comes from (tree mechanics: tree.c);
 * where 6.12 differs (rm_opts.kernel, refmodel/RULES.md K1-K3) the code
 * cites the 6.12 function too.
 *
 * Conventions.  "Block" is the file system block (f->bs); allocation-state
 * boundaries are block aligned in the ext4/xfs profiles and byte aligned in
 * the bytes profile (f->ab is the unit).  Content past i_size is always
 * zero (truncate zeroes the tail of the last block, writes past EOF leave
 * zeros), so operations that move or expose post-EOF blocks expose zeros.
 * State (what a file system with no latitude reports, after FIEMAP_FLAG_SYNC)
 * is exact; `may` widens it only where the kernel code has latitude:
 *
 *  M1 xfs: extending buffered write leaves speculative preallocation past
 *     the new EOF: hole blocks in [ru(end), spec_end) may be anything
 *     (xfs_buffered_write_iomap_begin() with eof && offset+count > isize,
 *     sized by xfs_iomap_prealloc_size()).  They keep that latitude when
 *     truncate-up or a later write brings them inside EOF (xfs_setattr_size()
 *     and xfs_file_write_checks() only zero them through iomap_zero_range()).
 *  (no M2: xfs_free_eofblocks() frees only delalloc past EOF on inodes
 *     with XFS_DIFLAG_PREALLOC, which xfs_alloc_file_space() sets, so
 *     KEEP_SIZE blocks past EOF are never dropped; real post-EOF blocks of
 *     other inodes come only from M1 preallocation, already RM_ANY)
 *  M3 ext4: converting unwritten blocks (a write touching them, or the
 *     write-back of an M4 block) may zero out unwritten blocks of the same
 *     contiguous unwritten run within max_zeroout (s_extent_max_zeroout_kb
 *     = 32 KiB) on either side: ext4_ext_convert_to_initialized() ->
 *     ext4_ext_zeroout() (the path without dioread_nolock, and always for
 *     block size < PAGE_SIZE).  State UNWRITTEN, may gains DATA.
 *  M4 ext4: a partial-block zeroing of an unwritten block (punch and zero
 *     range edges via ext4_zero_partial_blocks(), the truncate tail via
 *     ext4_block_truncate_page()) maps the unwritten buffer
 *     (_ext4_get_block()), zeroes and dirties it in
 *     __ext4_block_zero_page_range(), so write-back may convert it to
 *     written: UNWRITTEN|DATA.  (XFS: iomap_zero_iter() skips unwritten.)
 *  M5 both: a buffered write over an unwritten block leaves the extent
 *     unwritten until write-back (ext4_da_map_blocks() maps it unwritten;
 *     xfs_buffered_write_iomap_begin() returns IOMAP_UNWRITTEN; conversion
 *     in ext4_end_io / xfs_end_ioend()): state DATA, may DATA|UNWRITTEN,
 *     marked MAY_PENDING (M4 blocks are not: D-DT9).  rm_fsync() settles
 *     pending blocks inside EOF to exactly DATA.  For lseek a pending block
 *     is data (its dirty page cannot be evicted before write-back).
 *  Never latitude: written blocks are always allocated (DATA, or UNWRITTEN
 *  only while M5-pending); blocks freed by a full-block punch, truncate,
 *  collapse, or opened by insert are exactly HOLE; bytes, size and errno
 *  are exact.  Content is never latitude.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack: no allocation */
#include <xxhash.h>

#define MAX_RW_COUNT ((int64_t)(0x7fffffff & ~4095))	/* INT_MAX & PAGE_MASK */
#define PAGE_SZ 4096
#define XFS_ALLOCSIZE 65536	/* default m_allocsize_blocks * blocksize */

/* ---------- small functions ---------- */

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
static int64_t RD(const struct rm_file *f, int64_t x) { return rdown(x, f->ab); }
static int64_t RU(const struct rm_file *f, int64_t x) { return rup(x, f->ab); }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Replace [s, e) of the open range by one segment. */
static void set_range(struct rm_file *f, struct rop *x, int64_t s, int64_t e,
		      unsigned kind, unsigned may, struct rm_buf *buf, int64_t boff)
{
	s = max64(s, x->a);
	e = min64(e, x->b);
	if (s >= e)
		return;
	size_t i, j;
	v_cut2(f, x, s, e, &i, &j);
	struct segvec *v = &f->vec;
	for (size_t k = i; k < j; k++)
		v_drop_seg(&v->v[k]);
	struct seg n = { .len = e - s, .kind = (uint8_t)kind, .may = (uint8_t)may };
	if (kind == K_DATA) {
		n.buf = buf;
		n.boff = (uint32_t)boff;
		buf->refs++;
	}
	v->v[i] = n;
	memmove(v->v + i + 1, v->v + j, (v->n - j) * sizeof(*v->v));
	v->n -= j - i - 1;
}

/* Remove [s, e) from the vector (collapse). */
static void v_remove(struct rm_file *f, struct rop *x, int64_t s, int64_t e)
{
	size_t i, j;
	v_cut2(f, x, s, e, &i, &j);
	struct segvec *v = &f->vec;
	for (size_t k = i; k < j; k++)
		v_drop_seg(&v->v[k]);
	memmove(v->v + i, v->v + j, (v->n - j) * sizeof(*v->v));
	v->n -= j - i;
}

/* Overwrite [s, e) with bytes of buf (buf offset 0 at s), keeping each
 * segment's may-mask. */
static void v_write_data(struct rm_file *f, struct rop *x, int64_t s, int64_t e,
			 struct rm_buf *buf)
{
	size_t i, j;
	v_cut2(f, x, s, e, &i, &j);
	int64_t p = s;
	for (size_t k = i; k < j; k++) {
		struct seg *g = &f->vec.v[k];
		v_drop_seg(g);
		g->kind = K_DATA;
		g->buf = buf;
		g->boff = (uint32_t)(p - s);
		buf->refs++;
		p += g->len;
	}
}

typedef void (*seg_fn)(struct seg *s, unsigned arg);

static void for_range(struct rm_file *f, struct rop *x, int64_t s, int64_t e,
		      seg_fn fn, unsigned arg)
{
	s = max64(s, x->a);
	e = min64(e, x->b);
	if (s >= e)
		return;
	size_t i, j;
	v_cut2(f, x, s, e, &i, &j);
	for (size_t k = i; k < j; k++)
		fn(&f->vec.v[k], arg);
}

static void fn_zero_bytes(struct seg *s, unsigned arg)
{
	(void)arg;
	if (s->kind == K_DATA) {
		v_drop_seg(s);
		s->kind = K_ZERO;
	}
}
/* W9: zeroing part of a written block dirties it
 * (__ext4_block_zero_page_range() mark_buffer_dirty(), iomap_zero_iter()
 * through iomap_write_end()) */
static void fn_dirty(struct seg *s, unsigned arg)
{
	(void)arg;
	if (s->kind == K_ZERO || s->kind == K_DATA)
		s->wb |= WB_DIRTY;
}
/* W1: the write-back state a buffered write (or a write fault) leaves on a
 * block, from the block before it: over a hole a delayed allocation
 * (ext4_da_write_begin() -> ext4_da_get_block_prep() -> ext4_da_map_blocks()
 * reserves EXTENT_STATUS_DELAYED; xfs_buffered_write_iomap_begin() adds a
 * delalloc extent with xfs_bmapi_reserve_delalloc()), over an unwritten
 * extent still unwritten until write-back converts it, over a written block
 * written; a block already dirty or in flight keeps what it shows. */
static uint8_t wb_after_write(const struct seg *s)
{
	if (s->kind == K_HOLE)
		return WB_DIRTY | WB_DELALLOC;
	if (s->kind == K_UNWRITTEN)
		return (uint8_t)(WB_DIRTY | WB_UNWR | (s->may & RM_HOLE ? WB_MAYDELALLOC : 0));
	return (uint8_t)(s->wb | WB_DIRTY);
}
/* pwrite: every touched block becomes written (see rm_pwrite()). */
static void fn_write_prep(struct seg *s, unsigned arg)
{
	(void)arg;
	s->wb = wb_after_write(s);
	if (s->kind == K_UNWRITTEN) {
		s->kind = K_ZERO;
		s->may = RM_DATA | RM_UNWRITTEN | MAY_PENDING;
	} else if (s->kind == K_HOLE) {
		s->kind = K_ZERO;
		s->may = RM_DATA;
	} else if (!(s->may & MAY_PENDING)) {
		s->may = RM_DATA;
	}
}
static void fn_or_may_unwritten(struct seg *s, unsigned may)
{
	if (seg_may_unwritten(s))
		s->may |= (uint8_t)may;
}
static void fn_or_may_hole(struct seg *s, unsigned may)
{
	if (s->kind == K_HOLE)
		s->may |= (uint8_t)may;
}
/* Allocate unwritten over holes; afterwards every block in range is
 * allocated, so HOLE leaves the may-set (ext4_alloc_file_blocks(),
 * xfs_alloc_file_space()). */
static void fn_alloc(struct seg *s, unsigned arg)
{
	(void)arg;
	/* W5: allocating under a delayed allocation makes it an unwritten
	 * extent at once, its pages still dirty (ext4_alloc_file_blocks() ->
	 * ext4_map_blocks(EXT4_GET_BLOCKS_CREATE_UNWRIT_EXT) allocates where
	 * the on-disk tree has a hole; xfs_alloc_file_space() ->
	 * xfs_bmapi_write(XFS_BMAPI_PREALLOC) converts the delalloc extent,
	 * xfs_bmapi_allocate() making it XFS_EXT_UNWRITTEN) */
	if (s->wb & WB_DELALLOC)
		s->wb = (uint8_t)((s->wb & ~WB_DELALLOC) | WB_UNWR);
	s->wb &= (uint8_t)~WB_MAYDELALLOC;
	if (s->kind == K_HOLE) {
		s->kind = K_UNWRITTEN;
		s->may = (uint8_t)((s->may & ~RM_HOLE) | RM_UNWRITTEN);
	} else {
		s->may &= (uint8_t)~RM_HOLE;
		s->may |= (uint8_t)kind_state(s->kind);
	}
}

/* M3 (ext4_ext_convert_to_initialized(), ext4_ext_zeroout()): when blocks
 * [s, e) of an unwritten run are converted, unwritten blocks of the same
 * run within max_zeroout on either side may be zeroed out and written.
 * The open range must reach zo past each end the run may cross
 * (ext4_zo_widen()). */
static int64_t ext4_zo(const struct rm_file *f)
{
	/* s_extent_max_zeroout_kb = 32; 0 for blocks larger than 32 KiB */
	return f->profile == RM_PROFILE_EXT4 ? (32 * 1024 / f->bs) * f->bs : 0;
}

/* back / fwd: the first / last block of [s, e) was unwritten before the
 * conversion.  zero_ex1/zero_ex2 lie inside the extent that holds the
 * converted range ([ee_block, ee_block + ee_len)), so a run is widened
 * only on a side where the edge block belongs to it (D6(b)). */
static void ext4_m3(struct rm_file *f, struct rop *x, int64_t s, int64_t e,
		    bool back, bool fwd)
{
	int64_t zo = ext4_zo(f);
	if (!zo)
		return;
	int64_t q = x->base, ls = s, re = e;
	size_t i = 0;
	for (; i < f->vec.n && q + f->vec.v[i].len <= s; i++)
		q += f->vec.v[i].len;
	int64_t qq = q;
	for (size_t k = i; k-- > 0;) {
		if (!seg_may_unwritten(&f->vec.v[k]))
			break;
		qq -= f->vec.v[k].len;
		ls = qq;
	}
	for (; i < f->vec.n && q < e; i++)
		q += f->vec.v[i].len;
	for (size_t k = i; k < f->vec.n; k++) {
		if (!seg_may_unwritten(&f->vec.v[k]))
			break;
		q += f->vec.v[k].len;
		re = q;
	}
	if (back)
		for_range(f, x, max64(ls, s - zo), s, fn_or_may_unwritten, RM_DATA);
	if (fwd)
		for_range(f, x, e, min64(re, sat_add(e, zo)), fn_or_may_unwritten, RM_DATA);
}

/* Kind of the block containing pos (allocation states are block uniform). */
static unsigned blk_kind(struct rm_file *f, struct rop *x, int64_t pos)
{
	struct seg *s = v_at(f, x, pos, NULL);
	return s ? s->kind : K_HOLE;
}

/* Whether the block containing pos is unwritten, or a hole that may be
 * (seg_may_unwritten()). */
static bool blk_may_unwritten(struct rm_file *f, struct rop *x, int64_t pos)
{
	struct seg *s = v_at(f, x, pos, NULL);
	return s && seg_may_unwritten(s);
}

/* Widen the open range [x->a, x->b), before any edit, by the M3 window on
 * each side where an unwritten run may cross the edge: back / fwd say
 * whether the operation may convert blocks at the start / end of the
 * range.  Blocks outside the edited range keep their kind during the
 * operation (ext4_m3() only adds may bits), so a run reaches past x->a
 * only if the block before it is unwritten now, and then only as far as
 * the unwritten segments before x->a go (likewise past x->b); opening
 * the whole window would flatten and rebuild up to 2 * 32 KiB of
 * untouched segments that the scans of ext4_m3() never reach.  On
 * failure the range is closed (the file is unchanged). */
static int ext4_zo_widen(struct rm_file *f, struct rop *x, bool back, bool fwd)
{
	int64_t zo = ext4_zo(f);
	if (!zo)
		return 0;
	int64_t lo = x->a, hi = x->b;
	if (back && lo > 0 && blk_may_unwritten(f, x, lo - 1))
		lo = max64(0, lo - zo);
	if (fwd && blk_may_unwritten(f, x, hi))
		hi = sat_add(hi, zo);
	if (lo == x->a && hi == x->b)
		return 0;
	int err = rop_extend_run(f, x, lo, hi, seg_may_unwritten);
	if (err)
		rop_close(f, x);
	return err;
}

/* rop_open() plus the M3 window where it is needed */
static int ext4_zo_open(struct rm_file *f, int64_t lo, int64_t hi, bool back, bool fwd,
			struct rop *x)
{
	int err = rop_open(f, lo, hi, x);
	return err ? err : ext4_zo_widen(f, x, back, fwd);
}

/* Free every block wholly past the (new) size: xfs_itruncate_extents()
 * from xfs_setattr_size(), ext4_truncate() from ext4_setattr().  The tail
 * of the last block is zeroed (ext4_block_truncate_page(),
 * xfs_truncate_page()); its allocation state does not change. */
static void zero_partial(struct rm_file *f, struct rop *x, int64_t s, int64_t e);

static int xfs_zeroed_folio(struct rm_file *f, int64_t pos, int64_t size);

static int free_past_eof(struct rm_file *f, int64_t ns)
{
	int64_t T = tree_len(f->root);
	int64_t lo = RD(f, ns), e = RU(f, ns), hi = max64(T, e);
	if (lo >= hi)
		return 0;
	struct rop x;
	/* [e, hi) becomes a hole: no run crosses hi */
	int err = ext4_zo_open(f, lo, hi, true, false, &x);
	if (err)
		return err;
	set_range(f, &x, e, hi, K_HOLE, RM_HOLE, NULL, 0);
	/* ext4_block_truncate_page() / xfs_truncate_page() zero the tail of
	 * the last block; on ext4 an unwritten last block gets M4 */
	if (ns < e)
		zero_partial(f, &x, ns, e);
	rop_close(f, &x);
	/* D-DT11: xfs_truncate_page() dirties the page of the new EOF block
	 * (xfs_setattr_size() writes it back when it zeroed) */
	return ns < e ? xfs_zeroed_folio(f, ns, f->size) : 0;
}

/* ---------- creation ---------- */

int64_t rm_profile_maxbytes(enum rm_profile p, uint32_t blocksize)
{
	if (p == RM_PROFILE_EXT4) {
		/* ext4_max_size(): 32-bit logical block numbers, huge_file */
		int bits = __builtin_ctz(blocksize ? blocksize : 4096);
		return (int64_t)(((1ULL << 32) - 1) << bits);
	}
	return INT64_MAX;	/* MAX_LFS_FILESIZE on 64-bit */
}

const char *rm_profile_name(enum rm_profile p)
{
	switch (p) {
	case RM_PROFILE_EXT4: return "ext4";
	case RM_PROFILE_XFS: return "xfs";
	case RM_PROFILE_BYTES: return "bytes";
	}
	return "?";
}

int rm_profile_parse(const char *name, enum rm_profile *out)
{
	static const char *const n[] = { "ext4", "xfs", "bytes" };
	for (int i = 0; i < 3; i++)
		if (name && strcmp(name, n[i]) == 0) {
			*out = (enum rm_profile)i;
			return 0;
		}
	return -EINVAL;
}

static const char *const versioned_names[2][2] = {
	[RM_KERNEL_6_1] = { [RM_PROFILE_EXT4] = "ext4-6.1", [RM_PROFILE_XFS] = "xfs-6.1" },
	[RM_KERNEL_6_12] = { [RM_PROFILE_EXT4] = "ext4-6.12", [RM_PROFILE_XFS] = "xfs-6.12" },
};

const char *rm_profile_name2(enum rm_profile p, enum rm_kernel k)
{
	if ((p == RM_PROFILE_EXT4 || p == RM_PROFILE_XFS) &&
	    (k == RM_KERNEL_6_1 || k == RM_KERNEL_6_12))
		return versioned_names[k][p];
	return rm_profile_name(p);
}

int rm_profile_parse2(const char *name, enum rm_profile *profile, enum rm_kernel *kernel)
{
	enum rm_profile p;

	if (!name)
		return -EINVAL;
	if (rm_profile_parse(name, &p) == 0) {	/* plain names: 6.1 */
		*profile = p;
		*kernel = RM_KERNEL_6_1;
		return 0;
	}
	for (int k = RM_KERNEL_6_1; k <= RM_KERNEL_6_12; k++)
		for (int i = RM_PROFILE_EXT4; i <= RM_PROFILE_XFS; i++)
			if (!strcmp(name, versioned_names[k][i])) {
				*profile = (enum rm_profile)i;
				*kernel = (enum rm_kernel)k;
				return 0;
			}
	return -EINVAL;
}

const char *rm_kernel_name(enum rm_kernel k)
{
	switch (k) {
	case RM_KERNEL_6_1: return "6.1";
	case RM_KERNEL_6_12: return "6.12";
	}
	return "?";
}

int rm_release_version(const char *s, int v[3], const char **end)
{
	int n = 0;

	v[0] = v[1] = v[2] = 0;
	while (s && n < 3 && *s >= '0' && *s <= '9') {
		long k = strtol(s, (char **)&s, 10);
		if (k > 100000)
			return -EINVAL;
		v[n++] = (int)k;
		if (*s != '.' || s[1] < '0' || s[1] > '9')
			break;
		s++;
	}
	if (end)
		*end = s;
	return n >= 2 ? n : -EINVAL;
}

int rm_kernel_from_release(const char *release, enum rm_kernel *out)
{
	int v[3];

	if (rm_release_version(release, v, NULL) < 0)
		return -EINVAL;
	int major = v[0], minor = v[1];
	if (major == 6 && minor == 1) {
		*out = RM_KERNEL_6_1;
		return 0;
	}
	if (major == 6 && minor == 12) {
		*out = RM_KERNEL_6_12;
		return 0;
	}
	/* nearest of the two: 6.7 and later are closer to 6.12 */
	*out = major > 6 || (major == 6 && minor >= 7) ? RM_KERNEL_6_12 : RM_KERNEL_6_1;
	return 1;
}

int rm_file_new(const struct rm_opts *opts, struct rm_file **out)
{
	struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = 4096 };
	if (opts)
		o = *opts;
	if (!o.blocksize)
		o.blocksize = 4096;
	if (o.blocksize < 512 || o.blocksize > 65536 || (o.blocksize & (o.blocksize - 1)))
		return -EINVAL;
	if ((unsigned)o.profile > RM_PROFILE_BYTES || o.maxbytes < 0 ||
	    (unsigned)o.kernel > RM_KERNEL_6_12 || (o.strict != 0 && o.strict != 1) ||
	    (o.write_through != 0 && o.write_through != 1))
		return -EINVAL;
	struct rm_file *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->profile = o.profile;
	f->bs = o.blocksize;
	f->ab = o.profile == RM_PROFILE_BYTES ? 1 : o.blocksize;
	f->maxbytes = o.maxbytes ? o.maxbytes : rm_profile_maxbytes(o.profile, o.blocksize);
	f->kernel = o.kernel;
	f->strict = o.strict;
	f->write_through = o.write_through || o.profile == RM_PROFILE_BYTES;
	f->rng = 0x9E3779B97F4A7C15ULL;	/* fixed seed: deterministic shapes */
	*out = f;
	return 0;
}

void rm_file_free(struct rm_file *f)
{
	if (!f)
		return;
	tree_free(NULL, f->root);	/* drops buffer references */
	slabs_free(f);
	free(f->vec.v);
	free(f->stk);
	free(f);
}

int rm_file_clone(const struct rm_file *f, struct rm_file **out)
{
	struct rm_file *c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = *f;
	c->freelist = NULL;
	c->nfree = 0;
	c->slabs = NULL;
	c->vec = (struct segvec){ 0 };
	c->stk = NULL;
	c->stkcap = 0;
	c->root = NULL;
	int err = tree_clone(c, f->root, &c->root);
	if (err) {
		rm_file_free(c);
		return err;
	}
	*out = c;
	return 0;
}

int64_t rm_size(const struct rm_file *f) { return f->size; }
uint32_t rm_blocksize(const struct rm_file *f) { return (uint32_t)f->bs; }
enum rm_profile rm_profile_of(const struct rm_file *f) { return f->profile; }
int64_t rm_maxbytes(const struct rm_file *f) { return f->maxbytes; }
enum rm_kernel rm_kernel_of(const struct rm_file *f) { return f->kernel; }
int rm_strict(const struct rm_file *f) { return f->strict; }

/* ---------- pwrite / pread / truncate / fsync ---------- */

static int write_core(struct rm_file *f, struct rm_buf *b, int64_t off, int64_t n,
		      int64_t a, int64_t e);

/* D-DT11: XFS in 6.1 with blocks smaller than the page keeps no per-block
 * dirty state (iomap's came with 6.6): iomap_write_end() dirties the whole
 * folio, and iomap_writepage_map() writes every uptodate block of it
 * inside EOF, so an unwritten block of a dirty page is written with zeros
 * and converted (xfs_end_ioend()) when an earlier read brought it into the
 * cache; holes are skipped (xfs_map_blocks() returns IOMAP_HOLE), except
 * on a reflink inode: xfs_map_blocks() looks the CoW fork up first, and a
 * reservation there (the cowextsize hint rounds them out, W13) may cover a
 * hole of the data fork, which is then written through the CoW fork and
 * remapped (xfs_reflink_end_cow()).  Whether the block was read is the
 * page cache's business, so it is latitude. */
static bool xfs_small_folio(const struct rm_file *f)
{
	return f->profile == RM_PROFILE_XFS && f->kernel == RM_KERNEL_6_1 && f->bs < PAGE_SZ &&
	       !f->write_through;
}

/* The unwritten blocks of the pages around the dirty blocks [a, e), inside
 * an EOF of size, may be written; on a reflink inode their holes too. */
static int xfs_folio_unwritten(struct rm_file *f, int64_t a, int64_t e, int64_t size)
{
	int64_t eof = RU(f, size);
	int64_t r[2][2] = { { rdown(a, PAGE_SZ), min64(a, eof) },
			    { e, min64(rup(e, PAGE_SZ), eof) } };
	for (int k = 0; k < 2; k++) {
		if (r[k][0] >= r[k][1])
			continue;
		struct rop x;
		int err = rop_open(f, r[k][0], r[k][1], &x);
		if (err)
			return err;
		for_range(f, &x, r[k][0], r[k][1], fn_or_may_unwritten, RM_DATA);
		if (f->xfs_reflink)
			for_range(f, &x, r[k][0], r[k][1], fn_or_may_hole, RM_DATA);
		rop_close(f, &x);
	}
	return 0;
}

/* Whether the block holding pos is written, or may be: an unwritten
 * block D-DT11 may have written holds DATA in its may-set. */
static bool blk_may_written(const struct rm_file *f, int64_t pos)
{
	struct it it;
	it_init(&it, f->root, pos);
	bool w = it_valid(&it) && (it.cur->s.kind == K_ZERO || it.cur->s.kind == K_DATA ||
				   (it.cur->s.may & RM_DATA));
	it_done(&it);
	return w;
}

/* D-DT11 for iomap_zero_range() of part of the block holding pos: it
 * skips holes and unwritten blocks and dirties the folio of a written one
 * (iomap_zero_iter() -> iomap_write_end()).  A block D-DT11 may have
 * written is zeroed and dirtied too in that case, which zero_partial()
 * cannot mark (it marks the written ones), so its page gets the latitude
 * here, after the op has made its own unwritten blocks. */
static int xfs_zeroed_folio(struct rm_file *f, int64_t pos, int64_t size)
{
	if (!xfs_small_folio(f) || !blk_may_written(f, pos))
		return 0;
	return xfs_folio_unwritten(f, RD(f, pos), sat_add(RD(f, pos), f->ab), size);
}

/* D-DT11 for the dirty pages: the unwritten blocks, inside an EOF of
 * size, of every page that holds a dirty block of [s, e).  Before every
 * write-back (it cleans them), and over the whole file after every write,
 * fallocate and truncate: 6.1 XFS writes pages back inside many calls of its own (a
 * truncate from the on-disk size, the flushes of the shifts, punch, zero,
 * unshare, direct I/O, remaps), so a dirty page's unwritten blocks may be
 * written from the moment both are there, whatever the order they came
 * in.  O(k log n) in the k segments with write-back state. */
static int xfs_wb_folios_eof(struct rm_file *f, int64_t s, int64_t e, int64_t size)
{
	if (!xfs_small_folio(f) || !f->anywb)
		return 0;
	int64_t p = s, len;
	while (p < e && (p = tree_wb_find(f->root, p, &len)) >= 0 && p < e) {
		struct it it;
		it_init(&it, f->root, p);
		bool dirty = it_valid(&it) && (it.cur->s.wb & WB_DIRTY);
		it_done(&it);
		int64_t q = sat_add(p, len);
		if (dirty) {
			int err = xfs_folio_unwritten(f, p, q, size);
			if (err)
				return err;
		}
		p = q;
	}
	return 0;
}

/* D-DT11 for a grow from old to size: the write's xfs_file_write_checks()
 * and a truncate's xfs_setattr_size() zero from an old EOF inside a block
 * with iomap_zero_range(), which dirties that block's folio (holes and
 * unwritten blocks it skips); and the rest of the old EOF's page comes
 * inside the EOF with its dirty blocks (only that page can hold both
 * dirty blocks and blocks past the old EOF).  The after-op pass does the
 * same; an insert grows before its flush, so it needs it here. */
static int xfs_grow_folio(struct rm_file *f, int64_t old, int64_t size)
{
	int err = old % f->bs ? xfs_zeroed_folio(f, old, size) : 0;
	return err ? err : xfs_wb_folios_eof(f, rdown(old, PAGE_SZ), old, size);
}

/* D-DT11 for the partial blocks xfs_free_file_space() zeroes inside the
 * EOF it ran under (eof): those holding off and the range's last byte
 * before eof.  A block the punch freed whole is a hole, which
 * xfs_zeroed_folio() leaves alone. */
static int xfs_zeroed_edges(struct rm_file *f, int64_t off, int64_t len, int64_t eof)
{
	int64_t ze = min64(sat_add(off, len), eof);
	if (off >= ze)
		return 0;
	int err = xfs_zeroed_folio(f, off, f->size);
	return err ? err : xfs_zeroed_folio(f, ze - 1, f->size);
}

/* xfs_wb_folios_eof() under the file's own EOF. */
int xfs_wb_folios(struct rm_file *f, int64_t s, int64_t e)
{
	return xfs_wb_folios_eof(f, s, e, f->size);
}

ssize_t rm_pwrite(struct rm_file *f, const void *buf, size_t len, int64_t off)
{
	f->ops++;
	if (off < 0)			/* ksys_pwrite64() */
		return -EINVAL;
	if ((ssize_t)len < 0)		/* rw_verify_area() */
		return -EINVAL;
	if (len && (int64_t)len > INT64_MAX - off)	/* rw_verify_area(): pos+count wraps */
		return -EINVAL;
	int64_t n = (int64_t)len;
	if (n > MAX_RW_COUNT)		/* vfs_write() */
		n = MAX_RW_COUNT;
	if (n == 0)			/* generic_write_checks() */
		return 0;
	if (off >= f->maxbytes)		/* generic_write_check_limits() */
		return -EFBIG;
	if (n > f->maxbytes - off)
		n = f->maxbytes - off;

	struct rm_buf *b = malloc(sizeof(*b) + (size_t)n);
	if (!b)
		return -ENOMEM;
	b->refs = 1;
	b->len = (size_t)n;
	memcpy(b->data, buf, (size_t)n);
	int err = write_core(f, b, off, n, RD(f, off), RU(f, off + n));
	buf_put(b);	/* the segments hold their own references */
	return err ? err : n;
}

/* The bytes of b at [off, off + n) (n may be 0), the blocks [a, e) made
 * written and dirty (rm_pwrite(): the blocks the write touches;
 * rm_mwrite(): the blocks of the faulted pages).  0 or -ENOMEM. */
static int write_core(struct rm_file *f, struct rm_buf *b, int64_t off, int64_t n,
		      int64_t a, int64_t e)
{
	int64_t end = off + n, old_size = f->size;
	int64_t lo = a, hi = e, spec_end = e;
	int64_t zo = 0;
	if (f->profile == RM_PROFILE_EXT4) {
		/* M3: max_zeroout = s_extent_max_zeroout_kb >> (blkbits - 10) */
		zo = ext4_zo(f);
	} else if (f->profile == RM_PROFILE_XFS && end > old_size) {
		/* M1: p_end_fsb = XFS_ALLOC_ALIGN(end) + prealloc_blocks, with
		 * prealloc_blocks <= max(allocsize, min(2^21 blocks, 2 * the
		 * preceding extents)) (xfs_iomap_prealloc_size()); bounded here
		 * generously by twice the write end. */
		int64_t pre = max64(XFS_ALLOCSIZE, min64(f->bs << 21, sat_add(e, e)));
		spec_end = rup(sat_add(rup(end, XFS_ALLOCSIZE), pre), XFS_ALLOCSIZE);
		/* min(p_end_fsb, XFS_B_TO_FSB(s_maxbytes)): rounds up */
		spec_end = min64(spec_end, rup(f->maxbytes, f->bs));
		hi = max64(e, spec_end);
	}
	struct rop x;
	int err = rop_open(f, lo, hi, &x);
	if (err)
		return err;
	/* M3 edges, from the states before the write (D6(b)); a hole that
	 * may be unwritten (a refused direct write's, O3) counts: if it is,
	 * its conversion zeroes out as an unwritten block's does (found by
	 * the campaign's ext4:nodelalloc control, where a write converts at
	 * once) */
	bool ua = blk_may_unwritten(f, &x, a);
	bool ue = blk_may_unwritten(f, &x, e - 1);
	if (zo && (ua || ue)) {
		/* only a run holding the first / last block can be zeroed
		 * out past the write (ext4_m3() below) */
		err = ext4_zo_widen(f, &x, ua, ue);
		if (err)
			return err;
	}
	bool had_unwritten = false, may_unwritten = false;
	int64_t p = x.base;
	for (size_t i = 0; i < f->vec.n; i++) {
		const struct seg *s = &f->vec.v[i];
		if (p < e && p + s->len > a) {
			had_unwritten |= s->kind == K_UNWRITTEN;
			may_unwritten |= seg_may_unwritten(s);
		}
		p += s->len;
	}
	/* xfs_buffered_write_iomap_begin() runs once per mapping; the last
	 * one starts inside the hole holding the write's last byte, and its
	 * "eof" is: no extent at or after that offset */
	int64_t lastblk = RD(f, end - 1);
	bool eof = tree_alloc_from(x.R, 0) == 0;
	p = x.base;
	for (size_t i = 0; eof && i < f->vec.n; i++) {
		if (p + f->vec.v[i].len > lastblk && f->vec.v[i].kind != K_HOLE)
			eof = false;
		p += f->vec.v[i].len;
	}
	/* The touched blocks become written: a partial-block write into a hole
	 * or unwritten block makes the whole block written with zeros around
	 * the data (block_write_begin() / iomap_write_begin() zero the rest of
	 * a new or unwritten block).  A block that was unwritten stays
	 * unwritten on disk until write-back (ext4_da_map_blocks() maps it
	 * unwritten; xfs_buffered_write_iomap_begin() returns IOMAP_UNWRITTEN),
	 * so until rm_fsync() FIEMAP may still say UNWRITTEN. */
	for_range(f, &x, a, e, fn_write_prep, 0);
	if (n)
		v_write_data(f, &x, off, end, b);
	if (had_unwritten)
		f->pending = true;
	if (!f->write_through)
		f->anywb = true;
	if (f->profile == RM_PROFILE_EXT4 && may_unwritten && zo) {
		/* M3: the unwritten run touching the write */
		ext4_m3(f, &x, a, e, ua, ue);
	}
	if (f->profile == RM_PROFILE_XFS && end > old_size && eof)
		for_range(f, &x, e, spec_end, fn_or_may_hole, RM_ANY);	/* M1 */
	if (end > f->size)
		f->size = end;
	rop_close(f, &x);
	if (xfs_small_folio(f)) {
		err = off <= old_size ? 0 : xfs_grow_folio(f, old_size, f->size);
		return err ? err : xfs_wb_folios(f, 0, INT64_MAX);
	}
	return 0;
}

ssize_t rm_mwrite(struct rm_file *f, const void *buf, size_t len, int64_t off)
{
	f->ops++;
	if (off < 0 || (ssize_t)len < 0 || (len && (int64_t)len > INT64_MAX - off))
		return -EINVAL;
	if (len == 0)
		return 0;
	int64_t end = off + (int64_t)len;
	/* a page wholly past EOF is not in the mapping: SIGBUS
	 * (filemap_fault(): "if (unlikely(index >= max_idx)) return VM_FAULT_SIGBUS") */
	if (rdown(end - 1, PAGE_SZ) >= rup(f->size, PAGE_SZ))
		return -EFAULT;
	/* W10: the fault takes whole pages (max(block, page) when blocks are
	 * larger), up to the block holding EOF: ext4_page_mkwrite() ->
	 * block_page_mkwrite() (len = i_size & ~PAGE_MASK on the last page),
	 * iomap_page_mkwrite() (iomap_folio_mkwrite_iter() up to EOF) */
	int64_t g = max64(f->bs, PAGE_SZ);
	int64_t a = rdown(off, g), e = min64(rup(end, g), RU(f, f->size));
	int64_t dend = min64(end, f->size), n = dend > off ? dend - off : 0;
	struct rm_buf *b = malloc(sizeof(*b) + (size_t)n);
	if (!b)
		return -ENOMEM;
	b->refs = 1;
	b->len = (size_t)n;
	if (n)
		memcpy(b->data, buf, (size_t)n);
	int err = a < e ? write_core(f, b, n ? off : a, n, a, e) : 0;
	buf_put(b);
	return err ? err : (ssize_t)len;
}

/* Copy [off, off+n) of the model's content (n within the tree or zeros). */
static void read_into(const struct rm_file *f, unsigned char *dst, int64_t off, int64_t n)
{
	struct it it;
	it_init(&it, f->root, off);
	int64_t p = off, end = off + n;
	while (p < end && it_valid(&it)) {
		const struct seg *s = &it.cur->s;
		int64_t se = it.cur_start + s->len;
		int64_t c = min64(se, end) - p;
		if (s->kind == K_DATA)
			memcpy(dst + (p - off), s->buf->data + s->boff + (p - it.cur_start), (size_t)c);
		else
			memset(dst + (p - off), 0, (size_t)c);
		p += c;
		it_next(&it);
	}
	if (p < end)
		memset(dst + (p - off), 0, (size_t)(end - p));
	it_done(&it);
}

ssize_t rm_pread(const struct rm_file *f, void *buf, size_t len, int64_t off)
{
	if (off < 0)			/* ksys_pread64() */
		return -EINVAL;
	if ((ssize_t)len < 0)		/* rw_verify_area() */
		return -EINVAL;
	if (len && (int64_t)len > INT64_MAX - off)
		return -EINVAL;
	int64_t n = (int64_t)len;
	if (n > MAX_RW_COUNT)		/* vfs_read() */
		n = MAX_RW_COUNT;
	if (off >= f->size || n == 0)	/* filemap_read(): short at EOF */
		return 0;
	n = min64(n, f->size - off);
	read_into(f, buf, off, n);
	return n;
}

static int truncate_core(struct rm_file *f, int64_t size);

int rm_truncate(struct rm_file *f, int64_t size)
{
	int err = truncate_core(f, size), e2 = 0;
	/* D-DT11: xfs_setattr_size() writes back [i_disk_size, newsize)
	 * when it zeroed or the on-disk size lags (filemap_write_and_wait_range());
	 * i_disk_size is not in the model: any dirty page may have been
	 * written back here, as after any op (xfs_wb_folios()) */
	if (!err)
		e2 = xfs_wb_folios(f, 0, INT64_MAX);
	return err ? err : e2;
}

static int truncate_core(struct rm_file *f, int64_t size)
{
	f->ops++;
	if (size < 0)			/* do_sys_ftruncate() */
		return -EINVAL;
	if (size > f->maxbytes)		/* inode_newsize_ok() */
		return -EFBIG;
	if (size <= f->size) {
		/* ext4_setattr() calls ext4_truncate() even when the size does
		 * not change, "to truncate possible preallocated blocks";
		 * xfs_setattr_size() runs xfs_itruncate_extents() for
		 * newsize <= oldsize. */
		int64_t old = f->size;
		f->size = size;
		int err = free_past_eof(f, size);
		if (err) {
			f->size = old;
			return err;
		}
		return 0;
	}
	/* grow: a hole (xfs_setattr_size() zeroes via iomap_zero_range(),
	 * which leaves holes and unwritten blocks alone) */
	int64_t T = tree_len(f->root);
	int64_t old = f->size;
	f->size = size;
	if (T < size) {
		struct rop x;
		int err = rop_open(f, T, T, &x);
		if (err) {
			f->size = old;
			return err;
		}
		rop_close(f, &x);
	}
	return xfs_grow_folio(f, old, f->size);
}

static void fn_settle(struct seg *s, unsigned arg)
{
	(void)arg;
	if (s->may & MAY_PENDING) {
		if (s->kind == K_UNWRITTEN)
			s->kind = K_ZERO;	/* the zeroed page was written back */
		s->may = RM_DATA;
	}
}

/* Written back and waited for: clean; arg 1 also ends the M5 latitude. */
static void fn_clean(struct seg *s, unsigned arg)
{
	s->wb = 0;
	if (arg)
		fn_settle(s, 0);
}

/* Is there a segment with write-back state (or, with settle, M5 latitude)
 * in [s, e)?  A read-only scan, so that flushing a clean range costs no
 * tree surgery. */
static bool wb_any(const struct rm_file *f, int64_t s, int64_t e, bool settle)
{
	struct it it;
	bool any = false;
	it_init(&it, f->root, s);
	for (; it_valid(&it) && it.cur_start < e; it_next(&it))
		if (it.cur->s.wb || (settle && (it.cur->s.may & MAY_PENDING))) {
			any = true;
			break;
		}
	it_done(&it);
	return any;
}

/* Has the file dirty pages (PAGECACHE_TAG_DIRTY)?  O(log n) per segment
 * with write-back state passed over (only in-flight ones are). */
static bool wb_any_dirty(const struct rm_file *f)
{
	int64_t p = 0, len;
	while ((p = tree_wb_find(f->root, p, &len)) >= 0) {
		struct it it;
		it_init(&it, f->root, p);
		bool dirty = it_valid(&it) && (it.cur->s.wb & WB_DIRTY);
		it_done(&it);
		if (dirty)
			return true;
		p += len;
	}
	return false;
}

/* Clean the segments with write-back state in [s, e) (block aligned): in
 * place in one walk those that stay segments of their own
 * (tree_wb_clean()), by a range operation each the others, so that a
 * flush of a clean range, or of a range past the dirty blocks, costs
 * O(log n) whatever the size of the file. */
static int wb_clean_iter(struct rm_file *f, int64_t s, int64_t e)
{
	int64_t p, len;
	while (s < e && tree_wb_clean(f->root, s, e, &p, &len)) {
		int64_t a = max64(p, s), b = min64(sat_add(p, len), e);
		struct rop x;
		int err = rop_open(f, a, b, &x);
		if (err)
			return err;
		for_range(f, &x, a, b, fn_clean, 0);
		rop_close(f, &x);
		s = b;
	}
	return 0;
}

int wb_flush(struct rm_file *f, int64_t s, int64_t e, bool settle)
{
	if (f->profile == RM_PROFILE_BYTES || (!f->anywb && !(settle && f->pending)))
		return 0;
	/* filemap_write_and_wait_range() writes and waits on the pages
	 * overlapping the range; a block counts when the pages cover it */
	int64_t T = tree_len(f->root);
	s = RU(f, rdown(max64(s, 0), PAGE_SZ));
	/* a range into the last page reaches the map's end: the last block
	 * ends at 2^63, where rup() saturates (RD() of INT64_MAX would drop
	 * that block as if only partly covered) */
	e = e > INT64_MAX - PAGE_SZ ? T : min64(RD(f, rup(e, PAGE_SZ)), T);
	if (s >= e)
		return 0;
	int err = xfs_wb_folios(f, s, e);
	if (err)
		return err;
	if (!settle)
		return wb_clean_iter(f, s, e);
	if (!wb_any(f, s, e, settle))
		return 0;
	struct rop x;
	err = rop_open(f, s, e, &x);
	if (err)
		return err;
	if (settle) {
		/* M5 ends inside EOF only (ext4_writepages() stops at i_size) */
		int64_t se = min64(e, RU(f, f->size));
		for_range(f, &x, s, se, fn_clean, 1);
		for_range(f, &x, se, e, fn_clean, 0);
	} else {
		for_range(f, &x, s, e, fn_clean, 0);
	}
	rop_close(f, &x);
	return 0;
}

/* fsync(2): no data effect; write-back converts every unwritten block with
 * dirty pages inside EOF to written (ext4_writepages() stops at i_size;
 * ext4_convert_unwritten_io_end_vec(), xfs_end_ioend()), which settles the
 * MAY_PENDING latitude there.  O(n) in the extents of the file. */
int rm_fsync(struct rm_file *f)
{
	f->ops++;
	f->fsyncs++;
	return wb_all(f);
}

int wb_all(struct rm_file *f)
{
	if ((!f->pending && !f->anywb) || f->profile == RM_PROFILE_BYTES)
		return 0;
	int err = xfs_wb_folios(f, 0, INT64_MAX);
	if (err)
		return err;
	if (!f->pending) {
		err = wb_clean_iter(f, 0, INT64_MAX);
		if (!err)
			f->anywb = false;
		return err;
	}
	/* W2: file_write_and_wait_range() over the whole file (ext4_sync_file(),
	 * xfs_file_fsync()): every dirty block is written back; blocks are
	 * dirty only inside EOF (rm_check()) */
	int64_t T = tree_len(f->root), e = min64(T, RU(f, f->size));
	if (e > 0) {
		struct rop x;
		err = rop_open(f, 0, e, &x);
		if (err)
			return err;
		for_range(f, &x, 0, e, fn_clean, 1);
		rop_close(f, &x);
	}
	f->pending = T > e;
	f->anywb = false;
	return 0;
}

/* ---------- fallocate ---------- */

/* mode 0 / KEEP_SIZE (and UNSHARE on XFS, where xfs_reflink_unshare() is a
 * no-op for a file without shared extents): ext4_alloc_file_blocks() /
 * xfs_alloc_file_space() allocate unwritten blocks over holes in the
 * block-rounded range (EXT4_MAX_BLOCKS(), XFS_B_TO_FSB()). */
/*
 * W5 + M3: fallocate has just made the delayed blocks of [a, b)
 * unwritten under their dirty pages (fn_alloc()).  Their write-back then
 * converts them through ext4_ext_convert_to_initialized(), which may zero
 * out the rest of the unwritten extent within max_zeroout (M3), unless
 * dioread_nolock is on: ext4_should_dioread_nolock() write-back allocates
 * unwritten and converts at I/O completion
 * (ext4_convert_unwritten_extents()), which splits without zeroing.
 * 6.1's ext4_set_def_opts() sets dioread_nolock by default only for blocks
 * of the page size, so smaller blocks get the latitude (measured in QEMU,
 * 6.1, 1 KiB blocks: "pwrite -S 0xa0 1085440 3; falloc 1085440 2048;
 * sync" leaves block 1061 written); 6.12 sets it for every block size up
 * to the page size.
 */
static bool ext4_w5_zeroout(const struct rm_file *f)
{
	return f->profile == RM_PROFILE_EXT4 && f->kernel == RM_KERNEL_6_1 && f->bs < PAGE_SZ;
}

/* The first run [*s, *e) of dirty blocks over unwritten ones (W5) in
 * [p, b) of the open range; false when there is none. */
static bool next_w5_run(const struct rm_file *f, const struct rop *x, int64_t p, int64_t b,
			int64_t *s, int64_t *e)
{
	int64_t q = x->base;

	*s = -1;
	*e = p;
	for (size_t i = 0; i < f->vec.n && q < b; q += f->vec.v[i].len, i++) {
		const struct seg *g = &f->vec.v[i];
		bool w5 = (g->wb & WB_UNWR) && (g->kind == K_DATA || g->kind == K_ZERO);

		if (q + g->len <= p)
			continue;
		if (!w5 && *s >= 0)
			break;
		if (w5) {
			*s = *s < 0 ? max64(q, p) : *s;
			*e = min64(q + g->len, b);
		}
	}
	return *s >= 0;
}

/* M3 around each such run of [a, b); ext4_m3() may split segments, so the
 * next run is looked up afresh */
static void ext4_w5_m3(struct rm_file *f, struct rop *x, int64_t a, int64_t b)
{
	int64_t s, e;

	for (int64_t p = a; p < b && next_w5_run(f, x, p, b, &s, &e); p = e)
		ext4_m3(f, x, s, e, true, true);
}

static int do_alloc(struct rm_file *f, int mode, int64_t off, int64_t len)
{
	int64_t end = off + len;
	struct rop x;
	int64_t a = RD(f, off), b = RU(f, end);
	bool w5 = ext4_w5_zeroout(f) && f->anywb;
	/* with w5 the open range also holds the M3 window around [a, b) */
	int err = w5 ? ext4_zo_open(f, a, b, true, true, &x) : rop_open(f, a, b, &x);
	if (err)
		return err;
	for_range(f, &x, a, b, fn_alloc, 0);
	if (w5)
		ext4_w5_m3(f, &x, a, b);
	if (!(mode & RM_FALLOC_FL_KEEP_SIZE) && end > f->size)
		f->size = end;	/* ext4: new_size = offset + len, even unaligned */
	rop_close(f, &x);
	return 0;
}

/* Zero the bytes of [s, e) that lie in partial block blk_start; ext4 also
 * widens an unwritten block to UNWRITTEN|DATA (M4). */
static void zero_partial(struct rm_file *f, struct rop *x, int64_t s, int64_t e)
{
	if (s >= e)
		return;
	/* bend saturates at INT64_MAX for the block that ends at 2^63 */
	int64_t bstart = rdown(s, f->bs), bend = bstart + min64(f->bs, INT64_MAX - bstart);
	unsigned k = blk_kind(f, x, bstart);
	if (k == K_ZERO || k == K_DATA) {
		for_range(f, x, s, e, fn_zero_bytes, 0);
		if (!f->write_through) {
			for_range(f, x, bstart, bend, fn_dirty, 0);
			f->anywb = true;
		}
	}
	else if (k == K_UNWRITTEN && f->profile == RM_PROFILE_EXT4) {
		/* Not MAY_PENDING: fsync does not settle it.  On 6.1 the
		 * zeroed partial block of an unwritten extent is still
		 * UNWRITTEN after fsync (difftest finding D-DT9,
		 * difftest/findings/ext4-6.1-partial-fzero-stays-unwritten),
		 * while a write-back that does convert it shows DATA. */
		for_range(f, x, bstart, bend, fn_or_may_unwritten, RM_DATA);
		ext4_m3(f, x, bstart, bend, true, true);	/* its conversion may zero out */
	}
}

/* The end of an ext4 punch after the kernel's clamps, or off when the punch
 * does nothing. */
static int64_t ext4_punch_end(const struct rm_file *f, int64_t off, int64_t len)
{
	int64_t end = off + len;

	if (f->kernel == RM_KERNEL_6_12) {
		/* K2, K3: 6.12 ext4_punch_hole(): an extent-mapped file is clamped at
		 * s_maxbytes, not at the indirect-block limit, and a hole past
		 * EOF ends at round_up(i_size, PAGE_SIZE): nothing past a
		 * page-aligned EOF is punched. */
		if (off >= f->size || off >= f->maxbytes)
			return off;
		if (end > f->size)
			end = f->size > INT64_MAX - (PAGE_SZ - 1) ? INT64_MAX : rup(f->size, PAGE_SZ);
		return end > f->maxbytes ? f->maxbytes : end;
	}
	if (off >= f->size)		/* "No need to punch hole beyond i_size" */
		return off;
	if (end > f->size)		/* end after the page that contains i_size */
		end = f->size + PAGE_SZ - (f->size & (PAGE_SZ - 1));
	/* s_bitmap_maxbytes - blocksize (ext4_max_bitmap_size()) */
	int bits = __builtin_ctz((unsigned)f->bs);
	int64_t ppb = f->bs / 4;
	int64_t bm = (12 + ppb + ppb * ppb + ppb * ppb * ppb);
	int64_t maxl = (bm > (INT64_MAX >> bits)) ? INT64_MAX : (bm << bits);
	maxl -= f->bs;
	return end > maxl ? maxl : end;
}

/* ext4_punch_hole() */
static int ext4_punch(struct rm_file *f, int64_t off, int64_t len)
{
	int64_t end = ext4_punch_end(f, off, len);
	if (end < off && (off & (f->bs - 1))) {
		/* D-DT13: 6.1 past the indirect-block limit (off > max_length,
		 * off < i_size): length = max_length - offset is negative and
		 * nothing is removed, but ext4_zero_partial_blocks() still
		 * zeroes the start's partial block to its end
		 * (ext4_block_zero_page_range() turns the negative length into
		 * the rest of the block). */
		struct rop x;
		int err = ext4_zo_open(f, rdown(off, f->bs), rup(off, f->bs), true, true, &x);
		if (err)
			return err;
		zero_partial(f, &x, off, rup(off, f->bs));
		rop_close(f, &x);
		return 0;
	}
	if (end <= off)
		return 0;
	int64_t s = rup(off, f->bs), e = rdown(end, f->bs);
	struct rop x;
	int err = ext4_zo_open(f, rdown(off, f->bs), rup(end, f->bs), true, true, &x);
	if (err)
		return err;
	if (s < e) {
		/* ext4_ext_remove_space(first_block, stop_block - 1) */
		set_range(f, &x, s, e, K_HOLE, RM_HOLE, NULL, 0);
		zero_partial(f, &x, off, s);
		zero_partial(f, &x, e, end);
	} else if (s == e) {
		zero_partial(f, &x, off, s);
		zero_partial(f, &x, e, end);
	} else {
		/* within one block: ext4_zero_partial_blocks() single block */
		zero_partial(f, &x, off, end);
	}
	rop_close(f, &x);
	return 0;
}

/* xfs_free_file_space(): unmap whole blocks (past EOF too), then
 * xfs_zero_range() the partial blocks inside EOF: iomap_zero_iter() skips
 * holes and unwritten extents, so only written blocks get zeros. */
static void xfs_free_space(struct rm_file *f, struct rop *x, int64_t off, int64_t len)
{
	int64_t s = RU(f, off), e = RD(f, off + len);
	if (s < e)
		set_range(f, x, s, e, K_HOLE, RM_HOLE, NULL, 0);
	if (off >= f->size)
		return;
	int64_t ze = min64(off + len, f->size);
	if (s < e) {
		zero_partial(f, x, off, s);
		zero_partial(f, x, e, ze);
	} else {
		for (int64_t p = off; p < ze;) {
			/* min(ze, end of p's block), without forming the end of
			 * the block that holds INT64_MAX (2^63 overflows) */
			int64_t q = rdown(p, f->bs) + min64(ze - rdown(p, f->bs), f->bs);
			zero_partial(f, x, p, q);
			p = q;
		}
	}
	/* W8: zeroed up to an EOF inside a page: xfs_free_file_space()
	 * writes back from that page on (filemap_write_and_wait_range()).
	 * The blocks before x->a there were flushed clean just before
	 * (xfs_flush_unmap_range() of the page-rounded range). */
	if (ze == f->size && f->size % PAGE_SZ)
		for_range(f, x, RU(f, rdown(f->size, PAGE_SZ)), x->b, fn_clean, 0);
}

static int xfs_punch(struct rm_file *f, int64_t off, int64_t len)
{
	struct rop x;
	int err = rop_open(f, RD(f, off), RU(f, off + len), &x);
	if (err)
		return err;
	xfs_free_space(f, &x, off, len);
	rop_close(f, &x);
	return xfs_zeroed_edges(f, off, len, f->size);
}

/* Whether a block of page [p, p + PAGE_SZ) outside [s, e) is dirty. */
static bool page_dirty_outside(const struct rm_file *f, int64_t p, int64_t s, int64_t e)
{
	bool dirty = false;
	int64_t pe = p > INT64_MAX - PAGE_SZ ? INT64_MAX : p + PAGE_SZ;
	struct it it;
	it_init(&it, f->root, p);
	for (; it_valid(&it) && it.cur_start < pe && !dirty; it_next(&it)) {
		int64_t a = max64(it.cur_start, p), b = min64(it.cur_start + it.cur->s.len, pe);
		if (it.cur->s.wb && (a < s || b > e))
			dirty = true;
	}
	it_done(&it);
	return dirty;
}

/* D-DT14: with blocks smaller than the page, the whole blocks a zero range
 * made unwritten inside a page that stays dirty may be written (as zeros)
 * when that page is written back: measured in QEMU on 6.1 ext4 with
 * 1 KiB blocks (an mmap-dirtied page, then fzero of blocks inside it:
 * unwritten after the call, written after fsync). */
static int ext4_zero_dirty_pages(struct rm_file *f, int64_t s, int64_t e)
{
	/* only the pages at the two ends hold blocks outside [s, e) */
	int64_t first = rdown(s, PAGE_SZ), last = rdown(e - 1, PAGE_SZ);
	for (int64_t p = first; p <= last; p = p == first && last > first ? last : INT64_MAX) {
		if (!page_dirty_outside(f, p, s, e))
			continue;
		struct rop x;
		int64_t a = max64(p, s), b = min64(p > INT64_MAX - PAGE_SZ ? INT64_MAX : p + PAGE_SZ, e);
		int err = rop_open(f, a, b, &x);
		if (err)
			return err;
		for_range(f, &x, a, b, fn_or_may_unwritten, RM_DATA);
		rop_close(f, &x);
	}
	return 0;
}

/* ext4_zero_range() */
static int ext4_zero(struct rm_file *f, int mode, int64_t off, int64_t len)
{
	int64_t end = off + len;
	int64_t new_size = (!(mode & RM_FALLOC_FL_KEEP_SIZE) && end > f->size) ? end : 0;
	int64_t s = rup(off, f->bs), e = rdown(end, f->bs);
	bool pb = (off & (f->bs - 1)) != 0, pe = (end & (f->bs - 1)) != 0;
	struct rop x;
	int64_t lo = rdown(off, f->bs), hi = rup(end, f->bs);
	int err = ext4_zo_open(f, lo, hi, true, true, &x);
	if (err)
		return err;
	if (new_size)
		f->size = new_size;	/* ext4_alloc_file_blocks(..., new_size) */
	/* "Preallocate the range including the unaligned edges" */
	if (pb || pe)
		for_range(f, &x, lo, hi, fn_alloc, 0);
	/* interior: EXT4_GET_BLOCKS_CONVERT_UNWRITTEN makes written extents
	 * unwritten and allocates holes unwritten */
	if (s < e)
		set_range(f, &x, s, e, K_UNWRITTEN, RM_UNWRITTEN, NULL, 0);
	/* ext4_zero_partial_blocks(): the edges were just allocated, so
	 * unwritten ones get M4 */
	if (s <= e) {
		zero_partial(f, &x, off, s);
		zero_partial(f, &x, max64(e, s), end);
	} else {
		zero_partial(f, &x, off, end);
	}
	/* D-DT15 through the edge preallocation: it made the delayed blocks
	 * of the edges' pages unwritten under their dirty pages, so their
	 * write-back may zero out the unwritten blocks around them, the
	 * interior's too (QEMU, 6.1, 2 KiB blocks: "pwrite -S 0x9d 829444
	 * 43004; fzero -k 866383 10161; finsert 837632 28672" leaves blocks
	 * 424 and 425 written) */
	if (ext4_w5_zeroout(f) && f->anywb)
		ext4_w5_m3(f, &x, lo, hi);
	rop_close(f, &x);
	return s < e && f->bs < PAGE_SZ ? ext4_zero_dirty_pages(f, s, e) : 0;
}

/* xfs_file_fallocate() ZERO_RANGE: free, then preallocate the rounded range */
static int xfs_zero(struct rm_file *f, int mode, int64_t off, int64_t len)
{
	int64_t end = off + len;
	int64_t new_size = (!(mode & RM_FALLOC_FL_KEEP_SIZE) && end > f->size) ? end : 0;
	struct rop x;
	int err = rop_open(f, RD(f, off), RU(f, end), &x);
	if (err)
		return err;
	int64_t eof = f->size;
	xfs_free_space(f, &x, off, len);
	for_range(f, &x, x.a, x.b, fn_alloc, 0);
	if (new_size)
		f->size = new_size;
	rop_close(f, &x);
	return xfs_zeroed_edges(f, off, len, eof);
}

/* Collapse: drop [off, off+len) and shift the rest (including post-EOF
 * blocks) left.  ext4_collapse_range(): ext4_ext_remove_space() +
 * ext4_ext_shift_extents(SHIFT_LEFT), i_size -= len.  XFS: the size change
 * goes through xfs_vn_setattr_size() after xfs_collapse_file_space(), i.e.
 * a truncate that frees all blocks past the new EOF. */
/* The block that ends at 2^63 (MAX_LFS_FILESIZE's last block) is stored
 * one byte short: offsets are int64, so its map ends at INT64_MAX.  When a
 * collapse moves it down, it ends at 2^63 - len, a whole block again
 * (xfs_collapse_file_space() moves whole blocks): give it its last byte
 * back, in the state of the byte before it.  That byte lies past EOF
 * (i_size <= s_maxbytes = 2^63 - 1 before the shift), so it reads as zero
 * (written content: ZERO). */
static int regrow_last_byte(struct rm_file *f)
{
	struct rop x;
	int64_t T = tree_len(f->root);
	int err = rop_open(f, T - 1, T + 1, &x);
	if (err)
		return err;
	const struct seg *last = NULL;
	int64_t p = x.base;
	for (size_t k = 0; k < f->vec.n && p < T; k++) {
		last = &f->vec.v[k];
		p += last->len;
	}
	if (last) {
		unsigned kind = last->kind == K_DATA ? K_ZERO : last->kind, may = last->may;
		uint8_t wb = last->wb;	/* the block's pages are dirty as a whole */
		set_range(f, &x, T, T + 1, kind, may, NULL, 0);
		p = x.base;
		for (size_t k = 0; k < f->vec.n; p += f->vec.v[k++].len)
			if (p == T)
				f->vec.v[k].wb = wb;
	}
	rop_close(f, &x);
	return 0;
}

static int do_collapse(struct rm_file *f, int64_t off, int64_t len)
{
	struct rop x;
	int64_t T = tree_len(f->root);
	int err = rop_open(f, off, off + len, &x);
	if (err)
		return err;
	v_remove(f, &x, off, off + len);
	f->size -= len;
	rop_close(f, &x);
	if (T == INT64_MAX && f->ab > 1 && (err = regrow_last_byte(f)))
		return err;
	if (f->profile != RM_PROFILE_EXT4)
		return free_past_eof(f, f->size);
	return 0;
}

/* Insert: open a hole of len at off, everything after moves right,
 * stored bytes untouched (ext4_insert_range(): ext4_ext_shift_extents(
 * SHIFT_RIGHT) over all extents incl. past EOF; xfs_insert_file_space()). */
static int do_insert(struct rm_file *f, int64_t off, int64_t len)
{
	struct rop x;
	int64_t T = tree_len(f->root), lim = INT64_MAX - len;
	int64_t ne = RU(f, sat_add(f->size, len));
	if (f->profile != RM_PROFILE_EXT4 && !f->xfs_prealloc && T > ne) {
		/* xfs_prepare_shift(), after the size grew: for an inode
		 * without XFS_DIFLAG_PREALLOC, xfs_can_free_eofblocks() holds
		 * and xfs_free_eofblocks() frees every block past the new EOF
		 * (only M1 speculative latitude can be there), D8(a). */
		int err = rop_open(f, ne, T, &x);
		if (err)
			return err;
		set_range(f, &x, ne, T, K_HOLE, RM_HOLE, NULL, 0);
		rop_close(f, &x);
		T = tree_len(f->root);
	}
	if (T > lim) {
		/* Blocks past EOF would shift beyond INT64_MAX (only speculative
		 * preallocation or KEEP_SIZE blocks near MAX_LFS_FILESIZE): drop
		 * them.  The kernel would refuse such a shift
		 * (xfs_bmap_can_insert_extents(), ext4 cannot get there with its
		 * 16 TiB s_maxbytes); this is a documented model limitation.
		 * A block that lands exactly below 2^63 stays, stored one byte
		 * short like any block that ends there (regrow_last_byte()):
		 * cut at the first block that would end past 2^63, or at the
		 * last byte of one that ends at it (lim + 1 cannot overflow:
		 * len >= 1; i_size + len <= s_maxbytes keeps EOF below the
		 * cut). */
		int64_t cut = rdown(lim + 1, f->ab);
		if (cut == lim + 1)
			cut = lim;
		cut = max64(cut, f->size);
		int err = rop_open(f, cut, T, &x);
		if (err)
			return err;
		v_remove(f, &x, cut, T);
		rop_close(f, &x);
	}
	int err = rop_open(f, off, off, &x);
	if (err)
		return err;
	size_t i = v_cut(f, &x, off);
	struct segvec *v = &f->vec;
	memmove(v->v + i + 1, v->v + i, (v->n - i) * sizeof(*v->v));
	v->n++;
	v->v[i] = (struct seg){ .len = len, .kind = K_HOLE, .may = RM_HOLE };
	f->size += len;
	rop_close(f, &x);
	return 0;
}

static bool aligned(const struct rm_file *f, int64_t off, int64_t len)
{
	/* ext4: IS_ALIGNED(offset | len, EXT4_CLUSTER_SIZE(sb));
	 * xfs: xfs_is_falloc_aligned() (allocation unit = block, no rt) */
	return ((off | len) & (f->ab - 1)) == 0;
}

/* The collapse checks ext4_collapse_range() and xfs_file_fallocate() make
 * alike: allocation-unit alignment, then "collapse must not reach EOF". */
static int checked_collapse(struct rm_file *f, int64_t off, int64_t len)
{
	if (!aligned(f, off, len))
		return -EINVAL;
	if (off + len >= f->size)
		return -EINVAL;
	int err = 0;
	if (f->profile == RM_PROFILE_EXT4) {
		/* W6: ext4_collapse_range() writes back from the page holding
		 * off to EOF (the collapsed range's own pages are dropped,
		 * truncate_pagecache(inode, ioffset)) */
		err = wb_flush(f, off, INT64_MAX, false);
	} else {
		/* W7: xfs_collapse_file_space() -> xfs_free_file_space()
		 * (6.12: its xfs_flush_unmap_range(); 6.1 flushed the range
		 * before the checks, xfs_file_fallocate()), then
		 * xfs_prepare_shift() flushes from the block before off */
		int64_t r = max64(f->bs, PAGE_SZ), p = rdown(off, r);
		err = wb_flush(f, p, off + len, false);
		if (!err)
			err = wb_flush(f, rdown(max64(RD(f, off) - f->bs, 0), r), INT64_MAX, false);
	}
	return err ? err : do_collapse(f, off, len);
}

/* K1: 6.12 vfs_fallocate(): the modes are exclusive; every refused mix is
 * -EOPNOTSUPP (PUNCH_HOLE needs KEEP_SIZE, INSERT and COLLAPSE refuse it). */
static int vfs_mode_check_612(int mode)
{
	switch (mode & ~RM_FALLOC_FL_KEEP_SIZE) {
	case 0:
	case RM_FALLOC_FL_UNSHARE_RANGE:
	case RM_FALLOC_FL_ZERO_RANGE:
		return 0;
	case RM_FALLOC_FL_PUNCH_HOLE:
		return mode & RM_FALLOC_FL_KEEP_SIZE ? 0 : -EOPNOTSUPP;
	case RM_FALLOC_FL_COLLAPSE_RANGE:
	case RM_FALLOC_FL_INSERT_RANGE:
		return mode & RM_FALLOC_FL_KEEP_SIZE ? -EOPNOTSUPP : 0;
	}
	return -EOPNOTSUPP;
}

int rm_vfs_fallocate_check(int mode, int64_t off, int64_t len, int64_t maxbytes)
{
	return rm_vfs_fallocate_check_k(RM_KERNEL_6_1, mode, off, len, maxbytes);
}

int rm_vfs_fallocate_check_k(enum rm_kernel k, int mode, int64_t off, int64_t len,
			     int64_t maxbytes)
{
	const int supported = RM_FALLOC_FL_KEEP_SIZE | RM_FALLOC_FL_PUNCH_HOLE |
			      RM_FALLOC_FL_COLLAPSE_RANGE | RM_FALLOC_FL_ZERO_RANGE |
			      RM_FALLOC_FL_INSERT_RANGE | RM_FALLOC_FL_UNSHARE_RANGE;
	/* vfs_fallocate(), in its order */
	if (off < 0 || len <= 0)
		return -EINVAL;
	if (mode & ~supported)
		return -EOPNOTSUPP;
	if (k == RM_KERNEL_6_12) {
		int err = vfs_mode_check_612(mode);
		if (err)
			return err;
		/* check_add_overflow() or s_maxbytes */
		if (len > INT64_MAX - off || off + len > maxbytes)
			return -EFBIG;
		return 0;
	}
	if ((mode & (RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_ZERO_RANGE)) ==
	    (RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	if ((mode & RM_FALLOC_FL_PUNCH_HOLE) && !(mode & RM_FALLOC_FL_KEEP_SIZE))
		return -EOPNOTSUPP;
	if ((mode & RM_FALLOC_FL_COLLAPSE_RANGE) && (mode & ~RM_FALLOC_FL_COLLAPSE_RANGE))
		return -EINVAL;
	if ((mode & RM_FALLOC_FL_INSERT_RANGE) && (mode & ~RM_FALLOC_FL_INSERT_RANGE))
		return -EINVAL;
	if ((mode & RM_FALLOC_FL_UNSHARE_RANGE) &&
	    (mode & ~(RM_FALLOC_FL_UNSHARE_RANGE | RM_FALLOC_FL_KEEP_SIZE)))
		return -EINVAL;
	if (len > INT64_MAX - off || off + len > maxbytes)	/* wrap or s_maxbytes */
		return -EFBIG;
	return 0;
}

/* ext4_insert_range() */
static int ext4_insert(struct rm_file *f, int64_t off, int64_t len)
{
	int err;

	if (!aligned(f, off, len))
		return -EINVAL;
	/* 6.12 ext4_insert_range() tests "offset >= i_size"
	 * before s_maxbytes, 6.1 after: no difference, since
	 * vfs_fallocate() already keeps off + len within
	 * s_maxbytes, so with off >= size both pass */
	if (len > f->maxbytes - f->size)
		return -EFBIG;
	if (off >= f->size)
		return -EINVAL;
	/* ext4_ext_shift_extents() refuses to move the file's
	 * last extent (post-EOF preallocation included) past
	 * EXT_MAX_BLOCKS.  ext4_insert_range() has grown i_size by
	 * len before ("to avoid data loss if there is error while
	 * shifting"), so on the kernels of erratum
	 * RM_ERRATUM_EXT4_INSERT_EINVAL_GROWS_SIZE the -EINVAL
	 * leaves the size grown and nothing shifted; the intended
	 * semantics (strict) refuse the call before changing
	 * anything. */
	int64_t last = rm_map_end(f) / f->bs;
	bool refuse = last > 0 && len / f->bs > (int64_t)0xffffffffLL - last;
	if (refuse && !rm_erratum_active(f, RM_ERRATUM_EXT4_INSERT_EINVAL_GROWS_SIZE))
		return -EINVAL;
	/* W6: ext4_insert_range() writes back from the page
	 * holding off to EOF, before it grows i_size */
	err = wb_flush(f, off, INT64_MAX, false);
	if (err)
		return err;
	if (refuse) {
		int64_t T = tree_len(f->root), old = f->size;
		f->size += len;
		if (T < f->size) {
			struct rop x;
			err = rop_open(f, T, T, &x);
			if (err) {
				f->size = old;
				return err;
			}
			rop_close(f, &x);
		}
		return -EINVAL;
	}
	return do_insert(f, off, len);
}

/* ext4_fallocate(), after vfs_fallocate()'s checks */
static int ext4_fallocate(struct rm_file *f, int mode, int64_t off, int64_t len)
{
	int err;

	if (mode & ~(RM_FALLOC_FL_KEEP_SIZE | RM_FALLOC_FL_PUNCH_HOLE |
		     RM_FALLOC_FL_COLLAPSE_RANGE | RM_FALLOC_FL_ZERO_RANGE |
		     RM_FALLOC_FL_INSERT_RANGE))
		return -EOPNOTSUPP;	/* UNSHARE */
	if (mode & RM_FALLOC_FL_PUNCH_HOLE) {
		/* W6: 6.1 ext4_punch_hole() first writes back the range
		 * when the file has dirty pages
		 * (mapping_tagged(PAGECACHE_TAG_DIRTY)); 6.12 only
		 * drops the page cache of the blocks it frees
		 * (ext4_truncate_page_cache_block_range()) */
		if (f->kernel == RM_KERNEL_6_1 && wb_any_dirty(f)) {
			err = wb_flush(f, off, off + len, false);
			if (err)
				return err;
		}
		return ext4_punch(f, off, len);
	}
	if (mode & RM_FALLOC_FL_COLLAPSE_RANGE)
		return checked_collapse(f, off, len);	/* ext4_collapse_range() */
	if (mode & RM_FALLOC_FL_INSERT_RANGE)
		return ext4_insert(f, off, len);
	if (mode & RM_FALLOC_FL_ZERO_RANGE)
		return ext4_zero(f, mode, off, len);
	return do_alloc(f, mode, off, len);
}

/* xfs_insert_file_space(), with xfs_file_fallocate()'s checks of it */
static int xfs_insert(struct rm_file *f, int64_t off, int64_t len)
{
	if (!aligned(f, off, len))
		return -EINVAL;
	if (f->maxbytes - f->size < len)
		return -EFBIG;
	if (off >= f->size)
		return -EINVAL;
	/* D-DT11: xfs_file_fallocate() grows the size before the shift
	 * (xfs_vn_setattr_size(), which zeroes from the old EOF and brings
	 * the rest of its page inside); the flush below writes that page
	 * back before anything moves */
	int err = xfs_grow_folio(f, f->size, f->size + len);
	if (err)
		return err;
	/* W7: xfs_prepare_shift() flushes from the block before off */
	err = wb_flush(f, rdown(max64(RD(f, off) - f->bs, 0), max64(f->bs, PAGE_SZ)),
		       INT64_MAX, false);
	if (err)
		return err;
	return do_insert(f, off, len);
}

/* xfs_file_fallocate(), after vfs_fallocate()'s checks; the bytes profile
 * follows it with 1-byte allocation units */
static int xfs_fallocate(struct rm_file *f, int mode, int64_t off, int64_t len)
{
	int err;

	if (mode & (RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_ZERO_RANGE |
		    RM_FALLOC_FL_COLLAPSE_RANGE)) {
		/* W7: xfs_flush_unmap_range() over the range rounded out to
		 * max(block, page): 6.1 xfs_file_fallocate() before any check
		 * of these modes; 6.12 xfs_free_file_space() (punch, zero;
		 * collapse after its checks, in checked_collapse()) */
		if (f->kernel == RM_KERNEL_6_1 || !(mode & RM_FALLOC_FL_COLLAPSE_RANGE)) {
			int64_t r = max64(f->bs, PAGE_SZ);
			err = wb_flush(f, rdown(off, r), off + len, false);
			if (err)
				return err;
		}
	}
	if (mode & RM_FALLOC_FL_PUNCH_HOLE)
		return xfs_punch(f, off, len);
	if (mode & RM_FALLOC_FL_COLLAPSE_RANGE)
		return checked_collapse(f, off, len);
	if (mode & RM_FALLOC_FL_INSERT_RANGE)
		return xfs_insert(f, off, len);
	/* xfs_alloc_file_space() (zero, allocate, unshare) sets
	 * XFS_DIFLAG_PREALLOC on every pass of its loop */
	f->xfs_prealloc = true;
	int64_t old = f->size;
	err = mode & RM_FALLOC_FL_ZERO_RANGE ? xfs_zero(f, mode, off, len)
					     : do_alloc(f, mode, off, len);
	/* D-DT11: the size grows after the allocation (xfs_file_fallocate()
	 * -> xfs_vn_setattr_size(), zeroing from the old EOF), so the new
	 * unwritten blocks of the old EOF block's page are in it */
	return err || f->size <= old ? err : xfs_grow_folio(f, old, f->size);
}

int rm_fallocate(struct rm_file *f, int mode, int64_t off, int64_t len)
{
	f->ops++;
	int err = rm_vfs_fallocate_check_k(f->kernel, mode, off, len, f->maxbytes);
	if (err)
		return err;
	if (f->profile == RM_PROFILE_EXT4)
		return ext4_fallocate(f, mode, off, len);
	err = xfs_fallocate(f, mode, off, len);
	/* D-DT11: any dirty page may have been written back, also by an
	 * unshare of a reflink inode (xfs_reflink_unshare() writes its range
	 * back unless an earlier unshare cleared the flag,
	 * xfs_reflink_try_clear_inode_flag(), which the model cannot tell:
	 * so latitude, not an assumed write-back) */
	int e2 = xfs_wb_folios(f, 0, INT64_MAX);
	return err ? err : e2;
}

/* ---------- lseek ---------- */

int64_t rm_lseek(const struct rm_file *f, int64_t off, int whence)
{
	if (whence != RM_SEEK_DATA && whence != RM_SEEK_HOLE)
		return -EINVAL;
	/* iomap_seek_data() / iomap_seek_hole(): ENXIO outside [0, size) */
	if (off < 0 || off >= f->size)
		return -ENXIO;
	struct it it;
	it_init(&it, f->root, off);
	int64_t r = whence == RM_SEEK_DATA ? -ENXIO : f->size;
	while (it_valid(&it) && it.cur_start < f->size) {
		/* dirty pages over an unwritten block are data too (the page
		 * cannot be evicted before write-back, which converts it) */
		bool data = kind_state(it.cur->s.kind) == RM_DATA || (it.cur->s.may & MAY_PENDING);
		if (data == (whence == RM_SEEK_DATA)) {
			r = max64(off, it.cur_start);
			break;
		}
		it_next(&it);
	}
	it_done(&it);
	if (r >= f->size)
		r = whence == RM_SEEK_DATA ? -ENXIO : f->size;
	return r;
}

/* Are the bytes [a, b) all inside the sorted, disjoint spans? */
static bool spans_cover(const struct rm_span *sp, size_t n, int64_t a, int64_t b)
{
	for (size_t k = 0; k < n && a < b; k++) {
		if (sp[k].end <= a)
			continue;
		if (sp[k].start > a)
			return false;
		a = sp[k].end;
	}
	return a >= b;
}

int rm_lseek_ok(const struct rm_file *f, int64_t off, int whence, int64_t result)
{
	return rm_lseek_ok_lat(f, off, whence, result, NULL, 0);
}

int rm_lseek_ok_lat(const struct rm_file *f, int64_t off, int whence, int64_t result,
		    const struct rm_span *lat, size_t nlat)
{
	if (whence != RM_SEEK_DATA && whence != RM_SEEK_HOLE)
		return result == -EINVAL;
	if (off < 0 || off >= f->size)
		return result == -ENXIO;
	const unsigned can_data = RM_DATA | RM_UNWRITTEN;	/* cached pages */
	const unsigned can_hole = RM_HOLE | RM_UNWRITTEN;
	bool seek_data = whence == RM_SEEK_DATA;
	if (result == -ENXIO) {
		if (!seek_data)
			return 0;
	} else if (result < off || result > f->size || (seek_data && result == f->size)) {
		return 0;
	} else if (result != off && result != f->size && result % f->ab) {
		return 0;
	}
	int64_t stop = result == -ENXIO ? f->size : result;
	struct it it;
	it_init(&it, f->root, off);
	int ok = 1;
	/* every block before the answer must be able to be the other kind */
	while (off < stop && it_valid(&it) && it.cur_start < stop) {
		unsigned may = it.cur->s.may;
		if (may & MAY_PENDING)
			may = RM_DATA;	/* dirty pages: always data to lseek */
		unsigned need = seek_data ? can_hole : can_data;
		if (!(may & need)) {
			/* a hole SEEK_HOLE passed over: data only where a span
			 * (CoW staging) covers the part before the answer */
			int64_t a = it.cur_start > off ? it.cur_start : off;
			int64_t e = it.cur_start + it.cur->s.len;
			if (!(may & RM_HOLE) || !spans_cover(lat, nlat, a, e < stop ? e : stop)) {
				ok = 0;
				break;
			}
		}
		it_next(&it);
	}
	it_done(&it);
	if (!ok || result == -ENXIO || result == f->size)
		return ok;
	/* and the block at the answer must be able to be the sought kind */
	it_init(&it, f->root, result);
	unsigned may = it_valid(&it) ? it.cur->s.may : RM_HOLE;
	it_done(&it);
	if (may & MAY_PENDING)
		may = RM_DATA;
	if (seek_data && (may & RM_HOLE) && spans_cover(lat, nlat, result, result + 1))
		return 1;
	return (may & (seek_data ? can_data : can_hole)) != 0;
}

/* ---------- fiemap / walk / map_end ---------- */

/* A segment as FIEMAP shows it: after write-back (rm_walk()), or now,
 * without FIEMAP_FLAG_SYNC (rm_walk_cached(), W3). */
static void seg_view(const struct rm_file *f, const struct seg *s, bool cached,
		     unsigned *state, unsigned *may)
{
	unsigned st = kind_state(s->kind), m = s->may & RM_ANY;
	if (cached) {
		if (s->wb & WB_DELALLOC) {
			/* ext4_iomap_begin_report(): a hole with delayed
			 * extents is IOMAP_DELALLOC; xfs_read_iomap_begin():
			 * a delalloc mapping (xfs_bmbt_to_iomap()) */
			st = RM_DELALLOC;
			m |= RM_DELALLOC;
		} else if (s->wb & WB_UNWR) {
			st = RM_UNWRITTEN;
			if (s->wb & WB_MAYDELALLOC)
				m |= RM_DELALLOC;
		}
		if (s->wb)
			/* write-back may start at any time: allocation at
			 * submission is unwritten on both file systems
			 * (ext4_map_blocks(EXT4_GET_BLOCKS_IO_CREATE_EXT) with
			 * dioread_nolock; xfs_bmapi_convert_delalloc():
			 * XFS_BMAPI_PREALLOC), written at completion
			 * (ext4_end_io_rsv_work(), xfs_end_ioend()) */
			m |= RM_UNWRITTEN | RM_DATA;
		else if (f->profile == RM_PROFILE_XFS && (m & RM_HOLE) && (m & RM_DATA))
			/* M1 speculative preallocation is delalloc until
			 * write-back converts it */
			m |= RM_DELALLOC;
		if ((s->wb & WB_DELALLOC) && f->xfs_reflink)
			/* W13: on a reflink inode a write over a hole that a
			 * CoW fork reservation covers (cowextsize rounds it
			 * out from shared blocks nearby) is delayed in the
			 * CoW fork, which FIEMAP does not show: a hole until
			 * write-back remaps it (xfs_buffered_write_iomap_begin()
			 * goto found_cow; xfs_read_iomap_begin() maps the data
			 * fork) */
			m |= RM_HOLE;
		m |= st;
	}
	*state = st;
	*may = m;
}

static int64_t fiemap_view(const struct rm_file *f, int64_t start, int64_t len,
			   struct rm_extent *ext, size_t max, bool cached)
{
	/* fiemap_prep() (and ext4_fiemap_check_ranges(), the same rules):
	 * fm_start and fm_length are __u64, so a negative start is a huge
	 * one (-EFBIG) and a negative length a huge one (clamped), and only
	 * a zero length is -EINVAL. */
	uint64_t ustart = (uint64_t)start, ulen = (uint64_t)len;
	uint64_t maxb = (uint64_t)f->maxbytes;
	if (ulen == 0)
		return -EINVAL;
	if (ustart >= maxb)
		return -EFBIG;
	if (ulen > maxb || maxb - ulen < ustart)
		ulen = maxb - ustart;
	len = (int64_t)ulen;
	int64_t s = RD(f, start), e = RU(f, start + len);
	int64_t count = 0;
	struct rm_extent cur = { 0 };
	bool have = false;
	struct it it;
	it_init(&it, f->root, s);
	while (it_valid(&it) && it.cur_start < e) {
		const struct seg *sg = &it.cur->s;
		unsigned st, m;
		seg_view(f, sg, cached, &st, &m);
		if (st != RM_HOLE) {
			int64_t a = max64(it.cur_start, s), b = min64(it.cur_start + sg->len, e);
			uint32_t fl = st == RM_UNWRITTEN ? RM_FIEMAP_UNWRITTEN :
				      st == RM_DELALLOC ? RM_FIEMAP_DELALLOC | RM_FIEMAP_UNKNOWN : 0;
			if (have && cur.logical + cur.length == a && cur.flags == fl) {
				cur.length += b - a;
			} else {
				if (have) {
					if ((size_t)count < max)
						ext[count] = cur;
					count++;
				}
				cur = (struct rm_extent){ a, b - a, fl };
				have = true;
			}
		}
		it_next(&it);
	}
	it_done(&it);
	if (have) {
		/* iomap_fiemap(): FIEMAP_EXTENT_LAST on the last extent reported */
		cur.flags |= RM_FIEMAP_LAST;
		if ((size_t)count < max)
			ext[count] = cur;
		count++;
	}
	return count;
}

int64_t rm_fiemap(const struct rm_file *f, int64_t start, int64_t len,
		  struct rm_extent *ext, size_t max)
{
	return fiemap_view(f, start, len, ext, max, false);
}

int64_t rm_fiemap_cached(const struct rm_file *f, int64_t start, int64_t len,
			 struct rm_extent *ext, size_t max)
{
	return fiemap_view(f, start, len, ext, max, true);
}

static int walk_view(const struct rm_file *f, int64_t start, int64_t end,
		     rm_run_fn fn, void *ctx, bool cached)
{
	if (start < 0 || end < start)
		return -EINVAL;
	struct rm_run run = { 0 };
	bool have = false;
	int ret = 0;
	struct it it;
	it_init(&it, f->root, start);
	int64_t p = start;
	while (p < end) {
		struct rm_run r;
		if (it_valid(&it)) {
			const struct seg *sg = &it.cur->s;
			r.off = p;
			r.len = min64(it.cur_start + sg->len, end) - p;
			seg_view(f, sg, cached, &r.state, &r.may);
			it_next(&it);
		} else {
			r = (struct rm_run){ p, end - p, RM_HOLE, RM_HOLE };
		}
		p += r.len;
		if (have && run.state == r.state && run.may == r.may) {
			run.len += r.len;
			continue;
		}
		if (have && (ret = fn(ctx, &run)) != 0)
			break;
		run = r;
		have = true;
	}
	it_done(&it);
	if (!ret && have)
		ret = fn(ctx, &run);
	return ret;
}

int rm_walk(const struct rm_file *f, int64_t start, int64_t end,
	    rm_run_fn fn, void *ctx)
{
	return walk_view(f, start, end, fn, ctx, false);
}

int rm_walk_cached(const struct rm_file *f, int64_t start, int64_t end,
		   rm_run_fn fn, void *ctx)
{
	return walk_view(f, start, end, fn, ctx, true);
}

int64_t rm_map_end(const struct rm_file *f)
{
	/* Trailing pure holes past EOF are trimmed and neighbours are merged,
	 * so only the last node can be a pure hole: the map ends where it
	 * starts, or at the end of the tree. */
	const struct seg *last = tree_last(f->root);
	if (!last)
		return 0;
	int64_t T = tree_len(f->root);
	return seg_pure_hole(last) ? T - last->len : T;
}

/* ---------- hash / stats ---------- */

uint64_t rm_hash(const struct rm_file *f, int64_t off, int64_t len)
{
	static const unsigned char zeros[4096];
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	if (off < 0) {
		len = len > INT64_MAX + off ? INT64_MAX : len + off;
		off = 0;
	}
	int64_t end = len > f->size - off ? f->size : off + len;
	if (off < end) {
		struct it it;
		it_init(&it, f->root, off);
		int64_t p = off;
		while (p < end && it_valid(&it)) {
			const struct seg *s = &it.cur->s;
			int64_t c = min64(it.cur_start + s->len, end) - p;
			if (s->kind == K_DATA) {
				XXH3_64bits_update(&st, s->buf->data + s->boff + (p - it.cur_start), (size_t)c);
			} else {
				for (int64_t z = c; z > 0; z -= (int64_t)sizeof(zeros))
					XXH3_64bits_update(&st, zeros, (size_t)min64(z, sizeof(zeros)));
			}
			p += c;
			it_next(&it);
		}
		it_done(&it);
	}
	return XXH3_64bits_digest(&st);
}

int64_t rm_alloc_bytes(const struct rm_file *f)
{
	return tree_alloc_from(f->root, 0);
}

size_t rm_runs(const struct rm_file *f)
{
	return tree_segs(f->root);
}

void rm_stats(const struct rm_file *f, struct rm_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = f->size;
	st->alloc_bytes = tree_alloc_from(f->root, 0);
	struct it it;
	it_init(&it, f->root, 0);
	for (; it_valid(&it); it_next(&it))
		if (it.cur->s.kind == K_DATA)
			st->data_bytes += it.cur->s.len;
	it_done(&it);
	st->nodes = tree_segs(f->root);
	st->depth = tree_depth(f->root);
	st->fsyncs = f->fsyncs;
	st->ops = f->ops;
}

/* ---------- integrity check ---------- */

struct chk {
	const struct rm_file *f;
	char *msg;
	size_t msglen;
	int bad;
	int64_t pos;
	bool have_prev;
	struct seg prev;
};

#define FAIL(c, ...) do { if (!(c)->bad && (c)->msg) snprintf((c)->msg, (c)->msglen, __VA_ARGS__); (c)->bad = 1; } while (0)

static unsigned alloc_class(unsigned k)
{
	return k == K_ZERO ? K_DATA : k;	/* written = one allocation class */
}

/* The per-segment invariants, segment by segment in order (tree_check()
 * checks the tree itself). */
static int chk_seg(void *arg, const struct seg *s, int64_t pos)
{
	struct chk *c = arg;
	const struct rm_file *f = c->f;
	c->pos = pos;
	if (s->len <= 0)
		FAIL(c, "empty segment at %lld", (long long)c->pos);
	if (s->kind > K_DATA)
		FAIL(c, "bad kind at %lld", (long long)c->pos);
	if (!(s->may & kind_state(s->kind)) || (s->may & ~(RM_ANY | MAY_PENDING)))
		FAIL(c, "may 0x%x lacks state at %lld", s->may, (long long)c->pos);
	if (s->may & MAY_PENDING && !f->pending)
		FAIL(c, "pending latitude without the file flag at %lld", (long long)c->pos);
	if (f->profile == RM_PROFILE_BYTES && s->may != kind_state(s->kind))
		FAIL(c, "bytes profile with latitude at %lld", (long long)c->pos);
	/* write-back state: only on written blocks inside EOF, of a file that
	 * is not write-through; dirty or in flight; a delayed allocation is
	 * neither unwritten nor in flight (submission allocates it) */
	if (s->wb) {
		if (s->wb & ~(WB_DIRTY | WB_INFLIGHT | WB_DELALLOC | WB_UNWR | WB_MAYDELALLOC))
			FAIL(c, "bad write-back bits 0x%x at %lld", s->wb, (long long)c->pos);
		if ((s->wb & WB_MAYDELALLOC) && (s->wb & (WB_DELALLOC | WB_INFLIGHT) ||
						  !(s->wb & WB_UNWR)))
			FAIL(c, "maybe-delalloc block not dirty over unwritten at %lld",
			     (long long)c->pos);
		if (!(s->wb & (WB_DIRTY | WB_INFLIGHT)))
			FAIL(c, "write-back state neither dirty nor in flight at %lld", (long long)c->pos);
		if ((s->wb & WB_DELALLOC) && (s->wb & (WB_UNWR | WB_INFLIGHT)))
			FAIL(c, "delalloc block unwritten or in flight at %lld", (long long)c->pos);
		if (s->kind != K_ZERO && s->kind != K_DATA)
			FAIL(c, "write-back state on a hole or unwritten block at %lld", (long long)c->pos);
		if (f->write_through || !f->anywb)
			FAIL(c, "write-back state without the file flag at %lld", (long long)c->pos);
		if (c->pos + s->len > rup(f->size, f->ab))
			FAIL(c, "write-back state past EOF at %lld", (long long)c->pos);
	}
	if (s->kind == K_DATA) {
		if (!s->buf || s->buf->refs == 0 ||
		    (uint64_t)s->boff + (uint64_t)s->len > s->buf->len)
			FAIL(c, "bad buffer reference at %lld", (long long)c->pos);
		if (c->pos + s->len > f->size)
			FAIL(c, "stored data past EOF at %lld", (long long)c->pos);
	} else if (s->buf) {
		FAIL(c, "buffer on non-data segment at %lld", (long long)c->pos);
	}
	if (c->have_prev) {
		const struct seg *p = &c->prev;
		bool same = p->kind == s->kind && p->may == s->may && p->wb == s->wb &&
			    (s->kind != K_DATA || (p->buf == s->buf && p->boff + p->len == s->boff));
		if (same)
			FAIL(c, "unmerged neighbours at %lld", (long long)c->pos);
		if (f->ab > 1 && (alloc_class(p->kind) != alloc_class(s->kind) || p->may != s->may ||
				  p->wb != s->wb) &&
		    c->pos % f->ab)
			FAIL(c, "unaligned state/may boundary at %lld", (long long)c->pos);
	}
	c->prev = *s;
	c->have_prev = true;
	c->pos += s->len;
	return c->bad;
}

int rm_check(const struct rm_file *f, char *msg, size_t msglen)
{
	struct chk c = { .f = f, .msg = msg, .msglen = msglen };
	if (msg && msglen)
		msg[0] = 0;
	if (f->size < 0 || f->size > f->maxbytes)
		FAIL(&c, "size %lld out of range", (long long)f->size);
	if (!c.bad && tree_check(f->root, chk_seg, &c, msg, msglen))
		c.bad = 1;
	int64_t T = tree_len(f->root);
	if (!c.bad && c.pos != T)
		FAIL(&c, "lengths do not add up");
	if (!c.bad && T < f->size)
		FAIL(&c, "map %lld shorter than size %lld", (long long)T, (long long)f->size);
	if (!c.bad && T > f->size && c.have_prev && seg_pure_hole(&c.prev))
		FAIL(&c, "trailing pure hole past EOF");
	if (!c.bad && f->ab > 1 && T > f->size && T % f->ab && T <= INT64_MAX - f->ab)
		FAIL(&c, "map end %lld unaligned past EOF", (long long)T);
	return c.bad ? -EUCLEAN : 0;
}
