/* label_churn.c — workload of the bounds integration test: a new label
 * set every few microseconds, as a server that labels each request with
 * its id would make, so that a sampling profiler sees a distinct set at
 * almost every sample.
 *
 *   label_churn SECONDS [NEW [GOFILE]]
 *
 * One thread, for SECONDS of its time on a CPU (task-clock, taskclock.h:
 * a busy machine gives the same samples later, not fewer): spin ~5 us,
 * make {endpoint=/churn, req=N} (N counting up) and make it current,
 * free the one before; again. NEW=0 keeps one set for the whole run
 * instead (the baseline: same spins, one set); NEW=K > 1 makes a set
 * every K spins, {endpoint=/churn, req=N, trace_id=32 hex digits} (a
 * server labelling each request with its trace: ~40000 sets a second
 * at K=5, tools/soak.sh's labels load). With GOFILE, waits (sleeping) until that
 * file exists before it starts: a profiler can attach first. Prints
 * "sets N cpu NS" at the end: the sets made and the task-clock time spent
 * making them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pmubpf/labels.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "taskclock.h"

static uint64_t sink;

__attribute__((noinline)) static void spin(void)
{
	uint64_t x = __atomic_load_n(&sink, __ATOMIC_RELAXED);

	for (int i = 0; i < 4000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	__atomic_store_n(&sink, x, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	int fresh = argc > 2 ? atoi(argv[2]) : 1;
	unsigned long long n = 0;
	char req[32], trace[40];
	const pmubpf_labels *one = pmubpf_labels_new(NULL, "endpoint", "/churn", "req", "0", NULL);
	const pmubpf_labels *cur = one, *next;
	int64_t t0, end;

	if (argc > 3)
		while (access(argv[3], F_OK))
			usleep(10000);
	t0 = thread_clock_ns();
	end = t0 + (int64_t)(secs * 1e9);
	/* A set is current all the time, the next one made current as the
	 * last is let go: every sample carries one, and one made within the
	 * last ~5 us (a sample's period is 50 us), so nearly every sample
	 * names a set no sample named before. */
	pmubpf_labels_set(cur);
	while (thread_clock_ns() < end) {
		for (int i = 0; i < 64; i++) {
			spin();
			if (fresh > 1 && i % fresh)
				continue;
			if (fresh) {
				snprintf(req, sizeof(req), "%llu", ++n);
				snprintf(trace, sizeof(trace), "%016llx%016llx", n * 0x9e3779b97f4a7c15ULL,
					 (unsigned long long)(uintptr_t)&n ^ n);
				next = fresh > 1 ? pmubpf_labels_new(NULL, "endpoint", "/churn", "req", req,
								     "trace_id", trace, NULL)
						 : pmubpf_labels_new(NULL, "endpoint", "/churn", "req", req, NULL);
				pmubpf_labels_set(next);
				if (cur != one)
					pmubpf_labels_free(cur);
				cur = next;
			}
		}
	}
	pmubpf_labels_set(NULL);
	if (cur != one)
		pmubpf_labels_free(cur);
	pmubpf_labels_free(one);
	printf("sets %llu cpu %lld\n", fresh ? n : 1, (long long)(thread_clock_ns() - t0));
	return 0;
}
