/* SPDX-License-Identifier: MIT */
/*
 * numparse.c - xfs_io's number syntax (cvtnum()): the offsets, lengths,
 * sizes and block sizes of every rmio command and option.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "cmd.h"

int64_t rmcmd_cvtnum(uint32_t blocksize, const char *s)
{
	/* xfs_io's cvtnum(): strtoll base 0, then at most one unit letter.
	 * Multiplication wraps as in xfs_io ("8e" becomes negative and is
	 * then refused as non-numeric; "7e" passes and the call fails). */
	char *sp;
	long long v;
	uint64_t u;
	int shift;

	errno = 0;
	v = strtoll(s, &sp, 0);
	if (sp == s)
		return -1;
	if (*sp == '\0')
		return v < 0 ? -1 : v;
	if (sp[1] != '\0')
		return -1;
	u = (uint64_t)v;
	switch (tolower((unsigned char)*sp)) {
	case 'b':
		u *= blocksize;
		goto done;
	case 's':
		u *= 512;
		goto done;
	case 'k': shift = 10; break;
	case 'm': shift = 20; break;
	case 'g': shift = 30; break;
	case 't': shift = 40; break;
	case 'p': shift = 50; break;
	case 'e': shift = 60; break;
	default:
		return -1;
	}
	u <<= shift;
done:
	v = (long long)u;
	return v < 0 ? -1 : v;
}
