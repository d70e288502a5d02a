/* SPDX-License-Identifier: MIT */
/*
 * shrink.c - turning a divergence into a reproducer: replay an op log on
 * fresh files of a target (dt_run_log), the predicate that ddmin.c
 * minimises the op log with (each candidate re-run on fresh files; a
 * candidate "fails" when it shows a divergence of the same kind, and is
 * then cut right after the op that diverged; its ops are moved across the
 * shifts it dropped, shiftmap.c; a nearly full target's ENOSPC gets a
 * fill op before it first, try_filled()), and the output files:
 *   ops.log   the op log, for `difftest --replay ops.log`
 *   repro.sh  a shell script running the real xfs_io (plus drop_caches and
 *             umount/mount for the ops xfs_io has not) that prints
 *             "BUG REPRODUCED" and exits 1 when the kernel still diverges
 *   maps.txt  expected vs actual block maps and the first differing byte
 *   maps.html the whole file's maps, zoomable, with the ops on a timeline
 *             (mapshtml.c)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ddmin.h"
#include "optab.h"
#include "dt.h"
#include "rm_vec.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The ops through the oracle, with the full checks every K ops as the
 * campaign runs them.  ndiv == NULL: stop at the first divergence (in *d);
 * else go on past divergences, only counting them.  Returns DV_NONE, the
 * divergence kind or a negative errno; *next = one past the last op run. */
/* The block-map picture around a divergence (a FIEMAP of that window) for
 * the reproducer.  --crash-replay draws it too: the FIEMAP is a kernel call,
 * and a crash in it (mutant 03's BUG in the extent status tree) must happen
 * again when a candidate is replayed. */
static void div_picture(struct dt_exec *x, struct dt_div *d)
{
	/* both whole-file maps for maps.html (the oracle may have drawn the
	 * window's picture already, not these) */
	if (!d->snap && d->file >= 0 && d->file < x->s->nfiles)
		dt_mapsnap_take(x, d->file, &d->snap);
	if (d->picture)
		return;
	int64_t at = d->byte_off >= 0 ? d->byte_off : d->op.off;
	int64_t bs = x->s->t->mopts.blocksize;
	if (at < 0 || at > ((int64_t)1 << 50))
		at = 0;
	at &= ~(bs - 1);
	d->picture = dt_map_picture(x, d->file, at > 32 * bs ? at - 32 * bs : 0, rm_sat_add(at, 96 * bs));
}

/* shifted (or NULL): shifted[j] = 1 when op j is an insert or collapse
 * that changed the model file's size, for shiftmap.c. */
/* only_file >= 0: a divergence on another file replaces that file by a
 * fresh one and the run goes on, as the campaign did when it met it (a
 * window can hold another file's divergence and its ops after it). */
static int run_ops(struct dt_exec *x, int nfiles, const struct dt_op *ops, size_t n,
		   const struct dt_opts *o, struct dt_div *d, uint64_t *ndiv, size_t *next,
		   uint8_t *shifted, int only_file)
{
	int rc = DV_NONE;
	size_t j;

	for (j = 0; j < n && !rc; j++) {
		int f = ops[j].file;
		int sh = shifted && (ops[j].kind == DT_INSERT || ops[j].kind == DT_COLLAPSE) &&
			 f < x->s->nfiles;
		int64_t before = sh ? rm_size(x->s->model[f]) : 0;
		rc = dt_exec_op(x, &ops[j], j, d);
		if (shifted)
			shifted[j] = sh && rm_size(x->s->model[f]) != before;
		if (!rc && o->check_every && (j + 1) % o->check_every == 0)
			for (int f = 0; f < nfiles && !rc; f++)
				rc = dt_full_check(x, f, j, d);
		if (rc > 0 && ndiv) {
			div_picture(x, d);
			(*ndiv)++;
			dt_div_free(d);
			memset(d, 0, sizeof(*d));
			rc = DV_NONE;
		} else if (rc > 0 && only_file >= 0 && d->file != only_file &&
			   d->file >= 0 && d->file < x->s->nfiles) {
			int f = d->file;
			dt_div_free(d);
			memset(d, 0, sizeof(*d));
			x->pend[f] = 0;
			dt_cowlat_reset(&x->s->cow[f]);
			if ((rc = dt_session_reset_file(x->s, f)) > 0)
				rc = DV_NONE;
		}
	}
	*next = j;
	return rc;
}

/* Every run of a log (a shrink candidate, a replay, a crash replay) starts
 * on a file system made anew when the target is the guest's scratch file
 * system (dt_t_fresh_fs(); elsewhere nothing is done), as the campaign's
 * own run does (campaign.c).  ext4's allocator keeps state across files and
 * dt_sessions (per-CPU locality-group preallocations, the last group it
 * streamed into), so a candidate that ran after other candidates got other
 * blocks than the run it came from: other extent merges, other leaf
 * boundaries.  Mutant 01's 10,831-op divergence "did not reproduce on fresh
 * files" even as a whole for that reason. */
int dt_start_fresh(struct dt_target *t, char *err, size_t errn)
{
	char note[512];
	int rc = dt_t_fresh_fs(t, note, sizeof(note));
	if (rc < 0)
		snprintf(err, errn, "cannot make the file system anew: %.400s",
			 note[0] ? note : strerror(-rc));
	return rc < 0 ? rc : 0;
}

int dt_run_log_through(struct dt_target *t, int nfiles, const struct dt_op *ops,
		       size_t n, const struct dt_opts *o, uint64_t *ndiv, char *err, size_t errn)
{
	struct dt_session *s;
	struct dt_exec x;
	struct dt_div d = { 0 };
	int rc;

	*ndiv = 0;
	if ((rc = dt_start_fresh(t, err, errn)) < 0 ||
	    (rc = dt_session_open(t, nfiles, &s, err, errn)) < 0)
		return rc;
	if ((rc = dt_exec_init(&x, s, o)) < 0) {
		dt_session_close(s);
		return rc;
	}
	size_t next;
	rc = run_ops(&x, nfiles, ops, n, o, &d, ndiv, &next, NULL, -1);
	if (rc)
		snprintf(err, errn, "%s", d.msg[0] ? d.msg : strerror(-rc));
	dt_div_free(&d);
	dt_exec_fini(&x);
	dt_session_close(s);
	return rc;
}

/* snap_clean: a clean run leaves the last op's file's maps in d->snap
 * (--replay's maps.html of a log that no longer diverges) */
static int run_log(struct dt_target *t, int nfiles, const struct dt_op *ops,
		   size_t n, const struct dt_opts *o, struct dt_div *d, size_t *stop_at,
		   uint8_t *shifted, int snap_clean, int only_file)
{
	struct dt_session *s;
	struct dt_exec x;
	char err[512];
	int rc;

	memset(d, 0, sizeof(*d));
	if ((rc = dt_start_fresh(t, err, sizeof(err))) < 0 ||
	    (rc = dt_session_open(t, nfiles, &s, err, sizeof(err))) < 0) {
		snprintf(d->msg, sizeof(d->msg), "%s", err);
		return rc;
	}
	if ((rc = dt_exec_init(&x, s, o)) < 0) {
		dt_session_close(s);
		return rc;
	}
	x.record = 1;	/* the reads, for repro.sh (struct dt_obs) */
	size_t j;
	rc = run_ops(&x, nfiles, ops, n, o, d, NULL, &j, shifted, only_file);
	if (rc > 0) {
		j--;
	} else if (!rc) {
		j = n ? n - 1 : 0;
		for (int f = 0; f < nfiles && !rc; f++)
			rc = dt_full_check(&x, f, j, d);
		if (rc > 0 && n)
			d->op = ops[n - 1];
	}
	if (rc > 0) {
		div_picture(&x, d);
		d->obs = x.obs;
		d->nobs = x.nobs;
		x.obs = NULL;
	}
	if (!rc && snap_clean && n && ops[n - 1].file < nfiles) {
		d->file = ops[n - 1].file;
		d->op = ops[n - 1];
		d->opno = n - 1;
		d->byte_off = -1;
		dt_mapsnap_take(&x, d->file, &d->snap);
	}
	if (stop_at)
		*stop_at = j;
	dt_exec_fini(&x);
	dt_session_close(s);
	return rc;
}

int dt_run_log(struct dt_target *t, int nfiles, const struct dt_op *ops,
	       size_t n, const struct dt_opts *o, struct dt_div *d, size_t *stop_at)
{
	return run_log(t, nfiles, ops, n, o, d, stop_at, NULL, 1, -1);
}

/* The shrinker's predicate (ddmin.h): a candidate fails when it shows a
 * divergence of the kind being shrunk on fresh files of the target.  Its
 * context holds everything ddmin does not know about: the target, the
 * budgets, the candidate journal, and which shifts of the last failing
 * sequence took effect (for dt_relocate()). */
struct shrink_ctx {
	struct dt_target *t;
	int nfiles;
	int kind;
	int op_kind;	/* DV_RET: the kind of op whose result diverged */
	const struct dt_opts *o;
	uint64_t tests, max_tests;
	double t0, max_seconds, last_note;
	const char *journal;	/* each candidate's log, written before it runs */
	uint8_t *cur_sh;	/* shifted[] of the last failing sequence */
	uint8_t *cand_sh;	/* shifted[] of the candidate being run */
	struct dt_div last;	/* the divergence of the last failing sequence */
};

/* The candidate about to run, whole, to c->journal (synced): if it kills
 * the kernel, the campaign shrinks that crash from this log, not from the
 * main journal, whose sequence need not crash at all (mutant 03's BUG fired
 * only in a shrink candidate). */
static void journal_candidate(struct shrink_ctx *c, const struct dt_op *ops, size_t n)
{
	if (!c->journal)
		return;
	FILE *f = fopen(c->journal, "w");
	if (!f) {
		fprintf(stderr, "difftest: candidate journal %s: %s (going on without)\n",
			c->journal, strerror(errno));
		c->journal = NULL;
		return;
	}
	dt_log_write(f, c->t, c->nfiles, ops, n, 0);
	fflush(f);
	fsync(fileno(f));
	fclose(f);
}

/* ddmin's still_fails: 1 if ops[0..n) shows a divergence of the wanted
 * kind; *need = the ops up to the one that diverged.  On 1 the run's
 * shifted[] and divergence become the current ones (ddmin adopts every
 * failing candidate). */
static int shrink_fails(void *ctx, const struct dt_op *ops, size_t n, size_t *need)
{
	struct shrink_ctx *c = ctx;
	struct dt_div d;
	size_t stop = n;

	c->tests++;
	/* a heartbeat: long candidates on a slow guest must not look hung
	 * (vm/run stops a guest silent for --idle seconds) */
	if (now() - c->last_note > 30) {
		c->last_note = now();
		fprintf(stderr, "difftest: shrinking: test %" PRIu64 ", candidate of %zu ops, %.0f s\n",
			c->tests, n, c->last_note - c->t0);
	}
	journal_candidate(c, ops, n);
	int rc = run_log(c->t, c->nfiles, ops, n, c->o, &d, &stop, c->cand_sh, 0, -1);
	/* a wrong result must stay one of the same op: any op has errno
	 * edges, and "some op returns a wrong errno" let mutant 03's wrong
	 * insert slip to an unrelated 1-op mread the clean kernel fails too */
	if (rc != c->kind || (c->kind == DV_RET && (int)d.op.kind != c->op_kind)) {
		dt_div_free(&d);
		return 0;
	}
	*need = stop + 1 < n ? stop + 1 : n;
	memcpy(c->cur_sh, c->cand_sh, *need);
	dt_div_free(&c->last);
	c->last = d;
	return 1;
}

/* ddmin's candidate: the kept ops moved across the inserts and collapses
 * dropped before them (shiftmap.c), so that they still meet the data and
 * holes they met in the sequence that failed. */
static ssize_t shrink_candidate(void *ctx, const struct dt_op *cur, size_t n,
				const uint8_t *keep, struct dt_op *out)
{
	struct shrink_ctx *c = ctx;
	return dt_relocate(cur, c->cur_sh, keep, n, c->nfiles, out);
}

static int shrink_budget_left(void *ctx)
{
	struct shrink_ctx *c = ctx;
	return c->tests < c->max_tests && now() - c->t0 < c->max_seconds;
}

/* The files the diverging file's content can depend on: itself and,
 * transitively, the sources of the reflink, copy_range and dedupe ops of
 * the files kept.  Their ops and the global ops go to out (room for n),
 * the files renumbered: the diverging file f0, the others after it in
 * their order.  alone: the diverging file's ops only, every file keeping
 * its number (its sources read as the empty files they then are).
 * Returns the ops written; *nkept = the files of the session. */
size_t dt_few_files(const struct dt_op *ops, size_t n, int nfiles, int file, int alone,
		    struct dt_op *out, int *nkept)
{
	const uint8_t f0 = (uint8_t)file;
	bool keep[256] = { false };
	int map[256];
	size_t k = 0;

	keep[f0] = true;
	for (bool grew = !alone; grew;) {
		grew = false;
		for (size_t j = 0; j < n; j++)
			if (keep[ops[j].file] && !keep[ops[j].src] &&
			    dt_opdesc_of(ops[j].kind)->syntax == DT_SYN_REFLINK)
				grew = keep[ops[j].src] = true;
	}
	for (int i = 0; i < 256; i++)
		map[i] = i;
	*nkept = nfiles;
	if (!alone) {
		int m = 0;
		map[f0] = m++;
		for (int i = 0; i < 256; i++)
			if (keep[i] && i != f0)
				map[i] = m++;
		if (m <= nfiles)	/* else a source past the session: all */
			*nkept = m;
	}
	for (size_t j = 0; j < n; j++) {
		if (!keep[ops[j].file] && !dt_kind_is_global(ops[j].kind))
			continue;
		out[k] = ops[j];
		out[k].file = (uint8_t)(keep[ops[j].file] ? map[ops[j].file] : 0);
		if (dt_opdesc_of(ops[j].kind)->syntax == DT_SYN_REFLINK)
			out[k].src = (uint8_t)map[ops[j].src];
		k++;
	}
	return k;
}

/* The other files usually do not matter: tried before ddmin, the
 * diverging file with the files it takes data from (dt_few_files()), then
 * the diverging file alone, with the global ops.  1 and ops/n/the context
 * set to the first that fails, 0 when neither does or drops anything
 * (context unchanged). */
static int try_few_files(struct shrink_ctx *c, struct dt_op *ops, size_t *n, int file)
{
	struct dt_op *cand = malloc((*n ? *n : 1) * sizeof(*cand));
	int nfiles = c->nfiles, rc = 0;

	if (!cand)
		return -ENOMEM;
	for (int alone = 0; alone < 2 && rc == 0; alone++) {
		int kept;
		size_t k = dt_few_files(ops, *n, nfiles, file, alone, cand, &kept), need = k;
		if (k == *n || (!alone && kept == nfiles))
			continue;	/* drops nothing (the next variant may) */
		c->nfiles = kept;
		rc = shrink_fails(c, cand, k, &need);
		if (rc > 0) {
			memcpy(ops, cand, need * sizeof(*ops));
			*n = need;
		} else {
			c->nfiles = nfiles;
		}
	}
	free(cand);
	return rc;
}

/* The whole log run once: 1 when it diverges as the campaign saw (the
 * kind being shrunk, on the same file; for a wrong result, of the same
 * op kind), 0 when not, or -errno.  Another file's divergence on the way
 * restarts that file, as in the campaign.  Where it diverges may differ
 * from the campaign's op, since the full checks of a window fall
 * elsewhere. */
static int replays(struct shrink_ctx *c, const struct dt_op *ops, size_t n, int file)
{
	struct dt_div d;
	size_t stop = n;

	c->tests++;
	journal_candidate(c, ops, n);
	int rc = run_log(c->t, c->nfiles, ops, n, c->o, &d, &stop, NULL, 0, file);
	int same = rc == c->kind && d.file == file &&
		   (c->kind != DV_RET || (int)d.op.kind == c->op_kind);
	dt_div_free(&d);
	return rc < 0 ? rc : same;
}

/* A nearly full target's wrong ENOSPC (RULES.md N5: ext4's punch, insert
 * and collapse never answer it) needs the file system full when the op
 * runs, but how full a replay gets it there depends on which freed blocks
 * the journal had committed (ext4_should_retry_alloc()) and on the
 * allocator's history, so the log rarely meets ENOSPC at the same op
 * again.  A fill op just before that op (syncfs, then the filler takes
 * every free block, dt_t_fill()) makes the condition part of the log.
 * The ops before it may still meet ENOSPC elsewhere than they did, and a
 * file an ENOSPC restarted, or a write it cut short, has another shape
 * when the op runs; so the variants, first to replay wins: the log with
 * the fill; with an unfill first too (the ops before the fill run with
 * room); and each of those with the diverging file's ops only.  ddmin
 * then keeps the fill and the unfill as long as the divergence needs
 * them.  1 when a variant replays (r->ops is it), 0 when none does. */
static int try_filled(struct shrink_ctx *c, struct dt_shrink_res *r, int file)
{
	/* a log shrunk this way already has its fill before the last op */
	if (!c->t->full || c->kind != DV_RET || !r->nops ||
	    (r->nops > 1 && r->ops[r->nops - 2].kind == DT_FILL))
		return 0;
	struct dt_op *v = malloc((r->nops + 2) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	int rc = 0;
	for (int variant = 0; variant < 4 && rc == 0; variant++) {
		int unfill = variant & 1, only = variant >> 1;
		size_t k = 0;
		if (unfill)
			v[k++] = (struct dt_op){ .kind = DT_UNFILL };
		for (size_t j = 0; j + 1 < r->nops; j++)
			if (!only || r->ops[j].file == file || dt_kind_is_global(r->ops[j].kind))
				v[k++] = r->ops[j];
		v[k++] = (struct dt_op){ .kind = DT_FILL };
		v[k++] = r->ops[r->nops - 1];
		if ((rc = replays(c, v, k, file)) > 0) {
			free(r->ops);
			r->ops = v;
			r->nops = k;
			r->filled = 1;
			return 1;
		}
	}
	free(v);
	return rc;
}

int dt_shrink(struct dt_target *t, int nfiles, const struct dt_op *ops,
	      size_t n, const struct dt_div *seen, const struct dt_opts *o,
	      uint64_t max_tests, double max_seconds, const char *journal,
	      struct dt_shrink_res *r)
{
	int file = seen->file, kind = seen->kind;
	/* Candidates fsck only when shrinking an fsck divergence: a bug that
	 * corrupts the disk whenever it fires (mutant 03's extent past
	 * EXT_MAX_BLOCKS leaks blocks when its file is unlinked) leaves each
	 * reproducing candidate's mess to the next, whose fsck then reports
	 * that instead of the divergence being shrunk. */
	struct dt_opts co = *o;
	if (kind != DV_FSCK)
		co.fsck_every = 0;
	size_t nn = n + 2;	/* try_filled() may add an unfill and a fill */
	/* the log ends with the op that diverged (campaign.c, --replay) */
	struct shrink_ctx c = { .t = t, .nfiles = nfiles, .kind = kind, .o = &co,
				.op_kind = n ? (int)ops[n - 1].kind : -1,
				.max_tests = max_tests, .t0 = now(), .max_seconds = max_seconds,
				.last_note = now(), .journal = journal,
				.cur_sh = calloc(nn, 1), .cand_sh = calloc(nn, 1) };
	const struct dt_ddmin dd = { .still_fails = shrink_fails, .candidate = shrink_candidate,
				     .budget_left = shrink_budget_left, .ctx = &c };
	struct dt_ddmin_res res = { 0 };
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->ops = malloc(nn * sizeof(*r->ops));
	if (!r->ops || !c.cur_sh || !c.cand_sh) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(r->ops, ops, n * sizeof(*r->ops));
	r->nops = n;
	/* First the whole log once more, on a fresh file system: a
	 * divergence that does not come back (of the same kind, on the same
	 * file) depends on something outside the log (write-back the kernel
	 * started by itself, the allocator's history, a flaky target), and
	 * every candidate would then test something else: ddmin could
	 * "shrink" it to a sequence that fails for another reason.  It is
	 * reported as not replaying, with the whole log, unshrunk. */
	if (kind == DV_RET && seen->act_ret == -ENOSPC && (rc = try_filled(&c, r, file)) < 0)
		goto out;
	if (!r->filled && (rc = replays(&c, r->ops, r->nops, file)) <= 0) {
		if (!rc)
			rc = -EAGAIN;
		goto out;
	}
	r->replays = 1;
	if (nfiles > 1 && (rc = try_few_files(&c, r->ops, &r->nops, file)) < 0)
		goto out;
	/* ddmin's first test is the log as given (it replayed above, so it
	 * fails unless the target is flaky).  That run also tells which
	 * shifts took effect, for shiftmap.c. */
	rc = dt_ddmin(&dd, r->ops, &r->nops, &res);
	r->nfiles = c.nfiles;
	r->complete = res.complete;
	r->flaky = res.verdict == DT_DDMIN_FLAKY;
	if (!rc && res.verdict == DT_DDMIN_FAILS) {
		r->div = c.last;	/* the final re-test's, with its picture */
		memset(&c.last, 0, sizeof(c.last));
	} else if (!rc) {
		rc = -EAGAIN;
	}
out:
	dt_div_free(&c.last);
	free(c.cur_sh);
	free(c.cand_sh);
	r->tests = c.tests;
	r->seconds = now() - c.t0;
	return rc;
}

/* ---- output files ---- */

int dt_log_write(FILE *f, struct dt_target *t, int nfiles,
		 const struct dt_op *ops, size_t n, uint64_t seed)
{
	char line[256];

	fprintf(f, "# difftest op log v1 (one op per line; replay: difftest --replay FILE)\n");
	fprintf(f, "# target: %s\n# files: %d\n# profile: %s\n# blocksize: %u\n# seed: %" PRIu64 "\n",
		t->name, nfiles, rm_profile_name2(t->mopts.profile, t->mopts.kernel),
		t->mopts.blocksize, seed);
	fprintf(f, "# kernel: %s (%s)\n", rm_kernel_name(t->kernel), t->kernel_note);
	if (t->has_cfg) {	/* the file system the ops ran on (config.h) */
		char name[128], mk[128], mo[64], fo[96];
		dt_config_name(&t->cfg, name, sizeof(name));
		dt_config_mkfs(&t->cfg, mk, sizeof(mk));
		dt_config_mount(&t->cfg, mo, sizeof(mo));
		dt_config_fusefs(&t->cfg, fo, sizeof(fo));
		if (t->cfg.fs == DT_CFS_FUSEFS)
			fprintf(f, "# config: %s (rangeshift-fusefs -o %s)\n", name,
				fo[0] ? fo : "defaults");
		else
			fprintf(f, "# config: %s (mkfs.%s %s; mount -o %s)\n", name,
				dt_config_fsname(t->cfg.fs), mk, mo[0] ? mo : "defaults");
	}
	if (t->mopts.strict)	/* replay reads it back (the model without errata) */
		fprintf(f, "# strict: 1\n");
	if (t->user)		/* replay reads it back: the ops' caller */
		fprintf(f, "# user: %u:%u\n", (unsigned)t->user_uid, (unsigned)t->user_gid);
	/* the checking discipline (a replay uses the same; absent: 1) */
	fprintf(f, "# map-sync: %d\n", !t->cached);
	for (size_t j = 0; j < n; j++) {
		dt_op_format(&ops[j], line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	return ferror(f) ? -EIO : 0;
}

int dt_log_read(const char *path, struct dt_op **ops, size_t *n, int *nfiles,
		char *target, size_t tn, char *err, size_t errn)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	size_t cap = 0, cnt = 0, lineno = 0;
	struct dt_op *v = NULL;
	int maxf = 0;

	if (!f) {
		snprintf(err, errn, "%s: %s", path, strerror(errno));
		return -errno;
	}
	*nfiles = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#') {
			int k;
			if (sscanf(p, "# files: %d", &k) == 1)
				*nfiles = k;
			else if (!strncmp(p, "# target: ", 10) && target) {
				snprintf(target, tn, "%s", p + 10);
				target[strcspn(target, "\r\n")] = 0;
			}
			continue;
		}
		if (*p == '\n' || *p == 0 || *p == '\r')
			continue;
		if (RM_VEC_RESERVE(&v, &cap, cnt + 1, 256)) {
			free(v);
			fclose(f);
			return -ENOMEM;
		}
		char e2[256];
		if (dt_op_parse(p, &v[cnt], e2, sizeof(e2))) {
			snprintf(err, errn, "%s:%zu: %s", path, lineno, e2);
			free(v);
			fclose(f);
			return -EINVAL;
		}
		if (v[cnt].file + 1 > maxf)
			maxf = v[cnt].file + 1;
		cnt++;
	}
	fclose(f);
	if (*nfiles < maxf)
		*nfiles = maxf;
	if (*nfiles < 1)
		*nfiles = 1;
	if (*nfiles > DT_MAXFILES) {
		snprintf(err, errn, "%s: more than %d files", path, DT_MAXFILES);
		free(v);
		return -EINVAL;
	}
	*ops = v;
	*n = cnt;
	return 0;
}

int dt_write_crash_script(FILE *f, struct dt_target *t, int nfiles,
			  const struct dt_op *ops, size_t n)
{
	dt_write_script(f, t, nfiles, ops, n, NULL);
	return ferror(f) ? -EIO : 0;
}

int dt_write_maps_page(const char *dir, const struct dt_target *t, int nfiles,
		       const struct dt_op *ops, size_t n, const struct dt_div *d)
{
	char path[PATH_MAX + 32];
	FILE *f;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/maps.html", dir);
	if (!(f = fopen(path, "w")))
		return -errno;
	int rc = dt_maps_html_write(f, t, nfiles, ops, n, d);
	if (fclose(f) && !rc)
		rc = -errno;
	return rc;
}

int dt_write_repro(const char *dir, struct dt_target *t, int nfiles,
		   const struct dt_op *ops, size_t n, const struct dt_div *d,
		   uint64_t seed)
{
	char path[PATH_MAX + 32];
	FILE *f;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/ops.log", dir);
	if (!(f = fopen(path, "w")))
		return -errno;
	fprintf(f, "# divergence (%s): %s\n", dt_divkind_name(d->kind), d->msg);
	if (d->no_replay)
		fprintf(f, "# replays: false (run again on a fresh file system, this log did not "
			"diverge the same way: kept whole, not shrunk)\n");
	dt_log_write(f, t, nfiles, ops, n, seed);
	fclose(f);

	snprintf(path, sizeof(path), "%s/repro.sh", dir);
	if (!(f = fopen(path, "w")))
		return -errno;
	dt_write_script(f, t, nfiles, ops, n, d);
	fclose(f);
	chmod(path, 0755);

	snprintf(path, sizeof(path), "%s/maps.txt", dir);
	if (!(f = fopen(path, "w")))
		return -errno;
	char line[256];
	dt_op_format(&d->op, line, sizeof(line));
	fprintf(f, "target: %s (%s, profile %s)\ndivergence: %s after op %" PRIu64 " (%s)\n%s\n",
		t->name, t->fsname, rm_profile_name2(t->mopts.profile, t->mopts.kernel),
		dt_divkind_name(d->kind),
		d->opno, line, d->msg);
	if (d->no_replay)
		fprintf(f, "replays: false: run again on a fresh file system, the whole log did not "
			"diverge the same way; the reproducer is the whole log, unshrunk\n");
	if (d->byte_off >= 0)
		fprintf(f, "first differing byte: offset %" PRId64 " (block %" PRId64 "), expected 0x%02x, actual %s%02x\n",
			d->byte_off, d->byte_off / t->mopts.blocksize, d->exp_byte,
			d->act_byte < 0 ? "EOF/" : "0x", d->act_byte < 0 ? 0 : d->act_byte);
	if (d->picture)
		fprintf(f, "\n%s", d->picture);
	fclose(f);

	return dt_write_maps_page(dir, t, nfiles, ops, n, d);
}
