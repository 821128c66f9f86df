/* faults.c — a workload of known page-fault counts, for software counting
 * events (page-faults) whose period the kernel retunes in frequency mode:
 * touch_pages() maps fresh anonymous memory (no transparent huge pages),
 * writes one byte per page (one minor fault each) and unmaps it, until
 * argv[1] seconds (default 2) have passed.
 *
 * Ground truth is the kernel's own count: the process's minor+major
 * faults (getrusage) taken just around each touch_pages() call, summed,
 * printed as "truth touch_pages N" (to stdout, or the file argv[2]).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (16L << 20)

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

static __attribute__((noinline)) int touch_pages(long page)
{
	volatile char *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	madvise((void *)p, CHUNK, MADV_NOHUGEPAGE);
	for (long off = 0; off < CHUNK; off += page)
		p[off] = 1;
	munmap((void *)p, CHUNK);
	return 0;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	FILE *out = argc > 2 ? fopen(argv[2], "w") : stdout;
	long page = sysconf(_SC_PAGESIZE), truth = 0;
	int64_t end = mono_ns() + (int64_t)(secs * 1e9);

	if (!out)
		return 1;
	while (mono_ns() < end) {
		long f0 = faults();

		if (touch_pages(page))
			return 1;
		truth += faults() - f0;
	}
	fprintf(out, "truth touch_pages %ld\n", truth);
	return fclose(out) ? 1 : 0;
}
