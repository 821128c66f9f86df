/* nofp_signal.c — hot code in a signal handler: a SIGALRM interval timer
 * (ITIMER_REAL, 500 Hz) interrupts spin(); the handler runs signal_work().
 * Built without frame pointers: from signal_work the unwinder must cross
 * the kernel's signal frame (libc's __restore_rt trampoline, through the
 * saved ucontext) to reach spin and main. Runs argv[1] seconds (default 3).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include "warmup.h"

static volatile uint64_t sink;
static volatile sig_atomic_t handled;

__attribute__((noinline)) void signal_work(void)
{
	uint64_t h = sink | 1;

	for (int i = 0; i < 1000000; i++)
		h = h * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = h;
}

static void on_alarm(int sig)
{
	(void)sig;
	signal_work();
	handled++;
}

__attribute__((noinline)) void spin(double secs)
{
	struct timespec t0, t;
	uint64_t x = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x = x * 31 + (uint64_t)i;
		sink += x;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };

	warm_up();
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	spin(argc > 1 ? atof(argv[1]) : 3);
	printf("%d signals\n", (int)handled);
	return 0;
}
