/* SPDX-License-Identifier: MIT */
/*
 * rm_cred.h - credentials in the model: a file's mode, owner and group, the
 * caller's fsuid, fsgid, supplementary groups and capabilities, and what
 * Linux 6.1 does with them on the data paths the model covers:
 *
 *   - which set-user-ID / set-group-ID bits a modification by the caller
 *     removes (file_remove_privs(), file_modified(), do_truncate(): all
 *     through dentry_needs_remove_privs() -> setattr_should_drop_suidgid());
 *   - whether an operation got as far as that call (rm_cred_modifies():
 *     ext4, XFS and FUSE call file_modified() at different points of
 *     fallocate, so a refused op may or may not have removed the bits);
 *   - fchmod() by the caller (setattr_prepare(): -EPERM for a non-owner
 *     without CAP_FOWNER, S_ISGID dropped outside the file's group);
 *   - open(2)'s permission check (generic_permission(): -EACCES).
 *
 * The rules are listed as P1..P8 in RULES.md with the kernel functions
 * they come from.  Everything here is a pure function of its arguments.
 */
#ifndef RANGESHIFT_RM_CRED_H
#define RANGESHIFT_RM_CRED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RM_S_ISUID	04000u
#define RM_S_ISGID	02000u
#define RM_S_IXGRP	00010u

/* Who decides what a modification removes: the file system's data paths
 * (ext4, XFS) or FUSE's fuse_setattr(), which recomputes the bits from
 * the mode and keeps S_ISGID without group execute (P2). */
enum rm_cred_fs { RM_CRED_EXT4, RM_CRED_XFS, RM_CRED_FUSE };

struct rm_cred {
	uint32_t uid, gid;		/* fsuid, fsgid */
	const uint32_t *groups;		/* supplementary groups */
	size_t ngroups;
	int cap_fsetid;			/* CAP_FSETID effective */
	int cap_fowner;			/* CAP_FOWNER effective */
	int cap_dac_override;		/* CAP_DAC_OVERRIDE effective */
};

/* Root as the kernel sees it: fsuid 0 keeps the file system capabilities. */
void rm_cred_root(struct rm_cred *c);
/* An unprivileged caller: setfsuid(uid)/setfsgid(gid) from root drops
 * CAP_FS_MASK (cap_task_fix_setuid()), no supplementary groups. */
void rm_cred_user(struct rm_cred *c, uint32_t uid, uint32_t gid);

struct rm_attr {
	uint32_t mode;			/* permission bits, 07777 */
	uint32_t uid, gid;
};

/* in_group_p(): the fsgid or a supplementary group. */
int rm_cred_in_group(const struct rm_cred *c, uint32_t gid);

/* The bits (RM_S_ISUID | RM_S_ISGID) a modification of a regular file
 * with attributes a by caller c removes (P1, P2). */
uint32_t rm_cred_kill_bits(enum rm_cred_fs fs, const struct rm_cred *c,
			   const struct rm_attr *a);

/* fchmod(fd, mode) by c (P6): 0 with a->mode set (S_ISGID cleared when c
 * is outside the file's group and lacks CAP_FSETID), or -EPERM with a
 * unchanged.  Bits outside 07777 in mode are ignored (chmod_common()). */
int rm_cred_chmod(const struct rm_cred *c, struct rm_attr *a, uint32_t mode);

/* open(2) of a regular file by c for mask (4 read, 2 write; P7): 0 or
 * -EACCES. */
int rm_cred_permission(const struct rm_cred *c, const struct rm_attr *a, int mask);

/* One data operation and what the model answered for it. */
enum rm_cred_op {
	RM_CRED_OP_PWRITE,	/* pwrite(2): len bytes at off */
	RM_CRED_OP_MWRITE,	/* a store through a shared writable mapping */
	RM_CRED_OP_TRUNCATE,	/* ftruncate(2) to off */
	RM_CRED_OP_FALLOCATE,	/* fallocate(2) mode, off, len */
	RM_CRED_OP_CLONE,	/* FICLONERANGE into the file: len is the
				 * effective length (0: nothing to clone) */
};
struct rm_cred_call {
	enum rm_cred_op op;
	int mode;		/* fallocate mode */
	int64_t off, len;
	int64_t old_size;	/* i_size before the call */
	int64_t new_size;	/* i_size after it (the model's) */
	int64_t ret;		/* the model's answer: >= 0 or -errno */
	int64_t maxbytes;	/* s_maxbytes of the file system (for FUSE: the
				 * server's; the VFS layer's is MAX_LFS_FILESIZE) */
};

/* Whether the call reached file_modified()/file_remove_privs()/the
 * ATTR_KILL_* of do_truncate() on file system fs (P3, P4, P5): 1 or 0. */
int rm_cred_modifies(enum rm_cred_fs fs, const struct rm_cred_call *k);

/* The mode after the call: a->mode without the bits P1/P2 remove when the
 * call modified the file. */
uint32_t rm_cred_mode_after(enum rm_cred_fs fs, const struct rm_cred *c,
			    const struct rm_attr *a, const struct rm_cred_call *k);

#ifdef __cplusplus
}
#endif
#endif /* RANGESHIFT_RM_CRED_H */
