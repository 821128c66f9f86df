/* labels_bench.c — what a label switch costs the labelled program.
 *
 *   labels_bench [ITERATIONS] [REPEATS]     (default 200000000, 7)
 *
 * Times three tight loops, each ITERATIONS times, REPEATS times, and
 * prints the best (lowest) time per iteration of each, one line each:
 *
 *   labels_pair_ns X    prev = pmubpf_labels_set(s); pmubpf_labels_set(prev);
 *   tls_pair_ns X       the same two stores into a plain volatile __thread
 *                       pointer (what the header's set compiles down to,
 *                       without its compiler fences)
 *   empty_ns X          the loop alone (counter, compare, branch)
 *
 * Built with clang -O2 like any program that includes the header.
 */
#include <pmubpf/labels.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static __thread const void *volatile plain_tls;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Each loop is noinline and takes the set as an argument, so the
 * compiler cannot hoist anything out of it or fold iterations. */
static __attribute__((noinline)) void loop_labels(long n, const pmubpf_labels *s)
{
	for (long i = 0; i < n; i++) {
		const pmubpf_labels *prev = pmubpf_labels_set(s);
		pmubpf_labels_set(prev);
	}
}

static __attribute__((noinline)) void loop_tls(long n, const void *s)
{
	for (long i = 0; i < n; i++) {
		const void *prev = plain_tls;
		plain_tls = s;
		plain_tls = prev;
	}
}

static __attribute__((noinline)) void loop_empty(long n, const void *s)
{
	for (long i = 0; i < n; i++)
		__asm__ volatile("" : : "r"(s) : "memory");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000000L;
	int reps = argc > 2 ? atoi(argv[2]) : 7;
	const pmubpf_labels *s = pmubpf_labels_new(NULL, "phase", "bench", NULL);
	double best[3] = { 1e300, 1e300, 1e300 };

	if (!s || n < 1 || reps < 1) {
		fprintf(stderr, "usage: labels_bench [ITERATIONS] [REPEATS]\n");
		return 2;
	}
	for (int r = 0; r < reps; r++) {
		double t0 = now();
		loop_labels(n, s);
		double t1 = now();
		loop_tls(n, s);
		double t2 = now();
		loop_empty(n, s);
		double t3 = now();

		if (t1 - t0 < best[0]) best[0] = t1 - t0;
		if (t2 - t1 < best[1]) best[1] = t2 - t1;
		if (t3 - t2 < best[2]) best[2] = t3 - t2;
	}
	if (pmubpf_labels_current() != NULL)
		return 1; /* every set was restored */
	printf("labels_pair_ns %.3f\ntls_pair_ns %.3f\nempty_ns %.3f\niterations %ld\nrepeats %d\n",
	       best[0] / n, best[1] / n, best[2] / n, n, reps);
	pmubpf_labels_free(s);
	return 0;
}
