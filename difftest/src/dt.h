/* SPDX-License-Identifier: MIT */
/*
 * dt.h - internal interfaces of difftest, the differential tester that runs
 * one generated operation sequence against the reference model (librefmodel,
 * in-process) and against a real file system (or a test-only faulty model),
 * compares every result, and shrinks each divergence to a reproducer.
 *
 * Pieces: optab.c (one descriptor per op kind: what every module does
 * with it, optab.h), op.c (the text op log), gen.c (deterministic weighted
 * generator), target.c (real directories and the model-backed faulty
 * targets behind one interface), exec.c (execute an op on model and
 * target, the oracle), ddmin.c (delta debugging over a
 * predicate), shrink.c (the shrinker's predicate and reproducer files), script.c
 * (repro.sh, the xfs_io reproducer), shiftmap.c (moving a candidate's ops
 * across the shifts ddmin removed), cowlat.c (where XFS may keep CoW
 * staging: lseek latitude), report.c (statistics, progress, JSON report
 * and merge), mapshtml.c (maps.html, the picture of a divergence),
 * expected.c (known differences of other kernels than the model's), main.c.
 */
#ifndef DIFFTEST_DT_H
#define DIFFTEST_DT_H

#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config.h"
#include "refmodel.h"
#include "rm_cred.h"
/* Offsets near INT64_MAX are fair game (XFS s_maxbytes is LLONG_MAX):
 * every "x + small" on them saturates (rm_sat_add) instead of overflowing. */
#include "rm_arith.h"

#define DT_MAXFILES	16
#define DT_MAX_IO	(1 << 20)	/* largest pwrite/pread/mmap buffer */
#define DT_NERRNO	136

enum dt_kind {
	DT_PWRITE, DT_PREAD, DT_MWRITE, DT_MREAD, DT_TRUNCATE,
	DT_FALLOC,		/* mode 0 */
	DT_FALLOC_KEEP,		/* KEEP_SIZE */
	DT_PUNCH,		/* PUNCH_HOLE|KEEP_SIZE */
	DT_ZERO,		/* ZERO_RANGE */
	DT_ZERO_KEEP,		/* ZERO_RANGE|KEEP_SIZE */
	DT_INSERT,		/* INSERT_RANGE */
	DT_COLLAPSE,		/* COLLAPSE_RANGE */
	DT_UNSHARE,		/* UNSHARE_RANGE (EOPNOTSUPP without reflink) */
	DT_FMODE,		/* any other mode word: mostly invalid combos */
	DT_FSYNC, DT_REOPEN, DT_DROP, DT_REMOUNT,
	DT_SEEK_DATA, DT_SEEK_HOLE,
	DT_REFLINK,		/* FICLONERANGE from file `src` (XFS; else EOPNOTSUPP) */
	/* write-back points the generator chooses (fsync, drop caches and
	 * remount are the others) */
	DT_FDATASYNC,		/* fdatasync(2) */
	DT_SYNC_RANGE,		/* sync_file_range(2), flags in `mode` (DT_SR_*) */
	DT_FIEMAP_SYNC,		/* FS_IOC_FIEMAP with FIEMAP_FLAG_SYNC of [off, off+len) */
	/* fsx's other data ops */
	DT_DIO_WRITE,		/* pwrite(2) on an O_DIRECT descriptor */
	DT_DIO_READ,		/* pread(2) on an O_DIRECT descriptor */
	DT_COPY_RANGE,		/* copy_file_range(2) from file `src`, repeated as xfs_io does */
	DT_DEDUPE,		/* FIDEDUPERANGE from file `src` (XFS; else EOPNOTSUPP) */
	DT_CHMOD,		/* fchmod(fd, off): the new mode (--user runs) */
	DT_FILL,		/* free= targets: the filler takes every free block (shrinker) */
	DT_UNFILL,		/* free= targets: the filler gives every block back (shrinker) */
	DT_NKINDS
};

/* sync_file_range(2) flags, Linux's values (include/uapi/linux/fs.h) */
#define DT_SR_WAIT_BEFORE	1u
#define DT_SR_WRITE		2u
#define DT_SR_WAIT_AFTER	4u
#define DT_SR_VALID		7u

/* One bit per kind in the per-target and per-generator masks. */
#define DT_KBIT(k)	(UINT64_C(1) << (k))
_Static_assert(DT_NKINDS <= 64, "kind masks are 64 bits wide");

struct dt_op {
	uint8_t kind;		/* enum dt_kind */
	uint8_t file;		/* file index in the session */
	uint8_t pat;		/* data byte of pwrite/mwrite (never 0) */
	int32_t mode;		/* fallocate mode word (DT_FMODE; derived otherwise);
				 * sync_file_range flags (DT_SYNC_RANGE) */
	int64_t off;		/* offset; new size for truncate; dst offset of reflink */
	int64_t len;
	uint8_t src;		/* reflink, copy_range, dedupe: source file index */
	int64_t soff;		/* reflink, copy_range, dedupe: source offset */
};

/* Bytes of mapped I/O (mread/mwrite) at off for len in a file of size:
 * clipped to EOF, since past it a fault is SIGBUS (difftest and its
 * xfs_io reproducers both clip). */
static inline int64_t dt_mapped_len(int64_t off, int64_t len, int64_t size)
{
	return off >= size || off < 0 ? 0 : (size - off < len ? size - off : len);
}

/* The guest's page size (x86-64): the unit of mmap faults and page-cache
 * write-back, larger than a block of 1 or 2 KiB. */
#define DT_PAGE_SIZE	4096

/* A buffered write of len bytes at off that wrote k of them failed in the
 * write_begin of the page chunk at off + k: where that chunk ends (ext4
 * calls ext4_truncate_failed_write() when this passes i_size). */
static inline int64_t dt_failed_page_end(int64_t off, int64_t len, int64_t k)
{
	int64_t pos = rm_sat_add(off, k), room = DT_PAGE_SIZE - pos % DT_PAGE_SIZE;

	return rm_sat_add(pos, len - k < room ? len - k : room);
}

/* An mmap write of n bytes of buf at off (inside EOF) on model m: with
 * blocks smaller than a page, rm_mwrite(): every block of each touched
 * page up to EOF is allocated and written back (ext4_page_mkwrite() ->
 * block_page_mkwrite(), iomap_page_mkwrite(), fuse_page_mkwrite() +
 * fuse_writepage_locked() clipped to i_size; refmodel/RULES.md W10), so
 * its holes and unwritten blocks become data (zeros); with blocks of a
 * page or larger (and in the bytes profile) rm_pwrite(), as before.
 * [*lo, *hi): the bytes the mwrite changed or allocated.  The model's
 * answer. */
int64_t dt_mmap_write(struct rm_file *m, const unsigned char *buf, size_t n, int64_t off,
		      int64_t *lo, int64_t *hi);

/* Kernel log lines that mean a crash (vm/run's set): crash reproducers
 * grep dmesg for them. */
#define DT_CRASH_LINES "BUG:|kernel BUG at|Oops|WARNING:|general protection"


/* op.c */
const char *dt_kind_name(int kind);		/* short name, also JSON key */
int dt_kind_parse(const char *name);		/* -1 if unknown */
int dt_kind_mode(const struct dt_op *op);	/* fallocate mode, -1 if none */
int dt_kind_is_falloc(int kind);
int dt_kind_is_global(int kind);		/* drop caches, remount */
/* One line, no newline; `buf` >= 128 bytes. */
void dt_op_format(const struct dt_op *op, char *buf, size_t n);
/* Parse one line; 0, or -EINVAL with a message in err (op unchanged). */
int dt_op_parse(const char *line, struct dt_op *op, char *err, size_t errn);
void dt_fill_pattern(void *buf, size_t len, uint8_t pat);
const char *dt_errname(int err);		/* "EINVAL", "OK" for 0 */

/* gen.c */
struct dt_gen {
	uint64_t rng;
	unsigned weights[DT_NKINDS];
	uint64_t disabled;	/* bit per kind */
	int nfiles;
	uint32_t bs;
	int64_t maxbytes;
	int64_t ws;		/* working set: most offsets fall below it */
	int64_t stripe_left[DT_MAXFILES];	/* ops left in a fragmenting phase */
	int64_t reset_extents;	/* truncate to 0 when a file passes this */
	int64_t reset_bytes;
	/* Per-file personalities (gen.c): a "fragmenter" file mostly does
	 * block-sized ops at scattered block offsets over frag_span bytes, so
	 * its extent tree grows to thousands of extents (ext4 depth 2, XFS
	 * btree); the other files do the general mix. */
	/* Locality (--locality PCT, gen.c pick_off()): PCT% of picked offsets
	 * land on (or a block off) an offset one of the file's last ops used,
	 * so that ops meet where the last ones left their state: a write, a
	 * shift over it, a seek into the shifted range. */
	unsigned locality;
	/* Huge files (--huge PCT, gen.c huge_op()): PCT% of a general file's
	 * ops are writes, fallocates, punches, zeroes, truncates, inserts and
	 * collapses placed within 64 blocks of `limit`, the end of the last
	 * block the format can map (ext4: EXT_MAX_BLOCKS; XFS and FUSE:
	 * s_maxbytes), so extents sit at the format's limit and shifts move
	 * them there.  Such a file is not reset for its size. */
	unsigned huge;
	int64_t limit;
	int cur_file;
	int64_t recent[DT_MAXFILES][8];
	uint8_t nrecent[DT_MAXFILES], recent_at[DT_MAXFILES];
	uint8_t frag[DT_MAXFILES];	/* 1: file i is a fragmenter */
	int frag_files;		/* how many (dt_gen_init: 1 if nfiles >= 2) */
	int64_t frag_span;	/* bytes its scattered ops fall in */
	unsigned frag_pct;	/* % of its ops that follow the recipe */
	int64_t frag_reset_extents;	/* its reset threshold (model runs) */
	/* Fragmenter life cycle (gen.c, "Bounding the deep tree's cost"):
	 * FRAG_FIRST grows with the full recipe until frag_peak0 model runs,
	 * then the file is reset and rests (a general file) for frag_rest
	 * ops of the session; FRAG_GROW regrows it fast to frag_peak,
	 * FRAG_CHURN runs the full recipe there for frag_churn of its ops,
	 * then it is reset and rests again. */
	/* fsx's geometry (--flen, --oplen: fsx's -l and -o; 0: unbounded):
	 * every op lands in [0, flen] and moves at most oplen bytes
	 * (gen.c fit_geometry()), so difftest and fsx run the same shape
	 * of work when they are compared side by side. */
	int64_t flen, oplen;
	uint8_t frag_phase[DT_MAXFILES];
	int64_t frag_left[DT_MAXFILES];	/* REST: op number it ends; CHURN: ops left */
	uint64_t nops;			/* ops generated */
	int64_t frag_peak0, frag_peak, frag_rest, frag_churn;
};
enum { FRAG_FIRST, FRAG_REST, FRAG_GROW, FRAG_CHURN };
uint64_t dt_rand(uint64_t *s);
void dt_gen_init(struct dt_gen *g, uint64_t seed, int nfiles, uint32_t bs,
		 int64_t maxbytes);
int dt_weights_parse(unsigned *w, const char *spec, char *err, size_t errn);
void dt_weights_default(unsigned *w);
/* Set the write-back points' weights of the observer-free discipline. */
void dt_weights_writeback(unsigned *w);
/* Next op; `models` are the session's model files (read only).  live[i]
 * says which files may be chosen. */
void dt_gen_next(struct dt_gen *g, struct rm_file *const *models,
		 const int *live, struct dt_op *op);

/* target.c */
enum dt_ttype { DT_T_FD, DT_T_FAULTY, DT_T_MODEL };
enum dt_fault { DT_F_NONE, DT_F_INSERT_OBO, DT_F_LOST_UNWRITTEN, DT_F_WRONG_ERRNO,
		DT_F_FLAKY, DT_F_KEEP_SETID, DT_F_ENOSPC, DT_F_ENOSPC_LIE,
		DT_F_ENOSPC_SHIFT, DT_F_ENOSPC_FULL };
#define DT_FLAKY_AT	300	/* faulty:flaky: the pwrite that fails (once) */

struct dt_session;
struct dt_target {
	char name[PATH_MAX + 32];	/* as given: ext4, dir:/x, faulty:... */
	enum dt_ttype type;
	enum dt_fault fault;
	char dir[PATH_MAX];
	char fsname[32];		/* statfs-derived or fstype */
	/* the guest file system's configuration (config.h): named in the
	 * spec (ext4:bs=1024, ...) or the default of ext4/xfs/fusefs; checked
	 * against the mount.  has_cfg 0: a dir:/model:/faulty: target */
	struct dt_config cfg;
	int has_cfg;
	struct rm_opts mopts;		/* model options (profile, kernel, bs, maxbytes) */
	enum rm_kernel kernel;		/* the running kernel (uname -r), or the model's */
	char kernel_note[160];		/* how mopts.kernel was chosen, for the log */
	int profile_named;		/* the spec named the profile (and kernel) */
	int fiemap;			/* 0 none, 1 FS_IOC_FIEMAP, 2 RS_IOC_FIEMAP */
	int fiemap_nosync;		/* no FIEMAP_FLAG_SYNC (pre-writeback maps) */
	/* The observer-free discipline (not --map-sync, dt_target_discipline()):
	 * maps checked without FIEMAP_FLAG_SYNC against the model's cached
	 * view; only the ops write back (and the model with them). */
	int cached;
	int rs_ioctl;			/* fusefs: shift modes through RS_IOC_* */
	int mmap_ok;
	int can_remount;		/* own mount point and root */
	int global_drop;		/* echo 3 > /proc/sys/vm/drop_caches
					 * (DIFFTEST_GLOBAL_DROP=1), not per file */
	uint64_t disabled;		/* kinds this target cannot do (probe) */
	uint32_t dio_align;		/* O_DIRECT: logical block size (statx
					 * dio_offset_align), 1: no rule (FUSE) */
	unsigned copy_flags;		/* rm_copy_file_range() flags (RM_COPY_NO_REMAP) */
	char probe_notes[512];
	char mnt_dev[PATH_MAX], mnt_dir[PATH_MAX], mnt_type[64], mnt_opts[512];
	struct dt_session *sessions;	/* open sessions (for remount) */
	unsigned counter;		/* unique file names */
	uint64_t flaky_writes;		/* faulty:flaky: pwrites so far */
	int filled;			/* faulty:enospc-full: a fill op ran on this file system */
	char tag[64];
	/* counters of events that are not divergences */
	uint64_t enospc_resets, remount_fallbacks;
	/* free=SIZE (config.h): the target is nearly full; an ENOSPC or a
	 * short write of an op that allocates is checked against what the
	 * kernel documents (exec.c, refmodel RULES.md N1-N3) and counted */
	int full;
	uint64_t enospc_checked;
	uint64_t room_made;	/* free=: filler shrunk to make a new file (make_room()) */
	int64_t filled_free;		/* bytes free after the filler (statfs) */
	uint64_t setid_removals;		/* --user: ops that removed set-ID bits (model) */
	/* file systems made anew (dt_t_fresh_fs()): the boot image restored,
	 * or mkfs (no DIFFTEST_PRISTINE entry, or the restore failed) */
	uint64_t fresh_restored, fresh_mkfs;
	/* on-disk checks while unmounted (depth.c, from dt_t_remount()) */
	int fsck_now;			/* set by exec.c: fsck at this remount */
	int fsck_timeout;		/* seconds; 0: 300 */
	char fsck_msg[1024];		/* non-empty: that fsck found corruption */
	uint64_t fsck_runs, fsck_errors;	/* verdicts; tool failures */
	double fsck_seconds;
	int max_depth, max_btree;	/* measured tree depth (debugfs/xfs_db) */
	uint64_t depth_runs;		/* files measured */
	int64_t depth_at_runs;		/* most model runs a measured file had */
	double depth_seconds;
	char depth_note[256];		/* last tool failure */
	uint64_t xdiff_hits[32];	/* per expected-difference entry (DT_XDIFF_MAX) */
	/* --user UID:GID: per-file ops run with setfsuid(uid)/setfsgid(gid)
	 * (no CAP_FSETID, CAP_FOWNER, CAP_DAC_OVERRIDE: rm_cred_user()), the
	 * files get owners and set-ID modes from dt_user_attr() and the
	 * oracle compares st_mode after every op (DV_MODE) */
	int user;
	uint32_t user_uid, user_gid;
};

/* cowlat.c: where file i may have XFS CoW fork staging over holes (lseek
 * latitude); only a file that took part in a reflink has any. */
struct dt_spans {
	struct rm_span *v;	/* sorted, disjoint */
	size_t n, cap;
};
struct dt_cowlat {
	struct dt_spans st;	/* staging (rm_lseek_ok_lat()'s spans) */
	struct dt_spans sh;	/* ranges that may share blocks */
	int reflinked;
};
void dt_cowlat_reset(struct dt_cowlat *c);
/* A successful reflink of len bytes (the effective length) from src at soff
 * to dst at doff: both ranges may share blocks now.  0 or -ENOMEM. */
int dt_cowlat_reflink(struct dt_cowlat *dst, struct dt_cowlat *src, int64_t bs,
		      int64_t soff, int64_t doff, int64_t len);
/* After op ran on its file (model size old_size -> new_size): 0 or -ENOMEM. */
int dt_cowlat_op(struct dt_cowlat *c, const struct dt_op *op, int64_t bs,
		 int64_t old_size, int64_t new_size);

struct dt_session {
	struct dt_target *t;
	int nfiles;
	struct rm_file *model[DT_MAXFILES];
	struct rm_file *fake[DT_MAXFILES];	/* faulty/model targets */
	int fd[DT_MAXFILES];
	char path[DT_MAXFILES][PATH_MAX + 160];
	void *fmbuf;				/* FIEMAP ioctl buffer */
	/* fusefs: file i may have dirty page-cache pages (an mmap write
	 * since its last fdatasync), see dt_t_fiemap() */
	unsigned char mdirty[DT_MAXFILES];
	struct dt_cowlat cow[DT_MAXFILES];
	/* --user: each file's mode, owner and group as the model has them */
	struct rm_attr attr[DT_MAXFILES];
	struct rm_attr fattr[DT_MAXFILES];	/* the same, of faulty/model targets */
	struct dt_session *next;
};

int dt_target_init(struct dt_target *t, const char *spec, const char *tag,
		   char *err, size_t errn);
/* The checking discipline, before any session opens: map_sync 1, every
 * map check writes back first (FIEMAP_FLAG_SYNC, the model's states after
 * write-back); 0, observer-free: no check writes back, the model keeps
 * dirty blocks (fusefs's files are write-through: FUSE without a
 * write-back cache writes through, and its FIEMAP, built on the server's
 * SEEK_DATA/SEEK_HOLE, has no delayed allocation). */
void dt_target_discipline(struct dt_target *t, int map_sync);
/* 1 when t is rangeshift-fusefs. */
int dt_target_is_fuse(const struct dt_target *t);
/* Whether spec names a target (known kind and profile; for dir: an
 * existing path), touching nothing: 0, or -errno with a message in err. */
int dt_target_spec_check(const char *spec, char *err, size_t errn);
void dt_target_fini(struct dt_target *t);
int dt_session_open(struct dt_target *t, int nfiles, struct dt_session **out,
		    char *err, size_t errn);
void dt_session_close(struct dt_session *s);
/* --user: the owner, group and mode file i starts with (by i % 4: owned
 * by the caller; by root outside its group; by root in its group with
 * group execute; by the caller outside its group). */
struct rm_attr dt_user_attr(const struct dt_target *t, int i);
/* --user: switch the calling thread's fsuid/fsgid to the target's user
 * (on) or back to root (off).  No-op without --user. */
void dt_cred_enter(const struct dt_target *t, int on);
/* The file system whose set-ID rules apply on t (rm_cred.h). */
enum rm_cred_fs dt_cred_fs(const struct dt_target *t);
/* Replace file i by a fresh empty file (and fresh model). */
int dt_session_reset_file(struct dt_session *s, int i);

/* Raw target operations: return >= 0 or -errno, like the kernel. */
ssize_t dt_t_pwrite(struct dt_session *s, int i, const void *b, size_t n, int64_t off);
ssize_t dt_t_pread(struct dt_session *s, int i, void *b, size_t n, int64_t off);
ssize_t dt_t_mwrite(struct dt_session *s, int i, const void *b, size_t n, int64_t off);
ssize_t dt_t_mread(struct dt_session *s, int i, void *b, size_t n, int64_t off);
int dt_t_truncate(struct dt_session *s, int i, int64_t size);
int dt_t_fallocate(struct dt_session *s, int i, int mode, int64_t off, int64_t len);
int dt_t_fuse_front(const struct dt_target *t, int mode, int64_t off, int64_t len);
int dt_t_fsync(struct dt_session *s, int i);
/* fchmod(fd[i], mode): 0 or -errno (model targets: rm_cred_chmod()). */
int dt_t_chmod(struct dt_session *s, int i, uint32_t mode);
/* st_mode & 07777 of file i, or -errno. */
int64_t dt_t_mode(struct dt_session *s, int i);
int dt_t_fdatasync(struct dt_session *s, int i);
/* sync_file_range(fd[i], off, len, flags): 0 or -errno. */
int dt_t_sync_range(struct dt_session *s, int i, int64_t off, int64_t len, unsigned flags);
/* ioctl(fd[i], FICLONERANGE, {fd[src], soff, len, off}): 0 or -errno. */
int dt_t_reflink(struct dt_session *s, int i, int src, int64_t soff, int64_t off, int64_t len);
/* O_DIRECT pwrite/pread through a descriptor opened for the call. */
ssize_t dt_t_dio_pwrite(struct dt_session *s, int i, const void *b, size_t n, int64_t off);
ssize_t dt_t_dio_pread(struct dt_session *s, int i, void *b, size_t n, int64_t off);
/* copy_file_range(fd[src], soff, fd[i], off, len) repeated while it
 * copies something, as xfs_io's copy_range does: bytes or -errno. */
int64_t dt_t_copy_range(struct dt_session *s, int i, int src, int64_t soff, int64_t off,
			int64_t len);
/* ioctl(fd[src], FIDEDUPERANGE, one destination fd[i] at off): as
 * dt_dedupe_result() encodes it. */
int64_t dt_t_dedupe(struct dt_session *s, int i, int src, int64_t soff, int64_t off,
		    int64_t len);
int dt_t_reopen(struct dt_session *s, int i);
int dt_t_drop(struct dt_session *s);
int dt_t_remount(struct dt_session *s, char *note, size_t n);
/* free= targets: take: syncfs, then the filler grows until ENOSPC: the
 * bytes it took; !take: the filler is emptied, then syncfs: the bytes it
 * gave back.  Or -errno (-EINVAL: not a free= target, note says why). */
int64_t dt_t_fill(struct dt_session *s, int take, char *note, size_t n);
int dt_t_fresh_fs(struct dt_target *t, char *note, size_t n);
/* The pristine image of scratch device dev from DIFFTEST_PRISTINE
 * ("DEV=MAP:IMAGE;...", set by vm/init): 1 with map and img (n bytes each)
 * filled in, 0 when the variable lists no usable entry for dev. */
int dt_pristine_for(const char *dev, char *map, char *img, size_t n);
int64_t dt_t_size(struct dt_session *s, int i);
int64_t dt_t_lseek(struct dt_session *s, int i, int64_t off, int whence);
/* FIEMAP of [start, start+len): all extents, appended to *ext (realloc'd);
 * returns the count or -errno. */
int64_t dt_t_fiemap(struct dt_session *s, int i, int64_t start, int64_t len,
		    struct rm_extent **ext, size_t *cap);
/* The same with FIEMAP_FLAG_SYNC whatever the discipline (the fiemap_sync
 * op: a write-back of the whole file, fiemap_prep()). */
int64_t dt_t_fiemap_sync(struct dt_session *s, int i, int64_t start, int64_t len,
			 struct rm_extent **ext, size_t *cap);

/* depth.c: on-disk checks while a target is unmounted */
/* Run argv (PATH lookup) with stdout+stderr into out (NUL-terminated,
 * truncated); kill it after timeout_s.  Exit status (127: not found),
 * 128+signal, -ETIMEDOUT or -errno. */
int dt_run_tool(char *const argv[], int timeout_s, char *out, size_t outn);
/* Tree depth from `debugfs -R "dump_extents -n <INO>"` output, -1 error. */
int dt_parse_debugfs_depth(const char *out);
/* bmbt root level from xfs_db "print core.format" + "print u3.bmbt.level"
 * (0 for extents/local format), -1 error; *btree: the fork is a btree. */
int dt_parse_xfs_db_depth(const char *out, int *btree);
/* fsck exit status -> 0 clean, 1 corruption found, -1 no verdict. */
int dt_fsck_verdict(const char *fstype, int status);
/* Measure the depth of those inodes ino[0..n) whose model has more runs
 * (runs[k]) than any file measured before, and, if t->fsck_now, fsck the
 * device (t->fsck_msg set on corruption).  The target must be unmounted. */
void dt_ondisk_checks(struct dt_target *t, const uint64_t *ino, const int64_t *runs, int n);

/* script.c: copy_range and dedupe on model files, as the op runs them:
 * rm_copy_file_range() repeated while it copies something (xfs_io's
 * loop; bytes or the first error), and FIDEDUPERANGE's answer, status and
 * bytes_deduped in one value: the ioctl's or the status's -errno, -EBADE
 * for FILE_DEDUPE_RANGE_DIFFERS, else bytes_deduped. */
int64_t dt_copy_loop(struct rm_file *dst, struct rm_file *src, int64_t soff,
		     int64_t off, int64_t len, unsigned flags);
int64_t dt_dedupe_result(int ret, int status, int64_t bytes);

/* exec.c: the oracle */
enum dt_divkind { DV_NONE = 0, DV_RET, DV_SIZE, DV_MAP, DV_DATA, DV_SEEK, DV_FSCK, DV_MODE,
		  DV_NKINDS };
const char *dt_divkind_name(int k);

/* A data check's read of the target (exec.c: data_range()), kept by the
 * replays of a log (the shrinker's candidates, --replay): repro.sh issues
 * the same reads after the same ops, because a read fills the page cache,
 * and a bug in what a shift does to cached pages shows only over pages a
 * read brought in (mutant 16). */
struct dt_obs {
	uint64_t opno;		/* after the op of this index (0-based) */
	int file;
	int64_t off, len;
};

struct dt_div {
	int kind;		/* enum dt_divkind */
	int file;
	uint64_t opno;		/* index of the op in the run (0-based) */
	struct dt_op op;
	char msg[512];
	int64_t byte_off;	/* first differing byte (DV_DATA), -1 otherwise */
	int exp_byte, act_byte;
	int64_t map_lo, map_hi;	/* range whose maps differ (DV_MAP) */
	int64_t exp_ret, act_ret;	/* DV_RET of an op's result: model's, target's */
	int no_replay;		/* the whole log did not diverge again (reports say so) */
	char *picture;		/* malloc'd: expected vs actual maps */
	struct dt_mapsnap *snap;	/* malloc'd: both whole-file maps (mapshtml.c) */
	struct dt_obs *obs;	/* malloc'd: the run's data-check reads, in order */
	size_t nobs;
};

struct dt_opts {
	uint64_t check_every;	/* full-file check every K ops */
	int64_t shift_check_max;	/* bytes hashed after insert/collapse */
	int64_t write_check_max;	/* bytes hashed after a write (both ends) */
	uint64_t map_batch;	/* check the affected maps every N ops (1: each op) */
	int verify_fullmap_after_global;
	uint64_t fsck_every;	/* fsck at the 1st and every Nth real remount (0: never) */
	const struct dt_xdiffs *xdiff;	/* expected differences (expected.c), NULL: none */
	int strict;		/* --strict: the model without kernel errata (ERRATA.md) */
	int user;		/* --user UID:GID (dt_target.user) */
	uint32_t user_uid, user_gid;
	int map_sync;		/* --map-sync: every map check writes back (the old discipline) */
};
/* The discipline without --map-sync / --no-map-sync. */
#define DT_MAP_SYNC_DEFAULT	0

struct dt_exec {
	struct dt_session *s;
	struct dt_opts o;
	unsigned char *mbuf, *tbuf;	/* DT_MAX_IO each */
	struct rm_extent *ext;
	size_t extcap;
	struct rm_run *runs;
	size_t nruns, runcap;
	/* statistics */
	uint64_t ops, kind_count[DT_NKINDS];
	uint64_t errs[DT_NKINDS][DT_NERRNO];	/* target results by errno */
	int file_reset;		/* set when the last op replaced its file (ENOSPC) */
	int64_t max_extents;	/* FIEMAP extents seen in one file (measured) */
	int64_t max_model_runs;
	uint64_t enospc;
	uint64_t syscalls;
	uint64_t remounts;	/* remount ops run (for --fsck-every) */
	/* map ranges changed since the last map check (--map-batch) */
	int pend[DT_MAXFILES];
	int64_t pend_lo[DT_MAXFILES], pend_hi[DT_MAXFILES];
	struct dt_op pend_op[DT_MAXFILES];
	uint64_t since_map;
	/* where the time goes (report: seconds_per_kind, seconds_in): wall
	 * seconds per op kind (a remount's includes its full checks), in the
	 * periodic/final full checks, in FIEMAP (with its write-back), in
	 * data checks (pread + compare); bytes compared by data checks */
	double kind_sec[DT_NKINDS];
	double full_sec, map_sec, data_sec;
	uint64_t full_checks, bytes_checked;
	/* wall seconds per file (the fragmenter's deep tree costs more per
	 * op); FIEMAP calls and the extents they returned (O(extents) work
	 * in the kernel per map check) */
	double file_sec[DT_MAXFILES];
	uint64_t map_calls, map_extents;
	int64_t ext_n;		/* extents in ext[] from the last FIEMAP */
	/* --user: the model's answer to the last op and the effective length
	 * of a clone (rm_cred_modifies()) */
	int64_t last_mr, last_len;
	/* record != 0: every data-check read goes to obs[] (log replays) */
	int record;
	struct dt_obs *obs;
	size_t nobs, obscap;
};

int dt_exec_init(struct dt_exec *x, struct dt_session *s, const struct dt_opts *o);
void dt_exec_fini(struct dt_exec *x);
/* Execute op (on model and target) and check it.  Returns DV_NONE or the
 * divergence kind with *d filled. */
int dt_exec_op(struct dt_exec *x, const struct dt_op *op, uint64_t opno, struct dt_div *d);
/* Full check of file i: size, whole map, whole data. */
int dt_full_check(struct dt_exec *x, int i, uint64_t opno, struct dt_div *d);
void dt_div_free(struct dt_div *d);
/* Render expected (model) vs actual map of [lo, hi) of file i. */
char *dt_map_picture(struct dt_exec *x, int i, int64_t lo, int64_t hi);

/* mapshtml.c: maps.html, the divergence as one self-contained page.
 * Whole-file maps of file i at a divergence: the model's runs (state and
 * may-mask) and the target's FIEMAP as runs (may == state), block-rounded
 * as the oracle compares them. */
struct dt_mapsnap {
	struct rm_run *exp, *act;
	size_t nexp, nact;
	int64_t exp_size, act_size;	/* act_size < 0: fstat failed */
	char note[160];			/* non-empty: why act is missing */
};
/* 0 with *out set, or -ENOMEM. */
int dt_mapsnap_take(struct dt_exec *x, int i, struct dt_mapsnap **out);
void dt_mapsnap_free(struct dt_mapsnap *m);
/* The page for divergence d of ops[0..n) (d->snap: the maps at the
 * divergence; the model's map after each op is replayed here).  0 or -errno. */
int dt_maps_html_write(FILE *f, const struct dt_target *t, int nfiles,
		       const struct dt_op *ops, size_t n, const struct dt_div *d);

/* The granules where the target's state is outside the model's may-set
 * (past either map's end: a hole), in order: fn(ctx, lo, hi, may, st) per
 * stretch of one may/state pair. */
int dt_mapsnap_diffs(const struct dt_mapsnap *m,
		     int (*fn)(void *ctx, int64_t lo, int64_t hi, unsigned may, unsigned st),
		     void *ctx);

/* expected.c: known differences between the model and other kernels */
#define DT_XDIFF_MAX	32
#define DT_XDIFF_RANGES	4
struct dt_kver_range {
	int lo[3], hi[3];
	int hi_n;		/* 0: open; 2: all of hi[0].hi[1].*; 3: up to hi */
};
struct dt_xdiff {
	char id[48];
	struct dt_kver_range ranges[DT_XDIFF_RANGES];
	int nranges;
	char fs[8];		/* any, ext4, xfs */
	int op;			/* enum dt_kind, -1 any */
	int div;		/* enum dt_divkind */
	int match;		/* expected.c XM_* */
	int exp_err, act_err;	/* errno rule: positive errnos */
	int64_t window;		/* map-folio-data */
	char function[256], why[512];
};
struct dt_xdiffs {
	struct dt_xdiff v[DT_XDIFF_MAX];
	size_t n;
	char release[128];	/* uname -r the entries are matched against */
	int kv[3], kv_ok;
};
/* The data file compiled in (difftest/expected/kernels.txt). */
const char *dt_xdiff_builtin(void);
/* Parse text (name: for messages): 0, or -EINVAL with "name:LINE: why". */
int dt_xdiff_parse(const char *text, const char *name, struct dt_xdiffs *x, char *err,
		   size_t errn);
int dt_xdiff_load(const char *path, struct dt_xdiffs *x, char *err, size_t errn);
/* Match against kernel release (NULL: uname -r of this host).  0 or -errno. */
int dt_xdiff_select(struct dt_xdiffs *x, const char *release);
int dt_xdiff_kernel_in(const struct dt_xdiff *e, const int kv[3]);
/* The entry of xs that explains divergence d on x's target, or -1. */
int dt_xdiff_match(const struct dt_xdiffs *xs, struct dt_exec *x, const struct dt_div *d);
/* The window of a map-folio-data entry that applies to op on t, else 0:
 * exec.c checks the map of the op's whole window, so that the folio's
 * blocks are seen (and explained) at the op, not at a later full check. */
int64_t dt_xdiff_window(const struct dt_xdiffs *xs, const struct dt_target *t,
			const struct dt_op *op);
/* 1 when a match of entry k leaves the file's state unknown to the model. */
int dt_xdiff_resets(const struct dt_xdiffs *xs, int k);
/* "id=count,..." of the entries hit; returns the sum of the counts. */
uint64_t dt_xdiff_summary(const struct dt_xdiffs *xs, const uint64_t *hits, char *buf, size_t n);
/* --expected: arg NULL the built-in file, "none" no entries, else a path;
 * matched against this host's uname -r.  0, or -errno with a message. */
int dt_xdiff_setup(const char *arg, struct dt_xdiffs *x, char *err, size_t errn);
/* "id, id" of the entries that apply to file system fsname here. */
void dt_xdiff_describe(const struct dt_xdiffs *xs, const char *fsname, char *buf, size_t n);

/* Depth estimates from an extent count (documented in README). */
int dt_ext4_depth_est(int64_t extents);
int dt_xfs_levels_est(int64_t extents, int *btree);

/* shrink.c */
struct dt_shrink_res {
	struct dt_op *ops;	/* shrunk log */
	size_t nops;
	int nfiles;
	struct dt_div div;	/* divergence of the shrunk log */
	uint64_t tests;
	double seconds;
	int complete;		/* 1-minimal reached within budget */
	int flaky;		/* shrunk, then did not fail when re-tested */
	int replays;		/* the whole log, run once more first, diverged
				 * again (same kind, same file): 1, else 0 and
				 * nothing was shrunk (-EAGAIN) */
	int filled;		/* a fill op was put before the last op first */
};
/* Run ops on fresh files of target t; return DV kind of the first
 * divergence (with *d), DV_NONE if clean (d->snap: the last op's file's
 * maps, d->kind DV_NONE), <0 on setup error. */
int dt_run_log(struct dt_target *t, int nfiles, const struct dt_op *ops,
	       size_t n, const struct dt_opts *o, struct dt_div *d,
	       size_t *stop_at);
/* The same, going on past divergences (counted in *ndiv): replays for
 * kernel crashes, whose verdict is the kernel log.  0 or -errno (err). */
int dt_run_log_through(struct dt_target *t, int nfiles, const struct dt_op *ops,
		       size_t n, const struct dt_opts *o, uint64_t *ndiv, char *err, size_t errn);
/* The diverging file's ops, and those of the files it takes data from
 * (reflink, copy_range, dedupe sources, transitively), with the global
 * ops, files renumbered (the diverging file f0): the shrinker's first
 * candidate; alone: its ops only, numbers kept, its sources empty (the
 * second).  Returns the ops written to out (room for n); *nkept = files. */
size_t dt_few_files(const struct dt_op *ops, size_t n, int nfiles, int file, int alone,
		    struct dt_op *out, int *nkept);
/* seen: the divergence being shrunk (its kind, file, and for DV_RET the
 * target's result).  journal (or NULL): path each candidate's log is
 * written to, synced, before the candidate runs (--journal: a kernel crash
 * in a candidate).  A nearly full target's ENOSPC is shrunk with a fill op
 * before the op that met it (shrink.c). */
int dt_shrink(struct dt_target *t, int nfiles, const struct dt_op *ops,
	      size_t n, const struct dt_div *seen, const struct dt_opts *o,
	      uint64_t max_tests, double max_seconds, const char *journal,
	      struct dt_shrink_res *r);
/* In the guest, make t's scratch file system anew before a run of a log
 * (dt_t_fresh_fs(); a no-op elsewhere): 0, or -errno with a message in err. */
int dt_start_fresh(struct dt_target *t, char *err, size_t errn);
/* shiftmap.c: the ops j of ops[0..n) with keep[j] set, into out, each
 * moved across the removed inserts/collapses before it (shifted[j]: op j
 * changed its file's size when the log ran; NULL: none did) so that it
 * meets the same data and holes as in the full log.  Returns the number of
 * ops written, or -ENOMEM / -EINVAL (a file index >= nfiles). */
ssize_t dt_relocate(const struct dt_op *ops, const uint8_t *shifted, const uint8_t *keep,
		    size_t n, int nfiles, struct dt_op *out);
/* pin.c: the (slot mod n)-th of the n CPUs in set, or -1 (empty set,
 * slot < 0).  dt_pin(): binds the calling process to that CPU of its own
 * affinity mask; returns the CPU, or -errno. */
int dt_cpu_pick(const cpu_set_t *set, int slot);
int dt_pin(int slot);
/* script.c: the ops as repro.sh (an xfs_io shell script that exits 1,
 * "BUG REPRODUCED", when the kernel still shows divergence d; d == NULL: a
 * crash reproducer, whose verdict is the kernel log). */
void dt_write_script(FILE *f, struct dt_target *t, int nfiles, const struct dt_op *ops,
		     size_t n, const struct dt_div *d);
/* Write DIR/maps.html alone (mapshtml.c).  0 or -errno. */
int dt_write_maps_page(const char *dir, const struct dt_target *t, int nfiles,
		       const struct dt_op *ops, size_t n, const struct dt_div *d);
/* Write DIR/ops.log, DIR/repro.sh, DIR/maps.txt, DIR/maps.html.  0 or -errno. */
int dt_write_repro(const char *dir, struct dt_target *t, int nfiles,
		   const struct dt_op *ops, size_t n, const struct dt_div *d,
		   uint64_t seed);
/* The ops as an xfs_io shell script that exits 1 ("BUG REPRODUCED") when
 * the kernel log shows an oops/BUG/WARNING afterwards: for kernel crashes,
 * which no in-guest oracle survives. */
int dt_write_crash_script(FILE *f, struct dt_target *t, int nfiles,
			  const struct dt_op *ops, size_t n);
int dt_log_write(FILE *f, struct dt_target *t, int nfiles,
		 const struct dt_op *ops, size_t n, uint64_t seed);
/* Read an op log: header gives target/files when present. */
int dt_log_read(const char *path, struct dt_op **ops, size_t *n, int *nfiles,
		char *target, size_t tn, char *err, size_t errn);

#endif /* DIFFTEST_DT_H */
