/* threads.c — ten threads with equal work (the seed's concurrent
 * workload): thread K runs tK, all the same loop, for argv[1] seconds
 * (default 3). Prints "tid K TID" as each thread starts (so tests can
 * pick one for -t) and, at exit, each thread's time on a CPU (task-clock, taskclock.h) as "truth tK NS"
 * (to stdout, or the file argv[2]): with ten threads on fewer CPUs the
 * scheduler decides the real shares, and the truth says what it decided.
 * Threads wait on a start flag until argv[3] exists (if given), so a
 * profiler can attach first; with argv[4] = "late" they are not even
 * created before then (a profiler attached with -p must pick up threads
 * created after it started). With argv[5] = "ramp" thread K runs for
 * K/10 of argv[1] seconds instead of all of it, so the threads' shares
 * are far from equal (from ~2% to ~20%): a profiler that spread samples
 * evenly over the threads would fail a shares check.
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "taskclock.h"

static volatile uint64_t sink;
static double secs = 3;
static bool ramp;
static int64_t truth[10];
static pthread_barrier_t start;

static int64_t ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline __attribute__((always_inline)) void spin(int k)
{
	int64_t end;
	uint64_t x = sink | 1;

	printf("tid %d %ld\n", k + 1, (long)syscall(SYS_gettid));
	fflush(stdout);
	pthread_barrier_wait(&start);
	int64_t t0 = thread_clock_ns(); /* opened here: counts from now */
	end = ns(CLOCK_MONOTONIC) + (int64_t)(secs * (ramp ? (k + 1) / 10.0 : 1.0) * 1e9);
	while (ns(CLOCK_MONOTONIC) < end)
		for (int i = 0; i < 10000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	sink = x;
	truth[k] = thread_clock_ns() - t0;
}

#define T(k) static __attribute__((noinline)) void *t##k(void *a) { (void)a; spin(k - 1); return NULL; }
T(1) T(2) T(3) T(4) T(5) T(6) T(7) T(8) T(9) T(10)

static void *(*const fns[10])(void *) = { t1, t2, t3, t4, t5, t6, t7, t8, t9, t10 };

int main(int argc, char **argv)
{
	pthread_t th[10];
	FILE *out;

	if (argc > 1)
		secs = atof(argv[1]);
	bool late = argc > 4 && !strcmp(argv[4], "late");

	ramp = argc > 5 && !strcmp(argv[5], "ramp");

	pthread_barrier_init(&start, NULL, 11);
	for (int k = 0; k < 10 && !late; k++)
		if (pthread_create(&th[k], NULL, fns[k], NULL))
			return 1;
	if (argc > 3)
		while (access(argv[3], F_OK))
			usleep(10000);
	for (int k = 0; k < 10 && late; k++)
		if (pthread_create(&th[k], NULL, fns[k], NULL))
			return 1;
	pthread_barrier_wait(&start);
	for (int k = 0; k < 10; k++)
		pthread_join(th[k], NULL);
	out = argc > 2 ? fopen(argv[2], "w") : stdout;
	if (!out)
		return 1;
	for (int k = 0; k < 10; k++)
		fprintf(out, "truth t%d %lld\n", k + 1, (long long)truth[k]);
	return fclose(out) ? 1 : 0;
}
