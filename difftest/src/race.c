/* SPDX-License-Identifier: MIT */
/*
 * race.c - difftest's concurrent mode.
 *
 * A run is a sequence of windows on file f0 of a session.  A window is N
 * ops (2 <= N <= 4) that N threads issue at once: they wait on one
 * barrier and then each makes its call, so the calls overlap in the
 * kernel (the guest has 2 vCPUs).  The mix is what races in practice:
 * insert and collapse range against truncate, pwrite, mapped writes and
 * reads, punch/zero/fallocate, reflink from f1 (a source file written
 * once) and fsync.
 *
 * The oracle (dt_race_judge()): the target's final size, bytes and block
 * map, and every judged result, must be those of running the window's
 * ops one after the other in SOME order on the model: all N! orders are
 * tried on clones of the model file.  The model states that match are
 * kept (up to DT_RACE_MAXCAND distinct ones) as the start of the next
 * window.  After each window /dev/kmsg is read: a BUG, WARNING, lockdep
 * report, hung task or soft lockup is a divergence too (dt_kmsg_match()).
 * A window that does not finish within --window-timeout seconds is a hang:
 * reported (with sysrq-w's blocked-task dump in the kernel log when
 * possible), then the process exits, since threads stuck in the kernel
 * cannot be joined.
 *
 * Reproducers are race logs: the serial ops that rebuild the file's state
 * (each earlier window in the order that matched) and the diverging
 * window; --race-replay LOG --repeat RUNSxLOOPS runs it again.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "optab.h"
#include "race.h"
#include "rm_vec.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the oracle ---- */

int dt_race_judged(int kind)
{
	switch (kind) {
	case DT_PREAD: case DT_MREAD: case DT_MWRITE: case DT_FSYNC:
		return 0;
	default:
		return dt_opdesc_of(kind)->model != NULL;
	}
}

int dt_race_next_perm(int *p, int n)
{
	int i = n - 2;

	while (i >= 0 && p[i] >= p[i + 1])
		i--;
	if (i < 0)
		return 0;
	int j = n - 1;
	while (p[j] <= p[i])
		j--;
	int t = p[i];
	p[i] = p[j];
	p[j] = t;
	for (int a = i + 1, b = n - 1; a < b; a++, b--) {
		t = p[a];
		p[a] = p[b];
		p[b] = t;
	}
	return 1;
}

struct runvec {
	struct rm_run *v;
	size_t n, cap;
};

static int push_run(void *ctx, const struct rm_run *run)
{
	struct runvec *r = ctx;

	if (RM_VEC_RESERVE(&r->v, &r->cap, r->n + 1, 64))
		return -ENOMEM;
	r->v[r->n++] = *run;
	return 0;
}

static int model_runs(const struct rm_file *m, struct runvec *r)
{
	int64_t end = rm_map_end(m);

	r->n = 0;
	if (rm_size(m) > end)
		end = rm_size(m);
	return end > 0 ? rm_walk(m, 0, end, push_run, r) : 0;
}

struct firstdiff {
	int64_t lo, hi;
	unsigned may, st;
};

static int first_diff(void *ctx, int64_t lo, int64_t hi, unsigned may, unsigned st)
{
	struct firstdiff *f = ctx;

	*f = (struct firstdiff){ lo, hi, may, st };
	return 1;
}

static const char *stname(unsigned s)
{
	static const char *n[8] = { "?", "hole", "unwritten", "hole|unwritten", "data",
				    "hole|data", "unwritten|data", "any" };
	return n[s & 7];
}

/* Does model m's state equal obs's (size, bytes, map)?  1 yes, 0 no (why),
 * -ENOMEM. */
static int state_matches(const struct rm_file *m, const struct dt_race_obs *obs,
			 struct runvec *rv, unsigned char *buf, char *why, size_t whyn)
{
	if (rm_size(m) != obs->size) {
		snprintf(why, whyn, "size: model %" PRId64 ", target %" PRId64, rm_size(m), obs->size);
		return 0;
	}
	for (int64_t p = 0; p < obs->size;) {
		size_t k = obs->size - p < DT_MAX_IO ? (size_t)(obs->size - p) : DT_MAX_IO;
		ssize_t r = rm_pread(m, buf, k, p);
		if (r != (ssize_t)k)
			return r < 0 ? (int)r : -EIO;
		if (memcmp(buf, obs->data + p, k)) {
			size_t j = 0;
			while (buf[j] == obs->data[p + j])
				j++;
			snprintf(why, whyn, "data at byte %" PRId64 ": model 0x%02x, target 0x%02x",
				 p + (int64_t)j, buf[j], obs->data[p + j]);
			return 0;
		}
		p += (int64_t)k;
	}
	if (!obs->have_map)
		return 1;
	int rc = model_runs(m, rv);
	if (rc < 0)
		return rc;
	struct dt_mapsnap ms = { .exp = rv->v, .nexp = rv->n, .act = obs->act, .nact = obs->nact };
	struct firstdiff fd;
	if (dt_mapsnap_diffs(&ms, first_diff, &fd) > 0) {
		snprintf(why, whyn, "map [%" PRId64 ", %" PRId64 "): target %s, model allows %s",
			 fd.lo, fd.hi, stname(fd.st), stname(fd.may));
		return 0;
	}
	return 1;
}

static int same_state(const struct rm_file *a, const struct rm_file *b, struct runvec *ra,
		      struct runvec *rb)
{
	if (rm_size(a) != rm_size(b) || rm_hash(a, 0, INT64_MAX) != rm_hash(b, 0, INT64_MAX))
		return 0;
	if (model_runs(a, ra) < 0 || model_runs(b, rb) < 0 || ra->n != rb->n)
		return 0;
	for (size_t i = 0; i < ra->n; i++)
		if (ra->v[i].off != rb->v[i].off || ra->v[i].len != rb->v[i].len ||
		    ra->v[i].state != rb->v[i].state || ra->v[i].may != rb->v[i].may)
			return 0;
	return 1;
}

/* Run ops in order ord on a clone of s.  1 when every judged result and
 * the final state match obs (*out: the final state), 0 when not (why), <0
 * on error. */
/* The page fault of a mapped write, apart from its copy: the page(s) it
 * makes dirty are written back whole, bytes unchanged, so their blocks
 * inside EOF become data.  A concurrent shift can come between the fault
 * and the copy (it writes the page back and unmaps it; the copy then
 * faults again at the same address, in the shifted file). */
static int touch_pages(struct rm_file *c, const struct dt_op *op, unsigned char *buf)
{
	int64_t pg = sysconf(_SC_PAGESIZE);
	int64_t lo = op->off & ~(pg - 1), hi = (op->off + op->len + pg - 1) & ~(pg - 1);

	if (hi > rm_size(c))
		hi = rm_size(c);
	if (hi - lo > DT_MAX_IO)
		hi = lo + DT_MAX_IO;
	if (lo >= hi)
		return 0;
	ssize_t r = rm_pread(c, buf, (size_t)(hi - lo), lo);
	if (r < 0)
		return (int)r;
	r = rm_pwrite(c, buf, (size_t)r, lo);
	return r < 0 ? (int)r : 0;
}

/* ord[0..nitems) holds op indices (< n) and, from n on, the page faults
 * of the mapped writes tidx[k - n] (touch_pages()). */
static int try_order(const struct rm_file *s, struct rm_file *const *others, int nfiles,
		     const struct dt_op *ops, const int *ord, int n, const int *tidx, int nitems,
		     const struct dt_race_obs *obs, struct runvec *rv, unsigned char *buf,
		     struct rm_file **out, char *why, size_t whyn)
{
	struct rm_file *c, *m[DT_MAXFILES] = { 0 };
	int rc = rm_file_clone(s, &c);

	if (rc)
		return rc;
	for (int i = 1; i < nfiles && i < DT_MAXFILES; i++)
		m[i] = others[i];
	m[0] = c;
	for (int j = 0; j < nitems; j++) {
		if (ord[j] >= n) {
			if ((rc = touch_pages(c, &ops[tidx[ord[j] - n]], buf))) {
				rm_file_free(c);
				return rc;
			}
			continue;
		}
		const struct dt_op *op = &ops[ord[j]];
		const struct dt_opdesc *od = dt_opdesc_of(op->kind);
		int64_t want;
		if (obs->front[ord[j]])
			want = obs->front[ord[j]];
		else if (od->model)
			want = od->model(m, nfiles, op, buf);
		else
			continue;
		if (want < -4095) {	/* the model itself failed (ENOMEM) */
			rm_file_free(c);
			return -ENOMEM;
		}
		if (dt_race_judged(op->kind) && want != obs->ret[ord[j]]) {
			char line[160];
			dt_op_format(op, line, sizeof(line));
			snprintf(why, whyn, "%s: model %" PRId64 " (%s), target %" PRId64 " (%s)", line,
				 want, dt_errname(want < 0 ? (int)-want : 0), obs->ret[ord[j]],
				 dt_errname(obs->ret[ord[j]] < 0 ? (int)-obs->ret[ord[j]] : 0));
			rm_file_free(c);
			return 0;
		}
	}
	rc = state_matches(c, obs, rv, buf, why, whyn);
	if (rc == 1)
		*out = c;
	else
		rm_file_free(c);
	return rc;
}

/* Does every mapped write's page fault (item n + k) come before its copy
 * (item tidx[k]) in the order p of nitems items? */
static int faults_first(const int *p, int nitems, int n, const int *tidx, int nt)
{
	for (int k = 0; k < nt; k++) {
		int pf = -1, pc = -1;
		for (int i = 0; i < nitems; i++) {
			if (p[i] == n + k)
				pf = i;
			if (p[i] == tidx[k])
				pc = i;
		}
		if (pf >= pc)
			return 0;
	}
	return 1;
}

/* A line "order 1 0 a: W" appended to why for an order p that gives
 * another state (W its first difference): ops by index, the fault of
 * mapped write k as 'a' + k. */
static void note_order(char *why, size_t whyn, const int *p, int nitems, int n, const char *w)
{
	size_t l = strlen(why);
	char ord[2 * (DT_RACE_MAXT + 2) + 1];

	if (l + 1 >= whyn)
		return;
	for (int i = 0; i < nitems; i++) {
		ord[2 * i] = (char)(p[i] < n ? '0' + p[i] : 'a' + p[i] - n);
		ord[2 * i + 1] = i + 1 < nitems ? ' ' : 0;
	}
	snprintf(why + l, whyn - l, "%sorder %s: %s", l ? "\n" : "", ord, w);
}

int dt_race_judge(struct rm_file **cand, int *ncand, struct rm_file *const *others, int nfiles,
		  const struct dt_op *ops, int n, const struct dt_race_obs *obs, int *order,
		  char *why, size_t whyn)
{
	struct rm_file *keep[DT_RACE_MAXCAND];
	struct runvec rv = { 0 }, ra = { 0 }, rb = { 0 };
	unsigned char *buf = malloc(DT_MAX_IO);
	int nkeep = 0, matches = 0, rc = 0;
	char w[256];

	if (!buf)
		return -ENOMEM;
	if (n < 1 || n > DT_RACE_MAXT) {
		free(buf);
		return -EINVAL;
	}
	why[0] = 0;
	/* the page faults of up to two mapped writes are items of their own */
	int tidx[2], nt = 0;
	for (int i = 0; i < n; i++)
		if (ops[i].kind == DT_MWRITE && nt < 2)
			tidx[nt++] = i;
	int nitems = n + nt;
	for (int c = 0; c < *ncand && rc >= 0; c++) {
		int p[DT_RACE_MAXT + 2];
		for (int i = 0; i < nitems; i++)
			p[i] = i;
		do {
			struct rm_file *out = NULL;
			if (!faults_first(p, nitems, n, tidx, nt))
				continue;
			w[0] = 0;
			rc = try_order(cand[c], others, nfiles, ops, p, n, tidx, nitems, obs, &rv, buf,
				       &out, w, sizeof(w));
			if (rc < 0)
				break;
			if (rc == 0) {
				/* every order's first difference, from the first state */
				if (c == 0)
					note_order(why, whyn, p, nitems, n, w);
				continue;
			}
			if (!matches++)	/* the ops' order, faults left out */
				for (int i = 0, k = 0; i < nitems; i++)
					if (p[i] < n)
						order[k++] = p[i];
			int dup = 0;
			for (int k = 0; k < nkeep && !dup; k++)
				dup = same_state(keep[k], out, &ra, &rb);
			if (dup || nkeep == DT_RACE_MAXCAND)
				rm_file_free(out);
			else
				keep[nkeep++] = out;
		} while (dt_race_next_perm(p, nitems));
	}
	free(buf);
	free(rv.v);
	free(ra.v);
	free(rb.v);
	if (rc < 0 || !matches) {
		for (int k = 0; k < nkeep; k++)
			rm_file_free(keep[k]);
		return rc < 0 ? rc : 0;
	}
	for (int c = 0; c < *ncand; c++)
		rm_file_free(cand[c]);
	for (int k = 0; k < nkeep; k++)
		cand[k] = keep[k];
	*ncand = nkeep;
	return matches;
}

/* ---- the kernel log ---- */

const char *dt_kmsg_match(const char *msg)
{
	static const struct { const char *pat, *cls; } tab[] = {
		{ "possible circular locking dependency", "lockdep" },
		{ "possible recursive locking", "lockdep" },
		{ "inconsistent lock state", "lockdep" },
		{ "possible irq lock inversion", "lockdep" },
		{ "suspicious RCU usage", "lockdep" },
		{ "bad unlock balance", "lockdep" },
		{ "held when returning to user space", "lockdep" },
		{ "lock held by", NULL },	/* lockdep's follow-up lines: not a new report */
		{ "sleeping function called from invalid context", "atomic sleep" },
		{ "soft lockup", "soft lockup" },
		{ "blocked for more than", "hung task" },
		{ "list_add corruption", "list corruption" },
		{ "list_del corruption", "list corruption" },
		{ "kernel BUG at", "BUG" },
		{ "BUG:", "BUG" },
		{ "Oops", "oops" },
		{ "general protection fault", "oops" },
		{ "WARNING:", "WARNING" },
		{ "UBSAN:", "UBSAN" },
		{ "KASAN:", "KASAN" },
		{ "EXT4-fs error", "ext4 error" },
		{ "Corruption detected", "XFS corruption" },
		{ "Internal error", "XFS error" },
		{ "Assertion failed", "XFS assertion" },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strstr(msg, tab[i].pat))
			return tab[i].cls;
	return NULL;
}

struct kmsg {
	int fd;
	char text[4096];	/* the reports of this window */
	size_t len;
	const char *cls;	/* the first report's class */
};

static void kmsg_open(struct kmsg *k)
{
	k->fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (k->fd >= 0)
		lseek(k->fd, 0, SEEK_END);
	k->len = 0;
	k->cls = NULL;
}

/* Read every record since the last call; 1 when one reports a bug (its
 * text and the records after it in k->text). */
static int kmsg_scan(struct kmsg *k)
{
	char rec[8192];

	k->len = 0;
	k->text[0] = 0;
	k->cls = NULL;
	if (k->fd < 0)
		return 0;
	for (;;) {
		ssize_t r = read(k->fd, rec, sizeof(rec) - 1);
		if (r < 0 && errno == EPIPE)	/* overwritten records: go on */
			continue;
		if (r <= 0)
			break;
		rec[r] = 0;
		char *msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		char *nl = strchr(msg, '\n');
		if (nl)
			*nl = 0;
		const char *cls = dt_kmsg_match(msg);
		if (cls && !k->cls)
			k->cls = cls;
		if (k->cls && k->len + strlen(msg) + 2 < sizeof(k->text)) {
			memcpy(k->text + k->len, msg, strlen(msg));
			k->len += strlen(msg);
			k->text[k->len++] = '\n';
			k->text[k->len] = 0;
		}
	}
	return k->cls != NULL;
}

/* ---- the threads ---- */

/* Where a worker's SIGBUS returns to: per thread, set only around its
 * mapped copy (a signal handler has no other way to find it). */
static __thread sigjmp_buf *bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	if (bus_jmp)
		siglongjmp(*bus_jmp, 1);
	signal(SIGBUS, SIG_DFL);
	raise(SIGBUS);
}

/* Mapped I/O of [off, off+n) while other threads may shrink the file: a
 * fault past EOF (SIGBUS) ends it with -EFAULT. */
static int64_t mapped_io(int fd, unsigned char *b, size_t n, int64_t off, int wr)
{
	long pg = sysconf(_SC_PAGESIZE);
	int64_t base = off & ~(int64_t)(pg - 1);
	size_t mlen = (size_t)(off + (int64_t)n - base);
	sigjmp_buf jb;
	volatile int64_t ret = (int64_t)n;

	if (n == 0)
		return 0;
	unsigned char *m = mmap(NULL, mlen, wr ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
				fd, base);
	if (m == MAP_FAILED)
		return -errno;
	if (!sigsetjmp(jb, 1)) {
		bus_jmp = &jb;
		if (wr)
			memcpy(m + (off - base), b, n);
		else
			memcpy(b, m + (off - base), n);
	} else {
		ret = -EFAULT;
	}
	bus_jmp = NULL;
	munmap(m, mlen);
	return ret;
}

/* One op of a window on the target, from a worker thread (fake_mu: the
 * pool's lock for model-backed targets) or, serially, from the main one
 * (fake_mu NULL). */
static int64_t run_op(struct dt_session *s, const struct dt_op *op, unsigned char *buf,
		      pthread_mutex_t *fake_mu)
{
	int fake = s->t->type != DT_T_FD, lock = fake && fake_mu;
	int i = op->file;
	int64_t r;

	/* a model-backed target is one rm_file: its ops take turns */
	if (lock)
		pthread_mutex_lock(fake_mu);
	switch (op->kind) {
	case DT_PWRITE:
		dt_fill_pattern(buf, (size_t)op->len, op->pat);
		r = dt_t_pwrite(s, i, buf, (size_t)op->len, op->off);
		break;
	case DT_PREAD:
		r = dt_t_pread(s, i, buf, (size_t)op->len, op->off);
		break;
	case DT_MWRITE:
	case DT_MREAD:
		if (op->kind == DT_MWRITE)
			dt_fill_pattern(buf, (size_t)op->len, op->pat);
		if (fake) {
			int64_t k = dt_mapped_len(op->off, op->len, dt_t_size(s, i));
			r = op->kind == DT_MWRITE ? dt_t_mwrite(s, i, buf, (size_t)k, op->off)
						  : dt_t_mread(s, i, buf, (size_t)k, op->off);
		} else {
			r = mapped_io(s->fd[i], buf, (size_t)op->len, op->off, op->kind == DT_MWRITE);
		}
		break;
	case DT_TRUNCATE:
		r = dt_t_truncate(s, i, op->off);
		break;
	case DT_FSYNC:
		r = dt_t_fsync(s, i);
		break;
	case DT_REFLINK:
		r = dt_t_reflink(s, i, op->src, op->soff, op->off, op->len);
		break;
	default:
		r = dt_kind_is_falloc(op->kind)
			? dt_t_fallocate(s, i, dt_kind_mode(op), op->off, op->len) : -ENOSYS;
		break;
	}
	if (lock)
		pthread_mutex_unlock(fake_mu);
	return r;
}

struct pool;
struct warg {
	struct pool *p;
	int k;
};

struct pool {
	pthread_mutex_t mu, fake_mu;
	pthread_cond_t start, done;
	pthread_barrier_t bar;
	unsigned gen;
	int ndone, quit, n;
	struct dt_session *s;
	struct dt_op ops[DT_RACE_MAXT];
	int64_t ret[DT_RACE_MAXT];
	unsigned char *buf[DT_RACE_MAXT];
	pthread_t th[DT_RACE_MAXT];
	struct warg arg[DT_RACE_MAXT];
};

static void *worker(void *arg)
{
	int k = ((struct warg *)arg)->k;
	struct pool *p = ((struct warg *)arg)->p;
	unsigned seen = 0;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (p->gen == seen && !p->quit)
			pthread_cond_wait(&p->start, &p->mu);
		seen = p->gen;
		int quit = p->quit;
		pthread_mutex_unlock(&p->mu);
		if (quit)
			return NULL;
		pthread_barrier_wait(&p->bar);
		int64_t r = run_op(p->s, &p->ops[k], p->buf[k], &p->fake_mu);
		pthread_mutex_lock(&p->mu);
		p->ret[k] = r;
		p->ndone++;
		pthread_cond_signal(&p->done);
		pthread_mutex_unlock(&p->mu);
	}
}

static int pool_start(struct pool *p, struct dt_session *s, int n)
{
	memset(p, 0, sizeof(*p));
	p->s = s;
	p->n = n;
	pthread_mutex_init(&p->mu, NULL);
	pthread_mutex_init(&p->fake_mu, NULL);
	pthread_cond_init(&p->start, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->done, &ca);
	pthread_condattr_destroy(&ca);
	pthread_barrier_init(&p->bar, NULL, (unsigned)n);
	for (int k = 0; k < n; k++) {
		p->arg[k] = (struct warg){ p, k };
		if (!(p->buf[k] = malloc(DT_MAX_IO)) ||
		    pthread_create(&p->th[k], NULL, worker, &p->arg[k])) {
			free(p->buf[k]);
			p->n = k;	/* pool_stop() joins the ones started */
			return -ENOMEM;
		}
	}
	return 0;
}

static void pool_stop(struct pool *p)
{
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	pthread_cond_broadcast(&p->start);
	pthread_mutex_unlock(&p->mu);
	for (int k = 0; k < p->n; k++) {
		pthread_join(p->th[k], NULL);
		free(p->buf[k]);
	}
	pthread_barrier_destroy(&p->bar);
}

/* Run ops[0..n) at once; 0, or -ETIMEDOUT when they have not all returned
 * after timeout_s seconds. */
static int pool_run(struct pool *p, const struct dt_op *ops, int timeout_s)
{
	struct timespec dl;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_s;
	pthread_mutex_lock(&p->mu);
	memcpy(p->ops, ops, sizeof(*ops) * (size_t)p->n);
	p->ndone = 0;
	p->gen++;
	pthread_cond_broadcast(&p->start);
	int rc = 0;
	while (p->ndone < p->n && !rc)
		rc = pthread_cond_timedwait(&p->done, &p->mu, &dl);
	if (p->ndone == p->n)
		rc = 0;
	pthread_mutex_unlock(&p->mu);
	return rc ? -ETIMEDOUT : 0;
}

/* ---- the window generator ---- */

struct wgen {
	uint64_t rng;
	uint64_t disabled;	/* the target's */
	int64_t bs, srcsize;
};

static int64_t rnd(struct wgen *g, int64_t n)
{
	return n > 0 ? (int64_t)(dt_rand(&g->rng) % (uint64_t)n) : 0;
}

/* Window mix (weights): shifts against everything that takes the same
 * locks or none. */
static const struct { uint8_t kind; unsigned w; } wmix[] = {
	{ DT_INSERT, 20 }, { DT_COLLAPSE, 20 }, { DT_TRUNCATE, 12 }, { DT_PWRITE, 15 },
	{ DT_MWRITE, 8 }, { DT_MREAD, 8 }, { DT_PREAD, 5 }, { DT_PUNCH, 6 }, { DT_ZERO, 4 },
	{ DT_FALLOC_KEEP, 4 }, { DT_FALLOC, 3 }, { DT_REFLINK, 5 }, { DT_FSYNC, 3 },
};

static int pick_kind(struct wgen *g)
{
	unsigned tot = 0;

	for (size_t i = 0; i < sizeof(wmix) / sizeof(wmix[0]); i++)
		if (!(g->disabled & DT_KBIT(wmix[i].kind)))
			tot += wmix[i].w;
	int64_t r = rnd(g, tot);
	for (size_t i = 0; i < sizeof(wmix) / sizeof(wmix[0]); i++) {
		if (g->disabled & DT_KBIT(wmix[i].kind))
			continue;
		if (r < (int64_t)wmix[i].w)
			return wmix[i].kind;
		r -= wmix[i].w;
	}
	return DT_PWRITE;
}

/* One op on f0, whose size before the window is size. */
static void gen_op(struct wgen *g, int64_t size, struct dt_op *op)
{
	int64_t bs = g->bs, span = size > 16 * bs ? size : 16 * bs;
	int64_t sblocks = size / bs;

	memset(op, 0, sizeof(*op));
	op->kind = (uint8_t)pick_kind(g);
	op->pat = (uint8_t)(1 + rnd(g, 255));
	switch (op->kind) {
	case DT_INSERT:
	case DT_COLLAPSE:
		op->off = rnd(g, sblocks + 1) * bs;
		op->len = (1 + rnd(g, 8)) * bs;
		if (!rnd(g, 16))
			op->off += 1 + rnd(g, bs - 1);	/* misaligned: EINVAL */
		break;
	case DT_TRUNCATE:
		op->off = rnd(g, 4) ? rnd(g, span / bs + 8) * bs : rnd(g, span + 8 * bs);
		break;
	case DT_PWRITE:
	case DT_PREAD:
		op->off = rnd(g, 4) ? rnd(g, span / bs + 4) * bs : rnd(g, span + 4 * bs);
		op->len = rnd(g, 2) ? (1 + rnd(g, 16)) * bs : 1 + rnd(g, 5000);
		break;
	case DT_MWRITE:
	case DT_MREAD: {
		/* inside the file as it was, one page for writes (see README:
		 * a mapped write is atomic only within a page) */
		long pg = sysconf(_SC_PAGESIZE);
		if (size < 1) {
			op->kind = DT_PWRITE;
			op->off = rnd(g, 16) * bs;
			op->len = bs;
			break;
		}
		op->off = rnd(g, size);
		int64_t room = size - op->off;
		if (op->kind == DT_MWRITE) {
			int64_t pend = (op->off & ~(int64_t)(pg - 1)) + pg - op->off;
			if (room > pend)
				room = pend;
			op->len = 1 + rnd(g, room);
		} else {
			op->len = 1 + rnd(g, room < 65536 ? room : 65536);
		}
		break;
	}
	case DT_REFLINK:
		op->src = 1;
		op->soff = rnd(g, g->srcsize / bs) * bs;
		op->off = rnd(g, sblocks + 2) * bs;
		op->len = (1 + rnd(g, 8)) * bs;
		if (op->soff + op->len > g->srcsize)
			op->len = g->srcsize - op->soff;
		break;
	case DT_FSYNC:
		break;
	default:	/* fallocate kinds */
		op->off = rnd(g, span / bs + 2) * bs;
		op->len = (1 + rnd(g, 16)) * bs;
		if (!rnd(g, 4)) {
			op->off += rnd(g, bs);
			op->len += rnd(g, bs);
		}
		break;
	}
}

/* ---- the race log ---- */

struct rlog {
	struct dt_op *v;	/* serial ops, then the window */
	size_t n, cap;
	size_t nserial;		/* ops before the window */
	int nwin;
};

static int rlog_push(struct rlog *l, const struct dt_op *op)
{
	if (RM_VEC_RESERVE(&l->v, &l->cap, l->n + 1, 64))
		return -ENOMEM;
	l->v[l->n++] = *op;
	return 0;
}

static int rlog_write(const char *path, const char *target, int threads, uint64_t seed,
		      const struct dt_op *src, const struct dt_op *serial, size_t nserial,
		      const struct dt_op *win, int n)
{
	FILE *f = fopen(path, "w");
	char line[256];

	if (!f)
		return -errno;
	fprintf(f, "# difftest race log 1: serial ops rebuild f0, then the window's ops run at once\n");
	fprintf(f, "target %s\nthreads %d\nfiles 2\nseed 0x%016" PRIx64 "\n", target, threads, seed);
	dt_op_format(src, line, sizeof(line));
	fprintf(f, "source %s\n", line);
	for (size_t i = 0; i < nserial; i++) {
		dt_op_format(&serial[i], line, sizeof(line));
		fprintf(f, "serial %s\n", line);
	}
	for (int i = 0; i < n; i++) {
		dt_op_format(&win[i], line, sizeof(line));
		fprintf(f, "window %s\n", line);
	}
	return fclose(f) ? -errno : 0;
}

struct rlog_in {
	char target[PATH_MAX + 32];
	int threads;
	uint64_t seed;
	struct dt_op src;
	struct rlog l;
};

static int rlog_read(const char *path, struct rlog_in *in, char *err, size_t errn)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int ln = 0, have_src = 0;

	memset(in, 0, sizeof(*in));
	if (!f) {
		snprintf(err, errn, "%s: %s", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		ln++;
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		char *sp = strchr(line, ' ');
		if (!sp)
			goto bad;
		*sp++ = 0;
		struct dt_op op;
		char perr[160];
		if (!strcmp(line, "target")) {
			snprintf(in->target, sizeof(in->target), "%s", sp);
		} else if (!strcmp(line, "threads")) {
			in->threads = atoi(sp);
		} else if (!strcmp(line, "files")) {
			if (atoi(sp) != 2)
				goto bad;
		} else if (!strcmp(line, "seed")) {
			in->seed = strtoull(sp, NULL, 0);
		} else if (!strcmp(line, "source") || !strcmp(line, "serial") ||
			   !strcmp(line, "window")) {
			if (dt_op_parse(sp, &op, perr, sizeof(perr))) {
				snprintf(err, errn, "%s:%d: %s", path, ln, perr);
				fclose(f);
				return -EINVAL;
			}
			if (line[0] == 's' && line[1] == 'o') {
				in->src = op;
				have_src = 1;
			} else if (line[0] == 's') {
				if (in->l.nwin)
					goto bad;
				if (rlog_push(&in->l, &op))
					goto nomem;
				in->l.nserial++;
			} else {
				if (op.file != 0 || in->l.nwin >= DT_RACE_MAXT)
					goto bad;
				if (rlog_push(&in->l, &op))
					goto nomem;
				in->l.nwin++;
			}
		} else {
			goto bad;
		}
	}
	fclose(f);
	if (!have_src || in->l.nwin < 2 || in->threads != in->l.nwin) {
		snprintf(err, errn, "%s: not a race log (needs source, threads and 2..4 window ops)",
			 path);
		return -EINVAL;
	}
	return 0;
bad:
	snprintf(err, errn, "%s:%d: not a race log line", path, ln);
	fclose(f);
	return -EINVAL;
nomem:
	fclose(f);
	return -ENOMEM;
}

/* ---- a run ---- */

struct ropts {
	int threads;
	uint64_t seed;
	uint64_t windows;
	int timeout;		/* per window, seconds */
	int reset_every;	/* windows per file */
	int kmsg;		/* read /dev/kmsg */
	const char *out;
	int max_div;
};

struct rstats {
	uint64_t windows, ops, divergences, interleaved, multi, kernel_reports;
	double seconds;
};

struct rsess {
	struct dt_target *t;
	struct dt_session *s;
	struct rm_file *cand[DT_RACE_MAXCAND];
	int ncand;
	struct dt_op src;	/* the write that fills f1 */
	struct rlog serial;	/* ops that rebuild f0 (matched orders) */
	struct dt_race_obs obs;
	size_t datacap;
	struct rm_extent *ext;
	size_t extcap;
	struct runvec act;
};

static void cand_free(struct rsess *r)
{
	for (int c = 0; c < r->ncand; c++)
		rm_file_free(r->cand[c]);
	r->ncand = 0;
}

/* Fresh f0 (and its model): the log of serial ops starts over. */
static int sess_reset(struct rsess *r)
{
	int rc = dt_session_reset_file(r->s, 0);

	if (rc)
		return rc;
	cand_free(r);
	if ((rc = rm_file_clone(r->s->model[0], &r->cand[0])))
		return rc;
	r->ncand = 1;
	r->serial.n = 0;
	return 0;
}

/* Run a serial op on f0 (or f1) and the model: both must agree. */
static int serial_op(struct rsess *r, const struct dt_op *op, unsigned char *buf, char *why,
		     size_t whyn)
{
	struct rm_file *m[DT_MAXFILES] = { 0 };
	const struct dt_opdesc *od = dt_opdesc_of(op->kind);

	for (int i = 0; i < r->s->nfiles; i++)
		m[i] = r->s->model[i];
	if (op->file == 0)
		m[0] = r->cand[0];
	int64_t want = od->model ? od->model(m, r->s->nfiles, op, buf) : 0;
	int64_t got = run_op(r->s, op, buf, NULL);
	if (op->file == 0)
		for (int c = 1; c < r->ncand; c++) {
			m[0] = r->cand[c];
			if (od->model)
				od->model(m, r->s->nfiles, op, buf);
		}
	if (dt_race_judged(op->kind) && want != got) {
		char line[160];
		dt_op_format(op, line, sizeof(line));
		snprintf(why, whyn, "serial %s: model %" PRId64 ", target %" PRId64, line, want, got);
		return 1;
	}
	return 0;
}

/* What the target shows of f0 now. */
static int observe(struct rsess *r, char *err, size_t errn)
{
	struct dt_session *s = r->s;
	struct dt_race_obs *o = &r->obs;
	int64_t size = dt_t_size(s, 0);

	if (size < 0) {
		snprintf(err, errn, "fstat: %s", dt_errname((int)-size));
		return (int)size;
	}
	if (size > (64 << 20)) {
		snprintf(err, errn, "file grew to %" PRId64 " bytes", size);
		return -EFBIG;
	}
	if ((size_t)size > r->datacap) {
		unsigned char *d = realloc(o->data, (size_t)size);
		if (!d)
			return -ENOMEM;
		o->data = d;
		r->datacap = (size_t)size;
	}
	o->size = size;
	for (int64_t p = 0; p < size;) {
		size_t k = size - p < DT_MAX_IO ? (size_t)(size - p) : DT_MAX_IO;
		ssize_t g = dt_t_pread(s, 0, o->data + p, k, p);
		if (g <= 0) {
			snprintf(err, errn, "pread at %" PRId64 ": %s", p,
				 g < 0 ? dt_errname((int)-g) : "short");
			return g < 0 ? (int)g : -EIO;
		}
		p += g;
	}
	o->have_map = s->t->fiemap != 0;
	if (!o->have_map)
		return 0;
	int64_t ne = dt_t_fiemap(s, 0, 0, INT64_MAX, &r->ext, &r->extcap);
	if (ne < 0) {
		snprintf(err, errn, "FIEMAP: %s", dt_errname((int)-ne));
		return (int)ne;
	}
	/* whole granules, as the map check of exec.c */
	int64_t u = rm_profile_of(r->cand[0]) == RM_PROFILE_BYTES ? 1 : rm_blocksize(r->cand[0]);
	int64_t p = 0;
	r->act.n = 0;
	for (int64_t j = 0; j < ne; j++) {
		int64_t lo = r->ext[j].logical & ~(u - 1);
		int64_t hi = rm_sat_add(rm_sat_add(r->ext[j].logical, r->ext[j].length), u - 1) &
			     ~(u - 1);
		unsigned st = (r->ext[j].flags & RM_FIEMAP_UNWRITTEN) ? RM_UNWRITTEN : RM_DATA;
		if (lo < p)
			lo = p;
		if (hi <= lo)
			continue;
		struct rm_run h = { p, lo - p, RM_HOLE, RM_HOLE }, d = { lo, hi - lo, st, st };
		if ((lo > p && push_run(&r->act, &h)) || push_run(&r->act, &d))
			return -ENOMEM;
		p = hi;
	}
	o->act = r->act.v;
	o->nact = r->act.n;
	return 0;
}

static void sess_close(struct rsess *r)
{
	cand_free(r);
	free(r->serial.v);
	free(r->obs.data);
	free(r->ext);
	free(r->act.v);
	if (r->s)
		dt_session_close(r->s);
	memset(r, 0, sizeof(*r));
}

static int sess_open(struct rsess *r, struct dt_target *t, unsigned char *buf, char *err,
		     size_t errn)
{
	memset(r, 0, sizeof(*r));
	r->t = t;
	int rc = dt_session_open(t, 2, &r->s, err, errn);
	if (rc)
		return rc;
	if ((rc = rm_file_clone(r->s->model[0], &r->cand[0])))
		return rc;
	r->ncand = 1;
	/* f1: the reflink source, written once */
	r->src = (struct dt_op){ .kind = DT_PWRITE, .file = 1, .pat = 0x52, .off = 0,
				 .len = 64 * (int64_t)rm_blocksize(r->s->model[1]) };
	if ((rc = serial_op(r, &r->src, buf, err, errn))) {
		return -EIO;
	}
	return 0;
}

static int write_div(const struct ropts *o, struct rsess *r, const char *target, uint64_t ndiv,
		     const struct dt_op *win, int n, const char *what, const char *detail,
		     char *dir, size_t dirn)
{
	char p[PATH_MAX + 96];

	char name[64];
	size_t k = 0;

	/* the target's name as a file name: ext4, dir__mnt_x, faulty_... */
	for (const char *c = target; *c && k < sizeof(name) - 1; c++)
		name[k++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
				   (*c >= '0' && *c <= '9') || *c == '-' ? *c : '_');
	name[k] = 0;
	snprintf(dir, dirn, "%s/race-%s-%" PRIu64, o->out, name, ndiv);
	mkdir(dir, 0755);
	snprintf(p, sizeof(p), "%s/race.log", dir);
	int rc = rlog_write(p, target, n, o->seed, &r->src, r->serial.v, r->serial.n, win, n);
	snprintf(p, sizeof(p), "%s/divergence.txt", dir);
	FILE *f = fopen(p, "w");
	if (f) {
		fprintf(f, "%s\n%s%s", what, detail ? detail : "",
			detail && detail[0] && detail[strlen(detail) - 1] != '\n' ? "\n" : "");
		fclose(f);
	}
	return rc;
}

static void sysrq_blocked(void)
{
	int fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, "w", 1) != 1)
			(void)0;
		close(fd);
	}
}

/* A replayed log's serial ops before its window, each checked: 0, or
 * nonzero with why said. */
static int replay_serial(struct rsess *r, const struct rlog_in *replay, unsigned char *buf,
			 char *why, size_t whyn)
{
	int bad = 0;

	for (size_t k = 0; k < replay->l.nserial && !bad; k++) {
		bad = serial_op(r, &replay->l.v[k], buf, why, whyn);
		if (!bad && rlog_push(&r->serial, &replay->l.v[k]))
			bad = -1;
	}
	return bad;
}

/* A window that did not return in time: the reproducer, then exit, since
 * threads stuck in the kernel cannot be joined. */
static _Noreturn void hang(const struct ropts *o, struct rsess *r, struct kmsg *km,
			   const char *spec, uint64_t w, uint64_t ndiv, const struct dt_op *win,
			   int threads, struct rstats *st)
{
	char why[256], dir[PATH_MAX + 128];

	sysrq_blocked();
	snprintf(why, sizeof(why), "hang: the window's ops did not return within %d s", o->timeout);
	if (o->kmsg) {
		struct timespec ts = { 2, 0 };
		nanosleep(&ts, NULL);
		kmsg_scan(km);
	}
	write_div(o, r, spec, ndiv, win, threads, why, km->text, dir, sizeof(dir));
	fprintf(stderr, "difftest: %s: window %" PRIu64 ": %s (%s)\n", spec, w, why, dir);
	st->divergences++;
	fflush(NULL);
	_exit(1);
}

/* The judge found no serial order: why becomes the one-line verdict, and
 * orders the judge's full text with the target's results and size. */
static void no_order(const struct rsess *r, int threads, char *why, size_t whyn, char *orders,
		     size_t on)
{
	size_t ol = (size_t)snprintf(orders, on, "%s\nresults:", why);
	for (int k = 0; k < threads && ol < on; k++)
		ol += (size_t)snprintf(orders + ol, on - ol, " %" PRId64, r->obs.ret[k]);
	if (ol < on)
		snprintf(orders + ol, on - ol, "; size %" PRId64 "\n", r->obs.size);
	char *nl = strchr(why, '\n');
	if (nl)
		*nl = 0;
	char w2[600];
	snprintf(w2, sizeof(w2), "no serial order of the window gives the target's state (%s)", why);
	snprintf(why, whyn, "%.500s", w2);
}

/* The target's state after a window against the model: the kernel log,
 * then the state read back, then a serial order of the window that gives
 * it (dt_race_judge(), its order into order).  0 when one does, 1 for a
 * divergence (why and *detail said; the judge's text in orders), or
 * -errno. */
static int check_window(const struct ropts *o, struct rsess *r, struct kmsg *km,
			const struct dt_op *win, int threads, int *order, char *why, size_t whyn,
			char *orders, size_t on, const char **detail, struct rstats *st)
{
	char err[1024];

	if (o->kmsg && kmsg_scan(km)) {
		snprintf(why, whyn, "kernel log: %s", km->cls);
		*detail = km->text;
		st->kernel_reports++;
		return 1;
	}
	if (observe(r, err, sizeof(err))) {
		snprintf(why, whyn, "cannot read the target's file: %.400s", err);
		return 1;
	}
	int rc = dt_race_judge(r->cand, &r->ncand, r->s->model, r->s->nfiles, win, threads, &r->obs,
			       order, why, whyn);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		no_order(r, threads, why, whyn, orders, on);
		*detail = orders;
		return 1;
	}
	int ident = 1;
	for (int k = 0; k < threads; k++)
		ident &= order[k] == k;
	st->interleaved += !ident;
	st->multi += r->ncand > 1;
	return 0;
}

/* The next window's ops into win: a replayed log's window, after the
 * log's serial ops, or threads generated ones; each fallocate's FUSE front
 * noted for the judge.  0, or -EIO when the serial ops of a replayed log
 * diverge already (said on stderr). */
static int next_window(struct rsess *r, struct dt_target *t, struct wgen *g,
		       const struct rlog_in *replay, int threads, unsigned char *buf,
		       const char *spec, struct dt_op *win)
{
	if (replay) {
		char why[4096] = "";
		if (replay_serial(r, replay, buf, why, sizeof(why))) {
			fprintf(stderr, "difftest: %s: the serial ops diverge already: %s\n", spec,
				why);
			return -EIO;
		}
		memcpy(win, replay->l.v + replay->l.nserial, sizeof(*win) * (size_t)threads);
	} else {
		for (int k = 0; k < threads; k++)
			gen_op(g, rm_size(r->cand[0]), &win[k]);
	}
	for (int k = 0; k < threads; k++)
		r->obs.front[k] = dt_kind_is_falloc(win[k].kind)
			? dt_t_fuse_front(t, dt_kind_mode(&win[k]), win[k].off, win[k].len) : 0;
	return 0;
}

/* The target, its session (files and models) and the thread pool, with
 * DT_MAX_IO bytes of buffer: 0, or -errno (said on stderr) with nothing
 * left open. */
static int race_open(const char *spec, int threads, struct dt_target *t, struct rsess *r,
		     struct pool *pool, unsigned char **buf)
{
	char err[1024];

	*buf = malloc(DT_MAX_IO);
	if (!*buf)
		return -ENOMEM;
	if (dt_target_init(t, spec, "race", err, sizeof(err))) {
		fprintf(stderr, "difftest: target %s: %s\n", spec, err);
		free(*buf);
		return -EINVAL;
	}
	if (sess_open(r, t, *buf, err, sizeof(err))) {
		fprintf(stderr, "difftest: %s: %s\n", spec, err);
		dt_target_fini(t);
		free(*buf);
		return -EIO;
	}
	if (pool_start(pool, r->s, threads)) {
		sess_close(r);
		dt_target_fini(t);
		free(*buf);
		return -ENOMEM;
	}
	return 0;
}

/* Windows on one target.  Returns divergences found (>= 0) or -errno. */
static int64_t race_target(const struct ropts *o, const char *spec, struct rstats *st,
			   const struct rlog_in *replay, int loops)
{
	struct dt_target t;
	struct rsess r;
	struct pool pool;
	struct kmsg km = { .fd = -1 };
	char why[4096], orders[4200], dir[PATH_MAX + 128];
	unsigned char *buf;
	int64_t ndiv = 0;
	int threads = replay ? replay->threads : o->threads;
	int rc = race_open(spec, threads, &t, &r, &pool, &buf);

	if (rc)
		return rc;
	if (replay)
		r.src = replay->src;
	struct wgen g = { .disabled = t.disabled, .bs = rm_blocksize(r.s->model[0]),
			  .srcsize = r.src.len };
	g.rng = o->seed ^ 0x7261636573ULL;	/* "races" */
	if (o->kmsg)
		kmsg_open(&km);
	double t0 = now();
	uint64_t nwin = replay ? (uint64_t)loops : o->windows;
	int since_reset = 0;
	fprintf(stderr, "difftest: %s: %d threads, %" PRIu64 " windows%s%s\n", spec, threads, nwin,
		t.probe_notes[0] ? "; " : "", t.probe_notes);
	for (uint64_t w = 0; w < nwin && ndiv < o->max_div; w++) {
		struct dt_op win[DT_RACE_MAXT];
		int order[DT_RACE_MAXT];
		why[0] = 0;
		if (replay || since_reset++ >= o->reset_every) {
			if (sess_reset(&r)) {
				fprintf(stderr, "difftest: %s: cannot make a fresh file\n", spec);
				ndiv = -EIO;
				break;
			}
			since_reset = 1;
		}
		if (next_window(&r, &t, &g, replay, threads, buf, spec, win)) {
			ndiv = -EIO;
			break;
		}
		rc = pool_run(&pool, win, o->timeout);
		if (rc == -ETIMEDOUT)
			hang(o, &r, &km, spec, w, (uint64_t)ndiv + 1, win, threads, st);
		st->windows++;
		st->ops += (uint64_t)threads;
		for (int k = 0; k < threads; k++) {
			r.obs.ret[k] = pool.ret[k];
			if (win[k].kind == DT_MWRITE)
				r.s->mdirty[0] = 1;
		}
		const char *detail = NULL;
		int dv = check_window(o, &r, &km, win, threads, order, why, sizeof(why), orders,
				      sizeof(orders), &detail, st);
		if (dv < 0) {
			ndiv = dv;
			break;
		}
		if (dv) {
			st->divergences++;
			ndiv++;
			write_div(o, &r, spec, (uint64_t)ndiv, win, threads, why, detail, dir,
				  sizeof(dir));
			fprintf(stderr, "difftest: %s: window %" PRIu64 ": %s\n  reproducer: %s/race.log\n%s",
				spec, w, why, dir, detail ? detail : "");
			if (sess_reset(&r))
				break;
			since_reset = 1;
			continue;
		}
		for (int k = 0; k < threads && !replay; k++)
			if (rlog_push(&r.serial, &win[order[k]]))
				break;
		if (!replay && o->out && w % 200 == 199)
			fprintf(stderr, "difftest: %s: %" PRIu64 " windows, %.0f ops/s\n", spec, w + 1,
				(double)(w + 1) * threads / (now() - t0));
	}
	st->seconds += now() - t0;
	pool_stop(&pool);
	if (km.fd >= 0)
		close(km.fd);
	sess_close(&r);
	dt_target_fini(&t);
	free(buf);
	return ndiv;
}

/* ---- the command line ---- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: difftest --threads N -t TARGET [-t TARGET...] [OPTIONS]\n"
"       difftest --race-replay LOG -t TARGET [--repeat RUNSxLOOPS]\n"
"The concurrent mode: windows of N ops (2..4) run at once by N threads on one\n"
"file; the target's final size, bytes and map and every result of a write,\n"
"truncate, fallocate or reflink must be those of some serial order of the\n"
"window on the model.  Kernel log reports (BUG, WARNING, lockdep, hung task)\n"
"and windows that do not return are divergences too.\n"
"  --threads N          ops per window, 2..4\n"
"  -t, --target T       as for difftest (ext4, xfs, fusefs in the guest; dir:PATH;\n"
"                       model[:PROFILE]); in the guest default: ext4, xfs, fusefs\n"
"  --windows W          windows per target (default 1000)\n"
"  -S, --seed SEED      (default 1)\n"
"  --window-timeout S   a window still running after S seconds is a hang (120)\n"
"  --reset-every W      a fresh file every W windows (default 20)\n"
"  --no-kmsg            do not read /dev/kmsg\n"
"  --max-div N          stop a target after N divergences (default 1)\n"
"  --out DIR            reproducers: DIR/race-TARGET-K/race.log (default difftest-out)\n"
"  --json FILE          a summary per target (windows, ops, ops/s, divergences)\n"
"  --race-replay LOG    run a race log's window again (RUNS fresh files, LOOPS\n"
"                       windows each, after the log's serial ops every time)\n"
"  --repeat RUNSxLOOPS  for --race-replay (default 10x100); exit 1 when any run\n"
"                       diverged, and say how many of the RUNS did\n");
}

/* The command line of the concurrent mode. */
struct rcli {
	const char *targets[8];
	int nt, runs, loops;
	const char *replay, *json;
};

/* Options into o and a: -1 to go on, else the exit status (0 for --help). */
static int parse_args(int argc, char **argv, struct ropts *o, struct rcli *a)
{
	static const struct option lo[] = {
		{ "threads", required_argument, NULL, 'T' },
		{ "target", required_argument, NULL, 't' },
		{ "windows", required_argument, NULL, 'W' },
		{ "seed", required_argument, NULL, 'S' },
		{ "window-timeout", required_argument, NULL, 'O' },
		{ "reset-every", required_argument, NULL, 'R' },
		{ "no-kmsg", no_argument, NULL, 'K' },
		{ "max-div", required_argument, NULL, 'M' },
		{ "out", required_argument, NULL, 'o' },
		{ "race-replay", required_argument, NULL, 'P' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "shard", required_argument, NULL, 'D' },
		{ "json", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "t:S:h", lo, NULL)) != -1) {
		switch (c) {
		case 'T':
			o->threads = (int)strtol(optarg, &end, 10);
			if (*end || o->threads < 2 || o->threads > DT_RACE_MAXT) {
				fprintf(stderr, "difftest: --threads '%s': give 2, 3 or 4\n", optarg);
				return 2;
			}
			break;
		case 't':
			if (a->nt == 8) {
				fprintf(stderr, "difftest: at most 8 targets\n");
				return 2;
			}
			a->targets[a->nt++] = optarg;
			break;
		case 'W':
			o->windows = strtoull(optarg, &end, 0);
			if (*end || !o->windows) {
				fprintf(stderr, "difftest: --windows '%s': a positive count\n", optarg);
				return 2;
			}
			break;
		case 'S':
			o->seed = strtoull(optarg, &end, 0);
			if (*end) {
				fprintf(stderr, "difftest: --seed '%s': a number\n", optarg);
				return 2;
			}
			break;
		case 'O':
			o->timeout = (int)strtol(optarg, &end, 10);
			if (*end || o->timeout < 1 || o->timeout > 86400) {
				fprintf(stderr, "difftest: --window-timeout '%s': 1..86400 s\n", optarg);
				return 2;
			}
			break;
		case 'R':
			o->reset_every = (int)strtol(optarg, &end, 10);
			if (*end || o->reset_every < 1) {
				fprintf(stderr, "difftest: --reset-every '%s': a positive count\n", optarg);
				return 2;
			}
			break;
		case 'K':
			o->kmsg = 0;
			break;
		case 'M':
			o->max_div = (int)strtol(optarg, &end, 10);
			if (*end || o->max_div < 1) {
				fprintf(stderr, "difftest: --max-div '%s': a positive count\n", optarg);
				return 2;
			}
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'P':
			a->replay = optarg;
			break;
		case 'r':
			if (sscanf(optarg, "%dx%d", &a->runs, &a->loops) != 2 || a->runs < 1 ||
			    a->loops < 1 || a->runs > 100000 || a->loops > 1000000) {
				fprintf(stderr, "difftest: --repeat '%s': RUNSxLOOPS, e.g. 10x100\n",
					optarg);
				return 2;
			}
			break;
		case 'D':	/* difftest-vm passes --shard 0/1 */
			if (strcmp(optarg, "0/1")) {
				fprintf(stderr, "difftest: --shard %s: the concurrent mode has no shards\n",
					optarg);
				return 2;
			}
			break;
		case 'J':
			a->json = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "difftest: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return -1;
}

/* One target's --race-replay: RUNS runs of LOOPS windows each; 0 when
 * no run diverged, 1 when one did, 2 on an error. */
static int replay_target(struct ropts *o, const char *target, const struct rlog_in *in,
			 int runs, int loops)
{
	struct rstats st = { 0 };
	int hit = 0, status = 0;

	for (int k = 0; k < runs; k++) {
		o->max_div = 1;
		int64_t d = race_target(o, target, &st, in, loops);
		if (d < 0) {
			status = 2;
			break;
		}
		hit += d > 0;
	}
	printf("race-replay %s: diverged in %d of %d runs (%d loops each), %.1f s\n", target, hit,
	       runs, loops, st.seconds);
	return status ? status : hit > 0;
}

/* A target's entry of the --json summary (the i-th). */
static void json_target(FILE *jf, int i, const char *target, const struct rstats *st, int64_t d)
{
	fprintf(jf, "%s\n    { \"name\": \"", i ? "," : "");
	for (const char *c = target; *c; c++)
		fprintf(jf, *c == '"' || *c == '\\' ? "\\%c" : (unsigned char)*c < 0x20 ?
			"?" : "%c", *c);
	fprintf(jf, "\", \"windows\": %" PRIu64 ", \"ops\": %" PRIu64
		", \"seconds\": %.3f, \"ops_per_sec\": %.1f, \"interleaved\": %" PRIu64
		", \"multi\": %" PRIu64 ", \"kernel_reports\": %" PRIu64
		", \"divergence_count\": %" PRId64 " }",
		st->windows, st->ops, st->seconds,
		st->seconds > 0 ? (double)st->ops / st->seconds : 0.0, st->interleaved,
		st->multi, st->kernel_reports, d < 0 ? (int64_t)0 : d);
}

/* The targets and the run's surroundings: the replayed log into *in, the
 * targets checked (or handed to the VM), the default targets in the guest,
 * the output directory, the signals.  -1 to run, else the exit status. */
static int race_setup(struct ropts *o, struct rcli *a, struct rlog_in *in, char **argv,
		      int (*needs_vm)(const char *target), int (*exec_vm)(char **argv))
{
	char err[PATH_MAX + 128];

	if (a->replay) {
		if (rlog_read(a->replay, in, err, sizeof(err))) {
			fprintf(stderr, "difftest: --race-replay: %s\n", err);
			return 2;
		}
		if (o->threads && o->threads != in->threads) {
			fprintf(stderr, "difftest: --threads %d but the log's window has %d ops\n",
				o->threads, in->threads);
			return 2;
		}
		o->threads = in->threads;
		o->seed = in->seed;
		if (!a->nt)
			a->targets[a->nt++] = in->target;
	} else if (!o->threads) {
		fprintf(stderr, "difftest: the concurrent mode needs --threads N (2..4)\n");
		return 2;
	}
	for (int i = 0; i < a->nt; i++) {
		if (dt_target_spec_check(a->targets[i], err, sizeof(err))) {
			fprintf(stderr, "difftest: -t %s: %s\n", a->targets[i], err);
			return 2;
		}
	}
	for (int i = 0; i < a->nt; i++)
		if (needs_vm && needs_vm(a->targets[i]))
			return exec_vm ? exec_vm(argv) : 2;
	if (!a->nt) {
		if (!getenv("DIFFTEST_IN_GUEST")) {
			fprintf(stderr, "difftest: no target: give -t (see --threads --help)\n");
			return 2;
		}
		a->targets[a->nt++] = "ext4";
		a->targets[a->nt++] = "xfs";
		a->targets[a->nt++] = "fusefs";
	}
	if (mkdir(o->out, 0755) && errno != EEXIST) {
		fprintf(stderr, "difftest: --out %s: %s\n", o->out, strerror(errno));
		return 2;
	}
	struct sigaction sa = { .sa_handler = on_sigbus, .sa_flags = SA_NODEFER };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGXFSZ, SIG_IGN);
	return -1;
}

/* Every target in turn (or its replay), with the --json summary: the exit
 * status, 0 clean, 1 divergence, 2 error. */
static int race_run(struct ropts *o, const struct rcli *a, const struct rlog_in *in)
{
	FILE *jf = NULL;

	if (a->json && !(jf = fopen(a->json, "w"))) {
		fprintf(stderr, "difftest: --json %s: %s\n", a->json, strerror(errno));
		return 2;
	}
	if (jf)
		fprintf(jf, "{\n  \"mode\": \"race\",\n  \"threads\": %d,\n  \"seed\": \"0x%016" PRIx64
			"\",\n  \"targets\": [", o->threads, o->seed);
	int status = 0;
	for (int i = 0; i < a->nt; i++) {
		struct rstats st = { 0 };
		if (a->replay) {
			int r = replay_target(o, a->targets[i], in, a->runs, a->loops);
			if (r == 2 || (r == 1 && status != 2))
				status = r;
			continue;
		}
		int64_t d = race_target(o, a->targets[i], &st, NULL, 0);
		if (d < 0) {
			status = 2;
			continue;
		}
		printf("race %s: threads %d, %" PRIu64 " windows, %" PRIu64 " ops, %.1f s, %.0f ops/s; "
		       "windows whose matching order was not the issue order: %" PRIu64 "; "
		       "with more than one matching state: %" PRIu64 "; kernel reports: %" PRIu64
		       "; divergences: %" PRId64 "\n",
		       a->targets[i], o->threads, st.windows, st.ops, st.seconds,
		       st.seconds > 0 ? (double)st.ops / st.seconds : 0.0, st.interleaved, st.multi,
		       st.kernel_reports, d);
		if (d > 0 && status == 0)
			status = 1;
		if (jf)
			json_target(jf, i, a->targets[i], &st, d);
	}
	if (jf) {
		fprintf(jf, "\n  ]\n}\n");
		if (fclose(jf) && status == 0)
			status = 2;
	}
	return status;
}

int dt_race_main(int argc, char **argv, int (*needs_vm)(const char *target),
		 int (*exec_vm)(char **argv))
{
	struct ropts o = { .threads = 0, .seed = 1, .windows = 1000, .timeout = 120,
			   .reset_every = 20, .kmsg = 1, .out = "difftest-out", .max_div = 1 };
	struct rcli a = { .nt = 0, .runs = 10, .loops = 100 };
	struct rlog_in in = { 0 };
	int status = parse_args(argc, argv, &o, &a);

	if (status >= 0)
		return status;
	status = race_setup(&o, &a, &in, argv, needs_vm, exec_vm);
	if (status < 0)
		status = race_run(&o, &a, &in);
	free(in.l.v);
	fflush(stdout);
	return status;
}
