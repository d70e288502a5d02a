/* SPDX-License-Identifier: MIT */
/*
 * harness.h - mounting rangeshift-fusefs for tests: each mount in a fresh
 * mkdtemp() directory, every wait bounded by a deadline, and unmount that
 * always happens (fusermount3 -u, then SIGKILL + umount -l as last resort).
 */
#ifndef RANGESHIFT_FUSEFS_HARNESS_H
#define RANGESHIFT_FUSEFS_HARNESS_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#define RS_WAIT_MS	15000	/* deadline for mount, unmount, commands */

struct mnt {
	char dir[PATH_MAX];
	char log[PATH_MAX];
	pid_t pid;		/* server, running with -f; 0 once reaped */
	int status;		/* server wait status once reaped */
	bool expect_killed;	/* the test SIGKILLs the server itself */
	dev_t dev;		/* st_dev of the mount: the FUSE connection */
};

/* 0 if tests can mount here (root, /dev/fuse, server built), else a reason
 * printed to stderr and -1: callers skip. */
int mnt_can_run(void);
/* Start the server on a fresh directory with "-o opts" (may be NULL) and
 * wait until the mount answers.  0 or -1 (with a message on stderr). */
int mnt_start(struct mnt *m, const char *opts);
/* The same with one more server argument (e.g. "-s"; NULL: none). */
int mnt_start_arg(struct mnt *m, const char *opts, const char *arg);
/* Abort the mount's FUSE connection (/sys/fs/fuse/connections/N/abort,
 * mounting fusectl there if needed): every request in flight and every
 * later one fails, which frees processes stuck in D state on the mount.
 * The last resort of a watchdog.  0 or -1. */
int mnt_abort(const struct mnt *m);
/* Unmount, reap the server, remove the directory.  Returns 0 if the server
 * exited by itself with status 0, -1 otherwise (its log is printed). */
int mnt_stop(struct mnt *m);
/* Wait (bounded) for the server to exit; true once it has been reaped. */
bool mnt_reap(struct mnt *m, int timeout_ms);
/* Is the mount still in /proc/self/mounts? */
bool mnt_mounted(const struct mnt *m);
/* path inside the mount (static buffer per call site is not thread-safe:
 * the result goes into buf). */
char *mnt_path(const struct mnt *m, const char *name, char *buf, size_t len);

/* Run argv with extra environment entries env (NULL-terminated, may be
 * NULL), stdout+stderr captured into out (NUL-terminated, truncated to
 * outlen).  Returns the exit status, or -1 on timeout / failure to run. */
int run_cmd(char *const argv[], char *const env[], char *out, size_t outlen,
	    int timeout_ms);

/* Run fn(i, arg) for i in [0, n) in n child processes at once, each
 * exiting with fn's return value (0: success), and wait for all of them
 * for at most timeout_ms.  A hang is a failure, never a hung test: at the
 * deadline the stuck children are named on stderr, m's FUSE connection is
 * aborted (mnt_abort(); m may be NULL) and they are killed and reaped.
 * Returns the number of children that failed, crashed (e.g. SIGBUS) or
 * hung; a line per failure goes to stderr, prefixed with what. */
int run_procs(const struct mnt *m, const char *what, int n,
	      int (*fn)(int i, void *arg), void *arg, int timeout_ms);

/* Milliseconds since an arbitrary start (CLOCK_MONOTONIC). */
long long now_ms(void);
/* Sleep a poll interval (used only inside deadline-bounded loops). */
void poll_pause(void);

#endif
