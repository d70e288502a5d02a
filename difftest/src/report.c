/* SPDX-License-Identifier: MIT */
/*
 * report.c - difftest's JSON report, and merging the reports of several
 * shards (parallel VMs, machines of a GNU parallel or Slurm campaign) into
 * one: a small JSON reader (enough for any JSON, not only ours), a tree
 * merge with per-key rules, and a writer.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign.h"
#include "rm_vec.h"

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void json_head(FILE *f, const struct dt_campaign *c, const struct dt_tresult *r,
		      int nr, double seconds)
{
	uint64_t ndiv = 0;

	for (int i = 0; i < nr; i++)
		ndiv += r[i].divergences;
	fprintf(f, "{\n  \"tool\": \"difftest\",\n  \"version\": 1,\n  \"seed\": %" PRIu64 ",\n"
		"  \"shard\": \"%d/%d\",\n  \"ops_per_target\": %" PRIu64 ",\n  \"files\": %d,\n"
		"  \"check_every\": %" PRIu64 ",\n  \"seconds\": %.3f,\n  \"divergence_count\": %" PRIu64
		",\n  \"targets\": [", c->base_seed, c->shard_i, c->shard_n, c->ops, c->nfiles,
		c->o.check_every, seconds, ndiv);
}

/* A target's names, counters and tree depths (measured or estimated). */
static void json_target_counts(FILE *f, const struct dt_campaign *c, const struct dt_tresult *t)
{
	int btree = 0;
	int e4 = dt_ext4_depth_est(t->max_extents);
	int xl = dt_xfs_levels_est(t->max_extents, &btree);
	int isxfs = !strncmp(t->profile, "xfs", 3);	/* "xfs", "xfs-6.1", "xfs-6.12" */

	fprintf(f, "\n    {\n      \"name\": ");
	jstr(f, t->name);
	fprintf(f, ",\n      \"fs\": ");
	jstr(f, t->fsname);
	fprintf(f, ",\n      \"profile\": ");
	jstr(f, t->profile);
	fprintf(f, ",\n      \"notes\": ");
	jstr(f, t->notes);
	fprintf(f, ",\n      \"error\": ");
	jstr(f, t->error);
	fprintf(f, ",\n      \"blocksize\": %u,\n      \"ops\": %" PRIu64 ",\n      \"seconds\": %.3f,\n"
		"      \"ops_per_sec\": %.1f,\n      \"shrink_seconds\": %.3f,\n      \"divergences\": %" PRIu64 ",\n"
		"      \"enospc_resets\": %" PRIu64 ",\n      \"remount_fallbacks\": %" PRIu64 ",\n"
		"      \"syscalls\": %" PRIu64 ",\n"
		"      \"fresh_fs_restored\": %" PRIu64 ",\n      \"fresh_fs_mkfs\": %" PRIu64 ",\n"
		"      \"max_extents\": %" PRId64 ",\n      \"max_model_runs\": %" PRId64 ",\n"
		"      \"max_depth_estimated\": %d,\n      \"max_btree_format\": %d,\n"
		"      \"max_depth\": %d,\n      \"depth_measurements\": %" PRIu64 ",\n"
		"      \"depth_seconds\": %.3f,\n      \"fsck_runs\": %" PRIu64 ",\n"
		"      \"fsck_errors\": %" PRIu64 ",\n      \"fsck_seconds\": %.3f,\n"
		"      \"fsck_every\": %" PRIu64 ",\n      \"depth_method\": ",
		t->blocksize, t->ops, t->seconds,
		t->seconds - t->shrink_seconds > 0 ? t->ops / (t->seconds - t->shrink_seconds) : 0.0,
		t->shrink_seconds, t->divergences, t->enospc_resets, t->remount_fallbacks, t->syscalls,
		t->fresh_restored, t->fresh_mkfs, t->max_extents, t->max_model_runs, isxfs ? xl : e4,
		t->depth_runs ? t->max_btree : isxfs ? btree : e4 > 0,
		t->depth_runs ? t->max_depth : isxfs ? xl : e4, t->depth_runs, t->depth_seconds,
		t->fsck_runs, t->fsck_errors, t->fsck_seconds, c->o.fsck_every);
	/* max_depth: the real tree depth read at remounts (file system
	 * unmounted) when that worked, else the estimate */
	if (t->depth_runs)
		jstr(f, isxfs ? "measured by xfs_db at remounts: core.format, u3.bmbt.level of the "
			      "in-inode root (0 extents format, 1 root over leaves)"
			      : "measured by debugfs at remounts: dump_extents -n, eh_depth of the "
				"inode root (0 extents in the inode, 1 root over leaves)");
	else
		jstr(f, isxfs ? "estimated from the FIEMAP extent count (measured): extents format up to 21 "
			      "in-inode records, then btree; levels from 20 root ptrs and 251 recs per leaf"
			      : "estimated from the FIEMAP extent count (measured): eh_depth 0 up to 4 "
				"extents in the inode, +1 per factor of 340 (4 KiB blocks); a lower bound");
	fprintf(f, ",\n      \"depth_note\": ");
	jstr(f, t->depth_note);
}

/* Ops and wall seconds per op kind (a remount's include its full checks)
 * and in the oracle's parts: what bounds the speed. */
static void json_target_times(FILE *f, const struct dt_campaign *c, const struct dt_tresult *t)
{
	const char *sep = "";

	fprintf(f, ",\n      \"ops_per_kind\": {");
	for (int k = 0; k < DT_NKINDS; k++)
		if (t->kind_count[k]) {
			fprintf(f, "%s\"%s\": %" PRIu64, sep, dt_kind_name(k), t->kind_count[k]);
			sep = ", ";
		}
	fprintf(f, "},\n      \"seconds_per_kind\": {");
	sep = "";
	for (int k = 0; k < DT_NKINDS; k++)
		if (t->kind_count[k]) {
			fprintf(f, "%s\"%s\": %.3f", sep, dt_kind_name(k), t->kind_sec[k]);
			sep = ", ";
		}
	fprintf(f, "},\n      \"seconds_in\": {\"full_check\": %.3f, \"fiemap\": %.3f, "
		"\"data_check\": %.3f},\n      \"full_checks\": %" PRIu64
		",\n      \"bytes_checked\": %" PRIu64, t->full_sec, t->map_sec, t->data_sec,
		t->full_checks, t->bytes_checked);
	/* the CPU the run was pinned to (pin.c); a list, so that merged
	 * shards keep each one; [] = not pinned */
	char cpu[16] = "";
	if (t->cpu >= 0)
		snprintf(cpu, sizeof(cpu), "%d", t->cpu);
	fprintf(f, ",\n      \"fiemap_calls\": %" PRIu64 ", \"fiemap_extents\": %" PRIu64
		",\n      \"cpu_seconds\": {\"user\": %.3f, \"sys\": %.3f, \"children\": %.3f}"
		",\n      \"cpus\": [%s]"
		",\n      \"seconds_per_file\": [", t->map_calls, t->map_extents,
		t->cpu_user, t->cpu_sys, t->cpu_children, cpu);
	for (int k = 0; k < DT_MAXFILES && k < c->nfiles; k++)
		fprintf(f, "%s%.3f", k ? ", " : "", t->file_sec[k]);
	fprintf(f, "]");
}

/* The kinds switched off by the probe, and the errno counts per kind. */
static void json_target_errnos(FILE *f, const struct dt_tresult *t)
{
	const char *sep = "";

	fprintf(f, ",\n      \"disabled_kinds\": [");
	for (int k = 0; k < DT_NKINDS; k++)
		if (t->disabled & (1u << k)) {
			fprintf(f, "%s\"%s\"", sep, dt_kind_name(k));
			sep = ", ";
		}
	fprintf(f, "],\n      \"errno\": {");
	sep = "";
	for (int k = 0; k < DT_NKINDS; k++) {
		if (!t->kind_count[k])
			continue;
		fprintf(f, "%s\n        \"%s\": {", sep, dt_kind_name(k));
		sep = ",";
		const char *sep2 = "";
		for (int e = 0; e < DT_NERRNO; e++)
			if (t->errs[k][e]) {
				const char *nm = dt_errname(e);
				char buf[16];
				if (!strcmp(nm, "E?")) {
					snprintf(buf, sizeof(buf), "E%d", e);
					nm = buf;
				}
				fprintf(f, "%s\"%s\": %" PRIu64, sep2, nm, t->errs[k][e]);
				sep2 = ", ";
			}
		fputc('}', f);
	}
	fprintf(f, "\n      }\n    }");
}

static void json_divs(FILE *f, const struct dt_campaign *c)
{
	fprintf(f, "\n  ],\n  \"divergences\": [");
	for (size_t i = 0; i < c->ndivs; i++) {
		const struct dt_divrec *d = &c->divs[i];
		fprintf(f, "%s\n    {\"target\": ", i ? "," : "");
		jstr(f, d->target);
		fprintf(f, ", \"kind\": \"%s\", \"file\": %d, \"op_index\": %" PRIu64 ", \"op\": ",
			dt_divkind_name(d->kind), d->file, d->opno);
		jstr(f, d->op);
		fprintf(f, ", \"message\": ");
		jstr(f, d->msg);
		fprintf(f, ", \"reproducer\": ");
		jstr(f, d->dir);
		fprintf(f, ", \"shrunk_ops\": %zu, \"shrink_runs\": %" PRIu64 ", \"shrink_complete\": %s, "
			"\"shrink_seconds\": %.2f}", d->shrunk_ops, d->shrink_tests,
			d->shrink_complete ? "true" : "false", d->shrink_seconds);
	}
	fprintf(f, "\n  ]\n}\n");
}

int dt_report_json(FILE *f, const struct dt_campaign *c, const struct dt_tresult *r,
		   int nr, double seconds)
{
	json_head(f, c, r, nr, seconds);
	for (int i = 0; i < nr; i++) {
		if (i)
			fputc(',', f);
		json_target_counts(f, c, &r[i]);
		json_target_times(f, c, &r[i]);
		json_target_errnos(f, &r[i]);
	}
	json_divs(f, c);
	return ferror(f) ? -EIO : 0;
}

/* ---- a small JSON tree ---- */

/* Integers are kept exact (sign and 64-bit magnitude): counters and seeds
 * are 64-bit, and a double holds only 53 bits (seed 2^60 + 1 merged to
 * 2^60).  Numbers with a fraction or an exponent are doubles. */
enum jt { J_NULL, J_BOOL, J_INT, J_NUM, J_STR, J_ARR, J_OBJ };
struct jv {
	enum jt t;
	int neg;		/* J_INT: the value is -mag (mag <= 2^63) */
	uint64_t mag;
	double num;		/* J_NUM */
	char *str;		/* J_STR */
	int b;
	struct jv **kids;	/* J_ARR, J_OBJ */
	char **keys;		/* J_OBJ */
	size_t n, cap, kcap;
};

struct jp {
	const char *s, *end;
	const char *err;
};

#define J_MAX_DEPTH 64
#define J_MAX_BYTES ((size_t)64 << 20)

static void jfree(struct jv *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		jfree(v->kids[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->kids);
	free(v->keys);
	free(v->str);
	free(v);
}

static void ws(struct jp *p)
{
	while (p->s < p->end && strchr(" \t\r\n", *p->s))
		p->s++;
}

static int peek(const struct jp *p)
{
	return p->s < p->end ? (unsigned char)*p->s : -1;
}

/* Append kid (and key, for an object): both owned by v afterwards, or
 * freed on failure.  0 or -ENOMEM. */
static int jadd(struct jv *v, char *key, struct jv *kid)
{
	if (!kid || RM_VEC_RESERVE(&v->kids, &v->cap, v->n + 1, 8) ||
	    (v->t == J_OBJ && (!key || RM_VEC_RESERVE(&v->keys, &v->kcap, v->n + 1, 8)))) {
		free(key);
		jfree(kid);
		return -ENOMEM;
	}
	if (v->t == J_OBJ)
		v->keys[v->n] = key;
	else
		free(key);
	v->kids[v->n++] = kid;
	return 0;
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

/* One escape after the backslash: the character, or -1 (p->err set). */
static int jescape(struct jp *p)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	int e = peek(p);
	const char *k = e > 0 ? strchr(from, e) : NULL;

	p->s++;
	if (k)
		return to[k - from];
	if (e != 'u') {
		p->err = "bad escape in a string";
		return -1;
	}
	unsigned u = 0;
	for (int i = 0; i < 4; i++, p->s++) {
		int h = hexval(peek(p));
		if (h < 0) {
			p->err = "bad \\u escape in a string";
			return -1;
		}
		u = u * 16 + (unsigned)h;
	}
	if (!u) {
		p->err = "\\u0000 in a string";
		return -1;
	}
	return u < 0x80 ? (int)u : '?';	/* what jstr() writes is ASCII */
}

static char *jparse_str(struct jp *p)
{
	size_t cap = 0, n = 0;
	char *o = NULL;

	if (peek(p) != '"') {
		p->err = "expected a string";
		return NULL;
	}
	p->s++;
	for (;;) {
		int ch = peek(p);
		if (ch < 0 || ch < 0x20) {
			p->err = ch < 0 ? "unterminated string" : "control character in a string";
			free(o);
			return NULL;
		}
		p->s++;
		if (ch == '"')
			break;
		if (ch == '\\' && (ch = jescape(p)) < 0) {
			free(o);
			return NULL;
		}
		if (RM_VEC_RESERVE(&o, &cap, n + 2, 64)) {
			free(o);
			p->err = "out of memory";
			return NULL;
		}
		o[n++] = (char)ch;
	}
	if (!o && !(o = malloc(1)))
		p->err = "out of memory";
	else
		o[n] = 0;
	return o;
}

/* A JSON number (RFC 8259 grammar, nothing more: no "+1", "0x10", "nan",
 * "1."): an exact J_INT when it has neither fraction nor exponent. */
static int jparse_num(struct jp *p, struct jv *v)
{
	const char *st = p->s;
	int frac = 0;

	v->neg = peek(p) == '-';
	p->s += v->neg;
	if (!isdigit(peek(p)))
		return p->err = "unexpected character", -1;
	if (peek(p) == '0' && p->s + 1 < p->end && isdigit((unsigned char)p->s[1]))
		return p->err = "number with a leading zero", -1;
	while (isdigit(peek(p)))
		p->s++;
	if (peek(p) == '.') {
		p->s++;
		if (!isdigit(peek(p)))
			return p->err = "bad number", -1;
		while (isdigit(peek(p)))
			p->s++;
		frac = 1;
	}
	if (peek(p) == 'e' || peek(p) == 'E') {
		p->s++;
		if (peek(p) == '+' || peek(p) == '-')
			p->s++;
		if (!isdigit(peek(p)))
			return p->err = "bad number", -1;
		while (isdigit(peek(p)))
			p->s++;
		frac = 1;
	}
	char tok[512];
	size_t len = (size_t)(p->s - st);
	if (len >= sizeof(tok))
		return p->err = "number too long", -1;
	memcpy(tok, st, len);
	tok[len] = 0;
	errno = 0;
	if (frac) {
		v->t = J_NUM;
		v->num = strtod(tok, NULL);
		if (!isfinite(v->num))
			return p->err = "number out of range", -1;
		return 0;
	}
	v->t = J_INT;
	v->mag = strtoull(tok + v->neg, NULL, 10);
	if (errno == ERANGE || (v->neg && v->mag > (uint64_t)1 << 63))
		return p->err = "integer out of 64-bit range", -1;
	v->neg &= v->mag != 0;
	return 0;
}

static struct jv *jparse(struct jp *p, int depth);

static int jhas_key(const struct jv *o, const char *key)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return 1;
	return 0;
}

/* The members of an array or object, after its opening bracket. */
static int jparse_members(struct jp *p, struct jv *v, int depth)
{
	char close = v->t == J_OBJ ? '}' : ']';

	ws(p);
	if (peek(p) == close) {
		p->s++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		ws(p);
		if (v->t == J_OBJ) {
			if (!(key = jparse_str(p)))
				return -1;
			ws(p);
			if (peek(p) != ':' || jhas_key(v, key)) {
				p->err = peek(p) != ':' ? "expected ':'" : "a key twice in an object";
				free(key);
				return -1;
			}
			p->s++;
		}
		struct jv *kid = jparse(p, depth + 1);
		if (!kid) {
			free(key);
			return -1;
		}
		if (jadd(v, key, kid))
			return p->err = "out of memory", -1;
		ws(p);
		int c = peek(p);
		p->s += c >= 0;
		if (c == close)
			return 0;
		if (c != ',')
			return p->err = "expected ',' or a closing bracket", -1;
	}
}

static struct jv *jparse(struct jp *p, int depth)
{
	struct jv *v = calloc(1, sizeof(*v));
	int rc = 0;

	if (!v) {
		p->err = "out of memory";
		return NULL;
	}
	ws(p);
	int c = peek(p);
	size_t left = (size_t)(p->end - p->s);
	if (depth > J_MAX_DEPTH) {
		p->err = "nested too deeply";
		rc = -1;
	} else if (c == '{' || c == '[') {
		v->t = c == '{' ? J_OBJ : J_ARR;
		p->s++;
		rc = jparse_members(p, v, depth);
	} else if (c == '"') {
		v->t = J_STR;
		rc = (v->str = jparse_str(p)) ? 0 : -1;
	} else if (left >= 4 && !strncmp(p->s, "true", 4)) {
		v->t = J_BOOL;
		v->b = 1;
		p->s += 4;
	} else if (left >= 5 && !strncmp(p->s, "false", 5)) {
		v->t = J_BOOL;
		p->s += 5;
	} else if (left >= 4 && !strncmp(p->s, "null", 4)) {
		p->s += 4;
	} else {
		rc = jparse_num(p, v);
	}
	if (rc) {
		jfree(v);
		return NULL;
	}
	return v;
}

static struct jv *jget(const struct jv *o, const char *key)
{
	if (!o || o->t != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->kids[i];
	return NULL;
}

static struct jv *jclone(const struct jv *v)
{
	struct jv *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->t = v->t;
	c->neg = v->neg;
	c->mag = v->mag;
	c->num = v->num;
	c->b = v->b;
	if (v->str && !(c->str = strdup(v->str))) {
		free(c);
		return NULL;
	}
	for (size_t i = 0; i < v->n; i++) {
		char *k = NULL;
		if ((v->keys && !(k = strdup(v->keys[i]))) || jadd(c, k, jclone(v->kids[i]))) {
			jfree(c);
			return NULL;
		}
	}
	return c;
}

static double jnum(const struct jv *v)
{
	return v->t == J_NUM ? v->num : v->neg ? -(double)v->mag : (double)v->mag;
}

/* Exact integer arithmetic on sign and magnitude. */
static int jint_cmp(const struct jv *a, const struct jv *b)
{
	if (a->neg != b->neg)
		return a->neg ? -1 : 1;
	int c = a->mag < b->mag ? -1 : a->mag > b->mag;
	return a->neg ? -c : c;
}

static int jint_add(struct jv *d, const struct jv *s)
{
	if (d->neg == s->neg) {
		if (d->mag > UINT64_MAX - s->mag || (d->neg && d->mag + s->mag > (uint64_t)1 << 63))
			return -ERANGE;
		d->mag += s->mag;
	} else if (d->mag >= s->mag) {
		d->mag -= s->mag;
	} else {
		d->mag = s->mag - d->mag;
		d->neg = s->neg;
	}
	d->neg &= d->mag != 0;
	return 0;
}

static int is_max_key(const char *k)
{
	return !strncmp(k, "max_", 4) || !strcmp(k, "seconds") || !strcmp(k, "seed") ||
	       !strcmp(k, "version") || !strcmp(k, "files") || !strcmp(k, "check_every") ||
	       !strcmp(k, "blocksize") || !strcmp(k, "op_index") || !strcmp(k, "file");
}

struct jm {
	char *err;
	size_t errn;
	const char *file;	/* the report being merged in */
};

static int jmerge(struct jm *m, struct jv *dst, const struct jv *src, const char *key);

/* Numbers: max_* and the like take the maximum, counters add up. */
static int jmerge_num(struct jm *m, struct jv *dst, const struct jv *src, const char *key)
{
	int max = key && is_max_key(key);

	if (dst->t == J_INT && src->t == J_INT) {
		if (max) {
			if (jint_cmp(src, dst) > 0)
				*dst = *src;
			return 0;
		}
		if (jint_add(dst, src)) {
			snprintf(m->err, m->errn, "%s: \"%s\" overflows 64 bits when added up",
				 m->file, key ? key : "?");
			return -ERANGE;
		}
		return 0;
	}
	double a = jnum(dst), b = jnum(src), r = max ? fmax(a, b) : a + b;
	if (!isfinite(r)) {
		snprintf(m->err, m->errn, "%s: \"%s\" overflows a double when added up",
			 m->file, key ? key : "?");
		return -ERANGE;
	}
	dst->t = J_NUM;
	dst->num = r;
	return 0;
}

static int jmerge_str(struct jv *dst, const struct jv *src, const char *key)
{
	char *s = NULL;

	if (key && !strcmp(key, "shard")) {
		s = strdup("merged");
	} else if (key && (!strcmp(key, "notes") || !strcmp(key, "error")) &&
		   strcmp(dst->str, src->str) && src->str[0]) {
		size_t l = strlen(dst->str) + strlen(src->str) + 4;
		if ((s = malloc(l)))
			snprintf(s, l, "%s%s%s", dst->str, dst->str[0] ? " | " : "", src->str);
	} else {
		return 0;
	}
	if (!s)
		return -ENOMEM;
	free(dst->str);
	dst->str = s;
	return 0;
}

static int jmerge_obj(struct jm *m, struct jv *dst, const struct jv *src)
{
	int rc = 0;

	for (size_t i = 0; i < src->n && !rc; i++) {
		struct jv *d = jget(dst, src->keys[i]);
		if (d)
			rc = jmerge(m, d, src->kids[i], src->keys[i]);
		else
			rc = jadd(dst, strdup(src->keys[i]), jclone(src->kids[i]));
	}
	return rc;
}

/* Arrays: the entries of "targets" merge by name, others append. */
static int jmerge_arr(struct jm *m, struct jv *dst, const struct jv *src, const char *key)
{
	int by_name = key && !strcmp(key, "targets"), rc = 0;

	for (size_t i = 0; i < src->n && !rc; i++) {
		const struct jv *s = src->kids[i], *name = jget(s, "name");
		struct jv *match = NULL;
		if (by_name && name && name->t == J_STR)
			for (size_t k = 0; k < dst->n && !match; k++) {
				struct jv *dn = jget(dst->kids[k], "name");
				if (dn && dn->t == J_STR && !strcmp(dn->str, name->str))
					match = dst->kids[k];
			}
		rc = match ? jmerge(m, match, s, NULL) : jadd(dst, NULL, jclone(s));
	}
	return rc;
}

/* Merge src into dst (dst owns its tree): 0, or -errno with m->err set
 * when the two disagree on a value's type. */
static int jmerge(struct jm *m, struct jv *dst, const struct jv *src, const char *key)
{
	static const char *const tname[] = { "null", "a boolean", "a number", "a number",
					     "a string", "an array", "an object" };
	int dn = dst->t == J_INT || dst->t == J_NUM, sn = src->t == J_INT || src->t == J_NUM;
	int rc;

	if (dn && sn)
		rc = jmerge_num(m, dst, src, key);
	else if (dst->t != src->t) {
		snprintf(m->err, m->errn, "%s: \"%s\" is %s where the reports before had %s",
			 m->file, key ? key : "(array entry)", tname[src->t], tname[dst->t]);
		return -EINVAL;
	} else if (dst->t == J_STR)
		rc = jmerge_str(dst, src, key);
	else if (dst->t == J_OBJ)
		rc = jmerge_obj(m, dst, src);
	else if (dst->t == J_ARR)
		rc = jmerge_arr(m, dst, src, key);
	else
		rc = 0;		/* booleans and nulls: the first report's */
	if (rc == -ENOMEM)
		snprintf(m->err, m->errn, "out of memory");
	return rc;
}

/* ops_per_sec of merged targets: ops / wall seconds (shards ran in parallel) */
static void fix_rates(struct jv *root)
{
	struct jv *ts = jget(root, "targets");
	for (size_t i = 0; ts && ts->t == J_ARR && i < ts->n; i++) {
		struct jv *ops = jget(ts->kids[i], "ops"), *sec = jget(ts->kids[i], "seconds");
		struct jv *r = jget(ts->kids[i], "ops_per_sec");
		struct jv *sh = jget(ts->kids[i], "shrink_seconds");
		int num = ops && sec && r && (ops->t == J_INT || ops->t == J_NUM) &&
			  (sec->t == J_INT || sec->t == J_NUM) && (r->t == J_INT || r->t == J_NUM);
		double busy = num ? jnum(sec) - (sh && (sh->t == J_INT || sh->t == J_NUM) ? jnum(sh) : 0) : 0;
		if (busy > 0) {
			r->t = J_NUM;
			r->num = jnum(ops) / busy;
		}
	}
}

static void jwrite(FILE *f, const struct jv *v, int ind)
{
	switch (v->t) {
	case J_NULL: fputs("null", f); break;
	case J_BOOL: fputs(v->b ? "true" : "false", f); break;
	case J_INT: fprintf(f, "%s%" PRIu64, v->neg ? "-" : "", v->mag); break;
	case J_NUM:
		if (v->num == 0)	/* not "-0": it would read back as an integer 0 */
			fputs("0", f);
		else if (v->num == floor(v->num) && fabs(v->num) < 9e15)
			fprintf(f, "%.0f", v->num);
		else
			fprintf(f, "%.3f", v->num);
		break;
	case J_STR: jstr(f, v->str); break;
	case J_ARR:
	case J_OBJ:
		fputc(v->t == J_ARR ? '[' : '{', f);
		for (size_t i = 0; i < v->n; i++) {
			fprintf(f, "%s\n%*s", i ? "," : "", ind + 2, "");
			if (v->t == J_OBJ) {
				jstr(f, v->keys[i]);
				fputs(": ", f);
			}
			jwrite(f, v->kids[i], ind + 2);
		}
		if (v->n)
			fprintf(f, "\n%*s", ind, "");
		fputc(v->t == J_ARR ? ']' : '}', f);
	}
}

/* One report's text, parsed and checked to be a difftest report. */
static struct jv *parse_report(const char *buf, size_t len, const char *name, char *err,
			       size_t errn)
{
	struct jp p = { .s = buf, .end = buf + len };
	struct jv *v = NULL;
	const char *why = NULL;

	if (len && memchr(buf, 0, len))
		why = "a NUL byte";
	else if ((v = jparse(&p, 0)) && (ws(&p), p.s < p.end))
		why = "trailing characters";
	else if (!v)
		why = p.err ? p.err : "out of memory";
	if (why) {
		snprintf(err, errn, "%s: not JSON (%s at byte %td)", name, why, p.s - buf);
		jfree(v);
		return NULL;
	}
	struct jv *tool = jget(v, "tool"), *ts = jget(v, "targets"), *ds = jget(v, "divergences");
	if (v->t != J_OBJ || !tool || tool->t != J_STR || strcmp(tool->str, "difftest"))
		why = "no \"tool\": \"difftest\" at the top";
	else if ((ts && ts->t != J_ARR) || (ds && ds->t != J_ARR))
		why = "\"targets\" or \"divergences\" is not an array";
	for (size_t i = 0; !why && ts && i < ts->n; i++)
		if (ts->kids[i]->t != J_OBJ)
			why = "an entry of \"targets\" is not an object";
	if (why) {
		snprintf(err, errn, "%s: not a difftest JSON report (%s)", name, why);
		jfree(v);
		return NULL;
	}
	return v;
}

int dt_report_merge_mem(const char *const *bufs, const size_t *lens, const char *const *names,
			int n, FILE *out, char *err, size_t errn)
{
	struct jv *root = NULL;
	int rc = 0;

	for (int i = 0; i < n && !rc; i++) {
		struct jv *v = parse_report(bufs[i], lens[i], names[i], err, errn);
		struct jm m = { .err = err, .errn = errn, .file = names[i] };
		if (!v)
			rc = -EINVAL;
		else if (!root)
			root = v, v = NULL;
		else
			rc = jmerge(&m, root, v, NULL);
		jfree(v);
	}
	if (!rc && !root) {
		snprintf(err, errn, "no reports to merge");
		rc = -EINVAL;
	}
	struct jv *sh = jget(root, "shard");
	if (!rc && sh && sh->t == J_STR && n > 1) {
		free(sh->str);
		if (!(sh->str = strdup("merged")))
			rc = -ENOMEM;
	}
	if (!rc) {
		fix_rates(root);
		jwrite(out, root, 0);
		fputc('\n', out);
		rc = ferror(out) ? -EIO : 0;
		if (rc)
			snprintf(err, errn, "cannot write the merged report");
	}
	jfree(root);
	return rc;
}

/* The whole of a report file, NUL-terminated: 0 or -errno (err set). */
static int slurp(const char *path, char **buf, size_t *len, char *err, size_t errn)
{
	FILE *f = fopen(path, "r");
	size_t cap = 0, n = 0, k;
	char *b = NULL;
	int rc = 0;

	if (!f) {
		rc = -errno;
		snprintf(err, errn, "%s: %s", path, strerror(-rc));
		return rc;
	}
	do {
		if ((rc = RM_VEC_RESERVE(&b, &cap, n + 65536, 65536)))
			break;
		n += k = fread(b + n, 1, cap - n - 1, f);
	} while (k && n <= J_MAX_BYTES);
	if (!rc && ferror(f))
		rc = -EIO;
	fclose(f);
	if (!rc && n > J_MAX_BYTES)
		rc = -EFBIG;
	if (rc) {
		snprintf(err, errn, "%s: %s", path, rc == -EFBIG ? "larger than 64 MiB: not a report"
			 : strerror(-rc));
		free(b);
		return rc;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

int dt_report_merge(char *const *files, int n, FILE *out, char *err, size_t errn)
{
	char **bufs = calloc(n > 0 ? (size_t)n : 1, sizeof(*bufs));
	size_t *lens = calloc(n > 0 ? (size_t)n : 1, sizeof(*lens));
	int rc = bufs && lens ? 0 : -ENOMEM;

	if (rc)
		snprintf(err, errn, "out of memory");
	for (int i = 0; i < n && !rc; i++)
		rc = slurp(files[i], &bufs[i], &lens[i], err, errn);
	if (!rc)
		rc = dt_report_merge_mem((const char *const *)bufs, lens,
					 (const char *const *)files, n, out, err, errn);
	for (int i = 0; bufs && i < n; i++)
		free(bufs[i]);
	free(bufs);
	free(lens);
	return rc;
}
