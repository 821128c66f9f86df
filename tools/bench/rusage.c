/* rusage.c — run a command and report its CPU time and peak memory.
 *
 *   rusage OUT COMMAND [ARGS...]
 *
 * Forks, execs COMMAND, waits for it and writes to OUT one line
 *
 *   user_s X sys_s X maxrss_kb N status N vcsw N ivcsw N
 *
 * from wait4()'s rusage of the child (its own, plus that of any children
 * it reaped). Like /usr/bin/time, and for the same reason: Linux carries
 * a process's peak RSS across fork and exec, so a child forked straight
 * from the (large) Python benchmark runner would report the runner's peak
 * as its own. This helper is small, so its children start from its peak.
 * Signals sent to rusage are passed on to the command. Exits with the
 * command's status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int status = 0;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: rusage OUT COMMAND [ARGS...]\n");
		return 2;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		execvp(argv[2], &argv[2]);
		perror(argv[2]);
		_exit(127);
	}
	signal(SIGINT, forward);
	signal(SIGTERM, forward);
	while (wait4(child, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("wait4");
			return 1;
		}
	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out, "user_s %.3f sys_s %.3f maxrss_kb %ld status %d vcsw %ld ivcsw %ld\n",
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
		ru.ru_maxrss, status, ru.ru_nvcsw, ru.ru_nivcsw);
	fclose(out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
