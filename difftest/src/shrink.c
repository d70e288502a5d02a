/* SPDX-License-Identifier: MIT */
/*
 * shrink.c - turning a divergence into a reproducer: replay an op log on
 * fresh files of a target (dt_run_log), the predicate that ddmin.c
 * minimises the op log with (each candidate re-run on fresh files; a
 * candidate "fails" when it shows a divergence of the same kind, and is
 * then cut right after the op that diverged; its ops are moved across the
 * shifts it dropped, shiftmap.c), and the three output files:
 *   ops.log   the op log, for `difftest --replay ops.log`
 *   repro.sh  a shell script running the real xfs_io (plus drop_caches and
 *             umount/mount for the ops xfs_io has not) that prints
 *             "BUG REPRODUCED" and exits 1 when the kernel still diverges
 *   maps.txt  expected vs actual block maps and the first differing byte
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ddmin.h"
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
	if (d->picture)
		return;
	int64_t at = d->byte_off >= 0 ? d->byte_off : d->op.off;
	int64_t bs = x->s->t->mopts.blocksize;
	if (at < 0 || at > ((int64_t)1 << 50))
		at = 0;
	at &= ~(bs - 1);
	d->picture = dt_map_picture(x, d->file, at > 32 * bs ? at - 32 * bs : 0, dt_sat_add(at, 96 * bs));
}

/* shifted (or NULL): shifted[j] = 1 when op j is an insert or collapse
 * that changed the model file's size, for shiftmap.c. */
static int run_ops(struct dt_exec *x, int nfiles, const struct dt_op *ops, size_t n,
		   const struct dt_opts *o, struct dt_div *d, uint64_t *ndiv, size_t *next,
		   uint8_t *shifted)
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
	rc = run_ops(&x, nfiles, ops, n, o, &d, ndiv, &next, NULL);
	if (rc)
		snprintf(err, errn, "%s", d.msg[0] ? d.msg : strerror(-rc));
	dt_div_free(&d);
	dt_exec_fini(&x);
	dt_session_close(s);
	return rc;
}

static int run_log(struct dt_target *t, int nfiles, const struct dt_op *ops,
		   size_t n, const struct dt_opts *o, struct dt_div *d, size_t *stop_at,
		   uint8_t *shifted)
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
	size_t j;
	rc = run_ops(&x, nfiles, ops, n, o, d, NULL, &j, shifted);
	if (rc > 0) {
		j--;
	} else if (!rc) {
		j = n ? n - 1 : 0;
		for (int f = 0; f < nfiles && !rc; f++)
			rc = dt_full_check(&x, f, j, d);
		if (rc > 0 && n)
			d->op = ops[n - 1];
	}
	if (rc > 0)
		div_picture(&x, d);
	if (stop_at)
		*stop_at = j;
	dt_exec_fini(&x);
	dt_session_close(s);
	return rc;
}

int dt_run_log(struct dt_target *t, int nfiles, const struct dt_op *ops,
	       size_t n, const struct dt_opts *o, struct dt_div *d, size_t *stop_at)
{
	return run_log(t, nfiles, ops, n, o, d, stop_at, NULL);
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
	int rc = run_log(c->t, c->nfiles, ops, n, c->o, &d, &stop, c->cand_sh);
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

/* The other files usually do not matter: the diverging file alone
 * (renamed f0) with the global ops, tried before ddmin.  1 and ops/n/the
 * context set to it when it fails, 0 when not (context unchanged). */
static int try_one_file(struct shrink_ctx *c, struct dt_op *ops, size_t *n, int file)
{
	struct dt_op *cand = malloc((*n ? *n : 1) * sizeof(*cand));
	size_t k = 0, need;

	if (!cand)
		return -ENOMEM;
	for (size_t j = 0; j < *n; j++)
		if (ops[j].file == file || dt_kind_is_global(ops[j].kind)) {
			cand[k] = ops[j];
			cand[k++].file = 0;
		}
	int nfiles = c->nfiles;
	c->nfiles = 1;
	need = k;
	int rc = shrink_fails(c, cand, k, &need);
	if (rc > 0) {
		memcpy(ops, cand, need * sizeof(*ops));
		*n = need;
	} else {
		c->nfiles = nfiles;
	}
	free(cand);
	return rc;
}

int dt_shrink(struct dt_target *t, int nfiles, const struct dt_op *ops,
	      size_t n, int file, int kind, const struct dt_opts *o,
	      uint64_t max_tests, double max_seconds, const char *journal,
	      struct dt_shrink_res *r)
{
	/* Candidates fsck only when shrinking an fsck divergence: a bug that
	 * corrupts the disk whenever it fires (mutant 03's extent past
	 * EXT_MAX_BLOCKS leaks blocks when its file is unlinked) leaves each
	 * reproducing candidate's mess to the next, whose fsck then reports
	 * that instead of the divergence being shrunk. */
	struct dt_opts co = *o;
	if (kind != DV_FSCK)
		co.fsck_every = 0;
	size_t nn = n ? n : 1;
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
	if (nfiles > 1 && (rc = try_one_file(&c, r->ops, &r->nops, file)) < 0)
		goto out;
	/* ddmin's first test is the log as given: if it does not fail, the
	 * divergence depends on history outside the log (e.g. the
	 * allocator's state): reported unshrunk.  That run also tells which
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
		t->name, nfiles, rm_profile_name(t->mopts.profile), t->mopts.blocksize, seed);
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

/* The xfs_io command for an op, given the model size before it (mapped
 * I/O is clipped to EOF exactly as difftest does).  Returns 1 with the
 * command, 0 for an op with nothing to do in xfs_io (buf holds a
 * comment), XIO_NONE when xfs_io cannot express the op (buf says why). */
#define XIO_NONE (-1)
static int xfs_io_cmd(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	int64_t off = op->off, len = op->len;
	int mode;

	/* xfs_io's getopt takes "-5" for an option and cvtnum() refuses
	 * negative numbers: such an op (an errno check) has no xfs_io form */
	if (off < 0 || (op->kind == DT_REFLINK && op->soff < 0) ||
	    (len < 0 && op->kind != DT_TRUNCATE && op->kind != DT_SEEK_DATA &&
	     op->kind != DT_SEEK_HOLE)) {
		snprintf(buf, n, "# %s %" PRId64 " %" PRId64 ": negative numbers have no xfs_io form",
			 dt_kind_name(op->kind), off, len);
		return XIO_NONE;
	}
	switch (op->kind) {
	case DT_PWRITE:
		snprintf(buf, n, "-c \"pwrite -q -S 0x%02x %" PRId64 " %" PRId64 "\"", op->pat, off, len);
		return 1;
	case DT_PREAD:
		snprintf(buf, n, "-c \"pread -q %" PRId64 " %" PRId64 "\"", off, len);
		return 1;
	case DT_MWRITE:
	case DT_MREAD: {
		int64_t k = dt_mapped_len(off, len, size);
		if (!k) {
			snprintf(buf, n, "# (%s past EOF: nothing to do)", dt_kind_name(op->kind));
			return 0;
		}
		int64_t base = off & ~(int64_t)4095;
		/* mwrite/mread take FILE offsets inside the mapping (xfs_io's
		 * mmap.c checks "offset is before start of mapping") */
		if (op->kind == DT_MWRITE)
			snprintf(buf, n, "-c \"mmap -rw %" PRId64 " %" PRId64 "\" -c \"mwrite -S 0x%02x %"
				 PRId64 " %" PRId64 "\" -c \"munmap\"", base, off + k - base, op->pat,
				 off, k);
		else
			snprintf(buf, n, "-c \"mmap -r %" PRId64 " %" PRId64 "\" -c \"mread %" PRId64
				 " %" PRId64 "\" -c \"munmap\"", base, off + k - base, off, k);
		return 1;
	}
	case DT_TRUNCATE:
		snprintf(buf, n, "-c \"truncate %" PRId64 "\"", off);
		return 1;
	case DT_FSYNC:
		snprintf(buf, n, "-c \"fsync\"");
		return 1;
	case DT_SEEK_DATA:
	case DT_SEEK_HOLE:
		snprintf(buf, n, "-c \"seek -%c %" PRId64 "\"", op->kind == DT_SEEK_DATA ? 'd' : 'h', off);
		return 1;
	case DT_REFLINK:	/* xfs_io: reflink [-q] src_file src_offset dst_offset length */
		snprintf(buf, n, "-c \"reflink -q $F%d %" PRId64 " %" PRId64 " %" PRId64 "\"",
			 op->src, op->soff, off, len);
		return 1;
	default:
		break;
	}
	if (!dt_kind_is_falloc(op->kind))
		return 0;
	mode = dt_kind_mode(op);
	int keep = mode & RM_FALLOC_FL_KEEP_SIZE, rest = mode & ~RM_FALLOC_FL_KEEP_SIZE;
	const char *c = NULL;
	/* Only exact mode words: xfs_io 6.1's "falloc" options ASSIGN the mode
	 * (-i -k gives KEEP_SIZE alone, -p gives PUNCH_HOLE|KEEP_SIZE; checked
	 * with strace), so INSERT|KEEP_SIZE and friends have no xfs_io form. */
	switch (rest) {
	case 0: c = keep ? "falloc -k" : "falloc"; break;
	case RM_FALLOC_FL_ZERO_RANGE: c = keep ? "fzero -k" : "fzero"; break;
	case RM_FALLOC_FL_PUNCH_HOLE: c = keep ? "fpunch" : NULL; break;
	case RM_FALLOC_FL_INSERT_RANGE: c = keep ? NULL : "finsert"; break;
	case RM_FALLOC_FL_COLLAPSE_RANGE: c = keep ? NULL : "fcollapse"; break;
	case RM_FALLOC_FL_UNSHARE_RANGE: c = keep ? NULL : "funshare"; break;
	}
	if (!c) {
		snprintf(buf, n, "# fallocate(mode 0x%x, %" PRId64 ", %" PRId64 ") has no xfs_io form",
			 (unsigned)mode, off, len);
		return XIO_NONE;
	}
	snprintf(buf, n, "-c \"%s %" PRId64 " %" PRId64 "\"", c, off, len);
	return 1;
}

struct allow_ctx {
	FILE *f;
	int64_t bs;
	int64_t lo, hi;
};

static int allow_cb(void *ctx, const struct rm_run *r)
{
	struct allow_ctx *a = ctx;
	for (int64_t p = r->off; p < r->off + r->len; p += a->bs) {
		if (p < a->lo || p >= a->hi)
			continue;
		fputc(' ', a->f);
		if (r->may & RM_DATA) fputc('D', a->f);
		if (r->may & RM_UNWRITTEN) fputc('U', a->f);
		if (r->may & RM_HOLE) fputc('.', a->f);
	}
	return 0;
}

/* d == NULL: a crash reproducer (dt_write_crash_script()): the ops only,
 * then the kernel log decides: an oops kills xfs_io but not the shell. */
static void write_script(FILE *f, struct dt_target *t, int nfiles,
			 const struct dt_op *ops, size_t n, const struct dt_div *d)
{
	const char *fs = t->fsname;
	struct dt_div crash = { .kind = DV_NONE, .byte_off = -1 };
	int is_crash = d == NULL;

	if (is_crash) {
		snprintf(crash.msg, sizeof(crash.msg), "the kernel oopsed, hit BUG() or WARN() during these ops");
		d = &crash;
	}
	struct rm_file *m[DT_MAXFILES] = { 0 };
	unsigned char *buf = malloc(DT_MAX_IO);
	char cmd[512];
	int64_t bs = t->mopts.blocksize;

	fprintf(f, "#!/bin/sh\n# difftest reproducer (generated; runs the real xfs_io).\n");
	if (is_crash)
		fprintf(f, "# kernel crash on %s (%s): %s\n", t->name, fs, d->msg);
	else
		fprintf(f, "# divergence (%s) on %s (%s): %s\n", dt_divkind_name(d->kind), t->name, fs,
			d->msg);
	fprintf(f, "# usage: sh repro.sh [DIR]   (DIR on a %s mount; as root for drop_caches/remount)\n",
		fs);
	fprintf(f, "# exit status: 1 and \"BUG REPRODUCED\" when the kernel still diverges, 0 when not\n");
	/* An op xfs_io cannot express (a mode word, a negative number) would
	 * make the script's verdict wrong: such a reproducer replays ops.log
	 * with difftest instead (same exit convention). */
	for (size_t j = 0; j < n; j++)
		if (xfs_io_cmd(&ops[j], INT64_MAX, cmd, sizeof(cmd)) == XIO_NONE) {
			fprintf(f, "# op %zu (%s) has no xfs_io form: xfs_io 6.1 cannot issue it.\n"
				"# This reproducer therefore replays ops.log (beside it) with difftest.\n",
				j + 1, cmd + 2);
			if (is_crash)
				fprintf(f, "klines=$(dmesg | wc -l)\n"
					"difftest --crash-replay \"$(dirname \"$0\")/ops.log\"\n"
					"if dmesg | tail -n +$((klines + 1)) | "
					"grep -E '" DT_CRASH_LINES "'; then\n"
					"\techo 'BUG REPRODUCED'; exit 1\nfi\necho 'not reproduced'; exit 0\n");
			else
				fprintf(f, "difftest --replay \"$(dirname \"$0\")/ops.log\"\n"
					"case $? in\n0) echo 'not reproduced'; exit 0 ;;\n"
					"1) echo 'BUG REPRODUCED'; exit 1 ;;\n*) exit 2 ;;\nesac\n");
			free(buf);
			return;
		}
	fprintf(f, "set -u\nDIR=${1:-%s}\nXFS_IO=${XFS_IO:-xfs_io}\n",
		!strcmp(fs, "xfs") ? "/mnt/xfs" : !strcmp(fs, "ext4") ? "/mnt/ext4" : t->dir);
	if (is_crash)	/* only kernel messages logged from here on count */
		fprintf(f, "klines=$(dmesg | wc -l)\n");
	for (int i = 0; i < nfiles; i++) {
		fprintf(f, "F%d=\"$DIR/difftest-repro-f%d\"\n", i, i);
		fprintf(f, "rm -f \"$F%d\"; : > \"$F%d\"\n", i, i);
	}
	fprintf(f, "remount() {\n\tset -- $(awk -v m=\"$DIR\" '$2 == m { d=$1; t=$3; o=$4 } END { print d, t, o }' /proc/mounts)\n"
		   "\tif [ $# -eq 3 ]; then sync; umount \"$DIR\" && mount -t \"$2\" -o \"$3\" \"$1\" \"$DIR\"; "
		   "else sync; echo 3 > /proc/sys/vm/drop_caches; fi\n}\n");
	for (int i = 0; i < nfiles; i++)
		rm_file_new(&t->mopts, &m[i]);
	int cur = -1;
	for (size_t j = 0; j < n; j++) {
		const struct dt_op *op = &ops[j];
		int last = j + 1 == n;
		int has = xfs_io_cmd(op, m[op->file] ? rm_size(m[op->file]) : 0, cmd, sizeof(cmd)) > 0;
		if (dt_kind_is_global(op->kind) || op->kind == DT_REOPEN || !has || last ||
		    (int)op->file != cur) {
			if (cur >= 0)
				fprintf(f, " \"$F%d\"\n", cur);
			cur = -1;
		}
		/* apply to the model (for sizes and the expected results) */
		if (m[op->file] && buf) {
			struct rm_file *mf = m[op->file];
			int64_t off = op->off, len = op->len, sz = rm_size(mf);
			switch (op->kind) {
			case DT_PWRITE:
				dt_fill_pattern(buf, (size_t)len, op->pat);
				rm_pwrite(mf, buf, (size_t)len, off);
				break;
			case DT_MWRITE: {
				int64_t k = dt_mapped_len(off, len, sz);
				dt_fill_pattern(buf, (size_t)k, op->pat);
				if (k)
					rm_pwrite(mf, buf, (size_t)k, off);
				break;
			}
			case DT_TRUNCATE: rm_truncate(mf, off); break;
			case DT_REFLINK:
				if (op->src < nfiles && m[op->src])
					rm_clone_range(mf, m[op->src], op->soff, off, len);
				break;
			default:
				if (dt_kind_is_falloc(op->kind))
					rm_fallocate(mf, dt_kind_mode(op), off, len);
			}
		}
		if (op->kind == DT_DROP) {
			fprintf(f, "sync; echo 3 > /proc/sys/vm/drop_caches\n");
			continue;
		}
		if (op->kind == DT_REMOUNT) {
			fprintf(f, "remount\n");
			continue;
		}
		if (op->kind == DT_REOPEN)
			continue;	/* each xfs_io run opens and closes the file */
		if (!has) {
			fprintf(f, "%s\n", cmd);
			continue;
		}
		if (last && !is_crash) {
			fprintf(f, "echo '--- the op that diverges:'\nout=$($XFS_IO %s \"$F%d\" 2>&1); echo \"$out\"\n",
				cmd, op->file);
			continue;
		}
		if (cur < 0) {
			fprintf(f, "$XFS_IO");
			cur = op->file;
		}
		fprintf(f, " %s", cmd);
	}
	if (cur >= 0)
		fprintf(f, " \"$F%d\"\n", cur);
	/* difftest maps every file after its ops (FIEMAP): so does a crash
	 * reproducer, or a crash inside FIEMAP (mutant 03) would need
	 * difftest itself to show */
	if (is_crash)
		for (int i = 0; i < nfiles; i++)
			fprintf(f, "$XFS_IO -r -c fiemap \"$F%d\" >/dev/null 2>&1\n", i);
	if (n == 0 || xfs_io_cmd(&ops[n - 1], 0, cmd, sizeof(cmd)) <= 0)
		fprintf(f, "out=\n");
	int fi = d->file < nfiles ? d->file : 0;
	fprintf(f, "F=\"$F%d\"\nbug=0\n", fi);
	if (is_crash)	/* new kernel lines of the kinds vm/run treats as a crash */
		fprintf(f, "dmesg | tail -n +$((klines + 1)) |\n"
			"\tgrep -E '" DT_CRASH_LINES "' && bug=1\n");
	switch (d->kind) {
	case DV_RET: {
		/* what the model said; xfs_io prints "CMD: strerror" on failure */
		const char *p = strstr(d->msg, "expected ");
		long long ev = p ? strtoll(p + 9, NULL, 10) : 0;
		if (ev < 0)
			fprintf(f, "# expected: %s\necho \"$out\" | grep -q \"%s\" || bug=1\n",
				dt_errname((int)ev), strerror((int)-ev));
		else
			fprintf(f, "# expected: success (%lld)\necho \"$out\" | grep -q \": \" && bug=1\n", ev);
		break;
	}
	case DV_SIZE:
		fprintf(f, "[ \"$(stat -c %%s \"$F\")\" = %" PRId64 " ] || bug=1\n", rm_size(m[fi]));
		break;
	case DV_DATA:
		if (d->byte_off >= 0 && d->exp_byte >= 0)
			fprintf(f, "b=$(od -An -tx1 -j %" PRId64 " -N1 \"$F\" | tr -d ' \\n')\n"
				"echo \"byte at %" PRId64 ": $b (expected %02x)\"\n[ \"$b\" = %02x ] || bug=1\n",
				d->byte_off, d->byte_off, d->exp_byte, d->exp_byte);
		break;
	case DV_SEEK: {
		fprintf(f, "# expected (any answer rm_lseek_ok() allows); the kernel gave the one in the message\n");
		const char *p = strstr(d->msg, "returned ");
		long long got = p ? strtoll(p + 9, NULL, 10) : 0;
		fprintf(f, "echo \"$out\" | grep -qw -- \"%lld\" && bug=1\n", got);
		break;
	}
	case DV_FSCK:
		/* on-disk corruption: unmount and fsck as difftest's remount did */
		fprintf(f, "# the last remount's fsck found corruption: unmount, fsck -n, mount again\n"
			"set -- $(awk -v m=\"$DIR\" '$2 == m { d=$1; t=$3; o=$4 } END { print d, t, o }' /proc/mounts)\n"
			"sync; umount \"$DIR\" || { echo \"cannot unmount $DIR\"; exit 2; }\n"
			"if [ \"$2\" = xfs ]; then xfs_repair -n \"$1\" || bug=1; else e2fsck -fn \"$1\" || bug=1; fi\n"
			"mount -t \"$2\" -o \"$3\" \"$1\" \"$DIR\"\n");
		break;
	case DV_MAP: {
		int64_t lo = d->map_lo & ~(bs - 1), hi = d->map_hi;
		if (hi - lo > 64 * bs)
			hi = lo + 64 * bs;
		struct allow_ctx a = { .f = f, .bs = bs, .lo = lo, .hi = hi };
		fprintf(f, "# allowed states per block %" PRId64 "..%" PRId64 " (D data, U unwritten, . hole)\n",
			lo / bs, (hi - 1) / bs);
		fprintf(f, "allowed=\"");
		if (m[fi])
			rm_walk(m[fi], lo, hi, allow_cb, &a);
		fprintf(f, "\"\n");
		fprintf(f, "$XFS_IO -r -c \"fiemap -v\" \"$F\"\n");
		/* "[0..7]:" -> "0..7" by keeping digits and dots: busybox awk (the
		 * guest's) does not take "]" inside a bracket expression. */
		fprintf(f, "$XFS_IO -r -c \"fiemap -v\" \"$F\" | awk -v lo=%" PRId64 " -v spb=%" PRId64
			" -v allowed=\"$allowed\" '\n"
			"function hex(s,  i, v, c) { v = 0; s = tolower(s); sub(/^0x/, \"\", s);\n"
			"  for (i = 1; i <= length(s); i++) { c = index(\"0123456789abcdef\", substr(s, i, 1)) - 1; v = v * 16 + c }\n"
			"  return v }\n"
			"/^ *[0-9]+: \\[/ { r = $2; gsub(/[^0-9.]/, \"\", r); split(r, ab, \"\\\\.\\\\.\");\n"
			"  if ($3 == \"hole\") next; f = hex($NF); st = (f %% 4096 >= 2048) ? \"U\" : \"D\";\n"
			"  for (b = int(ab[1] / spb); b <= int(ab[2] / spb); b++) state[b] = st }\n"
			"END { n = split(allowed, al, \" \"); bad = 0;\n"
			"  for (k = 1; k <= n; k++) { b = lo + k - 1; s = (b in state) ? state[b] : \".\";\n"
			"    if (index(al[k], s) == 0) { printf \"block %%d: kernel %%s, allowed {%%s}\\n\", b, s, al[k]; bad = 1 } }\n"
			"  exit bad }' || bug=1\n", lo / bs, bs / 512);
		break;
	}
	}
	fprintf(f, "rm -f");
	for (int i = 0; i < nfiles; i++)
		fprintf(f, " \"$F%d\"", i);
	fprintf(f, "\nif [ $bug = 1 ]; then echo 'BUG REPRODUCED'; exit 1; fi\necho 'not reproduced'; exit 0\n");
	for (int i = 0; i < nfiles; i++)
		rm_file_free(m[i]);
	free(buf);
}

int dt_write_crash_script(FILE *f, struct dt_target *t, int nfiles,
			  const struct dt_op *ops, size_t n)
{
	write_script(f, t, nfiles, ops, n, NULL);
	return ferror(f) ? -EIO : 0;
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
	dt_log_write(f, t, nfiles, ops, n, seed);
	fclose(f);

	snprintf(path, sizeof(path), "%s/repro.sh", dir);
	if (!(f = fopen(path, "w")))
		return -errno;
	write_script(f, t, nfiles, ops, n, d);
	fclose(f);
	chmod(path, 0755);

	snprintf(path, sizeof(path), "%s/maps.txt", dir);
	if (!(f = fopen(path, "w")))
		return -errno;
	char line[256];
	dt_op_format(&d->op, line, sizeof(line));
	fprintf(f, "target: %s (%s, profile %s)\ndivergence: %s after op %" PRIu64 " (%s)\n%s\n",
		t->name, t->fsname, rm_profile_name(t->mopts.profile), dt_divkind_name(d->kind),
		d->opno, line, d->msg);
	if (d->byte_off >= 0)
		fprintf(f, "first differing byte: offset %" PRId64 " (block %" PRId64 "), expected 0x%02x, actual %s%02x\n",
			d->byte_off, d->byte_off / t->mopts.blocksize, d->exp_byte,
			d->act_byte < 0 ? "EOF/" : "0x", d->act_byte < 0 ? 0 : d->act_byte);
	if (d->picture)
		fprintf(f, "\n%s", d->picture);
	fclose(f);
	return 0;
}
