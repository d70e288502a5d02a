/* SPDX-License-Identifier: MIT */
/*
 * writeback.c - write-back in librefmodel: the calls that move dirty
 * page-cache blocks to the after-write-back state (rm_writeback(),
 * rm_fdatasync(), rm_sync_file_range()) and rm_dirty_bytes().  The cached
 * view itself (rm_walk_cached(), rm_fiemap_cached()) is in ops.c beside
 * rm_walk(), and the write-back that operations do on their own
 * (wb_flush()) beside the operations.  Rules W1-W13: refmodel/RULES.md.
 */
#include "internal.h"

#include <errno.h>

int rm_writeback(struct rm_file *f, int64_t off, int64_t len)
{
	if (off < 0 || len < 0)
		return -EINVAL;
	int64_t end = len == 0 || len > INT64_MAX - off ? INT64_MAX : off + len;
	f->ops++;
	if (off == 0 && end == INT64_MAX)
		return wb_all(f);	/* what rm_fsync() does */
	return wb_flush(f, off, end, true);
}

int rm_fdatasync(struct rm_file *f)
{
	/* W2: ext4_sync_file() and xfs_file_fsync() call
	 * file_write_and_wait_range() for fsync and fdatasync alike; the
	 * difference (the inode's metadata) is not in the model */
	return rm_fsync(f);
}

/* W4: the three steps of ksys_sync_file_range() on the segments of [s, e) */
static void fn_wait(struct seg *s, unsigned arg)
{
	(void)arg;
	if (!(s->wb & WB_INFLIGHT))
		return;
	/* the I/O completed: the extent is written (its end_io converted
	 * it); pages dirtied again meanwhile stay dirty over it */
	if (s->wb & WB_DIRTY) {
		s->wb = WB_DIRTY;
	} else {
		s->wb = 0;
		if (s->may & MAY_PENDING)
			s->may = RM_DATA;
	}
}

static void fn_write(struct seg *s, unsigned sync_all)
{
	if (!(s->wb & WB_DIRTY))
		return;
	if (s->wb & WB_INFLIGHT) {
		/* write_cache_pages(): WB_SYNC_NONE skips a folio under
		 * write-back, WB_SYNC_ALL waits for it, then writes it */
		if (sync_all)
			s->wb = WB_INFLIGHT;
		return;
	}
	/* submitted: a delayed allocation is allocated now, unwritten until
	 * the I/O completes (ext4_writepages() -> mpage_map_and_submit_extent();
	 * xfs_map_blocks() -> xfs_bmapi_convert_delalloc()) */
	s->wb = (uint8_t)(WB_INFLIGHT | (s->wb & (WB_DELALLOC | WB_UNWR) ? WB_UNWR : 0));
}

static int wb_steps(struct rm_file *f, int64_t s, int64_t e, unsigned flags)
{
	int64_t T = tree_len(f->root);
	s = rup(rdown(s, 4096), f->ab);
	e = e > INT64_MAX - 4096 ? INT64_MAX : rup(e, 4096);
	e = rdown(e, f->ab);
	if (e > T)
		e = T;
	if (s >= e)
		return 0;
	int err = flags & RM_SYNC_FILE_RANGE_WRITE ? xfs_wb_folios(f, s, e) : 0;
	if (err)
		return err;
	struct rop x;
	err = rop_open(f, s, e, &x);
	if (err)
		return err;
	size_t i, j;
	v_cut2(f, &x, s, e, &i, &j);
	bool sync_all = (flags & (RM_SYNC_FILE_RANGE_WAIT_BEFORE | RM_SYNC_FILE_RANGE_WRITE |
				  RM_SYNC_FILE_RANGE_WAIT_AFTER)) ==
			(RM_SYNC_FILE_RANGE_WAIT_BEFORE | RM_SYNC_FILE_RANGE_WRITE |
			 RM_SYNC_FILE_RANGE_WAIT_AFTER);
	int64_t pos = s, eof = rup(f->size, f->ab);
	for (size_t k = i; k < j; k++) {
		struct seg *g = &f->vec.v[k];
		/* a wait that completes M5 blocks ends their latitude inside
		 * EOF only, as rm_fsync() */
		uint8_t keep = pos >= eof ? g->may : 0;
		if (flags & RM_SYNC_FILE_RANGE_WAIT_BEFORE)
			fn_wait(g, 0);
		if (flags & RM_SYNC_FILE_RANGE_WRITE)
			fn_write(g, sync_all);
		if (flags & RM_SYNC_FILE_RANGE_WAIT_AFTER)
			fn_wait(g, 0);
		if (keep)
			g->may = keep;
		pos += g->len;
	}
	rop_close(f, &x);
	return 0;
}

int rm_sync_file_range(struct rm_file *f, int64_t off, int64_t len, unsigned flags)
{
	f->ops++;
	/* ksys_sync_file_range(), in its order */
	if (flags & ~(unsigned)(RM_SYNC_FILE_RANGE_WAIT_BEFORE | RM_SYNC_FILE_RANGE_WRITE |
				RM_SYNC_FILE_RANGE_WAIT_AFTER))
		return -EINVAL;
	if (off < 0)
		return -EINVAL;
	int64_t end;
	if (__builtin_add_overflow(off, len, &end) || end < 0 || end < off)
		return -EINVAL;
	if (len == 0)
		end = INT64_MAX;
	if (!flags || f->profile == RM_PROFILE_BYTES || !f->anywb)
		return 0;
	return wb_steps(f, off, end, flags);
}

int64_t rm_dirty_bytes(const struct rm_file *f)
{
	int64_t n = 0, p = 0, len;
	/* O(k log n) over the k segments with write-back state */
	while ((p = tree_wb_find(f->root, p, &len)) >= 0) {
		struct it it;
		it_init(&it, f->root, p);
		if (it_valid(&it) && (it.cur->s.wb & WB_DIRTY))
			n += len;
		it_done(&it);
		p += len;
	}
	return n;
}
