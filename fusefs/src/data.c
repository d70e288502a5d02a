/* SPDX-License-Identifier: MIT */
/*
 * data.c - file content of rangeshift-fusefs through the ordinary calls:
 * open, read, write, flush, release, fsync and lseek (SEEK_DATA/SEEK_HOLE
 * from the model).  Writes go through to the model (no writeback cache,
 * see ranges.c); space is reserved before a write so that a full file
 * system never half-applies one.  Cached pages outlive an open unless
 * keep_cache=0 (set_handle()).
 */
#include <errno.h>
#include <stdlib.h>

#include "fs.h"

void set_handle(const struct fs *fs, struct fuse_file_info *fi)
{
	fi->fh = (uint64_t)(unsigned int)fi->flags;
	/* keep_cache: the kernel keeps a file's cached pages across open(2)
	 * (fuse_finish_open() drops them otherwise).  Safe because every
	 * change to a file's data either comes through this kernel's page
	 * cache (write, mmap, truncate, and fallocate, whose punch and zero
	 * fuse_file_fallocate() and the project's FUSE patch for insert and
	 * collapse drop from the cache themselves) or is done by the server
	 * behind the kernel's back, the ioctls, which invalidate the pages
	 * before they reply (ranges.c). */
	fi->keep_cache = fs->keep_cache;
}

int open_flags(const struct fuse_file_info *fi)
{
	return (int)(unsigned int)fi->fh;
}

void rs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n = N(req, ino);

	if (!S_ISREG(n->mode)) {
		fuse_reply_err(req, S_ISDIR(n->mode) ? EISDIR : ENXIO);
		return;
	}
	set_handle(FS(req), fi);
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

void rs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
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

void rs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
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

void rs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

void rs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

void rs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
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


void rs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
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
