/* SPDX-License-Identifier: MIT */
/*
 * fs.h - in-memory state of rangeshift-fusefs (inodes, directories, xattrs,
 * space accounting) and the functions the server's modules share:
 *
 *   node.c       inodes: life, attributes, space accounting, privileges
 *   namespace.c  lookup, getattr/setattr, create/link/unlink/rename, readdir
 *   data.c       open, read, write, fsync, lseek
 *   ranges.c     fallocate and the ioctls of rangeshift_fusefs.h
 *   xattr.c      extended attributes and the virtual map attribute
 *   main.c       option parsing, the operation table, the session
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
 *   5. fs->shifter.lock (mutex): the queue of range ioctls.
 *
 * Waiting on the kernel: no FUSE worker thread ever waits for write-back.
 * Dropping cached pages (fuse_lowlevel_notify_inval_inode(), needed before
 * and after a range shift done through an ioctl) makes the kernel write
 * dirty pages of shared mappings back through FUSE_WRITE and wait for the
 * reply (invalidate_inode_pages2_range() -> fuse_launder_folio()), which
 * only a worker can give: a worker doing it waits on itself (-s), or all
 * of them wait (as many ioctls in flight as workers), and the mount hangs
 * with the callers in D state, beyond kill -9 of the server.  So the range
 * ioctls run on a thread of their own, the shifter (ranges.c): the worker
 * queues the request and returns to the loop to serve the write-back, the
 * shifter invalidates (no lock held), shifts under node->lock, invalidates
 * again, tells the kernel a grown size, and then replies.  The ioctl
 * still returns only once the kernel's caches are coherent, a dirty page
 * is still written back at its pre-shift offset before the data moves (as
 * ext4_insert_range() does), and no client protocol (msync first) is
 * needed for safety.  Alternatives rejected: a client-side msync/fsync
 * before the ioctl alone leaves a race (a page dirtied after it still
 * hangs the server), and invalidating after the reply would let a stale
 * dirty page be written back over the shifted layout and break the
 * promise of rangeshift_fusefs.h.  What remains: a program that writes
 * through a mapping while it shifts the same range races with itself (the
 * page may be written back at its old offset after the shift), as it
 * would with ext4 without the invalidate lock.
 */
#ifndef RANGESHIFT_FUSEFS_FS_H
#define RANGESHIFT_FUSEFS_FS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "refmodel.h"

#define NAME_MAX_LEN	255		/* ext4's EXT4_NAME_LEN */

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
	size_t nxattrs, xattr_cap;
	size_t xattr_bytes;
};

/* The thread that runs the range ioctls (ranges.c). */
struct shift_job;
struct shifter {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct shift_job *head, **tail;	/* queue, under lock */
	bool stop;			/* under lock */
	bool running;
	pthread_t thread;
};

struct fs {
	struct rm_opts opts;
	int64_t capacity;		/* bytes of file data (size=) */
	double timeout;			/* entry/attr cache timeout, seconds */
	bool keep_cache;		/* open() keeps the kernel's cached pages */
	struct fuse_conn_info_opts *conn_opts;	/* libfuse's -o options, or NULL */
	pthread_rwlock_t ns;
	pthread_mutex_t space;
	int64_t used;			/* allocated bytes of all files */
	int64_t reserved;		/* reserved by operations in flight */
	pthread_mutex_t list;
	struct node all;		/* list head */
	uint64_t next_ino;
	uint64_t nnodes;
	struct node *root;
	struct fuse_session *se;	/* NULL: no kernel (fuzz harness) */
	struct shifter shifter;
};

static inline struct fs *FS(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* Node ids given to the kernel are the addresses of struct node (as
 * libfuse's example/passthrough_ll.c does), except the root. */
static inline struct node *N(fuse_req_t req, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return FS(req)->root;
	return (struct node *)(uintptr_t)ino;
}

static inline fuse_ino_t nodeid(const struct fs *fs, const struct node *n)
{
	return n == fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

/* node.c */
void now(struct timespec *ts);
void touch_mc(struct node *n);
void node_stat(const struct fs *fs, const struct node *n, struct stat *st);
void account(struct fs *fs, struct node *n);
int reserve(struct fs *fs, int64_t need);
void unreserve(struct fs *fs, int64_t need);
int64_t holes_in(const struct rm_file *f, int64_t off, int64_t len);
bool caller_has_fsetid(fuse_req_t req);
void remove_privs(struct node *n);
struct node *node_new(struct fs *fs, mode_t mode, uid_t uid, gid_t gid);
void node_free(struct fs *fs, struct node *n);
bool node_dead(const struct fs *fs, const struct node *n);
void forget_one(struct fs *fs, struct node *n, uint64_t nlookup);
void fill_entry(const struct fs *fs, struct node *n, struct fuse_entry_param *e);
void ref_entry(const struct fs *fs, struct node *n, struct fuse_entry_param *e);

/* namespace.c */
void rs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void rs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void rs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets);
void rs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void rs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		struct fuse_file_info *fi);
void rs_readlink(fuse_req_t req, fuse_ino_t ino);
void rs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	      dev_t rdev);
void rs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void rs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		const char *name);
void rs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void rs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void rs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
	       fuse_ino_t newparent, const char *newname, unsigned int flags);
void rs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
	     const char *newname);
void rs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       struct fuse_file_info *fi);
void rs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		struct fuse_file_info *fi);
void rs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void rs_statfs(fuse_req_t req, fuse_ino_t ino);

/* data.c */
void set_handle(const struct fs *fs, struct fuse_file_info *fi);
int open_flags(const struct fuse_file_info *fi);
void rs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void rs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	     struct fuse_file_info *fi);
void rs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
	      off_t off, struct fuse_file_info *fi);
void rs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void rs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void rs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
	      struct fuse_file_info *fi);
void rs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
	      struct fuse_file_info *fi);

/* ranges.c */
void rs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off,
		  off_t len, struct fuse_file_info *fi);
void rs_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
	      struct fuse_file_info *fi, unsigned flags, const void *in_buf,
	      size_t in_bufsz, size_t out_bufsz);
/* The ioctls of rangeshift_fusefs.h on n without a FUSE request: the
 * number of bytes written to out, or -errno.  oflags: the open(2) flags of
 * the caller's file; killpriv: apply should_remove_suid().  Range ioctls
 * run here synchronously, telling the kernel (if fs->se) as they go. */
int ioctl_call(struct fs *fs, struct node *n, unsigned int cmd, int oflags,
	       bool killpriv, const void *in, size_t insz, void *out,
	       size_t outsz);
int shifter_start(struct fs *fs);
void shifter_stop(struct fs *fs);

/* xattr.c: the file-system side returns 0 or -errno and copies values
 * into caller buffers (callable without a FUSE request, as the fuzz
 * harness does); rs_* are the FUSE glue. */
int xattr_set(struct node *n, const char *name, const void *value,
	      size_t size, int flags);
int xattr_get(struct node *n, const char *name, void *buf, size_t size,
	      size_t *len);
int xattr_list(struct node *n, char *buf, size_t size, size_t *len);
int xattr_remove(struct node *n, const char *name);
void rs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		 const char *value, size_t size, int flags);
void rs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void rs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void rs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif /* RANGESHIFT_FUSEFS_FS_H */
