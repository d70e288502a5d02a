/* SPDX-License-Identifier: MIT */
/*
 * rangeshift_fusefs.h - ioctl ABI of rangeshift-fusefs, the FUSE file system
 * whose regular files are refmodel files.
 *
 * Why ioctls: a stock kernel's FUSE module rejects FALLOC_FL_INSERT_RANGE,
 * FALLOC_FL_COLLAPSE_RANGE (and UNSHARE_RANGE) with EOPNOTSUPP before the
 * server sees them (fuse_file_fallocate()), and has no ->fiemap, so
 * FS_IOC_FIEMAP fails in the VFS (ioctl_fiemap()).  FUSE does forward
 * ioctls on regular files, but only "restricted" ones: the kernel copies
 * exactly _IOC_SIZE(cmd) bytes in (_IOC_WRITE) and out (_IOC_READ)
 * (fuse_do_ioctl()), so every argument here is a fixed-size struct (at most
 * 16383 bytes, the _IOC_SIZE limit) with explicit widths and no pointers.
 *
 * All ioctls return 0 or -1 with errno, exactly the errno refmodel returns
 * (the same as ext4/XFS give for fallocate(2)).  They require a file
 * descriptor of a regular file on a rangeshift-fusefs mount; shifting and
 * allocating ones require it to be open for writing (EBADF otherwise, as
 * vfs_fallocate()).  Dirty pages of a shared mapping need no msync(2)
 * first: before moving data the server has the kernel write them back at
 * their old offsets, as ext4_insert_range() does.  After any call that
 * changes the file the server has already invalidated the kernel's page
 * cache and cached attributes of the file (fuse_lowlevel_notify_inval_inode)
 * and, if the file grew, given the kernel its new size, when the ioctl
 * returns, so a following read(2), stat(2) or access through an mmap (up to
 * the new EOF, without a stat(2) first) sees the new state.  A smaller size
 * (collapse) reaches the kernel's i_size at the next stat(2)/fstat(2)
 * (the preload library does one after each call); until then a mapping
 * past the new EOF reads zeros instead of faulting.
 *
 * Code 0xB8 is unassigned in Documentation/userspace-api/ioctl/ioctl-number.rst
 * (6.1).  Because another FUSE file system could still give these numbers
 * another meaning, a client must check RS_IOC_IDENT (magic and version)
 * before using the others; librangeshift-preload.so does.
 */
#ifndef RANGESHIFT_FUSEFS_H
#define RANGESHIFT_FUSEFS_H

#include <stdint.h>
#include <linux/ioctl.h>

#define RS_IOC_CODE		0xB8
#define RS_IDENT_MAGIC		0x52534654u	/* "RSFT" */
#define RS_IDENT_VERSION	1u
/* statfs(2) f_type of any FUSE mount (FUSE_SUPER_MAGIC, <linux/magic.h>). */
#define RS_FUSE_SUPER_MAGIC	0x65735546

/* RS_IOC_IDENT: "is this file served by rangeshift-fusefs, and how". */
struct rs_ioc_ident {
	uint32_t magic;		/* out: RS_IDENT_MAGIC */
	uint32_t version;	/* out: RS_IDENT_VERSION */
	uint32_t profile;	/* out: enum rm_profile (0 ext4, 1 xfs, 2 bytes) */
	uint32_t blocksize;	/* out: model block size in bytes */
	int64_t maxbytes;	/* out: largest file size (s_maxbytes) */
};

/* RS_IOC_INSERT, RS_IOC_COLLAPSE, RS_IOC_FALLOCATE. */
struct rs_ioc_range {
	int64_t offset;		/* in: as fallocate(2)'s offset */
	int64_t length;		/* in: as fallocate(2)'s len */
	int32_t mode;		/* in: RS_IOC_FALLOCATE: any fallocate mode;
				 * RS_IOC_INSERT/COLLAPSE: must be 0 */
	uint32_t reserved;	/* in: must be 0 (EINVAL otherwise) */
};

/* RS_IOC_FIEMAP: one page of the extent map of [start, start + length).
 * Extents are those of FS_IOC_FIEMAP (allocated extents only, the flags
 * below), without a physical address.  To page through a map, call again
 * with start = logical + length of the last extent returned until an
 * extent has RS_FIEMAP_LAST, or count < RS_FIEMAP_MAX. */
#define RS_FIEMAP_MAX		200
#define RS_FIEMAP_LAST		0x0001u	/* = FIEMAP_EXTENT_LAST */
#define RS_FIEMAP_UNWRITTEN	0x0800u	/* = FIEMAP_EXTENT_UNWRITTEN */
struct rs_fiemap_extent {
	int64_t logical;	/* bytes */
	int64_t length;		/* bytes */
	uint32_t flags;		/* RS_FIEMAP_* */
	uint32_t reserved;
};
struct rs_ioc_fiemap {
	int64_t start;		/* in: first byte of the range, >= 0 */
	int64_t length;		/* in: > 0; clipped to maxbytes as fiemap_prep() */
	uint32_t flags;		/* in: must be 0 */
	uint32_t count;		/* out: extents filled in ext[] */
	int64_t mapped;		/* out: extents in the whole range (may exceed count) */
	struct rs_fiemap_extent ext[RS_FIEMAP_MAX];
};

#define RS_IOC_IDENT	_IOR(RS_IOC_CODE, 0x01, struct rs_ioc_ident)
#define RS_IOC_INSERT	_IOW(RS_IOC_CODE, 0x02, struct rs_ioc_range)
#define RS_IOC_COLLAPSE	_IOW(RS_IOC_CODE, 0x03, struct rs_ioc_range)
#define RS_IOC_FALLOCATE _IOW(RS_IOC_CODE, 0x04, struct rs_ioc_range)
#define RS_IOC_FIEMAP	_IOWR(RS_IOC_CODE, 0x05, struct rs_ioc_fiemap)

/* Read-only virtual extended attribute: the file's block map as text, one
 * run per line ("OFFSET LENGTH STATE [may=STATE,...]" in bytes, after a
 * header line).  In the user. namespace so that unprivileged tools
 * (getfattr -n user.rangeshift.map FILE) can read it; never listed by
 * listxattr (so copies do not carry it), and setting or removing it fails
 * with EPERM, so it cannot clash with a stored attribute. */
#define RS_XATTR_MAP	"user.rangeshift.map"

#endif /* RANGESHIFT_FUSEFS_H */
