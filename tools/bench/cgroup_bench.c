/* cgroup_bench.c — what naming a process's cgroup costs the recorder
 * (user/procs/cgroups.c), per process: the three paths a new process
 * takes, timed over N calls each, in ns per call.
 *
 *   hit    its cgroup already named (another process of the same
 *          container or service): a lookup in the cache
 *   v2     a cgroup named for the first time from BPF's v2 id: a file
 *          handle opened on the cgroup2 mount and its link read, the
 *          path parsed for container, pod and unit
 *   proc   a host whose controllers are on v1 (v2 says nothing):
 *          /proc/PID/cgroup read and parsed, for every live process
 *
 * Usage: cgroup_bench [N]   (root; needs a cgroup2 mount for hit and v2)
 * Prints "PATH NS_PER_CALL" lines; docs/benchmarks.md, "Naming cgroups".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "procs/cgroups.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	char v2[4096], dir[4200];
	bool v1;
	struct stat st;
	double t;

	if (cgroups__mounts(v2, sizeof(v2), &v1) == 0) {
		/* a cgroup of our own, named like a container's scope */
		snprintf(dir, sizeof(dir), "%s/docker-%s.scope", v2,
			 "3f2a9c0d1e2b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f");
		if (mkdir(dir, 0755) && errno != EEXIST) {
			perror(dir);
			return 1;
		}
		if (stat(dir, &st)) {
			perror(dir);
			return 1;
		}
		uint64_t id = st.st_ino; /* a cgroup's v2 id is its kernfs inode */
		struct cgroups *cg = cgroups__new();
		struct cgroup_info *keep = cgroups__of_id(cg, id);

		if (!keep || !keep->names.container_id[0]) {
			fprintf(stderr, "cgroup_bench: %s not named\n", dir);
			return 1;
		}
		t = now_ns();
		for (int i = 0; i < n; i++)
			cgroups__put(cg, cgroups__of_id(cg, id));
		printf("hit %.0f\n", (now_ns() - t) / n);
		/* the last process of a cgroup gone, its entry goes: the next
		 * lookup names it again */
		cgroups__put(cg, keep);
		t = now_ns();
		for (int i = 0; i < n; i++)
			cgroups__put(cg, cgroups__of_id(cg, id));
		printf("v2 %.0f\n", (now_ns() - t) / n);
		cgroups__free(cg);
		rmdir(dir);
	}
	struct cgroups *cg = cgroups__new();
	t = now_ns();
	for (int i = 0; i < n; i++)
		cgroups__put(cg, cgroups__of_pid(cg, getpid()));
	printf("proc %.0f\n", (now_ns() - t) / n);
	cgroups__free(cg);
	return 0;
}
