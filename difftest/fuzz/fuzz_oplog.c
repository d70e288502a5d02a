/* SPDX-License-Identifier: MIT */
/*
 * fuzz_oplog.c - libFuzzer harness for the op log parser (dt_op_parse()).
 *
 * The input is op log text, one op per line.  Every line either parses or
 * is refused with a message, leaving the op as it was; whatever parses
 * renders (dt_op_format()) to a line that fits the documented 128 bytes,
 * parses back to the same op and renders identically again.  Parsed ops
 * also go through their xfs_io form (dt_op_xfs_io()) and, as one log,
 * through the shrinker's relocation (dt_relocate()), whose offset
 * arithmetic must hold for any number a log line can carry.  A broken
 * invariant aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optab.h"

#define MAXOPS 64

static void check_line(const char *line, struct dt_op *ops, size_t *n)
{
	struct dt_op op, sentinel;
	char err[256] = "", r1[256], r2[256], xio[512];

	memset(&op, 0x5a, sizeof(op));
	sentinel = op;
	if (dt_op_parse(line, &op, err, sizeof(err))) {
		if (!err[0] || memcmp(&op, &sentinel, sizeof(op)))
			abort();	/* refused without a message, or op changed */
		return;
	}
	dt_op_format(&op, r1, sizeof(r1));
	if (strlen(r1) >= 128)
		abort();		/* dt_op_format() promises 128 bytes suffice */
	struct dt_op back;
	if (dt_op_parse(r1, &back, err, sizeof(err)) || !dt_op_equal(&op, &back))
		abort();
	dt_op_format(&back, r2, sizeof(r2));
	if (strcmp(r1, r2))
		abort();
	static const int64_t sizes[] = { 0, 4096, INT64_MAX };
	for (int k = 0; k < 3; k++)
		if (dt_op_xfs_io(&op, sizes[k], xio, sizeof(xio)) > 0 &&
		    strncmp(xio, "-c \"", 4) && strncmp(xio, "-d -c \"", 7))
			abort();	/* xfs_io commands, -d first for O_DIRECT */
	if (*n < MAXOPS)
		ops[(*n)++] = op;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dt_op ops[MAXOPS], out[MAXOPS];
	uint8_t shifted[MAXOPS], keep[MAXOPS];
	size_t n = 0, kept = 0;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	for (char *line = text, *nl; line; line = nl) {
		if ((nl = strchr(line, '\n')))
			*nl++ = 0;
		check_line(line, ops, &n);
	}
	/* keep and "shifted" bits from the input's bytes */
	for (size_t j = 0; j < n; j++) {
		keep[j] = size ? data[j % size] & 1 : 1;
		shifted[j] = size ? !(data[(j * 7) % size] & 2) : 1;
		kept += keep[j];
	}
	ssize_t r = dt_relocate(ops, shifted, keep, n, DT_MAXFILES, out);
	if (r != (ssize_t)kept)
		abort();
	for (ssize_t j = 0, k = 0; j < (ssize_t)n; j++) {
		if (!keep[j])
			continue;
		if (out[k].kind != ops[j].kind || out[k].file != ops[j].file)
			abort();
		k++;
	}
	free(text);
	return 0;
}
