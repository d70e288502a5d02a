/* SPDX-License-Identifier: MIT */
/*
 * tree.c - the piece table of librefmodel: a treap of segments keyed by
 * implicit byte offset (see internal.h for why a treap), with split/merge,
 * linear-time rebuild of a flattened range, coalescing of equal neighbours
 * and an in-order iterator.  Everything here is mechanism; the Linux
 * semantics live in ops.c.
 *
 * The augmentation (struct aug: bytes, allocated bytes, segments and nodes
 * of a subtree) is defined once, by aug_compute(), the way Linux's
 * augmented rbtrees derive theirs from one compute function
 * (RB_DECLARE_CALLBACKS in include/linux/rbtree_augmented.h): every node
 * whose children change is recomputed with it (split's spines, the rebuild
 * of a range), merge adds whole trees' sums (the one shortcut: a node that
 * gains a whole tree gains exactly its sums), and tree_check() recomputes
 * every node with it and compares.
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
#include "rm_vec.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
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
	return t ? t->sum.len : 0;
}

/* An upper bound of the segments of a subtree (for reservations) */
static inline size_t tcnt(const struct node *t) { return t ? (size_t)t->sum.nodes * RM_CHUNK : 0; }

/* ---- the augmentation ---- */

static const struct aug aug_none;

static inline const struct aug *aug_of(const struct node *t)
{
	return t ? &t->sum : &aug_none;
}

static inline void aug_add(struct aug *a, const struct aug *b)
{
	a->len += b->len;
	a->alloc += b->alloc;
	a->wbsegs += b->wbsegs;
	a->nodes += b->nodes;
}

static inline int64_t seg_alloc(const struct seg *s)
{
	return s->kind != K_HOLE ? s->len : 0;
}

/* The sums of t's subtree from its children's sums and its own segments'
 * totals (own_len, own_alloc: set with the segments, by node_fill()). */
static struct aug aug_compute(const struct node *t)
{
	struct aug a = *aug_of(t->l);
	struct aug own = { t->own_len, t->own_alloc, t->own_wb, 1 };
	aug_add(&a, &own);
	aug_add(&a, aug_of(t->r));
	return a;
}

static inline void augment(struct node *t)
{
	t->sum = aug_compute(t);
}

/* The totals a node caches of its own segments. */
static void own_totals(const struct node *t, int64_t *len, int64_t *alloc, uint16_t *wb)
{
	int64_t l = 0, al = 0;
	uint16_t w = 0;
	for (uint32_t i = 0; i < t->n; i++) {
		l += t->e[i].s.len;
		al += seg_alloc(&t->e[i].s);
		w += t->e[i].s.wb != 0;
	}
	*len = l;
	*alloc = al;
	*wb = w;
}

/* Give t the segments s[0..n) (1 <= n <= RM_CHUNK); the caller links t
 * and augment()s it. */
static void node_fill(struct node *t, const struct seg *s, size_t n)
{
	int64_t l = 0, al = 0;
	uint16_t w = 0;
	t->n = (uint16_t)n;
	/* the totals as own_totals() counts them (tree_check() recounts
	 * with it), in the copying loop */
	for (size_t i = 0; i < n; i++) {
		t->e[i].s = s[i];
		l += s[i].len;
		al += seg_alloc(&s[i]);
		w += s[i].wb != 0;
	}
	t->own_len = l;
	t->own_alloc = al;
	t->own_wb = w;
}

/* ---- nodes ---- */

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
	n->l = n->r = NULL;	/* the caller fills, links and augment()s it */
	n->prio = next_prio(f);
	return n;
}

static void node_put(struct rm_file *f, struct node *n)
{
	n->l = f->freelist;
	f->freelist = n;
	f->nfree++;
}

#define SLAB_NODES 63	/* + one header line: 16 KiB */

static int reserve_nodes(struct rm_file *f, size_t want)
{
	while (f->nfree < want) {
		/* one header line (next-slab pointer) + the nodes; a clone
		 * asks for all its nodes at once */
		size_t k = want - f->nfree > SLAB_NODES ? want - f->nfree : SLAB_NODES;
		if (k > (SIZE_MAX - 64) / sizeof(struct node))
			return -ENOMEM;
		char *slab = aligned_alloc(64, 64 + k * sizeof(struct node));
		if (!slab)
			return -ENOMEM;
		*(void **)slab = f->slabs;
		f->slabs = slab;
		for (size_t i = k; i-- > 0;)
			node_put(f, (struct node *)(slab + 64 + i * sizeof(struct node)));
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
	int err = RM_VEC_RESERVE(&f->vec.v, &f->vec.cap, want, 16);
	/* the rebuild stacks at most one node per segment */
	return err ? err : RM_VEC_RESERVE(&f->stk, &f->stkcap, want, 16);
}

/* Detach the first node of *tp in order, rotating the left spine's
 * right children up on the way, so in-order consumption of a tree
 * (freeing, flattening) never recurses. */
static struct node *take_first(struct node **tp)
{
	struct node *t = *tp;
	while (t->l) {
		struct node *l = t->l;
		t->l = l->r;
		l->r = t;
		t = l;
	}
	*tp = t->r;
	return t;
}

void tree_free(struct rm_file *f, struct node *t)
{
	while (t) {
		struct node *n = take_first(&t);
		for (uint32_t i = 0; i < n->n; i++)
			v_drop_seg(&n->e[i].s);
		if (f)
			node_put(f, n);
	}
}

/* Top-down and iterative: at each step the winning root keeps its side
 * and the whole other tree ends up below it, so its sums grow by that
 * tree's sums (read from a root not yet modified) -- one pass down the
 * merge path, no recursion and no pass back up. */
static struct node *merge(struct node *a, struct node *b)
{
	struct node *root = NULL, **link = &root;
	while (a && b) {
		if (a->prio > b->prio) {
			aug_add(&a->sum, &b->sum);
			*link = a;
			link = &a->r;
			a = a->r;
		} else {
			aug_add(&b->sum, &a->sum);
			*link = b;
			link = &b->l;
			b = b->l;
		}
	}
	*link = a ? a : b;
	return root;
}

/* A path of nodes that split3 detaches, top-down, into one new tree: each
 * node keeps one subtree (the left one on a spine that grows to the
 * right) and its other link will point to the next node of the spine.
 * Until the spine is closed that link points back up, so closing it can
 * walk it bottom-up, set the links and recompute each node with
 * aug_compute() once its new child is final: no stack, no depth limit. */
struct spine {
	struct node *last;	/* deepest node so far */
	bool right;		/* grows through ->r (keeps ->l) */
};

/* Put t on the spine; returns the subtree the descent continues in (the
 * one t gives up).  *p is the offset where t's subtree starts, and moves
 * past t and its left subtree when the descent goes right. */
static struct node *spine_take(struct spine *sp, struct node *t, int64_t *p)
{
	struct node *next;
	if (sp->right) {
		*p += tree_len(t->l) + t->own_len;
		next = t->r;
		t->r = sp->last;
	} else {
		next = t->l;
		t->l = sp->last;
	}
	sp->last = t;
	return next;
}

/* Link the spine bottom-up, augmenting each node; returns its top. */
static struct node *spine_close(struct spine *sp)
{
	struct node *child = NULL, *u = sp->last;
	while (u) {
		struct node **link = sp->right ? &u->r : &u->l;
		struct node *up = *link;
		*link = child;
		augment(u);
		child = u;
		u = up;
	}
	return child;
}

/* The three lines of a node's segments (a node is 256 bytes, 64-aligned). */
_Static_assert(sizeof(struct node) == 256, "node_prefetch_segs() fetches 4 lines");
static inline void node_prefetch_segs(const struct node *t)
{
	const char *c = (const char *)t;
	__builtin_prefetch(c + 64);
	__builtin_prefetch(c + 128);
	__builtin_prefetch(c + 192);
}

/* Node-boundary split of the whole tree t (no node is cut): nodes ending
 * before a go to *l, nodes starting after b to *r, the rest (the nodes
 * overlapping [a, b] plus the neighbours at a-1 and b) to *m.
 *
 * One pass down, loading no node off the search path, then one pass back
 * up each of the four spines the changed nodes form: the right spine of
 * *l, the left spine of *r, and under the *m root the left spine of its
 * new left child and the right spine of its new right child. */
static void split3(struct node *t, int64_t a, int64_t b,
		   struct node **l, struct node **m, struct node **r)
{
	struct spine L = { NULL, true }, R = { NULL, false };
	int64_t p = 0;	/* offset of the start of t's subtree */
	while (t) {
		/* the next node is t->l, whose sums are read now, or t->r:
		 * have both lines on the way at once */
		__builtin_prefetch(t->r);
		int64_t start = p + tree_len(t->l);
		if (start + t->own_len < a)
			t = spine_take(&L, t, &p);	/* t and its left subtree */
		else if (start > b)
			t = spine_take(&R, t, &p);	/* t and its right subtree */
		else
			break;
	}
	*m = t;
	if (t) {
		/* t is the root of *m: split its left subtree by "ends before
		 * a" and its right one by "starts after b".  The descent read
		 * only the first line of each node; the segments of the nodes
		 * of *m are read next (flatten_to()), so their lines are
		 * fetched now, under the spine work. */
		struct spine ML = { NULL, false }, MR = { NULL, true };
		int64_t q = p + tree_len(t->l) + t->own_len;	/* end of t's segments */
		node_prefetch_segs(t);
		struct node *u = t->l;
		while (u) {
			bool in = p + tree_len(u->l) + u->own_len >= a;
			if (in)
				node_prefetch_segs(u);
			u = spine_take(in ? &ML : &L, u, &p);
		}
		u = t->r;
		while (u) {
			bool in = q + tree_len(u->l) <= b;
			if (in)
				node_prefetch_segs(u);
			u = spine_take(in ? &MR : &R, u, &q);
		}
		t->l = spine_close(&ML);
		t->r = spine_close(&MR);
		augment(t);
	}
	*l = spine_close(&L);
	*r = spine_close(&R);
}

/* Copy t's segments in order to dst and free its nodes; returns how many
 * (t's sum.segs). */
static size_t flatten_to(struct rm_file *f, struct node *t, struct seg *dst)
{
	size_t n = 0;
	while (t) {
		struct node *u = take_first(&t);
		for (uint32_t i = 0; i < u->n; i++)
			dst[n++] = u->e[i].s;
		node_put(f, u);
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
	 * segments (each operation makes fewer than 24 cuts; the rebuild
	 * needs no more nodes than that beyond the ones it flattens) */
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
			size_t c = tree_segs(m);	/* exact: the vector shifts by it */
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
 * run of segments that in_run() accepts continues from its edges: while
 * the first segment of the vector is accepted and so is the last node of
 * L, that node moves into the vector (likewise at the right end with R),
 * and the range ends at a / b or, where the run stops first, at the
 * vector's edge (where an accepted segment meets one that is not, so no
 * edit that keeps the run accepted there can make them mergeable).  For
 * callers whose edits past the old edges depend only on that run (ext4's
 * M3 zero-out), this is what rop_extend(a, b) would give without
 * flattening every untouched node within reach.  The caller checks that
 * the run does cross the old edge.  Errors as rop_extend(). */
int rop_extend_run(struct rm_file *f, struct rop *x, int64_t a, int64_t b,
		   bool (*in_run)(const struct seg *))
{
	struct segvec *v = &f->vec;
	int err;
	if (a < x->a) {
		int64_t old = x->a;
		/* base >= a: the vector must also hold the segment before
		 * a, or an edit at a could make the first segment equal to
		 * L's last one */
		while (x->base >= a && v->n && in_run(&v->v[0]) && x->L) {
			const struct seg *last = tree_last(x->L);
			if (!in_run(last))
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
		while (e <= b && v->n && in_run(&v->v[v->n - 1]) && x->R) {
			const struct node *t = x->R;
			while (t->l)
				t = t->l;
			if (!in_run(&t->e[0].s))
				break;
			int64_t len = t->own_len;	/* t is freed below */
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
	if (p->kind != q->kind || p->may != q->may || p->wb != q->wb)
		return false;
	if (p->kind == K_DATA)
		return p->buf == q->buf && p->boff + p->len == q->boff;
	return true;
}

/* Copy the written neighbours p and s (p just before s, s ending at
 * s_end) into one buffer when they are small together, so that a block
 * holds few segments however many small writes it took.  Zeros become
 * stored zero bytes only when the caller says (zeros: a crowded range)
 * and only inside EOF (stored data never lies past it: rm_check()).
 * false when they stay apart (also when out of memory: coalescing is
 * only an economy). */
static bool coalesce_small(const struct rm_file *f, struct seg *p, struct seg *s, int64_t s_end,
			   bool zeros)
{
	bool pw = p->kind == K_DATA || p->kind == K_ZERO;
	bool sw = s->kind == K_DATA || s->kind == K_ZERO;
	if (!pw || !sw || (p->kind != K_DATA && s->kind != K_DATA) ||
	    p->may != s->may || p->wb != s->wb || p->len + s->len > RM_COALESCE_BYTES ||
	    (p->kind == K_ZERO || s->kind == K_ZERO ? !zeros || s_end > f->size : false))
		return false;
	size_t n = (size_t)(p->len + s->len);
	struct rm_buf *b = malloc(sizeof(*b) + n);
	if (!b)
		return false;
	b->refs = 1;
	b->len = n;
	const struct seg *part[2] = { p, s };
	size_t at = 0;
	for (int k = 0; k < 2; k++) {
		size_t len = (size_t)part[k]->len;
		if (part[k]->kind == K_DATA)
			memcpy(b->data + at, part[k]->buf->data + part[k]->boff, len);
		else
			memset(b->data + at, 0, len);
		at += len;
	}
	v_drop_seg(p);
	v_drop_seg(s);
	p->kind = K_DATA;
	p->buf = b;
	p->boff = 0;
	p->len = (int64_t)n;
	return true;
}

void rop_close(struct rm_file *f, struct rop *x)
{
	struct segvec *v = &f->vec;
	int64_t base = x->base;

	/* normalise and coalesce */
	size_t o = 0;
	const bool bytes = f->profile == RM_PROFILE_BYTES, wt = f->write_through;
	int64_t pos = base;	/* where v->v[i] starts (its length never changes below) */
	/* zeros become stored bytes only where the range has grown crowded */
	const bool crowded = v->n > RM_COALESCE_SEGS;
	for (size_t i = 0; i < v->n; pos += v->v[i].len, i++) {
		/* in place: o <= i, and segments are copied only when
		 * something before them was dropped or merged */
		struct seg *s = &v->v[i];
		if (s->len == 0) {
			v_drop_seg(s);
			continue;
		}
		unsigned st = kind_state(s->kind);
		s->may = (uint8_t)(bytes ? st : s->may | st);	/* bytes: no latitude */
		/* only written blocks hold page-cache state of their own (a
		 * hole or unwritten extent that an operation made has no
		 * dirty pages left: they were dropped or written) */
		if (s->kind == K_HOLE || s->kind == K_UNWRITTEN || wt)
			s->wb = 0;
		if (s->kind != K_DATA) {
			s->buf = NULL;
			s->boff = 0;
		}
		if (o && mergeable(&v->v[o - 1], s)) {
			v->v[o - 1].len += s->len;
			v_drop_seg(s);
			continue;
		}
		if (o && coalesce_small(f, &v->v[o - 1], s, pos + s->len, crowded))
			continue;
		if (o != i)
			v->v[o] = *s;
		o++;
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
	/* pack the vector into ceil(k / RM_CHUNK) nodes as evenly as it goes
	 * and build a treap of them in O(k): Cartesian tree by priority,
	 * right spine kept in f->stk */
	size_t k = v->n, nn = (k + RM_CHUNK - 1) / RM_CHUNK, sp = 0, i = 0;
	for (size_t c = 0; c < nn; c++) {
		size_t take = (k - i + (nn - c) - 1) / (nn - c);
		struct node *n = node_get(f);
		node_fill(n, v->v + i, take);
		i += take;
		struct node *last = NULL;
		while (sp && f->stk[sp - 1]->prio < n->prio) {
			last = f->stk[--sp];
			augment(last);
		}
		n->l = last;
		if (sp)
			f->stk[sp - 1]->r = n;
		f->stk[sp++] = n;
	}
	while (sp > 1)
		augment(f->stk[--sp]);
	struct node *m = NULL;
	if (sp) {
		augment(f->stk[0]);
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
		return aug_of(t)->alloc;
	int64_t sum = 0;
	while (t) {
		int64_t ll = tree_len(t->l);
		if (off < ll) {
			sum += t->own_alloc + aug_of(t->r)->alloc;
			t = t->l;
		} else if (off < ll + t->own_len) {
			/* the node holding off: its segments from off on */
			int64_t p = ll;
			for (uint32_t i = 0; i < t->n; i++) {
				int64_t e = p + t->e[i].s.len;
				if (t->e[i].s.kind != K_HOLE && e > off)
					sum += e - (p > off ? p : off);
				p = e;
			}
			sum += aug_of(t->r)->alloc;
			break;
		} else {
			off -= ll + t->own_len;
			t = t->r;
		}
	}
	return sum;
}

/* Copy a tree into dst's slabs (dst has reserved its nodes). */
static struct node *clone_rec(struct rm_file *dst, const struct node *t)
{
	if (!t)
		return NULL;
	struct node *n = dst->freelist;
	dst->freelist = n->l;
	dst->nfree--;
	*n = *t;
	for (uint32_t i = 0; i < n->n; i++)
		if (n->e[i].s.kind == K_DATA)
			n->e[i].s.buf->refs++;
	n->l = clone_rec(dst, t->l);
	n->r = clone_rec(dst, t->r);
	return n;
}

int tree_clone(struct rm_file *dst, const struct node *t, struct node **out)
{
	int err = reserve_nodes(dst, tree_nodes(t));
	if (err)
		return err;
	*out = clone_rec(dst, t);
	return 0;
}

size_t tree_segs(const struct node *t)
{
	size_t n = 0;
	while (t) {	/* O(nodes): rm_stats() only */
		n += t->n + tree_segs(t->l);
		t = t->r;
	}
	return n;
}

int64_t tree_wb_find(const struct node *t, int64_t off, int64_t *len)
{
	int64_t base = 0;
	while (t && t->sum.wbsegs) {
		int64_t ll = tree_len(t->l);
		/* the left subtree first, when it can hold one ending after off */
		if (off < base + ll && aug_of(t->l)->wbsegs) {
			int64_t r = tree_wb_find(t->l, off - base, len);
			if (r >= 0)
				return base + r;
		}
		if (t->own_wb && off < base + ll + t->own_len) {
			int64_t p = base + ll;
			for (uint32_t i = 0; i < t->n; i++) {
				const struct seg *g = &t->e[i].s;
				if (g->wb && p + g->len > off) {
					*len = g->len;
					return p;
				}
				p += g->len;
			}
		}
		base += ll + t->own_len;
		t = t->r;
	}
	return -1;
}
/* Would segment i of t, its write-back state cleared, merge with its
 * previous (*pm) or next (*nm) segment?  pa and sa are t's nearest
 * ancestors of which t is in the right and in the left subtree (NULL:
 * none). */
static void wb_clear_merges(const struct node *t, uint32_t i, const struct node *pa,
			    const struct node *sa, bool *pm, bool *nm)
{
	struct seg g = t->e[i].s;
	g.wb = 0;
	const struct seg *prev = NULL, *next = NULL;
	if (i > 0) {
		prev = &t->e[i - 1].s;
	} else if (t->l) {
		const struct node *q = t->l;
		while (q->r)
			q = q->r;
		prev = &q->e[q->n - 1].s;
	} else if (pa) {
		prev = &pa->e[pa->n - 1].s;
	}
	if (i + 1 < t->n) {
		next = &t->e[i + 1].s;
	} else if (t->r) {
		const struct node *q = t->r;
		while (q->l)
			q = q->l;
		next = &q->e[0].s;
	} else if (sa) {
		next = &sa->e[0].s;
	}
	*pm = prev && mergeable(prev, &g);
	*nm = next && mergeable(&g, next);
}

/* Remove segments i..i+k-1 of t (their buffer references already moved
 * or dropped). */
static void node_remove(struct node *t, uint32_t i, uint32_t k)
{
	memmove(&t->e[i], &t->e[i + k], (t->n - i - k) * sizeof(t->e[0]));
	t->n = (uint16_t)(t->n - k);
}

struct wbc {
	int64_t s, e;
	int64_t fp, flen;	/* the segment that stopped the walk */
	bool stop;
};

/* Does t's subtree, starting at base, hold write-back state in [s, e)? */
static inline bool wbc_in(const struct wbc *c, const struct node *t, int64_t base)
{
	return t && t->sum.wbsegs && base < c->e && base + t->sum.len > c->s;
}

#define WBC_CHAIN 8

/* In order over the subtrees holding write-back state in [s, e) (t's
 * subtree, starting at base, is one: wbc_in()): returns how many segments
 * of t's subtree it cleared (and took them off the wbsegs of the subtrees
 * it went through).  A cleared segment that merges with neighbours in its
 * own node merges there (the node keeps its length, allocation and
 * place); one that would merge across nodes stops the walk.  Left
 * subtrees recurse, right ones continue the loop (up to WBC_CHAIN nodes
 * of a right chain, then recursion), and a subtree is entered only when
 * wbc_in() says so: one call per left turn instead of one per node and
 * child. */
static uint32_t wbc_rec(struct wbc *c, struct node *t, int64_t base, const struct node *pa,
			const struct node *sa)
{
	struct node *chain[WBC_CHAIN];
	uint32_t cl[WBC_CHAIN], n = 0, acc = 0;
	for (;;) {
		int64_t ll = tree_len(t->l);
		uint32_t cleared = 0;
		if (t->own_wb)
			node_prefetch_segs(t);	/* read below, after the left subtree */
		if (wbc_in(c, t->l, base))
			cleared = wbc_rec(c, t->l, base, pa, t);
		int64_t p = base + ll;
		if (!c->stop && t->own_wb && p < c->e && p + t->own_len > c->s) {
			for (uint32_t i = 0; i < t->n && p < c->e;) {
				struct seg *g = &t->e[i].s;
				int64_t q = p + g->len;
				if (!g->wb || q <= c->s) {
					p = q;
					i++;
					continue;
				}
				bool pm = false, nm = false;
				if (p >= c->s && q <= c->e)
					wb_clear_merges(t, i, pa, sa, &pm, &nm);
				if (p < c->s || q > c->e || (pm && i == 0) || (nm && i + 1 == t->n)) {
					c->stop = true;
					c->fp = p;
					c->flen = g->len;
					break;
				}
				g->wb = 0;
				t->own_wb--;
				cleared++;
				if (nm) {
					/* the next one (clean) joins g */
					struct seg *nx = &t->e[i + 1].s;
					g->len += nx->len;
					q += nx->len;
					v_drop_seg(nx);
					node_remove(t, i + 1, 1);
				}
				if (pm) {
					/* g joins the previous one */
					t->e[i - 1].s.len += g->len;
					v_drop_seg(g);
					node_remove(t, i, 1);
				} else {
					i++;
				}
				p = q;
			}
		}
		chain[n] = t;
		cl[n++] = cleared;
		if (c->stop)
			break;
		int64_t rb = base + ll + t->own_len;
		if (!wbc_in(c, t->r, rb))
			break;
		if (n == WBC_CHAIN) {
			acc = wbc_rec(c, t->r, rb, t, sa);
			break;
		}
		pa = t;
		base = rb;
		t = t->r;
	}
	/* each node of the chain lost what its own part, its left subtree
	 * and the rest of the chain below it cleared */
	while (n--) {
		acc += cl[n];
		chain[n]->sum.wbsegs -= acc;
	}
	return acc;
}

bool tree_wb_clean(struct node *root, int64_t s, int64_t e, int64_t *fp, int64_t *flen)
{
	struct wbc c = { s, e, 0, 0, false };
	if (wbc_in(&c, root, 0))
		wbc_rec(&c, root, 0, NULL, NULL);
	if (!c.stop)
		return false;
	*fp = c.fp;
	*flen = c.flen;
	return true;
}

size_t tree_nodes(const struct node *t) { return aug_of(t)->nodes; }

int tree_depth(const struct node *t)
{
	if (!t)
		return 0;
	int l = tree_depth(t->l), r = tree_depth(t->r);
	return 1 + (l > r ? l : r);
}

const struct seg *tree_last(const struct node *t)
{
	if (!t)
		return NULL;
	while (t->r)
		t = t->r;
	return &t->e[t->n - 1].s;
}

/* ---- integrity check ---- */

struct tchk {
	int (*seg_ok)(void *ctx, const struct seg *s, int64_t pos);
	void *ctx;
	char *msg;
	size_t msglen;
	int64_t pos;
	int bad;	/* 1: tree_check failed, 2: seg_ok stopped it */
};

#define TFAIL(c, ...) do { if ((c)->msg && (c)->msglen) snprintf((c)->msg, (c)->msglen, __VA_ARGS__); (c)->bad = 1; } while (0)

static void chk_rec(struct tchk *c, const struct node *t, int depth)
{
	if (!t || c->bad)
		return;
	if (depth > 10000) {
		TFAIL(c, "tree depth runaway");
		return;
	}
	if ((t->l && t->l->prio > t->prio) || (t->r && t->r->prio > t->prio)) {
		TFAIL(c, "heap order broken at %lld", (long long)c->pos);
		return;
	}
	if (t->n < 1 || t->n > RM_CHUNK) {
		TFAIL(c, "node with %u segments at %lld", t->n, (long long)c->pos);
		return;
	}
	chk_rec(c, t->l, depth + 1);
	for (uint32_t i = 0; i < t->n && !c->bad; i++) {
		if (c->seg_ok(c->ctx, &t->e[i].s, c->pos))
			c->bad = 2;
		c->pos += t->e[i].s.len;
	}
	chk_rec(c, t->r, depth + 1);
	if (c->bad)
		return;
	/* the augmentation recomputed with the functions that maintain it */
	int64_t len, alloc;
	uint16_t wb;
	own_totals(t, &len, &alloc, &wb);
	struct aug a = aug_compute(t);
	if (len != t->own_len || alloc != t->own_alloc || wb != t->own_wb)
		TFAIL(c, "stale node totals at node ending %lld", (long long)c->pos);
	else if (memcmp(&a, &t->sum, sizeof(a)))
		TFAIL(c, "stale augmentation at node ending %lld", (long long)c->pos);
}

int tree_check(const struct node *t, int (*seg_ok)(void *ctx, const struct seg *s, int64_t pos),
	       void *ctx, char *msg, size_t msglen)
{
	struct tchk c = { seg_ok, ctx, msg, msglen, 0, 0 };
	chk_rec(&c, t, 0);
	return c.bad ? -EUCLEAN : 0;
}

/* ---- iterator ---- */

static bool it_push(struct it *it, const struct node *n)
{
	if (it->n == it->cap) {
		/* from the inline array to the heap on the first overflow */
		const struct node **s = it->heap ? it->stk : NULL;
		size_t cap = it->heap ? it->cap : 0;
		if (RM_VEC_RESERVE(&s, &cap, it->n + 1, 2 * it->cap))
			return false;
		if (!it->heap)
			memcpy(s, it->stk, it->n * sizeof(*s));
		it->stk = s;
		it->cap = cap;
		it->heap = true;
	}
	it->stk[it->n++] = n;
	return true;
}

/* The stack holds ancestors whose segments come after the current node's,
 * each with its start offset tracked by cur_start arithmetic in it_next. */
void it_init(struct it *it, const struct node *root, int64_t off)
{
	it->stk = it->small;
	it->cap = sizeof(it->small) / sizeof(it->small[0]);
	it->n = 0;
	it->heap = false;
	it->node = NULL;
	it->cur = NULL;
	it->cur_start = 0;
	const struct node *t = root;
	int64_t base = 0;
	while (t) {
		int64_t ll = tree_len(t->l);
		if (off < base + ll) {
			if (!it_push(it, t)) {
				it->cur = NULL;
				return;
			}
			t = t->l;
		} else if (off < base + ll + t->own_len) {
			int64_t p = base + ll;
			uint32_t i = 0;
			while (off >= p + t->e[i].s.len)
				p += t->e[i++].s.len;
			it->node = t;
			it->cur = &t->e[i];
			it->cur_start = p;
			return;
		} else {
			base += ll + t->own_len;
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
	const struct node *t = it->node;
	int64_t next_start = it->cur_start + it->cur->s.len;
	it->cur_start = next_start;
	if (it->cur + 1 < t->e + t->n) {
		it->cur++;
		return;
	}
	if (t->r) {
		t = t->r;
		while (t->l) {
			if (!it_push(it, t)) {
				it->cur = NULL;
				return;
			}
			t = t->l;
		}
	} else if (it->n) {
		t = it->stk[--it->n];
	} else {
		it->cur = NULL;
		return;
	}
	it->node = t;
	it->cur = &t->e[0];
}

void it_done(struct it *it)
{
	if (it->heap)
		free(it->stk);
	it->heap = false;
}
