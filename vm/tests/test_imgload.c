/*
 * test_imgload.c - rs-imgload (vm/guest/imgload.c), which loads the host-made
 * ext4/XFS images onto the guest's ram disks: the listed ranges arrive
 * byte-exact, nothing outside them is written, and a bad map or a too-small
 * destination is refused with a message before anything is written; with -z
 * a used destination becomes exactly the image.
 * Regular files stand in for the block devices.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define IMG (4 << 20)

static char dir[] = "/tmp/test_imgload.XXXXXX";
static char src[64], dst[64], map[64];

static int run_opt(const char *opt, const char *maptext, off_t dstsize)
{
	FILE *f = fopen(map, "w");
	assert_non_null(f);
	fputs(maptext, f);
	fclose(f);
	/* the destination: DST_BYTE everywhere, to see what was written */
	int fd = open(dst, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	unsigned char *b = malloc((size_t)dstsize);
	assert_non_null(b);
	memset(b, 0xee, (size_t)dstsize);
	assert_int_equal(pwrite(fd, b, (size_t)dstsize, 0), dstsize);
	free(b);
	close(fd);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s %s %s %s %s >%s/out 2>&1", IMGLOAD_BIN, opt, map, src, dst,
		 dir);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run(const char *maptext, off_t dstsize)
{
	return run_opt("", maptext, dstsize);
}

static unsigned char *slurp(const char *p, size_t n)
{
	unsigned char *b = malloc(n);
	int fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, b, n, 0), (ssize_t)n);
	close(fd);
	return b;
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/src", dir);
	snprintf(dst, sizeof(dst), "%s/dst", dir);
	snprintf(map, sizeof(map), "%s/map", dir);
	/* the image: data at 0..8k (second 4k block all zero), at 1 MiB + 100
	 * (5000 bytes, unaligned), and the last 4k */
	unsigned char *b = calloc(1, IMG);
	for (int i = 0; i < 4096; i++)
		b[i] = (unsigned char)(i * 7 + 1);
	for (int i = 0; i < 5000; i++)
		b[(1 << 20) + 100 + i] = (unsigned char)(i * 13 + 5);
	for (int i = 0; i < 4096; i++)
		b[IMG - 4096 + i] = (unsigned char)(i + 3);
	int fd = open(src, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, b, IMG, 0), IMG);
	close(fd);
	free(b);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_copies_listed_ranges(void **state)
{
	(void)state;
	char m[256];
	snprintf(m, sizeof(m), "0 8192\n%d 8192\n%d 4096\n", 1 << 20, IMG - 4096);
	assert_int_equal(run(m, IMG), 0);
	unsigned char *s = slurp(src, IMG), *d = slurp(dst, IMG);
	/* listed ranges: equal, except all-zero 4k blocks, which are skipped
	 * (a ram disk reads zero there already) */
	assert_memory_equal(d, s, 4096);
	for (int i = 4096; i < 8192; i++)
		assert_int_equal(d[i], 0xee);
	assert_memory_equal(d + (1 << 20), s + (1 << 20), 8192);
	assert_memory_equal(d + IMG - 4096, s + IMG - 4096, 4096);
	/* unlisted bytes untouched */
	for (int i = 8192; i < (1 << 20); i++)
		assert_int_equal(d[i], 0xee);
	free(s);
	free(d);
}

/* -z: a destination that held something else (0xee everywhere, like a ram
 * disk after a difftest run) ends up byte for byte the image, all-zero
 * blocks and unlisted ranges included (the map lists every non-zero byte) */
static void test_zero_first_restores_image(void **state)
{
	(void)state;
	char m[256];
	snprintf(m, sizeof(m), "0 8192\n%d 8192\n%d 4096\n", 1 << 20, IMG - 4096);
	assert_int_equal(run_opt("-z", m, IMG), 0);
	unsigned char *s = slurp(src, IMG), *d = slurp(dst, IMG);
	assert_memory_equal(d, s, IMG);
	free(s);
	free(d);
	/* ... and a bad map with -z still changes nothing */
	assert_int_equal(run_opt("-z", "0 4096\nfoo bar\n", IMG), 1);
	d = slurp(dst, IMG);
	for (int i = 0; i < IMG; i += 509)
		assert_int_equal(d[i], 0xee);
	free(d);
}

static void test_bad_input_changes_nothing(void **state)
{
	(void)state;
	const char *bad[] = {
		"0 4096\nfoo bar\n",		/* malformed second line */
		"0 4096\n4190208 8192\n",	/* runs past the image */
		"0 4096\n-4096 4096\n",		/* negative offset */
		"0 0\n",			/* empty range */
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		assert_int_equal(run(bad[k], IMG), 1);
		unsigned char *d = slurp(dst, IMG);
		for (int i = 0; i < IMG; i += 509)
			assert_int_equal(d[i], 0xee);
		free(d);
	}
	/* a destination smaller than the image */
	assert_int_equal(run("0 4096\n", IMG / 2), 1);
	unsigned char *d = slurp(dst, 4096);
	assert_int_equal(d[0], 0xee);
	free(d);
	/* the message names the problem */
	char p[96];
	snprintf(p, sizeof(p), "%s/out", dir);
	FILE *f = fopen(p, "r");
	char line[256] = "";
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_non_null(strstr(line, "does not fit"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copies_listed_ranges),
		cmocka_unit_test(test_zero_first_restores_image),
		cmocka_unit_test(test_bad_input_changes_nothing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
