/* SPDX-License-Identifier: MIT */
/*
 * test_mount.c - rangeshift-fusefs mounted for real (root, /dev/fuse): each
 * test mounts a fresh server in a fresh directory and unmounts it, and a
 * test fails if the server does not exit cleanly (so ASan/UBSan findings
 * in a sanitized server fail the suite).  Exit code 77 (ctest SKIP) when
 * mounting is impossible here.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "rangeshift_fusefs.h"

#define BS 4096

static struct mnt the_mnt;

/* ---------------------------------------------- shared test functions */

static int mount_default(void **state)
{
	*state = &the_mnt;
	return mnt_start(&the_mnt, NULL);
}

static int mount_small(void **state)
{
	*state = &the_mnt;
	return mnt_start(&the_mnt, "size=1m");
}

static int mount_uncached(void **state)
{
	*state = &the_mnt;
	return mnt_start(&the_mnt, "timeout=0");
}

static int mount_nokeep(void **state)
{
	*state = &the_mnt;
	return mnt_start(&the_mnt, "keep_cache=0");
}

static int mount_autoinval(void **state)
{
	*state = &the_mnt;
	return mnt_start(&the_mnt, "auto_inval_data");
}

static int mount_allow_other(void **state)
{
	*state = &the_mnt;
	return mnt_start(&the_mnt, "allow_other");
}

static int unmount(void **state)
{
	struct mnt *m = *state;
	int fd;

	if (!m->dir[0])		/* the test unmounted already */
		return 0;
	/* A failed assertion leaves descriptors open, which would keep the
	 * mount busy: this process holds no others. */
	for (fd = 3; fd < 1024; fd++)
		close(fd);
	return mnt_stop(m);
}

/* A path in the mount; four rotating buffers so that a call can take two
 * or three of them (rename(P("a"), P("b"))). */
static char *P(const char *name)
{
	static char buf[4][PATH_MAX];
	static unsigned next;

	return mnt_path(&the_mnt, name, buf[next++ % 4], PATH_MAX);
}

static void pattern(unsigned char *buf, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)((i / 7 + seed * 13 + i) & 0xff);
}

static int ioc_range(int fd, unsigned long cmd, int64_t off, int64_t len, int mode)
{
	struct rs_ioc_range r = { .offset = off, .length = len, .mode = mode };

	return ioctl(fd, cmd, &r) == 0 ? 0 : -errno;
}

static void pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	assert_int_equal(pwrite(fd, buf, len, off), (ssize_t)len);
}

static off_t fsize(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return st.st_size;
}

/* State of a file for "nothing changed" checks: size, bytes, map text. */
struct snap {
	off_t size;
	unsigned char *data;
	char map[65536];
	ssize_t maplen;
};

static void take_snap(int fd, struct snap *s)
{
	s->size = fsize(fd);
	s->data = malloc((size_t)s->size + 1);
	assert_non_null(s->data);
	assert_int_equal(pread(fd, s->data, (size_t)s->size, 0), s->size);
	s->maplen = fgetxattr(fd, RS_XATTR_MAP, s->map, sizeof(s->map));
	assert_true(s->maplen > 0);
}

static void assert_same(int fd, struct snap *before)
{
	struct snap now;

	take_snap(fd, &now);
	assert_int_equal(now.size, before->size);
	assert_memory_equal(now.data, before->data, (size_t)now.size);
	assert_int_equal(now.maplen, before->maplen);
	assert_memory_equal(now.map, before->map, (size_t)now.maplen);
	free(now.data);
}

/* Run fn in a child process with a deadline; returns its exit status, or
 * -1 if it hung (then it is killed) or crashed. */
static int in_child(int (*fn)(void *), void *arg, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(arg));
	assert_true(pid > 0);
	for (;;) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		if (now_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		poll_pause();
	}
}

/* ------------------------------------------------------------ namespace */

static void test_namespace(void **state)
{
	unsigned char buf[3 * BS], got[3 * BS];
	char lnk[64];
	struct stat st, st2;
	int fd, fd2;

	(void)state;
	assert_int_equal(mkdir(P("d"), 0755), 0);
	assert_int_equal(mkdir(P("d/e"), 0700), 0);
	assert_int_equal(stat(P("d"), &st), 0);
	assert_int_equal(st.st_nlink, 3);
	fd = open(P("d/f"), O_RDWR | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	pattern(buf, sizeof(buf), 1);
	pwrite_all(fd, buf, sizeof(buf), 0);
	assert_int_equal(pread(fd, got, sizeof(got), 0), sizeof(got));
	assert_memory_equal(buf, got, sizeof(buf));
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_blocks, 3 * BS / 512);
	assert_int_equal(open(P("d/f"), O_RDWR | O_CREAT | O_EXCL, 0644), -1);
	assert_int_equal(errno, EEXIST);

	/* hard link and symlink */
	assert_int_equal(link(P("d/f"), P("g")), 0);
	assert_int_equal(stat(P("g"), &st2), 0);
	assert_int_equal(st2.st_ino, st.st_ino);
	assert_int_equal(st2.st_nlink, 2);
	assert_int_equal(symlink("d/f", P("s")), 0);
	assert_int_equal(readlink(P("s"), lnk, sizeof(lnk)), 3);
	assert_memory_equal(lnk, "d/f", 3);
	fd2 = open(P("s"), O_RDONLY);
	assert_true(fd2 >= 0);
	assert_int_equal(pread(fd2, got, sizeof(got), 0), sizeof(got));
	assert_memory_equal(buf, got, sizeof(buf));
	close(fd2);

	/* rename flags */
	fd2 = open(P("h"), O_RDWR | O_CREAT, 0600);
	assert_true(fd2 >= 0);
	pwrite_all(fd2, "hhhh", 4, 0);
	close(fd2);
	assert_int_equal(renameat2(AT_FDCWD, P("h"), AT_FDCWD, P("g"), RENAME_NOREPLACE), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(renameat2(AT_FDCWD, P("h"), AT_FDCWD, P("g"), RENAME_EXCHANGE), 0);
	assert_int_equal(stat(P("h"), &st2), 0);
	assert_int_equal(st2.st_ino, st.st_ino);
	assert_int_equal(stat(P("g"), &st2), 0);
	assert_int_equal(st2.st_size, 4);
	assert_int_equal(renameat2(AT_FDCWD, P("nope"), AT_FDCWD, P("g"), RENAME_EXCHANGE), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(rename(P("d"), P("d/e/x")), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rmdir(P("d")), -1);
	assert_int_equal(errno, ENOTEMPTY);
	/* directory move updates both parents' link counts */
	assert_int_equal(rename(P("d/e"), P("e")), 0);
	assert_int_equal(stat(P("d"), &st2), 0);
	assert_int_equal(st2.st_nlink, 2);
	assert_int_equal(stat(P("e"), &st2), 0);
	assert_true(S_ISDIR(st2.st_mode));
	/* rename over an existing file drops it */
	assert_int_equal(rename(P("g"), P("h")), 0);
	assert_int_equal(stat(P("h"), &st2), 0);
	assert_int_equal(st2.st_size, 4);
	assert_int_equal(stat(P("d/f"), &st2), 0);
	assert_int_equal(st2.st_nlink, 1);
	assert_int_equal(unlink(P("h")), 0);
	assert_int_equal(unlink(P("s")), 0);
	assert_int_equal(unlink(P("d/f")), 0);
	assert_int_equal(rmdir(P("d")), 0);
	assert_int_equal(rmdir(P("e")), 0);
	close(fd);
}

static void test_readdir_many(void **state)
{
	char name[64];
	int i, fd;
	size_t seen = 0;
	FILE *f;
	char cmd[PATH_MAX + 32];

	(void)state;
	assert_int_equal(mkdir(P("many"), 0755), 0);
	for (i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "many/file-with-a-long-name-%04d", i);
		fd = open(P(name), O_CREAT | O_WRONLY, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	snprintf(cmd, sizeof(cmd), "ls -f %s | wc -l", P("many"));
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%zu", &seen), 1);
	pclose(f);
	assert_int_equal(seen, 502);		/* with . and .. */
}

static void test_open_unlink_rename(void **state)
{
	unsigned char buf[2 * BS], got[2 * BS];
	struct statvfs before, after;
	struct stat st;
	long long deadline;
	int fd;

	(void)state;
	assert_int_equal(statvfs(the_mnt.dir, &before), 0);
	fd = open(P("a"), O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	pattern(buf, sizeof(buf), 2);
	pwrite_all(fd, buf, sizeof(buf), 0);
	assert_int_equal(rename(P("a"), P("b")), 0);
	pwrite_all(fd, buf, BS, 2 * BS);
	assert_int_equal(stat(P("b"), &st), 0);
	assert_int_equal(st.st_size, 3 * BS);
	assert_int_equal(unlink(P("b")), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_nlink, 0);
	/* still fully usable, including the shifting ioctls */
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, 0, BS, 0), 0);
	assert_int_equal(pread(fd, got, sizeof(got), BS), sizeof(got));
	assert_memory_equal(buf, got, sizeof(buf));
	assert_int_equal(fsize(fd), 4 * BS);
	close(fd);
	/* Once the kernel forgets the inode (asynchronously), its blocks
	 * return to the free count. */
	deadline = now_ms() + RS_WAIT_MS;
	for (;;) {
		assert_int_equal(statvfs(the_mnt.dir, &after), 0);
		if (after.f_bfree == before.f_bfree)
			break;
		assert_true(now_ms() < deadline);
		poll_pause();
	}
}

/* ------------------------------------------------------------ xattrs */

static void test_xattr(void **state)
{
	char val[256], list[1024], *big;
	ssize_t n;
	int fd;

	(void)state;
	fd = open(P("x"), O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	pwrite_all(fd, "data", 4, 2 * BS);
	assert_int_equal(fsetxattr(fd, "user.k", "v1", 2, 0), 0);
	assert_int_equal(fsetxattr(fd, "user.k", "v2", 2, XATTR_CREATE), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(fsetxattr(fd, "user.none", "v", 1, XATTR_REPLACE), -1);
	assert_int_equal(errno, ENODATA);
	assert_int_equal(fsetxattr(fd, "user.k", "value3", 6, XATTR_REPLACE), 0);
	assert_int_equal(fgetxattr(fd, "user.k", val, sizeof(val)), 6);
	assert_memory_equal(val, "value3", 6);
	assert_int_equal(fgetxattr(fd, "user.k", val, 3), -1);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(fgetxattr(fd, "user.k", NULL, 0), 6);
	n = flistxattr(fd, list, sizeof(list));
	assert_int_equal(n, (ssize_t)sizeof("user.k"));	/* map not listed */
	assert_string_equal(list, "user.k");

	/* the virtual map */
	n = fgetxattr(fd, RS_XATTR_MAP, big = malloc(65536), 65536);
	assert_true(n > 0);
	big[n] = 0;
	assert_non_null(strstr(big, "0 8192 hole"));
	assert_non_null(strstr(big, "8192 4096 data"));
	free(big);
	assert_int_equal(fgetxattr(fd, RS_XATTR_MAP, val, 4), -1);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(fsetxattr(fd, RS_XATTR_MAP, "x", 1, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(fremovexattr(fd, RS_XATTR_MAP), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(getxattr(the_mnt.dir, RS_XATTR_MAP, val, sizeof(val)), -1);
	assert_int_equal(errno, ENODATA);

	/* bad input: unsupported namespaces, sizes */
	assert_int_equal(fsetxattr(fd, "system.foo", "x", 1, 0), -1);
	assert_true(errno == EOPNOTSUPP);
	assert_int_equal(fsetxattr(fd, "user.k", "x", 1, 0x100), -1);
	assert_int_equal(errno, EINVAL);
	big = calloc(1, 70000);
	assert_non_null(big);
	assert_int_equal(fsetxattr(fd, "user.big", big, 70000, 0), -1);
	assert_int_equal(errno, E2BIG);
	assert_int_equal(fsetxattr(fd, "user.b1", big, 40000, 0), 0);
	assert_int_equal(fsetxattr(fd, "user.b2", big, 40000, 0), -1);
	assert_int_equal(errno, ENOSPC);
	free(big);
	memset(list, 'n', 300);
	memcpy(list, "user.", 5);
	list[300] = 0;
	assert_int_equal(fsetxattr(fd, list, "x", 1, 0), -1);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(fgetxattr(fd, "user.k", val, sizeof(val)), 6);
	assert_memory_equal(val, "value3", 6);
	assert_int_equal(fremovexattr(fd, "user.k"), 0);
	assert_int_equal(fremovexattr(fd, "user.k"), -1);
	assert_int_equal(errno, ENODATA);
	close(fd);

	/* a map too large for an xattr (XATTR_SIZE_MAX) is E2BIG, not a
	 * truncated text */
	fd = open(P("frag"), O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	{
		int i;

		for (i = 0; i < 8000; i += 2)
			pwrite_all(fd, "z", 1, (off_t)i * BS);
	}
	assert_int_equal(fgetxattr(fd, RS_XATTR_MAP, NULL, 0), -1);
	assert_int_equal(errno, E2BIG);
	close(fd);
}

/* ------------------------------------------------------------ ioctls */

static void test_ioctl_shift(void **state)
{
	unsigned char buf[4 * BS], got[4 * BS], zero[BS] = { 0 };
	struct rs_ioc_ident id;
	struct rs_ioc_fiemap *fm;
	int fd;

	(void)state;
	fd = open(P("f"), O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ioctl(fd, RS_IOC_IDENT, &id), 0);
	assert_int_equal(id.magic, RS_IDENT_MAGIC);
	assert_int_equal(id.version, RS_IDENT_VERSION);
	assert_int_equal(id.blocksize, BS);
	pattern(buf, sizeof(buf), 3);
	pwrite_all(fd, buf, sizeof(buf), 0);
	/* fill the page cache, then shift under it */
	assert_int_equal(pread(fd, got, sizeof(got), 0), sizeof(got));
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, BS, 2 * BS, 0), 0);
	assert_int_equal(fsize(fd), 6 * BS);
	assert_int_equal(pread(fd, got, BS, 0), BS);
	assert_memory_equal(got, buf, BS);
	assert_int_equal(pread(fd, got, BS, BS), BS);
	assert_memory_equal(got, zero, BS);
	assert_int_equal(pread(fd, got, 3 * BS, 3 * BS), 3 * BS);
	assert_memory_equal(got, buf + BS, 3 * BS);
	assert_int_equal(lseek(fd, BS, SEEK_DATA), 3 * BS);
	assert_int_equal(lseek(fd, 0, SEEK_HOLE), BS);

	fm = calloc(1, sizeof(*fm));
	assert_non_null(fm);
	fm->start = 0;
	fm->length = INT64_MAX;
	assert_int_equal(ioctl(fd, RS_IOC_FIEMAP, fm), 0);
	assert_int_equal(fm->count, 2);
	assert_int_equal(fm->mapped, 2);
	assert_int_equal(fm->ext[0].logical, 0);
	assert_int_equal(fm->ext[0].length, BS);
	assert_int_equal(fm->ext[1].logical, 3 * BS);
	assert_int_equal(fm->ext[1].length, 3 * BS);
	assert_true(fm->ext[1].flags & RS_FIEMAP_LAST);
	free(fm);

	assert_int_equal(ioc_range(fd, RS_IOC_COLLAPSE, BS, 2 * BS, 0), 0);
	assert_int_equal(fsize(fd), 4 * BS);
	assert_int_equal(pread(fd, got, sizeof(got), 0), sizeof(got));
	assert_memory_equal(got, buf, sizeof(buf));
	/* generic: punch through the ioctl too */
	assert_int_equal(ioc_range(fd, RS_IOC_FALLOCATE, 0, BS,
				   FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE), 0);
	assert_int_equal(pread(fd, got, BS, 0), BS);
	assert_memory_equal(got, zero, BS);
	/* model errno: insert at EOF is EINVAL (ext4_insert_range()) */
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, 4 * BS, BS, 0), -EINVAL);
	close(fd);
}

/* Native fallocate: modes FUSE forwards work; INSERT/COLLAPSE are refused
 * by a stock kernel (EOPNOTSUPP) and work with the project's FUSE patch. */
static void test_native_fallocate(void **state)
{
	unsigned char buf[4 * BS], got[BS], zero[BS] = { 0 };
	struct stat st;
	int fd, r;

	(void)state;
	fd = open(P("n"), O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	pattern(buf, sizeof(buf), 4);
	pwrite_all(fd, buf, sizeof(buf), 0);
	assert_int_equal(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, BS, BS), 0);
	assert_int_equal(pread(fd, got, BS, BS), BS);
	assert_memory_equal(got, zero, BS);
	assert_int_equal(fallocate(fd, FALLOC_FL_KEEP_SIZE, 8 * BS, 2 * BS), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 4 * BS);
	assert_int_equal(st.st_blocks, 5 * BS / 512);
	assert_int_equal(fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, BS), 0);
	assert_int_equal(pread(fd, got, BS, 0), BS);
	assert_memory_equal(got, zero, BS);
	/* the model's errno reaches the caller */
	assert_int_equal(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, BS), -1);
	assert_int_equal(errno, EOPNOTSUPP);	/* vfs: punch needs KEEP_SIZE */
	r = fallocate(fd, FALLOC_FL_INSERT_RANGE, BS, BS);
	if (r == 0) {
		assert_int_equal(fsize(fd), 5 * BS);
	} else {
		assert_int_equal(errno, EOPNOTSUPP);
		assert_int_equal(fsize(fd), 4 * BS);
	}
	close(fd);
}

/* Bad input to every ioctl: an errno and no change. */
struct bad_small { int64_t a; };
#define BAD_INSERT_SMALL	_IOW(RS_IOC_CODE, 0x02, struct bad_small)
#define BAD_INSERT_NOARG	_IO(RS_IOC_CODE, 0x02)
#define BAD_FIEMAP_SMALL	_IOWR(RS_IOC_CODE, 0x05, struct bad_small)
#define BAD_IDENT_WRITE		_IOW(RS_IOC_CODE, 0x01, struct rs_ioc_ident)
#define BAD_UNKNOWN		_IOW(RS_IOC_CODE, 0x3f, struct rs_ioc_range)

static void test_ioctl_bad_input(void **state)
{
	unsigned char buf[16 * BS];
	struct rs_ioc_fiemap *fm;
	struct bad_small small = { 0 };
	unsigned char junk[256] = { 0 };
	struct rs_ioc_range r;
	struct snap before;
	int fd, ro, dfd;

	(void)state;
	fd = open(P("bad"), O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	pattern(buf, sizeof(buf), 5);
	pwrite_all(fd, buf, sizeof(buf), 0);
	assert_int_equal(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4 * BS, 2 * BS), 0);
	take_snap(fd, &before);

	/* wrong sizes: a different size is a different command */
	assert_int_equal(ioctl(fd, BAD_INSERT_SMALL, &small), -1);
	assert_int_equal(errno, ENOTTY);
	assert_int_equal(ioctl(fd, BAD_INSERT_NOARG, 0), -1);
	assert_int_equal(errno, ENOTTY);
	assert_int_equal(ioctl(fd, BAD_FIEMAP_SMALL, &small), -1);
	assert_int_equal(errno, ENOTTY);
	assert_int_equal(ioctl(fd, BAD_IDENT_WRITE, junk), -1);
	assert_int_equal(errno, ENOTTY);
	assert_int_equal(ioctl(fd, BAD_UNKNOWN, junk), -1);
	assert_int_equal(errno, ENOTTY);
	assert_int_equal(ioctl(fd, RS_IOC_INSERT, NULL), -1);
	assert_int_equal(errno, EFAULT);
	/* bad ranges */
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, -BS, BS, 0), -EINVAL);
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, 0, 0, 0), -EINVAL);
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, 0, -BS, 0), -EINVAL);
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, 100, BS, 0), -EINVAL);
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, 0, INT64_MAX, 0), -EFBIG);
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, INT64_MAX - BS + 1, BS, 0), -EFBIG);
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, 0, BS, FALLOC_FL_KEEP_SIZE), -EINVAL);
	assert_int_equal(ioc_range(fd, RS_IOC_COLLAPSE, 0, 16 * BS, 0), -EINVAL);
	assert_int_equal(ioc_range(fd, RS_IOC_COLLAPSE, INT64_MAX, INT64_MAX, 0), -EFBIG);
	assert_int_equal(ioc_range(fd, RS_IOC_COLLAPSE, -1, -1, 0), -EINVAL);
	assert_int_equal(ioc_range(fd, RS_IOC_FALLOCATE, 0, BS, 0x1000), -EOPNOTSUPP);
	assert_int_equal(ioc_range(fd, RS_IOC_FALLOCATE, 0, BS,
				   FALLOC_FL_INSERT_RANGE | FALLOC_FL_KEEP_SIZE), -EINVAL);
	memset(&r, 0, sizeof(r));
	r.length = BS;
	r.reserved = 1;
	assert_int_equal(ioctl(fd, RS_IOC_INSERT, &r), -1);
	assert_int_equal(errno, EINVAL);
	/* read-only descriptor: EBADF as vfs_fallocate() */
	ro = open(P("bad"), O_RDONLY);
	assert_true(ro >= 0);
	assert_int_equal(ioc_range(ro, RS_IOC_INSERT, 0, BS, 0), -EBADF);
	assert_int_equal(ioc_range(ro, RS_IOC_FALLOCATE, 0, BS, 0), -EBADF);
	close(ro);
	/* fiemap */
	fm = calloc(1, sizeof(*fm));
	assert_non_null(fm);
	fm->start = -1;
	fm->length = BS;
	assert_int_equal(ioctl(fd, RS_IOC_FIEMAP, fm), -1);
	assert_int_equal(errno, EINVAL);
	fm->start = 0;
	fm->length = 0;
	assert_int_equal(ioctl(fd, RS_IOC_FIEMAP, fm), -1);
	assert_int_equal(errno, EINVAL);
	fm->length = BS;
	fm->flags = 1;
	assert_int_equal(ioctl(fd, RS_IOC_FIEMAP, fm), -1);
	assert_int_equal(errno, EINVAL);
	fm->flags = 0;
	fm->start = INT64_MAX;
	assert_int_equal(ioctl(fd, RS_IOC_FIEMAP, fm), -1);
	assert_int_equal(errno, EFBIG);
	free(fm);
	/* directories take no ioctls */
	dfd = open(the_mnt.dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(ioc_range(dfd, RS_IOC_INSERT, 0, BS, 0), -ENOTTY);
	close(dfd);

	assert_same(fd, &before);
	free(before.data);
	close(fd);
}

/* ------------------------------------------------------------ mmap */

static void fill_block(unsigned char *p, int c)
{
	memset(p, c, BS);
}

static void test_mmap_coherence(void **state)
{
	unsigned char blk[BS], got[BS];
	unsigned char *p;
	int fd, i;

	(void)state;
	fd = open(P("m"), O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	for (i = 0; i < 8; i++) {
		fill_block(blk, 'A' + i);
		pwrite_all(fd, blk, BS, (off_t)i * BS);
	}
	p = mmap(NULL, 16 * BS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	for (i = 0; i < 8; i++)
		assert_int_equal(p[i * BS + 5], 'A' + i);
	/* a dirty page that was never msync'ed must move with the data */
	memset(p + 2 * BS, 'x', BS);
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, BS, 2 * BS, 0), 0);
	assert_int_equal(fsize(fd), 10 * BS);
	assert_int_equal(p[0], 'A');
	assert_int_equal(p[BS], 0);
	assert_int_equal(p[2 * BS + 100], 0);
	assert_int_equal(p[3 * BS], 'B');
	assert_int_equal(p[4 * BS + 7], 'x');
	assert_int_equal(p[5 * BS], 'D');
	assert_int_equal(p[9 * BS + BS - 1], 'H');
	assert_int_equal(pread(fd, got, BS, 4 * BS), BS);
	fill_block(blk, 'x');
	assert_memory_equal(got, blk, BS);

	/* write through the mapping into the new hole, then collapse it away
	 * together with its neighbour */
	memset(p + BS, 'y', BS);
	memset(p + 3 * BS, 'z', BS);
	assert_int_equal(ioc_range(fd, RS_IOC_COLLAPSE, BS, 2 * BS, 0), 0);
	assert_int_equal(fsize(fd), 8 * BS);
	assert_int_equal(p[0], 'A');
	assert_int_equal(p[BS], 'z');
	assert_int_equal(p[2 * BS], 'x');
	assert_int_equal(p[7 * BS + 9], 'H');
	assert_int_equal(pread(fd, got, BS, BS), BS);
	fill_block(blk, 'z');
	assert_memory_equal(got, blk, BS);
	assert_int_equal(munmap(p, 16 * BS), 0);
	close(fd);
}

/* Blocks of [0, nblocks * BS) of path the kernel holds in its page cache,
 * seen through mincore(2) on a fresh mapping (which faults nothing in). */
static int cached_blocks(const char *path, int nblocks)
{
	unsigned char vec[64];
	void *p;
	int fd, i, n = 0;

	assert_true(nblocks <= 64 && BS == 4096 && sysconf(_SC_PAGESIZE) == BS);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	p = mmap(NULL, (size_t)nblocks * BS, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(mincore(p, (size_t)nblocks * BS, vec), 0);
	for (i = 0; i < nblocks; i++)
		n += vec[i] & 1;
	assert_int_equal(munmap(p, (size_t)nblocks * BS), 0);
	close(fd);
	return n;
}

/* Open path, check that its blocks hold the letters of want (one per
 * block, '0' a block of zeros) and its size is theirs, close it. */
static void expect_blocks(const char *path, const char *want)
{
	unsigned char blk[BS], got[BS];
	size_t i, n = strlen(want);
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fsize(fd), (off_t)(n * BS));
	for (i = 0; i < n; i++) {
		fill_block(blk, want[i] == '0' ? 0 : want[i]);
		assert_int_equal(pread(fd, got, BS, (off_t)(i * BS)), BS);
		if (memcmp(got, blk, BS)) {
			fprintf(stderr, "block %zu: want '%c', got '%c'\n", i,
				want[i], got[0] ? got[0] : '0');
			fail();
		}
	}
	close(fd);
}

/* Create path with n blocks lettered 'A', 'B', ... (one letter per
 * block), close it. */
static void make_lettered(const char *path, int n)
{
	unsigned char blk[BS];
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	int i;

	assert_true(fd >= 0);
	for (i = 0; i < n; i++) {
		fill_block(blk, 'A' + i);
		pwrite_all(fd, blk, BS, (off_t)i * BS);
	}
	close(fd);
}

/* Open path and read it through, so its pages are cached; close it. */
static void read_through(const char *path)
{
	unsigned char got[BS];
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	while (read(fd, got, BS) > 0)
		;
	close(fd);
}

/* keep_cache=1 (the default): the kernel keeps a file's pages across
 * open(2), so every change must reach the page cache of the next open
 * too: the ioctls (changes behind the kernel's back, which the server
 * invalidates), dirty mmap pages at the time of an ioctl, punch through
 * the kernel, truncate. */
static void test_keep_cache(void **state)
{
	unsigned char *p;
	const char *f = P("k");
	int fd;

	(void)state;
	make_lettered(f, 8);
	read_through(f);
	/* the pages outlive the open that read them */
	assert_int_equal(cached_blocks(f, 8), 8);

	/* insert and collapse through the ioctls, each with another open */
	fd = open(f, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, BS, 2 * BS, 0), 0);
	close(fd);
	expect_blocks(f, "A00BCDEFGH");
	read_through(f);
	fd = open(f, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ioc_range(fd, RS_IOC_COLLAPSE, 0, 3 * BS, 0), 0);
	close(fd);
	expect_blocks(f, "BCDEFGH");
	read_through(f);

	/* punch through the ioctl and through fallocate(2) */
	fd = open(f, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ioc_range(fd, RS_IOC_FALLOCATE, BS, BS,
				   FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE), 0);
	close(fd);
	expect_blocks(f, "B0DEFGH");
	read_through(f);
	fd = open(f, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				   2 * BS, BS), 0);
	close(fd);
	expect_blocks(f, "B00EFGH");
	read_through(f);

	/* a dirty page of a mapping whose descriptor is closed, shifted by
	 * an ioctl on another descriptor */
	fd = open(f, O_RDWR);
	assert_true(fd >= 0);
	p = mmap(NULL, 7 * BS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	close(fd);
	memset(p + 4 * BS, 'x', BS);
	fd = open(f, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, 0, BS, 0), 0);
	close(fd);
	expect_blocks(f, "0B00ExGH");
	assert_int_equal(p[0], 0);
	assert_int_equal(p[5 * BS], 'x');
	assert_int_equal(munmap(p, 7 * BS), 0);
	read_through(f);

	/* truncate down and up again: the cut pages read as zeros */
	assert_int_equal(truncate(f, 5 * BS), 0);
	assert_int_equal(truncate(f, 8 * BS), 0);
	expect_blocks(f, "0B00E000");
}

/* FUSE_AUTO_INVAL_DATA: off by default, so the cached pages of a file
 * survive a write and the GETATTR after it; with -o auto_inval_data the
 * new mtime that GETATTR brings drops them (fuse_change_attributes()).
 * The host's clocks tell the kernel's mtime of the write from the
 * server's. */
static void check_auto_inval(int on)
{
	unsigned char blk[BS];
	const char *f = P("ai");
	struct stat st;
	int fd;

	make_lettered(f, 4);
	read_through(f);
	assert_int_equal(cached_blocks(f, 4), 4);
	fd = open(f, O_RDWR);
	assert_true(fd >= 0);
	fill_block(blk, 'Z');
	pwrite_all(fd, blk, BS, 0);
	assert_int_equal(fstat(fd, &st), 0);	/* a write invalidated the attributes */
	close(fd);
	assert_int_equal(cached_blocks(f, 4), on ? 0 : 4);
	expect_blocks(f, "ZBCD");
}

static void test_auto_inval_off(void **state)
{
	(void)state;
	check_auto_inval(0);
}

static void test_auto_inval_on(void **state)
{
	(void)state;
	check_auto_inval(1);
}

/* keep_cache=0: open(2) drops the cached pages (fuse_finish_open()). */
static void test_keep_cache_off(void **state)
{
	const char *f = P("k");
	struct mnt bad;

	(void)state;
	make_lettered(f, 4);
	read_through(f);
	assert_int_equal(cached_blocks(f, 4), 0);
	expect_blocks(f, "ABCD");

	/* refused options: the server exits before it mounts */
	assert_int_equal(mnt_start(&bad, "keep_cache=2"), -1);
	assert_int_equal(mnt_start(&bad, "writeback_cache"), -1);
	assert_int_equal(mnt_start(&bad, "atomic_o_trunc"), -1);
	assert_int_equal(mnt_start(&bad, "max_write=nonsense"), -1);
}

/* A refused insert that grows the size anyway (ext4_insert_range() sets
 * i_size before ext4_ext_shift_extents() refuses to move the extent near
 * EXT_MAX_BLOCKS; the ext4 profile does the same) must reach the kernel
 * although the reply is an error: the kernel's i_size bounds page faults,
 * so a mapped write between the old and the new size was a SIGBUS.  The
 * op sequence is the one a 1e6-op difftest run shrank. */
static void test_refused_insert_grows_size(void **state)
{
	unsigned char buf[5335];
	int fd, status;
	pid_t pid;

	(void)state;
	fd = open(P("r"), O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	memset(buf, 0x98, sizeof(buf));
	pwrite_all(fd, buf, sizeof(buf), 3170304);
	assert_int_equal(ioc_range(fd, RS_IOC_FALLOCATE, 17592186019840LL, 8192,
				   FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE), 0);
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, 475136, 184320, 0), -EINVAL);
	/* no stat() first: the mapping relies on the kernel's own i_size */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		unsigned char *p = mmap(NULL, 40960, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
					3272704);
		if (p == MAP_FAILED)
			_exit(2);
		memset(p, 0x44, 37423);		/* SIGBUS if i_size is stale */
		_exit(munmap(p, 40960) ? 3 : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(fsize(fd), 3170304 + 5335 + 184320);
	assert_int_equal(pread(fd, buf, 16, 3272704), 16);
	assert_int_equal(buf[0], 0x44);
	assert_int_equal(buf[15], 0x44);
	close(fd);
}

/* ------------------------------------------------------------ concurrency */

#define NTHREADS 4
#define CHUNK (64 * 1024)
#define NCHUNK 32

struct worker {
	int fd;
	int id;
	int shared;		/* all threads write one file, interleaved */
	int err;
};

static void *writer(void *arg)
{
	struct worker *w = arg;
	unsigned char *buf = malloc(CHUNK);
	int i;

	for (i = 0; i < NCHUNK && buf; i++) {
		off_t off = w->shared ? ((off_t)i * NTHREADS + w->id) * CHUNK
				      : (off_t)i * CHUNK;

		pattern(buf, CHUNK, (unsigned)(w->id * 1000 + i));
		if (pwrite(w->fd, buf, CHUNK, off) != CHUNK)
			w->err = errno ? errno : EIO;
	}
	free(buf);
	return NULL;
}

static void verify_writer(int fd, int id, int shared)
{
	unsigned char *buf = malloc(CHUNK), *got = malloc(CHUNK);
	int i;

	assert_non_null(buf);
	assert_non_null(got);
	for (i = 0; i < NCHUNK; i++) {
		off_t off = shared ? ((off_t)i * NTHREADS + id) * CHUNK
				   : (off_t)i * CHUNK;

		pattern(buf, CHUNK, (unsigned)(id * 1000 + i));
		assert_int_equal(pread(fd, got, CHUNK, off), CHUNK);
		assert_memory_equal(got, buf, CHUNK);
	}
	free(buf);
	free(got);
}

static void test_concurrent_writers(void **state)
{
	struct worker w[NTHREADS];
	pthread_t t[NTHREADS];
	char name[32];
	int i, shared;

	(void)state;
	for (shared = 0; shared < 2; shared++) {
		int one = -1;

		if (shared) {
			one = open(P("shared"), O_RDWR | O_CREAT, 0644);
			assert_true(one >= 0);
		}
		for (i = 0; i < NTHREADS; i++) {
			snprintf(name, sizeof(name), "w%d", i);
			w[i].fd = shared ? one : open(P(name), O_RDWR | O_CREAT, 0644);
			assert_true(w[i].fd >= 0);
			w[i].id = i;
			w[i].shared = shared;
			w[i].err = 0;
			assert_int_equal(pthread_create(&t[i], NULL, writer, &w[i]), 0);
		}
		for (i = 0; i < NTHREADS; i++) {
			assert_int_equal(pthread_join(t[i], NULL), 0);
			assert_int_equal(w[i].err, 0);
		}
		for (i = 0; i < NTHREADS; i++) {
			verify_writer(w[i].fd, i, shared);
			if (!shared)
				close(w[i].fd);
		}
		if (shared) {
			assert_int_equal(fsize(one), (off_t)NTHREADS * NCHUNK * CHUNK);
			close(one);
		}
	}
}

/* Readers, writers and range shifts on one file at once: no crash, no
 * hang, and a consistent file afterwards (check size arithmetic). */
struct shifter {
	int fd;
	int n;
	int err;
};

static void *shift_loop(void *arg)
{
	struct shifter *s = arg;
	int i;

	for (i = 0; i < s->n; i++) {
		if (ioc_range(s->fd, RS_IOC_INSERT, 0, BS, 0) != 0 ||
		    ioc_range(s->fd, RS_IOC_COLLAPSE, 0, BS, 0) != 0)
			s->err = 1;
	}
	return NULL;
}

static void *read_loop(void *arg)
{
	struct shifter *s = arg;
	unsigned char buf[BS];
	int i;

	for (i = 0; i < s->n * 4; i++)
		if (pread(s->fd, buf, BS, (off_t)(i % 64) * BS) < 0)
			s->err = 1;
	return NULL;
}

static void test_concurrent_shifts(void **state)
{
	unsigned char *buf = malloc(64 * BS);
	struct shifter a, b;
	pthread_t ta, tb;
	int fd;

	(void)state;
	assert_non_null(buf);
	fd = open(P("shift"), O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	pattern(buf, 64 * BS, 6);
	pwrite_all(fd, buf, 64 * BS, 0);
	a = (struct shifter){ .fd = fd, .n = 200 };
	b = a;
	assert_int_equal(pthread_create(&ta, NULL, shift_loop, &a), 0);
	assert_int_equal(pthread_create(&tb, NULL, read_loop, &b), 0);
	assert_int_equal(pthread_join(ta, NULL), 0);
	assert_int_equal(pthread_join(tb, NULL), 0);
	assert_int_equal(a.err, 0);
	assert_int_equal(b.err, 0);
	/* insert+collapse at 0 of one block is the identity */
	assert_int_equal(fsize(fd), 64 * BS);
	{
		unsigned char *got = malloc(64 * BS);

		assert_non_null(got);
		assert_int_equal(pread(fd, got, 64 * BS, 0), 64 * BS);
		assert_memory_equal(got, buf, 64 * BS);
		free(got);
	}
	free(buf);
	close(fd);
}

/* ------------------------------------------------------------ ENOSPC */

static void test_enospc(void **state)
{
	unsigned char *buf = malloc(1 << 20), blk[BS];
	struct statvfs sv;
	struct snap before;
	int fd, fd2;

	(void)state;
	assert_non_null(buf);
	assert_int_equal(statvfs(the_mnt.dir, &sv), 0);
	assert_int_equal(sv.f_blocks * sv.f_frsize, 1 << 20);
	assert_int_equal(sv.f_bfree * sv.f_frsize, 1 << 20);
	fd = open(P("full"), O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	pattern(buf, 1 << 20, 7);
	pwrite_all(fd, buf, 1 << 20, 0);
	assert_int_equal(statvfs(the_mnt.dir, &sv), 0);
	assert_int_equal(sv.f_bfree, 0);
	take_snap(fd, &before);
	/* nothing more fits, and a failing call changes nothing */
	memset(blk, 1, sizeof(blk));
	assert_int_equal(pwrite(fd, blk, BS, 1 << 20), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(fallocate(fd, 0, 1 << 20, BS), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(fallocate(fd, FALLOC_FL_KEEP_SIZE, 1 << 20, BS), -1);
	assert_int_equal(errno, ENOSPC);
	/* argument errors still come first (vfs_fallocate() order) */
	assert_int_equal(ioc_range(fd, RS_IOC_FALLOCATE, 1 << 20, -1, 0), -EINVAL);
	/* overwriting allocated blocks needs no space */
	pwrite_all(fd, buf, BS, 0);
	/* an insert only opens a hole: allowed even when full */
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, 0, BS, 0), 0);
	assert_int_equal(ioc_range(fd, RS_IOC_COLLAPSE, 0, BS, 0), 0);
	assert_same(fd, &before);
	fd2 = open(P("other"), O_RDWR | O_CREAT, 0644);
	assert_true(fd2 >= 0);
	assert_int_equal(pwrite(fd2, blk, BS, 0), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(fsize(fd2), 0);
	/* freeing space makes room again */
	assert_int_equal(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 16 * BS), 0);
	assert_int_equal(statvfs(the_mnt.dir, &sv), 0);
	assert_int_equal(sv.f_bfree, 16);
	pwrite_all(fd2, blk, BS, 0);
	close(fd2);
	close(fd);
	free(before.data);
	free(buf);
}

/* ------------------------------------------------------------ speed */

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A sparse 1 TiB file with a few extents takes an insert at offset 0 in
 * well under a millisecond (the model is O(log n); the cost is the FUSE
 * round trip and the cache invalidations).  Bound: median under 1 ms. */
static void test_insert_1tib(void **state)
{
	const int64_t tib = (int64_t)1 << 40;
	unsigned char blk[BS], got[BS];
	long long t[21];
	int fd, i;

	(void)state;
	fd = open(P("huge"), O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, tib), 0);
	memset(blk, 'q', BS);
	pwrite_all(fd, blk, BS, 0);
	pwrite_all(fd, blk, BS, tib / 2);
	pwrite_all(fd, blk, BS, tib - BS);
	for (i = 0; i < 21; i++) {
		long long t0 = now_ns();

		assert_int_equal(ioc_range(fd, RS_IOC_INSERT, 0, BS, 0), 0);
		t[i] = now_ns() - t0;
	}
	qsort(t, 21, sizeof(t[0]), cmp_ll);
	fprintf(stderr, "insert at 0 of a 1 TiB file: median %lld us, max %lld us\n",
		t[10] / 1000, t[20] / 1000);
	assert_true(t[10] < 1000000);
	assert_int_equal(fsize(fd), tib + 21 * BS);
	assert_int_equal(pread(fd, got, BS, 21 * BS), BS);
	assert_memory_equal(got, blk, BS);
	assert_int_equal(pread(fd, got, BS, tib + 20 * BS), BS);
	assert_memory_equal(got, blk, BS);
	assert_int_equal(ioc_range(fd, RS_IOC_COLLAPSE, 0, 21 * BS, 0), 0);
	assert_int_equal(fsize(fd), tib);
	close(fd);
}

/* ------------------------------------------------------------ privileges, times */

static int child_write_as_nobody(void *arg)
{
	const char *path = arg;
	int fd;

	if (setgid(65534) != 0 || setuid(65534) != 0)
		return 10;
	fd = open(path, O_RDWR);
	if (fd < 0)
		return 11;
	if (pwrite(fd, "abcd", 4, 0) != 4)
		return 12;
	close(fd);
	return 0;
}

static int child_insert_as_nobody(void *arg)
{
	const char *path = arg;
	int fd;

	if (setgid(65534) != 0 || setuid(65534) != 0)
		return 10;
	fd = open(path, O_RDWR);
	if (fd < 0)
		return 11;
	if (ioc_range(fd, RS_IOC_INSERT, 0, BS, 0) != 0)
		return 12;
	close(fd);
	return 0;
}

static int child_truncate_as_nobody(void *arg)
{
	const char *path = arg;

	if (setgid(65534) != 0 || setuid(65534) != 0)
		return 10;
	return truncate(path, 5 * BS) == 0 ? 0 : 12;
}

static bool ts_after(struct timespec a, struct timespec b)
{
	return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

static void test_privs_and_times(void **state)
{
	static char path[PATH_MAX];
	unsigned char blk[2 * BS];
	struct stat st, st2;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s", P("suid"));
	fd = open(path, O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	memset(blk, 'p', sizeof(blk));
	pwrite_all(fd, blk, sizeof(blk), 0);
	assert_int_equal(fchown(fd, 65534, 65534), 0);
	assert_int_equal(fchmod(fd, 06775), 0);
	/* root (CAP_FSETID) keeps the bits (should_remove_suid()) */
	pwrite_all(fd, "r", 1, 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 06775);
	/* another user's write drops suid and (group-exec) sgid */
	assert_int_equal(in_child(child_write_as_nobody, path, RS_WAIT_MS), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0775);
	/* ... and so does an insert through the ioctl */
	assert_int_equal(fchmod(fd, 06775), 0);
	assert_int_equal(in_child(child_insert_as_nobody, path, RS_WAIT_MS), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0775);
	assert_int_equal(st.st_size, 3 * BS);
	/* ... and a truncate */
	assert_int_equal(fchmod(fd, 06775), 0);
	assert_int_equal(in_child(child_truncate_as_nobody, path, RS_WAIT_MS), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0775);
	assert_int_equal(st.st_size, 5 * BS);
	/* sgid without group exec is a locking mark: kept */
	assert_int_equal(fchmod(fd, 02765), 0);
	assert_int_equal(in_child(child_write_as_nobody, path, RS_WAIT_MS), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 02765);

	/* times: write and insert move mtime and ctime; read does not */
	assert_int_equal(fstat(fd, &st), 0);
	pwrite_all(fd, "w", 1, 5);
	assert_int_equal(fstat(fd, &st2), 0);
	assert_true(ts_after(st2.st_mtim, st.st_mtim));
	assert_true(ts_after(st2.st_ctim, st.st_ctim));
	st = st2;
	assert_int_equal(pread(fd, blk, 10, 0), 10);
	assert_int_equal(fstat(fd, &st2), 0);
	assert_memory_equal(&st2.st_mtim, &st.st_mtim, sizeof(st.st_mtim));
	assert_int_equal(ioc_range(fd, RS_IOC_INSERT, 0, BS, 0), 0);
	assert_int_equal(fstat(fd, &st2), 0);
	assert_true(ts_after(st2.st_mtim, st.st_mtim));
	assert_memory_equal(&st2.st_mtim, &st2.st_ctim, sizeof(st.st_mtim));
	close(fd);
}

/* ------------------------------------------------------------ SIGKILL */

struct dead_args {
	const char *path;
	int fd;
};

static int child_expect_enotconn(void *arg)
{
	struct dead_args *a = arg;
	struct stat st;
	char c;

	if (stat(a->path, &st) != -1 || errno != ENOTCONN) {
		fprintf(stderr, "stat after SIGKILL: %s\n", strerror(errno));
		return 1;
	}
	if (pread(a->fd, &c, 1, 0) != -1 || errno != ENOTCONN)
		return 2;
	if (open(a->path, O_RDONLY) != -1 || errno != ENOTCONN)
		return 3;
	return 0;
}

static void test_sigkill(void **state)
{
	struct dead_args a;
	struct stat st;
	int fd;

	(void)state;
	fd = open(P("k"), O_RDWR | O_CREAT, 0644);
	assert_true(fd >= 0);
	pwrite_all(fd, "kill", 4, 0);
	the_mnt.expect_killed = true;
	assert_int_equal(kill(the_mnt.pid, SIGKILL), 0);
	/* Once the server is gone its /dev/fuse descriptor is released and the
	 * connection aborted: every later request fails with ENOTCONN (one
	 * caught in flight by the abort would get ECONNABORTED instead). */
	assert_true(mnt_reap(&the_mnt, RS_WAIT_MS));
	a.path = P("k");
	a.fd = fd;
	assert_int_equal(in_child(child_expect_enotconn, &a, RS_WAIT_MS), 0);
	close(fd);
	/* the mount can be cleaned up (the teardown checks it is gone and the
	 * server died of SIGKILL), leaving a plain directory */
	assert_int_equal(mnt_stop(&the_mnt), 0);
	assert_false(mnt_mounted(&the_mnt));
	assert_int_equal(stat(the_mnt.dir, &st), -1);	/* removed */
	the_mnt.dir[0] = 0;
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_namespace, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_refused_insert_grows_size, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_readdir_many, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_open_unlink_rename, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_xattr, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_ioctl_shift, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_native_fallocate, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_ioctl_bad_input, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_mmap_coherence, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_keep_cache, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_keep_cache_off, mount_nokeep, unmount),
		cmocka_unit_test_setup_teardown(test_auto_inval_off, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_auto_inval_on, mount_autoinval, unmount),
		cmocka_unit_test_setup_teardown(test_concurrent_writers, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_concurrent_shifts, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_enospc, mount_small, unmount),
		cmocka_unit_test_setup_teardown(test_insert_1tib, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_privs_and_times, mount_allow_other, unmount),
		cmocka_unit_test_setup_teardown(test_sigkill, mount_uncached, unmount),
	};

	if (mnt_can_run() != 0)
		return 77;
	if (getenv("RS_TEST_FILTER"))	/* run one test: RS_TEST_FILTER=test_enospc */
		cmocka_set_test_filter(getenv("RS_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
