/* SPDX-License-Identifier: MIT */
/*
 * cowlat.c - where XFS may hold CoW fork staging over a hole, as lseek
 * latitude for the model (rm_lseek_ok_lat()).
 *
 * A write into a shared (reflinked) block of an XFS file reserves CoW
 * staging for the cowextsize-aligned window around the shared part it
 * writes (32 blocks by default: xfs_get_cowextsz_hint(); the write is
 * trimmed to the shared extent by xfs_bmap_trim_cow(), then aligned by
 * xfs_bmapi_reserve_delalloc()), and the staging outlives the write.  Over
 * a data fork hole, xfs_seek_iomap_begin() reports it as unwritten, so
 * SEEK_DATA/SEEK_HOLE probe the page cache and a cached page there counts
 * as data: a correct kernel may then call part of a hole data.  The model
 * knows no page cache and no sharing, so this file keeps, per file, two
 * over-approximations:
 *   shared   ranges that may share blocks with another file or range:
 *            both ranges of a successful reflink; they move with their
 *            data on insert/collapse; writing, punching or zeroing a block
 *            unshares it (copy on write, or freed), a truncate down drops
 *            what is past the new EOF block;
 *   staging  the 32-block windows around the shared part of every op that
 *            may write or zero blocks, widened (stage()) (write, mmap write, zero and punch
 *            ranges, unshare, other mode words; a truncate zeroes the block
 *            holding the lower of the two sizes).  Staging does not move:
 *            a successful insert or collapse cancels it from one block
 *            before its offset (xfs_prepare_shift()), a truncate down past
 *            the new EOF block (xfs_itruncate_extents_flags()).  Remounts,
 *            drop_caches and the background blockgc may cancel more;
 *            keeping it only leaves latitude.
 * The shift rule is the one the oracle needs: staging a shift leaves at
 * its old offsets (the bug fixed by 3af423b03435, mutant 06) then sits
 * over holes the model knows are holes, and a cached page there turns the
 * hole into data for lseek.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "optab.h"
#include "rm_vec.h"

#define COW_WINDOW_BLOCKS 32	/* XFS_DEFAULT_COWEXTSZ_HINT */

void dt_cowlat_reset(struct dt_cowlat *c)
{
	free(c->st.v);
	free(c->sh.v);
	memset(c, 0, sizeof(*c));
}

/* x rounded up to a multiple of a (saturating at INT64_MAX) */
static int64_t up(int64_t x, int64_t a)
{
	return x % a ? rm_sat_add(x, a - x % a) : x;
}

/* Add [a, b), keeping the spans sorted, disjoint and merged. */
static int sp_add(struct dt_spans *p, int64_t a, int64_t b)
{
	if (a >= b)
		return 0;
	if (RM_VEC_RESERVE(&p->v, &p->cap, p->n + 1, 8))
		return -ENOMEM;
	size_t i = 0;
	while (i < p->n && p->v[i].end < a)
		i++;
	size_t j = i;
	while (j < p->n && p->v[j].start <= b) {
		if (p->v[j].start < a)
			a = p->v[j].start;
		if (p->v[j].end > b)
			b = p->v[j].end;
		j++;
	}
	if (j == i) {
		memmove(&p->v[i + 1], &p->v[i], (p->n - i) * sizeof(*p->v));
		p->n++;
	} else if (j > i + 1) {
		memmove(&p->v[i + 1], &p->v[j], (p->n - j) * sizeof(*p->v));
		p->n -= j - i - 1;
	}
	p->v[i] = (struct rm_span){ a, b };
	return 0;
}

/* Remove [a, INT64_MAX), in place. */
static void sp_cut_from(struct dt_spans *p, int64_t a)
{
	size_t k = 0;
	while (k < p->n && p->v[k].end <= a)
		k++;
	if (k < p->n && p->v[k].start < a)
		p->v[k++].end = a;
	p->n = k;
}

/* Remove [a, b); then move everything at or past `from` by `delta`
 * (insert: a == b == from, delta > 0; collapse: [from - ..) removed first).
 * Rebuilds the set, so it first checks there is something to change: a
 * write in a reflinked file calls it for every op. */
static int sp_edit(struct dt_spans *p, int64_t a, int64_t b, int64_t from, int64_t delta)
{
	int change = p->n && delta && p->v[p->n - 1].end > from;
	for (size_t k = 0; k < p->n && !change; k++)
		change = p->v[k].start < b && p->v[k].end > a;
	if (!change)
		return 0;
	struct dt_spans q = { 0 };
	for (size_t k = 0; k < p->n; k++) {
		int64_t s = p->v[k].start, e = p->v[k].end;
		/* pieces outside [a, b), each split at `from` */
		int64_t piece[4][2] = { { s, e < a ? e : a }, { s > b ? s : b, e } };
		int np = 0;
		for (int t = 0; t < 2; t++) {
			int64_t ps = piece[t][0], pe = piece[t][1];
			if (ps >= pe)
				continue;
			if (ps < from && pe > from) {
				piece[2 + np][0] = ps;
				piece[2 + np][1] = from;
				np++;
				ps = from;
			}
			int rc = sp_add(&q, ps >= from ? rm_sat_add(ps, delta) : ps,
					ps >= from ? rm_sat_add(pe, delta) : pe);
			if (rc) {
				free(q.v);
				return rc;
			}
		}
		for (int t = 0; t < np; t++)
			if (sp_add(&q, piece[2 + t][0], piece[2 + t][1])) {
				free(q.v);
				return -ENOMEM;
			}
	}
	free(p->v);
	*p = q;
	return 0;
}

/* Staging for an op touching the blocks [a, b): around each shared part
 * [s, e) of it, the 32-block aligned window [s0, e0) widened by its own
 * length on both sides.  xfs_bmap_extsize_align() aligns the reservation
 * to the window, then moves its start forward to the end of the CoW
 * extent before it, or back to fit before the one after it, "without
 * adjusting the length": a reservation next to earlier staging reaches
 * past the aligned window (found by difftest on 6.12: SEEK_DATA called a
 * hole 16 blocks past a write's aligned window data, 9 ops). */
static int stage(struct dt_cowlat *c, int64_t bs, int64_t a, int64_t b)
{
	int64_t w = COW_WINDOW_BLOCKS * bs;
	int rc = 0;
	for (size_t k = 0; k < c->sh.n && !rc; k++) {
		int64_t s = c->sh.v[k].start > a ? c->sh.v[k].start : a;
		int64_t e = c->sh.v[k].end < b ? c->sh.v[k].end : b;
		if (s >= e)
			continue;
		int64_t s0 = s - s % w, e0 = up(e, w), len = e0 - s0;
		rc = sp_add(&c->st, s0 > len ? s0 - len : 0, rm_sat_add(e0, len));
	}
	return rc;
}

int dt_cowlat_reflink(struct dt_cowlat *dst, struct dt_cowlat *src, int64_t bs,
		      int64_t soff, int64_t doff, int64_t len)
{
	if (len <= 0 || soff < 0 || doff < 0)
		return 0;
	int64_t l = up(len, bs);
	dst->reflinked = src->reflinked = 1;
	int rc = sp_add(&dst->sh, doff, rm_sat_add(doff, l));
	return rc ? rc : sp_add(&src->sh, soff, rm_sat_add(soff, l));
}

/* The first block of op and the end of its range (its offset when it has
 * no length). */
static int64_t op_start(const struct dt_op *op, int64_t bs)
{
	return op->off < 0 ? 0 : op->off - op->off % bs;
}

static int64_t op_end(const struct dt_op *op)
{
	return op->len > 0 ? rm_sat_add(op->off, op->len) : op->off;
}

/* An op that may write or zero blocks (DT_FMODE: any other mode word):
 * staging around its shared part. */
int dt_cow_stage(struct dt_cowlat *c, const struct dt_op *op, int64_t bs,
		 int64_t old_size, int64_t new_size)
{
	int64_t end = op_end(op);

	(void)old_size;
	(void)new_size;
	if (op->off < 0 || end <= op->off)
		return 0;
	return stage(c, bs, op_start(op, bs), up(end, bs));
}

/* Write, mmap write, zero, punch, unshare: staging, and the blocks are
 * copied on write or freed: no longer shared. */
int dt_cow_write(struct dt_cowlat *c, const struct dt_op *op, int64_t bs,
		 int64_t old_size, int64_t new_size)
{
	int64_t end = op_end(op);
	int rc;

	if (op->off < 0 || end <= op->off)
		return 0;
	if ((rc = dt_cow_stage(c, op, bs, old_size, new_size)))
		return rc;
	return sp_edit(&c->sh, op_start(op, bs), up(end, bs), INT64_MAX, 0);
}

/* A truncate zeroes the block holding the lower of the two sizes; down,
 * it drops what lies past the new EOF block. */
int dt_cow_truncate(struct dt_cowlat *c, const struct dt_op *op, int64_t bs,
		    int64_t old_size, int64_t new_size)
{
	int64_t m = old_size < op->off ? old_size : op->off;
	int rc;

	if (m < 0)
		return 0;
	if ((rc = stage(c, bs, m - m % bs, rm_sat_add(m - m % bs, bs))))
		return rc;
	if (new_size < old_size) {
		sp_cut_from(&c->st, up(new_size, bs));
		sp_cut_from(&c->sh, up(new_size, bs));
	}
	return 0;
}

/* A successful insert or collapse (the size changed) cancels staging from
 * one block before its offset (xfs_prepare_shift()); shared ranges move
 * with their data. */
int dt_cow_shift(struct dt_cowlat *c, const struct dt_op *op, int64_t bs,
		 int64_t old_size, int64_t new_size)
{
	int64_t a = op_start(op, bs);

	if (new_size == old_size || op->off < 0 || op->len <= 0)
		return 0;
	sp_cut_from(&c->st, a >= bs ? a - bs : 0);
	if (dt_opdesc_of(op->kind)->shift > 0)
		return sp_edit(&c->sh, 0, 0, op->off, op->len);
	return sp_edit(&c->sh, op->off, rm_sat_add(op->off, op->len),
		       rm_sat_add(op->off, op->len), -op->len);
}

int dt_cowlat_op(struct dt_cowlat *c, const struct dt_op *op, int64_t bs,
		 int64_t old_size, int64_t new_size)
{
	const struct dt_opdesc *od = dt_opdesc_of(op->kind);

	if (!c->reflinked || !od->cowlat)
		return 0;
	return od->cowlat(c, op, bs, old_size, new_size);
}
