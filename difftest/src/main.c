/* SPDX-License-Identifier: MIT */
/*
 * main.c - the difftest command line: a campaign (default), --replay of an
 * op log, --merge of JSON reports, -j N parallel shards (child processes
 * re-running this binary with --shard), and, on the host, handing a run
 * over ext4/xfs/fusefs targets (which live in the QEMU guest) to the
 * difftest-vm wrapper.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "campaign.h"
#include "cmd.h"
#include "fstest.h"
#include "race.h"
#include "rm_vec.h"

#ifndef DT_SOURCE_DIR
#define DT_SOURCE_DIR "."
#endif

static void usage(FILE *f)
{
	fprintf(f,
"usage: difftest [OPTIONS]\n"
"Differential tester: runs one generated op sequence against the reference model\n"
"(in-process) and against each target, checks every result, shrinks divergences.\n"
"\n"
"  -N, --ops COUNT        ops per target (accepts 1e6; default 10000)\n"
"  -S, --seed SEED        generator seed (default 1)\n"
"  -t, --target T         repeatable; on the host no default (without -t or --vm,\n"
"                         difftest says so and runs nothing); in the guest: ext4,\n"
"                         xfs, fusefs\n"
"        ext4 | xfs | fusefs   the guest mounts /mnt/ext4, /mnt/xfs, /mnt/fusefs (on the\n"
"                              host a run over them boots the patched kernel in QEMU\n"
"                              through difftest-vm: only when named, or with --vm)\n"
"        ext4:CONFIG, xfs:CONFIG, fusefs[:xfs][:CONFIG]  the same, made and mounted with\n"
"                              a configuration (ext4:bs=1024,data=journal, xfs:reflink=0,\n"
"                              fusefs:xfs:bs=1024; --configs lists the options)\n"
"        dir:PATH[:PROFILE]    any directory; profile (ext4|xfs|bytes) from statfs f_type\n"
"        model[:PROFILE]       the model against itself (must be clean)\n"
"        PROFILE: ext4-6.1 xfs-6.1 ext4-6.12 xfs-6.12 bytes (ext4, xfs: the 6.1 ones);\n"
"                 unnamed, the kernel rules are the running kernel's (uname -r)\n"
"        faulty:KIND[:PROFILE] TEST ONLY: a model that misbehaves on purpose; KIND is\n"
"                              insert-off-by-one, lost-unwritten, wrong-errno,\n"
"                              flaky (one pwrite fails once: a divergence that does not replay),\n"
"                              enospc (runs out of space the documented way: checked, clean),\n"
"                              enospc-lie (writes every byte, answers ENOSPC),\n"
"                              enospc-shift (every 3rd punch/insert/collapse: ENOSPC),\n"
"                              enospc-full (its 3rd one, once; then the first after a fill)\n"
"      --weights K=V,...  op mix (kinds: pwrite pread mwrite mread truncate falloc\n"
"                         falloc_keep punch zero zero_keep insert collapse unshare fmode\n"
"                         fsync reopen drop_caches remount seek_data seek_hole reflink\n"
"                         fdatasync sync_range fiemap_sync dio_write dio_read\n"
"                         copy_range dedupe; all=V).  Defaults: pwrite 200, pread 60,\n"
"                         mwrite 40, mread 30, truncate 50, falloc 50, falloc_keep 40,\n"
"                         punch 60, zero 40, zero_keep 30, insert 80, collapse 80,\n"
"                         unshare 5, fmode 20, fsync 30, reopen 10, drop_caches 5,\n"
"                         remount 1, seek_data 30, seek_hole 30, dio_write 10,\n"
"                         dio_read 10, copy_range 5, dedupe 5, the rest 0\n"
"      --locality PCT     PCT%% of offsets land on (or a block off) one a recent op of\n"
"                         the file used: ops meet where the last ones left state (0)\n"
"      --huge PCT         PCT%% of a file's ops write, fallocate, punch, zero, truncate,\n"
"                         insert or collapse within 64 blocks of the format's limit\n"
"                         (ext4: EXT_MAX_BLOCKS; XFS, FUSE: s_maxbytes) or shift a\n"
"                         file that reaches there; such files are not reset for size (0)\n"
"      --flen BYTES       fsx's -l: every op stays in [0, BYTES] (a multiple of 64k; suffixes\n"
"                         k m g t), offsets past it fold in, inserts grow the file to it at\n"
"                         most (default: difftest's own geometry, files up to 32 MiB of data\n"
"                         over spans of TiB)\n"
"      --oplen BYTES      fsx's -o: no op moves more than BYTES (default: unbounded)\n"
"      --check-every K    full-file check (size, whole map, all data) every K ops (1000)\n"
"      --files N          files per target, 1..%d (4)\n"
"      --shard I/N        run shard I of N (disjoint seeds, COUNT/N ops each)\n"
"  -j N                   N shards in parallel (child processes; VMs on the host)\n"
"      --serial           run the targets one after the other in this process (default:\n"
"                         one child process per target, all at once)\n"
"      --replay LOG       run an op log (target from its header unless -t); exit 1 on divergence\n"
"      --crash-script LOG print LOG as an xfs_io script that exits 1 when the kernel\n"
"                         logs an oops/BUG/WARNING (reproducers of kernel crashes)\n"
"      --crash-replay LOG run LOG's ops on the target, going on past divergences\n"
"                         (for shrinking kernel crashes; the kernel log is the verdict)\n"
"      --journal DIR      write each op to DIR/journal-TARGET.log before running it,\n"
"                         unbuffered (survives a guest crash; the campaign uses it);\n"
"                         the shrinker writes each candidate, whole, to\n"
"                         DIR/shrink-candidate-TARGET.log before running it\n"
"      --shrink           with --replay: also shrink the divergence (ddmin) and print/write it\n"
"      --out DIR          reproducers and report (default ./difftest-out)\n"
"      --json FILE        JSON report (default OUT/report.json)\n"
"      --merge            merge the JSON reports given as arguments into --json (or stdout)\n"
"      --max-div N        stop a target after N divergences (3)\n"
"      --no-shrink        write unshrunk reproducers\n"
"      --shrink-runs N    ddmin budget in runs (2000) ...\n"
"      --shrink-seconds S ... and in seconds (300)\n"
"      --shift-check MAX  bytes hashed after insert/collapse, both ends (262144)\n"
"      --no-remount       never unmount (remount = drop caches + reopen)\n"
"      --map-batch N      check the maps changed by the last N ops together (1: after\n"
"                         every op); fewer FIEMAP write-backs, divergences found later\n"
"      --fsck-every N     at a remount (file system unmounted) run e2fsck -fn / xfs_repair -n\n"
"                         at the 1st and every Nth remount (8; 0: never); a verdict of\n"
"                         corruption is a divergence of kind fsck.  Tree depth (debugfs,\n"
"                         xfs_db) is measured at remounts, of files with more extents\n"
"                         than any measured before\n"
"      --no-pin           let the scheduler move difftest between CPUs (default: each\n"
"                         run, replay and shrink stays on one CPU, so that ext4's per-CPU\n"
"                         block preallocation gives a seed the same layout every time)\n"
"      --expected FILE    known differences of other kernels than the model's, applied\n"
"                         when uname -r matches (default: the built-in\n"
"                         expected/kernels.txt; none: no entries)\n"
"      --strict           the model's intended semantics, without the kernel errata of\n"
"                         refmodel/ERRATA.md (default: the model copies them): errata\n"
"                         show up as divergences; op logs and reproducers record it\n"
"      --emit-fstest DIR LOG  write LOG as an xfstests test, DIR/tests/{ext4,xfs,generic}/NNN\n"
"                         and NNN.out (NNN from 900); the golden output is the strict\n"
"                         model's (target from LOG's header unless -t)\n"
"      --fstest-session   with --emit-fstest: run all ops in one xfs_io that keeps\n"
"                         every file open, as difftest does (a close can free XFS's\n"
"                         post-EOF preallocation); no remount, drop, reopen, mmap,\n"
"                         seek or fiemap ops then\n"
"      --user UID:GID     run each file's ops as that caller (setfsuid/setfsgid: no\n"
"                         CAP_FSETID, CAP_FOWNER, CAP_DAC_OVERRIDE; needs root): files\n"
"                         owned by it or by root, with set-ID bits; st_mode is checked\n"
"                         after every op (divergence kind \"mode\"); turns on chmod\n"
"                         (weight 30 unless --weights names it); op logs record it\n"
"      --fiemap-nosync    FIEMAP without FIEMAP_FLAG_SYNC (maps before write-back; the\n"
"                         model's states are after write-back, expect false alarms)\n"
"      --map-sync         every map check writes the file back first (FIEMAP_FLAG_SYNC)\n"
"                         and compares the states after write-back%s\n"
"      --no-map-sync      observer-free: no check writes back (maps without\n"
"                         FIEMAP_FLAG_SYNC against the model's cached view, data by\n"
"                         reads); write-back happens at the ops fsync, fdatasync,\n"
"                         sync_range, fiemap_sync, drop_caches, remount%s\n"
"      --threads N        the concurrent mode: windows of N ops (2..4) at once on one\n"
"                         file, judged against every serial order (--threads --help)\n"
"      --race-replay LOG  run a concurrent-mode reproducer again (--repeat RUNSxLOOPS)\n"
"      --configs          list the configurations (mkfs and mount options) and exit\n"
"      --boot-plan        print the guest boots the -t targets need, one line each:\n"
"                         MKFS_EXT4|MOUNT_EXT4|MKFS_XFS|MOUNT_XFS|FUSEFS_OPTS|TARGETS\n"
"                         (difftest-vm boots once per line)\n"
"      --vm               run in QEMU through difftest-vm (without -t: ext4, xfs, fusefs;\n"
"                         builds the kernel on first use, needs root)\n"
"      --vm-*             options of difftest-vm (guest runs from the host; see difftest-vm --help)\n"
"  -q, --quiet            no progress output\n"
"  -h, --help             this text\n"
"  -V, --version          print the version\n"
"Exit status: 0 clean, 1 divergence, 2 usage or setup error.\n", DT_MAXFILES,
	DT_MAP_SYNC_DEFAULT ? " (default)" : "", DT_MAP_SYNC_DEFAULT ? "" : " (default)");
}

static int parse_count(const char *s, uint64_t *out)
{
	char *end;
	if (!isdigit((unsigned char)s[0]))	/* no blanks, signs, "inf" */
		return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || v > 1e15 || v != floor(v))
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

/* ext4, xfs, fusefs, with or without a configuration (config.h); *mnt:
 * its mount point in the guest */
static int is_guest_target(const char *t, const char **mnt)
{
	struct dt_config c;
	char err[256];

	if (dt_config_parse(t, &c, err, sizeof(err)))
		return 0;
	if (mnt)
		*mnt = dt_config_mnt(&c);
	return 1;
}

static int mounted_at(const char *dir)
{
	FILE *f = fopen("/proc/mounts", "r");
	char dev[PATH_MAX], mnt[PATH_MAX];
	int found = 0;

	if (!f)
		return 0;
	while (fscanf(f, "%4095s %4095s %*s %*s %*d %*d", dev, mnt) == 2)
		if (!strcmp(mnt, dir))
			found = 1;
	fclose(f);
	return found;
}

/* On the host: hand the whole command line to difftest-vm. */
static int exec_vm_wrapper(char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (getenv("DIFFTEST_IN_GUEST")) {
		fprintf(stderr, "difftest: in the guest but a target mount is missing\n");
		return 2;
	}
	const char *cands[2] = { NULL, DT_SOURCE_DIR "/difftest-vm" };
	if (n > 0) {
		self[n] = 0;
		char *sl = strrchr(self, '/');
		if (sl) {
			*sl = 0;
			snprintf(path, sizeof(path), "%s/difftest-vm", self);
			cands[0] = path;
		}
	}
	for (int i = 0; i < 2; i++)
		if (cands[i] && access(cands[i], X_OK) == 0) {
			fprintf(stderr, "difftest: /mnt/ext4 etc. are not mounted here: running in "
				"QEMU through %s\n", cands[i]);
			argv[0] = (char *)cands[i];
			execv(cands[i], argv);
			fprintf(stderr, "difftest: exec %s: %s\n", cands[i], strerror(errno));
			return 2;
		}
	fprintf(stderr, "difftest: targets ext4/xfs/fusefs need the guest (difftest-vm not "
		"found); use dir:PATH on the host\n");
	return 2;
}

/* -j N: run N copies of ourselves with --shard, then merge their reports. */
static int run_parallel(int argc, char **argv, int jobs, int shard_i, int shard_n,
			const char *out, const char *json)
{
	pid_t pids[64];
	char jsons[64][PATH_MAX + 64];
	char *files[64];
	int status = 0;

	for (int k = 0; k < jobs; k++) {
		char sh[64], od[PATH_MAX + 32];
		snprintf(sh, sizeof(sh), "%d/%d", shard_i * jobs + k, shard_n * jobs);
		snprintf(od, sizeof(od), "%s/shard-%d", out, k);
		snprintf(jsons[k], sizeof(jsons[k]), "%s/report.json", od);
		mkdir(od, 0755);
		char **av = calloc((size_t)argc + 12, sizeof(*av));
		if (!av)
			return 2;
		int m = 0;
		av[m++] = argv[0];
		for (int a = 1; a < argc; a++) {
			if (!strcmp(argv[a], "-j") || !strcmp(argv[a], "--shard") ||
			    !strcmp(argv[a], "--out") || !strcmp(argv[a], "--json")) {
				a++;
				continue;
			}
			if (!strncmp(argv[a], "-j", 2) || !strncmp(argv[a], "--shard=", 8) ||
			    !strncmp(argv[a], "--out=", 6) || !strncmp(argv[a], "--json=", 7))
				continue;
			av[m++] = argv[a];
		}
		av[m++] = "--shard";
		av[m++] = sh;
		av[m++] = "--out";
		av[m++] = od;
		av[m++] = "--json";
		av[m++] = jsons[k];
		av[m++] = "--quiet-bar";
		av[m] = NULL;
		pid_t p = fork();
		if (p == 0) {
			execv("/proc/self/exe", av);
			_exit(2);
		}
		free(av);
		if (p < 0) {
			perror("difftest: fork");
			return 2;
		}
		pids[k] = p;
		files[k] = jsons[k];
	}
	for (int k = 0; k < jobs; k++) {
		int st;
		if (waitpid(pids[k], &st, 0) < 0 || !WIFEXITED(st))
			status = 2;
		else if (WEXITSTATUS(st) > status)
			status = WEXITSTATUS(st);
	}
	FILE *f = fopen(json, "w");
	char err[512];
	if (!f || dt_report_merge(files, jobs, f, err, sizeof(err))) {
		fprintf(stderr, "difftest: merging shard reports into %s failed%s%s\n", json,
			f ? ": " : "", f ? err : "");
		if (f)
			fclose(f);
		return 2;
	}
	fclose(f);
	fprintf(stderr, "difftest: merged %d shard reports into %s\n", jobs, json);
	return status;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Write all of buf to fd (a pipe): 0 or -errno. */
static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

struct tchild {
	pid_t pid;
	int fd;			/* read end of the child's result pipe */
	char *buf;		/* what it sent: rc, dt_tresult, ndivs, divs */
	size_t len, cap;
};

static void live_line(const struct dt_campaign *c, const char *const *targets,
		      const struct dt_progress *lv, int n, double t0, int tty, int final)
{
	char line[1024];
	size_t k = 0;
	uint64_t divs = 0;
	double eta = 0;

	for (int i = 0; i < n; i++) {
		const char *nm = targets[i];
		double rate = lv[i].rate;
		uint64_t done = lv[i].done, total = lv[i].total ? lv[i].total : c->ops;
		double e = rate > 0 && done < total && !lv[i].finished ? (total - done) / rate : 0;
		if (e > eta)
			eta = e;
		divs += lv[i].divergences;
		int w = snprintf(line + k, sizeof(line) - k, "%s%.12s %" PRIu64 "/%" PRIu64 " %.0f/s",
				 i ? " | " : "", nm, done, total, rate);
		if (w > 0 && (size_t)w < sizeof(line) - k)
			k += (size_t)w;
	}
	if (tty) {
		/* redraw only what changed (a serial console is slow under TCG) */
		static char last[1100];
		char full[1100];
		snprintf(full, sizeof(full), "%s ETA %dm%02ds div %" PRIu64, line, (int)eta / 60,
			 (int)eta % 60, divs);
		if (!final && !strcmp(full, last))
			return;
		snprintf(last, sizeof(last), "%s", full);
		fprintf(stderr, "\r%s  %s", full, final ? "\n" : "");
	} else
		fprintf(stderr, "difftest: %s%s; ETA %ds, %" PRIu64 " divergences, %.0fs\n", c->prefix,
			line, (int)eta, divs, now() - t0);
	fflush(stderr);
}

/* The child of target i: runs it, sends its results through fd, exits. */
static void target_child(struct dt_campaign *c, const char *const *targets, int n, int i,
			 struct dt_progress *lv, const struct tchild *ch, int fd)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	for (int k = 0; k < i; k++)
		if (ch[k].fd >= 0)
			close(ch[k].fd);
	c->live = &lv[i];
	c->pin_slot = c->shard_i * n + i;
	c->divs = NULL;
	c->ndivs = c->divs_cap = 0;
	struct dt_tresult *r = calloc(1, sizeof(*r));
	int rc = r ? dt_campaign_target(c, targets[i], r) : -ENOMEM;
	lv[i].finished = 1;
	if (!r || write_all(fd, &rc, sizeof(rc)) || write_all(fd, r, sizeof(*r)) ||
	    write_all(fd, &c->ndivs, sizeof(c->ndivs)) ||
	    (c->ndivs && write_all(fd, c->divs, c->ndivs * sizeof(*c->divs))))
		_exit(3);
	fflush(stderr);
	_exit(0);
}

/* One child per target; a target whose child cannot start gets its
 * error in res[i].  Returns 1 if any could not start. */
static int spawn_targets(struct dt_campaign *c, const char *const *targets, int n,
			 struct dt_progress *lv, struct tchild *ch, struct dt_tresult *res)
{
	int fatal = 0;

	for (int i = 0; i < n; i++) {
		int pfd[2];
		ch[i].fd = -1;
		fflush(stdout);
		fflush(stderr);
		if (pipe(pfd) || (ch[i].pid = fork()) < 0) {
			fprintf(stderr, "difftest: cannot start the process for %s: %s\n", targets[i],
				strerror(errno));
			snprintf(res[i].name, sizeof(res[i].name), "%s", targets[i]);
			snprintf(res[i].error, sizeof(res[i].error), "fork: %s", strerror(errno));
			fatal = 1;
			continue;
		}
		if (ch[i].pid == 0) {
			close(pfd[0]);
			target_child(c, targets, n, i, lv, ch, pfd[1]);
		}
		close(pfd[1]);
		ch[i].fd = pfd[0];
	}
	return fatal;
}

/* Read what child t sent so far; its fd closed at EOF or error. */
static void read_child(struct tchild *t)
{
	if (RM_VEC_RESERVE(&t->buf, &t->cap, t->len + 4096, 65536)) {
		close(t->fd);
		t->fd = -1;
		return;
	}
	ssize_t r = read(t->fd, t->buf + t->len, t->cap - t->len);
	if (r > 0) {
		t->len += (size_t)r;
	} else if (r == 0 || errno != EINTR) {
		close(t->fd);
		t->fd = -1;
	}
}

/* Read every pipe to EOF (a child blocks when its pipe is full),
 * printing the progress line meanwhile. */
static void collect(const struct dt_campaign *c, const char *const *targets, int n,
		    const struct dt_progress *lv, struct tchild *ch, int tty)
{
	double t0 = now(), last = 0;

	for (;;) {
		struct pollfd pf[32];
		int map[32], np = 0;
		for (int i = 0; i < n && np < 32; i++)
			if (ch[i].fd >= 0) {
				pf[np].fd = ch[i].fd;
				pf[np].events = POLLIN;
				map[np++] = i;
			}
		if (!np)
			break;
		int pr = poll(pf, (nfds_t)np, 500);
		if (pr < 0 && errno != EINTR)
			break;
		for (int k = 0; pr > 0 && k < np; k++)
			if (pf[k].revents & (POLLIN | POLLHUP | POLLERR))
				read_child(&ch[map[k]]);
		double tn = now();
		if (!c->quiet && tn - last >= (tty ? 0.5 : 10.0) && tn - t0 > 1.0) {
			live_line(c, targets, lv, n, t0, tty, 0);
			last = tn;
		}
	}
	if (!c->quiet)
		live_line(c, targets, lv, n, t0, tty, 1);
}

/* Wait for child i and take its results into res[i] and c->divs:
 * 0, or 1 when it failed or sent no (whole) results. */
static int reap(struct dt_campaign *c, const char *target, struct tchild *t,
		struct dt_tresult *res)
{
	const size_t head = sizeof(int) + sizeof(struct dt_tresult) + sizeof(size_t);
	size_t nd = 0;
	int st = 0, rc;

	while (waitpid(t->pid, &st, 0) < 0 && errno == EINTR)
		;
	if (t->len >= head)
		memcpy(&nd, t->buf + sizeof(int) + sizeof(struct dt_tresult), sizeof(nd));
	if (t->len < head || nd > (t->len - head) / sizeof(struct dt_divrec) ||
	    t->len != head + nd * sizeof(struct dt_divrec)) {
		snprintf(res->name, sizeof(res->name), "%s", target);
		if (WIFSIGNALED(st))
			snprintf(res->error, sizeof(res->error), "the process of target %s was "
				 "killed by signal %d (%s)", target, WTERMSIG(st),
				 strsignal(WTERMSIG(st)));
		else
			snprintf(res->error, sizeof(res->error), "the process of target %s "
				 "exited (status %d) without its results", target,
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		fprintf(stderr, "difftest: %s\n", res->error);
		return 1;
	}
	memcpy(&rc, t->buf, sizeof(rc));
	memcpy(res, t->buf + sizeof(int), sizeof(*res));
	if (nd && !RM_VEC_RESERVE(&c->divs, &c->divs_cap, c->ndivs + nd, 8)) {
		memcpy(c->divs + c->ndivs, t->buf + head, nd * sizeof(*c->divs));
		c->ndivs += nd;
	}
	return rc != 0;
}

/* The targets at once, one child process per target (each its own model,
 * files, session and op sequence from the same seed: per target the run is
 * exactly the serial one).  In the guest the lone difftest process was
 * CPU-bound on one vCPU while the other idled; the targets share nothing,
 * so they can run side by side.  Each child sends its dt_tresult and
 * divergence records through a pipe; progress goes through shared memory
 * and this process prints one line for all.  Returns 1 if any target hit a
 * fatal error. */
static int run_targets_parallel(struct dt_campaign *c, const char *const *targets, int n,
				struct dt_tresult *res)
{
	struct dt_progress *lv = mmap(NULL, (size_t)n * sizeof(*lv), PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct tchild *ch = calloc((size_t)n, sizeof(*ch));
	int fatal;

	if (lv == MAP_FAILED || !ch) {
		fprintf(stderr, "difftest: out of memory for %d target processes\n", n);
		if (lv != MAP_FAILED)
			munmap(lv, (size_t)n * sizeof(*lv));
		free(ch);
		return 1;
	}
	memset(lv, 0, (size_t)n * sizeof(*lv));
	fatal = spawn_targets(c, targets, n, lv, ch, res);
	collect(c, targets, n, lv, ch, c->tty && !c->quiet);
	for (int i = 0; i < n; i++) {
		if (ch[i].pid > 0 && reap(c, targets[i], &ch[i], &res[i]))
			fatal = 1;
		free(ch[i].buf);
	}
	munmap(lv, (size_t)n * sizeof(*lv));
	free(ch);
	return fatal;
}

/* Read an op log and its target (-t overrides the log's header). */
static int load_log(const char *log, const char *tspec, struct dt_op **ops, size_t *n,
		    int *nfiles, char *target, size_t tn)
{
	char err[1024];

	target[0] = 0;
	if (dt_log_read(log, ops, n, nfiles, target, tn, err, sizeof(err))) {
		fprintf(stderr, "difftest: %s\n", err);
		return 2;
	}
	if (tspec)
		snprintf(target, tn, "%s", tspec);
	if (!target[0]) {
		fprintf(stderr, "difftest: %s names no target: give -t\n", log);
		free(*ops);
		return 2;
	}
	return 0;
}

/* The discipline an op log was written under ("# map-sync: N" in its
 * header, dt_log_write()); a log without the line predates the
 * observer-free discipline: 1. */
static int log_map_sync(const char *log)
{
	FILE *f = fopen(log, "r");
	char line[512];
	int ms = 1, v;

	while (f && fgets(line, sizeof(line), f) && line[0] == '#')
		if (sscanf(line, "# map-sync: %d", &v) == 1)
			ms = !!v;
	if (f)
		fclose(f);
	return ms;
}

/* Whether an op log was written by a --strict run ("# strict: 1" in its
 * header, dt_log_write()): a replay then uses the strict model too. */
static int log_is_strict(const char *log)
{
	FILE *f = fopen(log, "r");
	char line[256];
	int strict = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && line[0] == '#')
		if (!strncmp(line, "# strict: 1", 11))
			strict = 1;
	fclose(f);
	return strict;
}

/* The caller an op log was written with ("# user: UID:GID"): 1 and the
 * ids, or 0. */
static int log_user(const char *log, uint32_t *uid, uint32_t *gid)
{
	FILE *f = fopen(log, "r");
	char line[256];
	unsigned u, g;
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && line[0] == '#')
		if (sscanf(line, "# user: %u:%u", &u, &g) == 2 && u) {
			*uid = u;
			*gid = g;
			found = 1;
		}
	fclose(f);
	return found;
}

/* --emit-fstest DIR LOG: the log's header (target, profile, block size,
 * what diverged) and ops into an xfstests test. */
static int do_emit_fstest(const char *dir, const char *log, const char *tspec, int session)
{
	struct dt_fstest_in in = { .source = log, .map_lo = 0, .map_hi = 0, .session = session };
	char target[64] = "", prof[16] = "ext4", div[1024] = "", err[1024], path[PATH_MAX + 16];
	struct dt_op *ops;
	unsigned bs = 4096;
	size_t n;
	int nfiles;

	if (load_log(log, tspec, &ops, &n, &nfiles, target, sizeof(target)))
		return 2;
	uint32_t uu, ug;
	if (log_user(log, &uu, &ug)) {
		fprintf(stderr, "difftest: %s is a --user log: its caller, owners and modes have no "
			"xfstests form here (use its repro.sh)\n", log);
		free(ops);
		return 2;
	}
	FILE *f = fopen(log, "r");
	char line[1024];
	while (f && fgets(line, sizeof(line), f) && line[0] == '#') {
		line[strcspn(line, "\r\n")] = 0;
		if (!strncmp(line, "# divergence (", 14) && !div[0])
			snprintf(div, sizeof(div), "%s", line + 2);
		sscanf(line, "# profile: %15s", prof);
		sscanf(line, "# blocksize: %u", &bs);
	}
	if (f)
		fclose(f);
	if (rm_profile_parse2(prof, &in.profile, &in.kernel) || bs < 512 || bs > 65536 || (bs & (bs - 1))) {
		fprintf(stderr, "difftest: %s: bad profile '%s' or block size %u in its header\n",
			log, prof, bs);
		free(ops);
		return 2;
	}
	in.target = target;
	in.blocksize = bs;
	in.nfiles = nfiles;
	in.ops = ops;
	in.n = n;
	in.divergence = div[0] ? div : NULL;
	in.fsck = !strncmp(div, "divergence (fsck)", 17);
	long long lo, hi;
	const char *b = strstr(div, "bytes ");
	if (!strncmp(div, "divergence (map)", 16) && b && n &&
	    sscanf(b, "bytes %lld..%lld", &lo, &hi) == 2 && lo >= 0 && hi > lo) {
		in.map_lo = lo;
		in.map_hi = hi;
		in.map_file = ops[n - 1].file;	/* a shrunk log ends with the diverging op */
	}
	int rc = dt_emit_fstest(dir, &in, path, sizeof(path), err, sizeof(err));
	free(ops);
	if (rc) {
		fprintf(stderr, "difftest: --emit-fstest: %s\n", err);
		return 2;
	}
	printf("%s\n%s.out\n", path, path);
	return 0;
}

/* --crash-script LOG: print LOG as an xfs_io script that reports a kernel
 * oops/BUG/WARNING (the campaign shrinks mutant crashes with it: a crash
 * kills the guest, so no in-process oracle can judge a candidate). */
/* A replay runs on one CPU like the campaign it replays (pin.c). */
static void pin_replay(int no_pin)
{
	int cpu = no_pin ? 0 : dt_pin(0);
	if (cpu < 0)
		fprintf(stderr, "difftest: cannot pin to a CPU (%s): the block layout may differ "
			"from the run that wrote the log\n", dt_errname(cpu));
}

static int do_crash_script(const char *log, const char *tspec, const struct dt_opts *run,
			   int no_pin)
{
	struct dt_op *ops;
	size_t n;
	int nfiles;
	char target[PATH_MAX + 32], err[1024];

	if (load_log(log, tspec, &ops, &n, &nfiles, target, sizeof(target)))
		return 2;
	struct dt_target t;
	if (dt_target_init(&t, target, "crash", err, sizeof(err))) {
		fprintf(stderr, "difftest: --crash-script %s: %s\n", log, err);
		free(ops);
		return 2;
	}
	dt_target_discipline(&t, run ? run->map_sync : log_map_sync(log));
	int rc;
	if (run) {
		/* --crash-replay: run every op on the target through the
		 * oracle's executor but go on past divergences (a mutant's
		 * wrong answers may come before its crash); the kernel log is
		 * the verdict, read by the caller */
		uint64_t ndiv;
		pin_replay(no_pin);
		rc = dt_run_log_through(&t, nfiles, ops, n, run, &ndiv, err, sizeof(err));
		printf("crash-replay %s: %zu ops, %" PRIu64 " divergences on the way%s%s\n", log, n,
		       ndiv, rc < 0 ? ", stopped: " : "", rc < 0 ? err : "");
	} else {
		rc = dt_write_crash_script(stdout, &t, nfiles, ops, n);
	}
	dt_target_fini(&t);
	free(ops);
	return rc ? 2 : 0;
}

static int do_replay(const char *log, const char *tspec, const struct dt_campaign *c,
		     const char *out, int shrink)
{
	const struct dt_opts *o = &c->o;
	int no_pin = c->no_pin;
	struct dt_op *ops;
	size_t n, stop = 0;
	int nfiles;
	char target[PATH_MAX + 32], err[1024];

	if (load_log(log, tspec, &ops, &n, &nfiles, target, sizeof(target)))
		return 2;
	const char *mnt;
	if (is_guest_target(target, &mnt) && !mounted_at(mnt)) {
		free(ops);
		return -1;	/* caller hands over to the VM */
	}
	struct dt_target t;
	if (dt_target_init(&t, target, "replay", err, sizeof(err))) {
		fprintf(stderr, "difftest: %s\n", err);
		free(ops);
		return 2;
	}
	t.mopts.strict = o->strict || log_is_strict(log);
	t.user = o->user;
	t.user_uid = o->user_uid;
	t.user_gid = o->user_gid;
	if (!t.user)
		t.user = log_user(log, &t.user_uid, &t.user_gid);
	dt_target_discipline(&t, o->map_sync);
	struct dt_div d;
	pin_replay(no_pin);
	int rc = dt_run_log(&t, nfiles, ops, n, o, &d, &stop);
	if (rc < 0 && !(shrink && rc == -EUCLEAN)) {
		fprintf(stderr, "difftest: replay failed: %s\n", d.msg[0] ? d.msg : strerror(-rc));
		free(ops);
		return 2;
	}
	if (rc == DV_NONE) {
		printf("replay %s on %s: %zu ops, no divergence\n", log, target, n);
		char dir[PATH_MAX + 32];
		snprintf(dir, sizeof(dir), "%s/replay", out ? out : "");
		if (out) {
			mkdir(out, 0755);
			if (!dt_write_maps_page(dir, &t, nfiles, ops, n, &d))
				printf("maps of the last op's file: %s/maps.html\n", dir);
		}
		dt_div_free(&d);
		free(ops);
		return 0;
	}
	char line[256];
	dt_op_format(&d.op, line, sizeof(line));
	printf("replay %s on %s: DIVERGENCE (%s) at op %" PRIu64 " (%s): %s\n", log, target,
	       rc < 0 ? "model error" : dt_divkind_name(rc), d.opno, line, d.msg);
	if (d.byte_off >= 0)
		printf("first differing byte: offset %" PRId64 ", expected 0x%02x, actual 0x%02x\n",
		       d.byte_off, d.exp_byte, d.act_byte < 0 ? 0 : d.act_byte);
	if (d.picture)
		printf("%s", d.picture);
	if (shrink) {
		struct dt_shrink_res sr;
		/* the budgets of --shrink-runs and --shrink-seconds */
		int k = dt_shrink(&t, nfiles, ops, stop + 1 < n ? stop + 1 : n, &d, o,
				  c->shrink_tests, c->shrink_seconds, NULL, &sr);
		printf("shrunk to %zu ops in %" PRIu64 " runs%s:\n", sr.nops, sr.tests,
		       !k ? "" : sr.flaky ? " (flaky: these ops diverged once, not when re-tested)"
		       : k == -EAGAIN && !sr.replays ? " (replays: false: the log, run once more, "
		       "did not diverge the same way: unshrunk)"
		       : " (did not reproduce as a whole: unshrunk)");
		for (size_t j = 0; j < sr.nops; j++) {
			dt_op_format(&sr.ops[j], line, sizeof(line));
			printf("  %s\n", line);
		}
		if (!k && out) {
			char dir[PATH_MAX + 32];
			snprintf(dir, sizeof(dir), "%s/replay-shrunk", out);
			mkdir(out, 0755);
			if (!dt_write_repro(dir, &t, sr.nfiles, sr.ops, sr.nops, &sr.div, 0))
				printf("shrunk reproducer: %s/repro.sh\n", dir);
		}
		dt_div_free(&sr.div);
		free(sr.ops);
	}
	if (out) {
		char dir[PATH_MAX + 32];
		snprintf(dir, sizeof(dir), "%s/replay", out);
		mkdir(out, 0755);
		if (!dt_write_repro(dir, &t, nfiles, ops, stop + 1 < n ? stop + 1 : n, &d, 0))
			printf("reproducer: %s/repro.sh\n", dir);
	}
	dt_div_free(&d);
	free(ops);
	return 1;
}

/* What the command line asked for, besides the campaign itself. */
struct cli {
	struct dt_campaign c;
	const char *targets[32];
	int ntargets, jobs, merge, quiet_bar, shrink, serial, crash_run, vm;
	int configs, boot_plan;	/* --configs, --boot-plan */
	int chmod_weighted;	/* --weights named chmod (else --user sets it) */
	const char *replay, *json, *crash_log;
	const char *expected;	/* --expected */
	struct dt_xdiffs xd;
	const char *emit;	/* --emit-fstest DIR */
	int fstest_session;	/* --fstest-session */
	int map_sync_given;	/* --map-sync or --no-map-sync was given */
	const char *wspec[16];	/* the --weights, applied after the discipline's */
	int nwspec;
};

static const struct option long_opts[] = {
	{ "ops", required_argument, NULL, 'N' },
	{ "seed", required_argument, NULL, 'S' },
	{ "target", required_argument, NULL, 't' },
	{ "weights", required_argument, NULL, 'w' },
	{ "locality", required_argument, NULL, 'l' },
	{ "huge", required_argument, NULL, 'H' },
	{ "flen", required_argument, NULL, 'f' },
	{ "oplen", required_argument, NULL, 'g' },
	{ "check-every", required_argument, NULL, 'K' },
	{ "files", required_argument, NULL, 'F' },
	{ "shard", required_argument, NULL, 's' },
	{ "replay", required_argument, NULL, 'r' },
	{ "out", required_argument, NULL, 'o' },
	{ "json", required_argument, NULL, 'J' },
	{ "merge", no_argument, NULL, 'M' },
	{ "max-div", required_argument, NULL, 'D' },
	{ "no-shrink", no_argument, NULL, 'n' },
	{ "shrink-runs", required_argument, NULL, 'R' },
	{ "shrink-seconds", required_argument, NULL, 'T' },
	{ "shift-check", required_argument, NULL, 'C' },
	{ "no-remount", no_argument, NULL, 'U' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "quiet-bar", no_argument, NULL, 'B' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "vm", no_argument, NULL, 'v' },
	{ "shrink", no_argument, NULL, 'Z' },
	{ "fiemap-nosync", no_argument, NULL, 'Y' },
	{ "map-sync", no_argument, NULL, 'm' },
	{ "no-map-sync", no_argument, NULL, 'O' },
	{ "map-batch", required_argument, NULL, 'P' },
	{ "fsck-every", required_argument, NULL, 'G' },
	{ "serial", no_argument, NULL, 'L' },
	{ "journal", required_argument, NULL, 'W' },
	{ "crash-script", required_argument, NULL, 'X' },
	{ "crash-replay", required_argument, NULL, 'x' },
	{ "no-pin", no_argument, NULL, 'I' },
	{ "expected", required_argument, NULL, 'E' },
	{ "strict", no_argument, NULL, 'A' },
	{ "user", required_argument, NULL, 'u' },
	{ "emit-fstest", required_argument, NULL, 'e' },
	{ "fstest-session", no_argument, NULL, 'y' },
	{ "configs", no_argument, NULL, 'k' },
	{ "boot-plan", no_argument, NULL, 'p' },
	{ 0 }
};

static void cli_defaults(struct cli *a)
{
	struct dt_campaign *c = &a->c;

	memset(a, 0, sizeof(*a));
	a->jobs = 1;
	c->ops = 10000;
	c->seed = 1;
	c->nfiles = 4;
	c->o.check_every = 1000;
	c->o.shift_check_max = 256 << 10;
	c->o.write_check_max = 128 << 10;
	c->o.map_batch = 1;
	/* a remount is ~1 op in 670 and one fsck costs 0.3-0.8 s under TCG:
	 * at every remount that is ~1,500 fscks (up to 20 min) in a 1e6
	 * run; every 8th keeps a clean verdict every ~5,000 ops */
	c->o.fsck_every = 8;
	c->o.map_sync = DT_MAP_SYNC_DEFAULT;
	c->shard_n = 1;
	c->shrink_tests = 2000;
	c->shrink_seconds = 300;
	c->max_div = 3;
	snprintf(c->out, sizeof(c->out), "difftest-out");
	dt_weights_default(c->weights);
}

/* A seed: a count as -N takes it (so "1e6" is 1000000), else a whole
 * 64-bit number, decimal, 0x hex or 0 octal, negative ones taken modulo
 * 2^64; nothing may follow it. */
static int parse_seed(const char *s, uint64_t *out)
{
	char *end;

	if (!parse_count(s, out))
		return 0;
	errno = 0;
	if (s[0] == '-') {
		long long v = strtoll(s, &end, 0);
		*out = (uint64_t)v;
	} else {
		*out = strtoull(s, &end, 0);
	}
	return errno || end == s || *end || isspace((unsigned char)s[0]) ? -EINVAL : 0;
}

/* A byte-count option in xfs_io's number syntax (rmcmd_cvtnum(): k m g t
 * suffixes), a multiple of unit in [unit, 1t]: 0, or 2 after saying what
 * is wanted. */
static int bytes_opt(const char *name, const char *arg, uint64_t unit, const char *want,
		     uint64_t *v)
{
	int64_t n = rmcmd_cvtnum(0, arg);	/* no block unit: "b" counts 0 */

	*v = n > 0 ? (uint64_t)n : 0;
	if (*v >= unit && *v <= ((uint64_t)1 << 40) && *v % unit == 0)
		return 0;
	fprintf(stderr, "difftest: %s: want %s, not '%s'\n", name, want, arg);
	return 2;
}

/* A count option in [lo, hi]: 0, or 2 after saying what is wrong. */
static int count_opt(const char *name, const char *arg, uint64_t lo, uint64_t hi, uint64_t *v)
{
	if (!parse_count(arg, v) && *v >= lo && *v <= hi)
		return 0;
	if (hi == UINT64_MAX)
		fprintf(stderr, "difftest: %s: want a count >= %" PRIu64 " (e.g. 20000 or 1e6), "
			"not '%s'\n", name, lo, arg);
	else
		fprintf(stderr, "difftest: %s: want a count in %" PRIu64 "..%" PRIu64 ", not '%s'\n",
			name, lo, hi, arg);
	return 2;
}

/* The options taking a number: 0, 2 (message printed), or 1: not one of them. */
static int number_opt(struct cli *a, int opt, const char *arg)
{
	struct dt_campaign *c = &a->c;
	uint64_t v;
	int rc;

	switch (opt) {
	case 'N': return count_opt("--ops", arg, 0, UINT64_MAX, &c->ops);
	case 'K': return count_opt("--check-every", arg, 0, UINT64_MAX, &c->o.check_every);
	case 'D': return count_opt("--max-div", arg, 1, UINT64_MAX, &c->max_div);
	case 'R': return count_opt("--shrink-runs", arg, 0, UINT64_MAX, &c->shrink_tests);
	case 'G': return count_opt("--fsck-every", arg, 0, UINT64_MAX, &c->o.fsck_every);
	case 'P': return count_opt("--map-batch", arg, 1, UINT64_MAX, &c->o.map_batch);
	case 'S':
		if (!parse_seed(arg, &c->seed))
			return 0;
		fprintf(stderr, "difftest: -S: bad seed '%s' (a whole number below 2^64)\n", arg);
		return 2;
	case 'l':
		rc = count_opt("--locality", arg, 0, 100, &v);
		c->locality = (unsigned)v;
		return rc;
	case 'H':
		rc = count_opt("--huge", arg, 0, 100, &v);
		c->huge = (unsigned)v;
		return rc;
	case 'f':
		/* a multiple of 64 KiB: of every block size, so folded
		 * block-aligned offsets stay aligned (gen.c fit_geometry()) */
		rc = bytes_opt("--flen", arg, 65536, "a file length that is a multiple of 64k, "
			       "64k..1t (fsx's -l; e.g. 256k)", &v);
		c->flen = (int64_t)v;
		return rc;
	case 'g':
		rc = bytes_opt("--oplen", arg, 1, "an op length 1..1t (fsx's -o; e.g. 64k)", &v);
		c->oplen = (int64_t)v;
		return rc;
	case 'F':
		rc = count_opt("--files", arg, 1, DT_MAXFILES, &v);
		c->nfiles = (int)v;
		return rc;
	case 'j':
		rc = count_opt("-j", arg, 1, 64, &v);
		a->jobs = (int)v;
		return rc;
	case 'T':
		rc = count_opt("--shrink-seconds", arg, 0, UINT64_MAX, &v);
		c->shrink_seconds = (double)v;
		return rc;
	case 'C':
		rc = count_opt("--shift-check", arg, 4096, INT64_MAX, &v);
		c->o.shift_check_max = (int64_t)v;
		return rc;
	}
	return 1;
}

/* The other options: 0, or 2 after a message. */
static int other_opt(struct cli *a, int opt, const char *arg)
{
	struct dt_campaign *c = &a->c;
	char err[512];
	int k;

	switch (opt) {
	case 't':
		if (a->ntargets == 32) {
			fprintf(stderr, "difftest: too many targets (32 at most)\n");
			return 2;
		}
		a->targets[a->ntargets++] = arg;
		return 0;
	case 'u': {
		unsigned uu, gg;
		if (sscanf(arg, "%u:%u%n", &uu, &gg, &k) != 2 || arg[k] || uu == 0 ||
		    uu > 65535 || gg > 65535) {
			fprintf(stderr, "difftest: --user '%s': want UID:GID, numbers, UID not 0 "
				"(root has CAP_FSETID: nothing to check), both below 65536\n", arg);
			return 2;
		}
		c->o.user = 1;
		c->o.user_uid = uu;
		c->o.user_gid = gg;
		return 0;
	}
	case 'w':
		if (strstr(arg, "chmod") || strstr(arg, "all="))
			a->chmod_weighted = 1;
		/* checked now, applied in parse_args() after the weights of
		 * the discipline (which may come later on the line) */
		if (a->nwspec == 16) {
			fprintf(stderr, "difftest: --weights: at most 16 of them\n");
			return 2;
		}
		if (!dt_weights_parse(c->weights, arg, err, sizeof(err))) {
			a->wspec[a->nwspec++] = arg;
			return 0;
		}
		fprintf(stderr, "difftest: --weights: %s\n", err);
		return 2;
	case 's':
		if (sscanf(arg, "%d/%d%n", &c->shard_i, &c->shard_n, &k) == 2 && !arg[k] &&
		    c->shard_n >= 1 && c->shard_i >= 0 && c->shard_i < c->shard_n)
			return 0;
		fprintf(stderr, "difftest: --shard: expected I/N with 0 <= I < N, got '%s'\n", arg);
		return 2;
	case 'o':
		if (strlen(arg) >= sizeof(c->out)) {
			fprintf(stderr, "difftest: --out: path too long\n");
			return 2;
		}
		snprintf(c->out, sizeof(c->out), "%s", arg);
		return 0;
	case 'W':
		if (strlen(arg) >= sizeof(c->journal)) {
			fprintf(stderr, "difftest: --journal: path too long\n");
			return 2;
		}
		snprintf(c->journal, sizeof(c->journal), "%s", arg);
		return 0;
	case 'r': a->replay = arg; return 0;
	case 'J': a->json = arg; return 0;
	case 'M': a->merge = 1; return 0;
	case 'n': c->no_shrink = 1; return 0;
	case 'U': c->no_remount = 1; return 0;
	case 'q': c->quiet = 1; return 0;
	case 'B': a->quiet_bar = 1; return 0;
	case 'Z': a->shrink = 1; return 0;
	case 'Y': c->fiemap_nosync = 1; return 0;
	case 'm': c->o.map_sync = 1; a->map_sync_given = 1; return 0;
	case 'O': c->o.map_sync = 0; a->map_sync_given = 1; return 0;
	case 'I': c->no_pin = 1; return 0;
	case 'A': c->o.strict = 1; return 0;
	case 'e': a->emit = arg; return 0;
	case 'y': a->fstest_session = 1; return 0;
	case 'L': a->serial = 1; return 0;
	case 'X': a->crash_log = arg; return 0;
	case 'x': a->crash_log = arg; a->crash_run = 1; return 0;
	case 'E': a->expected = arg; return 0;
	case 'h': usage(stdout); exit(0);
	case 'V': printf("difftest version %s\n", RS_VERSION); exit(0);
	case 'v': a->vm = 1; return 0;
	case 'k': a->configs = 1; return 0;
	case 'p': a->boot_plan = 1; return 0;
	}
	usage(stderr);
	return 2;
}

/* Every target spec and the replay log checked before anything runs or
 * is written: 0, or 2 after a message. */
static int check_inputs(const struct cli *a, int argc, char **argv)
{
	char err[1024];
	struct stat st;

	if (a->c.flen && a->c.huge) {
		fprintf(stderr, "difftest: --huge places ops at the format's limit, --flen keeps "
			"them below %" PRId64 " bytes: give one of them\n", a->c.flen);
		return 2;
	}
	if (a->fstest_session && !a->emit) {
		fprintf(stderr, "difftest: --fstest-session goes with --emit-fstest DIR LOG\n");
		return 2;
	}
	if (a->emit && argc - optind != 1) {
		fprintf(stderr, "difftest: --emit-fstest DIR takes one op log (got %d)\n",
			argc - optind);
		return 2;
	}
	if (!a->merge && !a->emit && optind < argc) {
		fprintf(stderr, "difftest: unexpected argument '%s' (see --help)\n", argv[optind]);
		return 2;
	}
	for (int i = 0; i < a->ntargets; i++)
		if (dt_target_spec_check(a->targets[i], err, sizeof(err))) {
			fprintf(stderr, "difftest: -t: %s\n", err);
			return 2;
		}
	const char *log = a->crash_log ? a->crash_log : a->replay;
	const char *what = a->crash_log ? "--crash-script/--crash-replay" : "--replay";
	if (log && stat(log, &st)) {
		fprintf(stderr, "difftest: %s %s: %s\n", what, log, strerror(errno));
		return 2;
	}
	if (log && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "difftest: %s %s: a directory, not an op log\n", what, log);
		return 2;
	}
	return 0;
}

/* The command line into *a: -1 to go on, else the exit status. */
static int parse_args(struct cli *a, int argc, char **argv)
{
	int opt, rc;

	cli_defaults(a);
	while ((opt = getopt_long(argc, argv, "N:S:t:j:qhV", long_opts, NULL)) != -1) {
		if ((rc = number_opt(a, opt, optarg)) == 1)
			rc = other_opt(a, opt, optarg);
		if (rc)
			return rc;
	}
	/* the op mix: the defaults, the write-back points' when the checks
	 * do not write back, then --weights in order */
	char err[256];
	dt_weights_default(a->c.weights);
	if (!a->c.o.map_sync)
		dt_weights_writeback(a->c.weights);
	for (int k = 0; k < a->nwspec; k++)
		if (dt_weights_parse(a->c.weights, a->wspec[k], err, sizeof(err))) {
			fprintf(stderr, "difftest: --weights: %s\n", err);
			return 2;
		}
	if (a->c.o.user && !a->chmod_weighted)
		a->c.weights[DT_CHMOD] = 30;
	return check_inputs(a, argc, argv) ? 2 : -1;
}

/* --merge FILE...: into --json (written only when the merge succeeded)
 * or stdout. */
static int do_merge(const struct cli *a, int argc, char **argv)
{
	char err[512], *text = NULL;
	size_t len = 0;

	if (optind >= argc) {
		fprintf(stderr, "difftest: --merge needs report files\n");
		return 2;
	}
	FILE *m = open_memstream(&text, &len);
	int rc = m ? dt_report_merge(argv + optind, argc - optind, m, err, sizeof(err)) : -ENOMEM;
	if (m)
		fclose(m);
	if (rc) {
		fprintf(stderr, "difftest: --merge: %s\n", m ? err : strerror(ENOMEM));
		free(text);
		return 2;
	}
	FILE *f = a->json ? fopen(a->json, "w") : stdout;
	if (!f || fwrite(text, 1, len, f) != len || (a->json ? fclose(f) : fflush(f))) {
		fprintf(stderr, "difftest: %s: %s\n", a->json ? a->json : "stdout", strerror(errno));
		free(text);
		return 2;
	}
	free(text);
	return 0;
}

/* This shard's own seed stream and share of the ops. */
static void shard_setup(struct dt_campaign *c)
{
	c->base_seed = c->seed;
	if (c->shard_n <= 1)
		return;
	uint64_t s = c->seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(c->shard_i + 1));
	c->seed = dt_rand(&s);
	uint64_t per = c->ops / (uint64_t)c->shard_n;
	c->ops = per + ((uint64_t)c->shard_i < c->ops % (uint64_t)c->shard_n);
	snprintf(c->shard_tag, sizeof(c->shard_tag), "s%d-", c->shard_i);
	snprintf(c->prefix, sizeof(c->prefix), "[shard %d/%d] ", c->shard_i, c->shard_n);
}

static void print_summary(const struct dt_campaign *c, const struct dt_tresult *res, int n,
			  double secs, const char *json)
{
	fprintf(stderr, "difftest: %ssummary (%.1fs, report %s):\n", c->prefix, secs, json);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "  %-24s %-6s %9" PRIu64 " ops %8.0f ops/s  %" PRIu64
			" divergences  max extents %" PRId64 "%s%s\n", res[i].name, res[i].fsname,
			res[i].ops, res[i].seconds - res[i].shrink_seconds > 0 ?
			res[i].ops / (res[i].seconds - res[i].shrink_seconds) : 0.0,
			res[i].divergences, res[i].max_extents, res[i].error[0] ? "  ERROR: " : "",
			res[i].error);
}

/* This process's campaign over the targets, its report and summary:
 * the exit status. */
static int run_campaign(struct cli *a, const char *json)
{
	struct dt_campaign *c = &a->c;
	struct dt_tresult *res = calloc((size_t)a->ntargets, sizeof(*res));
	int bad = 0, fatal = 0;

	if (!res)
		return 2;
	shard_setup(c);
	/* the guest's stderr is a serial tty, but difftest-vm (vm/run) reads
	 * it line by line: a \r bar would show up only at the next newline */
	c->tty = !a->quiet_bar && isatty(2) && !getenv("DIFFTEST_IN_GUEST");
	double t0 = now();
	if (a->ntargets > 1 && !a->serial) {
		fatal = run_targets_parallel(c, a->targets, a->ntargets, res);
	} else {
		for (int i = 0; i < a->ntargets; i++) {
			c->pin_slot = c->shard_i * a->ntargets + i;
			if (dt_campaign_target(c, a->targets[i], &res[i]))
				fatal = 1;
		}
	}
	for (int i = 0; i < a->ntargets; i++)
		if (res[i].divergences)
			bad = 1;
	double secs = now() - t0;
	FILE *f = fopen(json, "w");
	int jrc = f ? dt_report_json(f, c, res, a->ntargets, secs) : -errno;
	if (jrc) {
		fprintf(stderr, "difftest: cannot write %s: %s\n", json, strerror(-jrc));
		fatal = 1;
	}
	if (f)
		fclose(f);
	if (!c->quiet)
		print_summary(c, res, a->ntargets, secs, json);
	free(res);
	free(c->divs);
	return bad ? 1 : fatal ? 2 : 0;
}

/* The concurrent mode's test: a guest target not mounted here. */
static int race_needs_vm(const char *target)
{
	const char *mnt;

	if (!is_guest_target(target, &mnt))
		return 0;
	return !mounted_at(mnt);
}

/* --boot-plan -t T...: the guest boots the targets need, one line each
 * (config.h, dt_config_plan_print()), for difftest-vm. */
static int do_boot_plan(const struct cli *a)
{
	static struct dt_plan_boot boots[DT_PLAN_MAX];
	char err[512];
	int n;

	if (dt_config_plan(a->targets, a->ntargets, boots, &n, err, sizeof(err))) {
		fprintf(stderr, "difftest: --boot-plan: %s\n", err);
		return 2;
	}
	for (int b = 0; b < n; b++)
		dt_config_plan_print(stdout, &boots[b], a->targets);
	return 0;
}

/* Guest targets not mounted here: the run belongs to difftest-vm. */
static int needs_vm(const struct cli *a)
{
	const char *mnt;
	for (int i = 0; i < a->ntargets; i++)
		if (is_guest_target(a->targets[i], &mnt) && !mounted_at(mnt))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	static struct cli a;
	int rc;

	signal(SIGXFSZ, SIG_IGN);	/* writes past limits must fail with EFBIG, not kill us */
	/* --vm-* options belong to difftest-vm (host side of a guest run) */
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--vm-", 5))
			return exec_vm_wrapper(argv);
	/* --threads N / --race-replay: the concurrent mode (race.c) */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--threads") || !strncmp(argv[i], "--threads=", 10) ||
		    !strcmp(argv[i], "--race-replay") || !strncmp(argv[i], "--race-replay=", 14))
			return dt_race_main(argc, argv, race_needs_vm, exec_vm_wrapper);
	if ((rc = parse_args(&a, argc, argv)) >= 0)
		return rc;
	if (a.merge)
		return do_merge(&a, argc, argv);
	if (a.configs) {
		dt_config_list(stdout);
		return 0;
	}
	if (a.boot_plan)
		return do_boot_plan(&a);
	char xerr[512];
	if (dt_xdiff_setup(a.expected, &a.xd, xerr, sizeof(xerr))) {
		fprintf(stderr, "difftest: --expected: %s\n", xerr);
		return 2;
	}
	a.c.o.xdiff = a.xd.n ? &a.xd : NULL;
	if (a.emit)
		return do_emit_fstest(a.emit, argv[optind], a.ntargets ? a.targets[0] : NULL,
				      a.fstest_session);
	/* a replay takes the discipline of its log unless told otherwise */
	if ((a.crash_log || a.replay) && !a.map_sync_given)
		a.c.o.map_sync = log_map_sync(a.crash_log ? a.crash_log : a.replay);
	if (a.crash_log)
		return do_crash_script(a.crash_log, a.ntargets ? a.targets[0] : NULL,
				       a.crash_run ? &a.c.o : NULL, a.c.no_pin);
	if (a.replay) {
		rc = do_replay(a.replay, a.ntargets ? a.targets[0] : NULL, &a.c,
			       a.json || strcmp(a.c.out, "difftest-out") ? a.c.out : NULL, a.shrink);
		return rc == -1 ? exec_vm_wrapper(argv) : rc;
	}
	/* QEMU only when asked: --vm, or a guest target named with -t.
	 * Without either, the host has no default target (a run over a
	 * directory or the model is a choice the user makes); the guest
	 * runs its three mounts, as difftest-vm starts it. */
	if (!a.ntargets) {
		if (!a.vm && !getenv("DIFFTEST_IN_GUEST")) {
			fprintf(stderr,
				"difftest: no target: give -t dir:PATH (a directory here, e.g. on ext4\n"
				"  or XFS), -t model (the model against itself), or -t ext4|xfs|fusefs\n"
				"  or --vm to run in QEMU (root; builds the kernel on first use).\n"
				"  See difftest --help.\n");
			return 2;
		}
		a.targets[a.ntargets++] = "ext4";
		a.targets[a.ntargets++] = "xfs";
		a.targets[a.ntargets++] = "fusefs";
	}
	if (needs_vm(&a) || (a.vm && !getenv("DIFFTEST_IN_GUEST")))
		return exec_vm_wrapper(argv);
	if (mkdir(a.c.out, 0755) && errno != EEXIST) {
		fprintf(stderr, "difftest: --out %s: %s\n", a.c.out, strerror(errno));
		return 2;
	}
	char jpath[PATH_MAX + 32];
	if (!a.json) {
		snprintf(jpath, sizeof(jpath), "%s/report.json", a.c.out);
		a.json = jpath;
	}
	if (a.jobs > 1)
		return run_parallel(argc, argv, a.jobs, a.c.shard_i, a.c.shard_n, a.c.out, a.json);
	return run_campaign(&a, a.json);
}
