/* SPDX-License-Identifier: MIT */
/*
 * cred.c - credentials in the model (rm_cred.h): what Linux 6.1 does to a
 * regular file's set-user-ID and set-group-ID bits when a caller without
 * CAP_FSETID modifies it, when each data operation gets that far on ext4,
 * XFS and FUSE, fchmod() and open()'s permission check.  Rules P1..P8 of
 * RULES.md; each function cites the kernel code it follows.
 */
#include <errno.h>
#include <stdint.h>

#include "refmodel.h"
#include "rm_cred.h"

void rm_cred_root(struct rm_cred *c)
{
	*c = (struct rm_cred){ .uid = 0, .gid = 0, .cap_fsetid = 1, .cap_fowner = 1,
			       .cap_dac_override = 1 };
}

/* cap_task_fix_setuid(LSM_SETID_FS): an fsuid that leaves 0 drops
 * CAP_FS_MASK (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH,
 * CAP_FOWNER, CAP_FSETID, ...) from the effective set. */
void rm_cred_user(struct rm_cred *c, uint32_t uid, uint32_t gid)
{
	*c = (struct rm_cred){ .uid = uid, .gid = gid };
	if (uid == 0)
		c->cap_fsetid = c->cap_fowner = c->cap_dac_override = 1;
}

/* in_group_p(): groups_search() over the supplementary groups */
int rm_cred_in_group(const struct rm_cred *c, uint32_t gid)
{
	if (c->gid == gid)
		return 1;
	for (size_t k = 0; k < c->ngroups; k++)
		if (c->groups[k] == gid)
			return 1;
	return 0;
}

/* P1: setattr_should_drop_suidgid() (fs/attr.c), reached through
 * dentry_needs_remove_privs(): S_ISUID always; S_ISGID with group execute,
 * or, without it, when the caller is outside the file's group
 * (setattr_should_drop_sgid(), in_group_or_capable()); nothing at all with
 * CAP_FSETID.
 * P2: FUSE (fuse_setattr(), no handle_killpriv): ATTR_KILL_SUID/SGID are
 * replaced by a mode recomputed from the fresh i_mode: S_ISUID if set,
 * S_ISGID only together with S_IXGRP.  So on FUSE a set-group-ID file
 * without group execute keeps the bit even for a caller outside its group. */
uint32_t rm_cred_kill_bits(enum rm_cred_fs fs, const struct rm_cred *c,
			   const struct rm_attr *a)
{
	uint32_t kill = 0;

	if (a->mode & RM_S_ISUID)
		kill |= RM_S_ISUID;
	if (a->mode & RM_S_ISGID) {
		if (a->mode & RM_S_IXGRP)
			kill |= RM_S_ISGID;
		else if (!rm_cred_in_group(c, a->gid) && !c->cap_fsetid)
			kill |= RM_S_ISGID;
	}
	if (!kill || c->cap_fsetid)
		return 0;
	if (fs == RM_CRED_FUSE) {
		uint32_t k = a->mode & RM_S_ISUID;

		if ((a->mode & (RM_S_ISGID | RM_S_IXGRP)) == (RM_S_ISGID | RM_S_IXGRP))
			k |= RM_S_ISGID;
		return k;
	}
	return kill;
}

/* P6: chmod_common() -> notify_change() -> setattr_prepare(): the owner
 * (fsuid) or CAP_FOWNER, else -EPERM; S_ISGID dropped unless
 * in_group_or_capable() (the file's group, or CAP_FSETID).  FUSE with
 * default_permissions runs the same setattr_prepare() in fuse_do_setattr(). */
int rm_cred_chmod(const struct rm_cred *c, struct rm_attr *a, uint32_t mode)
{
	if (c->uid != a->uid && !c->cap_fowner)
		return -EPERM;
	mode &= 07777;
	if (!rm_cred_in_group(c, a->gid) && !c->cap_fsetid)
		mode &= ~RM_S_ISGID;
	a->mode = mode;
	return 0;
}

/* P7: acl_permission_check() (no ACLs: the test files have none) and
 * generic_permission()'s CAP_DAC_OVERRIDE for a regular file opened for
 * reading or writing.  The owner class is chosen by fsuid alone, so an
 * owner without the owner bits is refused even when the group or others
 * have them. */
int rm_cred_permission(const struct rm_cred *c, const struct rm_attr *a, int mask)
{
	uint32_t mode = a->mode;

	mask &= 7;
	if (c->uid == a->uid)
		mode >>= 6;
	else if (rm_cred_in_group(c, a->gid))
		mode >>= 3;
	if (!(mask & ~mode & 7))
		return 0;
	if (c->cap_dac_override && !(mask & 1))
		return 0;
	return -EACCES;
}

static int is_punch(int mode)
{
	return (mode & RM_FALLOC_FL_PUNCH_HOLE) != 0;
}

/* P5: fallocate.  vfs_fallocate()'s own checks come first everywhere;
 * then
 *  - ext4: ext4_fallocate() refuses modes it lacks (UNSHARE) with
 *    -EOPNOTSUPP; each mode calls file_modified() after its own checks
 *    (ext4_collapse_range(), ext4_insert_range(), ext4_zero_range(),
 *    ext4_punch_hole(), ext4_fallocate()), so a refused call removed
 *    nothing, except one that failed after changing the file (the insert
 *    past EXT_MAX_BLOCKS grows i_size first, D-DT5); a punch that starts
 *    at or past EOF returns 0 before file_modified();
 *  - XFS: xfs_file_fallocate() calls file_modified() before any
 *    mode-specific check, so a misaligned insert or collapse, a collapse
 *    reaching EOF and an insert past s_maxbytes (-EINVAL, -EFBIG) have
 *    already removed the bits;
 *  - FUSE (with the project's shift forwarding): fuse_file_fallocate()
 *    refuses unforwarded modes, checks the grown size of an insert against
 *    its own s_maxbytes (MAX_LFS_FILESIZE) and a non-KEEP_SIZE extension
 *    with inode_newsize_ok(), then calls file_modified() before the
 *    server answers. */
static int falloc_modifies(enum rm_cred_fs fs, const struct rm_cred_call *k)
{
	const int ext4_modes = RM_FALLOC_FL_KEEP_SIZE | RM_FALLOC_FL_PUNCH_HOLE |
			       RM_FALLOC_FL_COLLAPSE_RANGE | RM_FALLOC_FL_ZERO_RANGE |
			       RM_FALLOC_FL_INSERT_RANGE;
	int64_t vfsmax = fs == RM_CRED_FUSE ? INT64_MAX : k->maxbytes;

	if (rm_vfs_fallocate_check(k->mode, k->off, k->len, vfsmax))
		return 0;
	switch (fs) {
	case RM_CRED_EXT4:
		if (k->mode & ~ext4_modes)
			return 0;
		if (k->ret < 0)
			return k->new_size != k->old_size;
		return !(is_punch(k->mode) && k->off >= k->old_size);
	case RM_CRED_XFS:
		return 1;
	case RM_CRED_FUSE:
		if (k->mode & ~ext4_modes)
			return 0;
		if ((k->mode & RM_FALLOC_FL_INSERT_RANGE) && k->len > INT64_MAX - k->old_size)
			return 0;
		return 1;
	}
	return 0;
}

/* P3: writes.  generic_write_checks() first (-EFBIG at s_maxbytes, a
 * count clipped to it; 0 bytes: nothing), then file_modified()
 * (ext4_buffered_write_iter() via ext4_write_checks(),
 * xfs_file_write_checks(), fuse_cache_write_iter() -> file_remove_privs()).
 * A store through a mapping only updates the times (ext4_page_mkwrite(),
 * xfs_filemap_page_mkwrite(), fuse_page_mkwrite(): file_update_time()).
 * P4: ftruncate(): do_truncate() asks for ATTR_KILL_* with the new size in
 * one notify_change(); setattr_prepare() refuses a size over s_maxbytes
 * (-EFBIG) before anything changes, so a successful truncate removes the
 * bits, to the same size too.
 * P8: FICLONERANGE: __generic_remap_file_range_prep() calls file_modified()
 * on the destination last, after every check, and returns 0 early when the
 * effective length is 0. */
int rm_cred_modifies(enum rm_cred_fs fs, const struct rm_cred_call *k)
{
	switch (k->op) {
	case RM_CRED_OP_PWRITE:
		return k->ret > 0;
	case RM_CRED_OP_MWRITE:
		return 0;
	case RM_CRED_OP_TRUNCATE:
		return k->ret == 0;
	case RM_CRED_OP_FALLOCATE:
		return falloc_modifies(fs, k);
	case RM_CRED_OP_CLONE:
		return k->ret == 0 && k->len > 0;
	}
	return 0;
}

uint32_t rm_cred_mode_after(enum rm_cred_fs fs, const struct rm_cred *c,
			    const struct rm_attr *a, const struct rm_cred_call *k)
{
	if (!rm_cred_modifies(fs, k))
		return a->mode;
	return a->mode & ~rm_cred_kill_bits(fs, c, a);
}
