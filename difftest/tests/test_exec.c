/* SPDX-License-Identifier: MIT */
/*
 * test_exec.c - the executor's per-kind hooks on the model target (the
 * model against itself: every op agrees) (cmocka): each kind runs clean
 * from its log line; a shift's data check starts at the shift's offset
 * also above 4 GiB (the block mask is 64-bit) and so reads at most the
 * bytes it must; an op naming a file the session lacks is refused; the
 * model's kernel rules come from a versioned profile or from uname -r; a
 * cache drop drops the target's own clean pages and no other target's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <cmocka.h>

#include "optab.h"

struct fx {
	struct dt_target t;
	struct dt_session *s;
	struct dt_exec x;
};

static void fx_open_t(struct fx *f, int nfiles, const char *target)
{
	struct dt_opts o = { .check_every = 1000, .map_batch = 1 };
	char err[256];

	assert_int_equal(dt_target_init(&f->t, target, "test", err, sizeof(err)), 0);
	assert_int_equal(dt_session_open(&f->t, nfiles, &f->s, err, sizeof(err)), 0);
	assert_int_equal(dt_exec_init(&f->x, f->s, &o), 0);
}

static void fx_open(struct fx *f, int nfiles)
{
	fx_open_t(f, nfiles, "model:ext4");
}

static void fx_close(struct fx *f)
{
	dt_exec_fini(&f->x);
	dt_session_close(f->s);
	dt_target_fini(&f->t);
}

static int run(struct fx *f, const char *line, uint64_t opno)
{
	struct dt_op op;
	struct dt_div d = { 0 };
	char err[256];

	if (dt_op_parse(line, &op, err, sizeof(err)))
		fail_msg("'%s': %s", line, err);
	int rc = dt_exec_op(&f->x, &op, opno, &d);
	if (rc)
		fail_msg("'%s': %d %s", line, rc, d.msg);
	dt_div_free(&d);
	return rc;
}

static void test_target_kernel_rules(void **state)
{
	(void)state;
	static struct dt_target t;	/* large: PATH_MAX buffers */
	char err[256];
	struct utsname u;
	enum rm_kernel k = RM_KERNEL_6_1;

	assert_int_equal(dt_target_init(&t, "model:xfs-6.12", "test", err, sizeof(err)), 0);
	assert_int_equal(t.mopts.profile, RM_PROFILE_XFS);
	assert_int_equal(t.mopts.kernel, RM_KERNEL_6_12);
	assert_int_equal(t.kernel, RM_KERNEL_6_12);
	assert_int_equal(dt_target_init(&t, "model:ext4", "test", err, sizeof(err)), 0);
	assert_int_equal(t.mopts.kernel, RM_KERNEL_6_1);
	assert_int_not_equal(dt_target_init(&t, "model:ext4-6.2", "test", err, sizeof(err)), 0);
	assert_non_null(strstr(err, "ext4-6.12"));
	/* a directory: the running kernel's rules, said in the note */
	assert_int_equal(uname(&u), 0);
	assert_true(rm_kernel_from_release(u.release, &k) >= 0);
	assert_int_equal(dt_target_init(&t, "dir:/tmp", "test", err, sizeof(err)), 0);
	assert_int_equal(t.mopts.kernel, k);
	assert_int_equal(t.kernel, k);
	assert_non_null(strstr(t.kernel_note, u.release));
	/* a named profile wins for the model, the front keeps the running one */
	assert_int_equal(dt_target_init(&t, k == RM_KERNEL_6_1 ? "dir:/tmp:xfs-6.12" :
					"dir:/tmp:xfs-6.1", "test", err, sizeof(err)), 0);
	assert_int_equal(t.mopts.kernel, k == RM_KERNEL_6_1 ? RM_KERNEL_6_12 : RM_KERNEL_6_1);
	assert_int_equal(t.kernel, k);
	dt_target_fini(&t);
}

static void test_every_kind_clean(void **state)
{
	static const char *const log[] = {
		"f0 pwrite -S 0x41 0 65536", "f0 pread 4096 8192", "f0 mwrite -S 0x42 100 5000",
		"f0 mread 0 70000", "f0 truncate 100000", "f0 falloc 200000 8192",
		"f0 falloc -k 300000 8192", "f0 fpunch 4096 4096", "f0 fzero 8192 100",
		"f0 fzero -k 12288 4096", "f0 finsert 16384 8192", "f0 fcollapse 16384 8192",
		"f0 funshare 0 4096", "f0 fmode 0x28 0 4096", "f0 fsync", "f0 reopen",
		"drop_caches", "remount", "f0 seek -d 0", "f0 seek -h 0",
		"f1 reflink f0 0 0 8192", "f0 fdatasync", "f0 sync_range -a -w 0 4096",
		"f0 fiemap 0 65536", "f0 dio_pwrite -S 0x44 8192 8192", "f0 dio_pread 100 512",
		"f1 copy_range f0 100 4096 5000", "f1 dedupe f0 0 0 4096", "f0 chmod 0644",
	};
	struct fx f;

	(void)state;
	fx_open(&f, 2);
	for (size_t j = 0; j < sizeof(log) / sizeof(log[0]); j++)
		run(&f, log[j], j);
	/* the shrinker's fill and unfill: refused, said why, on a target
	 * with room */
	struct dt_div d = { 0 };
	for (int k = DT_FILL; k <= DT_UNFILL; k++) {
		struct dt_op op = { .kind = (uint8_t)k };
		memset(&d, 0, sizeof(d));
		assert_int_equal(dt_exec_op(&f.x, &op, 99, &d), -EINVAL);
		assert_non_null(strstr(d.msg, "free=SIZE"));
		dt_div_free(&d);
	}
	uint64_t kinds = 0;
	for (int k = 0; k < DT_NKINDS; k++)
		kinds += f.x.kind_count[k] == 1;
	assert_int_equal(kinds, DT_NKINDS);	/* each hook ran once */
	for (int i = 0; i < 2; i++) {
		memset(&d, 0, sizeof(d));
		assert_int_equal(dt_full_check(&f.x, i, 99, &d), DV_NONE);
		dt_div_free(&d);
	}
	fx_close(&f);
}

static void test_shift_check_above_4g(void **state)
{
	struct fx f;

	(void)state;
	fx_open(&f, 1);
	run(&f, "f0 pwrite -S 0x41 4295032832 4096", 0);	/* 4 GiB + 64 KiB */
	uint64_t before = f.x.bytes_checked;
	run(&f, "f0 fcollapse 4294983680 32768", 1);		/* 4 GiB + 16 KiB */
	/* [off, EOF) is 52 KiB: read whole, not as two 128 KiB pieces from
	 * an offset with its high bits masked off */
	assert_true(f.x.bytes_checked - before <= 65536);
	assert_true(f.x.bytes_checked - before >= 4096);
	fx_close(&f);
}

/* --user on the model target and on faulty:keep-setid (a target that
 * never removes set-ID bits): the oracle's mode check (RULES.md P1-P6). */
static void user_open(struct fx *f, const char *spec, int nfiles)
{
	struct dt_opts o = { .check_every = 1000, .map_batch = 1 };
	char err[256];

	assert_int_equal(dt_target_init(&f->t, spec, "test", err, sizeof(err)), 0);
	f->t.user = 1;
	f->t.user_uid = 1000;
	f->t.user_gid = 1000;
	assert_int_equal(dt_session_open(&f->t, nfiles, &f->s, err, sizeof(err)), 0);
	assert_int_equal(dt_exec_init(&f->x, f->s, &o), 0);
}

static int run_div(struct fx *f, const char *line, uint64_t opno, char *msg, size_t n)
{
	struct dt_op op;
	struct dt_div d = { 0 };
	char err[256];

	if (dt_op_parse(line, &op, err, sizeof(err)))
		fail_msg("'%s': %s", line, err);
	int rc = dt_exec_op(&f->x, &op, opno, &d);
	snprintf(msg, n, "%s", d.msg);
	dt_div_free(&d);
	return rc;
}

static void test_user_modes(void **state)
{
	struct fx f;
	char msg[512];

	(void)state;
	user_open(&f, "model:xfs", 4);
	/* the table: f0 caller's 06666, f1 root's 06666, f2 root's in the
	 * caller's group 06676, f3 caller's outside its group 06666 */
	assert_int_equal(f.s->attr[1].mode, 06666);
	assert_int_equal(f.s->attr[2].uid, 0);
	assert_int_equal(f.s->attr[2].gid, 1000);
	run(&f, "f0 pwrite -S 0x41 0 4096", 0);
	assert_int_equal(f.s->attr[0].mode, 02666);	/* in its group: S_ISGID stays */
	run(&f, "f1 chmod 0600", 1);			/* EPERM on both */
	assert_int_equal(f.s->attr[1].mode, 06666);
	run(&f, "f1 mwrite -S 0x41 0 0", 2);
	assert_int_equal(f.s->attr[1].mode, 06666);	/* mappings remove nothing */
	run(&f, "f1 fcollapse 100 4096", 3);		/* XFS: refused after file_modified() */
	assert_int_equal(f.s->attr[1].mode, 0666);
	run(&f, "f3 chmod 06666", 4);			/* the owner outside the group */
	assert_int_equal(f.s->attr[3].mode, 04666);
	fx_close(&f);

	user_open(&f, "model:ext4", 2);
	run(&f, "f1 fcollapse 100 4096", 0);		/* ext4: refused first */
	assert_int_equal(f.s->attr[1].mode, 06666);
	fx_close(&f);

	user_open(&f, "faulty:keep-setid:ext4", 2);
	assert_int_equal(run_div(&f, "f1 truncate 4096", 0, msg, sizeof(msg)), DV_MODE);
	assert_non_null(strstr(msg, "expected 00666, the file has 06666"));
	fx_close(&f);
}

static void test_chmod_log_line(void **state)
{
	struct dt_op op;
	char err[256], line[128];

	(void)state;
	assert_int_equal(dt_op_parse("f2 chmod 06676", &op, err, sizeof(err)), 0);
	assert_int_equal(op.kind, DT_CHMOD);
	assert_int_equal(op.off, 06676);
	dt_op_format(&op, line, sizeof(line));
	assert_string_equal(line, "f2 chmod 06676");
}

static void test_file_out_of_session(void **state)
{
	struct fx f;
	struct dt_op op = { .kind = DT_FSYNC, .file = 3 };
	struct dt_div d = { 0 };

	(void)state;
	fx_open(&f, 2);
	assert_int_equal(dt_exec_op(&f.x, &op, 0, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "the session has 2 files"));
	op.kind = DT_REFLINK;
	op.file = 0;
	op.src = 5;
	assert_int_equal(dt_exec_op(&f.x, &op, 1, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "names source f5"));
	op.kind = 200;		/* no such kind */
	assert_int_equal(dt_exec_op(&f.x, &op, 2, &d), -EINVAL);
	assert_non_null(strstr(d.msg, "unknown op kind 200"));
	dt_div_free(&d);
	fx_close(&f);
}

/* Does span set p cover [a, b)? */
static int covers(const struct dt_spans *p, int64_t a, int64_t b)
{
	for (size_t k = 0; k < p->n; k++)
		if (p->v[k].start <= a && p->v[k].end >= b)
			return 1;
	return 0;
}

/* XFS CoW latitude after copy_range (cowlat.c, exec.c remapped_check()):
 * XFS clones what it can of a copy, so both ranges stay shared after
 * the op, and a later write into the copied blocks stages the 32-block
 * window around them (where a cached page makes a hole data for lseek).
 * The copy's own write-like hook once ran after the new sharing was
 * recorded and undid it: no staging, and lseek answers of a correct XFS
 * were divergences. */
static void test_copy_range_stays_shared(void **state)
{
	const int64_t bs = 4096, W = 32 * bs;
	struct fx f;

	(void)state;
	fx_open_t(&f, 2, "model:xfs");
	run(&f, "f0 pwrite -S 0x11 0 65536", 0);
	run(&f, "f1 copy_range f0 0 0 65536", 1);
	assert_true(covers(&f.s->cow[1].sh, 0, 65536));
	assert_true(covers(&f.s->cow[0].sh, 0, 65536));
	assert_int_equal(f.s->cow[1].st.n, 0);
	run(&f, "f1 pwrite -S 0x22 4096 4096", 2);
	assert_true(covers(&f.s->cow[1].st, 0, W));
	/* the written block is copied on write: no longer shared */
	assert_false(covers(&f.s->cow[1].sh, 4096, 8192));
	/* a copy over a range it shared: staging around the old sharing
	 * first, then the range shares anew */
	run(&f, "f1 copy_range f0 0 65536 8192", 3);
	assert_true(covers(&f.s->cow[1].sh, 65536, 65536 + 8192));
	fx_close(&f);
}

/* Pages of fd's first len bytes in the page cache (mincore(2)). */
static int resident(int fd, size_t len)
{
	unsigned char vec[256];
	long pg = sysconf(_SC_PAGESIZE);
	size_t n = (len + (size_t)pg - 1) / (size_t)pg;
	int r = 0;

	assert_true(n <= sizeof(vec));
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(mincore(p, len, vec), 0);
	munmap(p, len);
	for (size_t i = 0; i < n; i++)
		r += vec[i] & 1;
	return r;
}

/* A drop_caches op of one target drops that target's clean pages and
 * leaves the others' alone: targets run side by side in one guest, and a
 * cached page changes kernel answers, so one target's drop must not reach
 * another's files. DIFFTEST_GLOBAL_DROP=1 (root) is the old global drop,
 * which the same measure sees reach the other target. */
static void test_drop_is_per_target(void **state)
{
	enum { LEN = 256 * 1024 };
	static char buf[LEN];
	char da[] = "/var/tmp/dt-drop-a-XXXXXX", db[] = "/var/tmp/dt-drop-b-XXXXXX";
	char spec[2][64], err[256];
	const char *old = getenv("DIFFTEST_GLOBAL_DROP");

	(void)state;
	if (geteuid() != 0)
		skip();		/* the global drop needs root */
	assert_non_null(mkdtemp(da));
	assert_non_null(mkdtemp(db));
	snprintf(spec[0], sizeof(spec[0]), "dir:%s", da);
	snprintf(spec[1], sizeof(spec[1]), "dir:%s", db);
	memset(buf, 0x5a, sizeof(buf));
	int skipped = 0;
	for (int global = 0; global < 2 && !skipped; global++) {
		struct dt_target t[2];
		struct dt_session *s[2];

		if (global)
			setenv("DIFFTEST_GLOBAL_DROP", "1", 1);
		else
			unsetenv("DIFFTEST_GLOBAL_DROP");
		for (int k = 0; k < 2; k++) {
			assert_int_equal(dt_target_init(&t[k], spec[k], "test", err, sizeof(err)), 0);
			assert_int_equal(dt_session_open(&t[k], 1, &s[k], err, sizeof(err)), 0);
			assert_int_equal(pwrite(s[k]->fd[0], buf, LEN, 0), LEN);
			assert_int_equal(fsync(s[k]->fd[0]), 0);
			assert_int_equal(pread(s[k]->fd[0], buf, LEN, 0), LEN);
			assert_int_equal(resident(s[k]->fd[0], LEN), LEN / sysconf(_SC_PAGESIZE));
		}
		assert_int_equal(t[0].global_drop, global);
		assert_int_equal(dt_t_drop(s[0]), 0);
		if (resident(s[0]->fd[0], LEN) != 0) {
			skipped = 1;	/* a file system that keeps its pages (tmpfs) */
		} else if (!global) {
			assert_int_equal(resident(s[1]->fd[0], LEN), LEN / sysconf(_SC_PAGESIZE));
		} else {
			assert_int_equal(resident(s[1]->fd[0], LEN), 0);
		}
		for (int k = 0; k < 2; k++) {
			dt_session_close(s[k]);
			dt_target_fini(&t[k]);
		}
	}
	if (old)
		setenv("DIFFTEST_GLOBAL_DROP", old, 1);
	else
		unsetenv("DIFFTEST_GLOBAL_DROP");
	rmdir(da);
	rmdir(db);
	if (skipped)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind_clean),
		cmocka_unit_test(test_target_kernel_rules),
		cmocka_unit_test(test_shift_check_above_4g),
		cmocka_unit_test(test_file_out_of_session),
		cmocka_unit_test(test_user_modes),
		cmocka_unit_test(test_chmod_log_line),
		cmocka_unit_test(test_copy_range_stays_shared),
		cmocka_unit_test(test_drop_is_per_target),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
