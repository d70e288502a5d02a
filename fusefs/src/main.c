/* SPDX-License-Identifier: MIT */
/*
 * main.c - rangeshift-fusefs: a FUSE file system (libfuse3 low-level API,
 * multi-threaded loop unless -s) whose regular files are refmodel files,
 * so that any program sees exactly the semantics refmodel defines for
 * ext4, XFS or the byte-granular "bytes" profile.  This file parses the
 * options, holds the operation table (one handler per FUSE operation, in
 * the order of struct fuse_lowlevel_ops; the handlers live in the modules
 * listed in fs.h) and runs the session, in the style of libfuse's
 * example/passthrough_ll.c.
 *
 * suid/sgid: libfuse 3.14 (Debian 12) cannot negotiate
 * FUSE_HANDLE_KILLPRIV_V2 and does not pass FUSE_WRITE_KILL_SUIDGID or
 * FATTR_KILL_SUIDGID through, so FUSE_CAP_HANDLE_KILLPRIV is turned off:
 * the kernel then runs file_remove_privs() itself on write, truncate and
 * fallocate (it knows the caller's CAP_FSETID) and sends the mode change as
 * a SETATTR (the ioctls: ranges.c).
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "rangeshift_fusefs.h"

/* ---------------------------------------------------------------- session */

static void rs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fs *fs = userdata;

	/* No FUSE_CAP_AUTO_INVAL_DATA unless -o auto_inval_data (libfuse
	 * asks for it by default).  With it every read asks for attributes
	 * (fuse_cache_read_iter()) and a new mtime drops all of the file's
	 * cached pages (fuse_change_attributes()); whether the mtime is new
	 * depends on whether a clock tick fell between the kernel's
	 * file_update_time() and this server's clock_gettime() of the same
	 * change, so the page cache, and what a missing invalidation of the
	 * kernel's own shows, would follow timing.  Every change this server
	 * makes behind the kernel's back (the ioctls) invalidates
	 * explicitly (ranges.c), so the net catches nothing else. */
	conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
	/* libfuse's connection options (-o max_write=, splice_read, ...);
	 * the two that would change semantics are refused by configure(). */
	if (fs->conn_opts)
		fuse_apply_conn_info_opts(fs->conn_opts, conn);
	/* Write-through (ranges.c), kernel-side privilege drop (above),
	 * O_TRUNC as a separate SETATTR (rs_open() does not truncate). */
	conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_HANDLE_KILLPRIV |
			FUSE_CAP_ATOMIC_O_TRUNC);
}

static void rs_destroy(void *userdata)
{
	struct fs *fs = userdata;

	/* Every node, reachable or not (unlinked files the kernel had not
	 * forgotten yet), is on fs->all. */
	while (fs->all.next != &fs->all)
		node_free(fs, fs->all.next);
	fs->root = NULL;
}

static const struct fuse_lowlevel_ops rs_ops = {
	.init = rs_init,
	.destroy = rs_destroy,
	.lookup = rs_lookup,
	.forget = rs_forget,
	.getattr = rs_getattr,
	.setattr = rs_setattr,
	.readlink = rs_readlink,
	.mknod = rs_mknod,
	.mkdir = rs_mkdir,
	.unlink = rs_unlink,
	.rmdir = rs_rmdir,
	.symlink = rs_symlink,
	.rename = rs_rename,
	.link = rs_link,
	.open = rs_open,
	.read = rs_read,
	.write = rs_write,
	.flush = rs_flush,
	.release = rs_release,
	.fsync = rs_fsync,
	.readdir = rs_readdir,
	.statfs = rs_statfs,
	.setxattr = rs_setxattr,
	.getxattr = rs_getxattr,
	.listxattr = rs_listxattr,
	.removexattr = rs_removexattr,
	.create = rs_create,
	.ioctl = rs_ioctl,
	.forget_multi = rs_forget_multi,
	.fallocate = rs_fallocate,
	.readdirplus = rs_readdirplus,
	.lseek = rs_lseek,
};

/* ---------------------------------------------------------------- options */

struct conf {
	char *profile;
	char *blocksize;
	char *size;
	char *timeout;
	char *keep_cache;
	int refused;		/* 1 writeback_cache, 2 atomic_o_trunc */
	int strict;
};

#define RS_OPT(t, p) { t, offsetof(struct conf, p), 0 }
static const struct fuse_opt rs_opts[] = {
	RS_OPT("profile=%s", profile),
	RS_OPT("blocksize=%s", blocksize),
	RS_OPT("size=%s", size),
	RS_OPT("timeout=%s", timeout),
	RS_OPT("keep_cache=%s", keep_cache),
	{ "writeback_cache", offsetof(struct conf, refused), 1 },
	{ "atomic_o_trunc", offsetof(struct conf, refused), 2 },
	{ "strict", offsetof(struct conf, strict), 1 },
	FUSE_OPT_END
};

static void usage(const char *prog)
{
	printf("usage: %s MOUNTPOINT [-o OPTIONS] [-f] [-d] [-s]\n"
	       "\n"
	       "Mount a file system whose regular files are rangeshift reference-model\n"
	       "files (refmodel): bytes, sizes, errno and extent maps are exactly what\n"
	       "the model says Linux 6.1 or 6.12 ext4 or XFS would give.  Everything lives in\n"
	       "memory and is gone at unmount (fusermount3 -u MOUNTPOINT).\n"
	       "\n"
	       "rangeshift options:\n"
	       "    -o profile=P               semantics to serve: ext4-6.1 (default), xfs-6.1,\n"
	       "                               ext4-6.12, xfs-6.12 or bytes (ext4, xfs: 6.1)\n"
	       "    -o blocksize=N             block size, power of two 512..65536 (default 4096)\n"
	       "    -o size=BYTES              capacity for file data, suffixes k m g t\n"
	       "                               (default 64g; ENOSPC beyond it)\n"
	       "    -o timeout=SECONDS         kernel entry/attribute cache timeout (default 1)\n"
	       "    -o keep_cache=0|1          keep the kernel's cached pages of a file across\n"
	       "                               open(2) (default 1)\n"
	       "\n"
	       "libfuse connection options: max_write=N, max_readahead=N, max_background=N,\n"
	       "congestion_threshold=N, sync_read, async_read, [no_]splice_read,\n"
	       "[no_]splice_write, [no_]splice_move, [no_]auto_inval_data (default: no),\n"
	       "[no_]async_dio,\n"
	       "readdirplus=yes|no|auto, time_gran=N.  writeback_cache and atomic_o_trunc\n"
	       "are refused (README: caching).\n"
	       "    -o strict                  intended semantics: none of the kernel errata\n"
	       "                               of refmodel/ERRATA.md (default: copy the kernel)\n"
	       "\n"
	       "Insert and collapse range on a stock kernel: run programs with\n"
	       "LD_PRELOAD=librangeshift-preload.so (fallocate(2) and FS_IOC_FIEMAP are\n"
	       "served through the ioctls of rangeshift_fusefs.h); the extent map is also\n"
	       "readable as the xattr " RS_XATTR_MAP ".\n"
	       "\n", prog);
}

static int parse_size(const char *s, int64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	if (!s || !*s || *s == '-')
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end || v > ((unsigned long long)INT64_MAX >> shift))
		return -EINVAL;
	*out = (int64_t)(v << shift);
	return 0;
}

static int configure(struct fs *fs, const struct conf *c)
{
	struct rm_file *probe;
	int64_t v;

	fs->opts.profile = RM_PROFILE_EXT4;
	fs->opts.kernel = RM_KERNEL_6_1;
	fs->opts.blocksize = 4096;
	fs->opts.maxbytes = 0;
	fs->opts.strict = c->strict;
	/* the server writes each request into the model at once: its files
	 * have no page cache of their own (the kernel's FUSE page cache is in
	 * front of them), so nothing in them is ever dirty */
	fs->opts.write_through = 1;
	fs->capacity = (int64_t)64 << 30;
	fs->timeout = 1.0;
	if (c->profile && rm_profile_parse2(c->profile, &fs->opts.profile, &fs->opts.kernel) < 0) {
		fprintf(stderr, "rangeshift-fusefs: unknown profile '%s' (ext4-6.1, xfs-6.1, "
			"ext4-6.12, xfs-6.12, bytes; ext4 and xfs mean 6.1)\n", c->profile);
		return -1;
	}
	if (c->blocksize) {
		if (parse_size(c->blocksize, &v) < 0 || v < 512 || v > 65536 ||
		    (v & (v - 1))) {
			fprintf(stderr, "rangeshift-fusefs: bad blocksize '%s' (power of two, 512..65536)\n",
				c->blocksize);
			return -1;
		}
		fs->opts.blocksize = (uint32_t)v;
	}
	if (c->size) {
		if (parse_size(c->size, &v) < 0 || v < fs->opts.blocksize) {
			fprintf(stderr, "rangeshift-fusefs: bad size '%s' (bytes, suffix k m g t)\n",
				c->size);
			return -1;
		}
		fs->capacity = v;
	}
	if (c->timeout) {
		char *end;
		double t = strtod(c->timeout, &end);

		if (*end || end == c->timeout || !(t >= 0 && t <= 3600)) {
			fprintf(stderr, "rangeshift-fusefs: bad timeout '%s' (seconds, 0..3600)\n",
				c->timeout);
			return -1;
		}
		fs->timeout = t;
	}
	fs->keep_cache = true;
	if (c->keep_cache) {
		if (strcmp(c->keep_cache, "0") && strcmp(c->keep_cache, "1")) {
			fprintf(stderr, "rangeshift-fusefs: bad keep_cache '%s' (0 or 1)\n",
				c->keep_cache);
			return -1;
		}
		fs->keep_cache = c->keep_cache[0] == '1';
	}
	if (c->refused == 1) {
		/* The kernel would own i_size and could not be told of a
		 * collapse done through an ioctl (fuse_get_cache_mask()), and a
		 * write(2) would succeed before the model saw it (no ENOSPC). */
		fprintf(stderr, "rangeshift-fusefs: writeback_cache is not supported (the ioctls and ENOSPC would be incoherent: see README)\n");
		return -1;
	}
	if (c->refused == 2) {
		fprintf(stderr, "rangeshift-fusefs: atomic_o_trunc is not supported (open does not truncate: the kernel sends O_TRUNC as a truncate)\n");
		return -1;
	}
	if (rm_file_new(&fs->opts, &probe) < 0) {
		fprintf(stderr, "rangeshift-fusefs: the model rejects profile/blocksize\n");
		return -1;
	}
	rm_file_free(probe);
	return 0;
}

/* The empty file system: the root directory only. */
static int fs_init(struct fs *fs)
{
	pthread_rwlock_init(&fs->ns, NULL);
	pthread_mutex_init(&fs->space, NULL);
	pthread_mutex_init(&fs->list, NULL);
	fs->all.next = fs->all.prev = &fs->all;
	fs->root = node_new(fs, S_IFDIR | 0755, getuid(), getgid());
	if (!fs->root)
		return -1;
	fs->root->nlink = 2;
	fs->root->nlookup = 1;
	return 0;
}

static void fs_fini(struct fs *fs)
{
	/* destroy() ran if the kernel sent DESTROY; free what is left. */
	rs_destroy(fs);
	pthread_rwlock_destroy(&fs->ns);
	pthread_mutex_destroy(&fs->space);
	pthread_mutex_destroy(&fs->list);
}

/* Mount, serve until unmounted or signalled, unmount; the exit status. */
static int serve(struct fs *fs, struct fuse_args *args,
		 const struct fuse_cmdline_opts *opts)
{
	struct fuse_loop_config *cfg;
	int ret = 1;

	fs->se = fuse_session_new(args, &rs_ops, sizeof(rs_ops), fs);
	if (!fs->se)
		return 1;
	if (fuse_set_signal_handlers(fs->se) != 0)
		goto out_session;
	if (fuse_session_mount(fs->se, opts->mountpoint) != 0)
		goto out_signals;
	fuse_daemonize(opts->foreground);
	/* After fuse_daemonize(), which forks: the thread must be in the
	 * process that serves. */
	if (shifter_start(fs) != 0)
		goto out_unmount;
	if (opts->singlethread) {
		ret = fuse_session_loop(fs->se);
	} else {
		cfg = fuse_loop_cfg_create();
		if (cfg) {
			fuse_loop_cfg_set_clone_fd(cfg, opts->clone_fd);
			fuse_loop_cfg_set_max_threads(cfg, opts->max_threads);
			ret = fuse_session_loop_mt(fs->se, cfg);
			fuse_loop_cfg_destroy(cfg);
		}
	}
	ret = ret ? 1 : 0;
	shifter_stop(fs);
out_unmount:
	fuse_session_unmount(fs->se);
out_signals:
	fuse_remove_signal_handlers(fs->se);
out_session:
	fuse_session_destroy(fs->se);
	fs->se = NULL;
	return ret;
}

/* --help and --version; -1 if neither was asked for. */
static int help_or_version(const char *prog, const struct fuse_cmdline_opts *opts)
{
	if (opts->show_help) {
		usage(prog);
		printf("FUSE options:\n");
		fuse_cmdline_help();
		fuse_lowlevel_help();
		return 0;
	}
	if (opts->show_version) {
		printf("rangeshift-fusefs version %s (ioctl ABI version %u)\n",
		       RS_VERSION, RS_IDENT_VERSION);
		fflush(stdout);	/* before libfuse's lines, some from fusermount3 */
		fuse_lowlevel_version();
		return 0;
	}
	return -1;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts;
	struct conf conf = { 0 };
	struct fs fs;
	int ret = 1;

	memset(&fs, 0, sizeof(fs));
	if (fuse_parse_cmdline(&args, &opts) != 0)
		return 2;
	ret = help_or_version(argv[0], &opts);
	if (ret >= 0)
		goto out_args;
	if (!opts.mountpoint) {
		fprintf(stderr, "usage: %s MOUNTPOINT [-o profile=P,blocksize=N,size=BYTES] [-f] [-d]\n"
			"       %s --help\n", argv[0], argv[0]);
		ret = 2;
		goto out_args;
	}
	ret = 2;
	if (fuse_opt_parse(&args, &conf, rs_opts, NULL) == -1 ||
	    configure(&fs, &conf) < 0)
		goto out_conf;
	fs.conn_opts = fuse_parse_conn_info_opts(&args);
	if (!fs.conn_opts)
		goto out_conf;
	/* The kernel checks permissions (we keep no credentials logic), and
	 * /proc/mounts names the file system. */
	ret = 1;
	if (fuse_opt_add_arg(&args, "-odefault_permissions,fsname=rangeshift,subtype=rangeshift") == -1)
		goto out_conf;
	if (fs_init(&fs) == 0)
		ret = serve(&fs, &args, &opts);
	fs_fini(&fs);
out_conf:
	free(conf.profile);
	free(conf.blocksize);
	free(conf.size);
	free(conf.timeout);
	free(conf.keep_cache);
	free(fs.conn_opts);
out_args:
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	return ret;
}
