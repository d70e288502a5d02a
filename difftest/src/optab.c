/* SPDX-License-Identifier: MIT */
/*
 * optab.c - the op table: one descriptor per op kind (optab.h says what
 * each field is for and which module uses it), and the per-kind lookups
 * the rest of difftest and its command line use (names, fallocate modes).
 */
#include <string.h>

#include "optab.h"

#define KEEP	RM_FALLOC_FL_KEEP_SIZE
#define RANGE_OF(syn)	.log_format = dt_fmt_##syn, .log_parse = dt_parse_##syn

const struct dt_opdesc dt_ops[DT_NKINDS] = {
	[DT_PWRITE] = {
		.name = "pwrite", .cmd = "pwrite", .syntax = DT_SYN_PAT_RANGE,
		.call = "pwrite",
		.mode = DT_MODE_NONE, .flags = DT_OPF_IO | DT_OPF_TOUCH | DT_OPF_GROW,
		RANGE_OF(pat_range), .gen = dt_gen_io, .exec = dt_x_pwrite,
		.xfs_io = dt_xio_pwrite, .model = dt_model_pwrite,
		.reloc = dt_reloc_range, .cowlat = dt_cow_write,
	},
	[DT_PREAD] = {
		.name = "pread", .cmd = "pread", .syntax = DT_SYN_RANGE,
		.call = "pread",
		.mode = DT_MODE_NONE, .flags = DT_OPF_IO,
		RANGE_OF(range), .gen = dt_gen_io, .exec = dt_x_pread,
		.xfs_io = dt_xio_pread, .reloc = dt_reloc_range,
	},
	[DT_MWRITE] = {
		.name = "mwrite", .cmd = "mwrite", .syntax = DT_SYN_PAT_RANGE,
		.mode = DT_MODE_NONE, .flags = DT_OPF_IO | DT_OPF_TOUCH,
		RANGE_OF(pat_range), .gen = dt_gen_mwrite, .exec = dt_x_mwrite,
		.xfs_io = dt_xio_mwrite, .model = dt_model_mwrite,
		.reloc = dt_reloc_range, .cowlat = dt_cow_write,
	},
	[DT_MREAD] = {
		.name = "mread", .cmd = "mread", .syntax = DT_SYN_RANGE,
		.mode = DT_MODE_NONE, .flags = DT_OPF_IO,
		RANGE_OF(range), .gen = dt_gen_mread, .exec = dt_x_mread,
		.xfs_io = dt_xio_mread, .reloc = dt_reloc_range,
	},
	[DT_TRUNCATE] = {
		.name = "truncate", .cmd = "truncate", .syntax = DT_SYN_OFF,
		.call = "ftruncate",
		.mode = DT_MODE_NONE,
		RANGE_OF(off), .gen = dt_gen_truncate, .exec = dt_x_truncate,
		.xfs_io = dt_xio_off, .model = dt_model_truncate,
		.reloc = dt_reloc_size, .cowlat = dt_cow_truncate,
	},
	[DT_FALLOC] = {
		.name = "falloc", .cmd = "falloc", .syntax = DT_SYN_RANGE, .mode = 0,
		.flags = DT_OPF_FALLOC | DT_OPF_ALLOC | DT_OPF_TOUCH | DT_OPF_GROW,
		RANGE_OF(range), .gen = dt_gen_falloc, .exec = dt_x_falloc,
		.xfs_io = dt_xio_falloc, .model = dt_model_falloc, .reloc = dt_reloc_range,
	},
	[DT_FALLOC_KEEP] = {
		.name = "falloc_keep", .cmd = "falloc -k", .syntax = DT_SYN_RANGE, .mode = KEEP,
		.flags = DT_OPF_FALLOC | DT_OPF_ALLOC | DT_OPF_TOUCH | DT_OPF_GROW,
		RANGE_OF(range), .gen = dt_gen_falloc, .exec = dt_x_falloc,
		.xfs_io = dt_xio_falloc, .model = dt_model_falloc, .reloc = dt_reloc_range,
	},
	[DT_PUNCH] = {
		.name = "punch", .cmd = "fpunch", .syntax = DT_SYN_RANGE,
		.mode = RM_FALLOC_FL_PUNCH_HOLE | KEEP, .flags = DT_OPF_FALLOC | DT_OPF_TOUCH,
		RANGE_OF(range), .gen = dt_gen_falloc, .exec = dt_x_falloc,
		.xfs_io = dt_xio_falloc, .model = dt_model_falloc, .reloc = dt_reloc_range,
		.cowlat = dt_cow_write,
	},
	[DT_ZERO] = {
		.name = "zero", .cmd = "fzero", .syntax = DT_SYN_RANGE,
		.mode = RM_FALLOC_FL_ZERO_RANGE,
		.flags = DT_OPF_FALLOC | DT_OPF_ALLOC | DT_OPF_TOUCH | DT_OPF_GROW,
		RANGE_OF(range), .gen = dt_gen_falloc, .exec = dt_x_falloc,
		.xfs_io = dt_xio_falloc, .model = dt_model_falloc, .reloc = dt_reloc_range,
		.cowlat = dt_cow_write,
	},
	[DT_ZERO_KEEP] = {
		.name = "zero_keep", .cmd = "fzero -k", .syntax = DT_SYN_RANGE,
		.mode = RM_FALLOC_FL_ZERO_RANGE | KEEP,
		.flags = DT_OPF_FALLOC | DT_OPF_ALLOC | DT_OPF_TOUCH | DT_OPF_GROW,
		RANGE_OF(range), .gen = dt_gen_falloc, .exec = dt_x_falloc,
		.xfs_io = dt_xio_falloc, .model = dt_model_falloc, .reloc = dt_reloc_range,
		.cowlat = dt_cow_write,
	},
	[DT_INSERT] = {
		.name = "insert", .cmd = "finsert", .syntax = DT_SYN_RANGE, .shift = 1,
		.mode = RM_FALLOC_FL_INSERT_RANGE, .flags = DT_OPF_FALLOC | DT_OPF_GROW,
		RANGE_OF(range), .gen = dt_gen_shift, .exec = dt_x_falloc,
		.xfs_io = dt_xio_falloc, .model = dt_model_falloc,
		/* the hole's length is not a range of the file */
		.reloc = dt_reloc_off, .cowlat = dt_cow_shift,
	},
	[DT_COLLAPSE] = {
		.name = "collapse", .cmd = "fcollapse", .syntax = DT_SYN_RANGE, .shift = -1,
		.mode = RM_FALLOC_FL_COLLAPSE_RANGE, .flags = DT_OPF_FALLOC,
		RANGE_OF(range), .gen = dt_gen_shift, .exec = dt_x_falloc,
		.xfs_io = dt_xio_falloc, .model = dt_model_falloc, .reloc = dt_reloc_range,
		.cowlat = dt_cow_shift,
	},
	[DT_UNSHARE] = {
		.name = "unshare", .cmd = "funshare", .syntax = DT_SYN_RANGE,
		.mode = RM_FALLOC_FL_UNSHARE_RANGE,
		.flags = DT_OPF_FALLOC | DT_OPF_TOUCH | DT_OPF_GROW,
		RANGE_OF(range), .gen = dt_gen_falloc, .exec = dt_x_falloc,
		.xfs_io = dt_xio_falloc, .model = dt_model_falloc, .reloc = dt_reloc_range,
		.cowlat = dt_cow_write,
	},
	[DT_FMODE] = {
		.name = "fmode", .cmd = "fmode", .syntax = DT_SYN_MODE_RANGE,
		.mode = DT_MODE_OP, .flags = DT_OPF_FALLOC | DT_OPF_TOUCH,
		RANGE_OF(mode_range), .gen = dt_gen_fmode, .exec = dt_x_falloc,
		.xfs_io = dt_xio_falloc, .model = dt_model_falloc, .reloc = dt_reloc_range,
		.cowlat = dt_cow_stage,
	},
	[DT_FSYNC] = {
		.name = "fsync", .cmd = "fsync", .syntax = DT_SYN_FILE,
		.call = "fsync",
		.mode = DT_MODE_NONE, .flags = DT_OPF_NOOFF | DT_OPF_SETTLE,
		.log_format = dt_fmt_file, .log_parse = dt_parse_none, .exec = dt_x_fsync,
		.xfs_io = dt_xio_fsync, .model = dt_model_writeback, .reloc = dt_reloc_none,
	},
	[DT_REOPEN] = {
		.name = "reopen", .cmd = "reopen", .syntax = DT_SYN_FILE,
		.mode = DT_MODE_NONE, .flags = DT_OPF_NOOFF | DT_OPF_SETTLE,
		.log_format = dt_fmt_file, .log_parse = dt_parse_none, .exec = dt_x_reopen,
		/* each xfs_io run opens and closes the file */
		.xfs_io = dt_xio_nothing, .reloc = dt_reloc_none,
	},
	[DT_DROP] = {
		.name = "drop_caches", .cmd = "drop_caches", .syntax = DT_SYN_GLOBAL,
		.mode = DT_MODE_NONE, .flags = DT_OPF_GLOBAL | DT_OPF_NOOFF | DT_OPF_SETTLE,
		.log_format = dt_fmt_global, .log_parse = dt_parse_none, .exec = dt_x_drop,
		.xfs_io = dt_xio_nothing, .reloc = dt_reloc_none,
	},
	[DT_REMOUNT] = {
		.name = "remount", .cmd = "remount", .syntax = DT_SYN_GLOBAL,
		.mode = DT_MODE_NONE, .flags = DT_OPF_GLOBAL | DT_OPF_NOOFF | DT_OPF_SETTLE,
		.log_format = dt_fmt_global, .log_parse = dt_parse_none, .exec = dt_x_remount,
		.xfs_io = dt_xio_nothing, .reloc = dt_reloc_none,
	},
	[DT_SEEK_DATA] = {
		.name = "seek_data", .cmd = "seek -d", .syntax = DT_SYN_OFF,
		.mode = DT_MODE_NONE,
		RANGE_OF(off), .gen = dt_gen_seek, .exec = dt_x_seek,
		.xfs_io = dt_xio_off, .reloc = dt_reloc_off,
	},
	[DT_SEEK_HOLE] = {
		.name = "seek_hole", .cmd = "seek -h", .syntax = DT_SYN_OFF,
		.mode = DT_MODE_NONE,
		RANGE_OF(off), .gen = dt_gen_seek, .exec = dt_x_seek,
		.xfs_io = dt_xio_off, .reloc = dt_reloc_off,
	},
	[DT_REFLINK] = {
		.name = "reflink", .cmd = "reflink", .syntax = DT_SYN_REFLINK,
		.mode = DT_MODE_NONE,
		RANGE_OF(reflink), .gen = dt_gen_reflink, .exec = dt_x_reflink,
		.xfs_io = dt_xio_reflink, .model = dt_model_reflink,
		.reloc = dt_reloc_reflink,
	},
	[DT_FDATASYNC] = {
		.name = "fdatasync", .cmd = "fdatasync", .syntax = DT_SYN_FILE,
		.call = "fdatasync",
		.mode = DT_MODE_NONE, .flags = DT_OPF_NOOFF | DT_OPF_SETTLE,
		.log_format = dt_fmt_file, .log_parse = dt_parse_none, .exec = dt_x_fdatasync,
		.xfs_io = dt_xio_fsync, .model = dt_model_writeback, .reloc = dt_reloc_none,
	},
	[DT_SYNC_RANGE] = {
		.name = "sync_range", .cmd = "sync_range", .syntax = DT_SYN_SYNC_RANGE,
		.call = "sync_file_range",
		.mode = DT_MODE_NONE, .flags = DT_OPF_SETTLE,
		.log_format = dt_fmt_sync_range, .log_parse = dt_parse_sync_range,
		.gen = dt_gen_sync_range, .exec = dt_x_sync_range,
		.xfs_io = dt_xio_sync_range, .model = dt_model_sync_range,
		.reloc = dt_reloc_range,
	},
	[DT_FIEMAP_SYNC] = {
		/* xfs_io's fiemap asks for FIEMAP_FLAG_SYNC */
		.name = "fiemap_sync", .cmd = "fiemap", .syntax = DT_SYN_RANGE,
		.call = "fiemap",
		.mode = DT_MODE_NONE, .flags = DT_OPF_SETTLE,
		RANGE_OF(range), .gen = dt_gen_fiemap_sync, .exec = dt_x_fiemap_sync,
		.xfs_io = dt_xio_fiemap_sync, .model = dt_model_writeback, .reloc = dt_reloc_range,
	},
	/* O_DIRECT: the range is written back and invalidated first
	 * (iomap_dio_rw()), so batched maps are checked before it */
	[DT_DIO_WRITE] = {
		.name = "dio_write", .cmd = "dio_pwrite", .syntax = DT_SYN_PAT_RANGE,
		.call = "pwrite", .mode = DT_MODE_NONE,
		.flags = DT_OPF_IO | DT_OPF_TOUCH | DT_OPF_GROW | DT_OPF_SETTLE | DT_OPF_OWNRUN,
		RANGE_OF(pat_range), .gen = dt_gen_dio, .exec = dt_x_dio_write,
		.xfs_io = dt_xio_dio_pwrite, .model = dt_model_dio_pwrite,
		.reloc = dt_reloc_range, .cowlat = dt_cow_write,
	},
	[DT_DIO_READ] = {
		.name = "dio_read", .cmd = "dio_pread", .syntax = DT_SYN_RANGE,
		.call = "pread", .mode = DT_MODE_NONE,
		.flags = DT_OPF_IO | DT_OPF_SETTLE | DT_OPF_OWNRUN,
		RANGE_OF(range), .gen = dt_gen_dio, .exec = dt_x_dio_read,
		.xfs_io = dt_xio_dio_pread, .reloc = dt_reloc_range,
	},
	[DT_COPY_RANGE] = {
		.name = "copy_range", .cmd = "copy_range", .syntax = DT_SYN_REFLINK,
		.call = "copy_range", .mode = DT_MODE_NONE,
		.flags = DT_OPF_TOUCH | DT_OPF_GROW | DT_OPF_SETTLE,
		RANGE_OF(reflink), .gen = dt_gen_copy_range, .exec = dt_x_copy_range,
		.xfs_io = dt_xio_copy_range, .model = dt_model_copy_range,
		/* its CoW latitude: exec.c remapped_check() */
		.reloc = dt_reloc_reflink,
	},
	[DT_DEDUPE] = {
		.name = "dedupe", .cmd = "dedupe", .syntax = DT_SYN_REFLINK,
		.call = "FIDEDUPERANGE", .mode = DT_MODE_NONE, .flags = DT_OPF_SETTLE,
		RANGE_OF(reflink), .gen = dt_gen_dedupe, .exec = dt_x_dedupe,
		.xfs_io = dt_xio_dedupe, .model = dt_model_dedupe,
		.reloc = dt_reloc_reflink,
	},
	[DT_CHMOD] = {
		/* the mode is the op's "offset"; xfs_io has no chmod MODE:
		 * repro.sh runs chmod(1) as the --user caller */
		.name = "chmod", .cmd = "chmod", .syntax = DT_SYN_OFF,
		.call = "chmod",
		.mode = DT_MODE_NONE, .flags = DT_OPF_NOOFF,
		.log_format = dt_fmt_chmod, .log_parse = dt_parse_off,
		.gen = dt_gen_chmod, .exec = dt_x_chmod,
		.xfs_io = dt_xio_chmod, .reloc = dt_reloc_none,
	},
	[DT_FILL] = {
		/* a nearly full target's ENOSPC depends on which freed blocks
		 * the journal has committed (ext4_should_retry_alloc()), so it
		 * need not come back when a log is replayed: the shrinker puts
		 * a fill before the op that met ENOSPC (shrink.c) */
		.name = "fill", .cmd = "fill", .syntax = DT_SYN_GLOBAL,
		.mode = DT_MODE_NONE,
		.flags = DT_OPF_GLOBAL | DT_OPF_NOOFF | DT_OPF_SETTLE | DT_OPF_NOGEN,
		.log_format = dt_fmt_global, .log_parse = dt_parse_none, .exec = dt_x_fill,
		.xfs_io = dt_xio_nothing, .reloc = dt_reloc_none,
	},
	[DT_UNFILL] = {
		/* the shrinker's other variant: the ops before the fill run
		 * with room, so that ENOSPC cannot restart or reshape the file
		 * before the op that needs the file system full */
		.name = "unfill", .cmd = "unfill", .syntax = DT_SYN_GLOBAL,
		.mode = DT_MODE_NONE,
		.flags = DT_OPF_GLOBAL | DT_OPF_NOOFF | DT_OPF_SETTLE | DT_OPF_NOGEN,
		.log_format = dt_fmt_global, .log_parse = dt_parse_none, .exec = dt_x_fill,
		.xfs_io = dt_xio_nothing, .reloc = dt_reloc_none,
	},
};

/* A kind outside the table (a corrupt op): refused where it would run. */
static const struct dt_opdesc unknown = {
	.name = "?", .cmd = "?", .syntax = DT_SYN_GLOBAL, .mode = DT_MODE_NONE,
	.flags = DT_OPF_NOOFF, .log_format = dt_fmt_global, .exec = dt_x_unknown,
	.xfs_io = dt_xio_nothing, .reloc = dt_reloc_none,
};

const struct dt_opdesc *dt_opdesc_of(int kind)
{
	return kind >= 0 && kind < DT_NKINDS ? &dt_ops[kind] : &unknown;
}

const char *dt_kind_name(int kind)
{
	return dt_opdesc_of(kind)->name;
}

int dt_kind_parse(const char *name)
{
	for (int k = 0; k < DT_NKINDS; k++)
		if (!strcmp(name, dt_ops[k].name))
			return k;
	return -1;
}

int dt_kind_is_falloc(int kind)
{
	return !!(dt_opdesc_of(kind)->flags & DT_OPF_FALLOC);
}

int dt_kind_is_global(int kind)
{
	return !!(dt_opdesc_of(kind)->flags & DT_OPF_GLOBAL);
}

int dt_kind_mode(const struct dt_op *op)
{
	int mode = dt_opdesc_of(op->kind)->mode;

	return mode == DT_MODE_OP ? op->mode : mode;
}
