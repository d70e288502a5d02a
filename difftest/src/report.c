/* SPDX-License-Identifier: MIT */
/*
 * report.c - difftest's JSON report, and merging the reports of several
 * shards (parallel VMs, machines of a GNU parallel or Slurm campaign) into
 * one.  Both sides go through jansson: the writer builds a tree and dumps
 * it, the merge parses each report strictly (duplicate keys refused), merges
 * the trees with per-key rules and dumps the result.
 *
 * Integers: jansson keeps them exact as 64-bit signed (json_int_t is long
 * long), a double would hold only 53 bits (seed 2^60 + 1 merged to 2^60).
 * Seeds are unsigned 64-bit, so the report carries them as decimal
 * strings: exact in every reader (jq and JavaScript read numbers as
 * doubles) and over INT64_MAX too.  Counters are integers; one that would
 * exceed INT64_MAX, written or summed, is refused.  The layout is in
 * difftest/README.md, "Report schema".
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "campaign.h"
#include "rm_vec.h"

/* The report's layout version: 2 carries seeds as strings and each
 * divergence's fields by the run they come from. */
#define DT_REPORT_VERSION 2

/* ---- building the report ---- */

/* A tree under construction: the first failure (-ENOMEM, or -EOVERFLOW
 * for a counter past INT64_MAX) is kept and everything after is a no-op. */
struct jb {
	int rc;
};

static void put(struct jb *b, json_t *o, const char *key, json_t *v)
{
	if (!v) {
		if (!b->rc)
			b->rc = -ENOMEM;
		return;
	}
	if (json_is_array(o) ? json_array_append_new(o, v) : json_object_set_new(o, key, v))
		b->rc = b->rc ? b->rc : -ENOMEM;
}

/* A string; jansson takes UTF-8 only, so other bytes (a path, a tool's
 * message) become '?'. */
static json_t *jstring(const char *s)
{
	json_t *v = json_string(s);
	if (v || !s)
		return v;
	char *c = strdup(s);
	if (!c)
		return NULL;
	for (char *p = c; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	v = json_string(c);
	free(c);
	return v;
}

static json_t *jcount(struct jb *b, uint64_t v)
{
	if (v > INT64_MAX) {
		b->rc = b->rc ? b->rc : -EOVERFLOW;
		return NULL;
	}
	return json_integer((json_int_t)v);
}

/* Seconds and rates, to the millisecond (what a wall clock is worth). */
static json_t *jsec(double x)
{
	return json_real(isfinite(x) ? round(x * 1000) / 1000 : 0);
}

static json_t *jseed(uint64_t seed)
{
	char s[24];
	snprintf(s, sizeof(s), "%" PRIu64, seed);
	return json_string(s);
}

static json_t *json_head(struct jb *b, const struct dt_campaign *c, const struct dt_tresult *r,
			 int nr, double seconds)
{
	json_t *o = json_object();
	uint64_t ndiv = 0;
	char shard[32];

	if (!o) {
		b->rc = -ENOMEM;
		return NULL;
	}
	for (int i = 0; i < nr; i++)
		ndiv += r[i].divergences;
	snprintf(shard, sizeof(shard), "%d/%d", c->shard_i, c->shard_n);
	put(b, o, "tool", json_string("difftest"));
	put(b, o, "version", json_integer(DT_REPORT_VERSION));
	put(b, o, "seed", jseed(c->base_seed));
	put(b, o, "shard", json_string(shard));
	put(b, o, "ops_per_target", jcount(b, c->ops));
	put(b, o, "files", json_integer(c->nfiles));
	put(b, o, "check_every", jcount(b, c->o.check_every));
	put(b, o, "flen", json_integer(c->flen));
	put(b, o, "oplen", json_integer(c->oplen));
	put(b, o, "strict", json_integer(c->o.strict));
	put(b, o, "map_sync", json_integer(c->o.map_sync));
	put(b, o, "seconds", jsec(seconds));
	put(b, o, "divergence_count", jcount(b, ndiv));
	return o;
}

/* A target's names, counters and tree depths (measured or estimated). */
static void json_target_counts(struct jb *b, json_t *o, const struct dt_campaign *c,
			       const struct dt_tresult *t)
{
	int btree = 0;
	int e4 = dt_ext4_depth_est(t->max_extents);
	int xl = dt_xfs_levels_est(t->max_extents, &btree);
	int isxfs = !strncmp(t->profile, "xfs", 3);	/* "xfs", "xfs-6.1", "xfs-6.12" */
	double busy = t->seconds - t->shrink_seconds;

	put(b, o, "name", jstring(t->name));
	put(b, o, "fs", jstring(t->fsname));
	put(b, o, "profile", jstring(t->profile));
	put(b, o, "config", jstring(t->config));
	put(b, o, "mount_options", jstring(t->mount_options));
	put(b, o, "notes", jstring(t->notes));
	put(b, o, "error", jstring(t->error));
	put(b, o, "blocksize", json_integer(t->blocksize));
	put(b, o, "ops", jcount(b, t->ops));
	put(b, o, "seconds", jsec(t->seconds));
	put(b, o, "ops_per_sec", jsec(busy > 0 ? t->ops / busy : 0.0));
	put(b, o, "shrink_seconds", jsec(t->shrink_seconds));
	put(b, o, "divergences", jcount(b, t->divergences));
	put(b, o, "enospc_resets", jcount(b, t->enospc_resets));
	put(b, o, "enospc_checked", jcount(b, t->enospc_checked));
	put(b, o, "setid_removals", jcount(b, t->setid_removals));
	put(b, o, "remount_fallbacks", jcount(b, t->remount_fallbacks));
	put(b, o, "syscalls", jcount(b, t->syscalls));
	put(b, o, "fresh_fs_restored", jcount(b, t->fresh_restored));
	put(b, o, "fresh_fs_mkfs", jcount(b, t->fresh_mkfs));
	put(b, o, "max_extents", json_integer(t->max_extents));
	put(b, o, "max_model_runs", json_integer(t->max_model_runs));
	put(b, o, "max_depth_estimated", json_integer(isxfs ? xl : e4));
	put(b, o, "max_btree_format", json_integer(t->depth_runs ? t->max_btree :
						   isxfs ? btree : e4 > 0));
	/* max_depth: the real tree depth read at remounts (file system
	 * unmounted) when that worked, else the estimate */
	put(b, o, "max_depth", json_integer(t->depth_runs ? t->max_depth : isxfs ? xl : e4));
	put(b, o, "depth_measurements", jcount(b, t->depth_runs));
	put(b, o, "depth_seconds", jsec(t->depth_seconds));
	put(b, o, "fsck_runs", jcount(b, t->fsck_runs));
	put(b, o, "fsck_errors", jcount(b, t->fsck_errors));
	put(b, o, "fsck_seconds", jsec(t->fsck_seconds));
	put(b, o, "fsck_every", jcount(b, c->o.fsck_every));
	/* expected differences of the running kernel (difftest/expected) */
	put(b, o, "expected_differences", jcount(b, t->expected_diffs));
	put(b, o, "expected_applied", jstring(t->expected));
	if (t->depth_runs)
		put(b, o, "depth_method", json_string(isxfs ?
			"measured by xfs_db at remounts: core.format, u3.bmbt.level of the "
			"in-inode root (0 extents format, 1 root over leaves)" :
			"measured by debugfs at remounts: dump_extents -n, eh_depth of the "
			"inode root (0 extents in the inode, 1 root over leaves)"));
	else
		put(b, o, "depth_method", json_string(isxfs ?
			"estimated from the FIEMAP extent count (measured): extents format up to 21 "
			"in-inode records, then btree; levels from 20 root ptrs and 251 recs per leaf" :
			"estimated from the FIEMAP extent count (measured): eh_depth 0 up to 4 "
			"extents in the inode, +1 per factor of 340 (4 KiB blocks); a lower bound"));
	put(b, o, "depth_note", jstring(t->depth_note));
}

/* Ops and wall seconds per op kind (a remount's include its full checks)
 * and in the oracle's parts: what bounds the speed. */
static void json_target_times(struct jb *b, json_t *o, const struct dt_campaign *c,
			      const struct dt_tresult *t)
{
	json_t *n = json_object(), *s = json_object(), *in = json_object();
	json_t *cpu = json_object(), *cpus = json_array(), *pf = json_array();

	put(b, o, "ops_per_kind", n);
	put(b, o, "seconds_per_kind", s);
	for (int k = 0; n && s && k < DT_NKINDS; k++)
		if (t->kind_count[k]) {
			put(b, n, dt_kind_name(k), jcount(b, t->kind_count[k]));
			put(b, s, dt_kind_name(k), jsec(t->kind_sec[k]));
		}
	put(b, o, "seconds_in", in);
	if (in) {
		put(b, in, "full_check", jsec(t->full_sec));
		put(b, in, "fiemap", jsec(t->map_sec));
		put(b, in, "data_check", jsec(t->data_sec));
	}
	put(b, o, "full_checks", jcount(b, t->full_checks));
	put(b, o, "bytes_checked", jcount(b, t->bytes_checked));
	put(b, o, "fiemap_calls", jcount(b, t->map_calls));
	put(b, o, "fiemap_extents", jcount(b, t->map_extents));
	put(b, o, "cpu_seconds", cpu);
	if (cpu) {
		put(b, cpu, "user", jsec(t->cpu_user));
		put(b, cpu, "sys", jsec(t->cpu_sys));
		put(b, cpu, "children", jsec(t->cpu_children));
	}
	/* the CPU the run was pinned to (pin.c); a list, so that merged
	 * shards keep each one; [] = not pinned */
	put(b, o, "cpus", cpus);
	if (cpus && t->cpu >= 0)
		put(b, cpus, NULL, json_integer(t->cpu));
	put(b, o, "seconds_per_file", pf);
	for (int k = 0; pf && k < DT_MAXFILES && k < c->nfiles; k++)
		put(b, pf, NULL, jsec(t->file_sec[k]));
}

/* The kinds switched off by the probe, and the errno counts per kind. */
static void json_target_errnos(struct jb *b, json_t *o, const struct dt_tresult *t)
{
	json_t *dis = json_array(), *errs = json_object();

	put(b, o, "disabled_kinds", dis);
	for (int k = 0; dis && k < DT_NKINDS; k++)
		if (t->disabled & DT_KBIT(k))
			put(b, dis, NULL, json_string(dt_kind_name(k)));
	put(b, o, "errno", errs);
	for (int k = 0; errs && k < DT_NKINDS; k++) {
		if (!t->kind_count[k])
			continue;
		json_t *e1 = json_object();
		put(b, errs, dt_kind_name(k), e1);
		for (int e = 0; e1 && e < DT_NERRNO; e++)
			if (t->errs[k][e]) {
				const char *nm = dt_errname(e);
				char buf[16];
				if (!strcmp(nm, "E?")) {
					snprintf(buf, sizeof(buf), "E%d", e);
					nm = buf;
				}
				put(b, e1, nm, jcount(b, t->errs[k][e]));
			}
	}
}

static json_t *json_point(struct jb *b, const struct dt_divpoint *p)
{
	json_t *o = json_object();

	if (!o) {
		b->rc = b->rc ? b->rc : -ENOMEM;
		return NULL;
	}
	put(b, o, "kind", json_string(dt_divkind_name(p->kind)));
	put(b, o, "file", json_integer(p->file));
	put(b, o, "op_index", jcount(b, p->opno));
	put(b, o, "op", jstring(p->op));
	put(b, o, "message", jstring(p->msg));
	return o;
}

static const char *const shrink_result_name[] = {
	[DT_SHRINK_OFF] = "off", [DT_SHRUNK] = "shrunk", [DT_SHRINK_FLAKY] = "flaky",
	[DT_SHRINK_NO_REPRO] = "not_reproduced", [DT_SHRINK_ERROR] = "error",
};

static json_t *json_div(struct jb *b, const struct dt_divrec *d)
{
	json_t *o = json_object(), *sh = json_object();
	int res = d->shrink_result >= 0 && d->shrink_result <= DT_SHRINK_ERROR ?
		  d->shrink_result : DT_SHRINK_ERROR;

	put(b, o, "target", jstring(d->target));
	put(b, o, "reproducer", jstring(d->dir));
	put(b, o, "original", json_point(b, &d->orig));
	put(b, o, "window_ops", jcount(b, d->window_ops));
	/* did the window, run once more on a fresh file system, diverge
	 * again (null: not tried, --no-shrink)?  false: the reproducer is
	 * the whole window, never a shrunk log that may fail otherwise */
	put(b, o, "replays", d->replays < 0 ? json_null() : json_boolean(d->replays));
	put(b, o, "shrink", sh);
	if (sh) {
		put(b, sh, "result", json_string(shrink_result_name[res]));
		put(b, sh, "runs", jcount(b, d->shrink_tests));
		put(b, sh, "complete", json_boolean(d->shrink_complete));
		put(b, sh, "seconds", jsec(d->shrink_seconds));
	}
	if (res == DT_SHRUNK) {
		json_t *p = json_point(b, &d->shrunk);
		put(b, o, "shrunk", p);
		if (p)
			put(b, p, "ops", jcount(b, d->shrunk_ops));
	} else {
		put(b, o, "shrunk", json_null());
	}
	return o;
}

/* How every report is printed: two-space indent, object keys in the
 * order they were made, reals to 15 significant digits (what a double
 * holds exactly in decimal, so a merged report read and written again
 * prints the same). */
#define DT_JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(15))

int dt_report_json(FILE *f, const struct dt_campaign *c, const struct dt_tresult *r,
		   int nr, double seconds)
{
	struct jb b = { 0 };
	json_t *root = json_head(&b, c, r, nr, seconds);
	json_t *ts = json_array(), *ds = json_array();

	if (root) {
		put(&b, root, "targets", ts);
		ts = NULL;
		put(&b, root, "divergences", ds);
		ds = NULL;
	}
	json_t *tarr = json_object_get(root, "targets"), *darr = json_object_get(root, "divergences");
	for (int i = 0; tarr && i < nr; i++) {
		json_t *o = json_object();
		put(&b, tarr, NULL, o);
		if (!o)
			break;
		json_target_counts(&b, o, c, &r[i]);
		json_target_times(&b, o, c, &r[i]);
		json_target_errnos(&b, o, &r[i]);
	}
	for (size_t i = 0; darr && i < c->ndivs; i++)
		put(&b, darr, NULL, json_div(&b, &c->divs[i]));
	json_decref(ts);
	json_decref(ds);
	if (!b.rc && (!root || !tarr || !darr))
		b.rc = -ENOMEM;
	if (!b.rc && (json_dumpf(root, f, DT_JSON_FLAGS) || fputc('\n', f) == EOF))
		b.rc = -EIO;
	json_decref(root);
	if (!b.rc && ferror(f))
		b.rc = -EIO;
	return b.rc;
}

/* ---- reading and merging reports ---- */

/* Deeper than any report: refused before the merge walks it. */
#define J_MAX_DEPTH 64
#define J_MAX_BYTES ((size_t)64 << 20)

static int too_deep(const json_t *v, int depth)
{
	const char *k;
	json_t *kid;
	size_t i;

	if (depth > J_MAX_DEPTH)
		return 1;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, kid)
			if (too_deep(kid, depth + 1))
				return 1;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, kid)
			if (too_deep(kid, depth + 1))
				return 1;
	}
	return 0;
}

/* Keys whose numbers take the maximum when merged (the rest add up). */
static int is_max_key(const char *k)
{
	return !strncmp(k, "max_", 4) || !strcmp(k, "seconds") || !strcmp(k, "files") ||
	       !strcmp(k, "check_every") || !strcmp(k, "blocksize") || !strcmp(k, "fsck_every") ||
	       !strcmp(k, "flen") || !strcmp(k, "oplen");
}

/* Keys whose values must be the same in every report merged: shards of
 * one campaign share the seed and the layout. */
static int is_same_key(const char *k)
{
	return !strcmp(k, "seed") || !strcmp(k, "version") || !strcmp(k, "strict") ||
	       !strcmp(k, "map_sync");
}

struct jm {
	char *err;
	size_t errn;
	const char *file;	/* the report being merged in */
	int rc;			/* why the merge failed: -errno */
};

static const char *tname(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

static json_t *jmerge(struct jm *m, json_t *dst, json_t *src, const char *key);

static json_t *oom(struct jm *m)
{
	snprintf(m->err, m->errn, "out of memory");
	m->rc = -ENOMEM;
	return NULL;
}

/* v, or the out-of-memory failure when v could not be made. */
static json_t *made(struct jm *m, json_t *v)
{
	return v ? v : oom(m);
}

/* Numbers: max_* and the like take the maximum, counters add up; exact
 * while both are integers. */
static json_t *jmerge_num(struct jm *m, json_t *dst, json_t *src, const char *key)
{
	int max = key && is_max_key(key);
	json_t *r;

	if (json_is_integer(dst) && json_is_integer(src)) {
		json_int_t a = json_integer_value(dst), b = json_integer_value(src), s;
		if (max)
			return made(m, json_integer(a > b ? a : b));
		if (__builtin_add_overflow(a, b, &s)) {
			snprintf(m->err, m->errn, "%s: \"%s\" overflows 64 bits when added up",
				 m->file, key ? key : "?");
			m->rc = -ERANGE;
			return NULL;
		}
		return made(m, json_integer(s));
	}
	double a = json_number_value(dst), b = json_number_value(src);
	double s = max ? fmax(a, b) : a + b;
	if (!isfinite(s)) {
		snprintf(m->err, m->errn, "%s: \"%s\" overflows a double when added up",
			 m->file, key ? key : "?");
		m->rc = -ERANGE;
		return NULL;
	}
	r = json_real(s);
	return made(m, r);
}

static json_t *jmerge_str(struct jm *m, json_t *dst, json_t *src, const char *key)
{
	const char *d = json_string_value(dst), *s = json_string_value(src);

	if (key && !strcmp(key, "shard"))
		return made(m, json_string("merged"));
	if (key && (!strcmp(key, "notes") || !strcmp(key, "error")) && strcmp(d, s) && s[0]) {
		size_t l = strlen(d) + strlen(s) + 4;
		char *c = malloc(l);
		if (!c)
			return oom(m);
		snprintf(c, l, "%s%s%s", d, d[0] ? " | " : "", s);
		json_t *r = json_string(c);
		free(c);
		return made(m, r);
	}
	return json_incref(dst);
}

static json_t *jmerge_obj(struct jm *m, json_t *dst, json_t *src)
{
	const char *k;
	json_t *v;

	json_object_foreach(src, k, v) {
		json_t *d = json_object_get(dst, k);
		json_t *r = d ? jmerge(m, d, v, k) : json_deep_copy(v);
		if (!r)
			return d ? NULL : oom(m);
		if (json_object_set_new(dst, k, r))
			return oom(m);
	}
	return json_incref(dst);
}

/* Arrays: the entries of "targets" merge by name, others append. */
static json_t *jmerge_arr(struct jm *m, json_t *dst, json_t *src, const char *key)
{
	int by_name = key && !strcmp(key, "targets");
	size_t i, k;
	json_t *s;

	json_array_foreach(src, i, s) {
		const char *name = json_string_value(json_object_get(s, "name"));
		json_t *d, *match = NULL;
		if (by_name && name)
			json_array_foreach(dst, k, d)
				if (!match && json_string_value(json_object_get(d, "name")) &&
				    !strcmp(json_string_value(json_object_get(d, "name")), name))
					match = d;
		json_t *r = match ? jmerge(m, match, s, NULL) : json_deep_copy(s);
		if (!r)
			return match ? NULL : oom(m);
		/* a merged entry is match itself, already in dst */
		if (match)
			json_decref(r);
		else if (json_array_append_new(dst, r))
			return oom(m);
	}
	return json_incref(dst);
}

/* Merge src into dst: a new reference to the merged value (dst itself
 * for objects and arrays), or NULL with m->err set. */
static json_t *jmerge(struct jm *m, json_t *dst, json_t *src, const char *key)
{
	if (json_is_number(dst) && json_is_number(src) && !(key && is_same_key(key)))
		return jmerge_num(m, dst, src, key);
	if (json_typeof(dst) != json_typeof(src) &&
	    !(json_is_boolean(dst) && json_is_boolean(src)) &&
	    !(json_is_number(dst) && json_is_number(src))) {
		snprintf(m->err, m->errn, "%s: \"%s\" is %s where the reports before had %s",
			 m->file, key ? key : "(array entry)", tname(src), tname(dst));
		m->rc = -EINVAL;
		return NULL;
	}
	if (key && is_same_key(key) && !json_equal(dst, src)) {
		char *a = json_dumps(dst, JSON_ENCODE_ANY), *b = json_dumps(src, JSON_ENCODE_ANY);
		snprintf(m->err, m->errn, "%s: \"%s\" is %s where the reports before had %s: "
			 "not shards of one campaign", m->file, key, b ? b : "?", a ? a : "?");
		free(a);
		free(b);
		m->rc = -EINVAL;
		return NULL;
	}
	if (json_is_string(dst))
		return jmerge_str(m, dst, src, key);
	if (json_is_object(dst))
		return jmerge_obj(m, dst, src);
	if (json_is_array(dst))
		return jmerge_arr(m, dst, src, key);
	return json_incref(dst);	/* booleans, nulls, equal seeds: the first report's */
}

/* ops_per_sec of merged targets: ops / wall seconds (shards ran in parallel) */
static int fix_rates(json_t *root)
{
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(root, "targets"), i, t) {
		json_t *ops = json_object_get(t, "ops"), *sec = json_object_get(t, "seconds");
		json_t *r = json_object_get(t, "ops_per_sec"), *sh = json_object_get(t, "shrink_seconds");
		if (!json_is_number(ops) || !json_is_number(sec) || !json_is_number(r))
			continue;
		double busy = json_number_value(sec) - json_number_value(sh);
		if (busy > 0 && json_object_set_new(t, "ops_per_sec",
						    json_real(json_number_value(ops) / busy)))
			return -ENOMEM;
	}
	return 0;
}

/* One report's text, parsed and checked to be a difftest report. */
static json_t *parse_report(const char *buf, size_t len, const char *name, char *err,
			    size_t errn)
{
	json_error_t je;
	json_t *v = NULL;

	if (len && memchr(buf, 0, len)) {
		snprintf(err, errn, "%s: not JSON (a NUL byte at byte %td)", name,
			 (const char *)memchr(buf, 0, len) - buf);
		return NULL;
	}
	if (!(v = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je))) {
		snprintf(err, errn, "%s: not JSON (%s, line %d column %d)", name, je.text, je.line,
			 je.column);
		return NULL;
	}
	const char *why = NULL;
	json_t *ts = json_object_get(v, "targets"), *ds = json_object_get(v, "divergences"), *t;
	size_t i;
	if (too_deep(v, 0))
		why = "nested too deeply";
	else if (!json_is_object(v) || !json_is_string(json_object_get(v, "tool")) ||
		 strcmp(json_string_value(json_object_get(v, "tool")), "difftest"))
		why = "no \"tool\": \"difftest\" at the top";
	else if ((ts && !json_is_array(ts)) || (ds && !json_is_array(ds)))
		why = "\"targets\" or \"divergences\" is not an array";
	json_array_foreach(ts, i, t)
		if (!why && !json_is_object(t))
			why = "an entry of \"targets\" is not an object";
	if (why) {
		snprintf(err, errn, "%s: not a difftest JSON report (%s)", name, why);
		json_decref(v);
		return NULL;
	}
	return v;
}

int dt_report_merge_mem(const char *const *bufs, const size_t *lens, const char *const *names,
			int n, FILE *out, char *err, size_t errn)
{
	json_t *root = NULL;
	int rc = 0;

	for (int i = 0; i < n && !rc; i++) {
		json_t *v = parse_report(bufs[i], lens[i], names[i], err, errn);
		struct jm m = { .err = err, .errn = errn, .file = names[i] };
		if (!v) {
			rc = -EINVAL;
		} else if (!root) {
			root = v;
			v = NULL;
		} else {
			json_t *r = jmerge(&m, root, v, NULL);
			if (!r)
				rc = m.rc ? m.rc : -EINVAL;
			json_decref(r);
		}
		json_decref(v);
	}
	if (!rc && !root) {
		snprintf(err, errn, "no reports to merge");
		rc = -EINVAL;
	}
	if (!rc && n > 1 && json_is_string(json_object_get(root, "shard")) &&
	    json_object_set_new(root, "shard", json_string("merged")))
		rc = -ENOMEM;
	if (!rc && (rc = fix_rates(root)))
		snprintf(err, errn, "out of memory");
	if (!rc) {
		char *text = json_dumps(root, DT_JSON_FLAGS);
		if (!text) {
			snprintf(err, errn, "out of memory");
			rc = -ENOMEM;
		} else if (fputs(text, out) == EOF || fputc('\n', out) == EOF || ferror(out)) {
			snprintf(err, errn, "cannot write the merged report");
			rc = -EIO;
		}
		free(text);
	}
	json_decref(root);
	return rc;
}

/* The whole of a report file: 0 or -errno (err set). */
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
