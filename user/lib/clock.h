/* clock.h — the clock reads every module needs: nanoseconds of a clock,
 * and CLOCK_MONOTONIC in ns and ms (deadlines, re-read schedules, rate
 * limits). Header-only: each is one vDSO call.
 */
#ifndef PMUBPF_CLOCK_H
#define PMUBPF_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline int64_t mono_ms(void)
{
	return mono_ns() / 1000000;
}

#endif
