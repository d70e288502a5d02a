/*
 * imgload.c - copy the data ranges of a host-made file-system image onto a
 * brd ram disk (rs-imgload in the initramfs; vm/init runs it for
 * rs.disks=ram).
 *
 * Why: under TCG a synchronous write-back to a virtio disk (FIEMAP with
 * FIEMAP_FLAG_SYNC, fsync) costs about 2 ms of round trip, four context
 * switches and an interrupt; on a brd ram disk the bio completes in the
 * submitting task.  But mkfs.ext4 plus mkfs.xfs take about 8 s under TCG,
 * while the host makes both in milliseconds.  So vm/run makes the images on
 * the host, lists their data ranges (SEEK_DATA, a few MiB of a sparse image),
 * attaches them as virtio disks, and this copies only those ranges onto the
 * zero-filled ram disk: the ram disk then holds the very bytes the host made.
 * All-zero 4 KiB blocks are skipped, because a fresh brd reads as zeros and a
 * page is allocated only when written.
 *
 * usage: rs-imgload [-z] MAP SRC DST
 *   MAP  text file, one "OFFSET LENGTH" pair (bytes, decimal) per line
 *   SRC  the image (a virtio disk), DST the ram disk; DST must be as large
 *   -z   zero all of DST first (BLKZEROOUT; on a regular file, punch or
 *        write zeros): for a disk that held a file system before, so that
 *        it again holds exactly the image (difftest's fresh file systems
 *        on the guest's virtio disks, from a copy in tmpfs: a fraction of
 *        a second against 3-4 s of mkfs under TCG, and the same bytes,
 *        UUID and journal every time)
 * Exit 0 when every range was copied, 1 (with a message) otherwise.  Without
 * -z DST is only written inside the listed ranges; it is not written at all
 * when MAP is bad.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define CHUNK (1 << 20)
#define BLK 4096

static int zero_block(const unsigned char *p)
{
	static const unsigned char z[BLK];

	return !memcmp(p, z, BLK);
}

static int64_t dev_size(int fd)
{
	uint64_t sz;

	if (ioctl(fd, BLKGETSIZE64, &sz) == 0)
		return (int64_t)sz;
	off_t e = lseek(fd, 0, SEEK_END);
	return e < 0 ? -1 : (int64_t)e;
}

/* Copy [off, off+len) from s to d, skipping zero blocks; 0 or -1. */
static int copy_range(int s, int d, int64_t off, int64_t len, unsigned char *buf,
		      int64_t *written)
{
	while (len > 0) {
		size_t n = len < CHUNK ? (size_t)len : CHUNK;
		ssize_t r = pread(s, buf, n, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "rs-imgload: read at %" PRId64 ": %s\n", off,
				r < 0 ? strerror(errno) : "unexpected end of image");
			return -1;
		}
		for (size_t p = 0; p < (size_t)r; p += BLK) {
			size_t k = (size_t)r - p < BLK ? (size_t)r - p : BLK;
			if (k == BLK && zero_block(buf + p))
				continue;
			if (pwrite(d, buf + p, k, off + (int64_t)p) != (ssize_t)k) {
				fprintf(stderr, "rs-imgload: write at %" PRId64 ": %s\n",
					off + (int64_t)p, strerror(errno));
				return -1;
			}
			*written += (int64_t)k;
		}
		off += r;
		len -= r;
	}
	return 0;
}

/* Zero [0, size) of d: BLKZEROOUT on a block device (brd has no discard
 * in 6.1, so the block layer writes zero pages), else punch a regular
 * file, else write zeros.  0 or -1. */
static int zero_all(int d, int64_t size, unsigned char *buf)
{
	uint64_t r[2] = { 0, (uint64_t)size & ~(uint64_t)511 };

	if (r[1] && ioctl(d, BLKZEROOUT, r) == 0 && r[1] == (uint64_t)size)
		return 0;
	if (fallocate(d, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, size) == 0)
		return 0;
	memset(buf, 0, CHUNK);
	for (int64_t off = 0; off < size;) {
		size_t n = size - off < CHUNK ? (size_t)(size - off) : CHUNK;
		ssize_t w = pwrite(d, buf, n, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int zero = argc > 1 && !strcmp(argv[1], "-z");

	argc -= zero;
	argv += zero;
	if (argc != 4) {
		fprintf(stderr, "usage: rs-imgload [-z] MAP SRC DST (MAP: \"OFFSET LENGTH\" lines)\n");
		return 1;
	}
	FILE *map = fopen(argv[1], "r");
	int s = open(argv[2], O_RDONLY);
	int d = open(argv[3], O_WRONLY);
	if (!map || s < 0 || d < 0) {
		fprintf(stderr, "rs-imgload: cannot open %s: %s\n",
			!map ? argv[1] : s < 0 ? argv[2] : argv[3], strerror(errno));
		return 1;
	}
	int64_t ssz = dev_size(s), dsz = dev_size(d);
	if (ssz < 0 || dsz < 0 || dsz < ssz) {
		fprintf(stderr, "rs-imgload: %s (%" PRId64 " bytes) does not fit on %s (%" PRId64
			" bytes)\n", argv[2], ssz, argv[3], dsz);
		return 1;
	}
	unsigned char *buf = malloc(CHUNK);
	if (!buf) {
		fprintf(stderr, "rs-imgload: out of memory\n");
		return 1;
	}
	/* the whole map is read and checked before anything is written: a
	 * bad map changes nothing */
	struct range { int64_t off, len; } *r = NULL;
	size_t nr = 0, cap = 0;
	int64_t off, len, listed = 0, written = 0;
	int line = 0, rc = 0, got;
	while ((got = fscanf(map, "%" SCNd64 " %" SCNd64, &off, &len)) == 2) {
		line++;
		if (off < 0 || len <= 0 || off > ssz || len > ssz - off) {
			fprintf(stderr, "rs-imgload: %s line %d: range %" PRId64 "+%" PRId64
				" is outside the %" PRId64 "-byte image\n", argv[1], line, off, len, ssz);
			rc = 1;
			break;
		}
		if (nr == cap) {
			size_t nc = cap ? 2 * cap : 64;
			struct range *t = nc <= (1u << 24) ? realloc(r, nc * sizeof(*r)) : NULL;
			if (!t) {
				fprintf(stderr, "rs-imgload: %s: too many ranges\n", argv[1]);
				rc = 1;
				break;
			}
			r = t;
			cap = nc;
		}
		r[nr].off = off;
		r[nr++].len = len;
	}
	if (!rc && got != EOF) {
		fprintf(stderr, "rs-imgload: %s line %d: expected \"OFFSET LENGTH\"\n", argv[1],
			line + 1);
		rc = 1;
	}
	if (!rc && zero && zero_all(d, dsz, buf)) {
		fprintf(stderr, "rs-imgload: zeroing %s: %s\n", argv[3], strerror(errno));
		rc = 1;
	}
	for (size_t i = 0; i < nr && !rc; i++) {
		if (copy_range(s, d, r[i].off, r[i].len, buf, &written))
			rc = 1;
		listed += r[i].len;
	}
	free(r);
	if (!rc && fsync(d) < 0) {
		fprintf(stderr, "rs-imgload: fsync %s: %s\n", argv[3], strerror(errno));
		rc = 1;
	}
	if (!rc)
		printf("rs-imgload: %s -> %s: %d ranges, %" PRId64 " bytes listed, %" PRId64
		       " written\n", argv[2], argv[3], line, listed, written);
	free(buf);
	fclose(map);
	close(s);
	close(d);
	return rc;
}
