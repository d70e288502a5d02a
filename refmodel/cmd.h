/* SPDX-License-Identifier: MIT */
/*
 * cmd.h - rmcmd: one command table and one parser for xfs_io-style commands
 * ("pwrite -S 0x41 0 4k", "fiemap -v", "finsert 4k 8k", ...), executed
 * against a refmodel file (struct rm_file), printing what xfs_io 6.1
 * (Debian xfsprogs 6.1.0) prints for the same command on a real file.
 *
 * Parsing and execution are separate so that a malformed command is
 * rejected (message, negative return) before it can touch the model.
 * Where xfs_io prints a message on stdout (usage lines, "non-numeric ...")
 * or stderr (getopt complaints, "bad argument count", perror() text), the
 * session's `out` / `err` streams get it the same way.
 *
 * Known, deliberate differences from xfs_io are listed in rmio --help and
 * in refmodel/README.md: timing figures, physical block numbers in fiemap,
 * fixed values in the stat lines the model cannot know (inode number,
 * times, direct I/O limits).
 */
#ifndef RANGESHIFT_RMCMD_H
#define RANGESHIFT_RMCMD_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "refmodel.h"

#ifdef __cplusplus
extern "C" {
#endif

enum rmcmd_op {
	RMCMD_PWRITE,
	RMCMD_PREAD,
	RMCMD_TRUNCATE,
	RMCMD_FALLOC,		/* falloc, fpunch, fzero, fcollapse, finsert, funshare */
	RMCMD_FSYNC,
	RMCMD_FDATASYNC,
	RMCMD_SYNC_RANGE,	/* mode: the RM_SYNC_FILE_RANGE_* flag */
	RMCMD_FIEMAP,
	RMCMD_SEEK,
	RMCMD_STAT,
	RMCMD_MD5SUM,
	RMCMD_XXH3SUM,
	RMCMD_HELP,
	RMCMD_QUIT,
};

/* Flags of a parsed command. */
#define RMCMD_F_VERBOSE		0x0001u	/* pread -v, fiemap -v, stat -v */
#define RMCMD_F_QUIET		0x0002u	/* pwrite/pread -q */
#define RMCMD_F_FSYNC_AFTER	0x0004u	/* pwrite -w / -W */
#define RMCMD_F_HAS_OFF		0x0008u	/* fiemap offset given */
#define RMCMD_F_HAS_LEN		0x0010u	/* fiemap length given */
#define RMCMD_F_LFLAG		0x0020u	/* fiemap -l */
#define RMCMD_F_SEEK_DATA	0x0100u	/* seek -d (or -a) */
#define RMCMD_F_SEEK_HOLE	0x0200u	/* seek -h (or -a) */
#define RMCMD_F_SEEK_ALL	0x0400u	/* seek -r */
#define RMCMD_F_SEEK_START	0x0800u	/* seek -s */
#define RMCMD_F_CACHED		0x2000u	/* fiemap -C (rmio): no FIEMAP_FLAG_SYNC */
#define RMCMD_F_FAILED		0x1000u	/* xfs_io counted a failure (falloc's
					 * bad option) but still runs it */

#define RMCMD_MAX_ARGS		32
#define RMCMD_NAME_MAX		16

struct rmcmd {
	enum rmcmd_op op;
	char name[RMCMD_NAME_MAX];	/* command name as in the table */
	unsigned flags;			/* RMCMD_F_* */
	int mode;			/* RMCMD_FALLOC: fallocate mode */
	int64_t off;			/* offset, or the size for truncate */
	int64_t len;
	int64_t bsize;			/* pwrite/pread -b (default 4096) */
	unsigned char pattern;		/* pwrite -S (low byte, default 0xcd) */
	int max_extents;		/* fiemap -n; -1 when not given */
	char topic[RMCMD_NAME_MAX];	/* help [command] */
};

struct rmcmd_session {
	struct rm_file *file;
	const char *name;	/* the file name xfs_io would print */
	FILE *out;		/* xfs_io's stdout */
	FILE *err;		/* xfs_io's stderr */
	/* > 0: report this many microseconds as every command's elapsed time,
	 * so that the timing line is reproducible; 0: measure it. */
	int64_t fixed_usec;
	/* xfs_io keeps `fiemap -n N` in a static variable, so it sticks for
	 * later fiemap commands of the same process; kept here instead. */
	int fiemap_max_extents;
	/* Largest number of bytes one pwrite, pread, md5sum or xxh3sum may
	 * move or hash (0: no limit).  The model keeps written bytes in
	 * memory and streams every hashed byte, so "pwrite 0 16t" would
	 * exhaust memory and "md5sum" of a 16 TiB sparse file would run for
	 * hours; such a command is refused before it touches the model. */
	int64_t io_limit;
	/* The file is open read-only (xfs_io -r): writes fail as the
	 * kernel fails them on an O_RDONLY descriptor. */
	int read_only;
	/* The file is open with O_DIRECT (xfs_io -d): pwrite and pread are
	 * rm_dio_pwrite() / rm_dio_pread() on a device of 512-byte logical
	 * blocks (RULES.md O1-O5). */
	int direct;
};

/* rmcmd_parse()/rmcmd_run() return this for a malformed line that xfs_io
 * 6.1 reports without counting it as a failure (its exit status stays 0):
 * an unknown command, a bad argument count (libxcmd's command()), help for
 * an unknown command.  Every other malformed line returns -EINVAL, as
 * xfs_io sets exitcode = 1 for it.  (falloc and fzero print the usage for
 * a bad option and still run: see RMCMD_F_FAILED.) */
#define RMCMD_E_IGNORED (-ENOMSG)

#define RMCMD_DEFAULT_IO_LIMIT (1LL << 30)

/* Defaults: measured time, no sticky fiemap -n, RMCMD_DEFAULT_IO_LIMIT. */
void rmcmd_session_init(struct rmcmd_session *s, struct rm_file *f,
			const char *name, FILE *out, FILE *err);

/* Parse one command line.  Returns 0 (cmd filled), 1 for a blank or
 * comment line (nothing to do), or -EINVAL or RMCMD_E_IGNORED after
 * printing xfs_io's message for the mistake (unknown command, bad argument
 * count, bad option, non-numeric number).  Never touches the model. */
int rmcmd_parse(const struct rmcmd_session *s, const char *line,
		struct rmcmd *cmd);

/* Execute a parsed command, printing its output.  Returns 0, or a negative
 * errno when the operation failed (after printing e.g.
 * "fallocate: Invalid argument" to s->err as xfs_io's perror() does). */
int rmcmd_exec(struct rmcmd_session *s, const struct rmcmd *cmd);

/* Parse and execute.  0 on success or blank line, 1 for "quit" (the
 * caller stops reading commands), negative on failure (-EINVAL also after
 * a command run with RMCMD_F_FAILED). */
int rmcmd_run(struct rmcmd_session *s, const char *line);

/* xfs_io's cvtnum(): a number with an optional unit suffix (b = file
 * system block, s = 512-byte sector, k m g t p e = powers of 1024, either
 * case; C prefixes 0x / 0 for hex / octal).  Returns the value, or -1 for
 * anything that is not such a number (and negative numbers are errors,
 * as in xfs_io). */
int64_t rmcmd_cvtnum(uint32_t blocksize, const char *s);

/* Print the usage line of every command (help without argument). */
void rmcmd_print_help(FILE *out);

/* MD5 of the whole content of f, as 33 bytes (32 hex digits + NUL).
 * Returns 0 or -errno. */
int rmcmd_md5_hex(const struct rm_file *f, char hex[33]);

#ifdef __cplusplus
}
#endif
#endif /* RANGESHIFT_RMCMD_H */
