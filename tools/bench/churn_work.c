/* churn_work.c — process churn: the load of the churn benchmark part.
 *
 *   churn_work SECS WORKERS OUT [PROGRAM...]
 *
 * WORKERS processes each fork+exec short-lived dynamic programs, one
 * after another, waiting for each, for SECS seconds (or until SIGTERM or
 * SIGINT): in turn `/bin/true` and `/usr/bin/env true` (env execs true in
 * turn, so that process maps two programs), like the shell loop
 * `while :; do /bin/true; /usr/bin/env true; done`. PROGRAM... replaces
 * that list; a program with arguments is one quoted word, split at
 * spaces. Every new process is a new process to a system-wide profiler:
 * a first sample, a maps snapshot, and mmap reports as its loader maps
 * libc.
 *
 * OUT gets, every 50 ms while the load runs, a line
 *
 *   t_ns T processes N
 *
 * (CLOCK_MONOTONIC, the clock of Python's time.monotonic(); N the
 * processes finished so far by all workers), so that a caller can take
 * the rate over any window; at the end one line
 *
 *   elapsed_ns N processes N workers N failed N
 *
 * failed counts children that did not exit 0 (a missing program).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROGS 16
#define MAX_ARGS 16

struct counters {
	_Atomic uint64_t done;
	_Atomic uint64_t failed;
};

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static char **split(char *s)
{
	char **argv = calloc(MAX_ARGS + 1, sizeof(*argv));
	int n = 0;

	if (!argv)
		exit(1);
	for (char *tok = strtok(s, " "); tok && n < MAX_ARGS; tok = strtok(NULL, " "))
		argv[n++] = tok;
	return argv;
}

static void worker(char ***progs, int nprogs, int64_t deadline, struct counters *c)
{
	for (long i = 0; !stop && now_ns() < deadline; i++) {
		char **argv = progs[i % nprogs];
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			if (errno == EAGAIN || errno == ENOMEM) {
				usleep(1000);
				continue;
			}
			_exit(1);
		}
		if (pid == 0) {
			execv(argv[0], argv);
			_exit(127);
		}
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR)
				_exit(1);
		atomic_fetch_add(&c->done, 1);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			atomic_fetch_add(&c->failed, 1);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	static char *defaults[] = { "/bin/true", "/usr/bin/env true" };
	char **names = defaults, ***progs;
	int nprogs = 2, nworkers;
	struct counters *c;
	struct sigaction sa = { .sa_handler = on_stop };
	double secs;
	pid_t *pids;
	FILE *out;

	if (argc < 4 || (secs = atof(argv[1])) <= 0 || (nworkers = atoi(argv[2])) < 1 || nworkers > 1024) {
		fprintf(stderr, "usage: churn_work SECS WORKERS OUT [PROGRAM...]\n");
		return 2;
	}
	if (argc > 4) {
		names = &argv[4];
		nprogs = argc - 4 < MAX_PROGS ? argc - 4 : MAX_PROGS;
	}
	progs = calloc(nprogs, sizeof(*progs));
	pids = calloc(nworkers, sizeof(*pids));
	if (!progs || !pids)
		return 1;
	for (int i = 0; i < nprogs; i++)
		progs[i] = split(strdup(names[i]));
	if (!(out = fopen(argv[3], "w"))) {
		perror(argv[3]);
		return 1;
	}
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	int64_t t0 = now_ns(), deadline = t0 + (int64_t)(secs * 1e9);
	pid_t parent = getpid();
	for (int i = 0; i < nworkers; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			stop = 1;
			break;
		}
		if (pids[i] == 0) {
			/* No worker outlives the parent, however it ends (a
			 * caller's kill of the parent alone left workers
			 * churning for hours and skewed later measurements). */
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() != parent)
				_exit(0);
			worker(progs, nprogs, deadline, c);
		}
	}
	int64_t t;
	while (!stop && (t = now_ns()) < deadline) {
		fprintf(out, "t_ns %lld processes %llu\n", (long long)t,
			(unsigned long long)atomic_load(&c->done));
		fflush(out);
		usleep(50000);
	}
	for (int i = 0; i < nworkers; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	for (int i = 0; i < nworkers; i++)
		if (pids[i] > 0)
			while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
				;
	t = now_ns();
	fprintf(out, "t_ns %lld processes %llu\n", (long long)t, (unsigned long long)atomic_load(&c->done));
	fprintf(out, "elapsed_ns %lld processes %llu workers %d failed %llu\n", (long long)(t - t0),
		(unsigned long long)atomic_load(&c->done), nworkers,
		(unsigned long long)atomic_load(&c->failed));
	fclose(out);
	return 0;
}
