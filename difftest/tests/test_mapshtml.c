/* SPDX-License-Identifier: MIT */
/*
 * test_mapshtml.c - maps.html's data (cmocka): the differing blocks are the
 * ones whose target state lies outside the model's may-set, past either
 * map's end included; every string is escaped so that "</script>" in a
 * target name or message stays data; the timeline holds the model's map
 * after each op; a divergence on a file outside the session is refused.
 * The page in a real browser: maps_html_browser.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dt.h"

#define KB 1024

static struct rm_run *runs(size_t n, const struct rm_run *v)
{
	struct rm_run *r = malloc(n * sizeof(*r));
	assert_non_null(r);
	memcpy(r, v, n * sizeof(*r));
	return r;
}

static size_t count(const char *s, const char *w)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, w)); p += strlen(w))
		n++;
	return n;
}

/* The page for d on a faulty ext4 target named `name`, as a string. */
static char *page(const char *name, struct dt_div *d, const char *const *ops, size_t n,
		  int nfiles, int *rc)
{
	struct dt_target t;
	struct dt_op v[8];
	char err[256], *buf = NULL;
	size_t len = 0;

	assert_int_equal(dt_target_init(&t, "faulty:lost-unwritten:ext4", "t", err, sizeof(err)), 0);
	snprintf(t.name, sizeof(t.name), "%s", name);
	for (size_t j = 0; j < n; j++)
		assert_int_equal(dt_op_parse(ops[j], &v[j], err, sizeof(err)), 0);
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	*rc = dt_maps_html_write(f, &t, nfiles, v, n, d);
	fclose(f);
	dt_target_fini(&t);
	return buf;
}

static void test_diff_and_escaping(void **state)
{
	(void)state;
	const char *ops[] = { "f0 pwrite -S 0x41 0 65536", "f0 falloc -k 131072 262144" };
	struct dt_div d = { .kind = DV_MAP, .file = 0, .opno = 1, .byte_off = -1 };
	struct dt_mapsnap *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	/* blocks 0-15 data, 16-31 hole, 32-95 unwritten or data */
	const struct rm_run e[] = {
		{ 0, 64 * KB, RM_DATA, RM_DATA },
		{ 64 * KB, 64 * KB, RM_HOLE, RM_HOLE },
		{ 128 * KB, 256 * KB, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA },
	};
	/* the target: 32-63 unwritten (allowed), 64-95 a hole (not), two
	 * data blocks at 128 past the model's end (not) */
	const struct rm_run a[] = {
		{ 0, 64 * KB, RM_DATA, RM_DATA },
		{ 64 * KB, 64 * KB, RM_HOLE, RM_HOLE },
		{ 128 * KB, 128 * KB, RM_UNWRITTEN, RM_UNWRITTEN },
		{ 256 * KB, 256 * KB, RM_HOLE, RM_HOLE },
		{ 512 * KB, 8 * KB, RM_DATA, RM_DATA },
	};
	m->exp = runs(3, e);
	m->nexp = 3;
	m->act = runs(5, a);
	m->nact = 5;
	m->exp_size = m->act_size = 64 * KB;
	d.snap = m;
	snprintf(d.msg, sizeof(d.msg), "bad </script><script>alert(1)</script> & \"q\"\n");
	char err[128];
	assert_int_equal(dt_op_parse(ops[1], &d.op, err, sizeof(err)), 0);

	int rc;
	char *p = page("dir:/x</script><b>", &d, ops, 2, 1, &rc);
	assert_int_equal(rc, 0);
	/* the template's two script elements close, nothing else does */
	assert_int_equal(count(p, "</script>"), 2);
	assert_int_equal(count(p, "<b>"), 0);
	assert_non_null(strstr(p, "\"target\":\"dir:/x\\u003c/script\\u003e\\u003cb\\u003e\""));
	assert_non_null(strstr(p, "\\u0026 \\\"q\\\"\\u000a\""));
	assert_non_null(strstr(p, "\"diff\":[[64,32],[128,2]]"));
	assert_non_null(strstr(p, "\"exp\":[[0,16,4,4],[16,16,1,1],[32,64,2,6]]"));
	assert_non_null(strstr(p, "\"ops\":[\"f0 pwrite -S 0x41 0 65536\",\"f0 falloc -k 131072 262144\"]"));
	/* the model replayed: data after op 0, the unwritten range after op 1 */
	assert_non_null(strstr(p, "\"after\":[{\"size\":65536,\"runs\":[[0,16,4,4]]},"
				  "{\"size\":65536,\"runs\":[[0,16,4,4],[16,16,1,1],[32,64,2,2]]}]"));
	assert_null(strstr(p, "@DT_MAPS_JSON@"));
	free(p);

	/* no target map (FIEMAP failed): no differing blocks claimed */
	snprintf(m->note, sizeof(m->note), "the target's map is unknown: FIEMAP EIO");
	p = page("t", &d, ops, 2, 1, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(p, "\"act\":null,\"diff\":[]"));
	free(p);
	dt_div_free(&d);
	assert_null(d.snap);
}

static void test_refused(void **state)
{
	(void)state;
	const char *ops[] = { "f0 fsync" };
	struct dt_div d = { .kind = DV_RET, .file = 3, .byte_off = -1 };
	int rc;
	free(page("t", &d, ops, 1, 2, &rc));
	assert_int_equal(rc, -EINVAL);
	/* no snapshot (the campaign's own divergence): the page says so */
	d.file = 0;
	char *p = page("t", &d, ops, 1, 1, &rc);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(p, "\"note\":\"the maps at the divergence were not captured\""));
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_and_escaping),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
