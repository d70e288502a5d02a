/* SPDX-License-Identifier: MIT */
/*
 * test_limits.c - the model's arithmetic at the limits: every operation of
 * every profile (pwrite, pread, truncate, every fallocate mode, FICLONERANGE,
 * FIEMAP, SEEK_DATA/SEEK_HOLE) at offsets and lengths around 0, the block
 * boundaries, the ext4 format limit (2^32 logical blocks), s_maxbytes and
 * INT64_MAX, from three starting files (small; grown to s_maxbytes with
 * data in its last blocks; with data just below the ext4 format limit).
 *
 * Each call is checked for
 *   - the errno Linux 6.1 gives, computed here from the kernel's checks,
 *     written out independently of src/ (the functions are cited where
 *     each rule is);
 *   - termination: a watchdog (SIGALRM) fails the test when one call runs
 *     for seconds (arithmetic that overflows near 2^63 can
 *     turn a range loop into one that never ends);
 *   - a refused call changing nothing (size, allocation, extent count, the
 *     map and bytes at both ends of the file), except the one failing call
 *     the kernel lets change the file: ext4 insert range that would shift
 *     the last extent past EXT_MAX_BLOCKS (-EINVAL, i_size grown by len,
 *     ext4_insert_range());
 *   - rm_check() after the call, and a size within [0, s_maxbytes];
 *   - no UBSan report: CI runs this suite in the ASan+UBSan build with
 *     -fno-sanitize-recover, so a signed overflow fails it.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "refmodel.h"
#include "rm_arith.h"

#define KEEP	RM_FALLOC_FL_KEEP_SIZE
#define PUNCH	RM_FALLOC_FL_PUNCH_HOLE
#define COLL	RM_FALLOC_FL_COLLAPSE_RANGE
#define ZERO	RM_FALLOC_FL_ZERO_RANGE
#define INS	RM_FALLOC_FL_INSERT_RANGE
#define UNSH	RM_FALLOC_FL_UNSHARE_RANGE

/* MAX_RW_COUNT (include/linux/fs.h): INT_MAX & PAGE_MASK */
#define MAX_RW	0x7ffff000LL
/* the data a write hands over: no test transfer is longer */
#define BUFSZ	(3 * 65536 + 2)
/* ext4: 32-bit logical block numbers (EXT_MAX_BLOCKS + 1 blocks) */
#define EXT4_BLOCKS (1LL << 32)

static unsigned char wbuf[BUFSZ], rbuf[BUFSZ];

/* ---- watchdog ---------------------------------------------------------- */

static char current_call[256];

static void on_alarm(int sig)
{
	static const char msg[] = "test_limits: a call did not return within 20 s: ";

	(void)sig;
	/* async-signal-safe output only */
	if (write(2, msg, sizeof(msg) - 1) < 0 ||
	    write(2, current_call, strnlen(current_call, sizeof(current_call))) < 0 ||
	    write(2, "\n", 1) < 0)
		_exit(1);
	_exit(1);
}

static void watch(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(current_call, sizeof(current_call), fmt, ap);
	va_end(ap);
	alarm(20);
}

static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- what a call must not change when it fails ------------------------- */

struct snap {
	int64_t size, alloc, map_end;
	size_t nodes;
	uint64_t h_head, h_tail;
	char map_head[512], map_tail[512];
};

struct mapbuf2 {
	char *p;
	size_t left;
};

static int snap_cb(void *ctx, const struct rm_run *r)
{
	struct mapbuf2 *m = ctx;
	int n = snprintf(m->p, m->left, "%" PRId64 "+%" PRId64 ":%u/%u ",
			 r->off, r->len, r->state, r->may);

	if (n > 0 && (size_t)n < m->left) {
		m->p += n;
		m->left -= (size_t)n;
	}
	return 0;
}

static void walk_str(const struct rm_file *f, int64_t a, int64_t b, char *out, size_t n)
{
	struct mapbuf2 m = { out, n };

	out[0] = '\0';
	if (a < b)
		assert_int_equal(rm_walk(f, a, b, snap_cb, &m), 0);
}

static void snap_take(const struct rm_file *f, struct snap *s)
{
	struct rm_stats st;
	int64_t w = 8 * (int64_t)rm_blocksize(f);
	int64_t tail = s->size = rm_size(f);

	rm_stats(f, &st);
	s->alloc = st.alloc_bytes;
	s->nodes = st.nodes;
	s->map_end = rm_map_end(f);
	s->h_head = rm_hash(f, 0, w);
	s->h_tail = rm_hash(f, tail > w ? tail - w : 0, w);
	walk_str(f, 0, w, s->map_head, sizeof(s->map_head));
	walk_str(f, tail > w ? tail - w : 0, rm_sat_add(tail, w), s->map_tail,
		 sizeof(s->map_tail));
}

static void assert_unchanged(const struct rm_file *f, const struct snap *a)
{
	struct snap b;

	snap_take(f, &b);
	if (a->size != b.size || a->alloc != b.alloc || a->nodes != b.nodes ||
	    a->map_end != b.map_end || a->h_head != b.h_head || a->h_tail != b.h_tail ||
	    strcmp(a->map_head, b.map_head) || strcmp(a->map_tail, b.map_tail))
		fail_msg("%s: refused, yet the file changed (size %" PRId64 " -> %" PRId64
			 ", alloc %" PRId64 " -> %" PRId64 ", map [%s] -> [%s], tail [%s] -> [%s])",
			 current_call, a->size, b.size, a->alloc, b.alloc, a->map_head,
			 b.map_head, a->map_tail, b.map_tail);
}

static void after_call(const struct rm_file *f)
{
	char msg[256];

	alarm(0);
	if (rm_check(f, msg, sizeof(msg)))
		fail_msg("%s: rm_check: %s", current_call, msg);
	if (rm_size(f) < 0 || rm_size(f) > rm_maxbytes(f))
		fail_msg("%s: size %" PRId64 " outside [0, s_maxbytes]", current_call, rm_size(f));
}

/* ---- the kernel's checks, written out ---------------------------------- */

/* vfs_fallocate() (fs/open.c), in its order. */
static int exp_vfs_fallocate(int mode, int64_t off, int64_t len, int64_t mb)
{
	if (off < 0 || len <= 0)
		return -EINVAL;
	if (mode & ~(KEEP | PUNCH | COLL | ZERO | INS | UNSH))
		return -EOPNOTSUPP;
	if ((mode & (PUNCH | ZERO)) == (PUNCH | ZERO))
		return -EOPNOTSUPP;
	if ((mode & PUNCH) && !(mode & KEEP))
		return -EOPNOTSUPP;
	if ((mode & COLL) && (mode & ~COLL))
		return -EINVAL;
	if ((mode & INS) && (mode & ~INS))
		return -EINVAL;
	if ((mode & UNSH) && (mode & ~(UNSH | KEEP)))
		return -EINVAL;
	/* "(offset + len) > s_maxbytes || (offset + len) < 0": the sum in
	 * loff_t, i.e. wrapping past INT64_MAX */
	if (len > INT64_MAX - off || off + len > mb)
		return -EFBIG;
	return 0;
}

#define EXT4_ERRATUM 1	/* -EINVAL or 0: ext4 insert near EXT_MAX_BLOCKS */

/* The file system's own checks after vfs_fallocate(): the expected
 * result, or EXT4_ERRATUM where ext4 may refuse a shift past the format
 * limit with i_size already grown. */
static int exp_fs_fallocate(const struct rm_file *f, int mode, int64_t off, int64_t len)
{
	enum rm_profile p = rm_profile_of(f);
	int64_t ab = p == RM_PROFILE_BYTES ? 1 : rm_blocksize(f);
	int64_t size = rm_size(f), mb = rm_maxbytes(f);
	int aligned = off % ab == 0 && len % ab == 0;

	if (p == RM_PROFILE_EXT4) {
		/* ext4_fallocate(): no FALLOC_FL_UNSHARE_RANGE in its mask */
		if (mode & UNSH)
			return -EOPNOTSUPP;
		/* ext4_collapse_range(): IS_ALIGNED(offset | len, cluster),
		 * then "offset + len >= i_size" */
		if (mode & COLL)
			return !aligned ? -EINVAL : off + len >= size ? -EINVAL : 0;
		/* ext4_insert_range(): alignment, "len > s_maxbytes - i_size"
		 * -EFBIG, "offset >= i_size" -EINVAL, then the shift may stop
		 * at EXT_MAX_BLOCKS (ext4_ext_shift_extents()) */
		if (mode & INS) {
			if (!aligned)
				return -EINVAL;
			if (len > mb - size)
				return -EFBIG;
			if (off >= size)
				return -EINVAL;
			if (rm_map_end(f) / ab + len / ab > EXT4_BLOCKS - 1)
				return EXT4_ERRATUM;
			return 0;
		}
		/* punch, zero, allocate: new sizes pass inode_newsize_ok()
		 * since vfs_fallocate() held offset + len to s_maxbytes */
		return 0;
	}
	/* xfs_file_fallocate() (the bytes profile: 1-byte units) */
	if (mode & COLL) {
		/* xfs_is_falloc_aligned(), "offset + len >= i_size_read()" */
		return !aligned ? -EINVAL : off + len >= size ? -EINVAL : 0;
	}
	if (mode & INS) {
		/* alignment, "s_maxbytes - isize < len", "offset >= isize" */
		if (!aligned)
			return -EINVAL;
		if (mb - size < len)
			return -EFBIG;
		return off >= size ? -EINVAL : 0;
	}
	return 0;
}

/* pwrite(2): ksys_pwrite64() pos < 0; rw_verify_area() count as ssize_t
 * < 0, pos + count wrapping; vfs_write() clips to MAX_RW_COUNT;
 * generic_write_checks() 0 for count 0; generic_write_check_limits()
 * -EFBIG at pos >= s_maxbytes, else a short count. */
static int64_t exp_pwrite(int64_t mb, int64_t off, size_t len)
{
	int64_t n;

	if (off < 0 || (ssize_t)len < 0)
		return -EINVAL;
	if (len && (int64_t)len > INT64_MAX - off)
		return -EINVAL;
	n = imin((int64_t)len, MAX_RW);
	if (n == 0)
		return 0;
	if (off >= mb)
		return -EFBIG;
	return imin(n, mb - off);
}

/* pread(2): the same argument checks, then filemap_read() stops at EOF. */
static int64_t exp_pread(int64_t size, int64_t off, size_t len)
{
	int64_t n;

	if (off < 0 || (ssize_t)len < 0)
		return -EINVAL;
	if (len && (int64_t)len > INT64_MAX - off)
		return -EINVAL;
	n = imin((int64_t)len, MAX_RW);
	if (off >= size || n == 0)
		return 0;
	return imin(n, size - off);
}

/* ftruncate(2): do_sys_ftruncate() length < 0 -EINVAL; inode_newsize_ok()
 * past s_maxbytes -EFBIG. */
static int exp_truncate(int64_t mb, int64_t size)
{
	return size < 0 ? -EINVAL : size > mb ? -EFBIG : 0;
}

/* FS_IOC_FIEMAP: fiemap_prep() on the __u64 fm_start and fm_length. */
static int64_t exp_fiemap(int64_t mb, int64_t start, int64_t len)
{
	if (len == 0)
		return -EINVAL;
	if ((uint64_t)start >= (uint64_t)mb)
		return -EFBIG;
	return 0;	/* a count */
}

/* ---- the starting files ------------------------------------------------ */

enum start { S_SMALL, S_AT_MAXBYTES, S_EXT4_LIMIT, NSTART };

static struct rm_file *make_start(enum rm_profile p, uint32_t bs, enum start s)
{
	struct rm_opts o = { .profile = p, .blocksize = bs };
	struct rm_file *f;
	int64_t mb;

	assert_int_equal(rm_file_new(&o, &f), 0);
	mb = rm_maxbytes(f);
	memset(wbuf, 0x5a, sizeof(wbuf));
	switch (s) {
	case S_SMALL:
		/* three blocks of data, a hole, an unwritten block */
		assert_int_equal(rm_pwrite(f, wbuf, 3 * bs, 0), 3 * (int64_t)bs);
		assert_int_equal(rm_fallocate(f, 0, 4 * (int64_t)bs, bs), 0);
		break;
	case S_AT_MAXBYTES:
		/* size s_maxbytes, data in the last two blocks (the last one
		 * partial when s_maxbytes is not block aligned: INT64_MAX) */
		assert_int_equal(rm_truncate(f, mb), 0);
		assert_int_equal(rm_pwrite(f, wbuf, 2 * bs, mb - 2 * (int64_t)bs),
				 2 * (int64_t)bs);
		assert_int_equal(rm_fallocate(f, KEEP, 0, bs), 0);
		break;
	case S_EXT4_LIMIT: {
		/* data in the last block ext4 can address, and past it in the
		 * other profiles */
		int64_t at = EXT4_BLOCKS * bs - 2 * (int64_t)bs;

		if (at + 2 * (int64_t)bs > mb)
			at = mb - 2 * (int64_t)bs;
		at -= at % bs;
		assert_int_equal(rm_pwrite(f, wbuf, bs, at), bs);
		assert_int_equal(rm_pwrite(f, wbuf, 10, 0), 10);
		break;
	}
	default:
		break;
	}
	rm_fsync(f);
	assert_int_equal(rm_check(f, NULL, 0), 0);
	return f;
}

/* Offsets and lengths around the limits, for a file f. */
static size_t limit_values(const struct rm_file *f, int64_t *v)
{
	int64_t bs = rm_blocksize(f), mb = rm_maxbytes(f), sz = rm_size(f);
	int64_t e4 = EXT4_BLOCKS * bs;
	int64_t base[] = {
		0, 1, bs - 1, bs, bs + 1, 2 * bs, 3 * bs,
		sz - bs, sz - 1, sz, rm_sat_add(sz, 1), rm_sat_add(sz, bs),
		e4 - 2 * bs, e4 - bs, e4 - 1, e4, e4 + bs,
		mb - 2 * bs, mb - bs, mb - 1, mb, rm_sat_add(mb, 1), rm_sat_add(mb, bs),
		INT64_MAX - bs, INT64_MAX - 1, INT64_MAX,
		-1, -bs, INT64_MIN,
	};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
		size_t k;

		for (k = 0; k < n && v[k] != base[i]; k++)
			;
		if (k == n)
			v[n++] = base[i];
	}
	return n;
}

static size_t limit_lengths(const struct rm_file *f, int64_t off, int64_t *v)
{
	int64_t bs = rm_blocksize(f), mb = rm_maxbytes(f), sz = rm_size(f);
	int64_t base[] = {
		0, 1, bs - 1, bs, bs + 1, 2 * bs,
		sat_sub(mb, off), rm_sat_add(sat_sub(mb, off), 1), rm_sat_add(sat_sub(mb, off), -bs),
		sat_sub(sz, off), sat_sub(INT64_MAX, off), INT64_MAX,
		EXT4_BLOCKS * bs, -1, -bs, INT64_MIN,
	};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
		size_t k;

		for (k = 0; k < n && v[k] != base[i]; k++)
			;
		if (k == n)
			v[n++] = base[i];
	}
	return n;
}

/* ---- one call of each kind, checked ------------------------------------ */

static void try_fallocate(struct rm_file *f, int mode, int64_t off, int64_t len)
{
	struct snap s;
	int vfs = exp_vfs_fallocate(mode, off, len, rm_maxbytes(f));
	int exp = vfs ? vfs : exp_fs_fallocate(f, mode, off, len);
	int r;

	snap_take(f, &s);
	watch("%s bs %u size %" PRId64 ": fallocate(mode %#x, %" PRId64 ", %" PRId64 ")",
	      rm_profile_name(rm_profile_of(f)), rm_blocksize(f), s.size, mode, off, len);
	/* the model's vfs layer on its own, as FUSE testers call it */
	assert_int_equal(rm_vfs_fallocate_check(mode, off, len, rm_maxbytes(f)), vfs);
	r = rm_fallocate(f, mode, off, len);
	after_call(f);
	if (exp == EXT4_ERRATUM) {
		if (r == -EINVAL) {
			/* ext4_insert_range() grew i_size before the shift failed */
			if (rm_size(f) != s.size + len)
				fail_msg("%s: -EINVAL, size %" PRId64 " (expected %" PRId64 ")",
					 current_call, rm_size(f), s.size + len);
			return;
		}
		exp = 0;
	}
	if (r != exp)
		fail_msg("%s = %d, Linux 6.1 gives %d", current_call, r, exp);
	if (r < 0)
		assert_unchanged(f, &s);
}

static void try_pwrite(struct rm_file *f, int64_t off, int64_t len)
{
	struct snap s;
	int64_t exp = exp_pwrite(rm_maxbytes(f), off, (size_t)len);
	ssize_t r;

	/* only calls that move at most BUFSZ bytes: a failing call must
	 * fail before it reads the buffer */
	if (exp > BUFSZ)
		return;
	snap_take(f, &s);
	watch("%s bs %u size %" PRId64 ": pwrite(%" PRId64 ", %" PRId64 ")",
	      rm_profile_name(rm_profile_of(f)), rm_blocksize(f), s.size, off, len);
	r = rm_pwrite(f, wbuf, (size_t)len, off);
	after_call(f);
	if (r != exp)
		fail_msg("%s = %zd, Linux 6.1 gives %" PRId64, current_call, r, exp);
	if (r < 0)
		assert_unchanged(f, &s);
	if (r > 0 && rm_size(f) < off + r)
		fail_msg("%s: size %" PRId64 " short of the write's end", current_call, rm_size(f));
}

static void try_pread(struct rm_file *f, int64_t off, int64_t len)
{
	struct snap s;
	int64_t exp = exp_pread(rm_size(f), off, (size_t)len);
	ssize_t r;

	if (exp > BUFSZ)
		return;
	snap_take(f, &s);
	watch("%s bs %u size %" PRId64 ": pread(%" PRId64 ", %" PRId64 ")",
	      rm_profile_name(rm_profile_of(f)), rm_blocksize(f), s.size, off, len);
	r = rm_pread(f, rbuf, (size_t)len, off);
	after_call(f);
	if (r != exp)
		fail_msg("%s = %zd, Linux 6.1 gives %" PRId64, current_call, r, exp);
	assert_unchanged(f, &s);
}

static void try_truncate(struct rm_file *f, int64_t size)
{
	struct snap s;
	int exp = exp_truncate(rm_maxbytes(f), size);
	int r;

	snap_take(f, &s);
	watch("%s bs %u size %" PRId64 ": truncate(%" PRId64 ")",
	      rm_profile_name(rm_profile_of(f)), rm_blocksize(f), s.size, size);
	r = rm_truncate(f, size);
	after_call(f);
	if (r != exp)
		fail_msg("%s = %d, Linux 6.1 gives %d", current_call, r, exp);
	if (r < 0)
		assert_unchanged(f, &s);
	else if (rm_size(f) != size)
		fail_msg("%s: size %" PRId64, current_call, rm_size(f));
}

static void try_lseek(struct rm_file *f, int64_t off, int whence)
{
	int64_t size = rm_size(f), r;

	watch("%s bs %u size %" PRId64 ": lseek(%" PRId64 ", %s)",
	      rm_profile_name(rm_profile_of(f)), rm_blocksize(f), size, off,
	      whence == RM_SEEK_DATA ? "SEEK_DATA" : "SEEK_HOLE");
	r = rm_lseek(f, off, whence);
	after_call(f);
	/* iomap_seek_data() / iomap_seek_hole(): -ENXIO outside [0, size);
	 * SEEK_HOLE finds one at EOF at the latest, SEEK_DATA may find none */
	if (off < 0 || off >= size) {
		if (r != -ENXIO)
			fail_msg("%s = %" PRId64 ", Linux 6.1 gives -ENXIO", current_call, r);
		return;
	}
	if (whence == RM_SEEK_HOLE ? !(r >= off && r <= size)
				   : !(r == -ENXIO || (r >= off && r < size)))
		fail_msg("%s = %" PRId64 " outside [%" PRId64 ", size]", current_call, r, off);
	if (rm_lseek_ok(f, off, whence, r) != 1)
		fail_msg("%s = %" PRId64 ": rm_lseek_ok disowns it", current_call, r);
}

static void try_fiemap(struct rm_file *f, int64_t start, int64_t len)
{
	static struct rm_extent ext[64];
	int64_t exp = exp_fiemap(rm_maxbytes(f), start, len), n;

	watch("%s bs %u size %" PRId64 ": fiemap(%" PRId64 ", %" PRId64 ")",
	      rm_profile_name(rm_profile_of(f)), rm_blocksize(f), rm_size(f), start, len);
	n = rm_fiemap(f, start, len, ext, 64);
	after_call(f);
	if (exp < 0 ? n != exp : n < 0)
		fail_msg("%s = %" PRId64 ", Linux 6.1 gives %s%" PRId64, current_call, n,
			 exp < 0 ? "" : "a count, not ", exp < 0 ? exp : n);
	for (int64_t i = 0; i < n && i < 64; i++) {
		const struct rm_extent *e = &ext[i];

		/* extents lie inside the range rounded out to blocks and
		 * never overlap */
		if (e->length <= 0 || e->logical < 0 || e->logical > INT64_MAX - e->length ||
		    e->logical + e->length <= start - start % (int64_t)rm_blocksize(f) ||
		    (i && e->logical < ext[i - 1].logical + ext[i - 1].length))
			fail_msg("%s: extent %" PRId64 " {%" PRId64 ", %" PRId64 "} misplaced",
				 current_call, i, e->logical, e->length);
	}
}

static void try_clone(struct rm_file *f, int64_t soff, int64_t doff, int64_t len)
{
	struct snap s;
	int r;

	snap_take(f, &s);
	watch("%s bs %u size %" PRId64 ": clone(soff %" PRId64 ", doff %" PRId64 ", %" PRId64 ")",
	      rm_profile_name(rm_profile_of(f)), rm_blocksize(f), s.size, soff, doff, len);
	r = rm_clone_range(f, f, soff, doff, len);
	after_call(f);
	/* do_clone_file_range(): no ->remap_file_range on ext4 (and the
	 * bytes profile, which stands for FUSE); remap_verify_area():
	 * negative or wrapping ranges -EINVAL; generic_remap_checks():
	 * doff >= s_maxbytes -EFBIG after the alignment and EOF checks */
	if (rm_profile_of(f) != RM_PROFILE_XFS) {
		if (r != -EOPNOTSUPP)
			fail_msg("%s = %d, Linux 6.1 gives -EOPNOTSUPP", current_call, r);
	} else if (soff < 0 || doff < 0 || len < 0 || len > INT64_MAX - soff ||
		   len > INT64_MAX - doff) {
		if (r != -EINVAL)
			fail_msg("%s = %d, Linux 6.1 gives -EINVAL", current_call, r);
	} else if (r != 0 && r != -EINVAL && r != -EFBIG) {
		fail_msg("%s = %d: not an errno of FICLONERANGE here", current_call, r);
	}
	if (r < 0)
		assert_unchanged(f, &s);
}

/* ---- the sweep --------------------------------------------------------- */

static const int modes[] = {
	0, KEEP, PUNCH | KEEP, ZERO, ZERO | KEEP, COLL, INS, UNSH, UNSH | KEEP,
	PUNCH, PUNCH | ZERO | KEEP, COLL | KEEP, INS | KEEP, UNSH | ZERO, 0x80,
};

static void sweep(enum rm_profile p)
{
	static const uint32_t bss[] = { 512, 4096, 65536 };
	int64_t offs[64], lens[64];
	unsigned long calls = 0;

	signal(SIGALRM, on_alarm);
	for (size_t b = 0; b < 3; b++) {
		for (int st = 0; st < NSTART; st++) {
			struct rm_file *base = make_start(p, bss[b], (enum start)st);
			size_t no = limit_values(base, offs);

			for (size_t i = 0; i < no; i++) {
				size_t nl = limit_lengths(base, offs[i], lens);

				for (size_t j = 0; j < nl; j++) {
					int64_t off = offs[i], len = lens[j];
					struct rm_file *f;

					for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
						assert_int_equal(rm_file_clone(base, &f), 0);
						try_fallocate(f, modes[m], off, len);
						rm_file_free(f);
					}
					assert_int_equal(rm_file_clone(base, &f), 0);
					try_pwrite(f, off, len);
					try_pread(f, off, len);
					try_fiemap(f, off, len);
					try_clone(f, off, len, bss[b]);
					try_clone(f, len, off, 0);
					rm_file_free(f);
					calls += sizeof(modes) / sizeof(modes[0]) + 5;
				}
				struct rm_file *f;

				assert_int_equal(rm_file_clone(base, &f), 0);
				try_lseek(f, offs[i], RM_SEEK_DATA);
				try_lseek(f, offs[i], RM_SEEK_HOLE);
				try_truncate(f, offs[i]);
				try_lseek(f, rm_sat_add(offs[i], -1), RM_SEEK_DATA);
				try_lseek(f, rm_sat_add(offs[i], -1), RM_SEEK_HOLE);
				rm_file_free(f);
				calls += 5;
			}
			rm_file_free(base);
		}
	}
	if (getenv("RM_LIMITS_VERBOSE"))
		fprintf(stderr, "limits %s: %lu calls checked\n", rm_profile_name(p), calls);
}

static void limits_ext4(void **st) { (void)st; sweep(RM_PROFILE_EXT4); }
static void limits_xfs(void **st) { (void)st; sweep(RM_PROFILE_XFS); }
static void limits_bytes(void **st) { (void)st; sweep(RM_PROFILE_BYTES); }

/* ---- the cases fuzzing found, spelled out ------------------------------ */

/* xfs_free_file_space() zeroes the partial blocks of a punch or zero range
 * that holds no whole block one block at a time; in the block that ends at
 * 2^63 the end of the block does not fit in loff_t.  The model looped
 * forever there (a signed overflow, wrapping in a release build). */
static void xfs_partial_punch_zero_in_last_block(void **state)
{
	static const int ms[] = { PUNCH | KEEP, ZERO, ZERO | KEEP };

	(void)state;
	signal(SIGALRM, on_alarm);
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		struct rm_opts o = { .profile = RM_PROFILE_XFS, .blocksize = 4096 };
		struct rm_file *f;
		unsigned char b[64];

		assert_int_equal(rm_file_new(&o, &f), 0);
		assert_int_equal(rm_truncate(f, INT64_MAX), 0);
		memset(wbuf, 0x77, 64);
		assert_int_equal(rm_pwrite(f, wbuf, 64, INT64_MAX - 164), 64);
		watch("xfs fallocate(%#x, INT64_MAX - 100, 50) in the last block", ms[i]);
		assert_int_equal(rm_fallocate(f, ms[i], INT64_MAX - 100, 50), 0);
		after_call(f);
		assert_int_equal(rm_size(f), INT64_MAX);
		/* the bytes before the range kept, the range reads zeros */
		assert_int_equal(rm_pread(f, b, 64, INT64_MAX - 164), 64);
		for (int k = 0; k < 64; k++)
			assert_int_equal(b[k], 0x77);
		assert_int_equal(rm_pread(f, b, 50, INT64_MAX - 100), 50);
		for (int k = 0; k < 50; k++)
			assert_int_equal(b[k], 0);
		rm_file_free(f);
	}
}

/* FIEMAP's fm_start and fm_length are __u64 (fiemap_prep()): a negative
 * start is past s_maxbytes, a negative length a huge one. */
static void fiemap_u64_arguments(void **state)
{
	struct rm_opts o = { .profile = RM_PROFILE_EXT4, .blocksize = 4096 };
	struct rm_file *f;
	struct rm_extent e[4];

	(void)state;
	assert_int_equal(rm_file_new(&o, &f), 0);
	assert_int_equal(rm_pwrite(f, wbuf, 8192, 0), 8192);
	assert_int_equal(rm_fiemap(f, -1, 4096, e, 4), -EFBIG);
	assert_int_equal(rm_fiemap(f, INT64_MIN, 4096, e, 4), -EFBIG);
	assert_int_equal(rm_fiemap(f, 0, 0, e, 4), -EINVAL);
	assert_int_equal(rm_fiemap(f, 0, -1, e, 4), 1);
	assert_int_equal(e[0].logical, 0);
	assert_int_equal(e[0].length, 8192);
	assert_int_equal(rm_fiemap(f, rm_maxbytes(f), -1, e, 4), -EFBIG);
	rm_file_free(f);
}

/* Many tiny writes into one big block must leave it a few segments: each
 * write opens its whole block, so a block of one segment per written byte
 * made n writes cost n^2 (a fuzz input of 45,056 one-byte writes into 64 KiB
 * blocks ran for minutes; rop_close() now coalesces small written
 * neighbours).  Byte by byte and every other byte (data with zeros
 * between), in every profile, with the bytes checked. */
static void tiny_writes_stay_few_segments(void **state)
{
	(void)state;
	static const enum rm_profile profiles[] = { RM_PROFILE_EXT4, RM_PROFILE_XFS, RM_PROFILE_BYTES };
	const int64_t n = 16384, bs = 65536;
	static unsigned char got[2 * 16384 + 16];

	for (size_t p = 0; p < sizeof(profiles) / sizeof(profiles[0]); p++)
		for (int step = 1; step <= 2; step++) {
			struct rm_opts o = { .profile = profiles[p], .blocksize = bs };
			struct rm_file *f;
			struct rm_stats st;

			assert_int_equal(rm_file_new(&o, &f), 0);
			for (int64_t i = 0; i < n; i++) {
				unsigned char c = (unsigned char)(i * 7 + 1);

				assert_int_equal(rm_pwrite(f, &c, 1, 3 + i * step), 1);
			}
			assert_int_equal(rm_check(f, NULL, 0), 0);
			rm_stats(f, &st);
			/* 4 KiB per coalesced segment, 8 segments per node: the
			 * written 16 or 32 KiB are a few dozen nodes at most (one node
			 * per 8 written bytes without coalescing) */
			/* (the bytes profile has no blocks: the bytes between
			 * are holes, each write opens only its byte, and the
			 * segments are the file's true shape) */
			if (profiles[p] != RM_PROFILE_BYTES || step == 1)
				assert_true(st.nodes <= 32);
			int64_t len = 3 + (n - 1) * step + 1;

			assert_int_equal(rm_pread(f, got, (size_t)len, 0), len);
			for (int64_t i = 0; i < len; i++) {
				int64_t k = i - 3;
				unsigned char want = k >= 0 && k % step == 0 ?
					(unsigned char)((k / step) * 7 + 1) : 0;

				assert_int_equal(got[i], want);
			}
			rm_file_free(f);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(xfs_partial_punch_zero_in_last_block),
		cmocka_unit_test(fiemap_u64_arguments),
		cmocka_unit_test(limits_ext4),
		cmocka_unit_test(limits_xfs),
		cmocka_unit_test(limits_bytes),
		cmocka_unit_test(tiny_writes_stay_few_segments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
