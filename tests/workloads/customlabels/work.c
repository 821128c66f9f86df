/* customlabels_work — a C program labelling its work through the
 * custom-labels ABI v1 from a shared library (libcustomlabels.so, TLS
 * descriptors), for pmubpf's tests (issue 12). One set, changed in place
 * each round: phase=a for 2 ms, phase=b for 6 ms, phase=c for 2 ms of
 * this thread's CPU time (the truth: its time on a CPU, the
 * thread's task-clock, ../taskclock.h). The set also holds lib=custom, then a label
 * with an absent key and a duplicate lib=dup: both must be ignored (the
 * ABI's rules). (Not a duplicate of phase: the writer hides phase while
 * it changes it, and a sample then would rightly see the duplicate.)
 *
 * With "union" as the second argument the thread also has a set of our
 * own header, lib=ours and src=header: the profile must show both
 * writers' labels, ours winning the clash on lib.
 *
 * With CL_TEST_UNREADABLE=1 in the environment the set also holds a
 * label whose value points at an unmapped page: the set cannot be read,
 * so no sample may carry its labels, and the profile must count them.
 *
 * Usage: customlabels_work SECONDS [union]; prints "truth phase=X
 * NANOSECONDS".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <pmubpf/labels.h>
#include "customlabels.h"
#include "../taskclock.h"

static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile unsigned long sink;

__attribute__((noinline)) static void burn(long long ns)
{
	long long end = cpu_ns() + ns;
	unsigned long x = sink;

	while (cpu_ns() < end)
		for (int i = 0; i < 200; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	static const struct { const char *name; long long ns; } phases[] = {
		{ "a", 2000000 }, { "b", 6000000 }, { "c", 2000000 },
	};
	long long truth[3] = { 0 }, stop;
	custom_labels_labelset_t *s = cl_new(8);

	cl_set(s, "lib", "custom");
	cl_append(s, NULL, "ignored");      /* absent key: not a label */
	cl_append(s, "lib", "dup");         /* duplicate: the first wins */
	cl_set(s, "phase", "a");
	if (getenv("CL_TEST_UNREADABLE")) {
		void *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (page == MAP_FAILED || munmap(page, 4096))
			abort();
		cl_append(s, "bad", "unread");
		s->storage[s->count - 1].value.buf = page; /* gone: unreadable */
	}
	cl_use(s);
	if (argc > 2 && !strcmp(argv[2], "union"))
		pmubpf_labels_set(pmubpf_labels_new(NULL, "lib", "ours", "src", "header", NULL));
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	stop = now.tv_sec * 1000000000LL + now.tv_nsec + (long long)(secs * 1e9);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec * 1000000000LL + now.tv_nsec >= stop)
			break;
		for (int i = 0; i < 3; i++) {
			cl_set(s, "phase", phases[i].name);
			long long t0 = thread_clock_ns();
			burn(phases[i].ns);
			truth[i] += thread_clock_ns() - t0;
		}
	}
	for (int i = 0; i < 3; i++)
		printf("truth phase=%s %lld\n", phases[i].name, truth[i]);
	return 0;
}
