/* SPDX-License-Identifier: MIT */
/*
 * md5.c - MD5 (RFC 1321), a small own implementation, and the MD5 of a
 * model file's content for rmio's md5sum command: the seed golden outputs
 * are md5sum(1) hashes, and this avoids a dependency on libmd.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

struct md5_ctx {
	uint32_t h[4];
	uint32_t k[64];
	uint64_t nbytes;
	unsigned char blk[64];
	size_t fill;
};

static const unsigned char md5_shift[64] = {
	7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
	5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
	4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
	6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
};

static void md5_init(struct md5_ctx *c)
{
	/* RFC 1321 defines K[i] as floor(2^32 * |sin(i + 1)|); IEEE double
	 * sin() gives all 64 exactly (checked by the MD5 test vectors in
	 * tests/test_cmd.c). */
	for (int i = 0; i < 64; i++)
		c->k[i] = (uint32_t)(fabs(sin((double)(i + 1))) * 4294967296.0);
	c->h[0] = 0x67452301u;
	c->h[1] = 0xefcdab89u;
	c->h[2] = 0x98badcfeu;
	c->h[3] = 0x10325476u;
	c->nbytes = 0;
	c->fill = 0;
}

static uint32_t rotl32(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

static void md5_block(struct md5_ctx *c, const unsigned char *p)
{
	uint32_t m[16];
	uint32_t a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3];

	for (int i = 0; i < 16; i++)
		m[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
		       (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
	for (int i = 0; i < 64; i++) {
		uint32_t f;
		int g;

		if (i < 16) {
			f = (b & cc) | (~b & d);
			g = i;
		} else if (i < 32) {
			f = (d & b) | (~d & cc);
			g = (5 * i + 1) % 16;
		} else if (i < 48) {
			f = b ^ cc ^ d;
			g = (3 * i + 5) % 16;
		} else {
			f = cc ^ (b | ~d);
			g = (7 * i) % 16;
		}
		f += a + c->k[i] + m[g];
		a = d;
		d = cc;
		cc = b;
		b += rotl32(f, md5_shift[i]);
	}
	c->h[0] += a;
	c->h[1] += b;
	c->h[2] += cc;
	c->h[3] += d;
}

static void md5_update(struct md5_ctx *c, const void *data, size_t len)
{
	const unsigned char *p = data;

	c->nbytes += len;
	while (len > 0) {
		size_t n = 64 - c->fill;

		if (n > len)
			n = len;
		memcpy(c->blk + c->fill, p, n);
		c->fill += n;
		p += n;
		len -= n;
		if (c->fill == 64) {
			md5_block(c, c->blk);
			c->fill = 0;
		}
	}
}

static void md5_final(struct md5_ctx *c, char hex[33])
{
	uint64_t bits = c->nbytes * 8;
	unsigned char pad = 0x80, zero = 0, lenb[8];

	md5_update(c, &pad, 1);
	while (c->fill != 56)
		md5_update(c, &zero, 1);
	for (int i = 0; i < 8; i++)
		lenb[i] = (unsigned char)(bits >> (8 * i));
	md5_update(c, lenb, 8);
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x",
			 (unsigned)(c->h[i / 4] >> (8 * (i % 4))) & 0xffu);
	hex[32] = '\0';
}

int rmcmd_md5_hex(const struct rm_file *f, char hex[33])
{
	enum { CHUNK = 1 << 20 };
	struct md5_ctx c;
	unsigned char *buf = malloc(CHUNK);
	int64_t off = 0, size = rm_size(f);

	if (!buf)
		return -ENOMEM;
	md5_init(&c);
	while (off < size) {
		ssize_t r = rm_pread(f, buf, CHUNK, off);

		if (r < 0) {
			free(buf);
			return (int)r;
		}
		if (r == 0)
			break;
		md5_update(&c, buf, (size_t)r);
		off += r;
	}
	free(buf);
	md5_final(&c, hex);
	return 0;
}
