/* leader_exit.c — a process whose main thread leaves first: the leader
 * spins in leader_spin() for a third of argv[1] seconds (default 1.5)
 * and calls pthread_exit; the one other thread spins in worker_spin()
 * for all of them, so a third to two thirds of the process's samples
 * come after its leader's exit (the kernel's sched_process_exit for the
 * tgid), from a process that lives on. Prints "started PID" once both
 * spin, and "truth leader_spin NS" / "truth worker_spin NS" (task-clock,
 * taskclock.h) at the end (stdout, or the file argv[2]). Each thread
 * spins under a label set of its own (pmubpf/labels.h): thread=leader,
 * thread=worker. With argv[3] "heir", a third thread waits for the
 * worker's end and then spins in heir_spin() for argv[1] seconds more,
 * under thread=heir: the process outlives both threads it was first
 * seen through ("truth heir_spin NS" appended to the same output).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pmubpf/labels.h>
#include "taskclock.h"

static volatile uint64_t sink;
static double secs = 1.5;
static int64_t leader_ns;
static const char *out_path;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static __attribute__((noinline)) void spin_until(int64_t end)
{
	while (now_ns() < end)
		for (int i = 0; i < 100000; i++)
			sink += (uint64_t)i * 7;
}

static __attribute__((noinline)) void leader_spin(int64_t end)
{
	spin_until(end);
}

static __attribute__((noinline)) void worker_spin(int64_t end)
{
	spin_until(end);
}

static __attribute__((noinline)) void heir_spin(int64_t end)
{
	spin_until(end);
}

/* The truth lines, into argv[2] (opened with mode: the worker's "w",
 * the heir's "a" after it), else stdout. */
static void put_truth(const char *mode, const char *text)
{
	FILE *f = out_path ? fopen(out_path, mode) : stdout;

	if (!f)
		exit(1);
	fputs(text, f);
	if (out_path)
		fclose(f);
	else
		fflush(f);
}

static void *heir(void *arg)
{
	char text[64];
	int64_t t0;

	if (pthread_join(*(pthread_t *)arg, NULL))
		exit(1);
	t0 = thread_clock_ns();
	pmubpf_labels_set(pmubpf_labels_new(NULL, "thread", "heir", NULL));
	heir_spin(now_ns() + (int64_t)(secs * 1e9));
	snprintf(text, sizeof(text), "truth heir_spin %lld\n", (long long)(thread_clock_ns() - t0));
	put_truth("a", text);
	return NULL;
}

static void *worker(void *arg)
{
	int64_t end = *(int64_t *)arg, t0 = thread_clock_ns();
	char text[96];

	pmubpf_labels_set(pmubpf_labels_new(NULL, "thread", "worker", NULL));
	worker_spin(end);
	snprintf(text, sizeof(text), "truth leader_spin %lld\ntruth worker_spin %lld\n",
		 (long long)leader_ns, (long long)(thread_clock_ns() - t0));
	put_truth("w", text);
	return NULL;
}

int main(int argc, char **argv)
{
	static int64_t end;
	static pthread_t t;
	pthread_t h;
	int64_t t0;

	if (argc > 1)
		secs = atof(argv[1]);
	if (argc > 2 && argv[2][0])
		out_path = argv[2];
	end = now_ns() + (int64_t)(secs * 1e9);
	t0 = thread_clock_ns();
	if (pthread_create(&t, NULL, worker, &end))
		return 1;
	if (argc > 3 && !strcmp(argv[3], "heir") && pthread_create(&h, NULL, heir, &t))
		return 1;
	fprintf(stderr, "started %d\n", (int)getpid());
	pmubpf_labels_set(pmubpf_labels_new(NULL, "thread", "leader", NULL));
	leader_spin(now_ns() + (int64_t)(secs * 1e9 / 3));
	leader_ns = thread_clock_ns() - t0;
	pthread_exit(NULL); /* the process lives on in the worker */
}
