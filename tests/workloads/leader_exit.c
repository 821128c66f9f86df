/* leader_exit.c — a process whose main thread leaves first:
 *
 *   leader_exit [SECS [OUT [heir|- [GOFILE [AFTERFILE]]]]]
 *
 * The leader spins in leader_spin() for SECS/3 (default 1.5) of its own
 * CPU time and calls pthread_exit; the one other thread spins in
 * worker_spin() until the leader has left and then for 2/3 SECS of CPU
 * time more, so two thirds of its samples come after its leader's exit
 * (the kernel's sched_process_exit for the tgid), from a process that
 * lives on. Every span is CPU time (task-clock, taskclock.h), not wall
 * time: a busy machine gives the same samples later, and the leader
 * leaves first however the threads are scheduled. Prints "started PID"
 * (stderr) once both threads run, and "truth leader_spin NS" / "truth
 * worker_spin NS" (task-clock) at the end (stdout, or the file OUT if
 * given and not empty). Each thread spins under a label set of its own
 * (pmubpf/labels.h): thread=leader, thread=worker. With "heir", a third
 * thread waits for the worker's end and then spins in heir_spin() for
 * SECS of CPU time, under thread=heir: the process outlives both threads
 * it was first seen through ("truth heir_spin NS" appended to the same
 * output). With GOFILE, the leader and the worker, their labels set,
 * spin in wait_go() until that file exists and only then begin: a test
 * lets them go once the profiler has the process's labels (under -a,
 * after its first samples were read, a wait in wall time that a busy
 * machine stretches), so that every *_spin sample can carry its label.
 * With AFTERFILE, the worker, once its leader has left, waits (asleep, in
 * wait_after, called from worker_spin: its samples are the wait's, not
 * the spin's) until that file exists before its two thirds: a test
 * attaches a recorder to the process after the leader's exit and lets
 * the worker go once that recorder is recording, however long its start
 * takes (seconds under qemu).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pmubpf/labels.h>
#include "taskclock.h"

static volatile uint64_t sink;
static double secs = 1.5;
static int64_t leader_ns;
static atomic_int leader_left;
static const char *out_path, *go_path, *after_path;

static void spin_some(void)
{
	for (int i = 0; i < 100000; i++)
		sink += (uint64_t)i * 7;
}

/* ns of this thread's CPU time (task-clock) from now. */
static void spin_cpu(int64_t ns)
{
	int64_t end = thread_clock_ns() + ns;

	while (thread_clock_ns() < end)
		spin_some();
}

static void wait_file(const char *path)
{
	while (path && access(path, F_OK))
		spin_some();
}

/* One nap of wait_after's. Its own frame: a frame-pointer walk from
 * inside libc's sleep (no frame of its own there) skips the caller of
 * that leaf, which is this, not wait_after (a kernel without bpf_loop
 * walks every stack so: 5.10 in the matrix gave 114 of the wait's
 * samples to worker_spin, unlabelled before the recorder had read the
 * process). The empty asm keeps the call from becoming a jump. */
static __attribute__((noinline)) void nap(void)
{
	usleep(1000);
	__asm__ volatile("" ::: "memory");
}

/* Its samples are no worker_spin's (leader_exit_tally leaves them out):
 * a test waits here for a recorder to have read the process (its
 * labels, its unwind tables). Asleep, 1 ms at a time: the few samples
 * it takes meanwhile (walked by frame pointer before the tables come)
 * do not weigh on the counts of the spins after it. */
static __attribute__((noinline)) void wait_after(void)
{
	while (after_path && access(after_path, F_OK))
		nap();
}

static __attribute__((noinline)) void wait_go(void)
{
	wait_file(go_path);
}

static __attribute__((noinline)) void leader_spin(void)
{
	spin_cpu((int64_t)(secs * 1e9 / 3));
}

static __attribute__((noinline)) void worker_spin(void)
{
	while (!atomic_load_explicit(&leader_left, memory_order_acquire))
		spin_some();
	wait_after();
	spin_cpu((int64_t)(secs * 1e9 * 2 / 3));
}

static __attribute__((noinline)) void heir_spin(void)
{
	spin_cpu((int64_t)(secs * 1e9));
}

/* The truth lines, into argv[2] (opened with mode: the worker's "w",
 * the heir's "a" after it), else stdout. */
static void put_truth(const char *mode, const char *text)
{
	FILE *f = out_path ? fopen(out_path, mode) : stdout;

	if (!f)
		exit(1);
	fputs(text, f);
	if (out_path)
		fclose(f);
	else
		fflush(f);
}

static void *heir(void *arg)
{
	char text[64];
	int64_t t0;

	if (pthread_join(*(pthread_t *)arg, NULL))
		exit(1);
	t0 = thread_clock_ns();
	pmubpf_labels_set(pmubpf_labels_new(NULL, "thread", "heir", NULL));
	heir_spin();
	snprintf(text, sizeof(text), "truth heir_spin %lld\n", (long long)(thread_clock_ns() - t0));
	put_truth("a", text);
	return NULL;
}

static void *worker(void *arg)
{
	char text[96];
	int64_t t0;

	(void)arg;
	pmubpf_labels_set(pmubpf_labels_new(NULL, "thread", "worker", NULL));
	wait_go();
	t0 = thread_clock_ns();
	worker_spin();
	snprintf(text, sizeof(text), "truth leader_spin %lld\ntruth worker_spin %lld\n",
		 (long long)leader_ns, (long long)(thread_clock_ns() - t0));
	put_truth("w", text);
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t t;
	pthread_t h;
	int64_t t0;

	if (argc > 1)
		secs = atof(argv[1]);
	if (argc > 2 && argv[2][0])
		out_path = argv[2];
	if (argc > 4 && argv[4][0])
		go_path = argv[4];
	if (argc > 5 && argv[5][0])
		after_path = argv[5];
	thread_clock_ns(); /* the clock chosen before the threads ask */
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	if (argc > 3 && !strcmp(argv[3], "heir") && pthread_create(&h, NULL, heir, &t))
		return 1;
	fprintf(stderr, "started %d\n", (int)getpid());
	pmubpf_labels_set(pmubpf_labels_new(NULL, "thread", "leader", NULL));
	wait_go();
	t0 = thread_clock_ns();
	leader_spin();
	leader_ns = thread_clock_ns() - t0;
	atomic_store_explicit(&leader_left, 1, memory_order_release);
	pthread_exit(NULL); /* the process lives on in the worker */
}
