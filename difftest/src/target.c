/* SPDX-License-Identifier: MIT */
/*
 * target.c - what difftest tests: files in a directory of a real file system
 * (ext4, xfs, fusefs mounts in the guest; dir:PATH anywhere), or test-only
 * model-backed targets ("model:", and "faulty:KIND" which misbehave on
 * purpose so the tests can prove that difftest catches and shrinks a bug).
 *
 * Each target is probed once up front: statfs(2) f_type picks the model
 * profile, a scratch file tells which fallocate modes, FIEMAP and shared
 * writable mmap the file system supports, so that kinds a file system
 * lacks (tmpfs has no insert/collapse/zero) are skipped instead of being
 * reported as divergences.  All raw operations return >= 0 or -errno.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>

#include "dt.h"
#include "rangeshift_fusefs.h"
#include "rm_vec.h"

#define FM_COUNT 512

static int neg_errno(void)
{
	return errno ? -errno : -EIO;
}

/* /proc/mounts escapes blanks as \040 etc. */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] && s[3]) {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = 0;
}

/* The mount whose mount point is the longest prefix of `path`. */
static int find_mount(struct dt_target *t, const char *path)
{
	FILE *f = fopen("/proc/mounts", "r");
	char dev[PATH_MAX], mnt[PATH_MAX], type[64], opts[512];
	size_t best = 0;
	int found = 0;

	if (!f)
		return -errno;
	while (fscanf(f, "%4095s %4095s %63s %511s %*d %*d", dev, mnt, type, opts) == 4) {
		unescape(dev);
		unescape(mnt);
		size_t l = strlen(mnt);
		if (strncmp(path, mnt, l) || (path[l] && path[l] != '/' && strcmp(mnt, "/")))
			continue;
		if (l >= best) {	/* later entries shadow earlier ones */
			best = l;
			found = 1;
			snprintf(t->mnt_dev, sizeof(t->mnt_dev), "%s", dev);
			snprintf(t->mnt_dir, sizeof(t->mnt_dir), "%s", mnt);
			snprintf(t->mnt_type, sizeof(t->mnt_type), "%s", type);
			snprintf(t->mnt_opts, sizeof(t->mnt_opts), "%s", opts);
		}
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

static int rs_ident(int fd, struct rs_ioc_ident *id)
{
	memset(id, 0, sizeof(*id));
	if (ioctl(fd, RS_IOC_IDENT, id) < 0)
		return neg_errno();
	if (id->magic != RS_IDENT_MAGIC || id->version != RS_IDENT_VERSION)
		return -ENOTTY;
	return 0;
}

static int raw_fallocate(struct dt_target *t, int fd, int mode, int64_t off, int64_t len)
{
	const int shift = RM_FALLOC_FL_INSERT_RANGE | RM_FALLOC_FL_COLLAPSE_RANGE |
			  RM_FALLOC_FL_UNSHARE_RANGE;

	/* fuse_file_fallocate() rejects these before the server sees them:
	 * rangeshift-fusefs takes them through its ioctl (same errno rules) */
	if (t->rs_ioctl && (mode & shift)) {
		struct rs_ioc_range r = { .offset = off, .length = len, .mode = mode };
		return ioctl(fd, RS_IOC_FALLOCATE, &r) < 0 ? neg_errno() : 0;
	}
	return fallocate(fd, mode, off, len) < 0 ? neg_errno() : 0;
}

static void add_note(struct dt_target *t, const char *note)
{
	strncat(t->probe_notes, note, sizeof(t->probe_notes) - strlen(t->probe_notes) - 1);
}

/* rangeshift-fusefs's identity (its own profile), and which FIEMAP the
 * file system answers. */
static void probe_ident_fiemap(struct dt_target *t, int fd, int64_t *bs)
{
	struct rs_ioc_ident id;
	if (rs_ident(fd, &id) == 0) {
		t->mopts.profile = (enum rm_profile)id.profile;
		/* RS_IOC_IDENT does not say which kernel's rules the server
		 * copies: take its default (6.1) unless the spec named one */
		if (!t->profile_named)
			t->mopts.kernel = RM_KERNEL_6_1;
		t->mopts.blocksize = id.blocksize;
		t->mopts.maxbytes = id.maxbytes;
		*bs = id.blocksize;
		snprintf(t->fsname, sizeof(t->fsname), "rangeshift-fusefs");
	}
	/* FIEMAP.  On rangeshift-fusefs the server's own map (RS_IOC_FIEMAP)
	 * comes first: the patched kernel's FUSE ->fiemap is built on
	 * SEEK_DATA/SEEK_HOLE and so cannot show unwritten extents. */
	struct fiemap fm = { .fm_start = 0, .fm_length = FIEMAP_MAX_OFFSET };
	int fm_ok = !t->fsname[0] || strcmp(t->fsname, "rangeshift-fusefs") ?
		    ioctl(fd, FS_IOC_FIEMAP, &fm) == 0 : (errno = EOPNOTSUPP, 0);
	if (fm_ok) {
		t->fiemap = 1;
	} else if (errno == EOPNOTSUPP || errno == ENOTTY) {
		struct rs_ioc_fiemap *rf = calloc(1, sizeof(*rf));
		if (rf) {
			rf->start = 0;
			rf->length = INT64_MAX;
			if (ioctl(fd, RS_IOC_FIEMAP, rf) == 0)
				t->fiemap = 2;
			free(rf);
		}
	}
	if (!t->fiemap) {
		t->disabled |= DT_KBIT(DT_FIEMAP_SYNC);
		strcat(t->probe_notes, "no FIEMAP (map checks and fiemap_sync off); ");
	}
	else if (t->fiemap == 2)
		strcat(t->probe_notes, "maps via RS_IOC_FIEMAP; ");
	if (!strcmp(t->fsname, "tmpfs")) {
		/* shmem_fault() allocates a page for a read fault on a hole,
		 * which SEEK_DATA then reports as data: not ext4/XFS behaviour */
		t->disabled |= DT_KBIT(DT_MREAD);
		strcat(t->probe_notes, "tmpfs: mread off (read faults fill holes); ");
	}
}

/* Each fallocate kind on the 4-block scratch file against the model: a
 * kind the file system refuses with EOPNOTSUPP where the model succeeds
 * is disabled (and said so), never reported as a divergence. */
static int probe_falloc(struct dt_target *t, int fd, const char *buf, int64_t bs,
			char *err, size_t errn)
{
	static const int kinds[] = { DT_FALLOC, DT_FALLOC_KEEP, DT_PUNCH, DT_ZERO,
				     DT_ZERO_KEEP, DT_INSERT, DT_COLLAPSE, DT_UNSHARE };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct dt_op op = { .kind = (uint8_t)kinds[i] };
		int mode = dt_kind_mode(&op);
		struct rm_file *mf;
		if (ftruncate(fd, 0) || pwrite(fd, buf, (size_t)bs * 4, 0) != bs * 4) {
			snprintf(err, errn, "probe write in %s failed", t->dir);
			return -EIO;
		}
		if (rm_file_new(&t->mopts, &mf))
			return -ENOMEM;
		rm_pwrite(mf, buf, (size_t)bs * 4, 0);
		int me = rm_fallocate(mf, mode, bs, bs);
		rm_file_free(mf);
		int re = raw_fallocate(t, fd, mode, bs, bs);
		if (re == -EOPNOTSUPP && me == 0 && t->fiemap == 2 && !t->rs_ioctl) {
			t->rs_ioctl = 1;	/* fusefs: use its ioctl */
			re = raw_fallocate(t, fd, mode, bs, bs);
		}
		if (re == -EOPNOTSUPP && me != -EOPNOTSUPP) {
			t->disabled |= DT_KBIT(kinds[i]);
			char note[64];
			snprintf(note, sizeof(note), "%s unsupported (off); ", dt_kind_name(kinds[i]));
			add_note(t, note);
		}
	}
	return 0;
}

/* FICLONERANGE: the model's profile says XFS clones, but an XFS-profile
 * stand-in (tmpfs, FUSE with an XFS-profile server, another fs) has no
 * ->remap_file_range (or no reflink=1): off there, never a divergence. */
static void probe_reflink(struct dt_target *t, int fd, const char *path, const char *buf,
			  int64_t bs)
{
	char p2[PATH_MAX + 200];
	snprintf(p2, sizeof(p2), "%s.2", path);
	int fd2 = open(p2, O_RDWR | O_CREAT | O_TRUNC, 0644);
	struct rm_file *ms = NULL, *md = NULL;
	int me = -ENOMEM;
	if (!rm_file_new(&t->mopts, &ms) && !rm_file_new(&t->mopts, &md)) {
		rm_pwrite(ms, buf, (size_t)bs * 4, 0);
		me = rm_clone_range(md, ms, 0, 0, bs);
	}
	rm_file_free(ms);
	rm_file_free(md);
	int re = -EBADF;
	if (fd2 >= 0 && !ftruncate(fd, 0) && pwrite(fd, buf, (size_t)bs * 4, 0) == bs * 4) {
		struct file_clone_range r = { .src_fd = fd, .src_length = (uint64_t)bs };
		re = ioctl(fd2, FICLONERANGE, &r) < 0 ? neg_errno() : 0;
	}
	if (fd2 >= 0) {
		close(fd2);
		unlink(p2);
	}
	if (re != me) {
		t->disabled |= DT_KBIT(DT_REFLINK);
		char note[96];
		snprintf(note, sizeof(note), "reflink %s here (model: %s): off; ",
			 dt_errname(re), dt_errname(me));
		add_note(t, note);
	}
}

#ifndef STATX_DIOALIGN
#define STATX_DIOALIGN 0x00002000U
#endif

/* O_DIRECT: whether the file system opens a file for it (tmpfs before 6.6
 * does not), and the alignment it asks for: the logical block size of the
 * device (bdev_logical_block_size(), which iomap_dio_bio_iter() and
 * xfs_file_dio_write() check in 6.1), read with BLKSSZGET from the mounted
 * device, else statx()'s dio_offset_align (the same number on 6.1; later
 * kernels may report a larger, advised alignment there).  FUSE has no
 * alignment rule (fuse_direct_IO()), nor has a target whose kernel says
 * nothing.  copy_file_range on a file system without reflink (FUSE, an
 * XFS-profile stand-in) copies through the page cache, and FIDEDUPERANGE
 * is then EOPNOTSUPP: off there. */
static void probe_dio_copy(struct dt_target *t, const char *path)
{
	int fd = open(path, O_RDWR | O_DIRECT);
	char note[160];

	if (fd < 0) {
		t->disabled |= DT_KBIT(DT_DIO_WRITE) | DT_KBIT(DT_DIO_READ);
		snprintf(note, sizeof(note), "O_DIRECT %s here: dio_write, dio_read off; ",
			 dt_errname(-errno));
		add_note(t, note);
	} else {
		struct statx sx;
		struct stat st;
		int ssz = 0;
		/* data=journal: ext4_dio_supported() is false, a direct read
		 * or write falls back to buffered I/O (6.1, 6.12) */
		int buffered = t->has_cfg && t->cfg.fs == DT_CFS_EXT4 &&
			       t->cfg.data == DT_DATA_JOURNAL;
		t->dio_align = 1;
		if (!strcmp(t->fsname, "rangeshift-fusefs")) {
			/* no rule */
		} else if (buffered) {
			add_note(t, "data=journal: direct I/O is buffered, no alignment rule; ");
		} else if (t->mnt_dev[0] && !stat(t->mnt_dev, &st) && S_ISBLK(st.st_mode)) {
			int bfd = open(t->mnt_dev, O_RDONLY);
			if (bfd >= 0 && !ioctl(bfd, BLKSSZGET, &ssz) && ssz > 1)
				t->dio_align = (uint32_t)ssz;
			if (bfd >= 0)
				close(bfd);
		}
		if (t->dio_align == 1 && strcmp(t->fsname, "rangeshift-fusefs") && !buffered &&
		    !statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) &&
		    (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align > 1)
			t->dio_align = sx.stx_dio_offset_align;
		close(fd);
	}
	if (!strcmp(t->fsname, "rangeshift-fusefs") || (t->disabled & DT_KBIT(DT_REFLINK)))
		t->copy_flags |= RM_COPY_NO_REMAP;
	if ((t->copy_flags & RM_COPY_NO_REMAP) && t->mopts.profile == RM_PROFILE_XFS) {
		t->disabled |= DT_KBIT(DT_DEDUPE);
		add_note(t, "no reflink here (model: xfs): dedupe off, copy_range copies; ");
	}
}

/* What the file system in t->dir can do, probed on a scratch file:
 * FIEMAP, shared writable mmap, each fallocate kind, reflink. */
static int probe(struct dt_target *t, char *err, size_t errn)
{
	char path[PATH_MAX + 160];
	int64_t bs = t->mopts.blocksize;
	char *buf = malloc((size_t)bs * 4);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	memset(buf, 0x5a, (size_t)bs * 4);
	snprintf(path, sizeof(path), "%s/.difftest-probe-%s", t->dir, t->tag);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		snprintf(err, errn, "cannot create a file in %s: %s", t->dir, strerror(errno));
		free(buf);
		return -errno;
	}
	int64_t bs0 = bs;
	probe_ident_fiemap(t, fd, &bs);
	if (bs > bs0) {		/* rangeshift-fusefs's block is larger than statfs said */
		char *nb = realloc(buf, (size_t)bs * 4);
		if (!nb) {
			rc = -ENOMEM;
			goto out;
		}
		buf = nb;
		memset(buf, 0x5a, (size_t)bs * 4);
	}
	/* shared writable mmap */
	if (pwrite(fd, buf, (size_t)bs * 4, 0) != bs * 4) {
		snprintf(err, errn, "probe write in %s failed: %s", t->dir, strerror(errno));
		rc = -EIO;
		goto out;
	}
	void *m = mmap(NULL, (size_t)bs, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		t->mmap_ok = 0;
		t->disabled |= DT_KBIT(DT_MWRITE) | DT_KBIT(DT_MREAD);
		strcat(t->probe_notes, "no shared writable mmap (mread/mwrite off); ");
	} else {
		t->mmap_ok = 1;
		munmap(m, (size_t)bs);
	}
	if ((rc = probe_falloc(t, fd, buf, bs, err, errn)))
		goto out;
	probe_reflink(t, fd, path, buf, bs);
	probe_dio_copy(t, path);
	/* Invalid mode words are only comparable when the fs implements every
	 * mode the model does (vfs_fallocate() checks first, the fs after). */
	if (t->disabled & (DT_KBIT(DT_ZERO) | DT_KBIT(DT_INSERT) | DT_KBIT(DT_COLLAPSE) |
			   DT_KBIT(DT_UNSHARE) | DT_KBIT(DT_PUNCH)))
		t->disabled |= DT_KBIT(DT_FMODE);
out:
	close(fd);
	unlink(path);
	free(buf);
	return rc;
}

/* A model-backed target, "model[:PROFILE]" or "faulty:KIND[:PROFILE]":
 * complete after this. */
static int init_model(struct dt_target *t, char *copy, char *err, size_t errn)
{
	char *kind = strchr(copy, ':');
	char *p2 = kind ? strchr(kind + 1, ':') : NULL;
	const char *prof = NULL;
	static const struct { const char *name; enum dt_fault f; } faults[] = {
		{ "insert-off-by-one", DT_F_INSERT_OBO },
		{ "lost-unwritten", DT_F_LOST_UNWRITTEN },
		{ "wrong-errno", DT_F_WRONG_ERRNO },
		{ "flaky", DT_F_FLAKY },
		{ "keep-setid", DT_F_KEEP_SETID },
		{ "enospc", DT_F_ENOSPC },
		{ "enospc-lie", DT_F_ENOSPC_LIE },
		{ "enospc-shift", DT_F_ENOSPC_SHIFT },
		{ "enospc-full", DT_F_ENOSPC_FULL },
	};

	if (p2) {
		*p2 = 0;
		prof = p2 + 1;
	}
	if (copy[0] == 'm') {
		t->type = DT_T_MODEL;
		t->fault = DT_F_NONE;
		if (kind && !p2)
			prof = kind + 1;
	} else {
		t->type = DT_T_FAULTY;
		kind++;
		size_t i = 0;
		while (i < sizeof(faults) / sizeof(faults[0]) && strcmp(kind, faults[i].name))
			i++;
		if (i == sizeof(faults) / sizeof(faults[0])) {
			snprintf(err, errn, "unknown faulty target '%s' (insert-off-by-one, "
				 "lost-unwritten, wrong-errno, flaky, keep-setid, enospc, enospc-lie, enospc-shift, "
				 "enospc-full)",
				 kind);
			return -EINVAL;
		}
		t->fault = faults[i].f;
		/* a nearly full file system (free=): ENOSPC is checked */
		t->full = t->fault == DT_F_ENOSPC || t->fault == DT_F_ENOSPC_LIE ||
			  t->fault == DT_F_ENOSPC_SHIFT || t->fault == DT_F_ENOSPC_FULL;
	}
	if (prof && rm_profile_parse2(prof, &t->mopts.profile, &t->mopts.kernel)) {
		snprintf(err, errn, "unknown profile '%s' (ext4-6.1, xfs-6.1, ext4-6.12, "
			 "xfs-6.12, bytes; ext4 and xfs mean 6.1)", prof);
		return -EINVAL;
	}
	t->kernel = t->mopts.kernel;
	snprintf(t->kernel_note, sizeof(t->kernel_note), "%s", prof ? "named" : "default");
	snprintf(t->fsname, sizeof(t->fsname), "model");
	t->fiemap = 1;
	t->mmap_ok = 1;
	t->mopts.maxbytes = rm_profile_maxbytes(t->mopts.profile, t->mopts.blocksize);
	return 0;
}

/* The directory of a file-system target (t->dir, resolved) and the
 * profile it names, if any (*prof). */
static int spec_dir(struct dt_target *t, const char *spec, char *copy, const char **prof,
		    char *err, size_t errn)
{
	/* ext4, xfs, fusefs, each with an optional configuration (config.h) */
	int rc = dt_config_parse(copy, &t->cfg, err, errn);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		t->has_cfg = 1;
		snprintf(t->dir, sizeof(t->dir), "%s", dt_config_mnt(&t->cfg));
		return 0;
	}
	if (strncmp(copy, "dir:", 4)) {
		snprintf(err, errn, "unknown target '%s' (ext4, xfs, fusefs, each with an optional "
			 ":CONFIG, see --configs; dir:PATH[:PROFILE], faulty:KIND, model[:PROFILE])",
			 spec);
		return -EINVAL;
	}
	char *p = copy + 4, *c = strrchr(p, ':');
	if (c && rm_profile_parse2(c + 1, &t->mopts.profile, &t->mopts.kernel) == 0) {
		*c = 0;
		*prof = c + 1;
	}
	if (!realpath(p, t->dir)) {
		int e = errno;
		/* a path may hold ':', so "dir:/x:nosuch" is first a path */
		if (c && !*prof)
			snprintf(err, errn, "target %s: %s: %s (and '%s' is no profile: ext4-6.1, "
				 "xfs-6.1, ext4-6.12, xfs-6.12, bytes)", spec, p, strerror(e), c + 1);
		else
			snprintf(err, errn, "target %s: %s: %s", spec, p, strerror(e));
		return -ENOENT;
	}
	return 0;
}

/* What the spec names, without touching the target: model and faulty
 * targets are complete (1), for the others t->dir and *prof are set (0). */
static int parse_spec(struct dt_target *t, const char *spec, const char **prof,
		      char *err, size_t errn)
{
	char copy[PATH_MAX + 32];

	if (strlen(spec) >= sizeof(copy)) {
		snprintf(err, errn, "target spec too long");
		return -ENAMETOOLONG;
	}
	snprintf(copy, sizeof(copy), "%s", spec);
	t->mopts.profile = RM_PROFILE_EXT4;
	t->mopts.kernel = RM_KERNEL_6_1;
	t->mopts.blocksize = 4096;
	*prof = NULL;
	if (!strncmp(copy, "faulty:", 7) || !strcmp(copy, "model") || !strncmp(copy, "model:", 6)) {
		int rc = init_model(t, copy, err, errn);
		return rc ? rc : 1;
	}
	t->type = DT_T_FD;
	return spec_dir(t, spec, copy, prof, err, errn);
}

static int fs_init(struct dt_target *t, const char *spec, const char *prof, char *err,
		   size_t errn);

int dt_target_spec_check(const char *spec, char *err, size_t errn)
{
	struct dt_target *t = calloc(1, sizeof(*t));
	const char *prof;

	if (!t) {
		snprintf(err, errn, "out of memory");
		return -ENOMEM;
	}
	int rc = parse_spec(t, spec, &prof, err, errn);
	free(t);
	return rc < 0 ? rc : 0;
}

int dt_target_init(struct dt_target *t, const char *spec, const char *tag,
		   char *err, size_t errn)
{
	const char *prof = NULL;

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", spec);
	snprintf(t->tag, sizeof(t->tag), "%s", tag);
	int rc = parse_spec(t, spec, &prof, err, errn);
	if (rc)
		return rc > 0 ? 0 : rc;
	/* A cache drop is this target's: syncfs(2) and POSIX_FADV_DONTNEED on
	 * its files, which is what drop_caches does to a file held open
	 * (invalidate_mapping_pages() of its mapping). The global
	 * /proc/sys/vm/drop_caches would also drop the clean pages of the
	 * targets running beside it in the guest, and a page that is or is
	 * not cached changes kernel answers (XFS's SEEK_DATA over CoW
	 * staging): a divergence found so would not replay on its target
	 * alone. DIFFTEST_GLOBAL_DROP=1 (root) brings the global drop back. */
	t->global_drop = getenv("DIFFTEST_GLOBAL_DROP") && geteuid() == 0;
	if (!strncmp(spec, "dir:", 4)) {
		find_mount(t, t->dir);
	} else {
		if (find_mount(t, t->dir) || strcmp(t->mnt_dir, t->dir)) {
			snprintf(err, errn, "target %s: nothing is mounted at %s (outside the "
				 "guest, use difftest-vm or a dir:PATH target)", spec, t->dir);
			return -ENOENT;
		}
	}
	return fs_init(t, spec, prof, err, errn);
}

/* The running kernel (uname -r) picks the model's kernel rules: 6.1.x ->
 * 6.1, 6.12.x -> 6.12, another release the nearer one (said in the note).
 * A versioned profile in the spec wins for the model (dir:PATH:ext4-6.12);
 * t->kernel stays the running one (the FUSE front, dt_t_fuse_front()). */
static void pick_kernel(struct dt_target *t, const char *prof)
{
	struct utsname u;
	enum rm_kernel k = RM_KERNEL_6_1;
	int rc = uname(&u) ? -errno : rm_kernel_from_release(u.release, &k);

	t->kernel = k;
	t->profile_named = prof != NULL;
	if (rc < 0)
		snprintf(t->kernel_note, sizeof(t->kernel_note), "kernel release unknown, 6.1 rules");
	else
		snprintf(t->kernel_note, sizeof(t->kernel_note), "uname -r %.64s%s", u.release,
			 rc ? ", nearest model kernel" : "");
	if (prof) {
		strncat(t->kernel_note, "; profile named", sizeof(t->kernel_note) -
			strlen(t->kernel_note) - 1);
		return;
	}
	t->mopts.kernel = k;
}

/* free=SIZE's filler: the file that takes the space (fill_fs()). */
static void filler_path(const struct dt_target *t, char *path, size_t n)
{
	snprintf(path, n, "%s/.difftest-filler", t->dir);
}

/* The filler fd grows from *at by fallocate() until ENOSPC, starting with
 * chunk bytes and halving a chunk that does not fit; *at = its new size. */
static int grow_filler(int fd, int64_t bs, int64_t chunk, int64_t *at)
{
	chunk &= ~(bs - 1);
	while (chunk >= bs) {
		if (!fallocate(fd, 0, *at, chunk)) {
			*at += chunk;
			continue;
		}
		if (errno != ENOSPC)
			return neg_errno();
		/* ext4 keeps what it allocated before failing, with the size
		 * (ext4_alloc_file_blocks()) */
		off_t end = lseek(fd, 0, SEEK_END);
		if (end < 0)
			return neg_errno();
		*at = end;
		chunk = chunk / 2 & ~(bs - 1);
	}
	return 0;
}

/* free=SIZE: a filler file in the mount's root takes all the space this
 * caller can allocate but SIZE bytes, so the run's allocating ops meet
 * ENOSPC.  It is filled until ENOSPC and then cut back by SIZE, because
 * statfs cannot say what the caller may use: root may take ext4's
 * reserved blocks (f_bavail excludes them, ext4_statfs()) but not its
 * reserved clusters, XFS keeps a reserve pool and per-transaction
 * reservations.  fallocate() allocates without writing (the guest's ram
 * disks stay small; on fusefs the server counts allocated bytes, not
 * memory); a chunk that does not fit is halved. */
static int fill_fs(struct dt_target *t, char *err, size_t errn)
{
	char path[PATH_MAX + 32];
	struct statfs sf;
	int rc = 0;

	filler_path(t, path, sizeof(path));
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || fstatfs(fd, &sf)) {
		rc = neg_errno();
		snprintf(err, errn, "target %s: cannot create %s: %s", t->name, path, strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	int64_t bs = (int64_t)sf.f_bsize, at = 0;
	rc = grow_filler(fd, bs, (int64_t)sf.f_bfree * bs, &at);
	if (!rc && ftruncate(fd, at > t->cfg.free ? at - t->cfg.free : 0))
		rc = neg_errno();
	if (!rc && (fsync(fd) || fstatfs(fd, &sf)))
		rc = neg_errno();
	close(fd);
	if (rc) {
		snprintf(err, errn, "target %s: filling %s: %s", t->name, path, strerror(-rc));
		return rc;
	}
	t->filled_free = (int64_t)sf.f_bfree * bs;
	char note[160];
	snprintf(note, sizeof(note), "free=%lld: filler %lld bytes, then f_bfree %lld, "
		 "f_bavail %lld bytes; ", (long long)t->cfg.free,
		 (long long)(at > t->cfg.free ? at - t->cfg.free : 0), (long long)t->filled_free,
		 (long long)sf.f_bavail * bs);
	add_note(t, note);
	return 0;
}

/* The last of auto_inval_data / no_auto_inval_data in the -o list opts
 * sets *on; other options leave it. */
static void auto_inval_opt(const char *opts, int *on)
{
	for (const char *o = opts; *o;) {
		size_t l = strcspn(o, ",");
		if (l == 18 && !strncmp(o, "no_auto_inval_data", l))
			*on = 0;
		else if (l == 15 && !strncmp(o, "auto_inval_data", l))
			*on = 1;
		o += l;
		if (*o == ',')
			o++;
	}
}

/* Whether the rangeshift-fusefs server of mount point mnt runs with
 * FUSE_AUTO_INVAL_DATA: 1 (-o auto_inval_data), 0 (the server's default,
 * or -o no_auto_inval_data; the last of the two given wins), -1
 * when no such server is found among this system's processes (another
 * PID namespace, or not rangeshift-fusefs). Neither the mount's
 * /proc/mounts options nor RS_IOC_IDENT carry the option; the server's
 * command line does. */
static int fusefs_auto_inval(const char *mnt)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int found = -1;

	if (!d)
		return -1;
	while (found < 0 && (e = readdir(d))) {
		char path[64], args[4096];
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/cmdline", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, args, sizeof(args) - 1);
		close(fd);
		if (n <= 0)
			continue;
		args[n] = 0;
		const char *a0 = strrchr(args, '/') ? strrchr(args, '/') + 1 : args;
		if (strcmp(a0, "rangeshift-fusefs"))
			continue;
		int on = 0, has_mnt = 0;
		for (const char *a = args + strlen(args) + 1, *prev = args; a < args + n;
		     prev = a, a += strlen(a) + 1) {
			if (!strcmp(a, mnt))
				has_mnt = 1;
			else if (!strcmp(prev, "-o"))
				auto_inval_opt(a, &on);
			else if (!strncmp(a, "-o", 2))
				auto_inval_opt(a + 2, &on);
		}
		if (has_mnt)
			found = on;
	}
	closedir(d);
	return found;
}

/* A configured target (ext4:bs=1024, ...) must find that configuration
 * mounted: block size and mount options (dt_config_check_mount()), for
 * fusefs the server's profile and block size (RS_IOC_IDENT) and its
 * auto_inval_data (fusefs_auto_inval()), for XFS
 * whether it clones (the reflink probe). */
static int check_config(struct dt_target *t, uint32_t f_bsize, char *err, size_t errn)
{
	const struct dt_config *c = &t->cfg;
	char name[128];

	dt_config_name(c, name, sizeof(name));
	if (c->fs == DT_CFS_FUSEFS) {
		enum rm_profile want = c->profile == DT_CFS_XFS ? RM_PROFILE_XFS : RM_PROFILE_EXT4;
		if (strcmp(t->fsname, "rangeshift-fusefs") || t->mopts.profile != want ||
		    t->mopts.blocksize != c->bs) {
			snprintf(err, errn, "target %s: %s serves %s with %u-byte blocks (boot the "
				 "guest with this configuration: difftest-vm does)", name, t->dir,
				 strcmp(t->fsname, "rangeshift-fusefs") ? t->fsname :
				 rm_profile_name(t->mopts.profile), t->mopts.blocksize);
			return -EINVAL;
		}
		int ai = fusefs_auto_inval(t->dir);
		if (ai >= 0 && ai != c->auto_inval) {
			snprintf(err, errn, "target %s: the server of %s runs %s auto_inval_data "
				 "(boot the guest with this configuration: difftest-vm does)", name,
				 t->dir, ai ? "with" : "without");
			return -EINVAL;
		}
		if (ai < 0)
			add_note(t, "auto_inval_data: the server's options were not found, "
				 "not checked; ");
		return 0;
	}
	if (strcmp(t->fsname, dt_config_fsname(c->fs))) {
		snprintf(err, errn, "target %s: %s is %s, not %s", name, t->dir, t->fsname,
			 dt_config_fsname(c->fs));
		return -EINVAL;
	}
	int rc = dt_config_check_mount(c, f_bsize, t->mnt_opts, err, errn);
	if (rc)
		return rc;
	if (c->fs == DT_CFS_XFS && c->reflink && (t->disabled & DT_KBIT(DT_REFLINK))) {
		snprintf(err, errn, "target %s: %s does not clone (made with reflink=0?): name "
			 "xfs:reflink=0", name, t->dir);
		return -EINVAL;
	}
	if (c->fs == DT_CFS_XFS && !c->reflink)
		add_note(t, "reflink=0: FICLONERANGE is EOPNOTSUPP (xfs_file_remap_range()), "
			 "UNSHARE_RANGE allocates only (xfs_reflink_unshare()); ");
	return 0;
}

/* statfs picks the file system's name and, unless the spec named one,
 * the model profile; then the probe. */
static int fs_init(struct dt_target *t, const char *spec, const char *prof, char *err,
		   size_t errn)
{
	struct stat st;
	if (stat(t->dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errn, "target %s: %s is not a directory", spec, t->dir);
		return -ENOTDIR;
	}
	struct statfs sf;
	if (statfs(t->dir, &sf)) {
		snprintf(err, errn, "statfs %s: %s", t->dir, strerror(errno));
		return -errno;
	}
	pick_kernel(t, prof);
	switch ((unsigned long)sf.f_type) {
	case EXT4_SUPER_MAGIC:
		snprintf(t->fsname, sizeof(t->fsname), "ext4");
		if (!prof)
			t->mopts.profile = RM_PROFILE_EXT4;
		break;
	case XFS_SUPER_MAGIC:
		snprintf(t->fsname, sizeof(t->fsname), "xfs");
		if (!prof)
			t->mopts.profile = RM_PROFILE_XFS;
		break;
	case TMPFS_MAGIC:
		snprintf(t->fsname, sizeof(t->fsname), "tmpfs");
		/* shmem: byte-exact data, s_maxbytes MAX_LFS_FILESIZE like XFS */
		if (!prof)
			t->mopts.profile = RM_PROFILE_XFS;
		break;
	case FUSE_SUPER_MAGIC:
		snprintf(t->fsname, sizeof(t->fsname), "fuse");
		break;
	default:
		snprintf(t->fsname, sizeof(t->fsname), "0x%lx", (unsigned long)sf.f_type);
		if (!prof)
			t->mopts.profile = RM_PROFILE_XFS;
	}
	if (sf.f_bsize >= 512 && sf.f_bsize <= 65536 && !(sf.f_bsize & (sf.f_bsize - 1)))
		t->mopts.blocksize = (uint32_t)sf.f_bsize;
	t->mopts.maxbytes = 0;
	int rc = probe(t, err, errn);
	if (rc)
		return rc;
	if (t->has_cfg && (rc = check_config(t, (uint32_t)sf.f_bsize, err, errn)))
		return rc;
	t->full = t->has_cfg && t->cfg.free > 0;
	if (t->full && (rc = fill_fs(t, err, errn)))
		return rc;
	/* A store through a mapping has no return value to carry ENOSPC:
	 * ext4 and XFS raise SIGBUS from the page fault (ext4_page_mkwrite(),
	 * iomap_page_mkwrite() reserving delalloc blocks), FUSE learns it
	 * only at write-back (fuse_writepage_end() -> mapping_set_error()),
	 * and the bytes never reach the server: the op's data is lost with
	 * no answer an op could check.  Found on a full rangeshift-fusefs. */
	if (t->full && !(t->disabled & DT_KBIT(DT_MWRITE))) {
		t->disabled |= DT_KBIT(DT_MWRITE);
		add_note(t, "free=: mwrite off (a page fault's ENOSPC is SIGBUS or a lost write-back); ");
	}
	if (!t->mopts.maxbytes)
		t->mopts.maxbytes = rm_profile_maxbytes(t->mopts.profile, t->mopts.blocksize);
	/* A full unmount/mount needs root, our own mount point and an on-disk
	 * file system: fusefs keeps its files in the server's memory, so there
	 * (and wherever we cannot) "remount" means drop caches + reopen. */
	t->can_remount = geteuid() == 0 && t->mnt_dir[0] && !strcmp(t->mnt_dir, t->dir) &&
			 strcmp(t->dir, "/") &&
			 (!strcmp(t->mnt_type, "ext4") || !strcmp(t->mnt_type, "xfs") ||
			  !strcmp(t->mnt_type, "ext3") || !strcmp(t->mnt_type, "ext2"));
	if (!t->can_remount)
		strcat(t->probe_notes, "remount = drop caches + reopen; ");
	return 0;
}

void dt_target_fini(struct dt_target *t)
{
	(void)t;
}

static int open_file(struct dt_session *s, int i, int creat)
{
	int fd = open(s->path[i], O_RDWR | (creat ? O_CREAT | O_TRUNC : 0), 0644);
	if (fd < 0)
		return neg_errno();
	s->fd[i] = fd;
	return 0;
}

struct rm_attr dt_user_attr(const struct dt_target *t, int i)
{
	uint32_t u = t->user_uid, g = t->user_gid;

	switch (i % 4) {
	case 0:
		return (struct rm_attr){ 06666, u, g };
	case 1:
		return (struct rm_attr){ 06666, 0, 0 };
	case 2:
		return (struct rm_attr){ 06676, 0, g };
	default:
		return (struct rm_attr){ 06666, u, 0 };
	}
}

void dt_cred_enter(const struct dt_target *t, int on)
{
	if (!t->user || t->type != DT_T_FD)
		return;
	/* fsgid while fsuid is still 0 (setfsgid() needs CAP_SETGID or a
	 * matching id); leaving 0 drops CAP_FS_MASK, coming back raises it */
	if (on) {
		setfsgid(t->user_gid);
		setfsuid(t->user_uid);
	} else {
		setfsuid(0);
		setfsgid(0);
	}
}

enum rm_cred_fs dt_cred_fs(const struct dt_target *t)
{
	if (dt_target_is_fuse(t))
		return RM_CRED_FUSE;
	return t->mopts.profile == RM_PROFILE_XFS ? RM_CRED_XFS : RM_CRED_EXT4;
}

/* --user: the file's owner, group and set-ID mode, set as root (chown
 * first: it clears set-ID bits itself, chown_common()). */
static int user_setup(struct dt_session *s, int i)
{
	struct dt_target *t = s->t;
	struct rm_attr a = dt_user_attr(t, i);

	s->attr[i] = s->fattr[i] = a;
	if (t->type != DT_T_FD)
		return 0;
	if (fchown(s->fd[i], a.uid, a.gid) || fchmod(s->fd[i], a.mode))
		return neg_errno();
	return 0;
}

/* free=: a new file cannot be made on the full file system (XFS reserves
 * blocks for an inode chunk and directory entry, xfs_create()): give back
 * free=SIZE bytes (1 MiB at least) of the filler, the run's own file, so
 * that the run goes on.  The report's notes say it happened. */
static int make_room(struct dt_target *t)
{
	char path[PATH_MAX + 32];
	struct stat st;
	int64_t give = t->cfg.free > (1 << 20) ? t->cfg.free : (1 << 20);

	filler_path(t, path, sizeof(path));
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fstat(fd, &st) ? -errno : 0;
	if (!rc && ftruncate(fd, st.st_size > give ? st.st_size - give : 0))
		rc = -errno;
	/* XFS inactivates an unlinked inode in the background (inodegc):
	 * syncfs() waits for the blocks of the file just restarted too */
	if (!rc)
		syncfs(fd);
	close(fd);
	if (!rc && !t->room_made++)
		add_note(t, "free=: the filler gave back room for a restarted file (a create met ENOSPC); ");
	return rc;
}

static int new_file(struct dt_session *s, int i)
{
	struct dt_target *t = s->t;
	int rc = rm_file_new(&t->mopts, &s->model[i]);

	dt_cowlat_reset(&s->cow[i]);

	if (rc)
		return rc;
	if (t->type != DT_T_FD) {
		rc = rm_file_new(&t->mopts, &s->fake[i]);
		return rc || !t->user ? rc : user_setup(s, i);
	}
	snprintf(s->path[i], sizeof(s->path[i]), "%s/dt-%s-%u", t->dir, t->tag, t->counter++);
	rc = open_file(s, i, 1);
	if (rc == -ENOSPC && t->full && !make_room(t))
		rc = open_file(s, i, 1);
	return rc || !t->user ? rc : user_setup(s, i);
}

static void free_file(struct dt_session *s, int i)
{
	rm_file_free(s->model[i]);
	s->model[i] = NULL;
	dt_cowlat_reset(&s->cow[i]);
	rm_file_free(s->fake[i]);
	s->fake[i] = NULL;
	if (s->fd[i] >= 0) {
		/* free the blocks now, not when the unlinked inode is
		 * inactivated (in the background on XFS): on a nearly full
		 * file system (free=) the next file needs them */
		if (ftruncate(s->fd[i], 0)) {
			/* best effort: the unlink frees them later anyway */
		}
		close(s->fd[i]);
		unlink(s->path[i]);
		s->fd[i] = -1;
	}
}

int dt_session_open(struct dt_target *t, int nfiles, struct dt_session **out,
		    char *err, size_t errn)
{
	struct dt_session *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->t = t;
	s->nfiles = nfiles;
	for (int i = 0; i < DT_MAXFILES; i++)
		s->fd[i] = -1;
	for (int i = 0; i < nfiles; i++) {
		int rc = new_file(s, i);
		if (rc) {
			snprintf(err, errn, "cannot create test file %d in %s: %s", i,
				 t->dir[0] ? t->dir : "model", strerror(-rc));
			for (int j = 0; j <= i; j++)
				free_file(s, j);
			free(s);
			return rc;
		}
	}
	s->next = t->sessions;
	t->sessions = s;
	*out = s;
	return 0;
}

void dt_session_close(struct dt_session *s)
{
	if (!s)
		return;
	for (struct dt_session **p = &s->t->sessions; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	for (int i = 0; i < s->nfiles; i++)
		free_file(s, i);
	free(s->fmbuf);
	free(s);
}

int dt_session_reset_file(struct dt_session *s, int i)
{
	if (!s->t->user || s->t->type != DT_T_FD) {
		free_file(s, i);
		return new_file(s, i);
	}
	/* as root (an ENOSPC reset runs inside a --user op): unlink in the
	 * test directory, create, chown */
	int pu = setfsuid(0), pg = setfsgid(0);
	free_file(s, i);
	int rc = new_file(s, i);
	setfsgid((gid_t)pg);
	setfsuid((uid_t)pu);
	return rc;
}

/* ---- raw operations ---- */

#define FAKE(s, i) ((s)->fake[i])

int dt_target_is_fuse(const struct dt_target *t)
{
	return t->type == DT_T_FD && !strcmp(t->fsname, "rangeshift-fusefs");
}

void dt_target_discipline(struct dt_target *t, int map_sync)
{
	t->cached = !map_sync;
	if (!t->cached)
		return;
	t->fiemap_nosync = 1;
	t->mopts.write_through = dt_target_is_fuse(t);
}

/* The model-backed targets in the observer-free discipline write back as
 * the kernel does (drop caches and remount: every file of every session). */
static void fake_writeback_all(struct dt_target *t)
{
	for (struct dt_session *x = t->sessions; x; x = x->next)
		for (int i = 0; i < x->nfiles; i++)
			if (x->fake[i])
				rm_writeback(x->fake[i], 0, 0);
}

ssize_t dt_t_pwrite(struct dt_session *s, int i, const void *b, size_t n, int64_t off)
{
	struct dt_target *t = s->t;

	/* faulty:flaky fails its DT_FLAKY_AT-th pwrite (counted over the
	 * target's life, every session) with EIO, once: a divergence that
	 * no replay shows again */
	if (t->fault == DT_F_FLAKY && ++t->flaky_writes == DT_FLAKY_AT)
		return -EIO;
	/* faulty:enospc runs out of space as ext4 and XFS do (RULES.md N1,
	 * N2): every 5th write of more than a block is cut after its first
	 * block, every 10th fails before its first byte; enospc-lie writes
	 * every byte and answers ENOSPC */
	int64_t bs = t->mopts.blocksize;
	/* faulty:enospc on ext4: a write past EOF whose first try failed
	 * and whose retry succeeded freed the blocks past EOF first
	 * (ext4_truncate_failed_write()): every 5th such write, shifted */
	if (t->fault == DT_F_ENOSPC && t->mopts.profile == RM_PROFILE_EXT4 && n > (size_t)bs &&
	    off >= 0 && (int64_t)n <= t->mopts.maxbytes - off && t->flaky_writes % 5 == 3 &&
	    off + (int64_t)n > rm_size(FAKE(s, i)))
		rm_truncate(FAKE(s, i), rm_size(FAKE(s, i)));
	if ((t->fault == DT_F_ENOSPC || t->fault == DT_F_ENOSPC_LIE) && n > (size_t)bs &&
	    off >= 0 && (int64_t)n <= t->mopts.maxbytes - off && ++t->flaky_writes % 5 == 0) {
		size_t k = (size_t)(bs - off % bs);
		if (t->fault == DT_F_ENOSPC_LIE)
			return rm_pwrite(FAKE(s, i), b, n, off) < 0 ? -EIO : -ENOSPC;
		ssize_t r = t->flaky_writes % 10 == 0 ? -ENOSPC : rm_pwrite(FAKE(s, i), b, k, off);
		/* ext4: the failing page reached past EOF, so
		 * ext4_truncate_failed_write() frees the blocks past it */
		int64_t sz = rm_size(FAKE(s, i));
		if (t->mopts.profile == RM_PROFILE_EXT4 &&
		    dt_failed_page_end(off, (int64_t)n, r > 0 ? r : 0) > sz)
			rm_truncate(FAKE(s, i), sz);
		return r;
	}
	if (t->type != DT_T_FD)
		return rm_pwrite(FAKE(s, i), b, n, off);
	ssize_t r = pwrite(s->fd[i], b, n, off);
	return r < 0 ? neg_errno() : r;
}

ssize_t dt_t_pread(struct dt_session *s, int i, void *b, size_t n, int64_t off)
{
	if (s->t->type != DT_T_FD)
		return rm_pread(FAKE(s, i), b, n, off);
	ssize_t r = pread(s->fd[i], b, n, off);
	return r < 0 ? neg_errno() : r;
}

/* Map the pages covering [off, off+n) (the caller keeps the range inside
 * EOF) and copy through the mapping. */
static ssize_t mmap_io(struct dt_session *s, int i, void *b, size_t n, int64_t off, int wr)
{
	if (n == 0)
		return 0;
	if (s->t->type != DT_T_FD)
		return wr ? rm_pwrite(FAKE(s, i), b, n, off) : rm_pread(FAKE(s, i), b, n, off);
	long pg = sysconf(_SC_PAGESIZE);
	int64_t base = off & ~(int64_t)(pg - 1);
	size_t mlen = (size_t)(off + (int64_t)n - base);
	char *m = mmap(NULL, mlen, wr ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
		       s->fd[i], base);
	if (m == MAP_FAILED)
		return neg_errno();
	if (wr) {
		memcpy(m + (off - base), b, n);
		s->mdirty[i] = 1;
	}
	else
		memcpy(b, m + (off - base), n);
	munmap(m, mlen);
	return (ssize_t)n;
}

ssize_t dt_t_mwrite(struct dt_session *s, int i, const void *b, size_t n, int64_t off)
{
	/* the oracle's own rule (dt_mmap_write(): rm_pwrite() on the bytes
	 * profile, whose file has no pages), so that the model against
	 * itself agrees in the cached view too */
	int64_t lo, hi;
	if (s->t->type != DT_T_FD && s->t->cached)
		return n ? dt_mmap_write(FAKE(s, i), b, n, off, &lo, &hi) : 0;
	return mmap_io(s, i, (void *)b, n, off, 1);
}

ssize_t dt_t_mread(struct dt_session *s, int i, void *b, size_t n, int64_t off)
{
	return mmap_io(s, i, b, n, off, 0);
}

int dt_t_truncate(struct dt_session *s, int i, int64_t size)
{
	if (s->t->type != DT_T_FD)
		return rm_truncate(FAKE(s, i), size);
	return ftruncate(s->fd[i], size) < 0 ? neg_errno() : 0;
}

/* What the kernel answers for fallocate(2) on a FUSE file before the
 * server sees the request, or 0 when it forwards it.  vfs_fallocate()
 * (fs/open.c) checks with FUSE's s_maxbytes, MAX_LFS_FILESIZE, not the
 * model profile's, and then fuse_file_fallocate() (fs/fuse/file.c, with
 * kernel-patches/0001) refuses the modes it does not forward, UNSHARE_RANGE
 * among them, with EOPNOTSUPP.  So on a profile with a smaller s_maxbytes
 * (ext4) an UNSHARE past it is EOPNOTSUPP on fusefs, not the model's EFBIG.
 * Requests sent through RS_IOC_FALLOCATE skip the kernel: no front. */
int dt_t_fuse_front(const struct dt_target *t, int mode, int64_t off, int64_t len)
{
	const int shift = RM_FALLOC_FL_INSERT_RANGE | RM_FALLOC_FL_COLLAPSE_RANGE |
			  RM_FALLOC_FL_UNSHARE_RANGE;
	const int forwarded = RM_FALLOC_FL_KEEP_SIZE | RM_FALLOC_FL_PUNCH_HOLE |
			      RM_FALLOC_FL_ZERO_RANGE | RM_FALLOC_FL_INSERT_RANGE |
			      RM_FALLOC_FL_COLLAPSE_RANGE;

	if (t->type != DT_T_FD || strcmp(t->fsname, "rangeshift-fusefs") ||
	    (t->rs_ioctl && (mode & shift)))
		return 0;
	/* vfs_fallocate() up to the f_op->fallocate call, MAX_LFS_FILESIZE */
	int err = rm_vfs_fallocate_check_k(t->kernel, mode, off, len, INT64_MAX);
	if (err)
		return err;
	/* fuse_file_fallocate() */
	if (mode & ~forwarded)
		return -EOPNOTSUPP;
	return 0;
}

static int alloc_cb(void *ctx, const struct rm_run *r)
{
	if (r->state == RM_HOLE)
		return 1;
	*(int64_t *)ctx = r->off + r->len;
	return 0;
}

/* faulty:enospc: where the allocated run that starts at a ends (<= b). */
static int64_t fake_alloc_end(const struct rm_file *f, int64_t a, int64_t b)
{
	int64_t e = a;

	rm_walk(f, a, b, alloc_cb, &e);
	return e < b ? e : b;
}

int dt_t_fallocate(struct dt_session *s, int i, int mode, int64_t off, int64_t len)
{
	struct dt_target *t = s->t;

	if (t->type == DT_T_FD)
		return raw_fallocate(t, s->fd[i], mode, off, len);
	struct rm_file *f = FAKE(s, i);
	int r;
	if (t->fault == DT_F_INSERT_OBO && mode == RM_FALLOC_FL_INSERT_RANGE &&
	    rm_fallocate(f, mode, off, len) == 0) {
		/* deliberately wrong: the inserted hole lands one block late
		 * (undo the correct insert by collapsing it, redo it shifted) */
		int64_t bs = rm_blocksize(f);
		rm_fallocate(f, RM_FALLOC_FL_COLLAPSE_RANGE, off, len);
		r = rm_fallocate(f, mode, off + bs, len);
		if (r)
			r = rm_fallocate(f, mode, off, len);
		return r;
	}
	/* faulty:enospc: every 4th allocating fallocate of more than a block
	 * keeps its first block and fails (N3; XFS: size unchanged) */
	int64_t bs = t->mopts.blocksize;
	int xfs = t->mopts.profile == RM_PROFILE_XFS;
	if (t->fault == DT_F_ENOSPC && !(mode & ~RM_FALLOC_FL_KEEP_SIZE) &&
	    off >= 0 && len > bs && len <= INT64_MAX - off && off + len <= t->mopts.maxbytes &&
	    ++t->flaky_writes % 4 == 0) {
		int keep = xfs ? RM_FALLOC_FL_KEEP_SIZE : mode & RM_FALLOC_FL_KEEP_SIZE;
		/* as ext4_alloc_file_blocks(): the allocated run at the start,
		 * one chunk more (its first hole block), then the failure;
		 * ext4's mode 0 moved i_size to the end of what it mapped */
		int64_t a = off - off % bs, e = fake_alloc_end(f, a, off + len);
		if (e < off + len)	/* the size moves below, capped at off + len */
			rm_fallocate(f, RM_FALLOC_FL_KEEP_SIZE, e, bs);
		e = fake_alloc_end(f, a, off + len);
		if (e > off)
			rm_fallocate(f, keep, off, e - off);
		return -ENOSPC;
	}
	/* faulty:enospc-shift: every 3rd punch, insert or collapse fails with
	 * ENOSPC and changes nothing, which ext4 never does (RULES.md N5) and
	 * XFS may (its file then restarts).  faulty:enospc-full: the 3rd once
	 * in the target's life (a replay does not meet it, as a real full
	 * file system's journal timing differs), and the first after a fill
	 * op (dt_t_fill()), which a replay meets every time */
	int shift = !(mode & RM_FALLOC_FL_ZERO_RANGE) &&
		    (mode & (RM_FALLOC_FL_PUNCH_HOLE | RM_FALLOC_FL_INSERT_RANGE |
			     RM_FALLOC_FL_COLLAPSE_RANGE));
	if (shift && ((t->fault == DT_F_ENOSPC_SHIFT && ++t->flaky_writes % 3 == 0) ||
		      (t->fault == DT_F_ENOSPC_FULL &&
		       (t->filled || (t->flaky_writes < 3 && ++t->flaky_writes == 3))))) {
		struct rm_file *c = NULL;
		/* only where the model would succeed: a refused call keeps its errno */
		if (rm_file_clone(f, &c))
			return -ENOMEM;
		r = rm_fallocate(c, mode, off, len);
		rm_file_free(c);
		if (r == 0) {
			t->filled = 0;
			return -ENOSPC;
		}
		if (t->fault == DT_F_ENOSPC_FULL && !t->filled)
			t->flaky_writes--;	/* the next shift is the 3rd */
	}
	r = rm_fallocate(f, mode, off, len);
	if (t->fault == DT_F_WRONG_ERRNO && r == -EINVAL)
		r = -EOPNOTSUPP;	/* deliberately wrong errno */
	return r;
}

int dt_t_fsync(struct dt_session *s, int i)
{
	if (s->t->type != DT_T_FD)
		return rm_fsync(FAKE(s, i));
	if (fsync(s->fd[i]) < 0)
		return neg_errno();
	s->mdirty[i] = 0;	/* (see dt_t_fdatasync()) */
	return 0;
}

int dt_t_fdatasync(struct dt_session *s, int i)
{
	if (s->t->type != DT_T_FD)
		return rm_fdatasync(FAKE(s, i));
	if (fdatasync(s->fd[i]) < 0)
		return neg_errno();
	/* fuse_fsync() waited for the server's copy (see rs_fiemap()) */
	s->mdirty[i] = 0;
	return 0;
}

int dt_t_sync_range(struct dt_session *s, int i, int64_t off, int64_t len, unsigned flags)
{
	if (s->t->type != DT_T_FD)
		return rm_sync_file_range(FAKE(s, i), off, len, flags);
	return sync_file_range(s->fd[i], off, len, flags) < 0 ? neg_errno() : 0;
}

int dt_t_reflink(struct dt_session *s, int i, int src, int64_t soff, int64_t off, int64_t len)
{
	if (s->t->type != DT_T_FD)
		return s->t->cached ? rm_clone_range_wb(FAKE(s, i), FAKE(s, src), soff, off, len)
				    : rm_clone_range(FAKE(s, i), FAKE(s, src), soff, off, len);
	struct file_clone_range r = {
		.src_fd = s->fd[src], .src_offset = (uint64_t)soff,
		.src_length = (uint64_t)len, .dest_offset = (uint64_t)off,
	};
	return ioctl(s->fd[i], FICLONERANGE, &r) < 0 ? neg_errno() : 0;
}

/* O_DIRECT through a descriptor of its own, opened for the call: the
 * session's descriptors stay buffered, and a reopen, remount or reset has
 * nothing more to redo.  The buffer is the caller's (aligned: exec.c). */
static ssize_t dio_io(struct dt_session *s, int i, void *b, size_t n, int64_t off, int wr)
{
	int fd = open(s->path[i], O_RDWR | O_DIRECT);

	if (fd < 0)
		return neg_errno();
	ssize_t r = wr ? pwrite(fd, b, n, off) : pread(fd, b, n, off);
	if (r < 0)
		r = neg_errno();
	close(fd);
	return r;
}

ssize_t dt_t_dio_pwrite(struct dt_session *s, int i, const void *b, size_t n, int64_t off)
{
	if (s->t->type != DT_T_FD)
		return rm_dio_pwrite(FAKE(s, i), b, n, off, s->t->dio_align);
	return dio_io(s, i, (void *)b, n, off, 1);
}

ssize_t dt_t_dio_pread(struct dt_session *s, int i, void *b, size_t n, int64_t off)
{
	if (s->t->type != DT_T_FD)
		return rm_dio_pread(FAKE(s, i), b, n, off, s->t->dio_align);
	return dio_io(s, i, b, n, off, 0);
}

int64_t dt_t_copy_range(struct dt_session *s, int i, int src, int64_t soff, int64_t off,
			int64_t len)
{
	if (s->t->type != DT_T_FD)
		return dt_copy_loop(FAKE(s, i), FAKE(s, src), soff, off, len, s->t->copy_flags);
	/* the raw system call, as xfs_io makes it (no libc fallback) */
	loff_t so = soff, doff = off;
	size_t left = (size_t)len;
	int64_t total = 0;
	do {
		long r = syscall(SYS_copy_file_range, s->fd[src], &so, s->fd[i], &doff, left, 0u);
		if (r < 0)
			return neg_errno();
		if (r == 0)
			break;
		total += r;
		left -= (size_t)r;
	} while (left > 0);
	return total;
}

int64_t dt_t_dedupe(struct dt_session *s, int i, int src, int64_t soff, int64_t off,
		    int64_t len)
{
	if (s->t->type != DT_T_FD) {
		int64_t bytes;
		int st;
		int r = rm_dedupe_range(FAKE(s, i), FAKE(s, src), soff, off, len, &bytes, &st);
		return dt_dedupe_result(r, st, bytes);
	}
	struct file_dedupe_range *a = calloc(1, sizeof(*a) + sizeof(a->info[0]));
	if (!a)
		return -ENOMEM;
	a->src_offset = (uint64_t)soff;
	a->src_length = (uint64_t)len;
	a->dest_count = 1;
	a->info[0].dest_fd = s->fd[i];
	a->info[0].dest_offset = (uint64_t)off;
	int rc = ioctl(s->fd[src], FIDEDUPERANGE, a) < 0 ? neg_errno() : 0;
	int64_t res = dt_dedupe_result(rc, a->info[0].status, (int64_t)a->info[0].bytes_deduped);
	free(a);
	return res;
}

int dt_t_chmod(struct dt_session *s, int i, uint32_t mode)
{
	struct dt_target *t = s->t;

	if (t->type != DT_T_FD) {
		struct rm_cred c;

		if (t->user)
			rm_cred_user(&c, t->user_uid, t->user_gid);
		else
			rm_cred_root(&c);
		return rm_cred_chmod(&c, &s->fattr[i], mode);
	}
	return fchmod(s->fd[i], mode) ? neg_errno() : 0;
}

int64_t dt_t_mode(struct dt_session *s, int i)
{
	struct stat st;

	if (s->t->type != DT_T_FD)
		return s->fattr[i].mode;
	if (fstat(s->fd[i], &st))
		return neg_errno();
	return st.st_mode & 07777;
}

int dt_t_reopen(struct dt_session *s, int i)
{
	if (s->t->type != DT_T_FD)
		return 0;
	close(s->fd[i]);
	s->fd[i] = -1;
	return open_file(s, i, 0);
}

static void drop_files(struct dt_target *t)
{
	for (struct dt_session *x = t->sessions; x; x = x->next)
		for (int i = 0; i < x->nfiles; i++)
			if (x->fd[i] >= 0)
				posix_fadvise(x->fd[i], 0, 0, POSIX_FADV_DONTNEED);
}

int dt_t_drop(struct dt_session *s)
{
	struct dt_target *t = s->t;

	if (t->type != DT_T_FD) {
		if (t->cached)
			fake_writeback_all(t);
		return 0;
	}
	/* observer-free: drop caches is a write-back point of this file
	 * system (syncfs(2): not sync(2), which would write back the other
	 * targets' files, running at the same time in the guest), then the
	 * clean pages of its files go, as repro.sh does with sync; echo 3 */
	if (t->cached)
		for (int i = 0; i < s->nfiles; i++)
			if (s->fd[i] >= 0) {
				syncfs(s->fd[i]);
				break;
			}
	if (t->global_drop) {
		int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
		if (fd >= 0) {
			ssize_t w = write(fd, "3\n", 2);
			close(fd);
			if (w == 2)
				return 0;
		}
	}
	drop_files(t);
	return 0;
}

static unsigned long mount_flags(const char *opts, char *data, size_t dn)
{
	static const struct { const char *n; unsigned long f; } tab[] = {
		{ "ro", MS_RDONLY }, { "nosuid", MS_NOSUID }, { "nodev", MS_NODEV },
		{ "noexec", MS_NOEXEC }, { "sync", MS_SYNCHRONOUS }, { "dirsync", MS_DIRSYNC },
		{ "noatime", MS_NOATIME }, { "nodiratime", MS_NODIRATIME },
		{ "relatime", MS_RELATIME }, { "strictatime", MS_STRICTATIME },
		{ "lazytime", MS_LAZYTIME }, { "rw", 0 }, { "seclabel", 0 },
	};
	char copy[512], *save = NULL;
	unsigned long fl = 0;

	data[0] = 0;
	snprintf(copy, sizeof(copy), "%s", opts);
	for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		size_t k, nt = sizeof(tab) / sizeof(tab[0]);
		for (k = 0; k < nt; k++)
			if (!strcmp(p, tab[k].n))
				break;
		if (k < nt) {
			fl |= tab[k].f;
			continue;
		}
		size_t l = strlen(data);
		snprintf(data + l, dn - l, "%s%s", l ? "," : "", p);
	}
	return fl;
}

/* DIFFTEST_PRISTINE: entries "DEV=MAP:IMAGE" separated by ';' (dt.h). */
int dt_pristine_for(const char *dev, char *map, char *img, size_t n)
{
	size_t dl = strlen(dev);

	for (const char *p = getenv("DIFFTEST_PRISTINE"); p && *p;
	     p += strcspn(p, ";"), p += *p == ';') {
		const char *m = p + dl + 1, *end = p + strcspn(p, ";"), *c;
		if (end - p <= (ptrdiff_t)dl || strncmp(p, dev, dl) || p[dl] != '=' ||
		    !(c = memchr(m, ':', (size_t)(end - m))))
			continue;
		size_t ml = (size_t)(c - m), il = (size_t)(end - c - 1);
		if (!ml || !il || ml >= n || il >= n)
			continue;
		memcpy(map, m, ml);
		map[ml] = 0;
		memcpy(img, c + 1, il);
		img[il] = 0;
		return 1;
	}
	return 0;
}

/* Make t's (unmounted) device anew: restore the pristine image when vm/init
 * listed one (rs-imgload -z: zero the device, copy the image's data), else
 * mkfs as vm/run does.  0 or the tool's exit status; what failed in note. */
static int make_fs_anew(struct dt_target *t, int isx, char *note, size_t n)
{
	char map[PATH_MAX], img[PATH_MAX], out[4096];
	int st;

	if (dt_pristine_for(t->mnt_dev, map, img, sizeof(map))) {
		char *load[] = { "rs-imgload", "-z", map, img, t->mnt_dev, NULL };
		if (!(st = dt_run_tool(load, 300, out, sizeof(out)))) {
			t->fresh_restored++;
			return 0;
		}
		/* fall through to mkfs (the device is zeroed or partly
		 * loaded); said once per target, counted in the report */
		if (!t->fresh_mkfs)
			fprintf(stderr, "difftest: %s: restoring the boot image of %s failed "
				"(rs-imgload exited %d: %.200s); using mkfs\n", t->name,
				t->mnt_dev, st, out);
	}
	t->fresh_mkfs++;
	/* the target's configuration (config.h): its mkfs options, split at blanks */
	struct dt_config c;
	char opts[128], *av[16];
	int ac = 0;
	if (t->has_cfg)
		c = t->cfg;
	else
		dt_config_default(isx ? "xfs" : "ext4", &c);
	dt_config_mkfs(&c, opts, sizeof(opts));
	av[ac++] = isx ? "mkfs.xfs" : "mkfs.ext4";
	av[ac++] = isx ? "-f" : "-F";
	av[ac++] = "-q";
	for (char *sv, *w = strtok_r(opts, " ", &sv); w && ac < 14; w = strtok_r(NULL, " ", &sv))
		av[ac++] = w;
	av[ac++] = t->mnt_dev;
	av[ac] = NULL;
	if ((st = dt_run_tool(av, 300, out, sizeof(out))))
		snprintf(note, n, "%s %s exited %d: %.200s", isx ? "mkfs.xfs" : "mkfs.ext4",
			 t->mnt_dev, st, out);
	return st;
}

/* Mount t's device on its mount point again with the options it had; the
 * data options mount(2) rejects (some /proc/mounts shows) are dropped on a
 * second try.  0 or -errno. */
static int mount_again(const struct dt_target *t)
{
	char data[512];
	unsigned long fl = mount_flags(t->mnt_opts, data, sizeof(data));

	if (!mount(t->mnt_dev, t->mnt_dir, t->mnt_type, fl, data) ||
	    !mount(t->mnt_dev, t->mnt_dir, t->mnt_type, fl, NULL))
		return 0;
	return neg_errno();
}

/* A fresh file system for shrinking (campaign.c): a divergence can leave
 * corruption on disk (a mutant's extent past EXT_MAX_BLOCKS, an inode
 * xfs_repair rejects) that every shrink candidate would then meet, so the
 * divergence "does not reproduce on fresh files" or shrinks to a lone
 * remount.  Only the guest's own scratch file systems qualify: named
 * targets ext4/xfs mounted at /mnt/NAME from /dev/vd* or /dev/ram* with
 * DIFFTEST_IN_GUEST=1 (vm/init sets it); never a dir: target.  Every file
 * of every session is dropped, the device made anew (the pristine image
 * vm/init lists in DIFFTEST_PRISTINE restored, else mkfs.ext4 -b 4096 /
 * mkfs.xfs -b size=4096, as vm/run does) and mounted, and the files
 * created afresh.  0 done, 1 not applicable, -errno on failure. */
int dt_t_fresh_fs(struct dt_target *t, char *note, size_t n)
{
	const char *g = getenv("DIFFTEST_IN_GUEST");
	int isx = !strcmp(t->mnt_type, "xfs");

	note[0] = 0;
	t->filled = 0;	/* a run starts: faulty:enospc-full's fill is gone */
	if (t->type != DT_T_FD || !t->can_remount || !g || strcmp(g, "1") ||
	    strcmp(t->dir, t->mnt_dir) || strncmp(t->mnt_dir, "/mnt/", 5) ||
	    (strncmp(t->mnt_dev, "/dev/vd", 7) && strncmp(t->mnt_dev, "/dev/ram", 8)) ||
	    (!isx && strcmp(t->mnt_type, "ext4")))
		return 1;
	for (struct dt_session *x = t->sessions; x; x = x->next)
		for (int i = 0; i < x->nfiles; i++)
			free_file(x, i);
	int rc = 0;
	if (umount(t->mnt_dir)) {
		rc = neg_errno();
		snprintf(note, n, "umount %s: %s", t->mnt_dir, strerror(-rc));
	} else {
		int st = make_fs_anew(t, isx, note, n);
		if ((rc = mount_again(t))) {
			snprintf(note, n, "mount %s on %s after making it anew: %s", t->mnt_dev, t->mnt_dir,
				 strerror(-rc));
			return rc;
		}
		if (st)
			rc = -EIO;
		char ferr[256];
		if (!rc && t->full && (rc = fill_fs(t, ferr, sizeof(ferr))))
			snprintf(note, n, "%s", ferr);
	}
	for (struct dt_session *x = t->sessions; x; x = x->next)
		for (int i = 0; i < x->nfiles; i++) {
			int e = new_file(x, i);
			if (e && !rc) {
				rc = e;
				snprintf(note, n, "cannot create test file %d on the file system made anew: %s", i,
					 strerror(-e));
			}
		}
	return rc;
}

/* The fill op (optab.c): syncfs first, so that delayed allocations are
 * made and the blocks freed so far are committed (ext4 reuses a freed
 * block only after its transaction commits), then the filler takes every
 * block this caller can still allocate: the next allocation of the run's
 * files meets ENOSPC unless it may use what is reserved.  The unfill op
 * gives the filler's blocks back (the file system has room until a fill). */
int64_t dt_t_fill(struct dt_session *s, int take, char *note, size_t n)
{
	struct dt_target *t = s->t;
	char path[PATH_MAX + 32];
	struct statfs sf;
	struct stat st;

	note[0] = 0;
	if (t->full && t->type == DT_T_FAULTY) {	/* the model has no free space */
		t->filled = take && t->fault == DT_F_ENOSPC_FULL;
		return 0;
	}
	if (!t->full || t->type != DT_T_FD) {
		snprintf(note, n, "fill runs on a nearly full target only (a free=SIZE "
			 "configuration); %s is not one", t->name);
		return -EINVAL;
	}
	filler_path(t, path, sizeof(path));
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int rc = neg_errno();
		snprintf(note, n, "fill: %s: %s", path, strerror(-rc));
		return rc;
	}
	if (!take) {	/* unfill: the freed blocks are reusable once committed */
		int rc = fstat(fd, &st) || ftruncate(fd, 0) || syncfs(fd) ? neg_errno() : 0;
		close(fd);
		if (rc)
			snprintf(note, n, "unfill: emptying %s: %s", path, strerror(-rc));
		return rc ? rc : st.st_size;
	}
	int rc = syncfs(fd) || fstatfs(fd, &sf) || fstat(fd, &st) ? neg_errno() : 0;
	int64_t at = rc ? 0 : st.st_size, from = at;
	if (!rc)
		rc = grow_filler(fd, (int64_t)sf.f_bsize, (int64_t)sf.f_bfree * sf.f_bsize, &at);
	close(fd);
	if (rc)
		snprintf(note, n, "fill: growing %s: %s", path, strerror(-rc));
	return rc ? rc : at - from;
}

int dt_t_remount(struct dt_session *s, char *note, size_t n)
{
	struct dt_target *t = s->t;
	int rc = 0;

	note[0] = 0;
	if (t->type != DT_T_FD) {
		if (t->cached)
			fake_writeback_all(t);
		return 0;
	}
	if (!t->can_remount) {
		t->remount_fallbacks++;
		dt_t_drop(s);
		for (struct dt_session *x = t->sessions; x; x = x->next)
			for (int i = 0; i < x->nfiles; i++)
				if (x->fd[i] >= 0 && (rc = dt_t_reopen(x, i)))
					return rc;
		return 0;
	}
	uint64_t inos[64];	/* the test files' inodes, for depth.c */
	int64_t runs[64];	/* their models' run counts */
	int nino = 0;
	for (struct dt_session *x = t->sessions; x; x = x->next)
		for (int i = 0; i < x->nfiles; i++)
			if (x->fd[i] >= 0) {
				struct stat st;
				if (nino < 64 && !fstat(x->fd[i], &st)) {
					struct rm_stats rs;
					rm_stats(x->model[i], &rs);
					runs[nino] = (int64_t)rs.nodes;
					inos[nino++] = (uint64_t)st.st_ino;
				}
				close(x->fd[i]);
				x->fd[i] = -1;
			}
	/* mount -o loop sets LO_FLAGS_AUTOCLEAR: the loop device would lose
	 * its backing file at umount unless someone holds it open */
	int hold = strncmp(t->mnt_dev, "/dev/loop", 9) ? -1 : open(t->mnt_dev, O_RDONLY);
	if (umount(t->mnt_dir)) {
		/* busy (another shard, a shell): a cache drop is the next best */
		snprintf(note, n, "umount %s: %s; dropped caches instead", t->mnt_dir,
			 strerror(errno));
		t->remount_fallbacks++;
		dt_t_drop(s);
	} else if ((dt_ondisk_checks(t, inos, runs, nino), 1) &&	/* unmounted: read the disk */
		   (rc = mount_again(t))) {
		snprintf(note, n, "mount %s on %s (%s, %s) failed: %s", t->mnt_dev,
			 t->mnt_dir, t->mnt_type, t->mnt_opts, strerror(-rc));
		if (hold >= 0)
			close(hold);
		return -EIO;
	}
	if (hold >= 0)
		close(hold);
	for (struct dt_session *x = t->sessions; x; x = x->next)
		for (int i = 0; i < x->nfiles; i++)
			if (x->model[i] && (rc = open_file(x, i, 0))) {
				snprintf(note, n, "reopen %s after remount: %s", x->path[i],
					 strerror(-rc));
				return rc;
			}
	return 0;
}

int64_t dt_t_size(struct dt_session *s, int i)
{
	if (s->t->type != DT_T_FD)
		return rm_size(FAKE(s, i));
	struct stat st;
	if (fstat(s->fd[i], &st))
		return neg_errno();
	return st.st_size;
}

int64_t dt_t_lseek(struct dt_session *s, int i, int64_t off, int whence)
{
	if (s->t->type != DT_T_FD)
		return rm_lseek(FAKE(s, i), off, whence);
	off_t r = lseek(s->fd[i], off, whence);
	return r < 0 ? neg_errno() : r;
}

static int push_ext(struct rm_extent **ext, size_t *cap, int64_t n,
		    int64_t lo, int64_t len, uint32_t flags)
{
	if (RM_VEC_RESERVE(ext, cap, (size_t)n + 1, 256))
		return -ENOMEM;
	(*ext)[n] = (struct rm_extent){ .logical = lo, .length = len, .flags = flags };
	return 0;
}

/* The model-backed targets' map (faulty: lost-unwritten drops the flag). */
static int64_t model_fiemap(struct dt_session *s, int i, int64_t start, int64_t len,
			    struct rm_extent **ext, size_t *cap, int sync)
{
	struct rm_file *f = FAKE(s, i);
	int cached = s->t->cached && !sync;

	if (s->t->cached && sync)
		rm_writeback(f, 0, 0);	/* fiemap_prep()'s filemap_write_and_wait() */
	int64_t k = cached ? rm_fiemap_cached(f, start, len, NULL, 0) : rm_fiemap(f, start, len, NULL, 0);
	if (k < 0)
		return k;
	if (RM_VEC_RESERVE(ext, cap, (size_t)k, 256))
		return -ENOMEM;
	k = cached ? rm_fiemap_cached(f, start, len, *ext, *cap) : rm_fiemap(f, start, len, *ext, *cap);
	if (s->t->fault == DT_F_LOST_UNWRITTEN)
		for (int64_t j = 0; j < k; j++)
			(*ext)[j].flags &= ~RM_FIEMAP_UNWRITTEN;	/* deliberately wrong */
	return k;
}

/* The session's FIEMAP buffer, big enough for either ioctl. */
static void *fm_buffer(struct dt_session *s)
{
	size_t a = sizeof(struct rs_ioc_fiemap);
	size_t b = sizeof(struct fiemap) + FM_COUNT * sizeof(struct fiemap_extent);
	if (!s->fmbuf)
		s->fmbuf = malloc(a > b ? a : b);
	return s->fmbuf;
}

/* rangeshift-fusefs's own map, RS_IOC_FIEMAP, over [start, end). */
static int64_t rs_fiemap(struct dt_session *s, int i, int64_t start, int64_t end,
			 struct rm_extent **ext, size_t *cap, int sync)
{
	struct rs_ioc_fiemap *rf = fm_buffer(s);
	int64_t n = 0, pos = start;

	if (!rf)
		return -ENOMEM;
	/* the server sees data only once the kernel writes it back
	 * (mmap'd and writeback-cached pages): the write-back that
	 * FIEMAP_FLAG_SYNC would do.  fdatasync, not sync_file_range:
	 * FUSE ends page write-back when it has copied the page, before
	 * the server has the WRITE; fuse_fsync() waits for those
	 * (fuse_sync_writes()).  Only a shared-mmap write leaves
	 * dirty pages here: without FUSE_CAP_WRITEBACK_CACHE (which
	 * rangeshift-fusefs turns off) write(2) is write-through
	 * (fuse_perform_write() sends FUSE_WRITE and leaves the pages
	 * clean), fallocate and truncate dirty nothing.  So the sync,
	 * a FUSE_FSYNC round trip to the server, is done when file i
	 * had an mmap write since its last one, not on every map
	 * check. */
	if (sync && s->mdirty[i]) {
		fdatasync(s->fd[i]);
		s->mdirty[i] = 0;
	}
	for (;;) {
		memset(rf, 0, sizeof(*rf));
		rf->start = pos;
		rf->length = end - pos;
		if (ioctl(s->fd[i], RS_IOC_FIEMAP, rf) < 0)
			return neg_errno();
		for (uint32_t j = 0; j < rf->count; j++)
			if (push_ext(ext, cap, n++, rf->ext[j].logical, rf->ext[j].length,
				     rf->ext[j].flags & (RM_FIEMAP_LAST | RM_FIEMAP_UNWRITTEN)))
				return -ENOMEM;
		if (rf->count < RS_FIEMAP_MAX || (rf->ext[rf->count - 1].flags & RS_FIEMAP_LAST))
			return n;
		pos = rm_sat_add(rf->ext[rf->count - 1].logical, rf->ext[rf->count - 1].length);
		if (pos >= end)
			return n;
	}
}

/* The kernel's FS_IOC_FIEMAP over [start, end) (end INT64_MAX: to the end). */
static int64_t fs_fiemap(struct dt_session *s, int i, int64_t start, int64_t end,
			 struct rm_extent **ext, size_t *cap, int sync)
{
	struct fiemap *fm = fm_buffer(s);
	uint64_t pos = (uint64_t)start;
	int64_t n = 0;

	if (!fm)
		return -ENOMEM;
	for (;;) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = pos;
		fm->fm_length = end == INT64_MAX ? FIEMAP_MAX_OFFSET : (uint64_t)end - pos;
		fm->fm_extent_count = FM_COUNT;
		/* The model's states are those after write-back (refmodel.h):
		 * FIEMAP_FLAG_SYNC writes dirty pages first (ioctl_fiemap() ->
		 * filemap_write_and_wait()), as xfs_io's fiemap does. */
		fm->fm_flags = sync ? FIEMAP_FLAG_SYNC : 0;
		if (ioctl(s->fd[i], FS_IOC_FIEMAP, fm) < 0)
			return neg_errno();
		for (uint32_t j = 0; j < fm->fm_mapped_extents; j++) {
			struct fiemap_extent *e = &fm->fm_extents[j];
			/* XFS keeps extents shifted past 2^63 bytes by an insert
			 * (xfs_bmap_can_insert_extents() allows up to 2^54
			 * blocks); offsets are int64 here: clip at INT64_MAX */
			if (e->fe_logical >= (uint64_t)INT64_MAX)
				continue;
			uint64_t elen = e->fe_length;
			if (elen > (uint64_t)INT64_MAX - e->fe_logical)
				elen = (uint64_t)INT64_MAX - e->fe_logical;
			/* LAST, UNWRITTEN and DELALLOC matter (delalloc
			 * is data to a check after write-back) */
			if (push_ext(ext, cap, n++, (int64_t)e->fe_logical, (int64_t)elen,
				     (e->fe_flags & (FIEMAP_EXTENT_LAST | FIEMAP_EXTENT_UNWRITTEN)) |
				     (e->fe_flags & FIEMAP_EXTENT_DELALLOC ? RM_FIEMAP_DELALLOC : 0)))
				return -ENOMEM;
		}
		if (fm->fm_mapped_extents < FM_COUNT)
			return n;
		struct fiemap_extent *l = &fm->fm_extents[fm->fm_mapped_extents - 1];
		if (l->fe_flags & FIEMAP_EXTENT_LAST)
			return n;
		pos = l->fe_logical + l->fe_length;
		if (end != INT64_MAX && pos >= (uint64_t)end)
			return n;
	}
}

static int64_t fiemap_of(struct dt_session *s, int i, int64_t start, int64_t len,
			 struct rm_extent **ext, size_t *cap, int sync)
{
	if (len <= 0)
		return 0;
	if (s->t->type != DT_T_FD)
		return model_fiemap(s, i, start, len, ext, cap, sync);
	int64_t end = len >= INT64_MAX - start ? INT64_MAX : start + len;
	return s->t->fiemap == 2 ? rs_fiemap(s, i, start, end, ext, cap, sync)
				 : fs_fiemap(s, i, start, end, ext, cap, sync);
}

int64_t dt_t_fiemap(struct dt_session *s, int i, int64_t start, int64_t len,
		    struct rm_extent **ext, size_t *cap)
{
	/* observer-free fusefs: the server sees an mmap write's pages only
	 * once the kernel writes them back, so a file with such pages is
	 * written back first (the only write-back a check does there: FUSE
	 * without a write-back cache writes write(2) through) */
	int sync = !s->t->fiemap_nosync ||
		   (s->t->cached && s->mdirty[i] && dt_target_is_fuse(s->t));
	return fiemap_of(s, i, start, len, ext, cap, sync);
}

int64_t dt_t_fiemap_sync(struct dt_session *s, int i, int64_t start, int64_t len,
			 struct rm_extent **ext, size_t *cap)
{
	return fiemap_of(s, i, start, len, ext, cap, 1);
}
