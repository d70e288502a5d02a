/* fuzz_replay.c - run a libFuzzer harness over a corpus without libFuzzer.
 *
 * Linked with any harness's LLVMFuzzerTestOneInput() in the ordinary
 * (gcc, plain or ASan+UBSan) builds, so every input kept in a harness's
 * corpus, the seeds and each crash that fuzzing ever found, is replayed by
 * ctest as a regression test.  A harness signals a broken invariant by
 * aborting, exactly as under libFuzzer.
 *
 * usage: NAME_replay FILE_OR_DIR...   (exit 0: every input ran)
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../include/rm_vec.h"	/* also built into other modules' harnesses */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f) {
		perror(path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		perror(path);
		fclose(f);
		return -1;
	}
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of @dir, in name order so a failure names the same
 * input every time. */
static int run_dir(const char *dir, int *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	if (!d) {
		perror(dir);
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (RM_VEC_RESERVE(&names, &cap, n + 1, 64)) {
			err = -1;
			break;
		}
		if (!(names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2))) {
			err = -1;
			break;
		}
		sprintf(names[n++], "%s/%s", dir, e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (!err && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			err = run_file(names[i]);
			(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return err;
}

int main(int argc, char **argv)
{
	int count = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st)) {
			perror(argv[i]);
			return 1;
		}
		if (S_ISDIR(st.st_mode) ? run_dir(argv[i], &count) : (count++, run_file(argv[i])))
			return 1;
	}
	if (!count) {
		fprintf(stderr, "%s: no inputs found\n", argv[0]);
		return 1;
	}
	printf("%d passed, 0 failed\n", count);
	return 0;
}
