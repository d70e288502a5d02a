/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the modules of rmcmd (rmio's command layer, see
 * cmd.h) share and nothing outside it sees:
 *   parse.c     the command table and the parser (struct rmcmd)
 *   optscan.c   the re-entrant option scanner the parser uses
 *   numparse.c  xfs_io's number syntax
 *   exec.c      the executors (pwrite, pread, truncate, falloc, seek, ...)
 *   fiemap.c    the fiemap executor and its two layouts
 *   format.c    xfs_io's report lines and hex dump
 *   md5.c       MD5 for md5sum
 *
 * Output follows xfs_io 6.1 (Debian xfsprogs 6.1.0) byte for byte on ext4
 * and XFS files, with these deliberate differences:
 *   - the "N bytes, M ops; T (R/sec and Z ops/sec)" timing line has
 *     xfs_io's layout but the model's own elapsed time (or a fixed time,
 *     see rmcmd_session.fixed_usec); xfstests filters it anyway
 *     (_filter_xfs_io);
 *   - fiemap's BLOCK-RANGE column: the model has no disk, so the
 *     reported extents are shown laid out back to back from block 0;
 *   - stat prints xfs_io's lines, with fixed values where the model
 *     knows nothing (inode number, times, XFS flags and direct I/O
 *     limits);
 *   - a malformed command never reaches the model, except where xfs_io
 *     itself runs it after the usage message (falloc's and fzero's bad
 *     options).
 */
#ifndef RANGESHIFT_RMCMD_INTERNAL_H
#define RANGESHIFT_RMCMD_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cmd.h"

/* ---- optscan.c ---- */

/* A re-entrant getopt: GNU getopt's behaviour (options may follow
 * operands; "--" ends options; clustered flags; "-bVALUE" or "-b VALUE"),
 * and its two messages, without its global state. */

struct opt {
	int c;			/* option letter, or '?' for a bad one */
	int bad;		/* the bad letter when c == '?' */
	int missing;		/* 1 if its required argument was missing */
	const char *arg;
};

struct optparse {
	struct opt opts[RMCMD_MAX_ARGS];
	int nopts;
	char *operands[RMCMD_MAX_ARGS];
	int nops;
};

void rmcmd_scan_opts(int argc, char **argv, const char *optstring,
		     struct optparse *p);

/* ---- parse.c ---- */

/* help [topic]: the usage line of topic, or of every command. */
void rmcmd_print_topic(FILE *out, const char *topic);

/* ---- format.c ---- */

int64_t rmcmd_now_usec(void);
/* The elapsed time to report for a command started at t0 (>= 1 us). */
int64_t rmcmd_elapsed_usec(const struct rmcmd_session *s, int64_t t0);
/* "wrote 4096/4096 bytes at offset 0" and its timing line. */
void rmcmd_report_io(const struct rmcmd_session *s, const char *verb,
		     int64_t usec, int64_t offset, int64_t count,
		     int64_t total, long ops);
/* xfs_io's dump_buffer() (pread -v). */
void rmcmd_dump_buffer(FILE *out, int64_t offset, const unsigned char *p,
		       ssize_t len);

/* ---- exec.c, fiemap.c ---- */

/* "what: strerror(-err)" on the session's stderr, as xfs_io's perror(). */
void rmcmd_perror(const struct rmcmd_session *s, const char *what, int64_t err);
int rmcmd_exec_fiemap(struct rmcmd_session *s, const struct rmcmd *cmd);

#endif
