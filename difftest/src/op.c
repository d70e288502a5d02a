/* SPDX-License-Identifier: MIT */
/*
 * op.c - the text form of an op: one op per line in an xfs_io-like syntax
 * ("f0 pwrite -S 0x41 4096 8192", "f1 finsert 0 4096", "drop_caches"),
 * used by the op log that `difftest --replay` reads and by reports.  Each
 * kind's command word and argument syntax come from its descriptor
 * (optab.c); the render and parse hooks here are one per syntax.  Also
 * the errno names used in logs and JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optab.h"

#define MAX_WORDS 8	/* the longest line has 7 ("f0 sync_range -a -b -w OFF LEN") */

/* ---- render ---- */

void dt_fmt_global(const struct dt_opdesc *od, const struct dt_op *op, char *buf, size_t n)
{
	(void)op;
	snprintf(buf, n, "%s", od->cmd);
}

void dt_fmt_file(const struct dt_opdesc *od, const struct dt_op *op, char *buf, size_t n)
{
	snprintf(buf, n, "f%d %s", op->file, od->cmd);
}

void dt_fmt_off(const struct dt_opdesc *od, const struct dt_op *op, char *buf, size_t n)
{
	snprintf(buf, n, "f%d %s %" PRId64, op->file, od->cmd, op->off);
}

/* "f0 chmod 06666": a permission mode in octal, anything else (refused
 * when run) in decimal; dt_parse_off()'s strtoll base 0 reads both */
void dt_fmt_chmod(const struct dt_opdesc *od, const struct dt_op *op, char *buf, size_t n)
{
	if (op->off >= 0 && op->off <= 07777)
		snprintf(buf, n, "f%d %s 0%" PRIo64, op->file, od->cmd, (uint64_t)op->off);
	else
		snprintf(buf, n, "f%d %s %" PRId64, op->file, od->cmd, op->off);
}

void dt_fmt_range(const struct dt_opdesc *od, const struct dt_op *op, char *buf, size_t n)
{
	snprintf(buf, n, "f%d %s %" PRId64 " %" PRId64, op->file, od->cmd, op->off, op->len);
}

void dt_fmt_pat_range(const struct dt_opdesc *od, const struct dt_op *op, char *buf, size_t n)
{
	snprintf(buf, n, "f%d %s -S 0x%02x %" PRId64 " %" PRId64, op->file, od->cmd,
		 op->pat, op->off, op->len);
}

void dt_fmt_mode_range(const struct dt_opdesc *od, const struct dt_op *op, char *buf, size_t n)
{
	snprintf(buf, n, "f%d %s 0x%x %" PRId64 " %" PRId64, op->file, od->cmd,
		 (unsigned)op->mode, op->off, op->len);
}

/* xfs_io's order: reflink SRC src_offset dst_offset length */
void dt_fmt_reflink(const struct dt_opdesc *od, const struct dt_op *op, char *buf, size_t n)
{
	snprintf(buf, n, "f%d %s f%d %" PRId64 " %" PRId64 " %" PRId64, op->file, od->cmd,
		 op->src, op->soff, op->off, op->len);
}

/* xfs_io's sync_range flags: -a WAIT_AFTER, -b WAIT_BEFORE, -w WRITE.
 * The generator and the parser give an op one flag (dt_gen_sync_range()),
 * the only sets an xfs_io 6.1 command line can say. */
void dt_fmt_sync_range(const struct dt_opdesc *od, const struct dt_op *op, char *buf, size_t n)
{
	unsigned fl = (unsigned)op->mode;

	snprintf(buf, n, "f%d %s%s%s%s %" PRId64 " %" PRId64, op->file, od->cmd,
		 fl & DT_SR_WAIT_AFTER ? " -a" : "", fl & DT_SR_WAIT_BEFORE ? " -b" : "",
		 fl & DT_SR_WRITE ? " -w" : "", op->off, op->len);
}

void dt_op_format(const struct dt_op *op, char *buf, size_t n)
{
	const struct dt_opdesc *od = dt_opdesc_of(op->kind);

	od->log_format(od, op, buf, n);
}

/* ---- parse ---- */

/* A number as strtoll(base 0) reads it ("4096", "0x41", "-1"), whole. */
static int num(const struct dt_opdesc *od, const char *s, int64_t *v, char *err, size_t errn)
{
	char *end;

	errno = 0;
	long long x = strtoll(s, &end, 0);
	if (end == s || *end) {
		snprintf(err, errn, "'%s': bad number '%s'", od->cmd, s);
		return -EINVAL;
	}
	if (errno == ERANGE) {
		snprintf(err, errn, "'%s': number '%s' is out of range (64-bit signed)", od->cmd, s);
		return -EINVAL;
	}
	*v = x;
	return 0;
}

/* A file "fN", N < DT_MAXFILES. */
static int file_index(const char *s, int64_t *v)
{
	char *end;

	if (s[0] != 'f' || s[1] < '0' || s[1] > '9')
		return -EINVAL;
	errno = 0;
	long x = strtol(s + 1, &end, 10);
	if (*end || errno || x >= DT_MAXFILES)
		return -EINVAL;
	*v = x;
	return 0;
}

static int nargs(const struct dt_opdesc *od, int na, int want, char *err, size_t errn)
{
	if (na == want)
		return 0;
	snprintf(err, errn, "'%s' takes %d argument%s, got %d", od->cmd, want,
		 want == 1 ? "" : "s", na);
	return -EINVAL;
}

/* An I/O length is a buffer difftest allocates. */
static int io_len(const struct dt_opdesc *od, const struct dt_op *op, char *err, size_t errn)
{
	if (!(od->flags & DT_OPF_IO) || (op->len >= 0 && op->len <= DT_MAX_IO))
		return 0;
	snprintf(err, errn, "'%s': length must be 0..%d, got %" PRId64, od->cmd, DT_MAX_IO, op->len);
	return -EINVAL;
}

int dt_parse_none(const struct dt_opdesc *od, char *const *a, int na, struct dt_op *op,
		  char *err, size_t errn)
{
	(void)a;
	(void)op;
	return nargs(od, na, 0, err, errn);
}

int dt_parse_off(const struct dt_opdesc *od, char *const *a, int na, struct dt_op *op,
		 char *err, size_t errn)
{
	if (nargs(od, na, 1, err, errn))
		return -EINVAL;
	return num(od, a[0], &op->off, err, errn);
}

int dt_parse_range(const struct dt_opdesc *od, char *const *a, int na, struct dt_op *op,
		   char *err, size_t errn)
{
	if (nargs(od, na, 2, err, errn) || num(od, a[0], &op->off, err, errn) ||
	    num(od, a[1], &op->len, err, errn))
		return -EINVAL;
	return io_len(od, op, err, errn);
}

int dt_parse_pat_range(const struct dt_opdesc *od, char *const *a, int na, struct dt_op *op,
		       char *err, size_t errn)
{
	int64_t pat;

	if (nargs(od, na, 4, err, errn))
		return -EINVAL;
	if (strcmp(a[0], "-S")) {
		snprintf(err, errn, "'%s' needs -S PATTERN first, got '%s'", od->cmd, a[0]);
		return -EINVAL;
	}
	if (num(od, a[1], &pat, err, errn))
		return -EINVAL;
	if (pat < 1 || pat > 255) {
		snprintf(err, errn, "'%s': pattern must be 1..255, got '%s'", od->cmd, a[1]);
		return -EINVAL;
	}
	op->pat = (uint8_t)pat;
	if (num(od, a[2], &op->off, err, errn) || num(od, a[3], &op->len, err, errn))
		return -EINVAL;
	return io_len(od, op, err, errn);
}

int dt_parse_mode_range(const struct dt_opdesc *od, char *const *a, int na, struct dt_op *op,
			char *err, size_t errn)
{
	int64_t mode;

	if (nargs(od, na, 3, err, errn) || num(od, a[0], &mode, err, errn))
		return -EINVAL;
	/* a 32-bit word: signed ("-1") or unsigned ("0xffffffff", as rendered) */
	if (mode < INT32_MIN || mode > (int64_t)UINT32_MAX) {
		snprintf(err, errn, "'%s': mode '%s' is out of range (32 bits)", od->cmd, a[0]);
		return -EINVAL;
	}
	op->mode = (int32_t)(uint32_t)mode;
	if (num(od, a[1], &op->off, err, errn) || num(od, a[2], &op->len, err, errn))
		return -EINVAL;
	return 0;
}

int dt_parse_reflink(const struct dt_opdesc *od, char *const *a, int na, struct dt_op *op,
		     char *err, size_t errn)
{
	int64_t src;

	if (nargs(od, na, 4, err, errn))
		return -EINVAL;
	if (file_index(a[0], &src)) {
		snprintf(err, errn, "'%s': source must be a file 'fN' (N < %d), got '%s'",
			 od->cmd, DT_MAXFILES, a[0]);
		return -EINVAL;
	}
	op->src = (uint8_t)src;
	if (num(od, a[1], &op->soff, err, errn) || num(od, a[2], &op->off, err, errn) ||
	    num(od, a[3], &op->len, err, errn))
		return -EINVAL;
	return 0;
}

/* Flags as xfs_io's sync_range takes them ("-a", "-b", "-w", or grouped
 * "-abw"), then OFF LEN; no flag means SYNC_FILE_RANGE_WRITE.  A line
 * means what the real xfs_io does with it: sync_range_f() assigns each
 * flag instead of or-ing them, so the last one given wins ("-a -w" is
 * WRITE alone).  Logs written before the generator kept to one flag may
 * have such lines; they are accepted and run as their repro.sh runs under
 * xfs_io, not refused, so that the log and the reproducer of one
 * divergence keep meaning the same calls. */
int dt_parse_sync_range(const struct dt_opdesc *od, char *const *a, int na, struct dt_op *op,
			char *err, size_t errn)
{
	unsigned fl = 0;
	int k = 0;

	for (; k < na && a[k][0] == '-' && a[k][1] && strspn(a[k] + 1, "abw") == strlen(a[k] + 1);
	     k++)
		for (const char *c = a[k] + 1; *c; c++)
			fl = *c == 'a' ? DT_SR_WAIT_AFTER : *c == 'b' ? DT_SR_WAIT_BEFORE : DT_SR_WRITE;
	if (nargs(od, na - k, 2, err, errn) || num(od, a[k], &op->off, err, errn) ||
	    num(od, a[k + 1], &op->len, err, errn))
		return -EINVAL;
	op->mode = (int32_t)(fl ? fl : DT_SR_WRITE);
	return 0;
}

/* Split copy (a copy of the line) into words: their count, or -EINVAL. */
static int words(const char *line, char *copy, size_t cn, char **w, char *err, size_t errn)
{
	int nw = 0;
	char *save = NULL;

	if (strlen(line) >= cn) {
		snprintf(err, errn, "line too long (%zu bytes or more)", cn);
		return -EINVAL;
	}
	strcpy(copy, line);
	for (char *p = strtok_r(copy, " \t\r\n", &save); p; p = strtok_r(NULL, " \t\r\n", &save)) {
		if (nw == MAX_WORDS) {
			snprintf(err, errn, "too many words (an op has at most %d)", MAX_WORDS);
			return -EINVAL;
		}
		w[nw++] = p;
	}
	if (!nw)
		snprintf(err, errn, "empty line");
	return nw ? nw : -EINVAL;
}

/* The descriptor whose command w[0] (and its flag w[1], when it has one)
 * is, and how many words that took; NULL if none. */
static const struct dt_opdesc *find_cmd(char *const *w, int nw, int global, int *used)
{
	const struct dt_opdesc *one = NULL;

	for (int k = 0; k < DT_NKINDS; k++) {
		const char *c = dt_ops[k].cmd;
		size_t l = strcspn(c, " ");
		if ((dt_ops[k].syntax == DT_SYN_GLOBAL) != global || strncmp(c, w[0], l) || w[0][l])
			continue;
		if (!c[l]) {
			one = &dt_ops[k];
		} else if (nw >= 2 && !strcmp(c + l + 1, w[1])) {
			*used = 2;
			return &dt_ops[k];
		}
	}
	*used = 1;
	return one;
}

/* Message for a command that is unknown, or known only with a flag. */
static void unknown_cmd(const char *c, char *err, size_t errn)
{
	size_t l = (size_t)snprintf(err, errn, "unknown command '%s'", c);

	for (int k = 0, first = 1; k < DT_NKINDS && l < errn; k++) {
		const char *dc = dt_ops[k].cmd;
		size_t cl = strcspn(dc, " ");
		if (!dc[cl] || strncmp(dc, c, cl) || c[cl])
			continue;
		l += (size_t)snprintf(err + l, errn - l, "%s'%s'", first ? "; forms: " : ", ", dc);
		first = 0;
	}
}

/* Parse into *op (zeroed first); the caller's op changes only on success. */
static int parse_line(const char *line, struct dt_op *op, char *err, size_t errn)
{
	char copy[512], *w[MAX_WORDS];
	int nw, used;
	int64_t fi;
	const struct dt_opdesc *od;

	memset(op, 0, sizeof(*op));
	if ((nw = words(line, copy, sizeof(copy), w, err, errn)) < 0)
		return -EINVAL;
	if ((od = find_cmd(w, nw, 1, &used))) {
		op->kind = (uint8_t)(od - dt_ops);
		return od->log_parse(od, w + 1, nw - 1, op, err, errn);
	}
	if (file_index(w[0], &fi)) {
		snprintf(err, errn, "expected a file 'fN' (N < %d), drop_caches or remount first, "
			 "got '%s'", DT_MAXFILES, w[0]);
		return -EINVAL;
	}
	op->file = (uint8_t)fi;
	if (nw < 2) {
		snprintf(err, errn, "missing command after '%s'", w[0]);
		return -EINVAL;
	}
	if (!(od = find_cmd(w + 1, nw - 1, 0, &used))) {
		unknown_cmd(w[1], err, errn);
		return -EINVAL;
	}
	op->kind = (uint8_t)(od - dt_ops);
	return od->log_parse(od, w + 1 + used, nw - 1 - used, op, err, errn);
}

int dt_op_parse(const char *line, struct dt_op *op, char *err, size_t errn)
{
	struct dt_op tmp;
	int rc = parse_line(line, &tmp, err, errn);

	if (!rc)
		*op = tmp;
	return rc;
}

int dt_op_equal(const struct dt_op *a, const struct dt_op *b)
{
	if (a->kind != b->kind)
		return 0;
	int syn = dt_opdesc_of(a->kind)->syntax;
	if (syn == DT_SYN_GLOBAL)
		return 1;
	return a->file == b->file && (syn == DT_SYN_FILE || a->off == b->off) &&
	       (syn < DT_SYN_RANGE || a->len == b->len) &&
	       (syn != DT_SYN_PAT_RANGE || a->pat == b->pat) &&
	       ((syn != DT_SYN_MODE_RANGE && syn != DT_SYN_SYNC_RANGE) || a->mode == b->mode) &&
	       (syn != DT_SYN_REFLINK || (a->src == b->src && a->soff == b->soff));
}

/* Bytes of a pwrite/mwrite: one constant byte per op, as `xfs_io pwrite -S`
 * writes, so that the xfs_io reproducer writes exactly the same data. */
void dt_fill_pattern(void *buf, size_t len, uint8_t pat)
{
	memset(buf, pat, len);
}

const char *dt_errname(int e)
{
	static const struct { int e; const char *name; } names[] = {
		{ 0, "OK" }, { EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EIO, "EIO" },
		{ EBADF, "EBADF" }, { ENOMEM, "ENOMEM" }, { EACCES, "EACCES" },
		{ EBUSY, "EBUSY" }, { EEXIST, "EEXIST" }, { ENODEV, "ENODEV" },
		{ EISDIR, "EISDIR" }, { EINVAL, "EINVAL" }, { ETXTBSY, "ETXTBSY" },
		{ EFBIG, "EFBIG" }, { ENOSPC, "ENOSPC" }, { ESPIPE, "ESPIPE" },
		{ EROFS, "EROFS" }, { ERANGE, "ERANGE" }, { ENOSYS, "ENOSYS" },
		{ ENXIO, "ENXIO" }, { ENOTTY, "ENOTTY" }, { EOVERFLOW, "EOVERFLOW" },
		{ EOPNOTSUPP, "EOPNOTSUPP" }, { EDQUOT, "EDQUOT" }, { EUCLEAN, "EUCLEAN" },
		{ EFAULT, "EFAULT" }, { EAGAIN, "EAGAIN" }, { EINTR, "EINTR" },
		{ EXDEV, "EXDEV" }, { EBADE, "EBADE" },
	};

	if (e < 0 && e != INT_MIN)
		e = -e;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (names[k].e == e)
			return names[k].name;
	return "E?";
}
