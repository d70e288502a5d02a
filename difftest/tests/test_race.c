/* SPDX-License-Identifier: MIT */
/*
 * test_race.c - the concurrent mode (cmocka): the orders the oracle
 * enumerates; a window's outcome accepted exactly when some serial order
 * gives it (final state and judged results), a torn interleaving and a
 * wrong errno refused; the kernel log classifier on sample lines; the
 * command line end to end on the model (clean), on a faulty model (a
 * race log written, and replayed by --race-replay) and on bad options.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "optab.h"
#include "race.h"

#define KB 1024

static void test_perms(void **state)
{
	(void)state;
	for (int n = 1; n <= DT_RACE_MAXT; n++) {
		int p[DT_RACE_MAXT], seen[4 * 4 * 4 * 4] = { 0 }, count = 0, fact = 1;
		for (int i = 0; i < n; i++) {
			p[i] = i;
			fact *= i + 1;
		}
		do {
			int code = 0, mask = 0;
			for (int i = 0; i < n; i++) {
				code = code * 4 + p[i];
				mask |= 1 << p[i];
			}
			assert_int_equal(mask, (1 << n) - 1);	/* a permutation */
			assert_int_equal(seen[code], 0);	/* not seen before */
			seen[code] = 1;
			count++;
		} while (dt_race_next_perm(p, n));
		assert_int_equal(count, fact);
	}
}

static struct rm_file *mk(void)
{
	struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = 4096 };
	struct rm_file *f;

	assert_int_equal(rm_file_new(&o, &f), 0);
	return f;
}

static void wr(struct rm_file *f, int64_t off, int64_t len, int c)
{
	unsigned char *b = malloc((size_t)len);

	memset(b, c, (size_t)len);
	assert_int_equal(rm_pwrite(f, b, (size_t)len, off), len);
	free(b);
}

static int runs_cb(void *ctx, const struct rm_run *r)
{
	struct dt_race_obs *o = ctx;

	o->act = realloc(o->act, (o->nact + 1) * sizeof(*o->act));
	o->act[o->nact] = *r;
	o->act[o->nact].may = r->state;
	o->nact++;
	return 0;
}

/* What a target in state m shows (exact map). */
static void obs_of(const struct rm_file *m, struct dt_race_obs *o)
{
	free(o->data);
	free(o->act);
	o->act = NULL;
	o->nact = 0;
	o->size = rm_size(m);
	o->data = malloc((size_t)o->size + 1);
	assert_int_equal(rm_pread(m, o->data, (size_t)o->size, 0), o->size);
	o->have_map = 1;
	if (rm_map_end(m) > 0)
		assert_int_equal(rm_walk(m, 0, rm_map_end(m), runs_cb, o), 0);
}

static struct dt_op op_of(const char *line)
{
	struct dt_op op;
	char err[160];

	if (dt_op_parse(line, &op, err, sizeof(err)))
		fail_msg("%s: %s", line, err);
	return op;
}

/* Judge ops on start against obs; returns the matches, order in ord. */
static int judge(const struct rm_file *start, const struct dt_op *ops, int n,
		 const struct dt_race_obs *obs, int *ord, char *why)
{
	struct rm_file *cand[DT_RACE_MAXCAND], *others[2] = { NULL, NULL };
	int ncand = 1;

	assert_int_equal(rm_file_clone(start, &cand[0]), 0);
	others[1] = mk();
	int rc = dt_race_judge(cand, &ncand, others, 2, ops, n, obs, ord, why, 512);
	for (int c = 0; c < ncand; c++)
		rm_file_free(cand[c]);
	rm_file_free(others[1]);
	return rc;
}

/* pwrite 0 8k 'A' racing collapse 0 4k on 16k of 'B': either order is
 * fine, a torn mix (the write's first block shifted, its second not) is
 * not. */
static void test_judge_write_vs_collapse(void **state)
{
	(void)state;
	struct rm_file *s = mk(), *m;
	struct dt_op ops[2] = { op_of("f0 pwrite -S 0x41 0 8192"), op_of("f0 fcollapse 0 4096") };
	struct dt_race_obs o = { 0 };
	int ord[DT_RACE_MAXT];
	char why[512];

	wr(s, 0, 16 * KB, 'B');
	o.ret[0] = 8192;
	o.ret[1] = 0;
	/* write, then collapse: A(4k) B(8k) */
	assert_int_equal(rm_file_clone(s, &m), 0);
	wr(m, 0, 8 * KB, 'A');
	assert_int_equal(rm_fallocate(m, RM_FALLOC_FL_COLLAPSE_RANGE, 0, 4 * KB), 0);
	obs_of(m, &o);
	rm_file_free(m);
	assert_int_equal(judge(s, ops, 2, &o, ord, why), 1);
	assert_int_equal(ord[0], 0);
	assert_int_equal(ord[1], 1);
	/* collapse, then write: A(8k) B(4k) */
	assert_int_equal(rm_file_clone(s, &m), 0);
	assert_int_equal(rm_fallocate(m, RM_FALLOC_FL_COLLAPSE_RANGE, 0, 4 * KB), 0);
	wr(m, 0, 8 * KB, 'A');
	obs_of(m, &o);
	rm_file_free(m);
	assert_int_equal(judge(s, ops, 2, &o, ord, why), 1);
	assert_int_equal(ord[0], 1);
	assert_int_equal(ord[1], 0);
	/* torn: A(4k) B(4k) A(4k), size 12k: no order gives it */
	assert_int_equal(rm_file_clone(s, &m), 0);
	assert_int_equal(rm_truncate(m, 12 * KB), 0);
	wr(m, 0, 4 * KB, 'A');
	wr(m, 8 * KB, 4 * KB, 'A');
	obs_of(m, &o);
	rm_file_free(m);
	assert_int_equal(judge(s, ops, 2, &o, ord, why), 0);
	assert_non_null(strstr(why, "data at byte"));
	/* the write's count is judged: a short write is no serial outcome */
	assert_int_equal(rm_file_clone(s, &m), 0);
	wr(m, 0, 8 * KB, 'A');
	assert_int_equal(rm_fallocate(m, RM_FALLOC_FL_COLLAPSE_RANGE, 0, 4 * KB), 0);
	obs_of(m, &o);
	rm_file_free(m);
	o.ret[0] = 4096;
	assert_int_equal(judge(s, ops, 2, &o, ord, why), 0);
	assert_non_null(strstr(why, "pwrite"));
	free(o.data);
	free(o.act);
	rm_file_free(s);
}

/* insert at 8k racing truncate to 4k: the insert's answer says which went
 * first (EINVAL: the truncate), and it must agree with the state; a map
 * the model does not allow is refused. */
static void test_judge_results_and_map(void **state)
{
	(void)state;
	struct rm_file *s = mk(), *m;
	struct dt_op ops[2] = { op_of("f0 finsert 8192 4096"), op_of("f0 truncate 4096") };
	struct dt_race_obs o = { 0 };
	int ord[DT_RACE_MAXT];
	char why[512];

	wr(s, 0, 16 * KB, 'B');
	assert_int_equal(rm_file_clone(s, &m), 0);
	assert_int_equal(rm_truncate(m, 4 * KB), 0);
	obs_of(m, &o);
	o.ret[0] = 0;
	o.ret[1] = 0;
	assert_true(judge(s, ops, 2, &o, ord, why) >= 1);	/* insert, then truncate */
	assert_int_equal(ord[0], 0);
	o.ret[0] = -EINVAL;
	assert_true(judge(s, ops, 2, &o, ord, why) >= 1);	/* truncate, then insert */
	assert_int_equal(ord[0], 1);
	o.ret[0] = -EOPNOTSUPP;
	assert_int_equal(judge(s, ops, 2, &o, ord, why), 0);
	assert_non_null(strstr(why, "finsert"));
	/* the right bytes and size, but the target shows its block unwritten */
	o.ret[0] = 0;
	assert_true(o.nact >= 1);
	o.act[0].state = o.act[0].may = RM_UNWRITTEN;
	assert_int_equal(judge(s, ops, 2, &o, ord, why), 0);
	assert_non_null(strstr(why, "map"));
	rm_file_free(m);
	free(o.data);
	free(o.act);
	rm_file_free(s);
}

/* A fallocate the kernel refuses before the file system (fusefs's front)
 * has that answer in every order and changes nothing. */
static void test_judge_front(void **state)
{
	(void)state;
	struct rm_file *s = mk();
	struct dt_op ops[2] = { op_of("f0 funshare 0 4096"), op_of("f0 pwrite -S 0x43 0 4096") };
	struct dt_race_obs o = { 0 };
	int ord[DT_RACE_MAXT];
	char why[512];
	struct rm_file *m;

	wr(s, 0, 8 * KB, 'B');
	assert_int_equal(rm_file_clone(s, &m), 0);
	wr(m, 0, 4 * KB, 'C');
	obs_of(m, &o);
	o.ret[0] = -EOPNOTSUPP;
	o.ret[1] = 4096;
	o.front[0] = -EOPNOTSUPP;
	assert_int_equal(judge(s, ops, 2, &o, ord, why), 2);	/* both orders */
	rm_file_free(m);
	free(o.data);
	free(o.act);
	rm_file_free(s);
}

/* A mapped write's page fault may come before a concurrent insert and its
 * copy after it: the page of zeros it dirtied is written back and shifted
 * as data, the bytes land in the new layout.  The same state without a
 * mapped write in the window is refused. */
static void test_judge_fault_apart(void **state)
{
	(void)state;
	struct rm_file *s = mk(), *m;
	struct dt_op ops[2] = { op_of("f0 mwrite -S 0xdb 5734 2167"), op_of("f0 finsert 4096 12288") };
	struct dt_race_obs o = { 0 };
	int ord[DT_RACE_MAXT];
	char why[512];
	unsigned char z[4096] = { 0 };

	wr(s, 0, 4 * KB, 'B');
	wr(s, 8 * KB, 12 * KB, 'B');	/* a hole at [4k, 8k) */
	assert_int_equal(rm_file_clone(s, &m), 0);
	assert_int_equal(rm_pwrite(m, z, sizeof(z), 4 * KB), 4096);	/* the fault's page */
	assert_int_equal(rm_fallocate(m, RM_FALLOC_FL_INSERT_RANGE, 4 * KB, 12 * KB), 0);
	wr(m, 5734, 2167, 0xdb);					/* the copy */
	obs_of(m, &o);
	rm_file_free(m);
	o.ret[0] = 2167;
	o.ret[1] = 0;
	assert_true(judge(s, ops, 2, &o, ord, why) >= 1);
	ops[0] = op_of("f0 pwrite -S 0xdb 5734 2167");
	assert_int_equal(judge(s, ops, 2, &o, ord, why), 0);
	free(o.data);
	free(o.act);
	rm_file_free(s);
}

static void test_kmsg(void **state)
{
	(void)state;
	static const struct { const char *line, *cls; } v[] = {
		{ "WARNING: possible circular locking dependency detected", "lockdep" },
		{ "WARNING: possible recursive locking detected", "lockdep" },
		{ "WARNING: inconsistent lock state", "lockdep" },
		{ "BUG: sleeping function called from invalid context at mm/filemap.c:1234",
		  "atomic sleep" },
		{ "INFO: task xfs_io:123 blocked for more than 120 seconds.", "hung task" },
		{ "watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [difftest:88]", "soft lockup" },
		{ "kernel BUG at fs/ext4/extents.c:5123!", "BUG" },
		{ "BUG: unable to handle page fault for address: ffff888000000000", "BUG" },
		{ "WARNING: CPU: 1 PID: 88 at fs/ext4/inode.c:3640 ext4_set_page_dirty+0x3b/0x50",
		  "WARNING" },
		{ "general protection fault, probably for non-canonical address", "oops" },
		{ "list_del corruption. next->prev should be ffff..., but was ffff...",
		  "list corruption" },
		{ "EXT4-fs error (device ram0): ext4_ext_shift_extents:5320: inode #12",
		  "ext4 error" },
		{ "XFS (ram1): Internal error xfs_bmap_shift_extents at line 5780", "XFS error" },
		{ "XFS: Assertion failed: got.br_startoff >= offset_shift_fsb, file: "
		  "fs/xfs/libxfs/xfs_bmap.c, line: 5913", "XFS assertion" },
		{ "1 lock held by difftest/88:", NULL },
		{ "EXT4-fs (ram0): mounted filesystem with ordered data mode.", NULL },
		{ "XFS (ram1): Mounting V5 Filesystem", NULL },
		{ "ext4 filesystem being mounted at /mnt/ext4 supports timestamps until 2038",
		  NULL },
		{ "fuse: init (API version 7.37)", NULL },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		const char *c = dt_kmsg_match(v[i].line);
		if (!v[i].cls) {
			if (c)
				fail_msg("'%s' classified %s", v[i].line, c);
		} else if (!c || strcmp(c, v[i].cls)) {
			fail_msg("'%s': %s, want %s", v[i].line, c ? c : "nothing", v[i].cls);
		}
	}
}

static int sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The command line: the model against itself is clean with every thread
 * count; a faulty model diverges with a race log, which --race-replay runs
 * again; bad options are refused before anything runs. */
static void test_cli(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_race.XXXXXX", cmd[2048], log[256];

	assert_non_null(mkdtemp(dir));
	for (int n = 2; n <= 4; n++) {
		snprintf(cmd, sizeof(cmd), "%s --threads %d -t model:ext4 -t model:xfs --windows 150 "
			 "--no-kmsg --out %s/clean -S %d >/dev/null 2>&1", DIFFTEST_BIN, n, dir, n);
		assert_int_equal(sh(cmd), 0);
	}
	snprintf(cmd, sizeof(cmd), "%s --threads 3 -t faulty:insert-off-by-one:ext4 --windows 400 "
		 "--no-kmsg --out %s/bad >/dev/null 2>&1", DIFFTEST_BIN, dir);
	assert_int_equal(sh(cmd), 1);
	snprintf(log, sizeof(log), "%s/bad/race-faulty_insert-off-by-one_ext4-1/race.log", dir);
	struct stat st;
	assert_int_equal(stat(log, &st), 0);
	snprintf(cmd, sizeof(cmd), "%s --race-replay %s --repeat 3x2 --no-kmsg --out %s/rep "
		 "| grep -Eq 'diverged in [123] of 3 runs'", DIFFTEST_BIN, log, dir);
	assert_int_equal(sh(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s --race-replay %s --repeat 2x2 --no-kmsg --out %s/rep "
		 "-t model:ext4 >/dev/null 2>&1", DIFFTEST_BIN, log, dir);
	assert_int_equal(sh(cmd), 0);	/* the model itself is clean on the log */
	static const char *bad[] = {
		"--threads 1 -t model", "--threads 5 -t model", "--threads x -t model",
		"--threads 2 -t nosuchtarget", "--threads 2 -t model --windows 0",
		"--threads 2 -t model --repeat 3", "--race-replay /nonexistent/race.log -t model",
		"--threads 2 -t model extra",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(cmd, sizeof(cmd), "%s %s --out %s/x >/dev/null 2>&1", DIFFTEST_BIN, bad[i],
			 dir);
		if (sh(cmd) != 2)
			fail_msg("'%s' not refused with 2", bad[i]);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(sh(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perms),
		cmocka_unit_test(test_judge_write_vs_collapse),
		cmocka_unit_test(test_judge_results_and_map),
		cmocka_unit_test(test_judge_front),
		cmocka_unit_test(test_judge_fault_apart),
		cmocka_unit_test(test_kmsg),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
