/* SPDX-License-Identifier: MIT */
/*
 * exec.c - the oracle: run one op on the model and on the target and check,
 * per op: the return value or errno, the size (fstat), the FIEMAP map of the
 * range the op can have changed against the model's may-masks (every real
 * block state must be in its block's may-set; delalloc counts as data; the
 * map is compared in whole blocks), the bytes the op touched or shifted
 * (pread() against the model: zeros in its holes and unwritten runs,
 * memcmp with rm_pread() in its data runs), and SEEK_DATA/SEEK_HOLE answers
 * with rm_lseek_ok_lat() (XFS CoW staging latitude: cowlat.c).
 * dt_full_check() checks a whole file: size, whole
 * map, every byte of the non-hole runs plus the edges of every hole.
 *
 * Cost per op is kept low on purpose (the campaign target is 1e6 ops in
 * QEMU TCG): one syscall for the op, fstat only when the size can change,
 * FIEMAP only over the affected range, hashing only touched bytes (at most
 * shift_check_max after an insert/collapse: both ends of the shifted range;
 * the rest is covered by the full check every K ops).  Restricting the map
 * check to the affected range is sound: it only checks less.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "optab.h"
#include "rm_vec.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *const divnames[DV_NKINDS] = {
	"none", "return", "size", "map", "data", "seek", "fsck", "mode"
};

const char *dt_divkind_name(int k)
{
	return k >= 0 && k < DV_NKINDS ? divnames[k] : "?";
}

int dt_exec_init(struct dt_exec *x, struct dt_session *s, const struct dt_opts *o)
{
	memset(x, 0, sizeof(*x));
	x->s = s;
	x->o = *o;
	if (!x->o.shift_check_max)
		x->o.shift_check_max = 256 << 10;
	if (!x->o.write_check_max)
		x->o.write_check_max = 128 << 10;
	/* page aligned: direct I/O takes them as they are */
	x->mbuf = aligned_alloc(4096, DT_MAX_IO);
	x->tbuf = aligned_alloc(4096, DT_MAX_IO);
	if (!x->mbuf || !x->tbuf) {
		dt_exec_fini(x);
		return -ENOMEM;
	}
	return 0;
}

void dt_exec_fini(struct dt_exec *x)
{
	free(x->mbuf);
	free(x->tbuf);
	free(x->ext);
	free(x->runs);
	free(x->obs);
	x->mbuf = x->tbuf = NULL;
	x->ext = NULL;
	x->runs = NULL;
	x->obs = NULL;
	x->nobs = x->obscap = 0;
}

void dt_div_free(struct dt_div *d)
{
	free(d->picture);
	d->picture = NULL;
	dt_mapsnap_free(d->snap);
	d->snap = NULL;
	free(d->obs);
	d->obs = NULL;
	d->nobs = 0;
}

static void div_set(struct dt_div *d, int kind, int file, uint64_t opno,
		    const struct dt_op *op, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

#include <stdarg.h>
static void div_set(struct dt_div *d, int kind, int file, uint64_t opno,
		    const struct dt_op *op, const char *fmt, ...)
{
	va_list ap;

	dt_div_free(d);
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	d->file = file;
	d->opno = opno;
	if (op)
		d->op = *op;
	d->byte_off = -1;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
}

/* ---- maps ---- */

static int run_cb(void *ctx, const struct rm_run *r)
{
	struct dt_exec *x = ctx;

	int rc = RM_VEC_RESERVE(&x->runs, &x->runcap, x->nruns + 1, 256);

	if (rc)
		return rc;
	x->runs[x->nruns++] = *r;
	return 0;
}

static int model_runs(struct dt_exec *x, int i, int64_t lo, int64_t hi)
{
	x->nruns = 0;
	if (hi <= lo)
		return 0;
	return rm_walk(x->s->model[i], lo, hi, run_cb, x);
}

/* The model's map as a map check sees it: after write-back (rm_walk()),
 * or, observer-free, the cached view (rm_walk_cached(): what FIEMAP
 * without FIEMAP_FLAG_SYNC may show now). */
static int map_runs(struct dt_exec *x, int i, int64_t lo, int64_t hi, int cached)
{
	x->nruns = 0;
	if (hi <= lo)
		return 0;
	return cached ? rm_walk_cached(x->s->model[i], lo, hi, run_cb, x)
		      : rm_walk(x->s->model[i], lo, hi, run_cb, x);
}

/* The state of a target extent: unwritten, a delayed allocation (observer-
 * free checks only: after write-back it is data), else data. */
static unsigned ext_state(const struct rm_extent *e, int cached)
{
	if (e->flags & RM_FIEMAP_UNWRITTEN)
		return RM_UNWRITTEN;
	return cached && (e->flags & RM_FIEMAP_DELALLOC) ? RM_DELALLOC : RM_DATA;
}

static char state_char(unsigned st)
{
	return st == RM_DATA ? 'D' : st == RM_UNWRITTEN ? 'U' : st == RM_HOLE ? '.' :
	       st == RM_DELALLOC ? 'L' : '?';
}

static void may_str(unsigned may, char *b)
{
	int n = 0;
	if (may & RM_DATA) b[n++] = 'D';
	if (may & RM_UNWRITTEN) b[n++] = 'U';
	if (may & RM_HOLE) b[n++] = '.';
	if (may & RM_DELALLOC) b[n++] = 'L';
	b[n] = 0;
}

/* Actual state of block at byte `pos` given sorted extents. */
static unsigned real_state_at(const struct rm_extent *e, int64_t n, int64_t pos, int64_t bs,
			      int cached)
{
	for (int64_t j = 0; j < n; j++) {
		int64_t a = e[j].logical & ~(bs - 1);
		int64_t b = rm_sat_add(rm_sat_add(e[j].logical, e[j].length), bs - 1) & ~(bs - 1);
		if (pos >= a && pos < b)
			return ext_state(&e[j], cached);
	}
	return RM_HOLE;
}

char *dt_map_picture(struct dt_exec *x, int i, int64_t lo, int64_t hi)
{
	struct dt_session *s = x->s;
	int64_t bs = rm_blocksize(s->model[i]);
	size_t cap = 8192;
	char *out = malloc(cap);
	size_t len = 0;

	if (!out)
		return NULL;
	if (lo < 0)
		lo = 0;
	lo &= ~(bs - 1);
	if (hi < lo || hi - lo > 512 * bs)
		hi = rm_sat_add(lo, 512 * bs);
	hi = rm_sat_add(hi, bs - 1) & ~(bs - 1);
#define PUT(...) do { \
	int k_ = snprintf(out + len, cap - len, __VA_ARGS__); \
	if (k_ > 0) len += (size_t)k_ < cap - len ? (size_t)k_ : cap - len - 1; \
} while (0)
	int64_t ne = dt_t_fiemap(s, i, lo, hi - lo, &x->ext, &x->extcap);
	int cached = s->t->cached;
	if (map_runs(x, i, lo, hi, cached) < 0 || ne < 0) {
		PUT("(map unavailable: %s)\n", ne < 0 ? dt_errname((int)ne) : "model walk");
		return out;
	}
	PUT("block map of f%d, bytes %" PRId64 "..%" PRId64 ", one char per %" PRId64
	    "-byte block (D data, U unwritten, . hole, L delayed allocation, ? model allows several;\n"
	    "the model's allowed set is listed under each '^'); size %" PRId64 "\n",
	    i, lo, hi, bs, rm_size(s->model[i]));
	for (int64_t row = lo; row < hi; row = rm_sat_add(row, 64 * bs)) {
		int64_t rend = rm_sat_add(row, 64 * bs) < hi ? row + 64 * bs : hi;
		char exp[80], act[80], mark[80];
		int n = 0, bad = 0;
		size_t r = 0;
		for (int64_t p = row; p < rend; p += bs, n++) {
			while (r < x->nruns && x->runs[r].off + x->runs[r].len <= p)
				r++;
			unsigned may = r < x->nruns ? x->runs[r].may : RM_HOLE;
			unsigned st = real_state_at(x->ext, ne, p, bs, cached);
			exp[n] = (may & (may - 1)) ? '?' : state_char(may);
			act[n] = state_char(st);
			mark[n] = (may & st) ? ' ' : '^';
			bad |= !(may & st);
		}
		exp[n] = act[n] = mark[n] = 0;
		PUT("block %8" PRId64 "  expected: %s\n", row / bs, exp);
		PUT("                actual:   %s\n", act);
		if (bad) {
			PUT("                          %s\n", mark);
			r = 0;
			for (int64_t p = row; p < rend; p += bs) {
				while (r < x->nruns && x->runs[r].off + x->runs[r].len <= p)
					r++;
				unsigned may = r < x->nruns ? x->runs[r].may : RM_HOLE;
				unsigned st = real_state_at(x->ext, ne, p, bs, cached);
				if (!(may & st)) {
					char m[4];
					may_str(may, m);
					PUT("                block %" PRId64 ": kernel %c, model allows {%s}\n",
					    p / bs, state_char(st), m);
				}
			}
		}
	}
#undef PUT
	return out;
}

/* The state of the target's block at p (extents ext[0..ne), sorted; *e:
 * the first not ending before p) and where that state ends, within end. */
static unsigned target_state(const struct rm_extent *ext, int64_t ne, int64_t *e,
			     int64_t p, int64_t end, int64_t bs, int64_t *q, int cached)
{
	unsigned st;

	while (*e < ne && rm_sat_add(ext[*e].logical, ext[*e].length) <= p)
		(*e)++;
	if (*e < ne && (ext[*e].logical & ~(bs - 1)) <= p) {
		st = ext_state(&ext[*e], cached);
		/* whole blocks: an extent ending mid-block (a byte-exact map
		 * clipped at EOF) covers its last block */
		*q = rm_sat_add(rm_sat_add(ext[*e].logical, ext[*e].length), bs - 1) & ~(bs - 1);
	} else {
		st = RM_HOLE;
		*q = *e < ne ? (ext[*e].logical & ~(bs - 1)) : end;
	}
	if (*q > end)
		*q = end;
	if (*q <= p)
		*q = rm_sat_add(p, bs);
	return st;
}

/* The model's runs (x->runs, covering the checked range) against the
 * target's extents (x->ext[0..ne)): every real state in its may-set. */
static int sweep_map(struct dt_exec *x, int i, int64_t ne, int64_t bs,
		     const struct dt_op *op, uint64_t opno, struct dt_div *d, int cached)
{
	int64_t e = 0;

	for (size_t r = 0; r < x->nruns; r++) {
		const struct rm_run *run = &x->runs[r];
		int64_t p = run->off, end = run->off + run->len, q;
		for (; p < end; p = q) {
			unsigned st = target_state(x->ext, ne, &e, p, end, bs, &q, cached);
			if (run->may & st)
				continue;
			char mm[4];
			may_str(run->may, mm);
			div_set(d, DV_MAP, i, opno, op,
				"block map: bytes %" PRId64 "..%" PRId64 " (blocks %" PRId64
				"..%" PRId64 ") are %c on the target, the model allows {%s}",
				p, q, p / bs, (q - 1) / bs, state_char(st), mm);
			d->map_lo = p;
			d->map_hi = q;
			int64_t wlo = p - 16 * bs > 0 ? p - 16 * bs : 0;
			d->picture = dt_map_picture(x, i, wlo, rm_sat_add(q, 16 * bs));
			return DV_MAP;
		}
	}
	return DV_NONE;
}

/* Check the map of [lo, hi) (hi INT64_MAX: to the end of both maps);
 * sync: FIEMAP_FLAG_SYNC whatever the discipline (the fiemap_sync op). */
static int check_map_how(struct dt_exec *x, int i, int64_t lo, int64_t hi,
			 const struct dt_op *op, uint64_t opno, struct dt_div *d, int sync)
{
	struct dt_session *s = x->s;
	struct rm_file *m = s->model[i];
	int64_t bs = rm_blocksize(m);

	x->ext_n = -1;		/* no map of the target (yet) */
	if (!s->t->fiemap)
		return DV_NONE;
	if (rm_profile_of(m) == RM_PROFILE_BYTES)
		bs = 1;		/* byte-granular runs: compare bytes, not blocks */
	if (lo < 0)
		lo = 0;
	lo &= ~(bs - 1);
	int whole = hi == INT64_MAX;
	int64_t mend = rm_map_end(m);
	if (rm_size(m) > mend)
		mend = rm_size(m);
	if (hi > rm_sat_add(mend, bs) || whole)
		hi = INT64_MAX;	/* FIEMAP past the model's end: anything there is extra */
	/* fiemap_prep() clips every request to s_maxbytes: nothing beyond it
	 * can be observed (nor compared) */
	int64_t maxb = rm_maxbytes(m) > INT64_MAX - bs ? (INT64_MAX & ~(bs - 1))
					: (rm_maxbytes(m) + bs - 1) & ~(bs - 1);
	if (lo >= maxb)
		return DV_NONE;
	/* observer-free: a check sees the cached view; a FIEMAP_FLAG_SYNC
	 * (the fiemap_sync op) writes the whole file back first, on both
	 * sides (fiemap_prep() -> filemap_write_and_wait()) */
	int cached = s->t->cached && !sync;
	if (s->t->cached && sync)
		rm_writeback(m, 0, 0);
	double t0 = now();
	int64_t flen = hi == INT64_MAX ? INT64_MAX : hi - lo;
	int64_t ne = sync ? dt_t_fiemap_sync(s, i, lo, flen, &x->ext, &x->extcap)
			  : dt_t_fiemap(s, i, lo, flen, &x->ext, &x->extcap);
	x->map_sec += now() - t0;
	x->ext_n = ne > 0 ? ne : 0;
	x->map_calls++;
	x->map_extents += (uint64_t)x->ext_n;
	x->syscalls++;	/* (+ an fdatasync on fusefs after an mmap write: not counted) */
	if (ne < 0) {
		div_set(d, DV_MAP, i, opno, op, "FIEMAP failed: %s", dt_errname((int)ne));
		return DV_MAP;
	}
	if (hi == INT64_MAX) {
		hi = mend;
		if (ne > 0) {
			int64_t rend = rm_sat_add(x->ext[ne - 1].logical, x->ext[ne - 1].length);
			if (rend > hi)
				hi = rend;
		}
	}
	if (hi > maxb - bs + 1)
		hi = maxb;
	else
		hi = rm_sat_add(hi, bs - 1) & ~(bs - 1);
	if (whole && ne > x->max_extents)
		x->max_extents = ne;
	if (hi <= lo)
		return DV_NONE;
	int rc = map_runs(x, i, lo, hi, cached);
	if (rc < 0) {
		div_set(d, DV_MAP, i, opno, op, "model walk failed: %s", dt_errname(rc));
		return DV_MAP;
	}
	return sweep_map(x, i, ne, bs, op, opno, d, cached);
}

static int check_map(struct dt_exec *x, int i, int64_t lo, int64_t hi,
		     const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	return check_map_how(x, i, lo, hi, op, opno, d, 0);
}

/* ---- data ---- */

/* Comparing and filling with plain 64-bit words, 64 bytes per step.
 * Under QEMU TCG (the guest runs with -cpu max) glibc picks its AVX2
 * memcmp/memset, and TCG emulates each vector instruction through a C function
 * call while it translates scalar loads, stores and ALU ops inline.
 * Measured in the guest: memcmp 0.94 ms/MiB, memset 1.7 ms/MiB, an
 * unrolled word loop 0.16 ms/MiB.  (Natively these are a few times slower
 * than glibc's, which costs nothing next to the syscalls.) */
static inline uint64_t ld64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));	/* unaligned load: one mov */
	return v;
}

static int words_equal(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t k = 0;

	for (; k + 64 <= n; k += 64)
		if ((ld64(a + k) ^ ld64(b + k)) | (ld64(a + k + 8) ^ ld64(b + k + 8)) |
		    (ld64(a + k + 16) ^ ld64(b + k + 16)) | (ld64(a + k + 24) ^ ld64(b + k + 24)) |
		    (ld64(a + k + 32) ^ ld64(b + k + 32)) | (ld64(a + k + 40) ^ ld64(b + k + 40)) |
		    (ld64(a + k + 48) ^ ld64(b + k + 48)) | (ld64(a + k + 56) ^ ld64(b + k + 56)))
			return 0;
	for (; k < n; k++)
		if (a[k] != b[k])
			return 0;
	return 1;
}

/* 1 when the n bytes at b are all zero. */
static int all_zero(const unsigned char *b, size_t n)
{
	size_t k = 0;

	for (; k + 64 <= n; k += 64)
		if (ld64(b + k) | ld64(b + k + 8) | ld64(b + k + 16) | ld64(b + k + 24) |
		    ld64(b + k + 32) | ld64(b + k + 40) | ld64(b + k + 48) | ld64(b + k + 56))
			return 0;
	for (; k < n; k++)
		if (b[k])
			return 0;
	return 1;
}

/* The bytes of a pwrite/mwrite: what dt_fill_pattern() writes (one byte
 * value), stored a word at a time (see above). */
static void fill_pattern(unsigned char *b, size_t n, uint8_t pat)
{
	uint64_t v = pat * 0x0101010101010101ull;
	size_t k = 0;

	for (; k + 8 <= n; k += 8) {
		/* opaque to the optimiser, which would turn the loop back
		 * into a memset call */
		__asm__("" : "+r"(v));
		memcpy(b + k, &v, sizeof(v));
	}
	for (; k < n; k++)
		b[k] = pat;
}

/* Are the target's n bytes at p (in x->tbuf) the model's?  The model's
 * runs in [p, p+n) decide how: a hole or unwritten run reads as zeros, so
 * the target's bytes are checked for zeros in place (nothing is copied out
 * of the model); a data run is copied out (rm_pread) and compared with
 * memcmp.  Not a hash of both sides (XXH3 of the pread buffer and
 * rm_hash()): under TCG hashing costs several emulated vector operations
 * per 16 bytes and runs over every byte twice, memcmp and memcpy are cheap
 * and holes cost one pass.  Returns 1 same, 0 different, <0 model walk
 * error. */
static int same_as_model(struct dt_exec *x, int i, int64_t p, size_t n)
{
	struct rm_file *m = x->s->model[i];
	int rc = model_runs(x, i, p, p + (int64_t)n);

	if (rc < 0)
		return rc;
	for (size_t r = 0; r < x->nruns; r++) {
		const struct rm_run *run = &x->runs[r];
		int64_t a = run->off > p ? run->off : p;
		int64_t b = run->off + run->len < p + (int64_t)n ? run->off + run->len : p + (int64_t)n;
		if (b <= a)
			continue;
		size_t k = (size_t)(a - p), c = (size_t)(b - a);
		if (run->state != RM_DATA) {
			if (!all_zero(x->tbuf + k, c))
				return 0;
		} else if (rm_pread(m, x->mbuf + k, c, a) != (ssize_t)c ||
			   !words_equal(x->tbuf + k, x->mbuf + k, c)) {
			return 0;
		}
	}
	return 1;
}

static int data_range(struct dt_exec *x, int i, int64_t lo, int64_t hi,
		      const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	struct dt_session *s = x->s;
	struct rm_file *m = s->model[i];
	double t0 = now();
	int rc = DV_NONE;

	if (lo < 0)
		lo = 0;
	if (hi > rm_size(m))
		hi = rm_size(m);
	/* p advances by n, never past hi: no overflow near INT64_MAX */
	for (int64_t p = lo, n0; p < hi; p += n0) {
		size_t n = (size_t)(hi - p < DT_MAX_IO ? hi - p : DT_MAX_IO);
		n0 = (int64_t)n;
		ssize_t tr = dt_t_pread(s, i, x->tbuf, n, p);
		x->syscalls++;
		/* a failed allocation only loses the read from repro.sh */
		if (x->record && !RM_VEC_RESERVE(&x->obs, &x->obscap, x->nobs + 1, 64))
			x->obs[x->nobs++] = (struct dt_obs){ .opno = opno, .file = i, .off = p,
							     .len = n0 };
		x->bytes_checked += n;
		if (tr == (ssize_t)n) {
			int same = same_as_model(x, i, p, n);
			if (same > 0)
				continue;
			if (same < 0) {
				div_set(d, DV_DATA, i, opno, op, "MODEL INTERNAL ERROR: rm_walk(%" PRId64
					", %zu) failed: %s", p, n, dt_errname(same));
				rc = -EUCLEAN;
				break;
			}
		}
		/* different (or short): the model's bytes, to find the first
		 * differing byte */
		ssize_t mr = rm_pread(m, x->mbuf, n, p);
		if (tr == (ssize_t)n && mr == (ssize_t)n && !memcmp(x->tbuf, x->mbuf, n)) {
			/* same bytes after all: rm_walk()'s states (a hole or
			 * unwritten run must read as zeros) disagree with
			 * rm_pread(), a model bug, not the target's */
			div_set(d, DV_DATA, i, opno, op, "MODEL INTERNAL ERROR: rm_pread(%" PRId64
				", %zu) has nonzero bytes where rm_walk() reports a hole or unwritten run",
				p, n);
			rc = -EUCLEAN;
			break;
		}
		if (tr < 0) {
			div_set(d, DV_DATA, i, opno, op, "pread(%" PRId64 ", %zu) failed: %s",
				p, n, dt_errname((int)tr));
			rc = DV_DATA;
			break;
		}
		int64_t k = 0, lim = tr < mr ? tr : mr;
		while (k < lim && x->tbuf[k] == x->mbuf[k])
			k++;
		div_set(d, DV_DATA, i, opno, op,
			"data: first differing byte at offset %" PRId64 ": expected 0x%02x, "
			"target has %s%02x (pread of %zu bytes returned %zd, model %zd)",
			p + k, k < mr ? x->mbuf[k] : 0, k < tr ? "0x" : "EOF/",
			k < tr ? x->tbuf[k] : 0, n, tr, mr);
		d->byte_off = p + k;
		d->exp_byte = k < mr ? x->mbuf[k] : -1;
		d->act_byte = k < tr ? x->tbuf[k] : -1;
		rc = DV_DATA;
		break;
	}
	x->data_sec += now() - t0;
	return rc;
}

/* Check [lo, hi) but at most `cap` bytes: both ends when it is bigger. */
static int data_check(struct dt_exec *x, int i, int64_t lo, int64_t hi, int64_t cap,
		      const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	if (hi - lo <= cap)
		return data_range(x, i, lo, hi, op, opno, d);
	int rc = data_range(x, i, lo, lo + cap / 2, op, opno, d);
	if (rc)
		return rc;
	int64_t sz = rm_size(x->s->model[i]);
	if (hi > sz)
		hi = sz;
	return data_range(x, i, hi - cap / 2 > lo ? hi - cap / 2 : lo, hi, op, opno, d);
}

static int check_size(struct dt_exec *x, int i, const struct dt_op *op, uint64_t opno,
		      struct dt_div *d)
{
	int64_t ts = dt_t_size(x->s, i), ms = rm_size(x->s->model[i]);

	x->syscalls++;
	if (ts != ms) {
		div_set(d, DV_SIZE, i, opno, op, "size: expected %" PRId64 ", target has %" PRId64
			"%s", ms, ts, ts < 0 ? " (fstat failed)" : "");
		return DV_SIZE;
	}
	return DV_NONE;
}

/* The size, when the model's changed from `old`: also after a refused op,
 * which can still change it (ext4_insert_range() grows i_size before
 * ext4_ext_shift_extents() refuses to shift past EXT_MAX_BLOCKS; found by a
 * 1e6 run: fusefs kept the kernel's cached size, and a later mmap write
 * SIGBUSed). */
static int check_resized(struct dt_exec *x, int i, int64_t old, const struct dt_op *op,
			 uint64_t opno, struct dt_div *d)
{
	return old != rm_size(x->s->model[i]) ? check_size(x, i, op, opno, d) : DV_NONE;
}

static int full_check(struct dt_exec *x, int i, uint64_t opno, struct dt_div *d);

int dt_full_check(struct dt_exec *x, int i, uint64_t opno, struct dt_div *d)
{
	double t0 = now();
	int rc = full_check(x, i, opno, d);

	x->full_sec += now() - t0;
	x->full_checks++;
	return rc;
}

/* Reads of [lo, hi) gathered by full_check(): one pread for ranges that
 * touch or lie within 4 blocks of each other (a striped file would take
 * one syscall per block otherwise): more bytes compared, never fewer. */
struct reads {
	int64_t lo, hi;		/* lo < 0: none gathered */
};

static int read_add(struct dt_exec *x, int i, struct reads *rd, int64_t a, int64_t b,
		    int64_t bs, uint64_t opno, struct dt_div *d)
{
	int rc = DV_NONE;

	if (a < 0)
		return DV_NONE;
	if (rd->lo >= 0 && a <= rm_sat_add(rd->hi, 4 * bs)) {
		if (b > rd->hi)
			rd->hi = b;
		return DV_NONE;
	}
	if (rd->lo >= 0)
		rc = data_range(x, i, rd->lo, rd->hi, NULL, opno, d);
	rd->lo = a;
	rd->hi = b;
	return rc;
}

/* Where the piece of model run r that starts at p ends (*q), and whether
 * all of it is read (1) or only its first and last block (0): the target's
 * written extents are x->ext[0..nw), *e the first not ending before p. */
static int read_whole(const struct dt_exec *x, const struct rm_run *r, int64_t p,
		      int64_t nw, int64_t *e, int64_t bs, int64_t *q)
{
	int64_t end = r->off + r->len;

	if (r->state == RM_DATA || x->ext_n < 0) {
		/* without a map of the target: whatever may be data */
		*q = end;
		return r->state == RM_DATA || (r->may & RM_DATA);
	}
	while (*e < nw && rm_sat_add(x->ext[*e].logical, x->ext[*e].length) <= p)
		(*e)++;
	int64_t ea = *e < nw ? x->ext[*e].logical & ~(bs - 1) : end;
	int full = ea <= p;
	*q = full ? rm_sat_add(rm_sat_add(x->ext[*e].logical, x->ext[*e].length),
			       bs - 1) & ~(bs - 1) : ea;
	if (*q > end || *q <= p)
		*q = end;
	return full;
}

/* Every byte that either side holds as written data is compared:
 * the model's data runs, and wherever the target's map (the
 * whole-file FIEMAP just taken, after write-back) has a written
 * extent, e.g. XFS speculative preallocation that a truncate up
 * brought inside EOF (model: a hole that may be data), where stale
 * bytes would show.  Ranges that both sides hold as holes or
 * unwritten read as zeros by definition: the first and last block of
 * each is sampled (bulk zeros cost TCG time and catch little that the
 * map check does not).  Reading every run the model allows to be data
 * whole, even where the target has no block, would read mostly zeros
 * on XFS. */
static int data_sweep(struct dt_exec *x, int i, const struct rm_run *runs, size_t nr,
		      int64_t bs, uint64_t opno, struct dt_div *d)
{
	struct reads rd = { -1, -1 };
	int64_t nw = 0, e = 0;
	int rc;

	for (int64_t k = 0; k < x->ext_n; k++)	/* (none when ext_n < 0) */
		if (!(x->ext[k].flags & RM_FIEMAP_UNWRITTEN))
			x->ext[nw++] = x->ext[k];	/* written extents, sorted */
	for (size_t r = 0; r < nr; r++) {
		for (int64_t p = runs[r].off, q; p < runs[r].off + runs[r].len; p = q) {
			int full = read_whole(x, &runs[r], p, nw, &e, bs, &q);
			/* what to read: all of [p, q), or (zeros on both
			 * sides) its first and last block */
			if ((rc = read_add(x, i, &rd, p, full ? q : rm_sat_add(p, bs), bs, opno, d)) ||
			    (rc = read_add(x, i, &rd, full || q - p <= bs ? -1 : q - bs, q, bs,
					   opno, d)))
				return rc;
		}
	}
	return rd.lo >= 0 ? data_range(x, i, rd.lo, rd.hi, NULL, opno, d) : DV_NONE;
}

static int full_check(struct dt_exec *x, int i, uint64_t opno, struct dt_div *d)
{
	struct rm_file *m = x->s->model[i];
	char msg[256];
	int rc;

	if (rm_check(m, msg, sizeof(msg))) {
		div_set(d, DV_DATA, i, opno, NULL, "MODEL INTERNAL ERROR (rm_check): %s", msg);
		return -EUCLEAN;
	}
	if ((rc = check_size(x, i, NULL, opno, d)))
		return rc;
	x->pend[i] = 0;		/* the whole map is checked now */
	if ((rc = check_map(x, i, 0, INT64_MAX, NULL, opno, d)))
		return rc;
	int64_t size = rm_size(m), bs = rm_blocksize(m);
	if ((rc = model_runs(x, i, 0, size)) < 0)
		return DV_NONE;
	/* copy: data_range() does not walk, but keep the runs stable anyway */
	size_t nr = x->nruns;
	struct rm_run *runs = malloc((nr ? nr : 1) * sizeof(*runs));
	if (!runs)
		return -ENOMEM;
	if (nr)
		memcpy(runs, x->runs, nr * sizeof(*runs));
	rc = data_sweep(x, i, runs, nr, bs, opno, d);
	free(runs);
	struct rm_stats st;
	rm_stats(m, &st);
	if ((int64_t)st.nodes > x->max_model_runs)
		x->max_model_runs = (int64_t)st.nodes;
	return rc;
}

static void count(struct dt_exec *x, int kind, int64_t r)
{
	x->ops++;
	x->kind_count[kind]++;
	int e = r < 0 ? (int)-r : 0;
	x->errs[kind][e < DT_NERRNO ? e : DT_NERRNO - 1]++;
}

/* The model's and the target's return values differ: DV_RET. */
static int ret_div(struct dt_div *d, int i, uint64_t opno, const struct dt_op *op,
		   int64_t mr, int64_t tr)
{
	if (mr == tr)
		return DV_NONE;
	div_set(d, DV_RET, i, opno, op, "return: expected %" PRId64 " (%s), target returned %"
		PRId64 " (%s)", mr, dt_errname(mr < 0 ? (int)mr : 0), tr,
		dt_errname(tr < 0 ? (int)tr : 0));
	d->exp_ret = mr;
	d->act_ret = tr;
	return DV_RET;
}

/* A real ENOSPC (EDQUOT) where the model succeeded. */
static int out_of_space(int64_t mr, int64_t tr)
{
	return (tr == -ENOSPC || tr == -EDQUOT) && mr >= 0;
}

/* The model has no notion of free space: a real ENOSPC is not a
 * divergence, but the file's state is now unknown: start it afresh. */
static int enospc_reset(struct dt_exec *x, int i)
{
	x->enospc++;
	x->s->t->enospc_resets++;
	x->file_reset = 1;
	int rc = dt_session_reset_file(x->s, i);
	return rc < 0 ? rc : DV_NONE;
}

/* RULES.md N5: ext4's punch, insert and collapse allocate only extent-tree
 * blocks for a split, and those may come from the clusters ext4 keeps in
 * reserve (s_resv_clusters, 2% of the file system or 4096 clusters):
 * ext4_ext_remove_space() splits with ext4_force_split_extent_at(..., 1),
 * ext4_insert_range() with EXT4_GET_BLOCKS_METADATA_NOFAIL, which
 * ext4_ext_insert_extent() turns into EXT4_MB_USE_RESERVED.  So on a full
 * ext4 they still succeed, and an ENOSPC is a divergence, not a restart.
 * Only a real ext4 (or a model target of its profile, ext4_target()): not fusefs (the
 * server has no reserve), not XFS (xfs_insert_file_space() and
 * xfs_unmap_extent() reserve blocks from the free pool and may fail). */
static int ext4_target(const struct dt_target *t)
{
	return t->mopts.profile == RM_PROFILE_EXT4 &&
	       (t->type != DT_T_FD || !strcmp(t->fsname, "ext4"));
}

static int never_enospc(const struct dt_target *t, int mode)
{
	return ext4_target(t) && !(mode & RM_FALLOC_FL_ZERO_RANGE) &&
	       (mode & (RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_INSERT_RANGE |
			RM_FALLOC_FL_COLLAPSE_RANGE));
}

/* ---- a nearly full target (free=SIZE, RULES.md N1-N5) ----
 * Without free= the model stays exact: a real ENOSPC restarts the file
 * (enospc_reset()).  With it, an op that allocates keeps a snapshot of
 * its model file; when the target answers ENOSPC (or a write comes back
 * short), the model goes back to the snapshot and applies exactly what
 * the kernel documents for that answer, and the file is checked. */
static struct rm_file *snapshot(struct dt_exec *x, int i)
{
	struct rm_file *c = NULL;

	if (!x->s->t->full || rm_file_clone(x->s->model[i], &c))
		return NULL;
	return c;
}

static void drop_snapshot(struct rm_file **snap)
{
	rm_file_free(*snap);
	*snap = NULL;
}

/* Back to the model as it was before the op. */
static struct rm_file *restore(struct dt_exec *x, int i, struct rm_file **snap)
{
	rm_file_free(x->s->model[i]);
	x->s->model[i] = *snap;
	*snap = NULL;
	x->enospc++;
	x->s->t->enospc_checked++;
	return x->s->model[i];
}

/* Where the allocated prefix of [a, b) ends on the target: the first
 * block of the range that is a hole there (b if none).  ext4 and XFS
 * allocate a fallocate's range from its start on and keep what they
 * allocated when a later chunk fails (ext4_alloc_file_blocks(),
 * xfs_alloc_file_space()).  A delayed allocation is not allocated: the
 * chunk that failed left it delayed (FIEMAP without FIEMAP_FLAG_SYNC
 * reports it as an extent, FIEMAP_EXTENT_DELALLOC). */
static int64_t target_prefix(struct dt_exec *x, int i, int64_t a, int64_t b)
{
	int64_t n = dt_t_fiemap(x->s, i, a, b - a, &x->ext, &x->extcap), p = a;

	x->syscalls++;
	for (int64_t k = 0; k < n && p < b; k++) {
		const struct rm_extent *e = &x->ext[k];
		if (e->logical > p || (e->flags & RM_FIEMAP_DELALLOC))
			break;
		int64_t end = rm_sat_add(e->logical, e->length);
		if (end > p)
			p = end;
	}
	return p < b ? p : b;
}

/* Map check of an op's range now, or (--map-batch N) later, merged with the
 * other ranges changed since the last check: FIEMAP_FLAG_SYNC writes back,
 * and under TCG one write-back for N ops is much cheaper than N. */
static int map_after(struct dt_exec *x, int i, int64_t lo, int64_t hi,
		     const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	if (x->o.map_batch <= 1)
		return check_map(x, i, lo, hi, op, opno, d);
	if (lo < 0)
		lo = 0;
	if (!x->pend[i] || lo < x->pend_lo[i])
		x->pend_lo[i] = lo;
	if (!x->pend[i] || hi > x->pend_hi[i])
		x->pend_hi[i] = hi;
	x->pend[i] = 1;
	x->pend_op[i] = *op;
	return DV_NONE;
}

static int flush_maps(struct dt_exec *x, uint64_t opno, struct dt_div *d)
{
	x->since_map = 0;
	for (int i = 0; i < x->s->nfiles; i++) {
		if (!x->pend[i])
			continue;
		x->pend[i] = 0;
		int rc = check_map(x, i, x->pend_lo[i], x->pend_hi[i], &x->pend_op[i], opno, d);
		if (rc)
			return rc;
	}
	return DV_NONE;
}

/* After a successful pwrite or mmap write of mr bytes at off: size, the
 * map of the written range, and its bytes with their block edges. */
static int written_check(struct dt_exec *x, int i, int64_t off, int64_t mr,
			 const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	int64_t bs = rm_blocksize(x->s->model[i]);
	int rc;

	if ((rc = check_size(x, i, op, opno, d)) ||
	    (rc = map_after(x, i, off, off + mr, op, opno, d)))
		return rc;
	return data_check(x, i, off & ~(bs - 1), rm_sat_add(off + mr, bs), x->o.write_check_max,
			  op, opno, d);
}

/* rm_walk() callback: the allocated runs of a file (at most DT_RUNS) */
#define DT_RUNS 64
struct runs {
	int64_t a[DT_RUNS], b[DT_RUNS];
	int n;
};

static int collect_cb(void *ctx, const struct rm_run *r)
{
	struct runs *rs = ctx;

	if (r->state == RM_HOLE)
		return 0;
	if (rs->n == DT_RUNS)
		return 1;	/* too many: no latitude taken */
	rs->a[rs->n] = r->off;
	rs->b[rs->n++] = rm_sat_add(r->off, r->len);
	return 0;
}

/* Whether one of the target's extents (non-delayed ones only with
 * nodelay) overlaps [a, b). */
static int target_has(const struct dt_exec *x, int64_t n, int64_t a, int64_t b, int nodelay)
{
	for (int64_t k = 0; k < n; k++) {
		const struct rm_extent *e = &x->ext[k];
		if (e->logical < b && rm_sat_add(e->logical, e->length) > a &&
		    !(nodelay && (e->flags & RM_FIEMAP_DELALLOC)))
			return 1;
	}
	return 0;
}

/* N1, N2 on a full ext4: a write_begin that failed with ENOSPC freed the
 * blocks past EOF (ext4_truncate_failed_write()) and may then have been
 * retried with success (ext4_should_retry_alloc() commits the journal,
 * which frees blocks), so after a write that succeeded, or succeeded in
 * part, the blocks the file had past its old EOF are all there or all
 * gone (QEMU, 6.1, a full ext4: "falloc -k 66134016 4096" gone after a
 * 4 KiB pwrite at 42954752 that succeeded).  Gone (1), when none of those
 * outside the written blocks [off, off + k) is left, or, with none
 * outside, when the target holds the written blocks there as delayed
 * allocations (over the unwritten blocks the model has them
 * written-over-unwritten); m is the model before the write. */
static int dropped_past_eof(struct dt_exec *x, int i, const struct rm_file *m, int64_t off,
			    int64_t k)
{
	int64_t bs = rm_blocksize(m), old = rm_size(m);
	int64_t from = old > INT64_MAX - bs ? INT64_MAX : (old + bs - 1) & ~(bs - 1);
	int64_t w0 = off & ~(bs - 1), w1 = rm_sat_add(off, k);
	struct runs rs = { .n = 0 };

	w1 = w1 > INT64_MAX - bs ? INT64_MAX : (w1 + bs - 1) & ~(bs - 1);
	if (from >= INT64_MAX || rm_walk(m, from, INT64_MAX, collect_cb, &rs) != 0 || !rs.n)
		return 0;	/* nothing past EOF (or too much to judge) */
	int64_t n = dt_t_fiemap(x->s, i, from, INT64_MAX - from, &x->ext, &x->extcap);
	x->syscalls++;
	if (n < 0)
		return 0;
	int out = 0, out_kept = 0, in = 0, in_kept = 0;
	for (int j = 0; j < rs.n; j++) {
		int64_t a = rs.a[j], b = rs.b[j];
		if (a < w0) {
			out = 1;
			out_kept |= target_has(x, n, a, b < w0 ? b : w0, 0);
		}
		if (b > w1) {
			out = 1;
			out_kept |= target_has(x, n, a > w1 ? a : w1, b, 0);
		}
		if (a < w1 && b > w0) {
			in = 1;
			in_kept |= target_has(x, n, a > w0 ? a : w0, b < w1 ? b : w1, 1);
		}
	}
	return out ? !out_kept : (in && !in_kept);
}

/* RULES.md N1, N2: a buffered write that meets ENOSPC before its first
 * byte changes nothing; one that meets it later returns the bytes it
 * wrote, exactly its first tr bytes (generic_perform_write() and
 * iomap_write_iter() stop at the first page whose space reservation,
 * ext4_da_write_begin() / xfs_buffered_write_iomap_begin(), fails). */
static int nospace_pwrite(struct dt_exec *x, const struct dt_op *op, struct rm_file **snap,
			  int64_t tr, uint64_t opno, struct dt_div *d)
{
	int i = op->file;
	struct rm_file *m = restore(x, i, snap);
	int64_t k = tr > 0 ? tr : 0;
	int ext4 = ext4_target(x->s->t), rc;

	/* a first page that failed, then succeeded on retry */
	if (ext4 && dropped_past_eof(x, i, m, op->off, k) == 1 &&
	    (rc = rm_truncate(m, rm_size(m))) < 0)
		return rc;
	/* XFS, a write past EOF that failed before its first byte: the gap
	 * from EOF to the write was zeroed first (xfs_file_write_checks() ->
	 * xfs_zero_range()), and zeroing the written or delayed blocks there
	 * raised i_size to their end (iomap_write_end()): the size may have
	 * grown, up to the write's offset, with zeros (the campaign's
	 * xfs:free=1m control: 3670023 -> 3674112, the EOF block's end) */
	int64_t ts;
	if (!k && x->s->t->mopts.profile == RM_PROFILE_XFS && !dt_target_is_fuse(x->s->t) &&
	    op->off > rm_size(m) && (ts = dt_t_size(x->s, i)) > rm_size(m) && ts <= op->off &&
	    (rc = rm_truncate(m, ts)) < 0)
		return rc;
	if (k && rm_pwrite(m, x->mbuf, (size_t)k, op->off) != k) {
		div_set(d, DV_RET, i, opno, op, "the model refuses the short write of %" PRId64
			" bytes the target made", k);
		return DV_RET;
	}
	/* N1, N2 on ext4: when the page whose write_begin failed reached past
	 * i_size, ext4_da_write_begin() (ext4_write_begin() without delalloc)
	 * calls ext4_truncate_failed_write(), which frees the blocks past EOF
	 * (KEEP_SIZE preallocation): as a truncate to the same size does on
	 * the ext4 profile (ext4_setattr()) */
	if (ext4 && dt_failed_page_end(op->off, op->len, k) > rm_size(m) &&
	    (rc = rm_truncate(m, rm_size(m))) < 0)
		return rc;
	x->last_mr = tr;
	return written_check(x, i, op->off, k ? k : op->len, op, opno, d);
}

/* A write that succeeded on a full ext4 (dropped_past_eof()): the model is
 * then the snapshot truncated to its size, then written. */
static int retried_write(struct dt_exec *x, const struct dt_op *op, struct rm_file **snap,
			 int64_t mr)
{
	if (dropped_past_eof(x, op->file, *snap, op->off, mr) != 1)
		return 0;
	struct rm_file *m = restore(x, op->file, snap);
	int rc = rm_truncate(m, rm_size(m));
	if (rc < 0)
		return rc;
	return rm_pwrite(m, x->mbuf, (size_t)mr, op->off) == mr ? 0 : -EIO;
}

int dt_x_pwrite(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	int i = op->file, rc;
	size_t n = (size_t)op->len;
	struct rm_file *snap = snapshot(x, i);

	fill_pattern(x->mbuf, n, op->pat);
	int64_t mr = rm_pwrite(x->s->model[i], x->mbuf, n, op->off);
	int64_t tr = dt_t_pwrite(x->s, i, x->mbuf, n, op->off);
	x->last_mr = mr;
	count(x, op->kind, tr);
	if (snap && mr > 0 && (tr == -ENOSPC || (tr > 0 && tr < mr)))
		return nospace_pwrite(x, op, &snap, tr, opno, d);
	if (snap && tr == mr && mr > 0 && ext4_target(x->s->t) &&
	    (rc = retried_write(x, op, &snap, mr)) < 0)
		return rc;
	if (snap)
		drop_snapshot(&snap);
	if (out_of_space(mr, tr))
		return enospc_reset(x, i);
	if ((rc = ret_div(d, i, opno, op, mr, tr)))
		return rc;
	return mr <= 0 ? DV_NONE : written_check(x, i, op->off, mr, op, opno, d);
}

/* After a read of n bytes at off into mbuf (model) and tbuf (target). */
static int read_compare(struct dt_exec *x, const struct dt_op *op, int64_t mr, int64_t tr,
			uint64_t opno, struct dt_div *d)
{
	int i = op->file, rc;

	count(x, op->kind, tr);
	if ((rc = ret_div(d, i, opno, op, mr, tr)))
		return rc;
	if (mr <= 0 || words_equal(x->mbuf, x->tbuf, (size_t)mr))
		return DV_NONE;
	int64_t k = 0;
	while (x->mbuf[k] == x->tbuf[k])
		k++;
	div_set(d, DV_DATA, i, opno, op, "data: %s returned 0x%02x at offset %" PRId64
		", expected 0x%02x", dt_kind_name(op->kind), x->tbuf[k], op->off + k, x->mbuf[k]);
	d->byte_off = op->off + k;
	d->exp_byte = x->mbuf[k];
	d->act_byte = x->tbuf[k];
	return DV_DATA;
}

int dt_x_pread(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	int i = op->file;
	size_t n = (size_t)op->len;
	int64_t mr = rm_pread(x->s->model[i], x->mbuf, n, op->off);
	int64_t tr = dt_t_pread(x->s, i, x->tbuf, n, op->off);

	return read_compare(x, op, mr, tr, opno, d);
}

/* The bytes a mapped op touches, [off, off + *n) clipped to the model's
 * EOF (dt_mapped_len()), once the target's size is the model's: mapped I/O
 * past the target's EOF is a SIGBUS, so a size that differs is a
 * divergence (its DV_ code), not a crash; else 0. */
static int mapped_len(struct dt_exec *x, const struct dt_op *op, uint64_t opno,
		      struct dt_div *d, size_t *n)
{
	*n = (size_t)dt_mapped_len(op->off, op->len, rm_size(x->s->model[op->file]));
	return *n ? check_size(x, op->file, op, opno, d) : DV_NONE;
}

int dt_x_mread(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	int i = op->file, rc;
	struct rm_file *m = x->s->model[i];
	size_t n;

	if ((rc = mapped_len(x, op, opno, d, &n)))
		return rc;
	/* mapped I/O is clipped to [0, EOF) (dt_mapped_len()): with nothing
	 * left there is no call, so no EINVAL for a negative offset either,
	 * as in the mwrite case and in repro.sh */
	int64_t mr = !n ? 0 : rm_pread(m, x->mbuf, n, op->off);
	int64_t tr = dt_t_mread(x->s, i, x->tbuf, n, op->off);
	return read_compare(x, op, mr, tr, opno, d);
}

int dt_x_mwrite(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	int i = op->file, rc;
	struct rm_file *m = x->s->model[i];
	size_t n;

	if ((rc = mapped_len(x, op, opno, d, &n)))
		return rc;
	fill_pattern(x->mbuf, n, op->pat);
	int64_t lo = op->off, hi = op->off;
	/* blocks below the page size: whole pages (dt_mmap_write()) */
	int64_t mr = n ? dt_mmap_write(m, x->mbuf, n, op->off, &lo, &hi) : 0;
	int64_t tr = dt_t_mwrite(x->s, i, x->mbuf, n, op->off);
	count(x, op->kind, tr);
	if (out_of_space(mr, tr))
		return enospc_reset(x, i);
	if ((rc = ret_div(d, i, opno, op, mr, tr)))
		return rc;
	return mr <= 0 ? DV_NONE : written_check(x, i, lo, hi - lo, op, opno, d);
}

int dt_x_truncate(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	int i = op->file, rc;
	struct rm_file *m = x->s->model[i];
	int64_t bs = rm_blocksize(m), off = op->off, old = rm_size(m);
	int64_t mr = rm_truncate(m, off);
	int64_t tr = dt_t_truncate(x->s, i, off);
	x->last_mr = mr;

	count(x, op->kind, tr);
	if (out_of_space(mr, tr))
		return enospc_reset(x, i);
	if ((rc = ret_div(d, i, opno, op, mr, tr)) || mr < 0)
		return rc;
	int64_t lo = old < off ? old : off;
	if ((rc = check_size(x, i, op, opno, d)) ||
	    (rc = map_after(x, i, lo, INT64_MAX, op, opno, d)))
		return rc;
	/* the partial block at the new/old EOF must read as zeros past it */
	return data_range(x, i, (lo & ~(bs - 1)) - bs, rm_sat_add(lo, bs), op, opno, d);
}

/* After a successful fallocate that shifted nothing: the partial blocks
 * at both edges are where bytes change (or must not); the interior is
 * zeros or untouched, which the map check and the periodic full check
 * cover. */
static int falloc_edges(struct dt_exec *x, const struct dt_op *op, int64_t end,
			uint64_t opno, struct dt_div *d)
{
	int i = op->file, rc;
	int64_t bs = rm_blocksize(x->s->model[i]), a = op->off & ~(bs - 1);

	if ((rc = data_range(x, i, a, rm_sat_add(a, 2 * bs), op, opno, d)))
		return rc;
	if (end == INT64_MAX || end <= rm_sat_add(op->off, 2 * bs))
		return DV_NONE;
	return data_range(x, i, (end & ~(bs - 1)) - bs, rm_sat_add(end & ~(bs - 1), bs), op, opno, d);
}

/* RULES.md N3: a fallocate (mode 0, KEEP_SIZE) that meets ENOSPC keeps
 * the prefix of its range it allocated: ext4_alloc_file_blocks()
 * allocates chunk by chunk from the start and, for mode 0, moves i_size
 * to each chunk's end (ext4_update_inode_size()); xfs_alloc_file_space()
 * allocates from the start too, and xfs_file_fallocate() sets the size
 * only after it succeeded.  The prefix's end comes from the target's map
 * (its first hole in the range); the model applies exactly that, and the
 * file is checked. */
static int nospace_falloc(struct dt_exec *x, const struct dt_op *op, struct rm_file **snap,
			  int mode, int64_t old, uint64_t opno, struct dt_div *d)
{
	int i = op->file, rc;
	struct rm_file *m = restore(x, i, snap);
	int64_t bs = rm_blocksize(m), off = op->off, len = op->len;
	int64_t end = rm_sat_add(off, len), a = off & ~(bs - 1);
	int64_t b = end > INT64_MAX - bs ? INT64_MAX : (end + bs - 1) & ~(bs - 1);
	int xfs = x->s->t->mopts.profile == RM_PROFILE_XFS;

	/* rangeshift-fusefs reserves the space an op needs before applying
	 * it (fusefs/src/node.c reserve()): there ENOSPC changes nothing */
	if (dt_target_is_fuse(x->s->t))
		b = a;
	/* the prefix's last block may hold the range's end: ext4 caps the
	 * size at offset + len (epos = new_size) */
	int64_t p = b > a ? target_prefix(x, i, a, b) : a;
	p = p < end ? p : end;
	int pmode = xfs ? RM_FALLOC_FL_KEEP_SIZE : mode & RM_FALLOC_FL_KEEP_SIZE;
	if (p > off && rm_fallocate(m, pmode, off, p - off)) {
		div_set(d, DV_RET, i, opno, op, "the model refuses the allocated prefix [%" PRId64
			", %" PRId64 ") the target kept", off, p);
		return DV_RET;
	}
	x->last_mr = -ENOSPC;
	if ((rc = check_resized(x, i, old, op, opno, d)) ||
	    (rc = check_size(x, i, op, opno, d)) ||
	    (rc = map_after(x, i, off, end, op, opno, d)))
		return rc;
	return falloc_edges(x, op, end, opno, d);
}

int dt_x_falloc(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	struct dt_session *s = x->s;
	int i = op->file, rc, mode = dt_kind_mode(op);
	struct rm_file *m = s->model[i];
	int64_t off = op->off, len = op->len, old = rm_size(m);
	/* a request the FUSE kernel refuses never reaches the model */
	int64_t mr = dt_t_fuse_front(s->t, mode, off, len);

	/* free=: fallocate's allocating modes keep a snapshot (N3; a fusefs
	 * zero range too: the server changes nothing on ENOSPC).  Not an XFS
	 * zero range (N4): its punch may fail halfway, the file restarts */
	int alloc = !(mode & ~(RM_FALLOC_FL_KEEP_SIZE | RM_FALLOC_FL_ZERO_RANGE)) &&
		    (!(mode & RM_FALLOC_FL_ZERO_RANGE) || dt_target_is_fuse(s->t));
	struct rm_file *snap = mr == 0 && alloc ? snapshot(x, i) : NULL;

	if (mr == 0)
		mr = rm_fallocate(m, mode, off, len);
	int64_t tr = dt_t_fallocate(s, i, mode, off, len);
	x->last_mr = mr;
	count(x, op->kind, tr);
	if (snap && out_of_space(mr, tr))
		return nospace_falloc(x, op, &snap, mode, old, opno, d);
	if (snap)
		drop_snapshot(&snap);
	if (out_of_space(mr, tr) && !never_enospc(s->t, mode))
		return enospc_reset(x, i);
	if ((rc = ret_div(d, i, opno, op, mr, tr)))
		return rc;
	if (mr < 0)
		return check_resized(x, i, old, op, opno, d);
	int shift = mode & (RM_FALLOC_FL_INSERT_RANGE | RM_FALLOC_FL_COLLAPSE_RANGE);
	if ((rc = shift ? check_size(x, i, op, opno, d) : check_resized(x, i, old, op, opno, d)))
		return rc;
	int64_t end = shift || len > INT64_MAX - off ? INT64_MAX : off + len;
	if ((rc = map_after(x, i, off, end, op, opno, d)))
		return rc;
	int64_t bs = rm_blocksize(m);	/* 64-bit: the mask keeps off's high bits */
	if (shift)
		return data_check(x, i, off & ~(bs - 1), rm_size(m), x->o.shift_check_max,
				  op, opno, d);
	return falloc_edges(x, op, end, opno, d);
}

int dt_x_fsync(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	int64_t mr = rm_fsync(x->s->model[op->file]);
	int64_t tr = dt_t_fsync(x->s, op->file);

	count(x, op->kind, tr);
	return ret_div(d, op->file, opno, op, mr, tr);
}

int dt_x_fdatasync(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	int64_t mr = rm_fdatasync(x->s->model[op->file]);
	int64_t tr = dt_t_fdatasync(x->s, op->file);

	count(x, op->kind, tr);
	return ret_div(d, op->file, opno, op, mr, tr);
}

/* sync_file_range(2): the model answers with ksys_sync_file_range()'s
 * EINVAL rules and starts (WRITE) or waits for write-back like it
 * (rm_sync_file_range(), RULES.md W4). */
int dt_x_sync_range(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	unsigned fl = (unsigned)op->mode;
	int64_t mr = rm_sync_file_range(x->s->model[op->file], op->off, op->len, fl);
	int64_t tr = dt_t_sync_range(x->s, op->file, op->off, op->len, fl);

	count(x, op->kind, tr);
	return ret_div(d, op->file, opno, op, mr, tr);
}

/* FIEMAP with FIEMAP_FLAG_SYNC over [off, off+len) as an op: the kernel
 * writes the whole file back first (fiemap_prep() ->
 * filemap_write_and_wait()), then maps the range, which is checked
 * against the model.  Ranges the call would refuse (a negative offset, a
 * length <= 0: fiemap_prep()'s EINVAL, an offset past s_maxbytes: EFBIG)
 * are never generated; in a hand-written log they check from 0 and to the
 * end of the file. */
int dt_x_fiemap_sync(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	int i = op->file;
	int64_t lo = op->off < 0 ? 0 : op->off;
	int64_t hi = op->len <= 0 ? INT64_MAX : rm_sat_add(lo, op->len);

	count(x, op->kind, 0);
	if (!x->s->t->fiemap)
		return DV_NONE;
	x->pend[i] = 0;		/* this check covers what was pending */
	return check_map_how(x, i, lo, hi, op, opno, d, 1);
}

/* The caller of the op: --user's, or root. */
static void caller(const struct dt_target *t, struct rm_cred *c)
{
	if (t->user)
		rm_cred_user(c, t->user_uid, t->user_gid);
	else
		rm_cred_root(c);
}

int dt_x_reopen(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	struct dt_session *s = x->s;
	int i = op->file;
	int64_t tr = dt_t_reopen(s, i);
	struct rm_cred c;

	count(x, op->kind, tr);
	caller(s->t, &c);
	/* --user: open(O_RDWR) as the caller (RULES.md P7) */
	int64_t mr = s->t->user ? rm_cred_permission(&c, &s->attr[i], 6) : 0;
	if (mr == -EACCES && tr == -EACCES) {
		/* refused as the model says: the run goes on with root's fd */
		dt_cred_enter(s->t, 0);
		tr = dt_t_reopen(s, i);
		dt_cred_enter(s->t, 1);
		if (tr < 0) {
			div_set(d, DV_RET, i, opno, op, "reopen as root failed: %s",
				dt_errname((int)tr));
			return (int)tr;
		}
	} else if (mr < 0 && tr >= 0) {
		return ret_div(d, i, opno, op, mr, tr);
	} else if (tr < 0) {
		div_set(d, DV_RET, i, opno, op, "reopen failed: %s", dt_errname((int)tr));
		return (int)tr;
	}
	/* close may trim post-EOF preallocation (xfs_release()) */
	return map_after(x, i, rm_size(s->model[i]), INT64_MAX, op, opno, d);
}

/* fchmod as the caller (RULES.md P6): -EPERM for a non-owner, S_ISGID
 * dropped outside the file's group; the mode is checked after the op. */
int dt_x_chmod(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	struct dt_session *s = x->s;
	int i = op->file, rc;
	struct rm_cred c;
	struct rm_attr a = s->attr[i];

	if (op->off < 0 || op->off > 07777) {
		div_set(d, DV_RET, i, opno, op, "chmod mode 0%llo is not a permission mode",
			(unsigned long long)op->off);
		return -EINVAL;
	}
	caller(s->t, &c);
	int64_t mr = rm_cred_chmod(&c, &a, (uint32_t)op->off);
	int64_t tr = dt_t_chmod(s, i, (uint32_t)op->off);
	count(x, op->kind, tr);
	if ((rc = ret_div(d, i, opno, op, mr, tr)))
		return rc;
	s->attr[i] = a;
	return DV_NONE;
}

/* Observer-free: drop caches (syncfs first, dt_t_drop()) and remount write
 * every file back; so does the model. */
static void model_writeback_all(struct dt_exec *x)
{
	if (!x->s->t->cached)
		return;
	for (int j = 0; j < x->s->nfiles; j++)
		rm_writeback(x->s->model[j], 0, 0);
}

int dt_x_drop(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	(void)opno;
	(void)d;
	model_writeback_all(x);
	count(x, op->kind, dt_t_drop(x->s));
	return DV_NONE;
}

int dt_x_remount(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	struct dt_session *s = x->s;
	char note[PATH_MAX + 128];
	int rc;

	/* fsck (depth.c) at the first remount and every Nth after: a fresh
	 * exec (each shrink candidate) starts counting again */
	s->t->fsck_now = x->o.fsck_every && x->remounts % x->o.fsck_every == 0;
	x->remounts++;
	s->t->fsck_msg[0] = 0;
	model_writeback_all(x);	/* unmount writes every file back */
	int64_t tr = dt_t_remount(s, note, sizeof(note));
	s->t->fsck_now = 0;
	count(x, op->kind, tr);
	if (tr < 0) {
		div_set(d, DV_RET, op->file, opno, op, "remount failed: %s", note);
		return (int)tr;
	}
	if (s->t->fsck_msg[0]) {
		/* on-disk corruption the user-visible state may hide */
		div_set(d, DV_FSCK, op->file, opno, op, "fsck after unmount: %s", s->t->fsck_msg);
		s->t->fsck_msg[0] = 0;
		return DV_FSCK;
	}
	/* what is on disk now: check every file of the session */
	for (int j = 0; j < s->nfiles; j++)
		if ((rc = dt_full_check(x, j, opno, d))) {
			d->op = *op;
			return rc;
		}
	return DV_NONE;
}

/* The shrinker's fill and unfill (optab.c): change no file, but syncfs
 * writes every file back. */
int dt_x_fill(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	char note[PATH_MAX + 128];

	model_writeback_all(x);
	int64_t tr = dt_t_fill(x->s, op->kind == DT_FILL, note, sizeof(note));
	count(x, op->kind, tr);
	if (tr < 0) {
		div_set(d, DV_RET, op->file, opno, op, "%s", note);
		return (int)tr;
	}
	return DV_NONE;
}

int dt_x_seek(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	struct dt_session *s = x->s;
	int i = op->file;
	struct rm_file *m = s->model[i];
	int wh = op->kind == DT_SEEK_DATA ? RM_SEEK_DATA : RM_SEEK_HOLE;
	int64_t tr = dt_t_lseek(s, i, op->off, wh);

	count(x, op->kind, tr);
	if (rm_lseek_ok_lat(m, op->off, wh, tr, s->cow[i].st.v, s->cow[i].st.n))
		return DV_NONE;
	int64_t e = rm_lseek(m, op->off, wh);
	div_set(d, DV_SEEK, i, opno, op, "lseek(%" PRId64 ", %s) returned %" PRId64
		" (%s); the model expects %" PRId64 " (%s) and does not allow that",
		op->off, wh == RM_SEEK_DATA ? "SEEK_DATA" : "SEEK_HOLE", tr,
		dt_errname(tr < 0 ? (int)tr : 0), e, dt_errname(e < 0 ? (int)e : 0));
	return DV_SEEK;
}

/* FICLONERANGE into file i from file op->src (refmodel rm_clone_range():
 * XFS remaps, ext4/FUSE say EOPNOTSUPP). */
int dt_x_reflink(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	struct dt_session *s = x->s;
	int i = op->file, rc;
	struct rm_file *m = s->model[i];
	int64_t bs = rm_blocksize(m), off = op->off, len = op->len;

	if (op->src >= s->nfiles) {
		div_set(d, DV_RET, i, opno, op, "reflink names source f%d but the session "
			"has %d files", op->src, s->nfiles);
		return -EINVAL;
	}
	int64_t old = rm_size(m);
	int64_t ssz = rm_size(s->model[op->src]);
	/* observer-free: the remap writes both ranges back first
	 * (__generic_remap_file_range_prep(), xfs_reflink_remap_prep()) */
	int64_t mr = s->t->cached ? rm_clone_range_wb(m, s->model[op->src], op->soff, off, len)
				  : rm_clone_range(m, s->model[op->src], op->soff, off, len);
	int64_t tr = dt_t_reflink(s, i, op->src, op->soff, off, len);
	/* the effective length: 0 clones to the source's EOF */
	x->last_mr = mr;
	x->last_len = len ? len : ssz > op->soff ? ssz - op->soff : 0;
	count(x, op->kind, tr);
	if (out_of_space(mr, tr))
		return enospc_reset(x, i);
	if ((rc = ret_div(d, i, opno, op, mr, tr)))
		return rc;
	rc = check_resized(x, i, old, op, opno, d);
	if (mr < 0 || rc)
		return rc;
	/* both ranges share blocks now (cowlat.c); len 0 = to the source EOF */
	int64_t rl = len ? len : rm_size(s->model[op->src]) - op->soff;
	if ((rc = dt_cowlat_reflink(&s->cow[i], &s->cow[op->src], bs, op->soff, off, rl)))
		return rc;
	/* len 0 clones to the source EOF: the range ends at most at the new
	 * size rounded up to a block */
	int64_t end = len ? rm_sat_add(rm_sat_add(off, len), bs - 1) & ~(bs - 1)
			  : rm_sat_add(rm_size(m), bs);
	if ((rc = map_after(x, i, off, end, op, opno, d)))
		return rc;
	return data_check(x, i, off, end, x->o.shift_check_max, op, opno, d);
}

/* pwrite on an O_DIRECT descriptor (rm_dio_pwrite(), RULES.md O1-O5): a
 * success is checked as a write; a refusal on ext4 may have allocated
 * unwritten blocks in the range and truncated past EOF (O3): size and the
 * map from the range to the end. */
int dt_x_dio_write(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	int i = op->file, rc;
	size_t n = (size_t)op->len;
	struct rm_file *m = x->s->model[i];

	fill_pattern(x->mbuf, n, op->pat);
	int64_t old = rm_size(m);
	int64_t mr = rm_dio_pwrite(m, x->mbuf, n, op->off, x->s->t->dio_align);
	/* FUSE with async direct I/O (libfuse's default): a write the server
	 * shortens (at its s_maxbytes; FUSE's own is MAX_LFS_FILESIZE, so the
	 * kernel does not shorten it first) is -EIO (fuse_get_res_by_io():
	 * io->bytes set on a write); one the server refuses (-EFBIG at or
	 * past its s_maxbytes) keeps its error.  Either way fuse_direct_IO()
	 * then truncates an extending write back to the old size
	 * (fuse_do_truncate()), and a truncate to the same size drops the
	 * blocks past EOF where the profile's setattr does (ext4_setattr()):
	 * a refused write loses the file's preallocation. */
	int64_t want = (int64_t)n < DT_MAX_IO ? (int64_t)n : DT_MAX_IO;
	int fuse_trunc = 0;
	if (dt_target_is_fuse(x->s->t) && op->off >= 0 &&
	    ((mr > 0 && mr < want) || mr == -EFBIG)) {
		if (mr > 0)
			mr = -EIO;
		fuse_trunc = rm_sat_add(op->off, want) > old;
		if (fuse_trunc && (rc = rm_truncate(m, old)) < 0)
			return rc;
	}
	int64_t tr = dt_t_dio_pwrite(x->s, i, x->mbuf, n, op->off);
	count(x, op->kind, tr);
	/* a misaligned write refused after its first mapping was allocated
	 * (O3) meets ENOSPC first on a full file system (ext4_iomap_alloc()) */
	if (out_of_space(mr, tr) || (x->s->t->full && mr == -EINVAL && tr == -ENOSPC))
		return enospc_reset(x, i);
	if ((rc = ret_div(d, i, opno, op, mr, tr)))
		return rc;
	if ((mr == -EINVAL || mr == -EIO || fuse_trunc) && op->off >= 0) {
		int64_t bs = rm_blocksize(m);
		if ((rc = check_size(x, i, op, opno, d)))
			return rc;
		return map_after(x, i, op->off & ~(bs - 1), INT64_MAX, op, opno, d);
	}
	return mr <= 0 ? DV_NONE : written_check(x, i, op->off, mr, op, opno, d);
}

/* pread on an O_DIRECT descriptor: where a misaligned edge block may be
 * written or not (its may-set), either answer is right (O4). */
int dt_x_dio_read(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	int i = op->file;
	size_t n = (size_t)op->len;
	struct rm_file *m = x->s->model[i];
	uint32_t al = x->s->t->dio_align;
	int64_t mr = rm_dio_pread(m, x->mbuf, n, op->off, al);
	int64_t tr = dt_t_dio_pread(x->s, i, x->tbuf, n, op->off);

	if (mr != tr && rm_dio_pread_ok(m, op->off, n, al, tr))
		mr = tr >= 0 ? rm_pread(m, x->mbuf, n, op->off) : tr;
	return read_compare(x, op, mr, tr, opno, d);
}

/* The source of a two-file op must be a file of the session. */
static int src_ok(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	if (op->src < x->s->nfiles)
		return 0;
	div_set(d, DV_RET, op->file, opno, op, "%s names source f%d but the session has %d files",
		dt_kind_name(op->kind), op->src, x->s->nfiles);
	return -EINVAL;
}

/* After copy_range or dedupe changed [off, off + len) of file i from file
 * src: on XFS the two ranges may share blocks now (CoW staging latitude,
 * cowlat.c: over-approximated for every copy, cloned or not); the map and
 * the bytes of the range.  A copy first writes its destination as a write
 * does (staging around what it shared, which it shares no longer), and
 * only then shares it anew: in the other order the new sharing was undone
 * at once, and a later write into the copied blocks got no staging
 * latitude although XFS cloned them (vfs_copy_file_range() tries
 * ->remap_file_range() first). */
static int remapped_check(struct dt_exec *x, const struct dt_op *op, int64_t len,
			  uint64_t opno, struct dt_div *d)
{
	struct dt_session *s = x->s;
	int i = op->file, rc;
	int64_t bs = rm_blocksize(s->model[i]);

	if (rm_profile_of(s->model[i]) == RM_PROFILE_XFS) {
		struct dt_op w = *op;
		w.len = len;
		if (op->kind == DT_COPY_RANGE && (rc = dt_cow_write(&s->cow[i], &w, bs, 0, 0)))
			return rc;
		if ((rc = dt_cowlat_reflink(&s->cow[i], &s->cow[op->src], bs, op->soff, op->off,
					    len)))
			return rc;
	}
	int64_t end = rm_sat_add(rm_sat_add(op->off, len), bs - 1) & ~(bs - 1);
	if ((rc = map_after(x, i, op->off, end, op, opno, d)))
		return rc;
	return data_check(x, i, op->off, end, x->o.shift_check_max, op, opno, d);
}

/* copy_file_range(2) from file op->src, repeated as xfs_io's copy_range
 * repeats it (dt_copy_loop(); rm_copy_file_range(): RULES.md X1-X3). */
int dt_x_copy_range(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	struct dt_session *s = x->s;
	int i = op->file, rc;

	if ((rc = src_ok(x, op, opno, d)))
		return rc;
	int64_t old = rm_size(s->model[i]);
	int64_t mr = dt_copy_loop(s->model[i], s->model[op->src], op->soff, op->off, op->len,
				  s->t->copy_flags);
	/* FUSE: vfs_copy_file_range() checks the destination against FUSE's
	 * own s_maxbytes (MAX_LFS_FILESIZE, generic_write_check_limits()),
	 * not the server's; with nothing to copy (the source range at or past
	 * its EOF) it answers 0 before the server sees the call */
	if (mr == -EFBIG && dt_target_is_fuse(s->t) && op->soff >= 0 && op->off >= 0 &&
	    op->soff >= rm_size(s->model[op->src]))
		mr = 0;
	int64_t tr = dt_t_copy_range(s, i, op->src, op->soff, op->off, op->len);
	count(x, op->kind, tr);
	if (out_of_space(mr, tr))
		return enospc_reset(x, i);
	if ((rc = ret_div(d, i, opno, op, mr, tr)))
		return rc;
	rc = check_resized(x, i, old, op, opno, d);
	if (mr <= 0 || rc)
		return rc;
	return remapped_check(x, op, mr, opno, d);
}

/* FIDEDUPERANGE from file op->src (rm_dedupe_range(): RULES.md X4-X7):
 * the answer, the status and bytes_deduped as dt_dedupe_result() encodes
 * them; the bytes never change, the states may. */
int dt_x_dedupe(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	struct dt_session *s = x->s;
	int i = op->file, rc, st;
	int64_t bytes;

	if ((rc = src_ok(x, op, opno, d)))
		return rc;
	int r = rm_dedupe_range(s->model[i], s->model[op->src], op->soff, op->off, op->len,
				&bytes, &st);
	int64_t mr = dt_dedupe_result(r, st, bytes);
	int64_t tr = dt_t_dedupe(s, i, op->src, op->soff, op->off, op->len);
	count(x, op->kind, tr);
	if (out_of_space(mr, tr))
		return enospc_reset(x, i);
	if ((rc = ret_div(d, i, opno, op, mr, tr)))
		return rc;
	if (mr <= 0)
		return DV_NONE;
	return remapped_check(x, op, mr, opno, d);
}

int dt_x_unknown(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	(void)x;
	div_set(d, DV_RET, op->file, opno, op, "unknown op kind %d", op->kind);
	return -EINVAL;
}

/* --user: the mode the model expects after op (RULES.md P1-P5, P8), into
 * the session's attributes, against the target's st_mode. */
static int mode_check(struct dt_exec *x, const struct dt_op *op, int64_t old_size,
		      uint64_t opno, struct dt_div *d)
{
	struct dt_session *s = x->s;
	const struct dt_target *t = s->t;
	int i = op->file;
	struct rm_file *m = s->model[i];
	struct rm_cred c;
	struct rm_cred_call k = {
		.op = RM_CRED_OP_MWRITE, .mode = dt_kind_mode(op), .off = op->off,
		.len = x->last_len, .old_size = old_size, .new_size = rm_size(m),
		.ret = x->last_mr, .maxbytes = rm_maxbytes(m),
	};

	if (op->kind == DT_DIO_WRITE || op->kind == DT_COPY_RANGE || op->kind == DT_DEDUPE) {
		/* not modelled yet (their file_modified() points are unchecked):
		 * take the target's mode as the model's */
		int64_t now = dt_t_mode(s, i);
		if (now >= 0)
			s->attr[i].mode = s->fattr[i].mode = (uint32_t)now;
		return DV_NONE;
	}
	if (op->kind == DT_PWRITE)
		k.op = RM_CRED_OP_PWRITE;
	else if (op->kind == DT_TRUNCATE)
		k.op = RM_CRED_OP_TRUNCATE;
	else if (op->kind == DT_REFLINK)
		k.op = RM_CRED_OP_CLONE;
	else if (dt_kind_is_falloc(op->kind))
		k.op = RM_CRED_OP_FALLOCATE;
	caller(t, &c);
	enum rm_cred_fs fs = dt_cred_fs(t);
	uint32_t want = rm_cred_mode_after(fs, &c, &s->attr[i], &k);
	if (t->type != DT_T_FD && t->fault != DT_F_KEEP_SETID)
		s->fattr[i].mode = rm_cred_mode_after(fs, &c, &s->fattr[i], &k);
	if (want != s->attr[i].mode)
		s->t->setid_removals++;
	s->attr[i].mode = want;
	int64_t got = dt_t_mode(s, i);
	if (got == (int64_t)want)
		return DV_NONE;
	if (got < 0)
		div_set(d, DV_MODE, i, opno, op, "mode: fstat failed: %s", dt_errname((int)got));
	else
		div_set(d, DV_MODE, i, opno, op, "mode: expected 0%04o, the file has 0%04o "
			"(caller uid %u gid %u, owner %u:%u)", (unsigned)want, (unsigned)got,
			(unsigned)t->user_uid, (unsigned)t->user_gid, (unsigned)s->attr[i].uid,
			(unsigned)s->attr[i].gid);
	return DV_MODE;
}

static int exec_inner(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	const struct dt_target *t = x->s->t;

	x->file_reset = 0;
	if (op->file >= x->s->nfiles) {
		div_set(d, DV_RET, op->file, opno, op, "op names file f%d but the session has %d files",
			op->file, x->s->nfiles);
		return -EINVAL;
	}
	x->syscalls++;
	/* --user: the file's own ops as the caller; drop caches and remount
	 * need root's files (/proc/sys/vm/drop_caches, the mount point) */
	int as_user = t->user && !dt_kind_is_global(op->kind);
	int64_t old = as_user ? rm_size(x->s->model[op->file]) : 0;
	x->last_mr = 0;
	x->last_len = op->len;
	dt_cred_enter(t, as_user);
	int rc = dt_opdesc_of(op->kind)->exec(x, op, opno, d);
	dt_cred_enter(t, 0);
	if (as_user && rc == DV_NONE && !x->file_reset)
		rc = mode_check(x, op, old, opno, d);
	return rc;
}

static int exec_batched(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	struct dt_session *s = x->s;
	int f = op->file < s->nfiles && !dt_kind_is_global(op->kind) ? op->file : -1;
	int64_t old = f >= 0 ? rm_size(s->model[f]) : 0;
	int rc = exec_inner(x, op, opno, d);
	if (f >= 0 && x->file_reset) {
		dt_cowlat_reset(&s->cow[f]);
	} else if (f >= 0 && !rc) {
		int e = dt_cowlat_op(&s->cow[f], op, rm_blocksize(s->model[f]), old,
				     rm_size(s->model[f]));
		if (e < 0)
			return e;
	}
	if (rc || x->o.map_batch <= 1)
		return rc;
	if (x->file_reset)
		x->pend[op->file] = 0;
	/* global ops and reopen change what is cached: settle the maps first */
	if (++x->since_map >= x->o.map_batch ||
	    (dt_opdesc_of(op->kind)->flags & DT_OPF_SETTLE))
		return flush_maps(x, opno, d);
	return DV_NONE;
}

int dt_exec_op(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d)
{
	double t0 = now();
	int rc = exec_batched(x, op, opno, d);
	int64_t w = rc == DV_NONE && op->file < x->s->nfiles ?
		    dt_xdiff_window(x->o.xdiff, x->s->t, op) : 0;
	if (w > 0)
		rc = check_map(x, op->file, op->off & ~(w - 1),
			       rm_sat_add(rm_sat_add(op->off, op->len), w - 1) & ~(w - 1), op, opno, d);

	/* a known difference of the running kernel (expected.c): counted, not
	 * reported; a map difference leaves the file unknown to the model, so
	 * it starts afresh (only this op's file: the campaign's history of a
	 * file restarts with file_reset, campaign.c) */
	int k = rc > 0 ? dt_xdiff_match(x->o.xdiff, x, d) : -1;
	int reset = k >= 0 && dt_xdiff_resets(x->o.xdiff, k);
	if (reset && d->file != op->file)
		k = -1;
	if (k >= 0) {
		x->s->t->xdiff_hits[k]++;
		if (reset) {
			x->file_reset = 1;
			x->pend[op->file] = 0;
			dt_cowlat_reset(&x->s->cow[op->file]);
			int r = dt_session_reset_file(x->s, op->file);
			if (r < 0)
				return r;
		}
		dt_div_free(d);
		rc = DV_NONE;
	}

	double dt = now() - t0;
	if (op->kind < DT_NKINDS)
		x->kind_sec[op->kind] += dt;
	if (op->file < DT_MAXFILES)
		x->file_sec[op->file] += dt;
	return rc;
}

/* ext4: 4 extents fit in the inode (i_block), an index or leaf block of
 * 4 KiB holds (4096 - 12) / 12 = 340 entries (ext4_ext_space_block()):
 * depth 0 up to 4 extents, 1 up to 4*340, 2 up to 4*340^2.  This is a lower
 * bound estimated from the FIEMAP extent count (splits leave blocks half
 * full, so the real tree can be deeper); debugfs is not in the guest. */
int dt_ext4_depth_est(int64_t extents)
{
	int d = 0;
	int64_t cap = 4;

	while (extents > cap && d < 5) {
		cap *= 340;
		d++;
	}
	return d;
}

/* XFS v5, 512-byte inodes: the data fork's literal area holds
 * (512 - 176) / 16 = 21 extent records (XFS_IFORK_MAXEXT) in extents
 * format; beyond that the fork is a btree whose in-inode root holds
 * (336 - 4) / 16 = 20 keys/ptrs and whose 4 KiB leaves hold
 * (4096 - 72) / 16 = 251 records (xfs_bmbt_maxrecs()).  Levels: 1 = root
 * with leaves, 2 with one interior level.  Again an estimate (lower
 * bound) from the extent count. */
int dt_xfs_levels_est(int64_t extents, int *btree)
{
	if (extents <= 21) {
		*btree = 0;
		return 0;
	}
	*btree = 1;
	int lv = 1;
	int64_t cap = 20 * 251;
	while (extents > cap && lv < 5) {
		cap *= 252;
		lv++;
	}
	return lv;
}
