/* SPDX-License-Identifier: MIT */
/*
 * test_seeds.c - the seed xfstests generic/039..043 (insert range, January
 * 2015) replayed through the rmio command layer (rmcmd) and compared, case
 * by case, with their golden .out files (tests/seeds/generic-0NN.out).
 *
 * generic/039..042 call common/punch's _test_generic_punch with
 * "falloc fpunch finsert fiemap _filter_hole_fiemap" and the options
 *   039: none, 040: -d (no fsync between steps: delayed allocation),
 *   041: -k (keep the file between cases: pre-existing holes),
 *   042: -d -k.
 * gen_punch_cases() below is our reconstruction of that shell function as
 * it stood in January 2015 (4k/8k/12k/20k literal sizes; the later
 * "multiple=16" scaling and _require_congruent_file_oplen came years
 * after), limited to the cases it runs for finsert (it returns after case
 * 15 when zero_cmd is finsert).  Each xfs_io invocation's stdout is passed
 * through filter_hole_fiemap() (awk of _filter_hole_fiemap followed by
 * _coalesce_extents), then _md5_checksum's "md5sum | cut -d ' ' -f 1".
 * generic/043 inserts a block at every other block of a 100-block file,
 * counts the fiemap lines (grep "^ *[0-9]*:" | wc -l), collapses them out
 * again, counts again and compares the bytes with the original.
 *
 * Every seed test runs for the ext4 and xfs profiles at 4 KiB blocks (the
 * seed's setting) and for the bytes profile, whose block-aligned behaviour
 * must not differ.  A per-case pass/fail table is printed.
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

#include "cmd.h"
#include "refmodel.h"
#include "rm_vec.h"

#ifndef SEED_DIR
#error "SEED_DIR must point at refmodel/tests/seeds"
#endif

/* ---- small string buffer ---- */

struct sbuf {
	char *s;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!b->s) {
		/* Always a real buffer: gcc -O2 rejects a NULL vsnprintf target. */
		b->cap = 256;
		b->len = 0;
		b->s = malloc(b->cap);
		assert_non_null(b->s);
	}
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, room, fmt, ap);
		va_end(ap);
		assert_true(n >= 0);
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		assert_int_equal(RM_VEC_RESERVE(&b->s, &b->cap, b->len + (size_t)n + 1, 256), 0);
	}
}

/* ---- the filters of common/punch ---- */

/* Split a line into whitespace-separated fields like awk's default FS. */
static int split_ws(char *line, char **f, int max)
{
	int n = 0;
	char *save = NULL;

	for (char *t = strtok_r(line, " \t", &save); t && n < max;
	     t = strtok_r(NULL, " \t", &save))
		f[n++] = t;
	return n;
}

static int has_hex_0x(const char *s)
{
	/* awk: $5 ~ /0x[[:xdigit:]]+/ */
	for (const char *p = strstr(s, "0x"); p; p = strstr(p + 1, "0x"))
		if (strchr("0123456789abcdefABCDEF", p[2]) && p[2])
			return 1;
	return 0;
}

/* _filter_hole_fiemap: keep "N: [a..b]: hole" and turn every line whose
 * fifth field holds a hex number (the FLAGS column) into "... extent";
 * then _coalesce_extents: merge neighbouring lines of the same type and
 * renumber. */
static void filter_hole_fiemap(const char *in, struct sbuf *out)
{
	char *copy = strdup(in), *save = NULL;
	char prev_type[32] = "";
	unsigned long long low = 0, high = 0;
	unsigned out_count = 0;

	assert_non_null(copy);
	for (char *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[8];
		char tmp[512];
		const char *type;
		int nf;

		snprintf(tmp, sizeof(tmp), "%s", line);
		nf = split_ws(tmp, f, 8);
		if (nf >= 3 && strstr(f[2], "hole"))
			type = "hole";
		else if (nf >= 5 && has_hex_0x(f[4]))
			type = "extent";
		else
			continue;
		/* _coalesce_extents reads field 2 ("[a..b]") by -F: */
		if (sscanf(f[1], "[%llu..%llu]", &low, &high) != 2)
			fail_msg("unparsable fiemap line: %s", line);
		if (strcmp(type, prev_type) != 0) {
			if (prev_type[0])
				sb_add(out, "%llu]: %s\n", low - 1, prev_type);
			sb_add(out, "%u: [%llu..", out_count++, low);
			snprintf(prev_type, sizeof(prev_type), "%s", type);
		}
	}
	if (prev_type[0])
		sb_add(out, "%llu]: %s\n", high, prev_type);
	free(copy);
}

/* ---- running xfs_io-style invocations on the model ---- */

struct seedrun {
	struct rm_opts opts;
	struct rm_file *f;	/* the test file; NULL when "rm -f"'d */
	struct sbuf out;	/* the test's whole output */
};

static void rm_testfile(struct seedrun *r)
{
	rm_file_free(r->f);
	r->f = NULL;
}

static void ensure_file(struct seedrun *r)
{
	/* xfs_io -f creates the file when it is missing. */
	if (!r->f)
		assert_int_equal(rm_file_new(&r->opts, &r->f), 0);
}

/* One "$XFS_IO_PROG -f -c ... $testfile" invocation; returns its stdout
 * (caller frees).  Its stderr is not piped in the tests, so it lands in
 * the output as is: appended to the run's output. */
static char *xfs_io(struct seedrun *r, const char *const *cmds, int n)
{
	char *obuf = NULL, *ebuf = NULL;
	size_t olen = 0, elen = 0;
	FILE *o = open_memstream(&obuf, &olen);
	FILE *e = open_memstream(&ebuf, &elen);
	struct rmcmd_session s;

	assert_non_null(o);
	assert_non_null(e);
	ensure_file(r);
	rmcmd_session_init(&s, r->f, "testfile", o, e);
	for (int i = 0; i < n; i++) {
		char msg[256];

		rmcmd_run(&s, cmds[i]);
		assert_int_equal(rm_check(r->f, msg, sizeof(msg)), 0);
	}
	fclose(o);
	fclose(e);
	if (elen)
		sb_add(&r->out, "%s", ebuf);
	free(ebuf);
	return obuf;
}

static void md5_checksum(struct seedrun *r)
{
	char hex[33];

	ensure_file(r);
	assert_int_equal(rmcmd_md5_hex(r->f, hex), 0);
	sb_add(&r->out, "%s\n", hex);
}

/* ---- _test_generic_punch, January 2015, as far as finsert runs it ---- */

struct punch_opts {
	int keep;	/* -k */
	int nosync;	/* -d */
};

#define MAXCMDS 12

/* Append one case: title, optional rm, commands (NULL-terminated; "SYNC"
 * stands for $sync_cmd, "ALLOC"/"PUNCH"/"ZERO" prefixes for the commands
 * under test), then the filtered map and the md5. */
static void punch_case(struct seedrun *r, const struct punch_opts *po,
		       const char *title, int rm_always, const char *alloc,
		       const char *punch, const char *zero, ...)
{
	const char *cmds[MAXCMDS];
	char store[MAXCMDS][64];
	int n = 0;
	va_list ap;
	char *raw;

	sb_add(&r->out, "\t%s\n", title);
	if (rm_always || !po->keep)
		rm_testfile(r);
	va_start(ap, zero);
	for (const char *c = va_arg(ap, const char *); c;
	     c = va_arg(ap, const char *)) {
		assert_true(n < MAXCMDS - 1);
		if (strcmp(c, "SYNC") == 0) {
			if (po->nosync)
				continue;
			snprintf(store[n], sizeof(store[n]), "fsync");
		} else if (strncmp(c, "ALLOC ", 6) == 0) {
			snprintf(store[n], sizeof(store[n]), "%s %s", alloc, c + 6);
		} else if (strncmp(c, "PUNCH ", 6) == 0) {
			snprintf(store[n], sizeof(store[n]), "%s %s", punch, c + 6);
		} else if (strncmp(c, "ZERO ", 5) == 0) {
			snprintf(store[n], sizeof(store[n]), "%s %s", zero, c + 5);
		} else {
			snprintf(store[n], sizeof(store[n]), "%s", c);
		}
		cmds[n] = store[n];
		n++;
	}
	va_end(ap);
	cmds[n++] = "fiemap -v";	/* "$map_cmd -v" */
	raw = xfs_io(r, cmds, n);
	filter_hole_fiemap(raw, &r->out);
	free(raw);
	md5_checksum(r);
}

static void gen_punch_cases(struct seedrun *r, const struct punch_opts *po,
			    const char *a, const char *p, const char *z)
{
	/* Unwritten cases run unless -u (no seed test passes -u). */
	punch_case(r, po, "1. into a hole", 0, a, p, z,
		   "truncate 20k", "ZERO 4k 8k", NULL);
	punch_case(r, po, "2. into allocated space", 0, a, p, z,
		   "truncate 20k", "pwrite 0 20k", "SYNC", "ZERO 4k 8k", NULL);
	punch_case(r, po, "3. into unwritten space", 0, a, p, z,
		   "truncate 20k", "ALLOC 0 20k", "ZERO 4k 8k", NULL);
	punch_case(r, po, "4. hole -> data", 0, a, p, z,
		   "truncate 20k", "pwrite 8k 8k", "SYNC", "ZERO 4k 8k", NULL);
	punch_case(r, po, "5. hole -> unwritten", 0, a, p, z,
		   "truncate 20k", "ALLOC 8k 8k", "ZERO 4k 8k", NULL);
	punch_case(r, po, "6. data -> hole", 0, a, p, z,
		   "truncate 20k", "pwrite 0 8k", "SYNC", "ZERO 4k 8k", NULL);
	punch_case(r, po, "7. data -> unwritten", 0, a, p, z,
		   "truncate 20k", "pwrite 0 8k", "SYNC", "ALLOC 8k 8k",
		   "ZERO 4k 8k", NULL);
	punch_case(r, po, "8. unwritten -> hole", 0, a, p, z,
		   "truncate 20k", "ALLOC 0 8k", "ZERO 4k 8k", NULL);
	punch_case(r, po, "9. unwritten -> data", 0, a, p, z,
		   "truncate 20k", "ALLOC 0 8k", "pwrite 8k 8k", "SYNC",
		   "ZERO 4k 8k", NULL);
	punch_case(r, po, "10. hole -> data -> hole", 0, a, p, z,
		   "truncate 20k", "pwrite 8k 4k", "SYNC", "ZERO 4k 12k", NULL);
	punch_case(r, po, "11. data -> hole -> data", 0, a, p, z,
		   "truncate 20k", "ALLOC 0 20k", "pwrite 0 8k",
		   "pwrite 12k 8k", "SYNC", "PUNCH 8k 4k", "ZERO 4k 12k", NULL);
	punch_case(r, po, "12. unwritten -> data -> unwritten", 0, a, p, z,
		   "truncate 20k", "ALLOC 0 20k", "pwrite 8k 4k", "SYNC",
		   "ZERO 4k 12k", NULL);
	/* Case 13 has an fsync of its own after the second write. */
	punch_case(r, po, "13. data -> unwritten -> data", 0, a, p, z,
		   "truncate 20k", "ALLOC 0 20k", "pwrite 0k 4k", "SYNC",
		   "pwrite 12k 8k", "fsync", "ZERO 4k 12k", NULL);
	/* zero_cmd is not fcollapse: case 14 runs, with an unconditional
	 * "rm -f $testfile" even under -k. */
	punch_case(r, po, "14. data -> hole @ EOF", 1, a, p, z,
		   "truncate 20k", "pwrite 0 20k", "SYNC", "ZERO 12k 8k", NULL);
	punch_case(r, po, "15. data -> hole @ 0", 0, a, p, z,
		   "truncate 20k", "pwrite 0 20k", "SYNC", "ZERO 0 8k", NULL);
	/* "If zero_cmd is finsert, don't check unaligned offsets": the
	 * function returns here, cases 16 and 17 never run for finsert. */
}

/* ---- golden files and the case-by-case comparison ---- */

static char *read_golden(const char *test)
{
	char path[512];
	FILE *fp;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/generic-%s.out", SEED_DIR, test);
	fp = fopen(path, "r");
	if (!fp)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	return buf;
}

/* Blocks of an output: the "QA output" line, then one block per case
 * starting at its "\tN. title" line. */
struct block {
	const char *start;
	size_t len;
	char title[80];
};

static int split_blocks(const char *s, struct block *b, int max)
{
	int n = 0;
	const char *p = s;

	while (*p && n < max) {
		const char *end = strchr(p, '\n');
		size_t linelen = end ? (size_t)(end - p) : strlen(p);

		if (n == 0 || *p == '\t') {
			b[n].start = p;
			b[n].len = 0;
			snprintf(b[n].title, sizeof(b[n].title), "%.*s",
				 (int)(linelen - (*p == '\t')),
				 p + (*p == '\t'));
			n++;
		}
		b[n - 1].len += linelen + (end ? 1 : 0);
		p += linelen + (end ? 1 : 0);
	}
	return n;
}

static const char *profile_label(enum rm_profile p)
{
	return rm_profile_name(p);
}

/* Compare the whole output with the golden one case by case, print the
 * table rows and fail if any case differs. */
static void compare_cases(const char *test, enum rm_profile prof,
			  const char *got, const char *want)
{
	struct block gb[32], wb[32];
	int ng = split_blocks(got, gb, 32), nw = split_blocks(want, wb, 32);
	int failed = 0;

	printf("generic/%s %-5s:", test, profile_label(prof));
	for (int i = 1; i < nw; i++) {
		int ok = i < ng && gb[i].len == wb[i].len &&
			 memcmp(gb[i].start, wb[i].start, wb[i].len) == 0;

		printf(" %d=%s", i, ok ? "pass" : "FAIL");
		failed += !ok;
	}
	printf("\n");
	if (failed || ng != nw || strcmp(got, want) != 0) {
		fprintf(stderr, "---- expected (generic/%s, %s)\n%s---- got\n%s----\n",
			test, profile_label(prof), want, got);
		fail_msg("generic/%s on the %s profile: %d case(s) differ",
			 test, profile_label(prof), failed);
	}
}

static void run_punch_seed(const char *test, enum rm_profile prof,
			   const struct punch_opts *po)
{
	struct seedrun r = { .opts = { .profile = prof, .blocksize = 4096 } };
	char *want = read_golden(test);

	sb_add(&r.out, "QA output created by %s\n", test);
	gen_punch_cases(&r, po, "falloc", "fpunch", "finsert");
	compare_cases(test, prof, r.out.s, want);
	rm_testfile(&r);
	free(r.out.s);
	free(want);
}

/* grep "^ *[0-9]*:" | wc -l on fiemap -v output. */
static int count_map_lines(const char *text)
{
	int n = 0;

	for (const char *p = text; *p;) {
		const char *q = p;

		while (*q == ' ')
			q++;
		while (*q >= '0' && *q <= '9')
			q++;
		if (*q == ':')
			n++;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	return n;
}

static void run_043(enum rm_profile prof)
{
	enum { BLOCKS = 100 };
	struct seedrun src = { .opts = { .profile = prof, .blocksize = 4096 } };
	struct seedrun dest = src;
	char *want = read_golden("043");
	char cmd[64], *raw, h1[33], h2[33];
	const char *cmds[2];
	int64_t bsize = 4096;	/* BSIZE=`get_block_size $SCRATCH_MNT` */

	sb_add(&dest.out, "QA output created by 043\n");
	snprintf(cmd, sizeof(cmd), "pwrite 0 %lld", (long long)(BLOCKS * bsize));
	cmds[0] = cmd;
	cmds[1] = "fsync";
	free(xfs_io(&src, cmds, 2));
	/* cp $src $dest */
	assert_int_equal(rm_file_clone(src.f, &dest.f), 0);
	for (int j = 0; j < BLOCKS / 2; j++) {
		snprintf(cmd, sizeof(cmd), "finsert %lld %lld",
			 (long long)(j * bsize * 2), (long long)bsize);
		cmds[0] = cmd;
		free(xfs_io(&dest, cmds, 1));
	}
	cmds[0] = "fiemap -v";
	raw = xfs_io(&dest, cmds, 1);
	sb_add(&dest.out, "%d\n", count_map_lines(raw));
	free(raw);
	for (int j = 0; j < BLOCKS / 2; j++) {
		snprintf(cmd, sizeof(cmd), "fcollapse %lld %lld",
			 (long long)(j * bsize), (long long)bsize);
		cmds[0] = cmd;
		free(xfs_io(&dest, cmds, 1));
	}
	cmds[0] = "fiemap -v";
	raw = xfs_io(&dest, cmds, 1);
	sb_add(&dest.out, "%d\n", count_map_lines(raw));
	free(raw);
	/* cmp $src $dest || _fail "file bytes check failed" */
	assert_int_equal(rm_size(src.f), rm_size(dest.f));
	assert_int_equal(rmcmd_md5_hex(src.f, h1), 0);
	assert_int_equal(rmcmd_md5_hex(dest.f, h2), 0);
	if (strcmp(h1, h2) != 0)
		sb_add(&dest.out, "file bytes check failed\n");

	printf("generic/043 %-5s: %s\n", profile_label(prof),
	       strcmp(dest.out.s, want) == 0 ? "pass" : "FAIL");
	if (strcmp(dest.out.s, want) != 0)
		fail_msg("generic/043 on %s: expected\n%s\ngot\n%s",
			 profile_label(prof), want, dest.out.s);
	rm_testfile(&src);
	rm_testfile(&dest);
	free(dest.out.s);
	free(want);
}

static const struct punch_opts po_039 = { 0, 0 };
static const struct punch_opts po_040 = { 0, 1 };	/* -d */
static const struct punch_opts po_041 = { 1, 0 };	/* -k */
static const struct punch_opts po_042 = { 1, 1 };	/* -d -k */

#define SEED_TESTS(prof, tag)						\
	static void test_generic_039_##tag(void **st)			\
	{ (void)st; run_punch_seed("039", prof, &po_039); }		\
	static void test_generic_040_##tag(void **st)			\
	{ (void)st; run_punch_seed("040", prof, &po_040); }		\
	static void test_generic_041_##tag(void **st)			\
	{ (void)st; run_punch_seed("041", prof, &po_041); }		\
	static void test_generic_042_##tag(void **st)			\
	{ (void)st; run_punch_seed("042", prof, &po_042); }		\
	static void test_generic_043_##tag(void **st)			\
	{ (void)st; run_043(prof); }

SEED_TESTS(RM_PROFILE_EXT4, ext4)
SEED_TESTS(RM_PROFILE_XFS, xfs)
SEED_TESTS(RM_PROFILE_BYTES, bytes)

/* The filter itself, on xfs_io 6.1 text captured from a real ext4 file
 * (physical blocks as the real file system printed them). */
static void test_filter_hole_fiemap_real_text(void **st)
{
	const char *real =
		"f1:\n"
		" EXT: FILE-OFFSET      BLOCK-RANGE      TOTAL FLAGS\n"
		"   0: [0..31]:         hole                32\n"
		"   1: [32..47]:        16520..16535        16   0x0\n"
		"   2: [48..79]:        hole                32\n"
		"   3: [80..95]:        16536..16551        16 0x801\n"
		"wrote 8192/8192 bytes at offset 8192\n"
		"8 KiB, 2 ops; 0.0000 sec (355.114 MiB/sec and 90909.0909 ops/sec)\n";
	struct sbuf out = { 0 };

	(void)st;
	filter_hole_fiemap(real, &out);
	assert_string_equal(out.s, "0: [0..31]: hole\n1: [32..47]: extent\n"
				   "2: [48..79]: hole\n3: [80..95]: extent\n");
	free(out.s);
}

static void test_filter_coalesces_neighbours(void **st)
{
	const char *text =
		"   0: [0..7]:          0..7                 8   0x0\n"
		"   1: [8..15]:         8..15                8 0x800\n"
		"   2: [16..23]:        hole                 8\n"
		"   3: [24..31]:        hole                 8\n";
	struct sbuf out = { 0 };

	(void)st;
	filter_hole_fiemap(text, &out);
	assert_string_equal(out.s, "0: [0..15]: extent\n1: [16..31]: hole\n");
	free(out.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_hole_fiemap_real_text),
		cmocka_unit_test(test_filter_coalesces_neighbours),
		cmocka_unit_test(test_generic_039_ext4),
		cmocka_unit_test(test_generic_040_ext4),
		cmocka_unit_test(test_generic_041_ext4),
		cmocka_unit_test(test_generic_042_ext4),
		cmocka_unit_test(test_generic_043_ext4),
		cmocka_unit_test(test_generic_039_xfs),
		cmocka_unit_test(test_generic_040_xfs),
		cmocka_unit_test(test_generic_041_xfs),
		cmocka_unit_test(test_generic_042_xfs),
		cmocka_unit_test(test_generic_043_xfs),
		cmocka_unit_test(test_generic_039_bytes),
		cmocka_unit_test(test_generic_040_bytes),
		cmocka_unit_test(test_generic_041_bytes),
		cmocka_unit_test(test_generic_042_bytes),
		cmocka_unit_test(test_generic_043_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
