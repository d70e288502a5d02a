/*
 * sysloop.c - syscall rate of the guest (rs-sysloop in the initramfs): the
 * number README quotes for "how fast is a syscall under TCG".  Times N
 * getppid(2) calls (the cheapest round trip into the kernel) and N 1-byte
 * pread(2) calls on a cached tmpfs/ext4 file (a syscall that touches the
 * VFS and the page cache), with CLOCK_MONOTONIC.
 *
 * usage: rs-sysloop [N [FILE]]   (default N=200000, FILE=/tmp/rs-sysloop)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long n = 200000;
	const char *file = "/tmp/rs-sysloop";
	char *end;
	char b = 'x';
	double t0, t1, t2;
	int fd;

	if (argc > 1) {
		errno = 0;
		n = strtol(argv[1], &end, 10);
		if (errno || *end || n <= 0) {
			fprintf(stderr, "usage: rs-sysloop [N [FILE]] (N a positive count)\n");
			return 2;
		}
	}
	if (argc > 2)
		file = argv[2];
	fd = open(file, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || pwrite(fd, &b, 1, 0) != 1) {
		fprintf(stderr, "rs-sysloop: %s: %s\n", file, strerror(errno));
		return 2;
	}
	t0 = now();
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);  /* not the glibc wrapper: never cached */
	t1 = now();
	for (long i = 0; i < n; i++) {
		if (pread(fd, &b, 1, 0) != 1) {
			fprintf(stderr, "rs-sysloop: pread: %s\n", strerror(errno));
			return 1;
		}
	}
	t2 = now();
	close(fd);
	printf("rs-sysloop: getppid %ld calls in %.3f s = %.0f/s (%.2f us each)\n",
	       n, t1 - t0, n / (t1 - t0), (t1 - t0) * 1e6 / n);
	printf("rs-sysloop: pread-1B %ld calls in %.3f s = %.0f/s (%.2f us each)\n",
	       n, t2 - t1, n / (t2 - t1), (t2 - t1) * 1e6 / n);
	return 0;
}
