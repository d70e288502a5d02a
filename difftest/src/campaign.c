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
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 4096;
		struct dt_op *nv = realloc(l->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = nc;
	}
	l->v[l->n++] = *op;
	return 0;
}

static void add_div(struct dt_campaign *c, struct dt_tresult *r, const struct dt_div *d,
		    const char *dir, size_t shrunk, uint64_t tests, int complete, double secs)
{
	struct dt_divrec *v = realloc(c->divs, (c->ndivs + 1) * sizeof(*v));
	if (!v)
		return;
	c->divs = v;
	struct dt_divrec *e = &c->divs[c->ndivs++];
	memset(e, 0, sizeof(*e));
	snprintf(e->target, sizeof(e->target), "%s", r->name);
	e->kind = d->kind;
	e->file = d->file;
	e->opno = d->opno;
	dt_op_format(&d->op, e->op, sizeof(e->op));
	snprintf(e->msg, sizeof(e->msg), "%s", d->msg);
	snprintf(e->dir, sizeof(e->dir), "%s", dir);
	e->shrunk_ops = shrunk;
	e->shrink_tests = tests;
	e->shrink_complete = complete;
	e->shrink_seconds = secs;
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
	/* window: ops since the diverging file's current incarnation began;
	 * for fsck, since the oldest file's: the corrupt inode can be any
	 * file's (the remount op names one at random) */
	size_t from = epoch[d->file];
	if (d->kind == DV_FSCK)
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
			if (l->v[j].kind == DT_REFLINK && l->v[j].src < nfiles &&
			    epoch[l->v[j].src] < from) {
				from = epoch[l->v[j].src];
				grown = 1;
			}
	}
	size_t n = l->n - from;
	const size_t max_window = 50000;
	if (n > max_window) {
		from = l->n - max_window;
		n = max_window;
	}
	const struct dt_op *w = l->v + from;
	if (c->no_shrink) {
		dt_write_repro(dir, t, nfiles, w, n, d, c->seed);
		add_div(c, r, d, dir, n, 0, 0, 0);
		r->shrink_seconds += now() - ts;
		return;
	}
	struct dt_shrink_res sr;
	char cj[2 * PATH_MAX + 256];
	if (c->journal[0])
		snprintf(cj, sizeof(cj), "%s/shrink-candidate-%s%s.log", c->journal, c->shard_tag, tn);
	fprintf(stderr, "difftest: shrinking %zu ops (ddmin, fresh files per candidate; in the "
		"guest a file system made anew)...\n", n);
	int rc = dt_shrink(t, nfiles, w, n, d->file, d->kind, &c->o, c->shrink_tests,
			   c->shrink_seconds, c->journal[0] ? cj : NULL, &sr);
	if (rc == 0) {
		dt_write_repro(dir, t, sr.nfiles, sr.ops, sr.nops, &sr.div, c->seed);
		fprintf(stderr, "difftest: shrunk to %zu ops in %" PRIu64 " runs (%.1fs%s): %s/repro.sh\n",
			sr.nops, sr.tests, sr.seconds, sr.complete ? ", 1-minimal" : ", budget hit", dir);
		add_div(c, r, &sr.div, dir, sr.nops, sr.tests, sr.complete, sr.seconds);
		/* the original divergence's position matters for the report */
		c->divs[c->ndivs - 1].opno = d->opno;
	} else if (sr.flaky) {
		fprintf(stderr, "difftest: the shrunk log did not diverge again when re-tested (the "
			"target is flaky here); writing the unshrunk log of %zu ops\n", n);
		dt_write_repro(dir, t, nfiles, w, n, d, c->seed);
		add_div(c, r, d, dir, n, sr.tests, 0, sr.seconds);
	} else {
		fprintf(stderr, "difftest: the divergence does not reproduce on fresh files from the "
			"last %zu ops (it depends on earlier state); writing the unshrunk log\n", n);
		dt_write_repro(dir, t, nfiles, w, n, d, c->seed);
		add_div(c, r, d, dir, n, sr.tests, 0, sr.seconds);
	}
	dt_div_free(&sr.div);
	free(sr.ops);
	r->shrink_seconds += now() - ts;
}

int dt_campaign_target(struct dt_campaign *c, const char *spec, struct dt_tresult *r)
{
	struct dt_target *t = calloc(1, sizeof(*t));
	char err[1024];
	int rc;

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", spec);
	if (!t)
		return -ENOMEM;
	/* pinned before the target's probe writes anything (pin.c) */
	r->cpu = -1;
	int pin = 0;
	if (!c->no_pin && (pin = dt_pin(c->pin_slot)) >= 0)
		r->cpu = pin;
	char tag[64];
	snprintf(tag, sizeof(tag), "%s%d", c->shard_tag, (int)getpid());
	if ((rc = dt_target_init(t, spec, tag, err, sizeof(err)))) {
		fprintf(stderr, "difftest: %s\n", err);
		snprintf(r->error, sizeof(r->error), "%s", err);
		free(t);
		return rc;
	}
	snprintf(r->fsname, sizeof(r->fsname), "%s", t->fsname);
	snprintf(r->profile, sizeof(r->profile), "%s", rm_profile_name(t->mopts.profile));
	snprintf(r->notes, sizeof(r->notes), "%s", t->probe_notes);
	if (pin < 0) {
		/* a run that may migrate still runs; it may not replay */
		size_t l = strlen(r->notes);
		snprintf(r->notes + l, sizeof(r->notes) - l, "%snot pinned to a CPU (%s)",
			 l ? "; " : "", dt_errname(pin));
		fprintf(stderr, "difftest: %s%s: cannot pin to a CPU (%s): the block layout, "
			"and so this seed's divergences, may differ between runs\n",
			c->prefix, spec, dt_errname(pin));
	}
	r->blocksize = t->mopts.blocksize;
	if (c->no_remount)
		t->can_remount = 0;
	t->fiemap_nosync = c->fiemap_nosync;
	struct dt_gen g;
	dt_gen_init(&g, c->seed, c->nfiles, t->mopts.blocksize, t->mopts.maxbytes);
	memcpy(g.weights, c->weights, sizeof(g.weights));
	g.locality = c->locality;
	g.disabled = t->disabled;
	r->disabled = t->disabled;
	if (!c->quiet)
		fprintf(stderr, "difftest: %s%s: %s, profile %s, block %u, maxbytes %" PRId64
			", %d files, seed %" PRIu64 "%s%s\n", c->prefix, t->name, t->fsname,
			rm_profile_name(t->mopts.profile), t->mopts.blocksize, t->mopts.maxbytes,
			c->nfiles, c->seed, t->probe_notes[0] ? "; " : "", t->probe_notes);

	struct dt_session *s;
	if ((rc = dt_session_open(t, c->nfiles, &s, err, sizeof(err)))) {
		fprintf(stderr, "difftest: %s\n", err);
		snprintf(r->error, sizeof(r->error), "%s", err);
		free(t);
		return rc;
	}
	/* In the guest the run starts on a file system made anew, after the
	 * probe's writes, exactly as every shrink candidate and replay does
	 * (dt_start_fresh()): the whole log then replays to the same blocks
	 * (ext4, pinned), and ddmin's candidates start where it did. */
	if ((rc = dt_start_fresh(t, err, sizeof(err))) < 0) {
		fprintf(stderr, "difftest: %s: %s\n", t->name, err);
		snprintf(r->error, sizeof(r->error), "%s", err);
		dt_session_close(s);
		free(t);
		return rc;
	}
	struct dt_exec x;
	if ((rc = dt_exec_init(&x, s, &c->o))) {
		dt_session_close(s);
		free(t);
		return rc;
	}
	/* --journal: the op log written op by op, BEFORE each op runs and
	 * unbuffered, so that it survives a kernel crash (in the guest DIR is
	 * on the host's 9p share): the campaign shrinks crashes from it. */
	FILE *jf = NULL;
	if (c->journal[0]) {
		char tn[PATH_MAX + 32], jp[2 * PATH_MAX + 256];
		sanitize(t->name, tn, sizeof(tn));
		snprintf(jp, sizeof(jp), "%s/journal-%s%s.log", c->journal, c->shard_tag, tn);
		if (!(jf = fopen(jp, "w")))
			fprintf(stderr, "difftest: --journal %s: %s (going on without)\n", jp,
				strerror(errno));
		else {
			dt_log_write(jf, t, c->nfiles, NULL, 0, c->seed);
			fflush(jf);
			setvbuf(jf, NULL, _IONBF, 0);
		}
	}
	struct oplog l = { 0 };
	size_t epoch[DT_MAXFILES] = { 0 };
	int live[DT_MAXFILES];
	for (int i = 0; i < DT_MAXFILES; i++)
		live[i] = i < c->nfiles;
	struct dt_div d = { 0 };
	struct rusage ru0, rc0;
	getrusage(RUSAGE_SELF, &ru0);
	getrusage(RUSAGE_CHILDREN, &rc0);
	r->t0 = now();
	c->last_progress = 0;
	uint64_t j;
	for (j = 0; j < c->ops; j++) {
		struct dt_op op;
		dt_gen_next(&g, s->model, live, &op);
		/* the last op of a run remounts (unless remount's weight is 0):
		 * the on-disk checks (tree depth, fsck: depth.c) see the end state */
		if (j + 1 == c->ops && c->ops > 1 && g.weights[DT_REMOUNT] &&
		    !(g.disabled & (1u << DT_REMOUNT))) {
			memset(&op, 0, sizeof(op));
			op.kind = DT_REMOUNT;
		}
		if ((rc = log_push(&l, &op)))
			break;
		if (jf) {
			char line[256];
			dt_op_format(&op, line, sizeof(line));
			fprintf(jf, "%s\n", line);
		}
		rc = dt_exec_op(&x, &op, j, &d);
		if (!rc && x.file_reset)
			epoch[op.file] = l.n;
		if (!rc && op.kind == DT_TRUNCATE && op.off == 0 && rm_map_end(s->model[op.file]) == 0)
			epoch[op.file] = l.n;	/* nothing before this can matter to it */
		if (!rc && c->o.check_every && (j + 1) % c->o.check_every == 0)
			for (int i = 0; i < c->nfiles && !rc; i++)
				if ((rc = dt_full_check(&x, i, j, &d)) > 0)
					d.op = op;	/* found after this op */
		if (rc > 0) {
			/* What the divergence left on disk must not meet the
			 * shrink's candidates: a corrupt inode fails every
			 * candidate's fsck (a 1e6 run's XFS finding "shrank" to a
			 * lone remount), a corrupt extent tree made mutant 03 "not
			 * reproduce on fresh files".  In the guest the scratch
			 * file system is made anew (dt_t_fresh_fs()); elsewhere,
			 * for fsck, every file of the session is unlinked.  Either
			 * way all files start afresh. */
			char note[512];
			int fresh = dt_t_fresh_fs(t, note, sizeof(note)), rerr = 0;
			if (fresh < 0)
				rerr = fresh;
			else if (fresh == 0)
				fprintf(stderr, "difftest: %s: made the file system anew for the "
					"shrink (%s)\n", t->name, t->mnt_dev);
			else if (d.kind == DV_FSCK)
				for (int i = 0; i < c->nfiles && !rerr; i++)
					rerr = dt_session_reset_file(s, i);
			if (rerr < 0) {
				rc = rerr;
				snprintf(r->error, sizeof(r->error), "cannot start afresh after the "
					 "divergence: %s", note[0] ? note : strerror(-rerr));
				dt_div_free(&d);
				break;
			}
			handle_div(c, t, r, &d, &l, epoch, c->nfiles);
			dt_div_free(&d);
			if (fresh == 0 || d.kind == DV_FSCK)
				for (int i = 0; i < c->nfiles; i++)
					epoch[i] = l.n;
			int f = d.file;
			if ((rc = dt_session_reset_file(s, f)))
				break;
			epoch[f] = l.n;
			if (r->divergences >= c->max_div) {
				fprintf(stderr, "difftest: %s: %" PRIu64 " divergences, stopping this target "
					"(--max-div)\n", t->name, r->divergences);
				j++;
				break;
			}
		} else if (rc < 0) {
			fprintf(stderr, "difftest: %s: fatal at op %" PRIu64 ": %s\n", t->name, j,
				d.msg[0] ? d.msg : strerror(-rc));
			snprintf(r->error, sizeof(r->error), "op %" PRIu64 ": %s", j,
				 d.msg[0] ? d.msg : strerror(-rc));
			/* keep the history for whoever debugs it (model errors go
			 * to the refmodel owner) */
			char tn[PATH_MAX + 32], lp[2 * PATH_MAX + 256];
			sanitize(t->name, tn, sizeof(tn));
			snprintf(lp, sizeof(lp), "%s/fatal-%s%s.log", c->out, c->shard_tag, tn);
			FILE *lf = fopen(lp, "w");
			if (lf) {
				fprintf(lf, "# fatal: %s\n", r->error);
				dt_log_write(lf, t, c->nfiles, l.v, l.n, c->seed);
				fclose(lf);
				fprintf(stderr, "difftest: op log up to the error: %s\n", lp);
			}
			dt_div_free(&d);
			break;
		}
		if ((j & 255) == 0) {
			r->ops = x.ops;
			r->max_extents = x.max_extents;
			progress(c, r, j, c->ops, 0);
		}
	}
	if (rc == 0 || (rc > 0 && r->divergences >= c->max_div)) {
		rc = 0;
		for (int i = 0; i < c->nfiles && !rc; i++) {
			rc = dt_full_check(&x, i, j, &d);
			if (rc > 0) {
				handle_div(c, t, r, &d, &l, epoch, c->nfiles);
				dt_div_free(&d);
				rc = 0;
			}
		}
	}
	r->seconds = now() - r->t0;
	struct rusage ru1, rc1;
	getrusage(RUSAGE_SELF, &ru1);
	getrusage(RUSAGE_CHILDREN, &rc1);
	r->cpu_user = tv_sec(ru1.ru_utime) - tv_sec(ru0.ru_utime);
	r->cpu_sys = tv_sec(ru1.ru_stime) - tv_sec(ru0.ru_stime);
	r->cpu_children = tv_sec(rc1.ru_utime) + tv_sec(rc1.ru_stime) -
			  tv_sec(rc0.ru_utime) - tv_sec(rc0.ru_stime);
	r->ops = x.ops;
	memcpy(r->kind_count, x.kind_count, sizeof(r->kind_count));
	memcpy(r->errs, x.errs, sizeof(r->errs));
	r->max_extents = x.max_extents;
	r->max_model_runs = x.max_model_runs;
	r->enospc_resets = t->enospc_resets;
	r->remount_fallbacks = t->remount_fallbacks;
	r->fresh_restored = t->fresh_restored;
	r->fresh_mkfs = t->fresh_mkfs;
	r->syscalls = x.syscalls;
	r->max_depth = t->max_depth;
	r->max_btree = t->max_btree;
	r->depth_runs = t->depth_runs;
	r->depth_seconds = t->depth_seconds;
	r->fsck_runs = t->fsck_runs;
	r->fsck_errors = t->fsck_errors;
	r->fsck_seconds = t->fsck_seconds;
	snprintf(r->depth_note, sizeof(r->depth_note), "%s", t->depth_note);
	memcpy(r->kind_sec, x.kind_sec, sizeof(r->kind_sec));
	r->full_sec = x.full_sec;
	r->map_sec = x.map_sec;
	r->data_sec = x.data_sec;
	memcpy(r->file_sec, x.file_sec, sizeof(r->file_sec));
	r->map_calls = x.map_calls;
	r->map_extents = x.map_extents;
	r->full_checks = x.full_checks;
	r->bytes_checked = x.bytes_checked;
	progress(c, r, j, c->ops, 1);
	if (jf)
		fclose(jf);
	dt_exec_fini(&x);
	dt_session_close(s);
	free(l.v);
	free(t);
	return rc < 0 ? rc : 0;
}
