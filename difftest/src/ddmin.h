/* SPDX-License-Identifier: MIT */
/*
 * ddmin.h - delta debugging (Zeller and Hildebrandt's ddmin) over an op
 * sequence and a predicate, with nothing of difftest's targets in it: the
 * caller's predicate runs a candidate wherever it likes (fresh files of a
 * real file system, a synthetic rule in a unit test) and says whether it
 * still fails; the caller's candidate builder may rewrite the ops it keeps
 * (the shrinker moves them across dropped inserts and collapses,
 * shiftmap.c); budgets are the caller's too.
 */
#ifndef DIFFTEST_DDMIN_H
#define DIFFTEST_DDMIN_H

#include <stdint.h>
#include <sys/types.h>

#include "dt.h"

struct dt_ddmin {
	/* 1: ops[0..n) still fails, 0: it does not, < 0: -errno, stop.
	 * *need comes in as n; on 1 the predicate may lower it to say that
	 * ops[0..*need) suffice (the failure showed at op *need - 1).
	 * Contract: every candidate the predicate calls failing becomes the
	 * current sequence (its first *need ops), so a context may keep
	 * state about "the sequence that failed last" (the shrinker keeps
	 * which shifts took effect). */
	int (*still_fails)(void *ctx, const struct dt_op *ops, size_t n, size_t *need);
	/* The candidate of cur[0..n) keeping the ops j with keep[j] set:
	 * written to out (room for n ops), its length returned, or -errno.
	 * NULL: the kept ops, unchanged. */
	ssize_t (*candidate)(void *ctx, const struct dt_op *cur, size_t n,
			     const uint8_t *keep, struct dt_op *out);
	/* Nonzero while another test may run (the loop asks before each
	 * one; the first test and the final re-test always run).  NULL:
	 * no budget. */
	int (*budget_left)(void *ctx);
	void *ctx;
};

enum dt_ddmin_verdict {
	DT_DDMIN_FAILS,		/* the result failed when re-tested at the end */
	DT_DDMIN_NO_FAIL,	/* the input as given does not fail: unchanged */
	DT_DDMIN_FLAKY,		/* the result failed once and not when re-tested */
};

struct dt_ddmin_res {
	enum dt_ddmin_verdict verdict;
	int complete;		/* 1-minimal: no chunk could be removed */
	uint64_t tests;		/* predicate calls */
};

/* Minimise ops[0..*n) in place (a failing sequence the predicate
 * accepted, *n updated).  Returns 0 with the verdict in *r, or -errno
 * (-ENOMEM, or a callback's error: ops then hold the last failing
 * sequence, not re-tested). */
int dt_ddmin(const struct dt_ddmin *p, struct dt_op *ops, size_t *n, struct dt_ddmin_res *r);

#endif /* DIFFTEST_DDMIN_H */
