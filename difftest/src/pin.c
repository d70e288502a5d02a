/* SPDX-License-Identifier: MIT */
/*
 * pin.c - keep one difftest run on one CPU, so that a seed replays.
 *
 * Why: a divergence is only worth something if `difftest -S SEED` finds it
 * again, and the shrinker's candidates only shrink it if they meet the
 * on-disk layout the run met.  On ext4 that layout depends on the CPU the
 * writer runs on: the multi-block allocator serves files of at most
 * s_mb_stream_request (16) blocks from per-CPU locality-group
 * preallocations (ext4_mb_group_or_file(): ac->ac_lg =
 * raw_cpu_ptr(sbi->s_locality_groups)).  A process the scheduler moves
 * between CPUs gets other blocks, physically adjacent extents merge or do
 * not, and extent-tree leaf boundaries move.  Measured in the 2-vCPU guest
 * (seed 1, 11,000 ops, same mkfs UUID and hash seed): pinned runs left
 * the same block map every time, unpinned ones one of several; mutant 01,
 * whose bug needs a leaf boundary at the insert offset, was missed by an
 * unpinned run now and then (kernel-patches/mutants/README.md).
 *
 * Each run (a target of a shard) takes a slot; slot k goes to the
 * (k mod n)-th of the n CPUs the process may use, so parallel targets
 * and shards spread over the CPUs instead of piling onto the first.
 */
#include <errno.h>
#include <sched.h>

#include "dt.h"

int dt_cpu_pick(const cpu_set_t *set, int slot)
{
	int n = CPU_COUNT(set);
	if (n <= 0 || slot < 0)
		return -1;
	int want = slot % n;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, set) && want-- == 0)
			return cpu;
	return -1;
}

int dt_pin(int slot)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	int cpu = dt_cpu_pick(&set, slot);
	if (cpu < 0)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	return cpu;
}
