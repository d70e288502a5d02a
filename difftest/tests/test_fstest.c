/* SPDX-License-Identifier: MIT */
/*
 * test_fstest.c - difftest --emit-fstest (fstest.c): the xfstests test and
 * golden output made from known op logs: the conventions (preamble,
 * groups, requirements, scratch device, status), the strict model's
 * answers in the golden output, the fsck and map checks, and bad input
 * (an op xfs_io cannot issue, an unknown target) refused with a message
 * and nothing written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fstest.h"

static struct dt_op ops[16];

static size_t parse(const char *const *lines)
{
	char err[256];
	size_t n = 0;

	for (; lines[n]; n++)
		assert_int_equal(dt_op_parse(lines[n], &ops[n], err, sizeof(err)), 0);
	return n;
}

/* The test and golden output of in, as strings (caller frees). */
static int emit(const struct dt_fstest_in *in, char **t, char **o, char *err, size_t errn)
{
	size_t tl, ol;
	FILE *ft = open_memstream(t, &tl), *fo = open_memstream(o, &ol);
	assert_non_null(ft);
	assert_non_null(fo);
	int rc = dt_fstest_write(ft, fo, in, 900, err, errn);
	fclose(ft);
	fclose(fo);
	return rc;
}

static void test_ext4_erratum_golden_output_is_the_strict_model(void **st)
{
	(void)st;
	static const char *const l[] = { "f0 fzero 3280896 61411", "f0 fzero -k 3305472 163840",
					 "f0 finsert 745472 17592182587392", NULL };
	struct dt_fstest_in in = { .source = "ops.log", .target = "ext4",
				   .profile = RM_PROFILE_EXT4, .blocksize = 4096, .nfiles = 1,
				   .ops = ops, .n = parse(l) };
	char *t, *o, err[256];
	assert_int_equal(emit(&in, &t, &o, err, sizeof(err)), 0);
	/* xfstests conventions */
	assert_non_null(strstr(t, "#! /bin/bash\n# SPDX-License-Identifier: GPL-2.0\n"));
	assert_non_null(strstr(t, "\n. ./common/preamble\n_begin_fstest auto quick insert zero\n"));
	assert_non_null(strstr(t, "\n. ./common/filter\n"));
	assert_non_null(strstr(t, "\n_require_scratch\n"));
	assert_non_null(strstr(t, "\n_require_xfs_io_command \"fzero\" \"-k\"\n"));
	assert_non_null(strstr(t, "\n_require_xfs_io_command \"finsert\"\n"));
	assert_null(strstr(t, "\"falloc\""));
	assert_non_null(strstr(t, "\n_scratch_mkfs_blocksized 4096 >> $seqres.full 2>&1\n"
			       "_scratch_mount\n"));
	assert_non_null(strstr(t, "$XFS_IO_PROG -c \"finsert 745472 17592182587392\" $f0 2>&1 | "
			       "_filter_xfs_io\n"));
	assert_non_null(strstr(t, "\nstatus=0\nexit\n"));
	assert_null(strstr(t, "_check_scratch_fs"));
	/* strict: EINVAL and the size unchanged (the 6.1 kernel grows it) */
	assert_string_equal(o, "QA output created by 900\n"
			    "op 1: f0 fzero 3280896 61411\n"
			    "op 2: f0 fzero -k 3305472 163840\n"
			    "op 3: f0 finsert 745472 17592182587392\n"
			    "fallocate: Invalid argument\n"
			    "file0 size: 3342307\n"
			    "file0 md5: 024d3eb763aac4511790b3c76cd00c42\n");
	free(t);
	free(o);
}

static void test_fsck_and_remount_and_map_checks(void **st)
{
	(void)st;
	static const char *const l[] = { "f0 pwrite -S 0x41 0 4096",
					 "f0 falloc -k 9223372036854710272 4096",
					 "f0 finsert 0 1048576", "remount", "f0 fsync", NULL };
	struct dt_fstest_in in = { .source = "ops.log", .target = "xfs",
				   .profile = RM_PROFILE_XFS, .blocksize = 4096, .nfiles = 1,
				   .ops = ops, .n = parse(l), .fsck = 1,
				   .map_lo = 0, .map_hi = 3 * 4096 };
	char *t, *o, err[256];
	assert_int_equal(emit(&in, &t, &o, err, sizeof(err)), 0);
	assert_non_null(strstr(t, "\n_scratch_cycle_mount\n"));
	assert_non_null(strstr(t, "\n_check_scratch_fs\n"));
	assert_non_null(strstr(t, "_require_xfs_io_command \"fiemap\""));
	/* blocks 0-2 after inserting 1 MiB at 0: holes the model allows */
	assert_non_null(strstr(t, "\n_check_block_states $f0 0 2 8 . . .\n"));
	assert_non_null(strstr(o, "file0 size: 1052672\n"));
	assert_non_null(strstr(o, "file0 blocks 0..2: checked against the model\n"));
	free(t);
	free(o);
}

/* A read's bytes are checked: "pread -q -v" in the test, the model's
 * bytes in xfs_io's dump format in the golden output, at most 4 KiB. */
static void test_pread_dumps_the_model_bytes(void **st)
{
	(void)st;
	static const char *const l[] = { "f0 truncate 9223372036854710271",
					 "f0 pwrite -S 0x62 2097152 65536",
					 "f0 finsert 1048576 4096", "f0 pread 2101248 16",
					 "f0 pread 0 65536", NULL };
	struct dt_fstest_in in = { .source = "ops.log", .target = "xfs",
				   .profile = RM_PROFILE_XFS, .blocksize = 4096, .nfiles = 1,
				   .ops = ops, .n = parse(l) };
	char *t, *o, err[256];
	assert_int_equal(emit(&in, &t, &o, err, sizeof(err)), 0);
	assert_non_null(strstr(t, "\n$XFS_IO_PROG -c \"pread -q -v 2101248 16\" $f0\n"));
	assert_non_null(strstr(o, "op 4: f0 pread 2101248 16\n00201000:  62 62 62 62 62 62 62 62 "
				  "62 62 62 62 62 62 62 62  bbbbbbbbbbbbbbbb\n"));
	assert_non_null(strstr(t, "\n$XFS_IO_PROG -c \"pread -q -v 0 4096\" $f0\n"));
	assert_non_null(strstr(o, "00000ff0:  00 00"));
	assert_null(strstr(o, "00001000:"));
	free(t);
	free(o);
}

static void test_fusefs_front_and_generic_dir(void **st)
{
	(void)st;
	static const char *const l[] = { "f0 funshare 12168 17592186032248", NULL };
	struct dt_fstest_in in = { .source = "ops.log", .target = "fusefs",
				   .profile = RM_PROFILE_EXT4, .blocksize = 4096, .nfiles = 1,
				   .ops = ops, .n = parse(l) };
	const char *sub = NULL;
	char *t, *o, err[256];
	assert_int_equal(dt_fstest_subdir("fusefs", &sub), 0);
	assert_string_equal(sub, "generic");
	assert_int_equal(emit(&in, &t, &o, err, sizeof(err)), 0);
	/* the kernel's FUSE front answers before the server (EFBIG in the model) */
	assert_non_null(strstr(o, "fallocate: Operation not supported\n"));
	free(t);
	free(o);
}

/* Direct writes: an xfs_io -d of their own, _require_odirect, the strict
 * model's size (XFS 6.1 keeps the old size after a direct write whose last
 * block ends at 2^63) and errno; direct reads and FUSE targets refused. */
static void test_direct_writes(void **st)
{
	(void)st;
	static const char *const l[] = { "f0 dio_pwrite -S 0x41 9223372036854771200 4096",
					 "f0 dio_pwrite -S 0x42 100 512", NULL };
	struct dt_fstest_in in = { .source = "ops.log", .target = "xfs",
				   .profile = RM_PROFILE_XFS, .blocksize = 4096, .nfiles = 1,
				   .ops = ops, .n = parse(l) };
	char *t, *o, err[256] = "";
	assert_int_equal(emit(&in, &t, &o, err, sizeof(err)), 0);
	assert_non_null(strstr(t, "\n_begin_fstest auto quick rw\n"));
	assert_non_null(strstr(t, "\n_require_scratch\n_require_odirect\n"));
	assert_non_null(strstr(t, "\n$XFS_IO_PROG -d -c \"pwrite -q -b 4096 -S 0x41 "
			       "9223372036854771200 4096\" $f0 2>&1 | _filter_xfs_io\n"));
	/* intended: i_size is the write's end; the misaligned one is refused */
	assert_string_equal(o, "QA output created by 900\n"
			    "op 1: f0 dio_pwrite -S 0x41 9223372036854771200 4096\n"
			    "op 2: f0 dio_pwrite -S 0x42 100 512\n"
			    "pwrite: Invalid argument\n"
			    "file0 size: 9223372036854775296\n");
	free(t);
	free(o);
	in.n = parse(l);
	in.target = "fusefs:xfs";
	assert_int_equal(emit(&in, &t, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ext4 and xfs only"));
	free(t);
	free(o);
}

/* Direct reads: the strict model's answer (O4: a misaligned edge in a
 * written block is EINVAL) and its bytes. */
static void test_direct_reads(void **st)
{
	(void)st;
	static const char *const l[] = { "f0 pwrite -S 0x41 0 8192", "f0 dio_pread 0 16384",
					 "f0 dio_pread 100 512", NULL };
	struct dt_fstest_in in = { .source = "ops.log", .target = "ext4",
				   .profile = RM_PROFILE_EXT4, .blocksize = 4096, .nfiles = 1,
				   .ops = ops, .n = parse(l) };
	char *t, *o, err[256] = "";
	assert_int_equal(emit(&in, &t, &o, err, sizeof(err)), 0);
	assert_non_null(strstr(t, "\n_require_odirect\n"));
	assert_non_null(strstr(t, "\n$XFS_IO_PROG -d -c \"pread -q -b 16384 0 16384\" $f0 2>&1 | "
			       "_filter_xfs_io\n"));
	/* the read returned 8192 (EOF): its first 4096 bytes are dumped */
	assert_non_null(strstr(t, "\n$XFS_IO_PROG -c \"pread -q -v 0 4096\" $f0\n"));
	assert_non_null(strstr(o, "op 2: f0 dio_pread 0 16384\n00000000:  41 41 41"));
	assert_non_null(strstr(o, "op 3: f0 dio_pread 100 512\npread: Invalid argument\n"));
	free(t);
	free(o);
}

/* --fstest-session: one xfs_io, files open from the first op to the last
 * (the finding xfs-dio-read-past-eof-delalloc-eio needs it). */
static void test_session(void **st)
{
	(void)st;
	static const char *const l[] = { "f0 falloc 3633152 19050",
					 "f0 pwrite -S 0x5c 10366976 32768",
					 "f0 fzero 10403840 4096", "f0 dio_pread 10403840 53248",
					 "f1 dio_pwrite -S 0x42 100 512", NULL };
	struct dt_fstest_in in = { .source = "ops.log", .target = "xfs",
				   .profile = RM_PROFILE_XFS, .blocksize = 4096, .nfiles = 2,
				   .ops = ops, .n = parse(l), .session = 1 };
	char *t, *o, err[256] = "";
	assert_int_equal(emit(&in, &t, &o, err, sizeof(err)), 0);
	/* both descriptors of both files open before the first op; the last
	 * one opened is current, so the first op switches */
	assert_non_null(strstr(t, "\ncat > $tmp.ops <<EOF\nopen $f0\nopen -d $f0\nopen $f1\n"
			       "open -d $f1\nfile 0\nfalloc 3633152 19050\n"
			       "pwrite -q -S 0x5c 10366976 32768\nfzero 10403840 4096\nfile 1\n"
			       "pread -q -b 53248 10403840 53248\nfile 0\n"
			       "pread -q -v 10403840 4096\nfile 3\n"
			       "pwrite -q -b 512 -S 0x42 100 512\nEOF\n"));
	assert_non_null(strstr(t, "\n$XFS_IO_PROG < $tmp.ops 2> $tmp.err | sed -E "));
	assert_null(strstr(t, "echo \"op 1:"));
	/* the dump first, then the failed calls, in order */
	assert_non_null(strstr(o, "QA output created by 900\n009ec000:  00 00"));
	assert_non_null(strstr(o, "\nfailed calls:\npwrite: Invalid argument\nfile0 size: 10407936\n"));
	free(t);
	free(o);

	/* what a session cannot hold: a close, a shell command, a mapping,
	 * a listing; and the option changes nothing else */
	static const char *const bad[] = { "f0 reopen", "remount", "drop_caches",
					   "f0 mwrite -S 0x41 0 4096", "f0 seek -d 0", NULL };
	for (int k = 0; bad[k]; k++) {
		const char *const one[] = { bad[k], NULL };
		in.n = parse(one);
		in.nfiles = 1;
		assert_int_equal(emit(&in, &t, &o, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "xfs_io session"));
		free(t);
		free(o);
	}
}

static void test_bad_input_refused(void **st)
{
	(void)st;
	static const char *const l[] = { "f0 pwrite -S 0x41 0 4096", "f1 reflink f0 0 0 4096",
					 NULL };
	struct dt_fstest_in in = { .source = "ops.log", .target = "xfs",
				   .profile = RM_PROFILE_XFS, .blocksize = 4096, .nfiles = 2,
				   .ops = ops, .n = parse(l) };
	char *t, *o, err[256] = "";
	/* a two-file op names its source as the test's variable */
	assert_int_equal(emit(&in, &t, &o, err, sizeof(err)), 0);
	assert_non_null(strstr(t, "\n. ./common/filter\n. ./common/reflink\n"));
	assert_non_null(strstr(t, "\n_require_scratch_reflink\n_require_xfs_io_command \"reflink\"\n"));
	assert_non_null(strstr(t, "\n$XFS_IO_PROG -c \"reflink -q $f0 0 0 4096\" $f1 2>&1 | "
			       "_filter_xfs_io\n"));
	free(t);
	free(o);
	/* a source the session does not have */
	static const char *const src[] = { "f1 reflink f2 0 0 4096", NULL };
	in.n = parse(src);
	assert_int_equal(emit(&in, &t, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "source file 2 of 2"));
	free(t);
	free(o);
	/* a fill needs the free= file system a test does not make */
	static const char *const fill[] = { "f0 pwrite -S 0x41 0 4096", "fill", NULL };
	in.n = parse(fill);
	assert_int_equal(emit(&in, &t, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "op 2 (fill): a fill or unfill needs a free= configuration"));
	free(t);
	free(o);
	in.n = parse(l);
	in.target = "model";
	in.n = 1;
	assert_int_equal(emit(&in, &t, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "model"));
	free(t);
	free(o);
}

/* Files on disk: numbering from 900, nothing left behind on error. */
static void test_emit_numbers_and_cleans_up(void **st)
{
	(void)st;
	char dir[] = "/tmp/test_fstest.XXXXXX", path[PATH_MAX + 16], err[256], p[PATH_MAX + 64];
	struct stat sb;
	static const char *const l[] = { "f0 pwrite -S 0x41 0 4096", NULL };
	struct dt_fstest_in in = { .source = "ops.log", .target = "ext4",
				   .profile = RM_PROFILE_EXT4, .blocksize = 4096, .nfiles = 1,
				   .ops = ops, .n = parse(l) };
	assert_non_null(mkdtemp(dir));
	assert_int_equal(dt_emit_fstest(dir, &in, path, sizeof(path), err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/tests/ext4/900", dir);
	assert_string_equal(path, p);
	assert_int_equal(stat(p, &sb), 0);
	assert_true(sb.st_mode & S_IXUSR);
	assert_int_equal(dt_emit_fstest(dir, &in, path, sizeof(path), err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/tests/ext4/901.out", dir);
	assert_int_equal(stat(p, &sb), 0);
	in.nfiles = 0;	/* refused: no 902 appears */
	assert_int_not_equal(dt_emit_fstest(dir, &in, path, sizeof(path), err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/tests/ext4/902", dir);
	assert_int_not_equal(stat(p, &sb), 0);
	snprintf(p, sizeof(p), "rm -rf %s", dir);
	assert_int_equal(system(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ext4_erratum_golden_output_is_the_strict_model),
		cmocka_unit_test(test_fsck_and_remount_and_map_checks),
		cmocka_unit_test(test_pread_dumps_the_model_bytes),
		cmocka_unit_test(test_fusefs_front_and_generic_dir),
		cmocka_unit_test(test_direct_writes),
		cmocka_unit_test(test_direct_reads),
		cmocka_unit_test(test_session),
		cmocka_unit_test(test_bad_input_refused),
		cmocka_unit_test(test_emit_numbers_and_cleans_up),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
