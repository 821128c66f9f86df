/* dlopen_work.c — spins in main for argv[2] seconds (default 0.3), then
 * dlopen()s argv[1] (build/tests/libhotlib.so) and spins in its
 * hotlib_spin for argv[3] seconds (default 1): the library is mapped long
 * after the profiler first saw the process. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double pre = argc > 2 ? atof(argv[2]) : 0.3, hot = argc > 3 ? atof(argv[3]) : 1;
	double t0 = now();
	void *h;
	uint64_t (*spin)(uint64_t);

	if (argc < 2)
		return 2;
	while (now() - t0 < pre)
		sink++;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h || !(spin = (uint64_t (*)(uint64_t))dlsym(h, "hotlib_spin"))) {
		fprintf(stderr, "dlopen_work: %s\n", dlerror());
		return 1;
	}
	t0 = now();
	while (now() - t0 < hot)
		sink += spin(100000);
	return 0;
}
