/* SPDX-License-Identifier: MIT */
/*
 * test_tools.c - unmodified tools on a rangeshift-fusefs mount of this
 * (stock) kernel: the real xfs_io (Debian xfsprogs) and filefrag, with and
 * without librangeshift-preload.so.  Exit code 77 (ctest SKIP) when the
 * mount or the tools are unavailable.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "rangeshift_fusefs.h"

#define XFS_IO "/usr/sbin/xfs_io"
#define FILEFRAG "/usr/sbin/filefrag"

static struct mnt the_mnt;
static char preload_env[2 * PATH_MAX + 64];
static char *env_preload[] = { preload_env, "ASAN_OPTIONS=detect_leaks=0", NULL };

static int setup(void **state)
{
	*state = &the_mnt;
	return mnt_start(&the_mnt, NULL);
}

static int teardown(void **state)
{
	return mnt_stop(*state);
}

static char *P(const char *name, char *buf)
{
	return mnt_path(&the_mnt, name, buf, PATH_MAX);
}

/* Is this kernel one whose FUSE refuses INSERT_RANGE (a stock kernel)? */
static bool stock_kernel(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0644), r;
	bool stock;

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "0123456789abcdef", 16, 0), 16);
	assert_int_equal(ftruncate(fd, 65536), 0);
	r = fallocate(fd, FALLOC_FL_INSERT_RANGE, 4096, 4096);
	stock = r == -1 && errno == EOPNOTSUPP;
	close(fd);
	unlink(path);
	return stock;
}

static void test_xfs_io_finsert(void **state)
{
	char path[PATH_MAX], out[8192];
	unsigned char got[4096];
	struct stat st;
	int fd, i;

	(void)state;
	P("xf", path);
	{
		char *argv[] = { XFS_IO, "-f", "-c", "pwrite -S 0xab 0 64k",
				 "-c", "finsert 4k 8k", "-c", "fcollapse 60k 4k",
				 path, NULL };

		assert_int_equal(run_cmd(argv, env_preload, out, sizeof(out), RS_WAIT_MS), 0);
		assert_null(strstr(out, "not supported"));
	}
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 68 * 1024);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, got, 4096, 4096), 4096);
	for (i = 0; i < 4096; i++)
		assert_int_equal(got[i], 0);
	assert_int_equal(pread(fd, got, 4096, 12288), 4096);
	for (i = 0; i < 4096; i++)
		assert_int_equal(got[i], 0xab);
	close(fd);

	/* without the library a stock kernel refuses, as documented */
	if (stock_kernel(P("probe", out))) {
		char *argv[] = { XFS_IO, "-c", "finsert 4k 8k", path, NULL };

		run_cmd(argv, NULL, out, sizeof(out), RS_WAIT_MS);
		assert_non_null(strstr(out, "Operation not supported"));
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_size, 68 * 1024);
	}
}

static void test_xfs_io_fiemap(void **state)
{
	char path[PATH_MAX], out[8192];

	(void)state;
	P("fm", path);
	{
		char *argv[] = { XFS_IO, "-f", "-c", "pwrite 0 64k",
				 "-c", "finsert 4k 8k", "-c", "falloc -k 100k 8k",
				 "-c", "fiemap -v", path, NULL };

		assert_int_equal(run_cmd(argv, env_preload, out, sizeof(out), RS_WAIT_MS), 0);
	}
	print_message("%s", out);
	assert_null(strstr(out, "not supported"));
	assert_non_null(strstr(out, "[0..7]:"));
	assert_non_null(strstr(out, "[8..23]:"));
	assert_non_null(strstr(out, "hole"));
	assert_non_null(strstr(out, "[24..143]:"));
	assert_non_null(strstr(out, "[144..199]:"));
	assert_non_null(strstr(out, "[200..215]:"));
	/* unwritten + last flags on the preallocated extent past EOF */
	assert_non_null(strstr(out, "0x801"));

	/* without the library FIEMAP fails on FUSE */
	{
		char *argv[] = { XFS_IO, "-c", "fiemap -v", path, NULL };

		run_cmd(argv, NULL, out, sizeof(out), RS_WAIT_MS);
		assert_null(strstr(out, "[24..143]:"));
	}
}

static void test_filefrag(void **state)
{
	char path[PATH_MAX], out[8192];

	(void)state;
	P("ff", path);
	{
		char *argv[] = { XFS_IO, "-f", "-c", "pwrite 0 64k",
				 "-c", "finsert 4k 8k", path, NULL };

		assert_int_equal(run_cmd(argv, env_preload, out, sizeof(out), RS_WAIT_MS), 0);
	}
	{
		char *argv[] = { FILEFRAG, "-v", path, NULL };

		assert_int_equal(run_cmd(argv, env_preload, out, sizeof(out), RS_WAIT_MS), 0);
	}
	print_message("%s", out);
	/* physical == logical, so filefrag counts the file as unfragmented */
	assert_non_null(strstr(out, "1 extent found"));
	assert_non_null(strstr(out, "   0:        0..       0:"));
	assert_non_null(strstr(out, "   1:        3..      17:"));
	assert_non_null(strstr(out, "last,eof"));
}

/* Files elsewhere are untouched: on tmpfs (no insert range, no FIEMAP)
 * the library passes the kernel's refusal through unchanged. */
static void test_other_fs_untouched(void **state)
{
	char path[] = "/dev/shm/rs-preload-XXXXXX", out[8192];
	struct stat st;
	int fd;

	(void)state;
	fd = mkstemp(path);
	if (fd < 0)
		skip();
	close(fd);
	{
		char *argv[] = { XFS_IO, "-c", "pwrite 0 64k", "-c", "finsert 4k 8k",
				 "-c", "fiemap -v", path, NULL };

		run_cmd(argv, env_preload, out, sizeof(out), RS_WAIT_MS);
	}
	assert_int_equal(stat(path, &st), 0);
	unlink(path);
	print_message("%s", out);
	assert_non_null(strstr(out, "fallocate: Operation not supported"));
	assert_int_equal(st.st_size, 64 * 1024);
	assert_null(strstr(out, "[0..127]:"));
}

/* The seed xfstests generic/039-043 with the real xfs_io under the preload
 * library, compared with their golden outputs by vm/guest/seeds.sh (the vm
 * guest test's reconstruction of common/punch, reused rather than duplicated).
 * LD_PRELOAD applies to the script's whole process tree; the library only
 * acts on calls the kernel refused on a rangeshift-fusefs file. */
static void test_seeds(void **state)
{
	static char out[65536];
	char dir[] = "/tmp/rs-seeds-XXXXXX";
	char *argv[] = { "sh", RS_SEEDS_SCRIPT, "--out", dir, "--xfs-io", XFS_IO,
			 the_mnt.dir, NULL };
	char *rm[] = { "rm", "-rf", dir, NULL };
	int r;

	(void)state;
	if (access(RS_SEEDS_SCRIPT, R_OK) != 0) {
		print_message("no %s: skipped\n", RS_SEEDS_SCRIPT);
		skip();
	}
	assert_non_null(mkdtemp(dir));
	r = run_cmd(argv, env_preload, out, sizeof(out), 10 * RS_WAIT_MS);
	print_message("%s", out);
	run_cmd(rm, NULL, NULL, 0, RS_WAIT_MS);
	assert_int_equal(r, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_xfs_io_finsert, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xfs_io_fiemap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filefrag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_fs_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seeds, setup, teardown),
	};

	if (mnt_can_run() != 0)
		return 77;
	if (access(XFS_IO, X_OK) != 0 || access(FILEFRAG, X_OK) != 0) {
		fprintf(stderr, "skip: need %s and %s\n", XFS_IO, FILEFRAG);
		return 77;
	}
	/* RS_PRELOAD_RUNTIME: the sanitizer runtime that must come first when
	 * the library itself is sanitized (empty otherwise). */
	snprintf(preload_env, sizeof(preload_env), "LD_PRELOAD=%s%s%s",
		 RS_PRELOAD_RUNTIME, RS_PRELOAD_RUNTIME[0] ? " " : "", RS_PRELOAD);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
