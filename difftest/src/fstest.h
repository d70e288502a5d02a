/* SPDX-License-Identifier: MIT */
/*
 * fstest.h - difftest --emit-fstest: an op log as an xfstests test
 * (fstest.c has what the test checks and why).
 */
#ifndef DIFFTEST_FSTEST_H
#define DIFFTEST_FSTEST_H

#include <stdio.h>

#include "dt.h"

struct dt_fstest_in {
	const char *source;	/* the op log's name, for the test's comment */
	const char *target;	/* ext4, xfs or fusefs */
	enum rm_profile profile;
	enum rm_kernel kernel;	/* the kernel whose rules the log was run with */
	uint32_t blocksize;
	int nfiles;
	const struct dt_op *ops;
	size_t n;
	const char *divergence;	/* what difftest saw (the log's comment), or NULL */
	int fsck;		/* fsck is the oracle: end with _check_scratch_fs */
	int map_file;		/* a map divergence: file and byte range to check */
	int64_t map_lo, map_hi;	/* map_hi <= map_lo: no map check */
	int session;		/* one xfs_io session for all ops (--fstest-session) */
};

/* tests/ subdirectory of a target: ext4, xfs, or generic (fusefs).  0 or
 * -EINVAL for any other target. */
int dt_fstest_subdir(const char *target, const char **sub);
/* The test script into t and its golden output into o, as test number
 * num.  0, or -errno with a message in err (an op xfs_io cannot issue,
 * an unknown target), having written nothing useful. */
int dt_fstest_write(FILE *t, FILE *o, const struct dt_fstest_in *in, int num,
		    char *err, size_t errn);
/* DIR/tests/SUB/NNN and NNN.out, NNN the first free number from 900; the
 * test's path into path.  0, or -errno with a message in err (nothing is
 * left behind). */
int dt_emit_fstest(const char *dir, const struct dt_fstest_in *in, char *path, size_t pn,
		   char *err, size_t errn);

#endif /* DIFFTEST_FSTEST_H */
