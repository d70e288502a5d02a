/* SPDX-License-Identifier: MIT */
/*
 * depth.c - on-disk checks while a target file system is unmounted (the
 * remount op, target.c): the real extent-tree depth of each test file,
 * read with debugfs (ext4: `dump_extents -n`, whose "L/ D" level column
 * gives the tree depth, eh_depth of the inode root) or xfs_db (XFS:
 * core.format and the in-inode bmbt root's level), and an fsck oracle:
 * `e2fsck -fn` / `xfs_repair -n`, whose nonzero verdict is a divergence of
 * kind "fsck" (on-disk corruption that the user-visible state can hide).
 *
 * The tools run as child processes with a timeout (every wait is bounded;
 * a tool that overruns is killed).  The parsers are pure functions over the
 * tools' text output, tested on captured output in tests/test_difftest.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dt.h"

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* argv in a child with stdout and stderr into a pipe: its pid (the read
 * end in *fd), or -errno. */
static pid_t start_tool(char *const argv[], int *fd)
{
	int pfd[2];

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(pfd[0]);
		close(pfd[1]);
		return -e;
	}
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	*fd = pfd[0];
	return pid;
}

/* Read once from fd into out (NUL-terminated, the rest dropped): the
 * read's result. */
static ssize_t read_some(int fd, char *out, size_t outn, size_t *len)
{
	char buf[4096];
	ssize_t r = read(fd, buf, sizeof(buf));
	if (r > 0 && outn) {
		size_t c = (size_t)r < outn - 1 - *len ? (size_t)r : outn - 1 - *len;
		memcpy(out + *len, buf, c);
		*len += c;
		out[*len] = 0;
	}
	return r;
}

int dt_run_tool(char *const argv[], int timeout_s, char *out, size_t outn)
{
	size_t len = 0;
	int fd = -1;

	if (outn)
		out[0] = 0;
	pid_t pid = start_tool(argv, &fd);
	if (pid < 0)
		return (int)pid;
	double end = mono() + timeout_s;
	int status = 0, done = 0, eof = 0, timed_out = 0;
	while (!done) {
		double left = end - mono();
		if (left <= 0) {
			kill(pid, SIGKILL);
			timed_out = 1;
			waitpid(pid, &status, 0);
			break;
		}
		if (!eof) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			int ms = left > 0.2 ? 200 : (int)(left * 1000) + 1;
			if (poll(&p, 1, ms) > 0 && read_some(fd, out, outn, &len) <= 0)
				eof = 1;
		} else {
			/* output closed, the tool still running: look again in
			 * 10 ms (bounded by the timeout above) */
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		if (waitpid(pid, &status, WNOHANG) == pid) {
			/* exited: drain what is left without blocking long */
			struct pollfd p = { .fd = fd, .events = POLLIN };
			while (!eof && poll(&p, 1, 100) > 0 && read_some(fd, out, outn, &len) > 0)
				;
			done = 1;
		}
	}
	close(fd);
	if (timed_out)
		return -ETIMEDOUT;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* debugfs `dump_extents -n <INO>` prints the interior (index) nodes:
 *     Level Entries       Logical      Physical Length Flags
 *      0/ 2   1/  1     0 - 4294967295 33293        4294967296
 * "L/ D": node level L of a tree of depth D (eh_depth of the root).  A
 * depth-0 tree has no index node and prints the header only (or nothing).
 * Returns D, 0 when there is no level line, -1 when the output is an error
 * (no header, e.g. "dump_extents: File not found by ext2_lookup"). */
int dt_parse_debugfs_depth(const char *out)
{
	int depth = -1, header = 0;
	const char *p = out;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char line[512];
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = 0;
		int l, d;
		char c;
		if (strstr(line, "Level") && strstr(line, "Entries"))
			header = 1;
		else if (sscanf(line, " %d/ %d %c", &l, &d, &c) == 3 && l >= 0 && d >= l &&
			 d < 64 && d > depth)
			depth = d;
		p = nl ? nl + 1 : NULL;
	}
	if (depth >= 0)
		return depth;
	return header ? 0 : -1;
}

/* value of "NAME = VALUE" in xfs_db print output, or -1 */
static long long xfs_field(const char *out, const char *name)
{
	size_t nl = strlen(name);
	for (const char *p = out; p && *p; ) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, name, nl) && p[nl] == ' ' && p[nl + 1] == '=') {
			char *end;
			long long v = strtoll(p + nl + 2, &end, 0);
			return end == p + nl + 2 ? -1 : v;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* xfs_db -c "inode N" -c "print core.format" -c "print u3.bmbt.level":
 *     core.format = 3 (btree)
 *     u3.bmbt.level = 1
 * XFS_DINODE_FMT_EXTENTS (2) and LOCAL (1) have no tree: depth 0; BTREE
 * (3): the in-inode root's level (1: the root points at leaves), the same
 * meaning as ext4's eh_depth.  *btree says whether the fork is a btree.
 * Returns -1 when core.format is missing (tool error). */
int dt_parse_xfs_db_depth(const char *out, int *btree)
{
	long long fmt = xfs_field(out, "core.format");

	*btree = 0;
	if (fmt < 0)
		return -1;
	if (fmt != 3)
		return 0;
	*btree = 1;
	long long lv = xfs_field(out, "u3.bmbt.level");
	if (lv < 0)
		lv = xfs_field(out, "u.bmbt.level");	/* v4 inodes */
	return lv < 0 || lv > 64 ? -1 : (int)lv;
}

/* e2fsck -n: 0 clean, 4 errors left uncorrected (1/2 cannot happen with
 * -n), 8 operational error, 16 usage, 32 cancelled; xfs_repair -n: 0 clean,
 * 1 corruption found, anything else an operational failure.
 * Returns 0 clean, 1 corruption, -1 the tool did not give a verdict. */
int dt_fsck_verdict(const char *fstype, int status)
{
	if (status == 0)
		return 0;
	if (!strcmp(fstype, "xfs"))
		return status == 1 ? 1 : -1;
	return status >= 0 && status < 8 && (status & 4 || status & 1 || status & 2) ? 1 : -1;
}

/* The first lines that say what is wrong (skip the pass banners). */
static void fsck_summary(const char *out, char *msg, size_t n)
{
	size_t len = strlen(msg);
	int lines = 0;

	for (const char *p = out; p && *p && lines < 4; ) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		int banner = !strncmp(p, "Pass ", 5) || !strncmp(p, "Phase ", 6) ||
			     !strncmp(p, "        - ", 10) || !strncmp(p, "e2fsck ", 7) ||
			     !strncmp(p, "Warning: skipping", 17) || l == 0 ||
			     !strncmp(p, "No modify flag", 14);
		if (!banner && len + l + 3 < n) {
			memcpy(msg + len, " | ", 3);
			memcpy(msg + len + 3, p, l);
			len += l + 3;
			msg[len] = 0;
			lines++;
		}
		p = nl ? nl + 1 : NULL;
	}
}

/* Called by dt_t_remount() between umount and mount. */
/* The tree depth of inode ino (debugfs or xfs_db): the depth (*bt: in
 * btree format) or -1 with t->depth_note saying why. */
static int measure_depth(struct dt_target *t, int isext4, uint64_t ino, int *bt, char *out,
			 size_t outn)
{
	char arg1[64];
	int d, rc;

	*bt = 0;
	if (isext4) {
		snprintf(arg1, sizeof(arg1), "dump_extents -n <%" PRIu64 ">", ino);
		char *av[] = { "debugfs", "-R", arg1, t->mnt_dev, NULL };
		rc = dt_run_tool(av, 60, out, outn);
		d = rc == 0 ? dt_parse_debugfs_depth(out) : -1;
		*bt = d > 0;
	} else {
		snprintf(arg1, sizeof(arg1), "inode %" PRIu64, ino);
		char *av[] = { "xfs_db", "-r", "-c", arg1, "-c", "print core.format", "-c",
			       "print u3.bmbt.level", t->mnt_dev, NULL };
		rc = dt_run_tool(av, 60, out, outn);
		d = rc >= 0 && rc != 127 ? dt_parse_xfs_db_depth(out, bt) : -1;
	}
	if (d < 0)
		snprintf(t->depth_note, sizeof(t->depth_note), "%s failed (%s): %.80s",
			 isext4 ? "debugfs" : "xfs_db",
			 rc == -ETIMEDOUT ? "timeout" : rc == 127 ? "not found" : "no depth", out);
	return d;
}

static void depth_checks(struct dt_target *t, int isext4, const uint64_t *ino,
			 const int64_t *runs, int n, char *out, size_t outn)
{
	double t0 = mono();
	int64_t most = t->depth_at_runs;

	for (int k = 0; k < n; k++) {
		int bt;
		/* The deepest tree is the goal, and depth grows with the
		 * extent count: a file with no more extents than one already
		 * measured is skipped (each debugfs or xfs_db run costs
		 * 0.1-0.2 s under TCG, most of a remount's cost in a long
		 * run). */
		if (t->depth_runs && runs[k] <= t->depth_at_runs)
			continue;
		if (runs[k] > most)
			most = runs[k];
		int d = measure_depth(t, isext4, ino[k], &bt, out, outn);
		if (d < 0)
			continue;
		t->depth_runs++;
		if (d > t->max_depth)
			t->max_depth = d;
		if (bt > t->max_btree)
			t->max_btree = bt;
	}
	t->depth_at_runs = most;
	t->depth_seconds += mono() - t0;
}

static void fsck_check(struct dt_target *t, int isext4, char *out, size_t outn)
{
	double t0 = mono();
	int to = t->fsck_timeout > 0 ? t->fsck_timeout : 300, rc;

	if (isext4) {
		char *av[] = { "e2fsck", "-fn", t->mnt_dev, NULL };
		rc = dt_run_tool(av, to, out, outn);
	} else {
		char *av[] = { "xfs_repair", "-n", t->mnt_dev, NULL };
		rc = dt_run_tool(av, to, out, outn);
	}
	t->fsck_seconds += mono() - t0;
	int v = rc < 0 || rc == 127 ? -1 : dt_fsck_verdict(t->mnt_type, rc);
	if (v == 1) {
		t->fsck_runs++;
		snprintf(t->fsck_msg, sizeof(t->fsck_msg), "%s %s %.200s exited %d:",
			 isext4 ? "e2fsck" : "xfs_repair", isext4 ? "-fn" : "-n", t->mnt_dev, rc);
		fsck_summary(out, t->fsck_msg, sizeof(t->fsck_msg));
	} else if (v == 0) {
		t->fsck_runs++;
	} else {
		t->fsck_errors++;
		snprintf(t->depth_note, sizeof(t->depth_note), "%s gave no verdict (%s)",
			 isext4 ? "e2fsck" : "xfs_repair",
			 rc == -ETIMEDOUT ? "timeout" : rc == 127 ? "not found" : "error");
	}
}

void dt_ondisk_checks(struct dt_target *t, const uint64_t *ino, const int64_t *runs, int n)
{
	int isxfs = !strcmp(t->mnt_type, "xfs"), isext4 = !strcmp(t->mnt_type, "ext4");
	const size_t outn = 65536;

	if (!isxfs && !isext4)
		return;
	char *out = malloc(outn);
	if (!out) {
		snprintf(t->depth_note, sizeof(t->depth_note), "no memory for the tools' output");
		return;
	}
	depth_checks(t, isext4, ino, runs, n, out, outn);
	if (t->fsck_now)
		fsck_check(t, isext4, out, outn);
	free(out);
}
