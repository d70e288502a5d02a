/* SPDX-License-Identifier: MIT */
/*
 * mapshtml.c - maps.html, a picture of one divergence, written beside
 * maps.txt (shrink.c, dt_write_repro()).  maps.txt shows ~100 blocks
 * around the divergence as text; a deep-tree divergence spans thousands of
 * extents, so the page draws the WHOLE file as runs on a zoomable canvas:
 *   - the model's map (state and may-mask) and the target's FIEMAP at the
 *     divergence (struct dt_mapsnap, taken where the divergence's picture
 *     is drawn: shrink.c div_picture()), and the blocks where the target's
 *     state is outside the model's may-set (the oracle's rule, exec.c);
 *   - the shrunk ops on a timeline with the MODEL's map after each op,
 *     replayed here through the reproducer's model hooks (optab.h .model,
 *     as script.c replays them).  The target's map after each op is not
 *     collected: FIEMAP_FLAG_SYNC writes the file back, so a FIEMAP after
 *     every op of the confirming replay would change what that replay
 *     checks (delalloc converted early, other extent merges).
 * The page is the template maps.html.in (compiled in by CMake as
 * dt_maps_tmpl, see CMakeLists.txt) with the data spliced in as JSON at its
 * marker.  Every string is escaped for a <script> element: '<', '>' and
 * '&' as \u escapes, so a file name holding "</script>" stays data.
 * Positions are in blocks (bytes in the bytes profile): block numbers stay
 * below 2^53, exact as JavaScript numbers, even at XFS's s_maxbytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dt.h"
#include "optab.h"
#include "rm_vec.h"
#include "maps_html_tmpl.h"	/* dt_maps_tmpl[], generated */

#define TMPL_MARK "@DT_MAPS_JSON@"
/* Runs kept for the timeline's maps (all snapshots together): the maps of
 * the last ops that fit are embedded, earlier ops are listed without one. */
#define SNAP_BUDGET 200000

struct runvec {
	struct rm_run *v;
	size_t n, cap;
};

static int push_run(struct runvec *r, int64_t off, int64_t len, unsigned st, unsigned may)
{
	if (len <= 0)
		return 0;
	if (r->n && r->v[r->n - 1].state == st && r->v[r->n - 1].may == may &&
	    r->v[r->n - 1].off + r->v[r->n - 1].len == off) {
		r->v[r->n - 1].len += len;
		return 0;
	}
	if (RM_VEC_RESERVE(&r->v, &r->cap, r->n + 1, 64))
		return -ENOMEM;
	r->v[r->n++] = (struct rm_run){ .off = off, .len = len, .state = st, .may = may };
	return 0;
}

static int walk_cb(void *ctx, const struct rm_run *run)
{
	return push_run(ctx, run->off, run->len, run->state, run->may);
}

/* The cached view (observer-free checks) in the page's terms: a delayed
 * allocation is data, as the target's row shows it. */
static unsigned no_delalloc(unsigned m)
{
	return m & RM_DELALLOC ? (m & ~RM_DELALLOC) | RM_DATA : m;
}

static int walk_cached_cb(void *ctx, const struct rm_run *run)
{
	return push_run(ctx, run->off, run->len, no_delalloc(run->state), no_delalloc(run->may));
}

/* Granule the oracle compares in: bytes in the bytes profile, else blocks
 * (exec.c check_map()). */
static int64_t unit_of(const struct rm_file *m)
{
	return rm_profile_of(m) == RM_PROFILE_BYTES ? 1 : rm_blocksize(m);
}

static int model_map(const struct rm_file *m, struct runvec *r, int cached)
{
	int64_t end = rm_map_end(m);

	r->n = 0;
	if (rm_size(m) > end)
		end = rm_size(m);
	if (end <= 0)
		return 0;
	return cached ? rm_walk_cached(m, 0, end, walk_cached_cb, r) : rm_walk(m, 0, end, walk_cb, r);
}

void dt_mapsnap_free(struct dt_mapsnap *m)
{
	if (!m)
		return;
	free(m->exp);
	free(m->act);
	free(m);
}

int dt_mapsnap_take(struct dt_exec *x, int i, struct dt_mapsnap **out)
{
	struct dt_session *s = x->s;
	struct dt_mapsnap *m = calloc(1, sizeof(*m));
	struct runvec e = { 0 }, a = { 0 };
	struct rm_extent *ext = NULL;
	size_t cap = 0;
	int rc;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	if ((rc = model_map(s->model[i], &e, s->t->cached)) < 0)
		goto fail;
	m->exp = e.v;
	m->nexp = e.n;
	m->exp_size = rm_size(s->model[i]);
	m->act_size = dt_t_size(s, i);
	int64_t u = unit_of(s->model[i]);
	int64_t ne = s->t->fiemap ? dt_t_fiemap(s, i, 0, INT64_MAX, &ext, &cap) : -EOPNOTSUPP;
	if (ne < 0) {
		snprintf(m->note, sizeof(m->note), "the target's map is unknown: FIEMAP %s",
			 dt_errname((int)ne));
	} else {
		/* whole granules, as exec.c target_state(): an extent ending
		 * mid-block (clipped at EOF) covers its last block */
		int64_t p = 0;
		for (int64_t j = 0; j < ne && !rc; j++) {
			int64_t lo = ext[j].logical & ~(u - 1);
			int64_t hi = rm_sat_add(rm_sat_add(ext[j].logical, ext[j].length), u - 1) & ~(u - 1);
			unsigned st = (ext[j].flags & RM_FIEMAP_UNWRITTEN) ? RM_UNWRITTEN : RM_DATA;
			if (lo < p)
				lo = p;
			if (hi <= lo)
				continue;
			rc = push_run(&a, p, lo - p, RM_HOLE, RM_HOLE);
			if (!rc)
				rc = push_run(&a, lo, hi - lo, st, st);
			p = hi;
		}
		m->act = a.v;
		m->nact = a.n;
		a.v = NULL;
		if (rc)
			goto fail;
	}
	free(ext);
	*out = m;
	return 0;
fail:
	free(ext);
	free(a.v);
	if (!m->exp)
		free(e.v);
	dt_mapsnap_free(m);
	return rc < 0 ? rc : -ENOMEM;
}

/* ---- JSON ---- */

/* A JSON string safe inside <script>: no raw '<', '>', '&', controls. */
static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&' || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* Runs as [start, length, state, may] in granules of u. */
static void jruns(FILE *f, const struct rm_run *v, size_t n, int64_t u)
{
	fputc('[', f);
	for (size_t k = 0; k < n; k++) {
		int64_t lo = v[k].off / u;
		int64_t hi = rm_sat_add(rm_sat_add(v[k].off, v[k].len), u - 1) / u;
		fprintf(f, "%s[%" PRId64 ",%" PRId64 ",%u,%u]", k ? "," : "", lo, hi - lo,
			v[k].state, v[k].may);
	}
	fputc(']', f);
}

int dt_mapsnap_diffs(const struct dt_mapsnap *m,
		     int (*fn)(void *ctx, int64_t lo, int64_t hi, unsigned may, unsigned st),
		     void *ctx)
{
	size_t i = 0, j = 0;
	int64_t p = 0;
	int rc = 0;

	while (!rc) {
		while (i < m->nexp && m->exp[i].off + m->exp[i].len <= p)
			i++;
		while (j < m->nact && m->act[j].off + m->act[j].len <= p)
			j++;
		if (i >= m->nexp && j >= m->nact)
			break;
		int64_t q = INT64_MAX;
		unsigned may = RM_HOLE, st = RM_HOLE;
		if (i < m->nexp) {
			if (m->exp[i].off <= p) {
				may = m->exp[i].may;
				q = m->exp[i].off + m->exp[i].len;
			} else {
				q = m->exp[i].off;
			}
		}
		if (j < m->nact) {
			int64_t qa = m->act[j].off <= p ? m->act[j].off + m->act[j].len : m->act[j].off;
			if (m->act[j].off <= p)
				st = m->act[j].state;
			if (qa < q)
				q = qa;
		}
		if (!(may & st))
			rc = fn(ctx, p, q, may, st);
		p = q;
	}
	return rc;
}

/* [start, length] ranges of differing granules, adjacent ones merged */
struct jd {
	FILE *f;
	int64_t u, lo, hi;
	size_t cnt;
};

static void jd_flush(struct jd *c)
{
	if (c->lo >= 0)
		fprintf(c->f, "%s[%" PRId64 ",%" PRId64 "]", c->cnt++ ? "," : "", c->lo / c->u,
			rm_sat_add(c->hi - c->lo, c->u - 1) / c->u);
}

static int jd_cb(void *ctx, int64_t lo, int64_t hi, unsigned may, unsigned st)
{
	struct jd *c = ctx;
	(void)may;
	(void)st;
	if (c->hi != lo) {
		jd_flush(c);
		c->lo = lo;
	}
	c->hi = hi;
	return 0;
}

static void jdiff(FILE *f, const struct dt_mapsnap *m, int64_t u)
{
	struct jd c = { .f = f, .u = u, .lo = -1, .hi = -1 };

	fputc('[', f);
	dt_mapsnap_diffs(m, jd_cb, &c);
	jd_flush(&c);
	fputc(']', f);
}

/* Replay ops on fresh model files as the reproducer's model does (optab.h
 * .model hooks; fsync as exec.c dt_x_fsync() runs it on the model).  With
 * f == NULL only count each op's runs of file `file` into cnt[]; else write
 * the maps of the ops from `from` on (earlier ones: null). */
static int replay_maps(FILE *f, const struct dt_target *t, int nfiles, const struct dt_op *ops,
		       size_t n, int file, size_t from, size_t *cnt, int64_t u)
{
	struct rm_file *m[DT_MAXFILES] = { 0 };
	unsigned char *buf = malloc(DT_MAX_IO);
	struct runvec r = { 0 };
	int rc = buf ? 0 : -ENOMEM;

	for (int k = 0; k < nfiles && !rc; k++)
		rc = rm_file_new(&t->mopts, &m[k]);
	if (f)
		fputc('[', f);
	for (size_t j = 0; j < n && !rc; j++) {
		const struct dt_opdesc *od = dt_opdesc_of(ops[j].kind);
		if (ops[j].file < nfiles) {
			if (od->model)
				od->model(m, nfiles, &ops[j], buf);
			else if (ops[j].kind == DT_FSYNC)
				rm_fsync(m[ops[j].file]);
		}
		if (f && j < from) {
			fprintf(f, "%snull", j ? "," : "");
			continue;
		}
		if ((rc = model_map(m[file], &r, 0)) < 0)
			break;
		if (cnt)
			cnt[j] = r.n;
		if (f) {
			fprintf(f, "%s{\"size\":%" PRId64 ",\"runs\":", j ? "," : "", rm_size(m[file]));
			jruns(f, r.v, r.n, u);
			fputc('}', f);
		}
	}
	if (f)
		fputc(']', f);
	for (int k = 0; k < nfiles; k++)
		rm_file_free(m[k]);
	free(r.v);
	free(buf);
	return rc < 0 ? rc : 0;
}

static void json(FILE *f, const struct dt_target *t, int nfiles, const struct dt_op *ops,
		 size_t n, const struct dt_div *d, size_t from, int64_t u)
{
	char line[256];
	const struct dt_mapsnap *m = d->snap;

	fprintf(f, "{\"version\":1,\"target\":");
	jstr(f, t->name);
	fprintf(f, ",\"fs\":");
	jstr(f, t->fsname);
	fprintf(f, ",\"profile\":");
	jstr(f, rm_profile_name(t->mopts.profile));
	fprintf(f, ",\"blocksize\":%u,\"unit\":%" PRId64 ",\"file\":%d,\"kind\":", t->mopts.blocksize,
		u, d->file);
	jstr(f, dt_divkind_name(d->kind));
	dt_op_format(&d->op, line, sizeof(line));
	fprintf(f, ",\"opno\":%" PRIu64 ",\"op\":", d->opno);
	jstr(f, line);
	fprintf(f, ",\"msg\":");
	jstr(f, d->msg);
	fprintf(f, ",\"byte\":%" PRId64, d->byte_off);
	if (m) {
		fprintf(f, ",\"exp_size\":%" PRId64 ",\"act_size\":%" PRId64 ",\"note\":",
			m->exp_size, m->act_size);
		jstr(f, m->note);
		fprintf(f, ",\"exp\":");
		jruns(f, m->exp, m->nexp, u);
		fprintf(f, ",\"act\":");
		if (m->note[0])
			fprintf(f, "null,\"diff\":[]");
		else {
			jruns(f, m->act, m->nact, u);
			fprintf(f, ",\"diff\":");
			jdiff(f, m, u);
		}
	} else {
		fprintf(f, ",\"note\":\"the maps at the divergence were not captured\","
			   "\"exp\":null,\"act\":null,\"diff\":[]");
	}
	fprintf(f, ",\"ops\":[");
	for (size_t j = 0; j < n; j++) {
		dt_op_format(&ops[j], line, sizeof(line));
		if (j)
			fputc(',', f);
		jstr(f, line);
	}
	fprintf(f, "],\"after\":");
	if (replay_maps(f, t, nfiles, ops, n, d->file, from, NULL, u) < 0)
		fprintf(f, "null");
	fputc('}', f);
}

int dt_maps_html_write(FILE *f, const struct dt_target *t, int nfiles,
		       const struct dt_op *ops, size_t n, const struct dt_div *d)
{
	const char *mark = strstr(dt_maps_tmpl, TMPL_MARK);
	size_t *cnt = calloc(n ? n : 1, sizeof(*cnt));
	int rc;

	if (!mark || !cnt) {
		free(cnt);
		return mark ? -ENOMEM : -EINVAL;
	}
	if (d->file < 0 || d->file >= nfiles) {
		free(cnt);
		return -EINVAL;
	}
	struct rm_file *probe;
	if ((rc = rm_file_new(&t->mopts, &probe)) < 0) {
		free(cnt);
		return rc;
	}
	int64_t u = unit_of(probe);
	rm_file_free(probe);
	/* the last ops whose maps fit SNAP_BUDGET runs */
	size_t from = n, sum = 0;
	if ((rc = replay_maps(NULL, t, nfiles, ops, n, d->file, 0, cnt, u)) < 0) {
		free(cnt);
		return rc;
	}
	while (from > 0 && sum + cnt[from - 1] <= SNAP_BUDGET)
		sum += cnt[--from];
	free(cnt);
	fwrite(dt_maps_tmpl, 1, (size_t)(mark - dt_maps_tmpl), f);
	json(f, t, nfiles, ops, n, d, from, u);
	fputs(mark + strlen(TMPL_MARK), f);
	return ferror(f) ? -EIO : 0;
}
