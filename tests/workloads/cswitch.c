/* cswitch.c — a workload of known context-switch counts, for the
 * context-switches software event (a counter in frequency mode, sampled
 * in the scheduler with the kernel's registers, not in an interrupt):
 * two threads pass a byte back and forth over two pipes for argv[1]
 * seconds (default 2), in ping_loop() and pong_loop(); each blocks in
 * read() once per round trip.
 *
 * Ground truth is the kernel's own count: each thread's voluntary +
 * involuntary context switches (getrusage RUSAGE_THREAD) around its loop,
 * printed as "truth ping_loop N" / "truth pong_loop N" (to stdout, or the
 * file argv[2]).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int to_pong[2], to_ping[2];
static double secs = 2;
static long truth[2];

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

static __attribute__((noinline)) void ping_loop(void)
{
	int64_t end = mono_ns() + (int64_t)(secs * 1e9);
	char c = 1;

	while (mono_ns() < end) {
		if (write(to_pong[1], &c, 1) != 1 || read(to_ping[0], &c, 1) != 1)
			exit(1);
	}
	c = 0; /* tells pong to stop */
	if (write(to_pong[1], &c, 1) != 1)
		exit(1);
}

static __attribute__((noinline)) void pong_loop(void)
{
	char c;

	for (;;) {
		if (read(to_pong[0], &c, 1) != 1)
			exit(1);
		if (!c)
			return;
		if (write(to_ping[1], &c, 1) != 1)
			exit(1);
	}
}

static void *pong_main(void *arg)
{
	long s0 = switches();

	(void)arg;
	pong_loop();
	truth[1] = switches() - s0;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;
	FILE *out;
	long s0;

	if (argc > 1)
		secs = atof(argv[1]);
	if (pipe(to_pong) || pipe(to_ping) || pthread_create(&th, NULL, pong_main, NULL))
		return 1;
	s0 = switches();
	ping_loop();
	truth[0] = switches() - s0;
	pthread_join(th, NULL);
	out = argc > 2 ? fopen(argv[2], "w") : stdout;
	if (!out)
		return 1;
	fprintf(out, "truth ping_loop %ld\ntruth pong_loop %ld\n", truth[0], truth[1]);
	return fclose(out) ? 1 : 0;
}
