/* SPDX-License-Identifier: MIT */
/*
 * ddmin.c - delta debugging over an op sequence and a predicate (ddmin.h).
 *
 * The classic ddmin loop with two choices of difftest's: at each
 * granularity the complements (the sequence without one chunk) are tried
 * before the chunks alone, because dropping one chunk keeps most of the
 * history a file-system divergence needs; and a failing candidate may be
 * cut after the op where the failure showed.  A candidate that fails is
 * adopted at once (granularity down by one after a complement, back to 2
 * after a chunk).  The result is re-tested once at the end: a predicate
 * that fails a candidate once and passes it later (a flaky target) is
 * reported as flaky, never as a reproducer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ddmin.h"

struct dd_run {
	const struct dt_ddmin *p;
	struct dt_op *cur;	/* the current failing sequence (the caller's buffer) */
	size_t len;
	struct dt_op *cand;	/* room for len ops */
	uint8_t *keep;
	struct dt_ddmin_res *r;
};

static int test(struct dd_run *d, const struct dt_op *ops, size_t n, size_t *need)
{
	*need = n;
	d->r->tests++;
	int rc = d->p->still_fails(d->p->ctx, ops, n, need);
	if (rc > 0 && *need > n)
		*need = n;
	return rc;
}

static int budget_left(const struct dd_run *d)
{
	return !d->p->budget_left || d->p->budget_left(d->p->ctx);
}

/* The candidate from d->keep, into d->cand: its length or -errno. */
static ssize_t build(struct dd_run *d)
{
	if (d->p->candidate)
		return d->p->candidate(d->p->ctx, d->cur, d->len, d->keep, d->cand);
	size_t k = 0;
	for (size_t j = 0; j < d->len; j++)
		if (d->keep[j])
			d->cand[k++] = d->cur[j];
	return (ssize_t)k;
}

/* Test the current sequence without the ops [st, e) (complement) or with
 * only them: 1 if the candidate failed and is now current, 0 if not, or
 * -errno.  An empty candidate is not tested. */
static int try_chunk(struct dd_run *d, size_t st, size_t e, int complement)
{
	for (size_t j = 0; j < d->len; j++)
		d->keep[j] = complement ? (j < st || j >= e) : (j >= st && j < e);
	ssize_t k = build(d);
	if (k <= 0)
		return (int)k;
	size_t need;
	int rc = test(d, d->cand, (size_t)k, &need);
	if (rc <= 0)
		return rc;
	memcpy(d->cur, d->cand, need * sizeof(*d->cur));
	d->len = need;
	return 1;
}

/* One round at granularity *gran: 1 when a candidate was adopted (*gran
 * updated), 0 when none failed, or -errno; *scanned = 1 when every
 * candidate of the round was tested (the budget did not stop it). */
static int round_at(struct dd_run *d, size_t *gran, int *scanned)
{
	size_t len = d->len, chunk = (len + *gran - 1) / *gran;
	int rc;

	*scanned = 0;
	for (size_t st = 0; st < len; st += chunk) {
		if (!budget_left(d))
			return 0;
		if ((rc = try_chunk(d, st, st + chunk < len ? st + chunk : len, 1)) != 0) {
			if (rc > 0)
				*gran = *gran > 2 ? *gran - 1 : 2;
			return rc;
		}
	}
	for (size_t st = 0; st < len && *gran > 2; st += chunk) {
		if (!budget_left(d))
			return 0;
		if ((rc = try_chunk(d, st, st + chunk < len ? st + chunk : len, 0)) != 0) {
			if (rc > 0)
				*gran = 2;
			return rc;
		}
	}
	*scanned = 1;
	return 0;
}

/* The ddmin loop over d->cur, which fails: 0 or -errno. */
static int minimise(struct dd_run *d)
{
	size_t gran = 2;
	int scanned, rc;

	while (d->len >= 2 && budget_left(d)) {
		if ((rc = round_at(d, &gran, &scanned)) < 0)
			return rc;
		if (rc)
			continue;
		if (!scanned)
			break;
		if (gran >= d->len) {
			d->r->complete = 1;
			break;
		}
		gran = gran * 2 < d->len ? gran * 2 : d->len;
	}
	if (d->len < 2)
		d->r->complete = 1;
	return 0;
}

int dt_ddmin(const struct dt_ddmin *p, struct dt_op *ops, size_t *n, struct dt_ddmin_res *r)
{
	struct dd_run d = { .p = p, .cur = ops, .len = *n, .r = r };
	size_t need, room = *n ? *n : 1;
	int rc;

	memset(r, 0, sizeof(*r));
	/* it must fail as given, else there is nothing to minimise */
	if ((rc = test(&d, ops, *n, &need)) <= 0) {
		r->verdict = DT_DDMIN_NO_FAIL;
		return rc;
	}
	d.len = need;
	d.cand = malloc(room * sizeof(*d.cand));
	d.keep = malloc(room);
	rc = d.cand && d.keep ? minimise(&d) : -ENOMEM;
	free(d.cand);
	free(d.keep);
	*n = d.len;
	if (rc < 0)
		return rc;
	/* the result once more: a flake must not pass for a reproducer */
	if ((rc = test(&d, ops, d.len, &need)) < 0)
		return rc;
	if (rc > 0)
		*n = need;
	r->verdict = rc > 0 ? DT_DDMIN_FAILS : DT_DDMIN_FLAKY;
	return 0;
}
