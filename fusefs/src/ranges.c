/* SPDX-License-Identifier: MIT */
/*
 * ranges.c - the range operations of rangeshift-fusefs: fallocate(2) as
 * the kernel forwards it (FUSE_FALLOCATE), and the ioctls of
 * rangeshift_fusefs.h (insert, collapse, any fallocate mode, FIEMAP),
 * which a stock kernel's FUSE cannot forward as fallocate.
 *
 * Cache policy: no writeback cache.  With FUSE_CAP_WRITEBACK_CACHE the
 * kernel would own i_size, mtime and ctime (fuse_get_cache_mask(): a
 * GETATTR never lowers its i_size), so a collapse done behind its back
 * through an ioctl could not be told (notify_store only grows a size);
 * write(2) would return before the model saw the data, so ENOSPC would
 * lose acknowledged writes instead of failing them as ext4 does; and
 * write-back of whole pages would write blocks the program never wrote
 * when the block size is below the page size (FIEMAP would differ).
 * Write-through keeps the server the only authority; after every change
 * the kernel cannot see (the ioctls) the server invalidates the inode's
 * pages and attributes with fuse_lowlevel_notify_inval_inode() before
 * replying, which is also what makes keep_cache (data.c) safe.
 *
 * suid/sgid: the ioctls, which the kernel does not treat as writes, apply
 * should_remove_suid()'s rule here with the caller's capabilities read from
 * /proc/PID/status (the kernel does it for write, truncate and fallocate:
 * see rs_init() in main.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "rangeshift_fusefs.h"

/* ------------------------------------------------------------ fallocate */

/* Bytes a fallocate may newly allocate. */
static int64_t falloc_need(const struct rm_file *f, int mode, int64_t off,
			   int64_t len)
{
	if (mode & (RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_COLLAPSE_RANGE |
		    RM_FALLOC_FL_INSERT_RANGE))
		return 0;
	/* mode 0, KEEP_SIZE, ZERO_RANGE, and UNSHARE_RANGE, which allocates
	 * the range after unsharing it (xfs_file_fallocate():
	 * xfs_reflink_unshare(), then xfs_alloc_file_space()); counting it as
	 * free let one call allocate past size= (found by fuzz_handlers). */
	return holes_in(f, off, len);
}

/* Sizes around a fallocate: what the kernel may have to be told. */
struct resize {
	int64_t before, after;
};

/* fallocate on n with the model's semantics and errno; 0 or -errno.
 * killpriv: apply should_remove_suid() here (ioctl path).  *rs: the size
 * before and after, also when the call failed (ext4_insert_range() grows
 * i_size before ext4_ext_shift_extents() refuses to shift past
 * EXT_MAX_BLOCKS, and the model does the same), which the kernel does not
 * learn from an error reply. */
static int do_fallocate(struct fs *fs, struct node *n, int mode, int64_t off,
			int64_t len, bool killpriv, struct resize *rs)
{
	int64_t need;
	int err;

	pthread_mutex_lock(&n->lock);
	rs->before = rs->after = rm_size(n->file);
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
	err = rm_fallocate(n->file, mode, off, len);
	rs->after = rm_size(n->file);
	account(fs, n);
	unreserve(fs, need);
	if (!err) {
		/* ext4_fallocate() and xfs_file_fallocate() call
		 * file_modified() (mtime and ctime) for every mode; a plain
		 * allocation that leaves the size alone touches only ctime
		 * (ext4_alloc_file_blocks()). */
		if ((mode & ~RM_FALLOC_FL_KEEP_SIZE) == 0 && rs->after == rs->before)
			now(&n->ctime);
		else
			touch_mc(n);
		if (killpriv)
			remove_privs(n);
	}
	pthread_mutex_unlock(&n->lock);
	return err;
}

/* Tell the kernel what changed behind its back: drop its cached pages
 * from `off` (rounded down to a page; off < 0: none) to EOF and its cached
 * attributes, and, if the file grew, its new size.
 *
 * The size: the kernel's i_size bounds page faults without asking the
 * server (filemap_fault() is a SIGBUS past it), and an invalidation only
 * marks the attributes stale.  Storing the file's last byte (its true
 * value, from the model) makes the kernel take a grown size at once:
 * fuse_notify_store() extends i_size when offset + size passes it
 * (fuse_write_update_attr() wants at least one byte), and leaves the
 * partly stored page not up to date, so it is read again.  A shrink cannot
 * be pushed (notify_store never lowers i_size): the kernel learns it at
 * its next GETATTR, which the stale attributes force on stat(2) (the
 * preload library fstat()s after each call for that reason); until then
 * a read past the new EOF comes back short (fuse_short_read() lowers
 * i_size).  Neither notification takes the inode lock, which the kernel
 * holds around FUSE_FALLOCATE.  (Found by a 1e6-op difftest run: a
 * refused ext4-profile insert near EXT_MAX_BLOCKS, then an mmap write past
 * the old size: SIGBUS.)
 *
 * Invalidating dirty pages (mmap writes) makes the kernel write them back
 * through FUSE_WRITE first (fuse_launder_folio()) and wait for the reply,
 * so this must never run on a worker thread and with no lock held: see
 * the shifter below and fs.h.  Without a session (the fuzz harness) there
 * is no kernel to tell. */
static void kernel_sync(struct fs *fs, struct node *n, int64_t off,
			const struct resize *rs)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char last = 0;
	struct fuse_bufvec one = FUSE_BUFVEC_INIT(1);

	if (!fs->se)
		return;
	if (off >= 0)
		off -= off % page;
	fuse_lowlevel_notify_inval_inode(fs->se, nodeid(fs, n), off < 0 ? -1 : off, 0);
	if (rs->after <= rs->before || rs->after <= 0)
		return;
	pthread_mutex_lock(&n->lock);
	if (rm_pread(n->file, &last, 1, rm_size(n->file) - 1) != 1)
		last = 0;
	pthread_mutex_unlock(&n->lock);
	one.buf[0].mem = &last;
	fuse_lowlevel_notify_store(fs->se, nodeid(fs, n), (off_t)(rs->after - 1), &one, 0);
}

void rs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off,
		  off_t len, struct fuse_file_info *fi)
{
	struct node *n = N(req, ino);
	struct resize rs;
	int err;

	(void)fi;
	if (!n->file) {
		fuse_reply_err(req, S_ISDIR(n->mode) ? EISDIR : ENODEV);
		return;
	}
	/* Native insert/collapse only come from a kernel with the project's
	 * FUSE patch, which writes back and invalidates the page cache and
	 * updates i_size itself on success; the kernel's own privilege drop
	 * (file_modified()) has already run.  A failed call that changed the
	 * size anyway must be told (attributes only: the kernel wrote back
	 * and holds the inode lock, so no page is dirty). */
	err = do_fallocate(FS(req), n, mode, off, len, false, &rs);
	if (err && rs.after != rs.before)
		kernel_sync(FS(req), n, -1, &rs);
	fuse_reply_err(req, -err);
}

/* ---------------------------------------------------------------- ioctls */

/* Check an RS_IOC_INSERT/COLLAPSE/FALLOCATE argument; 0 with *r and the
 * fallocate *mode, or -errno. */
static int range_parse(unsigned int cmd, int oflags, const void *in,
		       size_t insz, struct rs_ioc_range *r, int *mode)
{
	if (insz != sizeof(*r))
		return -EINVAL;
	memcpy(r, in, sizeof(*r));
	if (r->reserved || (cmd != RS_IOC_FALLOCATE && r->mode))
		return -EINVAL;
	/* vfs_fallocate(): the file must be open for writing. */
	if ((oflags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	*mode = cmd == RS_IOC_INSERT ? RM_FALLOC_FL_INSERT_RANGE :
		cmd == RS_IOC_COLLAPSE ? RM_FALLOC_FL_COLLAPSE_RANGE : r->mode;
	return 0;
}

/* A range ioctl with the kernel kept coherent; 0 or -errno.  May wait for
 * the kernel's write-back of dirty pages: never on a worker thread. */
static int range_apply(struct fs *fs, struct node *n, int mode,
		       const struct rs_ioc_range *r, bool killpriv)
{
	struct resize rs;
	int err;

	/* Write back and drop the cached pages that are about to move or be
	 * cleared, so a dirty mmap page cannot be written back later over
	 * the new layout (ext4_insert_range(), ext4_punch_hole() write back
	 * and truncate the page cache before they change the map). */
	if ((mode & ~RM_FALLOC_FL_KEEP_SIZE) && fs->se)
		fuse_lowlevel_notify_inval_inode(fs->se, nodeid(fs, n),
			r->offset < 0 ? 0 : r->offset - r->offset % sysconf(_SC_PAGESIZE), 0);
	err = do_fallocate(fs, n, mode, r->offset, r->length, killpriv, &rs);
	if (!err)
		kernel_sync(fs, n, r->offset < 0 ? 0 : r->offset, &rs);
	else if (rs.after != rs.before)
		kernel_sync(fs, n, -1, &rs);
	return err;
}

/* RS_IOC_FIEMAP into fm (in place); 0 or -errno. */
static int fiemap_fill(struct node *n, struct rs_ioc_fiemap *fm)
{
	struct rm_extent *ext;
	int64_t start = fm->start, len = fm->length, max, r;
	uint32_t i;

	if (fm->flags || start < 0 || len <= 0)
		return -EINVAL;
	ext = malloc(RS_FIEMAP_MAX * sizeof(*ext));
	if (!ext)
		return -ENOMEM;
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
	if (r >= 0) {
		memset(fm->ext, 0, sizeof(fm->ext));
		fm->mapped = r;
		fm->count = r > RS_FIEMAP_MAX ? RS_FIEMAP_MAX : (uint32_t)r;
		for (i = 0; i < fm->count; i++) {
			fm->ext[i].logical = ext[i].logical;
			fm->ext[i].length = ext[i].length;
			fm->ext[i].flags = ext[i].flags;
		}
		r = 0;
	}
	free(ext);
	return (int)r;
}

int ioctl_call(struct fs *fs, struct node *n, unsigned int cmd, int oflags,
	       bool killpriv, const void *in, size_t insz, void *out,
	       size_t outsz)
{
	struct rs_ioc_range r;
	int mode, err;

	if (!n->file)
		return -ENOTTY;
	switch (cmd) {
	case RS_IOC_IDENT: {
		struct rs_ioc_ident id = {
			.magic = RS_IDENT_MAGIC,
			.version = RS_IDENT_VERSION,
			.profile = (uint32_t)rm_profile_of(n->file),
			.blocksize = rm_blocksize(n->file),
			.maxbytes = rm_maxbytes(n->file),
		};

		if (outsz != sizeof(id))
			return -EINVAL;
		memcpy(out, &id, sizeof(id));
		return (int)sizeof(id);
	}
	case RS_IOC_INSERT:
	case RS_IOC_COLLAPSE:
	case RS_IOC_FALLOCATE:
		err = range_parse(cmd, oflags, in, insz, &r, &mode);
		return err ? err : range_apply(fs, n, mode, &r, killpriv);
	case RS_IOC_FIEMAP:
		if (insz != sizeof(struct rs_ioc_fiemap) || outsz != insz)
			return -EINVAL;
		memcpy(out, in, insz);
		err = fiemap_fill(n, out);
		return err ? err : (int)outsz;
	default:
		return -ENOTTY;
	}
}

/* ---------------------------------------------------------------- shifter */

/* The range ioctls run on the shifter thread, not on a FUSE worker: their
 * page-cache invalidation can make the kernel write dirty pages back
 * through FUSE_WRITE and wait for the reply (fuse_launder_folio()), which
 * only a worker can give.  Done on a worker, that wait is on the worker
 * itself (-s: the only one; multi-threaded: all of them, once as many
 * such ioctls are in flight as there are workers) and the mount hangs,
 * unkillably.  Here the worker queues the request and goes back to the
 * loop, free to serve the write-back; the shifter replies when the shift
 * is done and the kernel's caches are coherent, so the ioctl still
 * returns only then.  One thread: shifts are serialised anyway by the
 * file's lock, and each waits only for the workers. */
struct shift_job {
	struct shift_job *next;
	fuse_req_t req;
	struct node *n;		/* pinned by the caller's open file */
	struct rs_ioc_range r;
	int mode;
	bool killpriv;
};

static void *shifter_main(void *arg)
{
	struct fs *fs = arg;
	struct shifter *sh = &fs->shifter;
	struct shift_job *j;
	bool stopping;
	int err;

	for (;;) {
		pthread_mutex_lock(&sh->lock);
		while (!sh->head && !sh->stop)
			pthread_cond_wait(&sh->cond, &sh->lock);
		j = sh->head;
		if (j) {
			sh->head = j->next;
			if (!sh->head)
				sh->tail = &sh->head;
		}
		stopping = sh->stop;
		pthread_mutex_unlock(&sh->lock);
		if (!j)
			return NULL;
		/* Stopping: the workers are gone, nothing could answer a
		 * write-back. */
		err = stopping ? -ENOTCONN :
		      range_apply(fs, j->n, j->mode, &j->r, j->killpriv);
		if (err)
			fuse_reply_err(j->req, -err);
		else
			fuse_reply_ioctl(j->req, 0, NULL, 0);
		free(j);
	}
}

int shifter_start(struct fs *fs)
{
	struct shifter *sh = &fs->shifter;

	pthread_mutex_init(&sh->lock, NULL);
	pthread_cond_init(&sh->cond, NULL);
	sh->head = NULL;
	sh->tail = &sh->head;
	sh->stop = false;
	if (pthread_create(&sh->thread, NULL, shifter_main, fs) != 0) {
		pthread_cond_destroy(&sh->cond);
		pthread_mutex_destroy(&sh->lock);
		return -1;
	}
	sh->running = true;
	return 0;
}

void shifter_stop(struct fs *fs)
{
	struct shifter *sh = &fs->shifter;

	if (!sh->running)
		return;
	pthread_mutex_lock(&sh->lock);
	sh->stop = true;
	pthread_cond_signal(&sh->cond);
	pthread_mutex_unlock(&sh->lock);
	pthread_join(sh->thread, NULL);
	pthread_cond_destroy(&sh->cond);
	pthread_mutex_destroy(&sh->lock);
	sh->running = false;
}

/* Queue a range ioctl for the shifter, which replies to req. */
static bool shifter_queue(struct fs *fs, fuse_req_t req, struct node *n,
			  const struct rs_ioc_range *r, int mode, bool killpriv)
{
	struct shifter *sh = &fs->shifter;
	struct shift_job *j = calloc(1, sizeof(*j));

	if (!j)
		return false;
	j->req = req;
	j->n = n;
	j->r = *r;
	j->mode = mode;
	j->killpriv = killpriv;
	pthread_mutex_lock(&sh->lock);
	*sh->tail = j;
	sh->tail = &j->next;
	pthread_cond_signal(&sh->cond);
	pthread_mutex_unlock(&sh->lock);
	return true;
}

void rs_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
	      struct fuse_file_info *fi, unsigned flags, const void *in_buf,
	      size_t in_bufsz, size_t out_bufsz)
{
	struct fs *fs = FS(req);
	struct node *n = N(req, ino);
	struct rs_ioc_range r;
	void *out = NULL;
	int mode, ret;

	(void)arg;
	if ((flags & (FUSE_IOCTL_DIR | FUSE_IOCTL_COMPAT)) || !n->file) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (cmd == RS_IOC_INSERT || cmd == RS_IOC_COLLAPSE || cmd == RS_IOC_FALLOCATE) {
		ret = range_parse(cmd, open_flags(fi), in_buf, in_bufsz, &r, &mode);
		if (!ret && fs->shifter.running) {
			if (!shifter_queue(fs, req, n, &r, mode, !caller_has_fsetid(req)))
				fuse_reply_err(req, ENOMEM);
			return;
		}
		if (!ret)	/* no shifter (not served by main.c) */
			ret = range_apply(fs, n, mode, &r, !caller_has_fsetid(req));
		if (ret)
			fuse_reply_err(req, -ret);
		else
			fuse_reply_ioctl(req, 0, NULL, 0);
		return;
	}
	if (out_bufsz && !(out = malloc(out_bufsz))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	ret = ioctl_call(fs, n, cmd, open_flags(fi), false, in_buf, in_bufsz,
			 out, out_bufsz);
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_ioctl(req, 0, out, (size_t)ret);
	free(out);
}
