/* SPDX-License-Identifier: MIT */
/*
 * internal.h - private types of librefmodel: the piece table (segments),
 * its treap, and the range-operation machinery shared by tree.c and ops.c.
 *
 * Why a treap: split/merge by implicit byte offset gives insert range
 * (split + one HOLE node + merge) and collapse range (two splits + drop)
 * directly, with O(log n) expected depth and none of the rebalancing case
 * analysis of an AVL/RB rope.  Priorities come from a per-file xorshift
 * generator seeded at creation, so the shape is deterministic and there is
 * no global state; split and merge are iterative, and the remaining
 * recursion (clone, check) is bounded by the treap depth, which is
 * O(log n) with overwhelming probability because the priorities never
 * depend on the input.
 *
 * Why several segments per node: a descent costs a cache miss per level
 * once the tree outgrows the caches.  A node holding up to RM_CHUNK
 * segments makes the tree RM_CHUNK-fold smaller and shallower (the fanout
 * of a B-tree without its rebalancing), and a descent reads only the
 * node's first cache line (links, sums, the node's own totals); the
 * segments are read where an operation ends up.
 */
#ifndef RANGESHIFT_REFMODEL_INTERNAL_H
#define RANGESHIFT_REFMODEL_INTERNAL_H

#include "refmodel.h"
#include <stdbool.h>

/* Segment kinds.  HOLE and UNWRITTEN read as zeros and hold no buffer;
 * ZERO is written-allocated content known to be zero (no buffer); DATA
 * points into an immutable refcounted buffer. */
enum seg_kind { K_HOLE = 0, K_UNWRITTEN = 1, K_ZERO = 2, K_DATA = 3 };

/* Internal may bit (never reported by rm_walk): the block holds dirty page
 * cache data over an unwritten extent, so FIEMAP may still say UNWRITTEN
 * until write-back converts it (ext4_end_io / xfs_end_ioend()); rm_fsync()
 * resolves it.  (0x8 is RM_DELALLOC, a state of the cached view.) */
#define MAY_PENDING 0x40u

/* Write-back state of a segment (struct seg.wb): 0 is clean, i.e. the
 * block is as the after-write-back view (kind, may) says.  Otherwise its
 * pages are dirty (WB_DIRTY) or under write-back I/O not yet completed
 * (WB_INFLIGHT, after SYNC_FILE_RANGE_WRITE without WAIT_AFTER), and
 * WB_DELALLOC / WB_UNWR say what FIEMAP without FIEMAP_FLAG_SYNC shows
 * until write-back completes: a delayed allocation (dirty over a hole), an
 * unwritten extent (dirty over an unwritten extent, or a delayed
 * allocation that fallocate or write-back submission has allocated);
 * neither: the written extent (dirty over written blocks).  Only written
 * kinds (K_ZERO, K_DATA) inside EOF carry it (rm_check()). */
#define WB_DIRTY	0x1u
#define WB_INFLIGHT	0x2u
#define WB_DELALLOC	0x4u
#define WB_UNWR		0x8u
/* With WB_UNWR: the block was written while its may-set also allowed a
 * hole (a refused ext4 direct write may have freed it, RULES.md O3), so
 * the kernel may hold a delayed allocation there instead (W1). */
#define WB_MAYDELALLOC	0x10u

struct rm_buf {
	size_t refs;
	size_t len;
	unsigned char data[];
};

struct seg {
	int64_t len;
	struct rm_buf *buf;	/* K_DATA only */
	uint32_t boff;		/* K_DATA only: offset into buf (buffers are
				 * at most MAX_RW_COUNT < 2^31 bytes) */
	uint8_t kind;
	uint8_t may;		/* RM_* mask; always includes the kind's state */
	uint8_t wb;		/* WB_* (0: clean) */
};

/* Sums over a subtree: the augmentation.  tree.c computes it in one place
 * (aug_compute()). */
struct aug {
	int64_t len;		/* bytes */
	int64_t alloc;		/* bytes in UNWRITTEN/ZERO/DATA */
	uint32_t wbsegs;	/* segments with write-back state (seg.wb != 0),
				 * so that write-back finds them in O(log n) */
	uint32_t nodes;		/* tree nodes (segments: at most RM_CHUNK times) */
};

#define RM_CHUNK 8	/* segments per tree node */
/* Written neighbours (data and zeros) of the same state are copied into one
 * buffer while together they are at most this long (rop_close()): without
 * it, n one-byte writes into one block leave n segments there, and every
 * later write to the block, which opens the whole block, walks them all. */
#define RM_COALESCE_BYTES 4096
/* Zeros join them only when an operation's range holds more than this many
 * segments: a small write into a new block keeps its own buffer (copying
 * it with the zeros around it into 4 KiB cost a third of the mixed-op
 * time). */
#define RM_COALESCE_SEGS (2 * RM_CHUNK)

/* The iterator hands out segments as it.cur->s. */
struct ent {
	struct seg s;
};

/* 256 bytes, 64-byte aligned: the first cache line is all a descent reads
 * (own_len and own_alloc cache the totals of e[0..n)). */
struct node {
	struct node *l, *r;
	struct aug sum;		/* over the subtree */
	int64_t own_len;	/* over this node's segments */
	int64_t own_alloc;
	uint32_t prio;
	uint16_t n;		/* segments in e[], 1..RM_CHUNK */
	uint16_t own_wb;	/* segments of e[] with write-back state */
	struct ent e[RM_CHUNK];
};

struct segvec {
	struct seg *v;
	size_t n, cap;
};

struct rm_file {
	enum rm_profile profile;
	int64_t bs;		/* block size */
	int64_t ab;		/* allocation unit for boundaries: bs, or 1 in bytes */
	int64_t maxbytes;
	enum rm_kernel kernel;	/* rm_opts.kernel */
	int strict;		/* rm_opts.strict */
	int64_t size;
	struct node *root;
	uint64_t rng;		/* treap priority generator state */
	struct node *freelist;
	size_t nfree;
	void *slabs;		/* list of node slabs (first line: next pointer) */
	struct segvec vec;	/* scratch for range operations */
	struct node **stk;	/* scratch for building trees */
	size_t stkcap;
	uint64_t fsyncs, ops;
	bool pending;		/* some segment may carry MAY_PENDING */
	bool xfs_prealloc;	/* XFS_DIFLAG_PREALLOC: xfs_alloc_file_space() ran */
	bool xfs_reflink;	/* XFS_DIFLAG2_REFLINK: a clone or dedupe shared
				 * blocks with it (xfs_reflink_set_inode_flag());
				 * only unshare clears it, and the model keeps it */
	bool write_through;	/* rm_opts.write_through (always in the bytes profile) */
	bool anywb;		/* some segment may carry write-back state (wb) */
};

/* A range operation in progress: the tree is split into L | [a,b) | R and
 * the middle is flattened into f->vec (covering [base, max(b, end of the
 * node at b)): the range plus its neighbour nodes). */
struct rop {
	struct node *L, *R;
	int64_t a, b;		/* the range asked for */
	int64_t base;		/* start of f->vec (a, or the start of the node before a) */
};

static inline unsigned kind_state(unsigned k)
{
	return k == K_HOLE ? RM_HOLE : k == K_UNWRITTEN ? RM_UNWRITTEN : RM_DATA;
}
static inline bool seg_pure_hole(const struct seg *s)
{
	return s->kind == K_HOLE && s->may == RM_HOLE && !s->wb;
}
static inline int64_t rdown(int64_t x, int64_t a) { return x - (x % a); }
static inline int64_t rup(int64_t x, int64_t a)
{
	int64_t r = x % a;
	/* the block holding INT64_MAX ends at 2^63: saturate at INT64_MAX (the
	 * only place an allocation boundary may be unaligned) */
	return r ? (x > INT64_MAX - (a - r) ? INT64_MAX : x + (a - r)) : x;
}

/* ops.c: filemap_write_and_wait_range() of the pages overlapping [s, e)
 * (e saturates; blocks only partly inside a page range stay as they are):
 * their dirty and in-flight blocks become clean; with settle, the M5
 * latitude of written-back blocks inside EOF ends too (as rm_fsync()).
 * 0 or -ENOMEM (nothing changed). */
int wb_flush(struct rm_file *f, int64_t s, int64_t e, bool settle);
/* The whole file written back and waited for: rm_fsync() without its
 * counters. */
int wb_all(struct rm_file *f);

/* clone.c: generic_remap_checks() (fs/remap_range.c, Linux 6.1) of a
 * remap of *count bytes from soff of src to doff of dst, for FICLONERANGE
 * (flags 0), copy_file_range()'s remap (REMAP_CAN_SHORTEN) and
 * FIDEDUPERANGE (REMAP_DEDUP | REMAP_CAN_SHORTEN): 0 with *count clipped to
 * the source EOF and s_maxbytes and, unless it ends at the source EOF (and
 * for a dedupe the destination EOF), rounded down to blocks; -EINVAL
 * (misaligned offsets, wrapping, a range outside EOF, overlap in one file,
 * a shortened count without REMAP_CAN_SHORTEN) or -EFBIG (doff at or past
 * s_maxbytes, generic_write_check_limits()).  The callers give these
 * answers their own meaning: copy_file_range() falls back to the page
 * cache on any of them, a dedupe reports them in the destination's
 * status. */
#define REMAP_DEDUP		1u	/* REMAP_FILE_DEDUP */
#define REMAP_CAN_SHORTEN	2u	/* REMAP_FILE_CAN_SHORTEN */
int remap_checks(const struct rm_file *src, int64_t soff, const struct rm_file *dst,
		 int64_t doff, int64_t *count, unsigned flags);

/* tree.c */
void buf_put(struct rm_buf *b);
int64_t tree_len(const struct node *t);
void tree_free(struct rm_file *f, struct node *t);
int rop_open(struct rm_file *f, int64_t a, int64_t b, struct rop *x);
int rop_extend(struct rm_file *f, struct rop *x, int64_t a, int64_t b);
int rop_extend_run(struct rm_file *f, struct rop *x, int64_t a, int64_t b,
		   bool (*in_run)(const struct seg *));
/* A segment an ext4 conversion's zero-out (M3) may reach: unwritten, or a
 * hole that may be unwritten. */
static inline bool seg_may_unwritten(const struct seg *s)
{
	return s->kind == K_UNWRITTEN || (s->kind == K_HOLE && (s->may & RM_UNWRITTEN));
}
void rop_close(struct rm_file *f, struct rop *x);
/* ops.c, before a write-back of [s, e): RULES.md D-DT11's latitude */
int xfs_wb_folios(struct rm_file *f, int64_t s, int64_t e);
/* vec functions: positions are absolute byte offsets; x->a is the vec base */
size_t v_cut(struct rm_file *f, const struct rop *x, int64_t pos);
void v_cut2(struct rm_file *f, const struct rop *x, int64_t s, int64_t e,
	    size_t *i, size_t *j);
void v_drop_seg(struct seg *s);
struct seg *v_at(struct rm_file *f, const struct rop *x, int64_t pos, int64_t *segstart);
int64_t tree_alloc_from(const struct node *t, int64_t off);
int tree_clone(struct rm_file *dst, const struct node *t, struct node **out);
void slabs_free(struct rm_file *f);
/* tree shape for rm_stats: segments, nodes, height */
size_t tree_segs(const struct node *t);
size_t tree_nodes(const struct node *t);
int tree_depth(const struct node *t);
/* The first segment with write-back state that ends after off: its start
 * (and *len its length), or -1.  O(log n) through aug.wbsegs. */
int64_t tree_wb_find(const struct node *t, int64_t off, int64_t *len);
/* Clear in place, in one walk, the write-back state of the segments in
 * [s, e), merging each with the neighbours it now matches when they are in
 * its node, in order, until one that cannot be done so (it would merge
 * with a segment of another node, or lies only partly inside the range):
 * false when none is left, true with *fp and *flen that segment (the
 * caller cleans it by a range operation and calls again from its end).
 * O(log n + k) for k segments cleared, with an O(log n) neighbour look-up
 * at node edges. */
bool tree_wb_clean(struct node *root, int64_t s, int64_t e, int64_t *fp, int64_t *flen);
/* the last segment (NULL for an empty tree) */
const struct seg *tree_last(const struct node *t);
/* Check the tree's structure (heap order, node fill, the augmentation
 * recomputed by the same function that maintains it) and hand every
 * segment in order, with its offset, to seg_ok, which returns nonzero to
 * stop.  Returns 0, or -EUCLEAN with msg written (unless seg_ok stopped
 * it, which writes its own). */
int tree_check(const struct node *t, int (*seg_ok)(void *ctx, const struct seg *s, int64_t pos),
	       void *ctx, char *msg, size_t msglen);

/* In-order iterator from an offset (read-only paths): it.cur->s is the
 * current segment, it.cur_start its offset. */
struct it {
	const struct node **stk;
	size_t n, cap;
	const struct node *small[96];
	const struct node *node;	/* holds cur */
	const struct ent *cur;
	int64_t cur_start;
	bool heap;
};
void it_init(struct it *it, const struct node *root, int64_t off);
bool it_valid(const struct it *it);
void it_next(struct it *it);
void it_done(struct it *it);

#endif
