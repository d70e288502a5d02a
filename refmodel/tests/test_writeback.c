/* SPDX-License-Identifier: MIT */
/*
 * test_writeback.c - the write-back rules (refmodel/RULES.md W1-W13): the
 * cached view (rm_walk_cached(), rm_fiemap_cached()) of dirty blocks over
 * holes, unwritten and written blocks, every operation over dirty ranges,
 * and the calls that write back (fsync, fdatasync, sync_file_range,
 * rm_writeback, the write-back operations do on their own), on both
 * profiles and both kernels where the rule is theirs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <stdbool.h>
#include <cmocka.h>

#include "refmodel.h"
#include "rmtest.h"

#define K 4096

struct one {
	unsigned state, may;
};

static int one_cb(void *ctx, const struct rm_run *r)
{
	struct one *o = ctx;
	o->state = r->state;
	o->may = r->may;
	return 1;
}

static struct one cached_at(const struct rm_file *f, int64_t off)
{
	struct one o = { 0, 0 };
	assert_int_equal(rm_walk_cached(f, off, off + 1, one_cb, &o), 1);
	return o;
}

static struct one after_at(const struct rm_file *f, int64_t off)
{
	struct one o = { 0, 0 };
	assert_int_equal(rm_walk(f, off, off + 1, one_cb, &o), 1);
	return o;
}

#define assert_cached(f, off, st, my) do { struct one o_ = cached_at(f, off); \
	assert_int_equal(o_.state, (st)); assert_int_equal(o_.may, (my)); } while (0)
#define assert_after(f, off, st, my) do { struct one o_ = after_at(f, off); \
	assert_int_equal(o_.state, (st)); assert_int_equal(o_.may, (my)); } while (0)

/* the may-set of a dirty block over a hole: delalloc now, unwritten
 * while write-back is in flight, written after it */
#define DELA (RM_DELALLOC | RM_UNWRITTEN | RM_DATA)
#define UNWR (RM_UNWRITTEN | RM_DATA)

static struct rm_file *mk(enum rm_profile p, enum rm_kernel k, uint32_t bs, int wt)
{
	struct rm_opts o = { .profile = p, .blocksize = bs, .kernel = k, .write_through = wt };
	struct rm_file *f;
	assert_int_equal(rm_file_new(&o, &f), 0);
	return f;
}

static void wr(struct rm_file *f, int64_t off, int64_t len)
{
	static unsigned char buf[1 << 16];
	memset(buf, 0x5a, sizeof(buf));
	assert_true(len <= (int64_t)sizeof(buf));
	assert_int_equal(rm_pwrite(f, buf, (size_t)len, off), len);
	chk(f);
}

static const enum rm_profile profs[2] = { RM_PROFILE_EXT4, RM_PROFILE_XFS };
static const enum rm_kernel kerns[2] = { RM_KERNEL_6_1, RM_KERNEL_6_12 };
#define EACH(p, k) for (int pi_ = 0; pi_ < 2; pi_++) for (int ki_ = 0; ki_ < 2; ki_++) \
	for (enum rm_profile p = profs[pi_], *once_ = &p; once_; once_ = NULL) \
	for (enum rm_kernel k = kerns[ki_], *once2_ = &k; once2_; once2_ = NULL)

/* W1: a write over a hole is a delayed allocation until write-back; W2:
 * fsync writes it back */
static void test_w1_write_over_hole_is_delalloc(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *f = mk(p, k, K, 0);
		wr(f, 0, 2 * K);
		assert_cached(f, 0, RM_DELALLOC, DELA);
		assert_after(f, 0, RM_DATA, RM_DATA);
		assert_int_equal(rm_dirty_bytes(f), 2 * K);
		assert_int_equal(rm_fsync(f), 0);
		chk(f);
		assert_cached(f, 0, RM_DATA, RM_DATA);
		assert_int_equal(rm_dirty_bytes(f), 0);
		rm_file_free(f);
	}
}

static void test_w1_write_over_unwritten_stays_unwritten(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *f = mk(p, k, K, 0);
		assert_int_equal(rm_fallocate(f, 0, 0, 4 * K), 0);
		wr(f, K, K);
		assert_cached(f, K, RM_UNWRITTEN, UNWR);
		assert_after(f, K, RM_DATA, UNWR);	/* M5 as before */
		/* a clean block: as after write-back (ext4: M3 latitude) */
		assert_cached(f, 0, RM_UNWRITTEN, after_at(f, 0).may);
		assert_int_equal(rm_fdatasync(f), 0);
		chk(f);
		assert_cached(f, K, RM_DATA, RM_DATA);
		assert_after(f, K, RM_DATA, RM_DATA);
		rm_file_free(f);
	}
}

static void test_w1_write_over_written_is_data(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *f = mk(p, k, K, 0);
		wr(f, 0, K);
		assert_int_equal(rm_fsync(f), 0);
		wr(f, 0, 100);
		assert_cached(f, 0, RM_DATA, UNWR);
		assert_int_equal(rm_dirty_bytes(f), K);
		rm_file_free(f);
	}
}

/* W3: FIEMAP without FIEMAP_FLAG_SYNC */
static void test_w3_fiemap_cached_flags(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *f = mk(p, k, K, 0);
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_KEEP_SIZE, 4 * K, K), 0);
		wr(f, 0, 2 * K);
		struct rm_extent e[4];
		assert_int_equal(rm_fiemap_cached(f, 0, 8 * K, e, 4), 2);
		assert_int_equal(e[0].logical, 0);
		assert_int_equal(e[0].length, 2 * K);
		assert_int_equal(e[0].flags, RM_FIEMAP_DELALLOC | RM_FIEMAP_UNKNOWN);
		assert_int_equal(e[1].flags, RM_FIEMAP_UNWRITTEN | RM_FIEMAP_LAST);
		/* after write-back (FIEMAP_FLAG_SYNC): as today */
		assert_int_equal(rm_fiemap(f, 0, 8 * K, e, 4), 2);
		assert_int_equal(e[0].flags, 0);
		assert_int_equal(rm_fiemap_cached(f, 0, 0, e, 4), -EINVAL);
		rm_file_free(f);
	}
}

/* rm_opts.write_through: nothing is ever dirty, and the after-write-back
 * answers do not depend on it */
static void test_write_through_and_unchanged_answers(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *a = mk(p, k, K, 0), *b = mk(p, k, K, 1);
		struct rm_file *fs[2] = { a, b };
		for (int i = 0; i < 2; i++) {
			struct rm_file *f = fs[i];
			wr(f, 0, 3 * K + 5);
			assert_int_equal(rm_fallocate(f, 0, 5 * K, 2 * K), 0);
			wr(f, 5 * K + 10, 10);
			assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE,
						      K + 7, K), 0);
			assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_INSERT_RANGE, K, K), 0);
			assert_int_equal(rm_truncate(f, 9 * K - 3), 0);
			wr(f, 7 * K, 10);
			chk(f);
		}
		char ma[512], mb[512];
		map_str(a, ma, sizeof(ma));
		map_str(b, mb, sizeof(mb));
		assert_string_equal(ma, mb);
		assert_int_equal(rm_lseek(a, 0, RM_SEEK_HOLE), rm_lseek(b, 0, RM_SEEK_HOLE));
		assert_true(rm_dirty_bytes(a) > 0);
		assert_int_equal(rm_dirty_bytes(b), 0);
		/* write-through: the cached view is the after-write-back one
		 * (plus XFS's delalloc latitude of speculative preallocation) */
		struct one o = cached_at(b, 0);
		assert_int_equal(o.state, RM_DATA);
		rm_file_free(a);
		rm_file_free(b);
	}
}

/* W5: fallocate over a delayed allocation makes it unwritten, still dirty */
static void test_w5_falloc_over_delalloc_is_unwritten(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *f = mk(p, k, K, 0);
		wr(f, 0, 2 * K);
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_KEEP_SIZE, 0, 4 * K), 0);
		chk(f);
		assert_cached(f, 0, RM_UNWRITTEN, UNWR);
		assert_cached(f, 2 * K, RM_UNWRITTEN, after_at(f, 2 * K).may);
		assert_after(f, 0, RM_DATA, RM_DATA);
		assert_int_equal(rm_dirty_bytes(f), 2 * K);
		assert_int_equal(rm_fsync(f), 0);
		assert_cached(f, 0, RM_DATA, RM_DATA);
		rm_file_free(f);
	}
}

/* W6/W7: punch writes back (ext4 6.1: the range when the file has dirty
 * pages; XFS: the range rounded out to pages; ext4 6.12: nothing) */
static void test_w6_w7_punch_writeback(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *f = mk(p, k, K, 0);
		wr(f, 0, 4 * K);
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE,
					      K + 100, K - 100), 0);
		chk(f);
		/* block 1 was zeroed in part: dirty again, over written blocks
		 * where it was written back first */
		if (p == RM_PROFILE_EXT4 && k == RM_KERNEL_6_12)
			assert_cached(f, K, RM_DELALLOC, DELA);
		else
			assert_cached(f, K, RM_DATA, UNWR);
		assert_cached(f, 0, RM_DELALLOC, DELA);
		assert_cached(f, 2 * K, RM_DELALLOC, DELA);
		rm_file_free(f);
	}
}

/* W8: an XFS punch reaching an EOF inside a page writes back that page */
static void test_w8_xfs_punch_to_eof_writes_eof_page(void **st)
{
	(void)st;
	for (int ki = 0; ki < 2; ki++) {
		struct rm_file *f = mk(RM_PROFILE_XFS, kerns[ki], 1024, 0);
		wr(f, 0, 10000);
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE,
					      9500, 3000), 0);
		chk(f);
		assert_cached(f, 0, RM_DELALLOC, DELA);
		assert_cached(f, 8192, RM_DATA, RM_DATA);	/* flushed, then zeroed and flushed */
		assert_cached(f, 9216, RM_DATA, RM_DATA);
		rm_file_free(f);
	}
}

/* W6/W7: insert and collapse write back from off (XFS: from the block
 * before) to EOF */
static void test_w6_w7_shift_writeback(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *f = mk(p, k, K, 0);
		wr(f, 0, 8 * K);
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_INSERT_RANGE, 4 * K, K), 0);
		chk(f);
		assert_cached(f, 0, RM_DELALLOC, DELA);
		assert_cached(f, 2 * K, RM_DELALLOC, DELA);
		if (p == RM_PROFILE_XFS)
			assert_cached(f, 3 * K, RM_DATA, RM_DATA);
		else
			assert_cached(f, 3 * K, RM_DELALLOC, DELA);
		assert_cached(f, 4 * K, RM_HOLE, RM_HOLE);
		assert_cached(f, 5 * K, RM_DATA, RM_DATA);
		wr(f, 0, 9 * K);
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_COLLAPSE_RANGE, 4 * K, K), 0);
		chk(f);
		assert_cached(f, 2 * K, RM_DELALLOC, DELA);
		assert_cached(f, 4 * K, RM_DATA, RM_DATA);
		assert_cached(f, 7 * K, RM_DATA, RM_DATA);
		assert_int_equal(rm_dirty_bytes(f), p == RM_PROFILE_XFS ? 3 * K : 4 * K);
		rm_file_free(f);
	}
}

static void compare_views(struct rm_file *a, struct rm_file *b, bool synced, const char *what);

/* An insert writes back many separate dirty blocks (each its own segment,
 * cleaned in place) and dirty blocks that, once clean, merge with their
 * clean neighbours (in their node, or by a range operation): the tree
 * stays canonical (chk: no unmerged neighbours), nothing stays dirty past
 * off, and the after-write-back map is the write-through file's. */
static void test_writeback_many_segments(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *a = mk(p, k, K, 0), *b = mk(p, k, K, 1);
		for (int i = 0; i < 200; i++) {
			wr(a, 2 * i * K, K);
			wr(b, 2 * i * K, K);
		}
		/* two blocks of one buffer; the first written back alone */
		wr(a, 400 * K, 2 * K);
		wr(b, 400 * K, 2 * K);
		unsigned all = RM_SYNC_FILE_RANGE_WAIT_BEFORE | RM_SYNC_FILE_RANGE_WRITE |
			       RM_SYNC_FILE_RANGE_WAIT_AFTER;
		assert_int_equal(rm_sync_file_range(a, 400 * K, K, all), 0);
		chk(a);
		assert_int_equal(rm_dirty_bytes(a), 201 * K);
		/* three blocks of one buffer; the outer two written back:
		 * the middle one, once clean, merges with both */
		wr(a, 404 * K, 3 * K);
		wr(b, 404 * K, 3 * K);
		assert_int_equal(rm_sync_file_range(a, 404 * K, K, all), 0);
		assert_int_equal(rm_sync_file_range(a, 406 * K, K, all), 0);
		chk(a);
		assert_int_equal(rm_dirty_bytes(a), 202 * K);
		assert_int_equal(rm_fallocate(a, RM_FALLOC_FL_INSERT_RANGE, 0, K), 0);
		assert_int_equal(rm_fallocate(b, RM_FALLOC_FL_INSERT_RANGE, 0, K), 0);
		assert_int_equal(rm_dirty_bytes(a), 0);
		compare_views(a, b, false, "insert over 202 dirty segments");
		rm_file_free(a);
		rm_file_free(b);
	}
}

/* XFS 6.1 flushes the collapse range before its checks: a refused
 * collapse still writes back; 6.12 and ext4 check first */
static void test_w7_xfs61_refused_collapse_flushes(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *f = mk(p, k, K, 0);
		wr(f, 0, 4 * K);
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_COLLAPSE_RANGE, K, 3 * K), -EINVAL);
		chk(f);
		bool flushed = p == RM_PROFILE_XFS && k == RM_KERNEL_6_1;
		assert_int_equal(rm_dirty_bytes(f), flushed ? K : 4 * K);
		rm_file_free(f);
	}
}

/* zero range: ext4 drops the interior pages (unwritten, clean) and
 * allocates the edges under their dirty pages; XFS flushes first */
static void test_zero_range_over_dirty(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *f = mk(p, k, K, 0);
		wr(f, 0, 4 * K);
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_ZERO_RANGE, 100, 2 * K), 0);
		chk(f);
		assert_cached(f, K, RM_UNWRITTEN, RM_UNWRITTEN);
		if (p == RM_PROFILE_EXT4)
			assert_cached(f, 0, RM_UNWRITTEN, UNWR);	/* W5 on the edge */
		else
			assert_cached(f, 0, RM_DATA, UNWR);	/* flushed, zeroed: dirty */
		/* XFS flushed [0, 4k) only */
		assert_cached(f, 3 * K, RM_DELALLOC, DELA);
		rm_file_free(f);
	}
}

/* truncate frees dirty blocks past EOF; the partial last block is zeroed
 * and stays dirty */
static void test_truncate_over_dirty(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *f = mk(p, k, K, 0);
		wr(f, 0, 4 * K);
		assert_int_equal(rm_truncate(f, K + 10), 0);
		chk(f);
		assert_int_equal(rm_dirty_bytes(f), 2 * K);
		assert_cached(f, K, RM_DELALLOC, DELA);
		assert_cached(f, 2 * K, RM_HOLE, p == RM_PROFILE_XFS ? after_at(f, 2 * K).may |
			      (after_at(f, 2 * K).may & RM_DATA ? RM_DELALLOC : 0) : RM_HOLE);
		assert_int_equal(rm_truncate(f, 8 * K), 0);
		chk(f);
		assert_int_equal(rm_dirty_bytes(f), 2 * K);
		rm_file_free(f);
	}
}

/* W4: sync_file_range */
static void test_w4_sync_file_range(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *f = mk(p, k, K, 0);
		wr(f, 0, 4 * K);
		assert_int_equal(rm_sync_file_range(f, 0, 0, 8), -EINVAL);
		assert_int_equal(rm_sync_file_range(f, -1, 0, 2), -EINVAL);
		assert_int_equal(rm_sync_file_range(f, 10, -5, 2), -EINVAL);
		assert_int_equal(rm_sync_file_range(f, INT64_MAX, 1, 2), -EINVAL);
		/* waits alone start nothing */
		assert_int_equal(rm_sync_file_range(f, 0, 0, RM_SYNC_FILE_RANGE_WAIT_BEFORE |
						       RM_SYNC_FILE_RANGE_WAIT_AFTER), 0);
		assert_int_equal(rm_dirty_bytes(f), 4 * K);
		/* WRITE: allocated at submission, in flight */
		assert_int_equal(rm_sync_file_range(f, K, K, RM_SYNC_FILE_RANGE_WRITE), 0);
		chk(f);
		assert_int_equal(rm_dirty_bytes(f), 3 * K);
		assert_cached(f, K, RM_UNWRITTEN, UNWR);
		assert_cached(f, 0, RM_DELALLOC, DELA);
		/* redirtied while in flight: a second WRITE skips it */
		wr(f, K, 10);
		assert_int_equal(rm_sync_file_range(f, K, K, RM_SYNC_FILE_RANGE_WRITE), 0);
		assert_int_equal(rm_dirty_bytes(f), 4 * K);
		assert_cached(f, K, RM_UNWRITTEN, UNWR);
		/* WAIT_AFTER: the I/O completed, the page is still dirty */
		assert_int_equal(rm_sync_file_range(f, K, K, RM_SYNC_FILE_RANGE_WAIT_AFTER), 0);
		chk(f);
		assert_cached(f, K, RM_DATA, UNWR);
		assert_int_equal(rm_dirty_bytes(f), 4 * K);
		/* all three: written and waited for */
		assert_int_equal(rm_sync_file_range(f, 0, 2 * K, 7), 0);
		chk(f);
		assert_cached(f, 0, RM_DATA, RM_DATA);
		assert_cached(f, K, RM_DATA, RM_DATA);
		assert_int_equal(rm_dirty_bytes(f), 2 * K);
		rm_file_free(f);
	}
}

/* rm_writeback of a range, over pending unwritten blocks too */
static void test_writeback_range(void **st)
{
	(void)st;
	EACH(p, k) {
		struct rm_file *f = mk(p, k, K, 0);
		assert_int_equal(rm_fallocate(f, 0, 0, 4 * K), 0);
		wr(f, 0, 4 * K);
		assert_int_equal(rm_writeback(f, K, K), 0);
		chk(f);
		assert_cached(f, K, RM_DATA, RM_DATA);
		assert_after(f, K, RM_DATA, RM_DATA);
		assert_cached(f, 0, RM_UNWRITTEN, UNWR);
		assert_after(f, 0, RM_DATA, UNWR);
		assert_int_equal(rm_writeback(f, -1, K), -EINVAL);
		assert_int_equal(rm_writeback(f, 0, 0), 0);
		assert_int_equal(rm_dirty_bytes(f), 0);
		assert_after(f, 0, RM_DATA, RM_DATA);
		rm_file_free(f);
	}
}

/* W10: an mmap write dirties whole pages up to EOF */
static void test_w10_mwrite(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, RM_KERNEL_6_1, 1024, 0);
	unsigned char b[100], r[4096];
	memset(b, 0x77, sizeof(b));
	assert_int_equal(rm_truncate(f, 10000), 0);
	assert_int_equal(rm_mwrite(f, b, 0, 5000), 0);
	assert_int_equal(rm_mwrite(f, b, 100, 5000), 100);
	chk(f);
	assert_int_equal(rm_dirty_bytes(f), 4096);
	assert_cached(f, 4096, RM_DELALLOC, DELA);
	assert_cached(f, 7168, RM_DELALLOC, DELA);
	assert_cached(f, 8192, RM_HOLE, RM_HOLE);
	/* the last page: blocks up to EOF; bytes past EOF are dropped */
	assert_int_equal(rm_mwrite(f, b, 100, 9990), 100);
	chk(f);
	assert_int_equal(rm_size(f), 10000);
	assert_int_equal(rm_dirty_bytes(f), 4096 + 2048);
	assert_cached(f, 10240, RM_HOLE, RM_HOLE);
	/* a page wholly past EOF: SIGBUS */
	assert_int_equal(rm_mwrite(f, b, 10, 12288), -EFAULT);
	assert_int_equal(rm_mwrite(f, b, 10, -1), -EINVAL);
	assert_int_equal(rm_fsync(f), 0);
	assert_after(f, 4096, RM_DATA, RM_DATA);
	assert_int_equal(rm_pread(f, r, 4096, 4096), 4096);
	for (int i = 0; i < 4096; i++)
		assert_int_equal(r[i], i >= 904 && i < 1004 ? 0x77 : 0);
	rm_file_free(f);
}

/* D-DT14: ext4 with 1 KiB blocks: the whole blocks a zero range makes
 * unwritten inside a page that stays dirty may be written at write-back */
static void test_ddt14_zero_in_dirty_page(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_EXT4, RM_KERNEL_6_1, 1024, 0);
	unsigned char b[8192];
	memset(b, 0xbb, sizeof(b));
	assert_int_equal(rm_truncate(f, 3 * 4096), 0);
	assert_int_equal(rm_mwrite(f, b, 8192, 4096), 8192);
	/* blocks 5..6 of page 1 (blocks 4..7); block 7 stays dirty */
	assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_ZERO_RANGE, 5 * 1024, 2 * 1024), 0);
	chk(f);
	assert_int_equal(rm_fsync(f), 0);
	assert_after(f, 5 * 1024, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
	assert_after(f, 7 * 1024, RM_DATA, RM_DATA);
	/* a zero range over a whole clean page: unwritten, nothing else */
	assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_ZERO_RANGE, 8 * 1024, 4 * 1024), 0);
	chk(f);
	assert_after(f, 9 * 1024, RM_UNWRITTEN, RM_UNWRITTEN);
	rm_file_free(f);
}

/* An XFS 6.1 file of 1 KiB blocks, 16 KiB of holes, and *src, one written
 * block; share: block 12 of the file cloned from it (a reflink inode). */
static struct rm_file *mk_xfs_16k(struct rm_file **src, int share)
{
	struct rm_file *g = mk(RM_PROFILE_XFS, RM_KERNEL_6_1, 1024, 0);
	unsigned char one[1024];

	*src = mk(RM_PROFILE_XFS, RM_KERNEL_6_1, 1024, 0);
	memset(one, 0x5c, sizeof(one));
	assert_int_equal(rm_pwrite(*src, one, 1024, 0), 1024);
	assert_int_equal(rm_truncate(g, 16384), 0);
	if (share)
		assert_int_equal(rm_clone_range(g, *src, 0, 12288, 1024), 0);
	return g;
}

/* D-DT11: XFS on 6.1 with 1 KiB blocks: a write dirties its whole page,
 * whose other unwritten blocks inside EOF may be written at write-back;
 * not on 6.12 (per-block dirty state), not with page-size blocks, not
 * write-through (fusefs), and not in pages the write does not touch. */
static void test_ddt11_xfs_write_page_unwritten(void **st)
{
	(void)st;
	static const struct { enum rm_kernel k; uint32_t bs; int wt; unsigned may; } c[] = {
		{ RM_KERNEL_6_1, 1024, 0, RM_UNWRITTEN | RM_DATA },
		{ RM_KERNEL_6_1, 2048, 0, RM_UNWRITTEN | RM_DATA },
		{ RM_KERNEL_6_12, 1024, 0, RM_UNWRITTEN },
		{ RM_KERNEL_6_1, 1024, 1, RM_UNWRITTEN },
	};
	unsigned char b[2] = { 0x49, 0x49 };

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct rm_file *f = mk(RM_PROFILE_XFS, c[i].k, c[i].bs, c[i].wt);
		/* the QEMU case: falloc 1452 32518; pwrite -S 0x49 3562 2 */
		assert_int_equal(rm_fallocate(f, 0, 1452, 32518), 0);
		assert_int_equal(rm_pwrite(f, b, 2, 3562), 2);
		chk(f);
		assert_int_equal(rm_fsync(f), 0);
		chk(f);
		int64_t wb = 3562 / c[i].bs * c[i].bs;	/* the written block */
		assert_after(f, wb, RM_DATA, RM_DATA);
		/* the unwritten block before it, in the same page */
		assert_true(wb - c[i].bs >= 1452 / c[i].bs * c[i].bs);
		assert_after(f, wb - c[i].bs, RM_UNWRITTEN, c[i].may);
		assert_after(f, wb + c[i].bs, RM_UNWRITTEN, wb + c[i].bs < 4096 ? c[i].may :
			     RM_UNWRITTEN);
		/* the next page, untouched: plain unwritten */
		assert_after(f, 8192, RM_UNWRITTEN, RM_UNWRITTEN);
		rm_file_free(f);
	}
	/* zeroing part of a written block dirties its page too: a punch
	 * (xfs_free_file_space()) and a truncate (xfs_truncate_page()) */
	for (int k = 0; k < 2; k++) {
		enum rm_kernel kern = k ? RM_KERNEL_6_12 : RM_KERNEL_6_1;
		unsigned may = k ? RM_UNWRITTEN : RM_UNWRITTEN | RM_DATA;
		struct rm_file *g = mk(RM_PROFILE_XFS, kern, 1024, 0);
		unsigned char blk[1024];
		memset(blk, 0x41, sizeof(blk));
		/* block 0 written, 1..3 plain unwritten inside EOF (the
		 * truncates drop XFS's speculative preallocation, M1) */
		assert_int_equal(rm_pwrite(g, blk, 1024, 0), 1024);
		assert_int_equal(rm_fsync(g), 0);
		assert_int_equal(rm_truncate(g, 1024), 0);
		assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_KEEP_SIZE, 1024, 3072), 0);
		assert_int_equal(rm_truncate(g, 4096), 0);
		assert_int_equal(rm_fsync(g), 0);
		assert_after(g, 1024, RM_UNWRITTEN, RM_UNWRITTEN);
		assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE,
					      1, 1), 0);
		chk(g);
		assert_int_equal(rm_fsync(g), 0);
		assert_after(g, 1024, RM_UNWRITTEN, may);
		rm_file_free(g);

		g = mk(RM_PROFILE_XFS, kern, 1024, 0);
		assert_int_equal(rm_pwrite(g, blk, 1024, 3072), 1024);
		assert_int_equal(rm_fsync(g), 0);
		assert_int_equal(rm_truncate(g, 4096), 0);
		assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_KEEP_SIZE, 0, 3072), 0);
		assert_int_equal(rm_fsync(g), 0);
		assert_after(g, 0, RM_UNWRITTEN, RM_UNWRITTEN);
		assert_int_equal(rm_truncate(g, 3073), 0);
		chk(g);
		assert_int_equal(rm_fsync(g), 0);
		assert_after(g, 0, RM_UNWRITTEN, may);
		rm_file_free(g);
	}
	/* growing past an EOF inside a written block zeroes its tail
	 * (iomap_zero_range() from the old EOF): its page is dirtied */
	for (int k = 0; k < 2; k++) {
		struct rm_file *g = mk(RM_PROFILE_XFS, RM_KERNEL_6_1, 1024, 0);
		assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_KEEP_SIZE, 1024, 3072), 0);
		assert_int_equal(rm_pwrite(g, b, 2, 0), 2);	/* EOF 2: block 0 */
		assert_int_equal(rm_fsync(g), 0);
		assert_after(g, 1024, RM_UNWRITTEN, RM_UNWRITTEN);	/* past EOF */
		if (k)
			assert_int_equal(rm_truncate(g, 4096), 0);
		else
			assert_int_equal(rm_pwrite(g, b, 2, 8192), 2);
		chk(g);
		assert_int_equal(rm_fsync(g), 0);
		assert_after(g, 1024, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
		rm_file_free(g);
	}
	/* an insert grows the size first (xfs_vn_setattr_size() zeroes the
	 * old EOF block's tail, dirtying its page), then writes back and
	 * shifts: the page's unwritten blocks travel with their latitude
	 * (QEMU, 6.1, 1 KiB: "fzero 7276544 7168; truncate 7283712; pwrite
	 * 7283712 11; finsert 3725312 5120; finsert 2142208 3072" leaves the
	 * block zeroed at 7111 written, now at 7119) */
	{
		struct rm_file *g = mk(RM_PROFILE_XFS, RM_KERNEL_6_1, 1024, 0);
		assert_int_equal(rm_pwrite(g, b, 2, 6144), 2);	/* EOF 6146: block 6 */
		assert_int_equal(rm_truncate(g, 6146), 0);	/* no M1 past it */
		assert_int_equal(rm_fsync(g), 0);
		assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_KEEP_SIZE, 4096, 2048), 0);
		assert_int_equal(rm_fsync(g), 0);
		assert_after(g, 4096, RM_UNWRITTEN, RM_UNWRITTEN);	/* page 1, clean */
		assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_INSERT_RANGE, 0, 1024), 0);
		chk(g);
		assert_int_equal(rm_fsync(g), 0);
		/* blocks 4, 5 moved to 5, 6 with the latitude page 1 gave them */
		assert_after(g, 5 * 1024, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
		assert_after(g, 6 * 1024, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
		rm_file_free(g);
	}
	/* unshare on a reflink inode may write its range back
	 * (xfs_reflink_unshare(), unless the flag was cleared): a page a
	 * write dirtied before the unshare allocated its holes may be
	 * written whole (QEMU, 6.1, 2 KiB:
	 * "dedupe ...; pwrite 444416 6; fmode 0x41 421888 145408" leaves
	 * block 216, a hole before, written) */
	{
		struct rm_file *src, *g = mk_xfs_16k(&src, 1);	/* reflink inode */
		assert_int_equal(rm_pwrite(g, b, 2, 1024), 2);	/* block 1, page 0 */
		assert_true(rm_dirty_bytes(g) > 0);
		assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_UNSHARE_RANGE | RM_FALLOC_FL_KEEP_SIZE,
					      0, 8192), 0);
		chk(g);
		assert_true(rm_dirty_bytes(g) > 0);	/* the write-back is not assumed */
		assert_after(g, 0, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
		rm_file_free(g);
		rm_file_free(src);
	}
	/* unwritten blocks made in a page a write dirtied before may be
	 * written from then on, by any of XFS's own write-backs (QEMU, 6.1,
	 * 1 KiB: xfs_setattr_size() wrote back from the on-disk size, and
	 * "truncate 3590807" left block 2743, far below it, written) */
	{
		struct rm_file *g = mk(RM_PROFILE_XFS, RM_KERNEL_6_1, 1024, 0);
		assert_int_equal(rm_truncate(g, 16384), 0);
		assert_int_equal(rm_pwrite(g, b, 2, 3072), 2);	/* block 3, page 0 */
		assert_after(g, 0, RM_HOLE, RM_HOLE);
		assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_KEEP_SIZE, 0, 3072), 0);
		chk(g);
		assert_after(g, 0, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
		assert_int_equal(rm_truncate(g, 20000), 0);
		assert_after(g, 0, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
		rm_file_free(g);
	}
	/* a fallocate that grows the size allocates first, then zeroes from
	 * the old EOF (QEMU, 6.1, 1 KiB: EOF inside written block 12066,
	 * "falloc 12355599 3072" leaves block 12067 written at once) */
	{
		struct rm_file *g = mk(RM_PROFILE_XFS, RM_KERNEL_6_1, 1024, 0);
		assert_int_equal(rm_pwrite(g, b, 2, 1024), 2);	/* EOF 1026: block 1 */
		assert_int_equal(rm_truncate(g, 1026), 0);	/* no M1 past it */
		assert_int_equal(rm_fsync(g), 0);
		assert_int_equal(rm_fallocate(g, 0, 1026, 3072), 0);
		chk(g);
		assert_int_equal(rm_fsync(g), 0);
		assert_after(g, 2048, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
		assert_after(g, 4096, RM_UNWRITTEN, RM_UNWRITTEN);	/* page 1 */
		rm_file_free(g);
	}
	/* a fallocate after the write, into the page it dirtied: the
	 * write-back writes the page's uptodate blocks (QEMU, 6.1, 1 KiB:
	 * "pwrite 870400 62900; falloc -k 808959 62524" leaves blocks 848,
	 * 849 written); fsync and sync_file_range's write alike */
	for (int k = 0; k < 2; k++) {
		struct rm_file *g = mk(RM_PROFILE_XFS, RM_KERNEL_6_1, 1024, 0);
		assert_int_equal(rm_truncate(g, 8192), 0);
		assert_int_equal(rm_pwrite(g, b, 2, 2048), 2);	/* block 2, page 0 */
		assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_KEEP_SIZE, 0, 2048), 0);
		if (k)
			assert_int_equal(rm_sync_file_range(g, 0, 4096, RM_SYNC_FILE_RANGE_WRITE |
							    RM_SYNC_FILE_RANGE_WAIT_AFTER), 0);
		else
			assert_int_equal(rm_fsync(g), 0);
		chk(g);
		assert_after(g, 0, RM_UNWRITTEN, RM_UNWRITTEN | RM_DATA);
		rm_file_free(g);
	}
	/* a block D-DT11 may have written is zeroed in part by a punch or a
	 * zero range as a written one is (iomap_zero_range()), dirtying its
	 * page: the page's other unwritten blocks, also those the zero range
	 * makes, may be written (QEMU, 6.1, 1 KiB: after "fzero 10734
	 * 308224" wrote block 1 through its dirty page, "fzero 1754 317440"
	 * and a read left blocks 2 and 3 written; a direct read of them
	 * answered EINVAL) */
	for (int k = 0; k < 3; k++) {
		enum rm_kernel kern = k == 2 ? RM_KERNEL_6_12 : RM_KERNEL_6_1;
		unsigned may = k == 2 ? RM_UNWRITTEN : RM_UNWRITTEN | RM_DATA;
		struct rm_file *g = mk(RM_PROFILE_XFS, kern, 1024, 0);
		assert_int_equal(rm_truncate(g, 8192), 0);
		assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_KEEP_SIZE, 1024, 1024), 0);
		assert_int_equal(rm_pwrite(g, b, 2, 0), 2);	/* block 0, page 0 */
		assert_int_equal(rm_fsync(g), 0);
		assert_after(g, 1024, RM_UNWRITTEN, may);	/* block 1 */
		if (k == 1) {
			/* blocks 2, 3 unwritten while the page is clean */
			assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_KEEP_SIZE, 2048, 2048), 0);
			assert_int_equal(rm_fsync(g), 0);
			assert_after(g, 2048, RM_UNWRITTEN, RM_UNWRITTEN);
			assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_PUNCH_HOLE |
						      RM_FALLOC_FL_KEEP_SIZE, 1500, 10), 0);
		} else {
			assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_ZERO_RANGE, 1500, 2596), 0);
		}
		chk(g);
		assert_int_equal(rm_fsync(g), 0);
		assert_after(g, 2048, RM_UNWRITTEN, may);
		assert_after(g, 3072, RM_UNWRITTEN, may);
		rm_file_free(g);
	}
	/* on a reflink inode a hole of a dirty page may be written too: a
	 * CoW fork reservation (cowextsize) may cover it, and write-back
	 * maps the CoW fork first (QEMU, 6.1, 1 KiB: "copy_range f3 1037312
	 * 3335168 16384; pwrite 3341312 1024; pwrite 3329024 2048; fcollapse
	 * 3314688 6144" leaves holes 3253..3256 next to the second write
	 * written); a file that never shared a block keeps them */
	for (int k = 0; k < 2; k++) {
		struct rm_file *src, *g = mk_xfs_16k(&src, k);
		assert_int_equal(rm_pwrite(g, b, 2, 1024), 2);	/* block 1, page 0 */
		chk(g);
		assert_int_equal(rm_fsync(g), 0);
		assert_after(g, 0, RM_HOLE, k ? RM_HOLE | RM_DATA : RM_HOLE);
		assert_after(g, 2048, RM_HOLE, k ? RM_HOLE | RM_DATA : RM_HOLE);
		assert_after(g, 4096, RM_HOLE, RM_HOLE);	/* page 1, clean */
		rm_file_free(g);
		rm_file_free(src);
	}
	/* an insert grows the size before its flush: the unwritten block
	 * past the old EOF in the dirty EOF page comes inside and may be
	 * written, then moves with the shift (QEMU, 6.1, 1 KiB, the case
	 * itself: block 4135 written, now at 4143) */
	for (int k = 0; k < 2; k++) {
		enum rm_kernel kern = k ? RM_KERNEL_6_12 : RM_KERNEL_6_1;
		struct rm_file *g = mk(RM_PROFILE_XFS, kern, 1024, 0);
		unsigned char w[15];
		memset(w, 0x6f, sizeof(w));
		assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_ZERO_RANGE | RM_FALLOC_FL_KEEP_SIZE,
					      4225317, 2048), 0);
		assert_int_equal(rm_fallocate(g, 0, 4225024, 2048), 0);
		assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_INSERT_RANGE, 4225024, 7168), 0);
		assert_int_equal(rm_pwrite(g, w, 15, 4232192), 15);
		assert_after(g, 4135 * 1024, RM_UNWRITTEN, RM_UNWRITTEN);	/* past EOF */
		assert_int_equal(rm_fallocate(g, RM_FALLOC_FL_INSERT_RANGE, 4232192, 8192), 0);
		chk(g);
		assert_int_equal(rm_fsync(g), 0);
		assert_after(g, 4143 * 1024, RM_UNWRITTEN,
			     k ? RM_UNWRITTEN : RM_UNWRITTEN | RM_DATA);
		rm_file_free(g);
	}
	/* page-size blocks: a block is its page */
	struct rm_file *f = mk(RM_PROFILE_XFS, RM_KERNEL_6_1, 4096, 0);
	assert_int_equal(rm_fallocate(f, 0, 0, 16384), 0);
	assert_int_equal(rm_pwrite(f, b, 2, 4096), 2);
	assert_int_equal(rm_fsync(f), 0);
	assert_after(f, 0, RM_UNWRITTEN, RM_UNWRITTEN);
	assert_after(f, 8192, RM_UNWRITTEN, RM_UNWRITTEN);
	rm_file_free(f);
}

/* W5 + M3 (ext4_w5_m3()): on 6.1 ext4 with blocks smaller than the page
 * (no dioread_nolock), the write-back of a delayed block that fallocate
 * made unwritten converts it with zero-out, so the rest of the new
 * extent may be written after write-back; not with page-size blocks, nor
 * on 6.12 (dioread_nolock for every block size up to the page). */
static void test_w5_m3_writeback_zeroout(void **st)
{
	(void)st;
	static const struct { enum rm_kernel k; uint32_t bs; unsigned may; } c[] = {
		{ RM_KERNEL_6_1, 1024, RM_UNWRITTEN | RM_DATA },
		{ RM_KERNEL_6_1, 4096, RM_UNWRITTEN },
		{ RM_KERNEL_6_12, 1024, RM_UNWRITTEN },
	};
	unsigned char b[3] = { 0xa0, 0xa0, 0xa0 };

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct rm_file *f = mk(RM_PROFILE_EXT4, c[i].k, c[i].bs, 0);
		int64_t a = 1060 * (int64_t)c[i].bs;

		/* the QEMU case: pwrite -S 0xa0 1085440 3; falloc 1085440 2048 */
		assert_int_equal(rm_pwrite(f, b, 3, a), 3);
		assert_int_equal(rm_fallocate(f, 0, a, 2 * c[i].bs), 0);
		chk(f);
		assert_after(f, a + c[i].bs, RM_UNWRITTEN, c[i].may);
		assert_int_equal(rm_fsync(f), 0);
		chk(f);
		assert_after(f, a, RM_DATA, RM_DATA);
		assert_after(f, a + c[i].bs, RM_UNWRITTEN, c[i].may);
		/* a clean file: fallocate alone leaves plain unwritten blocks */
		assert_int_equal(rm_fallocate(f, 0, a + 8 * c[i].bs, 2 * c[i].bs), 0);
		assert_after(f, a + 9 * c[i].bs, RM_UNWRITTEN, RM_UNWRITTEN);
		rm_file_free(f);
	}
}

/* D-DT15 through a zero range: its edge preallocation makes delayed
 * blocks unwritten under their dirty page, and their write-back may zero
 * out the interior the zero range made unwritten (6.1, blocks < page) */
static void test_w5_m3_zero_range_edges(void **st)
{
	(void)st;
	static const struct { enum rm_kernel k; uint32_t bs; unsigned may; } c[] = {
		{ RM_KERNEL_6_1, 2048, RM_UNWRITTEN | RM_DATA },
		{ RM_KERNEL_6_1, 4096, RM_UNWRITTEN },
		{ RM_KERNEL_6_12, 2048, RM_UNWRITTEN },
	};
	static unsigned char b[43004];

	memset(b, 0x9d, sizeof(b));
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct rm_file *f = mk(RM_PROFILE_EXT4, c[i].k, c[i].bs, 0);

		/* the QEMU case (2 KiB blocks): pwrite 829444 43004 (blocks 405
		 * to 425 delayed); fzero -k 866383 10161 (edge block 423,
		 * interior 424-427) */
		assert_int_equal(rm_pwrite(f, b, sizeof(b), 829444), (int64_t)sizeof(b));
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_ZERO_RANGE | RM_FALLOC_FL_KEEP_SIZE,
					      866383, 10161), 0);
		chk(f);
		assert_int_equal(rm_fsync(f), 0);
		chk(f);
		assert_after(f, 868352, RM_UNWRITTEN, c[i].may);
		rm_file_free(f);
	}
}

/* W11: clone writes back the source and destination ranges */
static void test_w11_clone_writes_back(void **st)
{
	(void)st;
	for (int ki = 0; ki < 2; ki++) {
		struct rm_file *s = mk(RM_PROFILE_XFS, kerns[ki], K, 0);
		struct rm_file *d = mk(RM_PROFILE_XFS, kerns[ki], K, 0);
		wr(s, 0, 4 * K);
		wr(d, 0, 4 * K);
		assert_int_equal(rm_clone_range_wb(d, s, K, K, 2 * K), 0);
		chk(s);
		chk(d);
		assert_cached(s, 0, RM_DELALLOC, DELA | RM_HOLE);	/* W13: a reflink inode now */
		assert_cached(s, K, RM_DATA, RM_DATA);
		assert_cached(d, K, RM_DATA, RM_DATA);
		assert_cached(d, 3 * K, RM_DELALLOC, DELA | RM_HOLE);
		/* refused by generic_remap_checks(): nothing written back */
		wr(s, 0, 4 * K);
		assert_int_equal(rm_clone_range_wb(d, s, 100, K, K), -EINVAL);
		assert_int_equal(rm_dirty_bytes(s), 4 * K);
		/* the const variant writes back nothing */
		assert_int_equal(rm_clone_range(d, s, 0, 0, K), 0);
		assert_int_equal(rm_dirty_bytes(s), 4 * K);
		rm_file_free(s);
		rm_file_free(d);
	}
}

/* W11, a clone past EOF: the destination is flushed from its EOF; on 6.1
 * from the end of a delayed or written EOF block, which the zeroing of
 * xfs_reflink_zero_posteof() has put inside i_size, so it stays dirty
 * (measured in QEMU, 6.1.192 and a 6.18 host) */
static void test_w11_clone_past_eof(void **st)
{
	(void)st;
	for (int ki = 0; ki < 2; ki++) {
		struct rm_file *s = mk(RM_PROFILE_XFS, kerns[ki], K, 0);
		struct rm_file *d = mk(RM_PROFILE_XFS, kerns[ki], K, 0);
		wr(s, 0, 4 * K);
		unsigned char b[K + 100];
		memset(b, 0x64, sizeof(b));
		assert_int_equal(rm_pwrite(d, b, sizeof(b), K), (ssize_t)sizeof(b));
		assert_int_equal(rm_clone_range_wb(d, s, 0, 8 * K, K), 0);
		chk(d);
		if (kerns[ki] == RM_KERNEL_6_1) {
			assert_cached(d, K, RM_DELALLOC, DELA | RM_HOLE);
			assert_cached(d, 2 * K, RM_DELALLOC, DELA | RM_HOLE);
		} else {
			assert_int_equal(cached_at(d, 2 * K).state, RM_DATA);
		}
		/* W13: d is a reflink inode now: a delayed block may be in
		 * the CoW fork, a hole to FIEMAP */
		unsigned char z[K];
		memset(z, 1, sizeof(z));
		assert_int_equal(rm_pwrite(d, z, K, 20 * K), K);
		assert_cached(d, 20 * K, RM_DELALLOC, DELA | RM_HOLE);
		assert_cached(s, 0, RM_DATA, RM_DATA);
		/* an EOF block that is a hole is not zeroed: flushed from EOF */
		struct rm_file *h = mk(RM_PROFILE_XFS, kerns[ki], K, 0);
		assert_int_equal(rm_truncate(h, K + 100), 0);
		assert_int_equal(rm_clone_range_wb(h, s, 0, 8 * K, K), 0);
		chk(h);
		assert_int_equal(cached_at(h, K).state, RM_HOLE);
		rm_file_free(s);
		rm_file_free(d);
		rm_file_free(h);
	}
}

/* XFS speculative preallocation past EOF is delalloc in the cached view */
static void test_xfs_m1_cached_delalloc(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_XFS, RM_KERNEL_6_1, K, 0);
	wr(f, 0, K);
	struct one o = cached_at(f, 2 * K);
	assert_int_equal(o.state, RM_HOLE);
	assert_int_equal(o.may, RM_ANY | RM_DELALLOC);
	assert_after(f, 2 * K, RM_HOLE, RM_ANY);
	rm_file_free(f);
}

/* W1 after O3: a refused misaligned ext4 direct write may have freed the
 * unwritten blocks past EOF (delayed writes keep i_disksize below
 * i_size); a buffered write over them is then a delayed allocation, or
 * unwritten if they stayed (found by the observer-free 1e6 run on 6.12) */
static void test_w1_write_over_maybe_freed_block(void **st)
{
	(void)st;
	static unsigned char buf[2 * K];
	const enum rm_kernel ks[] = { RM_KERNEL_6_1, RM_KERNEL_6_12 };
	for (int i = 0; i < 2; i++) {
		struct rm_file *f = mk(RM_PROFILE_EXT4, ks[i], K, 0);
		wr(f, 0, 4 * K);
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_KEEP_SIZE, 4 * K, 4 * K), 0);
		assert_int_equal(rm_dio_pwrite(f, buf, K, 100, 512), -EINVAL);
		assert_after(f, 5 * K, RM_UNWRITTEN, RM_UNWRITTEN | RM_HOLE);
		wr(f, 4 * K, 2 * K);
		assert_cached(f, 5 * K, RM_UNWRITTEN, UNWR | RM_DELALLOC);
		/* fallocate allocates under a delayed allocation (W5): then
		 * unwritten only */
		assert_int_equal(rm_fallocate(f, 0, 4 * K, 2 * K), 0);
		assert_cached(f, 5 * K, RM_UNWRITTEN, UNWR);
		assert_int_equal(rm_fsync(f), 0);
		assert_cached(f, 5 * K, RM_DATA, RM_DATA);
		rm_file_free(f);

		/* a block that cannot have been freed stays unwritten */
		f = mk(RM_PROFILE_EXT4, ks[i], K, 0);
		assert_int_equal(rm_fallocate(f, RM_FALLOC_FL_KEEP_SIZE, 0, 4 * K), 0);
		wr(f, K, K);
		assert_cached(f, K, RM_UNWRITTEN, UNWR);
		rm_file_free(f);
	}
}

/* the bytes profile is write-through */
static void test_bytes_never_dirty(void **st)
{
	(void)st;
	struct rm_file *f = mk(RM_PROFILE_BYTES, RM_KERNEL_6_1, K, 0);
	wr(f, 3, 100);
	assert_int_equal(rm_dirty_bytes(f), 0);
	assert_cached(f, 3, RM_DATA, RM_DATA);
	rm_file_free(f);
	struct rm_opts o = { .profile = RM_PROFILE_EXT4, .write_through = 2 };
	assert_int_equal(rm_file_new(&o, &f), -EINVAL);
}

/* ---- random sequences with write-back points ----
 *
 * Two tree models of one profile get the same random operations: one
 * default (writes leave dirty blocks) and one write-through.  Dirty state
 * never changes an after-write-back answer, so their maps (rm_walk), sizes,
 * bytes and lseek answers must be identical after every operation; the
 * default one's cached view must allow at least what its after-write-back
 * view allows (write-back may have completed), and after an fsync the two
 * views agree (but for XFS's delalloc latitude of speculative
 * preallocation).  rm_check() holds on both throughout. */

struct walkbuf {
	struct rm_run r[512];
	size_t n;
};

static int walk_cb(void *ctx, const struct rm_run *r)
{
	struct walkbuf *w = ctx;
	if (w->n < sizeof(w->r) / sizeof(w->r[0]))
		w->r[w->n] = *r;
	w->n++;
	return 0;
}

static uint64_t rs_next(uint64_t *s)
{
	uint64_t x = (*s += 0x9e3779b97f4a7c15ull);
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* the may-set at off in a walk's runs */
static unsigned may_in(const struct walkbuf *w, int64_t off)
{
	for (size_t i = 0; i < w->n && i < 512; i++)
		if (off >= w->r[i].off && off < w->r[i].off + w->r[i].len)
			return w->r[i].may;
	return RM_HOLE;
}

static void compare_views(struct rm_file *a, struct rm_file *b, bool synced, const char *what)
{
	struct walkbuf wa = { .n = 0 }, wb = { .n = 0 }, wc = { .n = 0 };
	int64_t end = rm_map_end(a) > rm_size(a) ? rm_map_end(a) : rm_size(a);
	chk(a);
	chk(b);
	assert_int_equal(rm_size(a), rm_size(b));
	assert_true(rm_hash(a, 0, INT64_MAX) == rm_hash(b, 0, INT64_MAX));
	assert_int_equal(rm_walk(a, 0, end, walk_cb, &wa), 0);
	assert_int_equal(rm_walk(b, 0, end, walk_cb, &wb), 0);
	assert_int_equal(rm_walk_cached(a, 0, end, walk_cb, &wc), 0);
	int64_t bs = rm_blocksize(a);
	if (wa.n != wb.n || memcmp(wa.r, wb.r, (wa.n < 512 ? wa.n : 512) * sizeof(wa.r[0]))) {
		/* D-DT14: ext4 with blocks below the page size gives the
		 * default model more latitude (a zero range inside a dirty
		 * page), never another state; D-DT11 XFS on 6.1 too (a
		 * write's dirty page around unwritten blocks) */
		if ((rm_profile_of(a) != RM_PROFILE_EXT4 &&
		     (rm_profile_of(a) != RM_PROFILE_XFS || rm_kernel_of(a) != RM_KERNEL_6_1)) ||
		    bs >= 4096)
			fail_msg("after-write-back maps differ after %s", what);
		struct walkbuf sa = { .n = 0 }, sb = { .n = 0 };
		for (int64_t off = 0; off < end && off < 4096 * bs; off += bs) {
			sa.n = sb.n = 0;
			assert_int_equal(rm_walk(a, off, off + 1, walk_cb, &sa), 0);
			assert_int_equal(rm_walk(b, off, off + 1, walk_cb, &sb), 0);
			if (sa.r[0].state != sb.r[0].state || (sa.r[0].may & sb.r[0].may) != sb.r[0].may)
				fail_msg("after-write-back maps differ at %lld after %s: "
					 "state %u/%u may 0x%x/0x%x", (long long)off, what,
					 sa.r[0].state, sb.r[0].state, sa.r[0].may, sb.r[0].may);
		}
	}
	for (int64_t off = 0; off < end && off < 4096 * bs; off += bs) {
		unsigned after = may_in(&wa, off), cached = may_in(&wc, off);
		if ((after & cached) != after)
			fail_msg("cached may 0x%x lacks after-write-back 0x%x at %lld after %s",
				 cached, after, (long long)off, what);
		if (synced && (cached & ~RM_DELALLOC) != after)
			fail_msg("after fsync: cached may 0x%x != 0x%x at %lld after %s",
				 cached, after, (long long)off, what);
	}
	for (int64_t off = 0; off < rm_size(a); off += bs + 7) {
		assert_int_equal(rm_lseek(a, off, RM_SEEK_DATA), rm_lseek(b, off, RM_SEEK_DATA));
		assert_int_equal(rm_lseek(a, off, RM_SEEK_HOLE), rm_lseek(b, off, RM_SEEK_HOLE));
	}
}

static void test_random_sequences_with_writeback(void **st)
{
	(void)st;
	static unsigned char buf[3 * 4096];
	memset(buf, 0x3c, sizeof(buf));
	EACH(p, k) {
		for (uint32_t bs = 1024; bs <= 4096; bs *= 4) {
			uint64_t seed = 0x5eed0000u + (uint64_t)p * 16 + (uint64_t)k * 4 + bs;
			struct rm_file *a = mk(p, k, bs, 0), *b = mk(p, k, bs, 1);
			int64_t span = 48 * (int64_t)bs;
			for (int i = 0; i < 3000; i++) {
				char what[96];
				int64_t off = (int64_t)(rs_next(&seed) % (uint64_t)span);
				int64_t len = 1 + (int64_t)(rs_next(&seed) % (uint64_t)(3 * bs));
				int op = (int)(rs_next(&seed) % 15);
				bool synced = false;
				int ra = 0, rb = 0;
				if (op >= 5 && op <= 9) {	/* aligned for the shifts */
					off -= off % bs;
					len = bs * (1 + len / bs);
				}
				snprintf(what, sizeof(what), "op %d kind %d off %lld len %lld", i, op,
					 (long long)off, (long long)len);
				switch (op) {
				case 0: case 1: case 2:
					ra = (int)rm_pwrite(a, buf, (size_t)len, off);
					rb = (int)rm_pwrite(b, buf, (size_t)len, off);
					break;
				case 3:
					ra = rm_truncate(a, off);
					rb = rm_truncate(b, off);
					break;
				case 4:
					ra = rm_fallocate(a, RM_FALLOC_FL_KEEP_SIZE, off, len);
					rb = rm_fallocate(b, RM_FALLOC_FL_KEEP_SIZE, off, len);
					break;
				case 5:
					ra = rm_fallocate(a, RM_FALLOC_FL_INSERT_RANGE, off, len);
					rb = rm_fallocate(b, RM_FALLOC_FL_INSERT_RANGE, off, len);
					break;
				case 6:
					ra = rm_fallocate(a, RM_FALLOC_FL_COLLAPSE_RANGE, off, len);
					rb = rm_fallocate(b, RM_FALLOC_FL_COLLAPSE_RANGE, off, len);
					break;
				case 7: case 8: {
					int m = op == 7 ? RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE
							: RM_FALLOC_FL_ZERO_RANGE;
					ra = rm_fallocate(a, m, off + 100, len);
					rb = rm_fallocate(b, m, off + 100, len);
					break;
				}
				case 9:
					ra = (int)rm_mwrite(a, buf, (size_t)(len > 4096 ? 4096 : len), off);
					rb = (int)rm_mwrite(b, buf, (size_t)(len > 4096 ? 4096 : len), off);
					break;
				case 10:
					/* write-back points: both models, where the
					 * write-through one has nothing to write */
					ra = rm_writeback(a, off, len);
					rb = rm_writeback(b, off, len);
					break;
				case 11:
					ra = rm_sync_file_range(a, off, len,
								(unsigned)(1 + rs_next(&seed) % 7));
					rb = 0;
					break;
				case 12:
					ra = rm_fsync(a);
					rb = rm_fsync(b);
					synced = ra == 0;
					break;
				case 13:
					ra = rm_fallocate(a, RM_FALLOC_FL_UNSHARE_RANGE, off, len);
					rb = rm_fallocate(b, RM_FALLOC_FL_UNSHARE_RANGE, off, len);
					break;
				default:
					ra = rm_fdatasync(a);
					rb = rm_fdatasync(b);
					synced = ra == 0;
					break;
				}
				if (ra != rb)
					fail_msg("results %d != %d after %s", ra, rb, what);
				if (synced)
					assert_int_equal(rm_dirty_bytes(a), 0);
				/* sync_file_range may settle pending latitude in
				 * the default model only: resynchronise by
				 * fsyncing both then */
				if (op == 11) {
					assert_int_equal(rm_fsync(a), 0);
					assert_int_equal(rm_fsync(b), 0);
					synced = true;
				}
				compare_views(a, b, synced, what);
			}
			rm_file_free(a);
			rm_file_free(b);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_w1_write_over_hole_is_delalloc),
		cmocka_unit_test(test_w1_write_over_unwritten_stays_unwritten),
		cmocka_unit_test(test_w1_write_over_written_is_data),
		cmocka_unit_test(test_w3_fiemap_cached_flags),
		cmocka_unit_test(test_write_through_and_unchanged_answers),
		cmocka_unit_test(test_w5_falloc_over_delalloc_is_unwritten),
		cmocka_unit_test(test_w6_w7_punch_writeback),
		cmocka_unit_test(test_w8_xfs_punch_to_eof_writes_eof_page),
		cmocka_unit_test(test_w6_w7_shift_writeback),
		cmocka_unit_test(test_w7_xfs61_refused_collapse_flushes),
		cmocka_unit_test(test_writeback_many_segments),
		cmocka_unit_test(test_zero_range_over_dirty),
		cmocka_unit_test(test_truncate_over_dirty),
		cmocka_unit_test(test_w4_sync_file_range),
		cmocka_unit_test(test_writeback_range),
		cmocka_unit_test(test_w10_mwrite),
		cmocka_unit_test(test_ddt14_zero_in_dirty_page),
		cmocka_unit_test(test_w5_m3_writeback_zeroout),
		cmocka_unit_test(test_ddt11_xfs_write_page_unwritten),
		cmocka_unit_test(test_w5_m3_zero_range_edges),
		cmocka_unit_test(test_w11_clone_writes_back),
		cmocka_unit_test(test_w11_clone_past_eof),
		cmocka_unit_test(test_xfs_m1_cached_delalloc),
		cmocka_unit_test(test_w1_write_over_maybe_freed_block),
		cmocka_unit_test(test_bytes_never_dirty),
		cmocka_unit_test(test_random_sequences_with_writeback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
