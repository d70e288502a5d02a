/* SPDX-License-Identifier: MIT */
/*
 * fuzz_handlers.c - libFuzzer harness for rangeshift-fusefs's ioctl and
 * xattr handlers, in-process and without a mount: the input is a program
 * of calls (ioctl_call(), xattr_set/get/list/remove(), and writes to have
 * data to shift) on a regular file and a directory of a fresh struct fs
 * with a small capacity (so ENOSPC paths run too) and no FUSE session (so
 * no kernel is told anything).  Arguments come raw from the input: any
 * offsets, lengths, modes, reserved fields, buffer sizes, names.
 *
 * After every call, abort() if an invariant broke: a handler returned
 * something but 0/-errno (or a length beyond the buffer), the space
 * accounting drifted (used == the file's allocation, nothing left
 * reserved, used <= capacity), a FIEMAP page is out of order or outside
 * the range, the xattr byte count disagrees with the stored attributes, or
 * the map attribute cannot be produced.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "fs.h"
#include "rangeshift_fusefs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
	const uint8_t *p;
	size_t left;
};

static uint64_t take(struct input *in, size_t n)
{
	uint64_t v = 0;

	while (n-- && in->left) {
		v = (v << 8) | *in->p++;
		in->left--;
	}
	return v;
}

static void take_bytes(struct input *in, void *buf, size_t n)
{
	size_t k = n < in->left ? n : in->left;

	memset(buf, 0, n);
	memcpy(buf, in->p, k);
	in->p += k;
	in->left -= k;
}

/* A name: a prefix chosen by one byte (the namespaces, the map attribute,
 * system.*) and up to 15 input bytes. */
static void take_name(struct input *in, char *name, size_t cap)
{
	static const char *const pre[] = { "user.", "trusted.", "security.",
					   "system.", RS_XATTR_MAP, "", "user.a" };
	size_t n = take(in, 1) % 16, len, i;

	snprintf(name, cap, "%s", pre[take(in, 1) % 7]);
	len = strlen(name);
	for (i = 0; i < n && len + 1 < cap; i++) {
		char c = (char)take(in, 1);

		name[len++] = c ? c : 'z';
	}
	name[len] = 0;
}

static void check_space(struct fs *fs, struct node *f)
{
	struct rm_stats st;

	rm_stats(f->file, &st);
	if (fs->reserved != 0 || fs->used != f->alloc || f->alloc != st.alloc_bytes ||
	    fs->used > fs->capacity)
		abort();
}

static void check_xattrs(struct node *n)
{
	size_t i, total = 0;

	for (i = 0; i < n->nxattrs; i++)
		total += strlen(n->xattrs[i].name) + 1 + n->xattrs[i].size;
	if (total != n->xattr_bytes || total > 65536)
		abort();
}

static void check_fiemap(const struct rs_ioc_fiemap *fm, int64_t start)
{
	int64_t prev = -1;
	uint32_t i;

	if (fm->count > RS_FIEMAP_MAX || fm->mapped < fm->count)
		abort();
	for (i = 0; i < fm->count; i++) {
		const struct rs_fiemap_extent *e = &fm->ext[i];

		if (e->length <= 0 || e->logical < prev ||
		    e->logical + e->length <= start)
			abort();
		prev = e->logical + e->length;
	}
}

static int do_ioctl(struct fs *fs, struct node *n, struct input *in)
{
	static const unsigned int cmds[] = { RS_IOC_INSERT, RS_IOC_COLLAPSE,
		RS_IOC_FALLOCATE, RS_IOC_FIEMAP, RS_IOC_IDENT, 0xdeadbeef };
	unsigned int cmd = cmds[take(in, 1) % 6];
	int oflags = (take(in, 1) & 1) ? O_RDWR : O_RDONLY;
	struct rs_ioc_fiemap *fm = calloc(2, sizeof(*fm));
	size_t insz, outsz;
	int ret;

	if (!fm)
		return 0;
	take_bytes(in, fm, cmd == RS_IOC_FIEMAP ? 24 : sizeof(struct rs_ioc_range));
	insz = cmd == RS_IOC_FIEMAP ? sizeof(*fm) :
	       cmd == RS_IOC_IDENT ? 0 : sizeof(struct rs_ioc_range);
	outsz = cmd == RS_IOC_FIEMAP ? sizeof(*fm) :
		cmd == RS_IOC_IDENT ? sizeof(struct rs_ioc_ident) : 0;
	if ((take(in, 1) & 7) == 0) {		/* a wrong size now and then */
		insz = take(in, 2) % (2 * sizeof(*fm));
		outsz = take(in, 2) % (2 * sizeof(*fm));
	}
	ret = ioctl_call(fs, n, cmd, oflags, take(in, 1) & 1, fm, insz, fm, outsz);
	if (ret > (int)outsz || (ret < 0 && ret < -4095))
		abort();
	if (cmd == RS_IOC_FIEMAP && ret > 0)
		check_fiemap(fm, fm->start);
	free(fm);
	return ret;
}

static void do_xattr(struct node *n, struct input *in)
{
	char name[300], *buf;
	size_t len, size = take(in, 2) % 70000;
	int op = (int)(take(in, 1) % 4), flags = (int)(take(in, 1) % 5), ret;

	take_name(in, name, sizeof(name));
	buf = calloc(1, size + 1);
	if (!buf)
		return;
	switch (op) {
	case 0:
		take_bytes(in, buf, size);
		ret = xattr_set(n, name, buf, size, flags);
		break;
	case 1:
		ret = xattr_get(n, name, buf, size, &len);
		if (ret == 0 && size && len > size)
			abort();
		break;
	case 2:
		ret = xattr_list(n, buf, size, &len);
		if (ret == 0 && size && len > size)
			abort();
		break;
	default:
		ret = xattr_remove(n, name);
	}
	if (ret > 0 || ret < -4095)
		abort();
	free(buf);
}

static void do_write(struct fs *fs, struct node *f, struct input *in)
{
	int64_t off = (int64_t)(take(in, 4) & 0x3fffff);
	size_t len = take(in, 2) % 20000;
	char *buf = calloc(1, len + 1);
	int64_t need;

	if (!buf)
		return;
	need = holes_in(f->file, off, (int64_t)len);
	if (reserve(fs, need) == 0) {
		rm_pwrite(f->file, buf, len, off);
		account(fs, f);
		unreserve(fs, need);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct fs fs;
	struct node *dir, *f;
	size_t len, steps = 0;

	memset(&fs, 0, sizeof(fs));
	fs.opts.profile = (enum rm_profile)(take(&in, 1) % 3);
	fs.opts.blocksize = 4096;
	fs.capacity = 1 << 20;
	fs.timeout = 1;
	pthread_rwlock_init(&fs.ns, NULL);
	pthread_mutex_init(&fs.space, NULL);
	pthread_mutex_init(&fs.list, NULL);
	fs.all.next = fs.all.prev = &fs.all;
	dir = node_new(&fs, S_IFDIR | 0755, 0, 0);
	f = node_new(&fs, S_IFREG | 0644, 0, 0);
	if (!dir || !f)
		abort();
	fs.root = dir;
	while (in.left && steps++ < 64) {
		struct node *n = (take(&in, 1) & 15) == 0 ? dir : f;

		switch (take(&in, 1) % 3) {
		case 0:
			do_ioctl(&fs, n, &in);
			break;
		case 1:
			pthread_mutex_lock(&n->lock);
			do_xattr(n, &in);
			pthread_mutex_unlock(&n->lock);
			check_xattrs(n);
			break;
		default:
			do_write(&fs, f, &in);
		}
		check_space(&fs, f);
	}
	pthread_mutex_lock(&f->lock);
	steps = (size_t)-xattr_get(f, RS_XATTR_MAP, NULL, 0, &len);
	if (steps != 0 && steps != E2BIG)	/* E2BIG: map over 64 KiB */
		abort();
	pthread_mutex_unlock(&f->lock);
	while (fs.all.next != &fs.all)
		node_free(&fs, fs.all.next);
	pthread_rwlock_destroy(&fs.ns);
	pthread_mutex_destroy(&fs.space);
	pthread_mutex_destroy(&fs.list);
	return 0;
}
