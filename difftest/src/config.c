/* SPDX-License-Identifier: MIT */
/*
 * config.c - configurations of the guest file systems (config.h): parse and
 * check a target's configuration, render it for mkfs, mount, the fusefs
 * server and the report, and group targets into guest boots.
 *
 * What each key means and why some are refused:
 *   ext4  bs=1024|2048|4096       mkfs.ext4 -b; below the page size the page
 *                                 cache works on pages of several blocks
 *         data=ordered|journal|writeback   mount -o data=
 *         nodelalloc              mount -o nodelalloc (blocks allocated at
 *                                 write time instead of at write-back)
 *         bigalloc                refused: ext4 then allocates, punches and
 *                                 shifts whole clusters (ext4_collapse_range()
 *                                 and ext4_insert_range() check
 *                                 EXT4_CLUSTER_SIZE alignment; partial
 *                                 clusters stay allocated after a punch,
 *                                 ext4_ext_remove_space()), and the model
 *                                 allocates per block
 *   xfs   bs=1024|2048|4096       mkfs.xfs -b size=
 *         reflink=0|1             mkfs.xfs -m reflink= (1 is mkfs's default)
 *         rmapbt=0|1              mkfs.xfs -m rmapbt=
 *   fusefs [ext4|xfs]             the server's profile (ext4 by default)
 *         bs=1024|2048|4096       its block size (-o blocksize=)
 *         auto_inval_data=0|1     FUSE_AUTO_INVAL_DATA (-o auto_inval_data;
 *                                 0, the server's default): with it a
 *                                 read after a new mtime drops the file's
 *                                 cached pages (fuse_change_attributes()),
 *                                 which can hide a missing invalidation
 *                                 of the kernel's own, depending on clock
 *                                 ticks (fusefs/src/main.c)
 *   any   free=SIZE               (k, m, g suffixes) a filler file leaves
 *                                 SIZE bytes free before the run (nearly
 *                                 full: ENOSPC is checked, exec.c); not a
 *                                 mkfs or mount option, but two targets
 *                                 of one file system share its free space,
 *                                 so it is part of the configuration
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static const char *const fsnames[] = { "ext4", "xfs", "fusefs" };
static const char *const datanames[] = { "ordered", "journal", "writeback" };

const char *dt_config_fsname(int fs)
{
	return fs >= 0 && fs < 3 ? fsnames[fs] : "?";
}

const char *dt_config_mnt(const struct dt_config *c)
{
	static const char *const mnts[] = { "/mnt/ext4", "/mnt/xfs", "/mnt/fusefs" };
	return mnts[c->fs];
}

int dt_config_default(const char *fs, struct dt_config *c)
{
	memset(c, 0, sizeof(*c));
	c->bs = 4096;
	c->data = DT_DATA_ORDERED;
	c->reflink = 1;
	c->rmapbt = 0;
	c->profile = DT_CFS_EXT4;
	c->auto_inval = 0;
	for (int i = 0; i < 3; i++)
		if (!strcmp(fs, fsnames[i])) {
			c->fs = i;
			return 0;
		}
	return -EINVAL;
}

int dt_config_is_default(const struct dt_config *c)
{
	struct dt_config d;
	dt_config_default(fsnames[c->fs], &d);
	return c->bs == d.bs && c->data == d.data && c->nodelalloc == d.nodelalloc &&
	       c->reflink == d.reflink && c->rmapbt == d.rmapbt && c->profile == d.profile &&
	       c->auto_inval == d.auto_inval && c->free == d.free;
}

/* "0" or "1" into *v. */
static int parse_bool(const char *val, int *v)
{
	if (!val || (strcmp(val, "0") && strcmp(val, "1")))
		return -EINVAL;
	*v = val[0] == '1';
	return 0;
}

/* One KEY[=VALUE] of fs's options; seen[] marks keys already given (a key
 * twice is a contradiction even with the same value: say it once). */
static int parse_opt(struct dt_config *c, char *opt, unsigned *seen, const char *spec,
		     char *err, size_t errn)
{
	char *val = strchr(opt, '=');
	const char *fs = fsnames[c->fs];
	unsigned bit;

	if (val)
		*val++ = 0;
	if (!strcmp(opt, "bs") || !strcmp(opt, "blocksize")) {
		bit = 1;
		char *end;
		unsigned long b = val ? strtoul(val, &end, 10) : 0;
		if (!val || !*val || *end || (b != 1024 && b != 2048 && b != 4096)) {
			snprintf(err, errn, "%s: bad block size '%s' for %s (1024, 2048 or 4096: "
				 "above the 4 KiB page size 6.1 cannot mount it)", spec,
				 val ? val : "", fs);
			return -EINVAL;
		}
		c->bs = (uint32_t)b;
	} else if (!strcmp(opt, "free")) {
		bit = 32;
		char *end;
		unsigned long long v = val ? strtoull(val, &end, 10) : 0;
		int sh = !val || !*val ? -1 : !*end ? 0 : end[1] ? -1 :
			 *end == 'k' ? 10 : *end == 'm' ? 20 : *end == 'g' ? 30 : -1;
		if (sh < 0 || v == 0 || v > (1ull << 40) >> sh || val[0] == '-') {
			snprintf(err, errn, "%s: bad free space '%s' (bytes left free, > 0, "
				 "suffixes k m g)", spec, val ? val : "");
			return -EINVAL;
		}
		c->free = (int64_t)(v << sh);
	} else if (c->fs == DT_CFS_EXT4 && !strcmp(opt, "data")) {
		bit = 2;
		int k = 0;
		while (k < 3 && (!val || strcmp(val, datanames[k])))
			k++;
		if (k == 3) {
			snprintf(err, errn, "%s: bad data mode '%s' (ordered, journal or writeback)",
				 spec, val ? val : "");
			return -EINVAL;
		}
		c->data = k;
	} else if (c->fs == DT_CFS_EXT4 && !strcmp(opt, "nodelalloc") && !val) {
		bit = 4;
		c->nodelalloc = 1;
	} else if (c->fs == DT_CFS_EXT4 && !strcmp(opt, "bigalloc")) {
		snprintf(err, errn, "%s: bigalloc is not supported: ext4 then allocates, punches "
			 "and shifts whole clusters (ext4_insert_range() and ext4_collapse_range() "
			 "want cluster-aligned ranges, a punch keeps partial clusters), and the "
			 "model allocates per block", spec);
		return -EINVAL;
	} else if (c->fs == DT_CFS_XFS && (!strcmp(opt, "reflink") || !strcmp(opt, "rmapbt"))) {
		int *v = opt[0] == 'r' && opt[1] == 'e' ? &c->reflink : &c->rmapbt;
		bit = v == &c->reflink ? 8 : 16;
		if (parse_bool(val, v)) {
			snprintf(err, errn, "%s: %s wants 0 or 1, not '%s'", spec, opt,
				 val ? val : "");
			return -EINVAL;
		}
	} else if (c->fs == DT_CFS_FUSEFS && !strcmp(opt, "auto_inval_data")) {
		bit = 64;
		if (parse_bool(val, &c->auto_inval)) {
			snprintf(err, errn, "%s: %s wants 0 or 1, not '%s'", spec, opt,
				 val ? val : "");
			return -EINVAL;
		}
	} else {
		snprintf(err, errn, "%s: unknown %s option '%s' (difftest --configs lists them)",
			 spec, fs, opt);
		return -EINVAL;
	}
	if (*seen & bit) {
		snprintf(err, errn, "%s: '%s' given twice", spec, opt);
		return -EINVAL;
	}
	*seen |= bit;
	return 0;
}

int dt_config_parse(const char *spec, struct dt_config *c, char *err, size_t errn)
{
	char copy[256];
	if (strlen(spec) >= sizeof(copy)) {
		snprintf(err, errn, "configuration '%.40s...' too long", spec);
		return -EINVAL;
	}
	snprintf(copy, sizeof(copy), "%s", spec);
	char *opts = strchr(copy, ':');
	if (opts)
		*opts++ = 0;
	if (dt_config_default(copy, c))
		return 1;
	if (c->fs == DT_CFS_FUSEFS && opts) {
		/* fusefs:xfs[:OPTS], fusefs:ext4[:OPTS], fusefs:OPTS */
		char *rest = strchr(opts, ':');
		if (rest)
			*rest = 0;
		if (!strcmp(opts, "xfs") || !strcmp(opts, "ext4")) {
			c->profile = opts[0] == 'x' ? DT_CFS_XFS : DT_CFS_EXT4;
			opts = rest ? rest + 1 : NULL;
		} else if (rest) {
			snprintf(err, errn, "%s: unknown fusefs profile '%s' (ext4 or xfs)", spec, opts);
			return -EINVAL;
		}
	}
	if (opts && !*opts) {
		snprintf(err, errn, "%s: empty option list", spec);
		return -EINVAL;
	}
	unsigned seen = 0;
	for (char *o = opts, *next; o; o = next) {
		next = strchr(o, ',');
		if (next)
			*next++ = 0;
		if (!*o) {
			snprintf(err, errn, "%s: empty option", spec);
			return -EINVAL;
		}
		int rc = parse_opt(c, o, &seen, spec, err, errn);
		if (rc)
			return rc;
	}
	return 0;
}

void dt_config_name(const struct dt_config *c, char *buf, size_t n)
{
	size_t k = (size_t)snprintf(buf, n, "%s", fsnames[c->fs]);
	char sep = ':';
#define ADD(...) do { if (k < n) k += (size_t)snprintf(buf + k, n - k, __VA_ARGS__); } while (0)
	if (c->fs == DT_CFS_FUSEFS && c->profile == DT_CFS_XFS)
		ADD(":xfs");
	if (c->bs != 4096) {
		ADD("%cbs=%u", sep, c->bs);
		sep = ',';
	}
	if (c->fs == DT_CFS_EXT4 && c->data != DT_DATA_ORDERED) {
		ADD("%cdata=%s", sep, datanames[c->data]);
		sep = ',';
	}
	if (c->fs == DT_CFS_EXT4 && c->nodelalloc) {
		ADD("%cnodelalloc", sep);
		sep = ',';
	}
	if (c->fs == DT_CFS_XFS && !c->reflink) {
		ADD("%creflink=0", sep);
		sep = ',';
	}
	if (c->fs == DT_CFS_XFS && c->rmapbt) {
		ADD("%crmapbt=1", sep);
		sep = ',';
	}
	if (c->fs == DT_CFS_FUSEFS && c->auto_inval) {
		ADD("%cauto_inval_data=1", sep);
		sep = ',';
	}
	if (c->free) {
		int64_t v = c->free;
		const char *u = "";
		if (!(v & ((1 << 30) - 1))) { v >>= 30; u = "g"; }
		else if (!(v & ((1 << 20) - 1))) { v >>= 20; u = "m"; }
		else if (!(v & ((1 << 10) - 1))) { v >>= 10; u = "k"; }
		ADD("%cfree=%lld%s", sep, (long long)v, u);
	}
#undef ADD
}

void dt_config_mkfs(const struct dt_config *c, char *buf, size_t n)
{
	if (c->fs == DT_CFS_EXT4)
		snprintf(buf, n, "-b %u", c->bs);
	else if (c->fs == DT_CFS_XFS)
		snprintf(buf, n, "-b size=%u%s%s", c->bs, c->reflink ? "" : " -m reflink=0",
			 !c->rmapbt ? "" : c->reflink ? " -m rmapbt=1" : ",rmapbt=1");
	else
		snprintf(buf, n, "%s", "");
}

void dt_config_mount(const struct dt_config *c, char *buf, size_t n)
{
	buf[0] = 0;
	if (c->fs != DT_CFS_EXT4 || !n)
		return;
	snprintf(buf, n, "%s%s%s", c->data == DT_DATA_ORDERED ? "" : "data=",
		 c->data == DT_DATA_ORDERED ? "" : datanames[c->data],
		 !c->nodelalloc ? "" : c->data == DT_DATA_ORDERED ? "nodelalloc" : ",nodelalloc");
}

void dt_config_fusefs(const struct dt_config *c, char *buf, size_t n)
{
	buf[0] = 0;
	if (c->fs != DT_CFS_FUSEFS || !n)
		return;
	size_t k = 0;
	const char *sep = "";
#define ADD(...) do { if (k < n) k += (size_t)snprintf(buf + k, n - k, __VA_ARGS__); sep = ","; } while (0)
	if (c->profile == DT_CFS_XFS)
		ADD("profile=xfs-6.1");
	if (c->bs != 4096)
		ADD("%sblocksize=%u", sep, c->bs);
	if (c->auto_inval)
		ADD("%sauto_inval_data", sep);
#undef ADD
}

/* Whether the comma-separated list opts holds the option o. */
static int has_opt(const char *opts, const char *o)
{
	size_t l = strlen(o);
	for (const char *p = opts; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, o, l) && (p[l] == ',' || !p[l]))
			return 1;
	return 0;
}

int dt_config_check_mount(const struct dt_config *c, uint32_t f_bsize, const char *mnt_opts,
			  char *err, size_t errn)
{
	char name[128];
	dt_config_name(c, name, sizeof(name));
	if (c->fs != DT_CFS_FUSEFS && f_bsize != c->bs) {
		snprintf(err, errn, "target %s: %s has %u-byte blocks, not %u (boot the guest "
			 "with this configuration: difftest-vm does)", name, dt_config_mnt(c),
			 f_bsize, c->bs);
		return -EINVAL;
	}
	if (c->fs != DT_CFS_EXT4)
		return 0;
	int journal = has_opt(mnt_opts, "data=journal"), wb = has_opt(mnt_opts, "data=writeback");
	int data = journal ? DT_DATA_JOURNAL : wb ? DT_DATA_WRITEBACK : DT_DATA_ORDERED;
	/* data=journal turns delayed allocation off by itself
	 * (ext4_fill_super(): "delalloc" and data=journal exclude each other) */
	int nodelalloc = has_opt(mnt_opts, "nodelalloc");
	if (data != c->data || (c->data != DT_DATA_JOURNAL && nodelalloc != c->nodelalloc)) {
		snprintf(err, errn, "target %s: %s is mounted with '%s' (boot the guest with this "
			 "configuration: difftest-vm does)", name, dt_config_mnt(c), mnt_opts);
		return -EINVAL;
	}
	return 0;
}

void dt_config_list(FILE *f)
{
	fputs("Configurations: -t FS[:OPTION,...] (options in any order, each once)\n"
	      "  ext4[:OPTS]        bs=1024|2048|4096  mkfs.ext4 -b (default 4096)\n"
	      "                     data=ordered|journal|writeback  mount -o data= (ordered)\n"
	      "                     nodelalloc  mount -o nodelalloc\n"
	      "                     (bigalloc: refused, the model allocates per block)\n"
	      "  xfs[:OPTS]         bs=1024|2048|4096  mkfs.xfs -b size= (4096)\n"
	      "                     reflink=0|1  mkfs.xfs -m reflink= (1)\n"
	      "                     rmapbt=0|1   mkfs.xfs -m rmapbt= (0)\n"
	      "  fusefs[:PROFILE][:OPTS]  PROFILE ext4 (default) or xfs: the server's rules\n"
	      "                     bs=1024|2048|4096  its block size (4096)\n"
	      "                     auto_inval_data=0|1  FUSE_AUTO_INVAL_DATA (0): 1 runs the\n"
	      "                     server -o auto_inval_data (a read after a new mtime drops\n"
	      "                     the file's cached pages)\n"
	      "  any of them        free=SIZE  (k m g) a filler file leaves SIZE bytes free before\n"
	      "                     the run: allocating ops meet ENOSPC, which is checked\n"
	      "Examples: ext4:bs=1024  ext4:data=journal  ext4:bs=2048,nodelalloc\n"
	      "          xfs:bs=1024  xfs:reflink=0  xfs:rmapbt=1  fusefs:xfs:bs=1024\n"
	      "          fusefs:auto_inval_data=1\n"
	      "A guest boots with one configuration per file system: difftest-vm boots once\n"
	      "per set of targets that fits (difftest --boot-plan -t ... prints the plan).\n", f);
}

static int same_config(const struct dt_config *a, const struct dt_config *b)
{
	return a->fs == b->fs && a->bs == b->bs && a->data == b->data &&
	       a->nodelalloc == b->nodelalloc && a->reflink == b->reflink &&
	       a->rmapbt == b->rmapbt && a->profile == b->profile &&
	       a->auto_inval == b->auto_inval && a->free == b->free;
}

int dt_config_plan(const char *const *specs, int n, struct dt_plan_boot *boots, int *nboots,
		   char *err, size_t errn)
{
	*nboots = 0;
	if (n > DT_PLAN_MAX) {
		snprintf(err, errn, "more than %d targets", DT_PLAN_MAX);
		return -EINVAL;
	}
	memset(boots, 0, sizeof(*boots) * DT_PLAN_MAX);
	for (int i = 0; i < n; i++) {
		struct dt_config c;
		int rc = dt_config_parse(specs[i], &c, err, errn);
		if (rc < 0)
			return rc;
		int b = 0;
		if (rc == 0) {
			/* the first boot whose fs slot is free or holds the same configuration;
			 * the same target twice is one target, given twice */
			while (b < *nboots && boots[b].has[c.fs] && !same_config(&boots[b].cfg[c.fs], &c))
				b++;
		}
		if (b == *nboots) {
			if (*nboots == DT_PLAN_MAX) {
				snprintf(err, errn, "too many boots");
				return -EINVAL;
			}
			(*nboots)++;
		}
		if (rc == 0) {
			boots[b].has[c.fs] = 1;
			boots[b].cfg[c.fs] = c;
		}
		boots[b].targets[boots[b].ntargets++] = i;
	}
	return 0;
}

void dt_config_plan_print(FILE *f, const struct dt_plan_boot *b, const char *const *specs)
{
	char me[64] = "", mo[64] = "", mx[96] = "", mox[64] = "", fo[96] = "";
	if (b->has[DT_CFS_EXT4]) {
		dt_config_mkfs(&b->cfg[DT_CFS_EXT4], me, sizeof(me));
		dt_config_mount(&b->cfg[DT_CFS_EXT4], mo, sizeof(mo));
	}
	if (b->has[DT_CFS_XFS]) {
		dt_config_mkfs(&b->cfg[DT_CFS_XFS], mx, sizeof(mx));
		dt_config_mount(&b->cfg[DT_CFS_XFS], mox, sizeof(mox));
	}
	if (b->has[DT_CFS_FUSEFS])
		dt_config_fusefs(&b->cfg[DT_CFS_FUSEFS], fo, sizeof(fo));
	fprintf(f, "%s|%s|%s|%s|%s|", me, mo, mx, mox, fo);
	for (int i = 0; i < b->ntargets; i++)
		fprintf(f, "%s%s", i ? " " : "", specs[b->targets[i]]);
	fputc('\n', f);
}
