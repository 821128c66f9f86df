/* warmup.h — the unwinding workloads' first 0.3 s, spent away from their
 * hot function.
 *
 * pmubpf builds a process's unwind tables at its first sample; until they
 * are published (a few ms on a quiet machine, tens of ms on a loaded CI
 * machine) BPF walks that process by frame pointer, which these binaries
 * lack: those samples' stacks stop early. The tests assert on the hot
 * function's stacks (what the unwinder does once it has the tables), so
 * the hot function starts after that delay, not during it.
 */
#ifndef PMUBPF_WORKLOAD_WARMUP_H
#define PMUBPF_WORKLOAD_WARMUP_H

#include <stdint.h>
#include <time.h>

__attribute__((noinline)) static void warm_up(void)
{
	struct timespec t0, t;
	static volatile uint64_t spin;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++)
			spin = spin + 1;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) < 300000000LL);
}

#endif
