/* fork_exec.c — fork children that exec at once, each exec long past its
 * point of no return:
 *
 *   fork_exec MIB N PROGRAM ARGS...
 *
 * Fills MIB MiB of anonymous memory (small pages: every page touched),
 * then N times forks a child that execv()s PROGRAM (argv[0] too) at
 * once, and waits for it. The child's copy of the parent's address space
 * holds a page table entry per page: its exec frees them all in
 * exec_mmap, after sched_prepare_exec, while the child runs no code of
 * its own before its execve. So most children are first sampled inside
 * their exec, past its point of no return, still in their parent's image
 * (what pmubpf names by the parent's: images_like_parent): the window
 * grows with MIB, the time before it does not. (Under qemu the time
 * before it is long too: the exec's path walks and reads over 9p, the
 * child's copy-on-write faults.) Prints "child PID" for each child, at
 * its end. Exits 1 if a fork or a child fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: fork_exec MIB N PROGRAM ARGS...\n");
		return 2;
	}
	size_t len = (size_t)atoi(argv[1]) << 20;
	int n = atoi(argv[2]);
	char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED) {
		perror("fork_exec: mmap");
		return 1;
	}
	/* execv through a pointer taken now: the child makes no lazy
	 * binding's lookup before its exec. */
	int (*volatile ex)(const char *, char *const *) = execv;

	madvise(mem, len, MADV_NOHUGEPAGE); /* a PTE per 4 KiB page */
	for (size_t off = 0; off < len; off += 4096)
		mem[off] = 1;
	for (int i = 0; i < n; i++) {
		int st;
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork_exec: fork");
			return 1;
		}
		if (!pid) {
			ex(argv[3], argv + 3);
			_exit(127);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "fork_exec: child %d of %d failed\n", i + 1, n);
			return 1;
		}
		printf("child %d\n", (int)pid);
	}
	return 0;
}
