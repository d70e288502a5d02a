/* SPDX-License-Identifier: MIT */
/*
 * parse.c - the one command table of rmio and its one parser: a command
 * line becomes a struct rmcmd, or xfs_io's message for the mistake and
 * -EINVAL (or RMCMD_E_IGNORED), never touching the model (xfs_io's own
 * command names, argument counts and usage lines; md5sum and xxh3sum are
 * rmio extensions).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------ */
/* The command table. */

struct cmdinfo;
typedef int (*parse_fn)(const struct rmcmd_session *s,
			const struct cmdinfo *ci, int argc, char **argv,
			struct rmcmd *cmd);

struct cmdinfo {
	const char *name;
	enum rmcmd_op op;
	int mode;		/* fallocate mode for the fixed-mode commands */
	int argmin, argmax;	/* argmax -1: no limit (xfs_io's convention) */
	const char *args;
	const char *oneline;
	parse_fn parse;
};

static int parse_pwrite(const struct rmcmd_session *, const struct cmdinfo *,
			int, char **, struct rmcmd *);
static int parse_pread(const struct rmcmd_session *, const struct cmdinfo *,
		       int, char **, struct rmcmd *);
static int parse_truncate(const struct rmcmd_session *, const struct cmdinfo *,
			  int, char **, struct rmcmd *);
static int parse_falloc(const struct rmcmd_session *, const struct cmdinfo *,
			int, char **, struct rmcmd *);
static int parse_fzero(const struct rmcmd_session *, const struct cmdinfo *,
		       int, char **, struct rmcmd *);
static int parse_offlen(const struct rmcmd_session *, const struct cmdinfo *,
			int, char **, struct rmcmd *);
static int parse_noargs(const struct rmcmd_session *, const struct cmdinfo *,
			int, char **, struct rmcmd *);
static int parse_fiemap(const struct rmcmd_session *, const struct cmdinfo *,
			int, char **, struct rmcmd *);
static int parse_seek(const struct rmcmd_session *, const struct cmdinfo *,
		      int, char **, struct rmcmd *);
static int parse_stat(const struct rmcmd_session *, const struct cmdinfo *,
		      int, char **, struct rmcmd *);
static int parse_help(const struct rmcmd_session *, const struct cmdinfo *,
		      int, char **, struct rmcmd *);
static int parse_sync_range(const struct rmcmd_session *, const struct cmdinfo *,
			    int, char **, struct rmcmd *);

/* Names, argument counts and usage text as xfs_io 6.1 has them (its own
 * commands); md5sum and xxh3sum are rmio extensions.  Usage lines list
 * xfs_io's options so that messages match; options rmio does not model
 * are refused with a message naming them. */
static const struct cmdinfo cmdtab[] = {
	{ "falloc", RMCMD_FALLOC, 0, 2, -1, "[-c] [-k] [-p] [-u] off len",
	  "allocates space associated with part of a file via fallocate",
	  parse_falloc },
	{ "fcollapse", RMCMD_FALLOC, RM_FALLOC_FL_COLLAPSE_RANGE, 2, 2,
	  "off len",
	  "de-allocates space and eliminates the hole by shifting extents",
	  parse_offlen },
	{ "fdatasync", RMCMD_FDATASYNC, 0, 0, 0, NULL,
	  "calls fdatasync(2) to flush the files in-core data to disk",
	  parse_noargs },
	{ "fiemap", RMCMD_FIEMAP, 0, 0, -1, "[-alv] [-n nx] [offset [len]]",
	  "print block mapping for a file", parse_fiemap },
	{ "finsert", RMCMD_FALLOC, RM_FALLOC_FL_INSERT_RANGE, 2, 2, "off len",
	  "creates new space for writing within file by shifting extents",
	  parse_offlen },
	{ "fpunch", RMCMD_FALLOC,
	  RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE, 2, 2, "off len",
	  "de-allocates space associated with part of a file via fallocate",
	  parse_offlen },
	{ "fsync", RMCMD_FSYNC, 0, 0, 0, NULL,
	  "calls fsync(2) to flush all in-core file state to disk",
	  parse_noargs },
	{ "funshare", RMCMD_FALLOC, RM_FALLOC_FL_UNSHARE_RANGE, 2, 2,
	  "off len", "unshares shared blocks within the range", parse_offlen },
	{ "fzero", RMCMD_FALLOC, RM_FALLOC_FL_ZERO_RANGE, 2, 3, "[-k] off len",
	  "zeroes space and eliminates holes by preallocating", parse_fzero },
	{ "help", RMCMD_HELP, 0, 0, 1, "[command]",
	  "help for one or all commands", parse_help },
	{ "md5sum", RMCMD_MD5SUM, 0, 0, 0, NULL,
	  "prints the MD5 of the file's content as md5sum(1) does (rmio only)",
	  parse_noargs },
	{ "pread", RMCMD_PREAD, 0, 2, -1,
	  "[-b bs] [-qv] [-i N] [-FBR [-Z N]] off len",
	  "reads a number of bytes at a specified offset", parse_pread },
	{ "pwrite", RMCMD_PWRITE, 0, 2, -1,
	  "[-i infile [-qdDwNOW] [-s skip]] [-b bs] [-S seed] [-FBR [-Z N]] [-V N] off len",
	  "writes a number of bytes at a specified offset", parse_pwrite },
	{ "quit", RMCMD_QUIT, 0, 0, 0, NULL, "exit the program",
	  parse_noargs },
	{ "seek", RMCMD_SEEK, 0, 2, 5, "-a | -d | -h [-r] off",
	  "locate the next data and/or hole", parse_seek },
	{ "sync_range", RMCMD_SYNC_RANGE, 0, 2, -1, "[-abw] off len",
	  "Control writeback on a range of a file", parse_sync_range },
	{ "stat", RMCMD_STAT, 0, 0, -1, "[-v|-r]",
	  "statistics on the currently open file", parse_stat },
	{ "truncate", RMCMD_TRUNCATE, 0, 1, 1, "off",
	  "truncates the current file at the given offset", parse_truncate },
	{ "xxh3sum", RMCMD_XXH3SUM, 0, 0, 0, NULL,
	  "prints the XXH3-64 of the file's content (rmio only)",
	  parse_noargs },
};

#define NCMDS (sizeof(cmdtab) / sizeof(cmdtab[0]))

static const struct cmdinfo *find_cmd(const char *name)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (strcmp(cmdtab[i].name, name) == 0)
			return &cmdtab[i];
	return NULL;
}

static void print_usage_line(FILE *out, const struct cmdinfo *ci)
{
	/* xfs_io's command_usage(): "name args -- oneline". */
	fprintf(out, "%s %s%s-- %s\n", ci->name, ci->args ? ci->args : "",
		ci->args ? " " : "", ci->oneline);
}

void rmcmd_print_help(FILE *out)
{
	for (size_t i = 0; i < NCMDS; i++)
		print_usage_line(out, &cmdtab[i]);
}

void rmcmd_print_topic(FILE *out, const char *topic)
{
	const struct cmdinfo *ci = topic[0] ? find_cmd(topic) : NULL;

	if (ci)
		print_usage_line(out, ci);
	else
		rmcmd_print_help(out);
}

/* Report a usage error as xfs_io does (usage line on stdout). */
static int usage(const struct rmcmd_session *s, const struct cmdinfo *ci)
{
	print_usage_line(s->out, ci);
	return -EINVAL;
}


static void bad_option(const struct rmcmd_session *s, const char *name,
		       const struct opt *o)
{
	if (o->missing)
		fprintf(s->err, "%s: option requires an argument -- '%c'\n",
			name, o->bad);
	else
		fprintf(s->err, "%s: invalid option -- '%c'\n", name, o->bad);
}

static int unsupported(const struct rmcmd_session *s, const char *name,
		       int c)
{
	fprintf(s->err, "%s: option -%c is not supported by rmio\n", name, c);
	return -EINVAL;
}

/* xfs_io's offset_length(): both numbers or a message on stdout. */
static int offset_length(const struct rmcmd_session *s, const char *off,
			 const char *len, struct rmcmd *cmd)
{
	uint32_t bs = rm_blocksize(s->file);

	cmd->off = rmcmd_cvtnum(bs, off);
	if (cmd->off < 0) {
		fprintf(s->out, "non-numeric offset argument -- %s\n", off);
		return -EINVAL;
	}
	cmd->len = rmcmd_cvtnum(bs, len);
	if (cmd->len < 0) {
		fprintf(s->out, "non-numeric length argument -- %s\n", len);
		return -EINVAL;
	}
	return 0;
}

/* pwrite and pread share xfs_io's option handling of -b and the operands. */
static int parse_rw(const struct rmcmd_session *s, const struct cmdinfo *ci,
		    int argc, char **argv, struct rmcmd *cmd, bool write)
{
	/* All options xfs_io 6.1 accepts, so that its valid ones are told
	 * apart from typing mistakes. */
	const char *optstring = write ? "b:BdDf:Fi:NqRs:S:uV:wWZ:O"
				      : "b:BdFi:qRvV:Z:";
	struct optparse p;

	rmcmd_scan_opts(argc, argv, optstring, &p);
	for (int i = 0; i < p.nopts; i++) {
		const struct opt *o = &p.opts[i];
		char *sp;
		unsigned long seed;

		switch (o->c) {
		case 'b':
			cmd->bsize = rmcmd_cvtnum(rm_blocksize(s->file), o->arg);
			if (cmd->bsize < 0) {
				fprintf(s->out, "non-numeric bsize -- %s\n",
					o->arg);
				return -EINVAL;
			}
			break;
		case 'S':
			/* xfs_io: strtoul base 0, only "no digits" is wrong;
			 * the buffer is memset() with the low byte. */
			seed = strtoul(o->arg, &sp, 0);
			if (sp == o->arg) {
				fprintf(s->out, "non-numeric seed -- %s\n",
					o->arg);
				return -EINVAL;
			}
			cmd->pattern = (unsigned char)seed;
			break;
		case 'q':
			cmd->flags |= RMCMD_F_QUIET;
			break;
		case 'v':
			cmd->flags |= RMCMD_F_VERBOSE;
			break;
		case 'w':
		case 'W':
			cmd->flags |= RMCMD_F_FSYNC_AFTER;
			break;
		case 'F':	/* forward: the default */
			break;
		case '?':
			bad_option(s, ci->name, o);
			return usage(s, ci);
		default:
			return unsupported(s, ci->name, o->c);
		}
	}
	if (p.nops != 2)
		return usage(s, ci);
	return offset_length(s, p.operands[0], p.operands[1], cmd);
}

static int parse_pwrite(const struct rmcmd_session *s, const struct cmdinfo *ci,
			int argc, char **argv, struct rmcmd *cmd)
{
	return parse_rw(s, ci, argc, argv, cmd, true);
}

static int parse_pread(const struct rmcmd_session *s, const struct cmdinfo *ci,
		       int argc, char **argv, struct rmcmd *cmd)
{
	return parse_rw(s, ci, argc, argv, cmd, false);
}

static int parse_truncate(const struct rmcmd_session *s,
			  const struct cmdinfo *ci, int argc, char **argv,
			  struct rmcmd *cmd)
{
	(void)ci;
	(void)argc;
	/* truncate takes no options in xfs_io: "-1" is a bad number. */
	cmd->off = rmcmd_cvtnum(rm_blocksize(s->file), argv[1]);
	if (cmd->off < 0) {
		fprintf(s->out, "non-numeric truncate argument -- %s\n",
			argv[1]);
		return -EINVAL;
	}
	return 0;
}

static int parse_falloc(const struct rmcmd_session *s,
			const struct cmdinfo *ci, int argc, char **argv,
			struct rmcmd *cmd)
{
	struct optparse p;
	bool bad = false;

	rmcmd_scan_opts(argc, argv, "cikpu", &p);
	cmd->mode = 0;
	for (int i = 0; i < p.nopts; i++) {
		/* xfs_io assigns, not ORs: the last option wins ("-c -k" is
		 * plain KEEP_SIZE, "-k -p" is PUNCH_HOLE|KEEP_SIZE). */
		switch (p.opts[i].c) {
		case 'c':
			cmd->mode = RM_FALLOC_FL_COLLAPSE_RANGE;
			break;
		case 'i':
			cmd->mode = RM_FALLOC_FL_INSERT_RANGE;
			break;
		case 'k':
			cmd->mode = RM_FALLOC_FL_KEEP_SIZE;
			break;
		case 'p':
			cmd->mode = RM_FALLOC_FL_PUNCH_HOLE |
				    RM_FALLOC_FL_KEEP_SIZE;
			break;
		case 'u':
			cmd->mode = RM_FALLOC_FL_UNSHARE_RANGE;
			break;
		default:
			/* xfs_io's falloc_f() prints the usage, sets
			 * exitcode = 1 and carries on: with two operands it
			 * still calls fallocate() with the mode so far
			 * (measured: "falloc -x 0 4k" allocates, exit 1) */
			bad_option(s, ci->name, &p.opts[i]);
			print_usage_line(s->out, ci);
			bad = true;
		}
	}
	if (p.nops != 2)
		return usage(s, ci);
	if (offset_length(s, p.operands[0], p.operands[1], cmd) < 0)
		return -EINVAL;
	if (bad)
		cmd->flags |= RMCMD_F_FAILED;
	return 0;
}

static int parse_fzero(const struct rmcmd_session *s, const struct cmdinfo *ci,
		       int argc, char **argv, struct rmcmd *cmd)
{
	struct optparse p;

	rmcmd_scan_opts(argc, argv, "k", &p);
	cmd->mode = RM_FALLOC_FL_ZERO_RANGE;
	for (int i = 0; i < p.nopts; i++) {
		if (p.opts[i].c == 'k') {
			cmd->mode |= RM_FALLOC_FL_KEEP_SIZE;
		} else {
			/* xfs_io's fzero_f() prints the usage and goes on
			 * to call fallocate() without touching exitcode
			 * (measured: "fzero -x 0 1" zeroes, exit 0) */
			bad_option(s, ci->name, &p.opts[i]);
			print_usage_line(s->out, ci);
		}
	}
	if (p.nops != 2)
		return usage(s, ci);
	return offset_length(s, p.operands[0], p.operands[1], cmd);
}

static int parse_offlen(const struct rmcmd_session *s,
			const struct cmdinfo *ci, int argc, char **argv,
			struct rmcmd *cmd)
{
	/* fpunch, fcollapse, finsert, funshare: no getopt in xfs_io, the
	 * two words are the numbers ("fpunch -1 4k" is a bad offset). */
	(void)argc;
	cmd->mode = ci->mode;
	return offset_length(s, argv[1], argv[2], cmd);
}

static int parse_noargs(const struct rmcmd_session *s,
			const struct cmdinfo *ci, int argc, char **argv,
			struct rmcmd *cmd)
{
	(void)s;
	(void)ci;
	(void)argc;
	(void)argv;
	(void)cmd;
	return 0;
}

static int parse_fiemap(const struct rmcmd_session *s,
			const struct cmdinfo *ci, int argc, char **argv,
			struct rmcmd *cmd)
{
	struct optparse p;
	uint32_t bs = rm_blocksize(s->file);

	rmcmd_scan_opts(argc, argv, "aCln:sv", &p);
	for (int i = 0; i < p.nopts; i++) {
		const struct opt *o = &p.opts[i];

		switch (o->c) {
		case 'C':	/* rmio: the cached view, no FIEMAP_FLAG_SYNC */
			cmd->flags |= RMCMD_F_CACHED;
			break;
		case 'l':
			cmd->flags |= RMCMD_F_LFLAG;
			break;
		case 'n':
			cmd->max_extents = atoi(o->arg);	/* as xfs_io */
			break;
		case 'v':
			cmd->flags |= RMCMD_F_VERBOSE;
			break;
		case 'a':	/* attribute fork: the model has none */
		case 's':
			return unsupported(s, ci->name, o->c);
		default:
			bad_option(s, ci->name, o);
			return usage(s, ci);
		}
	}
	/* Extra operands are ignored, as xfs_io ignores them. */
	if (p.nops >= 1) {
		cmd->off = rmcmd_cvtnum(bs, p.operands[0]);
		if (cmd->off < 0) {
			fprintf(s->out, "non-numeric offset argument -- %s\n",
				p.operands[0]);
			return -EINVAL;
		}
		cmd->flags |= RMCMD_F_HAS_OFF;
	}
	if (p.nops >= 2) {
		cmd->len = rmcmd_cvtnum(bs, p.operands[1]);
		if (cmd->len < 0) {
			fprintf(s->out, "non-numeric len argument -- %s\n",
				p.operands[1]);
			return -EINVAL;
		}
		cmd->flags |= RMCMD_F_HAS_LEN;
	}
	return 0;
}

/* xfs_io 6.1 sync_range_f(): each of -a, -b, -w sets the flag (the last
 * one given wins: "-a -w" is SYNC_FILE_RANGE_WRITE alone, measured with
 * strace), none means WRITE; exactly two operands. */
static int parse_sync_range(const struct rmcmd_session *s,
			    const struct cmdinfo *ci, int argc, char **argv,
			    struct rmcmd *cmd)
{
	struct optparse p;

	rmcmd_scan_opts(argc, argv, "abw", &p);
	cmd->mode = 0;
	for (int i = 0; i < p.nopts; i++) {
		const struct opt *o = &p.opts[i];

		switch (o->c) {
		case 'a':
			cmd->mode = RM_SYNC_FILE_RANGE_WAIT_AFTER;
			break;
		case 'b':
			cmd->mode = RM_SYNC_FILE_RANGE_WAIT_BEFORE;
			break;
		case 'w':
			cmd->mode = RM_SYNC_FILE_RANGE_WRITE;
			break;
		default:
			bad_option(s, ci->name, o);
			return usage(s, ci);
		}
	}
	if (!cmd->mode)
		cmd->mode = RM_SYNC_FILE_RANGE_WRITE;
	if (p.nops != 2)
		return usage(s, ci);
	return offset_length(s, p.operands[0], p.operands[1], cmd);
}

static int parse_seek(const struct rmcmd_session *s, const struct cmdinfo *ci,
		      int argc, char **argv, struct rmcmd *cmd)
{
	struct optparse p;

	rmcmd_scan_opts(argc, argv, "adhrs", &p);
	for (int i = 0; i < p.nopts; i++) {
		switch (p.opts[i].c) {
		case 'a':
			cmd->flags |= RMCMD_F_SEEK_DATA | RMCMD_F_SEEK_HOLE;
			break;
		case 'd':
			cmd->flags |= RMCMD_F_SEEK_DATA;
			break;
		case 'h':
			cmd->flags |= RMCMD_F_SEEK_HOLE;
			break;
		case 'r':
			cmd->flags |= RMCMD_F_SEEK_ALL;
			break;
		case 's':
			cmd->flags |= RMCMD_F_SEEK_START;
			break;
		default:
			bad_option(s, ci->name, &p.opts[i]);
			return usage(s, ci);
		}
	}
	if (!(cmd->flags & (RMCMD_F_SEEK_DATA | RMCMD_F_SEEK_HOLE)) ||
	    p.nops != 1)
		return usage(s, ci);
	cmd->off = rmcmd_cvtnum(rm_blocksize(s->file), p.operands[0]);
	if (cmd->off < 0)
		return usage(s, ci);
	return 0;
}

static int parse_stat(const struct rmcmd_session *s, const struct cmdinfo *ci,
		      int argc, char **argv, struct rmcmd *cmd)
{
	struct optparse p;

	rmcmd_scan_opts(argc, argv, "rv", &p);
	for (int i = 0; i < p.nopts; i++) {
		switch (p.opts[i].c) {
		case 'v':
			cmd->flags |= RMCMD_F_VERBOSE;
			break;
		case 'r':	/* raw statx dump: nothing the model knows */
			return unsupported(s, ci->name, 'r');
		default:
			bad_option(s, ci->name, &p.opts[i]);
			return usage(s, ci);
		}
	}
	return 0;
}

static int parse_help(const struct rmcmd_session *s, const struct cmdinfo *ci,
		      int argc, char **argv, struct rmcmd *cmd)
{
	(void)ci;
	if (argc == 2) {
		if (!find_cmd(argv[1])) {
			fprintf(s->out, "command %s not found\n", argv[1]);
			return RMCMD_E_IGNORED;	/* xfs_io's help_f() returns 0 */
		}
		snprintf(cmd->topic, sizeof(cmd->topic), "%s", argv[1]);
	}
	return 0;
}

/* ------------------------------------------------------------------ */

void rmcmd_session_init(struct rmcmd_session *s, struct rm_file *f,
			const char *name, FILE *out, FILE *err)
{
	memset(s, 0, sizeof(*s));
	s->file = f;
	s->name = name;
	s->out = out;
	s->err = err;
	s->fiemap_max_extents = -1;
	s->io_limit = RMCMD_DEFAULT_IO_LIMIT;
}

int rmcmd_parse(const struct rmcmd_session *s, const char *line,
		struct rmcmd *cmd)
{
	char buf[4096];
	char *argv[RMCMD_MAX_ARGS + 1];
	int argc = 0;
	const struct cmdinfo *ci;
	size_t n = strlen(line);
	char *p;

	memset(cmd, 0, sizeof(*cmd));
	cmd->bsize = 4096;
	cmd->pattern = 0xcd;
	cmd->max_extents = -1;

	if (n >= sizeof(buf)) {
		fprintf(s->err, "command line too long (%zu bytes)\n", n);
		return -EINVAL;
	}
	memcpy(buf, line, n + 1);
	/* Words are separated by blanks (xfs_io's breakline() splits on
	 * spaces; tabs are accepted too).  '#' at the start of a line makes
	 * it a comment. */
	p = buf;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			*p++ = '\0';
		if (!*p)
			break;
		if (argc == 0 && *p == '#')
			break;
		if (argc == RMCMD_MAX_ARGS) {
			fprintf(s->err, "too many arguments (at most %d)\n",
				RMCMD_MAX_ARGS - 1);
			return -EINVAL;
		}
		argv[argc++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' &&
		       *p != '\r')
			p++;
	}
	argv[argc] = NULL;
	if (argc == 0)
		return 1;

	ci = find_cmd(argv[0]);
	if (!ci) {
		/* libxcmd's command_loop() prints this and goes on without
		 * touching exitcode */
		fprintf(s->err, "command \"%s\" not found\n", argv[0]);
		return RMCMD_E_IGNORED;
	}
	if (argc - 1 < ci->argmin ||
	    (ci->argmax != -1 && argc - 1 > ci->argmax)) {
		if (ci->argmax == -1)
			fprintf(s->err, "bad argument count %d to %s, expected at least %d arguments\n",
				argc - 1, ci->name, ci->argmin);
		else if (ci->argmin == ci->argmax)
			fprintf(s->err, "bad argument count %d to %s, expected %d arguments\n",
				argc - 1, ci->name, ci->argmin);
		else
			fprintf(s->err, "bad argument count %d to %s, expected between %d and %d arguments\n",
				argc - 1, ci->name, ci->argmin, ci->argmax);
		return RMCMD_E_IGNORED;	/* libxcmd's command() returns 0 */
	}
	cmd->op = ci->op;
	snprintf(cmd->name, sizeof(cmd->name), "%s", ci->name);
	return ci->parse(s, ci, argc, argv, cmd);
}

