/* serial.c — ten functions with known shares of CPU time (the seed's
 * serial workload): f1..f10, where fK does K units of the same loop, are
 * called until argv[1] seconds (default 3) have passed, each round in a
 * fresh random order. A fixed order would make the round a period of its
 * own: when it lands near a multiple of the sampling period, each function
 * is hit at the same phase every round and its share drifts by many
 * binomial sigma (seen in CI: chi-square 134 on 9 degrees of freedom).
 * A random order gives each call a random phase, so the samples behave
 * as the independent draws the accuracy test's statistics assume.
 * PMUBPF_SERIAL_FIXED=1 in the environment keeps the fixed order f1..f10
 * (the seed's serial workload, which `make bench` measures aliasing on).
 *
 * Ground truth is measured, not assumed: each call's time on a CPU (the
 * thread's task-clock, taskclock.h) is
 * added to its function's total, printed at exit as "truth fK NS" lines
 * on stdout (or into the file argv[2]). Truth shares are then ~K/55 but
 * exact for this run, whatever the caches or the VM did.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "taskclock.h"

#define UNIT_ITERS 40000

static volatile uint64_t sink;

static inline __attribute__((always_inline)) void work(int units)
{
	uint64_t x = sink | 1;

	for (long i = 0; i < (long)units * UNIT_ITERS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
}

#define F(k) static __attribute__((noinline)) void f##k(void) { work(k); }
F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10)

static void (*const fns[10])(void) = { f1, f2, f3, f4, f5, f6, f7, f8, f9, f10 };

static int64_t ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	FILE *out = argc > 2 ? fopen(argv[2], "w") : stdout;
	int64_t truth[10] = { 0 }, end = ns(CLOCK_MONOTONIC) + (int64_t)(secs * 1e9);

	uint64_t rng = (uint64_t)ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32);
	int order[10], fixed = getenv("PMUBPF_SERIAL_FIXED") != NULL;

	if (!out)
		return 1;
	for (int k = 0; k < 10; k++)
		order[k] = k;
	while (ns(CLOCK_MONOTONIC) < end) {
		for (int i = 9; i > 0 && !fixed; i--) { /* Fisher-Yates with xorshift64 */
			int j, t;

			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			j = (int)(rng % (uint64_t)(i + 1));
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (int i = 0; i < 10; i++) {
			int k = order[i];
			int64_t t0 = thread_clock_ns();

			fns[k]();
			truth[k] += thread_clock_ns() - t0;
		}
	}
	for (int k = 0; k < 10; k++)
		fprintf(out, "truth f%d %lld\n", k + 1, (long long)truth[k]);
	return fclose(out) ? 1 : 0;
}
