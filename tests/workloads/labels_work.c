/* labels_work.c — workload of the labels integration test: CPU work under
 * known label sets, with the true CPU time per label printed at the end.
 *
 *   labels_work [SECONDS]   (default 3)
 *
 * SIGTERM or SIGINT ends the run early, truth printed as at its end (a
 * test that attaches to it runs it long and stops it once recorded).
 * With LABELS_WORK_GO=FILE in the environment, it waits (asleep, 1 ms at
 * a time) after printing its pid line until FILE exists: a test lets it
 * go once the profiler has its labels.
 *
 * Main thread, each step: 1 unit under, at random, A = {phase=a, req=1}
 * (its current set for the whole run; p = 1/5), B = new(A, phase=b) =
 * {phase=b, req=1} (nested: set and restored; p = 3/5), or a set
 * C = {phase=c} that is new'ed and freed each time (its memory is reused,
 * its id never is; p = 1/5): 20% / 60% / 20% of the main thread's work.
 * A worker thread adopts main's current set (A, passed via
 * pmubpf_labels_current()) and does 1 unit under it or under no labels,
 * at random: 50% / 50% of its work. The order is random so that it cannot
 * alias with a periodic sampling timer.
 *
 * Each unit is timed with the thread's task-clock (taskclock.h: the time
 * it held a CPU, as cpu-clock samples see it) and the sums are printed
 * as "truth <key>=<value> <ns>" lines (phase=a, phase=b, phase=c, req=1),
 * "truth unlabelled <ns>", "truth total <ns>" (all timed units), and the
 * same per thread as "truth tid=<tid> <label> <ns>". Samples outside the
 * timed units (loop, clock calls, new/free: well under 1%) carry whatever
 * set is current there. Each label region runs its own noinline function
 * (work_a, work_b, work_c, worker_a, worker_none), so stacks can confirm
 * labels. Build: gcc -O1 -g -fno-omit-frame-pointer -Iinclude
 * tests/workloads/labels_work.c -lpthread
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pmubpf/labels.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "taskclock.h"

#define UNIT_ITERS 200000 /* about 0.2-0.3 ms of dependent multiply-adds */

enum { T_A, T_B, T_C, T_NONE, T__MAX };

struct thread_truth {
	pid_t tid;
	uint64_t ns[T__MAX];
};

static int stop;
static volatile sig_atomic_t stopped; /* by SIGTERM or SIGINT */
static uint64_t sink;

static void on_stop(int sig)
{
	(void)sig;
	stopped = 1;
}

static uint64_t cpu_ns(void)
{
	return (uint64_t)thread_clock_ns();
}

__attribute__((noinline)) static void spin(void)
{
	uint64_t x = __atomic_load_n(&sink, __ATOMIC_RELAXED);
	for (int i = 0; i < UNIT_ITERS; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	__atomic_store_n(&sink, x, __ATOMIC_RELAXED);
}

/* One timed unit, charged to slot. */
#define UNIT(fn, t, slot) do { uint64_t t0_ = cpu_ns(); fn(); \
	(t)->ns[slot] += cpu_ns() - t0_; } while (0)

__attribute__((noinline)) static void work_a(void) { spin(); }
__attribute__((noinline)) static void work_b(void) { spin(); }
__attribute__((noinline)) static void work_c(void) { spin(); }
__attribute__((noinline)) static void worker_a(void) { spin(); }
__attribute__((noinline)) static void worker_none(void) { spin(); }

static struct thread_truth main_truth, worker_truth;

/* xorshift64: the order of units, not their cost, is random. */
static unsigned rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (unsigned)(*s >> 32);
}

static void *worker(void *arg)
{
	struct thread_truth *t = &worker_truth;
	t->tid = gettid();
	pmubpf_labels_set((const pmubpf_labels *)arg); /* adopt main's set */
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		if (rnd(&seed) & 1) {
			UNIT(worker_a, t, T_A);
		} else {
			const pmubpf_labels *prev = pmubpf_labels_set(NULL);
			UNIT(worker_none, t, T_NONE);
			pmubpf_labels_set(prev);
		}
	}
	pmubpf_labels_set(NULL);
	return NULL;
}

static void print_thread(const struct thread_truth *t)
{
	static const char *names[T__MAX] = { "phase=a", "phase=b", "phase=c", "unlabelled" };
	for (int i = 0; i < T__MAX; i++)
		if (t->ns[i])
			printf("truth tid=%d %s %llu\n", (int)t->tid, names[i],
			       (unsigned long long)t->ns[i]);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	if (!(secs > 0)) {
		fprintf(stderr, "usage: labels_work [SECONDS]\n");
		return 2;
	}
	struct thread_truth *t = &main_truth;
	t->tid = gettid();
	const pmubpf_labels *a = pmubpf_labels_new(NULL, "phase", "a", "req", "1", NULL);
	const pmubpf_labels *b = pmubpf_labels_new(a, "phase", "b", NULL);
	if (!a || !b)
		return 1;
	pmubpf_labels_set(a);
	printf("labels_work pid=%d tid=%d seconds=%g\n", (int)getpid(), (int)t->tid, secs);
	fflush(stdout);

	const char *go = getenv("LABELS_WORK_GO");
	while (go && *go && access(go, F_OK))
		usleep(1000);
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	pthread_t th;
	if (pthread_create(&th, NULL, worker, (void *)pmubpf_labels_current())) {
		perror("pthread_create");
		return 1;
	}
	struct timespec start, now;
	uint64_t seed = 0x2545f4914f6cdd1dULL;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		/* One unit under a (1/5), b (3/5) or c (1/5), drawn at random:
		 * a fixed cycle could alias with the profiler's periodic
		 * timer and bias the shares it sees. */
		unsigned r = rnd(&seed) % 5;
		if (r == 0) {
			UNIT(work_a, t, T_A); /* under a, main's current set */
		} else if (r <= 3) {
			const pmubpf_labels *prev = pmubpf_labels_set(b);
			UNIT(work_b, t, T_B);
			pmubpf_labels_set(prev);
		} else {
			const pmubpf_labels *c = pmubpf_labels_new(NULL, "phase", "c", NULL);
			if (!c)
				return 1;
			const pmubpf_labels *prev = pmubpf_labels_set(c);
			UNIT(work_c, t, T_C);
			pmubpf_labels_set(prev);
			pmubpf_labels_free(c);
		}

		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!stopped && (double)(now.tv_sec - start.tv_sec) +
				     (double)(now.tv_nsec - start.tv_nsec) / 1e9 < secs);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	pmubpf_labels_set(NULL);

	uint64_t all_a = main_truth.ns[T_A] + worker_truth.ns[T_A];
	uint64_t total = 0;
	for (int i = 0; i < T__MAX; i++)
		total += main_truth.ns[i] + worker_truth.ns[i];
	printf("truth phase=a %llu\n", (unsigned long long)all_a);
	printf("truth phase=b %llu\n", (unsigned long long)main_truth.ns[T_B]);
	printf("truth phase=c %llu\n", (unsigned long long)main_truth.ns[T_C]);
	printf("truth req=1 %llu\n", (unsigned long long)(all_a + main_truth.ns[T_B]));
	printf("truth unlabelled %llu\n", (unsigned long long)worker_truth.ns[T_NONE]);
	printf("truth total %llu\n", (unsigned long long)total);
	print_thread(&main_truth);
	print_thread(&worker_truth);
	pmubpf_labels_free(b);
	pmubpf_labels_free(a);
	return 0;
}
