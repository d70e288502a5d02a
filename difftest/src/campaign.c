/* SPDX-License-Identifier: MIT */
/*
 * campaign.c - one difftest campaign over one target: generate ops, run
 * them through the oracle, full-check every K ops and at the end, shrink
 * each divergence and write its reproducer, keep the statistics of the
 * JSON report, and show progress (a bar on a terminal, lines otherwise).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "campaign.h"
#include "optab.h"
#include "rm_vec.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double tv_sec(struct timeval tv)
{
	return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static void sanitize(const char *in, char *out, size_t n)
{
	size_t k = 0;
	for (; *in && k + 1 < n; in++)
		out[k++] = (*in == '/' || *in == ':' || *in == ' ') ? '_' : *in;
	out[k] = 0;
}

static void progress(struct dt_campaign *c, struct dt_tresult *r, uint64_t done,
		     uint64_t total, int final)
{
	double t = now();
	if (!final && t - c->last_progress < (c->tty || c->live ? 0.5 : 10.0))
		return;
	c->last_progress = t;
	double el = t - r->t0 - r->shrink_seconds;
	double rate = el > 0 ? done / el : 0;
	double eta = rate > 0 ? (total - done) / rate : 0;
	if (c->live) {
		c->live->done = done;
		c->live->total = total;
		c->live->divergences = r->divergences;
		c->live->max_extents = r->max_extents;
		c->live->rate = rate;
		return;
	}
	if (c->quiet)
		return;
	if (c->tty) {
		int w = 24, fill = total ? (int)(w * (double)done / total) : w;
		char bar[32];
		for (int k = 0; k < w; k++)
			bar[k] = k < fill ? '#' : '-';
		bar[w] = 0;
		fprintf(stderr, "\r%-10.10s [%s] %" PRIu64 "/%" PRIu64 " %6.0f ops/s ETA %4dm%02ds div %" PRIu64
			" ext %" PRId64 "  ", r->name, bar, done, total, rate, (int)eta / 60, (int)eta % 60,
			r->divergences, r->max_extents);
		if (final)
			fputc('\n', stderr);
	} else {
		fprintf(stderr, "difftest: %s%s: %" PRIu64 "/%" PRIu64 " ops, %.0f ops/s, ETA %ds, "
			"%" PRIu64 " divergences, max extents %" PRId64 "\n", c->prefix, r->name, done,
			total, rate, (int)eta, r->divergences, r->max_extents);
	}
	fflush(stderr);
}

struct oplog {
	struct dt_op *v;
	size_t n, cap;
};

static int log_push(struct oplog *l, const struct dt_op *op)
{
	int rc = RM_VEC_RESERVE(&l->v, &l->cap, l->n + 1, 4096);
	if (!rc)
		l->v[l->n++] = *op;
	return rc;
}

static void set_point(struct dt_divpoint *p, const struct dt_div *d)
{
	p->kind = d->kind;
	p->file = d->file;
	p->opno = d->opno;
	dt_op_format(&d->op, p->op, sizeof(p->op));
	snprintf(p->msg, sizeof(p->msg), "%s", d->msg);
}

/* The report's record of divergence d of the run (window: the ops the
 * shrink started from); sr: the shrink's result, NULL with --no-shrink. */
static void add_div(struct dt_campaign *c, struct dt_tresult *r, const struct dt_div *d,
		    const char *dir, size_t window, int result, const struct dt_shrink_res *sr)
{
	if (RM_VEC_RESERVE(&c->divs, &c->divs_cap, c->ndivs + 1, 8))
		return;
	struct dt_divrec *e = &c->divs[c->ndivs++];
	memset(e, 0, sizeof(*e));
	snprintf(e->target, sizeof(e->target), "%s", r->name);
	snprintf(e->dir, sizeof(e->dir), "%s", dir);
	set_point(&e->orig, d);
	e->window_ops = window;
	e->shrink_result = result;
	e->replays = sr ? sr->replays : -1;
	if (sr) {
		e->shrink_tests = sr->tests;
		e->shrink_complete = result == DT_SHRUNK && sr->complete;
		e->shrink_seconds = sr->seconds;
	}
	if (result == DT_SHRUNK) {
		set_point(&e->shrunk, &sr->div);
		e->shrunk_ops = sr->nops;
	}
}

/* The first op of the window a divergence is shrunk from: the ops since
 * the diverging file's current incarnation began; for fsck, since the
 * oldest file's (the corrupt inode can be any file's: the remount op
 * names one at random); on a nearly full target (free=) too, since every
 * file's blocks decide where ENOSPC falls. */
static size_t div_window(const struct oplog *l, const size_t *epoch, const struct dt_div *d,
			 int nfiles, int full)
{
	size_t from = epoch[d->file];
	if (d->kind == DV_FSCK || full)
		for (int i = 0; i < nfiles; i++)
			if (epoch[i] < from)
				from = epoch[i];
	/* a reflink imports its source's blocks (shared, with their CoW
	 * staging): the source's history since its own epoch belongs in the
	 * window too, and so on for the files those ops name (the first
	 * divergence of mutant 06 did not reproduce from its file's 90 ops) */
	for (int grown = 1; grown;) {
		grown = 0;
		for (size_t j = from; j < l->n; j++)
			if (dt_opdesc_of(l->v[j].kind)->syntax == DT_SYN_REFLINK &&
			    l->v[j].src < nfiles &&
			    epoch[l->v[j].src] < from) {
				from = epoch[l->v[j].src];
				grown = 1;
			}
	}
	const size_t max_window = 50000;
	return l->n - from > max_window ? l->n - max_window : from;
}

/* Shrink the window w[0..n) and write the reproducer into dir (the
 * unshrunk window when it does not shrink). */
static void shrink_div(struct dt_campaign *c, struct dt_target *t, struct dt_tresult *r,
		       struct dt_div *d, const struct dt_op *w, size_t n, int nfiles,
		       const char *dir, const char *tn)
{
	struct dt_shrink_res sr;
	char cj[2 * PATH_MAX + 256];

	if (c->journal[0])
		snprintf(cj, sizeof(cj), "%s/shrink-candidate-%s%s.log", c->journal, c->shard_tag, tn);
	fprintf(stderr, "difftest: shrinking %zu ops (ddmin, fresh files per candidate; in the "
		"guest a file system made anew)...\n", n);
	int rc = dt_shrink(t, nfiles, w, n, d, &c->o, c->shrink_tests,
			   c->shrink_seconds, c->journal[0] ? cj : NULL, &sr);
	if (rc == 0) {
		dt_write_repro(dir, t, sr.nfiles, sr.ops, sr.nops, &sr.div, c->seed);
		fprintf(stderr, "difftest: shrunk to %zu ops in %" PRIu64 " runs (%.1fs%s%s): %s/repro.sh\n",
			sr.nops, sr.tests, sr.seconds, sr.complete ? ", 1-minimal" : ", budget hit",
			sr.filled ? "; replayed with a fill before the op that met ENOSPC" : "", dir);
		add_div(c, r, d, dir, n, DT_SHRUNK, &sr);
	} else {
		if (sr.flaky)
			fprintf(stderr, "difftest: the shrunk log did not diverge again when re-tested "
				"(the target is flaky here); writing the unshrunk log of %zu ops\n", n);
		else if (rc == -EAGAIN)
			fprintf(stderr, "difftest: the divergence does not replay: the window of %zu ops, "
				"run again on a fresh file system, did not diverge the same way (it "
				"depends on state outside the log, or the target is not deterministic); "
				"\"replays\": false, writing the whole window unshrunk\n", n);
		else
			fprintf(stderr, "difftest: shrinking failed (%s); writing the unshrunk log of "
				"%zu ops\n", strerror(-rc), n);
		d->no_replay = !sr.replays && rc == -EAGAIN;
		dt_write_repro(dir, t, nfiles, w, n, d, c->seed);
		add_div(c, r, d, dir, n, sr.flaky ? DT_SHRINK_FLAKY : rc == -EAGAIN ?
			DT_SHRINK_NO_REPRO : DT_SHRINK_ERROR, &sr);
	}
	dt_div_free(&sr.div);
	free(sr.ops);
}

static void handle_div(struct dt_campaign *c, struct dt_target *t, struct dt_tresult *r,
		       struct dt_div *d, const struct oplog *l, const size_t *epoch,
		       int nfiles)
{
	char line[256], tn[PATH_MAX + 32], dir[2 * PATH_MAX + 256];

	double ts = now();
	r->divergences++;
	dt_op_format(&d->op, line, sizeof(line));
	fprintf(stderr, "%sdifftest: DIVERGENCE #%" PRIu64 " on %s, file f%d, op %" PRIu64 " (%s): %s\n",
		c->tty ? "\n" : "", r->divergences, t->name, d->file, d->opno, line, d->msg);
	sanitize(t->name, tn, sizeof(tn));
	snprintf(dir, sizeof(dir), "%s/div-%s%s-%" PRIu64, c->out, c->shard_tag, tn, r->divergences);
	size_t from = div_window(l, epoch, d, nfiles, t->full), n = l->n - from;
	if (c->no_shrink) {
		dt_write_repro(dir, t, nfiles, l->v + from, n, d, c->seed);
		add_div(c, r, d, dir, n, DT_SHRINK_OFF, NULL);
	} else {
		shrink_div(c, t, r, d, l->v + from, n, nfiles, dir, tn);
	}
	r->shrink_seconds += now() - ts;
}

/* One target's run: what the steps below share. */
struct trun {
	struct dt_campaign *c;
	struct dt_tresult *r;
	struct dt_target *t;
	struct dt_session *s;
	struct dt_exec x;
	struct dt_gen g;
	struct oplog l;
	size_t epoch[DT_MAXFILES];	/* where each file's current incarnation began */
	int live[DT_MAXFILES];
	struct dt_div d;
	FILE *jf;			/* --journal */
	struct rusage ru0, rc0;
};

static void fail(struct trun *u, const char *what, const char *err)
{
	fprintf(stderr, "difftest: %s%s\n", what, err);
	snprintf(u->r->error, sizeof(u->r->error), "%s", err);
}

/* Pin (before the probe writes anything, pin.c), make the target and
 * note what it is: 0 or -errno. */
static int open_target(struct trun *u, const char *spec)
{
	struct dt_campaign *c = u->c;
	struct dt_tresult *r = u->r;
	char err[1024], tag[64];
	int pin = 0, rc;

	r->cpu = -1;
	if (!c->no_pin && (pin = dt_pin(c->pin_slot)) >= 0)
		r->cpu = pin;
	snprintf(tag, sizeof(tag), "%s%d", c->shard_tag, (int)getpid());
	if ((rc = dt_target_init(u->t, spec, tag, err, sizeof(err)))) {
		fail(u, "", err);
		return rc;
	}
	snprintf(r->fsname, sizeof(r->fsname), "%s", u->t->fsname);
	snprintf(r->profile, sizeof(r->profile), "%s",
		 rm_profile_name2(u->t->mopts.profile, u->t->mopts.kernel));
	snprintf(r->notes, sizeof(r->notes), "%s", u->t->probe_notes);
	if (pin < 0) {
		/* a run that may migrate still runs; it may not replay */
		size_t l = strlen(r->notes);
		snprintf(r->notes + l, sizeof(r->notes) - l, "%snot pinned to a CPU (%s)",
			 l ? "; " : "", dt_errname(pin));
		fprintf(stderr, "difftest: %s%s: cannot pin to a CPU (%s): the block layout, "
			"and so this seed's divergences, may differ between runs\n",
			c->prefix, spec, dt_errname(pin));
	}
	r->blocksize = u->t->mopts.blocksize;
	if (u->t->has_cfg)
		dt_config_name(&u->t->cfg, r->config, sizeof(r->config));
	snprintf(r->mount_options, sizeof(r->mount_options), "%s", u->t->mnt_opts);
	if (c->no_remount)
		u->t->can_remount = 0;
	u->t->fiemap_nosync = c->fiemap_nosync;
	u->t->mopts.strict = c->o.strict;
	u->t->user = c->o.user;
	u->t->user_uid = c->o.user_uid;
	u->t->user_gid = c->o.user_gid;
	if (c->o.user && u->t->type == DT_T_FD && geteuid() != 0) {
		snprintf(err, sizeof(err), "target %s: --user needs root (setfsuid(), chown)", spec);
		fail(u, "", err);
		return -EPERM;
	}
	dt_target_discipline(u->t, c->o.map_sync);
	return 0;
}

/* The generator, the files and the executor: 0 or -errno. */
static int start_run(struct trun *u)
{
	struct dt_campaign *c = u->c;
	struct dt_target *t = u->t;
	char err[1024];
	int rc;

	dt_gen_init(&u->g, c->seed, c->nfiles, t->mopts.blocksize, t->mopts.maxbytes);
	memcpy(u->g.weights, c->weights, sizeof(u->g.weights));
	u->g.locality = c->locality;
	u->g.huge = c->huge;
	u->g.flen = c->flen;
	u->g.oplen = c->oplen;
	u->g.disabled = t->disabled;
	u->r->disabled = t->disabled;
	if (!c->quiet)
		fprintf(stderr, "difftest: %s%s: %s, profile %s (%s), block %u, maxbytes %" PRId64
			", %d files, seed %" PRIu64 "%s%s\n", c->prefix, t->name, t->fsname,
			rm_profile_name2(t->mopts.profile, t->mopts.kernel), t->kernel_note,
			t->mopts.blocksize, t->mopts.maxbytes,
			c->nfiles, c->seed, t->probe_notes[0] ? "; " : "", t->probe_notes);
	if ((rc = dt_session_open(t, c->nfiles, &u->s, err, sizeof(err)))) {
		fail(u, "", err);
		return rc;
	}
	/* In the guest the run starts on a file system made anew, after the
	 * probe's writes, exactly as every shrink candidate and replay does
	 * (dt_start_fresh()): the whole log then replays to the same blocks
	 * (ext4, pinned), and ddmin's candidates start where it did. */
	if ((rc = dt_start_fresh(t, err, sizeof(err))) < 0) {
		fprintf(stderr, "difftest: %s: %s\n", t->name, err);
		snprintf(u->r->error, sizeof(u->r->error), "%s", err);
		return rc;
	}
	if ((rc = dt_exec_init(&u->x, u->s, &c->o)))
		return rc;
	for (int i = 0; i < DT_MAXFILES; i++)
		u->live[i] = i < c->nfiles;
	return 0;
}

/* --journal: the op log written op by op, BEFORE each op runs and
 * unbuffered, so that it survives a kernel crash (in the guest DIR is on
 * the host's 9p share): the campaign shrinks crashes from it. */
static void open_journal(struct trun *u)
{
	struct dt_campaign *c = u->c;
	char tn[PATH_MAX + 32], jp[2 * PATH_MAX + 256];

	if (!c->journal[0])
		return;
	sanitize(u->t->name, tn, sizeof(tn));
	snprintf(jp, sizeof(jp), "%s/journal-%s%s.log", c->journal, c->shard_tag, tn);
	if (!(u->jf = fopen(jp, "w"))) {
		fprintf(stderr, "difftest: --journal %s: %s (going on without)\n", jp,
			strerror(errno));
		return;
	}
	dt_log_write(u->jf, u->t, c->nfiles, NULL, 0, c->seed);
	fflush(u->jf);
	setvbuf(u->jf, NULL, _IONBF, 0);
}

/* Op j: generated, logged, run and (every K ops) fully checked.  The
 * return value of dt_exec_op()/dt_full_check(). */
static int step(struct trun *u, uint64_t j)
{
	struct dt_campaign *c = u->c;
	struct dt_op op;
	int rc;

	dt_gen_next(&u->g, u->s->model, u->live, &op);
	/* the last op of a run remounts (unless remount's weight is 0):
	 * the on-disk checks (tree depth, fsck: depth.c) see the end state */
	if (j + 1 == c->ops && c->ops > 1 && u->g.weights[DT_REMOUNT] &&
	    !(u->g.disabled & DT_KBIT(DT_REMOUNT))) {
		memset(&op, 0, sizeof(op));
		op.kind = DT_REMOUNT;
	}
	if ((rc = log_push(&u->l, &op)))
		return rc;
	if (u->jf) {
		char line[256];
		dt_op_format(&op, line, sizeof(line));
		fprintf(u->jf, "%s\n", line);
	}
	rc = dt_exec_op(&u->x, &op, j, &u->d);
	if (!rc && u->x.file_reset)
		u->epoch[op.file] = u->l.n;
	if (!rc && op.kind == DT_TRUNCATE && op.off == 0 && rm_map_end(u->s->model[op.file]) == 0)
		u->epoch[op.file] = u->l.n;	/* nothing before this can matter to it */
	if (!rc && c->o.check_every && (j + 1) % c->o.check_every == 0)
		for (int i = 0; i < c->nfiles && !rc; i++)
			if ((rc = dt_full_check(&u->x, i, j, &u->d)) > 0)
				u->d.op = op;	/* found after this op */
	return rc;
}

/* A divergence in the run: shrink it and start the files afresh.  0 to
 * go on, 1 to stop (--max-div), or -errno. */
static int on_divergence(struct trun *u)
{
	struct dt_campaign *c = u->c;
	struct dt_target *t = u->t;
	/* What the divergence left on disk must not meet the shrink's
	 * candidates: a corrupt inode fails every candidate's fsck (a 1e6
	 * run's XFS finding "shrank" to a lone remount), a corrupt extent
	 * tree made mutant 03 "not reproduce on fresh files".  In the guest
	 * the scratch file system is made anew (dt_t_fresh_fs()); elsewhere,
	 * for fsck, every file of the session is unlinked.  Either way all
	 * files start afresh. */
	char note[512];
	int fresh = dt_t_fresh_fs(t, note, sizeof(note)), rerr = 0, rc;
	if (fresh < 0)
		rerr = fresh;
	else if (fresh == 0)
		fprintf(stderr, "difftest: %s: made the file system anew for the shrink (%s)\n",
			t->name, t->mnt_dev);
	else if (u->d.kind == DV_FSCK)
		for (int i = 0; i < c->nfiles && !rerr; i++)
			rerr = dt_session_reset_file(u->s, i);
	if (rerr < 0) {
		snprintf(u->r->error, sizeof(u->r->error), "cannot start afresh after the "
			 "divergence: %s", note[0] ? note : strerror(-rerr));
		dt_div_free(&u->d);
		return rerr;
	}
	handle_div(c, t, u->r, &u->d, &u->l, u->epoch, c->nfiles);
	dt_div_free(&u->d);
	if (fresh == 0 || u->d.kind == DV_FSCK)
		for (int i = 0; i < c->nfiles; i++)
			u->epoch[i] = u->l.n;
	int f = u->d.file;
	if ((rc = dt_session_reset_file(u->s, f)))
		return rc;
	u->epoch[f] = u->l.n;
	if (u->r->divergences >= c->max_div) {
		fprintf(stderr, "difftest: %s: %" PRIu64 " divergences, stopping this target "
			"(--max-div)\n", t->name, u->r->divergences);
		return 1;
	}
	return 0;
}

/* A fatal error at op j: said, and the history kept for whoever debugs
 * it (model errors go to refmodel). */
static void on_fatal(struct trun *u, uint64_t j, int rc)
{
	struct dt_campaign *c = u->c;
	char tn[PATH_MAX + 32], lp[2 * PATH_MAX + 256];
	const char *why = u->d.msg[0] ? u->d.msg : strerror(-rc);

	fprintf(stderr, "difftest: %s: fatal at op %" PRIu64 ": %s\n", u->t->name, j, why);
	snprintf(u->r->error, sizeof(u->r->error), "op %" PRIu64 ": %s", j, why);
	sanitize(u->t->name, tn, sizeof(tn));
	snprintf(lp, sizeof(lp), "%s/fatal-%s%s.log", c->out, c->shard_tag, tn);
	FILE *lf = fopen(lp, "w");
	if (lf) {
		fprintf(lf, "# fatal: %s\n", u->r->error);
		dt_log_write(lf, u->t, c->nfiles, u->l.v, u->l.n, c->seed);
		fclose(lf);
		fprintf(stderr, "difftest: op log up to the error: %s\n", lp);
	}
	dt_div_free(&u->d);
}

/* The ops of the run; *done = ops run.  0, 1 (stopped at --max-div) or
 * -errno. */
static int run_ops(struct trun *u, uint64_t *done)
{
	struct dt_campaign *c = u->c;
	uint64_t j;
	int rc = 0;

	for (j = 0; j < c->ops; j++) {
		rc = step(u, j);
		if (rc > 0) {
			if ((rc = on_divergence(u))) {
				j += rc > 0;
				break;
			}
		} else if (rc < 0) {
			on_fatal(u, j, rc);
			break;
		}
		if ((j & 255) == 0) {
			u->r->ops = u->x.ops;
			u->r->max_extents = u->x.max_extents;
			progress(c, u->r, j, c->ops, 0);
		}
	}
	*done = j;
	return rc;
}

/* The full check of every file at the end (divergences shrunk as any):
 * 0 or -errno. */
static int final_checks(struct trun *u, uint64_t j)
{
	int rc = 0;

	for (int i = 0; i < u->c->nfiles && !rc; i++)
		if ((rc = dt_full_check(&u->x, i, j, &u->d)) > 0) {
			handle_div(u->c, u->t, u->r, &u->d, &u->l, u->epoch, u->c->nfiles);
			dt_div_free(&u->d);
			rc = 0;
		}
	return rc;
}

static void fill_results(struct trun *u)
{
	struct dt_tresult *r = u->r;
	const struct dt_exec *x = &u->x;
	const struct dt_target *t = u->t;
	struct rusage ru1, rc1;

	getrusage(RUSAGE_SELF, &ru1);
	getrusage(RUSAGE_CHILDREN, &rc1);
	r->cpu_user = tv_sec(ru1.ru_utime) - tv_sec(u->ru0.ru_utime);
	r->cpu_sys = tv_sec(ru1.ru_stime) - tv_sec(u->ru0.ru_stime);
	r->cpu_children = tv_sec(rc1.ru_utime) + tv_sec(rc1.ru_stime) -
			  tv_sec(u->rc0.ru_utime) - tv_sec(u->rc0.ru_stime);
	r->ops = x->ops;
	memcpy(r->kind_count, x->kind_count, sizeof(r->kind_count));
	memcpy(r->errs, x->errs, sizeof(r->errs));
	r->max_extents = x->max_extents;
	r->max_model_runs = x->max_model_runs;
	r->enospc_resets = t->enospc_resets;
	r->enospc_checked = t->enospc_checked;
	r->setid_removals = t->setid_removals;
	r->remount_fallbacks = t->remount_fallbacks;
	r->fresh_restored = t->fresh_restored;
	r->fresh_mkfs = t->fresh_mkfs;
	r->syscalls = x->syscalls;
	r->max_depth = t->max_depth;
	r->max_btree = t->max_btree;
	r->depth_runs = t->depth_runs;
	r->depth_seconds = t->depth_seconds;
	r->fsck_runs = t->fsck_runs;
	r->fsck_errors = t->fsck_errors;
	r->fsck_seconds = t->fsck_seconds;
	r->expected_diffs = dt_xdiff_summary(u->c->o.xdiff, t->xdiff_hits, r->expected,
					     sizeof(r->expected));
	snprintf(r->depth_note, sizeof(r->depth_note), "%s", t->depth_note);
	memcpy(r->kind_sec, x->kind_sec, sizeof(r->kind_sec));
	r->full_sec = x->full_sec;
	r->map_sec = x->map_sec;
	r->data_sec = x->data_sec;
	memcpy(r->file_sec, x->file_sec, sizeof(r->file_sec));
	r->map_calls = x->map_calls;
	r->map_extents = x->map_extents;
	r->full_checks = x->full_checks;
	r->bytes_checked = x->bytes_checked;
}

/* Which expected differences apply to t on this kernel (r NULL, before
 * the run) and how many divergences they explained (after it). */
static void xdiff_note(const struct dt_campaign *c, const struct dt_target *t,
		       const struct dt_tresult *r)
{
	char ids[512];

	if (c->quiet || !c->o.xdiff || t->type != DT_T_FD)
		return;
	dt_xdiff_describe(c->o.xdiff, t->fsname, ids, sizeof(ids));
	if (!ids[0])
		return;
	if (!r)
		fprintf(stderr, "difftest: %s: kernel %s: expected differences applied: %s\n",
			t->name, c->o.xdiff->release, ids);
	else
		fprintf(stderr, "difftest: %s: %" PRIu64 " expected differences of kernel %s%s%s\n",
			t->name, r->expected_diffs, c->o.xdiff->release, r->expected[0] ? ": " : "",
			r->expected);
}

int dt_campaign_target(struct dt_campaign *c, const char *spec, struct dt_tresult *r)
{
	struct trun *u = calloc(1, sizeof(*u));
	struct dt_target *t = calloc(1, sizeof(*t));
	int rc, exec_ok = 0;

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", spec);
	if (!t || !u) {
		free(t);
		free(u);
		return -ENOMEM;
	}
	*u = (struct trun){ .c = c, .r = r, .t = t };
	if ((rc = open_target(u, spec)))
		goto out;
	if ((rc = start_run(u)))
		goto out;
	exec_ok = 1;
	xdiff_note(c, t, NULL);
	open_journal(u);
	getrusage(RUSAGE_SELF, &u->ru0);
	getrusage(RUSAGE_CHILDREN, &u->rc0);
	r->t0 = now();
	c->last_progress = 0;
	uint64_t j;
	rc = run_ops(u, &j);
	if (rc >= 0)
		rc = final_checks(u, j);
	r->seconds = now() - r->t0;
	fill_results(u);
	progress(c, r, j, c->ops, 1);
	xdiff_note(c, t, r);
	if (u->jf)
		fclose(u->jf);
out:
	if (exec_ok)
		dt_exec_fini(&u->x);
	if (u->s)
		dt_session_close(u->s);
	free(u->l.v);
	free(t);
	free(u);
	return rc < 0 ? rc : 0;
}
