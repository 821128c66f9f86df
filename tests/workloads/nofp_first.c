/* nofp_first.c — a process whose first samples are in functions built
 * without frame pointers (issue 39): a frame-pointer walk from them skips
 * their caller, so only a DWARF walk that has the tables of the files
 * they are in, from the first sample on, names them.
 *
 *   nofp_first nap MS N [wait]  nap() sleeps MS ms, N times (nanosleep by
 *                               syscall(): the user leaf is libc's syscall);
 *                               with wait, first reads a byte from stdin
 *                               (a recorder attaches meanwhile)
 *   nofp_first spin MS          spin() burns MS ms of CPU
 *   nofp_first warm MS          warm() the same (another leaf: a run that
 *                               gets the binary read, which a check of
 *                               spin leaves aside)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

__attribute__((noinline)) double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	sink += (uint64_t)syscall(SYS_nanosleep, &ts, NULL);
}

/* CPU for ms, in the function it is written in: the clock read every
 * 4096 turns (now_s, a call of its own). */
#define BURN(ms)                                                                       \
	do {                                                                           \
		double end_ = now_s() + (double)(ms) / 1e3;                            \
		uint64_t x_ = sink;                                                    \
		do {                                                                   \
			for (int i_ = 0; i_ < 4096; i_++)                              \
				x_ = x_ * 6364136223846793005ULL + 1442695040888963407ULL; \
			sink = x_;                                                     \
		} while (now_s() < end_);                                              \
	} while (0)

__attribute__((noinline)) void spin(long ms)
{
	BURN(ms);
}

__attribute__((noinline)) void warm(long ms)
{
	BURN(ms);
}

int main(int argc, char **argv)
{
	long ms = argc > 2 ? atol(argv[2]) : 30;

	if (argc > 1 && !strcmp(argv[1], "nap")) {
		long n = argc > 3 ? atol(argv[3]) : 10;
		char c;

		if (argc > 4 && !strcmp(argv[4], "wait") && read(0, &c, 1) != 1)
			return 1;
		for (long i = 0; i < n; i++)
			nap(ms);
	} else if (argc > 1 && !strcmp(argv[1], "spin")) {
		spin(ms);
	} else if (argc > 1 && !strcmp(argv[1], "warm")) {
		warm(ms);
	} else {
		fprintf(stderr, "usage: nofp_first nap MS N [wait] | spin MS | warm MS\n");
		return 2;
	}
	return 0;
}
