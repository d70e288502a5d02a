/* SPDX-License-Identifier: MIT */
/*
 * test_expected.c - the expected differences per kernel (cmocka): the
 * built-in data file parses and every entry names its function and why;
 * kernel releases and ranges compare as versions ("6.12" as an upper bound
 * takes every 6.12.y); malformed files are refused with the line named;
 * applied to a real directory, an entry hides exactly the divergence it
 * describes, and only when the kernel release is in its range.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dt.h"

static void test_builtin(void **state)
{
	(void)state;
	static struct dt_xdiffs x;
	char err[256] = "";
	assert_int_equal(dt_xdiff_parse(dt_xdiff_builtin(), "builtin", &x, err, sizeof(err)), 0);
	assert_true(x.n >= 3);
	for (size_t k = 0; k < x.n; k++) {
		assert_true(strlen(x.v[k].function) > 10);
		assert_true(strlen(x.v[k].why) > 20);
		assert_true(x.v[k].nranges > 0);
	}
}

static void test_versions(void **state)
{
	(void)state;
	static struct dt_xdiffs x;
	char err[256];
	int v[3];

	assert_int_equal(rm_release_version("6.18.44-fc-v1252", v, NULL), 3);
	assert_int_equal(v[0], 6);
	assert_int_equal(v[1], 18);
	assert_int_equal(v[2], 44);
	assert_int_equal(rm_release_version("6.1", v, NULL), 2);
	assert_int_equal(v[2], 0);
	assert_int_equal(rm_release_version("6.1.0-28-amd64", v, NULL), 3);
	assert_int_equal(v[1], 1);
	assert_int_equal(rm_release_version("linux", v, NULL), -EINVAL);
	assert_int_equal(rm_release_version("6", v, NULL), -EINVAL);

	const char *f = "id: a\nkernels: 6.12.118 - 6.12, 6.15 -\nfs: any\nop: fmode\n"
			"divergence: return\nmatch: errno EINVAL EOPNOTSUPP\nfunction: f() 6.15\nwhy: w\n";
	assert_int_equal(dt_xdiff_parse(f, "t", &x, err, sizeof(err)), 0);
	assert_int_equal(x.n, 1);
	static const struct { const char *rel; int in; } cases[] = {
		{ "6.1.0", 0 }, { "6.12.117", 0 }, { "6.12.118", 1 }, { "6.12.300-rt", 1 },
		{ "6.13", 0 }, { "6.14.9", 0 }, { "6.15", 1 }, { "6.18.44-fc", 1 }, { "7.0.1", 1 },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		assert_int_equal(dt_xdiff_select(&x, cases[k].rel), 0);
		assert_int_equal(x.kv_ok, 1);
		if (dt_xdiff_kernel_in(&x.v[0], x.kv) != cases[k].in)
			fail_msg("%s: in range %d, expected %d", cases[k].rel, !cases[k].in, cases[k].in);
	}
}

static void test_bad_files(void **state)
{
	(void)state;
	static struct dt_xdiffs x;
	static const char head[] = "# c\n\nid: a\nkernels: 6.12 -\nfs: any\nop: fmode\n"
				   "divergence: return\nmatch: errno EINVAL EOPNOTSUPP\n";
	static const struct { const char *tail, *want; } cases[] = {
		{ "function: f\nwhy: w\ncolour: red\n", "t:11: unknown key 'colour'" },
		{ "function: f\n", "t:3: entry 'a' has no 'why:' line" },
		{ "function: f\nwhy: w\n\nid: a\nkernels: 6.1 -\nfs: any\nop: any\ndivergence: return\n"
		  "match: errno EINVAL EIO\nfunction: f\nwhy: w\n", "t:12: entry 'a' defined twice" },
		{ "function: f\nwhy: w\n\nkernels: 6.1 -\n", "t:12: an entry starts with 'id:'" },
		{ "function: f\nwhy: w\n\nid: b\nkernels: 6.15 - 6.12\n", "t:13: kernel range '6.15 - 6.12' is empty" },
		{ "function: f\nwhy: w\n\nid: b\nkernels: six -\n", "t:13: bad kernel range 'six -'" },
		{ "function: f\nwhy: w\n\nid: b\nkernels: 6.1\n", "t:13: bad kernel range '6.1'" },
		{ "function: f\nwhy: w\n\nid: b\nmatch: errno EINVAL ENOTANERRNO\n", "t:13: unknown errno name" },
		{ "function: f\nwhy: w\n\nid: b\nmatch: map-folio-data 3000\n", "t:13: map-folio-data: 3000" },
		{ "function: f\nwhy: w\n\nid: b\nop: frobnicate\n", "t:13: unknown op kind 'frobnicate'" },
		{ "function: f\nwhy: w\n\nid: b\nfs: btrfs\n", "t:13: fs 'btrfs'" },
		{ "function: f\nwhy: w\n\nid: B!\n", "t:12: id 'B!'" },
		{ "function: f\nwhy: w\n\nid: b\nkernels: 6.1 -\nfs: any\nop: any\ndivergence: map\n"
		  "match: errno EINVAL EIO\nfunction: f\nwhy: w\n", "t:12: entry 'b': errno rules go with" },
		{ "function: f\nwhy: w\njust words\n", "t:11: want 'key: value'" },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char text[1024], err[256] = "";
		snprintf(text, sizeof(text), "%s%s", head, cases[k].tail);
		assert_int_equal(dt_xdiff_parse(text, "t", &x, err, sizeof(err)), -EINVAL);
		if (strncmp(err, cases[k].want, strlen(cases[k].want)))
			fail_msg("case %zu: got '%s', want '%s...'", k, err, cases[k].want);
	}
	char err[256];
	assert_int_equal(dt_xdiff_load("/nonexistent/kernels.txt", &x, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/kernels.txt"));
}

/* Run `f0 fmode 0x28 0 4096` (insert|collapse: 6.1 says EINVAL, 6.12 and
 * later EOPNOTSUPP) on a real directory with the entries in text, the
 * kernel taken to be `release`: the divergence kind, *hits of entry 0. */
static int run_fmode(const char *dir, const char *text, const char *release, uint64_t *hits)
{
	static struct dt_xdiffs x;
	struct dt_target t;
	struct dt_session *s;
	struct dt_exec ex;
	struct dt_div d = { 0 };
	struct dt_opts o = { .check_every = 0, .map_batch = 1, .xdiff = &x };
	struct dt_op op;
	char spec[512], err[512];

	assert_int_equal(dt_xdiff_parse(text, "t", &x, err, sizeof(err)), 0);
	assert_int_equal(dt_xdiff_select(&x, release), 0);
	snprintf(spec, sizeof(spec), "dir:%s:ext4", dir);
	if (dt_target_init(&t, spec, "xd", err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(dt_session_open(&t, 1, &s, err, sizeof(err)), 0);
	assert_int_equal(dt_exec_init(&ex, s, &o), 0);
	assert_int_equal(dt_op_parse("f0 fmode 0x28 0 4096", &op, err, sizeof(err)), 0);
	int rc = dt_exec_op(&ex, &op, 0, &d);
	*hits = t.xdiff_hits[0];
	dt_div_free(&d);
	dt_exec_fini(&ex);
	dt_session_close(s);
	dt_target_fini(&t);
	return rc;
}

static void test_applied(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_expected.XXXXXX";
	assert_non_null(mkdtemp(dir));
	/* what this host's kernel says to the mode (the model says EINVAL) */
	char p[64];
	snprintf(p, sizeof(p), "%s/probe", dir);
	int fd = open(p, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	int kr = fallocate(fd, 0x28, 0, 4096) ? errno : 0;
	close(fd);
	unlink(p);
	int newer = kr == EOPNOTSUPP;

	const char *entry = "id: e\nkernels: 6.12 -\nfs: any\nop: fmode\ndivergence: return\n"
			    "match: errno EINVAL EOPNOTSUPP\nfunction: vfs_fallocate() 6.12\nwhy: w\n";
	const char *other = "id: e\nkernels: 6.12 -\nfs: any\nop: fmode\ndivergence: return\n"
			    "match: errno EINVAL EPERM\nfunction: vfs_fallocate() 6.12\nwhy: w\n";
	uint64_t hits;
	/* the kernel in range: hidden and counted (on a 6.1 host there is
	 * nothing to hide: no divergence, no count) */
	assert_int_equal(run_fmode(dir, entry, "6.18.1", &hits), DV_NONE);
	assert_int_equal(hits, (uint64_t)newer);
	/* out of range: the divergence stays */
	assert_int_equal(run_fmode(dir, entry, "6.11.9", &hits), newer ? DV_RET : DV_NONE);
	assert_int_equal(hits, 0);
	/* in range, another errno pair: the divergence stays */
	assert_int_equal(run_fmode(dir, other, "6.18.1", &hits), newer ? DV_RET : DV_NONE);
	assert_int_equal(hits, 0);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_applied),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
