/* SPDX-License-Identifier: MIT */
/*
 * op.c - difftest's operation kinds and their text form: one op per line in
 * an xfs_io-like syntax ("f0 pwrite -S 0x41 4096 8192", "f1 finsert 0 4096",
 * "drop_caches"), used by the op log that `difftest --replay` reads and by
 * reports.  Also the errno names used in logs and JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt.h"

static const char *const kind_names[DT_NKINDS] = {
	[DT_PWRITE] = "pwrite", [DT_PREAD] = "pread", [DT_MWRITE] = "mwrite",
	[DT_MREAD] = "mread", [DT_TRUNCATE] = "truncate", [DT_FALLOC] = "falloc",
	[DT_FALLOC_KEEP] = "falloc_keep", [DT_PUNCH] = "punch",
	[DT_ZERO] = "zero", [DT_ZERO_KEEP] = "zero_keep", [DT_INSERT] = "insert",
	[DT_COLLAPSE] = "collapse", [DT_UNSHARE] = "unshare", [DT_FMODE] = "fmode",
	[DT_FSYNC] = "fsync", [DT_REOPEN] = "reopen", [DT_DROP] = "drop_caches",
	[DT_REMOUNT] = "remount", [DT_SEEK_DATA] = "seek_data",
	[DT_SEEK_HOLE] = "seek_hole", [DT_REFLINK] = "reflink",
};

const char *dt_kind_name(int kind)
{
	return kind >= 0 && kind < DT_NKINDS ? kind_names[kind] : "?";
}

int dt_kind_parse(const char *name)
{
	for (int k = 0; k < DT_NKINDS; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return -1;
}

int dt_kind_is_falloc(int kind)
{
	return kind >= DT_FALLOC && kind <= DT_FMODE;
}

int dt_kind_is_global(int kind)
{
	return kind == DT_DROP || kind == DT_REMOUNT;
}

int dt_kind_mode(const struct dt_op *op)
{
	switch (op->kind) {
	case DT_FALLOC: return 0;
	case DT_FALLOC_KEEP: return RM_FALLOC_FL_KEEP_SIZE;
	case DT_PUNCH: return RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE;
	case DT_ZERO: return RM_FALLOC_FL_ZERO_RANGE;
	case DT_ZERO_KEEP: return RM_FALLOC_FL_ZERO_RANGE | RM_FALLOC_FL_KEEP_SIZE;
	case DT_INSERT: return RM_FALLOC_FL_INSERT_RANGE;
	case DT_COLLAPSE: return RM_FALLOC_FL_COLLAPSE_RANGE;
	case DT_UNSHARE: return RM_FALLOC_FL_UNSHARE_RANGE;
	case DT_FMODE: return op->mode;
	default: return -1;
	}
}

/* Bytes of a pwrite/mwrite: one constant byte per op, as `xfs_io pwrite -S`
 * writes, so that the xfs_io reproducer writes exactly the same data. */
void dt_fill_pattern(void *buf, size_t len, uint8_t pat)
{
	memset(buf, pat, len);
}

void dt_op_format(const struct dt_op *op, char *buf, size_t n)
{
	const char *nm = dt_kind_name(op->kind);
	int f = op->file;

	switch (op->kind) {
	case DT_PWRITE:
	case DT_MWRITE:
		snprintf(buf, n, "f%d %s -S 0x%02x %" PRId64 " %" PRId64, f, nm,
			 op->pat, op->off, op->len);
		break;
	case DT_PREAD:
	case DT_MREAD:
		snprintf(buf, n, "f%d %s %" PRId64 " %" PRId64, f, nm, op->off, op->len);
		break;
	case DT_TRUNCATE:
		snprintf(buf, n, "f%d truncate %" PRId64, f, op->off);
		break;
	case DT_FALLOC: case DT_FALLOC_KEEP: case DT_PUNCH: case DT_ZERO:
	case DT_ZERO_KEEP: case DT_INSERT: case DT_COLLAPSE: case DT_UNSHARE: {
		static const char *const xn[] = {
			"falloc", "falloc -k", "fpunch", "fzero", "fzero -k",
			"finsert", "fcollapse", "funshare" };
		snprintf(buf, n, "f%d %s %" PRId64 " %" PRId64, f,
			 xn[op->kind - DT_FALLOC], op->off, op->len);
		break;
	}
	case DT_FMODE:
		snprintf(buf, n, "f%d fmode 0x%x %" PRId64 " %" PRId64, f,
			 (unsigned)op->mode, op->off, op->len);
		break;
	case DT_FSYNC: snprintf(buf, n, "f%d fsync", f); break;
	case DT_REOPEN: snprintf(buf, n, "f%d reopen", f); break;
	case DT_DROP: snprintf(buf, n, "drop_caches"); break;
	case DT_REMOUNT: snprintf(buf, n, "remount"); break;
	case DT_SEEK_DATA:
		snprintf(buf, n, "f%d seek -d %" PRId64, f, op->off);
		break;
	case DT_SEEK_HOLE:
		snprintf(buf, n, "f%d seek -h %" PRId64, f, op->off);
		break;
	case DT_REFLINK:	/* xfs_io: reflink SRC src_offset dst_offset length */
		snprintf(buf, n, "f%d reflink f%d %" PRId64 " %" PRId64 " %" PRId64, f,
			 op->src, op->soff, op->off, op->len);
		break;
	default:
		snprintf(buf, n, "?");
	}
}

static int parse_i64(const char *s, int64_t *v)
{
	char *end;

	if (!s)
		return -EINVAL;
	errno = 0;
	long long x = strtoll(s, &end, 0);
	if (errno || end == s || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

int dt_op_parse(const char *line, struct dt_op *op, char *err, size_t errn)
{
	char copy[512], *tok[8];
	int nt = 0;

	if (strlen(line) >= sizeof(copy)) {
		snprintf(err, errn, "line too long");
		return -EINVAL;
	}
	strcpy(copy, line);
	for (char *p = strtok(copy, " \t\r\n"); p && nt < 8; p = strtok(NULL, " \t\r\n"))
		tok[nt++] = p;
	memset(op, 0, sizeof(*op));
	if (nt == 0) {
		snprintf(err, errn, "empty line");
		return -EINVAL;
	}
	if (nt == 1 && !strcmp(tok[0], "drop_caches")) {
		op->kind = DT_DROP;
		return 0;
	}
	if (nt == 1 && !strcmp(tok[0], "remount")) {
		op->kind = DT_REMOUNT;
		return 0;
	}
	int64_t fi;
	if (tok[0][0] != 'f' || parse_i64(tok[0] + 1, &fi) || fi < 0 || fi >= DT_MAXFILES) {
		snprintf(err, errn, "expected a file 'fN' (N < %d) first, got '%s'",
			 DT_MAXFILES, tok[0]);
		return -EINVAL;
	}
	op->file = (uint8_t)fi;
	if (nt < 2) {
		snprintf(err, errn, "missing command after '%s'", tok[0]);
		return -EINVAL;
	}
	const char *c = tok[1];
	char **a = tok + 2;
	int na = nt - 2;
	int64_t x, y;

#define NEED(k) do { if (na != (k)) { snprintf(err, errn, "'%s' takes %d arguments", c, (k)); return -EINVAL; } } while (0)
#define NUM(s, v) do { if (parse_i64((s), (v))) { snprintf(err, errn, "'%s': bad number '%s'", c, (s)); return -EINVAL; } } while (0)
	if (!strcmp(c, "pwrite") || !strcmp(c, "mwrite")) {
		NEED(4);
		if (strcmp(a[0], "-S")) {
			snprintf(err, errn, "'%s' needs -S PATTERN", c);
			return -EINVAL;
		}
		NUM(a[1], &x);
		if (x < 1 || x > 255) {
			snprintf(err, errn, "pattern must be 1..255");
			return -EINVAL;
		}
		op->pat = (uint8_t)x;
		NUM(a[2], &op->off);
		NUM(a[3], &op->len);
		op->kind = c[0] == 'p' ? DT_PWRITE : DT_MWRITE;
	} else if (!strcmp(c, "pread") || !strcmp(c, "mread")) {
		NEED(2);
		NUM(a[0], &op->off);
		NUM(a[1], &op->len);
		op->kind = c[0] == 'p' ? DT_PREAD : DT_MREAD;
	} else if (!strcmp(c, "truncate")) {
		NEED(1);
		NUM(a[0], &op->off);
		op->kind = DT_TRUNCATE;
	} else if (!strcmp(c, "falloc") || !strcmp(c, "fzero")) {
		int keep = na == 3 && !strcmp(a[0], "-k");
		if (keep) {
			a++;
			na--;
		}
		NEED(2);
		NUM(a[0], &op->off);
		NUM(a[1], &op->len);
		if (c[1] == 'a')
			op->kind = keep ? DT_FALLOC_KEEP : DT_FALLOC;
		else
			op->kind = keep ? DT_ZERO_KEEP : DT_ZERO;
	} else if (!strcmp(c, "fpunch") || !strcmp(c, "finsert") ||
		   !strcmp(c, "fcollapse") || !strcmp(c, "funshare")) {
		NEED(2);
		NUM(a[0], &op->off);
		NUM(a[1], &op->len);
		op->kind = c[1] == 'p' ? DT_PUNCH : c[1] == 'i' ? DT_INSERT :
			   c[1] == 'c' ? DT_COLLAPSE : DT_UNSHARE;
	} else if (!strcmp(c, "fmode")) {
		NEED(3);
		NUM(a[0], &x);
		if (x < INT32_MIN || x > (int64_t)UINT32_MAX) {
			snprintf(err, errn, "fmode: mode out of range");
			return -EINVAL;
		}
		op->mode = (int32_t)(uint32_t)x;
		NUM(a[1], &op->off);
		NUM(a[2], &op->len);
		op->kind = DT_FMODE;
	} else if (!strcmp(c, "fsync") || !strcmp(c, "reopen")) {
		NEED(0);
		op->kind = c[0] == 'f' ? DT_FSYNC : DT_REOPEN;
	} else if (!strcmp(c, "reflink")) {
		NEED(4);
		if (a[0][0] != 'f' || parse_i64(a[0] + 1, &x) || x < 0 || x >= DT_MAXFILES) {
			snprintf(err, errn, "reflink: source must be a file 'fN' (N < %d), got '%s'",
				 DT_MAXFILES, a[0]);
			return -EINVAL;
		}
		op->src = (uint8_t)x;
		NUM(a[1], &op->soff);
		NUM(a[2], &op->off);
		NUM(a[3], &op->len);
		op->kind = DT_REFLINK;
	} else if (!strcmp(c, "seek")) {
		NEED(2);
		if (strcmp(a[0], "-d") && strcmp(a[0], "-h")) {
			snprintf(err, errn, "seek needs -d or -h");
			return -EINVAL;
		}
		NUM(a[1], &op->off);
		op->kind = a[0][1] == 'd' ? DT_SEEK_DATA : DT_SEEK_HOLE;
	} else {
		snprintf(err, errn, "unknown command '%s'", c);
		return -EINVAL;
	}
	(void)y;
	if ((op->kind == DT_PWRITE || op->kind == DT_PREAD || op->kind == DT_MWRITE ||
	     op->kind == DT_MREAD) && (op->len < 0 || op->len > DT_MAX_IO)) {
		snprintf(err, errn, "'%s': length must be 0..%d", c, DT_MAX_IO);
		return -EINVAL;
	}
	return 0;
#undef NEED
#undef NUM
}

const char *dt_errname(int e)
{
	if (e < 0)
		e = -e;
	switch (e) {
	case 0: return "OK";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EIO: return "EIO";
	case EBADF: return "EBADF";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case EISDIR: return "EISDIR";
	case EINVAL: return "EINVAL";
	case ETXTBSY: return "ETXTBSY";
	case EFBIG: return "EFBIG";
	case ENOSPC: return "ENOSPC";
	case ESPIPE: return "ESPIPE";
	case EROFS: return "EROFS";
	case ERANGE: return "ERANGE";
	case ENOSYS: return "ENOSYS";
	case ENXIO: return "ENXIO";
	case ENOTTY: return "ENOTTY";
	case EOVERFLOW: return "EOVERFLOW";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EDQUOT: return "EDQUOT";
	case EUCLEAN: return "EUCLEAN";
	case EFAULT: return "EFAULT";
	case EAGAIN: return "EAGAIN";
	case EINTR: return "EINTR";
	default: return "E?";
	}
}
