/* SPDX-License-Identifier: MIT */
/*
 * gen.c - the operation generator: deterministic from the seed (splitmix64,
 * no global state), a weighted mix of kinds, and offsets/lengths biased to
 * where file systems get things wrong: block edges, EOF, the boundaries of
 * the extents that exist now (read from the model with rm_walk), tiny and
 * huge lengths, s_maxbytes, ext4's 2^32-block edge, negative values.
 *
 * To reach deep extent trees (ext4 index levels beyond 4 in-inode and 340
 * per-block extents, XFS btree-format forks beyond ~21 in-inode extents)
 * files have personalities: one file per session (chosen from the seed) is
 * a "fragmenter" whose ops are mostly block-sized writes, unwritten
 * allocations, punches, inserts and collapses at scattered block offsets
 * and at run boundaries (frag_next()), so it reaches thousands of extents
 * (ext4 depth 2, XFS multi-level bmbt) within a CI-sized run; the others
 * do the general mix, and now and then enter a "stripe" phase in which
 * most of their ops touch single blocks on a 2-block grid.  A file is truncated to 0 (a "reset") when it gets too big or too
 * fragmented, which also bounds the work of shrinking a divergence: ops
 * before the last reset of a file cannot matter to it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "optab.h"

uint64_t dt_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t rnd(struct dt_gen *g, uint64_t n)	/* [0, n) */
{
	return n ? dt_rand(&g->rng) % n : 0;
}

static int chance(struct dt_gen *g, unsigned pct)
{
	return rnd(g, 100) < pct;
}

void dt_weights_default(unsigned *w)
{
	static const unsigned def[DT_NKINDS] = {
		[DT_PWRITE] = 200, [DT_PREAD] = 60, [DT_MWRITE] = 40,
		[DT_MREAD] = 30, [DT_TRUNCATE] = 50, [DT_FALLOC] = 50,
		[DT_FALLOC_KEEP] = 40, [DT_PUNCH] = 60, [DT_ZERO] = 40,
		[DT_ZERO_KEEP] = 30, [DT_INSERT] = 80, [DT_COLLAPSE] = 80,
		[DT_UNSHARE] = 5, [DT_FMODE] = 20, [DT_FSYNC] = 30,
		[DT_REOPEN] = 10, [DT_DROP] = 5, [DT_REMOUNT] = 1,
		/* reflink is opt-in (--weights reflink=15; the mutation
		 * campaign's default): the model's latitude for CoW staging
		 * over holes (cowlat.c) has run 1e5 ops clean, not yet 1e6 */
		[DT_SEEK_DATA] = 30, [DT_SEEK_HOLE] = 30, [DT_REFLINK] = 0,
		/* fsx's other ops, small: direct I/O, copy_file_range and
		 * FIDEDUPERANGE ran clean by default in the 6.1 and 6.12
		 * guests once the model copied XFS's direct write at 2^63
		 * (refmodel/ERRATA.md); heavier with --weights dio_write=40,... */
		[DT_DIO_WRITE] = 10, [DT_DIO_READ] = 10, [DT_COPY_RANGE] = 5, [DT_DEDUPE] = 5,
	};
	memcpy(w, def, sizeof(def));
}

/* The write-back points' weights when the checks do not write back
 * (without --map-sync): they decide how long dirty pages, delayed
 * allocations and CoW staging live.  With --map-sync every map check
 * writes back anyway, and the defaults above (fdatasync, sync_range and
 * fiemap_sync 0) keep the op stream of a seed what it was before these
 * kinds existed. */
void dt_weights_writeback(unsigned *w)
{
	w[DT_FSYNC] = 8;
	w[DT_FDATASYNC] = 4;
	w[DT_SYNC_RANGE] = 6;
	w[DT_FIEMAP_SYNC] = 3;
}

int dt_weights_parse(unsigned *w, const char *spec, char *err, size_t errn)
{
	unsigned tmp[DT_NKINDS];
	char *copy = strdup(spec), *save = NULL;

	if (!copy)
		return -ENOMEM;
	memcpy(tmp, w, sizeof(tmp));
	for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(p, '=');
		char *end;
		if (!eq) {
			snprintf(err, errn, "weight '%s' is not KIND=N", p);
			free(copy);
			return -EINVAL;
		}
		*eq = 0;
		unsigned long v = strtoul(eq + 1, &end, 10);
		if (*end || end == eq + 1 || v > 1000000) {
			snprintf(err, errn, "weight '%s': bad number '%s'", p, eq + 1);
			free(copy);
			return -EINVAL;
		}
		if (!strcmp(p, "all")) {
			for (int k = 0; k < DT_NKINDS; k++)
				if (!(dt_ops[k].flags & DT_OPF_NOGEN))
					tmp[k] = (unsigned)v;
			continue;
		}
		int k = dt_kind_parse(p);
		if (k < 0) {
			snprintf(err, errn, "unknown op kind '%s' in --weights (see --help)", p);
			free(copy);
			return -EINVAL;
		}
		if (dt_ops[k].flags & DT_OPF_NOGEN) {
			snprintf(err, errn, "op kind '%s' is never generated (the shrinker adds it)", p);
			free(copy);
			return -EINVAL;
		}
		tmp[k] = (unsigned)v;
	}
	free(copy);
	unsigned sum = 0;
	for (int k = 0; k < DT_NKINDS; k++)
		sum += tmp[k];
	if (!sum) {
		snprintf(err, errn, "all weights are zero");
		return -EINVAL;
	}
	memcpy(w, tmp, sizeof(tmp));
	return 0;
}

void dt_gen_init(struct dt_gen *g, uint64_t seed, int nfiles, uint32_t bs,
		 int64_t maxbytes)
{
	memset(g, 0, sizeof(*g));
	g->rng = seed ^ 0x6A09E667F3BCC909ull;
	dt_weights_default(g->weights);
	g->nfiles = nfiles;
	g->bs = bs;
	g->maxbytes = maxbytes;
	g->ws = 4 << 20;
	g->reset_extents = 8000;
	g->reset_bytes = 32 << 20;	/* bounds the full checks' reads */
	/* One fragmenter per session when there are other files to keep the
	 * general mix (which file: from the seed).  Span 64 MiB of 4 KiB
	 * blocks: 3000 scattered single-block extents fill ~20% of it, so most
	 * land between holes or next to an extent of the other state and stay
	 * separate extents; allocation stays ~12 MiB, bounding the full
	 * checks' reads (unwritten runs are only sampled). */
	g->frag_files = nfiles >= 2 ? 1 : 0;
	g->frag_span = (int64_t)16384 * bs;
	g->frag_pct = 90;
	g->frag_reset_extents = 7000;
	/* Bounding the deep tree's cost.  Per op, a file of thousands of
	 * extents costs several times a shallow one: XFS shifts one extent
	 * record per transaction (xfs_insert_file_space() loops over
	 * xfs_bmap_insert_extents()), ~27 us of TCG time per extent, and
	 * the map check after a shift reads every extent past the offset
	 * (~4 us each).  Measured, 20k ops x 3 targets: 177-182 s host wall
	 * with the fragmenter always deep, 95 s without one.  So the first
	 * cycle (the one every campaign detection so far lies inside)
	 * grows to frag_peak0 model runs
	 * (~3,500 FIEMAP extents: ext4 depth 2), then the file rests as a
	 * general file for frag_rest ops; each later cycle regrows it in
	 * ~frag_peak ops on the grid recipe (grow_next()), churns it with
	 * the full recipe for frag_churn ops at full depth, and rests it
	 * again: deep trees several times per 1e6 ops, cheap ops in between. */
	/* the end of the last block a file can map: ext4's s_maxbytes is
	 * EXT_MAX_BLOCKS blocks (ext4_max_size()), XFS's and FUSE's
	 * MAX_LFS_FILESIZE ends inside a block */
	g->limit = maxbytes & ~(int64_t)(bs - 1);
	g->frag_peak0 = 6000;
	g->frag_peak = 6000;
	g->frag_rest = 100000;
	g->frag_churn = 1500;
	if (g->frag_files)
		g->frag[dt_rand(&g->rng) % (uint64_t)nfiles] = 1;
}

struct bctx {
	int64_t b[6];
	int n;
};

static int bound_cb(void *ctx, const struct rm_run *r)
{
	struct bctx *c = ctx;

	c->b[c->n++] = r->off + r->len;
	return c->n >= 6;
}

/* An existing extent boundary near a random point (O(log n + 6)). */
static int64_t extent_boundary(struct dt_gen *g, const struct rm_file *f)
{
	int64_t end = rm_map_end(f);
	struct bctx c = { .n = 0 };

	if (end <= 0)
		return 0;
	int64_t p = (int64_t)rnd(g, (uint64_t)end) & ~(int64_t)(g->bs - 1);
	if (rm_walk(f, p, end, bound_cb, &c) < 0 || c.n == 0)
		return p;
	return c.b[rnd(g, (uint64_t)c.n)];
}

/* A run boundary near a random point, preferring one between two
 * allocated runs (no hole in between): shifting there moves an extent that
 * touches its neighbour, and with thousands of such extents some of these
 * boundaries are also the boundaries of extent-tree nodes (ext4 leaves of
 * 340 entries, XFS bmbt blocks), which the model cannot see. */
struct abctx {
	int64_t b[8];
	int adj[8];
	int n, prev;		/* prev: state of the previous run, -1 none */
};

static int adj_cb(void *ctx, const struct rm_run *r)
{
	struct abctx *c = ctx;

	if (c->prev >= 0) {
		c->b[c->n] = r->off;
		c->adj[c->n] = c->prev != RM_HOLE && r->state != RM_HOLE;
		c->n++;
	}
	c->prev = (int)r->state;
	return c->n >= 8;
}

static int64_t adjacent_boundary(struct dt_gen *g, const struct rm_file *f)
{
	int64_t end = rm_map_end(f);
	struct abctx c = { .n = 0, .prev = -1 };

	if (end <= 0)
		return 0;
	int64_t p = (int64_t)rnd(g, (uint64_t)end) & ~(int64_t)(g->bs - 1);
	if (rm_walk(f, p, end, adj_cb, &c) < 0 || c.n == 0)
		return p;
	int na = 0, pick[8];
	for (int k = 0; k < c.n; k++)
		if (c.adj[k])
			pick[na++] = k;
	return na ? c.b[pick[rnd(g, (uint64_t)na)]] : c.b[rnd(g, (uint64_t)c.n)];
}

static int nb_cb(void *ctx, const struct rm_run *r)
{
	*(unsigned *)ctx |= r->state;
	return 0;
}

/* States of the blocks just before and just after [off, off+len). */
static unsigned neighbour_states(const struct rm_file *f, int64_t off, int64_t len,
				 int64_t bs)
{
	unsigned st = 0;

	if (off >= bs)
		rm_walk(f, off - bs, off, nb_cb, &st);
	rm_walk(f, off + len, off + len + bs, nb_cb, &st);
	return st;
}

/* The fragmenter's recipe: block-sized ops at scattered block offsets.
 * Written (pwrite/mwrite) and unwritten (falloc -k, zero -k) single
 * blocks side by side never merge into one extent, holes (punch) split
 * them, and one-block inserts/collapses at run boundaries (or one block
 * before one) shift thousands of extents across tree-node boundaries.
 * Each recipe entry places its op (len is one block when it is called). */
static void frag_block(struct dt_gen *g, const struct rm_file *f, int64_t size, struct dt_op *op)
{
	int64_t bs = g->bs, nb = g->frag_span / bs;
	int k = op->kind;

	(void)size;
	op->off = (int64_t)rnd(g, (uint64_t)nb) * bs;
	if (chance(g, 10))
		op->len = (2 + (int64_t)rnd(g, 2)) * bs;
	/* a block next to one of the same state would merge with it:
	 * take the other state (written <-> unwritten) when enabled */
	if (chance(g, 90)) {
		unsigned nbst = neighbour_states(f, op->off, op->len, bs);
		int w = k == DT_PWRITE;
		int alt = w ? (chance(g, 80) ? DT_FALLOC_KEEP : DT_ZERO_KEEP) : DT_PWRITE;
		if ((nbst & (w ? RM_DATA : RM_UNWRITTEN)) &&
		    !(nbst & (w ? RM_UNWRITTEN : RM_DATA)) && g->weights[alt] &&
		    !(g->disabled & DT_KBIT(alt)))
			op->kind = (uint8_t)alt;
	}
}

static void frag_mwrite(struct dt_gen *g, const struct rm_file *f, int64_t size, struct dt_op *op)
{
	(void)f;
	/* inside EOF only (past it: SIGBUS) */
	op->off = (int64_t)rnd(g, (uint64_t)(size / g->bs)) * g->bs;
}

static void frag_punch(struct dt_gen *g, const struct rm_file *f, int64_t size, struct dt_op *op)
{
	(void)size;
	op->off = chance(g, 50) ? (int64_t)rnd(g, (uint64_t)(g->frag_span / g->bs)) * g->bs
				: adjacent_boundary(g, f);
}

static void frag_shift(struct dt_gen *g, const struct rm_file *f, int64_t size, struct dt_op *op)
{
	int64_t bs = g->bs, sb = size / bs;
	uint64_t r = rnd(g, 100);

	if (r < 45)
		op->off = adjacent_boundary(g, f);
	else if (r < 70)
		op->off = adjacent_boundary(g, f) - bs;
	else
		op->off = (int64_t)rnd(g, (uint64_t)sb) * bs;
	if (op->off < 0)
		op->off = 0;
	if (chance(g, 20))
		op->len = (2 + (int64_t)rnd(g, 3)) * bs;
	/* mostly valid: inside the file (collapse must end before EOF) */
	if (dt_ops[op->kind].shift > 0 && op->off >= size)
		op->off = (sb - 1) * bs;
	if (dt_ops[op->kind].shift < 0 && op->off + op->len >= size) {
		op->len = bs;
		op->off = (sb - 2) * bs;
	}
}

static void frag_pread(struct dt_gen *g, const struct rm_file *f, int64_t size, struct dt_op *op)
{
	int64_t bs = g->bs;

	(void)f;
	op->off = (int64_t)rnd(g, (uint64_t)(size / bs + 1)) * bs;
	op->len = (1 + (int64_t)rnd(g, 4)) * bs;
}

static void frag_seek(struct dt_gen *g, const struct rm_file *f, int64_t size, struct dt_op *op)
{
	(void)f;
	op->off = (int64_t)rnd(g, (uint64_t)(size / g->bs + 1)) * g->bs;
}

static const struct frag_step {
	uint8_t k, w;
	void (*place)(struct dt_gen *g, const struct rm_file *f, int64_t size, struct dt_op *op);
} recipe[] = {
	{ DT_PWRITE, 30, frag_block },	/* first: the fallback (frag_next()) */
	{ DT_FALLOC_KEEP, 18, frag_block }, { DT_ZERO_KEEP, 5, frag_block },
	{ DT_MWRITE, 4, frag_mwrite }, { DT_PUNCH, 9, frag_punch },
	{ DT_INSERT, 14, frag_shift }, { DT_COLLAPSE, 9, frag_shift },
	{ DT_PREAD, 4, frag_pread }, { DT_SEEK_DATA, 2, frag_seek },
	{ DT_SEEK_HOLE, 2, frag_seek }, { DT_FSYNC, 1, NULL },
};
#define NRECIPE ((int)(sizeof(recipe) / sizeof(recipe[0])))

static int kind_on(const struct dt_gen *g, int k)
{
	return g->weights[k] && !(g->disabled & DT_KBIT(k));
}

/* A recipe step by weight; kinds whose weight is 0 or that the target
 * cannot do are skipped, so --weights still rules.  -1: none enabled. */
static int frag_pick(struct dt_gen *g)
{
	unsigned sum = 0;

	for (int r = 0; r < NRECIPE; r++)
		if (kind_on(g, recipe[r].k))
			sum += recipe[r].w;
	if (!sum || g->frag_span / g->bs < 1)
		return -1;
	uint64_t x = rnd(g, sum);
	for (int r = 0; r < NRECIPE; r++) {
		if (!kind_on(g, recipe[r].k))
			continue;
		if (x < recipe[r].w)
			return r;
		x -= recipe[r].w;
	}
	return 0;
}

/* The fragmenter's next op.  Returns 0 if no recipe kind is enabled. */
static int frag_next(struct dt_gen *g, const struct rm_file *f, int64_t size,
		     struct dt_op *op)
{
	int r = frag_pick(g);

	if (r < 0)
		return 0;
	/* shifts and mapped I/O need a file to work in: grow it first */
	if ((recipe[r].k == DT_INSERT || recipe[r].k == DT_COLLAPSE ||
	     recipe[r].k == DT_MWRITE) && size / g->bs < 4) {
		if (!kind_on(g, DT_PWRITE))
			return 0;
		r = 0;
	}
	op->kind = recipe[r].k;
	op->len = g->bs;
	if (recipe[r].place)
		recipe[r].place(g, f, size, op);
	return 1;
}

/* Regrowing a fragmenter (FRAG_GROW): one block at a random place of its
 * span, written if the block number is even, unwritten (falloc -k, zero
 * -k) if odd, so no two neighbours share a state and every op on a new
 * block adds an extent: ~1 extent per op, where the full recipe's
 * shifts, punches and merges hold its net growth near 0.1 per op.
 * Returns 0 if the kind is disabled (the caller falls back). */
static int grow_next(struct dt_gen *g, int64_t size, struct dt_op *op)
{
	int64_t bs = g->bs, nb = g->frag_span / bs;
	int64_t b = (int64_t)rnd(g, (uint64_t)nb);
	int k = (b & 1) ? (chance(g, 20) ? DT_ZERO_KEEP : DT_FALLOC_KEEP)
			: (b * bs < size && chance(g, 10) ? DT_MWRITE : DT_PWRITE);

	if (!kind_on(g, k))
		return 0;
	op->kind = (uint8_t)k;
	op->off = b * bs;
	op->len = bs;
	return 1;
}

static int64_t limit_value(struct dt_gen *g)
{
	int64_t bs = g->bs, mb = g->maxbytes;
	int64_t e32 = ((int64_t)1 << 32) * bs;	/* ext4: EXT_MAX_BLOCKS edge */
	switch (rnd(g, 12)) {
	case 0: return mb;
	case 1: return mb - 1;
	case 2: return mb - bs;
	case 3: return (mb - (int64_t)rnd(g, 8) * bs) & ~(bs - 1);
	case 4: return e32 - bs;
	case 5: return e32 - 2 * bs;
	case 6: return INT64_MAX;
	case 7: return -1;
	case 8: return -bs;
	case 9: return ((int64_t)1 << 32) - (int64_t)rnd(g, 2) * bs;
	case 10: return ((int64_t)1 << 31);
	default: return rm_sat_add(mb, bs);
	}
}

static int64_t pick_off(struct dt_gen *g, const struct rm_file *f, int64_t size)
{
	int64_t bs = g->bs;
	int64_t span = size > g->ws ? size : g->ws;
	int cf = g->cur_file;

	/* no draw at all without --locality: the default stream stays as it was */
	if (g->locality && g->nrecent[cf] && rnd(g, 100) < g->locality) {
		int64_t o = g->recent[cf][rnd(g, g->nrecent[cf])];
		switch (rnd(g, 4)) {
		case 0: o = rm_sat_add(o, bs); break;
		case 1: o -= bs; break;
		default: break;
		}
		return o < 0 ? 0 : o;
	}

	switch (rnd(g, 100)) {
	case 0 ... 29:	/* a block edge in the working range */
		return (int64_t)rnd(g, (uint64_t)(span / bs) + 1) * bs;
	case 30 ... 44: {	/* around EOF */
		int64_t d = (int64_t)rnd(g, 3) * bs + (chance(g, 30) ? (int64_t)rnd(g, 9) - 4 : 0);
		int64_t o = chance(g, 50) ? rm_sat_add(size, d) : rm_sat_add(size, -d);
		return o < 0 ? 0 : o;
	}
	case 45 ... 64: {	/* an existing extent boundary, +- a little */
		int64_t o = extent_boundary(g, f);
		if (chance(g, 20))
			o = rm_sat_add(o, chance(g, 50) ? bs : -bs);
		if (chance(g, 10))
			o = rm_sat_add(o, (int64_t)rnd(g, 3) - 1);
		return o < 0 ? 0 : o;
	}
	case 65 ... 84:	/* anywhere, unaligned */
		return (int64_t)rnd(g, (uint64_t)span + 1);
	case 85 ... 97:	/* small offsets: the first blocks are busy */
		return (int64_t)rnd(g, 4 * (uint64_t)bs);
	default:
		return limit_value(g);
	}
}

static int64_t pick_len(struct dt_gen *g, int64_t off, int64_t size, int io)
{
	int64_t bs = g->bs;

	switch (rnd(g, 100)) {
	case 0 ... 14: return 1 + (int64_t)rnd(g, 16);
	case 15 ... 49: return (1 + (int64_t)rnd(g, 8)) * bs;
	case 50 ... 69: return 1 + (int64_t)rnd(g, 65536);
	case 70 ... 79: return (1 + (int64_t)rnd(g, 64)) * bs;
	case 80 ... 87: /* to EOF */
		return size - off > 0 ? size - off : bs;
	case 88 ... 89: return 1 + (int64_t)rnd(g, DT_MAX_IO);
	case 90 ... 92: return 1 + (int64_t)rnd(g, 3 * (uint64_t)bs);
	case 93 ... 94: return 0;
	default:
		if (io)
			return (int64_t)rnd(g, 2) * bs + 1 + (int64_t)rnd(g, bs);
		/* huge and weird: only for calls that allocate nothing much or
		 * fail (the exec caps what would really allocate) */
		switch (rnd(g, 6)) {
		case 0: return -bs;
		case 1: return g->maxbytes - (off > 0 ? off : 0);
		case 2: return INT64_MAX;
		case 3: return ((int64_t)1 << 40);
		case 4: return (g->maxbytes - size) & ~(bs - 1);
		default: return ((int64_t)1 << 32) * bs - (off > 0 ? off : 0);
		}
	}
}

static int pick_kind(struct dt_gen *g)
{
	uint64_t sum = 0;

	for (int k = 0; k < DT_NKINDS; k++)
		if (!(g->disabled & DT_KBIT(k)))
			sum += g->weights[k];
	if (!sum)
		return DT_PREAD;
	uint64_t r = rnd(g, sum);
	for (int k = 0; k < DT_NKINDS; k++) {
		if (g->disabled & DT_KBIT(k))
			continue;
		if (r < g->weights[k])
			return k;
		r -= g->weights[k];
	}
	return DT_PREAD;
}

/* Invalid (and a few valid) fallocate mode words: vfs_fallocate() checks
 * them in order, so each exercises one rule. */
static int32_t pick_fmode(struct dt_gen *g)
{
	static const int32_t modes[] = {
		RM_FALLOC_FL_PUNCH_HOLE,			/* needs KEEP_SIZE */
		RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_ZERO_RANGE | RM_FALLOC_FL_KEEP_SIZE,
		RM_FALLOC_FL_COLLAPSE_RANGE | RM_FALLOC_FL_KEEP_SIZE,
		RM_FALLOC_FL_INSERT_RANGE | RM_FALLOC_FL_KEEP_SIZE,
		RM_FALLOC_FL_INSERT_RANGE | RM_FALLOC_FL_COLLAPSE_RANGE,
		RM_FALLOC_FL_ZERO_RANGE | RM_FALLOC_FL_COLLAPSE_RANGE,
		RM_FALLOC_FL_NO_HIDE_STALE,
		RM_FALLOC_FL_NO_HIDE_STALE | RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE,
		RM_FALLOC_FL_UNSHARE_RANGE | RM_FALLOC_FL_KEEP_SIZE,
		RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_COLLAPSE_RANGE,
		0x80, 0x100, -1,
	};
	return modes[rnd(g, sizeof(modes) / sizeof(modes[0]))];
}

/* What the per-kind generators (dt_ops[].gen) see of the op being made. */
struct dt_genctx {
	struct dt_gen *g;
	struct rm_file *const *models;
	const struct rm_file *f;	/* the op's file */
	int64_t size;			/* its size */
	int frag;			/* it is a fragmenter, not resting */
	int ph;				/* its phase (FRAG_*) */
	int nl, idx[DT_MAXFILES];	/* the live files */
};

void dt_gen_io(struct dt_genctx *c, struct dt_op *op)
{
	struct dt_gen *g = c->g;
	int64_t bs = g->bs;

	op->off = pick_off(g, c->f, c->size);
	op->len = pick_len(g, op->off, c->size, 1);
	if (op->off > g->maxbytes - 2 * bs && op->len > 2 * bs)
		op->len = 2 * bs;
	if (op->len > DT_MAX_IO)
		op->len = DT_MAX_IO;
	if (op->len < 0)
		op->len = 1;
}

/* Mapped I/O stays inside EOF (past it a page fault is SIGBUS); in an
 * empty file it becomes `plain` (pwrite or pread). */
static void gen_mapped(struct dt_genctx *c, struct dt_op *op, int plain)
{
	struct dt_gen *g = c->g;
	int64_t size = c->size;

	if (size == 0) {
		op->kind = (uint8_t)plain;
		op->off = 0;
		op->len = 1 + (int64_t)rnd(g, 2 * (uint64_t)g->bs);
		return;
	}
	op->off = (int64_t)rnd(g, (uint64_t)size);
	if (chance(g, 40))
		op->off &= ~(int64_t)(g->bs - 1);
	op->len = 1 + (int64_t)rnd(g, (uint64_t)(size - op->off));
	if (op->len > 256 * 1024)
		op->len = 256 * 1024;
}

void dt_gen_mwrite(struct dt_genctx *c, struct dt_op *op)
{
	gen_mapped(c, op, DT_PWRITE);
}

void dt_gen_mread(struct dt_genctx *c, struct dt_op *op)
{
	gen_mapped(c, op, DT_PREAD);
}

void dt_gen_truncate(struct dt_genctx *c, struct dt_op *op)
{
	struct dt_gen *g = c->g;
	int64_t bs = g->bs;

	if (c->frag) {
		/* a fragmenter's general ops must not throw its tree away:
		 * move EOF by a few blocks at most */
		op->off = rm_sat_add(c->size & ~(bs - 1), ((int64_t)rnd(g, 5) - 2) * bs);
		if (op->off < 0)
			op->off = 0;
		return;
	}
	switch (rnd(g, 10)) {
	case 0: op->off = 0; break;
	case 1: op->off = limit_value(g); break;
	case 2 ... 4: op->off = rm_sat_add(extent_boundary(g, c->f), (int64_t)rnd(g, 3) - 1); break;
	default: op->off = pick_off(g, c->f, c->size);
	}
}

void dt_gen_shift(struct dt_genctx *c, struct dt_op *op)
{
	struct dt_gen *g = c->g;
	int64_t bs = g->bs, size = c->size;
	int sh = dt_ops[op->kind].shift;

	if (chance(g, 75) && size > bs) {
		/* mostly valid: aligned, inside the file */
		int64_t nb = size / bs;
		op->off = (int64_t)rnd(g, (uint64_t)nb) * bs;
		if (chance(g, 40))
			op->off = extent_boundary(g, c->f) & ~(bs - 1);
		int64_t room = sh < 0 ? nb - op->off / bs - 1 : 16;
		if (room < 1)
			room = 1;
		op->len = (1 + (int64_t)rnd(g, (uint64_t)(room < 64 ? room : 64))) * bs;
		if (sh > 0 && chance(g, 3))
			op->len = rm_sat_add(g->maxbytes - size, (int64_t)rnd(g, 3) * bs - bs) & ~(bs - 1);
		return;
	}
	op->off = pick_off(g, c->f, size);
	op->len = pick_len(g, op->off, size, 0);
}

void dt_gen_falloc(struct dt_genctx *c, struct dt_op *op)
{
	struct dt_gen *g = c->g;

	op->off = pick_off(g, c->f, c->size);
	op->len = pick_len(g, op->off, c->size, 0);
	/* the model knows no ENOSPC: keep calls that would really allocate
	 * to a size the test file systems hold (failing calls stay wild) */
	if ((dt_ops[op->kind].flags & DT_OPF_ALLOC) && op->off >= 0 && op->len > (8 << 20) &&
	    op->len <= g->maxbytes - op->off)
		op->len = 8 << 20;
}

void dt_gen_fmode(struct dt_genctx *c, struct dt_op *op)
{
	op->mode = pick_fmode(c->g);
	dt_gen_falloc(c, op);
}

void dt_gen_seek(struct dt_genctx *c, struct dt_op *op)
{
	op->off = chance(c->g, 90) ? pick_off(c->g, c->f, c->size) : limit_value(c->g);
}

/* FICLONERANGE from a live file (now and then the same one): mostly valid
 * block-aligned ranges of the source, a length ending at its EOF or 0 ("to
 * EOF"), landing in or just past the destination; sometimes an errno edge
 * of generic_remap_checks() (unaligned, past EOF, overlap). */
void dt_gen_reflink(struct dt_genctx *c, struct dt_op *op)
{
	struct dt_gen *g = c->g;
	int64_t bs = g->bs;

	op->src = (uint8_t)(c->nl ? c->idx[rnd(g, (uint64_t)c->nl)] : op->file);
	int64_t ss = rm_size(c->models[op->src]), sb = ss / bs;
	op->soff = (int64_t)rnd(g, (uint64_t)sb + 1) * bs;
	op->len = (1 + (int64_t)rnd(g, 16)) * bs;
	if (op->soff + op->len >= ss || chance(g, 15))
		op->len = ss > op->soff ? ss - op->soff : bs;
	op->off = (int64_t)rnd(g, (uint64_t)(c->size / bs) + 5) * bs;
	switch (rnd(g, 20)) {
	case 0: op->len = 0; break;
	case 1: op->soff += 1 + (int64_t)rnd(g, (uint64_t)bs - 1); break;
	case 2: op->off += 512; break;
	case 3: op->len += 1 + (int64_t)rnd(g, (uint64_t)bs - 1); break;
	case 4: op->off = limit_value(g) & ~(bs - 1); break;
	case 5: op->src = op->file; op->off = op->soff; break;	/* overlap */
	default: break;
	}
}

/* sync_file_range: one flag an op (WAIT_BEFORE, WRITE or WAIT_AFTER),
 * over ranges like any other op's, errno edges included (a negative or
 * overflowing range is EINVAL).  One flag because that is all xfs_io 6.1
 * passes (sync_range_f() keeps the last of -a -b -w), and a reproducer
 * must mean what ran.  The combined sets lose nothing: sync_file_range()
 * (fs/sync.c) checks the range before acting, then waits (WAIT_BEFORE),
 * writes (WRITE) and waits (WAIT_AFTER) in that order, so consecutive
 * one-flag ops over one range are the combined call.  The one difference,
 * WB_SYNC_ALL for all three against WB_SYNC_NONE for WRITE alone, is
 * about folios already under write-back, and WAIT_BEFORE has just waited
 * for those (the model's fn_write() likewise). */
void dt_gen_sync_range(struct dt_genctx *c, struct dt_op *op)
{
	struct dt_gen *g = c->g;

	op->mode = (int32_t)(DT_SR_WAIT_BEFORE << rnd(g, 3));	/* 1, 2 or 4 */
	op->off = pick_off(g, c->f, c->size);
	op->len = pick_len(g, op->off, c->size, 0);
}

/* FIEMAP_FLAG_SYNC as an op: a range FIEMAP accepts (offset in
 * [0, s_maxbytes), length >= 1), mostly inside the file. */
/* fchmod to a mode that keeps the owner's rw (so the owner can always open
 * the file again, as repro.sh's xfs_io must), with or without the set-ID
 * bits and group execute; for --user runs (RULES.md P6). */
void dt_gen_chmod(struct dt_genctx *c, struct dt_op *op)
{
	static const int64_t modes[] = { 06666, 06676, 04666, 02666, 02676, 02670,
					 0666, 0676, 0644, 0600, 06600, 04600 };

	op->off = modes[rnd(c->g, sizeof(modes) / sizeof(modes[0]))];
	op->len = 0;
}

void dt_gen_fiemap_sync(struct dt_genctx *c, struct dt_op *op)
{
	struct dt_gen *g = c->g;

	op->off = pick_off(g, c->f, c->size);
	if (op->off < 0 || op->off >= g->maxbytes)
		op->off = 0;
	op->len = chance(g, 30) ? rm_sat_add(c->size, g->bs) - op->off
				: pick_len(g, op->off, c->size, 1);
	if (op->len < 1)
		op->len = g->bs;
}

/* O_DIRECT pwrite/pread: mostly block-aligned (the writes that allocate,
 * convert and extend), then sector-aligned sub-block I/O (XFS's
 * unaligned path, iomap's zeroing around it), then misaligned ones
 * (EINVAL, RULES.md O2-O4).  A misaligned write always has a misaligned
 * start: ext4 then fails at its first mapping, which the model knows (O3).
 * Offsets mostly in the file's working range. */
void dt_gen_dio(struct dt_genctx *c, struct dt_op *op)
{
	struct dt_gen *g = c->g;
	int64_t bs = g->bs, sect = 512;

	op->off = pick_off(g, c->f, c->size);
	switch (rnd(g, 20)) {
	case 0 ... 11:
		op->off &= ~(bs - 1);
		op->len = (1 + (int64_t)rnd(g, 16)) * bs;
		break;
	case 12 ... 15:
		op->off &= ~(sect - 1);
		op->len = (1 + (int64_t)rnd(g, 24)) * sect;
		break;
	case 16 ... 17:	/* misaligned start */
		op->off = (op->off & ~(sect - 1)) + 1 + (int64_t)rnd(g, (uint64_t)sect - 1);
		op->len = 1 + (int64_t)rnd(g, 16 * (uint64_t)bs);
		break;
	case 18:	/* aligned start, misaligned length: reads only (see above) */
		op->off &= ~(bs - 1);
		op->len = 1 + (int64_t)rnd(g, 16 * (uint64_t)bs);
		if (op->kind == DT_DIO_WRITE)
			op->off += 1 + (int64_t)rnd(g, (uint64_t)sect - 1);
		break;
	default:	/* to EOF and past it */
		op->off &= ~(sect - 1);
		op->len = rm_sat_add(c->size, 2 * bs) - op->off;
		if (op->len <= 0)
			op->len = bs;
		op->len = (op->len + sect - 1) & ~(sect - 1);
	}
	if (op->off < 0)
		op->off = 0;
	if (op->len > DT_MAX_IO)
		op->len = DT_MAX_IO;
}

/* copy_file_range from a live file (now and then the same one): as a
 * reflink's ranges (block-aligned, XFS clones them, X2), with unaligned
 * offsets and lengths (the page-cache copy, X3) and the errno edges
 * (overlap, past the source EOF, s_maxbytes).  Lengths stay below 4 MiB:
 * the model copies every byte. */
void dt_gen_copy_range(struct dt_genctx *c, struct dt_op *op)
{
	struct dt_gen *g = c->g;
	int64_t bs = g->bs;

	dt_gen_reflink(c, op);
	switch (rnd(g, 10)) {
	case 0 ... 1: op->soff += (int64_t)rnd(g, (uint64_t)bs); break;
	case 2 ... 3: op->off += (int64_t)rnd(g, (uint64_t)bs); break;
	case 4: op->len += (int64_t)rnd(g, (uint64_t)bs); break;
	case 5: op->len = 1 + (int64_t)rnd(g, 3 * (uint64_t)bs); break;
	default: break;
	}
	if (op->len > (4 << 20))
		op->len = 4 << 20;
}

/* FIDEDUPERANGE from a live file: ranges that often hold the same bytes
 * (the same offsets of another file, where both are often holes or
 * copies), block-aligned inside both files, with the errno edges. */
void dt_gen_dedupe(struct dt_genctx *c, struct dt_op *op)
{
	struct dt_gen *g = c->g;
	int64_t bs = g->bs;

	dt_gen_reflink(c, op);
	if (chance(g, 50))
		op->off = op->soff;
	if (chance(g, 50)) {	/* inside the destination's EOF */
		int64_t room = c->size - op->off;
		if (room > 0 && op->len > room)
			op->len = chance(g, 50) ? room : room & ~(bs - 1);
	}
	if (op->len > (4 << 20))
		op->len = 4 << 20;
}

/* The op's file: a live one, and the fragmenter for ~40% of the ops (its
 * tree grows in a CI-sized run); the other files share the rest evenly.
 * Also ends resting fragmenters' rests. */
static void pick_file(struct dt_gen *g, const int *live, struct dt_genctx *c, struct dt_op *op)
{
	c->nl = 0;
	for (int i = 0; i < g->nfiles; i++) {
		if (live[i])
			c->idx[c->nl++] = i;
		/* a resting fragmenter's rest ends: regrow it */
		if (g->frag[i] && g->frag_phase[i] == FRAG_REST &&
		    g->nops >= (uint64_t)g->frag_left[i])
			g->frag_phase[i] = FRAG_GROW;
	}
	memset(op, 0, sizeof(*op));
	op->pat = (uint8_t)(1 + rnd(g, 255));
	op->file = (uint8_t)(c->nl ? c->idx[rnd(g, (uint64_t)c->nl)] : 0);
	if (c->nl > 1 && g->frag_files) {
		int fi = -1;
		for (int k = 0; k < c->nl; k++)
			if (g->frag[c->idx[k]] && g->frag_phase[c->idx[k]] != FRAG_REST)
				fi = c->idx[k];
		/* P = p + (1 - p) / nl = 40%: p = (40 nl - 100) / (nl - 1) % */
		if (fi >= 0 && c->nl > 2 &&
		    chance(g, (unsigned)(40 * c->nl - 100) / (unsigned)(c->nl - 1)))
			op->file = (uint8_t)fi;
	}
}

/* Reset (truncate to 0) a file that grew too big or too fragmented, a
 * fragmenter whose cycle ends, and now and then any file: 1 if op is that
 * reset.  Also moves a regrown fragmenter at its peak on to churning. */
static int reset_op(struct dt_genctx *c, struct dt_op *op)
{
	struct dt_gen *g = c->g;
	int fi = op->file;
	/* per op: rm_runs() and rm_alloc_bytes(), not rm_stats()'s O(n) walk */
	int64_t runs = (int64_t)rm_runs(c->f), alloc = rm_alloc_bytes(c->f);

	if (c->frag && c->ph == FRAG_GROW && runs > g->frag_peak) {
		g->frag_phase[fi] = FRAG_CHURN;
		g->frag_left[fi] = g->frag_churn;
		c->ph = FRAG_CHURN;
	}
	int cycle_end = c->frag && ((c->ph == FRAG_FIRST && runs > g->frag_peak0) ||
				    (c->ph == FRAG_CHURN && g->frag_left[fi] <= 0));
	if (!cycle_end &&
	    runs <= (c->frag ? g->frag_reset_extents : g->reset_extents) &&
	    alloc <= g->reset_bytes && (g->huge || c->size <= ((int64_t)1 << 40)) &&
	    rnd(g, 30000) != 0)
		return 0;
	op->kind = DT_TRUNCATE;
	op->off = 0;
	g->stripe_left[fi] = 0;
	/* a reset inside the first cycle (too many extents, too many bytes)
	 * keeps the cycle going; any other ends it: the file rests */
	if ((c->frag && c->ph != FRAG_FIRST) || cycle_end) {
		g->frag_phase[fi] = FRAG_REST;
		g->frag_left[fi] = (int64_t)(g->nops + (uint64_t)g->frag_rest);
	}
	return 1;
}

/* A fragmenter's own op (regrowing or the recipe): 1 if op is one. */
static int frag_op(struct dt_genctx *c, struct dt_op *op)
{
	struct dt_gen *g = c->g;

	if (!c->frag)
		return 0;
	if (c->ph == FRAG_GROW && chance(g, 90) && grow_next(g, c->size, op))
		return 1;
	if (chance(g, g->frag_pct) && frag_next(g, c->f, c->size, op)) {
		if (c->ph == FRAG_CHURN)
			g->frag_left[op->file]--;
		return 1;
	}
	return 0;
}

/* A general file's stripe phase: most ops touch single blocks on a
 * 2-block grid.  1 if op is one. */
static int stripe_op(struct dt_genctx *c, struct dt_op *op)
{
	static const int sk[] = { DT_PWRITE, DT_PWRITE, DT_FALLOC_KEEP,
				  DT_PUNCH, DT_ZERO, DT_PWRITE };
	struct dt_gen *g = c->g;
	int fi = op->file;

	if (!c->frag && g->stripe_left[fi] == 0 && rnd(g, 2000) == 0)
		g->stripe_left[fi] = 2000 + (int64_t)rnd(g, 8000);
	if (g->stripe_left[fi] <= 0)
		return 0;
	g->stripe_left[fi]--;
	if (!chance(g, 60))
		return 0;
	int k = sk[rnd(g, 6)];
	if (g->disabled & DT_KBIT(k))
		return 0;
	op->kind = (uint8_t)k;
	op->off = (int64_t)rnd(g, 2048) * 2 * g->bs;
	op->len = g->bs;
	return 1;
}

/* A fragmenter's general ops (of picked kind k) stay small where they hit
 * the file: one 1 MiB write or a punch to EOF would merge hundreds of its
 * extents (far and invalid offsets keep their lengths: errno paths) ...
 * nor grow it by terabytes (which would reset it, see reset_op()). */
static void frag_limits(struct dt_genctx *c, int k, struct dt_op *op)
{
	struct dt_gen *g = c->g;
	int64_t bs = g->bs, size = c->size;
	unsigned fl = dt_ops[k].flags;

	if (op->off >= 0 && op->off < size && op->len > 16 * bs && (fl & DT_OPF_TOUCH))
		op->len = 1 + (int64_t)rnd(g, 16 * (uint64_t)bs);
	if ((fl & DT_OPF_GROW) && op->off >= 0 && op->len > 0 && op->off < g->maxbytes &&
	    rm_sat_add(op->off, op->len) > 2 * (size > g->frag_span ? size : g->frag_span)) {
		op->off = (int64_t)rnd(g, (uint64_t)(size / bs) + 1) * bs;
		if (op->len > 16 * bs)
			op->len = (1 + (int64_t)rnd(g, 4)) * bs;
	}
}

/* --huge: an insert or collapse of a file that lives near the limit.
 * Inserts move everything past their offset up: near EOF, anywhere, at an
 * extent boundary; by a few blocks, by exactly what is left below
 * s_maxbytes (one block more: EFBIG, vfs_fallocate() / the file systems'
 * i_size + len check), or by what brings the last extent (post-EOF ones
 * included) to the limit (one block more: ext4_ext_shift_extents()'s
 * EXT_MAX_BLOCKS refusal).  Collapses take blocks below EOF away, so the
 * extents at the limit move down. */
static void huge_shift(struct dt_genctx *c, struct dt_op *op)
{
	struct dt_gen *g = c->g;
	int64_t bs = g->bs, size = c->size, nb = size / bs;

	switch (rnd(g, 3)) {
	case 0: op->off = (nb - 1 - (int64_t)rnd(g, 8)) * bs; break;
	case 1: op->off = (int64_t)rnd(g, (uint64_t)nb) * bs; break;
	default: op->off = extent_boundary(g, c->f) & ~(bs - 1);
	}
	if (op->off < 0)
		op->off = 0;
	if (op->kind == DT_COLLAPSE) {
		/* inside the file: offset + len < size (else EINVAL) */
		if (op->off >= (nb - 1) * bs)
			op->off = (nb - 2) * bs;
		int64_t room = nb - 1 - op->off / bs;
		if (op->off < 0 || room < 1) {
			op->off = 0;
			room = 1;
		}
		op->len = (1 + (int64_t)rnd(g, (uint64_t)(room < 16 ? room : 16))) * bs;
		return;
	}
	int64_t end = rm_map_end(c->f) > size ? rm_map_end(c->f) : size;
	int64_t slack = ((int64_t)rnd(g, 3) - 1) * bs;	/* -1, 0, +1 block */
	switch (rnd(g, 3)) {
	case 0: op->len = (1 + (int64_t)rnd(g, 16)) * bs; break;
	case 1: op->len = rm_sat_add((g->maxbytes - size) & ~(bs - 1), slack); break;
	default: op->len = rm_sat_add((g->limit - end) & ~(bs - 1), slack);
	}
	if (op->len < bs)
		op->len = bs;
}

/* --huge: an op within 64 blocks of the limit (g->limit), or a shift of
 * a file that already reaches near it; only kinds that place or move
 * extents, by their weights.  0 if none is enabled. */
static int huge_op(struct dt_genctx *c, struct dt_op *op)
{
	static const uint8_t hk[] = { DT_PWRITE, DT_FALLOC, DT_FALLOC_KEEP, DT_PUNCH,
				      DT_ZERO, DT_ZERO_KEEP, DT_INSERT, DT_COLLAPSE,
				      DT_TRUNCATE };
	struct dt_gen *g = c->g;
	int64_t bs = g->bs, L = g->limit;
	uint64_t sum = 0;

	for (size_t j = 0; j < sizeof(hk); j++)
		if (kind_on(g, hk[j]))
			sum += g->weights[hk[j]];
	if (!sum)
		return 0;
	uint64_t x = rnd(g, sum);
	size_t j = 0;
	while (!kind_on(g, hk[j]) || x >= g->weights[hk[j]]) {
		if (kind_on(g, hk[j]))
			x -= g->weights[hk[j]];
		j++;
	}
	op->kind = hk[j];
	/* a shift needs a file that reaches near the limit: place
	 * something there first (a write, else the kind picked) */
	if ((op->kind == DT_INSERT || op->kind == DT_COLLAPSE) && c->size >= L / 2 &&
	    c->size / bs >= 4) {
		huge_shift(c, op);
		return 1;
	}
	if ((op->kind == DT_INSERT || op->kind == DT_COLLAPSE) && kind_on(g, DT_PWRITE))
		op->kind = DT_PWRITE;
	int64_t near = L - (1 + (int64_t)rnd(g, 64)) * bs;
	if (op->kind == DT_TRUNCATE) {
		switch (rnd(g, 6)) {
		case 0: op->off = L; break;
		case 1: op->off = rm_sat_add(g->maxbytes, 1); break;	/* EFBIG/EINVAL */
		case 2: op->off = near + (int64_t)rnd(g, (uint64_t)bs); break;
		default: op->off = near;
		}
		return 1;
	}
	op->off = near;
	if (chance(g, 20))
		op->off += 1 + (int64_t)rnd(g, (uint64_t)bs - 1);
	op->len = chance(g, 70) ? (1 + (int64_t)rnd(g, 16)) * bs
				: 1 + (int64_t)rnd(g, 3 * (uint64_t)bs);
	/* to the limit, or a block across it (a short write at s_maxbytes,
	 * generic_write_check_limits(); EFBIG from vfs_fallocate()) */
	if (chance(g, 15))
		op->len = L - op->off + (chance(g, 50) ? bs : 0);
	if (op->kind == DT_INSERT || op->kind == DT_COLLAPSE) {	/* no pwrite: EINVAL edges */
		op->off &= ~(bs - 1);
		op->len = (op->len + bs - 1) & ~(bs - 1);
	}
	return 1;
}

static void gen_next(struct dt_gen *g, struct rm_file *const *models,
		     const int *live, struct dt_op *op)
{
	struct dt_genctx c = { .g = g, .models = models };

	g->nops++;
	pick_file(g, live, &c, op);
	c.f = models[op->file];
	c.size = rm_size(c.f);
	g->cur_file = op->file;
	c.frag = g->frag[op->file] && g->frag_phase[op->file] != FRAG_REST;
	c.ph = g->frag_phase[op->file];
	if (reset_op(&c, op) || frag_op(&c, op) || stripe_op(&c, op))
		return;
	/* no draw at all without --huge: the default stream stays as it was */
	if (g->huge && !c.frag && rnd(g, 100) < g->huge && huge_op(&c, op))
		return;
	int k = pick_kind(g);
	op->kind = (uint8_t)k;
	if (dt_ops[k].gen)
		dt_ops[k].gen(&c, op);
	if (c.frag)
		frag_limits(&c, k, op);
}

/* An offset folded into [0, flen): one past it comes back from 0 (flen is
 * a multiple of every block size, so a block-aligned offset stays one). */
static int64_t fold_off(int64_t v, int64_t flen)
{
	return v >= flen ? v % flen : v;
}

/* A length capped to n: to n's whole blocks when it was whole blocks
 * (the kind's alignment rules keep their meaning). */
static int64_t cap_len(int64_t len, int64_t n, int64_t bs)
{
	if (len <= n)
		return len;
	return len % bs == 0 && n >= bs ? n / bs * bs : n;
}

/* fsx's geometry (--flen, --oplen), after the op is drawn: offsets past
 * flen fold into the file's span, lengths are cut at oplen and at flen, an
 * insert grows the file to flen at most (fsx's rule too: what does not fit
 * is not inserted; here the insert keeps the room left, maybe 0, an
 * EINVAL).  Negative offsets and lengths stay: they are errno checks
 * that change nothing.  A truncate's size is at most flen. */
static void fit_geometry(struct dt_gen *g, struct rm_file *const *models, struct dt_op *op)
{
	const struct dt_opdesc *d = &dt_ops[op->kind];
	int64_t flen = g->flen, bs = g->bs;

	if (d->flags & DT_OPF_NOOFF)
		return;
	if (d->syntax == DT_SYN_OFF) {	/* truncate, seek: no length */
		if (flen && op->off > flen)
			op->off %= flen + 1;
		return;
	}
	if (op->off < 0 || op->len < 0)
		return;
	if (g->oplen)
		op->len = cap_len(op->len, g->oplen, bs);
	if (!flen)
		return;
	op->off = fold_off(op->off, flen);
	op->len = cap_len(op->len, flen - op->off, bs);
	if (d->syntax == DT_SYN_REFLINK && op->soff >= 0) {
		op->soff = fold_off(op->soff, flen);
		op->len = cap_len(op->len, flen - op->soff, bs);
		/* a clone of length 0 runs to the source's EOF */
		int64_t tail = rm_size(models[op->src]) - op->soff;
		if (op->kind == DT_REFLINK && op->len == 0 && tail > flen - op->off)
			op->len = (flen - op->off) / bs * bs;
	}
	if (op->kind == DT_INSERT) {
		int64_t room = flen - rm_size(models[op->file]);
		op->len = cap_len(op->len, room > 0 ? room / bs * bs : 0, bs);
	}
}

/* The next op, and (with --locality) its offsets kept for pick_off(). */
void dt_gen_next(struct dt_gen *g, struct rm_file *const *models,
		 const int *live, struct dt_op *op)
{
	gen_next(g, models, live, op);
	if (g->flen || g->oplen)
		fit_geometry(g, models, op);
	if (!g->locality || (dt_ops[op->kind].flags & DT_OPF_NOOFF) ||
	    op->off < 0 || op->off >= g->maxbytes)
		return;
	int f = op->file;
	int64_t v[2] = { op->off, op->len > 0 ? rm_sat_add(op->off, op->len) : -1 };
	for (int k = 0; k < 2; k++) {
		if (v[k] < 0 || v[k] >= g->maxbytes)
			continue;
		g->recent[f][g->recent_at[f]] = v[k];
		g->recent_at[f] = (uint8_t)((g->recent_at[f] + 1) % 8);
		if (g->nrecent[f] < 8)
			g->nrecent[f]++;
	}
}
