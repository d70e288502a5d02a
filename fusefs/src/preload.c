/* SPDX-License-Identifier: MIT */
/*
 * preload.c - librangeshift-preload.so: lets unmodified programs use insert
 * range, collapse range and FIEMAP on rangeshift-fusefs files on a stock
 * kernel, whose FUSE module refuses them before the server sees them.
 *
 * Use: LD_PRELOAD=librangeshift-preload.so xfs_io -c "finsert 4k 8k" FILE
 *
 * fallocate()/fallocate64(): the real call first; only when it fails with
 * EOPNOTSUPP (fuse_file_fallocate() refuses every mode but KEEP_SIZE,
 * PUNCH_HOLE and ZERO_RANGE) on a file that is on a FUSE mount
 * (fstatfs f_type FUSE_SUPER_MAGIC) and answers RS_IOC_IDENT, the same
 * request goes to the server as RS_IOC_FALLOCATE, and its result (the
 * model's errno) is returned.  On a kernel with the project's FUSE patch
 * the real call succeeds and nothing else happens.
 *
 * ioctl(FS_IOC_FIEMAP): likewise, on EOPNOTSUPP/ENOTTY (the VFS has no
 * ->fiemap for FUSE, ioctl_fiemap()) on such a file, the request is
 * answered from RS_IOC_FIEMAP, paging through the map, with the checks
 * and flag handling of ioctl_fiemap() and fiemap_prep().
 *
 * posix_fallocate() is not intercepted: it only uses mode 0, which FUSE
 * forwards, and glibc calls the syscall directly.  Every other call, file
 * and mode is untouched.  The only state is the pointers to the real
 * functions, resolved once with pthread_once().
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "rangeshift_fusefs.h"

#define EXPORT __attribute__((visibility("default")))

typedef int (*fallocate_fn)(int, int, off_t, off_t);
typedef int (*ioctl_fn)(int, unsigned long, ...);

static fallocate_fn real_fallocate, real_fallocate64;
static ioctl_fn real_ioctl;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
	real_fallocate = (fallocate_fn)dlsym(RTLD_NEXT, "fallocate");
	real_fallocate64 = (fallocate_fn)dlsym(RTLD_NEXT, "fallocate64");
	real_ioctl = (ioctl_fn)dlsym(RTLD_NEXT, "ioctl");
	if (!real_fallocate64)
		real_fallocate64 = real_fallocate;
}

/* Is fd a regular file served by rangeshift-fusefs?  Only ever asked after
 * the kernel refused a request, so ordinary calls pay nothing. */
static int is_ours(int fd)
{
	struct rs_ioc_ident id;
	struct statfs sfs;

	if (fstatfs(fd, &sfs) != 0 || sfs.f_type != RS_FUSE_SUPER_MAGIC)
		return 0;
	memset(&id, 0, sizeof(id));
	if (real_ioctl(fd, RS_IOC_IDENT, &id) != 0)
		return 0;
	return id.magic == RS_IDENT_MAGIC && id.version == RS_IDENT_VERSION;
}

static int emulate_fallocate(int fd, int mode, off_t off, off_t len)
{
	struct rs_ioc_range r = { .offset = off, .length = len, .mode = mode };

	struct stat st;
	int ret, saved;

	/* Dirty pages of a shared mapping must reach the server before the
	 * data under them moves (ext4_insert_range() writes back first); the
	 * server also writes back and invalidates (from a thread of its own),
	 * this makes it cheap. */
	if (mode & (FALLOC_FL_INSERT_RANGE | FALLOC_FL_COLLAPSE_RANGE))
		fdatasync(fd);
	ret = real_ioctl(fd, RS_IOC_FALLOCATE, &r);
	/* The server pushes a grown size into the kernel before replying, but
	 * cannot push a smaller one: its attributes are stale, so this
	 * GETATTR makes the kernel take the new size now (a collapse), and a
	 * mapping past the new EOF faults as on ext4. */
	saved = errno;
	fstat(fd, &st);
	errno = saved;
	return ret;
}

static int do_fallocate(fallocate_fn fn, int fd, int mode, off_t off, off_t len)
{
	int saved, ret;

	pthread_once(&once, resolve);
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	ret = fn(fd, mode, off, len);
	if (ret == 0 || errno != EOPNOTSUPP)
		return ret;
	saved = errno;
	if (!is_ours(fd)) {
		errno = saved;
		return ret;
	}
	return emulate_fallocate(fd, mode, off, len);
}

EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
	pthread_once(&once, resolve);
	return do_fallocate(real_fallocate, fd, mode, off, len);
}

EXPORT int fallocate64(int fd, int mode, off_t off, off_t len)
{
	pthread_once(&once, resolve);
	return do_fallocate(real_fallocate64, fd, mode, off, len);
}

/* FS_IOC_FIEMAP from RS_IOC_FIEMAP.  Returns 0 or -errno. */
static int emulate_fiemap(int fd, struct fiemap *fm)
{
	struct rs_ioc_fiemap *page;
	const uint32_t supported = FIEMAP_FLAG_SYNC;
	uint64_t start = fm->fm_start, len = fm->fm_length, end, cur;
	uint32_t max = fm->fm_extent_count, filled = 0, i;
	int err = 0;

	/* ioctl_fiemap(): an absurd extent count is EINVAL. */
	if (max > UINT32_MAX / sizeof(struct fiemap_extent))
		return -EINVAL;
	/* fiemap_prep(): unsupported flags are EBADR, fm_flags says which. */
	if (fm->fm_flags & ~supported) {
		fm->fm_flags &= ~supported;
		return -EBADR;
	}
	if (len == 0)
		return -EINVAL;
	if (start > INT64_MAX)
		return -EFBIG;
	if (fm->fm_flags & FIEMAP_FLAG_SYNC)
		fsync(fd);	/* filemap_write_and_wait() */
	page = calloc(1, sizeof(*page));
	if (!page)
		return -ENOMEM;
	end = len > (uint64_t)INT64_MAX - start ? (uint64_t)INT64_MAX : start + len;
	cur = start;
	for (;;) {
		page->start = (int64_t)cur;
		page->length = (int64_t)(end - cur);
		page->flags = 0;
		if (real_ioctl(fd, RS_IOC_FIEMAP, page) != 0) {
			err = -errno;
			break;
		}
		if (max == 0) {		/* count only */
			filled = (uint32_t)page->mapped;
			break;
		}
		for (i = 0; i < page->count && filled < max; i++) {
			struct fiemap_extent *fe = &fm->fm_extents[filled++];

			memset(fe, 0, sizeof(*fe));
			fe->fe_logical = (uint64_t)page->ext[i].logical;
			/* No disk: report physical == logical, so tools that
			 * show or merge physical ranges see a sane layout. */
			fe->fe_physical = fe->fe_logical;
			fe->fe_length = (uint64_t)page->ext[i].length;
			fe->fe_flags = page->ext[i].flags &
				       (FIEMAP_EXTENT_LAST | FIEMAP_EXTENT_UNWRITTEN);
		}
		if (page->count == 0 || filled >= max ||
		    page->mapped <= (int64_t)page->count ||
		    (page->ext[page->count - 1].flags & RS_FIEMAP_LAST))
			break;
		cur = (uint64_t)(page->ext[page->count - 1].logical +
				 page->ext[page->count - 1].length);
		if (cur >= end)
			break;
	}
	free(page);
	if (err == 0)
		fm->fm_mapped_extents = filled;
	return err;
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int ret, saved;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	pthread_once(&once, resolve);
	if (!real_ioctl) {
		errno = ENOSYS;
		return -1;
	}
	ret = real_ioctl(fd, req, arg);
	if (ret == 0 || req != FS_IOC_FIEMAP ||
	    (errno != EOPNOTSUPP && errno != ENOTTY))
		return ret;
	saved = errno;
	if (!arg || !is_ours(fd)) {
		errno = saved;
		return ret;
	}
	ret = emulate_fiemap(fd, arg);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return 0;
}
