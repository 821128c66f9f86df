/* taskclock.h — a thread's time on a CPU as a cpu-clock sampler sees it:
 * the ground truth of the workloads' share checks.
 *
 * cpu-clock samples fire on each CPU's clock and land on the thread
 * running there, so a thread's expected samples follow the wall-clock
 * time it held a CPU, including any time the hypervisor stole the vCPU
 * from under it. CLOCK_THREAD_CPUTIME_ID leaves stolen time out on a
 * guest kernel with CONFIG_PARAVIRT_TIME_ACCOUNTING (this VM's), and
 * steal is uneven across vCPUs: on a busy host, two threads on two vCPUs
 * then get samples in another ratio than their CPU times, and a correct
 * profiler fails a shares check (golabels, labels: 4-7 pp, session 8).
 * A task-clock counter on the thread (perf_event_open, counting, no
 * sampling) measures the time it was current, steal included: the same
 * quantity the samples estimate.
 *
 * thread_clock_ns(): this thread's task-clock in ns; the counter is
 * opened at the thread's first call. Where perf_event_open is refused
 * (not root, a paranoid sysctl), every thread of the process uses
 * CLOCK_THREAD_CPUTIME_ID instead (the choice is made once, so the two
 * are never mixed).
 */
#ifndef PMUBPF_TEST_TASKCLOCK_H
#define PMUBPF_TEST_TASKCLOCK_H
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int taskclock_mode; /* 0 undecided, 1 task-clock, 2 CPU time */
static __thread int taskclock_fd = -1;

static inline int taskclock_open(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static inline int64_t thread_clock_ns(void)
{
	int mode = __atomic_load_n(&taskclock_mode, __ATOMIC_ACQUIRE);
	struct timespec ts;
	uint64_t v;

	if (mode != 2 && taskclock_fd < 0) {
		taskclock_fd = taskclock_open();
		if (taskclock_fd < 0 && mode == 1) { /* another thread has one */
			perror("taskclock: perf_event_open (task-clock)");
			abort();
		}
		int want = taskclock_fd < 0 ? 2 : 1, none = 0;
		if (!__atomic_compare_exchange_n(&taskclock_mode, &none, want, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) && none != want) {
			fprintf(stderr, "taskclock: threads disagree on the clock\n");
			abort();
		}
		mode = want;
	}
	if (mode == 1) {
		if (read(taskclock_fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
			perror("taskclock: read");
			abort();
		}
		return (int64_t)v;
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif
