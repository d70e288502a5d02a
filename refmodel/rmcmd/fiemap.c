/* SPDX-License-Identifier: MIT */
/*
 * fiemap.c - rmio's fiemap command: rm_fiemap()'s extents printed in
 * xfs_io's plain (-l) and verbose (-v) layouts, holes included.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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
 * sizes the table on the first batch only, up to the LAST extent).  Its
 * calc_print_format() formats the two ranges into 32-byte buffers, so a
 * range column is never measured wider than 31 characters (offsets near
 * 2^63 on XFS), however long the text printed in it. */
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
		if (k > 31)
			k = 31;
		if (k > w->foff_w)
			w->foff_w = k;
		k = snprintf(buf, sizeof(buf), "%llu..%llu",
			     (unsigned long long)b,
			     (unsigned long long)(b + len - 1));
		if (k > 31)
			k = 31;
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

/* The extents of [start, start + qlen) as rm_fiemap() reports them, and
 * where rmio shows them on its imaginary disk: their count, or -errno.
 *
 * rm_fiemap() reports what iomap_fiemap() (ext4 and XFS in 6.1) reports:
 * each mapping clipped to the range rounded out to whole blocks
 * (xfs_read_iomap_begin() and ext4_iomap_begin_report() map from the block
 * holding the start to the block holding the end), the last one flagged
 * FIEMAP_EXTENT_LAST.  xfs_io prints those extents as they come, so a
 * range inside one block shows that whole block.
 *
 * xfs_io asks with FIEMAP_FLAG_SYNC, so fiemap_prep() writes the file back
 * (filemap_write_and_wait()) once the range passed its checks: the model
 * file is written back too (rm_writeback()).  With -C (rmio) the flag is
 * not given and the extents are the cached view's (rm_fiemap_cached():
 * delayed allocations flagged FIEMAP_EXTENT_DELALLOC|UNKNOWN). */
static int64_t fetch_extents(const struct rmcmd_session *s, int64_t start,
			     int64_t qlen, bool cached, struct rm_extent **extp,
			     uint64_t **physp)
{
	int64_t (*fm)(const struct rm_file *, int64_t, int64_t, struct rm_extent *, size_t) =
		cached ? rm_fiemap_cached : rm_fiemap;
	int64_t n = fm(s->file, start, qlen, NULL, 0);
	if (n >= 0 && !cached) {
		int err = rm_writeback(s->file, 0, 0);
		if (err)
			return err;
	}
	struct rm_extent *ext = NULL;
	uint64_t *phys = NULL;

	if (n > 0) {
		ext = calloc((size_t)n, sizeof(*ext));
		phys = calloc((size_t)n, sizeof(*phys));
		if (!ext || !phys)
			n = -ENOMEM;
		else
			n = fm(s->file, start, qlen, ext, (size_t)n);
	}
	if (n < 0) {
		free(ext);
		free(phys);
		return n;
	}
	/* The model keeps offsets in int64_t, so the block that ends at 2^63
	 * (reachable where s_maxbytes is 2^63-1, as XFS's) ends one byte
	 * short, at INT64_MAX.  The kernel reports that block whole: print
	 * it so, in the unsigned arithmetic xfs_io uses. */
	for (int64_t i = 0; i < n; i++)
		if (ext[i].length > 0 && ext[i].logical + ext[i].length == INT64_MAX)
			ext[i].length++;
	/* The model has no disk: lay the reported extents out back to back
	 * from disk byte 0, so the BLOCK-RANGE column stays as narrow as on
	 * a small real file system (its width decides the table's padding). */
	for (int64_t i = 0; i < n; i++)
		phys[i] = i ? phys[i - 1] + (uint64_t)ext[i - 1].length : 0;
	*extp = ext;
	*physp = phys;
	return n;
}

int rmcmd_exec_fiemap(struct rmcmd_session *s, const struct rmcmd *cmd)
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
	n = fetch_extents(s, start, qlen, cmd->flags & RMCMD_F_CACHED, &ext, &phys);
	if (n < 0) {
		fprintf(s->err, "rmio: ioctl(FS_IOC_FIEMAP) [\"%s\"]: %s\n",
			s->name, strerror((int)-n));
		return (int)n;
	}
	if (verbose && n > 0)
		calc_format(ext, phys, (size_t)n, &w);
	for (int64_t i = 0; i < n; i++) {
		cur += print_extent(s->out, &w, &ext[i], phys[i], verbose,
				    lflag, cur, max, last_logical);
		last_logical = (uint64_t)ext[i].logical + (uint64_t)ext[i].length;
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

