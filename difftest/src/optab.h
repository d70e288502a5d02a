/* SPDX-License-Identifier: MIT */
/*
 * optab.h - the op table: everything difftest knows about an op kind, in
 * one descriptor per kind (dt_ops[], optab.c), as xfs_io keeps one command
 * table.  A module that needs a per-kind fact or action looks the kind up
 * here instead of switching on it:
 *
 *   op.c       log-line command, syntax, render and parse (log_format,
 *              log_parse), fallocate mode word
 *   gen.c      how an op of the kind picks its arguments (gen) and which
 *              of the fragmenter's limits apply (DT_OPF_* flags)
 *   exec.c     running it on the model and the target and checking it (exec)
 *   script.c   the xfs_io command of a reproducer (xfs_io) and the model
 *              replay that gives the reproducer its sizes (model)
 *   shiftmap.c moving it across removed inserts/collapses (reloc, shift)
 *   cowlat.c   what it does to the XFS CoW staging latitude (cowlat)
 *
 * The hook functions are defined in those modules; their context types
 * stay private there (declared incomplete here).
 */
#ifndef DIFFTEST_OPTAB_H
#define DIFFTEST_OPTAB_H

#include "dt.h"

/* What follows the command in a log line ("f0 pwrite -S 0x41 0 4096"). */
enum dt_syntax {
	DT_SYN_GLOBAL,		/* "drop_caches": no file, no arguments */
	DT_SYN_FILE,		/* "f0 fsync" */
	DT_SYN_OFF,		/* "f0 truncate SIZE", "f0 seek -d OFF" */
	DT_SYN_RANGE,		/* "f0 fpunch OFF LEN" */
	DT_SYN_PAT_RANGE,	/* "f0 pwrite -S PAT OFF LEN" */
	DT_SYN_MODE_RANGE,	/* "f0 fmode MODE OFF LEN" */
	DT_SYN_REFLINK,		/* "f0 reflink fS SOFF OFF LEN" */
	DT_SYN_SYNC_RANGE,	/* "f0 sync_range [-a] [-b] [-w] OFF LEN" (xfs_io's flags) */
};

/* Per-kind facts (dt_opdesc.flags). */
#define DT_OPF_GLOBAL	0x01u	/* acts on the file system, not one file */
#define DT_OPF_NOOFF	0x02u	/* has no offset or range (fsync, reopen, global) */
#define DT_OPF_SETTLE	0x04u	/* changes what is cached: batched maps are checked first */
#define DT_OPF_IO	0x08u	/* len is an I/O buffer: 0..DT_MAX_IO */
#define DT_OPF_FALLOC	0x10u	/* an fallocate(2) mode */
#define DT_OPF_ALLOC	0x20u	/* really allocates (generator: capped, no ENOSPC in the model) */
#define DT_OPF_TOUCH	0x40u	/* fragmenter's general op that rewrites blocks: kept small */
#define DT_OPF_GROW	0x80u	/* can grow the file: a fragmenter's stays near its span */
#define DT_OPF_OWNRUN	0x100u	/* repro.sh runs it in an xfs_io of its own (xfs_io -d) */
#define DT_OPF_NOGEN	0x200u	/* never generated: only the shrinker adds it (fill) */

#define DT_MODE_NONE	(-1)	/* dt_opdesc.mode: no fallocate mode */
#define DT_MODE_OP	(-2)	/* dt_opdesc.mode: the op's own mode word (fmode) */

/* xfs_io hook results (besides 1: the command is in buf). */
#define DT_XIO_NOTHING	0	/* nothing to do in xfs_io (buf: a comment or empty) */
#define DT_XIO_NONE	(-1)	/* xfs_io cannot express the op (buf says why) */

struct dt_genctx;	/* gen.c */
struct dt_smap;		/* shiftmap.c */

struct dt_opdesc {
	const char *name;	/* short name: --weights, JSON keys, messages */
	const char *cmd;	/* log-line command with its flag ("falloc -k", "seek -d") */
	uint8_t syntax;		/* enum dt_syntax */
	int8_t shift;		/* +1 insert range, -1 collapse range, 0 neither */
	int mode;		/* fallocate mode word, DT_MODE_NONE or DT_MODE_OP */
	unsigned flags;		/* DT_OPF_* */
	const char *call;	/* the call xfs_io's perror() names when the op
				 * fails; NULL: "fallocate" for mode words */

	/* op.c: the log line (buf >= 128 bytes); parse the arguments a[0..na)
	 * after the command into op (kind and file already set): 0, or
	 * -EINVAL with a message in err */
	void (*log_format)(const struct dt_opdesc *od, const struct dt_op *op,
			   char *buf, size_t n);
	int (*log_parse)(const struct dt_opdesc *od, char *const *a, int na,
			 struct dt_op *op, char *err, size_t errn);
	/* gen.c: arguments of a freshly picked op of this kind (NULL: none) */
	void (*gen)(struct dt_genctx *c, struct dt_op *op);
	/* exec.c: run on model and target and check: DV_NONE, a DV_* kind
	 * with *d filled, or a negative errno */
	int (*exec)(struct dt_exec *x, const struct dt_op *op, uint64_t opno,
		    struct dt_div *d);
	/* script.c: the xfs_io "-c" arguments given the model size before
	 * the op: 1, DT_XIO_NOTHING or DT_XIO_NONE */
	int (*xfs_io)(const struct dt_op *op, int64_t size, char *buf, size_t n);
	/* script.c, fstest.c: apply to a reproducer's model files
	 * m[0..nfiles) (NULL: changes nothing); buf: DT_MAX_IO bytes of
	 * scratch.  Returns the model's answer: bytes or 0, or -errno */
	int64_t (*model)(struct rm_file *const *m, int nfiles, const struct dt_op *op,
			 unsigned char *buf);
	/* shiftmap.c: out = in with offsets through the file maps m */
	void (*reloc)(struct dt_smap *m, const struct dt_op *in, struct dt_op *out);
	/* cowlat.c: after the op succeeded (NULL: no effect): 0 or -ENOMEM */
	int (*cowlat)(struct dt_cowlat *c, const struct dt_op *op, int64_t bs,
		      int64_t old_size, int64_t new_size);
};

/* Indexed by enum dt_kind. */
extern const struct dt_opdesc dt_ops[DT_NKINDS];

/* The descriptor of kind, or of an "unknown" kind whose hooks refuse. */
const struct dt_opdesc *dt_opdesc_of(int kind);

/* 1 when a and b are the same op: the fields their kind uses are equal
 * (the generator leaves a pattern in every op; only writes log it). */
int dt_op_equal(const struct dt_op *a, const struct dt_op *b);

/* The xfs_io form of op (see dt_opdesc.xfs_io). */
int dt_op_xfs_io(const struct dt_op *op, int64_t size, char *buf, size_t n);
/* The call xfs_io names when op fails (dt_opdesc.call), or NULL. */
const char *dt_op_call(const struct dt_op *op);
/* Print, for each block of m in [lo, hi), " " and the states the model
 * allows there (D data, U unwritten, . hole): a reproducer's map check. */
void dt_print_allowed(FILE *f, struct rm_file *m, int64_t bs, int64_t lo, int64_t hi);

/* ---- hooks (defined in the modules named) ---- */

/* op.c */
void dt_fmt_global(const struct dt_opdesc *, const struct dt_op *, char *, size_t);
void dt_fmt_file(const struct dt_opdesc *, const struct dt_op *, char *, size_t);
void dt_fmt_off(const struct dt_opdesc *, const struct dt_op *, char *, size_t);
void dt_fmt_range(const struct dt_opdesc *, const struct dt_op *, char *, size_t);
void dt_fmt_pat_range(const struct dt_opdesc *, const struct dt_op *, char *, size_t);
void dt_fmt_mode_range(const struct dt_opdesc *, const struct dt_op *, char *, size_t);
void dt_fmt_reflink(const struct dt_opdesc *, const struct dt_op *, char *, size_t);
void dt_fmt_sync_range(const struct dt_opdesc *, const struct dt_op *, char *, size_t);
void dt_fmt_chmod(const struct dt_opdesc *, const struct dt_op *, char *, size_t);
int dt_parse_none(const struct dt_opdesc *, char *const *, int, struct dt_op *, char *, size_t);
int dt_parse_off(const struct dt_opdesc *, char *const *, int, struct dt_op *, char *, size_t);
int dt_parse_range(const struct dt_opdesc *, char *const *, int, struct dt_op *, char *, size_t);
int dt_parse_pat_range(const struct dt_opdesc *, char *const *, int, struct dt_op *, char *, size_t);
int dt_parse_mode_range(const struct dt_opdesc *, char *const *, int, struct dt_op *, char *, size_t);
int dt_parse_reflink(const struct dt_opdesc *, char *const *, int, struct dt_op *, char *, size_t);
int dt_parse_sync_range(const struct dt_opdesc *, char *const *, int, struct dt_op *, char *, size_t);

/* gen.c */
void dt_gen_io(struct dt_genctx *, struct dt_op *);
void dt_gen_mwrite(struct dt_genctx *, struct dt_op *);
void dt_gen_mread(struct dt_genctx *, struct dt_op *);
void dt_gen_truncate(struct dt_genctx *, struct dt_op *);
void dt_gen_falloc(struct dt_genctx *, struct dt_op *);
void dt_gen_fmode(struct dt_genctx *, struct dt_op *);
void dt_gen_shift(struct dt_genctx *, struct dt_op *);
void dt_gen_seek(struct dt_genctx *, struct dt_op *);
void dt_gen_reflink(struct dt_genctx *, struct dt_op *);
void dt_gen_sync_range(struct dt_genctx *, struct dt_op *);
void dt_gen_fiemap_sync(struct dt_genctx *, struct dt_op *);
void dt_gen_dio(struct dt_genctx *, struct dt_op *);
void dt_gen_copy_range(struct dt_genctx *, struct dt_op *);
void dt_gen_dedupe(struct dt_genctx *, struct dt_op *);
void dt_gen_chmod(struct dt_genctx *, struct dt_op *);

/* exec.c */
int dt_x_pwrite(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_pread(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_mwrite(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_mread(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_truncate(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_falloc(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_fsync(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_fdatasync(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_sync_range(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_fiemap_sync(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_reopen(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_drop(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_remount(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_fill(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_seek(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_reflink(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_dio_write(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_dio_read(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_copy_range(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_dedupe(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_chmod(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);
int dt_x_unknown(struct dt_exec *, const struct dt_op *, uint64_t, struct dt_div *);

/* script.c (the reproducer's xfs_io commands and model replay) */
int dt_xio_pwrite(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_pread(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_mwrite(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_mread(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_off(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_fsync(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_sync_range(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_fiemap_sync(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_reflink(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_falloc(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_nothing(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_dio_pwrite(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_dio_pread(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_copy_range(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_dedupe(const struct dt_op *, int64_t, char *, size_t);
int dt_xio_chmod(const struct dt_op *, int64_t, char *, size_t);
int64_t dt_model_pwrite(struct rm_file *const *, int, const struct dt_op *, unsigned char *);
int64_t dt_model_mwrite(struct rm_file *const *, int, const struct dt_op *, unsigned char *);
int64_t dt_model_truncate(struct rm_file *const *, int, const struct dt_op *, unsigned char *);
int64_t dt_model_falloc(struct rm_file *const *, int, const struct dt_op *, unsigned char *);
int64_t dt_model_reflink(struct rm_file *const *, int, const struct dt_op *, unsigned char *);
int64_t dt_model_dio_pwrite(struct rm_file *const *, int, const struct dt_op *, unsigned char *);
int64_t dt_model_copy_range(struct rm_file *const *, int, const struct dt_op *, unsigned char *);
int64_t dt_model_dedupe(struct rm_file *const *, int, const struct dt_op *, unsigned char *);
int64_t dt_model_sync_range(struct rm_file *const *, int, const struct dt_op *, unsigned char *);
int64_t dt_model_writeback(struct rm_file *const *, int, const struct dt_op *, unsigned char *);

/* shiftmap.c */
void dt_reloc_none(struct dt_smap *, const struct dt_op *, struct dt_op *);
void dt_reloc_size(struct dt_smap *, const struct dt_op *, struct dt_op *);
void dt_reloc_off(struct dt_smap *, const struct dt_op *, struct dt_op *);
void dt_reloc_range(struct dt_smap *, const struct dt_op *, struct dt_op *);
void dt_reloc_reflink(struct dt_smap *, const struct dt_op *, struct dt_op *);

/* cowlat.c */
int dt_cow_write(struct dt_cowlat *, const struct dt_op *, int64_t, int64_t, int64_t);
int dt_cow_stage(struct dt_cowlat *, const struct dt_op *, int64_t, int64_t, int64_t);
int dt_cow_truncate(struct dt_cowlat *, const struct dt_op *, int64_t, int64_t, int64_t);
int dt_cow_shift(struct dt_cowlat *, const struct dt_op *, int64_t, int64_t, int64_t);

#endif /* DIFFTEST_OPTAB_H */
