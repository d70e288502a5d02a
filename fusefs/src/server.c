/* SPDX-License-Identifier: MIT */
/*
 * server.c - rangeshift-fusefs: a FUSE file system (libfuse3 low-level API,
 * multi-threaded loop) whose regular files are refmodel files, so that any
 * program sees exactly the semantics refmodel defines for ext4, XFS or the
 * byte-granular "bytes" profile.
 *
 * One handler per FUSE operation, in the order of struct fuse_lowlevel_ops.
 * Node ids given to the kernel are the addresses of struct node (as
 * libfuse's example/passthrough_ll.c does), except the root (FUSE_ROOT_ID);
 * st_ino is a counter that is never reused, and each node has its own
 * generation.  A node lives while it has a name (nlink > 0) or the kernel
 * holds a lookup reference (nlookup > 0): an unlinked open file keeps its
 * data until the kernel forgets it.
 *
 * Cache policy: no writeback cache.  With FUSE_CAP_WRITEBACK_CACHE the
 * kernel would keep dirty pages and own i_size and mtime, so a range shift
 * done behind its back through an ioctl would race with delayed writeback
 * of pages at pre-shift offsets, and the kernel's idea of the size would be
 * authoritative and stale.  Write-through keeps the server the only
 * authority; after every change the kernel cannot see (the ioctls) the
 * server invalidates the inode's pages and attributes with
 * fuse_lowlevel_notify_inval_inode() before replying.
 *
 * suid/sgid: libfuse 3.14 (Debian 12) cannot negotiate
 * FUSE_HANDLE_KILLPRIV_V2 and does not pass FUSE_WRITE_KILL_SUIDGID or
 * FATTR_KILL_SUIDGID through, so FUSE_CAP_HANDLE_KILLPRIV is turned off:
 * the kernel then runs file_remove_privs() itself on write, truncate and
 * fallocate (it knows the caller's CAP_FSETID) and sends the mode change as
 * a SETATTR.  The ioctls, which the kernel does not treat as writes, apply
 * should_remove_suid()'s rule here with the caller's capabilities read from
 * /proc/PID/status.
 */
#define FUSE_USE_VERSION 312

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs.h"
#include "rangeshift_fusefs.h"

#define NAME_MAX_LEN	255		/* ext4's EXT4_NAME_LEN */
#define XATTR_TOTAL_MAX	65536		/* per inode: names + values */
#define MAP_XATTR_MAX	65536		/* XATTR_SIZE_MAX */
#define CAP_FSETID_BIT	4

/* ---------------------------------------------------------------- helpers */

static struct fs *FS(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct node *N(fuse_req_t req, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return FS(req)->root;
	return (struct node *)(uintptr_t)ino;
}

static fuse_ino_t nodeid(const struct fs *fs, const struct node *n)
{
	return n == fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

static void now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

static void touch_mc(struct node *n)
{
	now(&n->mtime);
	n->ctime = n->mtime;
}

static void node_stat(const struct fs *fs, const struct node *n, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_mode = n->mode;
	st->st_nlink = n->nlink;
	st->st_uid = n->uid;
	st->st_gid = n->gid;
	st->st_rdev = n->rdev;
	st->st_blksize = fs->opts.blocksize;
	st->st_atim = n->atime;
	st->st_mtim = n->mtime;
	st->st_ctim = n->ctime;
	if (n->file) {
		st->st_size = rm_size(n->file);
		st->st_blocks = n->alloc / 512;
	} else if (n->target) {
		st->st_size = (off_t)strlen(n->target);
	} else if (S_ISDIR(n->mode)) {
		st->st_size = fs->opts.blocksize;	/* ext4 shows one block */
		st->st_blocks = fs->opts.blocksize / 512;
	}
}

/* Allocated bytes of a file, as st_blocks and statfs count them. */
static int64_t file_alloc(const struct rm_file *f)
{
	struct rm_stats st;

	rm_stats(f, &st);
	return st.alloc_bytes;
}

/* Bring fs->used up to date after n's content changed (n->lock held). */
static void account(struct fs *fs, struct node *n)
{
	int64_t a = file_alloc(n->file);

	pthread_mutex_lock(&fs->space);
	fs->used += a - n->alloc;
	pthread_mutex_unlock(&fs->space);
	n->alloc = a;
}

/* Reserve `need` bytes of capacity; 0 or -ENOSPC.  Checked before an
 * operation is applied so a full file system never half-applies one. */
static int reserve(struct fs *fs, int64_t need)
{
	int ret = 0;

	if (need <= 0)
		return 0;
	pthread_mutex_lock(&fs->space);
	if (fs->used + fs->reserved + need > fs->capacity)
		ret = -ENOSPC;
	else
		fs->reserved += need;
	pthread_mutex_unlock(&fs->space);
	return ret;
}

static void unreserve(struct fs *fs, int64_t need)
{
	if (need <= 0)
		return;
	pthread_mutex_lock(&fs->space);
	fs->reserved -= need;
	pthread_mutex_unlock(&fs->space);
}

static int sum_holes(void *ctx, const struct rm_run *run)
{
	if (run->state == RM_HOLE)
		*(int64_t *)ctx += run->len;
	return 0;
}

/* Bytes of [off, off+len), widened to whole blocks, that are holes now:
 * what a write or an allocating fallocate there can newly allocate. */
static int64_t holes_in(const struct rm_file *f, int64_t off, int64_t len)
{
	int64_t bs = rm_blocksize(f), max = rm_maxbytes(f), end, n = 0;

	if (off < 0 || len <= 0 || off >= max)
		return 0;
	end = len > max - off ? max : off + len;
	off -= off % bs;
	if (end % bs && end <= max - (bs - end % bs))
		end += bs - end % bs;
	if (rm_walk(f, off, end, sum_holes, &n) < 0)
		return len;
	return n;
}

/* Does the caller of req have CAP_FSETID?  The kernel answers this for
 * write/truncate/fallocate (should_remove_suid()); for the ioctls we read
 * the caller's effective capabilities. */
static bool caller_has_fsetid(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	char path[64], line[256];
	bool ret = ctx->uid == 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)ctx->pid);
	fp = fopen(path, "re");
	if (!fp)
		return ret;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long caps;

		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			ret = (caps >> CAP_FSETID_BIT) & 1;
			break;
		}
	}
	fclose(fp);
	return ret;
}

/* should_remove_suid(): suid always goes; sgid only with group exec. */
static void remove_privs(struct node *n)
{
	mode_t kill = 0;

	if (n->mode & S_ISUID)
		kill |= S_ISUID;
	if ((n->mode & S_ISGID) && (n->mode & S_IXGRP))
		kill |= S_ISGID;
	if (kill) {
		n->mode &= ~kill;
		now(&n->ctime);
	}
}

/* ------------------------------------------------------------ node life */

static struct node *node_new(struct fs *fs, mode_t mode, uid_t uid, gid_t gid)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	pthread_mutex_init(&n->lock, NULL);
	n->mode = mode;
	n->uid = uid;
	n->gid = gid;
	n->nlink = 1;
	now(&n->atime);
	n->mtime = n->ctime = n->atime;
	n->next_cookie = 3;	/* 1 and 2 are "." and ".." */
	if (S_ISREG(mode) && rm_file_new(&fs->opts, &n->file) < 0) {
		pthread_mutex_destroy(&n->lock);
		free(n);
		return NULL;
	}
	pthread_mutex_lock(&fs->list);
	n->ino = ++fs->next_ino;
	n->generation = n->ino;
	n->next = fs->all.next;
	n->prev = &fs->all;
	fs->all.next->prev = n;
	fs->all.next = n;
	fs->nnodes++;
	pthread_mutex_unlock(&fs->list);
	return n;
}

static void node_free(struct fs *fs, struct node *n)
{
	size_t i;

	pthread_mutex_lock(&fs->list);
	n->prev->next = n->next;
	n->next->prev = n->prev;
	fs->nnodes--;
	pthread_mutex_unlock(&fs->list);
	if (n->file) {
		pthread_mutex_lock(&fs->space);
		fs->used -= n->alloc;
		pthread_mutex_unlock(&fs->space);
		rm_file_free(n->file);
	}
	for (i = 0; i < n->nents; i++)
		free(n->ents[i].name);
	free(n->ents);
	for (i = 0; i < n->nxattrs; i++) {
		free(n->xattrs[i].name);
		free(n->xattrs[i].value);
	}
	free(n->xattrs);
	free(n->target);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

/* Called with n->lock held after nlink or nlookup dropped; returns true if
 * the caller must node_free() n after unlocking (nobody can reach it). */
static bool node_dead(const struct fs *fs, const struct node *n)
{
	return n != fs->root && n->nlink == 0 && n->nlookup == 0;
}

/* --------------------------------------------------------- directories */

static struct dent *dir_find(struct node *dir, const char *name)
{
	size_t i;

	for (i = 0; i < dir->nents; i++)
		if (strcmp(dir->ents[i].name, name) == 0)
			return &dir->ents[i];
	return NULL;
}

static int dir_add(struct node *dir, const char *name, struct node *child)
{
	char *copy;

	if (dir->nents == dir->cap) {
		size_t cap = dir->cap ? dir->cap * 2 : 8;
		struct dent *e = realloc(dir->ents, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		dir->ents = e;
		dir->cap = cap;
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	dir->ents[dir->nents].name = copy;
	dir->ents[dir->nents].node = child;
	dir->ents[dir->nents].cookie = dir->next_cookie++;
	dir->nents++;
	return 0;
}

/* Entries stay in cookie order, so readdir offsets survive removals. */
static void dir_remove(struct node *dir, struct dent *e)
{
	size_t i = (size_t)(e - dir->ents);

	free(e->name);
	memmove(&dir->ents[i], &dir->ents[i + 1],
		(dir->nents - i - 1) * sizeof(*e));
	dir->nents--;
}

static void fill_entry(const struct fs *fs, struct node *n,
		       struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = nodeid(fs, n);
	e->generation = n->generation;
	e->attr_timeout = fs->timeout;
	e->entry_timeout = fs->timeout;
	node_stat(fs, n, &e->attr);
}

/* Take a lookup reference on n and describe it (n unlocked on entry). */
static void ref_entry(const struct fs *fs, struct node *n,
		      struct fuse_entry_param *e)
{
	pthread_mutex_lock(&n->lock);
	n->nlookup++;
	fill_entry(fs, n, e);
	pthread_mutex_unlock(&n->lock);
}

static int check_name(const char *name)
{
	if (strlen(name) > NAME_MAX_LEN)
		return -ENAMETOOLONG;
	return 0;
}

/* ------------------------------------------------------------ handlers */

static void rs_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* See the header comment: write-through, kernel-side privilege drop. */
	conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_HANDLE_KILLPRIV |
			FUSE_CAP_ATOMIC_O_TRUNC);
	if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA)
		conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
}

static void rs_destroy(void *userdata)
{
	struct fs *fs = userdata;

	/* Every node, reachable or not (unlinked files the kernel had not
	 * forgotten yet), is on fs->all. */
	while (fs->all.next != &fs->all)
		node_free(fs, fs->all.next);
	fs->root = NULL;
}

static void rs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = FS(req);
	struct node *dir = N(req, parent);
	struct fuse_entry_param e;
	struct dent *d;

	if (check_name(name)) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	pthread_rwlock_rdlock(&fs->ns);
	d = dir_find(dir, name);
	if (!d) {
		pthread_rwlock_unlock(&fs->ns);
		fuse_reply_err(req, ENOENT);
		return;
	}
	ref_entry(fs, d->node, &e);
	pthread_rwlock_unlock(&fs->ns);
	if (fuse_reply_entry(req, &e) != 0) {
		/* The kernel did not get the reference: drop it again. */
		struct node *n = N(req, e.ino);
		bool dead;

		pthread_mutex_lock(&n->lock);
		n->nlookup--;
		dead = node_dead(fs, n);
		pthread_mutex_unlock(&n->lock);
		if (dead)
			node_free(fs, n);
	}
}

static void forget_one(struct fs *fs, struct node *n, uint64_t nlookup)
{
	bool dead;

	pthread_mutex_lock(&n->lock);
	n->nlookup = nlookup > n->nlookup ? 0 : n->nlookup - nlookup;
	dead = node_dead(fs, n);
	pthread_mutex_unlock(&n->lock);
	if (dead)
		node_free(fs, n);
}

static void rs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	forget_one(FS(req), N(req, ino), nlookup);
	fuse_reply_none(req);
}

static void rs_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		forget_one(FS(req), N(req, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

static void rs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = FS(req);
	struct node *n = N(req, ino);
	struct stat st;

	(void)fi;
	pthread_mutex_lock(&n->lock);
	node_stat(fs, n, &st);
	pthread_mutex_unlock(&n->lock);
	fuse_reply_attr(req, &st, fs->timeout);
}

static void set_time(struct timespec *dst, const struct timespec *src, bool now_flag)
{
	if (now_flag)
		now(dst);
	else
		*dst = *src;
}

static void rs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct fs *fs = FS(req);
	struct node *n = N(req, ino);
	struct stat st;
	int err = 0;

	(void)fi;
	pthread_mutex_lock(&n->lock);
	/* The size first: it is the only part that can fail, and a failed
	 * setattr must change nothing. */
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (!n->file) {
			err = S_ISDIR(n->mode) ? -EISDIR : -EINVAL;
			goto out;
		}
		/* Always truncate, even to the same size: ext4_setattr() and
		 * xfs_setattr_size() then free the blocks past EOF that a
		 * KEEP_SIZE fallocate left there (the model knows this). */
		int64_t old = rm_size(n->file);

		err = rm_truncate(n->file, attr->st_size);
		if (err)
			goto out;
		account(fs, n);
		/* ext4_setattr(): a size change sets mtime and ctime. */
		if (attr->st_size != old)
			touch_mc(n);
	}
	if (to_set & FUSE_SET_ATTR_MODE)
		n->mode = (n->mode & S_IFMT) | (attr->st_mode & 07777);
	if (to_set & FUSE_SET_ATTR_UID)
		n->uid = attr->st_uid;
	if (to_set & FUSE_SET_ATTR_GID)
		n->gid = attr->st_gid;
	if (to_set & FUSE_SET_ATTR_KILL_SUID)
		n->mode &= ~S_ISUID;
	if ((to_set & FUSE_SET_ATTR_KILL_SGID) && (n->mode & S_IXGRP))
		n->mode &= ~S_ISGID;
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW))
		set_time(&n->atime, &attr->st_atim, to_set & FUSE_SET_ATTR_ATIME_NOW);
	if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW))
		set_time(&n->mtime, &attr->st_mtim, to_set & FUSE_SET_ATTR_MTIME_NOW);
	/* notify_change() always sets ATTR_CTIME: any change updates ctime. */
	if (to_set & FUSE_SET_ATTR_CTIME)
		n->ctime = attr->st_ctim;
	else
		now(&n->ctime);
out:
	node_stat(fs, n, &st);
	pthread_mutex_unlock(&n->lock);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_attr(req, &st, fs->timeout);
}

static void rs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct node *n = N(req, ino);
	char *target;

	/* Reply from a copy: once the kernel has the reply, the caller may
	 * unlink the symlink and the kernel forget it (freeing n) while
	 * fuse_reply_readlink() is still returning. */
	pthread_mutex_lock(&n->lock);
	target = n->target ? strdup(n->target) : NULL;
	pthread_mutex_unlock(&n->lock);
	if (!n->target)
		fuse_reply_err(req, EINVAL);
	else if (!target)
		fuse_reply_err(req, ENOMEM);
	else
		fuse_reply_readlink(req, target);
	free(target);
}

/* Create a node called name in parent: mknod, mkdir, symlink and create. */
static int make_node(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev, const char *target,
		     struct fuse_entry_param *e)
{
	struct fs *fs = FS(req);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct node *dir = N(req, parent), *n;
	gid_t gid = ctx->gid;
	int err;

	err = check_name(name);
	if (err)
		return err;
	pthread_rwlock_wrlock(&fs->ns);
	if (dir->nlink == 0) {			/* removed directory */
		err = -ENOENT;
		goto out;
	}
	if (dir_find(dir, name)) {
		err = -EEXIST;
		goto out;
	}
	/* inode_init_owner(): a setgid directory passes on its group, and its
	 * setgid bit to subdirectories. */
	pthread_mutex_lock(&dir->lock);
	if (dir->mode & S_ISGID) {
		gid = dir->gid;
		if (S_ISDIR(mode))
			mode |= S_ISGID;
	}
	pthread_mutex_unlock(&dir->lock);
	n = node_new(fs, mode, ctx->uid, gid);
	if (!n) {
		err = -ENOMEM;
		goto out;
	}
	n->rdev = rdev;
	if (target) {
		n->target = strdup(target);
		if (!n->target) {
			node_free(fs, n);
			err = -ENOMEM;
			goto out;
		}
	}
	if (S_ISDIR(mode)) {
		n->nlink = 2;
		n->parent = dir;
	}
	err = dir_add(dir, name, n);
	if (err) {
		node_free(fs, n);
		goto out;
	}
	pthread_mutex_lock(&dir->lock);
	if (S_ISDIR(mode))
		dir->nlink++;
	touch_mc(dir);
	pthread_mutex_unlock(&dir->lock);
	ref_entry(fs, n, e);
out:
	pthread_rwlock_unlock(&fs->ns);
	return err;
}

static void reply_made(fuse_req_t req, int err, struct fuse_entry_param *e)
{
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_entry(req, e);
}

static void rs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	struct fuse_entry_param e;

	if (!S_ISREG(mode) && !S_ISFIFO(mode) && !S_ISSOCK(mode) &&
	    !S_ISCHR(mode) && !S_ISBLK(mode)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	reply_made(req, make_node(req, parent, name, mode, rdev, NULL, &e), &e);
}

static void rs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	struct fuse_entry_param e;

	reply_made(req, make_node(req, parent, name, S_IFDIR | (mode & 07777),
				  0, NULL, &e), &e);
}

static void rs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	struct fuse_entry_param e;

	if (strlen(link) >= PATH_MAX) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	reply_made(req, make_node(req, parent, name, S_IFLNK | 0777, 0, link, &e), &e);
}

/* Drop one name of victim (under fs->ns); returns true if it must be freed. */
static bool drop_link(struct fs *fs, struct node *victim)
{
	bool dead;

	pthread_mutex_lock(&victim->lock);
	if (S_ISDIR(victim->mode))
		victim->nlink = 0;
	else if (victim->nlink > 0)
		victim->nlink--;
	now(&victim->ctime);
	dead = node_dead(fs, victim);
	pthread_mutex_unlock(&victim->lock);
	return dead;
}

static void remove_name(fuse_req_t req, fuse_ino_t parent, const char *name,
			bool want_dir)
{
	struct fs *fs = FS(req);
	struct node *dir = N(req, parent), *victim;
	struct dent *d;
	bool dead = false;
	int err = 0;

	pthread_rwlock_wrlock(&fs->ns);
	d = dir_find(dir, name);
	if (!d) {
		err = ENOENT;
		goto out;
	}
	victim = d->node;
	if (want_dir && !S_ISDIR(victim->mode)) {
		err = ENOTDIR;
		goto out;
	}
	if (!want_dir && S_ISDIR(victim->mode)) {
		err = EISDIR;
		goto out;
	}
	if (want_dir && victim->nents) {
		err = ENOTEMPTY;
		goto out;
	}
	dir_remove(dir, d);
	pthread_mutex_lock(&dir->lock);
	if (want_dir)
		dir->nlink--;
	touch_mc(dir);
	pthread_mutex_unlock(&dir->lock);
	dead = drop_link(fs, victim);
out:
	pthread_rwlock_unlock(&fs->ns);
	if (dead)
		node_free(fs, victim);
	fuse_reply_err(req, err);
}

static void rs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, false);
}

static void rs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, true);
}

/* Is a an ancestor of (or equal to) d?  Parents only change under fs->ns
 * held exclusively, which the caller holds. */
static bool is_ancestor(const struct node *a, const struct node *d)
{
	for (; d; d = d->parent)
		if (d == a)
			return true;
	return false;
}

static void adjust_nlink(struct node *dir, int delta)
{
	pthread_mutex_lock(&dir->lock);
	dir->nlink += delta;
	touch_mc(dir);
	pthread_mutex_unlock(&dir->lock);
}

static void touch_c(struct node *n)
{
	pthread_mutex_lock(&n->lock);
	now(&n->ctime);
	pthread_mutex_unlock(&n->lock);
}

/* rename(2) and renameat2(2) with RENAME_NOREPLACE / RENAME_EXCHANGE; the
 * checks are those of vfs_rename() and ext4_rename(). */
static void rs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	struct fs *fs = FS(req);
	struct node *od = N(req, parent), *nd = N(req, newparent);
	struct node *src, *dst = NULL, *victim = NULL;
	struct dent *se, *de;
	int err = 0;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE) ||
	    (flags & RENAME_NOREPLACE && flags & RENAME_EXCHANGE)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (check_name(newname)) {
		fuse_reply_err(req, ENAMETOOLONG);
		return;
	}
	pthread_rwlock_wrlock(&fs->ns);
	se = dir_find(od, name);
	if (!se) {
		err = ENOENT;
		goto out;
	}
	src = se->node;
	de = dir_find(nd, newname);
	if (de)
		dst = de->node;
	if ((flags & RENAME_NOREPLACE) && dst) {
		err = EEXIST;
		goto out;
	}
	if ((flags & RENAME_EXCHANGE) && !dst) {
		err = ENOENT;
		goto out;
	}
	if (src == dst)		/* same inode: POSIX says do nothing */
		goto out;
	/* A directory may not move below itself (lock_rename()'s trap). */
	if ((S_ISDIR(src->mode) && is_ancestor(src, nd)) ||
	    ((flags & RENAME_EXCHANGE) && S_ISDIR(dst->mode) &&
	     is_ancestor(dst, od))) {
		err = EINVAL;
		goto out;
	}
	if (flags & RENAME_EXCHANGE) {
		se->node = dst;
		de->node = src;
		if (od != nd) {
			if (S_ISDIR(src->mode)) {
				src->parent = nd;
				adjust_nlink(od, -1);
				adjust_nlink(nd, +1);
			}
			if (S_ISDIR(dst->mode)) {
				dst->parent = od;
				adjust_nlink(nd, -1);
				adjust_nlink(od, +1);
			}
		}
		adjust_nlink(od, 0);
		adjust_nlink(nd, 0);
		touch_c(src);
		touch_c(dst);
		goto out;
	}
	if (dst) {
		if (S_ISDIR(src->mode) && !S_ISDIR(dst->mode)) {
			err = ENOTDIR;
			goto out;
		}
		if (!S_ISDIR(src->mode) && S_ISDIR(dst->mode)) {
			err = EISDIR;
			goto out;
		}
		if (S_ISDIR(dst->mode) && dst->nents) {
			err = ENOTEMPTY;
			goto out;
		}
		de->node = src;
		if (S_ISDIR(dst->mode))
			adjust_nlink(nd, -1);
	} else {
		int e = dir_add(nd, newname, src);

		if (e) {
			err = -e;
			goto out;
		}
		se = dir_find(od, name);	/* dir_add may have moved it */
	}
	dir_remove(od, se);
	if (S_ISDIR(src->mode) && od != nd) {
		src->parent = nd;
		adjust_nlink(od, -1);
		adjust_nlink(nd, +1);
	}
	adjust_nlink(od, 0);
	adjust_nlink(nd, 0);
	touch_c(src);		/* ext4_rename() updates the source's ctime */
	if (dst && drop_link(fs, dst))
		victim = dst;
out:
	pthread_rwlock_unlock(&fs->ns);
	if (victim)
		node_free(fs, victim);
	fuse_reply_err(req, err);
}

static void rs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	struct fs *fs = FS(req);
	struct node *n = N(req, ino), *dir = N(req, newparent);
	struct fuse_entry_param e;
	int err;

	err = check_name(newname);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	pthread_rwlock_wrlock(&fs->ns);
	if (S_ISDIR(n->mode)) {
		err = -EPERM;
	} else if (n->nlink == 0) {
		err = -ENOENT;		/* vfs_link(): no links to a dead inode */
	} else if (dir_find(dir, newname)) {
		err = -EEXIST;
	} else if (n->nlink >= 65000) {
		err = -EMLINK;		/* EXT4_LINK_MAX */
	} else {
		err = dir_add(dir, newname, n);
	}
	if (!err) {
		pthread_mutex_lock(&n->lock);
		n->nlink++;
		now(&n->ctime);
		n->nlookup++;
		fill_entry(fs, n, &e);
		pthread_mutex_unlock(&n->lock);
		adjust_nlink(dir, 0);
	}
	pthread_rwlock_unlock(&fs->ns);
	reply_made(req, err, &e);
}

/* The file handle is just the open(2) flags (the ioctls need the access
 * mode, as vfs_fallocate() checks FMODE_WRITE).  Nothing is allocated: the
 * kernel may drop a RELEASE that is still queued at unmount. */
static void set_handle(struct fuse_file_info *fi)
{
	fi->fh = (uint64_t)(unsigned int)fi->flags;
	/* No keep_cache: open() drops cached pages, a cheap extra guarantee. */
	fi->keep_cache = 0;
}

static int open_flags(const struct fuse_file_info *fi)
{
	return (int)(unsigned int)fi->fh;
}

static void rs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n = N(req, ino);

	if (!S_ISREG(n->mode)) {
		fuse_reply_err(req, S_ISDIR(n->mode) ? EISDIR : ENXIO);
		return;
	}
	set_handle(fi);
	fuse_reply_open(req, fi);
}

/* relatime (ext4's default, relatime_need_update()): atime moves when it
 * is older than mtime or ctime, or more than a day old. */
static void read_touch(struct node *n)
{
	struct timespec t;

	now(&t);
	if (n->atime.tv_sec < n->mtime.tv_sec ||
	    (n->atime.tv_sec == n->mtime.tv_sec && n->atime.tv_nsec <= n->mtime.tv_nsec) ||
	    n->atime.tv_sec < n->ctime.tv_sec ||
	    (n->atime.tv_sec == n->ctime.tv_sec && n->atime.tv_nsec <= n->ctime.tv_nsec) ||
	    t.tv_sec - n->atime.tv_sec >= 24 * 60 * 60)
		n->atime = t;
}

static void rs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct node *n = N(req, ino);
	char *buf = malloc(size ? size : 1);
	ssize_t r;

	(void)fi;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&n->lock);
	r = rm_pread(n->file, buf, size, off);
	if (r >= 0)
		read_touch(n);
	pthread_mutex_unlock(&n->lock);
	if (r < 0)
		fuse_reply_err(req, (int)-r);
	else
		fuse_reply_buf(req, buf, (size_t)r);
	free(buf);
}

static void rs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fs *fs = FS(req);
	struct node *n = N(req, ino);
	int64_t need;
	ssize_t r;

	(void)fi;
	pthread_mutex_lock(&n->lock);
	need = holes_in(n->file, off, (int64_t)size);
	r = reserve(fs, need);
	if (r == 0) {
		r = rm_pwrite(n->file, buf, size, off);
		account(fs, n);
		unreserve(fs, need);
		if (r > 0)
			touch_mc(n);	/* file_update_time() */
	}
	pthread_mutex_unlock(&n->lock);
	if (r < 0)
		fuse_reply_err(req, (int)-r);
	else
		fuse_reply_write(req, (size_t)r);
}

static void rs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void rs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void rs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	struct node *n = N(req, ino);
	int err = 0;

	(void)datasync;
	(void)fi;
	pthread_mutex_lock(&n->lock);
	if (n->file)
		err = rm_fsync(n->file);
	pthread_mutex_unlock(&n->lock);
	fuse_reply_err(req, -err);
}

static void rs_readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size,
			      off_t off, bool plus)
{
	struct fs *fs = FS(req);
	struct node *dir = N(req, ino);
	char *buf = malloc(size ? size : 1), *p = buf;
	struct node **given = NULL;	/* readdirplus: lookups handed out */
	size_t rem = size, i, lo, hi, ngiven = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_rwlock_rdlock(&fs->ns);
	if (!S_ISDIR(dir->mode)) {
		pthread_rwlock_unlock(&fs->ns);
		free(buf);
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	/* "." and ".." (the kernel takes no lookup reference for them). */
	for (; off < 2; off++) {
		struct fuse_entry_param e;
		struct node *n = off == 0 ? dir : (dir->parent ? dir->parent : dir);
		const char *name = off == 0 ? "." : "..";
		size_t len;

		memset(&e, 0, sizeof(e));
		e.attr.st_ino = n->ino;
		e.attr.st_mode = S_IFDIR;
		len = plus ? fuse_add_direntry_plus(req, p, rem, name, &e, off + 1)
			   : fuse_add_direntry(req, p, rem, name, &e.attr, off + 1);
		if (len > rem)
			goto full;
		p += len;
		rem -= len;
	}
	/* First entry with a cookie above off (entries are in cookie order). */
	lo = 0;
	hi = dir->nents;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (dir->ents[mid].cookie <= (uint64_t)off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (plus && lo < dir->nents) {
		given = malloc((dir->nents - lo) * sizeof(*given));
		if (!given) {
			/* not a short listing: the kernel would take it for the end */
			pthread_rwlock_unlock(&fs->ns);
			free(buf);
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	for (i = lo; i < dir->nents; i++) {
		struct dent *d = &dir->ents[i];
		struct fuse_entry_param e;
		size_t len;

		pthread_mutex_lock(&d->node->lock);
		fill_entry(fs, d->node, &e);
		if (plus) {
			len = fuse_add_direntry_plus(req, p, rem, d->name, &e,
						     (off_t)d->cookie);
			if (len <= rem) {
				d->node->nlookup++;
				given[ngiven++] = d->node;
			}
		} else {
			len = fuse_add_direntry(req, p, rem, d->name, &e.attr,
						(off_t)d->cookie);
		}
		pthread_mutex_unlock(&d->node->lock);
		if (len > rem)
			break;
		p += len;
		rem -= len;
	}
full:
	pthread_rwlock_unlock(&fs->ns);
	/* If the kernel never got the entries (interrupted request), it holds
	 * none of the lookups taken for them. */
	if (fuse_reply_buf(req, buf, size - rem) != 0)
		for (i = 0; i < ngiven; i++)
			forget_one(fs, given[i], 1);
	free(given);
	free(buf);
}

static void rs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)fi;
	rs_readdir_common(req, ino, size, off, false);
}

static void rs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	rs_readdir_common(req, ino, size, off, true);
}

static void rs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct fs *fs = FS(req);
	struct statvfs sv;
	uint64_t bs = fs->opts.blocksize, nodes;
	int64_t used;

	(void)ino;
	pthread_mutex_lock(&fs->space);
	used = fs->used + fs->reserved;
	pthread_mutex_unlock(&fs->space);
	pthread_mutex_lock(&fs->list);
	nodes = fs->nnodes;
	pthread_mutex_unlock(&fs->list);
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = bs;
	sv.f_frsize = bs;
	sv.f_blocks = (uint64_t)fs->capacity / bs;
	sv.f_bfree = used >= fs->capacity ? 0 : (uint64_t)(fs->capacity - used) / bs;
	sv.f_bavail = sv.f_bfree;
	sv.f_files = UINT32_MAX;
	sv.f_ffree = UINT32_MAX - nodes;
	sv.f_favail = sv.f_ffree;
	sv.f_namemax = NAME_MAX_LEN;
	fuse_reply_statfs(req, &sv);
}

/* ---------------------------------------------------------------- xattrs */

static int xattr_ns_ok(const char *name)
{
	if (strcmp(name, RS_XATTR_MAP) == 0)
		return -EPERM;		/* read-only, virtual */
	if (strncmp(name, "user.", 5) == 0 || strncmp(name, "trusted.", 8) == 0 ||
	    strncmp(name, "security.", 9) == 0)
		return 0;
	/* system.* (POSIX ACLs) and unknown namespaces: not supported, which
	 * the kernel and tools read as "no ACL". */
	return -EOPNOTSUPP;
}

static struct xattr *xattr_find(struct node *n, const char *name)
{
	size_t i;

	for (i = 0; i < n->nxattrs; i++)
		if (strcmp(n->xattrs[i].name, name) == 0)
			return &n->xattrs[i];
	return NULL;
}

static int do_setxattr(struct node *n, const char *name, const char *value,
		       size_t size, int flags)
{
	struct xattr *x;
	size_t total;
	void *copy;
	int err;

	err = xattr_ns_ok(name);
	if (err)
		return err;
	if (flags & ~(XATTR_CREATE | XATTR_REPLACE))
		return -EINVAL;
	if (strlen(name) > NAME_MAX_LEN)
		return -ERANGE;
	x = xattr_find(n, name);
	if (x && (flags & XATTR_CREATE))
		return -EEXIST;
	if (!x && (flags & XATTR_REPLACE))
		return -ENODATA;
	total = n->xattr_bytes + size + (x ? 0 : strlen(name) + 1) - (x ? x->size : 0);
	if (total > XATTR_TOTAL_MAX)
		return -ENOSPC;		/* ext4: no room in inode or block */
	copy = malloc(size ? size : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, value, size);
	if (!x) {
		struct xattr *arr = realloc(n->xattrs, (n->nxattrs + 1) * sizeof(*arr));
		char *nm = strdup(name);

		if (arr)
			n->xattrs = arr;
		if (!arr || !nm) {
			free(nm);
			free(copy);
			return -ENOMEM;
		}
		x = &n->xattrs[n->nxattrs++];
		x->name = nm;
		x->value = NULL;
		x->size = 0;
	}
	free(x->value);
	x->value = copy;
	x->size = size;
	n->xattr_bytes = total;
	now(&n->ctime);
	return 0;
}

static void rs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	struct node *n = N(req, ino);
	int err;

	pthread_mutex_lock(&n->lock);
	err = do_setxattr(n, name, value, size, flags);
	pthread_mutex_unlock(&n->lock);
	fuse_reply_err(req, -err);
}

struct mapbuf {
	char *buf;
	size_t len, cap;
	int err;
};

static void mb_printf(struct mapbuf *mb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (mb->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(mb->buf + mb->len, mb->cap - mb->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= mb->cap - mb->len)
		mb->err = -E2BIG;	/* map larger than an xattr can be */
	else
		mb->len += (size_t)n;
}

static const char *state_name(unsigned s)
{
	return s == RM_HOLE ? "hole" : s == RM_UNWRITTEN ? "unwritten" : "data";
}

static int map_run(void *ctx, const struct rm_run *run)
{
	struct mapbuf *mb = ctx;

	mb_printf(mb, "%" PRId64 " %" PRId64 " %s", run->off, run->len,
		  state_name(run->state));
	if (run->may != run->state) {
		const char *sep = " may=";
		unsigned s;

		for (s = RM_HOLE; s <= RM_DATA; s <<= 1)
			if (run->may & s) {
				mb_printf(mb, "%s%s", sep, state_name(s));
				sep = ",";
			}
	}
	mb_printf(mb, "\n");
	return mb->err;
}

/* The text of RS_XATTR_MAP (n->lock held). */
static int map_text(const struct node *n, struct mapbuf *mb)
{
	struct rm_stats st;
	int err;

	mb->cap = MAP_XATTR_MAX;
	mb->len = 0;
	mb->err = 0;
	mb->buf = malloc(mb->cap);
	if (!mb->buf)
		return -ENOMEM;
	rm_stats(n->file, &st);
	mb_printf(mb, "# profile %s blocksize %u size %" PRId64 " alloc %" PRId64 "\n",
		  rm_profile_name(rm_profile_of(n->file)), rm_blocksize(n->file),
		  st.size, st.alloc_bytes);
	err = rm_walk(n->file, 0, rm_map_end(n->file), map_run, mb);
	if (err == 0)
		err = mb->err;
	if (err) {
		free(mb->buf);
		mb->buf = NULL;
	}
	return err;
}

static void rs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	struct node *n = N(req, ino);
	struct mapbuf mb = { 0 };
	struct xattr *x;
	const void *val = NULL;
	size_t len = 0;
	int err = 0;

	pthread_mutex_lock(&n->lock);
	if (strcmp(name, RS_XATTR_MAP) == 0) {
		if (!n->file) {
			err = -ENODATA;
		} else {
			err = map_text(n, &mb);
			val = mb.buf;
			len = mb.len;
		}
	} else if ((err = xattr_ns_ok(name)) == 0) {
		x = xattr_find(n, name);
		if (!x) {
			err = -ENODATA;
		} else {
			val = x->value;
			len = x->size;
		}
	}
	if (!err) {
		if (size == 0)
			fuse_reply_xattr(req, len);
		else if (size < len)
			err = -ERANGE;
		else
			fuse_reply_buf(req, val, len);
	}
	pthread_mutex_unlock(&n->lock);
	free(mb.buf);
	if (err)
		fuse_reply_err(req, -err);
}

static void rs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct node *n = N(req, ino);
	size_t i, len = 0;
	char *buf, *p;

	pthread_mutex_lock(&n->lock);
	for (i = 0; i < n->nxattrs; i++)
		len += strlen(n->xattrs[i].name) + 1;
	if (size == 0) {
		pthread_mutex_unlock(&n->lock);
		fuse_reply_xattr(req, len);
		return;
	}
	if (size < len) {
		pthread_mutex_unlock(&n->lock);
		fuse_reply_err(req, ERANGE);
		return;
	}
	buf = malloc(len ? len : 1);
	if (!buf) {
		pthread_mutex_unlock(&n->lock);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (p = buf, i = 0; i < n->nxattrs; i++) {
		size_t l = strlen(n->xattrs[i].name) + 1;

		memcpy(p, n->xattrs[i].name, l);
		p += l;
	}
	pthread_mutex_unlock(&n->lock);
	fuse_reply_buf(req, buf, len);
	free(buf);
}

static void rs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct node *n = N(req, ino);
	struct xattr *x;
	int err;

	pthread_mutex_lock(&n->lock);
	err = xattr_ns_ok(name);
	if (!err) {
		x = xattr_find(n, name);
		if (!x) {
			err = -ENODATA;
		} else {
			size_t i = (size_t)(x - n->xattrs);

			n->xattr_bytes -= x->size + strlen(x->name) + 1;
			free(x->name);
			free(x->value);
			memmove(x, x + 1, (n->nxattrs - i - 1) * sizeof(*x));
			n->nxattrs--;
			now(&n->ctime);
		}
	}
	pthread_mutex_unlock(&n->lock);
	fuse_reply_err(req, -err);
}

static void rs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct fs *fs = FS(req);
	struct fuse_entry_param e;
	int err;

	err = make_node(req, parent, name, S_IFREG | (mode & 07777), 0, NULL, &e);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	set_handle(fi);
	if (fuse_reply_create(req, &e, fi) != 0)
		forget_one(fs, N(req, e.ino), 1);
}

/* ------------------------------------------------------------ fallocate */

/* Bytes a fallocate may newly allocate. */
static int64_t falloc_need(const struct rm_file *f, int mode, int64_t off,
			   int64_t len)
{
	if (mode & (RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_COLLAPSE_RANGE |
		    RM_FALLOC_FL_INSERT_RANGE | RM_FALLOC_FL_UNSHARE_RANGE))
		return 0;
	return holes_in(f, off, len);	/* mode 0, KEEP_SIZE, ZERO_RANGE */
}

/* fallocate on n with the model's semantics and errno; 0 or -errno.
 * killpriv: apply should_remove_suid() here (ioctl path).  *resized: the
 * new size if it changed although the call failed, else -1 (ext4_insert_range() grows i_size
 * before ext4_ext_shift_extents() refuses to shift past EXT_MAX_BLOCKS,
 * and the model does the same), which the kernel does not learn from an
 * error reply. */
static int do_fallocate(struct fs *fs, struct node *n, int mode, int64_t off,
			int64_t len, bool killpriv, int64_t *resized)
{
	int64_t need, size_before;
	int err;

	*resized = -1;
	pthread_mutex_lock(&n->lock);
	need = falloc_need(n->file, mode, off, len);
	err = reserve(fs, need);
	if (err) {
		/* Full: still report the errno the arguments deserve first
		 * (vfs_fallocate() and the file system validate before they
		 * allocate), found on a throwaway copy. */
		struct rm_file *copy;

		if (rm_file_clone(n->file, &copy) == 0) {
			int e = rm_fallocate(copy, mode, off, len);

			if (e)
				err = e;
			rm_file_free(copy);
		}
		pthread_mutex_unlock(&n->lock);
		return err;
	}
	size_before = rm_size(n->file);
	err = rm_fallocate(n->file, mode, off, len);
	if (err && rm_size(n->file) != size_before)
		*resized = rm_size(n->file);
	account(fs, n);
	unreserve(fs, need);
	if (!err) {
		/* ext4_fallocate() and xfs_file_fallocate() call
		 * file_modified() (mtime and ctime) for every mode; a plain
		 * allocation that leaves the size alone touches only ctime
		 * (ext4_alloc_file_blocks()). */
		if ((mode & ~RM_FALLOC_FL_KEEP_SIZE) == 0 &&
		    rm_size(n->file) == size_before)
			now(&n->ctime);
		else
			touch_mc(n);
		if (killpriv)
			remove_privs(n);
	}
	pthread_mutex_unlock(&n->lock);
	return err;
}

/* A failed fallocate that changed the size anyway (do_fallocate()): the
 * kernel keeps its i_size and attributes after an error reply
 * (fuse_file_fallocate() returns before fuse_write_update_attr() and
 * fuse_invalidate_attr()), so stat() would report the old size until the
 * attribute timeout, and a page fault past the old size (which needs no
 * GETATTR) is a SIGBUS.  Storing the file's last byte (its true value,
 * from the model) makes the kernel take a grown size at once:
 * fuse_notify_store() extends i_size when offset + size passes it
 * (fuse_write_update_attr() wants at least one byte), and leaves the
 * partly stored page not up to date, so it is read again.  The attribute
 * invalidation covers a shrink and the other attributes.  Neither takes
 * the inode lock, which the kernel holds around FUSE_FALLOCATE.  (Found by
 * a 1e6-op difftest run: a refused ext4-profile insert near
 * EXT_MAX_BLOCKS, then an mmap write past the old size: SIGBUS.) */
static void resized_anyway(struct fs *fs, struct node *n, int64_t size)
{
	unsigned char last = 0;
	struct fuse_bufvec one = FUSE_BUFVEC_INIT(1);

	if (size > 0) {
		pthread_mutex_lock(&n->lock);
		if (rm_pread(n->file, &last, 1, size - 1) != 1)
			last = 0;
		pthread_mutex_unlock(&n->lock);
		one.buf[0].mem = &last;
		fuse_lowlevel_notify_store(fs->se, nodeid(fs, n), (off_t)(size - 1), &one, 0);
	}
	fuse_lowlevel_notify_inval_inode(fs->se, nodeid(fs, n), -1, 0);
}

static void rs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off,
			 off_t len, struct fuse_file_info *fi)
{
	struct node *n = N(req, ino);

	(void)fi;
	if (!n->file) {
		fuse_reply_err(req, S_ISDIR(n->mode) ? EISDIR : ENODEV);
		return;
	}
	/* Native insert/collapse only come from a kernel with the project's
	 * FUSE patch, which writes back and invalidates the page cache and
	 * updates i_size itself; the kernel's own privilege drop
	 * (file_modified()) has already run. */
	int64_t resized;
	int err = do_fallocate(FS(req), n, mode, off, len, false, &resized);

	if (resized >= 0)
		resized_anyway(FS(req), n, resized);
	fuse_reply_err(req, -err);
}

static void rs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	struct node *n = N(req, ino);
	int64_t r;

	(void)fi;
	if (!n->file) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pthread_mutex_lock(&n->lock);
	r = rm_lseek(n->file, off, whence);
	pthread_mutex_unlock(&n->lock);
	if (r < 0)
		fuse_reply_err(req, (int)-r);
	else
		fuse_reply_lseek(req, r);
}

/* ---------------------------------------------------------------- ioctls */

/* Drop the kernel's cached pages from `off` (rounded down to a page) to
 * EOF, and its cached attributes.  Called with no lock held: invalidating
 * dirty pages (mmap writes) makes the kernel write them back through
 * FUSE_WRITE first (fuse_launder_folio()), which another worker thread
 * serves and which needs n->lock.  The libfuse rule "do not call it from
 * a related operation on this inode" concerns lookup/setattr/etc., not
 * ioctl, which holds no inode lock in the kernel (fuse_file_ioctl()). */
static void inval(struct fs *fs, struct node *n, int64_t off)
{
	long page = sysconf(_SC_PAGESIZE);

	if (off < 0)
		off = 0;
	off -= off % page;
	fuse_lowlevel_notify_inval_inode(fs->se, nodeid(fs, n), off, 0);
}

static void ioctl_range(fuse_req_t req, struct node *n, unsigned int cmd,
			struct fuse_file_info *fi, const void *in_buf,
			size_t in_bufsz)
{
	struct fs *fs = FS(req);
	struct rs_ioc_range r;
	int mode, err;

	if (in_bufsz != sizeof(r)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(&r, in_buf, sizeof(r));
	if (r.reserved || (cmd != RS_IOC_FALLOCATE && r.mode)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* vfs_fallocate(): the file must be open for writing. */
	if ((open_flags(fi) & O_ACCMODE) == O_RDONLY) {
		fuse_reply_err(req, EBADF);
		return;
	}
	mode = cmd == RS_IOC_INSERT ? RM_FALLOC_FL_INSERT_RANGE :
	       cmd == RS_IOC_COLLAPSE ? RM_FALLOC_FL_COLLAPSE_RANGE : r.mode;
	/* Write back and drop the cached pages that are about to move or be
	 * cleared, so a dirty mmap page cannot be written back later over
	 * the new layout (ext4_insert_range(), ext4_punch_hole() write back
	 * and truncate the page cache before they change the map). */
	if (mode & ~RM_FALLOC_FL_KEEP_SIZE)
		inval(fs, n, r.offset);
	int64_t resized;
	err = do_fallocate(fs, n, mode, r.offset, r.length,
			   !caller_has_fsetid(req), &resized);
	if (!err)
		inval(fs, n, r.offset);
	else if (resized >= 0)
		resized_anyway(fs, n, resized);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_ioctl(req, 0, NULL, 0);
}

static void ioctl_fiemap(fuse_req_t req, struct node *n, const void *in_buf,
			 size_t in_bufsz, size_t out_bufsz)
{
	struct rs_ioc_fiemap *fm;
	struct rm_extent *ext;
	int64_t start, len, max, r;
	uint32_t i;

	if (in_bufsz != sizeof(*fm) || out_bufsz != sizeof(*fm)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	fm = malloc(sizeof(*fm));
	ext = malloc(RS_FIEMAP_MAX * sizeof(*ext));
	if (!fm || !ext) {
		free(fm);
		free(ext);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memcpy(fm, in_buf, sizeof(*fm));
	start = fm->start;
	len = fm->length;
	if (fm->flags || start < 0 || len <= 0) {
		r = -EINVAL;
		goto out;
	}
	pthread_mutex_lock(&n->lock);
	/* fiemap_prep(): start past s_maxbytes is EFBIG, the length is
	 * clipped to s_maxbytes. */
	max = rm_maxbytes(n->file);
	if (start >= max) {
		r = -EFBIG;
	} else {
		if (len > max - start)
			len = max - start;
		r = rm_fiemap(n->file, start, len, ext, RS_FIEMAP_MAX);
	}
	pthread_mutex_unlock(&n->lock);
	if (r < 0)
		goto out;
	memset(fm->ext, 0, sizeof(fm->ext));
	fm->mapped = r;
	fm->count = r > RS_FIEMAP_MAX ? RS_FIEMAP_MAX : (uint32_t)r;
	for (i = 0; i < fm->count; i++) {
		fm->ext[i].logical = ext[i].logical;
		fm->ext[i].length = ext[i].length;
		fm->ext[i].flags = ext[i].flags;
	}
	r = 0;
out:
	if (r < 0)
		fuse_reply_err(req, (int)-r);
	else
		fuse_reply_ioctl(req, 0, fm, sizeof(*fm));
	free(fm);
	free(ext);
}

static void rs_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd,
		     void *arg, struct fuse_file_info *fi, unsigned flags,
		     const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct node *n = N(req, ino);

	(void)arg;
	if ((flags & (FUSE_IOCTL_DIR | FUSE_IOCTL_COMPAT)) || !n->file) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	switch (cmd) {
	case RS_IOC_IDENT: {
		struct rs_ioc_ident id = {
			.magic = RS_IDENT_MAGIC,
			.version = RS_IDENT_VERSION,
			.profile = (uint32_t)rm_profile_of(n->file),
			.blocksize = rm_blocksize(n->file),
			.maxbytes = rm_maxbytes(n->file),
		};

		if (out_bufsz != sizeof(id))
			fuse_reply_err(req, EINVAL);
		else
			fuse_reply_ioctl(req, 0, &id, sizeof(id));
		return;
	}
	case RS_IOC_INSERT:
	case RS_IOC_COLLAPSE:
	case RS_IOC_FALLOCATE:
		ioctl_range(req, n, cmd, fi, in_buf, in_bufsz);
		return;
	case RS_IOC_FIEMAP:
		ioctl_fiemap(req, n, in_buf, in_bufsz, out_bufsz);
		return;
	default:
		fuse_reply_err(req, ENOTTY);
	}
}

static const struct fuse_lowlevel_ops rs_ops = {
	.init = rs_init,
	.destroy = rs_destroy,
	.lookup = rs_lookup,
	.forget = rs_forget,
	.getattr = rs_getattr,
	.setattr = rs_setattr,
	.readlink = rs_readlink,
	.mknod = rs_mknod,
	.mkdir = rs_mkdir,
	.unlink = rs_unlink,
	.rmdir = rs_rmdir,
	.symlink = rs_symlink,
	.rename = rs_rename,
	.link = rs_link,
	.open = rs_open,
	.read = rs_read,
	.write = rs_write,
	.flush = rs_flush,
	.release = rs_release,
	.fsync = rs_fsync,
	.readdir = rs_readdir,
	.statfs = rs_statfs,
	.setxattr = rs_setxattr,
	.getxattr = rs_getxattr,
	.listxattr = rs_listxattr,
	.removexattr = rs_removexattr,
	.create = rs_create,
	.ioctl = rs_ioctl,
	.forget_multi = rs_forget_multi,
	.fallocate = rs_fallocate,
	.readdirplus = rs_readdirplus,
	.lseek = rs_lseek,
};

/* ------------------------------------------------------------------ main */

struct conf {
	char *profile;
	char *blocksize;
	char *size;
	char *timeout;
};

#define RS_OPT(t, p) { t, offsetof(struct conf, p), 0 }
static const struct fuse_opt rs_opts[] = {
	RS_OPT("profile=%s", profile),
	RS_OPT("blocksize=%s", blocksize),
	RS_OPT("size=%s", size),
	RS_OPT("timeout=%s", timeout),
	FUSE_OPT_END
};

static void usage(const char *prog)
{
	printf("usage: %s MOUNTPOINT [-o OPTIONS] [-f] [-d] [-s]\n"
	       "\n"
	       "Mount a file system whose regular files are rangeshift reference-model\n"
	       "files (refmodel): bytes, sizes, errno and extent maps are exactly what\n"
	       "the model says Linux 6.1 ext4 or XFS would give.  Everything lives in\n"
	       "memory and is gone at unmount (fusermount3 -u MOUNTPOINT).\n"
	       "\n"
	       "rangeshift options:\n"
	       "    -o profile=ext4|xfs|bytes  semantics to serve (default ext4)\n"
	       "    -o blocksize=N             block size, power of two 512..65536 (default 4096)\n"
	       "    -o size=BYTES              capacity for file data, suffixes k m g t\n"
	       "                               (default 64g; ENOSPC beyond it)\n"
	       "    -o timeout=SECONDS         kernel entry/attribute cache timeout (default 1)\n"
	       "\n"
	       "Insert and collapse range on a stock kernel: run programs with\n"
	       "LD_PRELOAD=librangeshift-preload.so (fallocate(2) and FS_IOC_FIEMAP are\n"
	       "served through the ioctls of rangeshift_fusefs.h); the extent map is also\n"
	       "readable as the xattr " RS_XATTR_MAP ".\n"
	       "\n", prog);
}

static int parse_size(const char *s, int64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	if (!s || !*s || *s == '-')
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end || v > ((unsigned long long)INT64_MAX >> shift))
		return -EINVAL;
	*out = (int64_t)(v << shift);
	return 0;
}

static int configure(struct fs *fs, const struct conf *c)
{
	struct rm_file *probe;
	int64_t v;

	fs->opts.profile = RM_PROFILE_EXT4;
	fs->opts.blocksize = 4096;
	fs->opts.maxbytes = 0;
	fs->capacity = (int64_t)64 << 30;
	fs->timeout = 1.0;
	if (c->profile && rm_profile_parse(c->profile, &fs->opts.profile) < 0) {
		fprintf(stderr, "rangeshift-fusefs: unknown profile '%s' (ext4, xfs, bytes)\n",
			c->profile);
		return -1;
	}
	if (c->blocksize) {
		if (parse_size(c->blocksize, &v) < 0 || v < 512 || v > 65536 ||
		    (v & (v - 1))) {
			fprintf(stderr, "rangeshift-fusefs: bad blocksize '%s' (power of two, 512..65536)\n",
				c->blocksize);
			return -1;
		}
		fs->opts.blocksize = (uint32_t)v;
	}
	if (c->size) {
		if (parse_size(c->size, &v) < 0 || v < fs->opts.blocksize) {
			fprintf(stderr, "rangeshift-fusefs: bad size '%s' (bytes, suffix k m g t)\n",
				c->size);
			return -1;
		}
		fs->capacity = v;
	}
	if (c->timeout) {
		char *end;
		double t = strtod(c->timeout, &end);

		if (*end || end == c->timeout || !(t >= 0 && t <= 3600)) {
			fprintf(stderr, "rangeshift-fusefs: bad timeout '%s' (seconds, 0..3600)\n",
				c->timeout);
			return -1;
		}
		fs->timeout = t;
	}
	if (rm_file_new(&fs->opts, &probe) < 0) {
		fprintf(stderr, "rangeshift-fusefs: the model rejects profile/blocksize\n");
		return -1;
	}
	rm_file_free(probe);
	return 0;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts;
	struct fuse_loop_config *cfg;
	struct conf conf = { 0 };
	struct fs fs;
	int ret = 1;

	memset(&fs, 0, sizeof(fs));
	if (fuse_parse_cmdline(&args, &opts) != 0)
		return 2;
	if (opts.show_help) {
		usage(argv[0]);
		printf("FUSE options:\n");
		fuse_cmdline_help();
		fuse_lowlevel_help();
		ret = 0;
		goto out_args;
	}
	if (opts.show_version) {
		printf("rangeshift-fusefs (ioctl ABI version %u)\n", RS_IDENT_VERSION);
		fuse_lowlevel_version();
		ret = 0;
		goto out_args;
	}
	if (!opts.mountpoint) {
		fprintf(stderr, "usage: %s MOUNTPOINT [-o profile=ext4|xfs|bytes,blocksize=N,size=BYTES] [-f] [-d]\n"
			"       %s --help\n", argv[0], argv[0]);
		ret = 2;
		goto out_args;
	}
	if (fuse_opt_parse(&args, &conf, rs_opts, NULL) == -1 ||
	    configure(&fs, &conf) < 0) {
		ret = 2;
		goto out_conf;
	}
	/* The kernel checks permissions (we keep no credentials logic), and
	 * /proc/mounts names the file system. */
	if (fuse_opt_add_arg(&args, "-odefault_permissions,fsname=rangeshift,subtype=rangeshift") == -1)
		goto out_conf;

	pthread_rwlock_init(&fs.ns, NULL);
	pthread_mutex_init(&fs.space, NULL);
	pthread_mutex_init(&fs.list, NULL);
	fs.all.next = fs.all.prev = &fs.all;
	fs.root = node_new(&fs, S_IFDIR | 0755, getuid(), getgid());
	if (!fs.root)
		goto out_conf;
	fs.root->nlink = 2;
	fs.root->nlookup = 1;

	fs.se = fuse_session_new(&args, &rs_ops, sizeof(rs_ops), &fs);
	if (!fs.se)
		goto out_fs;
	if (fuse_set_signal_handlers(fs.se) != 0)
		goto out_session;
	if (fuse_session_mount(fs.se, opts.mountpoint) != 0)
		goto out_signals;
	fuse_daemonize(opts.foreground);
	if (opts.singlethread) {
		ret = fuse_session_loop(fs.se);
	} else {
		cfg = fuse_loop_cfg_create();
		if (!cfg) {
			ret = 1;
		} else {
			fuse_loop_cfg_set_clone_fd(cfg, opts.clone_fd);
			fuse_loop_cfg_set_max_threads(cfg, opts.max_threads);
			ret = fuse_session_loop_mt(fs.se, cfg);
			fuse_loop_cfg_destroy(cfg);
		}
	}
	ret = ret ? 1 : 0;
	fuse_session_unmount(fs.se);
out_signals:
	fuse_remove_signal_handlers(fs.se);
out_session:
	fuse_session_destroy(fs.se);
out_fs:
	/* destroy() ran if the kernel sent DESTROY; free what is left. */
	rs_destroy(&fs);
	pthread_rwlock_destroy(&fs.ns);
	pthread_mutex_destroy(&fs.space);
	pthread_mutex_destroy(&fs.list);
out_conf:
	free(conf.profile);
	free(conf.blocksize);
	free(conf.size);
	free(conf.timeout);
out_args:
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	return ret;
}
