/* floor.c — the overhead floor: the perf events a sampling profiler
 * opens, with nothing attached to them.
 *
 *   floor FREQ [EVENT]      EVENT: cpu-clock (default) or cycles
 *
 * Opens EVENT on every online CPU (pid -1: every task), sampling at FREQ
 * Hz in frequency mode, exactly as pmubpf, perf record -a and bpftrace's
 * profile probe do, but with no BPF program and no ring buffer: each
 * overflow still takes the interrupt (for cpu-clock an hrtimer) and the
 * kernel's sample bookkeeping, then finds nothing to run. Prints "ready"
 * once every event is enabled, then sleeps until SIGINT or SIGTERM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	long freq = argc > 1 ? atol(argv[1]) : 0, ncpus = sysconf(_SC_NPROCESSORS_CONF);
	const char *event = argc > 2 ? argv[2] : "cpu-clock";
	struct perf_event_attr attr;
	int *fds, n = 0;

	if (freq <= 0) {
		fprintf(stderr, "usage: floor FREQ [cpu-clock|cycles]\n");
		return 2;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	if (!strcmp(event, "cpu-clock")) {
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
	} else if (!strcmp(event, "cycles")) {
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
	} else {
		fprintf(stderr, "floor: unknown event '%s'\n", event);
		return 2;
	}
	attr.freq = 1;
	attr.sample_freq = (unsigned long long)freq;
	attr.disabled = 1;
	fds = calloc(ncpus, sizeof(int));
	if (!fds)
		return 1;
	for (long c = 0; c < ncpus; c++) {
		int fd = (int)syscall(__NR_perf_event_open, &attr, -1, (int)c, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			if (errno == ENODEV) /* offline CPU */
				continue;
			fprintf(stderr, "floor: perf_event_open(%s, cpu %ld): %s\n", event, c, strerror(errno));
			return 1;
		}
		fds[n++] = fd;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (int i = 0; i < n; i++)
		ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
	for (int i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	return 0;
}
