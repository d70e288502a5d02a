/* SPDX-License-Identifier: MIT */
/*
 * campaign.h - a difftest campaign (several targets, one seed/shard), its
 * per-target results and the JSON report (report.c), including merging the
 * reports of several shards or machines.
 */
#ifndef DIFFTEST_CAMPAIGN_H
#define DIFFTEST_CAMPAIGN_H

#include "dt.h"

/* One divergence as the report gives it.  Each field says which run it
 * comes from: the campaign's run (orig), or the shrunk log the reproducer
 * holds (shrunk, valid when shrink_result is DT_SHRUNK).  Plain data: it
 * travels from a target's child process through a pipe (main.c). */
enum dt_shrink_result {
	DT_SHRINK_OFF,		/* --no-shrink: the reproducer is the window */
	DT_SHRUNK,		/* the reproducer is the shrunk log */
	DT_SHRINK_FLAKY,	/* shrunk, did not diverge again: window kept */
	DT_SHRINK_NO_REPRO,	/* the window did not diverge on fresh files */
	DT_SHRINK_ERROR,	/* the shrink itself failed (setup, memory) */
};

struct dt_divpoint {
	int kind, file;		/* enum dt_divkind; the file's index in its log */
	uint64_t opno;		/* 0-based index of the diverging op in its log */
	char op[160];		/* that op, as an op log line */
	char msg[512];
};

struct dt_divrec {
	char target[PATH_MAX + 32];
	char dir[2 * PATH_MAX + 256];	/* the reproducer's directory */
	struct dt_divpoint orig;	/* in the campaign's run */
	size_t window_ops;		/* ops of the window the shrink started from */
	int shrink_result;		/* enum dt_shrink_result */
	int replays;			/* the window replayed: 1, 0; -1 not tried (--no-shrink) */
	struct dt_divpoint shrunk;	/* in the shrunk log (DT_SHRUNK) */
	size_t shrunk_ops;		/* its length (DT_SHRUNK) */
	uint64_t shrink_tests;
	int shrink_complete;
	double shrink_seconds;
};

struct dt_tresult {
	char name[PATH_MAX + 32];
	char fsname[32], profile[16];
	/* the guest file system's configuration (config.h, "" for dir:/model:
	 * targets) and the mount options /proc/mounts shows for it */
	char config[128], mount_options[512];
	char notes[512];
	char error[1024];
	uint32_t blocksize;
	uint64_t disabled;
	double t0, seconds, shrink_seconds;	/* ops/s excludes shrinking */
	uint64_t ops, divergences, enospc_resets, enospc_checked, remount_fallbacks, syscalls;
	uint64_t setid_removals;
	uint64_t fresh_restored, fresh_mkfs;	/* struct dt_target */
	uint64_t kind_count[DT_NKINDS];
	uint64_t errs[DT_NKINDS][DT_NERRNO];
	int64_t max_extents, max_model_runs;
	/* on-disk checks at remounts (depth.c) */
	int max_depth, max_btree;	/* measured; valid when depth_runs */
	uint64_t depth_runs, fsck_runs, fsck_errors;
	double depth_seconds, fsck_seconds;
	char depth_note[256];
	/* where the time went (struct dt_exec) */
	double kind_sec[DT_NKINDS];
	double full_sec, map_sec, data_sec;
	double file_sec[DT_MAXFILES];
	uint64_t map_calls, map_extents;
	uint64_t full_checks, bytes_checked;
	/* CPU time of this run (getrusage deltas): difftest itself, user and
	 * kernel, and its children (fsck, depth probes, mkfs).  Against
	 * seconds this says whether the run was CPU-bound or waiting. */
	double cpu_user, cpu_sys, cpu_children;
	int cpu;		/* the CPU the run was pinned to; -1: not pinned */
	/* known differences of the running kernel (expected.c) */
	uint64_t expected_diffs;
	char expected[512];	/* "id=count,..." */
};

/* Live progress of one target run in a child process (targets run at
 * once, main.c; shared memory): the child writes, the parent prints one
 * line for all targets.  Display only: torn reads do no harm. */
struct dt_progress {
	volatile uint64_t done, total, divergences;
	volatile int64_t max_extents;
	volatile double rate;
	volatile int finished;	/* the target's run is over (maybe stopped early) */
};

struct dt_campaign {
	uint64_t seed;		/* this shard's seed */
	uint64_t base_seed;
	uint64_t ops;		/* per target */
	int nfiles;
	unsigned weights[DT_NKINDS];
	unsigned locality;	/* --locality PCT (struct dt_gen) */
	unsigned huge;		/* --huge PCT (struct dt_gen) */
	int64_t flen, oplen;	/* --flen, --oplen (struct dt_gen) */
	struct dt_opts o;
	int shard_i, shard_n;
	char shard_tag[32];
	char out[PATH_MAX];
	int no_shrink, no_remount, quiet, tty, fiemap_nosync;
	int no_pin;		/* --no-pin: let the scheduler move us (pin.c) */
	int pin_slot;		/* this run's slot (pin.c): shard * targets + target */
	char journal[PATH_MAX];	/* --journal DIR: each op logged before it runs */
	uint64_t shrink_tests;
	double shrink_seconds;
	uint64_t max_div;
	char prefix[64];
	double last_progress;
	struct dt_progress *live;	/* set: report progress here, print nothing */
	struct dt_divrec *divs;
	size_t ndivs, divs_cap;
};

int dt_campaign_target(struct dt_campaign *c, const char *spec, struct dt_tresult *r);
int dt_report_json(FILE *f, const struct dt_campaign *c, const struct dt_tresult *r,
		   int nr, double seconds);
/* Merge JSON reports (files) into out: counters summed, max_* maxed,
 * seconds = max (wall clock of parallel shards), divergences concatenated,
 * targets merged by name.  0, or -errno with a message in err. */
int dt_report_merge(char *const *files, int n, FILE *out, char *err, size_t errn);
/* The same over reports in memory (bufs[i], lens[i] bytes, named names[i]
 * in messages): what dt_report_merge() does after reading the files.
 * Bad input (not JSON, not a difftest report, a value whose type differs
 * between reports, a counter overflowing 64 bits) writes nothing to out. */
int dt_report_merge_mem(const char *const *bufs, const size_t *lens, const char *const *names,
			int n, FILE *out, char *err, size_t errn);

#endif /* DIFFTEST_CAMPAIGN_H */
