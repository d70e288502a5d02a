/* SPDX-License-Identifier: MIT */
/*
 * rmio.c - the rmio command-line tool: xfs_io's command line, commands and
 * output over one refmodel file, so that a script and its golden output
 * carry over between the model and a real file system.
 *
 *   rmio [-p ext4|xfs|bytes] [-b BLOCKSIZE] [-m MAXBYTES] [-l SRC] [-fritx]
 *        [-T] [-L BYTES] [--strict] [--strict-exit] [[-c|-C] "CMD"]... FILE
 *
 * As xfs_io: FILE names the file (the model file here: its name is what
 * fiemap, stat and md5sum print), the -c commands run in order, and with
 * no -c the commands are read from standard input ("quit" ends them).
 * The exit status is xfs_io's: 1 if a command failed the way xfs_io counts
 * a failure (an errno, a bad number or option), 0 otherwise; an unknown
 * command or a bad argument count is reported and does not count.
 * --strict-exit counts every malformed command too.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "refmodel.h"

#ifndef RS_VERSION
#error "RS_VERSION (the project version) comes from the top CMakeLists.txt"
#endif

#define SHORT_USAGE \
	"Usage: rmio [-fritxTV] [-p ext4|xfs|bytes] [-b bs] [-m maxbytes] [-l src] [-L bytes]\n" \
	"            [--strict] [--strict-exit] [[-c|-C] cmd]... file\n"

static void usage(FILE *out)
{
	fprintf(out, SHORT_USAGE
"\n"
"Runs xfs_io commands on a model of one regular file (refmodel) and prints\n"
"what xfs_io 6.1 prints for them on a real ext4 or XFS file.  FILE names the\n"
"model file (printed by fiemap, stat, md5sum); no real file is opened or\n"
"created unless -l names one to read.\n"
"\n"
"Options shared with xfs_io:\n"
"  -c CMD        run CMD; may be repeated, runs in order.  Without -c the\n"
"                commands are read from standard input, one a line, until\n"
"                its end or \"quit\"\n"
"  -C CMD        the same as -c (there is one file)\n"
"  -f            accepted (the model file always exists, empty at the start,\n"
"                as after xfs_io -f on a new file)\n"
"  -d            O_DIRECT: pwrite and pread as direct I/O on a device of\n"
"                512-byte logical blocks (misaligned: EINVAL as 6.1 says)\n"
"  -r            read-only: pwrite and fallocate fail with EBADF, truncate\n"
"                with EINVAL, as on an O_RDONLY descriptor\n"
"  -t            O_TRUNC: the file starts empty even with -l\n"
"  -i, -x        accepted (an idle thread, expert mode: nothing to change\n"
"                for the commands rmio has)\n"
"  -V            print the version and exit\n"
"Extensions (xfs_io has none of these, or uses the letter otherwise):\n"
"  -p PROFILE    file system rules: ext4-6.1 (default), xfs-6.1, ext4-6.12,\n"
"                xfs-6.12 (Linux 6.1 or 6.12; ext4 and xfs mean 6.1), or bytes\n"
"                (byte-granular insert/collapse/punch/zero)\n"
"  -b BLOCKSIZE  block size, a power of two from 512 to 65536 (default 4096);\n"
"                xfs_io suffixes accepted (4k)\n"
"  -m MAXBYTES   s_maxbytes (default: the profile's own)\n"
"  -l SRC        load SRC, a real file, as the initial content: its data\n"
"                (SEEK_DATA) becomes written blocks, its holes stay holes\n"
"  -T            report a fixed 1 second in the timing lines of pwrite/pread,\n"
"                making output reproducible\n"
"  -L BYTES      refuse a pwrite, pread, md5sum, xxh3sum or -l moving more\n"
"                than BYTES (default 1g; 0 = no limit): the model holds\n"
"                written bytes in memory\n"
"  --strict      the intended semantics: none of the kernel errata of\n"
"                refmodel/ERRATA.md (default: copy the kernel's behaviour)\n"
"  --strict-exit exit 1 also for an unknown command or a bad argument count\n"
"                (xfs_io exits 0 for them)\n"
"  -h, --help    this text\n"
"  --version     same as -V\n"
"\n"
"Commands (md5sum and xxh3sum are extensions):\n");
	rmcmd_print_help(out);
	fprintf(out,
"\n"
"Differences from xfs_io: the timing line has xfs_io's layout but the\n"
"model's time (xfstests filters it with _filter_xfs_io); fiemap's BLOCK-RANGE\n"
"shows the extents laid out back to back from disk block 0 (the model has no\n"
"disk) and extents are maximal runs of one state (a file system may split\n"
"them); seek answers as with a cold page cache (unwritten = hole); stat prints\n"
"xfs_io's lines with fixed values where the model has none (stat.ino = 0,\n"
"times at the epoch, XFS's dioattr of a 512-byte-sector disk); help prints\n"
"usage lines only; '#' starts a comment line (xfs_io: command \"#\" not\n"
"found).\n"
"Exit status: 0, or 1 if a command failed or the command line is wrong.\n");
}

/* Run commands until the end of in or "quit". */
static void run_stream(struct rmcmd_session *s, FILE *in, int strict,
		      int *failed)
{
	char *line = NULL;
	size_t cap = 0;
	int prompt = isatty(fileno(in)) && isatty(fileno(s->out));

	for (;;) {
		int r;

		if (prompt) {
			fputs("rmio> ", s->out);
			fflush(s->out);
		}
		if (getline(&line, &cap, in) < 0)
			break;
		r = rmcmd_run(s, line);
		fflush(s->out);
		if (r == 1)
			break;
		if (r < 0 && (strict || r != RMCMD_E_IGNORED))
			*failed = 1;
	}
	if (ferror(in)) {
		fprintf(stderr, "rmio: reading standard input: %s\n",
			strerror(errno));
		*failed = 1;
	}
	free(line);
}

/* What the command line asks for. */
struct args {
	struct rm_opts opts;
	const char *name;	/* FILE */
	const char *load;	/* -l SRC */
	const char **cmds;	/* -c commands, in order */
	int ncmds;
	int fixed_time;
	int read_only;
	int direct;
	int trunc;
	int strict;
	int64_t io_limit;
};

/* Parse rmio's options into a: 0, 1 after --help or --version, or -1 for
 * bad usage (after the message). */
static int parse_args(int argc, char **argv, struct args *a)
{
	enum { OPT_STRICT = 256, OPT_STRICT_EXIT };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "strict-exit", no_argument, NULL, OPT_STRICT_EXIT },
		{ NULL, 0, NULL, 0 },
	};
	int64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "p:b:m:l:fdritxTL:c:C:hV", longopts, NULL)) != -1) {
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
		case 'l':
			a->load = optarg;
			break;
		case 'L':
			a->io_limit = rmcmd_cvtnum(4096, optarg);
			if (a->io_limit < 0) {
				fprintf(stderr, "rmio: bad limit '%s'\n", optarg);
				return -1;
			}
			break;
		case 'f':
		case 'i':
		case 'x':
			break;
		case 't':
			a->trunc = 1;
			break;
		case 'r':
			a->read_only = 1;
			break;
		case 'd':
			a->direct = 1;
			break;
		case 'T':
			a->fixed_time = 1;
			break;
		case OPT_STRICT:	/* intended semantics: no kernel errata (ERRATA.md) */
			a->opts.strict = 1;
			break;
		case OPT_STRICT_EXIT:
			a->strict = 1;
			break;
		case 'c':
		case 'C':
			a->cmds[a->ncmds++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("rmio version %s\n", RS_VERSION);
			return 1;
		default:
			/* getopt printed the complaint; xfs_io adds its
			 * usage line and exits 1 */
			fputs(SHORT_USAGE, stderr);
			return -1;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, argc == optind
			? "rmio: no file given (FILE names the model file, as xfs_io's file)\n"
			: "rmio: one file only (got %d)\n", argc - optind);
		fputs(SHORT_USAGE, stderr);
		return -1;
	}
	a->name = argv[optind];
	return 0;
}

/* -l SRC: copy SRC's data segments (SEEK_DATA/SEEK_HOLE) into the model
 * and give it SRC's size.  0, or -1 after a message. */
static int load_file(struct rm_file *f, const char *src, int64_t limit)
{
	int fd = open(src, O_RDONLY);
	char *buf = NULL;
	off_t size, data = 0, hole;
	int64_t total = 0;
	int rc = -1;

	if (fd < 0) {
		fprintf(stderr, "rmio: -l %s: %s\n", src, strerror(errno));
		return -1;
	}
	size = lseek(fd, 0, SEEK_END);
	buf = malloc(1 << 20);
	if (size < 0 || !buf) {
		fprintf(stderr, "rmio: -l %s: %s\n", src,
			strerror(size < 0 ? errno : ENOMEM));
		goto out;
	}
	while (data < size) {
		data = lseek(fd, data, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;
		hole = data < 0 ? -1 : lseek(fd, data, SEEK_HOLE);
		if (hole < 0) {
			fprintf(stderr, "rmio: -l %s: seek: %s\n", src, strerror(errno));
			goto out;
		}
		total += hole - data;
		if (limit > 0 && total > limit) {
			fprintf(stderr, "rmio: -l %s: more than %lld bytes of data (rmio -L)\n",
				src, (long long)limit);
			goto out;
		}
		while (data < hole) {
			size_t want = hole - data < (1 << 20) ? (size_t)(hole - data) : (1 << 20);
			ssize_t n = pread(fd, buf, want, data);
			ssize_t w;

			if (n <= 0) {
				fprintf(stderr, "rmio: -l %s: read: %s\n", src,
					n < 0 ? strerror(errno) : "unexpected end of file");
				goto out;
			}
			w = rm_pwrite(f, buf, (size_t)n, data);
			if (w != n) {
				fprintf(stderr, "rmio: -l %s: the model refused the data at %lld: %s\n",
					src, (long long)data,
					strerror(w < 0 ? (int)-w : EIO));
				goto out;
			}
			data += n;
		}
	}
	if (rm_size(f) != size && rm_truncate(f, size) < 0) {
		fprintf(stderr, "rmio: -l %s: size %lld is beyond the profile's s_maxbytes\n",
			src, (long long)size);
		goto out;
	}
	rc = 0;
out:
	free(buf);
	close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	struct args a = {
		.opts = { .profile = RM_PROFILE_EXT4, .blocksize = 4096 },
		.io_limit = RMCMD_DEFAULT_IO_LIMIT,
	};
	struct rm_file *f = NULL;
	struct rmcmd_session s;
	int failed = 0, quit = 0, r;

	a.cmds = calloc((size_t)argc + 1, sizeof(*a.cmds));
	if (!a.cmds) {
		fprintf(stderr, "rmio: out of memory\n");
		return 1;
	}
	r = parse_args(argc, argv, &a);
	if (r) {
		free(a.cmds);
		return r > 0 ? 0 : 1;
	}
	r = rm_file_new(&a.opts, &f);
	if (r < 0) {
		fprintf(stderr, "rmio: cannot create the model file: %s\n",
			strerror(-r));
		free(a.cmds);
		return 1;
	}
	/* -t: open(O_TRUNC) empties the file xfs_io opens; here that is
	 * what -l loaded, so nothing is loaded */
	if (a.load && !a.trunc && load_file(f, a.load, a.io_limit) < 0) {
		rm_file_free(f);
		free(a.cmds);
		return 1;
	}
	rmcmd_session_init(&s, f, a.name, stdout, stderr);
	if (a.fixed_time)
		s.fixed_usec = 1000000;
	s.io_limit = a.io_limit;
	s.read_only = a.read_only;
	s.direct = a.direct;

	for (int i = 0; i < a.ncmds && !quit; i++) {
		r = rmcmd_run(&s, a.cmds[i]);
		fflush(stdout);
		if (r == 1)
			quit = 1;
		else if (r < 0 && (a.strict || r != RMCMD_E_IGNORED))
			failed = 1;
	}
	if (a.ncmds == 0)
		run_stream(&s, stdin, a.strict, &failed);
	rm_file_free(f);
	free(a.cmds);
	return failed ? 1 : 0;
}
