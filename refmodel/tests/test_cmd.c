/* SPDX-License-Identifier: MIT */
/*
 * test_cmd.c - tests of rmcmd (the parser and executor behind rmio) and of
 * the rmio program: number syntax, every kind of malformed command (its
 * message, its failure, and that the model is left untouched), output
 * layouts checked against text captured from xfs_io 6.1 on real ext4 and
 * XFS files, the MD5 implementation against RFC 1321's vectors, and rmio's
 * exit statuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmd.h"
#include "refmodel.h"

/* A session whose stdout/stderr are captured in memory. */
struct cap {
	struct rm_file *f;
	struct rmcmd_session s;
	char *obuf, *ebuf;
	size_t olen, elen;
	FILE *o, *e;
};

static void cap_open(struct cap *c, enum rm_profile p)
{
	struct rm_opts opts = { .profile = p, .blocksize = 4096 };

	memset(c, 0, sizeof(*c));
	assert_int_equal(rm_file_new(&opts, &c->f), 0);
	c->o = open_memstream(&c->obuf, &c->olen);
	c->e = open_memstream(&c->ebuf, &c->elen);
	assert_non_null(c->o);
	assert_non_null(c->e);
	rmcmd_session_init(&c->s, c->f, "f", c->o, c->e);
	c->s.fixed_usec = 1000000;
}

/* Clear captured text. */
static void cap_reset(struct cap *c)
{
	fclose(c->o);
	fclose(c->e);
	free(c->obuf);
	free(c->ebuf);
	c->obuf = c->ebuf = NULL;
	c->o = open_memstream(&c->obuf, &c->olen);
	c->e = open_memstream(&c->ebuf, &c->elen);
	c->s.out = c->o;
	c->s.err = c->e;
}

static int cap_run(struct cap *c, const char *line)
{
	int r = rmcmd_run(&c->s, line);
	char msg[256];

	fflush(c->o);
	fflush(c->e);
	if (rm_check(c->f, msg, sizeof(msg)) != 0)
		fail_msg("rm_check after \"%s\": %s", line, msg);
	return r;
}

static void cap_close(struct cap *c)
{
	fclose(c->o);
	fclose(c->e);
	free(c->obuf);
	free(c->ebuf);
	rm_file_free(c->f);
}

/* Run a command that must fail as malformed, returning want (-EINVAL, or
 * RMCMD_E_IGNORED where xfs_io's exit status does not count the mistake),
 * with exactly the given stdout and stderr text, and the model untouched
 * (no operation applied, same size and bytes). */
static void expect_rejected(const char *line, int want, const char *out,
			    const char *err)
{
	struct cap c;
	struct rm_stats before, after;
	uint64_t h;

	cap_open(&c, RM_PROFILE_EXT4);
	assert_int_equal(cap_run(&c, "pwrite 0 20k"), 0);
	cap_reset(&c);
	rm_stats(c.f, &before);
	h = rm_hash(c.f, 0, INT64_MAX);
	assert_int_equal(cap_run(&c, line), want);
	rm_stats(c.f, &after);
	assert_string_equal(c.obuf, out);
	assert_string_equal(c.ebuf, err);
	assert_int_equal(before.ops, after.ops);
	assert_int_equal(before.size, after.size);
	assert_true(h == rm_hash(c.f, 0, INT64_MAX));
	cap_close(&c);
}

/* Malformed, and xfs_io 6.1 exits 1 for it (measured). */
static void expect_malformed(const char *line, const char *out,
			     const char *err)
{
	expect_rejected(line, -EINVAL, out, err);
}

/* Malformed, but xfs_io 6.1 still exits 0 (measured). */
static void expect_ignored(const char *line, const char *out,
			   const char *err)
{
	expect_rejected(line, RMCMD_E_IGNORED, out, err);
}

/* ---- numbers ---- */

static void test_cvtnum_suffixes_as_xfs_io(void **st)
{
	(void)st;
	/* Results observed with xfs_io 6.1 "truncate N" + "stat". */
	assert_int_equal(rmcmd_cvtnum(4096, "1b"), 4096);
	assert_int_equal(rmcmd_cvtnum(1024, "2B"), 2048);
	assert_int_equal(rmcmd_cvtnum(4096, "1s"), 512);
	assert_int_equal(rmcmd_cvtnum(4096, "1S"), 512);
	assert_int_equal(rmcmd_cvtnum(4096, "1K"), 1024);
	assert_int_equal(rmcmd_cvtnum(4096, "4k"), 4096);
	assert_int_equal(rmcmd_cvtnum(4096, "1m"), 1048576);
	assert_int_equal(rmcmd_cvtnum(4096, "1g"), 1073741824LL);
	assert_int_equal(rmcmd_cvtnum(4096, "1T"), 1099511627776LL);
	assert_int_equal(rmcmd_cvtnum(4096, "1p"), 1LL << 50);
	assert_int_equal(rmcmd_cvtnum(4096, "7e"), 7LL << 60);
	assert_int_equal(rmcmd_cvtnum(4096, "0x10"), 16);
	assert_int_equal(rmcmd_cvtnum(4096, "010"), 8);
	assert_int_equal(rmcmd_cvtnum(4096, "+5"), 5);
	assert_int_equal(rmcmd_cvtnum(4096, "-0"), 0);
}

static void test_cvtnum_rejects_what_xfs_io_rejects(void **st)
{
	(void)st;
	assert_int_equal(rmcmd_cvtnum(4096, "1.5k"), -1);
	assert_int_equal(rmcmd_cvtnum(4096, "8e"), -1);	/* wraps negative */
	assert_int_equal(rmcmd_cvtnum(4096, "1kb"), -1);
	assert_int_equal(rmcmd_cvtnum(4096, "0x"), -1);
	assert_int_equal(rmcmd_cvtnum(4096, "abc"), -1);
	assert_int_equal(rmcmd_cvtnum(4096, "-1"), -1);
	assert_int_equal(rmcmd_cvtnum(4096, "1x"), -1);
	assert_int_equal(rmcmd_cvtnum(4096, ""), -1);
}

/* ---- malformed commands: message, failure, model untouched ---- */

static void test_unknown_command(void **st)
{
	(void)st;
	expect_ignored("bogus 1", "", "command \"bogus\" not found\n");
}

static void test_bad_argument_counts(void **st)
{
	(void)st;
	expect_ignored("falloc", "",
			 "bad argument count 0 to falloc, expected at least 2 arguments\n");
	expect_ignored("truncate", "",
			 "bad argument count 0 to truncate, expected 1 arguments\n");
	expect_ignored("seek 0", "",
			 "bad argument count 1 to seek, expected between 2 and 5 arguments\n");
	expect_ignored("fsync 1", "",
			 "bad argument count 1 to fsync, expected 0 arguments\n");
	expect_ignored("fpunch -k 0 4k", "",
			 "bad argument count 3 to fpunch, expected 2 arguments\n");
	expect_ignored("finsert 0", "",
			 "bad argument count 1 to finsert, expected 2 arguments\n");
	expect_ignored("pwrite 0", "",
			 "bad argument count 1 to pwrite, expected at least 2 arguments\n");
}

static void test_non_numeric_arguments(void **st)
{
	(void)st;
	expect_malformed("fcollapse 4k -1", "non-numeric length argument -- -1\n", "");
	expect_malformed("fpunch 0 abc", "non-numeric length argument -- abc\n", "");
	expect_malformed("fpunch -1 4k", "non-numeric offset argument -- -1\n", "");
	expect_malformed("truncate -1", "non-numeric truncate argument -- -1\n", "");
	expect_malformed("truncate 1.5k", "non-numeric truncate argument -- 1.5k\n", "");
	expect_malformed("pwrite 0 1x", "non-numeric length argument -- 1x\n", "");
	expect_malformed("pwrite -S zz 0 4", "non-numeric seed -- zz\n", "");
	expect_malformed("pwrite -b abc 0 4k", "non-numeric bsize -- abc\n", "");
	expect_malformed("fiemap abc", "non-numeric offset argument -- abc\n", "");
	expect_malformed("fiemap 0 x", "non-numeric len argument -- x\n", "");
}

#define FALLOC_USAGE "falloc [-c] [-k] [-p] [-u] off len -- allocates space associated with part of a file via fallocate\n"
#define PREAD_USAGE "pread [-b bs] [-qv] [-i N] [-FBR [-Z N]] off len -- reads a number of bytes at a specified offset\n"
#define SEEK_USAGE "seek -a | -d | -h [-r] off -- locate the next data and/or hole\n"

static void test_bad_options_print_usage(void **st)
{
	(void)st;
	/* xfs_io prints falloc's usage twice here (getopt error, then the
	 * operand count); kept so that the text matches. */
	expect_malformed("falloc -5 4k", FALLOC_USAGE FALLOC_USAGE,
			 "falloc: invalid option -- '5'\n");
	expect_malformed("falloc 1 2 3", FALLOC_USAGE, "");
	expect_malformed("pread 0 -1", PREAD_USAGE, "pread: invalid option -- '1'\n");
	expect_malformed("pread -1 4", PREAD_USAGE, "pread: invalid option -- '1'\n");
	expect_malformed("pread 0 4 5", PREAD_USAGE, "");
	expect_malformed("seek -d -1", SEEK_USAGE, "seek: invalid option -- '1'\n");
	expect_malformed("seek -r 0", SEEK_USAGE, "");
	expect_malformed("seek -d abc", SEEK_USAGE, "");
	expect_malformed("fiemap -x",
			 "fiemap [-alv] [-n nx] [offset [len]] -- print block mapping for a file\n",
			 "fiemap: invalid option -- 'x'\n");
	expect_ignored("pwrite -b", "",
			 "bad argument count 1 to pwrite, expected at least 2 arguments\n");
	expect_malformed("pwrite 0 4k -b",
			 "pwrite [-i infile [-qdDwNOW] [-s skip]] [-b bs] [-S seed] [-FBR [-Z N]] [-V N] off len -- writes a number of bytes at a specified offset\n",
			 "pwrite: option requires an argument -- 'b'\n");
}

/* falloc's and fzero's bad options: xfs_io prints the usage and still
 * calls fallocate() (measured with 6.1: "falloc -x 0 4k" allocates and
 * exits 1, "fzero -x 0 1" zeroes and exits 0). */
static void test_falloc_fzero_bad_option_still_run(void **st)
{
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	assert_int_equal(cap_run(&c, "falloc -x 0 4k"), -EINVAL);
	assert_string_equal(c.obuf, FALLOC_USAGE);
	assert_string_equal(c.ebuf, "falloc: invalid option -- 'x'\n");
	assert_int_equal(rm_size(c.f), 4096);
	/* the last valid option before the bad one still counts */
	assert_int_equal(cap_run(&c, "falloc -k -x 8k 4k"), -EINVAL);
	assert_int_equal(rm_size(c.f), 4096);
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "fzero -x 0 8k"), 0);
	assert_string_equal(c.obuf,
		"fzero [-k] off len -- zeroes space and eliminates holes by preallocating\n");
	assert_string_equal(c.ebuf, "fzero: invalid option -- 'x'\n");
	assert_int_equal(rm_size(c.f), 8192);
	cap_close(&c);
}

static void test_unmodelled_options_refused(void **st)
{
	(void)st;
	expect_malformed("pwrite -R 0 4k", "", "pwrite: option -R is not supported by rmio\n");
	expect_malformed("fiemap -a", "", "fiemap: option -a is not supported by rmio\n");
	expect_malformed("stat -r", "", "stat: option -r is not supported by rmio\n");
}

static void test_io_limit_refuses_before_touching_model(void **st)
{
	struct cap c;
	struct rm_stats before, after;

	(void)st;
	cap_open(&c, RM_PROFILE_XFS);
	c.s.io_limit = 8192;
	assert_int_equal(cap_run(&c, "pwrite 0 8k"), 0);
	assert_int_equal(cap_run(&c, "truncate 1t"), 0);
	cap_reset(&c);
	rm_stats(c.f, &before);
	assert_int_equal(cap_run(&c, "pwrite 0 12k"), -EINVAL);
	assert_int_equal(cap_run(&c, "pread 0 1t"), -EINVAL);
	assert_int_equal(cap_run(&c, "md5sum"), -EINVAL);
	assert_int_equal(cap_run(&c, "xxh3sum"), -EINVAL);
	rm_stats(c.f, &after);
	assert_int_equal(before.ops, after.ops);
	assert_string_equal(c.obuf, "");
	assert_string_equal(c.ebuf,
		"pwrite: 12288 bytes exceed rmio's limit of 8192 bytes per command (rmio -L)\n"
		"pread: 1099511627776 bytes exceed rmio's limit of 8192 bytes per command (rmio -L)\n"
		"md5sum: 1099511627776 bytes exceed rmio's limit of 8192 bytes per command (rmio -L)\n"
		"xxh3sum: 1099511627776 bytes exceed rmio's limit of 8192 bytes per command (rmio -L)\n");
	cap_reset(&c);
	/* Reading past the end of a big file moves nothing: allowed. */
	assert_int_equal(cap_run(&c, "pread -q 2t 1t"), 0);
	assert_int_equal(cap_run(&c, "pread -q 1t 8k"), 0);
	cap_close(&c);
}

#define SYNC_RANGE_USAGE \
	"sync_range [-abw] off len -- Control writeback on a range of a file\n"

/* fdatasync, sync_range and fiemap as xfs_io 6.1 has them (messages and
 * exit statuses measured; the last of -a/-b/-w wins, measured with
 * strace), fiemap writing the model back first (FIEMAP_FLAG_SYNC) and
 * fiemap -C (rmio) showing the cached view */
static void test_writeback_commands(void **st)
{
	struct cap c;

	(void)st;
	expect_ignored("sync_range 0", "",
		       "bad argument count 1 to sync_range, expected at least 2 arguments\n");
	expect_ignored("fdatasync 1", "",
		       "bad argument count 1 to fdatasync, expected 0 arguments\n");
	expect_malformed("sync_range -x 0 4", SYNC_RANGE_USAGE,
			 "sync_range: invalid option -- 'x'\n");
	expect_malformed("sync_range -1 4", SYNC_RANGE_USAGE,
			 "sync_range: invalid option -- '1'\n");
	expect_malformed("sync_range 0 4 5", SYNC_RANGE_USAGE, "");
	expect_malformed("sync_range foo 4", "non-numeric offset argument -- foo\n", "");
	expect_malformed("sync_range 0 bar", "non-numeric length argument -- bar\n", "");

	cap_open(&c, RM_PROFILE_XFS);
	assert_int_equal(cap_run(&c, "pwrite -q 0 8k"), 0);
	assert_int_equal(rm_dirty_bytes(c.f), 8192);
	/* "-w -a": WAIT_AFTER alone, which starts nothing */
	assert_int_equal(cap_run(&c, "sync_range -w -a 0 4k"), 0);
	assert_int_equal(rm_dirty_bytes(c.f), 8192);
	assert_int_equal(cap_run(&c, "sync_range -a -w 0 4k"), 0);
	assert_int_equal(rm_dirty_bytes(c.f), 4096);
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "fiemap -C -v"), 0);
	assert_string_equal(c.obuf, "f:\n"
		" EXT: FILE-OFFSET      BLOCK-RANGE      TOTAL FLAGS\n"
		"   0: [0..7]:          0..7                 8 0x800\n"
		"   1: [8..15]:         8..15                8   0x7\n");
	assert_int_equal(cap_run(&c, "fdatasync"), 0);
	assert_int_equal(rm_dirty_bytes(c.f), 0);
	assert_int_equal(cap_run(&c, "pwrite -q 8k 4k"), 0);
	assert_int_equal(rm_dirty_bytes(c.f), 4096);
	assert_int_equal(cap_run(&c, "fiemap"), 0);	/* FIEMAP_FLAG_SYNC */
	assert_int_equal(rm_dirty_bytes(c.f), 0);
	assert_int_equal(cap_run(&c, "pwrite -q 12k 4k"), 0);
	assert_int_equal(cap_run(&c, "fiemap 0 0"), -EINVAL);	/* refused before the sync */
	assert_int_equal(rm_dirty_bytes(c.f), 4096);
	cap_close(&c);
}

static void test_fiemap_n_sticks_like_xfs_io(void **st)
{
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	assert_int_equal(cap_run(&c, "pwrite 0 4k"), 0);
	assert_int_equal(cap_run(&c, "pwrite 8k 4k"), 0);
	assert_int_equal(cap_run(&c, "pwrite 16k 4k"), 0);
	cap_reset(&c);
	/* xfs_io keeps -n in a static variable: the second fiemap is cut at
	 * two entries too (same text from xfs_io 6.1 on ext4 and XFS). */
	assert_int_equal(cap_run(&c, "fiemap -n 2"), 0);
	assert_int_equal(cap_run(&c, "fiemap"), 0);
	assert_string_equal(c.obuf,
		"f:\n\t0: [0..7]: 0..7\n\t1: [8..15]: hole\n"
		"f:\n\t0: [0..7]: 0..7\n\t1: [8..15]: hole\n");
	cap_close(&c);
}

static void test_help(void **st)
{
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	assert_int_equal(cap_run(&c, "help finsert"), 0);
	assert_string_equal(c.obuf,
		"finsert off len -- creates new space for writing within file by shifting extents\n");
	cap_reset(&c);
	/* xfs_io prints this one on stdout and its exit status stays 0 */
	assert_int_equal(cap_run(&c, "help nosuch"), RMCMD_E_IGNORED);
	assert_string_equal(c.obuf, "command nosuch not found\n");
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "help"), 0);
	assert_non_null(strstr(c.obuf, "fsync -- calls fsync(2) to flush all in-core file state to disk\n"));
	assert_non_null(strstr(c.obuf, "md5sum -- "));
	cap_close(&c);
}

static void test_blank_and_comment_lines(void **st)
{
	struct rmcmd cmd;
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	assert_int_equal(rmcmd_parse(&c.s, "", &cmd), 1);
	assert_int_equal(rmcmd_parse(&c.s, "   \t\n", &cmd), 1);
	assert_int_equal(rmcmd_parse(&c.s, "# pwrite 0 4k", &cmd), 1);
	assert_int_equal(rmcmd_parse(&c.s, "  # x", &cmd), 1);
	assert_int_equal(cap_run(&c, "# nothing"), 0);
	assert_int_equal(rm_size(c.f), 0);
	cap_close(&c);
}

/* ---- parse results ---- */

static void test_falloc_last_option_wins(void **st)
{
	struct rmcmd cmd;
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	/* strace of xfs_io 6.1: the options assign the mode. */
	assert_int_equal(rmcmd_parse(&c.s, "falloc -k -c 0 4k", &cmd), 0);
	assert_int_equal(cmd.mode, RM_FALLOC_FL_COLLAPSE_RANGE);
	assert_int_equal(rmcmd_parse(&c.s, "falloc -c -k 0 4k", &cmd), 0);
	assert_int_equal(cmd.mode, RM_FALLOC_FL_KEEP_SIZE);
	assert_int_equal(rmcmd_parse(&c.s, "falloc -k -p 0 4k", &cmd), 0);
	assert_int_equal(cmd.mode, RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE);
	assert_int_equal(rmcmd_parse(&c.s, "falloc -i 4k 4k", &cmd), 0);
	assert_int_equal(cmd.mode, RM_FALLOC_FL_INSERT_RANGE);
	assert_int_equal(rmcmd_parse(&c.s, "falloc -u 0 4k", &cmd), 0);
	assert_int_equal(cmd.mode, RM_FALLOC_FL_UNSHARE_RANGE);
	assert_int_equal(rmcmd_parse(&c.s, "fzero -k 4k 8k", &cmd), 0);
	assert_int_equal(cmd.mode, RM_FALLOC_FL_ZERO_RANGE | RM_FALLOC_FL_KEEP_SIZE);
	assert_int_equal(cmd.off, 4096);
	assert_int_equal(cmd.len, 8192);
	assert_int_equal(rmcmd_parse(&c.s, "fpunch 1b 2b", &cmd), 0);
	assert_int_equal(cmd.mode, RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE);
	assert_int_equal(cmd.off, 4096);
	assert_int_equal(cmd.len, 8192);
	cap_close(&c);
}

static void test_options_after_operands(void **st)
{
	struct rmcmd cmd;
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	/* GNU getopt permutes: options may follow the operands. */
	assert_int_equal(rmcmd_parse(&c.s, "pwrite 0 4k -S 0x41", &cmd), 0);
	assert_int_equal(cmd.pattern, 0x41);
	assert_int_equal(rmcmd_parse(&c.s, "pwrite -S0x1234 -b512 0 4k", &cmd), 0);
	assert_int_equal(cmd.pattern, 0x34);
	assert_int_equal(cmd.bsize, 512);
	assert_int_equal(rmcmd_parse(&c.s, "pwrite 0 4k", &cmd), 0);
	assert_int_equal(cmd.pattern, 0xcd);	/* xfs_io's default */
	assert_int_equal(cmd.bsize, 4096);
	cap_close(&c);
}

/* ---- execution and output layouts (text captured from xfs_io 6.1) ---- */

static void test_pwrite_report_layout(void **st)
{
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	assert_int_equal(cap_run(&c, "pwrite 8k 8k"), 0);
	/* xfs_io: "wrote 8192/8192 bytes at offset 8192\n8 KiB, 2 ops; ..."
	 * with a fixed elapsed time of one second. */
	assert_string_equal(c.obuf,
		"wrote 8192/8192 bytes at offset 8192\n"
		"8 KiB, 2 ops; 0:00:01.00 (8 KiB/sec and 2.0000 ops/sec)\n");
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "pwrite -b 1000 0 5000"), 0);
	assert_string_equal(c.obuf,
		"wrote 5000/5000 bytes at offset 0\n"
		"5 KiB, 5 ops; 0:00:01.00 (5 KiB/sec and 5.0000 ops/sec)\n");
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "pwrite -q 0 100"), 0);
	assert_string_equal(c.obuf, "");
	cap_reset(&c);
	c.s.fixed_usec = 1250;
	assert_int_equal(cap_run(&c, "pwrite 0 1m"), 0);
	assert_string_equal(c.obuf,
		"wrote 1048576/1048576 bytes at offset 0\n"
		"1 MiB, 256 ops; 0.0012 sec (800 MiB/sec and 204800.0000 ops/sec)\n");
	cap_reset(&c);
	c.s.fixed_usec = 1000;
	assert_int_equal(cap_run(&c, "pwrite 0 1500000"), 0);
	assert_string_equal(c.obuf,
		"wrote 1500000/1500000 bytes at offset 0\n"
		"1 MiB, 367 ops; 0.0010 sec (1 GiB/sec and 367000.0000 ops/sec)\n");
	cap_reset(&c);
	c.s.fixed_usec = 1000000;
	assert_int_equal(cap_run(&c, "pwrite 0 100"), 0);
	assert_string_equal(c.obuf,
		"wrote 100/100 bytes at offset 0\n"
		"100.000000 bytes, 1 ops; 0:00:01.00 (100.000000 bytes/sec and 1.0000 ops/sec)\n");
	cap_close(&c);
}

static void test_pread_hexdump_layout(void **st)
{
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	assert_int_equal(cap_run(&c, "pwrite 0 20"), 0);
	assert_int_equal(cap_run(&c, "pwrite -S 0x7e 20 4"), 0);
	assert_int_equal(cap_run(&c, "pwrite -S 0x20 24 4"), 0);
	assert_int_equal(cap_run(&c, "pwrite -S 0 28 4"), 0);
	assert_int_equal(cap_run(&c, "pwrite -S 0x41 32 4"), 0);
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "pread -v 0 40"), 0);
	assert_string_equal(c.obuf,
		"00000000:  cd cd cd cd cd cd cd cd cd cd cd cd cd cd cd cd  ................\n"
		"00000010:  cd cd cd cd 7e 7e 7e 7e 20 20 20 20 00 00 00 00  ................\n"
		"00000020:  41 41 41 41  AAAA\n"
		"read 36/40 bytes at offset 0\n"
		"36.000000 bytes, 1 ops; 0:00:01.00 (36.000000 bytes/sec and 1.0000 ops/sec)\n");
	cap_reset(&c);
	/* Each -b chunk is dumped on its own, as xfs_io does. */
	assert_int_equal(cap_run(&c, "pread -v -b 24 0 36"), 0);
	assert_string_equal(c.obuf,
		"00000000:  cd cd cd cd cd cd cd cd cd cd cd cd cd cd cd cd  ................\n"
		"00000010:  cd cd cd cd 7e 7e 7e 7e  ........\n"
		"00000018:  20 20 20 20 00 00 00 00 41 41 41 41  ........AAAA\n"
		"read 36/36 bytes at offset 0\n"
		"36.000000 bytes, 2 ops; 0:00:01.00 (36.000000 bytes/sec and 2.0000 ops/sec)\n");
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "pread 200 40"), 0);
	assert_string_equal(c.obuf,
		"read 0/40 bytes at offset 200\n"
		"0.000000 bytes, 0 ops; 0:00:01.00 (0.000000 bytes/sec and 0.0000 ops/sec)\n");
	cap_close(&c);
}

static void test_fiemap_layout(void **st)
{
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	/* All holes: xfs_io prints the name only (no header, no hole). */
	assert_int_equal(cap_run(&c, "truncate 20k"), 0);
	assert_int_equal(cap_run(&c, "finsert 4k 8k"), 0);
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "fiemap -v"), 0);
	assert_int_equal(cap_run(&c, "fiemap"), 0);
	assert_string_equal(c.obuf, "f:\nf:\n");
	cap_close(&c);

	/* Same steps as a real ext4 run whose output was:
	 *    0: [0..31]:         hole                32
	 *    1: [32..47]:        16520..16535        16   0x0
	 *    2: [48..79]:        hole                32
	 *    3: [80..95]:        16536..16551        16 0x801
	 * rmio lays the extents out back to back from block 0 (no disk). */
	cap_open(&c, RM_PROFILE_EXT4);
	assert_int_equal(cap_run(&c, "truncate 20k"), 0);
	assert_int_equal(cap_run(&c, "pwrite 8k 8k"), 0);
	assert_int_equal(cap_run(&c, "fsync"), 0);
	assert_int_equal(cap_run(&c, "finsert 4k 8k"), 0);
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "fiemap -v"), 0);
	assert_string_equal(c.obuf,
		"f:\n"
		" EXT: FILE-OFFSET      BLOCK-RANGE      TOTAL FLAGS\n"
		"   0: [0..31]:         hole                32\n"
		"   1: [32..47]:        0..15               16   0x1\n"
		"   2: [48..55]:        hole                 8\n");
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "falloc -k 40k 8k"), 0);
	assert_int_equal(cap_run(&c, "fiemap -v"), 0);
	assert_int_equal(cap_run(&c, "fiemap"), 0);
	assert_int_equal(cap_run(&c, "fiemap -l"), 0);
	assert_string_equal(c.obuf,
		"f:\n"
		" EXT: FILE-OFFSET      BLOCK-RANGE      TOTAL FLAGS\n"
		"   0: [0..31]:         hole                32\n"
		"   1: [32..47]:        0..15               16   0x0\n"
		"   2: [48..79]:        hole                32\n"
		"   3: [80..95]:        16..31              16 0x801\n"
		"f:\n"
		"\t0: [0..31]: hole\n"
		"\t1: [32..47]: 0..15\n"
		"\t2: [48..79]: hole\n"
		"\t3: [80..95]: 16..31\n"
		"f:\n"
		"\t0: [0..31]: hole 32 blocks\n"
		"\t1: [32..47]: 0..15 16 blocks\n"
		"\t2: [48..79]: hole 32 blocks\n"
		"\t3: [80..95]: 16..31 16 blocks\n");
	cap_reset(&c);
	/* A range: the hole at its start, the extent clipped to the range
	 * and flagged last (xfs_io on ext4 and XFS printed exactly this,
	 * physical blocks aside); a range of holes prints the name only. */
	assert_int_equal(cap_run(&c, "fiemap -v 8k 12k"), 0);
	assert_int_equal(cap_run(&c, "fiemap -v 8k 8k"), 0);
	assert_int_equal(cap_run(&c, "fiemap -v 20k 4k"), 0);
	assert_int_equal(cap_run(&c, "fiemap 0 4k"), 0);
	assert_string_equal(c.obuf,
		"f:\n"
		" EXT: FILE-OFFSET      BLOCK-RANGE      TOTAL FLAGS\n"
		"   0: [16..31]:        hole                16\n"
		"   1: [32..39]:        0..7                 8   0x1\n"
		"f:\n"
		"f:\n"
		" EXT: FILE-OFFSET      BLOCK-RANGE      TOTAL FLAGS\n"
		"   0: [40..47]:        0..7                 8   0x1\n"
		"f:\n");
	cap_close(&c);
}

/* A range inside one block: the kernel maps from the block holding the
 * start to the block holding the end (xfs_read_iomap_begin(),
 * ext4_iomap_begin_report()), so xfs_io shows that whole block; clipping
 * to the bytes asked for printed "[0..18446744073709551615]". */
static void test_fiemap_sub_block_range(void **st)
{
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_XFS);
	assert_int_equal(cap_run(&c, "pwrite 0 64k"), 0);
	assert_int_equal(cap_run(&c, "fsync"), 0);
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "fiemap -v 100 10"), 0);
	assert_int_equal(cap_run(&c, "fiemap 4100 1"), 0);
	assert_string_equal(c.obuf,
		"f:\n"
		" EXT: FILE-OFFSET      BLOCK-RANGE      TOTAL FLAGS\n"
		"   0: [0..7]:          0..7                 8   0x1\n"
		"f:\n"
		"\t0: [8..15]: 0..7\n");
	cap_close(&c);
}

/* The buffer of a pwrite or pread is as big as -b asks, up to the length:
 * the per-command limit is checked first, and pread's buffer never holds
 * more than the bytes up to EOF. */
static void test_big_bsize_allocates_nothing_big(void **st)
{
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	c.s.io_limit = 1 << 20;
	assert_int_equal(cap_run(&c, "pwrite -q -b 2t 0 2t"), -EINVAL);
	assert_int_equal(cap_run(&c, "pwrite -q -b 2t 0 4k"), 0);
	assert_int_equal(cap_run(&c, "pread -q -b 2t 0 2t"), 0);
	c.s.io_limit = 0;
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "pread -b 2t 0 2t"), 0);
	assert_string_equal(c.obuf,
		"read 4096/2199023255552 bytes at offset 0\n"
		"4 KiB, 1 ops; 0:00:01.00 (4 KiB/sec and 1.0000 ops/sec)\n");
	cap_close(&c);
}

static void test_seek_layout(void **st)
{
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	assert_int_equal(cap_run(&c, "pwrite 4k 4k"), 0);
	assert_int_equal(cap_run(&c, "pwrite 12k 4k"), 0);
	assert_int_equal(cap_run(&c, "truncate 24k"), 0);
	cap_reset(&c);
	/* Expected text: xfs_io 6.1 on the same file on ext4. */
	assert_int_equal(cap_run(&c, "seek -a 0"), 0);
	assert_int_equal(cap_run(&c, "seek -a -r 0"), 0);
	assert_int_equal(cap_run(&c, "seek -a -r -s 0"), 0);
	assert_int_equal(cap_run(&c, "seek -d -r 0"), 0);
	assert_int_equal(cap_run(&c, "seek -h -r -s 0"), 0);
	assert_int_equal(cap_run(&c, "seek -s -d 100k"), 0);
	assert_int_equal(cap_run(&c, "seek -a 5k"), 0);
	assert_int_equal(cap_run(&c, "seek -h 24k"), 0);
	assert_int_equal(cap_run(&c, "seek -r -d 13k"), 0);
	assert_string_equal(c.obuf,
		"Whence\tResult\nHOLE\t0\nDATA\t4096\n"
		"Whence\tResult\nHOLE\t0\nDATA\t4096\nHOLE\t8192\nDATA\t12288\nHOLE\t16384\n"
		"Whence\tStart\tResult\nHOLE\t0\t0\nDATA\t0\t4096\nHOLE\t4096\t8192\n"
		"DATA\t8192\t12288\nHOLE\t12288\t16384\n"
		"Whence\tResult\nDATA\t4096\nDATA\t12288\n"
		"Whence\tStart\tResult\nHOLE\t0\t0\nHOLE\t4096\t8192\nHOLE\t12288\t16384\n"
		"Whence\tStart\tResult\nDATA\t102400\tEOF\n"
		"Whence\tResult\nDATA\t5120\nHOLE\t8192\n"
		"Whence\tResult\nHOLE\tEOF\n"
		"Whence\tResult\nDATA\t13312\n");
	cap_close(&c);

	cap_open(&c, RM_PROFILE_EXT4);
	assert_int_equal(cap_run(&c, "seek -a -r 0"), 0);
	assert_int_equal(cap_run(&c, "truncate 8k"), 0);
	assert_int_equal(cap_run(&c, "seek -h 0"), 0);
	assert_int_equal(cap_run(&c, "seek -d 0"), 0);
	assert_string_equal(c.obuf,
		"Whence\tResult\nDATA\tEOF\n"
		"Whence\tResult\nHOLE\t0\n"
		"Whence\tResult\nDATA\tEOF\n");
	cap_close(&c);
}

static void test_errno_messages(void **st)
{
	struct cap c;
	struct rm_stats st1, st2;

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	assert_int_equal(cap_run(&c, "pwrite 0 20k"), 0);
	cap_reset(&c);
	rm_stats(c.f, &st1);
	assert_int_equal(cap_run(&c, "finsert 4k 1000"), -EINVAL);
	assert_int_equal(cap_run(&c, "finsert 20k 4k"), -EINVAL);
	assert_int_equal(cap_run(&c, "fcollapse 16k 4k"), -EINVAL);
	assert_int_equal(cap_run(&c, "falloc 0 0"), -EINVAL);
	assert_int_equal(cap_run(&c, "pwrite 16t 4k"), -EFBIG);
	assert_int_equal(cap_run(&c, "falloc 0 16t"), -EFBIG);
	assert_int_equal(cap_run(&c, "truncate 1e"), -EFBIG);
	assert_int_equal(cap_run(&c, "funshare 0 4k"), -EOPNOTSUPP);
	assert_string_equal(c.obuf, "");
	assert_string_equal(c.ebuf,
		"fallocate: Invalid argument\n"
		"fallocate: Invalid argument\n"
		"fallocate: Invalid argument\n"
		"fallocate: Invalid argument\n"
		"pwrite: File too large\n"
		"fallocate: File too large\n"
		"ftruncate: File too large\n"
		"fallocate: Operation not supported\n");
	rm_stats(c.f, &st2);
	assert_int_equal(st1.size, st2.size);
	assert_int_equal(st1.alloc_bytes, st2.alloc_bytes);
	cap_close(&c);
}

static void test_stat_md5_xxh3_lines(void **st)
{
	struct cap c;
	char want[128];

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	assert_int_equal(cap_run(&c, "pwrite 0 20k"), 0);
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "stat"), 0);
	assert_string_equal(c.obuf,
		"fd.path = \"f\"\n"
		"fd.flags = non-sync,non-direct,read-write\n"
		"stat.ino = 0\n"
		"stat.type = regular file\n"
		"stat.size = 20480\n"
		"stat.blocks = 40\n");
	cap_reset(&c);
	/* md5sum(1) of 20480 bytes of 0xcd (generic/039 case 2 before the
	 * insert): computed with coreutils md5sum. */
	assert_int_equal(cap_run(&c, "md5sum"), 0);
	assert_string_equal(c.obuf, "65b8db7022a0376be47c8fa5bac4e36f  f\n");
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "xxh3sum"), 0);
	snprintf(want, sizeof(want), "%016llx  f\n",
		 (unsigned long long)rm_hash(c.f, 0, INT64_MAX));
	assert_string_equal(c.obuf, want);
	cap_close(&c);
}

/* RFC 1321 appendix A.5 test suite. */
/* stat on the XFS profile: every line xfs_io 6.1 prints for a file on XFS
 * (captured on a loop-mounted XFS, 4 KiB blocks, 512-byte sectors), with
 * the documented fixed values where the model knows nothing. */
static void test_stat_xfs_lines(void **st)
{
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_XFS);
	assert_int_equal(cap_run(&c, "pwrite -q 0 8k"), 0);
	assert_int_equal(cap_run(&c, "fpunch 0 4k"), 0);
	assert_int_equal(cap_run(&c, "pwrite -q 12k 4k"), 0);
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "stat -v"), 0);
	assert_string_equal(c.obuf,
		"fd.path = \"f\"\n"
		"fd.flags = non-sync,non-direct,read-write\n"
		"stat.ino = 0\n"
		"stat.type = regular file\n"
		"stat.size = 16384\n"
		"stat.blocks = 16\n"
		"stat.atime = Thu Jan  1 00:00:00 1970\n"
		"stat.mtime = Thu Jan  1 00:00:00 1970\n"
		"stat.ctime = Thu Jan  1 00:00:00 1970\n"
		"fsxattr.xflags = 0x0 []\n"
		"fsxattr.projid = 0\n"
		"fsxattr.extsize = 0\n"
		"fsxattr.cowextsize = 0\n"
		"fsxattr.nextents = 2\n"
		"fsxattr.naextents = 0\n"
		"dioattr.mem = 0x200\n"
		"dioattr.miniosz = 512\n"
		"dioattr.maxiosz = 2147483136\n");
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "stat"), 0);
	assert_non_null(strstr(c.obuf, "stat.blocks = 16\nfsxattr.xflags = 0x0 [-----------------]\n"));
	cap_close(&c);
}

/* quit ends the command stream (rmcmd_run() returns 1), touching nothing. */
static void test_quit(void **st)
{
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_EXT4);
	assert_int_equal(cap_run(&c, "quit"), 1);
	assert_string_equal(c.obuf, "");
	assert_int_equal(rm_size(c.f), 0);
	cap_close(&c);
}

/* xfs_io's calc_print_format() measures the range columns in 32-byte
 * buffers: a range near 2^63 (XFS) widens FILE-OFFSET to 31 at most and
 * overflows it.  Hand-checked against fiemap.c's arithmetic. */
static void test_fiemap_width_cap(void **st)
{
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_XFS);
	assert_int_equal(cap_run(&c, "pwrite -q 9223372036854771712 4095"), 0);
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "fiemap -v"), 0);
	assert_string_equal(c.obuf,
		"f:\n"
		" EXT: FILE-OFFSET                     BLOCK-RANGE      TOTAL FLAGS\n"
		"   0: [0..18014398509481975]:         hole             18014398509481976\n"
		"   1: [18014398509481976..18014398509481983]: 0..7                 8   0x1\n");
	cap_close(&c);
}

static void test_md5_rfc1321_vectors(void **st)
{
	static const struct {
		const char *in, *md5;
	} v[] = {
		{ "", "d41d8cd98f00b204e9800998ecf8427e" },
		{ "a", "0cc175b9c0f1b6a831c399e269772661" },
		{ "abc", "900150983cd24fb0d6963f7d28e17f72" },
		{ "message digest", "f96b697d7cb7938d525a2f31aaf161d0" },
		{ "abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b" },
		{ "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
		  "d174ab98d277d9f5a5611c2c9f419d9f" },
		{ "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
		  "57edf4a22be3c955ac49da2e2107b67a" },
	};
	(void)st;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = 4096 };
		struct rm_file *f;
		char hex[33];
		size_t n = strlen(v[i].in);

		assert_int_equal(rm_file_new(&o, &f), 0);
		if (n)
			assert_int_equal(rm_pwrite(f, v[i].in, n, 0), (ssize_t)n);
		assert_int_equal(rmcmd_md5_hex(f, hex), 0);
		assert_string_equal(hex, v[i].md5);
		rm_file_free(f);
	}
}

/* ---- the rmio program ---- */

#ifdef RMIO_PATH
static int run_rmio(const char *args, const char *stdin_text, char *out,
		    size_t outsz)
{
	char cmdline[1024];
	FILE *p;
	size_t n;
	int status;

	snprintf(cmdline, sizeof(cmdline), "printf '%%b' '%s' | %s %s 2>&1",
		 stdin_text ? stdin_text : "", RMIO_PATH, args);
	p = popen(cmdline, "r");
	assert_non_null(p);
	n = fread(out, 1, outsz - 1, p);
	out[n] = '\0';
	status = pclose(p);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_rmio_exit_status(void **st)
{
	char out[8192];

	(void)st;
	assert_int_equal(run_rmio("--help", NULL, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "Usage: rmio"));
	assert_non_null(strstr(out, "finsert off len"));
	assert_int_equal(run_rmio("-h", NULL, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "Usage: rmio"));
	assert_int_equal(run_rmio("-V", NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "rmio version " RS_VERSION "\n");
	assert_int_equal(run_rmio("--version", NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "rmio version " RS_VERSION "\n");
	/* FILE is the model file's name, as xfs_io's file operand */
	assert_int_equal(run_rmio("-T -f -c 'pwrite 0 4k' -c 'md5sum' datafile", NULL,
				  out, sizeof(out)), 0);
	assert_non_null(strstr(out, "wrote 4096/4096 bytes at offset 0\n"));
	assert_non_null(strstr(out, "  datafile\n"));
	/* xfs_io's statuses (measured with 6.1): a failing call 1, an unknown
	 * command or a bad argument count 0, every command runs */
	assert_int_equal(run_rmio("-c 'finsert 4k 4k' -c 'truncate 8k' f", NULL,
				  out, sizeof(out)), 1);
	assert_non_null(strstr(out, "fallocate: Invalid argument\n"));
	assert_int_equal(run_rmio("-c 'bogus' -c 'truncate' -c 'stat' f", NULL,
				  out, sizeof(out)), 0);
	assert_non_null(strstr(out, "command \"bogus\" not found\n"));
	assert_non_null(strstr(out, "stat.size = 0\n"));
	assert_int_equal(run_rmio("--strict-exit -c 'bogus' f", NULL, out, sizeof(out)), 1);
	assert_int_equal(run_rmio("-c 'pread -x 0 1' f", NULL, out, sizeof(out)), 1);
	/* bad command lines: xfs_io's exit status 1, a message naming it */
	assert_int_equal(run_rmio("-p nosuchfs f", NULL, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "unknown profile"));
	assert_int_equal(run_rmio("-b 3000 -c fsync f", NULL, out, sizeof(out)), 1);
	assert_int_equal(run_rmio("-q f", NULL, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "Usage: rmio"));
	assert_int_equal(run_rmio("-c fsync", NULL, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "no file given"));
	assert_int_equal(run_rmio("-c fsync f g", NULL, out, sizeof(out)), 1);
	assert_int_equal(run_rmio("-l /nonexistent/src f", NULL, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "/nonexistent/src: No such file or directory"));
	/* Without -c the commands come from standard input, as in xfs_io:
	 * comments and blank lines skipped, the bytes profile allows an
	 * unaligned insert, "quit" ends the input. */
	assert_int_equal(run_rmio("-p bytes g",
				  "# comment\\n\\npwrite 0 10\\nfinsert 3 2\\nstat\\nquit\\ntruncate 1\\nstat\\n",
				  out, sizeof(out)), 0);
	assert_non_null(strstr(out, "fd.path = \"g\"\nfd.flags = non-sync,non-direct,read-write\nstat.ino = 0\nstat.type = regular file\nstat.size = 12\n"));
	assert_null(strstr(out, "stat.size = 1\n"));
	assert_int_equal(run_rmio("f", "finsert 3 2\\nstat\\n", out, sizeof(out)), 1);
	assert_non_null(strstr(out, "stat.size = 0\n"));
	/* -c commands leave standard input alone */
	assert_int_equal(run_rmio("-c stat f", "truncate 4k\\n", out, sizeof(out)), 0);
	assert_non_null(strstr(out, "stat.size = 0\n"));
}

/* -r: writes fail as on an O_RDONLY descriptor; -l loads a real file's
 * data and holes. */
/* rmio -d: direct I/O rules (RULES.md O2, O4) */
static void test_direct(void **st)
{
	struct cap c;

	(void)st;
	cap_open(&c, RM_PROFILE_XFS);
	c.s.direct = 1;
	assert_int_equal(cap_run(&c, "pwrite -q -b 4096 0 8192"), 0);
	assert_int_equal(rm_size(c.f), 8192);
	assert_int_equal(cap_run(&c, "pwrite -q -b 4096 100 4096"), -EINVAL);
	assert_string_equal(c.ebuf, "pwrite: Invalid argument\n");
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "pread -q -b 1000 0 1000"), -EINVAL);
	assert_string_equal(c.ebuf, "pread: Invalid argument\n");
	cap_reset(&c);
	assert_int_equal(cap_run(&c, "pread -q -b 512 512 512"), 0);
	assert_string_equal(c.ebuf, "");
	cap_close(&c);
}

static void test_rmio_read_only_and_load(void **st)
{
	char out[8192], src[] = "/tmp/rmio-load-XXXXXX", args[256];
	int fd;

	(void)st;
	assert_int_equal(run_rmio("-r -c 'pwrite 0 1' -c 'truncate 0' -c 'fpunch 0 4k' -c 'fpunch 0 0' -c fsync -c stat f",
				  NULL, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "pwrite: Bad file descriptor\n"
				    "ftruncate: Invalid argument\n"
				    "fallocate: Bad file descriptor\n"
				    "fallocate: Invalid argument\n"));
	assert_non_null(strstr(out, "fd.flags = non-sync,non-direct,read-only\n"));
	/* a sparse source: data at 8k..12k, size 20k */
	fd = mkstemp(src);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "hello", 5, 8192), 5);
	assert_int_equal(ftruncate(fd, 20480), 0);
	close(fd);
	snprintf(args, sizeof(args), "-r -l %s -c 'pread -v 8192 5' -c 'fiemap' f", src);
	assert_int_equal(run_rmio(args, NULL, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "00002000:  68 65 6c 6c 6f  hello\n"));
	assert_non_null(strstr(out, "f:\n\t0: [0..15]: hole\n\t1: [16..23]: 0..7\n\t2: [24..39]: hole\n"));
	/* -t (O_TRUNC) empties what -l loaded; -C is -c; -x, -i accepted */
	snprintf(args, sizeof(args), "-x -i -t -l %s -C stat f", src);
	assert_int_equal(run_rmio(args, NULL, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "stat.size = 0\n"));
	snprintf(args, sizeof(args), "-L 4 -l %s f", src);
	assert_int_equal(run_rmio(args, NULL, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "more than 4 bytes of data"));
	unlink(src);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cvtnum_suffixes_as_xfs_io),
		cmocka_unit_test(test_cvtnum_rejects_what_xfs_io_rejects),
		cmocka_unit_test(test_unknown_command),
		cmocka_unit_test(test_bad_argument_counts),
		cmocka_unit_test(test_non_numeric_arguments),
		cmocka_unit_test(test_bad_options_print_usage),
		cmocka_unit_test(test_falloc_fzero_bad_option_still_run),
		cmocka_unit_test(test_unmodelled_options_refused),
		cmocka_unit_test(test_io_limit_refuses_before_touching_model),
		cmocka_unit_test(test_fiemap_n_sticks_like_xfs_io),
		cmocka_unit_test(test_writeback_commands),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_blank_and_comment_lines),
		cmocka_unit_test(test_falloc_last_option_wins),
		cmocka_unit_test(test_options_after_operands),
		cmocka_unit_test(test_pwrite_report_layout),
		cmocka_unit_test(test_pread_hexdump_layout),
		cmocka_unit_test(test_fiemap_layout),
		cmocka_unit_test(test_fiemap_sub_block_range),
		cmocka_unit_test(test_big_bsize_allocates_nothing_big),
		cmocka_unit_test(test_seek_layout),
		cmocka_unit_test(test_errno_messages),
		cmocka_unit_test(test_stat_md5_xxh3_lines),
		cmocka_unit_test(test_stat_xfs_lines),
		cmocka_unit_test(test_quit),
		cmocka_unit_test(test_fiemap_width_cap),
		cmocka_unit_test(test_md5_rfc1321_vectors),
#ifdef RMIO_PATH
		cmocka_unit_test(test_rmio_exit_status),
		cmocka_unit_test(test_rmio_read_only_and_load),
		cmocka_unit_test(test_direct),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
