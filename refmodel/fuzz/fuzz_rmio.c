/* SPDX-License-Identifier: MIT */
/*
 * fuzz_rmio.c - libFuzzer harness of rmio's command layer (rmcmd): an
 * arbitrary command script parsed and executed against a fresh model file.
 *
 * Input: byte 0 picks the profile (ext4, xfs, bytes), byte 1 the block
 * size (512, 1024, 4096, 65536) and whether s_maxbytes is the profile's
 * own or a small one (so its edge is reachable by commands that write);
 * the rest is the script, one command per line, as rmio reads it.
 *
 * After every command the harness aborts when:
 *   - rm_check() finds a broken invariant of the model;
 *   - the size passed s_maxbytes;
 *   - a command that failed to parse changed the file (rmcmd_parse()
 *     promises a malformed command never reaches the model);
 *   - the output of a command that parsed (a parse error echoes the
 *     user's text) has a range "[a..b]" or "a..b" that ends before it starts
 *     (an unsigned wrap in a fiemap line), or a bare number at or past
 *     2^63 (a negative value printed as unsigned), in the ext4 and xfs
 *     profiles.
 * The per-command byte limit is kept small (1 MiB) so that one input
 * cannot spend the fuzzer's time or memory on a legitimate big transfer;
 * a command over it must be refused before it allocates anything.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "refmodel.h"

#define FUZZ_IO_LIMIT (1 << 20)
#define FUZZ_MAX_LINES 64

static void fail(const char *what, const char *line, const char *detail)
{
	fprintf(stderr, "fuzz_rmio: %s after \"%s\": %s\n", what, line, detail);
	abort();
}

/* Does text hold a range a..b with b < a, or a number >= 2^63? */
static const char *bad_number(const char *text)
{
	const char *p = text;

	while (*p) {
		unsigned long long a, b;
		char *e;

		if (*p < '0' || *p > '9' || (p > text && (p[-1] == 'x' ||
		    (p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.'))) {
			p++;
			continue;
		}
		/* a hex word (md5sum, xxh3sum) is not a number */
		int hex = 0;

		for (e = (char *)p; (*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'f'); e++)
			hex |= *e >= 'a';
		if (hex) {
			p = e;
			continue;
		}
		errno = 0;
		a = strtoull(p, &e, 10);
		if (errno == ERANGE || a >= (1ull << 63))
			return p;
		if (e[0] == '.' && e[1] == '.' && e[2] >= '0' && e[2] <= '9') {
			b = strtoull(e + 2, &e, 10);
			if (errno == ERANGE || b >= (1ull << 63) || b + 1 < a)
				return p;
		}
		p = e;
	}
	return NULL;
}

/* What a command may not change when it fails to parse: size, allocation,
 * extent count, and the bytes of the first and last MiB (hashing costs
 * O(bytes), and a file may be terabytes long). */
static uint64_t fingerprint(const struct rm_file *f)
{
	struct rm_stats st;
	int64_t tail;

	rm_stats(f, &st);
	tail = st.size > (1 << 20) ? st.size - (1 << 20) : 0;
	return rm_hash(f, 0, 1 << 20) ^ rm_hash(f, tail, 1 << 20) * 31 ^
	       (uint64_t)st.size * 0x9e3779b97f4a7c15ull ^
	       (uint64_t)st.alloc_bytes * 0xbf58476d1ce4e5b9ull ^ st.nodes;
}

static void run_script(struct rm_file *f, const char *text, size_t n)
{
	char *outbuf = NULL;
	size_t outlen = 0;
	FILE *out = open_memstream(&outbuf, &outlen);
	FILE *err = fopen("/dev/null", "w");
	struct rmcmd_session s;
	char line[4200], msg[256];
	size_t pos = 0;
	long pos_out;
	int lines = 0;

	if (!out || !err)
		abort();
	rmcmd_session_init(&s, f, "f", out, err);
	s.fixed_usec = 1000000;
	s.io_limit = FUZZ_IO_LIMIT;
	while (pos < n && lines++ < FUZZ_MAX_LINES) {
		size_t e = pos, len;
		struct rmcmd cmd;
		uint64_t before;
		int r;

		while (e < n && text[e] != '\n')
			e++;
		len = e - pos < sizeof(line) - 1 ? e - pos : sizeof(line) - 1;
		memcpy(line, text + pos, len);
		line[len] = '\0';
		pos = e + 1;

		before = fingerprint(f);
		r = rmcmd_parse(&s, line, &cmd);
		if (r < 0 && fingerprint(f) != before)
			fail("a malformed command changed the file", line, "");
		if (r == 0)
			rmcmd_exec(&s, &cmd);
		if (rm_check(f, msg, sizeof(msg)))
			fail("rm_check", line, msg);
		if (rm_size(f) > rm_maxbytes(f))
			fail("size past s_maxbytes", line, "");
		/* this command's output: the stream is rewound after each
		 * command, so it is the first ftell() bytes.  (The bytes
		 * profile, an extension, may report extents shorter than
		 * xfs_io's 512-byte unit: xfs_io's arithmetic wraps on them
		 * as it would.) */
		fflush(out);
		pos_out = ftell(out);
		if (r == 0 && pos_out > 0 && rm_profile_of(f) != RM_PROFILE_BYTES) {
			char *text1 = strndup(outbuf, (size_t)pos_out);

			if (!text1)
				abort();
			if (bad_number(text1))
				fail("bad number in the output", line, bad_number(text1));
			free(text1);
		}
		rewind(out);
	}
	fclose(out);
	fclose(err);
	free(outbuf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t bsizes[4] = { 512, 1024, 4096, 65536 };
	struct rm_opts o = { 0 };
	struct rm_file *f;

	if (size < 2)
		return 0;
	o.profile = (enum rm_profile)(data[0] % 3);
	o.blocksize = bsizes[data[1] % 4];
	/* a small s_maxbytes, not a multiple of the block size half the time */
	if ((data[1] >> 2) & 1)
		o.maxbytes = (1 << 20) + ((data[1] >> 3) & 1) * 1000;
	if (rm_file_new(&o, &f))
		abort();
	run_script(f, (const char *)data + 2, size - 2);
	rm_file_free(f);
	return 0;
}
