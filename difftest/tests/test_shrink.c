/* SPDX-License-Identifier: MIT */
/*
 * test_shrink.c - the delta-debugging minimiser (ddmin.c) on synthetic
 * predicates, no file system involved: each op carries its index in the
 * original sequence (off), and a predicate decides from those indices.
 *  - "fails iff ops 3 and 17 are both present" shrinks to exactly {3, 17};
 *    so does every random required set (a 1-minimal result of an "all of
 *    S" predicate is S);
 *  - "fails iff the sum of lengths exceeds k": the result fails and is
 *    1-minimal (dropping any one op makes it pass);
 *  - a predicate that cuts (the failure showed at an op) is obeyed;
 *  - a candidate builder that rewrites the ops is used, and its output
 *    is what gets adopted;
 *  - budget exhaustion: stops early, not complete, result still fails;
 *  - an input that does not fail is returned unchanged (NO_FAIL);
 *  - a flaky predicate (one false "fails") is reported FLAKY, never as a
 *    reproducer; a false "passes" only costs minimality;
 *  - errors of the predicate or the builder come back as they are;
 *  - the shrinker's first candidate keeps the diverging file and the
 *    files it copies, reflinks or dedupes from, transitively, renumbered;
 *    its second the diverging file alone (dt_few_files());
 *  - end to end (the difftest binary under timeout(1)): a faulty target's
 *    divergences shrink to the same reproducers as before the shrinker
 *    became ddmin.c (golden op logs of seed 7).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <string.h>
#include <cmocka.h>

#include "ddmin.h"
#include "dt.h"

struct pctx {
	const int64_t *need_ids;	/* all of these present -> fails */
	size_t nneed;
	int64_t sum_over;		/* > 0: fails iff sum of len > sum_over */
	int cut_at_last;		/* report *need = position of the last needed op + 1 */
	uint64_t calls;
	uint64_t max_tests;		/* budget: 0 = none */
	uint64_t lie_fail_at;		/* call number answered "fails" whatever */
	uint64_t lie_pass_at;		/* call number answered "passes" whatever */
	int err_at;			/* call number returning -EIO */
	int bump;			/* candidate builder adds 1000 to pat */
	int build_err;
};

static void seq(struct dt_op *ops, size_t n)
{
	memset(ops, 0, n * sizeof(*ops));
	for (size_t j = 0; j < n; j++) {
		ops[j].kind = DT_PWRITE;
		ops[j].off = (int64_t)j;
		ops[j].len = (int64_t)(j % 7) + 1;
	}
}

static int has(const struct dt_op *ops, size_t n, int64_t id, size_t *pos)
{
	for (size_t j = 0; j < n; j++)
		if (ops[j].off == id) {
			if (pos)
				*pos = j;
			return 1;
		}
	return 0;
}

static int truth(const struct pctx *c, const struct dt_op *ops, size_t n, size_t *last)
{
	*last = 0;
	if (c->sum_over > 0) {
		int64_t s = 0;
		for (size_t j = 0; j < n; j++)
			s += ops[j].len;
		return s > c->sum_over;
	}
	for (size_t i = 0; i < c->nneed; i++) {
		size_t p;
		if (!has(ops, n, c->need_ids[i], &p))
			return 0;
		if (p + 1 > *last)
			*last = p + 1;
	}
	return 1;
}

static int fails(void *ctx, const struct dt_op *ops, size_t n, size_t *need)
{
	struct pctx *c = ctx;
	size_t last;
	c->calls++;
	if (c->err_at && c->calls == (uint64_t)c->err_at)
		return -EIO;
	if (c->calls == c->lie_fail_at)
		return 1;
	if (c->calls == c->lie_pass_at)
		return 0;
	int f = truth(c, ops, n, &last);
	if (f && c->cut_at_last)
		*need = last;
	return f;
}

static int budget(void *ctx)
{
	struct pctx *c = ctx;
	return !c->max_tests || c->calls < c->max_tests;
}

static ssize_t build(void *ctx, const struct dt_op *cur, size_t n, const uint8_t *keep,
		     struct dt_op *out)
{
	struct pctx *c = ctx;
	size_t k = 0;
	if (c->build_err)
		return -EINVAL;
	for (size_t j = 0; j < n; j++)
		if (keep[j]) {
			out[k] = cur[j];
			out[k++].soff += c->bump;
		}
	return (ssize_t)k;
}

static int run(struct pctx *c, struct dt_op *ops, size_t *n, struct dt_ddmin_res *r)
{
	struct dt_ddmin p = { .still_fails = fails, .budget_left = budget, .ctx = c };
	if (c->bump || c->build_err)
		p.candidate = build;
	return dt_ddmin(&p, ops, n, r);
}

static void test_pair(void **state)
{
	(void)state;
	static const int64_t need[] = { 3, 17 };
	struct pctx c = { .need_ids = need, .nneed = 2 };
	struct dt_op ops[40];
	size_t n = 40;
	struct dt_ddmin_res r;

	seq(ops, n);
	assert_int_equal(run(&c, ops, &n, &r), 0);
	assert_int_equal(r.verdict, DT_DDMIN_FAILS);
	assert_int_equal(r.complete, 1);
	assert_int_equal(n, 2);
	assert_int_equal(ops[0].off, 3);
	assert_int_equal(ops[1].off, 17);
	assert_int_equal(r.tests, c.calls);
	assert_true(r.tests < 100);
}

static void test_random_sets(void **state)
{
	(void)state;
	uint64_t x = 12345;
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + dt_rand(&x) % 300, k = 1 + dt_rand(&x) % 5;
		int64_t need[5];
		struct dt_op *ops = malloc(n * sizeof(*ops));
		assert_non_null(ops);
		seq(ops, n);
		for (size_t i = 0; i < k; i++)
			need[i] = (int64_t)(dt_rand(&x) % n);
		struct pctx c = { .need_ids = need, .nneed = k, .cut_at_last = round & 1 };
		struct dt_ddmin_res r;
		size_t m = n;
		assert_int_equal(run(&c, ops, &m, &r), 0);
		assert_int_equal(r.verdict, DT_DDMIN_FAILS);
		assert_int_equal(r.complete, 1);
		/* exactly the distinct required ids, in their order */
		size_t distinct = 0;
		for (size_t i = 0; i < k; i++) {
			int dup = 0;
			for (size_t l = 0; l < i; l++)
				dup |= need[l] == need[i];
			distinct += !dup;
			assert_true(has(ops, m, need[i], NULL));
		}
		assert_int_equal(m, distinct);
		for (size_t j = 1; j < m; j++)
			assert_true(ops[j - 1].off < ops[j].off);
		free(ops);
	}
}

static void test_sum(void **state)
{
	(void)state;
	struct pctx c = { .sum_over = 20 };
	struct dt_op ops[64];
	size_t n = 64;
	struct dt_ddmin_res r;

	seq(ops, n);
	assert_int_equal(run(&c, ops, &n, &r), 0);
	assert_int_equal(r.verdict, DT_DDMIN_FAILS);
	assert_int_equal(r.complete, 1);
	size_t last;
	assert_true(truth(&c, ops, n, &last));
	/* 1-minimal: without any one op it passes */
	for (size_t d = 0; d < n; d++) {
		struct dt_op less[64];
		size_t k = 0;
		for (size_t j = 0; j < n; j++)
			if (j != d)
				less[k++] = ops[j];
		assert_false(truth(&c, less, k, &last));
	}
	/* lengths are at most 7: at least 3 ops are needed */
	assert_true(n >= 3 && n <= 6);
}

static void test_cut(void **state)
{
	(void)state;
	/* the failure "shows" at the last needed op: every candidate is cut
	 * there, so the ops after 17 go in the first test */
	static const int64_t need[] = { 3, 17 };
	struct pctx c = { .need_ids = need, .nneed = 2, .cut_at_last = 1 };
	struct pctx plain = { .need_ids = need, .nneed = 2 };
	struct dt_op ops[1000];
	size_t n = 1000, m = 1000;
	struct dt_ddmin_res r, rp;

	seq(ops, n);
	assert_int_equal(run(&c, ops, &n, &r), 0);
	assert_int_equal(n, 2);
	seq(ops, m);
	assert_int_equal(run(&plain, ops, &m, &rp), 0);
	assert_int_equal(m, 2);
	assert_true(r.tests < rp.tests);
}

static void test_builder(void **state)
{
	(void)state;
	static const int64_t need[] = { 5 };
	struct pctx c = { .need_ids = need, .nneed = 1, .bump = 1000 };
	struct dt_op ops[16];
	size_t n = 16;
	struct dt_ddmin_res r;

	seq(ops, n);
	assert_int_equal(run(&c, ops, &n, &r), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ops[0].off, 5);
	/* the adopted op is the builder's: bumped once per adopted candidate */
	assert_true(ops[0].soff >= 1000);
	c = (struct pctx){ .need_ids = need, .nneed = 1, .build_err = 1 };
	n = 16;
	seq(ops, n);
	assert_int_equal(run(&c, ops, &n, &r), -EINVAL);
}

static void test_budget(void **state)
{
	(void)state;
	static const int64_t need[] = { 3, 17, 90, 91 };
	struct pctx c = { .need_ids = need, .nneed = 4, .max_tests = 6 };
	struct dt_op ops[200];
	size_t n = 200;
	struct dt_ddmin_res r;

	seq(ops, n);
	assert_int_equal(run(&c, ops, &n, &r), 0);
	assert_int_equal(r.verdict, DT_DDMIN_FAILS);
	assert_int_equal(r.complete, 0);
	/* the loop stopped at the budget; first test and re-test always run */
	assert_int_equal(r.tests, 7);
	size_t last;
	assert_true(truth(&c, ops, n, &last));
	assert_true(n > 4 && n < 200);
	/* no budget at all: the input, re-tested */
	c = (struct pctx){ .need_ids = need, .nneed = 4, .max_tests = 1 };
	n = 200;
	seq(ops, n);
	assert_int_equal(run(&c, ops, &n, &r), 0);
	assert_int_equal(r.verdict, DT_DDMIN_FAILS);
	assert_int_equal(n, 200);
	assert_int_equal(r.tests, 2);
}

static void test_no_fail(void **state)
{
	(void)state;
	static const int64_t need[] = { 500 };
	struct pctx c = { .need_ids = need, .nneed = 1 };
	struct dt_op ops[50], orig[50];
	size_t n = 50;
	struct dt_ddmin_res r;

	seq(ops, n);
	memcpy(orig, ops, sizeof(ops));
	assert_int_equal(run(&c, ops, &n, &r), 0);
	assert_int_equal(r.verdict, DT_DDMIN_NO_FAIL);
	assert_int_equal(n, 50);
	assert_memory_equal(ops, orig, sizeof(ops));
	assert_int_equal(r.tests, 1);
	/* empty input */
	n = 0;
	assert_int_equal(run(&c, ops, &n, &r), 0);
	assert_int_equal(r.verdict, DT_DDMIN_NO_FAIL);
}

static void test_flaky(void **state)
{
	(void)state;
	static const int64_t need[] = { 3, 17 };
	/* call 2 is the first candidate (the first half without...): a
	 * false "fails" there makes ddmin adopt a sequence lacking 17 or 3;
	 * the honest re-test at the end must expose it */
	for (uint64_t lie = 2; lie < 12; lie++) {
		struct pctx c = { .need_ids = need, .nneed = 2, .lie_fail_at = lie };
		struct dt_op ops[40];
		size_t n = 40, last;
		struct dt_ddmin_res r;
		seq(ops, n);
		assert_int_equal(run(&c, ops, &n, &r), 0);
		if (r.verdict == DT_DDMIN_FAILS)
			assert_true(truth(&c, ops, n, &last));	/* the lie did no harm */
		else
			assert_int_equal(r.verdict, DT_DDMIN_FLAKY);
		if (!truth(&c, ops, n, &last))
			assert_int_equal(r.verdict, DT_DDMIN_FLAKY);
	}
	/* one flake at the very first candidate that removes a needed op */
	struct pctx c = { .need_ids = need, .nneed = 2, .lie_fail_at = 2 };
	struct dt_op ops[40];
	size_t n = 40;
	struct dt_ddmin_res r;
	seq(ops, n);
	assert_int_equal(run(&c, ops, &n, &r), 0);
	assert_int_equal(r.verdict, DT_DDMIN_FLAKY);
	/* a false "passes": less minimal perhaps, never wrong */
	for (uint64_t lie = 1; lie < 12; lie++) {
		struct pctx p = { .need_ids = need, .nneed = 2, .lie_pass_at = lie };
		size_t m = 40, last;
		seq(ops, m);
		assert_int_equal(run(&p, ops, &m, &r), 0);
		if (lie == 1) {
			assert_int_equal(r.verdict, DT_DDMIN_NO_FAIL);
			continue;
		}
		if (r.verdict == DT_DDMIN_FAILS)
			assert_true(truth(&p, ops, m, &last));
	}
}

static void test_errors(void **state)
{
	(void)state;
	static const int64_t need[] = { 3 };
	struct dt_op ops[20];
	struct dt_ddmin_res r;
	for (int at = 1; at < 8; at++) {
		struct pctx c = { .need_ids = need, .nneed = 1, .err_at = at };
		size_t n = 20;
		seq(ops, n);
		assert_int_equal(run(&c, ops, &n, &r), -EIO);
		/* whatever is left is a sequence that failed */
		size_t last;
		if (at > 1)
			assert_true(truth(&c, ops, n, &last));
	}
}

static void test_few_files(void **state)
{
	(void)state;
	/* f2 diverges; it copies from f3, which reflinks from f1; f0 only
	 * dedupes from f2 (a reader of f2: not needed) */
	static const char *const log[] = {
		"f0 pwrite -S 0x11 0 4096",
		"f1 pwrite -S 0x22 0 8192",
		"f3 reflink f1 0 4096 4096",
		"drop_caches",
		"f2 copy_range f3 0 0 8192",
		"f0 dedupe f2 0 0 4096",
		"f2 finsert 0 4096",
	};
	enum { N = sizeof(log) / sizeof(log[0]) };
	struct dt_op ops[N], out[N];
	char err[128];
	int kept = -1;

	for (size_t j = 0; j < N; j++)
		assert_int_equal(dt_op_parse(log[j], &ops[j], err, sizeof(err)), 0);
	size_t k = dt_few_files(ops, N, 4, 2, 0, out, &kept);
	assert_int_equal(kept, 3);
	assert_int_equal(k, 5);	/* f0's two ops dropped, drop_caches kept */
	/* f2 -> f0; f1 -> f1; f3 -> f2 */
	assert_int_equal(out[0].file, 1);	/* f1 pwrite */
	assert_int_equal(out[1].file, 2);	/* f3 reflink f1 */
	assert_int_equal(out[1].src, 1);
	assert_int_equal(out[3].file, 0);	/* f2 copy_range f3 */
	assert_int_equal(out[3].src, 2);
	assert_int_equal(out[4].file, 0);	/* f2 finsert */
	assert_int_equal(out[4].off, 0);
	assert_int_equal(out[4].len, 4096);
	/* a file that needs nothing else: itself alone */
	k = dt_few_files(ops, N, 4, 1, 0, out, &kept);
	assert_int_equal(kept, 1);
	assert_int_equal(k, 2);	/* its pwrite and drop_caches */
	/* f0 needs f2 and so everything: no file is dropped */
	k = dt_few_files(ops, N, 4, 0, 0, out, &kept);
	assert_int_equal(kept, 4);
	assert_int_equal(k, N);
	/* alone: its own ops and the global ones, numbers kept */
	k = dt_few_files(ops, N, 4, 2, 1, out, &kept);
	assert_int_equal(kept, 4);
	assert_int_equal(k, 3);
	assert_int_equal(out[0].kind, ops[3].kind);	/* drop_caches */
	assert_int_equal(out[1].file, 2);
	assert_int_equal(out[1].src, 3);	/* now an empty file */
	assert_int_equal(out[2].file, 2);
}

/* The shrunk reproducers of `difftest -t faulty:insert-off-by-one -N 20000
 * -S 7`, as the shrinker made them before ddmin.c (and must still). */
/* How many times what occurs in the file dir/name (0 when unreadable). */
static int count_in(const char *dir, const char *name, const char *what)
{
	char path[300], *buf;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	buf = calloc(1, 1 << 22);
	if (buf) {
		buf[fread(buf, 1, (1 << 22) - 1, f)] = 0;
		for (const char *p = buf; (p = strstr(p, what)); p++)
			n++;
	}
	free(buf);
	fclose(f);
	return n;
}

static void test_golden_faulty(void **state)
{
	(void)state;
	static const char *const want[3] = {
		"f0 pwrite -S 0x39 3999852 1240\nf0 falloc 3850240 5\nf0 finsert 3850240 40960\n",
		"f0 pwrite -S 0x7f 41041920 4096\nf0 pwrite -S 0x03 48218112 4096\n"
		"f0 finsert 41041920 4096\n",
		"f0 pwrite -S 0xd8 62861312 4096\nf0 falloc -k 20791296 4096\n"
		"f0 finsert 20791296 4096\n",
	};
	char dir[] = "/tmp/dt-shrink-XXXXXX", cmd[1024];
	assert_non_null(mkdtemp(dir));
	/* the op stream these were recorded with: without fsx's other ops,
	 * which came into the default mix later, and with the write-back
	 * discipline of that time (--map-sync: no write-back ops in the mix) */
	snprintf(cmd, sizeof(cmd), "timeout 600 %s -t faulty:insert-off-by-one -N 20000 -S 7 -q "
		 "--map-sync --weights dio_write=0,dio_read=0,copy_range=0,dedupe=0 "
		 "--out %s/out 2>%s/err", DIFFTEST_BIN, dir, dir);
	int st = system(cmd);
	assert_true(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 1);
	for (int k = 0; k < 3; k++) {
		char path[300], got[4096] = "", line[512];
		snprintf(path, sizeof(path), "%s/out/div-faulty_insert-off-by-one-%d/ops.log", dir, k + 1);
		FILE *f = fopen(path, "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f))
			if (line[0] != '#')
				strncat(got, line, sizeof(got) - strlen(got) - 1);
		fclose(f);
		assert_string_equal(got, want[k]);
	}
	/* each replayed as a whole before it was shrunk */
	assert_int_equal(count_in(dir, "out/report.json", "\"replays\": true"), 3);
	assert_int_equal(count_in(dir, "out/report.json", "\"replays\": false"), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* A divergence that does not come back when its log runs again
 * (faulty:flaky fails one pwrite, once in the target's life) is reported
 * as not replaying, with the whole window as its reproducer: nothing is
 * shrunk, so no reproducer can fail for another reason. */
static void test_not_replaying(void **state)
{
	(void)state;
	char dir[] = "/tmp/dt-noreplay-XXXXXX", cmd[1024], path[300], line[512];
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "timeout 300 %s -t faulty:flaky -N 3000 -S 1 -q --out %s/out "
		 "2>%s/err", DIFFTEST_BIN, dir, dir);
	int st = system(cmd);
	assert_true(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 1);
	assert_int_equal(count_in(dir, "out/report.json", "\"replays\": false"), 1);
	assert_int_equal(count_in(dir, "out/report.json", "\"result\": \"not_reproduced\""), 1);
	assert_int_equal(count_in(dir, "out/report.json", "\"shrunk\": null"), 1);
	assert_int_equal(count_in(dir, "err", "does not replay"), 1);
	/* the reproducer is the whole window, ending with the failed pwrite */
	snprintf(path, sizeof(path), "%s/out/div-faulty_flaky-1/ops.log", dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t ops = 0, hdr = 0;
	char last[512] = "";
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#') {
			hdr += strstr(line, "# replays: false") != NULL;
			continue;
		}
		ops++;
		snprintf(last, sizeof(last), "%s", line);
	}
	fclose(f);
	assert_int_equal(hdr, 1);
	snprintf(line, sizeof(line), "\"window_ops\": %zu,", ops);
	assert_int_equal(count_in(dir, "out/report.json", line), 1);
	assert_non_null(strstr(last, " pwrite "));
	assert_true(ops > 1);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pair),
		cmocka_unit_test(test_random_sets),
		cmocka_unit_test(test_sum),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_builder),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_no_fail),
		cmocka_unit_test(test_flaky),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_few_files),
		cmocka_unit_test(test_golden_faulty),
		cmocka_unit_test(test_not_replaying),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
