/* syscall_work.c — system-call-heavy overhead workload: each unit is 100
 * rounds of getppid(), a 64-byte read from /dev/zero and a 64-byte write
 * to /dev/null, so most samples land in the kernel and carry both a
 * kernel and a user stack. See work.h for the command line and output.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#define WORK_NAME "syscall_work"
#include "work.h"

static __thread int zero_fd = -1, null_fd = -1;

static __attribute__((noinline)) void unit(void)
{
	char buf[64];

	if (zero_fd < 0) {
		zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
		null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (zero_fd < 0 || null_fd < 0)
			abort();
	}
	for (int i = 0; i < 100; i++) {
		syscall(SYS_getppid); /* not cached by libc */
		if (read(zero_fd, buf, sizeof(buf)) != sizeof(buf) ||
		    write(null_fd, buf, sizeof(buf)) != sizeof(buf))
			abort();
	}
}
