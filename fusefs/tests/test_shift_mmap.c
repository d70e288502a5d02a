/* SPDX-License-Identifier: MIT */
/*
 * test_shift_mmap.c - range ioctls against shared mappings, on a
 * single-threaded (-s) and a multi-threaded server, with several client
 * processes at once:
 *
 *  - dirty pages, never msync'ed, under RS_IOC_INSERT/COLLAPSE: the
 *    server's page-cache invalidation makes the kernel write them back
 *    through the server, which once deadlocked the mount (a worker waiting
 *    on itself); the data must move with the shift;
 *  - a mapping used up to a size the ioctl grew (insert, fallocate), with
 *    no stat(2) in between: a SIGBUS once, as the kernel kept the old size.
 *
 * Every client runs in a child process under a watchdog (run_procs()): a
 * hang is reported as such, the FUSE connection is aborted and the test
 * fails, instead of a hung ctest.  Exit code 77 (ctest SKIP) when mounting
 * is impossible here.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "harness.h"
#include "rangeshift_fusefs.h"

#define BS		4096
#define NBLK		8
#define HANG_MS		RS_WAIT_MS	/* a client taking longer has hung */

static struct mnt the_mnt;

static int mount_single(void **state)
{
	*state = &the_mnt;
	return mnt_start_arg(&the_mnt, NULL, "-s");
}

static int mount_multi(void **state)
{
	*state = &the_mnt;
	return mnt_start(&the_mnt, NULL);
}

static int unmount(void **state)
{
	struct mnt *m = *state;

	return mnt_stop(m);
}

static int ioc(int fd, unsigned long cmd, int64_t off, int64_t len, int mode)
{
	struct rs_ioc_range r = { .offset = off, .length = len, .mode = mode };

	return ioctl(fd, cmd, &r);
}

/* Is every byte of block blk (as read(2) sees it) equal to c? */
static int block_is(int fd, int blk, int c)
{
	unsigned char buf[BS];
	int i;

	if (pread(fd, buf, BS, (off_t)blk * BS) != BS)
		return 0;
	for (i = 0; i < BS; i++)
		if (buf[i] != c)
			return 0;
	return 1;
}

static int open_file(int i, const char *prefix)
{
	char name[64], path[PATH_MAX];

	snprintf(name, sizeof(name), "%s%d", prefix, i);
	return open(mnt_path(&the_mnt, name, path, sizeof(path)),
		    O_RDWR | O_CREAT | O_TRUNC, 0644);
}

/* ---------------------------------------------------------- dirty pages */

/* Blocks 'A'..'H'; block 2 dirtied to 'x' through the mapping, no msync;
 * insert one block at 1: the dirty data must be at block 3.  Then block 1
 * (the new hole) dirtied to 'y', and blocks 1-2 collapsed: 'x' back at
 * block 1.  Returns the failing step, 0 when all is well. */
static int dirty_shift(int i, void *arg)
{
	unsigned char blk[BS], *p;
	int fd = open_file(i, "dirty"), b;

	(void)arg;
	if (fd < 0)
		return 1;
	for (b = 0; b < NBLK; b++) {
		memset(blk, 'A' + b, BS);
		if (pwrite(fd, blk, BS, (off_t)b * BS) != BS)
			return 2;
	}
	p = mmap(NULL, 2 * NBLK * BS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 3;
	memset(p + 2 * BS, 'x', BS);
	if (ioc(fd, RS_IOC_INSERT, BS, BS, 0) != 0)
		return 4;
	if (!block_is(fd, 0, 'A') || !block_is(fd, 1, 0) || !block_is(fd, 2, 'B') ||
	    !block_is(fd, 3, 'x') || !block_is(fd, 4, 'D') || !block_is(fd, 8, 'H'))
		return 5;
	if (p[3 * BS] != 'x' || p[2 * BS + 7] != 'B' || p[BS] != 0)
		return 6;
	memset(p + BS, 'y', BS);
	if (ioc(fd, RS_IOC_COLLAPSE, BS, 2 * BS, 0) != 0)
		return 7;
	if (!block_is(fd, 0, 'A') || !block_is(fd, 1, 'x') || !block_is(fd, 2, 'D'))
		return 8;
	if (p[BS] != 'x' || p[2 * BS] != 'D')
		return 9;
	if (munmap(p, 2 * NBLK * BS) != 0 || close(fd) != 0)
		return 10;
	return 0;
}

static void test_dirty_shift_one(void **state)
{
	assert_int_equal(run_procs(*state, "dirty shift", 1, dirty_shift, NULL,
				   HANG_MS), 0);
}

static void test_dirty_shift_many(void **state)
{
	assert_int_equal(run_procs(*state, "dirty shift", 16, dirty_shift, NULL,
				   HANG_MS), 0);
}

/* Several processes shifting one file, each with a dirty page in its own
 * mapping: insert one block at the front, collapse it again.  The data
 * under the others' feet moves, so only the end state is checked: the
 * size is back, and nothing hung. */
static int shared_shift(int i, void *arg)
{
	char path[PATH_MAX];
	unsigned char *p;
	int fd, k;

	(void)arg;
	fd = open(mnt_path(&the_mnt, "shared0", path, sizeof(path)), O_RDWR);
	if (fd < 0)
		return 1;
	p = mmap(NULL, 4 * NBLK * BS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 2;
	for (k = 0; k < 20; k++) {
		p[(i % NBLK) * BS + k] = (unsigned char)('a' + i);
		if (ioc(fd, RS_IOC_INSERT, 0, BS, 0) != 0)
			return 3;
		if (ioc(fd, RS_IOC_COLLAPSE, 0, BS, 0) != 0)
			return 4;
	}
	munmap(p, 4 * NBLK * BS);
	close(fd);
	return 0;
}

static void test_dirty_shift_shared(void **state)
{
	unsigned char blk[NBLK * BS];
	struct stat st;
	int fd = open_file(0, "shared");

	assert_true(fd >= 0);
	memset(blk, 'S', sizeof(blk));
	assert_int_equal(pwrite(fd, blk, sizeof(blk), 0), (ssize_t)sizeof(blk));
	assert_int_equal(run_procs(*state, "shared shift", 8, shared_shift, NULL,
				   HANG_MS), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, NBLK * BS);
	close(fd);
}

/* ------------------------------------------------------------- SIGBUS */

/* 8 KiB written, one block inserted at 0, then the third block written
 * through a fresh mapping of the new 12 KiB (no stat first); then the
 * file grown to 20 KiB by RS_IOC_FALLOCATE, and its last block written
 * through a mapping.  A stale kernel i_size makes those writes SIGBUS
 * (run_procs() reports the signal). */
static int grow_then_map(int i, void *arg)
{
	unsigned char blk[2 * BS], *p;
	int fd = open_file(i, "grow");

	(void)arg;
	if (fd < 0)
		return 1;
	memset(blk, 'o', sizeof(blk));
	if (pwrite(fd, blk, sizeof(blk), 0) != (ssize_t)sizeof(blk))
		return 2;
	if (ioc(fd, RS_IOC_INSERT, 0, BS, 0) != 0)
		return 3;
	p = mmap(NULL, 3 * BS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 4;
	memset(p + 2 * BS, 'a', BS);		/* SIGBUS if i_size is stale */
	if (munmap(p, 3 * BS) != 0)
		return 5;
	if (ioc(fd, RS_IOC_FALLOCATE, 3 * BS, 2 * BS, 0) != 0)
		return 6;
	p = mmap(NULL, 5 * BS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 7;
	memset(p + 4 * BS, 'b', BS);		/* likewise */
	if (msync(p, 5 * BS, MS_SYNC) != 0 || munmap(p, 5 * BS) != 0)
		return 8;
	if (!block_is(fd, 0, 0) || !block_is(fd, 1, 'o') || !block_is(fd, 2, 'a') ||
	    !block_is(fd, 3, 0) || !block_is(fd, 4, 'b'))
		return 9;
	close(fd);
	return 0;
}

static void test_grow_no_sigbus(void **state)
{
	assert_int_equal(run_procs(*state, "grow then map", 8, grow_then_map, NULL,
				   HANG_MS), 0);
}

/* The xfs_io reproducer, through the preload library. */
static int xfs_io_finsert_mwrite(int i, void *arg)
{
	char name[32], path[PATH_MAX], out[4096];
	char *argv[] = { "xfs_io", "-f", "-c", "pwrite -q 0 8k", "-c", "finsert 0 4k",
			 "-c", "mmap -w 0 12k", "-c", "mwrite -S 0x61 8k 4k", path, NULL };
	char *env[] = { arg, NULL };
	int fd, ret;

	snprintf(name, sizeof(name), "xfs_io%d", i);
	mnt_path(&the_mnt, name, path, sizeof(path));
	ret = run_cmd(argv, env, out, sizeof(out), HANG_MS);
	if (ret != 0) {
		fprintf(stderr, "xfs_io: status %d: %s\n", ret, out);
		return 1;
	}
	fd = open(path, O_RDONLY);
	if (fd < 0 || !block_is(fd, 0, 0) || !block_is(fd, 2, 0x61))
		return 2;
	close(fd);
	return 0;
}

static void test_xfs_io_no_sigbus(void **state)
{
	char env[2 * PATH_MAX];
	char *argv[] = { "xfs_io", "-V", NULL };
	char out[256];

	if (run_cmd(argv, NULL, out, sizeof(out), RS_WAIT_MS) != 0)
		skip();
	if (RS_PRELOAD_RUNTIME[0])
		snprintf(env, sizeof(env), "LD_PRELOAD=%s:%s", RS_PRELOAD_RUNTIME, RS_PRELOAD);
	else
		snprintf(env, sizeof(env), "LD_PRELOAD=%s", RS_PRELOAD);
	assert_int_equal(run_procs(*state, "xfs_io finsert+mwrite", 4,
				   xfs_io_finsert_mwrite, env, 2 * HANG_MS), 0);
}

int main(void)
{
#define BOTH(t) { #t " -s", t, mount_single, unmount, NULL }, \
		{ #t " mt", t, mount_multi, unmount, NULL }
	const struct CMUnitTest tests[] = {
		BOTH(test_dirty_shift_one),
		BOTH(test_dirty_shift_many),
		BOTH(test_dirty_shift_shared),
		BOTH(test_grow_no_sigbus),
		BOTH(test_xfs_io_no_sigbus),
	};

	if (mnt_can_run() != 0)
		return 77;
	if (getenv("RS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("RS_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
