/* label_load.c — load for measuring what labels cost the BPF program per
 * sample: one thread per CPU spinning in spin_unit() for SECONDS.
 *
 *   label_load SECONDS set     header included, each thread has its own
 *                              set {worker=K} current around every unit
 *   label_load SECONDS unset   header included (the record is registered,
 *                              so BPF reads the TLS word), no set current
 *   label_load_plain SECONDS   the same loop built with -DNO_LABELS: no
 *                              header, no record, nothing for BPF to read
 *
 * The three differ only in what on_sample finds about labels, so the
 * difference in its run_time_ns/run_cnt is the label path's cost.
 */
#ifndef NO_LABELS
#include <pmubpf/labels.h>
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double secs;
#ifndef NO_LABELS
static int with_set;
#endif
static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void spin_unit(void)
{
	uint64_t x = sink | 1;

	for (int i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink = x;
}

static void *worker(void *arg)
{
	double end = now() + secs;
#ifndef NO_LABELS
	char name[16];
	const pmubpf_labels *s = NULL;

	snprintf(name, sizeof(name), "%d", (int)(intptr_t)arg);
	if (with_set && !(s = pmubpf_labels_new(NULL, "worker", name, NULL)))
		abort();
#endif
	(void)arg;
	while (now() < end) {
#ifndef NO_LABELS
		const pmubpf_labels *prev = pmubpf_labels_set(s);
		spin_unit();
		pmubpf_labels_set(prev);
#else
		spin_unit();
#endif
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t th[256];

	secs = argc > 1 ? atof(argv[1]) : 3;
#ifndef NO_LABELS
	if (argc < 3 || (strcmp(argv[2], "set") && strcmp(argv[2], "unset"))) {
		fprintf(stderr, "usage: label_load SECONDS set|unset\n");
		return 2;
	}
	with_set = !strcmp(argv[2], "set");
#endif
	if (n > 256)
		n = 256;
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i))
			return 1;
	for (long i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
