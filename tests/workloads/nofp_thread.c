/* nofp_thread.c — the hot code runs in pthread start routines, through a
 * libc function: each of two threads (thread_main) sorts with qsort and a
 * comparator (thread_compare). Built without frame pointers: the path
 * thread_compare <- qsort internals <- thread_main <- start_thread <-
 * clone3 exists only in the CFI. Runs argv[1] seconds (default 3).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "warmup.h"

#define N 20000
#define THREADS 2

static volatile uint64_t sink;
static double secs = 3;

__attribute__((noinline)) int thread_compare(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	uint64_t h = x;

	for (int i = 0; i < 40; i++)
		h = (h ^ (h >> 17)) * 0x9e3779b97f4a7c15ULL;
	sink += h;
	return (x > y) - (x < y);
}

static double elapsed(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

__attribute__((noinline)) void *thread_main(void *arg)
{
	static __thread unsigned v[N];
	unsigned seed = (unsigned)(uintptr_t)arg;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < N; i++)
			v[i] = seed = seed * 1103515245u + 12345u;
		qsort(v, N, sizeof(v[0]), thread_compare);
	} while (elapsed(&t0) < secs);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];

	if (argc > 1)
		secs = atof(argv[1]);
	warm_up();
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, thread_main, (void *)(uintptr_t)(i + 1))) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	printf("done %llu\n", (unsigned long long)sink);
	return 0;
}
