/* SPDX-License-Identifier: MIT */
/*
 * fs.h - in-memory namespace of rangeshift-fusefs: inodes, directories,
 * xattrs and space accounting, shared by the FUSE handlers (server.c).
 *
 * Locking (the order is top to bottom; never take an upper lock while
 * holding a lower one):
 *   1. fs->ns (rwlock): the namespace -- every directory's entries, every
 *      nlink, every directory's parent.  Lookups and readdir take it shared;
 *      create, link, unlink, rmdir and rename take it exclusive, which also
 *      serialises renames (the kernel's s_vfs_rename_mutex, lock_rename(),
 *      plays the same role for cross-directory renames).
 *   2. node->lock (one mutex per inode): attributes, times, lookup count,
 *      xattrs, and the file content (struct rm_file, which is single-threaded
 *      by contract: the model's "callers serialise" rule, as i_rwsem in the
 *      kernel).  At most one node lock is held at a time, so no order between
 *      inodes is needed; rename updates each inode under its own lock in turn.
 *   3. fs->space (mutex): capacity reservations.
 *   4. fs->list (mutex): the list of all nodes and the inode counters.
 */
#ifndef RANGESHIFT_FUSEFS_FS_H
#define RANGESHIFT_FUSEFS_FS_H

#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "refmodel.h"

struct node;

struct dent {
	char *name;
	struct node *node;
	uint64_t cookie;	/* readdir offset; strictly increasing per dir */
};

struct xattr {
	char *name;
	void *value;
	size_t size;
};

struct node {
	pthread_mutex_t lock;
	struct node *prev, *next;	/* fs->all, under fs->list */
	uint64_t ino;			/* st_ino: never reused */
	uint64_t generation;
	uint64_t nlookup;		/* kernel references (lookup count) */
	mode_t mode;
	nlink_t nlink;			/* under fs->ns and lock */
	uid_t uid;
	gid_t gid;
	dev_t rdev;
	struct timespec atime, mtime, ctime;
	/* regular file */
	struct rm_file *file;
	int64_t alloc;			/* allocated bytes last accounted in fs->used */
	/* symlink */
	char *target;
	/* directory: under fs->ns */
	struct dent *ents;
	size_t nents, cap;
	uint64_t next_cookie;
	struct node *parent;
	/* xattrs: under lock */
	struct xattr *xattrs;
	size_t nxattrs;
	size_t xattr_bytes;
};

struct fs {
	struct rm_opts opts;
	int64_t capacity;		/* bytes of file data (size=) */
	double timeout;			/* entry/attr cache timeout, seconds */
	pthread_rwlock_t ns;
	pthread_mutex_t space;
	int64_t used;			/* allocated bytes of all files */
	int64_t reserved;		/* reserved by operations in flight */
	pthread_mutex_t list;
	struct node all;		/* list head */
	uint64_t next_ino;
	uint64_t nnodes;
	struct node *root;
	struct fuse_session *se;
};

#endif /* RANGESHIFT_FUSEFS_FS_H */
