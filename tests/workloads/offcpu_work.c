/* offcpu_work.c — waits of known lengths, for -e off-cpu.
 *
 * The main thread waits three ways, each in its own function, each
 * `rounds` times (argv[2], default 2):
 *   offcpu_sleep   nanosleep 150 ms
 *   offcpu_pipe    read() on a pipe that a helper thread writes 100 ms
 *                after being asked
 *   offcpu_futex   FUTEX_WAIT on a word that the helper changes and wakes
 *                120 ms after being asked
 * and measures each function's time off a CPU itself: its wall-clock time
 * (CLOCK_MONOTONIC) less its thread's CPU time (CLOCK_THREAD_CPUTIME_ID)
 * from entry to return, printing "truth NAME NS" (the sum over rounds) to the file argv[1]
 * (stdout without one). The helper's own waits are in helper_* functions,
 * never in a truth function. Wall time around the blocking call alone was
 * the truth before: it holds the call's own CPU time too (entering the
 * system call, the wakeup's way back), microseconds on a real CPU and
 * milliseconds under qemu's emulation (offcpu_pipe 3.7% over what the
 * thread spent switched out), and misses a switch-out in the request
 * that comes before it.
 *
 * The futex waits run under the label set {wait=futex}: an off-CPU
 * sample carries the labels its thread blocked with ("truth wait=futex",
 * the futex waits' total again).
 *
 * argv[3], optional: a FIFO to read one byte from first (in gate_wait),
 * so that a test can start the recorder with -p while the workload
 * waits: that wait began before the recording.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <pmubpf/labels.h>

#define SLEEP_MS 150
#define PIPE_MS 100
#define FUTEX_MS 120

static int ask[2], data[2];
static uint32_t futex_word;

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A function's time off a CPU: wall less CPU since off_begin. */
struct off_span {
	int64_t wall, cpu;
};

static struct off_span off_begin(void)
{
	return (struct off_span){ mono_ns(), cpu_ns() };
}

static int64_t off_end(struct off_span s)
{
	int64_t cpu = cpu_ns();

	return (mono_ns() - s.wall) - (cpu - s.cpu);
}

static void ms_sleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The helper's waits: for a request, then the delay it asks for. */
static __attribute__((noinline)) char helper_wait_request(void)
{
	char c;

	if (read(ask[0], &c, 1) != 1)
		return 0;
	return c;
}

static __attribute__((noinline)) void helper_delay(int ms)
{
	ms_sleep(ms);
}

static void *helper(void *arg)
{
	char c;

	(void)arg;
	while ((c = helper_wait_request())) {
		if (c == 'p') {
			helper_delay(PIPE_MS);
			if (write(data[1], "x", 1) != 1)
				exit(1);
		} else if (c == 'f') {
			helper_delay(FUTEX_MS);
			__atomic_store_n(&futex_word, 1, __ATOMIC_RELEASE);
			syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		}
	}
	return NULL;
}

static void request(char c)
{
	if (write(ask[1], &c, 1) != 1)
		exit(1);
}

static __attribute__((noinline)) int64_t offcpu_sleep(void)
{
	struct off_span t = off_begin();

	ms_sleep(SLEEP_MS);
	return off_end(t);
}

static __attribute__((noinline)) int64_t offcpu_pipe(void)
{
	struct off_span t = off_begin();
	char c;

	request('p');
	if (read(data[0], &c, 1) != 1)
		exit(1);
	return off_end(t);
}

static __attribute__((noinline)) int64_t offcpu_futex(void)
{
	struct off_span t = off_begin();

	__atomic_store_n(&futex_word, 0, __ATOMIC_RELEASE);
	request('f');
	while (!__atomic_load_n(&futex_word, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	return off_end(t);
}

/* One wait, in read(): opened read-write, the FIFO's open does not
 * block (read-only, it waited for the writer, and the read after it
 * could wait again, a wait begun while recording, under gate_wait:
 * offcpu.pid_unseen_noted failed 1 run in 4 on it). */
static __attribute__((noinline)) void gate_wait(const char *fifo)
{
	int fd = open(fifo, O_RDWR);
	char c;

	if (fd < 0 || read(fd, &c, 1) != 1) {
		perror(fifo);
		exit(1);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 2;
	int64_t t_sleep = 0, t_pipe = 0, t_futex = 0;
	FILE *out = stdout;
	pthread_t th;

	if (argc > 3)
		gate_wait(argv[3]);
	if (pipe(ask) || pipe(data) || pthread_create(&th, NULL, helper, NULL))
		return 1;
	/* Settle first: the profiler reads this process's maps and builds
	 * its unwind tables at its first sample (here, its first wait); on a
	 * busy machine (load 13 on 2 CPUs) that has taken over 300 ms. */
	ms_sleep(1000);
	const pmubpf_labels *futex_set = pmubpf_labels_new(NULL, "wait", "futex", NULL);

	for (int r = 0; r < rounds; r++) {
		const pmubpf_labels *prev;

		t_sleep += offcpu_sleep();
		t_pipe += offcpu_pipe();
		prev = pmubpf_labels_set(futex_set);
		t_futex += offcpu_futex();
		pmubpf_labels_set(prev);
	}
	request(0);
	pthread_join(th, NULL);
	if (argc > 1 && !(out = fopen(argv[1], "w")))
		return 1;
	fprintf(out, "truth offcpu_sleep %lld\ntruth offcpu_pipe %lld\ntruth offcpu_futex %lld\n"
		"truth wait=futex %lld\n",
		(long long)t_sleep, (long long)t_pipe, (long long)t_futex, (long long)t_futex);
	return fclose(out) ? 1 : 0;
}
