/* SPDX-License-Identifier: MIT */
/*
 * race.h - difftest's concurrent mode (--threads N, race.c): windows of N
 * ops that run at once on one file, judged against every serial order of
 * the window (the model enumerates them), plus the kernel log and a
 * watchdog.
 */
#ifndef DIFFTEST_RACE_H
#define DIFFTEST_RACE_H

#include "dt.h"

#define DT_RACE_MAXT	4	/* threads (ops per window) */
#define DT_RACE_MAXCAND	4	/* model states kept that match what was seen */

/* What the target showed after a window: its file's size, bytes and map,
 * and what each op of the window returned. */
struct dt_race_obs {
	int64_t size;
	unsigned char *data;	/* [0, size) */
	struct rm_run *act;	/* the target's FIEMAP as runs (may == state) */
	size_t nact;
	int have_map;		/* 0: no FIEMAP, maps not judged */
	int64_t ret[DT_RACE_MAXT];	/* bytes or -errno per op */
	/* nonzero: what the kernel answers for op k before the file system
	 * sees it (fusefs, dt_t_fuse_front()): that answer in every order */
	int64_t front[DT_RACE_MAXT];
};

/* 1 when the op's return value is judged: it is the model's in the same
 * order (reads, mapped I/O and fsync are run for their interference only:
 * a buffered read on ext4 takes no i_rwsem and a mapped access is per
 * page, so neither is atomic against a concurrent write or shift). */
int dt_race_judged(int kind);

/* Judge a window ops[0..n) on file 0: is there a state s in cand[0..*ncand)
 * and an order of the ops such that running them in that order on s gives
 * every judged result in obs and the final size, bytes and map?  others[]
 * are the session's other files (the reflink sources; unchanged in a
 * window), others[0] ignored.  Returns the number of (state, order) pairs
 * that match: then cand[] holds up to DT_RACE_MAXCAND distinct matching
 * final states (the old ones freed) and order[] the first matching order
 * (indices into ops).  0: none matches (why says how the issue order
 * differs), cand unchanged.  -ENOMEM. */
int dt_race_judge(struct rm_file **cand, int *ncand, struct rm_file *const *others, int nfiles,
		  const struct dt_op *ops, int n, const struct dt_race_obs *obs, int *order,
		  char *why, size_t whyn);

/* Next permutation of p[0..n) in lexicographic order; 0 after the last. */
int dt_race_next_perm(int *p, int n);

/* A kernel log message (one /dev/kmsg record's text, or a dmesg line) that
 * reports a bug: its class ("BUG", "lockdep", "hung task", ...), or NULL. */
const char *dt_kmsg_match(const char *msg);

/* The concurrent mode's command line (difftest --threads N ..., or
 * --race-replay LOG).  needs_vm(target): the target is a guest mount not
 * present here; exec_vm(argv) hands the command line to difftest-vm.
 * Exit status 0 clean, 1 divergence, 2 usage or setup error. */
int dt_race_main(int argc, char **argv, int (*needs_vm)(const char *target),
		 int (*exec_vm)(char **argv));

#endif /* DIFFTEST_RACE_H */
