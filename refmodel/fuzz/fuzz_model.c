/* SPDX-License-Identifier: MIT */
/*
 * fuzz_model.c - structure-aware libFuzzer harness of the model API
 * (refmodel.h): operation sequences decoded from the input run on the tree
 * model and on the flat model (tests/flatmodel.c) side by side, compared
 * after every operation by tests/pair.c (result or errno, size, bytes,
 * block map, FIEMAP, SEEK_DATA/SEEK_HOLE, stats, rm_check()).
 *
 * Input: a 3-byte header (profile, block size, s_maxbytes: the profile's
 * own or a small one), then operations of 12 bytes: kind, mode, an offset
 * and a length, each a selector byte (what it is near: 0, a block
 * multiple, the size, s_maxbytes, INT64_MAX, a negative value, ...) and a
 * small signed delta, plus a content seed.
 *
 * The flat model is compared within a span (FLAT_SPAN, below): the first
 * operation that reaches past it (a write or allocation near a large
 * s_maxbytes, say) ends the comparison, and from there on the operations run on the tree
 * alone, each followed by rm_check() and the API's own promises (size
 * within s_maxbytes, a refused operation changes nothing, lseek answers
 * its own rm_lseek_ok(), FIEMAP extents sorted and inside the range), so
 * the arithmetic near the largest offsets is fuzzed too.  FICLONERANGE
 * (no flat counterpart) runs in that phase.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/pair.h"
#include "rm_arith.h"

#define MAX_OPS 48
#define OP_BYTES 12
#define MAX_IO (64 << 10)	/* largest write or read a fuzz op moves */

struct in {
	const uint8_t *p;
	size_t n;
};

static uint8_t byte(struct in *in)
{
	uint8_t b = 0;

	if (in->n) {
		b = *in->p++;
		in->n--;
	}
	return b;
}

/* A value near something interesting, from a selector and an 8-bit
 * multiplier and a signed 8-bit delta. */
static int64_t decode_num(const struct pair *p, uint8_t sel, uint8_t m, int8_t d)
{
	int64_t bs = p->opts.blocksize ? p->opts.blocksize : 4096;
	int64_t mb = p->f.maxbytes, x;

	switch (sel % 12) {
	case 0: x = m; break;
	case 1: x = (int64_t)m * bs; break;
	case 2: x = (int64_t)m * bs + d; break;
	case 3: x = rm_sat_add(p->f.size, d); break;
	case 4: x = rm_sat_add(p->f.size, (int64_t)(int8_t)m * bs); break;
	case 5: x = rm_sat_add(mb, (int64_t)(int8_t)m * bs + d); break;
	case 6: x = rm_sat_add(INT64_MAX, -(int64_t)m); break;
	case 7: x = -(int64_t)m - 1; break;
	case 8: x = (int64_t)((uint64_t)m << (d & 63)); break;
	case 9: x = ((int64_t)1 << 32) * bs - (int64_t)m * bs + d; break;	/* ext4 2^32 blocks */
	case 10: x = (int64_t)m * 4096 + (uint8_t)d; break;
	default: x = (int64_t)m * 256 + (uint8_t)d; break;
	}
	return x;
}

static void decode_op(struct in *in, const struct pair *p, struct op *o)
{
	static const int modes[] = {
		0, RM_FALLOC_FL_KEEP_SIZE,
		RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_KEEP_SIZE,
		RM_FALLOC_FL_ZERO_RANGE,
		RM_FALLOC_FL_ZERO_RANGE | RM_FALLOC_FL_KEEP_SIZE,
		RM_FALLOC_FL_COLLAPSE_RANGE, RM_FALLOC_FL_INSERT_RANGE,
		RM_FALLOC_FL_UNSHARE_RANGE,
		RM_FALLOC_FL_UNSHARE_RANGE | RM_FALLOC_FL_KEEP_SIZE,
	};
	uint8_t k = byte(in), mode = byte(in);
	uint8_t os = byte(in), om = byte(in), od = byte(in);
	uint8_t ls = byte(in), lm = byte(in), ld = byte(in);

	memset(o, 0, sizeof(*o));
	o->dseed = (uint64_t)byte(in) | (uint64_t)byte(in) << 8 |
		   (uint64_t)byte(in) << 16 | (uint64_t)byte(in) << 24;
	o->off = decode_num(p, os, om, (int8_t)od);
	o->len = decode_num(p, ls, lm, (int8_t)ld);
	switch (k % 8) {
	case 0: o->kind = OP_PWRITE; break;
	case 1: o->kind = OP_PREAD; break;
	case 2: o->kind = OP_TRUNC; break;
	case 3: o->kind = OP_FSYNC; break;
	case 4: case 5: o->kind = OP_FALLOC; break;
	case 6: o->kind = OP_SEEK; break;
	default: o->kind = OP_FIEMAP; break;
	}
	if (o->kind == OP_FALLOC)
		o->mode = mode < 0xf0 ? modes[mode % 9] : (int)(mode & 0x7f);
	if (o->kind == OP_SEEK)
		o->mode = mode & 1 ? RM_SEEK_HOLE : mode & 2 ? RM_SEEK_DATA : mode % 5;
	if (o->kind == OP_TRUNC)
		o->len = o->off;
	/* a transfer moves at most MAX_IO bytes; longer lengths only as
	 * certain failures (negative, or off + len wrapping) */
	if ((o->kind == OP_PWRITE || o->kind == OP_PREAD) && o->len > MAX_IO &&
	    !(o->off > INT64_MAX - o->len))
		o->len = o->len % (MAX_IO + 1);
}

/* The flat model's comparison costs O(span) per op (one state byte per
 * byte in the bytes profile): the flat phase keeps the file within
 * FLAT_SPAN bytes (block profiles) or FLAT_SPAN / 16 (bytes profile), so
 * that an input runs in milliseconds; beyond, the tree runs alone. */
#define FLAT_SPAN (4 << 20)

static int too_far(const struct pair *p, const struct op *o)
{
	int64_t span = p->opts.profile == RM_PROFILE_BYTES ? FLAT_SPAN / 16 : FLAT_SPAN;
	int64_t end = 0;

	if (o->kind == OP_TRUNC)
		end = o->len;
	else if ((o->kind == OP_PWRITE || o->kind == OP_FALLOC) && o->off >= 0 &&
		 o->len > 0 && o->off <= INT64_MAX - o->len)
		end = o->off + o->len;
	if (o->kind == OP_FALLOC && (o->mode & RM_FALLOC_FL_INSERT_RANGE) &&
	    o->len > 0 && p->f.size <= INT64_MAX - o->len && p->f.size + o->len > end)
		end = p->f.size + o->len;
	return end > span || pair_too_big(p, o);
}

static void die(const struct pair *p, const struct op *o, size_t i, const char *why)
{
	fprintf(stderr, "fuzz_model: %s bs %u maxbytes %" PRId64 ": %s\n",
		rm_profile_name(p->opts.profile), p->opts.blocksize, p->f.maxbytes, why);
	print_op(stderr, i, o);
	abort();
}

/* The tree alone, past what the flat model holds. */
static void tree_only(struct pair *p, const struct op *o, size_t i)
{
	struct rm_file *t = p->t;
	int64_t size0 = rm_size(t), r = 0;
	uint64_t h0 = rm_hash(t, 0, 1 << 20);
	char msg[256];

	switch (o->kind) {
	case OP_PWRITE:
		fill_bytes(p->b1, o->len >= 0 && o->len <= MAXBUF ? (size_t)o->len : 0, o->dseed);
		r = rm_pwrite(t, p->b1, (size_t)o->len, o->off);
		break;
	case OP_PREAD:
		r = rm_pread(t, p->b1, (size_t)o->len, o->off);
		break;
	case OP_TRUNC:
		r = rm_truncate(t, o->len);
		break;
	case OP_FSYNC:
		r = rm_fsync(t);
		break;
	case OP_WRITEBACK:
		r = rm_writeback(t, o->off, o->len);
		break;
	case OP_MWRITE:
		fill_bytes(p->b1, o->len >= 0 && o->len <= MAXBUF ? (size_t)o->len : 0, o->dseed);
		r = rm_mwrite(t, p->b1, o->len >= 0 && o->len <= MAXBUF ? (size_t)o->len : 0, o->off);
		break;
	case OP_FALLOC:
		if (o->mode == RM_FALLOC_FL_UNSHARE_RANGE && (o->dseed & 1)) {
			/* FICLONERANGE within the file in this phase */
			r = rm_clone_range(t, t, o->off, o->len,
					   (int64_t)((o->dseed >> 1) & 0xffff) * 512);
			break;
		}
		r = rm_fallocate(t, o->mode, o->off, o->len);
		break;
	case OP_SEEK:
		r = rm_lseek(t, o->off, o->mode);
		if ((o->mode == RM_SEEK_DATA || o->mode == RM_SEEK_HOLE) &&
		    rm_lseek_ok(t, o->off, o->mode, r) != 1)
			die(p, o, i, "rm_lseek_ok rejects rm_lseek's answer");
		break;
	case OP_FIEMAP: {
		int64_t n = rm_fiemap(t, o->off, o->len, p->e1, MAXEXT);

		for (int64_t k = 0; k < n && k < MAXEXT; k++) {
			const struct rm_extent *e = &p->e1[k];

			if (e->length <= 0 || e->logical < 0 ||
			    e->logical > INT64_MAX - e->length ||
			    (k && e->logical < p->e1[k - 1].logical + p->e1[k - 1].length))
				die(p, o, i, "fiemap extent out of order or empty");
		}
		break;
	}
	}
	if (rm_check(t, msg, sizeof(msg)))
		die(p, o, i, msg);
	if (rm_size(t) > rm_maxbytes(t) || rm_size(t) < 0)
		die(p, o, i, "size outside [0, s_maxbytes]");
	/* A refused operation changes nothing (the one documented
	 * exception: ext4 insert range past EXT_MAX_BLOCKS grows i_size). */
	if (r < 0 && !(p->opts.profile == RM_PROFILE_EXT4 && o->kind == OP_FALLOC &&
		       o->mode == RM_FALLOC_FL_INSERT_RANGE) &&
	    (rm_size(t) != size0 || rm_hash(t, 0, 1 << 20) != h0))
		die(p, o, i, "a refused operation changed the file");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t bsizes[4] = { 512, 1024, 4096, 65536 };
	struct in in = { data, size };
	struct rm_opts o = { 0 };
	struct pair p;
	struct rng r;
	bool flat = true;
	uint8_t h0 = byte(&in), h1 = byte(&in), h2 = byte(&in);

	if (size < 3)
		return 0;
	o.profile = (enum rm_profile)(h0 % 3);
	o.blocksize = bsizes[h1 % 4];
	if (h2 & 1)	/* a small s_maxbytes, its edge within the flat span */
		o.maxbytes = ((int64_t)(h2 >> 1) + 1) * 16384 + (h2 & 2 ? 0 : 777);
	if (pair_open(&p, &o))
		abort();
	r.s = mix64((uint64_t)size ^ h0 ^ (uint64_t)h1 << 8 ^ (uint64_t)h2 << 16);
	for (size_t i = 0; i < MAX_OPS && in.n >= OP_BYTES; i++) {
		struct op op;

		decode_op(&in, &p, &op);
		if (flat && too_far(&p, &op))
			flat = false;
		if (!flat) {
			tree_only(&p, &op, i);
			continue;
		}
		if (pair_apply(&p, &op) || pair_compare(&p, &r))
			die(&p, &op, i, p.why);
	}
	pair_close(&p);
	return 0;
}
