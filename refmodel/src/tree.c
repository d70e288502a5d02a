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

/* Prefix sums of the in-order sequence up to some node boundary. */
struct psum {
	int64_t len, alloc;
	uint32_t cnt;
};

static inline void ps_add_node(struct psum *p, const struct node *t)
{
	p->len += t->sum_len;
	p->alloc += t->sum_alloc;
	p->cnt += t->cnt;
}
static inline void ps_add_seg(struct psum *p, const struct node *t)
{
	p->len += t->s.len;
	p->alloc += t->s.kind != K_HOLE ? t->s.len : 0;
	p->cnt += 1;
}
/* t's sums := q - p, or t's sums += p */
static inline void sums_set_diff(struct node *t, const struct psum *q, const struct psum *p)
{
	t->sum_len = q->len - p->len;
	t->sum_alloc = q->alloc - p->alloc;
	t->cnt = q->cnt - p->cnt;
}
static inline void sums_add(struct node *t, const struct psum *p)
{
	t->sum_len += p->len;
	t->sum_alloc += p->alloc;
	t->cnt += p->cnt;
}
static inline void sums_sub_ps(struct node *t, const struct psum *p)
{
	t->sum_len -= p->len;
	t->sum_alloc -= p->alloc;
	t->cnt -= p->cnt;
}

/* Node-boundary split of the whole tree t (no node is cut): nodes ending
 * before a go to *l, nodes starting after b to *r, the rest (the nodes
 * overlapping [a, b] plus the neighbours at a-1 and b) to *m.
 *
 * Iterative, one pass down plus one pass over the new spines, and it
 * loads no node off the search path.  Each node whose links change ends
 * up owning a contiguous in-order run [lo, hi) of the old sequence, so its
 * new sums are P(hi) - P(lo) for the prefix sums P.  Going down, P at the
 * current subtree's start is known (it grows by a left subtree and a
 * segment at each step right), and so is P at a node's subtree end (P at
 * its start plus its old sums); the two cut points xl (start of the first
 * *m node) and xr (end of the last) are known only at the bottom.  So the
 * descent stores the part it knows in the node (-P(lo) or P(hi)) and the
 * second pass, which walks exactly the changed nodes as the spines they
 * now form (the right spine of *l, the left spine of *r, the left spine
 * of the *m root's left child, the right spine of its right child), adds
 * the rest.  No stack, so no depth limit. */
static void split3(struct node *t, int64_t a, int64_t b,
		   struct node **l, struct node **m, struct node **r)
{
	struct psum p = { 0, 0, 0 };	/* P at the start of t's subtree */
	struct node **lp = l, **rp = r;
	*m = NULL;
	while (t) {
		const struct node *tl = t->l;
		int64_t start = p.len + (tl ? tl->sum_len : 0);
		int64_t end = start + t->s.len;
		if (end < a) {
			/* t and its left subtree go left: run [P(start of
			 * subtree), xl) */
			struct psum lo = p;
			if (tl)
				ps_add_node(&p, tl);
			ps_add_seg(&p, t);
			t->sum_len = -lo.len;
			t->sum_alloc = -lo.alloc;
			t->cnt = -lo.cnt;
			*lp = t;
			lp = &t->r;
			t = t->r;
		} else if (start > b) {
			/* t and its right subtree go right: [xr, P(end)) */
			sums_add(t, &p);
			*rp = t;
			rp = &t->l;
			t = t->l;
		} else {
			break;
		}
	}
	struct psum xl = p, xr = p;
	if (t) {
		/* t is the root of *m: split its left subtree by "ends before
		 * a" and its right one by "starts after b" */
		*m = t;
		struct psum q = p;	/* P at the end of t's segment */
		if (t->l)
			ps_add_node(&q, t->l);
		ps_add_seg(&q, t);
		struct node **mp = &t->l, *u = t->l;
		while (u) {
			int64_t ul = u->l ? u->l->sum_len : 0;
			if (p.len + ul + u->s.len < a) {
				struct psum lo = p;
				if (u->l)
					ps_add_node(&p, u->l);
				ps_add_seg(&p, u);
				u->sum_len = -lo.len;
				u->sum_alloc = -lo.alloc;
				u->cnt = -lo.cnt;
				*lp = u;
				lp = &u->r;
				u = u->r;
			} else {
				/* stays in *m: [xl, P(end of subtree)) */
				sums_add(u, &p);
				*mp = u;
				mp = &u->l;
				u = u->l;
			}
		}
		*mp = NULL;
		xl = p;
		mp = &t->r;
		u = t->r;
		while (u) {
			int64_t ul = u->l ? u->l->sum_len : 0;
			if (q.len + ul <= b) {
				/* stays in *m: [P(start of subtree), xr) */
				struct psum lo = q;
				if (u->l)
					ps_add_node(&q, u->l);
				ps_add_seg(&q, u);
				u->sum_len = -lo.len;
				u->sum_alloc = -lo.alloc;
				u->cnt = -lo.cnt;
				*mp = u;
				mp = &u->r;
				u = u->r;
			} else {
				sums_add(u, &q);
				*rp = u;
				rp = &u->l;
				u = u->l;
			}
		}
		*mp = NULL;
		xr = q;
		sums_set_diff(t, &xr, &xl);
		for (u = t->l; u; u = u->l)
			sums_sub_ps(u, &xl);
		for (u = t->r; u; u = u->r)
			sums_add(u, &xr);
	}
	*lp = NULL;
	*rp = NULL;
	for (struct node *u = *l; u; u = u->r)
		sums_add(u, &xl);
	for (struct node *u = *r; u; u = u->l)
		sums_sub_ps(u, &xr);
}

/* Copy t's segments in order to dst and free its nodes; returns how many
 * (t->cnt). */
static size_t flatten_to(struct rm_file *f, struct node *t, struct seg *dst)
{
	size_t n = 0;
	/* in-order, iterative via the same rotation trick as tree_free */
	while (t) {
		if (t->l) {
			struct node *l = t->l;
			t->l = l->r;
			l->r = t;
			t = l;
		} else {
			struct node *r = t->r;
			dst[n++] = t->s;
			node_put(f, t);
			t = r;
		}
	}
	return n;
}

static void pad_hole(struct rm_file *f, int64_t len)
{
	struct seg *p = &f->vec.v[f->vec.n++];
	memset(p, 0, sizeof(*p));
	p->len = len;
	p->kind = K_HOLE;
	p->may = RM_HOLE;
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
	split3(f->root, a < T ? a : T, b, &x->L, &m, &x->R);
	f->root = NULL;
	x->base = tree_len(x->L);
	/* the flattened nodes return to the free list, so only the vector
	 * needs reserving; on failure the node-boundary splits undo exactly */
	err = reserve_vec(f, tcnt(m) + 40);
	if (err) {
		f->root = merge(merge(x->L, m), x->R);
		return err;
	}
	int64_t hi = x->base + tree_len(m);
	f->vec.n = flatten_to(f, m, f->vec.v);
	if (b > hi)
		pad_hole(f, b - hi);
	return 0;
}

/* Widen an open range to [a, b) (a <= x->a, b >= x->b), before the caller
 * has edited the vector: what rop_open(a, b) would have given, for the
 * cost of the extra nodes only.  Callers open the narrow range first and
 * widen only when what they find there calls for it.  On failure (no
 * memory) the range is still open and consistent, possibly widened on
 * the left; the caller closes it, which leaves the file as it was. */
int rop_extend(struct rm_file *f, struct rop *x, int64_t a, int64_t b)
{
	struct segvec *v = &f->vec;
	struct node *l, *m, *r;
	int err;
	if (a < x->a) {
		if (a <= x->base && x->L) {
			/* nodes of L ending at or after a (the one holding a - 1
			 * included) move into the vector */
			split3(x->L, a, INT64_MAX, &l, &m, &r);
			size_t c = tcnt(m);
			err = reserve_vec(f, v->n + c + 40);
			if (err) {
				x->L = merge(l, m);
				return err;
			}
			memmove(v->v + c, v->v, v->n * sizeof(*v->v));
			v->n += flatten_to(f, m, v->v);
			x->L = l;
			x->base = tree_len(l);
		}
		x->a = a;
	}
	if (b > x->b) {
		int64_t e = x->base;
		for (size_t i = 0; i < v->n; i++)
			e += v->v[i].len;
		if (x->R && b >= e) {
			/* nodes of R (which starts at e) starting at or before b */
			split3(x->R, 0, b - e, &l, &m, &r);
			err = reserve_vec(f, v->n + tcnt(m) + 40);
			if (err) {
				x->R = merge(m, r);
				return err;
			}
			e += tree_len(m);
			v->n += flatten_to(f, m, v->v + v->n);
			x->R = r;
		}
		if (!x->R && b > e)
			pad_hole(f, b - e);
		x->b = b;
	}
	return 0;
}

/* Widen an open range towards [a, b) (before any edit) only as far as a
 * run of segments of kind k continues from its edges: while the first
 * segment of the vector is of kind k and so is the last node of L, that
 * node moves into the vector (likewise at the right end with R), and the
 * range ends at a / b or, where the run stops first, at the vector's edge
 * (where a segment of kind k meets one of another kind, so no edit that
 * keeps kinds there can make them mergeable).  For
 * callers whose edits past the old edges depend only on that run (ext4's
 * M3 zero-out), this is what rop_extend(a, b) would give without
 * flattening every untouched node within reach.  The caller checks that
 * the run does cross the old edge.  Errors as rop_extend(). */
int rop_extend_kind(struct rm_file *f, struct rop *x, int64_t a, int64_t b, unsigned k)
{
	struct segvec *v = &f->vec;
	int err;
	if (a < x->a) {
		int64_t old = x->a;
		/* base >= a: the vector must also hold the node before a,
		 * or an edit at a could make the first segment equal to
		 * L's last node */
		while (x->base >= a && v->n && v->v[0].kind == k && x->L) {
			const struct node *t = x->L;
			while (t->r)
				t = t->r;
			if (t->s.kind != k)
				break;
			/* pulls exactly the nodes ending at or after base - 1 */
			err = rop_extend(f, x, x->base - 1, x->b);
			if (err) {
				x->a = old;
				return err;
			}
		}
		int64_t na = a > x->base ? a : x->base;
		x->a = na < old ? na : old;
	}
	if (b > x->b) {
		int64_t e = x->base;
		for (size_t i = 0; i < v->n; i++)
			e += v->v[i].len;
		/* e <= b: the vector must also hold the node at b */
		while (e <= b && v->n && v->v[v->n - 1].kind == k && x->R) {
			const struct node *t = x->R;
			while (t->l)
				t = t->l;
			if (t->s.kind != k)
				break;
			int64_t len = t->s.len;	/* t is freed below */
			/* pulls the nodes of R starting at e (its first) */
			err = rop_extend(f, x, x->a, e);
			if (err)
				return err;
			e += len;
		}
		int64_t nb = b < e ? b : e;
		if (nb > x->b)
			x->b = nb;
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

/* Ensure a segment boundary at pos inside the vector, scanning from
 * segment i, which starts at off (<= pos); returns the index of the
 * segment starting at pos (== n when pos is the end of the vector). */
static size_t v_cut_from(struct segvec *v, int64_t pos, size_t i, int64_t off)
{
	for (; i < v->n; i++) {
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

size_t v_cut(struct rm_file *f, const struct rop *x, int64_t pos)
{
	return v_cut_from(&f->vec, pos, 0, x->base);
}

/* Boundaries at s and e (s <= e): the scan for e resumes at s instead of
 * starting over. */
void v_cut2(struct rm_file *f, const struct rop *x, int64_t s, int64_t e,
	    size_t *i, size_t *j)
{
	*i = v_cut_from(&f->vec, s, 0, x->base);
	*j = v_cut_from(&f->vec, e, *i, s);
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
