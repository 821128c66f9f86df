/* cpu_work.c — CPU-bound overhead workload: each unit is a fixed run of
 * dependent integer arithmetic (xorshift), no memory traffic, no system
 * calls, so a profiler's cost is the only thing that can stretch it.
 * See work.h for the command line and the output line.
 */
#define WORK_NAME "cpu_work"
#include "work.h"

static volatile uint64_t sink;

static __attribute__((noinline)) void unit(void)
{
	uint64_t x = sink | 1;

	for (int i = 0; i < 100000; i++) { /* about 0.1 ms */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
}
