/* SPDX-License-Identifier: MIT */
/*
 * harness.c - see harness.h.  The server binary comes from RS_SERVER (set
 * by CMake to the build's rangeshift-fusefs); RS_SERVER_ENV in the
 * environment may override it (to run the tests against another build).
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rangeshift_fusefs.h"

extern char **environ;

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void poll_pause(void)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

static const char *server_path(void)
{
	const char *env = getenv("RS_SERVER_ENV");

	return env && *env ? env : RS_SERVER;
}

int mnt_can_run(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "skip: mount tests need root\n");
		return -1;
	}
	if (access("/dev/fuse", R_OK | W_OK) != 0) {
		fprintf(stderr, "skip: no usable /dev/fuse\n");
		return -1;
	}
	if (access(server_path(), X_OK) != 0) {
		fprintf(stderr, "skip: no server at %s\n", server_path());
		return -1;
	}
	return 0;
}

/* Is dir a mount point (a dead FUSE mount answers statfs with ENOTCONN,
 * so ask /proc). */
static bool is_mounted(const char *dir)
{
	char line[PATH_MAX + 512], needle[PATH_MAX + 2];
	bool found = false;
	FILE *f = fopen("/proc/self/mounts", "re");

	if (!f)
		return false;
	snprintf(needle, sizeof(needle), " %s ", dir);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

static bool is_fuse(const char *dir)
{
	struct statfs sfs;

	return statfs(dir, &sfs) == 0 && sfs.f_type == RS_FUSE_SUPER_MAGIC;
}

/* Reap the server if it exited; true if it is gone. */
static bool reap(struct mnt *m, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;

	while (m->pid > 0) {
		pid_t r = waitpid(m->pid, &m->status, WNOHANG);

		if (r == m->pid || (r < 0 && errno == ECHILD)) {
			m->pid = 0;
			break;
		}
		if (now_ms() >= deadline)
			return false;
		poll_pause();
	}
	return true;
}

static void print_log(const struct mnt *m)
{
	char buf[4096];
	size_t n;
	FILE *f = fopen(m->log, "r");

	if (!f)
		return;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(f);
}

int mnt_start(struct mnt *m, const char *opts)
{
	return mnt_start_arg(m, opts, NULL);
}

int mnt_start_arg(struct mnt *m, const char *opts, const char *arg)
{
	const char *argv[8];
	int argc = 0;
	struct stat st;
	char tmpl[] = "/tmp/rs-fusefs-XXXXXX";
	long long deadline;
	int fd;

	memset(m, 0, sizeof(*m));
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return -1;
	}
	snprintf(m->dir, sizeof(m->dir), "%s", tmpl);
	snprintf(m->log, sizeof(m->log), "%s.log", tmpl);
	fd = open(m->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	m->pid = fork();
	if (m->pid < 0) {
		perror("fork");
		rmdir(m->dir);
		return -1;
	}
	if (m->pid == 0) {
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		argv[argc++] = "rangeshift-fusefs";
		argv[argc++] = m->dir;
		argv[argc++] = "-f";
		if (opts) {
			argv[argc++] = "-o";
			argv[argc++] = opts;
		}
		if (arg)
			argv[argc++] = arg;
		argv[argc] = NULL;
		execv(server_path(), (char *const *)argv);
		_exit(127);
	}
	if (fd >= 0)
		close(fd);
	deadline = now_ms() + RS_WAIT_MS;
	while (!is_fuse(m->dir)) {
		if (reap(m, 0) && m->pid == 0) {
			fprintf(stderr, "server exited before mounting:\n");
			print_log(m);
			rmdir(m->dir);
			unlink(m->log);
			return -1;
		}
		if (now_ms() >= deadline) {
			fprintf(stderr, "mount did not appear within %d ms\n", RS_WAIT_MS);
			kill(m->pid, SIGKILL);
			reap(m, RS_WAIT_MS);
			umount2(m->dir, MNT_DETACH);
			rmdir(m->dir);
			return -1;
		}
		poll_pause();
	}
	if (stat(m->dir, &st) == 0)
		m->dev = st.st_dev;
	return 0;
}

int mnt_abort(const struct mnt *m)
{
	const char *base = "/sys/fs/fuse/connections";
	char path[PATH_MAX];
	int fd, ok;

	/* fusectl names a connection by the minor of its anonymous device
	 * (fuse_ctl_add_conn(): fc->dev, major 0). */
	snprintf(path, sizeof(path), "%s/%u/abort", base, minor(m->dev));
	if (access(path, W_OK) != 0)
		mount("fusectl", base, "fusectl", 0, NULL);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cannot abort the FUSE connection: %s: %s\n",
			path, strerror(errno));
		return -1;
	}
	ok = write(fd, "1", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

int mnt_stop(struct mnt *m)
{
	char *argv[] = { "fusermount3", "-u", m->dir, NULL };
	char out[512];
	int ret = 0;

	if (is_mounted(m->dir) && run_cmd(argv, NULL, out, sizeof(out), RS_WAIT_MS) != 0) {
		/* Busy (a descriptor left open by a failed test): detach it
		 * and stop the server rather than wait for it. */
		fprintf(stderr, "fusermount3 -u failed: %s", out);
		umount2(m->dir, MNT_DETACH);
		if (m->pid > 0)
			kill(m->pid, SIGKILL);
		ret = -1;
	}
	if (!reap(m, RS_WAIT_MS)) {
		fprintf(stderr, "server did not exit within %d ms: killing\n", RS_WAIT_MS);
		kill(m->pid, SIGKILL);
		reap(m, RS_WAIT_MS);
		ret = -1;
	}
	if (is_mounted(m->dir)) {
		fprintf(stderr, "%s still mounted: lazy unmount\n", m->dir);
		umount2(m->dir, MNT_DETACH);
		ret = -1;
	}
	if (m->expect_killed) {
		if (!WIFSIGNALED(m->status) || WTERMSIG(m->status) != SIGKILL)
			ret = -1;
	} else if (!WIFEXITED(m->status) || WEXITSTATUS(m->status) != 0) {
		fprintf(stderr, "server exit status 0x%x; its log:\n", m->status);
		print_log(m);
		ret = -1;
	}
	if (rmdir(m->dir) != 0) {
		fprintf(stderr, "rmdir %s: %s\n", m->dir, strerror(errno));
		ret = -1;
	}
	unlink(m->log);
	return ret;
}

bool mnt_reap(struct mnt *m, int timeout_ms)
{
	return reap(m, timeout_ms);
}

bool mnt_mounted(const struct mnt *m)
{
	return is_mounted(m->dir);
}

char *mnt_path(const struct mnt *m, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", m->dir, name);
	return buf;
}

static void append(char *out, size_t outlen, size_t *got, const char *buf,
		   size_t n)
{
	if (!outlen)
		return;
	if (*got + n >= outlen)
		n = outlen - 1 - *got;
	memcpy(out + *got, buf, n);
	*got += n;
	out[*got] = 0;
}

int run_cmd(char *const argv[], char *const env[], char *out, size_t outlen,
	    int timeout_ms)
{
	int pfd[2], status = 0;
	size_t got = 0;
	long long deadline = now_ms() + timeout_ms;
	bool eof = false;
	char buf[4096];
	ssize_t n;
	pid_t pid;

	if (outlen)
		out[0] = 0;
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		for (; env && *env; env++)
			putenv(*env);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	for (;;) {
		if (!eof) {
			n = read(pfd[0], buf, sizeof(buf));
			if (n > 0) {
				append(out, outlen, &got, buf, (size_t)n);
				continue;
			}
			if (n == 0)
				eof = true;
		}
		if (waitpid(pid, &status, WNOHANG) == pid) {
			while ((n = read(pfd[0], buf, sizeof(buf))) > 0)
				append(out, outlen, &got, buf, (size_t)n);
			break;
		}
		if (now_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			close(pfd[0]);
			fprintf(stderr, "command %s timed out after %d ms\n",
				argv[0], timeout_ms);
			return -1;
		}
		poll_pause();
	}
	close(pfd[0]);
	if (!WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Kill and reap the children still in pids[] (0: reaped), bounded. */
static void kill_rest(pid_t *pids, int n)
{
	long long deadline = now_ms() + RS_WAIT_MS;
	int i, left;

	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
	do {
		left = 0;
		for (i = 0; i < n; i++) {
			int status;

			if (pids[i] > 0 && waitpid(pids[i], &status, WNOHANG) == 0)
				left++;
			else
				pids[i] = 0;
		}
		if (left)
			poll_pause();
	} while (left && now_ms() < deadline);
	if (left)
		fprintf(stderr, "%d children still unkillable after the abort\n", left);
}

static int describe(const char *what, int i, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		fprintf(stderr, "%s: process %d died of signal %d (%s)\n", what, i,
			WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		fprintf(stderr, "%s: process %d failed at step %d\n", what, i,
			WEXITSTATUS(status));
	return 1;
}

int run_procs(const struct mnt *m, const char *what, int n,
	      int (*fn)(int i, void *arg), void *arg, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	int i, left = n, failed = 0, status;

	if (!pids)
		return n;
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			/* The test framework catches crash signals (cmocka
			 * longjmps back into its runner): a crash here must
			 * end this child and be seen as such. */
			signal(SIGBUS, SIG_DFL);
			signal(SIGSEGV, SIG_DFL);
			signal(SIGILL, SIG_DFL);
			signal(SIGFPE, SIG_DFL);
			signal(SIGABRT, SIG_DFL);
			_exit(fn(i, arg));
		}
		if (pids[i] < 0) {
			pids[i] = 0;
			left--;
			failed++;
		}
	}
	while (left > 0 && now_ms() < deadline) {
		for (i = 0; i < n; i++) {
			if (pids[i] <= 0 || waitpid(pids[i], &status, WNOHANG) != pids[i])
				continue;
			pids[i] = 0;
			left--;
			failed += describe(what, i, status);
		}
		if (left)
			poll_pause();
	}
	if (left > 0) {
		for (i = 0; i < n; i++)
			if (pids[i] > 0)
				fprintf(stderr, "%s: process %d (pid %d) hung for %d ms\n",
					what, i, (int)pids[i], timeout_ms);
		if (m && mnt_abort(m) == 0)
			fprintf(stderr, "%s: FUSE connection aborted\n", what);
		kill_rest(pids, n);
		failed += left;
	}
	free(pids);
	return failed;
}
