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

int dt_report_json(FILE *f, const struct dt_campaign *c, const struct dt_tresult *r,
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
	for (int i = 0; i < nr; i++) {
		const struct dt_tresult *t = &r[i];
		int btree = 0;
		int e4 = dt_ext4_depth_est(t->max_extents);
		int xl = dt_xfs_levels_est(t->max_extents, &btree);
		int isxfs = !strcmp(t->profile, "xfs");
		fprintf(f, "%s\n    {\n      \"name\": ", i ? "," : "");
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
		fprintf(f, ",\n      \"ops_per_kind\": {");
		int first = 1;
		for (int k = 0; k < DT_NKINDS; k++) {
			if (!t->kind_count[k])
				continue;
			fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", dt_kind_name(k), t->kind_count[k]);
			first = 0;
		}
		/* wall seconds per op kind (a remount's include its full
		 * checks) and in the oracle's parts: what bounds the speed */
		fprintf(f, "},\n      \"seconds_per_kind\": {");
		first = 1;
		for (int k = 0; k < DT_NKINDS; k++) {
			if (!t->kind_count[k])
				continue;
			fprintf(f, "%s\"%s\": %.3f", first ? "" : ", ", dt_kind_name(k), t->kind_sec[k]);
			first = 0;
		}
		fprintf(f, "},\n      \"seconds_in\": {\"full_check\": %.3f, \"fiemap\": %.3f, "
			"\"data_check\": %.3f},\n      \"full_checks\": %" PRIu64
			",\n      \"bytes_checked\": %" PRIu64, t->full_sec, t->map_sec, t->data_sec,
			t->full_checks, t->bytes_checked);
		/* the CPU the run was pinned to (pin.c); a list, so that
		 * merged shards keep each one; [] = not pinned */
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
		fprintf(f, ",\n      \"disabled_kinds\": [");
		first = 1;
		for (int k = 0; k < DT_NKINDS; k++)
			if (t->disabled & (1u << k)) {
				fprintf(f, "%s\"%s\"", first ? "" : ", ", dt_kind_name(k));
				first = 0;
			}
		fprintf(f, "],\n      \"errno\": {");
		first = 1;
		for (int k = 0; k < DT_NKINDS; k++) {
			if (!t->kind_count[k])
				continue;
			fprintf(f, "%s\n        \"%s\": {", first ? "" : ",", dt_kind_name(k));
			first = 0;
			int f2 = 1;
			for (int e = 0; e < DT_NERRNO; e++)
				if (t->errs[k][e]) {
					const char *nm = dt_errname(e);
					char buf[16];
					if (!strcmp(nm, "E?")) {
						snprintf(buf, sizeof(buf), "E%d", e);
						nm = buf;
					}
					fprintf(f, "%s\"%s\": %" PRIu64, f2 ? "" : ", ", nm, t->errs[k][e]);
					f2 = 0;
				}
			fputc('}', f);
		}
		fprintf(f, "\n      }\n    }");
	}
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
	return ferror(f) ? -EIO : 0;
}

/* ---- a small JSON tree ---- */

enum jt { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };
struct jv {
	enum jt t;
	double num;
	char *str;		/* J_STR */
	int b;
	struct jv **kids;	/* J_ARR, J_OBJ */
	char **keys;		/* J_OBJ */
	size_t n;
};

struct jp {
	const char *s;
	const char *err;
};

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
	while (isspace((unsigned char)*p->s))
		p->s++;
}

static int jadd(struct jv *v, char *key, struct jv *kid)
{
	struct jv **k = realloc(v->kids, (v->n + 1) * sizeof(*k));
	if (!k)
		return -1;
	v->kids = k;
	if (v->t == J_OBJ) {
		char **ks = realloc(v->keys, (v->n + 1) * sizeof(*ks));
		if (!ks)
			return -1;
		v->keys = ks;
		v->keys[v->n] = key;
	}
	v->kids[v->n++] = kid;
	return 0;
}

static char *jparse_str(struct jp *p)
{
	size_t cap = 64, n = 0;
	char *o = malloc(cap);

	if (!o || *p->s != '"') {
		free(o);
		p->err = "expected a string";
		return NULL;
	}
	p->s++;
	while (*p->s && *p->s != '"') {
		char ch = *p->s++;
		if (ch == '\\') {
			char e = *p->s++;
			switch (e) {
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case 'r': ch = '\r'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'u': {
				unsigned u = 0;
				for (int k = 0; k < 4 && isxdigit((unsigned char)*p->s); k++, p->s++)
					u = u * 16 + (unsigned)(isdigit((unsigned char)*p->s) ? *p->s - '0' :
						(tolower((unsigned char)*p->s) - 'a' + 10));
				ch = u < 0x80 ? (char)u : '?';
				break;
			}
			case 0: p->err = "bad escape"; free(o); return NULL;
			default: ch = e;
			}
		}
		if (n + 2 >= cap) {
			char *no = realloc(o, cap *= 2);
			if (!no) {
				free(o);
				return NULL;
			}
			o = no;
		}
		o[n++] = ch;
	}
	if (*p->s != '"') {
		p->err = "unterminated string";
		free(o);
		return NULL;
	}
	p->s++;
	o[n] = 0;
	return o;
}

static struct jv *jparse(struct jp *p, int depth)
{
	struct jv *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	if (depth > 64) {
		p->err = "nested too deeply";
		free(v);
		return NULL;
	}
	ws(p);
	if (*p->s == '{' || *p->s == '[') {
		char close = *p->s == '{' ? '}' : ']';
		v->t = close == '}' ? J_OBJ : J_ARR;
		p->s++;
		ws(p);
		if (*p->s == close) {
			p->s++;
			return v;
		}
		for (;;) {
			char *key = NULL;
			ws(p);
			if (v->t == J_OBJ) {
				if (!(key = jparse_str(p)))
					goto bad;
				ws(p);
				if (*p->s != ':') {
					p->err = "expected ':'";
					free(key);
					goto bad;
				}
				p->s++;
			}
			struct jv *kid = jparse(p, depth + 1);
			if (!kid || jadd(v, key, kid)) {
				free(key);
				jfree(kid);
				goto bad;
			}
			ws(p);
			if (*p->s == ',') {
				p->s++;
				continue;
			}
			if (*p->s == close) {
				p->s++;
				return v;
			}
			p->err = "expected ',' or a closing bracket";
			goto bad;
		}
	}
	if (*p->s == '"') {
		v->t = J_STR;
		if (!(v->str = jparse_str(p)))
			goto bad;
		return v;
	}
	if (!strncmp(p->s, "true", 4) || !strncmp(p->s, "false", 5)) {
		v->t = J_BOOL;
		v->b = p->s[0] == 't';
		p->s += v->b ? 4 : 5;
		return v;
	}
	if (!strncmp(p->s, "null", 4)) {
		p->s += 4;
		return v;
	}
	char *end;
	v->num = strtod(p->s, &end);
	if (end == p->s) {
		p->err = "unexpected character";
		goto bad;
	}
	v->t = J_NUM;
	p->s = end;
	return v;
bad:
	if (!p->err)
		p->err = "out of memory";
	jfree(v);
	return NULL;
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
	c->num = v->num;
	c->b = v->b;
	if (v->str)
		c->str = strdup(v->str);
	for (size_t i = 0; i < v->n; i++)
		jadd(c, v->keys ? strdup(v->keys[i]) : NULL, jclone(v->kids[i]));
	return c;
}

static int is_max_key(const char *k)
{
	return !strncmp(k, "max_", 4) || !strcmp(k, "seconds") || !strcmp(k, "seed") ||
	       !strcmp(k, "version") || !strcmp(k, "files") || !strcmp(k, "check_every") ||
	       !strcmp(k, "blocksize") || !strcmp(k, "op_index") || !strcmp(k, "file");
}

/* Merge src into dst (dst owns its tree). */
static void jmerge(struct jv *dst, const struct jv *src, const char *key)
{
	if (dst->t == J_NUM && src->t == J_NUM) {
		if (key && is_max_key(key))
			dst->num = fmax(dst->num, src->num);
		else
			dst->num += src->num;
		return;
	}
	if (dst->t == J_STR && src->t == J_STR) {
		if (key && !strcmp(key, "shard")) {
			free(dst->str);
			dst->str = strdup("merged");
		} else if (key && (!strcmp(key, "notes") || !strcmp(key, "error")) &&
			   strcmp(dst->str, src->str) && src->str[0]) {
			size_t l = strlen(dst->str) + strlen(src->str) + 4;
			char *s = malloc(l);
			if (s) {
				snprintf(s, l, "%s%s%s", dst->str, dst->str[0] ? " | " : "", src->str);
				free(dst->str);
				dst->str = s;
			}
		}
		return;
	}
	if (dst->t == J_OBJ && src->t == J_OBJ) {
		for (size_t i = 0; i < src->n; i++) {
			struct jv *d = jget(dst, src->keys[i]);
			if (d)
				jmerge(d, src->kids[i], src->keys[i]);
			else
				jadd(dst, strdup(src->keys[i]), jclone(src->kids[i]));
		}
		return;
	}
	if (dst->t == J_ARR && src->t == J_ARR) {
		for (size_t i = 0; i < src->n; i++) {
			const struct jv *s = src->kids[i];
			struct jv *name = jget(s, "name");
			struct jv *match = NULL;
			/* targets merge by name; everything else appends */
			if (key && !strcmp(key, "targets") && name && name->t == J_STR)
				for (size_t k = 0; k < dst->n && !match; k++) {
					struct jv *dn = jget(dst->kids[k], "name");
					if (dn && dn->t == J_STR && !strcmp(dn->str, name->str))
						match = dst->kids[k];
				}
			if (match)
				jmerge(match, s, NULL);
			else
				jadd(dst, NULL, jclone(s));
		}
	}
}

/* ops_per_sec of merged targets: ops / wall seconds (shards ran in parallel) */
static void fix_rates(struct jv *root)
{
	struct jv *ts = jget(root, "targets");
	for (size_t i = 0; ts && ts->t == J_ARR && i < ts->n; i++) {
		struct jv *ops = jget(ts->kids[i], "ops"), *sec = jget(ts->kids[i], "seconds");
		struct jv *r = jget(ts->kids[i], "ops_per_sec");
		struct jv *sh = jget(ts->kids[i], "shrink_seconds");
		double busy = sec ? sec->num - (sh ? sh->num : 0) : 0;
		if (ops && r && busy > 0)
			r->num = ops->num / busy;
	}
}

static void jwrite(FILE *f, const struct jv *v, int ind)
{
	switch (v->t) {
	case J_NULL: fputs("null", f); break;
	case J_BOOL: fputs(v->b ? "true" : "false", f); break;
	case J_NUM:
		if (v->num == floor(v->num) && fabs(v->num) < 9e15)
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

int dt_report_merge(char *const *files, int n, FILE *out, char *err, size_t errn)
{
	struct jv *root = NULL;

	for (int i = 0; i < n; i++) {
		FILE *f = fopen(files[i], "r");
		if (!f) {
			snprintf(err, errn, "%s: %s", files[i], strerror(errno));
			jfree(root);
			return -ENOENT;
		}
		size_t cap = 1 << 16, len = 0;
		char *buf = malloc(cap);
		size_t k;
		while (buf && (k = fread(buf + len, 1, cap - len - 1, f)) > 0) {
			len += k;
			if (len + 1 == cap) {
				char *nb = realloc(buf, cap *= 2);
				if (!nb) {
					free(buf);
					buf = NULL;
				}
				buf = nb;
			}
		}
		fclose(f);
		if (!buf) {
			jfree(root);
			return -ENOMEM;
		}
		buf[len] = 0;
		struct jp p = { .s = buf };
		struct jv *v = jparse(&p, 0);
		if (v) {
			ws(&p);
			if (*p.s) {
				p.err = "trailing characters";
				jfree(v);
				v = NULL;
			}
		}
		if (!v || v->t != J_OBJ) {
			snprintf(err, errn, "%s: not a difftest JSON report (%s at byte %td)", files[i],
				 p.err ? p.err : "not an object", p.s - buf);
			free(buf);
			jfree(v);
			jfree(root);
			return -EINVAL;
		}
		free(buf);
		if (!root) {
			root = v;
			continue;
		}
		jmerge(root, v, NULL);
		jfree(v);
	}
	if (!root) {
		snprintf(err, errn, "no reports to merge");
		return -EINVAL;
	}
	struct jv *sh = jget(root, "shard");
	if (sh && sh->t == J_STR && n > 1) {
		free(sh->str);
		sh->str = strdup("merged");
	}
	fix_rates(root);
	jwrite(out, root, 0);
	fputc('\n', out);
	jfree(root);
	return 0;
}
