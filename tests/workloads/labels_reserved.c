/* labels_reserved.c — workload of tests/integration/viewers.sh: a program
 * whose labels use the names pmubpf writes itself (pid, tid, comm, and
 * the pmubpf_ namespace) next to an ordinary one, set for the whole run
 * while reserved_work burns CPU.
 *
 *   labels_reserved [SECONDS]   (default 1)
 */
#include <pmubpf/labels.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void reserved_work(double seconds)
{
	double end = now() + seconds;
	uint64_t x = 1;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

int main(int argc, char **argv)
{
	const pmubpf_labels *set = pmubpf_labels_new(NULL, "pid", "app-pid", "tid", "app-tid",
						     "comm", "app-comm", "pmubpf_labels", "app-own",
						     "tenant", "t1", NULL);

	if (!set)
		return 1;
	pmubpf_labels_set(set);
	reserved_work(argc > 1 ? atof(argv[1]) : 1.0);
	pmubpf_labels_set(NULL);
	pmubpf_labels_free(set);
	return 0;
}
