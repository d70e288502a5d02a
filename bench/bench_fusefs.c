/* SPDX-License-Identifier: MIT */
/*
 * bench_fusefs.c - prints a table: rangeshift-fusefs beside tmpfs for
 * sequential write and read of a 1 GiB file with 128 KiB requests (MB/s),
 * random 4 KiB reads cold and warm (ops/s and us per read), insert and collapse range of
 * 4 KiB at offset 0 of the 1 GiB file (us), and the time of the copy a
 * program must do to "insert" without insert range (rewrite the file
 * shifted by 4 KiB into a new file).  tmpfs has no insert/collapse: n/a.
 *
 * The write time includes the final fsync(2), so data a cache still holds
 * is counted when it reaches the file system.  Cold random reads drop the
 * kernel's cached pages first (every read of fusefs is a request to the
 * server; tmpfs pages are the storage, so tmpfs is always warm).  Warm
 * random reads are what a program re-reading its file sees: the file was
 * read through once by an earlier open(2), then it is opened again and
 * read at random, ten times as many reads as cold (each takes about a
 * microsecond: a window of a second or two, as the cold row's, rides out
 * the shared host's scheduling noise).
 *
 * Needs root and /dev/fuse (it mounts the server in a fresh directory with
 * the test harness, and a private tmpfs).  Not a test: it asserts nothing.
 *
 *   bench_fusefs [--size BYTES] [--reads N] [--shifts N] [--opts O] [--arg A]
 *
 * --opts: the server's -o options besides size= (e.g. keep_cache=0,
 * max_write=131072, splice_read); --arg: one more server argument (-s).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "rangeshift_fusefs.h"

#define REQ (128 * 1024)
#define BS 4096

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_fusefs: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct result {
	double write_mbs, read_mbs, rand_ops, rand_us, warm_ops, warm_us;
	double insert_us, collapse_us;	/* < 0: n/a */
	double copy_us;
};

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Rewrite src into dst shifted by one block: what a program does without
 * FALLOC_FL_INSERT_RANGE. */
static double copy_insert(const char *src, const char *dst, int64_t size,
			  char *buf)
{
	double t0 = now_s();
	int in = open(src, O_RDONLY), out;
	int64_t off;

	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0)
		die("open for copy");
	for (off = 0; off < size; off += REQ) {
		ssize_t n = pread(in, buf, REQ, off);

		if (n <= 0 || pwrite(out, buf, (size_t)n, off + BS) != n)
			die("copy");
	}
	if (fsync(out) != 0)
		die("fsync copy");
	close(in);
	close(out);
	return (now_s() - t0) * 1e6;
}

/* reads random 4 KiB reads of fd; the seconds they took. */
static double random_reads(int fd, int64_t size, long reads, char *buf)
{
	double t0;
	int64_t off;
	long i;

	srandom(42);
	t0 = now_s();
	for (i = 0; i < reads; i++) {
		off = (int64_t)(random() % (size / BS)) * BS;
		if (pread(fd, buf, BS, off) != BS)
			die("random read");
	}
	return now_s() - t0;
}

static int reopen(int fd, const char *path)
{
	close(fd);
	fd = open(path, O_RDWR);
	if (fd < 0)
		die("reopen");
	return fd;
}

static void run(const char *dir, int64_t size, long reads, int shifts,
		int fusefs, struct result *r)
{
	char path[4096], copy[4096];
	char *buf = malloc(REQ);
	double t0, *t;
	int64_t off;
	long i;
	int fd;

	if (!buf)
		die("malloc");
	memset(buf, 0xcd, REQ);
	snprintf(path, sizeof(path), "%s/bench", dir);
	snprintf(copy, sizeof(copy), "%s/bench.copy", dir);

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("open");
	t0 = now_s();
	for (off = 0; off < size; off += REQ)
		if (pwrite(fd, buf, REQ, off) != REQ)
			die("write");
	if (fsync(fd) != 0)
		die("fsync");
	r->write_mbs = size / (now_s() - t0) / 1e6;

	/* Cold read for fusefs: drop the kernel's cached pages so every
	 * request reaches the server (tmpfs pages are the storage). */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	t0 = now_s();
	for (off = 0; off < size; off += REQ)
		if (pread(fd, buf, REQ, off) != REQ)
			die("read");
	r->read_mbs = size / (now_s() - t0) / 1e6;

	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	t0 = random_reads(fd, size, reads, buf);
	r->rand_ops = reads / t0;
	r->rand_us = t0 / reads * 1e6;

	/* Warm: read through by one open, then opened again. */
	fd = reopen(fd, path);
	for (off = 0; off < size; off += REQ)
		if (pread(fd, buf, REQ, off) != REQ)
			die("read");
	fd = reopen(fd, path);
	t0 = random_reads(fd, size, 10 * reads, buf);
	r->warm_ops = 10 * reads / t0;
	r->warm_us = t0 / (10 * reads) * 1e6;

	r->insert_us = r->collapse_us = -1;
	if (fusefs) {
		struct rs_ioc_range rg = { .offset = 0, .length = BS };

		t = malloc(sizeof(*t) * (size_t)shifts);
		if (!t)
			die("malloc");
		for (i = 0; i < shifts; i++) {
			t0 = now_s();
			if (ioctl(fd, RS_IOC_INSERT, &rg) != 0)
				die("RS_IOC_INSERT");
			t[i] = (now_s() - t0) * 1e6;
		}
		qsort(t, (size_t)shifts, sizeof(*t), cmp_d);
		r->insert_us = t[shifts / 2];
		for (i = 0; i < shifts; i++) {
			t0 = now_s();
			if (ioctl(fd, RS_IOC_COLLAPSE, &rg) != 0)
				die("RS_IOC_COLLAPSE");
			t[i] = (now_s() - t0) * 1e6;
		}
		qsort(t, (size_t)shifts, sizeof(*t), cmp_d);
		r->collapse_us = t[shifts / 2];
		free(t);
	}
	close(fd);
	r->copy_us = copy_insert(path, copy, size, buf);
	unlink(copy);
	unlink(path);
	free(buf);
}

static void row_num(const char *name, double a, double b, const char *fmt)
{
	char x[32], y[32];

	if (a < 0)
		snprintf(x, sizeof(x), "n/a");
	else
		snprintf(x, sizeof(x), fmt, a);
	if (b < 0)
		snprintf(y, sizeof(y), "n/a");
	else
		snprintf(y, sizeof(y), fmt, b);
	printf("| %-44s | %14s | %14s |\n", name, x, y);
}

int main(int argc, char **argv)
{
	int64_t size = (int64_t)1 << 30;
	long reads = 100000;
	int shifts = 101, i;
	const char *opts = "", *arg = NULL;
	char mopts[1024];
	struct result fr, tr;
	struct mnt m;
	char tdir[] = "/tmp/rs-bench-tmpfs-XXXXXX";

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size = strtoll(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--reads") && i + 1 < argc)
			reads = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--shifts") && i + 1 < argc)
			shifts = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--opts") && i + 1 < argc)
			opts = argv[++i];
		else if (!strcmp(argv[i], "--arg") && i + 1 < argc)
			arg = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--size BYTES] [--reads N] [--shifts N] [--opts O] [--arg A]\n"
				"(root; mounts rangeshift-fusefs and a tmpfs)\n", argv[0]);
			return 2;
		}
	}
	if (size < REQ || size % REQ || reads < 1 || reads > 100000000 || shifts < 1) {
		fprintf(stderr, "bench_fusefs: size must be a positive multiple of 128 KiB, counts >= 1 (reads <= 1e8)\n");
		return 2;
	}
	if (mnt_can_run() != 0)
		return 77;

	snprintf(mopts, sizeof(mopts), "size=8g%s%s", *opts ? "," : "", opts);
	if (mnt_start_arg(&m, mopts, arg) != 0)
		return 1;
	run(m.dir, size, reads, shifts, 1, &fr);
	if (mnt_stop(&m) != 0)
		return 1;

	if (!mkdtemp(tdir))
		die("mkdtemp");
	if (mount("tmpfs", tdir, "tmpfs", 0, "size=4g") != 0)
		die("mount tmpfs");
	run(tdir, size, reads, shifts, 0, &tr);
	umount(tdir);
	rmdir(tdir);

	printf("file %lld MiB, %d KiB requests, %ld cold and %ld warm random reads, median of %d shifts; server -o %s%s%s\n\n",
	       (long long)(size >> 20), REQ / 1024, reads, 10 * reads, shifts, mopts,
	       arg ? " " : "", arg ? arg : "");
	printf("| %-44s | %14s | %14s |\n", "operation", "fusefs", "tmpfs");
	printf("|%s|%s|%s|\n", "----------------------------------------------",
	       "----------------", "----------------");
	row_num("sequential write, 128 KiB, with fsync (MB/s)", fr.write_mbs, tr.write_mbs, "%.0f");
	row_num("sequential read, 128 KiB, cold cache (MB/s)", fr.read_mbs, tr.read_mbs, "%.0f");
	row_num("random read, 4 KiB, cold cache (ops/s)", fr.rand_ops, tr.rand_ops, "%.0f");
	row_num("random read, 4 KiB, cold cache (us/op)", fr.rand_us, tr.rand_us, "%.1f");
	row_num("random read, 4 KiB, warm (ops/s)", fr.warm_ops, tr.warm_ops, "%.0f");
	row_num("random read, 4 KiB, warm (us/op)", fr.warm_us, tr.warm_us, "%.1f");
	row_num("insert range 4 KiB at 0 (us)", fr.insert_us, tr.insert_us, "%.1f");
	row_num("collapse range 4 KiB at 0 (us)", fr.collapse_us, tr.collapse_us, "%.1f");
	row_num("insert by copying the file (us)", fr.copy_us, tr.copy_us, "%.0f");
	return 0;
}
