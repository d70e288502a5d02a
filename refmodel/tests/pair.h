/* SPDX-License-Identifier: MIT */
/*
 * pair.h - the tree model (librefmodel) and the flat model (flatmodel.c)
 * side by side: one operation applied to both with the results compared,
 * and a comparison of everything either model lets a caller observe.
 * Shared by the seeded differential test (test_differential.c) and the
 * structure-aware fuzz harness (fuzz/fuzz_model.c), so that both hold the
 * models to the same standard.
 */
#ifndef RMTEST_PAIR_H
#define RMTEST_PAIR_H

#include <stdint.h>
#include <stdio.h>

#include "flatmodel.h"
#include "refmodel.h"

/* ---- small deterministic PRNG (splitmix64) ---- */

static inline uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct rng { uint64_t s; };

static inline uint64_t rnext(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ull;
	return mix64(r->s);
}

static inline int64_t rbelow(struct rng *r, int64_t n)
{
	return n <= 1 ? 0 : (int64_t)(rnext(r) % (uint64_t)n);
}

static inline int rpct(struct rng *r, int pct)
{
	return rbelow(r, 100) < pct;
}

/* Deterministic content of a write of n bytes. */
void fill_bytes(uint8_t *buf, size_t n, uint64_t seed);

/* ---- operations ---- */

enum opkind { OP_PWRITE, OP_PREAD, OP_TRUNC, OP_FSYNC, OP_FALLOC, OP_SEEK, OP_FIEMAP,
	      OP_WRITEBACK, OP_MWRITE };

struct op {
	enum opkind kind;
	int mode;		/* fallocate mode or lseek whence */
	int64_t off;
	int64_t len;		/* size for truncate */
	uint64_t dseed;		/* content of a write */
};

#define MAXBUF (1 << 20)	/* largest write/read actually performed */
#define MAXRUNS 65536
#define MAXEXT 4096

void print_op(FILE *out, size_t i, const struct op *o);

/* ---- the pair ---- */

struct pair {
	struct rm_file *t;	/* tree */
	struct fm_file f;	/* flat */
	struct rm_opts opts;
	uint8_t *b1, *b2;	/* scratch, MAXBUF each */
	struct rm_run *r1, *r2;
	struct rm_extent *e1, *e2;
	char why[1024];		/* first mismatch */
};

/* 0, or -1 (call pair_close() anyway). */
int pair_open(struct pair *p, const struct rm_opts *o);
void pair_close(struct pair *p);
/* Apply o to both models: 0 when they agree, -1 with p->why set.  A
 * pwrite or pread longer than MAXBUF must be one both refuse before
 * touching the buffer (negative length, or off + len wrapping). */
int pair_apply(struct pair *p, const struct op *o);
/* Compare everything observable (rm_check, size, bytes, block map,
 * FIEMAP, SEEK_DATA/SEEK_HOLE at offsets drawn from r, stats): 0 or -1
 * with p->why set. */
int pair_compare(struct pair *p, struct rng *r);
/* Would the flat model need more than its span for o to succeed?  Such
 * operations cannot be compared (invalid ones can). */
int pair_too_big(const struct pair *p, const struct op *o);

#endif
