/* SPDX-License-Identifier: MIT */
/*
 * exec.c - the executors of rmio's commands: a parsed struct rmcmd run
 * against the session's model file, printing what xfs_io 6.1 prints.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------ */
/* Execution. */

void rmcmd_perror(const struct rmcmd_session *s, const char *what,
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
	unsigned char *buf;
	long ops = 0;

	/* the limit first: the buffer is as big as the command asks */
	if (over_limit(s, "pwrite", count))
		return -EINVAL;
	buf = malloc(bufsz ? bufsz : 1);
	if (!buf) {
		rmcmd_perror(s, "pwrite", -ENOMEM);
		return -ENOMEM;
	}
	memset(buf, cmd->pattern, bufsz);
	t0 = rmcmd_now_usec();
	/* xfs_io's write_buffer(): bsize-sized calls until done, a zero or
	 * short write ends the loop, an error aborts without a report. */
	while (count > 0) {
		size_t want = (size_t)(count < (int64_t)bufsz ? count
							     : (int64_t)bufsz);
		ssize_t r;

		if (want == 0)	/* -b 0: xfs_io's zero-length write, no op */
			break;
		r = s->direct ? rm_dio_pwrite(s->file, buf, want, off, 512)
			      : rm_pwrite(s->file, buf, want, off);
		if (r == 0)
			break;
		if (r < 0) {
			free(buf);
			rmcmd_perror(s, "pwrite", r);
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
		rmcmd_report_io(s, "wrote", rmcmd_elapsed_usec(s, t0),
				cmd->off, cmd->len, total, ops);
	return 0;
}


static int exec_pread(struct rmcmd_session *s, const struct rmcmd *cmd)
{
	int64_t count = cmd->len, off = cmd->off, total = 0, t0;
	size_t bufsz = (size_t)(cmd->bsize < count ? cmd->bsize : count);
	int64_t avail = rm_size(s->file) - off;
	/* The buffer holds what can be read (at most the bytes from off to
	 * EOF): each call asks for min(want, cap) bytes and gets exactly what
	 * a call asking for want bytes gets, since the rest lies past EOF. */
	size_t cap = avail <= 0 ? 0 : (uint64_t)avail < bufsz ? (size_t)avail : bufsz;
	/* a direct read's answer depends on its length (alignment): the
	 * whole request goes to the model */
	if (s->direct)
		cap = bufsz;
	unsigned char *buf;
	long ops = 0;

	/* Only the bytes that exist count: "pread 0 1t" of a small file is
	 * cheap, reading a 16 TiB sparse file is not. */
	if (over_limit(s, "pread", avail < count ? avail : count))
		return -EINVAL;
	buf = malloc(cap ? cap : 1);
	if (!buf) {
		rmcmd_perror(s, "pread", -ENOMEM);
		return -ENOMEM;
	}
	t0 = rmcmd_now_usec();
	while (count > 0) {
		size_t want = (size_t)(count < (int64_t)bufsz ? count
							     : (int64_t)bufsz);
		ssize_t r;

		if (want == 0)
			break;
		r = s->direct ? rm_dio_pread(s->file, buf, want, off, 512)
			      : rm_pread(s->file, buf, want < cap ? want : cap, off);
		if (r == 0)
			break;
		if (r < 0) {
			free(buf);
			rmcmd_perror(s, "pread", r);
			return (int)r;
		}
		ops++;
		if (cmd->flags & RMCMD_F_VERBOSE)
			rmcmd_dump_buffer(s->out, off, buf, r);
		total += r;
		if ((size_t)r < want)
			break;
		off += r;
		count -= r;
	}
	free(buf);
	if (!(cmd->flags & RMCMD_F_QUIET))
		rmcmd_report_io(s, "read", rmcmd_elapsed_usec(s, t0),
				cmd->off, cmd->len, total, ops);
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

/* Mapped (written or unwritten) extents, as XFS's fsx_nextents counts
 * the data fork's records; the model's extents are maximal runs of one
 * state, so a real file may count more where XFS could not merge. */
static int64_t count_mapped(const struct rmcmd_session *s)
{
	int64_t n = rm_fiemap(s->file, 0, INT64_MAX, NULL, 0);

	return n < 0 ? 0 : n;
}

static int exec_stat(struct rmcmd_session *s, const struct rmcmd *cmd)
{
	/* What the model cannot know is printed in xfs_io's format with a
	 * fixed value: stat.ino 0 (no real inode has it), the times as the
	 * epoch, and on XFS no extended flags and the direct I/O limits of a
	 * 512-byte-sector device (XFS_IOC_DIOINFO: xfs_ioc_dioinfo()).
	 * stat.blocks counts allocated data blocks only (a real file system
	 * may add metadata blocks, e.g. ext4's extent tree blocks). */
	static const char epoch[] = "Thu Jan  1 00:00:00 1970";
	bool verbose = cmd->flags & RMCMD_F_VERBOSE;
	struct rm_stats st;

	rm_stats(s->file, &st);
	fprintf(s->out, "fd.path = \"%s\"\n", s->name);
	fprintf(s->out, "fd.flags = non-sync,non-direct,%s\n",
		s->read_only ? "read-only" : "read-write");
	fprintf(s->out, "stat.ino = 0\n");
	fprintf(s->out, "stat.type = regular file\n");
	fprintf(s->out, "stat.size = %lld\n", (long long)st.size);
	fprintf(s->out, "stat.blocks = %lld\n",
		(long long)(st.alloc_bytes / 512));
	if (verbose) {
		fprintf(s->out, "stat.atime = %s\n", epoch);
		fprintf(s->out, "stat.mtime = %s\n", epoch);
		fprintf(s->out, "stat.ctime = %s\n", epoch);
	}
	/* xfs_io 6.1 prints the XFS lines only for a file on XFS */
	if (rm_profile_of(s->file) != RM_PROFILE_XFS)
		return 0;
	/* printxattr(): one '-' per known flag (17 in 6.1), or the flag
	 * names in braces with -v */
	fprintf(s->out, "fsxattr.xflags = 0x0 %s\n",
		verbose ? "[]" : "[-----------------]");
	fprintf(s->out, "fsxattr.projid = 0\n");
	fprintf(s->out, "fsxattr.extsize = 0\n");
	fprintf(s->out, "fsxattr.cowextsize = 0\n");
	fprintf(s->out, "fsxattr.nextents = %lld\n",
		(long long)count_mapped(s));
	fprintf(s->out, "fsxattr.naextents = 0\n");
	fprintf(s->out, "dioattr.mem = 0x200\n");
	fprintf(s->out, "dioattr.miniosz = 512\n");
	fprintf(s->out, "dioattr.maxiosz = 2147483136\n");
	return 0;
}

/* A write on a read-only descriptor (xfs_io -r).  The kernel checks
 * FMODE_WRITE after the argument checks the commands can fail:
 * vfs_fallocate() tests offset < 0 || len <= 0 (EINVAL) first and then
 * FMODE_WRITE (EBADF); do_sys_ftruncate() fails with EINVAL for a file
 * not open for writing; vfs_write() with EBADF. */
static int read_only_errno(const struct rmcmd *cmd)
{
	switch (cmd->op) {
	case RMCMD_PWRITE:
		/* even for 0 bytes: xfs_io makes one pwrite() call
		 * (measured: "pwrite 0 0" fails with EBADF under -r) */
		return -EBADF;
	case RMCMD_TRUNCATE:
		return -EINVAL;
	case RMCMD_FALLOC:
		return cmd->off < 0 || cmd->len <= 0 ? -EINVAL : -EBADF;
	default:
		return 0;
	}
}

int rmcmd_exec(struct rmcmd_session *s, const struct rmcmd *cmd)
{
	int r;
	char hex[33];

	r = s->read_only ? read_only_errno(cmd) : 0;
	if (r < 0) {
		rmcmd_perror(s, cmd->op == RMCMD_PWRITE ? "pwrite" :
				cmd->op == RMCMD_TRUNCATE ? "ftruncate" :
				"fallocate", r);
		return r;
	}
	switch (cmd->op) {
	case RMCMD_PWRITE:
		return exec_pwrite(s, cmd);
	case RMCMD_PREAD:
		return exec_pread(s, cmd);
	case RMCMD_TRUNCATE:
		r = rm_truncate(s->file, cmd->off);
		if (r < 0)
			rmcmd_perror(s, "ftruncate", r);
		return r;
	case RMCMD_FALLOC:
		r = rm_fallocate(s->file, cmd->mode, cmd->off, cmd->len);
		if (r < 0)
			rmcmd_perror(s, "fallocate", r);
		return r;
	case RMCMD_FSYNC:
		r = rm_fsync(s->file);
		if (r < 0)
			rmcmd_perror(s, "fsync", r);
		return r;
	case RMCMD_FDATASYNC:
		r = rm_fdatasync(s->file);
		if (r < 0)
			rmcmd_perror(s, "fdatasync", r);
		return r;
	case RMCMD_SYNC_RANGE:
		r = rm_sync_file_range(s->file, cmd->off, cmd->len, (unsigned)cmd->mode);
		if (r < 0)
			rmcmd_perror(s, "sync_file_range", r);
		return r;
	case RMCMD_FIEMAP:
		return rmcmd_exec_fiemap(s, cmd);
	case RMCMD_SEEK:
		return exec_seek(s, cmd);
	case RMCMD_STAT:
		return exec_stat(s, cmd);
	case RMCMD_MD5SUM:
		if (over_limit(s, "md5sum", rm_size(s->file)))
			return -EINVAL;
		r = rmcmd_md5_hex(s->file, hex);
		if (r < 0) {
			rmcmd_perror(s, "md5sum", r);
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
		rmcmd_print_topic(s->out, cmd->topic);
		return 0;
	case RMCMD_QUIT:
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
	r = rmcmd_exec(s, &cmd);
	if (r == 0 && (cmd.flags & RMCMD_F_FAILED))
		return -EINVAL;
	return r == 0 && cmd.op == RMCMD_QUIT ? 1 : r;
}
