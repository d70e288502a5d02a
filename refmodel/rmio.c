/* SPDX-License-Identifier: MIT */
/*
 * rmio.c - the rmio command-line tool: xfs_io's command syntax and output
 * over one refmodel file, so that a script and its golden output carry over
 * between the model and a real file system.
 *
 *   rmio [-p ext4|xfs|bytes] [-b BLOCKSIZE] [-m MAXBYTES] [-n NAME] [-f] [-T]
 *        [-L BYTES] [-c "CMD"]... [SCRIPT]
 *
 * Commands given with -c run first, in order (as xfs_io runs them), then
 * the lines of SCRIPT ("-" is standard input; '#' starts a comment line).
 * With neither, commands are read from standard input.  Every command runs
 * even after one failed; the exit status is 0 if all succeeded, 1 if any
 * failed (malformed or failing with an errno), 2 for a bad rmio option.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "refmodel.h"

static void usage(FILE *out)
{
	fprintf(out,
"usage: rmio [-p ext4|xfs|bytes] [-b BLOCKSIZE] [-m MAXBYTES] [-n NAME] [-f] [-T]\n"
"            [-L BYTES] [-c \"CMD\"]... [SCRIPT]\n"
"\n"
"Runs xfs_io-style commands on a model of one regular file (refmodel) and\n"
"prints what xfs_io 6.1 prints for them on a real file.\n"
"\n"
"  -p PROFILE    file system rules: ext4-6.1 (default), xfs-6.1, ext4-6.12,\n"
"                xfs-6.12 (Linux 6.1 or 6.12; ext4 and xfs mean 6.1), or bytes\n"
"                (byte-granular insert/collapse/punch/zero: an extension)\n"
"  -b BLOCKSIZE  block size, a power of two from 512 to 65536 (default 4096);\n"
"                xfs_io suffixes accepted (4k)\n"
"  -m MAXBYTES   s_maxbytes (default: the profile's own)\n"
"  -n NAME       file name printed by fiemap, stat, md5sum (default \"file\")\n"
"  -f            accepted for xfs_io compatibility (the model file always\n"
"                starts empty, as after xfs_io -f on a new file)\n"
"  -T            report a fixed 1 second in the timing lines of pwrite/pread,\n"
"                making output reproducible\n"
"  -L BYTES      refuse a pwrite, pread, md5sum or xxh3sum moving more than\n"
"                BYTES (default 1g; 0 = no limit): the model holds written\n"
"                bytes in memory\n"
"  -c CMD        run CMD; may be repeated, runs in order\n"
"  SCRIPT        file with one command per line ('-' = stdin), # comments\n"
"  --help        this text\n"
"\n"
"Commands:\n");
	rmcmd_print_help(out);
	fprintf(out,
"\n"
"Differences from xfs_io: the timing line has xfs_io's layout but the\n"
"model's time (xfstests filters it with _filter_xfs_io); fiemap's BLOCK-RANGE\n"
"shows the extents laid out back to back from disk block 0 (the model has no\n"
"disk) and extents are maximal runs of one state (a file system may split\n"
"them); seek answers as with a cold page cache (unwritten = hole); stat prints\n"
"only fd.path, fd.flags, stat.type, stat.size and stat.blocks; help prints\n"
"usage lines only; every malformed command makes the exit status 1 and never\n"
"reaches the model; error prefixes that xfs_io spells \"xfs_io:\" are \"rmio:\".\n"
"Exit status: 0 all commands succeeded, 1 a command failed, 2 bad usage.\n");
}

static int run_stream(struct rmcmd_session *s, FILE *in, const char *what)
{
	char *line = NULL;
	size_t cap = 0;
	int failed = 0;

	while (getline(&line, &cap, in) >= 0) {
		if (rmcmd_run(s, line) < 0)
			failed = 1;
		fflush(s->out);
	}
	if (ferror(in)) {
		fprintf(stderr, "rmio: reading %s: %s\n", what, strerror(errno));
		failed = 1;
	}
	free(line);
	return failed;
}

/* What the command line asks for. */
struct args {
	struct rm_opts opts;
	const char *name;
	const char **cmds;	/* -c commands, in order */
	int ncmds;
	int fixed_time;
	int64_t io_limit;
};

/* Parse rmio's options into a: 0, 1 after --help, or -1 for bad usage
 * (after the message). */
static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	int64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "p:b:m:n:fTL:c:", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (rm_profile_parse2(optarg, &a->opts.profile, &a->opts.kernel) < 0) {
				fprintf(stderr, "rmio: unknown profile '%s' (ext4-6.1, xfs-6.1, "
					"ext4-6.12, xfs-6.12, bytes; ext4 and xfs mean 6.1)\n",
					optarg);
				return -1;
			}
			break;
		case 'b':
			v = rmcmd_cvtnum(512, optarg);
			if (v < 512 || v > 65536 || (v & (v - 1))) {
				fprintf(stderr, "rmio: bad block size '%s' (a power of two, 512..65536)\n",
					optarg);
				return -1;
			}
			a->opts.blocksize = (uint32_t)v;
			break;
		case 'm':
			v = rmcmd_cvtnum(a->opts.blocksize, optarg);
			if (v <= 0) {
				fprintf(stderr, "rmio: bad maxbytes '%s'\n", optarg);
				return -1;
			}
			a->opts.maxbytes = v;
			break;
		case 'n':
			a->name = optarg;
			break;
		case 'L':
			a->io_limit = rmcmd_cvtnum(4096, optarg);
			if (a->io_limit < 0) {
				fprintf(stderr, "rmio: bad limit '%s'\n", optarg);
				return -1;
			}
			break;
		case 'f':
			break;
		case 'T':
			a->fixed_time = 1;
			break;
		case 'c':
			a->cmds[a->ncmds++] = optarg;
			break;
		case 'H':
			usage(stdout);
			return 1;
		default:
			fprintf(stderr, "Try 'rmio --help'.\n");
			return -1;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "rmio: at most one SCRIPT (got %d); try 'rmio --help'\n",
			argc - optind);
		return -1;
	}
	return 0;
}

/* Run SCRIPT (or standard input when there is neither a SCRIPT nor a -c
 * command): 1 if a command failed or the script cannot be read. */
static int run_script_arg(struct rmcmd_session *s, int argc, char **argv, int ncmds)
{
	const char *path;
	FILE *in;
	int failed;

	if (optind >= argc)
		return ncmds == 0 ? run_stream(s, stdin, "standard input") : 0;
	path = argv[optind];
	in = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	if (!in) {
		fprintf(stderr, "rmio: %s: %s\n", path, strerror(errno));
		return 1;
	}
	failed = run_stream(s, in, path);
	if (in != stdin)
		fclose(in);
	return failed;
}

int main(int argc, char **argv)
{
	struct args a = {
		.opts = { .profile = RM_PROFILE_EXT4, .blocksize = 4096 },
		.name = "file",
		.io_limit = RMCMD_DEFAULT_IO_LIMIT,
	};
	struct rm_file *f = NULL;
	struct rmcmd_session s;
	int failed = 0, r;

	a.cmds = calloc((size_t)argc + 1, sizeof(*a.cmds));
	if (!a.cmds) {
		fprintf(stderr, "rmio: out of memory\n");
		return 2;
	}
	r = parse_args(argc, argv, &a);
	if (r) {
		free(a.cmds);
		return r > 0 ? 0 : 2;
	}
	r = rm_file_new(&a.opts, &f);
	if (r < 0) {
		fprintf(stderr, "rmio: cannot create the model file: %s\n",
			strerror(-r));
		free(a.cmds);
		return 2;
	}
	rmcmd_session_init(&s, f, a.name, stdout, stderr);
	if (a.fixed_time)
		s.fixed_usec = 1000000;
	s.io_limit = a.io_limit;

	for (int i = 0; i < a.ncmds; i++) {
		if (rmcmd_run(&s, a.cmds[i]) < 0)
			failed = 1;
		fflush(stdout);
	}
	failed |= run_script_arg(&s, argc, argv, a.ncmds);
	rm_file_free(f);
	free(a.cmds);
	return failed ? 1 : 0;
}
