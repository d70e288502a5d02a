/* SPDX-License-Identifier: MIT */
/*
 * namespace.c - the names of rangeshift-fusefs: lookup and forget,
 * attributes (getattr, setattr), creating nodes (mknod, mkdir, symlink,
 * create, link), removing and renaming them, readdir(plus) and statfs.
 * Directories are arrays of entries kept in cookie order, so a readdir
 * offset (the cookie) survives removals.  Everything here runs under
 * fs->ns (fs.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "fs.h"
#include "rm_vec.h"

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
	int err = RM_VEC_RESERVE(&dir->ents, &dir->cap, dir->nents + 1, 8);
	char *copy;

	if (err)
		return err;
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

static int check_name(const char *name)
{
	if (strlen(name) > NAME_MAX_LEN)
		return -ENAMETOOLONG;
	return 0;
}

/* ------------------------------------------------------------ handlers */

void rs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
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

void rs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	forget_one(FS(req), N(req, ino), nlookup);
	fuse_reply_none(req);
}

void rs_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		forget_one(FS(req), N(req, forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

void rs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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

void rs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
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

void rs_readlink(fuse_req_t req, fuse_ino_t ino)
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

void rs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
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

void rs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	struct fuse_entry_param e;

	reply_made(req, make_node(req, parent, name, S_IFDIR | (mode & 07777),
				  0, NULL, &e), &e);
}

void rs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
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

void rs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, false);
}

void rs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
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

/* The parent and link count updates of moving directory src from od to nd. */
static void move_dir(struct node *src, struct node *od, struct node *nd)
{
	if (!S_ISDIR(src->mode) || od == nd)
		return;
	src->parent = nd;
	adjust_nlink(od, -1);
	adjust_nlink(nd, +1);
}

/* RENAME_EXCHANGE of the entries se (od) and de (nd). */
static void rename_exchange(struct node *od, struct dent *se, struct node *nd,
			    struct dent *de)
{
	struct node *src = se->node, *dst = de->node;

	se->node = dst;
	de->node = src;
	move_dir(src, od, nd);
	move_dir(dst, nd, od);
	adjust_nlink(od, 0);
	adjust_nlink(nd, 0);
	touch_c(src);
	touch_c(dst);
}

/* Plain rename of od/name to nd/newname, replacing dst if there is one;
 * 0 or an errno.  *victim: dst if it lost its last link (to be freed
 * after fs->ns is dropped). */
static int rename_move(struct fs *fs, struct node *od, const char *name,
		       struct node *nd, const char *newname, struct dent *de,
		       struct node **victim)
{
	struct dent *se = dir_find(od, name);
	struct node *src = se->node, *dst = de ? de->node : NULL;

	if (dst) {
		if (S_ISDIR(src->mode) && !S_ISDIR(dst->mode))
			return ENOTDIR;
		if (!S_ISDIR(src->mode) && S_ISDIR(dst->mode))
			return EISDIR;
		if (S_ISDIR(dst->mode) && dst->nents)
			return ENOTEMPTY;
		de->node = src;
		if (S_ISDIR(dst->mode))
			adjust_nlink(nd, -1);
	} else {
		int e = dir_add(nd, newname, src);

		if (e)
			return -e;
		se = dir_find(od, name);	/* dir_add may have moved it */
	}
	dir_remove(od, se);
	move_dir(src, od, nd);
	adjust_nlink(od, 0);
	adjust_nlink(nd, 0);
	touch_c(src);		/* ext4_rename() updates the source's ctime */
	if (dst && drop_link(fs, dst))
		*victim = dst;
	return 0;
}

/* The checks of vfs_rename() that need both entries; 0, -1 for "same
 * inode, do nothing" (POSIX), or an errno. */
static int rename_check(struct node *od, struct node *nd, struct node *src,
			struct node *dst, unsigned int flags)
{
	if ((flags & RENAME_NOREPLACE) && dst)
		return EEXIST;
	if ((flags & RENAME_EXCHANGE) && !dst)
		return ENOENT;
	if (src == dst)
		return -1;
	/* A directory may not move below itself (lock_rename()'s trap). */
	if ((S_ISDIR(src->mode) && is_ancestor(src, nd)) ||
	    ((flags & RENAME_EXCHANGE) && S_ISDIR(dst->mode) &&
	     is_ancestor(dst, od)))
		return EINVAL;
	return 0;
}

/* rename(2) and renameat2(2) with RENAME_NOREPLACE / RENAME_EXCHANGE; the
 * checks are those of vfs_rename() and ext4_rename(). */
void rs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
	       fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct fs *fs = FS(req);
	struct node *od = N(req, parent), *nd = N(req, newparent);
	struct node *victim = NULL;
	struct dent *se, *de;
	int err;

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
	de = dir_find(nd, newname);
	if (!se)
		err = ENOENT;
	else
		err = rename_check(od, nd, se->node, de ? de->node : NULL, flags);
	if (err < 0)
		err = 0;
	else if (!err && (flags & RENAME_EXCHANGE))
		rename_exchange(od, se, nd, de);
	else if (!err)
		err = rename_move(fs, od, name, nd, newname, de, &victim);
	pthread_rwlock_unlock(&fs->ns);
	if (victim)
		node_free(fs, victim);
	fuse_reply_err(req, err);
}

void rs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
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
void rs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
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
	set_handle(fs, fi);
	if (fuse_reply_create(req, &e, fi) != 0)
		forget_one(fs, N(req, e.ino), 1);
}


/* A readdir reply being filled: buf of size bytes, rem left at p. */
struct dirbuf {
	fuse_req_t req;
	char *buf, *p;
	size_t size, rem;
	bool plus;
	struct node **given;	/* readdirplus: lookups handed out */
	size_t ngiven;
};

/* Add one entry; false if it did not fit (nothing added). */
static bool db_add(struct dirbuf *db, const char *name,
		   struct fuse_entry_param *e, off_t next)
{
	size_t len;

	if (db->plus)
		len = fuse_add_direntry_plus(db->req, db->p, db->rem, name, e, next);
	else
		len = fuse_add_direntry(db->req, db->p, db->rem, name, &e->attr, next);
	if (len > db->rem)
		return false;
	db->p += len;
	db->rem -= len;
	return true;
}

/* "." and ".." (the kernel takes no lookup reference for them); returns
 * the offset reached, or -1 if the buffer is full. */
static off_t db_dots(struct dirbuf *db, struct node *dir, off_t off)
{
	for (; off < 2; off++) {
		struct fuse_entry_param e;
		struct node *n = off == 0 ? dir : (dir->parent ? dir->parent : dir);

		memset(&e, 0, sizeof(e));
		e.attr.st_ino = n->ino;
		e.attr.st_mode = S_IFDIR;
		if (!db_add(db, off == 0 ? "." : "..", &e, off + 1))
			return -1;
	}
	return off;
}

/* Index of the first entry with a cookie above off (entries are in
 * cookie order). */
static size_t dir_seek(const struct node *dir, off_t off)
{
	size_t lo = 0, hi = dir->nents;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (dir->ents[mid].cookie <= (uint64_t)off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Entries from index i on, while they fit (fs->ns held shared). */
static void db_entries(struct dirbuf *db, const struct fs *fs,
		       struct node *dir, size_t i)
{
	for (; i < dir->nents; i++) {
		struct dent *d = &dir->ents[i];
		struct fuse_entry_param e;
		bool fit;

		pthread_mutex_lock(&d->node->lock);
		fill_entry(fs, d->node, &e);
		fit = db_add(db, d->name, &e, (off_t)d->cookie);
		if (fit && db->plus) {
			d->node->nlookup++;
			db->given[db->ngiven++] = d->node;
		}
		pthread_mutex_unlock(&d->node->lock);
		if (!fit)
			break;
	}
}

static void rs_readdir_common(fuse_req_t req, fuse_ino_t ino, size_t size,
			      off_t off, bool plus)
{
	struct fs *fs = FS(req);
	struct node *dir = N(req, ino);
	struct dirbuf db = { .req = req, .size = size, .rem = size, .plus = plus };
	size_t i;
	int err = 0;

	db.buf = db.p = malloc(size ? size : 1);
	if (!db.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_rwlock_rdlock(&fs->ns);
	if (!S_ISDIR(dir->mode)) {
		err = ENOTDIR;
	} else if ((off = db_dots(&db, dir, off)) >= 0) {
		i = dir_seek(dir, off);
		if (plus && i < dir->nents) {
			db.given = malloc((dir->nents - i) * sizeof(*db.given));
			/* not a short listing: the kernel would take it for the end */
			if (!db.given)
				err = ENOMEM;
		}
		if (!err)
			db_entries(&db, fs, dir, i);
	}
	pthread_rwlock_unlock(&fs->ns);
	if (err) {
		fuse_reply_err(req, err);
	} else if (fuse_reply_buf(req, db.buf, size - db.rem) != 0) {
		/* If the kernel never got the entries (interrupted request), it
		 * holds none of the lookups taken for them. */
		for (i = 0; i < db.ngiven; i++)
			forget_one(fs, db.given[i], 1);
	}
	free(db.given);
	free(db.buf);
}

void rs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)fi;
	rs_readdir_common(req, ino, size, off, false);
}

void rs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	rs_readdir_common(req, ino, size, off, true);
}

void rs_statfs(fuse_req_t req, fuse_ino_t ino)
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
