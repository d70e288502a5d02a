/* SPDX-License-Identifier: MIT */
/*
 * test_stress.c - rangeshift-fusefs under load, bounded in time (well
 * under a minute; every client under a run_procs() watchdog):
 *
 *  - mixed: client processes each doing random pwrite, pread, truncate,
 *    fallocate (allocate, keep-size, punch, zero), mmap reads and writes
 *    and the insert/collapse ioctls on their own file and on one shared
 *    file, every byte checked against a shadow copy of the file;
 *  - server killed (SIGKILL) mid-run: every client sees errors (ENOTCONN,
 *    ECONNABORTED; SIGBUS through a mapping) and exits, none hangs;
 *  - ENOSPC (size=1m): writes fail with ENOSPC, and every write that was
 *    acknowledged reads back while the server lives.
 *
 * Exit code 77 (ctest SKIP) when mounting is impossible here.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <signal.h>
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
#define MAXSZ		(256 * 1024)	/* shadow files stay below this */
#define NPROC		4
#define NOPS		300
#define HANG_MS		(2 * RS_WAIT_MS)

static struct mnt the_mnt;

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

static int unmount(void **state)
{
	return mnt_stop(*state);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int ioc(int fd, unsigned long cmd, int64_t off, int64_t len, int mode)
{
	struct rs_ioc_range r = { .offset = off, .length = len, .mode = mode };

	return ioctl(fd, cmd, &r);
}

static int open_name(const char *name, int flags)
{
	char path[PATH_MAX];

	return open(mnt_path(&the_mnt, name, path, sizeof(path)), flags, 0644);
}

/* ---------------------------------------------------------------- mixed */

struct shadow {
	unsigned char *d;	/* MAXSZ bytes, zero past size */
	int64_t size;
};

static void sh_resize(struct shadow *s, int64_t size)
{
	if (size < s->size)
		memset(s->d + size, 0, (size_t)(s->size - size));
	s->size = size;
}

/* One random op on fd and the shadow; 0 or a failing step number. */
static int one_op(int fd, struct shadow *s, uint64_t *seed)
{
	unsigned char buf[4 * BS], *p;
	int64_t blocks = s->size / BS, off, len;
	int op = (int)(rnd(seed) % 8);

	off = (int64_t)(rnd(seed) % (MAXSZ / 2));
	len = 1 + (int64_t)(rnd(seed) % sizeof(buf));
	switch (op) {
	case 0:		/* pwrite */
		memset(buf, (int)(rnd(seed) & 0xff), (size_t)len);
		if (pwrite(fd, buf, (size_t)len, off) != len)
			return 10;
		memcpy(s->d + off, buf, (size_t)len);
		if (off + len > s->size)
			s->size = off + len;
		return 0;
	case 1:		/* truncate */
		if (ftruncate(fd, off) != 0)
			return 11;
		sh_resize(s, off);
		return 0;
	case 2:		/* allocate, maybe keeping the size */
		op = (rnd(seed) & 1) ? FALLOC_FL_KEEP_SIZE : 0;
		if (fallocate(fd, op, off, len) != 0)
			return 12;
		if (!op && off + len > s->size)
			s->size = off + len;
		return 0;
	case 3:		/* punch or zero */
		if (rnd(seed) & 1) {
			if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len))
				return 13;
		} else if (fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, len)) {
			return 14;
		}
		if (off < s->size)
			memset(s->d + off, 0, (size_t)(off + len > s->size ? s->size - off : len));
		return 0;
	case 4:		/* insert (ioctl): inside the file, block-aligned */
		if (blocks < 1 || s->size + 4 * BS > MAXSZ)
			return 0;
		off = (int64_t)(rnd(seed) % (uint64_t)blocks) * BS;
		len = (1 + (int64_t)(rnd(seed) % 4)) * BS;
		if (ioc(fd, RS_IOC_INSERT, off, len, 0) != 0)
			return 15;
		memmove(s->d + off + len, s->d + off, (size_t)(s->size - off));
		memset(s->d + off, 0, (size_t)len);
		s->size += len;
		return 0;
	case 5:		/* collapse (ioctl): must end before EOF */
		if (blocks < 2)
			return 0;
		off = (int64_t)(rnd(seed) % (uint64_t)(blocks - 1)) * BS;
		len = BS;
		if (ioc(fd, RS_IOC_COLLAPSE, off, len, 0) != 0)
			return 16;
		memmove(s->d + off, s->d + off + len, (size_t)(s->size - off - len));
		sh_resize(s, s->size - len);
		return 0;
	case 6:		/* write through a mapping (no msync) */
		if (s->size < 1)
			return 0;
		p = mmap(NULL, (size_t)s->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return 17;
		off = (int64_t)(rnd(seed) % (uint64_t)s->size);
		len = len > s->size - off ? s->size - off : len;
		memset(p + off, (int)(rnd(seed) & 0xff), (size_t)len);
		memcpy(s->d + off, p + off, (size_t)len);
		munmap(p, (size_t)s->size);
		return 0;
	default:	/* read through a mapping and with pread */
		if (s->size < 1)
			return 0;
		p = mmap(NULL, (size_t)s->size, PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return 18;
		op = memcmp(p, s->d, (size_t)s->size) ? 19 : 0;
		munmap(p, (size_t)s->size);
		return op;
	}
}

static int verify(int fd, const struct shadow *s)
{
	unsigned char *got = malloc(MAXSZ);
	struct stat st;
	int ret = 0;

	if (!got || fstat(fd, &st) != 0)
		ret = 2;
	else if (st.st_size != s->size)
		ret = 3;
	else if (pread(fd, got, MAXSZ, 0) != s->size || memcmp(got, s->d, (size_t)s->size))
		ret = 4;
	free(got);
	return ret;
}

static int mixed_client(int i, void *arg)
{
	struct shadow s = { calloc(1, MAXSZ + 4 * BS), 0 };
	uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
	char name[32];
	int fd, k, err;

	(void)arg;
	snprintf(name, sizeof(name), "mixed%d", i);
	fd = open_name(name, O_RDWR | O_CREAT | O_TRUNC);
	if (fd < 0 || !s.d)
		return 1;
	for (k = 0; k < NOPS; k++) {
		err = one_op(fd, &s, &seed);
		if (!err && k % 25 == 0)
			err = verify(fd, &s);
		if (err) {
			fprintf(stderr, "client %d op %d: step %d (%s)\n", i, k, err,
				strerror(errno));
			return err;
		}
	}
	err = verify(fd, &s);
	close(fd);
	free(s.d);
	return err;
}

/* Shared file: shifts and mapped writes by everybody; only the absence of
 * hangs and crashes is checked (the content depends on the interleaving). */
static int shared_client(int i, void *arg)
{
	uint64_t seed = 77 + (uint64_t)i;
	unsigned char *p;
	int fd = open_name("shared", O_RDWR), k;

	(void)arg;
	if (fd < 0)
		return 1;
	for (k = 0; k < NOPS / 3; k++) {
		int64_t off = (int64_t)(rnd(&seed) % 16) * BS;

		p = mmap(NULL, 16 * BS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return 2;
		p[off] = (unsigned char)k;
		munmap(p, 16 * BS);
		if (ioc(fd, RS_IOC_INSERT, off, BS, 0) != 0 ||
		    ioc(fd, RS_IOC_COLLAPSE, off, BS, 0) != 0)
			return 3;
	}
	close(fd);
	return 0;
}

static int mixed_or_shared(int i, void *arg)
{
	return i < NPROC ? mixed_client(i, arg) : shared_client(i - NPROC, arg);
}

static void test_mixed(void **state)
{
	unsigned char blk[32 * BS];
	struct stat st;
	int fd = open_name("shared", O_RDWR | O_CREAT);

	assert_true(fd >= 0);
	memset(blk, 's', sizeof(blk));
	assert_int_equal(pwrite(fd, blk, sizeof(blk), 0), (ssize_t)sizeof(blk));
	assert_int_equal(run_procs(*state, "mixed", 2 * NPROC, mixed_or_shared,
				   NULL, HANG_MS), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, sizeof(blk));
	close(fd);
}

/* ----------------------------------------------------------- server kill */

static void bus_exit(int sig)
{
	(void)sig;
	_exit(0);	/* a mapping of a dead server: SIGBUS is its error */
}

static int dead_errno(int e)
{
	return e == ENOTCONN || e == ECONNABORTED || e == ENODEV || e == EIO;
}

/* Ops until the server is gone: 0 once an op failed as a dead server's
 * do, else a step number. */
static int doomed_client(int i, void *arg)
{
	struct shadow s = { calloc(1, MAXSZ + 4 * BS), 0 };
	uint64_t seed = 1234 + (uint64_t)i;
	long long deadline = now_ms() + RS_WAIT_MS;
	char name[32];
	int fd, err;

	(void)arg;
	signal(SIGBUS, bus_exit);
	snprintf(name, sizeof(name), "doomed%d", i);
	fd = open_name(name, O_RDWR | O_CREAT | O_TRUNC);
	if (fd < 0 || !s.d)
		return dead_errno(errno) ? 0 : 1;
	while (now_ms() < deadline) {
		errno = 0;
		err = one_op(fd, &s, &seed);
		if (err && dead_errno(errno))
			return 0;
		if (err) {
			/* An op the server's death cut short (a pwrite the
			 * kernel split into several requests returns the bytes
			 * written before it, with no errno) is not itself an
			 * error: the next op must then fail as a dead server's. */
			char c = 0;

			errno = 0;
			if (pwrite(fd, &c, 1, 0) < 0 && dead_errno(errno))
				return 0;
			return err;
		}
	}
	return 2;	/* never saw the server die */
}

/* Kills the server once every client has created its file (bounded). */
static int killer(int i, void *arg)
{
	long long deadline = now_ms() + RS_WAIT_MS;
	char name[32], path[PATH_MAX];
	struct stat st;
	int k;

	(void)i;
	for (k = 1; k <= NPROC && now_ms() < deadline; ) {
		snprintf(name, sizeof(name), "doomed%d", k);
		if (stat(mnt_path(&the_mnt, name, path, sizeof(path)), &st) == 0 &&
		    st.st_size > 0)
			k++;
		else
			poll_pause();
	}
	return kill(*(pid_t *)arg, SIGKILL) == 0 ? 0 : 1;
}

static int doomed_or_killer(int i, void *arg)
{
	return i == 0 ? killer(i, arg) : doomed_client(i, arg);
}

static void test_server_killed(void **state)
{
	pid_t server = the_mnt.pid;

	the_mnt.expect_killed = true;
	assert_int_equal(run_procs(*state, "server killed", NPROC + 1,
				   doomed_or_killer, &server, HANG_MS), 0);
	assert_true(mnt_reap(&the_mnt, RS_WAIT_MS));
}

/* --------------------------------------------------------------- ENOSPC */

/* Writes 16 KiB chunks (a different byte each) until ENOSPC; then checks
 * that every acknowledged chunk reads back. */
static int full_client(int i, void *arg)
{
	unsigned char buf[4 * BS], got[4 * BS];
	char name[32];
	int fd, k, n = 0;

	(void)arg;
	snprintf(name, sizeof(name), "full%d", i);
	fd = open_name(name, O_RDWR | O_CREAT | O_TRUNC);
	if (fd < 0)
		return 1;
	for (k = 0; k < 1024; k++) {
		memset(buf, k & 0xff, sizeof(buf));
		if (pwrite(fd, buf, sizeof(buf), (off_t)k * sizeof(buf)) != sizeof(buf)) {
			if (errno != ENOSPC)
				return 2;
			break;
		}
		n++;
	}
	if (k == 1024)
		return 3;	/* never full */
	/* A shift needs no space; growing allocations are refused. */
	if (fallocate(fd, 0, (off_t)n * sizeof(buf), 1 << 20) == 0 || errno != ENOSPC)
		return 4;
	for (k = 0; k < n; k++) {
		memset(buf, k & 0xff, sizeof(buf));
		if (pread(fd, got, sizeof(got), (off_t)k * sizeof(buf)) != sizeof(got) ||
		    memcmp(buf, got, sizeof(buf)))
			return 5;
	}
	close(fd);
	return 0;
}

static void test_enospc(void **state)
{
	assert_int_equal(run_procs(*state, "enospc", NPROC, full_client, NULL,
				   HANG_MS), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mixed, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_server_killed, mount_default, unmount),
		cmocka_unit_test_setup_teardown(test_enospc, mount_small, unmount),
	};

	if (mnt_can_run() != 0)
		return 77;
	if (getenv("RS_TEST_FILTER"))
		cmocka_set_test_filter(getenv("RS_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
