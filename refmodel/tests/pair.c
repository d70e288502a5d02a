/* SPDX-License-Identifier: MIT */
/*
 * pair.c - the tree and flat models side by side (see pair.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "pair.h"

#define KEEP	RM_FALLOC_FL_KEEP_SIZE
#define PUNCH	RM_FALLOC_FL_PUNCH_HOLE
#define COLL	RM_FALLOC_FL_COLLAPSE_RANGE
#define INS	RM_FALLOC_FL_INSERT_RANGE

void fill_bytes(uint8_t *buf, size_t n, uint64_t seed)
{
	uint64_t s = seed;
	/* runs of one value now and then, so content hashes of runs matter */
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v = mix64(s++);
		for (size_t k = 0; k < 8 && i + k < n; k++)
			buf[i + k] = (uint8_t)(v >> (8 * k));
	}
}


static const char *mode_name(int mode, char *buf, size_t n)
{
	static const char *names[] = { "KEEP", "PUNCH", "NOHIDE", "COLLAPSE",
				       "ZERO", "INSERT", "UNSHARE" };
	size_t k = 0;
	buf[0] = 0;
	if (mode == 0)
		return "0";
	for (int b = 0; b < 31; b++) {
		if (!(mode & (1 << b)))
			continue;
		k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? "|" : "",
				      b < 7 ? names[b] : "?");
		if (k >= n)
			break;
	}
	if (mode < 0)
		snprintf(buf, n, "%#x", (unsigned)mode);
	return buf;
}

void print_op(FILE *out, size_t i, const struct op *o)
{
	char mb[96];
	switch (o->kind) {
	case OP_PWRITE:
		fprintf(out, "  [%zu] pwrite off=%" PRId64 " len=%" PRId64 " dseed=%#" PRIx64 "\n",
			i, o->off, o->len, o->dseed);
		break;
	case OP_PREAD:
		fprintf(out, "  [%zu] pread off=%" PRId64 " len=%" PRId64 "\n", i, o->off, o->len);
		break;
	case OP_TRUNC:
		fprintf(out, "  [%zu] truncate %" PRId64 "\n", i, o->len);
		break;
	case OP_FSYNC:
		fprintf(out, "  [%zu] fsync\n", i);
		break;
	case OP_FALLOC:
		fprintf(out, "  [%zu] fallocate mode=%s off=%" PRId64 " len=%" PRId64 "\n",
			i, mode_name(o->mode, mb, sizeof(mb)), o->off, o->len);
		break;
	case OP_SEEK:
		fprintf(out, "  [%zu] lseek off=%" PRId64 " %s\n", i, o->off,
			o->mode == RM_SEEK_DATA ? "SEEK_DATA" :
			o->mode == RM_SEEK_HOLE ? "SEEK_HOLE" : "whence?");
		break;
	case OP_FIEMAP:
		fprintf(out, "  [%zu] fiemap start=%" PRId64 " len=%" PRId64 "\n", i, o->off, o->len);
		break;
	case OP_WRITEBACK:
		fprintf(out, "  [%zu] writeback off=%" PRId64 " len=%" PRId64 "\n", i, o->off, o->len);
		break;
	case OP_MWRITE:
		fprintf(out, "  [%zu] mwrite off=%" PRId64 " len=%" PRId64 " dseed=%#" PRIx64 "\n",
			i, o->off, o->len, o->dseed);
		break;
	}
}

/* RM_DIFF_SKIP=tag,tag: leave out checks of known, reported disagreements
 * while hunting for the next one (tags: lseek_ok map_end fiemap_range
 * walk alloc_bytes).  CI runs with every check. */
static int skipped(const char *tag)
{
	const char *s = getenv("RM_DIFF_SKIP");
	size_t n = strlen(tag);
	while (s && *s) {
		if (!strncmp(s, tag, n) && (s[n] == ',' || s[n] == 0))
			return 1;
		s = strchr(s, ',');
		if (s)
			s++;
	}
	return 0;
}


/* ---- the two models side by side ---- */

int pair_open(struct pair *p, const struct rm_opts *o)
{
	memset(p, 0, sizeof(*p));
	p->opts = *o;
	if (rm_file_new(o, &p->t) != 0)
		return -1;
	if (fm_new(o, &p->f) != 0)
		return -1;
	p->b1 = malloc(MAXBUF);
	p->b2 = malloc(MAXBUF);
	p->r1 = malloc(MAXRUNS * sizeof(*p->r1));
	p->r2 = malloc(MAXRUNS * sizeof(*p->r2));
	p->e1 = malloc(MAXEXT * sizeof(*p->e1));
	p->e2 = malloc(MAXEXT * sizeof(*p->e2));
	return p->b1 && p->b2 && p->r1 && p->r2 && p->e1 && p->e2 ? 0 : -1;
}

void pair_close(struct pair *p)
{
	rm_file_free(p->t);
	fm_free(&p->f);
	free(p->b1);
	free(p->b2);
	free(p->r1);
	free(p->r2);
	free(p->e1);
	free(p->e2);
}

static int mismatch(struct pair *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
	return -1;
}

struct walkbuf { struct rm_run *r; size_t n, max; };

static int collect(void *ctx, const struct rm_run *run)
{
	struct walkbuf *w = ctx;
	if (w->n < w->max)
		w->r[w->n] = *run;
	w->n++;
	return 0;
}

/* Apply one operation to both models and compare the results. */
int pair_apply(struct pair *p, const struct op *o)
{
	int64_t a = 0, b = 0;
	switch (o->kind) {
	case OP_PWRITE: {
		size_t n = (size_t)o->len;
		/* Only lengths the buffer holds are handed over with data; the
		 * others are invalid and must fail before any byte is read. */
		const uint8_t *buf = p->b1;
		if (o->len >= 0 && o->len <= MAXBUF)
			fill_bytes(p->b1, n, o->dseed);
		a = rm_pwrite(p->t, buf, n, o->off);
		b = fm_pwrite(&p->f, buf, n, o->off);
		break;
	}
	case OP_PREAD: {
		size_t n = (size_t)o->len;
		/* different fill, so that a byte either model leaves
		 * unwritten shows */
		memset(p->b1, 0x5a, n < MAXBUF ? n : MAXBUF);
		memset(p->b2, 0xa5, n < MAXBUF ? n : MAXBUF);
		a = rm_pread(p->t, p->b1, n, o->off);
		b = fm_pread(&p->f, p->b2, n, o->off);
		if (a == b && a > 0 && memcmp(p->b1, p->b2, (size_t)a) != 0) {
			int64_t i = 0;
			while (p->b1[i] == p->b2[i])
				i++;
			return mismatch(p, "pread bytes differ at file offset %" PRId64
					": tree %#x flat %#x", o->off + i, p->b1[i], p->b2[i]);
		}
		break;
	}
	case OP_TRUNC:
		a = rm_truncate(p->t, o->len);
		b = fm_truncate(&p->f, o->len);
		break;
	case OP_FSYNC:
		a = rm_fsync(p->t);
		b = fm_fsync(&p->f);
		break;
	case OP_WRITEBACK:
		a = rm_writeback(p->t, o->off, o->len);
		b = fm_writeback(&p->f, o->off, o->len);
		break;
	case OP_MWRITE: {
		size_t n = o->len >= 0 && o->len <= MAXBUF ? (size_t)o->len : 0;
		fill_bytes(p->b1, n, o->dseed);
		a = rm_mwrite(p->t, p->b1, n, o->off);
		b = fm_mwrite(&p->f, p->b1, n, o->off);
		break;
	}
	case OP_FALLOC:
		a = rm_fallocate(p->t, o->mode, o->off, o->len);
		b = fm_fallocate(&p->f, o->mode, o->off, o->len);
		break;
	case OP_SEEK:
		a = rm_lseek(p->t, o->off, o->mode);
		b = fm_lseek(&p->f, o->off, o->mode);
		break;
	case OP_FIEMAP: {
		if (skipped("fiemap_range"))
			break;
		a = rm_fiemap(p->t, o->off, o->len, p->e1, MAXEXT);
		b = fm_fiemap(&p->f, o->off, o->len, p->e2, MAXEXT);
		if (a == b && a > 0) {
			for (int64_t i = 0; i < a && i < MAXEXT; i++)
				if (p->e1[i].logical != p->e2[i].logical ||
				    p->e1[i].length != p->e2[i].length ||
				    p->e1[i].flags != p->e2[i].flags)
					return mismatch(p, "fiemap extent %" PRId64 ": tree "
						"{%" PRId64 ",%" PRId64 ",%#x} flat {%" PRId64 ",%" PRId64 ",%#x}",
						i, p->e1[i].logical, p->e1[i].length, p->e1[i].flags,
						p->e2[i].logical, p->e2[i].length, p->e2[i].flags);
		}
		break;
	}
	}
	if (b == -ENOMEM)
		return mismatch(p, "flat model out of span (test generator bug)");
	if (a != b)
		return mismatch(p, "result: tree %" PRId64 " flat %" PRId64, a, b);
	return 0;
}

/* Compare the whole visible state of both models. */
int pair_compare(struct pair *p, struct rng *r)
{
	struct fm_file *f = &p->f;
	char msg[256] = "";

	if (rm_check(p->t, msg, sizeof(msg)) != 0)
		return mismatch(p, "rm_check: %s", msg);
	if (rm_size(p->t) != f->size)
		return mismatch(p, "size: tree %" PRId64 " flat %" PRId64, rm_size(p->t), f->size);
	uint64_t h1 = rm_hash(p->t, 0, INT64_MAX), h2 = fm_hash(f);
	if (h1 != h2) {
		/* locate the first differing byte for the report */
		for (int64_t off = 0; off < f->size; off += MAXBUF) {
			int64_t n1 = rm_pread(p->t, p->b1, MAXBUF, off);
			int64_t n2 = fm_pread(f, p->b2, MAXBUF, off);
			for (int64_t i = 0; i < n1 && i < n2; i++)
				if (p->b1[i] != p->b2[i])
					return mismatch(p, "content differs at %" PRId64
							": tree %#x flat %#x", off + i, p->b1[i], p->b2[i]);
		}
		return mismatch(p, "hash: tree %#" PRIx64 " flat %#" PRIx64, h1, h2);
	}
	/* A random sub-range hash too (rm_hash clipping). */
	if (f->size > 0) {
		int64_t o = rbelow(r, f->size), n = rbelow(r, f->size - o + 2);
		uint64_t s1 = rm_hash(p->t, o, n);
		int64_t m = n < f->size - o ? n : f->size - o;
		uint64_t s2 = XXH3_64bits(f->data + o, (size_t)m);
		if (s1 != s2)
			return mismatch(p, "rm_hash(%" PRId64 ", %" PRId64 "): tree %#" PRIx64
					" flat %#" PRIx64, o, n, s1, s2);
	}

	/* Block map: walk both over the same range, past everything either
	 * model has allocated or may allocate. */
	int64_t g = f->g, fe = fm_map_end(f), te = rm_map_end(p->t);
	int64_t end = f->cap * g;
	if (fe != INT64_MAX && fe > end)
		end = fe;
	if (te > end && te <= 4 * FM_MAX_SPAN)
		end = te;
	if (f->size > end)
		end = f->size;
	end = (end / p->f.bs + 2) * p->f.bs;
	struct walkbuf w = { p->r1, 0, MAXRUNS };
	int rc = rm_walk(p->t, 0, end, collect, &w);
	if (rc != 0)
		return mismatch(p, "rm_walk(0, %" PRId64 ") = %d", end, rc);
	size_t n2 = fm_walk(f, 0, end, p->r2, MAXRUNS);
	if (w.n > MAXRUNS || n2 > MAXRUNS)
		return mismatch(p, "too many runs to compare (%zu, %zu)", w.n, n2);
	/* rm_walk promises maximal runs */
	for (size_t i = 1; i < w.n; i++)
		if (p->r1[i].state == p->r1[i - 1].state && p->r1[i].may == p->r1[i - 1].may)
			return mismatch(p, "rm_walk runs %zu and %zu not maximal (off %" PRId64 ")",
					i - 1, i, p->r1[i].off);
	/* Sweep both run lists in parallel, so that a difference is reported
	 * at the first byte where it happens. */
	size_t i1 = 0, i2 = 0;
	int64_t pos = 0;
	while (!skipped("walk") && pos < end) {
		if (i1 >= w.n || i2 >= n2)
			return mismatch(p, "walk ends early at %" PRId64 " (tree %zu runs, flat %zu)",
					pos, w.n, n2);
		const struct rm_run *x = &p->r1[i1], *y = &p->r2[i2];
		if (x->off > pos || y->off > pos)
			return mismatch(p, "walk gap at %" PRId64, pos);
		int64_t xe = x->off + x->len, ye = y->off + y->len;
		int ok = x->state == y->state && x->may == y->may;
		/* the tree's dirty pages (the flat model has none) below the
		 * page size may let write-back write unwritten blocks: ext4's
		 * a zero range made (D-DT14), XFS 6.1's of any dirty page
		 * (D-DT11) */
		bool page_latitude = p->f.bs < 4096 &&
			(p->opts.profile == RM_PROFILE_EXT4 ||
			 (p->opts.profile == RM_PROFILE_XFS && p->opts.kernel == RM_KERNEL_6_1 &&
			  !p->opts.write_through));
		if (!ok && page_latitude && x->state == y->state && x->state == RM_UNWRITTEN &&
		    (x->may & ~y->may) == RM_DATA)
			ok = 1;
		/* hunting aids: tolerate a stricter (subset) or looser tree may-mask */
		if (!ok && x->state == y->state && skipped("may_subset") && (x->may & ~y->may) == 0)
			ok = 1;
		if (!ok && x->state == y->state && skipped("may_superset") && (y->may & ~x->may) == 0)
			ok = 1;
		if (!ok)
			return mismatch(p, "block map at %" PRId64 ": tree {run off %" PRId64 " len %" PRId64
					" state %u may %u} flat {run off %" PRId64 " len %" PRId64
					" state %u may %u}", pos, x->off, x->len, x->state, x->may,
					y->off, y->len, y->state, y->may);
		int64_t e = xe < ye ? xe : ye;
		pos = e;
		if (xe == e)
			i1++;
		if (ye == e)
			i2++;
	}
	if (!skipped("map_end") && fe != INT64_MAX && te != fe)
		return mismatch(p, "map_end: tree %" PRId64 " flat %" PRId64, te, fe);

	/* Whole-file FIEMAP. */
	int64_t c1 = rm_fiemap(p->t, 0, INT64_MAX, p->e1, MAXEXT);
	int64_t c2 = fm_fiemap(f, 0, INT64_MAX, p->e2, MAXEXT);
	if (c1 != c2)
		return mismatch(p, "fiemap count: tree %" PRId64 " flat %" PRId64, c1, c2);
	for (int64_t i = 0; i < c1 && i < MAXEXT; i++)
		if (p->e1[i].logical != p->e2[i].logical || p->e1[i].length != p->e2[i].length ||
		    p->e1[i].flags != p->e2[i].flags)
			return mismatch(p, "fiemap extent %" PRId64 ": tree {%" PRId64 ",%" PRId64
					",%#x} flat {%" PRId64 ",%" PRId64 ",%#x}", i,
					p->e1[i].logical, p->e1[i].length, p->e1[i].flags,
					p->e2[i].logical, p->e2[i].length, p->e2[i].flags);

	/* SEEK_DATA / SEEK_HOLE at a few offsets. */
	for (int k = 0; k < 2; k++) {
		int64_t o = f->size ? rbelow(r, f->size + 2) : 0;
		for (int wh = RM_SEEK_DATA; wh <= RM_SEEK_HOLE; wh++) {
			int64_t s1 = rm_lseek(p->t, o, wh), s2 = fm_lseek(f, o, wh);
			/* Latitude blocks (an unwritten block whose page was
			 * dirtied, ext4 M4) may legitimately answer either way:
			 * then the flat (cold cache) answer must be one the tree
			 * calls legitimate.  See disagreement D7. */
			if (s1 != s2 && rm_lseek_ok(p->t, o, wh, s2) == 1 &&
			    rm_lseek_ok(p->t, o, wh, s1) == 1)
				s2 = s1;
			if (s1 != s2)
				return mismatch(p, "lseek(%" PRId64 ", %s): tree %" PRId64
						" flat %" PRId64, o, wh == RM_SEEK_DATA ?
						"SEEK_DATA" : "SEEK_HOLE", s1, s2);
			if (!skipped("lseek_ok") && rm_lseek_ok(p->t, o, wh, s2) != 1)
				return mismatch(p, "rm_lseek_ok rejects its own answer %" PRId64, s2);
		}
	}

	struct rm_stats st;
	rm_stats(p->t, &st);
	if (st.size != f->size)
		return mismatch(p, "stats.size: tree %" PRId64 " flat %" PRId64, st.size, f->size);
	if (!skipped("alloc_bytes") && st.alloc_bytes != fm_alloc_bytes(f))
		return mismatch(p, "stats.alloc_bytes: tree %" PRId64 " flat %" PRId64,
				st.alloc_bytes, fm_alloc_bytes(f));
	if (st.fsyncs != f->fsyncs)
		return mismatch(p, "stats.fsyncs: tree %" PRIu64 " flat %" PRIu64, st.fsyncs, f->fsyncs);
	/* the per-operation accessors agree with the full walk */
	if (rm_alloc_bytes(p->t) != st.alloc_bytes)
		return mismatch(p, "rm_alloc_bytes %" PRId64 ", rm_stats %" PRId64,
				rm_alloc_bytes(p->t), st.alloc_bytes);
	if (rm_runs(p->t) != st.nodes)
		return mismatch(p, "rm_runs %zu, rm_stats %zu", rm_runs(p->t), st.nodes);
	return 0;
}


/* Would the flat model need more than its span for this operation to
 * succeed?  Such operations are not generated (invalid ones are). */
int pair_too_big(const struct pair *p, const struct op *o)
{
	int64_t lim = FM_MAX_SPAN / 2;
	switch (o->kind) {
	case OP_PWRITE:
		return o->off >= 0 && o->len > 0 && o->off < p->f.maxbytes &&
		       o->off <= INT64_MAX - o->len && o->off + o->len > lim;
	case OP_TRUNC:
		return o->len > lim && o->len <= p->f.maxbytes;
	case OP_FALLOC:
		if (o->off < 0 || o->len <= 0 || o->len > INT64_MAX - o->off ||
		    o->off + o->len > p->f.maxbytes)
			return 0;	/* vfs_fallocate() refuses it */
		if (o->mode & INS)
			return o->len > lim || p->f.size + o->len > lim ||
			       p->f.cap * p->f.g + o->len > lim;
		return o->off + o->len > lim;
	default:
		return 0;
	}
}
