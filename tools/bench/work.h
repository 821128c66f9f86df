/* work.h — the frame shared by the overhead workloads (cpu_work.c,
 * syscall_work.c): THREADS threads each run UNITS units of a fixed job,
 * ten calls deep, and the process reports how long that took.
 *
 *   NAME THREADS UNITS [OUT]
 *
 * prints to OUT (default stdout; the profilers that run the workload as
 * their child share its stdout) one line
 *
 *   elapsed_ns N cpu_ns N threads N units N
 *
 * elapsed_ns is wall time from the moment every thread is ready to the
 * moment the last one finishes; cpu_ns is the process's CPU time (user +
 * system) over the same span. The job is fixed, not the time, so a
 * profiler's cost shows up as a longer elapsed_ns. The includer defines
 * `static void unit(void)` (one unit of work) and WORK_NAME.
 */
#ifndef PMUBPF_BENCH_WORK_H
#define PMUBPF_BENCH_WORK_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void unit(void);

static long units;
static pthread_barrier_t ready;

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Ten noinline levels, so every sample has a real stack to walk. */
#define LEVEL(n, next) static __attribute__((noinline)) void level##n(void) { next(); __asm__ volatile("" ::: "memory"); }
static __attribute__((noinline)) void run_units(void)
{
	for (long i = 0; i < units; i++)
		unit();
}
LEVEL(9, run_units) LEVEL(8, level9) LEVEL(7, level8) LEVEL(6, level7)
LEVEL(5, level6) LEVEL(4, level5) LEVEL(3, level4) LEVEL(2, level3)
LEVEL(1, level2) LEVEL(0, level1)

static void *thread_main(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&ready);
	level0();
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 1;
	FILE *out = stdout;
	pthread_t *th;

	units = argc > 2 ? atol(argv[2]) : 1000;
	if (argc < 3 || nthreads < 1 || nthreads > 1024 || units < 1) {
		fprintf(stderr, "usage: %s THREADS UNITS [OUT]\n", WORK_NAME);
		return 2;
	}
	if (argc > 3 && !(out = fopen(argv[3], "w"))) {
		perror(argv[3]);
		return 1;
	}
	th = calloc(nthreads, sizeof(*th));
	if (!th || pthread_barrier_init(&ready, NULL, nthreads + 1))
		return 1;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, thread_main, NULL)) {
			perror("pthread_create");
			return 1;
		}
	int64_t c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), t0 = now_ns(CLOCK_MONOTONIC);
	pthread_barrier_wait(&ready);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	int64_t t1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	fprintf(out, "elapsed_ns %lld cpu_ns %lld threads %d units %ld\n",
		(long long)(t1 - t0), (long long)(c1 - c0), nthreads, units);
	free(th);
	return fclose(out) ? 1 : 0;
}

#endif
