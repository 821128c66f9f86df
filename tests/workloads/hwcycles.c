/* hwcycles.c — does this machine count hardware cycles? The tests ask it
 * (lib.sh's has_pmu) rather than pmubpf, so the two can disagree only if
 * pmubpf is wrong, and rather than perf, which a machine with a PMU may
 * not have installed.
 *
 * Opens PERF_COUNT_HW_CPU_CYCLES for this thread, spins ~20 ms, reads it.
 * Exit 0 with "cycles N" when it counted; exit 1 with one line saying why
 * not (the open refused: no PMU, or a hypervisor that hides it; or the
 * counter opened but never ran or counted nothing).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
	};
	uint64_t v[3] = { 0 };
	volatile uint64_t sink = 0;
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);

	if (fd < 0) {
		printf("no: perf_event_open(cycles): %s\n", strerror(errno));
		return 1;
	}
	for (double end = now() + 0.02; now() < end;)
		for (int i = 0; i < 10000; i++)
			sink += (uint64_t)i;
	if (read(fd, v, sizeof(v)) != (ssize_t)sizeof(v)) {
		printf("no: read: %s\n", strerror(errno));
		return 1;
	}
	if (v[2] == 0 || v[0] == 0) {
		printf("no: counter opened but counted %llu in %llu ns running\n",
		       (unsigned long long)v[0], (unsigned long long)v[2]);
		return 1;
	}
	printf("cycles %llu (spun %llu)\n", (unsigned long long)v[0], (unsigned long long)sink);
	return 0;
}
