/* SPDX-License-Identifier: MIT */
/*
 * ranges.c - the range operations of rangeshift-fusefs: fallocate(2) as
 * the kernel forwards it (FUSE_FALLOCATE), and the ioctls of
 * rangeshift_fusefs.h (insert, collapse, any fallocate mode, FIEMAP),
 * which a stock kernel's FUSE cannot forward as fallocate.
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

void rs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off,
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

void rs_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd,
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

