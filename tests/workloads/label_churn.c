/* label_churn.c — workload of the bounds integration test: a new label
 * set every few microseconds, as a server that labels each request with
 * its id would make, so that a sampling profiler sees a distinct set at
 * almost every sample.
 *
 *   label_churn SECONDS [NEW]
 *
 * One thread, for SECONDS: make {endpoint=/churn, req=N} (N counting up),
 * make it current, spin ~5 us, restore, free it. NEW=0 keeps one set for
 * the whole run instead (the baseline: same work, one set). Prints
 * "sets N" at the end.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pmubpf/labels.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(void)
{
	uint64_t x = __atomic_load_n(&sink, __ATOMIC_RELAXED);

	for (int i = 0; i < 4000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	__atomic_store_n(&sink, x, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3, end = now() + secs;
	int fresh = argc > 2 ? atoi(argv[2]) : 1;
	unsigned long long n = 0;
	char req[32];
	const pmubpf_labels *one = pmubpf_labels_new(NULL, "endpoint", "/churn", "req", "0", NULL);

	while (now() < end) {
		for (int i = 0; i < 64; i++) {
			const pmubpf_labels *s = one, *prev;

			if (fresh) {
				snprintf(req, sizeof(req), "%llu", ++n);
				s = pmubpf_labels_new(NULL, "endpoint", "/churn", "req", req, NULL);
			}
			prev = pmubpf_labels_set(s);
			spin();
			pmubpf_labels_set(prev);
			if (fresh)
				pmubpf_labels_free(s);
		}
	}
	pmubpf_labels_free(one);
	printf("sets %llu\n", fresh ? n : 1);
	return 0;
}
