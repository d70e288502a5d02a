/* SPDX-License-Identifier: MIT */
/*
 * test_op.c - the op table and the op log's text form (cmocka): every
 * kind has a complete descriptor; every kind renders to a log line that
 * parses back to the same op, at the edges of its numbers; generated ops
 * do too; malformed lines (wrong words, out-of-range or overflowing
 * numbers) are refused with a message that names the problem and leave
 * the op as it was; the xfs_io forms of a reproducer.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "optab.h"

static void test_table_complete(void **state)
{
	(void)state;
	for (int k = 0; k < DT_NKINDS; k++) {
		const struct dt_opdesc *od = &dt_ops[k];
		assert_non_null(od->name);
		assert_non_null(od->cmd);
		assert_non_null(od->log_format);
		assert_non_null(od->log_parse);
		assert_non_null(od->exec);
		assert_non_null(od->xfs_io);
		assert_non_null(od->reloc);
		assert_ptr_equal(dt_opdesc_of(k), od);
		assert_string_equal(dt_kind_name(k), od->name);
		assert_int_equal(dt_kind_parse(od->name), k);
		/* fallocate kinds, and only they, have a mode word */
		assert_int_equal(!!(od->flags & DT_OPF_FALLOC), od->mode != DT_MODE_NONE);
		/* only insert and collapse shift */
		assert_int_equal(od->shift != 0, k == DT_INSERT || k == DT_COLLAPSE);
		/* a global op has no offset and settles the maps */
		if (od->flags & DT_OPF_GLOBAL)
			assert_int_equal(od->flags & (DT_OPF_NOOFF | DT_OPF_SETTLE),
					 DT_OPF_NOOFF | DT_OPF_SETTLE);
		for (int j = 0; j < k; j++) {
			assert_string_not_equal(dt_ops[j].name, od->name);
			assert_string_not_equal(dt_ops[j].cmd, od->cmd);
		}
	}
	assert_string_equal(dt_opdesc_of(-1)->name, "?");
	assert_string_equal(dt_opdesc_of(DT_NKINDS)->name, "?");
	assert_int_equal(dt_kind_parse("frobnicate"), -1);
	struct dt_op fm = { .kind = DT_FMODE, .mode = 0x28 };
	assert_int_equal(dt_kind_mode(&fm), 0x28);
	struct dt_op pu = { .kind = DT_PUNCH };
	assert_int_equal(dt_kind_mode(&pu), RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE);
	struct dt_op fs = { .kind = DT_FSYNC };
	assert_int_equal(dt_kind_mode(&fs), -1);
}

/* Render op, parse it back: the same op. */
static void roundtrip(const struct dt_op *op)
{
	char line[128], err[256];
	struct dt_op back;

	dt_op_format(op, line, sizeof(line));
	if (dt_op_parse(line, &back, err, sizeof(err)))
		fail_msg("'%s' does not parse: %s", line, err);
	if (!dt_op_equal(op, &back))
		fail_msg("'%s' parses to a different op", line);
	char again[128];
	dt_op_format(&back, again, sizeof(again));
	assert_string_equal(line, again);
}

static void test_roundtrip_every_kind(void **state)
{
	static const int64_t nums[] = { 0, 1, 4095, 4096, INT64_MAX, INT64_MIN, -1, 1 << 20 };
	static const int32_t modes[] = { 0, 1, -1, INT32_MIN, 0x28 };
	const int nn = (int)(sizeof(nums) / sizeof(nums[0]));

	(void)state;
	for (int k = 0; k < DT_NKINDS; k++) {
		const struct dt_opdesc *od = &dt_ops[k];
		for (int a = 0; a < nn; a++)
			for (int b = 0; b < nn; b++) {
				struct dt_op op = { .kind = (uint8_t)k };
				if (od->syntax != DT_SYN_GLOBAL)
					op.file = (uint8_t)((a + b) % DT_MAXFILES);
				if (od->syntax >= DT_SYN_OFF)
					op.off = nums[a];
				if (od->syntax >= DT_SYN_RANGE) {
					op.len = nums[b];
					if ((od->flags & DT_OPF_IO) && (op.len < 0 || op.len > DT_MAX_IO))
						op.len = DT_MAX_IO;
				}
				if (od->syntax == DT_SYN_PAT_RANGE)
					op.pat = (uint8_t)(a % 2 ? 255 : 1 + b);
				if (od->syntax == DT_SYN_MODE_RANGE)
					op.mode = modes[(a + b) % 5];
				if (od->syntax == DT_SYN_SYNC_RANGE)
					op.mode = (int32_t)(DT_SR_WAIT_BEFORE << (a + b) % 3); /* one flag */
				if (od->syntax == DT_SYN_REFLINK) {
					op.src = (uint8_t)(DT_MAXFILES - 1 - a);
					op.soff = nums[(a + 1) % nn];
				}
				roundtrip(&op);
			}
	}
}

static void test_roundtrip_generated(void **state)
{
	struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = 4096 };
	struct rm_file *m[3];
	int live[DT_MAXFILES] = { 1, 1, 1 };
	unsigned char *buf = malloc(DT_MAX_IO);
	struct dt_gen g;
	int seen[DT_NKINDS] = { 0 };

	(void)state;
	assert_non_null(buf);
	for (int i = 0; i < 3; i++)
		assert_int_equal(rm_file_new(&o, &m[i]), 0);
	dt_gen_init(&g, 99, 3, 4096, rm_profile_maxbytes(RM_PROFILE_EXT4, 4096));
	g.weights[DT_REFLINK] = 15;
	g.weights[DT_CHMOD] = 10;	/* --user's */
	dt_weights_writeback(g.weights);	/* fdatasync, sync_range, fiemap_sync */
	g.weights[DT_DIO_WRITE] = g.weights[DT_DIO_READ] = 10;
	g.weights[DT_COPY_RANGE] = g.weights[DT_DEDUPE] = 10;
	for (int k = 0; k < 20000; k++) {
		struct dt_op op;
		dt_gen_next(&g, m, live, &op);
		seen[op.kind] = 1;
		/* one sync_range flag: xfs_io's sync_range passes only one */
		if (op.kind == DT_SYNC_RANGE)
			assert_true(op.mode == DT_SR_WAIT_BEFORE || op.mode == DT_SR_WRITE ||
				    op.mode == DT_SR_WAIT_AFTER);
		roundtrip(&op);
		if (dt_ops[op.kind].model)	/* the files evolve as in a run */
			dt_ops[op.kind].model(m, 3, &op, buf);
	}
	for (int k = 0; k < DT_NKINDS; k++)
		if (!seen[k] && !(dt_ops[k].flags & DT_OPF_NOGEN))
			fail_msg("20000 generated ops have no %s", dt_kind_name(k));
		else if (seen[k] && (dt_ops[k].flags & DT_OPF_NOGEN))
			fail_msg("%s was generated", dt_kind_name(k));
	for (int i = 0; i < 3; i++)
		rm_file_free(m[i]);
	free(buf);
}

static void test_malformed(void **state)
{
	static const struct { const char *line, *msg; } bad[] = {
		{ "", "empty line" },
		{ "   \t", "empty line" },
		{ "f0", "missing command" },
		{ "f16 fsync", "expected a file" },
		{ "f-1 fsync", "expected a file" },
		{ "f0x1 fsync", "expected a file" },
		{ "g0 fsync", "expected a file" },
		{ "f0 frobnicate 1 2", "unknown command 'frobnicate'" },
		{ "f0 seek 5", "forms: 'seek -d', 'seek -h'" },
		{ "f0 seek -x 5", "forms: 'seek -d', 'seek -h'" },
		{ "f0 pwrite 0 10", "takes 4 arguments, got 2" },
		{ "f0 pwrite -X 1 0 10", "needs -S PATTERN" },
		{ "f0 pwrite -S 0 0 10", "pattern must be 1..255" },
		{ "f0 mwrite -S 256 0 10", "pattern must be 1..255" },
		{ "f0 pwrite -S 1 0 1048577", "length must be 0..1048576" },
		{ "f0 pread 0 -1", "length must be 0..1048576" },
		{ "f0 mread 0 9223372036854775807", "length must be 0..1048576" },
		{ "f0 truncate 9223372036854775808", "out of range" },
		{ "f0 truncate -9223372036854775809", "out of range" },
		{ "f0 fpunch 0 99999999999999999999999", "out of range" },
		{ "f0 truncate 12abc", "bad number '12abc'" },
		{ "f0 truncate 0x", "bad number" },
		{ "f0 falloc -k 1", "takes 2 arguments, got 1" },
		{ "f0 fmode 0x100000000 0 1", "mode '0x100000000' is out of range" },
		{ "f0 fmode -2147483649 0 1", "out of range" },
		{ "f0 reflink f16 0 0 1", "source must be a file" },
		{ "f0 reflink 1 0 0 1", "source must be a file" },
		{ "f0 reflink f1 0 0", "takes 4 arguments" },
		{ "drop_caches now", "takes 0 arguments" },
		{ "remount f0", "takes 0 arguments" },
		{ "fill 4096", "takes 0 arguments" },
		{ "unfill f0", "takes 0 arguments" },
		{ "f0 fsync now", "takes 0 arguments" },
		{ "f0 pwrite -S 1 0 1 2 3 4", "too many words" },
		{ "f0 sync_range 0", "takes 2 arguments, got 1" },
		{ "f0 sync_range -x 0 4096", "takes 2 arguments, got 3" },
		{ "f0 sync_range -a 0 4096 1", "takes 2 arguments, got 3" },
		{ "f0 fdatasync 0", "takes 0 arguments" },
		{ "f0 fiemap 0", "takes 2 arguments, got 1" },
		{ "f0 copy_range f1 0 0", "takes 4 arguments, got 3" },
		{ "f0 dedupe 1 0 0 4096", "source must be a file" },
		{ "f0 dio_pwrite 0 4096", "takes" },
	};
	char err[256];

	(void)state;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		struct dt_op op, before;
		memset(&op, 0xa5, sizeof(op));
		before = op;
		err[0] = 0;
		if (dt_op_parse(bad[k].line, &op, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' was accepted", bad[k].line);
		if (!strstr(err, bad[k].msg))
			fail_msg("'%s': message '%s' lacks '%s'", bad[k].line, err, bad[k].msg);
		assert_memory_equal(&op, &before, sizeof(op));	/* unchanged */
	}
	char longline[700];
	memset(longline, '1', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = 0;
	memcpy(longline, "f0 truncate ", 12);
	struct dt_op op;
	assert_int_equal(dt_op_parse(longline, &op, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line too long"));
	/* and what is accepted: hex and signed numbers, tabs, a CR */
	assert_int_equal(dt_op_parse("f3\tfalloc -k 0x1000 -4096\r\n", &op, err, sizeof(err)), 0);
	assert_int_equal(op.kind, DT_FALLOC_KEEP);
	assert_int_equal(op.file, 3);
	assert_int_equal(op.off, 4096);
	assert_int_equal(op.len, -4096);
	assert_int_equal(dt_op_parse("f0 fmode 0xffffffff 0 1", &op, err, sizeof(err)), 0);
	assert_int_equal(op.mode, -1);
	assert_int_equal(dt_op_parse("f0 truncate -9223372036854775808", &op, err, sizeof(err)), 0);
	assert_true(op.off == INT64_MIN);
	/* sync_range: xfs_io's flags, grouped or not; none means WRITE, and
	 * of several the last one given wins, as in xfs_io's sync_range_f();
	 * a negative number is no flag */
	assert_int_equal(dt_op_parse("f1 sync_range 0 4096", &op, err, sizeof(err)), 0);
	assert_int_equal(op.kind, DT_SYNC_RANGE);
	assert_int_equal(op.mode, DT_SR_WRITE);
	assert_int_equal(dt_op_parse("f1 sync_range -abw 4096 0", &op, err, sizeof(err)), 0);
	assert_int_equal(op.mode, DT_SR_WRITE);
	assert_int_equal(op.off, 4096);
	assert_int_equal(dt_op_parse("f1 sync_range -b -a -1 5", &op, err, sizeof(err)), 0);
	assert_int_equal(op.mode, DT_SR_WAIT_AFTER);
	assert_int_equal(op.off, -1);
	assert_int_equal(op.len, 5);
	assert_int_equal(dt_op_parse("f1 sync_range -a -w 0 4096", &op, err, sizeof(err)), 0);
	assert_int_equal(op.mode, DT_SR_WRITE);
	assert_int_equal(dt_op_parse("f1 sync_range -wab 0 4096", &op, err, sizeof(err)), 0);
	assert_int_equal(op.mode, DT_SR_WAIT_BEFORE);
}

static void test_xfs_io(void **state)
{
	static const struct { const char *line; int64_t size; int rc; const char *cmd; } cases[] = {
		{ "f0 pwrite -S 0x41 0 4096", 0, 1, "-c \"pwrite -q -S 0x41 0 4096\"" },
		{ "f0 pread 4096 10", 0, 1, "-c \"pread -q 4096 10\"" },
		{ "f0 mwrite -S 0x42 5000 10000", 8192, 1,
		  "-c \"mmap -rw 4096 4096\" -c \"mwrite -S 0x42 5000 3192\" -c \"munmap\"" },
		{ "f0 mread 8192 10", 8192, DT_XIO_NOTHING, "# (mread past EOF: nothing to do)" },
		{ "f0 truncate 100", 0, 1, "-c \"truncate 100\"" },
		{ "f0 seek -h 7", 0, 1, "-c \"seek -h 7\"" },
		{ "f0 falloc -k 0 4096", 0, 1, "-c \"falloc -k 0 4096\"" },
		{ "f0 fpunch 0 4096", 0, 1, "-c \"fpunch 0 4096\"" },
		{ "f0 fmode 0x1 0 4096", 0, 1, "-c \"falloc -k 0 4096\"" },
		{ "f0 fmode 0x28 0 4096", 0, DT_XIO_NONE,
		  "# fallocate(mode 0x28, 0, 4096) has no xfs_io form" },
		{ "f0 finsert -4096 4096", 0, DT_XIO_NONE,
		  "# insert -4096 4096: negative numbers have no xfs_io form" },
		{ "f0 truncate -1", 0, DT_XIO_NONE, NULL },
		{ "f1 reflink f2 0 4096 8192", 0, 1, "-c \"reflink -q $F2 0 4096 8192\"" },
		{ "f0 fsync", 0, 1, "-c \"fsync\"" },
		{ "f0 fdatasync", 0, 1, "-c \"fdatasync\"" },
		{ "f0 sync_range -b 0 4096", 0, 1, "-c \"sync_range -b 0 4096\"" },
		{ "f0 sync_range 4096 0", 0, 1, "-c \"sync_range -w 4096 0\"" },
		/* an old log's combined flags: the one xfs_io would pass */
		{ "f0 sync_range -b -a 0 4096", 0, 1, "-c \"sync_range -a 0 4096\"" },
		{ "f0 sync_range -a 0 -1", 0, DT_XIO_NONE, NULL },
		{ "f0 fiemap 0 8192", 0, 1, "-c \"fiemap 0 8192\"" },
		{ "f0 dio_pwrite -S 0x41 512 4096", 0, 1,
		  "-d -c \"pwrite -q -b 4096 -S 0x41 512 4096\"" },
		{ "f0 dio_pread 100 0", 0, 1, "-d -c \"pread -q 100 0\"" },
		{ "f1 copy_range f2 1 4096 8192", 0, 1, "-c \"copy_range -s 1 -d 4096 -l 8192 $F2\"" },
		{ "f1 copy_range f2 -1 4096 8192", 0, DT_XIO_NONE, NULL },
		{ "f1 dedupe f0 0 4096 8192", 0, 1, "-c \"dedupe -q $F0 0 4096 8192\"" },
		{ "f1 dedupe f0 0 4096 0", 0, DT_XIO_NONE, NULL },
		{ "f0 reopen", 0, DT_XIO_NOTHING, "" },
		{ "remount", 0, DT_XIO_NOTHING, "" },
		{ "fill", 0, DT_XIO_NOTHING, "" },	/* repro.sh: sync; fill_up */
		{ "unfill", 0, DT_XIO_NOTHING, "" },
	};
	char err[256], buf[512];

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct dt_op op;
		assert_int_equal(dt_op_parse(cases[k].line, &op, err, sizeof(err)), 0);
		int rc = dt_op_xfs_io(&op, cases[k].size, buf, sizeof(buf));
		if (rc != cases[k].rc)
			fail_msg("'%s': %d, expected %d (%s)", cases[k].line, rc, cases[k].rc, buf);
		if (cases[k].cmd)
			assert_string_equal(buf, cases[k].cmd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_complete),
		cmocka_unit_test(test_roundtrip_every_kind),
		cmocka_unit_test(test_roundtrip_generated),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_xfs_io),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
