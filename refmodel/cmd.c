/* SPDX-License-Identifier: MIT */
/*
 * cmd.c - rmcmd: the one command table and the one parser of rmio, and the
 * executor that runs a parsed command against a refmodel file and prints
 * what xfs_io 6.1 prints for it.
 *
 * Output formats were checked byte for byte against /usr/sbin/xfs_io
 * (Debian xfsprogs 6.1.0) on files of a loop-mounted ext4 and XFS image;
 * the rules below were derived from that behaviour and from reading
 * xfsprogs' io/ sources (nothing copied).  Deliberate differences:
 *   - the "N bytes, M ops; T (R/sec and Z ops/sec)" timing line has
 *     xfs_io's layout but the model's own elapsed time (or a fixed time,
 *     see rmcmd_session.fixed_usec); xfstests filters it anyway
 *     (_filter_xfs_io);
 *   - fiemap's BLOCK-RANGE column: the model has no disk, so the
 *     reported extents are shown laid out back to back from block 0;
 *   - stat prints only the lines the model can know;
 *   - every malformed command fails (negative return, rmio exit 1) and
 *     never reaches the model, where xfs_io sometimes returns 0 ("bad
 *     argument count") or even runs the call ("falloc -x 0 4k" still
 *     calls fallocate(mode 0) after printing the usage).
 */
#include "cmd.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* MD5 (RFC 1321), a small own implementation: the seed golden outputs are
 * md5sum(1) hashes, and this avoids a dependency on libmd. */

struct md5_ctx {
	uint32_t h[4];
	uint32_t k[64];
	uint64_t nbytes;
	unsigned char blk[64];
	size_t fill;
};

static const unsigned char md5_shift[64] = {
	7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
	5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
	4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
	6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
};

static void md5_init(struct md5_ctx *c)
{
	/* RFC 1321 defines K[i] as floor(2^32 * |sin(i + 1)|); IEEE double
	 * sin() gives all 64 exactly (checked by the MD5 test vectors in
	 * tests/test_cmd.c). */
	for (int i = 0; i < 64; i++)
		c->k[i] = (uint32_t)(fabs(sin((double)(i + 1))) * 4294967296.0);
	c->h[0] = 0x67452301u;
	c->h[1] = 0xefcdab89u;
	c->h[2] = 0x98badcfeu;
	c->h[3] = 0x10325476u;
	c->nbytes = 0;
	c->fill = 0;
}

static uint32_t rotl32(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

static void md5_block(struct md5_ctx *c, const unsigned char *p)
{
	uint32_t m[16];
	uint32_t a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3];

	for (int i = 0; i < 16; i++)
		m[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
		       (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
	for (int i = 0; i < 64; i++) {
		uint32_t f;
		int g;

		if (i < 16) {
			f = (b & cc) | (~b & d);
			g = i;
		} else if (i < 32) {
			f = (d & b) | (~d & cc);
			g = (5 * i + 1) % 16;
		} else if (i < 48) {
			f = b ^ cc ^ d;
			g = (3 * i + 5) % 16;
		} else {
			f = cc ^ (b | ~d);
			g = (7 * i) % 16;
		}
		f += a + c->k[i] + m[g];
		a = d;
		d = cc;
		cc = b;
		b += rotl32(f, md5_shift[i]);
	}
	c->h[0] += a;
	c->h[1] += b;
	c->h[2] += cc;
	c->h[3] += d;
}

static void md5_update(struct md5_ctx *c, const void *data, size_t len)
{
	const unsigned char *p = data;

	c->nbytes += len;
	while (len > 0) {
		size_t n = 64 - c->fill;

		if (n > len)
			n = len;
		memcpy(c->blk + c->fill, p, n);
		c->fill += n;
		p += n;
		len -= n;
		if (c->fill == 64) {
			md5_block(c, c->blk);
			c->fill = 0;
		}
	}
}

static void md5_final(struct md5_ctx *c, char hex[33])
{
	uint64_t bits = c->nbytes * 8;
	unsigned char pad = 0x80, zero = 0, lenb[8];

	md5_update(c, &pad, 1);
	while (c->fill != 56)
		md5_update(c, &zero, 1);
	for (int i = 0; i < 8; i++)
		lenb[i] = (unsigned char)(bits >> (8 * i));
	md5_update(c, lenb, 8);
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x",
			 (unsigned)(c->h[i / 4] >> (8 * (i % 4))) & 0xffu);
	hex[32] = '\0';
}

int rmcmd_md5_hex(const struct rm_file *f, char hex[33])
{
	enum { CHUNK = 1 << 20 };
	struct md5_ctx c;
	unsigned char *buf = malloc(CHUNK);
	int64_t off = 0, size = rm_size(f);

	if (!buf)
		return -ENOMEM;
	md5_init(&c);
	while (off < size) {
		ssize_t r = rm_pread(f, buf, CHUNK, off);

		if (r < 0) {
			free(buf);
			return (int)r;
		}
		if (r == 0)
			break;
		md5_update(&c, buf, (size_t)r);
		off += r;
	}
	free(buf);
	md5_final(&c, hex);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Numbers. */

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

/* ------------------------------------------------------------------ */
/* xfs_io's number and time formatting for the report lines. */

static int xfs_precise(double v)
{
	/* xfs_io tests value*1000 == (int)value*1000; (int) of a double out
	 * of int range yields INT_MIN on x86-64, which we spell out instead of
	 * relying on undefined behaviour. */
	double t;

	if (!(v < 2147483648.0 && v > -2147483649.0))
		t = (double)INT_MIN;
	else
		t = (double)(int)v;
	return v * 1000 == t * 1000;
}

static void xfs_cvtstr(double v, char *str, size_t size)
{
	static const struct {
		int shift;
		const char *unit;
	} units[] = {
		{ 60, "EiB" }, { 50, "PiB" }, { 40, "TiB" },
		{ 30, "GiB" }, { 20, "MiB" }, { 10, "KiB" },
	};
	int precise = xfs_precise(v);

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double unit = (double)(1LL << units[i].shift);

		if (v >= unit) {
			snprintf(str, size, precise ? "%.f %s" : "%.3f %s",
				 v / unit, units[i].unit);
			return;
		}
	}
	snprintf(str, size, "%f bytes", v);
}

static void xfs_timestr(int64_t usec, char *ts, size_t size)
{
	int64_t sec = usec / 1000000;
	double frac = (double)(usec % 1000000) / 1000000.0;

	if (sec)
		snprintf(ts, size, "%u:%02u:%02u.%02u",
			 (unsigned)(sec / 3600), (unsigned)(sec % 3600 / 60),
			 (unsigned)(sec % 60), (unsigned)(frac * 100));
	else
		snprintf(ts, size, "0.%04u sec", (unsigned)(frac * 10000));
}

static int64_t now_usec(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static int64_t elapsed_usec(const struct rmcmd_session *s, int64_t t0)
{
	int64_t d;

	if (s->fixed_usec > 0)
		return s->fixed_usec;
	d = now_usec() - t0;
	/* A zero interval makes xfs_io print "inf"/"nan" rates; the model is
	 * fast enough to hit that often, so report at least 1 us. */
	return d > 0 ? d : 1;
}

static void report_io(const struct rmcmd_session *s, const char *verb,
		      int64_t usec, int64_t offset, int64_t count,
		      int64_t total, long ops)
{
	char s1[64], s2[64], ts[64];
	double secs = (double)usec / 1000000.0;

	xfs_timestr(usec, ts, sizeof(ts));
	xfs_cvtstr((double)total, s1, sizeof(s1));
	xfs_cvtstr((double)total / secs, s2, sizeof(s2));
	fprintf(s->out, "%s %lld/%lld bytes at offset %lld\n", verb,
		(long long)total, (long long)count, (long long)offset);
	fprintf(s->out, "%s, %ld ops; %s (%s/sec and %.4f ops/sec)\n",
		s1, ops, ts, s2, (double)ops / secs);
}

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
	{ "seek", RMCMD_SEEK, 0, 2, 5, "-a | -d | -h [-r] off",
	  "locate the next data and/or hole", parse_seek },
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

/* Report a usage error as xfs_io does (usage line on stdout). */
static int usage(const struct rmcmd_session *s, const struct cmdinfo *ci)
{
	print_usage_line(s->out, ci);
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
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

static void scan_opts(int argc, char **argv, const char *optstring,
		      struct optparse *p)
{
	bool only_operands = false;

	p->nopts = p->nops = 0;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];

		if (only_operands || a[0] != '-' || a[1] == '\0') {
			p->operands[p->nops++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_operands = true;
			continue;
		}
		for (char *q = a + 1; *q; q++) {
			const char *spec = strchr(optstring, *q);
			struct opt *o = &p->opts[p->nopts++];

			memset(o, 0, sizeof(*o));
			if (!spec || *q == ':') {
				o->c = '?';
				o->bad = *q;
			} else if (spec[1] == ':') {
				o->c = *q;
				if (q[1]) {
					o->arg = q + 1;
				} else if (i + 1 < argc) {
					o->arg = argv[++i];
				} else {
					o->c = '?';
					o->bad = *q;
					o->missing = 1;
				}
				if (p->nopts >= RMCMD_MAX_ARGS)
					return;
				break;
			} else {
				o->c = *q;
			}
			if (p->nopts >= RMCMD_MAX_ARGS)
				return;
		}
	}
}

/* Print getopt's complaint about option o of command name. */
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

	scan_opts(argc, argv, optstring, &p);
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

	scan_opts(argc, argv, "cikpu", &p);
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
			/* xfs_io prints the usage here and carries on,
			 * printing it again if the operands are wrong too
			 * (or calling fallocate if they are not: rmio stops). */
			bad_option(s, ci->name, &p.opts[i]);
			print_usage_line(s->out, ci);
			if (p.nops != 2)
				print_usage_line(s->out, ci);
			return -EINVAL;
		}
	}
	if (p.nops != 2)
		return usage(s, ci);
	return offset_length(s, p.operands[0], p.operands[1], cmd);
}

static int parse_fzero(const struct rmcmd_session *s, const struct cmdinfo *ci,
		       int argc, char **argv, struct rmcmd *cmd)
{
	struct optparse p;

	scan_opts(argc, argv, "k", &p);
	cmd->mode = RM_FALLOC_FL_ZERO_RANGE;
	for (int i = 0; i < p.nopts; i++) {
		if (p.opts[i].c == 'k') {
			cmd->mode |= RM_FALLOC_FL_KEEP_SIZE;
		} else {
			bad_option(s, ci->name, &p.opts[i]);
			return usage(s, ci);
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

	scan_opts(argc, argv, "aln:sv", &p);
	for (int i = 0; i < p.nopts; i++) {
		const struct opt *o = &p.opts[i];

		switch (o->c) {
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

static int parse_seek(const struct rmcmd_session *s, const struct cmdinfo *ci,
		      int argc, char **argv, struct rmcmd *cmd)
{
	struct optparse p;

	scan_opts(argc, argv, "adhrs", &p);
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

	scan_opts(argc, argv, "rv", &p);
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
			return -EINVAL;
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
		fprintf(s->err, "command \"%s\" not found\n", argv[0]);
		return -EINVAL;
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
		return -EINVAL;
	}
	cmd->op = ci->op;
	snprintf(cmd->name, sizeof(cmd->name), "%s", ci->name);
	return ci->parse(s, ci, argc, argv, cmd);
}

/* ------------------------------------------------------------------ */
/* Execution. */

static void perror_to(const struct rmcmd_session *s, const char *what,
		      int64_t err)
{
	fprintf(s->err, "%s: %s\n", what, strerror((int)-err));
}

/* Refuse a transfer bigger than the session's limit (see io_limit). */
static int over_limit(const struct rmcmd_session *s, const char *what,
		      int64_t bytes)
{
	if (s->io_limit <= 0 || bytes <= s->io_limit)
		return 0;
	fprintf(s->err, "%s: %lld bytes exceed rmio's limit of %lld bytes per command (rmio -L)\n",
		what, (long long)bytes, (long long)s->io_limit);
	return 1;
}

static int exec_pwrite(struct rmcmd_session *s, const struct rmcmd *cmd)
{
	int64_t count = cmd->len, off = cmd->off, total = 0, t0;
	size_t bufsz = (size_t)(cmd->bsize < count ? cmd->bsize : count);
	unsigned char *buf = malloc(bufsz ? bufsz : 1);
	long ops = 0;

	if (over_limit(s, "pwrite", count)) {
		free(buf);
		return -EINVAL;
	}
	if (!buf) {
		perror_to(s, "pwrite", -ENOMEM);
		return -ENOMEM;
	}
	memset(buf, cmd->pattern, bufsz);
	t0 = now_usec();
	/* xfs_io's write_buffer(): bsize-sized calls until done, a zero or
	 * short write ends the loop, an error aborts without a report. */
	while (count > 0) {
		size_t want = (size_t)(count < (int64_t)bufsz ? count
							     : (int64_t)bufsz);
		ssize_t r;

		if (want == 0)	/* -b 0: xfs_io's zero-length write, no op */
			break;
		r = rm_pwrite(s->file, buf, want, off);
		if (r == 0)
			break;
		if (r < 0) {
			free(buf);
			perror_to(s, "pwrite", r);
			return (int)r;
		}
		ops++;
		total += r;
		if ((size_t)r < want)
			break;
		off += r;
		count -= r;
	}
	if (cmd->flags & RMCMD_F_FSYNC_AFTER)
		rm_fsync(s->file);
	free(buf);
	if (!(cmd->flags & RMCMD_F_QUIET))
		report_io(s, "wrote", elapsed_usec(s, t0), cmd->off, cmd->len,
			  total, ops);
	return 0;
}

/* xfs_io's dump_buffer(): 16 bytes a line, offset, hex, isalnum() text. */
static void dump_buffer(FILE *out, int64_t offset, const unsigned char *p,
			ssize_t len)
{
	for (ssize_t i = 0; i < len; i += 16) {
		fprintf(out, "%08llx:  ", (unsigned long long)(offset + i));
		for (ssize_t j = 0; j < 16 && i + j < len; j++)
			fprintf(out, "%02x ", p[i + j]);
		fputc(' ', out);
		for (ssize_t j = 0; j < 16 && i + j < len; j++)
			fputc(isalnum(p[i + j]) ? p[i + j] : '.', out);
		fputc('\n', out);
	}
}

static int exec_pread(struct rmcmd_session *s, const struct rmcmd *cmd)
{
	int64_t count = cmd->len, off = cmd->off, total = 0, t0;
	size_t bufsz = (size_t)(cmd->bsize < count ? cmd->bsize : count);
	unsigned char *buf = malloc(bufsz ? bufsz : 1);
	long ops = 0;
	int64_t avail = rm_size(s->file) - off;

	/* Only the bytes that exist count: "pread 0 1t" of a small file is
	 * cheap, reading a 16 TiB sparse file is not. */
	if (over_limit(s, "pread", avail < count ? avail : count)) {
		free(buf);
		return -EINVAL;
	}
	if (!buf) {
		perror_to(s, "pread", -ENOMEM);
		return -ENOMEM;
	}
	t0 = now_usec();
	while (count > 0) {
		size_t want = (size_t)(count < (int64_t)bufsz ? count
							     : (int64_t)bufsz);
		ssize_t r;

		if (want == 0)
			break;
		r = rm_pread(s->file, buf, want, off);
		if (r == 0)
			break;
		if (r < 0) {
			free(buf);
			perror_to(s, "pread", r);
			return (int)r;
		}
		ops++;
		if (cmd->flags & RMCMD_F_VERBOSE)
			dump_buffer(s->out, off, buf, r);
		total += r;
		if ((size_t)r < want)
			break;
		off += r;
		count -= r;
	}
	free(buf);
	if (!(cmd->flags & RMCMD_F_QUIET))
		report_io(s, "read", elapsed_usec(s, t0), cmd->off, cmd->len,
			  total, ops);
	return 0;
}

/* ---- fiemap, in xfs_io's layout ---- */

struct fmt {
	int foff_w, boff_w, tot_w, flg_w;
};

static int numlen(uint64_t v, unsigned base)
{
	int n = 1;

	while (v >= base) {
		v /= base;
		n++;
	}
	return n;
}

#define BTOBB(b) ((uint64_t)(b) >> 9)	/* xfs_io's BTOBBT: 512-byte units */

static void print_hole(FILE *out, const struct fmt *w, int cur, bool lflag,
		       bool plain, uint64_t llast, uint64_t lstart)
{
	char lbuf[64];

	if (plain) {
		fprintf(out, "\t%d: [%llu..%llu]: hole", cur,
			(unsigned long long)llast,
			(unsigned long long)(lstart - 1));
		if (lflag)
			fprintf(out, " %llu blocks\n",
				(unsigned long long)(lstart - llast));
		else
			fputc('\n', out);
		return;
	}
	snprintf(lbuf, sizeof(lbuf), "[%llu..%llu]:",
		 (unsigned long long)llast, (unsigned long long)(lstart - 1));
	fprintf(out, "%4d: %-*s %-*s %*llu\n", cur, w->foff_w, lbuf,
		w->boff_w, "hole", w->tot_w,
		(unsigned long long)(lstart - llast));
}

/* Returns the number of lines printed (a hole before the extent counts). */
static int print_extent(FILE *out, const struct fmt *w, const struct rm_extent *e,
			uint64_t phys, bool verbose, bool lflag, int cur,
			int max_extents, uint64_t last_logical)
{
	uint64_t llast = BTOBB(last_logical);
	uint64_t lstart = BTOBB(e->logical);
	uint64_t len = BTOBB(e->length);
	uint64_t block = BTOBB(phys);
	int printed = 0;
	char lbuf[64], bbuf[64], flg[16];

	if (verbose && cur == 0)
		fprintf(out, "%4s: %-*s %-*s %*s %*s\n", "EXT", w->foff_w,
			"FILE-OFFSET", w->boff_w, "BLOCK-RANGE", w->tot_w,
			"TOTAL", w->flg_w, "FLAGS");
	if (lstart > llast) {
		print_hole(out, w, cur, lflag, !verbose, llast, lstart);
		cur++;
		printed++;
	}
	if (cur == max_extents)
		return printed;
	if (verbose) {
		snprintf(lbuf, sizeof(lbuf), "[%llu..%llu]:",
			 (unsigned long long)lstart,
			 (unsigned long long)(lstart + len - 1));
		snprintf(bbuf, sizeof(bbuf), "%llu..%llu",
			 (unsigned long long)block,
			 (unsigned long long)(block + len - 1));
		snprintf(flg, sizeof(flg), "0x%x", e->flags);
		fprintf(out, "%4d: %-*s %-*s %*llu %*s\n", cur, w->foff_w,
			lbuf, w->boff_w, bbuf, w->tot_w,
			(unsigned long long)len, w->flg_w, flg);
	} else {
		fprintf(out, "\t%d: [%llu..%llu]: %llu..%llu", cur,
			(unsigned long long)lstart,
			(unsigned long long)(lstart + len - 1),
			(unsigned long long)block,
			(unsigned long long)(block + len - 1));
		if (lflag)
			fprintf(out, " %llu blocks\n", (unsigned long long)len);
		else
			fputc('\n', out);
	}
	return printed + 1;
}

/* Column widths from the first batch (xfs_io asks 32 extents at a time and
 * sizes the table on the first batch only, up to the LAST extent). */
static void calc_format(const struct rm_extent *ext, const uint64_t *phys,
			size_t n, struct fmt *w)
{
	char buf[64];

	for (size_t i = 0; i < n && i < 32; i++) {
		uint64_t l = BTOBB(ext[i].logical), len = BTOBB(ext[i].length);
		uint64_t b = BTOBB(phys[i]);
		int k;

		k = snprintf(buf, sizeof(buf), "[%llu..%llu]",
			     (unsigned long long)l,
			     (unsigned long long)(l + len - 1));
		if (k > w->foff_w)
			w->foff_w = k;
		k = snprintf(buf, sizeof(buf), "%llu..%llu",
			     (unsigned long long)b,
			     (unsigned long long)(b + len - 1));
		if (k > w->boff_w)
			w->boff_w = k;
		if (numlen(len, 10) > w->tot_w)
			w->tot_w = numlen(len, 10);
		if (numlen(ext[i].flags, 16) > w->flg_w)
			w->flg_w = numlen(ext[i].flags, 16);
		if (ext[i].flags & RM_FIEMAP_LAST)
			break;
	}
}

static int exec_fiemap(struct rmcmd_session *s, const struct rmcmd *cmd)
{
	struct fmt w = { 16, 16, 5, 5 };
	bool verbose = cmd->flags & RMCMD_F_VERBOSE;
	bool lflag = cmd->flags & RMCMD_F_LFLAG;
	int64_t start = (cmd->flags & RMCMD_F_HAS_OFF) ? cmd->off : 0;
	uint64_t range_end = UINT64_MAX;	/* xfs_io's -1 */
	int64_t qlen, n;
	uint64_t last_logical = (uint64_t)start;
	struct rm_extent *ext = NULL;
	uint64_t *phys = NULL;
	int cur = 0, max;

	if (cmd->max_extents >= 0)
		s->fiemap_max_extents = cmd->max_extents;
	max = s->fiemap_max_extents;
	if (cmd->flags & RMCMD_F_HAS_LEN) {
		range_end = (uint64_t)start + (uint64_t)cmd->len;
		qlen = cmd->len;
	} else {
		/* fm_length = -1 - start; the kernel clamps it to
		 * s_maxbytes - start (fiemap_prep()). */
		qlen = INT64_MAX - start;
	}

	fprintf(s->out, "%s:\n", s->name);
	n = rm_fiemap(s->file, start, qlen, NULL, 0);
	if (n > 0) {
		ext = calloc((size_t)n, sizeof(*ext));
		phys = calloc((size_t)n, sizeof(*phys));
		if (!ext || !phys)
			n = -ENOMEM;
		else
			n = rm_fiemap(s->file, start, qlen, ext, (size_t)n);
	}
	if (n < 0) {
		fprintf(s->err, "rmio: ioctl(FS_IOC_FIEMAP) [\"%s\"]: %s\n",
			s->name, strerror((int)-n));
		free(ext);
		free(phys);
		return (int)n;
	}
	/* rm_fiemap() reports what iomap_fiemap() (ext4 and XFS in 6.1)
	 * reports: each mapping clipped to the range rounded out to whole
	 * blocks (xfs_read_iomap_begin() and ext4_iomap_begin_report() map
	 * from the block holding the start to the block holding the end),
	 * the last one flagged FIEMAP_EXTENT_LAST.  xfs_io prints those
	 * extents as they come, so a range inside one block shows that whole
	 * block. */
	for (int64_t i = 0; i < n; i++) {
		/* The model has no disk: lay the reported extents out back to
		 * back from disk byte 0, so the BLOCK-RANGE column stays as
		 * narrow as on a small real file system (its width decides
		 * the table's padding). */
		phys[i] = i ? phys[i - 1] + (uint64_t)ext[i - 1].length : 0;
	}
	if (verbose && n > 0)
		calc_format(ext, phys, (size_t)n, &w);
	for (int64_t i = 0; i < n; i++) {
		cur += print_extent(s->out, &w, &ext[i], phys[i], verbose,
				    lflag, cur, max, last_logical);
		last_logical = (uint64_t)(ext[i].logical + ext[i].length);
		if (ext[i].flags & RM_FIEMAP_LAST)
			break;
		if (last_logical >= range_end)
			break;
		if (cur == max)
			break;
	}
	free(ext);
	free(phys);
	if (cur == max)
		return 0;
	/* The last hole, to EOF or the end of the range, only if something
	 * was printed before (an all-hole file prints just its name). */
	if (range_end > (uint64_t)rm_size(s->file))
		range_end = (uint64_t)rm_size(s->file);
	if (cur && last_logical < range_end)
		print_hole(s->out, &w, cur, lflag, !verbose,
			   BTOBB(last_logical), BTOBB(range_end));
	return 0;
}

/* ---- seek ---- */

static void seek_output(FILE *out, bool startflag, const char *type,
			int64_t start, int64_t off)
{
	if (off == -ENXIO) {
		if (startflag)
			fprintf(out, "%s\t%lld\tEOF\n", type, (long long)start);
		else
			fprintf(out, "%s\tEOF\n", type);
	} else if (off < 0) {
		fprintf(out, "%s\t%s\n", type, strerror((int)-off));
	} else if (startflag) {
		fprintf(out, "%s\t%lld\t%lld\n", type, (long long)start,
			(long long)off);
	} else {
		fprintf(out, "%s\t%lld\n", type, (long long)off);
	}
}

static int exec_seek(struct rmcmd_session *s, const struct rmcmd *cmd)
{
	enum { DATA = 0, HOLE = 1 };
	static const char *const names[2] = { "DATA", "HOLE" };
	static const int whence[2] = { RM_SEEK_DATA, RM_SEEK_HOLE };
	static const unsigned mask[2] = { RMCMD_F_SEEK_DATA, RMCMD_F_SEEK_HOLE };
	bool startflag = cmd->flags & RMCMD_F_SEEK_START;
	bool both = (cmd->flags & RMCMD_F_SEEK_DATA) &&
		    (cmd->flags & RMCMD_F_SEEK_HOLE);
	int64_t start = cmd->off, off = -ENXIO;
	int current = DATA;

	/* xfs_io's seek_f(): with -h, a hole at the offset itself is the
	 * first entry; otherwise (or when that is not a hole and data is
	 * wanted too) start from the next data. */
	if (cmd->flags & RMCMD_F_SEEK_HOLE) {
		current = HOLE;
		off = rm_lseek(s->file, start, RM_SEEK_HOLE);
		if (off == start || !(cmd->flags & RMCMD_F_SEEK_DATA))
			goto found;
	}
	current = DATA;
	off = rm_lseek(s->file, start, RM_SEEK_DATA);
found:
	fprintf(s->out, startflag ? "Whence\tStart\tResult\n"
				  : "Whence\tResult\n");
	for (int c = 0;; c++) {
		if (off < 0) {
			/* EOF is shown only when it is the only answer. */
			if (off != -ENXIO || c == 0)
				seek_output(s->out, startflag, names[current],
					    start, off);
			return 0;
		}
		if (cmd->flags & mask[current])
			seek_output(s->out, startflag, names[current], start,
				    off);
		/* Without -r: one entry, or one of each kind with -a. */
		if (!(cmd->flags & RMCMD_F_SEEK_ALL) && (c == 1 || !both))
			break;
		start = off;
		current ^= 1;
		off = rm_lseek(s->file, start, whence[current]);
	}
	return 0;
}

static int exec_stat(struct rmcmd_session *s, const struct rmcmd *cmd)
{
	struct rm_stats st;

	(void)cmd;
	rm_stats(s->file, &st);
	/* Only what the model knows: no inode number, no times, no XFS
	 * fsxattr/dioattr lines.  stat.blocks counts allocated data blocks
	 * only (a real file system may add metadata blocks). */
	fprintf(s->out, "fd.path = \"%s\"\n", s->name);
	fprintf(s->out, "fd.flags = non-sync,non-direct,read-write\n");
	fprintf(s->out, "stat.type = regular file\n");
	fprintf(s->out, "stat.size = %lld\n", (long long)st.size);
	fprintf(s->out, "stat.blocks = %lld\n",
		(long long)(st.alloc_bytes / 512));
	return 0;
}

int rmcmd_exec(struct rmcmd_session *s, const struct rmcmd *cmd)
{
	int r;
	char hex[33];
	const struct cmdinfo *ci;

	switch (cmd->op) {
	case RMCMD_PWRITE:
		return exec_pwrite(s, cmd);
	case RMCMD_PREAD:
		return exec_pread(s, cmd);
	case RMCMD_TRUNCATE:
		r = rm_truncate(s->file, cmd->off);
		if (r < 0)
			perror_to(s, "ftruncate", r);
		return r;
	case RMCMD_FALLOC:
		r = rm_fallocate(s->file, cmd->mode, cmd->off, cmd->len);
		if (r < 0)
			perror_to(s, "fallocate", r);
		return r;
	case RMCMD_FSYNC:
		r = rm_fsync(s->file);
		if (r < 0)
			perror_to(s, "fsync", r);
		return r;
	case RMCMD_FIEMAP:
		return exec_fiemap(s, cmd);
	case RMCMD_SEEK:
		return exec_seek(s, cmd);
	case RMCMD_STAT:
		return exec_stat(s, cmd);
	case RMCMD_MD5SUM:
		if (over_limit(s, "md5sum", rm_size(s->file)))
			return -EINVAL;
		r = rmcmd_md5_hex(s->file, hex);
		if (r < 0) {
			perror_to(s, "md5sum", r);
			return r;
		}
		fprintf(s->out, "%s  %s\n", hex, s->name);
		return 0;
	case RMCMD_XXH3SUM:
		if (over_limit(s, "xxh3sum", rm_size(s->file)))
			return -EINVAL;
		fprintf(s->out, "%016" PRIx64 "  %s\n",
			rm_hash(s->file, 0, INT64_MAX), s->name);
		return 0;
	case RMCMD_HELP:
		ci = cmd->topic[0] ? find_cmd(cmd->topic) : NULL;
		if (ci)
			print_usage_line(s->out, ci);
		else
			rmcmd_print_help(s->out);
		return 0;
	}
	return -EINVAL;
}

int rmcmd_run(struct rmcmd_session *s, const char *line)
{
	struct rmcmd cmd;
	int r = rmcmd_parse(s, line, &cmd);

	if (r == 1)
		return 0;
	if (r < 0)
		return r;
	return rmcmd_exec(s, &cmd);
}
