/* SPDX-License-Identifier: MIT */
/*
 * script.c - repro.sh: an op log as a shell script that runs the real
 * xfs_io (plus drop_caches and umount/mount for the ops xfs_io has not),
 * then checks the diverging op's result the way the oracle did and prints
 * "BUG REPRODUCED" (exit 1) when the kernel still diverges.  Each kind's
 * xfs_io command and its effect on the script's own model (the sizes that
 * mapped I/O is clipped to, the block states a map check allows) are its
 * descriptor's xfs_io and model hooks (optab.h), defined here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optab.h"

/* ---- xfs_io commands (dt_ops[].xfs_io) ---- */

int dt_xio_pwrite(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	(void)size;
	snprintf(buf, n, "-c \"pwrite -q -S 0x%02x %" PRId64 " %" PRId64 "\"", op->pat,
		 op->off, op->len);
	return 1;
}

int dt_xio_pread(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	(void)size;
	snprintf(buf, n, "-c \"pread -q %" PRId64 " %" PRId64 "\"", op->off, op->len);
	return 1;
}

/* Mapped I/O is clipped to EOF exactly as difftest does; mwrite/mread take
 * FILE offsets inside the mapping (xfs_io's mmap.c checks "offset is
 * before start of mapping"). */
static int xio_mapped(const struct dt_op *op, int64_t size, int write, char *buf, size_t n)
{
	int64_t off = op->off, k = dt_mapped_len(off, op->len, size);

	if (!k) {
		snprintf(buf, n, "# (%s past EOF: nothing to do)", dt_kind_name(op->kind));
		return DT_XIO_NOTHING;
	}
	int64_t base = off & ~(int64_t)4095;
	if (write)
		snprintf(buf, n, "-c \"mmap -rw %" PRId64 " %" PRId64 "\" -c \"mwrite -S 0x%02x %"
			 PRId64 " %" PRId64 "\" -c \"munmap\"", base, off + k - base, op->pat,
			 off, k);
	else
		snprintf(buf, n, "-c \"mmap -r %" PRId64 " %" PRId64 "\" -c \"mread %" PRId64
			 " %" PRId64 "\" -c \"munmap\"", base, off + k - base, off, k);
	return 1;
}

int dt_xio_mwrite(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	return xio_mapped(op, size, 1, buf, n);
}

int dt_xio_mread(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	return xio_mapped(op, size, 0, buf, n);
}

/* truncate SIZE, seek -d OFF, seek -h OFF: the log's own command */
int dt_xio_off(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	(void)size;
	snprintf(buf, n, "-c \"%s %" PRId64 "\"", dt_opdesc_of(op->kind)->cmd, op->off);
	return 1;
}

/* fsync, fdatasync: the log's own command */
int dt_xio_fsync(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	(void)size;
	snprintf(buf, n, "-c \"%s\"", dt_opdesc_of(op->kind)->cmd);
	return 1;
}

/* xfs_io: sync_range [-a] [-b] [-w] off len (the log's own syntax) */
int dt_xio_sync_range(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	char line[160];

	(void)size;
	dt_op_format(op, line, sizeof(line));
	snprintf(buf, n, "-c \"%s\"", strchr(line, ' ') + 1);
	return 1;
}

/* xfs_io's fiemap asks for FIEMAP_FLAG_SYNC: the write-back is the op; its
 * extent list goes to /dev/null with the rest of xfs_io's output */
int dt_xio_fiemap_sync(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	(void)size;
	snprintf(buf, n, "-c \"fiemap %" PRId64 " %" PRId64 "\"", op->off, op->len);
	return 1;
}

/* xfs_io: reflink [-q] src_file src_offset dst_offset length */
int dt_xio_reflink(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	(void)size;
	snprintf(buf, n, "-c \"reflink -q $F%d %" PRId64 " %" PRId64 " %" PRId64 "\"",
		 op->src, op->soff, op->off, op->len);
	return 1;
}

/* O_DIRECT: xfs_io opens the file with -d for the whole invocation
 * (DT_OPF_OWNRUN gives the op an xfs_io of its own) and writes in
 * -b sized calls: one call of the op's length. */
static int xio_dio(const struct dt_op *op, int write, char *buf, size_t n)
{
	char b[48] = "";

	if (op->len > 0)
		snprintf(b, sizeof(b), "-b %" PRId64 " ", op->len);
	if (write)
		snprintf(buf, n, "-d -c \"pwrite -q %s-S 0x%02x %" PRId64 " %" PRId64 "\"", b,
			 op->pat, op->off, op->len);
	else
		snprintf(buf, n, "-d -c \"pread -q %s%" PRId64 " %" PRId64 "\"", b, op->off,
			 op->len);
	return 1;
}

int dt_xio_dio_pwrite(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	(void)size;
	return xio_dio(op, 1, buf, n);
}

int dt_xio_dio_pread(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	(void)size;
	return xio_dio(op, 0, buf, n);
}

/* xfs_io: copy_range -s src_off -d dst_off -l len src_file (it calls
 * copy_file_range(2) again while the last call copied something, as the
 * op does) */
int dt_xio_copy_range(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	(void)size;
	snprintf(buf, n, "-c \"copy_range -s %" PRId64 " -d %" PRId64 " -l %" PRId64 " $F%d\"",
		 op->soff, op->off, op->len, op->src);
	return 1;
}

/* xfs_io: dedupe [-q] src_file src_offset dst_offset length; it refuses a
 * length of 0 itself (or has in some versions): no xfs_io form then */
int dt_xio_dedupe(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	(void)size;
	if (op->len <= 0) {
		snprintf(buf, n, "# dedupe of length %" PRId64 " has no xfs_io form", op->len);
		return DT_XIO_NONE;
	}
	snprintf(buf, n, "-c \"dedupe -q $F%d %" PRId64 " %" PRId64 " %" PRId64 "\"",
		 op->src, op->soff, op->off, op->len);
	return 1;
}

/* Only exact mode words: xfs_io 6.1's "falloc" options ASSIGN the mode
 * (-i -k gives KEEP_SIZE alone, -p gives PUNCH_HOLE|KEEP_SIZE; checked
 * with strace), so INSERT|KEEP_SIZE and friends have no xfs_io form. */
int dt_xio_falloc(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	static const struct { int mode; const char *cmd; } forms[] = {
		{ 0, "falloc" },
		{ RM_FALLOC_FL_KEEP_SIZE, "falloc -k" },
		{ RM_FALLOC_FL_ZERO_RANGE, "fzero" },
		{ RM_FALLOC_FL_ZERO_RANGE | RM_FALLOC_FL_KEEP_SIZE, "fzero -k" },
		{ RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE, "fpunch" },
		{ RM_FALLOC_FL_INSERT_RANGE, "finsert" },
		{ RM_FALLOC_FL_COLLAPSE_RANGE, "fcollapse" },
		{ RM_FALLOC_FL_UNSHARE_RANGE, "funshare" },
	};
	int mode = dt_kind_mode(op);

	(void)size;
	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++)
		if (forms[k].mode == mode) {
			snprintf(buf, n, "-c \"%s %" PRId64 " %" PRId64 "\"", forms[k].cmd,
				 op->off, op->len);
			return 1;
		}
	snprintf(buf, n, "# fallocate(mode 0x%x, %" PRId64 ", %" PRId64 ") has no xfs_io form",
		 (unsigned)mode, op->off, op->len);
	return DT_XIO_NONE;
}

/* reopen (each xfs_io run opens and closes the file), drop_caches and
 * remount (the script's own commands) */
/* chmod: xfs_io has no "chmod MODE"; chmod(1) as the caller ($AS_USER,
 * set up by repro.sh for --user runs), a line of its own */
int dt_xio_chmod(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	(void)size;
	snprintf(buf, n, "$AS_USER chmod 0%" PRIo64 " \"$F%d\"", (uint64_t)op->off & 07777,
		 op->file);
	return DT_XIO_NOTHING;
}

int dt_xio_nothing(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	(void)op;
	(void)size;
	if (n)
		buf[0] = 0;
	return DT_XIO_NOTHING;
}

int dt_op_xfs_io(const struct dt_op *op, int64_t size, char *buf, size_t n)
{
	const struct dt_opdesc *od = dt_opdesc_of(op->kind);

	/* xfs_io's getopt takes "-5" for an option and cvtnum() refuses
	 * negative numbers: such an op (an errno check) has no xfs_io form;
	 * a truncate's or a seek's has no length */
	if (op->off < 0 || (od->syntax == DT_SYN_REFLINK && op->soff < 0) ||
	    (op->len < 0 && od->syntax != DT_SYN_OFF)) {
		snprintf(buf, n, "# %s %" PRId64 " %" PRId64 ": negative numbers have no xfs_io form",
			 od->name, op->off, op->len);
		return DT_XIO_NONE;
	}
	return od->xfs_io(op, size, buf, n);
}

/* ---- the script's model (dt_ops[].model) ---- */

int64_t dt_model_pwrite(struct rm_file *const *m, int nfiles, const struct dt_op *op,
			unsigned char *buf)
{
	(void)nfiles;
	dt_fill_pattern(buf, (size_t)op->len, op->pat);
	return rm_pwrite(m[op->file], buf, (size_t)op->len, op->off);
}

int64_t dt_mmap_write(struct rm_file *m, const unsigned char *buf, size_t n, int64_t off,
		      int64_t *lo, int64_t *hi)
{
	int64_t bs = rm_blocksize(m), size = rm_size(m);

	*lo = off;
	*hi = off + (int64_t)n;
	if (!n || bs >= DT_PAGE_SIZE || rm_profile_of(m) == RM_PROFILE_BYTES || off < 0)
		return rm_pwrite(m, buf, n, off);
	int64_t r = rm_mwrite(m, buf, n, off);
	if (r > 0) {
		int64_t phi = rm_sat_add(off + r, DT_PAGE_SIZE - 1) & ~(int64_t)(DT_PAGE_SIZE - 1);
		*lo = off & ~(int64_t)(DT_PAGE_SIZE - 1);
		*hi = phi < size ? phi : size > off + r ? size : off + r;
	}
	return r;
}

int64_t dt_model_mwrite(struct rm_file *const *m, int nfiles, const struct dt_op *op,
			unsigned char *buf)
{
	int64_t k = dt_mapped_len(op->off, op->len, rm_size(m[op->file])), lo, hi;

	(void)nfiles;
	dt_fill_pattern(buf, (size_t)k, op->pat);
	return k ? dt_mmap_write(m[op->file], buf, (size_t)k, op->off, &lo, &hi) : 0;
}

int64_t dt_model_truncate(struct rm_file *const *m, int nfiles, const struct dt_op *op,
			  unsigned char *buf)
{
	(void)nfiles;
	(void)buf;
	return rm_truncate(m[op->file], op->off);
}

int64_t dt_model_falloc(struct rm_file *const *m, int nfiles, const struct dt_op *op,
			unsigned char *buf)
{
	(void)nfiles;
	(void)buf;
	return rm_fallocate(m[op->file], dt_kind_mode(op), op->off, op->len);
}

int64_t dt_model_reflink(struct rm_file *const *m, int nfiles, const struct dt_op *op,
			 unsigned char *buf)
{
	(void)buf;
	/* the write-back of the remap's preparation changes only the
	 * cached view (rm_clone_range_wb()) */
	if (op->src < nfiles && m[op->src])
		return rm_clone_range_wb(m[op->file], m[op->src], op->soff, op->off, op->len);
	return 0;
}

/* fsync, fdatasync, fiemap_sync: the file written back (only the cached
 * view changes) */
int64_t dt_model_writeback(struct rm_file *const *m, int nfiles, const struct dt_op *op,
			   unsigned char *buf)
{
	(void)nfiles;
	(void)buf;
	return rm_writeback(m[op->file], 0, 0);
}

int64_t dt_model_sync_range(struct rm_file *const *m, int nfiles, const struct dt_op *op,
			    unsigned char *buf)
{
	(void)nfiles;
	(void)buf;
	return rm_sync_file_range(m[op->file], op->off, op->len, (unsigned)op->mode);
}

/* The reproducer's model takes the guests' disks' logical block size
 * (512) and remapping where the profile has it: a script for a FUSE target
 * may disagree on a misaligned direct write's size, which only the map
 * and size checks after it read. */
int64_t dt_model_dio_pwrite(struct rm_file *const *m, int nfiles, const struct dt_op *op,
			    unsigned char *buf)
{
	(void)nfiles;
	dt_fill_pattern(buf, (size_t)op->len, op->pat);
	return rm_dio_pwrite(m[op->file], buf, (size_t)op->len, op->off, 512);
}

int64_t dt_copy_loop(struct rm_file *dst, struct rm_file *src, int64_t soff,
		     int64_t off, int64_t len, unsigned flags)
{
	int64_t total = 0;
	uint64_t left = (uint64_t)len;

	do {
		ssize_t r = rm_copy_file_range(dst, src, soff, off, left, flags);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		total += r;
		soff += r;
		off += r;
		left -= (uint64_t)r;
	} while (left > 0);
	return total;
}

int64_t dt_dedupe_result(int ret, int status, int64_t bytes)
{
	if (ret < 0)
		return ret;
	if (status < 0)
		return status;
	return status == RM_DEDUPE_DIFFERS ? -EBADE : bytes;
}

int64_t dt_model_copy_range(struct rm_file *const *m, int nfiles, const struct dt_op *op,
			    unsigned char *buf)
{
	(void)buf;
	if (op->src < nfiles && m[op->src])
		return dt_copy_loop(m[op->file], m[op->src], op->soff, op->off, op->len, 0);
	return 0;
}

int64_t dt_model_dedupe(struct rm_file *const *m, int nfiles, const struct dt_op *op,
			unsigned char *buf)
{
	int64_t bytes;
	int st;

	(void)buf;
	if (op->src >= nfiles || !m[op->src])
		return 0;
	int r = rm_dedupe_range(m[op->file], m[op->src], op->soff, op->off, op->len, &bytes, &st);
	return dt_dedupe_result(r, st, bytes);
}

const char *dt_op_call(const struct dt_op *op)
{
	const char *c = dt_opdesc_of(op->kind)->call;

	return c ? c : dt_kind_mode(op) >= 0 ? "fallocate" : NULL;
}

/* ---- the script ---- */

struct script {
	FILE *f;
	struct dt_target *t;
	int nfiles;
	const struct dt_div *d;
	int is_crash;		/* a crash reproducer: the kernel log decides */
	int64_t bs;
	struct rm_file *m[DT_MAXFILES];	/* the files after the ops */
	unsigned char *buf;
};

static void header(const struct script *sc)
{
	FILE *f = sc->f;
	const char *fs = sc->t->fsname;

	fprintf(f, "#!/bin/sh\n# difftest reproducer (generated; runs the real xfs_io).\n");
	if (sc->is_crash)
		fprintf(f, "# kernel crash on %s (%s): %s\n", sc->t->name, fs, sc->d->msg);
	else
		fprintf(f, "# divergence (%s) on %s (%s): %s\n", dt_divkind_name(sc->d->kind),
			sc->t->name, fs, sc->d->msg);
	fprintf(f, "# usage: sh repro.sh [DIR]   (DIR on a %s mount; as root for drop_caches/remount)\n",
		fs);
	fprintf(f, "# exit status: 1 and \"BUG REPRODUCED\" when the kernel still diverges, 0 when not\n");
	if (sc->t->mopts.strict)
		fprintf(f, "# expected values: the model's intended semantics (difftest --strict),\n"
			"# without the kernel errata of refmodel/ERRATA.md\n");
	/* what a cached page holds can depend on the device: a ram disk
	 * completes the reads (readahead too) at once, virtio later */
	if (sc->t->mnt_dev[0] == '/')
		fprintf(f, "# found on %s: a bug in cached pages may need the same kind of device\n",
			sc->t->mnt_dev);
}

/* An op xfs_io cannot express (a mode word, a negative number) would make
 * the script's verdict wrong: such a reproducer replays ops.log with
 * difftest instead (same exit convention).  1 when it does. */
static int replay_instead(const struct script *sc, const struct dt_op *ops, size_t n)
{
	FILE *f = sc->f;
	char cmd[512];

	for (size_t j = 0; j < n; j++) {
		if (dt_op_xfs_io(&ops[j], INT64_MAX, cmd, sizeof(cmd)) != DT_XIO_NONE)
			continue;
		fprintf(f, "# op %zu (%s) has no xfs_io form: xfs_io 6.1 cannot issue it.\n"
			"# This reproducer therefore replays ops.log (beside it) with difftest.\n",
			j + 1, cmd + 2);
		if (sc->is_crash)
			fprintf(f, "klines=$(dmesg | wc -l)\n"
				"difftest --crash-replay \"$(dirname \"$0\")/ops.log\"\n"
				"if dmesg | tail -n +$((klines + 1)) | "
				"grep -E '" DT_CRASH_LINES "'; then\n"
				"\techo 'BUG REPRODUCED'; exit 1\nfi\necho 'not reproduced'; exit 0\n");
		else
			fprintf(f, "difftest --replay \"$(dirname \"$0\")/ops.log\"\n"
				"case $? in\n0) echo 'not reproduced'; exit 0 ;;\n"
				"1) echo 'BUG REPRODUCED'; exit 1 ;;\n*) exit 2 ;;\nesac\n");
		return 1;
	}
	return 0;
}

/* The file system the reproducer needs (the target's configuration,
 * config.h): said, checked against DIR's block size, made on $REPRO_DEV
 * when that is given, and with free= filled as difftest filled it. */
static void config_setup(const struct script *sc)
{
	FILE *f = sc->f;
	const struct dt_config *c = &sc->t->cfg;
	char name[128], mk[128], mo[64], fo[96];

	dt_config_name(c, name, sizeof(name));
	dt_config_mkfs(c, mk, sizeof(mk));
	dt_config_mount(c, mo, sizeof(mo));
	dt_config_fusefs(c, fo, sizeof(fo));
	if (c->fs == DT_CFS_FUSEFS) {
		fprintf(f, "# needs configuration %s: DIR on rangeshift-fusefs%s%s\n", name,
			fo[0] ? " -o " : "", fo);
		return;
	}
	const char *fs = dt_config_fsname(c->fs);
	fprintf(f, "# needs configuration %s: mkfs.%s %s DEV; mount -t %s%s%s DEV DIR\n"
		"# REPRO_DEV=DEV sh repro.sh DIR makes that file system on DEV (erasing it)\n"
		"# and mounts it on DIR first\n", name, fs, mk, fs, mo[0] ? " -o " : "", mo);
	fprintf(f, "if [ -n \"${REPRO_DEV:-}\" ]; then\n"
		"\tumount \"$DIR\" 2>/dev/null; mkdir -p \"$DIR\"\n"
		"\tmkfs.%s %s -q %s \"$REPRO_DEV\" && mount -t %s%s%s \"$REPRO_DEV\" \"$DIR\" ||\n"
		"\t\t{ echo \"repro.sh: making %s on $REPRO_DEV failed\" >&2; exit 2; }\nfi\n",
		fs, c->fs == DT_CFS_XFS ? "-f" : "-F", mk, fs, mo[0] ? " -o " : "", mo, name);
	fprintf(f, "if [ \"$(stat -f -c %%S \"$DIR\")\" != %u ]; then\n"
		"\techo \"repro.sh: $DIR has $(stat -f -c %%S \"$DIR\")-byte blocks; this needs %s "
		"(give REPRO_DEV)\" >&2; exit 2\nfi\n", c->bs, name);
	if (c->free <= 0)
		return;
	/* free=SIZE: the filler as difftest makes it (target.c fill_fs()):
	 * fallocate until ENOSPC, halving the chunk (ext4 keeps the prefix it
	 * allocated, with the size; XFS allocates nothing), then SIZE cut off.
	 * fill_up is also the log's fill op (dt_t_fill()), always as root. */
	fprintf(f, "# free=%lld: a filler takes all the space this caller can allocate but "
		"%lld bytes (removed at exit)\n"
		"FILLER=\"$DIR/.difftest-filler\"\n"
		"FILL_IO=$XFS_IO\n"
		"trap 'rm -f \"$FILLER\"' EXIT\n"
		"rm -f \"$FILLER\"; : > \"$FILLER\"\n"
		"fill_up() {\n"
		"\tbs=$(stat -f -c %%S \"$DIR\"); chunk=$(( $(stat -f -c %%f \"$DIR\") * bs ))\n"
		"\tat=$(stat -c %%s \"$FILLER\")\n"
		"\twhile [ \"$chunk\" -ge \"$bs\" ]; do\n"
		"\t\t$FILL_IO -c \"falloc $at $chunk\" \"$FILLER\" 2>/dev/null\n"
		"\t\tsz=$(stat -c %%s \"$FILLER\")\n"
		"\t\t[ \"$sz\" -lt $((at + chunk)) ] && chunk=$((chunk / 2 / bs * bs))\n"
		"\t\tat=$sz\n"
		"\tdone\n"
		"}\n"
		"fill_up\n"
		"$XFS_IO -c \"truncate $((at > %lld ? at - %lld : 0))\" -c fsync \"$FILLER\"\n",
		(long long)c->free, (long long)c->free, (long long)c->free, (long long)c->free);
}

/* Variables, empty files and the remount function. */
static void setup(const struct script *sc)
{
	FILE *f = sc->f;
	const char *fs = sc->t->fsname;

	fprintf(f, "set -u\nDIR=${1:-%s}\nXFS_IO=${XFS_IO:-xfs_io}\n",
		!strcmp(fs, "xfs") ? "/mnt/xfs" : !strcmp(fs, "ext4") ? "/mnt/ext4" : sc->t->dir);
	if (sc->t->has_cfg)
		config_setup(sc);
	if (sc->is_crash)	/* only kernel messages logged from here on count */
		fprintf(f, "klines=$(dmesg | wc -l)\n");
	if (sc->t->user) {
		/* the ops' caller: setuid from root drops every capability */
		fprintf(f, "# as difftest --user %u:%u: xfs_io and chmod run as that caller\n"
			"SETPRIV=${SETPRIV:-/usr/bin/setpriv}	# util-linux's, not busybox's applet\n"
			"AS_USER=\"$SETPRIV --reuid=%u --regid=%u --clear-groups\"\n"
			"XFS_IO=\"$AS_USER $XFS_IO\"\n",
			(unsigned)sc->t->user_uid, (unsigned)sc->t->user_gid,
			(unsigned)sc->t->user_uid, (unsigned)sc->t->user_gid);
	}
	for (int i = 0; i < sc->nfiles; i++) {
		fprintf(f, "F%d=\"$DIR/difftest-repro-f%d\"\n", i, i);
		fprintf(f, "rm -f \"$F%d\"; : > \"$F%d\"\n", i, i);
		if (sc->t->user) {
			struct rm_attr a = dt_user_attr(sc->t, i);

			fprintf(f, "chown %u:%u \"$F%d\"; chmod 0%o \"$F%d\"\n", (unsigned)a.uid,
				(unsigned)a.gid, i, (unsigned)a.mode, i);
		}
	}
	fprintf(f, "remount() {\n\tset -- $(awk -v m=\"$DIR\" '$2 == m { d=$1; t=$3; o=$4 } END { print d, t, o }' /proc/mounts)\n"
		   "\tif [ $# -eq 3 ]; then sync; umount \"$DIR\" && mount -t \"$2\" -o \"$3\" \"$1\" \"$DIR\"; "
		   "else sync; echo 3 > /proc/sys/vm/drop_caches; fi\n}\n");
}

/* One op: its script line(s).  *cur is the file of the xfs_io command
 * line being built (-1: none); consecutive ops on one file share it. */
static void script_op(struct script *sc, const struct dt_op *op, int last, int *cur)
{
	FILE *f = sc->f;
	const struct dt_opdesc *od = dt_opdesc_of(op->kind);
	struct rm_file *mf = op->file < DT_MAXFILES ? sc->m[op->file] : NULL;
	char cmd[512];
	int has = dt_op_xfs_io(op, mf ? rm_size(mf) : 0, cmd, sizeof(cmd)) > 0;

	int own = (od->flags & DT_OPF_OWNRUN) != 0;

	if ((od->flags & DT_OPF_GLOBAL) || op->kind == DT_REOPEN || !has || last || own ||
	    (int)op->file != *cur) {
		if (*cur >= 0)
			fprintf(f, " \"$F%d\"\n", *cur);
		*cur = -1;
	}
	/* apply to the model (for sizes and the expected results) */
	if (mf && sc->buf && od->model)
		od->model(sc->m, sc->nfiles, op, sc->buf);
	if (op->kind == DT_DROP || op->kind == DT_REMOUNT || op->kind == DT_FILL ||
	    op->kind == DT_UNFILL)
		for (int j = 0; j < sc->nfiles; j++)	/* sync / umount write back */
			if (sc->m[j])
				rm_writeback(sc->m[j], 0, 0);
	if (op->kind == DT_DROP) {
		fprintf(f, "sync; echo 3 > /proc/sys/vm/drop_caches\n");
		return;
	}
	if (op->kind == DT_REMOUNT) {
		fprintf(f, "remount\n");
		return;
	}
	if (op->kind == DT_FILL) {	/* syncfs, then the filler takes the rest */
		fprintf(f, "sync; fill_up\n");
		return;
	}
	if (op->kind == DT_UNFILL) {	/* the filler gives its blocks back */
		fprintf(f, "$FILL_IO -c \"truncate 0\" \"$FILLER\"; sync\n");
		return;
	}
	if (op->kind == DT_REOPEN)
		return;	/* each xfs_io run opens and closes the file */
	if (!has && last && op->kind == DT_CHMOD && !sc->is_crash) {
		/* chmod(1)'s "...: Operation not permitted" for the verdict */
		fprintf(f, "echo '--- the op that diverges:'\nout=$(%s 2>&1); echo \"$out\"\n", cmd);
		return;
	}
	if (!has) {
		fprintf(f, "%s\n", cmd);
		return;
	}
	if (last && !sc->is_crash) {
		fprintf(f, "echo '--- the op that diverges:'\nout=$($XFS_IO %s \"$F%d\" 2>&1); echo \"$out\"\n",
			cmd, op->file);
		return;
	}
	if (own) {	/* xfs_io -d: an invocation of its own */
		fprintf(f, "$XFS_IO %s \"$F%d\"\n", cmd, op->file);
		return;
	}
	if (*cur < 0) {
		fprintf(f, "$XFS_IO");
		*cur = op->file;
	}
	fprintf(f, " %s", cmd);
}

/* The data checks' reads after op j (struct dt_obs: the replay that found
 * the divergence recorded them), from obs[*k] on: the same preads, one
 * syscall each (-b), so that the page cache holds what it held in
 * difftest.  Not after the diverging op: the verdict reads for itself. */
static void script_reads(struct script *sc, uint64_t j, size_t *k, int *cur)
{
	const struct dt_div *d = sc->d;

	for (; d && *k < d->nobs && d->obs[*k].opno <= j; ++*k) {
		const struct dt_obs *r = &d->obs[*k];

		if (r->opno < j || r->file < 0 || r->file >= sc->nfiles)
			continue;
		if (r->file != *cur) {
			if (*cur >= 0)
				fprintf(sc->f, " \"$F%d\"\n", *cur);
			fprintf(sc->f, "$XFS_IO");
			*cur = r->file;
		}
		fprintf(sc->f, " -c \"pread -q -b %" PRId64 " %" PRId64 " %" PRId64 "\"", r->len,
			r->off, r->len);
	}
}

static void script_ops(struct script *sc, const struct dt_op *ops, size_t n)
{
	int cur = -1;
	size_t k = 0;

	if (sc->d && sc->d->nobs)
		fprintf(sc->f, "# after each op, the reads difftest's checks made (they fill the "
			"page cache)\n");
	for (size_t j = 0; j < n; j++) {
		script_op(sc, &ops[j], j + 1 == n, &cur);
		if (j + 1 < n)
			script_reads(sc, j, &k, &cur);
	}
	if (cur >= 0)
		fprintf(sc->f, " \"$F%d\"\n", cur);
}

/* ---- the verdict: the diverging op's result checked again ---- */

static void verdict_ret(const struct script *sc, int fi)
{
	/* what the model said; xfs_io prints "CMD: strerror" on failure */
	const char *p = strstr(sc->d->msg, "expected ");
	long long ev = p ? strtoll(p + 9, NULL, 10) : 0;

	(void)fi;
	if (ev == -EBADE)	/* FILE_DEDUPE_RANGE_DIFFERS */
		fprintf(sc->f, "# expected: the ranges differ\necho \"$out\" | grep -q \"did not match\" || bug=1\n");
	else if (ev < 0)
		fprintf(sc->f, "# expected: %s\necho \"$out\" | grep -q \"%s\" || bug=1\n",
			dt_errname((int)ev), strerror((int)-ev));
	else
		fprintf(sc->f, "# expected: success (%lld)\necho \"$out\" | grep -q \": \" && bug=1\n", ev);
}

static void verdict_size(const struct script *sc, int fi)
{
	fprintf(sc->f, "[ \"$(stat -c %%s \"$F\")\" = %" PRId64 " ] || bug=1\n", rm_size(sc->m[fi]));
}

static void verdict_data(const struct script *sc, int fi)
{
	const struct dt_div *d = sc->d;

	(void)fi;
	if (d->byte_off >= 0 && d->exp_byte >= 0)
		fprintf(sc->f, "b=$(od -An -tx1 -j %" PRId64 " -N1 \"$F\" | tr -d ' \\n')\n"
			"echo \"byte at %" PRId64 ": $b (expected %02x)\"\n[ \"$b\" = %02x ] || bug=1\n",
			d->byte_off, d->byte_off, d->exp_byte, d->exp_byte);
}

static void verdict_seek(const struct script *sc, int fi)
{
	const char *p = strstr(sc->d->msg, "returned ");
	long long got = p ? strtoll(p + 9, NULL, 10) : 0;

	(void)fi;
	fprintf(sc->f, "# expected (any answer rm_lseek_ok() allows); the kernel gave the one in the message\n");
	fprintf(sc->f, "echo \"$out\" | grep -qw -- \"%lld\" && bug=1\n", got);
}

/* st_mode after the op (--user): the model's mode from the message */
static void verdict_mode(const struct script *sc, int fi)
{
	const char *p = strstr(sc->d->msg, "expected 0");
	unsigned want = 0;

	(void)fi;
	if (!p || sscanf(p, "expected %o", &want) != 1)
		return;
	fprintf(sc->f, "m=$(stat -c %%a \"$F\")\necho \"mode: $m (expected %o)\"\n"
		"[ \"$m\" = %o ] || bug=1\n", want, want);
}

/* on-disk corruption: unmount and fsck as difftest's remount did */
static void verdict_fsck(const struct script *sc, int fi)
{
	(void)fi;
	fprintf(sc->f, "# the last remount's fsck found corruption: unmount, fsck -n, mount again\n"
		"set -- $(awk -v m=\"$DIR\" '$2 == m { d=$1; t=$3; o=$4 } END { print d, t, o }' /proc/mounts)\n"
		"sync; umount \"$DIR\" || { echo \"cannot unmount $DIR\"; exit 2; }\n"
		"if [ \"$2\" = xfs ]; then xfs_repair -n \"$1\" || bug=1; else e2fsck -fn \"$1\" || bug=1; fi\n"
		"mount -t \"$2\" -o \"$3\" \"$1\" \"$DIR\"\n");
}

struct allow_ctx {
	FILE *f;
	int64_t bs;
	int64_t lo, hi;
};

static int allow_cb(void *ctx, const struct rm_run *r)
{
	struct allow_ctx *a = ctx;

	for (int64_t p = r->off; p < r->off + r->len && p >= r->off; p += a->bs) {
		if (p < a->lo || p >= a->hi)
			continue;
		fputc(' ', a->f);
		if (r->may & RM_DATA)
			fputc('D', a->f);
		if (r->may & RM_UNWRITTEN)
			fputc('U', a->f);
		if (r->may & RM_HOLE)
			fputc('.', a->f);
		if (r->may & RM_DELALLOC)
			fputc('L', a->f);
	}
	return 0;
}

void dt_print_allowed(FILE *f, struct rm_file *m, int64_t bs, int64_t lo, int64_t hi)
{
	struct allow_ctx a = { .f = f, .bs = bs, .lo = lo, .hi = hi };

	rm_walk(m, lo, hi, allow_cb, &a);
}

/* The same for the cached view (L: a delayed allocation). */
static void print_allowed_cached(FILE *f, struct rm_file *m, int64_t bs, int64_t lo, int64_t hi)
{
	struct allow_ctx a = { .f = f, .bs = bs, .lo = lo, .hi = hi };

	rm_walk_cached(m, lo, hi, allow_cb, &a);
}

/* Observer-free: the map as FIEMAP without FIEMAP_FLAG_SYNC shows it,
 * `filefrag -v -b BS` (no -s: no sync; xfs_io's fiemap always syncs),
 * one line per extent "N: LO.. HI: PHYS.. PHYS: LEN: [EXP:] FLAGS". */
static void verdict_map_cached(const struct script *sc, int64_t lo, int64_t hi, int fi)
{
	FILE *f = sc->f;
	int64_t bs = sc->bs;

	fprintf(f, "# allowed states per block %" PRId64 "..%" PRId64 " before write-back "
		"(D data, U unwritten, . hole, L delayed allocation)\n", lo / bs, (hi - 1) / bs);
	fprintf(f, "allowed=\"");
	if (sc->m[fi])
		print_allowed_cached(f, sc->m[fi], bs, lo, hi);
	fprintf(f, "\"\n");
	fprintf(f, "filefrag -v -b%" PRId64 " \"$F\"\n", bs);
	fprintf(f, "filefrag -v -b%" PRId64 " \"$F\" | awk -v lo=%" PRId64
		" -v allowed=\"$allowed\" '\n"
		"/^ *[0-9]+: +[0-9]+\\.\\./ { a = $2; b = $3; gsub(/[^0-9]/, \"\", a); gsub(/[^0-9]/, \"\", b);\n"
		"  st = index($0, \"unwritten\") ? \"U\" : index($0, \"delalloc\") ? \"L\" : \"D\";\n"
		"  for (k = a + 0; k <= b + 0; k++) state[k] = st }\n"
		"END { n = split(allowed, al, \" \"); bad = 0;\n"
		"  for (k = 1; k <= n; k++) { b = lo + k - 1; s = (b in state) ? state[b] : \".\";\n"
		"    if (index(al[k], s) == 0) { printf \"block %%d: kernel %%s, allowed {%%s}\\n\", b, s, al[k]; bad = 1 } }\n"
		"  exit bad }' || bug=1\n", bs, lo / bs);
}

static void verdict_map(const struct script *sc, int fi)
{
	FILE *f = sc->f;
	int64_t bs = sc->bs, lo = sc->d->map_lo & ~(bs - 1), hi = sc->d->map_hi;

	if (hi - lo > 64 * bs)
		hi = lo + 64 * bs;
	if (sc->t->cached) {
		verdict_map_cached(sc, lo, hi, fi);
		return;
	}
	fprintf(f, "# allowed states per block %" PRId64 "..%" PRId64 " (D data, U unwritten, . hole)\n",
		lo / bs, (hi - 1) / bs);
	fprintf(f, "allowed=\"");
	if (sc->m[fi])
		dt_print_allowed(f, sc->m[fi], bs, lo, hi);
	fprintf(f, "\"\n");
	fprintf(f, "$XFS_IO -r -c \"fiemap -v\" \"$F\"\n");
	/* "[0..7]:" -> "0..7" by keeping digits and dots: busybox awk (the
	 * guest's) does not take "]" inside a bracket expression. */
	fprintf(f, "$XFS_IO -r -c \"fiemap -v\" \"$F\" | awk -v lo=%" PRId64 " -v spb=%" PRId64
		" -v allowed=\"$allowed\" '\n"
		"function hex(s,  i, v, c) { v = 0; s = tolower(s); sub(/^0x/, \"\", s);\n"
		"  for (i = 1; i <= length(s); i++) { c = index(\"0123456789abcdef\", substr(s, i, 1)) - 1; v = v * 16 + c }\n"
		"  return v }\n"
		"/^ *[0-9]+: \\[/ { r = $2; gsub(/[^0-9.]/, \"\", r); split(r, ab, \"\\\\.\\\\.\");\n"
		"  if ($3 == \"hole\") next; f = hex($NF); st = (f %% 4096 >= 2048) ? \"U\" : \"D\";\n"
		"  for (b = int(ab[1] / spb); b <= int(ab[2] / spb); b++) state[b] = st }\n"
		"END { n = split(allowed, al, \" \"); bad = 0;\n"
		"  for (k = 1; k <= n; k++) { b = lo + k - 1; s = (b in state) ? state[b] : \".\";\n"
		"    if (index(al[k], s) == 0) { printf \"block %%d: kernel %%s, allowed {%%s}\\n\", b, s, al[k]; bad = 1 } }\n"
		"  exit bad }' || bug=1\n", lo / bs, bs / 512);
}

/* How each kind of divergence is checked again (none: the kernel log's
 * verdict alone, for crash reproducers). */
static void (*const verdicts[DV_NKINDS])(const struct script *sc, int fi) = {
	[DV_RET] = verdict_ret, [DV_SIZE] = verdict_size, [DV_MAP] = verdict_map,
	[DV_DATA] = verdict_data, [DV_SEEK] = verdict_seek, [DV_FSCK] = verdict_fsck,
	[DV_MODE] = verdict_mode,
};

static void verdict(const struct script *sc, const struct dt_op *ops, size_t n)
{
	FILE *f = sc->f;
	char cmd[512];
	int fi = sc->d->file < sc->nfiles ? sc->d->file : 0;

	/* difftest maps every file after its ops (FIEMAP): so does a crash
	 * reproducer, or a crash inside FIEMAP (mutant 03) would need
	 * difftest itself to show */
	if (sc->is_crash)
		for (int i = 0; i < sc->nfiles; i++)
			fprintf(f, "$XFS_IO -r -c fiemap \"$F%d\" >/dev/null 2>&1\n", i);
	if (n == 0 || (dt_op_xfs_io(&ops[n - 1], 0, cmd, sizeof(cmd)) <= 0 &&
		       ops[n - 1].kind != DT_CHMOD))
		fprintf(f, "out=\n");
	fprintf(f, "F=\"$F%d\"\nbug=0\n", fi);
	if (sc->is_crash)	/* new kernel lines of the kinds vm/run treats as a crash */
		fprintf(f, "dmesg | tail -n +$((klines + 1)) |\n"
			"\tgrep -E '" DT_CRASH_LINES "' && bug=1\n");
	if (sc->d->kind > DV_NONE && sc->d->kind < DV_NKINDS && verdicts[sc->d->kind])
		verdicts[sc->d->kind](sc, fi);
	fprintf(f, "rm -f");
	for (int i = 0; i < sc->nfiles; i++)
		fprintf(f, " \"$F%d\"", i);
	fprintf(f, "\nif [ $bug = 1 ]; then echo 'BUG REPRODUCED'; exit 1; fi\necho 'not reproduced'; exit 0\n");
}

void dt_write_script(FILE *f, struct dt_target *t, int nfiles, const struct dt_op *ops,
		     size_t n, const struct dt_div *d)
{
	struct dt_div crash = { .kind = DV_NONE, .byte_off = -1 };
	struct script sc = { .f = f, .t = t, .nfiles = nfiles, .d = d, .is_crash = !d,
			     .bs = t->mopts.blocksize };

	if (sc.is_crash) {
		snprintf(crash.msg, sizeof(crash.msg),
			 "the kernel oopsed, hit BUG() or WARN() during these ops");
		sc.d = &crash;
	}
	header(&sc);
	if (replay_instead(&sc, ops, n))
		return;
	sc.buf = malloc(DT_MAX_IO);
	setup(&sc);
	for (int i = 0; i < nfiles; i++)
		rm_file_new(&t->mopts, &sc.m[i]);
	script_ops(&sc, ops, n);
	verdict(&sc, ops, n);
	for (int i = 0; i < nfiles; i++)
		rm_file_free(sc.m[i]);
	free(sc.buf);
}
