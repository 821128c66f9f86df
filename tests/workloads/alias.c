/* alias.c — a workload that runs in lock-step with a sampling timer, to
 * show (and test) aliasing.
 *
 *   alias SECONDS TRUTHFILE PERIOD_NS
 *
 * Pinned to one CPU, it runs rounds of exactly PERIOD_NS of wall-clock
 * time on a fixed schedule (round r starts at t0 + r * PERIOD_NS): the
 * first 70% of each round in hot_a(), the rest in hot_b(). A timer that
 * fires every PERIOD_NS on that CPU hits the same phase of every round,
 * so without countermeasures one function gets (nearly) every sample:
 * a profile that says 100% / 0% where the truth is 70% / 30%. pmubpf
 * dithers its timer periods to break that lock (docs/architecture.md).
 *
 * Truth is measured: each call's time on a CPU (task-clock) goes to its function's
 * total, written as "truth hot_a NS" / "truth hot_b NS" lines.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "taskclock.h"

static volatile uint64_t sink;

static int64_t ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Spin until CLOCK_MONOTONIC reaches until: short bursts of arithmetic
 * between clock reads, so samples land in the caller's own code. */
static inline __attribute__((always_inline)) void spin_until(int64_t until)
{
	uint64_t x = sink | 1;

	while (ns(CLOCK_MONOTONIC) < until) {
		for (int i = 0; i < 200; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	}
	sink = x;
}

__attribute__((noinline)) static void hot_a(int64_t until) { spin_until(until); }
__attribute__((noinline)) static void hot_b(int64_t until) { spin_until(until); }

int main(int argc, char **argv)
{
	cpu_set_t set;

	if (argc != 4) {
		fprintf(stderr, "usage: alias SECONDS TRUTHFILE PERIOD_NS\n");
		return 2;
	}
	double secs = atof(argv[1]);
	int64_t period = atoll(argv[3]);
	FILE *out = fopen(argv[2], "w");
	int64_t truth[2] = { 0 };

	if (!out || period < 10000)
		return 2;
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("alias: sched_setaffinity"); /* still runs; less strict */

	int64_t t0 = ns(CLOCK_MONOTONIC), rounds = (int64_t)(secs * 1e9) / period;
	for (int64_t r = 0; r < rounds; r++) {
		int64_t start = t0 + r * period, c0, c1, c2;

		c0 = thread_clock_ns();
		hot_a(start + period * 7 / 10);
		c1 = thread_clock_ns();
		hot_b(start + period);
		c2 = thread_clock_ns();
		truth[0] += c1 - c0;
		truth[1] += c2 - c1;
	}
	fprintf(out, "truth hot_a %lld\ntruth hot_b %lld\n", (long long)truth[0], (long long)truth[1]);
	return fclose(out) ? 1 : 0;
}
