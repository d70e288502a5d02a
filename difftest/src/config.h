/* SPDX-License-Identifier: MIT */
/*
 * config.h - configurations of the guest file systems: the mkfs and mount
 * options a target is made and mounted with, named in the target spec
 * (`-t ext4:bs=1024,data=journal`, `-t xfs:reflink=0`, `-t fusefs:xfs:bs=1024`).
 * A configuration is part of every run: the target checks that what is
 * mounted is what it names, the report and the op log carry it, repro.sh
 * and the emitted fstests make the file system it needs, and difftest-vm
 * boots the guest with it (`difftest --vm-plan`).
 */
#ifndef DIFFTEST_CONFIG_H
#define DIFFTEST_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum dt_cfs { DT_CFS_EXT4, DT_CFS_XFS, DT_CFS_FUSEFS };
enum dt_cdata { DT_DATA_ORDERED, DT_DATA_JOURNAL, DT_DATA_WRITEBACK };

struct dt_config {
	int fs;			/* enum dt_cfs */
	uint32_t bs;		/* block size (4096 unless named) */
	/* ext4 */
	int data;		/* enum dt_cdata */
	int nodelalloc;
	/* xfs */
	int reflink;		/* mkfs.xfs -m reflink= (1, the default) */
	int rmapbt;		/* mkfs.xfs -m rmapbt= (0) */
	/* fusefs: the profile the server copies (DT_CFS_EXT4 or DT_CFS_XFS) */
	int profile;
	/* fusefs: FUSE_AUTO_INVAL_DATA (1: -o auto_inval_data) or not (0,
	 * the server's default): without it the kernel keeps cached pages
	 * across a new mtime, so its own invalidations are all there is */
	int auto_inval;
	/* free=SIZE (any file system): before the run a filler file takes
	 * all but SIZE bytes of the free space (statfs f_bavail), so
	 * allocating ops meet ENOSPC; 0: not filled */
	int64_t free;
};

/* The default configuration of fs ("ext4", "xfs", "fusefs"): 0, or -EINVAL. */
int dt_config_default(const char *fs, struct dt_config *c);
/* Parse "FS" or "FS:OPTS" (fusefs also "fusefs:xfs[:OPTS]",
 * "fusefs:ext4[:OPTS]"); OPTS are comma-separated KEY=VALUE or flags.
 * 0 with *c set, 1 when spec names no guest file system (not an error:
 * dir:, model: ...), -EINVAL with a message naming the bad part in err
 * (an unknown key, a bad value, a contradiction, bigalloc). */
int dt_config_parse(const char *spec, struct dt_config *c, char *err, size_t errn);
/* The canonical spec: "ext4", "ext4:bs=1024,data=journal",
 * "fusefs:xfs:bs=1024"; keys in a fixed order, defaults left out. */
void dt_config_name(const struct dt_config *c, char *buf, size_t n);
/* Whether c is the default configuration of its file system. */
int dt_config_is_default(const struct dt_config *c);
/* mkfs options besides the device ("-b 1024", "-b size=4096 -m reflink=0"),
 * for ext4 and xfs; "" for fusefs. */
void dt_config_mkfs(const struct dt_config *c, char *buf, size_t n);
/* mount -o options ("data=journal,nodelalloc"; "" for the defaults). */
void dt_config_mount(const struct dt_config *c, char *buf, size_t n);
/* rangeshift-fusefs -o options ("profile=xfs-6.1,blocksize=1024",
 * "auto_inval_data"; "" for the defaults); "" for ext4 and xfs. */
void dt_config_fusefs(const struct dt_config *c, char *buf, size_t n);
/* The name of the guest mount directory ("/mnt/ext4"). */
const char *dt_config_mnt(const struct dt_config *c);
const char *dt_config_fsname(int fs);
/* Whether a mounted file system matches c: its statfs block size and its
 * /proc/mounts options (data=, nodelalloc).  0, or -EINVAL with what
 * differs in err. */
int dt_config_check_mount(const struct dt_config *c, uint32_t f_bsize, const char *mnt_opts,
			  char *err, size_t errn);
/* The configurations difftest knows, one a line with what each means
 * (--configs). */
void dt_config_list(FILE *f);

/* Boot plan (difftest --vm-plan): the targets grouped so that each group
 * needs at most one configuration per file system, i.e. one boot. */
#define DT_PLAN_MAX 32
struct dt_plan_boot {
	int has[3];			/* a target of this fs is in the boot */
	struct dt_config cfg[3];	/* its configuration, per enum dt_cfs */
	int targets[DT_PLAN_MAX];	/* indexes into the spec array */
	int ntargets;
};
/* Group specs[0..n) (guest targets and others; the others go into the
 * first boot) into boots: 0 with *nboots set, or -EINVAL with a message. */
int dt_config_plan(const char *const *specs, int n, struct dt_plan_boot *boots, int *nboots,
		   char *err, size_t errn);
/* One boot as one line: "MKFS_EXT4|MOUNT_EXT4|MKFS_XFS|MOUNT_XFS|FUSEFS_OPTS|T1 T2..."
 * (no field holds '|'). */
void dt_config_plan_print(FILE *f, const struct dt_plan_boot *b, const char *const *specs);

#endif /* DIFFTEST_CONFIG_H */
