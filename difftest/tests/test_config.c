/* SPDX-License-Identifier: MIT */
/*
 * test_config.c - configurations of the guest file systems (cmocka):
 * every documented configuration parses and renders back to its canonical
 * name, mkfs and mount options; unknown keys, bad values, a key given
 * twice and bigalloc are refused with a message naming them; a mount is
 * checked against the configuration (block size, data mode, nodelalloc);
 * targets are grouped into guest boots with one configuration per file
 * system; the target spec, the op log header, repro.sh and the emitted
 * fstest carry the configuration.
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

#include "dt.h"
#include "fstest.h"
#include "optab.h"

struct good {
	const char *spec, *name, *mkfs, *mount, *fusefs;
	uint32_t bs;
};

static const struct good goods[] = {
	{ "ext4", "ext4", "-b 4096", "", "", 4096 },
	{ "ext4:bs=1024", "ext4:bs=1024", "-b 1024", "", "", 1024 },
	{ "ext4:bs=2048", "ext4:bs=2048", "-b 2048", "", "", 2048 },
	{ "ext4:data=journal,bs=1024", "ext4:bs=1024,data=journal", "-b 1024", "data=journal", "", 1024 },
	{ "ext4:data=writeback", "ext4:data=writeback", "-b 4096", "data=writeback", "", 4096 },
	{ "ext4:nodelalloc", "ext4:nodelalloc", "-b 4096", "nodelalloc", "", 4096 },
	{ "ext4:data=ordered,bs=4096", "ext4", "-b 4096", "", "", 4096 },
	{ "xfs", "xfs", "-b size=4096", "", "", 4096 },
	{ "xfs:bs=1024", "xfs:bs=1024", "-b size=1024", "", "", 1024 },
	{ "xfs:reflink=0", "xfs:reflink=0", "-b size=4096 -m reflink=0", "", "", 4096 },
	{ "xfs:rmapbt=1", "xfs:rmapbt=1", "-b size=4096 -m rmapbt=1", "", "", 4096 },
	{ "xfs:rmapbt=1,reflink=0", "xfs:reflink=0,rmapbt=1", "-b size=4096 -m reflink=0,rmapbt=1",
	  "", "", 4096 },
	{ "fusefs", "fusefs", "", "", "", 4096 },
	{ "fusefs:bs=1024", "fusefs:bs=1024", "", "", "blocksize=1024", 1024 },
	{ "fusefs:xfs", "fusefs:xfs", "", "", "profile=xfs-6.1", 4096 },
	{ "fusefs:xfs:bs=1024", "fusefs:xfs:bs=1024", "", "", "profile=xfs-6.1,blocksize=1024", 1024 },
	{ "fusefs:ext4:bs=2048", "fusefs:bs=2048", "", "", "blocksize=2048", 2048 },
	{ "fusefs:auto_inval_data=1", "fusefs:auto_inval_data=1", "", "", "auto_inval_data", 4096 },
	{ "fusefs:auto_inval_data=0", "fusefs", "", "", "", 4096 },
	{ "fusefs:xfs:auto_inval_data=1,bs=1024", "fusefs:xfs:bs=1024,auto_inval_data=1", "", "",
	  "profile=xfs-6.1,blocksize=1024,auto_inval_data", 1024 },
	{ "fusefs:auto_inval_data=1,bs=2048", "fusefs:bs=2048,auto_inval_data=1", "", "",
	  "blocksize=2048,auto_inval_data", 2048 },
	/* free= is no mkfs, mount or server option: the filler makes it */
	{ "ext4:free=4096k", "ext4:free=4m", "-b 4096", "", "", 4096 },
	{ "xfs:free=1536,bs=1024", "xfs:bs=1024,free=1536", "-b size=1024", "", "", 1024 },
	{ "fusefs:xfs:free=1g", "fusefs:xfs:free=1g", "", "", "profile=xfs-6.1", 4096 },
};

static void test_good(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		const struct good *g = &goods[i];
		struct dt_config c, c2;
		char err[256] = "", buf[128];
		assert_int_equal(dt_config_parse(g->spec, &c, err, sizeof(err)), 0);
		assert_int_equal(c.bs, g->bs);
		dt_config_name(&c, buf, sizeof(buf));
		assert_string_equal(buf, g->name);
		dt_config_mkfs(&c, buf, sizeof(buf));
		assert_string_equal(buf, g->mkfs);
		dt_config_mount(&c, buf, sizeof(buf));
		assert_string_equal(buf, g->mount);
		dt_config_fusefs(&c, buf, sizeof(buf));
		assert_string_equal(buf, g->fusefs);
		/* the canonical name parses to the same configuration */
		dt_config_name(&c, buf, sizeof(buf));
		assert_int_equal(dt_config_parse(buf, &c2, err, sizeof(err)), 0);
		assert_memory_equal(&c, &c2, sizeof(c));
		assert_int_equal(dt_config_is_default(&c), !strchr(g->name, ':'));
	}
}

struct bad {
	const char *spec, *msg;
};

static const struct bad bads[] = {
	{ "ext4:bs=512", "bad block size '512'" },
	{ "ext4:bs=8192", "bad block size '8192'" },
	{ "ext4:bs=", "bad block size ''" },
	{ "ext4:bs=1k", "bad block size '1k'" },
	{ "ext4:data=journalled", "bad data mode 'journalled'" },
	{ "ext4:bigalloc", "bigalloc is not supported" },
	{ "ext4:reflink=0", "unknown ext4 option 'reflink'" },
	{ "ext4:nodelalloc=1", "unknown ext4 option 'nodelalloc'" },
	{ "ext4:bs=1024,bs=2048", "'bs' given twice" },
	{ "ext4:data=journal,data=journal", "'data' given twice" },
	{ "ext4:bs=1024,", "empty option" },
	{ "ext4:", "empty option list" },
	{ "xfs:data=journal", "unknown xfs option 'data'" },
	{ "xfs:reflink=2", "reflink wants 0 or 1, not '2'" },
	{ "xfs:rmapbt", "rmapbt wants 0 or 1, not ''" },
	{ "fusefs:btrfs:bs=1024", "unknown fusefs profile 'btrfs'" },
	{ "fusefs:nodelalloc", "unknown fusefs option 'nodelalloc'" },
	{ "fusefs:auto_inval_data=2", "auto_inval_data wants 0 or 1, not '2'" },
	{ "fusefs:auto_inval_data=1,auto_inval_data=1", "'auto_inval_data' given twice" },
	{ "ext4:auto_inval_data=1", "unknown ext4 option 'auto_inval_data'" },
	{ "ext4:free=0", "bad free space '0'" },
	{ "ext4:free=4q", "bad free space '4q'" },
	{ "xfs:free=-4k", "bad free space '-4k'" },
	{ "xfs:free", "bad free space ''" },
	{ "ext4:free=2000g", "bad free space '2000g'" },
	{ "ext4:free=1m,free=2m", "'free' given twice" },
};

static void test_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct dt_config c;
		char err[512] = "";
		assert_int_equal(dt_config_parse(bads[i].spec, &c, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bads[i].msg))
			fail_msg("%s: '%s' lacks '%s'", bads[i].spec, err, bads[i].msg);
		/* the spec is named in the message */
		assert_non_null(strstr(err, bads[i].spec));
		/* and the target parser refuses it before touching anything */
		char err2[1024] = "";
		assert_int_equal(dt_target_spec_check(bads[i].spec, err2, sizeof(err2)), -EINVAL);
		assert_non_null(strstr(err2, bads[i].msg));
	}
	/* not a guest file system: not a configuration, not an error */
	struct dt_config c;
	char err[64] = "";
	assert_int_equal(dt_config_parse("dir:/tmp", &c, err, sizeof(err)), 1);
	assert_int_equal(dt_config_parse("model:xfs", &c, err, sizeof(err)), 1);
	assert_int_equal(dt_config_parse("ext", &c, err, sizeof(err)), 1);
	assert_string_equal(err, "");
}

static void test_check_mount(void **state)
{
	(void)state;
	struct dt_config c;
	char err[512];

	assert_int_equal(dt_config_parse("ext4:bs=1024,data=journal", &c, err, sizeof(err)), 0);
	assert_int_equal(dt_config_check_mount(&c, 1024, "rw,relatime,nodelalloc,data=journal",
					       err, sizeof(err)), 0);
	/* the block size of the mount differs */
	assert_int_equal(dt_config_check_mount(&c, 4096, "rw,relatime,data=journal", err,
					       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "4096-byte blocks, not 1024"));
	/* the data mode differs */
	assert_int_equal(dt_config_check_mount(&c, 1024, "rw,relatime", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "mounted with 'rw,relatime'"));
	assert_int_equal(dt_config_parse("ext4", &c, err, sizeof(err)), 0);
	assert_int_equal(dt_config_check_mount(&c, 4096, "rw,relatime", err, sizeof(err)), 0);
	assert_int_equal(dt_config_check_mount(&c, 4096, "rw,relatime,nodelalloc", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(dt_config_check_mount(&c, 4096, "rw,data=writeback", err, sizeof(err)),
			 -EINVAL);
	/* "nodelalloc" is an option, not a prefix of another one */
	assert_int_equal(dt_config_parse("ext4:nodelalloc", &c, err, sizeof(err)), 0);
	assert_int_equal(dt_config_check_mount(&c, 4096, "rw,nodelallocx", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(dt_config_check_mount(&c, 4096, "rw,nodelalloc", err, sizeof(err)), 0);
	/* XFS: the block size */
	assert_int_equal(dt_config_parse("xfs:bs=1024", &c, err, sizeof(err)), 0);
	assert_int_equal(dt_config_check_mount(&c, 1024, "rw,attr2,inode64", err, sizeof(err)), 0);
	assert_int_equal(dt_config_check_mount(&c, 4096, "rw", err, sizeof(err)), -EINVAL);
}

static void test_plan(void **state)
{
	(void)state;
	static struct dt_plan_boot b[DT_PLAN_MAX];
	int n;
	char err[256], *buf = NULL;
	size_t len = 0;
	const char *specs[] = { "ext4", "xfs", "fusefs", "ext4:bs=1024", "fusefs:bs=1024",
				"model:xfs", "ext4:bs=1024", "xfs:reflink=0" };

	assert_int_equal(dt_config_plan(specs, 8, b, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	for (int k = 0; k < n; k++)
		dt_config_plan_print(f, &b[k], specs);
	fclose(f);
	assert_string_equal(buf,
			    "-b 4096||-b size=4096|||ext4 xfs fusefs model:xfs\n"
			    "-b 1024||-b size=4096 -m reflink=0||blocksize=1024|"
			    "ext4:bs=1024 fusefs:bs=1024 ext4:bs=1024 xfs:reflink=0\n");
	free(buf);
	const char *bad[] = { "ext4", "ext4:bs=3" };
	assert_int_equal(dt_config_plan(bad, 2, b, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad block size '3'"));
}

/* The op log header and repro.sh of a configured target (a target struct
 * as dt_target_init() leaves it; nothing is mounted here). */
static void test_log_and_script(void **state)
{
	(void)state;
	struct dt_target t;
	char err[256], *buf = NULL;
	size_t len = 0;
	struct dt_op ops[2] = {
		{ .kind = DT_PWRITE, .file = 0, .pat = 1, .off = 0, .len = 1024 },
		{ .kind = DT_INSERT, .file = 0, .off = 0, .len = 1024 },
	};

	memset(&t, 0, sizeof(t));
	snprintf(t.name, sizeof(t.name), "ext4:data=journal,bs=1024");
	snprintf(t.fsname, sizeof(t.fsname), "ext4");
	snprintf(t.dir, sizeof(t.dir), "/mnt/ext4");
	assert_int_equal(dt_config_parse(t.name, &t.cfg, err, sizeof(err)), 0);
	t.has_cfg = 1;
	t.mopts.profile = RM_PROFILE_EXT4;
	t.mopts.blocksize = 1024;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(dt_log_write(f, &t, 1, ops, 2, 7), 0);
	fclose(f);
	assert_non_null(strstr(buf, "# target: ext4:data=journal,bs=1024\n"));
	assert_non_null(strstr(buf, "# config: ext4:bs=1024,data=journal (mkfs.ext4 -b 1024; "
				    "mount -o data=journal)\n"));
	free(buf);
	struct dt_div d = { .kind = DV_RET, .file = 0, .opno = 1, .byte_off = -1 };
	d.op = ops[1];
	snprintf(d.msg, sizeof(d.msg), "test");
	buf = NULL;
	f = open_memstream(&buf, &len);
	dt_write_script(f, &t, 1, ops, 2, &d);
	fclose(f);
	assert_non_null(strstr(buf, "# needs configuration ext4:bs=1024,data=journal: "
				    "mkfs.ext4 -b 1024 DEV; mount -t ext4 -o data=journal DEV DIR\n"));
	assert_non_null(strstr(buf, "mkfs.ext4 -F -q -b 1024 \"$REPRO_DEV\" && mount -t ext4 "
				    "-o data=journal \"$REPRO_DEV\" \"$DIR\""));
	assert_non_null(strstr(buf, "!= 1024 ]"));
	assert_null(strstr(buf, "FILLER"));
	free(buf);

	/* free=: the reproducer makes the filler, and removes it at exit */
	snprintf(t.name, sizeof(t.name), "ext4:free=1m");
	assert_int_equal(dt_config_parse(t.name, &t.cfg, err, sizeof(err)), 0);
	t.mopts.blocksize = 4096;
	buf = NULL;
	f = open_memstream(&buf, &len);
	dt_write_script(f, &t, 1, ops, 2, &d);
	fclose(f);
	assert_non_null(strstr(buf, "trap 'rm -f \"$FILLER\"' EXIT\n"));
	assert_non_null(strstr(buf, "-c \"falloc $at $chunk\" \"$FILLER\""));
	assert_non_null(strstr(buf, "truncate $((at > 1048576 ? at - 1048576 : 0))"));
	free(buf);

	/* the shrinker's fill op: sync, then the filler takes the rest, as
	 * root (FILL_IO is set before a --user caller's XFS_IO) */
	struct dt_op filled[4] = { { .kind = DT_UNFILL }, ops[0], { .kind = DT_FILL }, ops[1] };
	d.opno = 3;
	t.user = 1;
	t.user_uid = 1000;
	t.user_gid = 1000;
	buf = NULL;
	f = open_memstream(&buf, &len);
	dt_write_script(f, &t, 1, filled, 4, &d);
	fclose(f);
	assert_non_null(strstr(buf, "\nfill_up() {\n"));
	char *fio = strstr(buf, "FILL_IO=$XFS_IO\n"), *uio = strstr(buf, "XFS_IO=\"$AS_USER");
	assert_true(fio && uio && fio < uio);
	char *un = strstr(buf, "\n$FILL_IO -c \"truncate 0\" \"$FILLER\"; sync\n"),
	     *w = strstr(buf, "-c \"pwrite"), *fl = strstr(buf, "\nsync; fill_up\n"),
	     *ins = strstr(buf, "finsert");
	assert_true(un && w && fl && ins && un < w && w < fl && fl < ins);
	free(buf);
}

/* repro.sh issues the reads the diverging replay's data checks made
 * (struct dt_obs), after their op, on their file, one pread each, and
 * none after the diverging op (the verdict's own read decides). */
static void test_script_reads(void **state)
{
	(void)state;
	struct dt_target t;
	char *buf = NULL;
	size_t len = 0;
	struct dt_op ops[3] = {
		{ .kind = DT_PWRITE, .file = 0, .pat = 1, .off = 0, .len = 4096 },
		{ .kind = DT_PWRITE, .file = 1, .pat = 2, .off = 0, .len = 1024 },
		{ .kind = DT_INSERT, .file = 0, .off = 1024, .len = 1024 },
	};
	struct dt_obs obs[] = {
		{ .opno = 0, .file = 0, .off = 0, .len = 4096 },
		{ .opno = 0, .file = 1, .off = 8192, .len = 512 },
		{ .opno = 1, .file = 1, .off = 0, .len = 1024 },
		{ .opno = 2, .file = 0, .off = 0, .len = 777 },
	};

	memset(&t, 0, sizeof(t));
	snprintf(t.name, sizeof(t.name), "ext4");
	snprintf(t.fsname, sizeof(t.fsname), "ext4");
	snprintf(t.dir, sizeof(t.dir), "/mnt/ext4");
	t.mopts.profile = RM_PROFILE_EXT4;
	t.mopts.blocksize = 4096;
	struct dt_div d = { .kind = DV_DATA, .file = 0, .opno = 2, .byte_off = 2048,
			    .exp_byte = 1, .act_byte = 0, .obs = obs, .nobs = 4 };
	d.op = ops[2];
	snprintf(d.msg, sizeof(d.msg), "data");
	FILE *f = open_memstream(&buf, &len);
	dt_write_script(f, &t, 2, ops, 3, &d);
	fclose(f);
	const char *a = strstr(buf, "$XFS_IO -c \"pwrite -q -S 0x01 0 4096\" "
				    "-c \"pread -q -b 4096 0 4096\" \"$F0\"\n");
	const char *b = strstr(buf, "$XFS_IO -c \"pread -q -b 512 8192 512\" "
				    "-c \"pwrite -q -S 0x02 0 1024\" -c \"pread -q -b 1024 0 1024\" \"$F1\"\n");
	const char *c = strstr(buf, "--- the op that diverges:");
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_true(a < b && b < c);
	assert_null(strstr(buf, " 777"));
	free(buf);
	/* without recorded reads (an unshrunk window, a crash): the ops only */
	d.obs = NULL;
	d.nobs = 0;
	buf = NULL;
	f = open_memstream(&buf, &len);
	dt_write_script(f, &t, 2, ops, 3, &d);
	fclose(f);
	assert_null(strstr(buf, "pread"));
	free(buf);
}

static void test_fstest(void **state)
{
	(void)state;
	struct dt_op ops[1] = { { .kind = DT_PWRITE, .file = 0, .pat = 1, .off = 0, .len = 1024 } };
	struct dt_fstest_in in = { .source = "ops.log", .target = "xfs:bs=1024,reflink=0",
				   .profile = RM_PROFILE_XFS, .blocksize = 1024, .nfiles = 1,
				   .ops = ops, .n = 1 };
	char err[256], *tb = NULL, *ob = NULL;
	size_t tl = 0, ol = 0;
	const char *sub;

	assert_int_equal(dt_fstest_subdir(in.target, &sub), 0);
	assert_string_equal(sub, "xfs");
	assert_int_equal(dt_fstest_subdir("fusefs:xfs:bs=1024", &sub), 0);
	assert_string_equal(sub, "generic");
	assert_int_equal(dt_fstest_subdir("dir:/tmp", &sub), -EINVAL);
	FILE *t = open_memstream(&tb, &tl), *o = open_memstream(&ob, &ol);
	assert_int_equal(dt_fstest_write(t, o, &in, 900, err, sizeof(err)), 0);
	fclose(t);
	fclose(o);
	assert_non_null(strstr(tb, "MKFS_OPTIONS=\"$MKFS_OPTIONS -m reflink=0,rmapbt=0\" "
				   "_scratch_mkfs_blocksized 1024"));
	free(tb);
	free(ob);
	in.target = "ext4:data=journal";
	in.profile = RM_PROFILE_EXT4;
	in.blocksize = 4096;
	tb = ob = NULL;
	t = open_memstream(&tb, &tl);
	o = open_memstream(&ob, &ol);
	assert_int_equal(dt_fstest_write(t, o, &in, 900, err, sizeof(err)), 0);
	fclose(t);
	fclose(o);
	assert_non_null(strstr(tb, "MOUNT_OPTIONS=\"$MOUNT_OPTIONS -o data=journal\"\n_scratch_mount\n"));
	free(tb);
	free(ob);
}

/* The state of the block at off (rm_walk's run there). */
struct at { unsigned st; };
static int at_cb(void *ctx, const struct rm_run *r)
{
	((struct at *)ctx)->st = r->state;
	return 1;
}

static unsigned state_at(const struct rm_file *m, int64_t off, int64_t bs)
{
	struct at a = { 0 };
	rm_walk(m, off, off + bs, at_cb, &a);
	return a.st;
}

/* An mmap write with 1 KiB blocks allocates the rest of its page up to EOF
 * (zeros: rm_mwrite(), W10), and nothing beyond; with 4 KiB blocks only
 * the blocks written. */
static void test_mwrite_pages(void **state)
{
	(void)state;
	for (uint32_t bs = 1024; bs <= 4096; bs *= 4) {
		struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = bs };
		struct rm_file *m[1];
		unsigned char buf[16384];
		struct dt_op op = { .kind = DT_MWRITE, .file = 0, .pat = 7, .off = 5000, .len = 10 };
		int64_t lo, hi;
		assert_int_equal(rm_file_new(&o, &m[0]), 0);
		assert_int_equal(rm_truncate(m[0], 10240), 0);	/* EOF inside the third page */
		dt_fill_pattern(buf, 10, 7);
		assert_int_equal(dt_mmap_write(m[0], buf, 10, 5000, &lo, &hi), 10);
		assert_int_equal(lo, bs == 1024 ? 4096 : 5000);
		assert_int_equal(hi, bs == 1024 ? 8192 : 5010);
		op.off = 9000;					/* the page EOF cuts */
		assert_int_equal(dt_model_mwrite(m, 1, &op, buf), 10);
		for (int64_t b = 0; b < 12288 / (int64_t)bs; b++) {
			int64_t at = b * (int64_t)bs;
			int data = bs == 1024 ? (at >= 4096 && at < 10240) : (at == 4096 || at == 8192);
			unsigned st = state_at(m[0], at, bs);
			if ((st == RM_DATA) != data)
				fail_msg("bs %u block %lld: state %u", bs, (long long)b, st);
		}
		/* the bytes around the writes are zeros, the writes are there */
		assert_int_equal(rm_pread(m[0], buf, 10240, 0), 10240);
		assert_int_equal(buf[4999], 0);
		assert_int_equal(buf[5000], 7);
		assert_int_equal(buf[9010], 0);
		rm_file_free(m[0]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_check_mount),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_log_and_script),
		cmocka_unit_test(test_script_reads),
		cmocka_unit_test(test_fstest),
		cmocka_unit_test(test_mwrite_pages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
