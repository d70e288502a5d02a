/* SPDX-License-Identifier: MIT */
/*
 * rmfile.h - the setup test_dio.c and test_copy.c share (include after
 * "rmtest.h"): 4 KiB-block model files of a profile, a byte-pattern write
 * checked with rm_check(), and the state of one block.
 */
#ifndef RMFILE_H
#define RMFILE_H

#include <string.h>

#define K 4096

static struct rm_file *mk(enum rm_profile p)
{
	struct rm_opts o = { .profile = p, .blocksize = K };
	struct rm_file *f = NULL;
	assert_int_equal(rm_file_new(&o, &f), 0);
	return f;
}

static unsigned char buf[16 * K];

/* len bytes of c at off (len <= sizeof(buf)), all written */
static void wr(struct rm_file *f, int64_t off, size_t len, int c)
{
	memset(buf, c, len);
	assert_int_equal(rm_pwrite(f, buf, len, off), (ssize_t)len);
	chk(f);
}

/* State (and, unless may is NULL, may-mask) of the block holding off. */
static unsigned st_may(const struct rm_file *f, int64_t off, unsigned *may)
{
	char s[256];
	struct mapbuf m = { s, sizeof(s) };
	long long a, b;
	unsigned st = 0, my = 0;
	assert_int_equal(rm_walk(f, off, off + 1, map_cb, &m), 0);
	assert_int_equal(sscanf(s, "%lld+%lld:%u/%u", &a, &b, &st, &my), 4);
	if (may)
		*may = my;
	return st;
}

static unsigned st_at(const struct rm_file *f, int64_t off)
{
	return st_may(f, off, NULL);
}

#endif
