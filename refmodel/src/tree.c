/* SPDX-License-Identifier: MIT */
/*
 * tree.c - the piece table of librefmodel: a treap of segments keyed by
 * implicit byte offset (see internal.h for why a treap), with split/merge,
 * linear-time rebuild of a flattened range, coalescing of equal neighbours
 * and an in-order iterator.  Everything here is mechanism; the Linux
 * semantics live in ops.c.
 *
 * Range operations (rop_open/rop_close) are the one way mutating code
 * touches the tree: open splits out [a, b) in O(log n), flattens it into
 * f->vec (k segments), the caller edits the vector, and close coalesces it
 * with the neighbouring nodes, rebuilds a treap from it in O(k) and merges
 * it back in O(log n).  All memory an operation can need (nodes, vector
 * and stack capacity) is reserved in rop_open before anything changes, so
 * a failed allocation leaves the file untouched.
 */
#include "internal.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void buf_put(struct rm_buf *b)
{
	if (b && --b->refs == 0)
		free(b);
}

void v_drop_seg(struct seg *s)
{
	if (s->kind == K_DATA)
		buf_put(s->buf);
	s->buf = NULL;
	s->boff = 0;
}

int64_t tree_len(const struct node *t)
{
	return t ? t->sum_len : 0;
}

static inline size_t tcnt(const struct node *t) { return t ? t->cnt : 0; }
static void node_put(struct rm_file *f, struct node *n);

static void upd(struct node *n)
{
	const struct node *l = n->l, *r = n->r;
	int64_t len = n->s.len;
	n->sum_len = len + (l ? l->sum_len : 0) + (r ? r->sum_len : 0);
	n->sum_alloc = (n->s.kind != K_HOLE ? len : 0) +
		       (l ? l->sum_alloc : 0) + (r ? r->sum_alloc : 0);
	n->cnt = 1 + (l ? l->cnt : 0) + (r ? r->cnt : 0);
}

static uint32_t next_prio(struct rm_file *f)
{
	/* xorshift64*: per-file, seeded in rm_file_new */
	uint64_t x = f->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	f->rng = x;
	return (uint32_t)((x * 0x2545F4914F6CDD1DULL) >> 32);
}

static struct node *node_get(struct rm_file *f)
{
	struct node *n = f->freelist;
	/* callers reserved nodes in rop_open, so the list is never empty here */
	f->freelist = n->l;
	f->nfree--;
	n->l = n->r = NULL;	/* the caller sets the segment and upd()s */
	n->prio = next_prio(f);
	return n;
}

static void node_put(struct rm_file *f, struct node *n)
{
	n->l = f->freelist;
	f->freelist = n;
	f->nfree++;
}

#define SLAB_NODES 255

static int reserve_nodes(struct rm_file *f, size_t want)
{
	while (f->nfree < want) {
		/* one header line (next-slab pointer) + SLAB_NODES nodes */
		char *slab = aligned_alloc(64, 64 * (SLAB_NODES + 1));
		if (!slab)
			return -ENOMEM;
		*(void **)slab = f->slabs;
		f->slabs = slab;
		for (size_t i = SLAB_NODES; i >= 1; i--)
			node_put(f, (struct node *)(slab + 64 * i));
	}
	return 0;
}

void slabs_free(struct rm_file *f)
{
	while (f->slabs) {
		void *next = *(void **)f->slabs;
		free(f->slabs);
		f->slabs = next;
	}
	f->freelist = NULL;
	f->nfree = 0;
}

static int reserve_vec(struct rm_file *f, size_t want)
{
	if (f->vec.cap < want) {
		size_t cap = f->vec.cap ? f->vec.cap : 16;
		while (cap < want)
			cap *= 2;
		struct seg *v = realloc(f->vec.v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		f->vec.v = v;
		f->vec.cap = cap;
	}
	if (f->stkcap < want) {
		size_t cap = f->stkcap ? f->stkcap : 16;
		while (cap < want)
			cap *= 2;
		struct node **s = realloc(f->stk, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		f->stk = s;
		f->stkcap = cap;
	}
	return 0;
}

void tree_free(struct rm_file *f, struct node *t)
{
	/* iterative: walk down the left spine, rotating right children up,
	 * so freeing never recurses */
	while (t) {
		if (t->l) {
			struct node *l = t->l;
			t->l = l->r;
			l->r = t;
			t = l;
		} else {
			struct node *r = t->r;
			v_drop_seg(&t->s);
			if (f)
				node_put(f, t);
			t = r;
		}
	}
}

/* Subtree sums move between nodes as deltas: a node on a split or merge
 * path gains or loses exactly one detached/attached subtree, whose root
 * already carries its sums.  Adjusting by that delta (instead of upd(),
 * which reads both children) avoids loading the off-path child: one cache
 * line fewer per level of a random-offset descent. */
static inline void sums_sub(struct node *n, const struct node *t)
{
	if (t) {
		n->sum_len -= t->sum_len;
		n->sum_alloc -= t->sum_alloc;
		n->cnt -= t->cnt;
	}
}

/* Top-down and iterative: at each step the winning root keeps its side
 * and the whole other tree ends up below it, so its sums grow by that
 * tree's totals (read from a root not yet modified) -- one pass down the
 * merge path, no recursion and no pass back up. */
static struct node *merge(struct node *a, struct node *b)
{
	struct node *root = NULL, **link = &root;
	while (a && b) {
		if (a->prio > b->prio) {
			a->sum_len += b->sum_len;
			a->sum_alloc += b->sum_alloc;
			a->cnt += b->cnt;
			*link = a;
			link = &a->r;
			a = a->r;
		} else {
			b->sum_len += a->sum_len;
			b->sum_alloc += a->sum_alloc;
			b->cnt += a->cnt;
			*link = b;
			link = &b->l;
			b = b->l;
		}
	}
	*link = a ? a : b;
	return root;
}

/* Node-boundary splits (no node is cut).  split_end_lt: nodes ending
 * before a go left.  split_start_le: nodes starting at or before b go left. */
static void split_end_lt(struct node *t, int64_t base, int64_t a,
			 struct node **l, struct node **r)
{
	if (!t) {
		*l = *r = NULL;
		return;
	}
	int64_t end = base + (t->l ? t->l->sum_len : 0) + t->s.len;
	if (end < a) {
		split_end_lt(t->r, end, a, &t->r, r);
		sums_sub(t, *r);
		*l = t;
	} else {
		split_end_lt(t->l, base, a, l, &t->l);
		sums_sub(t, *l);
		*r = t;
	}
}

static void split_start_le(struct node *t, int64_t base, int64_t b,
			   struct node **l, struct node **r)
{
	if (!t) {
		*l = *r = NULL;
		return;
	}
	int64_t start = base + (t->l ? t->l->sum_len : 0);
	if (start <= b) {
		split_start_le(t->r, start + t->s.len, b, &t->r, r);
		sums_sub(t, *r);
		*l = t;
	} else {
		split_start_le(t->l, base, b, l, &t->l);
		sums_sub(t, *l);
		*r = t;
	}
}

/* Both splits in one descent: nodes ending before a go to *l, nodes
 * starting after b to *r, the rest (the nodes overlapping [a, b] plus the
 * neighbours at a-1 and b) to *m.  Below the first node that belongs to
 * *m the two remaining splits are independent. */
static void split3(struct node *t, int64_t base, int64_t a, int64_t b,
		   struct node **l, struct node **m, struct node **r)
{
	if (!t) {
		*l = *m = *r = NULL;
		return;
	}
	int64_t start = base + (t->l ? t->l->sum_len : 0);
	int64_t end = start + t->s.len;
	if (end < a) {
		split3(t->r, end, a, b, &t->r, m, r);
		sums_sub(t, *m);
		sums_sub(t, *r);
		*l = t;
	} else if (start > b) {
		split3(t->l, base, a, b, l, m, &t->l);
		sums_sub(t, *l);
		sums_sub(t, *m);
		*r = t;
	} else {
		split_end_lt(t->l, base, a, l, &t->l);
		split_start_le(t->r, end, b, &t->r, r);
		sums_sub(t, *l);
		sums_sub(t, *r);
		*m = t;
	}
}

static void flatten_into(struct rm_file *f, struct node *t)
{
	/* in-order, iterative via the same rotation trick as tree_free */
	while (t) {
		if (t->l) {
			struct node *l = t->l;
			t->l = l->r;
			l->r = t;
			t = l;
		} else {
			struct node *r = t->r;
			f->vec.v[f->vec.n++] = t->s;
			node_put(f, t);
			t = r;
		}
	}
}

/* Open [a, b) (a <= b) for editing.  The vector also holds the whole node
 * before a and the whole node at b (when they exist), so that rop_close
 * can coalesce across the edges without further tree surgery; because the
 * split points are node boundaries, no node is cut.  Past the end of the
 * tree the vector is padded with a pure hole. */
int rop_open(struct rm_file *f, int64_t a, int64_t b, struct rop *x)
{
	int64_t T = tree_len(f->root);
	/* room for the padding hole and the caller's cuts and inserted
	 * segments (each operation makes fewer than 24 cuts) */
	int err = reserve_nodes(f, 40);
	if (err)
		return err;
	struct node *m;
	x->a = a;
	x->b = b;
	split3(f->root, 0, a < T ? a : T, b, &x->L, &m, &x->R);
	f->root = NULL;
	x->base = tree_len(x->L);
	/* the flattened nodes return to the free list, so only the vector
	 * needs reserving; on failure the node-boundary splits undo exactly */
	err = reserve_vec(f, tcnt(m) + 40);
	if (err) {
		f->root = merge(merge(x->L, m), x->R);
		return err;
	}
	f->vec.n = 0;
	flatten_into(f, m);
	int64_t hi = x->base + tree_len(m);
	int64_t want = b > hi ? b : hi;
	if (want > hi) {
		struct seg *p = &f->vec.v[f->vec.n++];
		memset(p, 0, sizeof(*p));
		p->len = want - hi;
		p->kind = K_HOLE;
		p->may = RM_HOLE;
	}
	return 0;
}

static bool mergeable(const struct seg *p, const struct seg *q)
{
	if (p->kind != q->kind || p->may != q->may)
		return false;
	if (p->kind == K_DATA)
		return p->buf == q->buf && p->boff + p->len == q->boff;
	return true;
}

void rop_close(struct rm_file *f, struct rop *x)
{
	struct segvec *v = &f->vec;
	int64_t base = x->base;

	/* normalise and coalesce */
	size_t o = 0;
	for (size_t i = 0; i < v->n; i++) {
		struct seg s = v->v[i];
		if (s.len == 0) {
			v_drop_seg(&s);
			continue;
		}
		if (f->profile == RM_PROFILE_BYTES)
			s.may = kind_state(s.kind);	/* no latitude */
		else
			s.may |= kind_state(s.kind);
		if (s.kind != K_DATA) {
			s.buf = NULL;
			s.boff = 0;
		}
		if (o && mergeable(&v->v[o - 1], &s)) {
			v->v[o - 1].len += s.len;
			v_drop_seg(&s);
			continue;
		}
		v->v[o++] = s;
	}
	v->n = o;
	/* trailing pure holes past EOF are implicit: trim them when this
	 * range is the end of the tree */
	if (!x->R) {
		int64_t end = base;
		for (size_t i = 0; i < v->n; i++)
			end += v->v[i].len;
		while (v->n) {
			struct seg *s = &v->v[v->n - 1];
			if (!seg_pure_hole(s) || end <= f->size)
				break;
			int64_t start = end - s->len;
			int64_t keep = start >= f->size ? 0 : f->size - start;
			if (keep) {
				s->len = keep;
				end = f->size;
				break;
			}
			end = start;
			v->n--;
		}
		if (end < f->size) {
			/* the tree always covers [0, size) */
			struct seg h = { .len = f->size - end, .kind = K_HOLE, .may = RM_HOLE };
			if (v->n && mergeable(&v->v[v->n - 1], &h))
				v->v[v->n - 1].len += h.len;
			else
				v->v[v->n++] = h;
		}
	}
	/* build a treap from the in-order vector in O(k): Cartesian tree by
	 * priority, right spine kept in f->stk */
	size_t sp = 0;
	for (size_t i = 0; i < v->n; i++) {
		struct node *n = node_get(f);
		n->s = v->v[i];
		struct node *last = NULL;
		while (sp && f->stk[sp - 1]->prio < n->prio) {
			last = f->stk[--sp];
			upd(last);
		}
		n->l = last;
		if (sp)
			f->stk[sp - 1]->r = n;
		f->stk[sp++] = n;
	}
	while (sp > 1) {
		upd(f->stk[--sp]);
	}
	struct node *m = NULL;
	if (sp) {
		upd(f->stk[0]);
		m = f->stk[0];
	}
	v->n = 0;
	f->root = merge(merge(x->L, m), x->R);
	x->L = x->R = NULL;
}

/* Ensure a segment boundary at pos inside the vector; returns the index of
 * the segment starting at pos (== n when pos == b). */
size_t v_cut(struct rm_file *f, const struct rop *x, int64_t pos)
{
	struct segvec *v = &f->vec;
	int64_t off = x->base;
	for (size_t i = 0; i < v->n; i++) {
		if (off == pos)
			return i;
		if (pos < off + v->v[i].len) {
			assert(v->n < v->cap);	/* rop_open reserved room for the cuts */
			int64_t cut = pos - off;
			memmove(v->v + i + 2, v->v + i + 1, (v->n - i - 1) * sizeof(*v->v));
			v->n++;
			v->v[i + 1] = v->v[i];
			v->v[i].len = cut;
			v->v[i + 1].len -= cut;
			if (v->v[i].kind == K_DATA) {
				v->v[i + 1].boff += cut;
				v->v[i].buf->refs++;
			}
			return i + 1;
		}
		off += v->v[i].len;
	}
	return v->n;
}

struct seg *v_at(struct rm_file *f, const struct rop *x, int64_t pos, int64_t *segstart)
{
	int64_t off = x->base;
	for (size_t i = 0; i < f->vec.n; i++) {
		if (pos < off + f->vec.v[i].len) {
			if (segstart)
				*segstart = off;
			return &f->vec.v[i];
		}
		off += f->vec.v[i].len;
	}
	return NULL;
}

/* Allocated bytes at or after off. */
int64_t tree_alloc_from(const struct node *t, int64_t off)
{
	if (off <= 0)	/* the whole tree: its root's augmentation */
		return t ? t->sum_alloc : 0;
	int64_t sum = 0;
	while (t) {
		int64_t ll = t->l ? t->l->sum_len : 0;
		if (off < ll) {
			sum += (t->s.kind != K_HOLE ? t->s.len : 0) + (t->r ? t->r->sum_alloc : 0);
			t = t->l;
		} else if (off < ll + t->s.len) {
			if (t->s.kind != K_HOLE)
				sum += ll + t->s.len - off;
			sum += t->r ? t->r->sum_alloc : 0;
			break;
		} else {
			off -= ll + t->s.len;
			t = t->r;
		}
	}
	return sum;
}

/* Copy a tree into dst's slabs (dst has reserved t->cnt nodes). */
static struct node *clone_rec(struct rm_file *dst, const struct node *t)
{
	if (!t)
		return NULL;
	struct node *n = dst->freelist;
	dst->freelist = n->l;
	dst->nfree--;
	*n = *t;
	if (n->s.kind == K_DATA)
		n->s.buf->refs++;
	n->l = clone_rec(dst, t->l);
	n->r = clone_rec(dst, t->r);
	return n;
}

int tree_clone(struct rm_file *dst, const struct node *t, struct node **out)
{
	int err = reserve_nodes(dst, t ? t->cnt : 0);
	if (err)
		return err;
	*out = clone_rec(dst, t);
	return 0;
}

/* ---- iterator ---- */

static bool it_push(struct it *it, const struct node *n)
{
	if (it->n == it->cap) {
		size_t cap = it->cap * 2;
		const struct node **s = malloc(cap * sizeof(*s));
		if (!s)
			return false;
		memcpy(s, it->stk, it->n * sizeof(*s));
		if (it->heap)
			free(it->stk);
		it->stk = s;
		it->cap = cap;
		it->heap = true;
	}
	it->stk[it->n++] = n;
	return true;
}

/* The stack holds ancestors whose node comes after the current one, each
 * with its start offset tracked by cur_start arithmetic in it_next. */
void it_init(struct it *it, const struct node *root, int64_t off)
{
	it->stk = it->small;
	it->cap = sizeof(it->small) / sizeof(it->small[0]);
	it->n = 0;
	it->heap = false;
	it->cur = NULL;
	it->cur_start = 0;
	const struct node *t = root;
	int64_t base = 0;
	while (t) {
		int64_t ll = t->l ? t->l->sum_len : 0;
		if (off < base + ll) {
			if (!it_push(it, t)) {
				it->cur = NULL;
				return;
			}
			t = t->l;
		} else if (off < base + ll + t->s.len) {
			it->cur = t;
			it->cur_start = base + ll;
			return;
		} else {
			base += ll + t->s.len;
			t = t->r;
		}
	}
}

bool it_valid(const struct it *it)
{
	return it->cur != NULL;
}

void it_next(struct it *it)
{
	const struct node *t = it->cur;
	int64_t next_start = it->cur_start + t->s.len;
	if (t->r) {
		t = t->r;
		while (t->l) {
			if (!it_push(it, t)) {
				it->cur = NULL;
				return;
			}
			t = t->l;
		}
		it->cur = t;
	} else if (it->n) {
		it->cur = it->stk[--it->n];
	} else {
		it->cur = NULL;
	}
	it->cur_start = next_start;
}

void it_done(struct it *it)
{
	if (it->heap)
		free(it->stk);
	it->heap = false;
}
