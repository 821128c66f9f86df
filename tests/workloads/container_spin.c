/* container_spin.c — the one program of a container image the cgroups
 * test makes from a tarball (podman import: no registry is reachable):
 * spins in container_spin for argv[1] seconds (default 2). Static, so
 * the image is this file alone. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void container_spin(double secs)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
}

int main(int argc, char **argv)
{
	container_spin(argc > 1 ? atof(argv[1]) : 2);
	return 0;
}
