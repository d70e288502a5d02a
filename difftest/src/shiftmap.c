/* SPDX-License-Identifier: MIT */
/*
 * shiftmap.c - moving ops across removed shifts, for the shrinker.
 *
 * ddmin removes chunks of an op log, but the ops carry absolute offsets.
 * When a removed chunk holds a successful insert or collapse range, every
 * later op of that file lands blocks away from the data and holes it met
 * in the original run: the collapse that closed the hole an earlier insert
 * opened now cuts data instead, and the candidate stops reproducing.  A
 * divergence that needs "collapse exactly what an insert opened" (ext4's
 * merge on a left shift, mutant 04) then keeps every shift below it in the
 * log, and plain ddmin stalls at a thousand ops.
 *
 * dt_relocate() builds a candidate from a keep mask and, for each file, a
 * map from the original log's offsets to the candidate's, updated op by op:
 *   removed insert (X, L):   y < X -> M(y); X <= y < X+L -> M(X) (the hole
 *                            is gone: ops in it collapse onto its start);
 *                            y >= X+L -> M(y - L)
 *   removed collapse (X, L): y < X -> M(y); y >= X -> M(y + L)
 *   kept insert:             y < X -> M(y); in the hole -> X' + (y - X);
 *                            y >= X+L -> M(y - L) + L
 *   kept collapse (X', L'):  y < X -> M(y); y >= X -> M(y + L) - L'
 * where X', L' are the kept op's own mapped offset and length.  An op's
 * offset goes through M; the end of its range (and a truncate's size) is
 * its last byte's image plus one.  A map is
 * piecewise with slope 1 (or 0 in a removed hole), kept as sorted segments.
 * Only shifts that changed the file's size in the run that produced the
 * log count (shifted[]): a refused insert moved nothing.  Every shift is a
 * multiple of the block size, so block-aligned ops stay aligned.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "optab.h"
#include "rm_vec.h"

struct seg {
	int64_t o;	/* first original offset of the segment */
	int64_t c;	/* its candidate offset */
	int flat;	/* 1: the whole segment maps to c (a removed hole) */
};

struct dt_smap {
	struct seg *v;
	size_t n, cap;
};

static int push(struct dt_smap *m, int64_t o, int64_t c, int flat)
{
	if (m->n && m->v[m->n - 1].o == o)
		m->n--;		/* a later piece starting at the same offset wins */
	if (RM_VEC_RESERVE(&m->v, &m->cap, m->n + 1, 8))
		return -ENOMEM;
	m->v[m->n++] = (struct seg){ o, c, flat };
	return 0;
}

/* Index of the segment holding y (y >= 0; v[0].o == 0). */
static size_t find(const struct dt_smap *m, int64_t y)
{
	size_t lo = 0, hi = m->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].o <= y)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int64_t at(const struct dt_smap *m, int64_t y)
{
	if (y < 0)
		return y;	/* errno checks with negative offsets stay as they are */
	const struct seg *s = &m->v[find(m, y)];
	int64_t r = s->flat ? s->c : rm_sat_add(s->c, y - s->o);
	/* a kept collapse that kept its length over a dropped hole can map
	 * below 0: an offset never turns negative (that is an errno check
	 * of another kind: mutant 03's shrink slipped to `mread -315392`) */
	return r < 0 ? 0 : r;
}

/* The candidate end of a range ending (exclusively) at e: where its last
 * byte goes, plus one, so that a range ending at a removed collapse's seam
 * does not swallow the data shifted in after it; a range ending in a
 * removed hole ends at the hole's start. */
static int64_t at_end(const struct dt_smap *m, int64_t e)
{
	if (e <= 0)
		return e;
	const struct seg *s = &m->v[find(m, e - 1)];
	int64_t r = s->flat ? s->c : rm_sat_add(rm_sat_add(s->c, e - 1 - s->o), 1);
	return r < 0 ? 0 : r;
}

/* dst = src below x, then nothing: the caller appends what follows x. */
static int head(struct dt_smap *dst, const struct dt_smap *src, int64_t x)
{
	dst->n = 0;
	for (size_t k = 0; k < src->n && src->v[k].o < x; k++)
		if (push(dst, src->v[k].o, src->v[k].c, src->v[k].flat))
			return -ENOMEM;
	return 0;
}

/* Append y -> src(y - d) + k for y >= a + d (a >= 0: src's domain). */
static int tail(struct dt_smap *dst, const struct dt_smap *src, int64_t a, int64_t d, int64_t k)
{
	size_t i = find(src, a);
	const struct seg *s = &src->v[i];
	if (push(dst, rm_sat_add(a, d), rm_sat_add(s->flat ? s->c : at(src, a), k), s->flat))
		return -ENOMEM;
	for (i++; i < src->n; i++)
		if (push(dst, rm_sat_add(src->v[i].o, d), rm_sat_add(src->v[i].c, k), src->v[i].flat))
			return -ENOMEM;
	return 0;
}

/* The candidate form of op (file maps m), before any update for op:
 * dt_ops[].reloc, one per way an op names places in its file. */

/* No offset (fsync, reopen, global ops): as it is. */
void dt_reloc_none(struct dt_smap *m, const struct dt_op *in, struct dt_op *out)
{
	(void)m;
	*out = *in;
}

/* A truncate's size: the end of the file. */
void dt_reloc_size(struct dt_smap *m, const struct dt_op *in, struct dt_op *out)
{
	*out = *in;
	out->off = at_end(&m[in->file], in->off);
}

/* An offset only: a seek; an insert, whose hole's length is not a range
 * of the file. */
void dt_reloc_off(struct dt_smap *m, const struct dt_op *in, struct dt_op *out)
{
	*out = *in;
	out->off = at(&m[in->file], in->off);
}

/* A range [off, off+len): its start and end through the map.  An I/O
 * buffer never grows (DT_MAX_IO); a range that fell into a removed hole
 * keeps its length, at the hole's start. */
void dt_reloc_range(struct dt_smap *m, const struct dt_op *in, struct dt_op *out)
{
	struct dt_smap *f = &m[in->file];

	*out = *in;
	out->off = at(f, in->off);
	if (in->off < 0 || in->len <= 0 || in->off > INT64_MAX - in->len)
		return;
	int64_t l = at_end(f, in->off + in->len) - out->off;
	int io = !!(dt_opdesc_of(in->kind)->flags & DT_OPF_IO);
	if (l > 0 && (!io || l <= in->len))
		out->len = l;
}

/* A reflink: the destination offset through its file's map, the source
 * range through the source's. */
void dt_reloc_reflink(struct dt_smap *m, const struct dt_op *in, struct dt_op *out)
{
	struct dt_smap *sf = &m[in->src];

	*out = *in;
	out->off = at(&m[in->file], in->off);
	out->soff = at(sf, in->soff);
	if (in->soff >= 0 && in->len > 0 && in->soff <= INT64_MAX - in->len) {
		int64_t l = at_end(sf, in->soff + in->len) - out->soff;
		if (l > 0 && l <= in->len)
			out->len = l;
	}
}

/* Update file map *f (scratch *t) for shift op `in` (its candidate form
 * `c`, or NULL when removed). */
static int update(struct dt_smap *f, struct dt_smap *t, const struct dt_op *in, const struct dt_op *c)
{
	int64_t x = in->off, l = in->len;
	int rc;

	if (x < 0 || l <= 0 || x > INT64_MAX - l)
		return 0;
	if (dt_opdesc_of(in->kind)->shift > 0) {
		if ((rc = head(t, f, x)))
			return rc;
		/* kept: the hole maps onto the candidate's own hole */
		rc = c ? push(t, x, c->off, 0) : push(t, x, at(f, x), 1);
		if (!rc)
			rc = tail(t, f, x, l, c ? l : 0);
	} else {
		if ((rc = head(t, f, x)))
			return rc;
		rc = tail(t, f, x + l, -l, c ? -c->len : 0);
	}
	if (rc)
		return rc;
	struct dt_smap s = *f;
	*f = *t;
	*t = s;
	return 0;
}

ssize_t dt_relocate(const struct dt_op *ops, const uint8_t *shifted, const uint8_t *keep,
		    size_t n, int nfiles, struct dt_op *out)
{
	struct dt_smap m[DT_MAXFILES] = { { 0 } }, t = { 0 };
	ssize_t k = 0;
	int rc = 0;

	if (nfiles < 1 || nfiles > DT_MAXFILES)
		return -EINVAL;
	for (int i = 0; i < nfiles && !rc; i++)
		rc = push(&m[i], 0, 0, 0);
	for (size_t j = 0; j < n && !rc; j++) {
		const struct dt_op *in = &ops[j];
		const struct dt_opdesc *od = dt_opdesc_of(in->kind);
		if (in->file >= nfiles || (od->syntax == DT_SYN_REFLINK && in->src >= nfiles)) {
			rc = -EINVAL;
			break;
		}
		int shift = shifted && shifted[j] && od->shift;
		if (keep[j]) {
			od->reloc(m, in, &out[k]);
			if (shift)
				rc = update(&m[in->file], &t, in, &out[k]);
			k++;
		} else if (shift) {
			rc = update(&m[in->file], &t, in, NULL);
		}
	}
	for (int i = 0; i < nfiles; i++)
		free(m[i].v);
	free(t.v);
	return rc ? rc : k;
}
