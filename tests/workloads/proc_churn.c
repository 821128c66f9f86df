/* proc_churn.c — process churn bounded by work, not by time:
 *
 *   proc_churn N WORKERS MS
 *
 * WORKERS processes start N new processes between them, one after
 * another each (fork, exec, wait). Each new process is this program run
 * again ("proc_churn burst MS": an exec of a dynamic binary, its loader
 * mapping libc, as /bin/true is) that spins MS milliseconds of its own
 * time on a CPU (task-clock, taskclock.h) in burst() and exits. At 999 Hz
 * a few ms of CPU are sampled: a sampler sees every one of them, where
 * /bin/true's ~1 ms was caught or not as the machine's speed had it
 * (tests/integration/bounds.sh saw 1239 processes in 20 s on one machine,
 * 636 in 60 s on another). Prints "processes N failed F" at the end
 * (failed: children that did not exit 0).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "taskclock.h"

static volatile uint64_t sink;

static __attribute__((noinline)) void burst(int64_t ns)
{
	int64_t end = thread_clock_ns() + ns;

	while (thread_clock_ns() < end)
		for (int i = 0; i < 20000; i++)
			sink += (uint64_t)i * 7;
}

struct counters {
	_Atomic long next; /* children claimed so far */
	_Atomic long failed;
};

static void worker(const char *self, long n, const char *ms, struct counters *c)
{
	char *argv[] = { "proc_churn", "burst", (char *)ms, NULL };

	while (atomic_fetch_add(&c->next, 1) < n) {
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			if (errno == EAGAIN || errno == ENOMEM) {
				atomic_fetch_sub(&c->next, 1);
				usleep(1000);
				continue;
			}
			_exit(1);
		}
		if (pid == 0) {
			execv(self, argv);
			_exit(127);
		}
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR)
				_exit(1);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			atomic_fetch_add(&c->failed, 1);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	struct counters *c;
	char self[4096];
	ssize_t len;
	long n;
	int workers, ok = 1;

	if (argc == 3 && !strcmp(argv[1], "burst")) {
		burst((int64_t)(atof(argv[2]) * 1e6));
		return 0;
	}
	if (argc != 4 || (n = atol(argv[1])) < 1 || (workers = atoi(argv[2])) < 1 || workers > 256 ||
	    atof(argv[3]) <= 0) {
		fprintf(stderr, "usage: proc_churn N WORKERS MS\n");
		return 2;
	}
	/* Its own path, not /proc/self/exe: the name is the command's. */
	if ((len = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0) {
		perror("readlink /proc/self/exe");
		return 1;
	}
	self[len] = '\0';
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (int i = 0; i < workers; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			worker(self, n, argv[3], c);
	}
	for (int i = 0; i < workers; i++) {
		int status;

		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			ok = 0;
	}
	printf("processes %ld failed %ld\n", n, atomic_load(&c->failed));
	return ok && !atomic_load(&c->failed) ? 0 : 1;
}
