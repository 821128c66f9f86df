/* nofp_qsort.c — a hot qsort comparator, built without frame pointers
 * (Makefile: nofp_* rule): libc's qsort and the program both omit them,
 * so only a DWARF unwinder reaches main from the comparator. Runs
 * argv[1] seconds (default 3). The comparator does a little extra work
 * per call so that most samples land in it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "warmup.h"

#define N 20000

static int data[N];
static volatile uint64_t sink;

__attribute__((noinline)) int hot_compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	uint64_t h = (uint64_t)x;

	for (int i = 0; i < 40; i++)
		h = h * 6364136223846793005ULL + 1442695040888963407ULL;
	sink += h;
	return (x > y) - (x < y);
}

__attribute__((noinline)) void sort_round(unsigned seed)
{
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		data[i] = (int)(seed >> 8);
	}
	qsort(data, N, sizeof(data[0]), hot_compare);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;
	unsigned round = 0;

	warm_up();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		sort_round(++round);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("%u rounds, first %d\n", round, data[0]);
	return 0;
}
