/* SPDX-License-Identifier: MIT */
/*
 * test_gen.c - the op generator (cmocka): the same seed gives the same
 * sequence (and another seed another); every op stays within its limits
 * (live files, I/O lengths, mapped I/O inside EOF, a pattern byte);
 * weights rule the mix (zero weight: never picked; ratios as weighted);
 * kinds a target cannot do are never generated.  The model files evolve
 * with the ops (each kind's model hook), as they do in a run.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "optab.h"

struct run {
	struct rm_file *m[DT_MAXFILES];
	int live[DT_MAXFILES];
	int nfiles;
	unsigned char *buf;
	struct dt_gen g;
};

static void run_init(struct run *r, uint64_t seed, int nfiles)
{
	struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = 4096 };

	memset(r, 0, sizeof(*r));
	r->nfiles = nfiles;
	r->buf = malloc(DT_MAX_IO);
	assert_non_null(r->buf);
	for (int i = 0; i < nfiles; i++) {
		assert_int_equal(rm_file_new(&o, &r->m[i]), 0);
		r->live[i] = 1;
	}
	dt_gen_init(&r->g, seed, nfiles, 4096, rm_profile_maxbytes(RM_PROFILE_EXT4, 4096));
}

static void run_next(struct run *r, struct dt_op *op)
{
	dt_gen_next(&r->g, r->m, r->live, op);
	if (dt_ops[op->kind].model)
		dt_ops[op->kind].model(r->m, r->nfiles, op, r->buf);
}

static void run_fini(struct run *r)
{
	for (int i = 0; i < r->nfiles; i++)
		rm_file_free(r->m[i]);
	free(r->buf);
}

static void test_same_seed_same_ops(void **state)
{
	struct run a, b, c;
	int differ = 0;

	(void)state;
	run_init(&a, 5, 4);
	run_init(&b, 5, 4);
	run_init(&c, 6, 4);
	a.g.weights[DT_REFLINK] = b.g.weights[DT_REFLINK] = c.g.weights[DT_REFLINK] = 15;
	a.g.locality = b.g.locality = c.g.locality = 20;
	for (int k = 0; k < 5000; k++) {
		struct dt_op x, y, z;
		run_next(&a, &x);
		run_next(&b, &y);
		run_next(&c, &z);
		assert_memory_equal(&x, &y, sizeof(x));
		differ += !dt_op_equal(&x, &z);
	}
	assert_true(differ > 2500);
	run_fini(&a);
	run_fini(&b);
	run_fini(&c);
}

/* --huge: ops land within 64 blocks of the format's limit (ext4:
 * EXT_MAX_BLOCKS blocks; XFS: the block ending at 2^63), files keep
 * extents there (no reset for size), and inserts and collapses move
 * them: the model answers exactly there too (rm_check()). */
static void test_huge(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		enum rm_profile prof = p ? RM_PROFILE_XFS : RM_PROFILE_EXT4;
		struct rm_opts o = { .profile = prof, .blocksize = 4096 };
		struct run r;
		uint64_t near = 0, shifts_at_limit = 0, at_limit = 0;
		char msg[256];

		run_init(&r, 21, 4);
		for (int i = 0; i < r.nfiles; i++) {
			rm_file_free(r.m[i]);
			assert_int_equal(rm_file_new(&o, &r.m[i]), 0);
		}
		dt_gen_init(&r.g, 21, 4, 4096, rm_profile_maxbytes(prof, 4096));
		r.g.huge = 30;
		int64_t lim = r.g.limit, edge = lim - 64 * 4096;
		assert_true(lim == (p ? INT64_MAX - 4095 : ((int64_t)1 << 32) * 4096 - 4096));
		for (int k = 0; k < 20000; k++) {
			struct dt_op op;
			dt_gen_next(&r.g, r.m, r.live, &op);
			if (op.kind == DT_INSERT || op.kind == DT_COLLAPSE) {
				/* a shift of a file with an extent at the limit */
				shifts_at_limit += rm_map_end(r.m[op.file]) > edge;
			} else if (!(dt_ops[op.kind].flags & DT_OPF_GLOBAL)) {
				near += op.off >= edge && op.off <= lim;
			}
			if (dt_ops[op.kind].model)
				dt_ops[op.kind].model(r.m, r.nfiles, &op, r.buf);
			if (!(dt_ops[op.kind].flags & DT_OPF_GLOBAL)) {
				at_limit += rm_map_end(r.m[op.file]) > edge;
				assert_int_equal(rm_check(r.m[op.file], msg, sizeof(msg)), 0);
			}
		}
		/* 30% of the general files' ops, a part of them shifts */
		assert_true(near > 2000);
		assert_true(shifts_at_limit > 300);
		assert_true(at_limit > 5000);
		run_fini(&r);
	}
}

static void test_limits(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, 11, 4);
	r.g.weights[DT_REFLINK] = 15;
	r.live[2] = 0;			/* a file being replaced: never chosen */
	for (int k = 0; k < 20000; k++) {
		struct dt_op op;
		int64_t size = 0;
		dt_gen_next(&r.g, r.m, r.live, &op);
		assert_true(op.kind < DT_NKINDS);
		const struct dt_opdesc *od = &dt_ops[op.kind];
		if (!(od->flags & DT_OPF_GLOBAL)) {
			assert_true(op.file < r.nfiles);
			assert_true(r.live[op.file]);
			size = rm_size(r.m[op.file]);
		}
		assert_true(op.pat != 0);
		if (od->flags & DT_OPF_IO)
			assert_true(op.len >= 0 && op.len <= DT_MAX_IO);
		/* mapped I/O starts inside EOF (past it a fault is SIGBUS;
		 * the executor clips its end to EOF) */
		if (op.kind == DT_MWRITE || op.kind == DT_MREAD)
			assert_true(op.off >= 0 && op.off < size && op.len >= 1);
		if (op.kind == DT_REFLINK)
			assert_true(op.src < r.nfiles && r.live[op.src]);
		if (od->model)
			od->model(r.m, r.nfiles, &op, r.buf);
	}
	run_fini(&r);
}

/* fsx's geometry (--flen 256k --oplen 64k): no file grows past flen, no
 * ranged op moves more than oplen or reaches past flen (negative offsets
 * and lengths, errno checks, stay), and the bound is not vacuous: files
 * reach it and inserts still succeed. */
static void test_fsx_geometry(void **state)
{
	const int64_t flen = 256 << 10, oplen = 64 << 10;
	struct run r;
	int64_t biggest = 0;
	uint64_t inserts = 0;
	char msg[256];

	(void)state;
	run_init(&r, 13, 4);
	r.g.weights[DT_REFLINK] = 15;
	r.g.flen = flen;
	r.g.oplen = oplen;
	for (int k = 0; k < 20000; k++) {
		struct dt_op op;
		dt_gen_next(&r.g, r.m, r.live, &op);
		const struct dt_opdesc *od = &dt_ops[op.kind];
		int64_t before = od->flags & DT_OPF_GLOBAL ? 0 : rm_size(r.m[op.file]);
		if (od->syntax == DT_SYN_OFF)
			assert_true(op.off <= flen);
		if (od->syntax != DT_SYN_OFF && !(od->flags & DT_OPF_NOOFF) && op.off >= 0 &&
		    op.len >= 0) {
			assert_true(op.len <= oplen);
			assert_true(op.off <= flen && op.off + op.len <= flen);
			if (od->syntax == DT_SYN_REFLINK)
				assert_true(op.soff <= flen && op.soff + op.len <= flen);
		}
		if (od->model)
			od->model(r.m, r.nfiles, &op, r.buf);
		for (int i = 0; i < r.nfiles; i++) {
			assert_true(rm_size(r.m[i]) <= flen);
			if (rm_size(r.m[i]) > biggest)
				biggest = rm_size(r.m[i]);
		}
		if (op.kind == DT_INSERT && rm_size(r.m[op.file]) > before)
			inserts++;
		if (!(od->flags & DT_OPF_GLOBAL))
			assert_int_equal(rm_check(r.m[op.file], msg, sizeof(msg)), 0);
	}
	assert_true(biggest > flen - 16 * 4096);
	assert_true(inserts > 300);
	run_fini(&r);
}

/* One general file (no fragmenter), pwrite:pread = 3:1, nothing else:
 * besides those only the generator's own ops appear, resets (truncate to
 * 0) and stripe-phase single blocks on the 2-block grid. */
static void test_weights_rule(void **state)
{
	struct run r;
	uint64_t n[DT_NKINDS] = { 0 }, own = 0;
	char err[128];

	(void)state;
	run_init(&r, 3, 1);
	assert_int_equal(dt_weights_parse(r.g.weights, "all=0,pwrite=3,pread=1", err,
					  sizeof(err)), 0);
	for (int k = 0; k < 20000; k++) {
		struct dt_op op;
		int striping = r.g.stripe_left[0] > 0;
		run_next(&r, &op);
		striping |= r.g.stripe_left[0] > 0;
		if (!striping)		/* the weighted mix alone */
			n[op.kind]++;
		if (op.kind == DT_PWRITE || op.kind == DT_PREAD)
			continue;
		int reset = op.kind == DT_TRUNCATE && op.off == 0;
		int stripe = (op.kind == DT_FALLOC_KEEP || op.kind == DT_PUNCH ||
			      op.kind == DT_ZERO) && op.len == 4096 && op.off % 8192 == 0;
		if (!reset && !stripe)
			fail_msg("op %d: a %s with weight 0", k, dt_kind_name(op.kind));
		own++;
	}
	assert_true(own < 20000 / 4);
	assert_true(n[DT_PWRITE] + n[DT_PREAD] > 5000);
	double ratio = (double)n[DT_PWRITE] / (double)n[DT_PREAD];
	if (ratio < 2.7 || ratio > 3.3)
		fail_msg("pwrite:pread %.2f, weighted 3", ratio);
	run_fini(&r);
}

/* The fragmenter's recipe skips kinds whose weight is 0, and no op is of
 * a kind the target cannot do. */
static void test_weights_fragmenter_and_disabled(void **state)
{
	struct run r;
	char err[128];
	uint64_t n[DT_NKINDS] = { 0 };

	(void)state;
	run_init(&r, 8, 3);
	assert_int_equal(dt_weights_parse(r.g.weights, "insert=0,collapse=0", err, sizeof(err)), 0);
	r.g.disabled = 1u << DT_MREAD | 1u << DT_SEEK_HOLE;
	for (int k = 0; k < 20000; k++) {
		struct dt_op op;
		run_next(&r, &op);
		n[op.kind]++;
	}
	assert_int_equal(n[DT_INSERT] + n[DT_COLLAPSE], 0);
	assert_int_equal(n[DT_MREAD] + n[DT_SEEK_HOLE], 0);
	assert_int_equal(n[DT_REFLINK], 0);	/* weight 0 by default */
	assert_true(n[DT_PWRITE] > 0 && n[DT_SEEK_DATA] > 0 && n[DT_PUNCH] > 0);
	run_fini(&r);
}

static void test_weights_parse(void **state)
{
	unsigned w[DT_NKINDS], before[DT_NKINDS];
	char err[128];

	(void)state;
	dt_weights_default(w);
	memcpy(before, w, sizeof(w));
	assert_int_equal(dt_weights_parse(w, "pwrite=x", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad number"));
	assert_int_equal(dt_weights_parse(w, "bogus=1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown op kind 'bogus'"));
	assert_int_equal(dt_weights_parse(w, "all=0", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "all weights are zero"));
	/* the shrinker's fill is never generated: refused by name, and
	 * all=N leaves it out */
	assert_int_equal(dt_weights_parse(w, "fill=1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "never generated"));
	assert_memory_equal(w, before, sizeof(w));	/* refused: unchanged */
	assert_int_equal(dt_weights_parse(w, "all=3", err, sizeof(err)), 0);
	assert_int_equal(w[DT_FILL], 0);
	assert_int_equal(w[DT_PWRITE], 3);
	memcpy(w, before, sizeof(w));
	assert_int_equal(dt_weights_parse(w, "reflink=15,seek_hole=0", err, sizeof(err)), 0);
	assert_int_equal(w[DT_REFLINK], 15);
	assert_int_equal(w[DT_SEEK_HOLE], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_seed_same_ops),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_fsx_geometry),
		cmocka_unit_test(test_weights_rule),
		cmocka_unit_test(test_weights_fragmenter_and_disabled),
		cmocka_unit_test(test_weights_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
