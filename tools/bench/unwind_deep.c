/* unwind_deep.c — the --call-graph benchmark's workload (unwind_bench.sh):
 * a call chain `depth` frames deep in the program's own code, with the
 * work at its bottom, so that a frame-pointer walk and a DWARF walk see
 * the same stack. Built twice, with and without frame pointers.
 * Usage: unwind_deep SECONDS DEPTH; prints "iterations N" at exit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t leaf_work(void)
{
	uint64_t x = sink | 1;

	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

/* Not a tail call: the volatile store after it keeps every frame. */
__attribute__((noinline)) uint64_t level(int n)
{
	uint64_t r;

	if (n <= 0)
		return leaf_work();
	r = level(n - 1);
	sink += r;
	return r + 1;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	int depth = argc > 2 ? atoi(argv[2]) : 16;
	struct timespec t0, t;
	unsigned long long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 16; i++, n++)
			level(depth);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("iterations %llu\n", n);
	return 0;
}
