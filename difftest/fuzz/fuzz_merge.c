/* SPDX-License-Identifier: MIT */
/*
 * fuzz_merge.c - libFuzzer harness for difftest's report reader and
 * merge (report.c, dt_report_merge_mem(): jansson's parser under
 * difftest's checks and merge rules).
 *
 * The input is up to four reports separated by a 0x01 byte (never valid
 * JSON outside a string, nor inside one unescaped).  Whatever the bytes,
 * the merge must come back with 0 or a refusal carrying a message, and a
 * merged report must itself merge: its text read back and written again
 * gives the same text after one round (the writer's form is a fixed point
 * once integer "-0" has become "0" and reals are cut to 15 digits).  A broken invariant aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign.h"

/* Merge the n reports into a new string (*out, *outlen): the return value
 * of dt_report_merge_mem(). */
static int merge(const char *const *bufs, const size_t *lens, int n, char **out, size_t *outlen)
{
	static const char *const names[] = { "a", "b", "c", "d" };
	char err[512] = "";
	FILE *f = open_memstream(out, outlen);

	if (!f)
		abort();
	int rc = dt_report_merge_mem(bufs, lens, names, n, f, err, sizeof(err));
	fclose(f);
	if (rc && !err[0])
		abort();	/* a refusal always says why */
	if (rc && *outlen)
		abort();	/* and writes nothing */
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *bufs[4];
	size_t lens[4];
	int n = 0;
	const char *p = (const char *)data, *end = p + size;

	while (n < 4) {
		const char *sep = memchr(p, 1, (size_t)(end - p));
		bufs[n] = p;
		lens[n] = sep && n < 3 ? (size_t)(sep - p) : (size_t)(end - p);
		n++;
		if (!sep || n == 4)
			break;
		p = sep + 1;
	}
	char *o1 = NULL, *o2 = NULL, *o3 = NULL;
	size_t l1 = 0, l2 = 0, l3 = 0;
	if (merge(bufs, lens, n, &o1, &l1) == 0) {
		const char *b = o1;
		if (merge(&b, &l1, 1, &o2, &l2))
			abort();	/* a merged report must read back */
		b = o2;
		if (merge(&b, &l2, 1, &o3, &l3) || l2 != l3 || memcmp(o2, o3, l2))
			abort();
	}
	free(o1);
	free(o2);
	free(o3);
	return 0;
}
