/* SPDX-License-Identifier: MIT */
/*
 * test_main.c - difftest's command line (main.c), through the binary:
 * every malformed option (counts such as "1e400", "-5", "abc", seeds
 * with trailing junk or past 2^64, unknown targets and profiles, missing
 * replay logs, bad shards) gets exit status 2, a message naming the
 * option, and nothing run: no --out directory appears.  Valid edge values
 * (a 64-bit seed, "1e3" ops) are taken.  Each run is bounded by timeout(1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char tmp[256];

/* Run difftest with args (and --out DIR), stderr into tmp/err:
 * the exit status. */
static int run(const char *args)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "cd %s && rm -rf out && timeout 60 %s %s --out out "
		 ">%s/stdout 2>%s/err", tmp, DIFFTEST_BIN, args, tmp, tmp);
	int st = system(cmd);
	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

static int err_has(const char *what)
{
	char p[300], buf[4096] = "";
	snprintf(p, sizeof(p), "%s/err", tmp);
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	if (!strstr(buf, what))
		fprintf(stderr, "stderr lacks '%s':\n%s\n", what, buf);
	return strstr(buf, what) != NULL;
}

static int out_exists(void)
{
	char p[300];
	struct stat st;
	snprintf(p, sizeof(p), "%s/out", tmp);
	return stat(p, &st) == 0;
}

static void refused(const char *args, const char *msg)
{
	int rc = run(args);
	if (rc != 2)
		fprintf(stderr, "'%s': exit %d\n", args, rc);
	assert_int_equal(rc, 2);
	assert_true(err_has(msg));
	assert_false(out_exists());
}

static void test_bad_counts(void **state)
{
	(void)state;
	refused("-t model -N 1e400", "--ops");
	refused("-t model -N -5", "--ops");
	refused("-t model -N abc", "--ops");
	refused("-t model -N 1.5", "--ops");
	refused("-t model -N ''", "--ops");
	refused("-t model --check-every x", "--check-every");
	refused("-t model --files 0", "--files");
	refused("-t model --files 17", "--files");
	refused("-t model -j 0", "-j");
	refused("-t model -j 65", "-j");
	refused("-t model --max-div 0", "--max-div");
	refused("-t model --map-batch 0", "--map-batch");
	refused("-t model --shift-check 100", "--shift-check");
	refused("-t model --locality 101", "--locality");
	refused("-t model --shrink-runs -1", "--shrink-runs");
	refused("-t model --shrink-seconds 1e99", "--shrink-seconds");
	refused("-t model --fsck-every nan", "--fsck-every");
	refused("-t model --flen 100000", "--flen");	/* not a multiple of 64k */
	refused("-t model --flen 0", "--flen");
	refused("-t model --flen 2t", "--flen");
	refused("-t model --flen 256q", "--flen");
	refused("-t model --flen 99999999999999999999k", "--flen");
	refused("-t model --oplen 0", "--oplen");
	refused("-t model --oplen -1", "--oplen");
	refused("-t model --flen 256k --huge 10", "--huge");
}

static void test_bad_seeds(void **state)
{
	(void)state;
	refused("-t model -S 5abc", "bad seed");
	refused("-t model -S abc", "bad seed");
	refused("-t model -S 18446744073709551616", "bad seed");
	refused("-t model -S ''", "bad seed");
	refused("-t model -S 0x", "bad seed");
	refused("-t model -S ' 5'", "bad seed");
}

static void test_bad_targets(void **state)
{
	(void)state;
	refused("-t nosuch -N 10", "unknown target");
	refused("-t model:nosuch -N 10", "unknown profile");
	refused("-t faulty:nonsense -N 10", "unknown faulty target");
	refused("-t faulty:wrong-errno:zfs -N 10", "unknown profile");
	refused("-t dir:/nonexistent-difftest-dir -N 10", "No such file");
	refused("-t dir:/tmp:nosuch -N 10", "'nosuch' is no profile");
	refused("-t model -N 10 --shard 3/2", "--shard");
	refused("-t model -N 10 --shard 1/2x", "--shard");
	refused("-t model -N 10 --weights pwrite=x", "--weights");
	refused("-t model -N 10 extra", "unexpected argument");
	refused("-t model -N 10 --no-such-option", "usage");
}

static void test_bad_replay(void **state)
{
	(void)state;
	refused("--replay /nonexistent.log", "--replay /nonexistent.log");
	refused("--replay /", "a directory");
	refused("--crash-replay /nonexistent.log", "/nonexistent.log");
	refused("--crash-script /nonexistent.log", "/nonexistent.log");
	/* a log that is not an op log */
	char p[300];
	snprintf(p, sizeof(p), "%s/bad.log", tmp);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "# target: model\nf0 frobnicate 1 2\n");
	fclose(f);
	char args[400];
	snprintf(args, sizeof(args), "--replay %s", p);
	assert_int_equal(run(args), 2);
	assert_true(err_has("bad.log:2"));
}

/* Bare difftest on the host starts no QEMU: with neither -t nor --vm it
 * names the choices and exits 2 before anything runs (the run is bounded
 * by timeout(1), so a hand-over to difftest-vm would not pass either). */
static void test_no_default_target_on_host(void **state)
{
	(void)state;
	unsetenv("DIFFTEST_IN_GUEST");
	refused("", "no target: give -t dir:PATH");
	refused("-N 100 -S 7", "or --vm to run in QEMU");
}

static void test_version(void **state)
{
	char p[300], buf[256] = "";
	FILE *f;
	size_t n;

	(void)state;
	assert_int_equal(run("--version"), 0);
	snprintf(p, sizeof(p), "%s/stdout", tmp);
	f = fopen(p, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	assert_string_equal(buf, "difftest version " RS_VERSION "\n");
	assert_int_equal(run("-V"), 0);
	assert_false(out_exists());
}

static void test_valid_edges(void **state)
{
	(void)state;
	/* a seed above 2^63, a hex seed and an exponent count are taken */
	assert_int_equal(run("-t model -N 1e2 -S 18446744073709551615 -q"), 0);
	assert_true(out_exists());
	char p[300], buf[8192] = "";
	snprintf(p, sizeof(p), "%s/out/report.json", tmp);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	buf[fread(buf, 1, sizeof(buf) - 1, f)] = 0;
	fclose(f);
	assert_non_null(strstr(buf, "\"seed\": \"18446744073709551615\","));
	assert_non_null(strstr(buf, "\"ops_per_target\": 100,"));
	assert_int_equal(run("-t model -N 10 -S 0x10 -q"), 0);
	assert_int_equal(run("-t model -N 10 -S -1 -q"), 0);	/* 2^64 - 1, as before */
	assert_int_equal(run("--help"), 0);
}

static int file_has(const char *rel, const char *what)
{
	char p[400], *buf = calloc(1, 1 << 22);
	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	FILE *f = fopen(p, "r");
	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return 0;
	}
	buf[fread(buf, 1, (1 << 22) - 1, f)] = 0;
	fclose(f);
	int has = strstr(buf, what) != NULL;
	free(buf);
	return has;
}

/* --strict is recorded where a replay or a reader needs it; --emit-fstest
 * takes exactly one log and writes the test under DIR */
static void test_strict_and_emit_fstest(void **state)
{
	(void)state;
	refused("--emit-fstest x", "takes one op log");
	refused("--emit-fstest x a.log b.log", "takes one op log");
	/* the op stream of the default mix before fsx's other ops joined
	 * it and before the observer-free default: its log holds a mode
	 * word xfs_io cannot issue (below) */
	assert_int_equal(run("-t faulty:wrong-errno:ext4 -N 2000 --strict -q --no-shrink --map-sync "
			     "--weights dio_write=0,dio_read=0,copy_range=0,dedupe=0 "
			     "--max-div 1"), 1);
	assert_true(file_has("out/report.json", "\"strict\": 1,"));
	assert_true(file_has("out/div-faulty_wrong-errno_ext4-1/ops.log", "\n# strict: 1\n"));
	assert_true(file_has("out/div-faulty_wrong-errno_ext4-1/repro.sh", "difftest --strict"));
	/* an unshrunk log of random ops holds mode words xfs_io cannot
	 * issue: refused, naming the op (kept: every run empties out/) */
	char args[1024];
	snprintf(args, sizeof(args), "cp %s/out/div-faulty_wrong-errno_ext4-1/ops.log %s/s.log",
		 tmp, tmp);
	assert_int_equal(system(args), 0);
	snprintf(args, sizeof(args), "--emit-fstest %s/fst -t ext4 %s/s.log", tmp, tmp);
	assert_int_equal(run(args), 2);
	assert_true(err_has("has no xfs_io form"));
	/* a log xfs_io can run becomes tests/ext4/900 */
	snprintf(args, sizeof(args), "%s/e.log", tmp);
	FILE *f = fopen(args, "w");
	assert_non_null(f);
	fprintf(f, "# target: ext4\n# files: 1\n# profile: ext4\n# blocksize: 4096\n"
		"f0 pwrite -S 0x41 0 4096\nf0 finsert 0 4096\n");
	fclose(f);
	snprintf(args, sizeof(args), "--emit-fstest %s/fst %s/e.log", tmp, tmp);
	assert_int_equal(run(args), 0);
	assert_true(file_has("fst/tests/ext4/900", "_require_xfs_io_command \"finsert\""));
	assert_true(file_has("fst/tests/ext4/900.out", "file0 size: 8192\n"));
	/* a target with no xfstests form is refused */
	snprintf(args, sizeof(args), "--emit-fstest %s/fst2 -t model %s/e.log", tmp, tmp);
	assert_int_equal(run(args), 2);
	assert_true(err_has("an xfstests test is made for ext4, xfs or fusefs"));
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/dt-main-XXXXXX");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

/* A nearly full target (free=, here the model target faulty:enospc that
 * runs out of space as ext4 and XFS do, RULES.md N1-N3): its ENOSPCs and
 * short writes are checked, not reset, and the run is clean; one that
 * writes every byte and answers ENOSPC is caught. */
static void test_nospace(void **state)
{
	(void)state;
	assert_int_equal(run("-t faulty:enospc:ext4 -t faulty:enospc:xfs -N 4000 -S 2 -q"), 0);
	assert_true(file_has("out/report.json", "\"enospc_resets\": 0,"));
	assert_false(file_has("out/report.json", "\"enospc_checked\": 0,"));
	assert_int_equal(run("-t faulty:enospc:xfs -N 3000 -S 3 --huge 20 --no-map-sync -q"), 0);
	assert_int_equal(run("-t faulty:enospc-lie:ext4 -N 3000 -S 2 -q --max-div 1 --no-shrink"), 1);
	assert_true(file_has("out/div-faulty_enospc-lie_ext4-1/ops.log", " pwrite "));
}

/* RULES.md N5: an ENOSPC of a punch, insert or collapse is a divergence on
 * ext4 (its splits may use the reserved clusters) and a restart on XFS. */
static void test_nospace_shift(void **state)
{
	(void)state;
	assert_int_equal(run("-t faulty:enospc-shift:ext4 -N 2000 -S 2 -q --max-div 1"), 1);
	assert_true(file_has("out/report.json", "ENOSPC"));
	assert_int_equal(run("-t faulty:enospc-shift:xfs -N 2000 -S 2 -q"), 0);
	assert_false(file_has("out/report.json", "\"enospc_resets\": 0,"));
	/* an ENOSPC that a replay meets only with the file system filled
	 * just before the op: shrunk with a fill, which the reproducer keeps */
	assert_int_equal(run("-t faulty:enospc-full:ext4 -N 2000 -S 2 -q --max-div 1"), 1);
	assert_true(file_has("out/div-faulty_enospc-full_ext4-1/ops.log", "\nfill\n"));
	assert_false(file_has("out/div-faulty_enospc-full_ext4-1/ops.log", "replays: false"));
	assert_true(file_has("out/report.json", "\"replays\": true"));
	/* without the fill the same ops do not diverge again */
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "cd %s && grep -v '^fill$' out/div-faulty_enospc-full_ext4-1/"
		 "ops.log > nofill.log", tmp);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(run("--replay nofill.log"), 0);
}

/* The observer-free discipline: the model against itself is clean, a
 * fault is still caught, the log and the report say which discipline ran,
 * a replay takes the log's, and the write-back points are in the mix. */
static void test_observer_free(void **state)
{
	(void)state;
	assert_int_equal(run("-t model:ext4 -t model:xfs -t model:bytes -N 3000 -S 5 --no-map-sync -q"), 0);
	assert_true(file_has("out/report.json", "\"map_sync\": 0,"));
	/* the default discipline is observer-free */
	assert_int_equal(run("-t model:xfs -N 2000 -S 5 -q"), 0);
	assert_true(file_has("out/report.json", "\"map_sync\": 0,"));
	assert_int_equal(run("-t faulty:flaky -N 3000 -S 1 --no-map-sync -q --max-div 1"), 1);
	assert_true(file_has("out/div-faulty_flaky-1/ops.log", "\n# map-sync: 0\n"));
	assert_true(file_has("out/div-faulty_flaky-1/ops.log", " fiemap "));
	assert_true(file_has("out/div-faulty_flaky-1/ops.log", " sync_range -"));
	assert_int_equal(run("-t faulty:lost-unwritten:ext4 -N 3000 -S 1 --no-map-sync -q "
			     "--max-div 1"), 1);
	char args[1024];
	snprintf(args, sizeof(args), "cp %s/out/div-faulty_lost-unwritten_ext4-1/ops.log %s/lu.log",
		 tmp, tmp);
	assert_int_equal(system(args), 0);
	snprintf(args, sizeof(args), "--replay %s/lu.log", tmp);
	assert_int_equal(run(args), 1);
	/* the same weights with --map-sync: no write-back points in the mix */
	assert_int_equal(run("-t faulty:flaky -N 3000 -S 1 --map-sync -q --max-div 1 --no-shrink"), 1);
	assert_true(file_has("out/div-faulty_flaky-1/ops.log", "\n# map-sync: 1\n"));
	assert_false(file_has("out/div-faulty_flaky-1/ops.log", " sync_range -"));
	assert_false(file_has("out/div-faulty_flaky-1/ops.log", " fiemap "));
}

/* --replay LOG --shrink keeps to --shrink-runs (it once used fixed
 * budgets of 2000 runs and 300 s whatever the command line said). */
static void test_replay_shrink_budget(void **state)
{
	char cmd[700], line[256];
	unsigned long nops = 0, runs = 0;

	(void)state;
	assert_int_equal(run("-t faulty:insert-off-by-one -N 3000 -S 1 -q --no-shrink --max-div 1"), 1);
	snprintf(cmd, sizeof(cmd), "cd %s && cp out/div-faulty_insert-off-by-one-1/ops.log div.log",
		 tmp);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(run("--replay div.log --shrink --shrink-runs 3"), 1);
	snprintf(cmd, sizeof(cmd), "%s/stdout", tmp);
	FILE *f = fopen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "shrunk to %lu ops in %lu runs", &nops, &runs) == 2)
			break;
	fclose(f);
	/* the run that confirms the divergence, then at most 3 candidates */
	assert_true(runs >= 1 && runs <= 4);
	assert_true(nops > 2);		/* unbounded, ddmin gets it to 2 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_counts),
		cmocka_unit_test(test_strict_and_emit_fstest),
		cmocka_unit_test(test_bad_seeds),
		cmocka_unit_test(test_bad_targets),
		cmocka_unit_test(test_bad_replay),
		cmocka_unit_test(test_valid_edges),
		cmocka_unit_test(test_no_default_target_on_host),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_observer_free),
		cmocka_unit_test(test_nospace),
		cmocka_unit_test(test_nospace_shift),
		cmocka_unit_test(test_replay_shrink_budget),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
