/* SPDX-License-Identifier: MIT */
/*
 * test_shiftmap.c - moving ops across removed shifts (dt_relocate(),
 * cmocka): a removed insert pulls later offsets back, a removed collapse
 * pushes them on, an op inside a removed insert's hole lands at its start
 * with its length, kept shifts move what follows with them, a refused
 * shift (shifted[] 0) moves nothing, each kind relocates by its own rule
 * (a truncate's size, a reflink's source range, an I/O length that never
 * grows, negative offsets untouched), keeping everything is the identity,
 * and a bad file index is refused.
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

#define K 4096

/* Parse lines[0..n) into ops; relocate the ones keep[] names. */
static ssize_t reloc(const char *const *lines, size_t n, const uint8_t *shifted,
		     const uint8_t *keep, int nfiles, struct dt_op *out)
{
	struct dt_op ops[16];
	char err[256];

	assert_true(n <= 16);
	for (size_t j = 0; j < n; j++)
		if (dt_op_parse(lines[j], &ops[j], err, sizeof(err)))
			fail_msg("'%s': %s", lines[j], err);
	return dt_relocate(ops, shifted, keep, n, nfiles, out);
}

static void test_removed_insert(void **state)
{
	const char *log[] = { "f0 pwrite -S 1 0 65536", "f0 finsert 16384 8192",
			      "f0 pwrite -S 2 40960 4096", "f0 pread 4096 4096",
			      "f0 fpunch 18432 4096" };
	uint8_t sh[] = { 0, 1, 0, 0, 0 }, keep[] = { 1, 0, 1, 1, 1 };
	struct dt_op out[5];

	(void)state;
	assert_int_equal(reloc(log, 5, sh, keep, 1, out), 4);
	assert_int_equal(out[1].off, 40960 - 8192);	/* after the hole: pulled back */
	assert_int_equal(out[2].off, 4096);		/* before it: unchanged */
	/* inside the removed hole: at its start, with its length */
	assert_int_equal(out[3].off, 16384);
	assert_int_equal(out[3].len, 4096);
}

static void test_removed_collapse(void **state)
{
	const char *log[] = { "f0 fcollapse 8192 8192", "f0 pwrite -S 1 8192 4096",
			      "f0 truncate 20000", "f0 seek -d 4096" };
	uint8_t sh[] = { 1, 0, 0, 0 }, keep[] = { 0, 1, 1, 1 };
	struct dt_op out[4];

	(void)state;
	assert_int_equal(reloc(log, 4, sh, keep, 1, out), 3);
	assert_int_equal(out[0].off, 8192 + 8192);	/* pushed on */
	assert_int_equal(out[0].len, 4096);
	assert_int_equal(out[1].off, 20000 + 8192);	/* a size: its end */
	assert_int_equal(out[2].off, 4096);		/* before the seam */
}

static void test_refused_shift_moves_nothing(void **state)
{
	const char *log[] = { "f0 finsert 0 8192", "f0 pwrite -S 1 40960 4096" };
	uint8_t sh[] = { 0, 0 }, keep[] = { 0, 1 };
	struct dt_op out[2];

	(void)state;
	assert_int_equal(reloc(log, 2, sh, keep, 1, out), 1);
	assert_int_equal(out[0].off, 40960);
	assert_int_equal(reloc(log, 2, NULL, keep, 1, out), 1);	/* no shifted[] */
	assert_int_equal(out[0].off, 40960);
}

/* A kept insert after a removed one: both its offset and what follows it
 * go through the map; the kept hole stays a hole of its own length. */
static void test_kept_shift(void **state)
{
	const char *log[] = { "f0 finsert 0 8192", "f0 finsert 16384 4096",
			      "f0 pwrite -S 1 24576 4096", "f0 pwrite -S 2 17000 10" };
	uint8_t sh[] = { 1, 1, 0, 0 }, keep[] = { 0, 1, 1, 1 };
	struct dt_op out[4];

	(void)state;
	assert_int_equal(reloc(log, 4, sh, keep, 1, out), 3);
	assert_int_equal(out[0].off, 16384 - 8192);
	assert_int_equal(out[0].len, 4096);
	assert_int_equal(out[1].off, 24576 - 8192);
	assert_int_equal(out[2].off, 17000 - 8192);	/* inside the kept hole */
}

/* Per-file maps: a shift of f0 does not move f1's ops; a reflink's source
 * range goes through its own file's map; an I/O length never grows. */
static void test_per_kind_rules(void **state)
{
	const char *log[] = { "f0 fcollapse 0 8192", "f1 pwrite -S 1 16384 4096",
			      "f1 reflink f0 4096 0 8192", "f0 pread 0 8192",
			      "f0 pwrite -S 1 -4096 10", "f0 fsync", "drop_caches" };
	uint8_t sh[] = { 1, 0, 0, 0, 0, 0, 0 }, keep[] = { 0, 1, 1, 1, 1, 1, 1 };
	struct dt_op out[7];

	(void)state;
	assert_int_equal(reloc(log, 7, sh, keep, 2, out), 6);
	assert_int_equal(out[0].off, 16384);		/* another file: as it was */
	assert_int_equal(out[1].soff, 4096 + 8192);	/* source through f0's map */
	assert_int_equal(out[1].off, 0);		/* destination through f1's */
	assert_int_equal(out[1].len, 8192);
	assert_int_equal(out[2].off, 8192);
	assert_int_equal(out[2].len, 8192);
	assert_int_equal(out[3].off, -4096);		/* an errno check stays one */
	assert_int_equal(out[4].kind, DT_FSYNC);
	assert_int_equal(out[5].kind, DT_DROP);
}

/* Keeping every op relocates nothing, whatever shifted. */
static void test_keep_all_is_identity(void **state)
{
	struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = 4096 };
	struct rm_file *m[2];
	int live[DT_MAXFILES] = { 1, 1 };
	static struct dt_op ops[3000], out[3000];
	static uint8_t sh[3000], keep[3000];
	struct dt_gen g;
	unsigned char *buf = malloc(DT_MAX_IO);

	(void)state;
	assert_non_null(buf);
	for (int i = 0; i < 2; i++)
		assert_int_equal(rm_file_new(&o, &m[i]), 0);
	dt_gen_init(&g, 21, 2, 4096, rm_profile_maxbytes(RM_PROFILE_EXT4, 4096));
	g.weights[DT_REFLINK] = 15;
	for (int j = 0; j < 3000; j++) {
		dt_gen_next(&g, m, live, &ops[j]);
		int64_t before = ops[j].kind < DT_DROP ? rm_size(m[ops[j].file]) : 0;
		if (dt_ops[ops[j].kind].model)
			dt_ops[ops[j].kind].model(m, 2, &ops[j], buf);
		sh[j] = ops[j].kind < DT_DROP && rm_size(m[ops[j].file]) != before;
		keep[j] = 1;
	}
	assert_int_equal(dt_relocate(ops, sh, keep, 3000, 2, out), 3000);
	for (int j = 0; j < 3000; j++)
		assert_memory_equal(&ops[j], &out[j], sizeof(ops[j]));
	for (int i = 0; i < 2; i++)
		rm_file_free(m[i]);
	free(buf);
}

static void test_bad_file(void **state)
{
	struct dt_op ops[2] = { { .kind = DT_FSYNC, .file = 2 },
				{ .kind = DT_REFLINK, .file = 0, .src = 3 } };
	uint8_t keep[2] = { 1, 1 };
	struct dt_op out[2];

	(void)state;
	assert_int_equal(dt_relocate(ops, NULL, keep, 1, 2, out), -EINVAL);
	assert_int_equal(dt_relocate(ops + 1, NULL, keep, 1, 2, out), -EINVAL);
	assert_int_equal(dt_relocate(ops, NULL, keep, 1, 0, out), -EINVAL);
	assert_int_equal(dt_relocate(ops, NULL, keep, 1, DT_MAXFILES + 1, out), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_removed_insert),
		cmocka_unit_test(test_removed_collapse),
		cmocka_unit_test(test_refused_shift_moves_nothing),
		cmocka_unit_test(test_kept_shift),
		cmocka_unit_test(test_per_kind_rules),
		cmocka_unit_test(test_keep_all_is_identity),
		cmocka_unit_test(test_bad_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
