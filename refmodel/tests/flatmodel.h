/* SPDX-License-Identifier: MIT */
/*
 * flatmodel.h - a deliberately naive flat-array model of Linux 6.1 file
 * semantics, written only as the oracle of the differential self-test
 * (test_differential.c) of librefmodel.
 *
 * It is an independent second reading of the kernel: it shares no code
 * with refmodel/src, only the public types of refmodel.h (profiles, state
 * bits, struct rm_run, struct rm_extent).  A file is a byte array, one
 * state byte and one may-mask byte per granule (a block; a byte in the
 * bytes profile), and one "tail" may-mask for the granules past the
 * arrays up to tail_end (XFS speculative preallocation, which stops at
 * s_maxbytes).  Every operation is O(size): simplicity is the point, speed is
 * not.  Sizes are bounded (FM_MAX_SPAN): an operation that would need more
 * returns -ENOMEM, which the test treats as its own bug.
 */
#ifndef RANGESHIFT_FLATMODEL_H
#define RANGESHIFT_FLATMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "refmodel.h"

/* Largest byte span the arrays may cover. */
#define FM_MAX_SPAN (64ll << 20)

struct fm_file {
	enum rm_profile profile;
	uint32_t bs;		/* block size */
	uint32_t g;		/* granule of the state arrays: bs, or 1 (bytes) */
	int64_t maxbytes;	/* s_maxbytes */
	int64_t size;		/* i_size */
	int64_t cap;		/* granules covered by st/may/data */
	uint8_t *st;		/* RM_HOLE / RM_UNWRITTEN / RM_DATA per granule */
	uint8_t *may;		/* allowed FIEMAP states per granule */
	uint8_t *data;		/* cap * g bytes; always zero at and past size */
	uint8_t tail_may;	/* may-mask of granules [cap, tail_end) (state HOLE) */
	int64_t tail_end;	/* granules >= max(cap, tail_end) are plain holes */
	bool xfs_prealloc;	/* XFS_DIFLAG_PREALLOC (set by xfs_alloc_file_space) */
	uint64_t fsyncs;
};

int fm_new(const struct rm_opts *opts, struct fm_file *f);
void fm_free(struct fm_file *f);

ssize_t fm_pwrite(struct fm_file *f, const void *buf, size_t len, int64_t off);
ssize_t fm_pread(const struct fm_file *f, void *buf, size_t len, int64_t off);
int fm_truncate(struct fm_file *f, int64_t size);
int fm_fsync(struct fm_file *f);
/* Same contracts as rm_writeback() and rm_mwrite() (after write-back). */
int fm_writeback(struct fm_file *f, int64_t off, int64_t len);
ssize_t fm_mwrite(struct fm_file *f, const void *buf, size_t len, int64_t off);
int fm_fallocate(struct fm_file *f, int mode, int64_t off, int64_t len);
int64_t fm_lseek(const struct fm_file *f, int64_t off, int whence);
/* Same contract as rm_fiemap(). */
int64_t fm_fiemap(const struct fm_file *f, int64_t start, int64_t len,
		  struct rm_extent *ext, size_t max);
/* Maximal runs of [start, end) into out (at most max); returns the number
 * of runs (which may exceed max). */
size_t fm_walk(const struct fm_file *f, int64_t start, int64_t end,
	       struct rm_run *out, size_t max);
/* End of the last granule whose state or may-mask is not plain hole;
 * INT64_MAX when the tail may be allocated. */
int64_t fm_map_end(const struct fm_file *f);
uint64_t fm_hash(const struct fm_file *f);
int64_t fm_alloc_bytes(const struct fm_file *f);
/* Default s_maxbytes of a profile, computed independently: ext4_max_size()
 * with huge_file (extent files), MAX_LFS_FILESIZE otherwise. */
int64_t fm_profile_maxbytes(enum rm_profile p, uint32_t bs);

#endif /* RANGESHIFT_FLATMODEL_H */
