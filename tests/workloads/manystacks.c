/* manystacks.c — a workload with thousands of distinct stacks, to fill
 * small BPF maps on purpose:
 *
 *   manystacks STEPS
 *
 * Each step recurses to a random depth in [1, 300] (deeper than the 127
 * frames a stack keeps) through one of four functions chosen at random
 * per level, spins briefly, and makes one getppid system call at the
 * bottom. Sampled at every hit of syscalls:sys_enter_getppid, the profile
 * must hold exactly STEPS samples (lost ones included), whatever the
 * machine's timers do. Prints "getppid STEPS".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile uint64_t sink;
static uint64_t seed = 88172645463325252ULL;

static unsigned rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (unsigned)(seed >> 33);
}

static void down(int depth);

#define LEVEL(n) static __attribute__((noinline)) void level##n(int d) { down(d - 1); sink++; }
LEVEL(0) LEVEL(1) LEVEL(2) LEVEL(3)

static void (*const levels[4])(int) = { level0, level1, level2, level3 };

static __attribute__((noinline)) void down(int depth)
{
	if (depth <= 0) {
		for (int i = 0; i < 20000; i++)
			sink = sink * 6364136223846793005ULL + 1;
		sink += (uint64_t)syscall(SYS_getppid); /* not cached by libc */
		return;
	}
	levels[rnd() & 3](depth);
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? atol(argv[1]) : 0;

	if (steps <= 0) {
		fprintf(stderr, "usage: manystacks STEPS\n");
		return 2;
	}
	for (long i = 0; i < steps; i++)
		down(1 + (int)(rnd() % 300));
	printf("getppid %ld\n", steps);
	return 0;
}
