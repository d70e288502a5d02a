/* SPDX-License-Identifier: MIT */
/*
 * fstest.c - an op log as an xfstests test (difftest --emit-fstest): the
 * test script tests/DIR/NNN and its golden output NNN.out, in xfstests'
 * conventions (common/preamble, _begin_fstest, the scratch device, the
 * real xfs_io through $XFS_IO_PROG and _filter_xfs_io).
 *
 * The golden output is the model's, with the intended semantics (strict,
 * no kernel errata: refmodel/ERRATA.md), so the test fails on a kernel
 * that shows an erratum and passes once it is fixed.  What the test
 * prints, and so checks:
 *   - every op's command, and xfs_io's perror() line when the model says
 *     the call fails ("fallocate: Invalid argument");
 *   - every file's size, and its MD5 when the file is at most
 *     DT_FSTEST_MD5_MAX bytes (reading more takes too long);
 *   - the bytes each pread of the log returns (at most
 *     DT_FSTEST_DUMP_MAX), as "pread -q -v" dumps them;
 *   - for a map divergence, each block of the divergence's range (at most
 *     64) checked against the states the model allows there (FIEMAP, with
 *     the kernel's latitude: the golden line says "as the model allows");
 *   - for an fsck divergence, _check_scratch_fs (fsck is the oracle).
 *
 * By default every op runs in an xfs_io of its own.  A file's close can
 * change it, though (XFS frees the speculative preallocation past EOF
 * on the close of a file with delayed writes, xfs_release()), and
 * difftest keeps its files open for the whole run.  With
 * --fstest-session (in->session) all ops run in one xfs_io reading its
 * commands from a file: each scratch file is opened once buffered and
 * once O_DIRECT, "file N" picks the descriptor, and nothing is closed
 * before the last op.  xfs_io's stdout (the bytes reads dump) and stderr
 * (the failed calls) are then printed one after the other, since how
 * they interleave depends on stdio buffering; ops that close files or
 * need a shell (remount, drop caches, reopen) and mmap ops are refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "fstest.h"
#include "optab.h"

#define DT_FSTEST_MD5_MAX	(64LL << 20)
#define DT_FSTEST_MAP_BLOCKS	64
#define DT_FSTEST_DUMP_MAX	4096

/* What the kernel answers for fallocate(2) on a rangeshift-fusefs file
 * before the server sees it (dt_t_fuse_front()): a target that looks
 * like a mounted fusefs, used only for that question. */
static int fuse_front(int mode, int64_t off, int64_t len)
{
	static const struct dt_target fuse = { .type = DT_T_FD, .fsname = "rangeshift-fusefs" };

	return dt_t_fuse_front(&fuse, mode, off, len);
}

/* Apply op to the model files: its return value (bytes or 0, or -errno).
 * The op table's model hooks, with the two calls a reproducer's size
 * replay skips (pread, fsync) and the FUSE front for fusefs. */
static int64_t model_op(const struct dt_fstest_in *in, struct rm_file *const *m,
			const struct dt_op *op, unsigned char *buf)
{
	const struct dt_opdesc *od = dt_opdesc_of(op->kind);
	int err;

	if (op->kind == DT_PREAD)
		return rm_pread(m[op->file], buf, (size_t)op->len, op->off);
	if (op->kind == DT_FSYNC)
		return rm_fsync(m[op->file]);
	if (op->kind == DT_DIO_READ)	/* the scratch device's 512-byte sectors */
		return rm_dio_pread(m[op->file], buf, (size_t)op->len, op->off, 512);
	if (dt_kind_mode(op) >= 0 && !strcmp(in->target, "fusefs") &&
	    (err = fuse_front(dt_kind_mode(op), op->off, op->len)))
		return err;
	return od->model ? od->model(m, in->nfiles, op, buf) : 0;	/* mread, seeks, ... */
}

/* The op's xfs_io form for the test: dt_op_xfs_io() names a two-file
 * op's source as $F<n>, repro.sh's variable; the test's files are $f<n>. */
static int xio_form(const struct dt_op *op, int64_t size, char *cmd, size_t n)
{
	int r = dt_op_xfs_io(op, size, cmd, n);
	for (char *p = cmd; r > 0 && (p = strstr(p, "$F")) != NULL; p += 2)
		p[1] = 'f';
	return r;
}

/* xfstests groups (doc/group-names.txt) that fit the ops. */
static void groups(FILE *t, const struct dt_op *ops, size_t n)
{
	static const struct { int kind; const char *name; } g[] = {
		{ DT_INSERT, "insert" }, { DT_COLLAPSE, "collapse" }, { DT_PUNCH, "punch" },
		{ DT_ZERO, "zero" }, { DT_ZERO_KEEP, "zero" }, { DT_FALLOC, "prealloc" },
		{ DT_FALLOC_KEEP, "prealloc" }, { DT_MWRITE, "mmap" }, { DT_MREAD, "mmap" },
		{ DT_DIO_WRITE, "rw" },
	};
	const char *done[16];
	int nd = 0;

	fprintf(t, "_begin_fstest auto quick");
	for (size_t k = 0; k < sizeof(g) / sizeof(g[0]); k++) {
		int used = 0, dup = 0;
		for (size_t j = 0; j < n; j++)
			used |= ops[j].kind == g[k].kind;
		for (int i = 0; i < nd; i++)
			dup |= !strcmp(done[i], g[k].name);
		if (used && !dup) {
			fprintf(t, " %s", g[k].name);
			done[nd++] = g[k].name;
		}
	}
	fputc('\n', t);
}

/* Whether an op of kind a or b is among ops[0..n). */
static bool uses(const struct dt_op *ops, size_t n, enum dt_kind a, enum dt_kind b)
{
	for (size_t j = 0; j < n; j++)
		if (ops[j].kind == a || ops[j].kind == b)
			return true;
	return false;
}

/* _require_xfs_io_command for every xfs_io command the ops use. */
static void requires(FILE *t, const struct dt_op *ops, size_t n, int map)
{
	static const char *const cmds[] = { "falloc", "fpunch", "fzero", "finsert",
					    "fcollapse", "funshare", "mmap", "fiemap",
					    "sync_range" };
	char cmd[512];

	bool reflink = uses(ops, n, DT_REFLINK, DT_REFLINK);
	bool dedupe = uses(ops, n, DT_DEDUPE, DT_DEDUPE);
	bool copy = uses(ops, n, DT_COPY_RANGE, DT_COPY_RANGE);

	fprintf(t, "_require_scratch\n");
	if (uses(ops, n, DT_DIO_WRITE, DT_DIO_READ))
		fprintf(t, "_require_odirect\n");
	if (reflink || dedupe)
		fprintf(t, "_require_scratch_reflink\n");
	if (reflink)
		fprintf(t, "_require_xfs_io_command \"reflink\"\n");
	if (copy)
		fprintf(t, "_require_xfs_io_command \"copy_range\"\n");
	if (dedupe)
		fprintf(t, "_require_xfs_io_command \"dedupe\"\n");
	for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		int used = k == 7 && map;
		for (size_t j = 0; j < n && !used; j++) {
			if (dt_op_xfs_io(&ops[j], INT64_MAX, cmd, sizeof(cmd)) <= 0)
				continue;
			char want[32];
			snprintf(want, sizeof(want), "\"%s ", cmds[k]);
			used = strstr(cmd, want) != NULL;
			snprintf(want, sizeof(want), "\"%s\"", cmds[k]);
			used |= strstr(cmd, want) != NULL;
		}
		if (used) {
			if (!strcmp(cmds[k], "falloc") || !strcmp(cmds[k], "fzero")) {
				/* "falloc -k" / "fzero -k": the option must work too */
				int keep = 0;
				for (size_t j = 0; j < n; j++)
					keep |= (ops[j].kind == DT_FALLOC_KEEP && k == 0) ||
						(ops[j].kind == DT_ZERO_KEEP && k == 2);
				fprintf(t, "_require_xfs_io_command \"%s\"%s\n", cmds[k],
					keep ? " \"-k\"" : "");
			} else {
				fprintf(t, "_require_xfs_io_command \"%s\"\n", cmds[k]);
			}
		}
	}
}

/* The shell function of a map check: FIEMAP's state of each block of
 * [first, last] against the allowed letters (D data, U unwritten, . hole)
 * given per block; prints one line per block that differs.  Shell
 * arithmetic, not awk: offsets near 2^63 need 64-bit integers. */
static void map_function(FILE *t)
{
	fprintf(t,
"# FIEMAP's state of every block FIRST..LAST of FILE (D data, U unwritten,\n"
"# . hole) against the allowed states, one word per block (\"DU\", \".\", ...):\n"
"# prints each block whose state is not allowed\n"
"_check_block_states()\n"
"{\n"
"\tlocal file=$1 first=$2 last=$3 spb=$4 ext b s\n"
"\tshift 4\n"
"\text=$($XFS_IO_PROG -r -c \"fiemap -v\" $file | while read -r idx range phys total flags; do\n"
"\t\tcase \"$range\" in \"[\"*) ;; *) continue ;; esac\n"
"\t\t[ \"$phys\" = hole ] && continue\n"
"\t\trange=${range#\"[\"}\n"
"\t\trange=${range%%\"]:\"}\n"
"\t\techo \"$((${range%%..*} / spb)) $((${range#*..} / spb)) $((flags & 0x800))\"\n"
"\tdone)\n"
"\tb=$first\n"
"\tfor allowed in \"$@\"; do\n"
"\t\ts=.\n"
"\t\tset -- $ext\n"
"\t\twhile [ $# -ge 3 ]; do\n"
"\t\t\tif [ $b -ge $1 ] && [ $b -le $2 ]; then\n"
"\t\t\t\tif [ $3 = 0 ]; then s=D; else s=U; fi\n"
"\t\t\tfi\n"
"\t\t\tshift 3\n"
"\t\tdone\n"
"\t\tcase \"$allowed\" in *\"$s\"*) ;; *) echo \"block $b: $s, allowed: $allowed\" ;; esac\n"
"\t\tb=$((b + 1))\n"
"\tdone\n"
"}\n\n");
}

int dt_fstest_subdir(const char *target, const char **sub)
{
	struct dt_config c;
	char err[256];

	/* ext4, xfs, fusefs with or without a configuration (config.h) */
	if (dt_config_parse(target, &c, err, sizeof(err)))
		return -EINVAL;
	/* FUSE: no file-system-specific directory */
	*sub = c.fs == DT_CFS_FUSEFS ? "generic" : dt_config_fsname(c.fs);
	return 0;
}

/* The scratch file system of the target's configuration: mkfs options
 * besides the block size, and mount options. */
static void write_mkfs_mount(FILE *t, const struct dt_fstest_in *in)
{
	struct dt_config c;
	char err[256], mk[128] = "", mo[64] = "", name[128] = "";

	if (!dt_config_parse(in->target, &c, err, sizeof(err))) {
		dt_config_name(&c, name, sizeof(name));
		dt_config_mount(&c, mo, sizeof(mo));
		if (c.fs == DT_CFS_XFS && (!c.reflink || c.rmapbt))
			snprintf(mk, sizeof(mk), "-m reflink=%d,rmapbt=%d", c.reflink, c.rmapbt);
	}
	if (mk[0] || mo[0])
		fprintf(t, "# configuration %s\n", name);
	/* the model's answers hold for its block size (s_maxbytes, alignment) */
	if (mk[0])
		fprintf(t, "MKFS_OPTIONS=\"$MKFS_OPTIONS %s\" ", mk);
	fprintf(t, "_scratch_mkfs_blocksized %u >> $seqres.full 2>&1\n", in->blocksize);
	/* in MOUNT_OPTIONS, so that _scratch_cycle_mount keeps them */
	if (mo[0])
		fprintf(t, "MOUNT_OPTIONS=\"$MOUNT_OPTIONS -o %s\"\n", mo);
	fprintf(t, "_scratch_mount\n\n");
}

/* Every op has an xfs_io form and a file of the test: 0, or -EINVAL with
 * the first op that does not. */
static int session_lines(const char *cmd, FILE *t, int *direct);

static int check_ops(const struct dt_fstest_in *in, char *err, size_t errn)
{
	char cmd[512], line[256];

	for (size_t j = 0; j < in->n; j++) {
		int r = dt_op_xfs_io(&in->ops[j], INT64_MAX, cmd, sizeof(cmd));
		dt_op_format(&in->ops[j], line, sizeof(line));
		if (in->ops[j].file >= in->nfiles) {
			snprintf(err, errn, "op %zu (%s): file %d of %d", j + 1, line,
				 in->ops[j].file, in->nfiles);
			return -EINVAL;
		}
		const struct dt_opdesc *od = dt_opdesc_of(in->ops[j].kind);
		if (od->syntax == DT_SYN_REFLINK && in->ops[j].src >= in->nfiles) {
			snprintf(err, errn, "op %zu (%s): source file %d of %d", j + 1, line,
				 in->ops[j].src, in->nfiles);
			return -EINVAL;
		}
		/* a fill needs a nearly full file system (free=), which the
		 * test's scratch mount is not made as */
		if (in->ops[j].kind == DT_FILL || in->ops[j].kind == DT_UNFILL) {
			snprintf(err, errn, "op %zu (%s): a fill or unfill needs a free= configuration, "
				 "which an xfstests test does not make: use repro.sh", j + 1, line);
			return -EINVAL;
		}
		/* xfs_io -d is for direct I/O only (an xfs_io of its own) */
		int dio = in->ops[j].kind == DT_DIO_WRITE || in->ops[j].kind == DT_DIO_READ, dflag;
		if (r == DT_XIO_NONE || ((od->flags & DT_OPF_OWNRUN) && !dio)) {
			snprintf(err, errn, "op %zu (%s) has no xfs_io form an xfstests test "
				 "can use", j + 1, line);
			return -EINVAL;
		}
		/* the model's direct writes keep the scratch device's 512-byte
		 * alignment (dt_model_dio_pwrite()); FUSE has no such rule */
		const char *sub = "";
		if (dio && (dt_fstest_subdir(in->target, &sub) || !strcmp(sub, "generic"))) {
			snprintf(err, errn, "op %zu (%s): direct I/O is emitted for ext4 "
				 "and xfs only", j + 1, line);
			return -EINVAL;
		}
		/* a session never closes a file and runs nothing but xfs_io */
		if (in->session && (r != 1 || in->ops[j].kind == DT_REMOUNT ||
				    in->ops[j].kind == DT_DROP ||
				    ((od->flags & DT_OPF_OWNRUN) && !dio) ||
				    strstr(cmd, "\"mmap ") != NULL || session_lines(cmd, NULL, &dflag) ||
				    in->ops[j].kind == DT_SEEK_DATA || in->ops[j].kind == DT_SEEK_HOLE ||
				    in->ops[j].kind == DT_FIEMAP_SYNC)) {
			snprintf(err, errn, "op %zu (%s) cannot run in an xfs_io session "
				 "(--fstest-session): leave the option out", j + 1, line);
			return -EINVAL;
		}
	}
	return 0;
}

/* The head: description, preamble, requirements, the scratch files. */
static void write_head(FILE *t, const struct dt_fstest_in *in, int num)
{
	fprintf(t, "#! /bin/bash\n# SPDX-License-Identifier: GPL-2.0\n"
		"# Copyright (c) rangeshift developers.  All Rights Reserved.\n#\n"
		"# FS QA Test No. %03d\n#\n", num);
	fprintf(t, "# Made by difftest --emit-fstest from %s (target %s, %s profile,\n"
		"# %u-byte blocks).\n", in->source, in->target, rm_profile_name2(in->profile, in->kernel),
		in->blocksize);
	if (in->divergence)
		fprintf(t, "# What difftest saw: %s\n", in->divergence);
	fprintf(t, "# The golden output is the reference model's, with the intended\n"
		"# semantics (no kernel errata, refmodel/ERRATA.md).\n#\n");
	fprintf(t, ". ./common/preamble\n");
	groups(t, in->ops, in->n);
	fprintf(t, "\n# Import common functions.\n. ./common/filter\n%s\n",
		uses(in->ops, in->n, DT_REFLINK, DT_DEDUPE) ? ". ./common/reflink\n" : "");
	requires(t, in->ops, in->n, in->map_hi > in->map_lo);
	fprintf(t, "\n");
	if (in->map_hi > in->map_lo)
		map_function(t);
	write_mkfs_mount(t, in);
	for (int i = 0; i < in->nfiles; i++)
		fprintf(t, "f%d=$SCRATCH_MNT/file%d\ntouch $f%d\n", i, i, i);
}

/* A read's bytes, as "pread -q -v" dumps them (at most DT_FSTEST_DUMP_MAX
 * from its offset): files too large for an MD5 still have their data
 * checked where the log reads it.  The golden lines into o are rmcmd's,
 * which prints what xfs_io prints; the command into cmd, for the test. */
static void dump_read(FILE *o, struct rm_file *f, const struct dt_op *op, int64_t ret,
		      char *cmd, size_t cn)
{
	struct rmcmd_session s;
	int64_t n = ret < DT_FSTEST_DUMP_MAX ? ret : DT_FSTEST_DUMP_MAX;

	snprintf(cmd, cn, "pread -q -v %" PRId64 " %" PRId64, op->off, n);
	rmcmd_session_init(&s, f, "file", o, o);
	fflush(o);
	rmcmd_run(&s, cmd);
	fflush(o);
}

/* The ops: each run in the test, its expected output from the model m. */
static void write_ops(FILE *t, FILE *o, const struct dt_fstest_in *in,
		      struct rm_file *const *m, unsigned char *buf)
{
	char cmd[512], line[256];

	for (size_t j = 0; j < in->n; j++) {
		const struct dt_op *op = &in->ops[j];
		int64_t size = rm_size(m[op->file]);
		int r = xio_form(op, size, cmd, sizeof(cmd));
		int64_t ret = model_op(in, m, op, buf);
		const char *pn = dt_op_call(op);

		dt_op_format(op, line, sizeof(line));
		if (op->kind == DT_REMOUNT) {
			fprintf(t, "\n# op %zu: %s\n_scratch_cycle_mount\n", j + 1, line);
			continue;
		}
		if (op->kind == DT_DROP) {
			fprintf(t, "\n# op %zu: %s\nsync\necho 3 > /proc/sys/vm/drop_caches\n",
				j + 1, line);
			continue;
		}
		if (r <= 0) {	/* reopen, mapped I/O past EOF: nothing to run */
			fprintf(t, "\n# op %zu: %s (nothing to run)\n", j + 1, line);
			continue;
		}
		if (op->kind == DT_SEEK_DATA || op->kind == DT_SEEK_HOLE ||
		    op->kind == DT_FIEMAP_SYNC) {
			/* several answers may be right (rm_lseek_ok()), a
			 * fiemap's names physical blocks: run it, do not
			 * print it */
			fprintf(t, "\n# op %zu: %s\n$XFS_IO_PROG %s $f%d > /dev/null 2>&1\n",
				j + 1, line, cmd, op->file);
			continue;
		}
		fprintf(t, "\n# op %zu: %s\necho \"op %zu: %s\"\n$XFS_IO_PROG %s $f%d 2>&1 | "
			"_filter_xfs_io\n", j + 1, line, j + 1, line, cmd, op->file);
		fprintf(o, "op %zu: %s\n", j + 1, line);
		if (ret < 0 && pn)
			fprintf(o, "%s: %s\n", pn, strerror((int)-ret));
		if ((op->kind == DT_PREAD || op->kind == DT_DIO_READ) && ret > 0) {
			dump_read(o, m[op->file], op, ret, cmd, sizeof(cmd));
			fprintf(t, "$XFS_IO_PROG -c \"%s\" $f%d\n", cmd, op->file);
		}
	}
}

/* The commands of an xfs_io form (`[-d ]-c "A" -c "B"`) as lines of a
 * session's command file into t (t NULL: only parse); *direct says
 * whether it had -d.  0, or -EINVAL for a form this parser does not know
 * (none of dt_op_xfs_io()'s). */
static int session_lines(const char *cmd, FILE *t, int *direct)
{
	const char *p = cmd;

	*direct = !strncmp(p, "-d ", 3);
	if (*direct)
		p += 3;
	while (*p) {
		const char *e;
		if (strncmp(p, "-c \"", 4) || !(e = strchr(p + 4, '"')))
			return -EINVAL;
		if (t)
			fprintf(t, "%.*s\n", (int)(e - p - 4), p + 4);
		p = e + 1;
		while (*p == ' ')
			p++;
	}
	return 0;
}

/* The ops in one xfs_io session (--fstest-session): file i is xfs_io's
 * file 2i (buffered) and 2i + 1 (O_DIRECT), opened before the first op
 * and closed when xfs_io exits.  The golden output is what reads dump,
 * in order, then the failed calls' perror() lines, in order.  0, or
 * -ENOMEM having written nothing. */
static int write_session(FILE *t, FILE *o, const struct dt_fstest_in *in,
			 struct rm_file *const *m, unsigned char *buf)
{
	char cmd[512], line[256];
	int cur = 2 * in->nfiles - 1, direct;	/* the last file opened */
	size_t nerr = 0;
	char (*errs)[96] = calloc(in->n ? in->n : 1, sizeof(*errs));

	if (!errs)
		return -ENOMEM;

	fprintf(t, "\n# The ops, in one xfs_io session: each file stays open from the\n"
		"# first op to the last, as in difftest (closing a file can change\n"
		"# it: xfs_release() frees post-EOF preallocation).\n"
		"cat > $tmp.ops <<EOF\n");
	for (int i = 0; i < in->nfiles; i++)
		fprintf(t, "open $f%d\nopen -d $f%d\n", i, i);
	for (size_t j = 0; j < in->n; j++) {
		const struct dt_op *op = &in->ops[j];
		int64_t size = rm_size(m[op->file]);
		xio_form(op, size, cmd, sizeof(cmd));
		int64_t ret = model_op(in, m, op, buf);
		const char *pn = dt_op_call(op);

		dt_op_format(op, line, sizeof(line));
		/* check_ops() parsed every form: session_lines() cannot fail */
		session_lines(cmd, NULL, &direct);
		int want = 2 * op->file + direct;
		if (want != cur)
			fprintf(t, "file %d\n", cur = want);
		session_lines(cmd, t, &direct);
		if (ret < 0 && pn)
			snprintf(errs[nerr++], sizeof(errs[0]), "%s: %s", pn, strerror((int)-ret));
		if ((op->kind == DT_PREAD || op->kind == DT_DIO_READ) && ret > 0) {
			dump_read(o, m[op->file], op, ret, cmd, sizeof(cmd));
			if (cur != 2 * op->file)
				fprintf(t, "file %d\n", cur = 2 * op->file);
			fprintf(t, "%s\n", cmd);
		}
	}
	fprintf(t, "EOF\n"
		"# \"file N\" lists the open files: not output to check\n"
		"$XFS_IO_PROG < $tmp.ops 2> $tmp.err | sed -E '/^( |\\[)[0-9]{3}( |\\]) /d'\n"
		"echo \"failed calls:\"\n"
		"# xfs_io built with libedit says this where there is no terminfo\n"
		"sed -e '/^Cannot read termcap database;$/d' \\\n"
		"    -e '/^using dumb terminal settings\\.$/d' $tmp.err\n");
	fprintf(o, "failed calls:\n");
	for (size_t k = 0; k < nerr; k++)
		fprintf(o, "%s\n", errs[k]);
	free(errs);
	return 0;
}

/* What the files hold: sizes, checksums, the map range, fsck. */
static void write_files(FILE *t, FILE *o, const struct dt_fstest_in *in,
			struct rm_file *const *m)
{
	fprintf(t, "\n");
	for (int i = 0; i < in->nfiles; i++) {
		char md5[33];
		fprintf(t, "echo \"file%d size: $(stat -c %%s $f%d)\"\n", i, i);
		fprintf(o, "file%d size: %" PRId64 "\n", i, rm_size(m[i]));
		/* a file the kernel made far larger than the model's would be
		 * read for hours: its size line already differs */
		if (rm_size(m[i]) <= DT_FSTEST_MD5_MAX && !rmcmd_md5_hex(m[i], md5)) {
			fprintf(t, "[ $(stat -c %%s $f%d) -le %lld ] && echo \"file%d md5: "
				"$(_md5_checksum $f%d)\"\n", i, DT_FSTEST_MD5_MAX, i, i);
			fprintf(o, "file%d md5: %s\n", i, md5);
		}
	}
	if (in->map_hi > in->map_lo) {
		int64_t bs = in->blocksize, lo = in->map_lo / bs * bs, hi = in->map_hi;
		int fi = in->map_file < in->nfiles ? in->map_file : 0;
		if (hi - lo > DT_FSTEST_MAP_BLOCKS * bs)
			hi = lo + DT_FSTEST_MAP_BLOCKS * bs;
		fprintf(t, "echo \"file%d blocks %" PRId64 "..%" PRId64 ": checked against the model\"\n",
			fi, lo / bs, (hi - 1) / bs);
		fprintf(t, "_check_block_states $f%d %" PRId64 " %" PRId64 " %" PRId64, fi, lo / bs,
			(hi - 1) / bs, bs / 512);
		dt_print_allowed(t, m[fi], bs, lo, hi);
		fprintf(t, "\n");
		fprintf(o, "file%d blocks %" PRId64 "..%" PRId64 ": checked against the model\n",
			fi, lo / bs, (hi - 1) / bs);
	}
	if (in->fsck)
		fprintf(t, "\n# the file system must be consistent (fsck is the oracle)\n"
			"_check_scratch_fs\n");
}

int dt_fstest_write(FILE *t, FILE *o, const struct dt_fstest_in *in, int num,
		    char *err, size_t errn)
{
	const char *sub;

	if (dt_fstest_subdir(in->target, &sub)) {
		snprintf(err, errn, "target '%s': an xfstests test is made for ext4, xfs or fusefs",
			 in->target);
		return -EINVAL;
	}
	if (in->nfiles < 1 || in->nfiles > DT_MAXFILES) {
		snprintf(err, errn, "%d files: want 1..%d", in->nfiles, DT_MAXFILES);
		return -EINVAL;
	}
	if (check_ops(in, err, errn))
		return -EINVAL;

	struct rm_opts mo = { .profile = in->profile, .blocksize = in->blocksize,
			      .kernel = in->kernel, .strict = 1 };
	struct rm_file *m[DT_MAXFILES] = { 0 };
	unsigned char *buf = malloc(DT_MAX_IO);
	int rc = buf ? 0 : -ENOMEM;
	for (int i = 0; i < in->nfiles && !rc; i++)
		rc = rm_file_new(&mo, &m[i]);
	if (rc) {
		snprintf(err, errn, "model: %s", strerror(-rc));
	} else {
		write_head(t, in, num);
		fprintf(o, "QA output created by %03d\n", num);
		if (in->session)
			rc = write_session(t, o, in, m, buf);
		else
			write_ops(t, o, in, m, buf);
		write_files(t, o, in, m);
		fprintf(t, "\n# success, all done\nstatus=0\nexit\n");
		if (!rc)
			rc = ferror(t) || ferror(o) ? -EIO : 0;
		if (rc)
			snprintf(err, errn, "%s", rc == -ENOMEM ? "out of memory" : "write error");
	}
	for (int i = 0; i < DT_MAXFILES; i++)
		rm_file_free(m[i]);
	free(buf);
	return rc;
}

/* mkdir -p: 0 or -errno */
static int mkdirs(const char *path)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, 0755) && errno != EEXIST)
				return -errno;
			*s = '/';
		}
	return mkdir(p, 0755) && errno != EEXIST ? -errno : 0;
}

int dt_emit_fstest(const char *dir, const struct dt_fstest_in *in, char *path, size_t pn,
		   char *err, size_t errn)
{
	const char *sub;
	char d[PATH_MAX], t[PATH_MAX + 16], o[PATH_MAX + 16];
	struct stat st;
	int num;

	if (dt_fstest_subdir(in->target, &sub)) {
		snprintf(err, errn, "target '%s': an xfstests test is made for ext4, xfs or fusefs",
			 in->target);
		return -EINVAL;
	}
	if (snprintf(d, sizeof(d), "%s/tests/%s", dir, sub) >= (int)sizeof(d)) {
		snprintf(err, errn, "%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	/* the first free number from 900 up, clear of upstream's numbers */
	for (num = 900; num < 1000; num++) {
		snprintf(t, sizeof(t), "%s/%03d", d, num);
		snprintf(o, sizeof(o), "%s/%03d.out", d, num);
		if (stat(t, &st) && stat(o, &st))
			break;
	}
	if (num == 1000) {
		snprintf(err, errn, "%s: tests 900..999 all exist", d);
		return -EEXIST;
	}
	int e = mkdirs(d);
	if (e) {
		snprintf(err, errn, "%s: %s", d, strerror(-e));
		return e;
	}
	FILE *ft = fopen(t, "w"), *fo = ft ? fopen(o, "w") : NULL;
	if (!ft || !fo) {
		e = errno;
		snprintf(err, errn, "%s: %s", ft ? o : t, strerror(e));
		if (ft) {
			fclose(ft);
			remove(t);
		}
		return -e;
	}
	int rc = dt_fstest_write(ft, fo, in, num, err, errn);
	if (fclose(ft) | fclose(fo) && !rc) {
		snprintf(err, errn, "%s: %s", t, strerror(errno));
		rc = -EIO;
	}
	if (rc) {	/* nothing half-written stays */
		remove(t);
		remove(o);
		return rc;
	}
	chmod(t, 0755);
	snprintf(path, pn, "%s", t);
	return 0;
}
