/* manystacks.c — a workload with thousands of distinct stacks, to fill
 * small BPF maps on purpose: each step recurses to a random depth in
 * [1, 300] (deeper than the 127 frames a stack keeps) through one of four
 * functions chosen at random per level, then spins briefly. Runs until it
 * has used argv[1] seconds of CPU time (default 2; CPU time, not wall
 * time, so that a loaded machine still gets as many samples) and prints
 * its CPU time as "cpu_ns N", so a test can check that every sample is
 * accounted for, lost or not.
 *
 * `manystacks -n STEPS` instead takes exactly STEPS steps, each making one
 * getppid system call at the bottom of its recursion, and prints
 * "getppid STEPS": sampled at every hit of syscalls:sys_enter_getppid,
 * the profile must hold exactly STEPS samples (lost ones included),
 * whatever the machine's timers do.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static int use_syscall;
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
		if (use_syscall)
			sink += (uint64_t)syscall(SYS_getppid); /* not cached by libc */
		return;
	}
	levels[rnd() & 3](depth);
}

static int64_t ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "-n")) {
		long steps = atol(argv[2]);

		use_syscall = 1;
		for (long i = 0; i < steps; i++)
			down(1 + (int)(rnd() % 300));
		printf("getppid %ld\n", steps);
		return 0;
	}

	double secs = argc > 1 ? atof(argv[1]) : 2;
	int64_t end = (int64_t)(secs * 1e9);

	while (ns(CLOCK_PROCESS_CPUTIME_ID) < end)
		down(1 + (int)(rnd() % 300));
	printf("cpu_ns %lld\n", (long long)ns(CLOCK_PROCESS_CPUTIME_ID));
	return 0;
}
