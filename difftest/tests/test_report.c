/* SPDX-License-Identifier: MIT */
/*
 * test_report.c - the JSON report (report.c) and its merge, in process:
 *  - dt_report_json() writes a report the merge reads back: the counters,
 *    the seed as an exact decimal string (2^60 + 1, 2^64 - 1), and each
 *    divergence's fields under the run they come from (original: the
 *    campaign's run; shrunk: the reproducer's log, null when not shrunk);
 *    a counter past INT64_MAX is refused, not wrapped;
 *  - merging two reports adds counters, takes the maximum of max_* and
 *    seconds, merges targets by name, appends divergences, marks the
 *    shard "merged", and keeps integers exact (2^53 + 2, INT64_MAX);
 *  - malformed input (not JSON, trailing bytes, a NUL, leading zeros,
 *    bad escapes, duplicate keys, deep nesting, not a difftest report,
 *    a type clash between reports, counters overflowing 64 bits, reports
 *    of different seeds or layouts) is refused with a message naming the
 *    report, and nothing is written.
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

#include "campaign.h"

/* Merge the given texts; *out is the merged text (caller frees). */
static int merge(int n, const char *const *texts, char **out, char *err, size_t errn)
{
	static const char *const names[] = { "one.json", "two.json", "three.json" };
	size_t lens[3], len = 0;
	for (int i = 0; i < n; i++)
		lens[i] = strlen(texts[i]);
	*out = NULL;
	FILE *f = open_memstream(out, &len);
	assert_non_null(f);
	err[0] = 0;
	int rc = dt_report_merge_mem(texts, lens, names, n, f, err, errn);
	fclose(f);
	return rc;
}

/* Merged text with blanks removed, for matching. */
static char *squeeze(char *s)
{
	size_t w = 0;
	for (size_t r = 0; s[r]; r++)
		if (!strchr(" \n\t", s[r]))
			s[w++] = s[r];
	s[w] = 0;
	return s;
}

static char *report_of(struct dt_campaign *c, struct dt_tresult *r, int nr)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(dt_report_json(f, c, r, nr, 12.5), 0);
	fclose(f);
	return text;
}

static void point(struct dt_divpoint *p, int kind, int file, uint64_t opno, const char *op,
		  const char *msg)
{
	p->kind = kind;
	p->file = file;
	p->opno = opno;
	snprintf(p->op, sizeof(p->op), "%s", op);
	snprintf(p->msg, sizeof(p->msg), "%s", msg);
}

static void test_report_roundtrip(void **state)
{
	(void)state;
	struct dt_campaign c = { .seed = 1, .base_seed = ((uint64_t)1 << 60) + 1, .ops = 500,
				 .nfiles = 2, .shard_n = 1 };
	struct dt_tresult r[2] = { { .blocksize = 4096, .ops = 500, .seconds = 2, .cpu = -1 },
				   { .blocksize = 4096, .ops = 500, .seconds = 3, .cpu = 1 } };
	struct dt_divrec d[2] = { { .window_ops = 90, .shrink_result = DT_SHRUNK, .shrunk_ops = 3,
				    .shrink_tests = 40, .shrink_complete = 1, .replays = 1 },
				  { .window_ops = 12, .shrink_result = DT_SHRINK_OFF, .replays = -1 } };
	snprintf(r[0].name, sizeof(r[0].name), "model");
	snprintf(r[1].name, sizeof(r[1].name), "faulty:wrong-errno");
	snprintf(r[1].notes, sizeof(r[1].notes), "quote \" and\nnewline");
	r[1].divergences = 2;
	r[0].kind_count[DT_PWRITE] = 7;
	r[0].errs[DT_PWRITE][0] = 7;
	for (int i = 0; i < 2; i++) {
		snprintf(d[i].target, sizeof(d[i].target), "faulty:wrong-errno");
		snprintf(d[i].dir, sizeof(d[i].dir), "out/div-%d", i + 1);
	}
	/* the run's op 77 on file 1; the shrunk log's op 2 on its f0 */
	point(&d[0].orig, DV_MAP, 1, 77, "f1 finsert 4096 4096", "map: run");
	point(&d[0].shrunk, DV_MAP, 0, 2, "f0 finsert 0 4096", "map: shrunk");
	point(&d[1].orig, DV_RET, 3, 11, "f3 fcollapse 0 4096", "return: run");
	c.divs = d;
	c.ndivs = 2;
	char *text = report_of(&c, r, 2), *out, err[256];
	const char *in[1] = { text };
	assert_int_equal(merge(1, in, &out, err, sizeof(err)), 0);
	squeeze(out);
	assert_non_null(strstr(out, "\"version\":2,"));
	assert_non_null(strstr(out, "\"seed\":\"1152921504606846977\","));
	assert_non_null(strstr(out, "\"divergence_count\":2,"));
	assert_non_null(strstr(out, "\"notes\":\"quote\\\"and\\nnewline\""));
	assert_non_null(strstr(out, "\"ops_per_kind\":{\"pwrite\":7}"));
	assert_non_null(strstr(out, "\"cpus\":[1]"));
	assert_non_null(strstr(out, "{\"target\":\"faulty:wrong-errno\",\"reproducer\":\"out/div-1\","
				    "\"original\":{\"kind\":\"map\",\"file\":1,\"op_index\":77,"
				    "\"op\":\"f1finsert40964096\",\"message\":\"map:run\"},"
				    "\"window_ops\":90,\"replays\":true,"
				    "\"shrink\":{\"result\":\"shrunk\",\"runs\":40,"
				    "\"complete\":true,\"seconds\":0.0},\"shrunk\":{\"kind\":\"map\","
				    "\"file\":0,\"op_index\":2,\"op\":\"f0finsert04096\","
				    "\"message\":\"map:shrunk\",\"ops\":3}}"));
	assert_non_null(strstr(out, "\"original\":{\"kind\":\"return\",\"file\":3,\"op_index\":11,"
				    "\"op\":\"f3fcollapse04096\",\"message\":\"return:run\"},"
				    "\"window_ops\":12,\"replays\":null,"
				    "\"shrink\":{\"result\":\"off\",\"runs\":0,"
				    "\"complete\":false,\"seconds\":0.0},\"shrunk\":null}"));
	free(out);
	free(text);
	/* an unsigned seed above INT64_MAX, exact */
	c.base_seed = UINT64_MAX;
	text = report_of(&c, r, 2);
	assert_non_null(strstr(text, "\"seed\": \"18446744073709551615\","));
	free(text);
	/* a counter past INT64_MAX is refused, never written wrapped */
	r[0].syscalls = (uint64_t)INT64_MAX + 1;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(dt_report_json(f, &c, r, 2, 1.0), -EOVERFLOW);
	fclose(f);
	assert_int_equal(len, 0);
	free(text);
}

static void test_merge_adds_up(void **state)
{
	(void)state;
	const char *a = "{\"tool\": \"difftest\", \"seed\": \"18446744073709551615\", \"shard\": \"0/2\", "
			"\"divergence_count\": 1, \"targets\": [{\"name\": \"x\", \"ops\": 9007199254740993, "
			"\"seconds\": 2.5, \"shrink_seconds\": 0.5, \"ops_per_sec\": 1.0, \"max_extents\": 10, "
			"\"errno\": {\"pwrite\": {\"OK\": 3}}, \"cpus\": [0]}], "
			"\"divergences\": [{\"target\": \"x\", \"original\": {\"op_index\": 5}}]}";
	const char *b = "{\"tool\": \"difftest\", \"seed\": \"18446744073709551615\", \"shard\": \"1/2\", "
			"\"divergence_count\": 2, \"targets\": [{\"name\": \"x\", \"ops\": 1, "
			"\"seconds\": 4, \"shrink_seconds\": 1, \"ops_per_sec\": 2.0, \"max_extents\": 7, "
			"\"errno\": {\"pwrite\": {\"OK\": 4, \"EINVAL\": 1}}, \"cpus\": [1]}, "
			"{\"name\": \"y\", \"ops\": 5}], "
			"\"divergences\": [{\"target\": \"x\", \"original\": {\"op_index\": 6}}, "
			"{\"target\": \"y\"}]}";
	const char *in[2] = { a, b };
	char *out, err[256];
	assert_int_equal(merge(2, in, &out, err, sizeof(err)), 0);
	squeeze(out);
	assert_non_null(strstr(out, "\"seed\":\"18446744073709551615\","));	/* exact */
	assert_non_null(strstr(out, "\"shard\":\"merged\""));
	assert_non_null(strstr(out, "\"divergence_count\":3,"));
	assert_non_null(strstr(out, "\"ops\":9007199254740994,"));	/* 2^53 + 2: exact */
	assert_non_null(strstr(out, "\"seconds\":4.0,"));
	assert_non_null(strstr(out, "\"max_extents\":10,"));
	assert_non_null(strstr(out, "\"pwrite\":{\"OK\":7,\"EINVAL\":1}"));
	assert_non_null(strstr(out, "\"cpus\":[0,1]"));
	assert_non_null(strstr(out, "{\"name\":\"y\",\"ops\":5}"));
	/* ops_per_sec = ops / (wall - shrink) of the merged target */
	/* 2^53+2 / 2.5, to 15 digits */
	assert_non_null(strstr(out, "\"ops_per_sec\":3.6028797018964e15"));
	const char *p = strstr(out, "\"divergences\":[");
	assert_non_null(p);
	assert_non_null(strstr(p, "{\"op_index\":5}"));
	assert_non_null(strstr(p, "{\"op_index\":6}"));
	assert_non_null(strstr(p, "{\"target\":\"y\"}"));
	free(out);
	/* the largest counters still add exactly, one more overflows */
	const char *u1 = "{\"tool\": \"difftest\", \"ops\": 9223372036854775806}";
	const char *u2 = "{\"tool\": \"difftest\", \"ops\": 1}";
	const char *in2[3] = { u1, u2, u2 };
	assert_int_equal(merge(2, in2, &out, err, sizeof(err)), 0);
	assert_non_null(strstr(out, "\"ops\": 9223372036854775807"));
	free(out);
	assert_int_equal(merge(3, in2, &out, err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "three.json"));
	assert_non_null(strstr(err, "overflows"));
	assert_true(!out || !out[0]);
	free(out);
}

static void refused(int n, const char *const *in, const char *what)
{
	char *out, err[256];
	int rc = merge(n, in, &out, err, sizeof(err));
	if (!rc || !strstr(err, what))
		fprintf(stderr, "input '%s': rc %d, message '%s' (want '%s')\n", in[n - 1], rc, err,
			what);
	assert_true(rc < 0);
	assert_non_null(strstr(err, what));
	assert_true(!out || !out[0]);	/* nothing written */
	free(out);
}

static void test_merge_refuses(void **state)
{
	(void)state;
	/* jansson's words for what is wrong, after "not JSON (" */
	static const struct { const char *text, *what; } bad[] = {
		{ "", "not JSON" },
		{ "{", "not JSON" },
		{ "[]", "not a difftest JSON report" },
		{ "{\"tool\": \"other\"}", "not a difftest JSON report" },
		{ "{\"tool\": \"difftest\"} x", "end of file expected" },
		{ "{\"tool\": \"difftest\", \"ops\": 01}", "invalid token near '0'" },
		{ "{\"tool\": \"difftest\", \"ops\": +1}", "invalid token" },
		{ "{\"tool\": \"difftest\", \"ops\": 1.}", "invalid token" },
		{ "{\"tool\": \"difftest\", \"ops\": 1e999}", "real number overflow" },
		{ "{\"tool\": \"difftest\", \"ops\": 9223372036854775808}", "too big integer" },
		{ "{\"tool\": \"difftest\", \"ops\": 18446744073709551616}", "too big integer" },
		{ "{\"tool\": \"difftest\", \"ops\": -9223372036854775809}", "too big negative" },
		{ "{\"tool\": \"difftest\", \"ops\": nan}", "invalid token" },
		{ "{\"tool\": \"difftest\", \"s\": \"\\q\"}", "invalid escape" },
		{ "{\"tool\": \"difftest\", \"s\": \"\\u12\"}", "invalid escape" },
		{ "{\"tool\": \"difftest\", \"s\": \"\\u0000\"}", "\\u0000 is not allowed" },
		{ "{\"tool\": \"difftest\", \"s\": \"a\nb\"}", "unexpected newline" },
		{ "{\"tool\": \"difftest\", \"s\": \"abc", "premature end of input" },
		{ "{\"tool\": \"difftest\", \"s\": \"\xff\"}", "unable to decode byte 0xff" },
		{ "{\"tool\": \"difftest\", \"a\": 1, \"a\": 2}", "duplicate object key" },
		{ "{\"tool\": \"difftest\", \"targets\": {}}", "not an array" },
		{ "{\"tool\": \"difftest\", \"targets\": [1]}", "not an object" },
		{ "{\"tool\": \"difftest\" \"a\": 1}", "'}' expected" },
		{ "{\"tool\": \"difftest\", \"a\" 1}", "':' expected" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *in[1] = { bad[i].text };
		refused(1, in, bad[i].what);
		refused(1, in, "one.json");
	}
	/* deep nesting: refused past 64 levels (no report is deeper), and
	 * past jansson's own limit (2048) by the parser */
	static char deep[8192];
	const char *in[1] = { deep };
	for (int levels = 100; levels <= 3000; levels += 2900) {
		int l = snprintf(deep, sizeof(deep), "{\"tool\": \"difftest\", \"a\": ");
		for (int i = 0; i < levels; i++)
			deep[l++] = '[';
		for (int i = 0; i < levels; i++)
			deep[l++] = ']';
		deep[l++] = '}';
		deep[l] = 0;
		refused(1, in, levels < 2048 ? "nested too deeply" : "maximum parsing depth");
	}
	/* a NUL byte inside */
	char *out, err[256];
	const char nul[] = "{\"tool\": \"difftest\"}\0{}";
	const char *nin[1] = { nul };
	size_t nlen = sizeof(nul) - 1, len = 0;
	static const char *const names[] = { "nul.json" };
	FILE *f = open_memstream(&out, &len);
	assert_int_equal(dt_report_merge_mem(nin, &nlen, names, 1, f, err, sizeof(err)), -EINVAL);
	fclose(f);
	assert_int_equal(len, 0);
	assert_non_null(strstr(err, "NUL"));
	free(out);
	/* a type clash between two reports */
	const char *clash[2] = { "{\"tool\": \"difftest\", \"ops\": 1}",
				 "{\"tool\": \"difftest\", \"ops\": \"many\"}" };
	refused(2, clash, "two.json: \"ops\" is a string where the reports before had a number");
	/* shards of different campaigns, or of different report layouts */
	const char *seeds[2] = { "{\"tool\": \"difftest\", \"seed\": \"1152921504606846977\"}",
				 "{\"tool\": \"difftest\", \"seed\": \"1152921504606846976\"}" };
	refused(2, seeds, "two.json: \"seed\" is \"1152921504606846976\" where the reports "
		"before had \"1152921504606846977\": not shards of one campaign");
	const char *vers[2] = { "{\"tool\": \"difftest\", \"version\": 2}",
				"{\"tool\": \"difftest\", \"version\": 1}" };
	refused(2, vers, "two.json: \"version\" is 1");
	const char *none[1] = { "{\"tool\": \"difftest\"}" };
	assert_int_equal(dt_report_merge_mem(none, NULL, NULL, 0, stdout, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no reports"));
}

/* --merge through the files: a missing file is named, and --json is not
 * touched when the merge fails */
static void test_merge_files(void **state)
{
	(void)state;
	char dir[] = "/tmp/dt-report-XXXXXX", a[64], bad[64], err[256];
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.json", dir);
	snprintf(bad, sizeof(bad), "%s/bad.json", dir);
	FILE *f = fopen(a, "w");
	assert_non_null(f);
	fputs("{\"tool\": \"difftest\", \"ops\": 2}\n", f);
	fclose(f);
	f = fopen(bad, "w");
	assert_non_null(f);
	fputs("{\"tool\": \"difftest\", \"ops\": 2,}\n", f);
	fclose(f);
	char *files[2] = { a, a }, *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	assert_int_equal(dt_report_merge(files, 2, m, err, sizeof(err)), 0);
	fclose(m);
	assert_non_null(strstr(out, "\"ops\": 4"));
	free(out);
	files[1] = bad;
	m = open_memstream(&out, &len);
	assert_int_equal(dt_report_merge(files, 2, m, err, sizeof(err)), -EINVAL);
	fclose(m);
	assert_int_equal(len, 0);
	assert_non_null(strstr(err, "bad.json"));
	free(out);
	char nofile[80];
	snprintf(nofile, sizeof(nofile), "%s/none.json", dir);
	files[1] = nofile;
	m = open_memstream(&out, &len);
	assert_int_equal(dt_report_merge(files, 2, m, err, sizeof(err)), -ENOENT);
	fclose(m);
	assert_non_null(strstr(err, "none.json"));
	free(out);
	/* the binary: --json keeps its old content on a failed merge */
	char cmd[512], j[80];
	snprintf(j, sizeof(j), "%s/keep.json", dir);
	f = fopen(j, "w");
	fputs("old\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s --merge %s %s --json %s 2>/dev/null", DIFFTEST_BIN, a, bad, j);
	assert_int_not_equal(system(cmd), 0);
	char buf[16] = "";
	f = fopen(j, "r");
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "old\n");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_roundtrip),
		cmocka_unit_test(test_merge_adds_up),
		cmocka_unit_test(test_merge_refuses),
		cmocka_unit_test(test_merge_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
