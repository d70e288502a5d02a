/* SPDX-License-Identifier: MIT */
/*
 * xattr.c - extended attributes of rangeshift-fusefs: user., trusted. and
 * security. names stored per inode (at most XATTR_TOTAL_MAX bytes of names
 * and values, ENOSPC beyond, as ext4 without ea_inode), system.* refused
 * (no POSIX ACLs), and the read-only virtual attribute RS_XATTR_MAP: the
 * file's block map as text.  The xattr_* functions take the node and plain
 * buffers (callable without a FUSE request); rs_* are the FUSE glue.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "fs.h"
#include "rangeshift_fusefs.h"
#include "rm_vec.h"

#define XATTR_TOTAL_MAX	65536		/* per inode: names + values */
#define MAP_XATTR_MAX	65536		/* XATTR_SIZE_MAX */

/* ---------------------------------------------------------------- xattrs */

static int xattr_ns_ok(const char *name)
{
	if (strcmp(name, RS_XATTR_MAP) == 0)
		return -EPERM;		/* read-only, virtual */
	if (strncmp(name, "user.", 5) == 0 || strncmp(name, "trusted.", 8) == 0 ||
	    strncmp(name, "security.", 9) == 0)
		return 0;
	/* system.* (POSIX ACLs) and unknown namespaces: not supported, which
	 * the kernel and tools read as "no ACL". */
	return -EOPNOTSUPP;
}

static struct xattr *xattr_find(struct node *n, const char *name)
{
	size_t i;

	for (i = 0; i < n->nxattrs; i++)
		if (strcmp(n->xattrs[i].name, name) == 0)
			return &n->xattrs[i];
	return NULL;
}

/* The attribute name of n, for reading or removing it: 0 and *out, or
 * -errno (xattr_ns_ok()'s, -ENODATA when n has none of that name). */
static int xattr_lookup(struct node *n, const char *name, struct xattr **out)
{
	int err = xattr_ns_ok(name);

	if (err)
		return err;
	*out = xattr_find(n, name);
	return *out ? 0 : -ENODATA;
}

/* A new, empty attribute called name at the end of n's array. */
static struct xattr *xattr_add(struct node *n, const char *name)
{
	char *nm = strdup(name);
	struct xattr *x;

	if (!nm || RM_VEC_RESERVE(&n->xattrs, &n->xattr_cap, n->nxattrs + 1, 4)) {
		free(nm);
		return NULL;
	}
	x = &n->xattrs[n->nxattrs++];
	x->name = nm;
	x->value = NULL;
	x->size = 0;
	return x;
}

/* setxattr(2) on n (n->lock held); 0 or -errno, and nothing changed on
 * error. */
int xattr_set(struct node *n, const char *name, const void *value,
	      size_t size, int flags)
{
	struct xattr *x;
	size_t total;
	void *copy;
	int err;

	err = xattr_ns_ok(name);
	if (err)
		return err;
	if (flags & ~(XATTR_CREATE | XATTR_REPLACE))
		return -EINVAL;
	if (strlen(name) > NAME_MAX_LEN)
		return -ERANGE;
	x = xattr_find(n, name);
	if (x && (flags & XATTR_CREATE))
		return -EEXIST;
	if (!x && (flags & XATTR_REPLACE))
		return -ENODATA;
	total = n->xattr_bytes + size + (x ? 0 : strlen(name) + 1) - (x ? x->size : 0);
	if (total > XATTR_TOTAL_MAX)
		return -ENOSPC;		/* ext4: no room in inode or block */
	copy = malloc(size ? size : 1);
	if (!copy)
		return -ENOMEM;
	if (size)
		memcpy(copy, value, size);
	if (!x)
		x = xattr_add(n, name);
	if (!x) {
		free(copy);
		return -ENOMEM;
	}
	free(x->value);
	x->value = copy;
	x->size = size;
	n->xattr_bytes = total;
	now(&n->ctime);
	return 0;
}

void rs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		 const char *value, size_t size, int flags)
{
	struct node *n = N(req, ino);
	int err;

	pthread_mutex_lock(&n->lock);
	err = xattr_set(n, name, value, size, flags);
	pthread_mutex_unlock(&n->lock);
	fuse_reply_err(req, -err);
}

struct mapbuf {
	char *buf;
	size_t len, cap;
	int err;
};

static void mb_printf(struct mapbuf *mb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (mb->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(mb->buf + mb->len, mb->cap - mb->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= mb->cap - mb->len)
		mb->err = -E2BIG;	/* map larger than an xattr can be */
	else
		mb->len += (size_t)n;
}

static const char *state_name(unsigned s)
{
	return s == RM_HOLE ? "hole" : s == RM_UNWRITTEN ? "unwritten" : "data";
}

static int map_run(void *ctx, const struct rm_run *run)
{
	struct mapbuf *mb = ctx;

	mb_printf(mb, "%" PRId64 " %" PRId64 " %s", run->off, run->len,
		  state_name(run->state));
	if (run->may != run->state) {
		const char *sep = " may=";
		unsigned s;

		for (s = RM_HOLE; s <= RM_DATA; s <<= 1)
			if (run->may & s) {
				mb_printf(mb, "%s%s", sep, state_name(s));
				sep = ",";
			}
	}
	mb_printf(mb, "\n");
	return mb->err;
}

/* The text of RS_XATTR_MAP (n->lock held). */
static int map_text(const struct node *n, struct mapbuf *mb)
{
	struct rm_stats st;
	int err;

	mb->cap = MAP_XATTR_MAX;
	mb->len = 0;
	mb->err = 0;
	mb->buf = malloc(mb->cap);
	if (!mb->buf)
		return -ENOMEM;
	rm_stats(n->file, &st);
	mb_printf(mb, "# profile %s blocksize %u size %" PRId64 " alloc %" PRId64 "\n",
		  rm_profile_name(rm_profile_of(n->file)), rm_blocksize(n->file),
		  st.size, st.alloc_bytes);
	err = rm_walk(n->file, 0, rm_map_end(n->file), map_run, mb);
	if (err == 0)
		err = mb->err;
	if (err) {
		free(mb->buf);
		mb->buf = NULL;
	}
	return err;
}

/* Copy val (len bytes) out as getxattr(2) does: size 0 asks for the
 * length only, a short buffer is ERANGE. */
static int copy_out(const void *val, size_t len, void *buf, size_t size,
		    size_t *outlen)
{
	*outlen = len;
	if (size == 0)
		return 0;
	if (size < len)
		return -ERANGE;
	if (len)
		memcpy(buf, val, len);
	return 0;
}

/* getxattr(2) on n (n->lock held): the value into buf (size bytes, or
 * size 0 for the length alone), its length in *len; 0 or -errno. */
int xattr_get(struct node *n, const char *name, void *buf, size_t size,
	      size_t *len)
{
	struct mapbuf mb = { 0 };
	struct xattr *x;
	int err;

	*len = 0;
	if (strcmp(name, RS_XATTR_MAP) == 0) {
		if (!n->file)
			return -ENODATA;
		err = map_text(n, &mb);
		if (!err)
			err = copy_out(mb.buf, mb.len, buf, size, len);
		free(mb.buf);
		return err;
	}
	err = xattr_lookup(n, name, &x);
	if (err)
		return err;
	return copy_out(x->value, x->size, buf, size, len);
}

/* The reply of getxattr(2) and listxattr(2): a size probe (size 0) gets the
 * length, else the bytes.  xattr_get() (or xattr_list() when @name is
 * NULL) runs under n->lock. */
static void reply_xattr_bytes(fuse_req_t req, fuse_ino_t ino, const char *name,
			      size_t size)
{
	struct node *n = N(req, ino);
	char *buf = size ? malloc(size) : NULL;
	size_t len;
	int err;

	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&n->lock);
	err = name ? xattr_get(n, name, buf, size, &len) : xattr_list(n, buf, size, &len);
	pthread_mutex_unlock(&n->lock);
	if (err)
		fuse_reply_err(req, -err);
	else if (size == 0)
		fuse_reply_xattr(req, len);
	else
		fuse_reply_buf(req, buf, len);
	free(buf);
}

void rs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	reply_xattr_bytes(req, ino, name, size);
}

/* listxattr(2) on n (n->lock held), as xattr_get(); the virtual map
 * attribute is never listed. */
int xattr_list(struct node *n, char *buf, size_t size, size_t *len)
{
	size_t i, total = 0;

	for (i = 0; i < n->nxattrs; i++)
		total += strlen(n->xattrs[i].name) + 1;
	*len = total;
	if (size == 0)
		return 0;
	if (size < total)
		return -ERANGE;
	for (i = 0; i < n->nxattrs; i++) {
		size_t l = strlen(n->xattrs[i].name) + 1;

		memcpy(buf, n->xattrs[i].name, l);
		buf += l;
	}
	return 0;
}

void rs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	reply_xattr_bytes(req, ino, NULL, size);
}

/* removexattr(2) on n (n->lock held); 0 or -errno. */
int xattr_remove(struct node *n, const char *name)
{
	struct xattr *x;
	size_t i;
	int err;

	err = xattr_lookup(n, name, &x);
	if (err)
		return err;
	i = (size_t)(x - n->xattrs);
	n->xattr_bytes -= x->size + strlen(x->name) + 1;
	free(x->name);
	free(x->value);
	memmove(x, x + 1, (n->nxattrs - i - 1) * sizeof(*x));
	n->nxattrs--;
	now(&n->ctime);
	return 0;
}

void rs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct node *n = N(req, ino);
	int err;

	pthread_mutex_lock(&n->lock);
	err = xattr_remove(n, name);
	pthread_mutex_unlock(&n->lock);
	fuse_reply_err(req, -err);
}
