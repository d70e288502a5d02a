/* SPDX-License-Identifier: MIT */
/*
 * format.c - xfs_io's report lines: the "wrote/read N/M bytes at offset O"
 * pair with its number and time formatting, and pread -v's hex dump.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <time.h>

#include "internal.h"

/* ------------------------------------------------------------------ */
/* xfs_io's number and time formatting for the report lines. */

static int xfs_precise(double v)
{
	/* xfs_io tests value*1000 == (int)value*1000; (int) of a double out
	 * of int range yields INT_MIN on x86-64, which we spell out instead of
	 * relying on undefined behaviour. */
	double t;

	if (!(v < 2147483648.0 && v > -2147483649.0))
		t = (double)INT_MIN;
	else
		t = (double)(int)v;
	return v * 1000 == t * 1000;
}

static void xfs_cvtstr(double v, char *str, size_t size)
{
	static const struct {
		int shift;
		const char *unit;
	} units[] = {
		{ 60, "EiB" }, { 50, "PiB" }, { 40, "TiB" },
		{ 30, "GiB" }, { 20, "MiB" }, { 10, "KiB" },
	};
	int precise = xfs_precise(v);

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double unit = (double)(1LL << units[i].shift);

		if (v >= unit) {
			snprintf(str, size, precise ? "%.f %s" : "%.3f %s",
				 v / unit, units[i].unit);
			return;
		}
	}
	snprintf(str, size, "%f bytes", v);
}

static void xfs_timestr(int64_t usec, char *ts, size_t size)
{
	int64_t sec = usec / 1000000;
	double frac = (double)(usec % 1000000) / 1000000.0;

	if (sec)
		snprintf(ts, size, "%u:%02u:%02u.%02u",
			 (unsigned)(sec / 3600), (unsigned)(sec % 3600 / 60),
			 (unsigned)(sec % 60), (unsigned)(frac * 100));
	else
		snprintf(ts, size, "0.%04u sec", (unsigned)(frac * 10000));
}

int64_t rmcmd_now_usec(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

int64_t rmcmd_elapsed_usec(const struct rmcmd_session *s, int64_t t0)
{
	int64_t d;

	if (s->fixed_usec > 0)
		return s->fixed_usec;
	d = rmcmd_now_usec() - t0;
	/* A zero interval makes xfs_io print "inf"/"nan" rates; the model is
	 * fast enough to hit that often, so report at least 1 us. */
	return d > 0 ? d : 1;
}

void rmcmd_report_io(const struct rmcmd_session *s, const char *verb,
		      int64_t usec, int64_t offset, int64_t count,
		      int64_t total, long ops)
{
	char s1[64], s2[64], ts[64];
	double secs = (double)usec / 1000000.0;

	xfs_timestr(usec, ts, sizeof(ts));
	xfs_cvtstr((double)total, s1, sizeof(s1));
	xfs_cvtstr((double)total / secs, s2, sizeof(s2));
	fprintf(s->out, "%s %lld/%lld bytes at offset %lld\n", verb,
		(long long)total, (long long)count, (long long)offset);
	fprintf(s->out, "%s, %ld ops; %s (%s/sec and %.4f ops/sec)\n",
		s1, ops, ts, s2, (double)ops / secs);
}


/* xfs_io's rmcmd_dump_buffer(): 16 bytes a line, offset, hex, isalnum() text. */
void rmcmd_dump_buffer(FILE *out, int64_t offset, const unsigned char *p,
			ssize_t len)
{
	for (ssize_t i = 0; i < len; i += 16) {
		fprintf(out, "%08llx:  ", (unsigned long long)(offset + i));
		for (ssize_t j = 0; j < 16 && i + j < len; j++)
			fprintf(out, "%02x ", p[i + j]);
		fputc(' ', out);
		for (ssize_t j = 0; j < 16 && i + j < len; j++)
			fputc(isalnum(p[i + j]) ? p[i + j] : '.', out);
		fputc('\n', out);
	}
}
