/* SPDX-License-Identifier: MIT */
/*
 * expected.c - differences between the model and the running kernel that
 * are known and explained: the model copies one kernel (6.1); a `-t dir:`
 * run on a host with another kernel meets rules that changed since.  Each
 * entry of the data file (difftest/expected/kernels.txt, compiled in;
 * --expected FILE reads another) names the kernel versions it applies to,
 * the file system, the op and divergence kind, a matching rule, the kernel
 * function and release that changed, and why.  An entry applies only when
 * `uname -r` of the running kernel lies in its ranges and the target's file
 * system matches; a divergence it matches is counted (report:
 * expected_differences) instead of reported.  Anything else stays a
 * divergence: a rule matches only the exact shape it describes.
 *
 * Rules (the "match:" line):
 *   errno EXP ACT       the model returned -EXP, the target -ACT
 *   map-past-eof-page   every differing block lies in the page right after a
 *                       page-aligned EOF, a hole in the model, allocated on
 *                       the target (the op's file is started afresh after)
 *   map-folio-data N    every differing block is data on the target (a hole
 *                       or unwritten in the model), below EOF, and in the op's
 *                       range widened to N-byte aligned windows (the op's
 *                       whole window is checked, exec.c; started afresh after)
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "dt.h"
#include "expected_tmpl.h"	/* dt_expected_builtin[], generated */

enum { XM_ERRNO = 1, XM_PAST_EOF_PAGE, XM_FOLIO_DATA };

const char *dt_xdiff_builtin(void)
{
	return dt_expected_builtin;
}

static int cmp_ver(const int a[3], const int b[3])
{
	for (int k = 0; k < 3; k++)
		if (a[k] != b[k])
			return a[k] < b[k] ? -1 : 1;
	return 0;
}

int dt_xdiff_kernel_in(const struct dt_xdiff *e, const int kv[3])
{
	for (int r = 0; r < e->nranges; r++) {
		const struct dt_kver_range *g = &e->ranges[r];
		int hi[3] = { g->hi[0], g->hi[1], g->hi[2] };
		if (g->hi_n == 2)
			hi[2] = 1 << 30;	/* "6.12" as an upper bound: all of 6.12.y */
		if (cmp_ver(kv, g->lo) >= 0 && (!g->hi_n || cmp_ver(kv, hi) <= 0))
			return 1;
	}
	return 0;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

/* "6.12 -", "6.12.118 - 6.12", "6.15 - 6.17.3", ranges separated by ','. */
static int parse_ranges(char *s, struct dt_xdiff *e, char *err, size_t errn)
{
	char *save = NULL;

	for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct dt_kver_range *g;
		const char *p;
		if (e->nranges >= DT_XDIFF_RANGES) {
			snprintf(err, errn, "more than %d kernel ranges", DT_XDIFF_RANGES);
			return -EINVAL;
		}
		g = &e->ranges[e->nranges++];
		tok = trim(tok);
		if (rm_release_version(tok, g->lo, &p) < 0)
			goto bad;
		while (isspace((unsigned char)*p))
			p++;
		if (*p != '-')
			goto bad;
		p++;
		while (isspace((unsigned char)*p))
			p++;
		g->hi_n = 0;
		if (*p) {
			if ((g->hi_n = rm_release_version(p, g->hi, &p)) < 0 || *trim((char *)p))
				goto bad;
			int hi[3] = { g->hi[0], g->hi[1], g->hi_n == 2 ? 1 << 30 : g->hi[2] };
			if (cmp_ver(g->lo, hi) > 0) {
				snprintf(err, errn, "kernel range '%s' is empty", tok);
				return -EINVAL;
			}
		}
		continue;
bad:
		snprintf(err, errn, "bad kernel range '%s' (want e.g. '6.12 -' or '6.12.118 - 6.12')", tok);
		return -EINVAL;
	}
	if (!e->nranges) {
		snprintf(err, errn, "no kernel range");
		return -EINVAL;
	}
	return 0;
}

static int errno_by_name(const char *name)
{
	for (int k = 1; k < DT_NERRNO; k++)
		if (!strcmp(dt_errname(-k), name))
			return k;
	return -1;
}

static int parse_match(char *s, struct dt_xdiff *e, char *err, size_t errn)
{
	char a[32], b[32], extra;
	long long n;

	if (sscanf(s, "errno %31s %31s %c", a, b, &extra) == 2) {
		e->match = XM_ERRNO;
		e->exp_err = errno_by_name(a);
		e->act_err = errno_by_name(b);
		if (e->exp_err < 0 || e->act_err < 0) {
			snprintf(err, errn, "unknown errno name in '%s'", s);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(s, "map-past-eof-page")) {
		e->match = XM_PAST_EOF_PAGE;
		return 0;
	}
	if (sscanf(s, "map-folio-data %lld %c", &n, &extra) == 1) {
		if (n < 4096 || (n & (n - 1)) || n > (1LL << 30)) {
			snprintf(err, errn, "map-folio-data: %lld is not a power of two in 4096..2^30", n);
			return -EINVAL;
		}
		e->match = XM_FOLIO_DATA;
		e->window = n;
		return 0;
	}
	snprintf(err, errn, "unknown match rule '%s' (errno EXP ACT, map-past-eof-page, "
		 "map-folio-data BYTES)", s);
	return -EINVAL;
}

static int entry_done(struct dt_xdiffs *x, struct dt_xdiff *e, size_t line, const char *name,
		      char *err, size_t errn)
{
	const char *miss = !e->nranges ? "kernels" : !e->fs[0] ? "fs" : e->op < -1 ? "op" :
			   !e->div ? "divergence" : !e->match ? "match" : !e->function[0] ? "function" :
			   !e->why[0] ? "why" : NULL;
	if (miss) {
		snprintf(err, errn, "%s:%zu: entry '%s' has no '%s:' line", name, line, e->id, miss);
		return -EINVAL;
	}
	if ((e->match == XM_ERRNO) != (e->div == DV_RET)) {
		snprintf(err, errn, "%s:%zu: entry '%s': errno rules go with 'divergence: return', "
			 "map rules with 'divergence: map'", name, line, e->id);
		return -EINVAL;
	}
	if (e->match != XM_ERRNO && e->div != DV_MAP) {
		snprintf(err, errn, "%s:%zu: entry '%s': map rules need 'divergence: map'", name,
			 line, e->id);
		return -EINVAL;
	}
	for (size_t k = 0; k < x->n; k++)
		if (!strcmp(x->v[k].id, e->id)) {
			snprintf(err, errn, "%s:%zu: entry '%s' defined twice", name, line, e->id);
			return -EINVAL;
		}
	x->v[x->n++] = *e;
	return 0;
}

int dt_xdiff_parse(const char *text, const char *name, struct dt_xdiffs *x, char *err,
		   size_t errn)
{
	struct dt_xdiff e;
	size_t line = 0, start = 0;
	int in = 0, rc = 0;
	char buf[1024], e2[256];

	memset(x, 0, sizeof(*x));
	for (const char *p = text; *p && !rc;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		line++;
		if (len >= sizeof(buf)) {
			snprintf(err, errn, "%s:%zu: line longer than %zu bytes", name, line, sizeof(buf) - 1);
			return -EINVAL;
		}
		memcpy(buf, p, len);
		buf[len] = 0;
		p += len + (nl != NULL);
		char *s = trim(buf);
		if (*s == '#')
			continue;
		if (!*s) {
			if (in && (rc = entry_done(x, &e, start, name, err, errn)))
				return rc;
			in = 0;
			continue;
		}
		char *colon = strchr(s, ':');
		if (!colon) {
			snprintf(err, errn, "%s:%zu: want 'key: value', got '%.80s'", name, line, s);
			return -EINVAL;
		}
		*colon = 0;
		char *key = trim(s), *val = trim(colon + 1);
		if (!in) {
			if (strcmp(key, "id")) {
				snprintf(err, errn, "%s:%zu: an entry starts with 'id:', got '%s:'", name, line, key);
				return -EINVAL;
			}
			if (x->n >= DT_XDIFF_MAX) {
				snprintf(err, errn, "%s:%zu: more than %d entries", name, line, DT_XDIFF_MAX);
				return -EINVAL;
			}
			memset(&e, 0, sizeof(e));
			e.op = -2;	/* unset */
			in = 1;
			start = line;
		}
		e2[0] = 0;
		if (!strcmp(key, "id")) {
			if (!*val || strlen(val) >= sizeof(e.id) || strspn(val,
			    "abcdefghijklmnopqrstuvwxyz0123456789-.") != strlen(val))
				snprintf(e2, sizeof(e2), "id '%s': want [a-z0-9.-], 1..%zu characters",
					 val, sizeof(e.id) - 1);
			else
				snprintf(e.id, sizeof(e.id), "%s", val);
		} else if (!strcmp(key, "kernels")) {
			rc = parse_ranges(val, &e, e2, sizeof(e2));
		} else if (!strcmp(key, "fs")) {
			if (strcmp(val, "any") && strcmp(val, "ext4") && strcmp(val, "xfs"))
				snprintf(e2, sizeof(e2), "fs '%s': want any, ext4 or xfs", val);
			else
				snprintf(e.fs, sizeof(e.fs), "%s", val);
		} else if (!strcmp(key, "op")) {
			e.op = !strcmp(val, "any") ? -1 : dt_kind_parse(val);
			if (e.op < 0 && strcmp(val, "any")) {
				e.op = -2;
				snprintf(e2, sizeof(e2), "unknown op kind '%s'", val);
			}
		} else if (!strcmp(key, "divergence")) {
			e.div = 0;
			for (int k = 1; k < DV_NKINDS; k++)
				if (!strcmp(val, dt_divkind_name(k)))
					e.div = k;
			if (!e.div)
				snprintf(e2, sizeof(e2), "unknown divergence kind '%s'", val);
		} else if (!strcmp(key, "match")) {
			rc = parse_match(val, &e, e2, sizeof(e2));
		} else if (!strcmp(key, "function")) {
			snprintf(e.function, sizeof(e.function), "%s", val);
		} else if (!strcmp(key, "why")) {
			snprintf(e.why, sizeof(e.why), "%s", val);
		} else {
			snprintf(e2, sizeof(e2), "unknown key '%s'", key);
		}
		if (rc || e2[0]) {
			snprintf(err, errn, "%s:%zu: %s", name, line, e2);
			return -EINVAL;
		}
	}
	if (in && (rc = entry_done(x, &e, start, name, err, errn)))
		return rc;
	return 0;
}

int dt_xdiff_load(const char *path, struct dt_xdiffs *x, char *err, size_t errn)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0;

	if (!f) {
		snprintf(err, errn, "%s: %s", path, strerror(errno));
		return -errno;
	}
	ssize_t n = getdelim(&text, &cap, 0, f);
	int bad = ferror(f);
	fclose(f);
	if (n < 0 && bad) {
		free(text);
		snprintf(err, errn, "%s: read error", path);
		return -EIO;
	}
	if (n >= 0 && strlen(text) != (size_t)n) {
		free(text);
		snprintf(err, errn, "%s: a NUL byte in the file", path);
		return -EINVAL;
	}
	int rc = dt_xdiff_parse(n < 0 ? "" : text, path, x, err, errn);
	free(text);
	return rc;
}

int dt_xdiff_select(struct dt_xdiffs *x, const char *release)
{
	struct utsname u;

	if (!release) {
		if (uname(&u))
			return -errno;
		release = u.release;
	}
	snprintf(x->release, sizeof(x->release), "%s", release);
	x->kv_ok = rm_release_version(release, x->kv, NULL) >= 0;
	return 0;
}

/* ---- matching ---- */

struct mctx {
	const struct dt_xdiff *e;
	const struct dt_op *op;
	int64_t size, bs, page;
	int ok, any;
};

static int diff_cb(void *ctx, int64_t lo, int64_t hi, unsigned may, unsigned st)
{
	struct mctx *c = ctx;

	c->any = 1;
	if (c->e->match == XM_PAST_EOF_PAGE) {
		if (may != RM_HOLE || st == RM_HOLE)
			c->ok = 0;
		/* ext4_punch_hole() before "ext4: refactor ext4_punch_hole()"
		 * punched up to i_size + PAGE_SIZE - (i_size & (PAGE_SIZE-1)):
		 * a whole page past a page-aligned EOF; since, round_up(i_size,
		 * PAGE_SIZE), nothing past it */
		if (c->size % c->page || lo < c->size || hi > c->size + c->page)
			c->ok = 0;
	} else {
		int64_t w = c->e->window;
		int64_t a = c->op->off & ~(w - 1);
		int64_t b = rm_sat_add(rm_sat_add(c->op->off, c->op->len), w - 1) & ~(w - 1);
		int64_t eof = rm_sat_add(c->size, c->bs - 1) & ~(c->bs - 1);
		if (st != RM_DATA || lo < a || hi > b || hi > eof)
			c->ok = 0;
	}
	return 0;
}

static int map_matches(const struct dt_xdiff *e, struct dt_exec *x, const struct dt_div *d)
{
	struct dt_mapsnap *m;
	struct mctx c = { .e = e, .op = &d->op, .ok = 1 };
	long pg = sysconf(_SC_PAGESIZE);

	if (d->file < 0 || d->file >= x->s->nfiles || dt_mapsnap_take(x, d->file, &m))
		return 0;
	c.size = rm_size(x->s->model[d->file]);
	c.bs = rm_blocksize(x->s->model[d->file]);
	c.page = pg > 0 ? pg : 4096;
	if (m->note[0] || m->act_size != m->exp_size)
		c.ok = 0;
	else
		dt_mapsnap_diffs(m, diff_cb, &c);
	dt_mapsnap_free(m);
	return c.ok && c.any;
}

int dt_xdiff_match(const struct dt_xdiffs *xs, struct dt_exec *x, const struct dt_div *d)
{
	const struct dt_target *t = x->s->t;

	if (!xs || !xs->kv_ok || t->type != DT_T_FD)
		return -1;
	for (size_t k = 0; k < xs->n; k++) {
		const struct dt_xdiff *e = &xs->v[k];
		if (strcmp(e->fs, "any") && strcmp(e->fs, t->fsname))
			continue;
		if (!dt_xdiff_kernel_in(e, xs->kv) || e->div != d->kind ||
		    (e->op >= 0 && e->op != d->op.kind))
			continue;
		if (e->match == XM_ERRNO ? d->exp_ret == -e->exp_err && d->act_ret == -e->act_err
		    : map_matches(e, x, d))
			return (int)k;
	}
	return -1;
}

int64_t dt_xdiff_window(const struct dt_xdiffs *xs, const struct dt_target *t, const struct dt_op *op)
{
	if (!xs || !xs->kv_ok || t->type != DT_T_FD)
		return 0;
	for (size_t k = 0; k < xs->n; k++) {
		const struct dt_xdiff *e = &xs->v[k];
		if (e->match == XM_FOLIO_DATA && (e->op < 0 || e->op == op->kind) &&
		    (!strcmp(e->fs, "any") || !strcmp(e->fs, t->fsname)) &&
		    dt_xdiff_kernel_in(e, xs->kv))
			return e->window;
	}
	return 0;
}

int dt_xdiff_resets(const struct dt_xdiffs *xs, int k)
{
	return xs->v[k].match != XM_ERRNO;
}

uint64_t dt_xdiff_summary(const struct dt_xdiffs *xs, const uint64_t *hits, char *buf, size_t n)
{
	size_t len = 0;
	uint64_t sum = 0;

	buf[0] = 0;
	for (size_t k = 0; xs && k < xs->n; k++)
		sum += hits[k];
	for (size_t k = 0; xs && k < xs->n && len + 1 < n; k++) {
		if (!hits[k])
			continue;
		int w = snprintf(buf + len, n - len, "%s%s=%" PRIu64, len ? "," : "", xs->v[k].id, hits[k]);
		if (w < 0 || (size_t)w >= n - len)
			break;
		len += (size_t)w;
	}
	return sum;
}

int dt_xdiff_setup(const char *arg, struct dt_xdiffs *x, char *err, size_t errn)
{
	int rc;

	if (arg && !strcmp(arg, "none")) {
		memset(x, 0, sizeof(*x));
		return 0;
	}
	rc = arg ? dt_xdiff_load(arg, x, err, errn)
		 : dt_xdiff_parse(dt_xdiff_builtin(), "expected/kernels.txt (built in)", x, err, errn);
	if (!rc && (rc = dt_xdiff_select(x, NULL)) < 0)
		snprintf(err, errn, "uname: %s", strerror(-rc));
	return rc;
}

void dt_xdiff_describe(const struct dt_xdiffs *xs, const char *fsname, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t k = 0; xs && xs->kv_ok && k < xs->n && len + 1 < n; k++) {
		const struct dt_xdiff *e = &xs->v[k];
		if ((strcmp(e->fs, "any") && strcmp(e->fs, fsname)) || !dt_xdiff_kernel_in(e, xs->kv))
			continue;
		int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", e->id);
		if (w < 0 || (size_t)w >= n - len)
			break;
		len += (size_t)w;
	}
}
