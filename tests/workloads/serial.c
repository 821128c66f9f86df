/* serial.c — ten functions with known shares of CPU time (the seed's
 * serial workload): f1..f10, where fK does K units of the same loop, are
 * called in turn until argv[1] seconds (default 3) have passed.
 *
 * Ground truth is measured, not assumed: each call's thread CPU time is
 * added to its function's total, printed at exit as "truth fK NS" lines
 * on stdout (or into the file argv[2]). Truth shares are then ~K/55 but
 * exact for this run, whatever the caches or the VM did.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

	if (!out)
		return 1;
	while (ns(CLOCK_MONOTONIC) < end) {
		for (int k = 0; k < 10; k++) {
			int64_t t0 = ns(CLOCK_THREAD_CPUTIME_ID);

			fns[k]();
			truth[k] += ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		}
	}
	for (int k = 0; k < 10; k++)
		fprintf(out, "truth f%d %lld\n", k + 1, (long long)truth[k]);
	return fclose(out) ? 1 : 0;
}
