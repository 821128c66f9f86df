/* exec_work.c — a process that runs one image, then execs another in the
 * same pid (as `exec` in a shell does, not a fork):
 *
 *   exec_work SECONDS GOFILE PROGRAM ARGS...
 *
 * Waits until GOFILE exists ("-": no wait), so a profiler can attach
 * with -p first; spins in before_exec() for SECONDS; then execv(PROGRAM,
 * ARGS) — PROGRAM is argv[0] of the new image too. With EXEC_WORK_TRUTH
 * set, appends "truth before_exec NS" to that file first: the spin's time
 * on a CPU (task-clock, taskclock.h), the quantity its samples estimate.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "taskclock.h"

static volatile uint64_t sink;

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static __attribute__((noinline)) void before_exec(double secs)
{
	int64_t end = mono_ns() + (int64_t)(secs * 1e9);
	uint64_t x = sink | 1;

	while (mono_ns() < end)
		for (int i = 0; i < 10000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	sink = x;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: exec_work SECONDS GOFILE PROGRAM ARGS...\n");
		return 2;
	}
	if (strcmp(argv[2], "-"))
		while (access(argv[2], F_OK))
			usleep(10000);
	const char *truth = getenv("EXEC_WORK_TRUTH");
	int64_t t0 = truth ? thread_clock_ns() : 0;

	before_exec(atof(argv[1]));
	if (truth) {
		FILE *f = fopen(truth, "a");

		if (!f)
			return 1;
		fprintf(f, "truth before_exec %lld\n", (long long)(thread_clock_ns() - t0));
		fclose(f);
	}
	execv(argv[3], argv + 3);
	perror("exec_work: execv");
	return 127;
}
