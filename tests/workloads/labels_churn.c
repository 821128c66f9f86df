/* labels_churn.c — a new label set every ~100 us, for as long as asked:
 *
 *   labels_churn SECONDS
 *
 * Each set {req=N} is new'ed, made current, spun under (in churn_spin)
 * and freed. Sampled at a few kHz, nearly every sample sees a set not
 * seen before, and each such first sighting sends a notice carrying a
 * copy of the set (~5 KiB) through the ring buffer. With the profiler's
 * userspace stopped (SIGSTOP) the ring buffer fills in well under a
 * second: the test of lost notices.
 */
#include <pmubpf/labels.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static __attribute__((noinline)) void churn_spin(int64_t until)
{
	uint64_t x = sink | 1;

	while (mono_ns() < until)
		for (int i = 0; i < 200; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	sink = x;
}

int main(int argc, char **argv)
{
	int64_t end = mono_ns() + (int64_t)((argc > 1 ? atof(argv[1]) : 2) * 1e9);
	char req[32];

	for (unsigned long n = 0; mono_ns() < end; n++) {
		snprintf(req, sizeof(req), "%lu", n);
		const pmubpf_labels *s = pmubpf_labels_new(NULL, "req", req, NULL);
		const pmubpf_labels *prev = pmubpf_labels_set(s);

		churn_spin(mono_ns() + 100000);
		pmubpf_labels_set(prev);
		pmubpf_labels_free(s);
	}
	return 0;
}
