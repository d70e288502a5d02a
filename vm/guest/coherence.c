/*
 * coherence.c - page-cache coherence of FALLOC_FL_INSERT_RANGE and
 * FALLOC_FL_COLLAPSE_RANGE, run inside the guest (built static into the
 * initramfs as rs-coherence by vm/build-initramfs).
 *
 * Each case fills the page cache (or dirties it) through read(2), write(2)
 * or a shared mmap, shifts the file, then reads again through the same
 * route and compares every byte and the size with what the shift must
 * produce.  A kernel that forwards the shift to the server but keeps old
 * pages, skips writeback of dirty pages before shifting, or keeps a stale
 * i_size shows up as a byte or size mismatch.  The FUSE patch has to give
 * the guarantees ext4_insert_range()/ext4_collapse_range() and
 * xfs_insert_file_space()/xfs_collapse_file_space() give: write back from
 * the offset to EOF, truncate the page cache from the offset, shift, update
 * i_size.  So the same program on /mnt/ext4 and /mnt/xfs is the control.
 *
 * usage: rs-coherence DIR     exit 0 all passed, 1 a case failed,
 *                             3 the file system rejects insert/collapse
 *                             (EOPNOTSUPP), 2 usage/setup error
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLK 4096
#define NBLK 16                 /* file size 64 KiB before each shift */
#define SIZE (NBLK * BLK)
#define MAXSZ (SIZE + 8 * BLK)

struct ctx {
	const char *dir;
	int failures;
	int unsupported;
};

/* Pattern byte for original offset off in generation gen: differs per
 * block and per byte, so any shift by a wrong amount is visible. */
static unsigned char pat(int gen, long off)
{
	return (unsigned char)(((off / BLK) * 31 + off * 7 + gen * 101) % 251 + 1);
}

static int open_fresh(struct ctx *c, const char *name, char *path, size_t n)
{
	snprintf(path, n, "%s/%s", c->dir, name);
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		fprintf(stderr, "rs-coherence: open %s: %s\n", path, strerror(errno));
	return fd;
}

static int write_all(int fd, const unsigned char *b, size_t n, off_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, b, n, off);

		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

static ssize_t read_all(int fd, unsigned char *b, size_t n, off_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, b + got, n - got, off + (off_t)got);

		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Compare n bytes; report the first mismatch with what the stale value
 * would have been (the unshifted original), which names the bug class. */
static int check(struct ctx *c, const char *name, const char *route,
		 const unsigned char *got, const unsigned char *want,
		 const unsigned char *before, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (got[i] != want[i]) {
			fprintf(stderr,
				"FAIL %s: %s byte %zu is 0x%02x, want 0x%02x%s\n",
				name, route, i, got[i], want[i],
				before && i < SIZE && got[i] == before[i] ?
				" (the pre-shift byte: stale page cache)" : "");
			c->failures++;
			return -1;
		}
	}
	return 0;
}

static int check_size(struct ctx *c, const char *name, int fd, off_t want)
{
	struct stat st;

	if (fstat(fd, &st) < 0 || st.st_size != want) {
		fprintf(stderr, "FAIL %s: size %lld after the shift, want %lld\n",
			name, (long long)st.st_size, (long long)want);
		c->failures++;
		return -1;
	}
	return 0;
}

/* Expected content after inserting len bytes at off into orig[0..SIZE). */
static void expect_insert(unsigned char *w, const unsigned char *orig, long off, long len)
{
	memcpy(w, orig, (size_t)off);
	memset(w + off, 0, (size_t)len);
	memcpy(w + off + len, orig + off, (size_t)(SIZE - off));
}

static void expect_collapse(unsigned char *w, const unsigned char *orig, long off, long len)
{
	memcpy(w, orig, (size_t)off);
	memcpy(w + off, orig + off + len, (size_t)(SIZE - off - len));
}

static int shift(struct ctx *c, const char *name, int fd, int mode, long off, long len)
{
	if (fallocate(fd, mode, off, len) == 0)
		return 0;
	if (errno == EOPNOTSUPP) {
		fprintf(stderr, "UNSUPPORTED %s: fallocate(%s): %s\n", name,
			mode == FALLOC_FL_INSERT_RANGE ? "INSERT_RANGE" : "COLLAPSE_RANGE",
			strerror(errno));
		c->unsupported++;
	} else {
		fprintf(stderr, "FAIL %s: fallocate: %s\n", name, strerror(errno));
		c->failures++;
	}
	return -1;
}

enum fill { FILL_READ, FILL_DIRTY, FILL_MMAP_READ, FILL_MMAP_WRITE };

/*
 * One case: make the file (gen pattern, 64 KiB), bring its pages into the
 * state `fill` says, shift (insert when ins, else collapse) at off/len, then
 * read back through the same route and through read(2).
 */
static void run_case(struct ctx *c, const char *name, enum fill fill, int ins,
		     long off, long len, int gen)
{
	static unsigned char orig[SIZE], want[MAXSZ], got[MAXSZ];
	char path[4096];
	int fd = open_fresh(c, name, path, sizeof(path));
	unsigned char *map = MAP_FAILED;
	long newsz = ins ? SIZE + len : SIZE - len;

	if (fd < 0) {
		c->failures++;
		return;
	}
	for (long i = 0; i < SIZE; i++)
		orig[i] = pat(gen, i);

	if (fill == FILL_MMAP_WRITE) {
		/* Pages dirtied only through the mapping: the shift must
		 * write them back first or their bytes are lost/unshifted. */
		if (ftruncate(fd, SIZE) < 0)
			goto err;
		map = mmap(NULL, MAXSZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED)
			goto err;
		memcpy(map, orig, SIZE);
	} else {
		if (write_all(fd, orig, SIZE, 0) < 0)
			goto err;
		if (fill != FILL_DIRTY && fsync(fd) < 0)
			goto err;
		if (fill == FILL_READ && read_all(fd, got, SIZE, 0) != SIZE)
			goto err;
		if (fill == FILL_MMAP_READ) {
			map = mmap(NULL, MAXSZ, PROT_READ, MAP_SHARED, fd, 0);
			if (map == MAP_FAILED)
				goto err;
			memcpy(got, map, SIZE);   /* fault every page in */
		}
	}
	if (fill == FILL_READ || fill == FILL_MMAP_READ) {
		if (check(c, name, "pre-shift read", got, orig, NULL, SIZE) < 0)
			goto out;
	}

	if (shift(c, name, fd, ins ? FALLOC_FL_INSERT_RANGE : FALLOC_FL_COLLAPSE_RANGE, off, len) < 0)
		goto out;

	if (ins)
		expect_insert(want, orig, off, len);
	else
		expect_collapse(want, orig, off, len);
	if (check_size(c, name, fd, newsz) < 0)
		goto out;
	if (map != MAP_FAILED) {
		/* Only up to the new EOF: beyond it a shared mapping faults. */
		memcpy(got, map, (size_t)newsz);
		if (check(c, name, "mmap read after the shift", got, want, orig, (size_t)newsz) < 0)
			goto out;
	}
	memset(got, 0xee, sizeof(got));
	if (read_all(fd, got, MAXSZ, 0) != newsz) {
		fprintf(stderr, "FAIL %s: read(2) after the shift did not return %ld bytes\n", name, newsz);
		c->failures++;
		goto out;
	}
	if (check(c, name, "read(2) after the shift", got, want, orig, (size_t)newsz) < 0)
		goto out;
	/* And from a fresh descriptor, as another process would see it. */
	{
		int fd2 = open(path, O_RDONLY);
		ssize_t r;

		if (fd2 < 0) {
			fprintf(stderr, "FAIL %s: reopen: %s\n", name, strerror(errno));
			c->failures++;
			goto out;
		}
		r = read_all(fd2, got, MAXSZ, 0);
		close(fd2);
		if (r != newsz) {
			fprintf(stderr, "FAIL %s: read(2) on a new fd returned %zd bytes, want %ld\n",
				name, r, newsz);
			c->failures++;
			goto out;
		}
		if (check(c, name, "read(2) on a new fd", got, want, orig, (size_t)newsz) < 0)
			goto out;
	}
	printf("ok   %s\n", name);
	goto out;
err:
	fprintf(stderr, "FAIL %s: setup: %s\n", name, strerror(errno));
	c->failures++;
out:
	if (map != MAP_FAILED)
		munmap(map, MAXSZ);
	close(fd);
	unlink(path);
}

int main(int argc, char **argv)
{
	struct ctx c = { 0 };
	struct stat st;

	if (argc != 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(argc == 2 ? stdout : stderr, "usage: rs-coherence DIR\n"
			"Page-cache coherence of insert/collapse range on DIR's file system.\n"
			"Exit 0 pass, 1 fail, 2 usage, 3 insert/collapse not supported.\n");
		return argc == 2 ? 0 : 2;
	}
	c.dir = argv[1];
	if (stat(c.dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "rs-coherence: %s is not a directory\n", c.dir);
		return 2;
	}
	/* Offsets inside the cached range, at 0, and at the last block. */
	run_case(&c, "insert-after-read", FILL_READ, 1, 4 * BLK, 2 * BLK, 1);
	if (c.unsupported) {
		printf("rs-coherence: %s rejects insert range (EOPNOTSUPP)\n", c.dir);
		return 3;
	}
	run_case(&c, "insert-at-0-after-read", FILL_READ, 1, 0, 8 * BLK, 2);
	run_case(&c, "insert-last-block-after-read", FILL_READ, 1, (NBLK - 1) * BLK, BLK, 3);
	run_case(&c, "insert-over-dirty-pages", FILL_DIRTY, 1, 5 * BLK, 3 * BLK, 4);
	run_case(&c, "insert-under-mmap-read", FILL_MMAP_READ, 1, 2 * BLK, 4 * BLK, 5);
	run_case(&c, "insert-over-mmap-dirty", FILL_MMAP_WRITE, 1, 6 * BLK, BLK, 6);
	run_case(&c, "collapse-after-read", FILL_READ, 0, 4 * BLK, 2 * BLK, 7);
	run_case(&c, "collapse-at-0-after-read", FILL_READ, 0, 0, 8 * BLK, 8);
	run_case(&c, "collapse-over-dirty-pages", FILL_DIRTY, 0, 5 * BLK, 3 * BLK, 9);
	run_case(&c, "collapse-under-mmap-read", FILL_MMAP_READ, 0, 2 * BLK, 4 * BLK, 10);
	run_case(&c, "collapse-over-mmap-dirty", FILL_MMAP_WRITE, 0, 6 * BLK, BLK, 11);
	if (c.unsupported) {
		printf("rs-coherence: %s: %d case(s) unsupported\n", c.dir, c.unsupported);
		return c.failures ? 1 : 3;
	}
	printf("rs-coherence: %s: %d failure(s)\n", c.dir, c.failures);
	return c.failures ? 1 : 0;
}
