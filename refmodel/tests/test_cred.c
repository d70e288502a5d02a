/* SPDX-License-Identifier: MIT */
/*
 * test_cred.c - cmocka tests of the credential rules (src/cred.c, RULES.md
 * P1..P8): which set-ID bits a modification by an unprivileged caller
 * removes on ext4, XFS and FUSE, which calls get as far as removing them
 * (driven by the model's own answers where the model is involved), fchmod()
 * and open()'s permission check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "refmodel.h"
#include "rm_cred.h"

#define K 4096
#define U 1000u
#define G 1000u

static const enum rm_cred_fs all_fs[] = { RM_CRED_EXT4, RM_CRED_XFS, RM_CRED_FUSE };

/* P1: S_ISUID always goes for a caller without CAP_FSETID, owner or not. */
static void test_kill_suid_always(void **st)
{
	(void)st;
	struct rm_cred c;
	struct rm_attr own = { 04666, U, G }, other = { 04666, 0, 0 };

	rm_cred_user(&c, U, G);
	for (size_t k = 0; k < 3; k++) {
		assert_int_equal(rm_cred_kill_bits(all_fs[k], &c, &own), RM_S_ISUID);
		assert_int_equal(rm_cred_kill_bits(all_fs[k], &c, &other), RM_S_ISUID);
	}
}

/* P1: root (CAP_FSETID) removes nothing. */
static void test_kill_nothing_with_fsetid(void **st)
{
	(void)st;
	struct rm_cred c;
	struct rm_attr a = { 06676, 5, 5 };

	rm_cred_root(&c);
	for (size_t k = 0; k < 3; k++)
		assert_int_equal(rm_cred_kill_bits(all_fs[k], &c, &a), 0);
}

/* P1: S_ISGID with group execute goes everywhere. */
static void test_kill_sgid_with_group_exec(void **st)
{
	(void)st;
	struct rm_cred c;
	struct rm_attr a = { 02676, 0, G };

	rm_cred_user(&c, U, G);
	for (size_t k = 0; k < 3; k++)
		assert_int_equal(rm_cred_kill_bits(all_fs[k], &c, &a), RM_S_ISGID);
}

/* P1/P2: S_ISGID without group execute: kept inside the file's group;
 * outside it ext4/XFS remove it (setattr_should_drop_sgid()), FUSE keeps it
 * (fuse_setattr() recomputes from the mode). */
static void test_kill_sgid_outside_group(void **st)
{
	(void)st;
	struct rm_cred c;
	struct rm_attr in = { 02666, 0, G }, out = { 02666, 0, 7 };
	uint32_t grp[] = { 7 };

	rm_cred_user(&c, U, G);
	assert_int_equal(rm_cred_kill_bits(RM_CRED_EXT4, &c, &in), 0);
	assert_int_equal(rm_cred_kill_bits(RM_CRED_EXT4, &c, &out), RM_S_ISGID);
	assert_int_equal(rm_cred_kill_bits(RM_CRED_XFS, &c, &out), RM_S_ISGID);
	assert_int_equal(rm_cred_kill_bits(RM_CRED_FUSE, &c, &out), 0);
	/* a supplementary group counts as the file's group */
	c.groups = grp;
	c.ngroups = 1;
	assert_int_equal(rm_cred_kill_bits(RM_CRED_EXT4, &c, &out), 0);
}

/* P6: fchmod by a non-owner is -EPERM and changes nothing. */
static void test_chmod_non_owner_eperm(void **st)
{
	(void)st;
	struct rm_cred c;
	struct rm_attr a = { 06666, 0, G };

	rm_cred_user(&c, U, G);
	assert_int_equal(rm_cred_chmod(&c, &a, 0600), -EPERM);
	assert_int_equal(a.mode, 06666);
	rm_cred_root(&c);
	assert_int_equal(rm_cred_chmod(&c, &a, 0600), 0);
	assert_int_equal(a.mode, 0600);
}

/* P6: the owner may set S_ISGID only inside the file's group. */
static void test_chmod_owner_sgid_needs_group(void **st)
{
	(void)st;
	struct rm_cred c;
	struct rm_attr in = { 0644, U, G }, out = { 0644, U, 0 };

	rm_cred_user(&c, U, G);
	assert_int_equal(rm_cred_chmod(&c, &in, 0106777), 0);
	assert_int_equal(in.mode, 06777);
	assert_int_equal(rm_cred_chmod(&c, &out, 06777), 0);
	assert_int_equal(out.mode, 04777);
}

/* P7: the class is chosen by fsuid, then group; CAP_DAC_OVERRIDE for root. */
static void test_permission_classes(void **st)
{
	(void)st;
	struct rm_cred c;
	struct rm_attr own = { 0066, U, G }, grp = { 0460, 0, G }, oth = { 0606, 0, 0 };

	rm_cred_user(&c, U, G);
	/* the owner without owner bits is refused although others have them */
	assert_int_equal(rm_cred_permission(&c, &own, 6), -EACCES);
	assert_int_equal(rm_cred_permission(&c, &grp, 4), 0);
	assert_int_equal(rm_cred_permission(&c, &grp, 6), 0);
	assert_int_equal(rm_cred_permission(&c, &oth, 6), 0);
	grp.mode = 0406;	/* group class: r only, though others may write */
	assert_int_equal(rm_cred_permission(&c, &grp, 6), -EACCES);
	rm_cred_root(&c);
	own.mode = 0;
	assert_int_equal(rm_cred_permission(&c, &own, 6), 0);
}

static struct rm_file *mk(enum rm_profile p)
{
	struct rm_opts o = { .profile = p, .blocksize = K };
	struct rm_file *f = NULL;

	assert_int_equal(rm_file_new(&o, &f), 0);
	return f;
}

/* One fallocate on the model, described for rm_cred_modifies(). */
static struct rm_cred_call falloc(struct rm_file *f, int mode, int64_t off, int64_t len)
{
	struct rm_cred_call k = { .op = RM_CRED_OP_FALLOCATE, .mode = mode, .off = off,
				  .len = len, .old_size = rm_size(f), .maxbytes = rm_maxbytes(f) };

	k.ret = rm_fallocate(f, mode, off, len);
	k.new_size = rm_size(f);
	return k;
}

static void grow(struct rm_file *f, int64_t n)
{
	assert_int_equal(rm_truncate(f, n), 0);
}

/* P5: a misaligned collapse is refused by both; XFS removed the bits
 * first (file_modified() before its checks), ext4 did not. */
static void test_refused_collapse_ext4_vs_xfs(void **st)
{
	(void)st;
	struct rm_file *e = mk(RM_PROFILE_EXT4), *x = mk(RM_PROFILE_XFS);

	grow(e, 8 * K);
	grow(x, 8 * K);
	struct rm_cred_call ke = falloc(e, RM_FALLOC_FL_COLLAPSE_RANGE, 100, K);
	struct rm_cred_call kx = falloc(x, RM_FALLOC_FL_COLLAPSE_RANGE, 100, K);
	assert_int_equal(ke.ret, -EINVAL);
	assert_int_equal(kx.ret, -EINVAL);
	assert_false(rm_cred_modifies(RM_CRED_EXT4, &ke));
	assert_true(rm_cred_modifies(RM_CRED_XFS, &kx));
	/* FUSE: file_modified() before the server answers */
	assert_true(rm_cred_modifies(RM_CRED_FUSE, &ke));
	/* a collapse reaching EOF: the same split */
	ke = falloc(e, RM_FALLOC_FL_COLLAPSE_RANGE, 4 * K, 4 * K);
	kx = falloc(x, RM_FALLOC_FL_COLLAPSE_RANGE, 4 * K, 4 * K);
	assert_int_equal(ke.ret, -EINVAL);
	assert_false(rm_cred_modifies(RM_CRED_EXT4, &ke));
	assert_true(rm_cred_modifies(RM_CRED_XFS, &kx));
	/* a successful insert and collapse modify on both */
	ke = falloc(e, RM_FALLOC_FL_INSERT_RANGE, K, K);
	kx = falloc(x, RM_FALLOC_FL_INSERT_RANGE, K, K);
	assert_int_equal(ke.ret, 0);
	assert_true(rm_cred_modifies(RM_CRED_EXT4, &ke));
	assert_true(rm_cred_modifies(RM_CRED_XFS, &kx));
	rm_file_free(e);
	rm_file_free(x);
}

/* P5: vfs_fallocate()'s refusals come before every file system. */
static void test_vfs_refusals_modify_nothing(void **st)
{
	(void)st;
	struct rm_file *x = mk(RM_PROFILE_XFS);

	grow(x, 8 * K);
	struct rm_cred_call k = falloc(x, RM_FALLOC_FL_INSERT_RANGE, 0, 0);
	assert_int_equal(k.ret, -EINVAL);
	for (size_t j = 0; j < 3; j++)
		assert_false(rm_cred_modifies(all_fs[j], &k));
	k = falloc(x, RM_FALLOC_FL_INSERT_RANGE | RM_FALLOC_FL_KEEP_SIZE, 0, K);
	assert_int_equal(k.ret, -EINVAL);
	for (size_t j = 0; j < 3; j++)
		assert_false(rm_cred_modifies(all_fs[j], &k));
	rm_file_free(x);
}

/* P5: ext4 punch at or past EOF returns 0 before file_modified(); XFS
 * punches (and modifies) anyway.  UNSHARE: ext4 and FUSE refuse it. */
static void test_ext4_punch_past_eof_and_unshare(void **st)
{
	(void)st;
	struct rm_file *e = mk(RM_PROFILE_EXT4);

	grow(e, 4 * K);
	struct rm_cred_call k = falloc(e, RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE,
				       8 * K, K);
	assert_int_equal(k.ret, 0);
	assert_false(rm_cred_modifies(RM_CRED_EXT4, &k));
	assert_true(rm_cred_modifies(RM_CRED_XFS, &k));
	k = falloc(e, RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE, 0, K);
	assert_true(rm_cred_modifies(RM_CRED_EXT4, &k));
	k = falloc(e, RM_FALLOC_FL_UNSHARE_RANGE, 0, K);
	assert_int_equal(k.ret, -EOPNOTSUPP);
	assert_false(rm_cred_modifies(RM_CRED_EXT4, &k));
	assert_false(rm_cred_modifies(RM_CRED_FUSE, &k));
	assert_true(rm_cred_modifies(RM_CRED_XFS, &k));
	rm_file_free(e);
}

/* P5 with D-DT5: the ext4 insert whose shift would pass EXT_MAX_BLOCKS
 * fails after growing i_size, so after file_modified(). */
static void test_ext4_failed_insert_that_grew(void **st)
{
	(void)st;
	struct rm_file *e = mk(RM_PROFILE_EXT4);
	unsigned char b[15] = { 1 };

	/* RULES.md D-DT5's sequence */
	assert_int_equal(rm_pwrite(e, b, 15, 3459990), 15);
	assert_int_equal(rm_fallocate(e, RM_FALLOC_FL_KEEP_SIZE, 3465216, 4), 0);
	struct rm_cred_call k = falloc(e, RM_FALLOC_FL_INSERT_RANGE, 1241088,
				       17592182575104);
	assert_int_equal(k.ret, -EINVAL);
	assert_true(k.new_size != k.old_size);
	assert_true(rm_cred_modifies(RM_CRED_EXT4, &k));
	rm_file_free(e);
}

/* P3, P4, P8 */
static void test_write_truncate_mmap_clone(void **st)
{
	(void)st;
	struct rm_cred_call k = { .op = RM_CRED_OP_PWRITE, .ret = 0 };

	for (size_t j = 0; j < 3; j++) {
		k = (struct rm_cred_call){ .op = RM_CRED_OP_PWRITE, .ret = 0 };
		assert_false(rm_cred_modifies(all_fs[j], &k));	/* 0 bytes */
		k.ret = -EFBIG;
		assert_false(rm_cred_modifies(all_fs[j], &k));
		k.ret = 5;
		assert_true(rm_cred_modifies(all_fs[j], &k));
		k = (struct rm_cred_call){ .op = RM_CRED_OP_MWRITE, .ret = 4096 };
		assert_false(rm_cred_modifies(all_fs[j], &k));
		k = (struct rm_cred_call){ .op = RM_CRED_OP_TRUNCATE, .ret = 0, .off = 10,
					   .old_size = 10, .new_size = 10 };
		assert_true(rm_cred_modifies(all_fs[j], &k));	/* same size too */
		k.ret = -EFBIG;
		assert_false(rm_cred_modifies(all_fs[j], &k));
		k = (struct rm_cred_call){ .op = RM_CRED_OP_CLONE, .ret = 0, .len = 0 };
		assert_false(rm_cred_modifies(all_fs[j], &k));
		k.len = K;
		assert_true(rm_cred_modifies(all_fs[j], &k));
	}
}

static void test_mode_after(void **st)
{
	(void)st;
	struct rm_cred c;
	struct rm_attr a = { 06676, 0, G };
	struct rm_cred_call w = { .op = RM_CRED_OP_PWRITE, .ret = 1 };
	struct rm_cred_call m = { .op = RM_CRED_OP_MWRITE, .ret = 1 };

	rm_cred_user(&c, U, G);
	assert_int_equal(rm_cred_mode_after(RM_CRED_EXT4, &c, &a, &w), 0676);
	assert_int_equal(rm_cred_mode_after(RM_CRED_EXT4, &c, &a, &m), 06676);
	rm_cred_root(&c);
	assert_int_equal(rm_cred_mode_after(RM_CRED_EXT4, &c, &a, &w), 06676);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kill_suid_always),
		cmocka_unit_test(test_kill_nothing_with_fsetid),
		cmocka_unit_test(test_kill_sgid_with_group_exec),
		cmocka_unit_test(test_kill_sgid_outside_group),
		cmocka_unit_test(test_chmod_non_owner_eperm),
		cmocka_unit_test(test_chmod_owner_sgid_needs_group),
		cmocka_unit_test(test_permission_classes),
		cmocka_unit_test(test_refused_collapse_ext4_vs_xfs),
		cmocka_unit_test(test_vfs_refusals_modify_nothing),
		cmocka_unit_test(test_ext4_punch_past_eof_and_unshare),
		cmocka_unit_test(test_ext4_failed_insert_that_grew),
		cmocka_unit_test(test_write_truncate_mmap_clone),
		cmocka_unit_test(test_mode_after),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
