/* SPDX-License-Identifier: MIT */
/*
 * clone.c - FICLONERANGE (reflink) in librefmodel: rm_clone_range() checks
 * a clone request in the kernel's order (do_clone_file_range(),
 * remap_verify_area(), xfs_file_remap_range(),
 * generic_remap_file_range_prep(), generic_remap_checks(),
 * generic_remap_check_len(), Linux 6.1) and applies XFS's block remapping
 * (xfs_reflink_remap_blocks() / xfs_reflink_remap_extent()) to the model.
 *
 * Why a file of its own: the clone needs the piece table (it copies the
 * source's segments, sharing their immutable buffers by reference, so a
 * clone costs O(k log n) and no bytes are copied), but only through the
 * range-operation interface internal.h exports (rop_open / v_cut /
 * rop_close and the read iterator); tree.c and ops.c are not touched.
 *
 * The model has no physical blocks, so "shared" is not modelled: after a
 * clone both files read the same bytes and each file's later writes are its
 * own, which is exactly what copy-on-write guarantees.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

#include "rm_vec.h"

struct piece {
	int64_t off, len;	/* relative to the source range start */
	struct rm_buf *buf;	/* K_DATA: a reference held by the piece list */
	uint32_t boff;
	uint8_t kind, may;
};

struct plist {
	struct piece *v;
	size_t n, cap;
};

static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

static void plist_free(struct plist *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].kind == K_DATA)
			buf_put(p->v[i].buf);
	free(p->v);
	p->v = NULL;
	p->n = p->cap = 0;
}

static int plist_add(struct plist *p, const struct piece *x)
{
	int err = RM_VEC_RESERVE(&p->v, &p->cap, p->n + 1, 16);
	if (err)
		return err;
	p->v[p->n] = *x;
	if (x->kind == K_DATA)
		x->buf->refs++;
	p->n++;
	return 0;
}

/* Copy the segments of src over [a, b) into p (holes where the tree ends).
 * Taken before dst is touched, so cloning within one file is safe. */
static int collect(const struct rm_file *src, int64_t a, int64_t b, struct plist *p)
{
	struct it it;
	int err = 0;
	int64_t pos = a;
	it_init(&it, src->root, a);
	while (pos < b && it_valid(&it)) {
		const struct seg *s = &it.cur->s;
		int64_t ss = it.cur_start, se = ss + s->len;
		int64_t e = imin(se, b);
		struct piece x = {
			.off = pos - a, .len = e - pos, .kind = s->kind, .may = s->may,
			.buf = s->kind == K_DATA ? s->buf : NULL,
			.boff = s->kind == K_DATA ? (uint32_t)(s->boff + (pos - ss)) : 0,
		};
		err = plist_add(p, &x);
		if (err)
			break;
		pos = e;
		it_next(&it);
	}
	it_done(&it);
	if (!err && pos < b) {
		struct piece h = { .off = pos - a, .len = b - pos, .kind = K_HOLE, .may = RM_HOLE };
		err = plist_add(p, &h);
	}
	return err;
}

/* The may-mask a destination block gets from a source block of mask
 * `smay` over a destination block of mask `dmay`, after the flushes of
 * generic_remap_file_range_prep() (filemap_write_and_wait_range() on both
 * ranges: a pending block (M5) of the source is written by then, so its
 * UNWRITTEN latitude is gone; the destination's pending blocks are written
 * too, so only a real unwritten destination block stays unwritten).
 * xfs_reflink_remap_extent(): a written source extent is mapped
 * (dmap_written); a hole or unwritten source extent maps nothing and the
 * destination extent is unmapped, except that "if both extents are
 * unwritten, leave them alone". */
static unsigned map_may(unsigned smay, unsigned dmay, unsigned dkind)
{
	unsigned out = 0;
	if (smay & RM_DATA)
		out |= RM_DATA;
	if (smay & RM_HOLE)
		out |= RM_HOLE;
	if ((smay & RM_UNWRITTEN) && !(smay & MAY_PENDING)) {
		out |= RM_HOLE;
		if ((dmay & RM_UNWRITTEN) && (dkind == K_UNWRITTEN || !(dmay & MAY_PENDING)))
			out |= RM_UNWRITTEN;
	}
	return out;
}

/* Apply one source piece to dst at [s, s + x->len). */
static int apply_piece(struct rm_file *dst, int64_t s, const struct piece *x)
{
	int64_t e = s + x->len;
	struct rop r;
	int err = rop_open(dst, s, e, &r);
	if (err)
		return err;
	size_t i = v_cut(dst, &r, s);
	size_t j = v_cut(dst, &r, e);
	int64_t pos = s;	/* v_cut() made segment i start at s */
	for (size_t k = i; k < j; k++) {
		struct seg *g = &dst->vec.v[k];
		unsigned dkind = g->kind, dmay = g->may;
		struct seg n = { .len = g->len };
		if (x->kind == K_UNWRITTEN)
			/* "if both extents are unwritten, leave them alone",
			 * else the destination extent is unmapped */
			n.kind = dkind == K_UNWRITTEN ? K_UNWRITTEN : K_HOLE;
		else
			n.kind = x->kind;
		n.may = (uint8_t)(map_may(x->may, dmay, dkind) | kind_state(n.kind));
		if (n.kind == K_DATA) {
			n.buf = x->buf;
			n.boff = (uint32_t)(x->boff + (pos - s));
			n.buf->refs++;
		}
		v_drop_seg(g);
		*g = n;
		pos += n.len;
	}
	rop_close(dst, &r);
	return 0;
}

int remap_checks(const struct rm_file *src, int64_t soff, const struct rm_file *dst,
		 int64_t doff, int64_t *count, unsigned flags)
{
	int64_t bs = dst->bs, size_in = src->size, size_out = dst->size, n = *count, bcount, t;

	/* generic_remap_checks(), in its order */
	if (soff % bs || doff % bs)
		return -EINVAL;
	if (__builtin_add_overflow(soff, n, &t) || __builtin_add_overflow(doff, n, &t))
		return -EINVAL;
	if ((flags & REMAP_DEDUP) && (soff >= size_in || soff + n > size_in ||
				      doff >= size_out || doff + n > size_out))
		return -EINVAL;
	if (soff >= size_in)
		return -EINVAL;
	n = imin(n, size_in - soff);
	/* generic_write_check_limits() */
	if (doff >= dst->maxbytes)
		return -EFBIG;
	n = imin(n, dst->maxbytes - doff);
	/* to the source EOF: its partial block counts whole for the overlap */
	if (soff + n == size_in && (!(flags & REMAP_DEDUP) || doff + n == size_out)) {
		bcount = rup(size_in, bs) - soff;
	} else {
		n = rdown(n, bs);
		bcount = n;
	}
	if (src == dst && doff + bcount > soff && doff < soff + bcount)
		return -EINVAL;
	if (n != *count && !(flags & REMAP_CAN_SHORTEN))
		return -EINVAL;
	*count = n;
	return 0;
}

/*
 * FICLONERANGE(dst, {src, soff, len, doff}).  Errno order, Linux 6.1:
 *  do_clone_file_range(): different super blocks -EXDEV (the model: a
 *    different profile, block size or s_maxbytes); no ->remap_file_range
 *    -EOPNOTSUPP (ext4 has none in 6.1; FUSE has none, the bytes profile
 *    stands for it);
 *  remap_verify_area() for src then dst: pos < 0, len < 0 or pos + len
 *    wrapping -EINVAL;
 *  xfs_file_remap_range() -> xfs_reflink_remap_prep() ->
 *  generic_remap_file_range_prep(): len 0 means "to the source EOF" (done
 *    at once if soff == src size, -EINVAL if soff > src size);
 *  generic_remap_checks(): soff or doff not block aligned -EINVAL; soff >=
 *    src size -EINVAL; the count is clipped to the source EOF; doff >=
 *    s_maxbytes -EFBIG and the count clipped to s_maxbytes
 *    (generic_write_check_limits()); a count not ending at the source EOF
 *    is rounded down to blocks; same file and overlapping block ranges
 *    -EINVAL; a shortened count -EINVAL (no REMAP_FILE_CAN_SHORTEN);
 *  generic_remap_check_len(): a partial EOF block may only land at or past
 *    the destination EOF, else -EINVAL.
 * Effect (xfs_reflink_remap_blocks(), xfs_reflink_update_dest()): the
 * block-rounded source range replaces the destination range block by
 * block (see map_may()), and the size becomes max(size, doff + len).
 */
static int state_of(void *ctx, const struct rm_run *run)
{
	*(unsigned *)ctx = run->state;
	return 1;
}

/* Whether iomap_zero_range() writes zeros into the EOF block: the data
 * fork maps it delayed or written (the cached view's state). */
static bool eof_block_zeroed(const struct rm_file *f)
{
	unsigned st = RM_HOLE;
	rm_walk_cached(f, f->size - 1, f->size, state_of, &st);
	return st == RM_DELALLOC || st == RM_DATA;
}

static int clone_core(struct rm_file *dst, const struct rm_file *src,
		      int64_t soff, int64_t doff, int64_t len, struct rm_file *wsrc)
{
	dst->ops++;
	if (src->profile != dst->profile || src->bs != dst->bs ||
	    src->maxbytes != dst->maxbytes)
		return -EXDEV;
	if (dst->profile != RM_PROFILE_XFS)
		return -EOPNOTSUPP;
	int64_t t;
	if (soff < 0 || len < 0 || __builtin_add_overflow(soff, len, &t))
		return -EINVAL;
	if (doff < 0 || __builtin_add_overflow(doff, len, &t))
		return -EINVAL;

	int64_t bs = dst->bs, isize = src->size;
	int64_t count = len;
	if (count == 0) {
		if (soff == isize)
			return 0;
		if (soff > isize)
			return -EINVAL;
		count = isize - soff;
	}
	/* no REMAP_FILE_CAN_SHORTEN: a shortened count is -EINVAL */
	int cerr = remap_checks(src, soff, dst, doff, &count, 0);
	if (cerr)
		return cerr;
	if (wsrc) {
		/* W11: __generic_remap_file_range_prep() writes back both
		 * ranges (filemap_write_and_wait_range()) here */
		int werr = wb_flush(wsrc, soff, soff + count, false);
		if (!werr)
			werr = wb_flush(dst, doff, doff + count, false);
		if (werr)
			return werr;
	}
	/* generic_remap_check_len() */
	if (count % bs && doff + count < dst->size)
		return -EINVAL;
	if (count == 0)
		return 0;
	/* xfs_reflink_remap_prep() -> xfs_reflink_set_inode_flag(): both
	 * files are reflink inodes from here on (the const source of
	 * rm_clone_range() is left as it is) */
	dst->xfs_reflink = true;
	if (wsrc)
		wsrc->xfs_reflink = true;
	if (wsrc) {
		/* W11: xfs_reflink_remap_prep() -> xfs_flush_unmap_range() of
		 * the destination, from its EOF when doff lies past it.  6.1:
		 * xfs_reflink_zero_posteof() first zeroes the EOF block's tail
		 * when that block is delalloc or written (iomap_zero_iter()
		 * skips holes and unwritten extents), and iomap_write_end()
		 * moves i_size to the end of the zeroed block, so the flush
		 * starts after it and the EOF block stays dirty (measured in
		 * QEMU; since 6.11 zeroing leaves i_size alone: 6.12's
		 * iomap_write_iter() updates it, iomap_write_end() no more) */
		int64_t r = bs > 4096 ? bs : 4096, from = imin(doff, dst->size);
		if (doff > dst->size && (dst->size % bs) && dst->kernel == RM_KERNEL_6_1 &&
		    eof_block_zeroed(dst))
			from = rup(dst->size, bs);
		int werr = wb_flush(dst, rdown(from, r), doff + count, false);
		if (werr)
			return werr;
	}

	/* xfs_reflink_remap_blocks() remaps XFS_B_TO_FSB(len) blocks */
	int64_t span = rup(count, bs);
	struct plist p = { 0 };
	int err = collect(src, soff, soff + span, &p);
	if (err) {
		plist_free(&p);
		return err;
	}
	int64_t old = dst->size;
	dst->size = imax(old, doff + count);
	for (size_t i = 0; i < p.n && !err; i++)
		err = apply_piece(dst, doff + p.v[i].off, &p.v[i]);
	plist_free(&p);
	/* the tree always covers [0, size) (as rm_truncate() grows it) */
	if (!err && tree_len(dst->root) < dst->size) {
		struct rop r;
		int64_t T = tree_len(dst->root);
		err = rop_open(dst, T, T, &r);
		if (!err)
			rop_close(dst, &r);
	}
	return err;
}

int rm_clone_range(struct rm_file *dst, const struct rm_file *src,
		   int64_t soff, int64_t doff, int64_t len)
{
	return clone_core(dst, src, soff, doff, len, NULL);
}

int rm_clone_range_wb(struct rm_file *dst, struct rm_file *src,
		      int64_t soff, int64_t doff, int64_t len)
{
	return clone_core(dst, src, soff, doff, len, src);
}
