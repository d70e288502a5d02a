/* SPDX-License-Identifier: MIT */
/*
 * rmtest.h - checks the refmodel test suites share (include after
 * <cmocka.h> and "refmodel.h"): the model's own integrity check as an
 * assertion, and a file's run map (rm_walk) as a string that asserts can
 * compare.
 */
#ifndef RMTEST_H
#define RMTEST_H

#include <stdio.h>

static void chk(const struct rm_file *f)
{
	char msg[256];

	if (rm_check(f, msg, sizeof(msg)))
		fail_msg("rm_check: %s", msg);
}

/* "off+len:state/may " per run, truncated at the buffer's end */
struct mapbuf {
	char *p;
	size_t left;
};

static int map_cb(void *ctx, const struct rm_run *r)
{
	struct mapbuf *m = ctx;
	int n = snprintf(m->p, m->left, "%lld+%lld:%u/%u ", (long long)r->off,
			 (long long)r->len, r->state, r->may);
	if (n > 0 && (size_t)n < m->left) {
		m->p += n;
		m->left -= (size_t)n;
	}
	return 0;
}

/* The runs up to the larger of the map's end and the size. */
static void map_str(const struct rm_file *f, char *out, size_t len)
{
	struct mapbuf m = { out, len };
	out[0] = 0;
	int64_t end = rm_map_end(f) > rm_size(f) ? rm_map_end(f) : rm_size(f);
	assert_int_equal(rm_walk(f, 0, end, map_cb, &m), 0);
}

#endif
