/* nofp_syscall.c — time spent inside system calls, entered from code
 * without frame pointers: do_syscalls calls libc's syscall() in a loop.
 * Most samples then interrupt the kernel, and the user stack must be
 * unwound from the registers saved at kernel entry (not the sample's),
 * through libc's syscall wrapper, to main. Runs argv[1] seconds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "warmup.h"

static volatile uint64_t sink;

__attribute__((noinline)) void do_syscalls(int n)
{
	for (int i = 0; i < n; i++)
		sink += (uint64_t)syscall(SYS_getppid); /* cheap: mostly entry/exit */
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;

	warm_up();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		do_syscalls(10000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("%llu\n", (unsigned long long)sink);
	return 0;
}
