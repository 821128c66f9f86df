/* nofpnap.c — libnofpnap.so, built without frame pointers, which
 * nofp_libnap links (DT_NEEDED, found through its run path): its first
 * samples are in here, before its maps are read. */
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleeps ms (nanosleep by syscall(): the user leaf is libc's syscall,
 * its caller this function, which a frame-pointer walk skips). */
__attribute__((noinline)) long lib_nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	return syscall(SYS_nanosleep, &ts, NULL);
}
