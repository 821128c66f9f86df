/* images.c — see images.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "images.h"

bool images__supported(void)
{
	const char *env = getenv("PMUBPF_MMAP_REPORTS");
	struct btf *btf;
	bool ok;

	if (env && *env && strcmp(env, "0"))
		return false;
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return false;
	ok = btf__find_by_name_kind(btf, "bpf_iter_task_vma_new", BTF_KIND_FUNC) > 0 &&
	     btf__find_by_name_kind(btf, "btf_trace_sched_prepare_exec", BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
	return ok;
}

int images__stats(int stats_fd, int nr_cpus, uint64_t out[PMUBPF_IMAGE_NSTATS])
{
	uint64_t *v = calloc((size_t)nr_cpus, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (uint32_t k = 0; k < PMUBPF_IMAGE_NSTATS; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(stats_fd, &k, v)) {
			int err = -errno;

			free(v);
			return err;
		}
		for (int c = 0; c < nr_cpus; c++)
			out[k] += v[c];
	}
	free(v);
	return 0;
}

int images__exit_probe(int seen_fd, int stats_fd, int nr_cpus)
{
	uint64_t before[PMUBPF_IMAGE_NSTATS], after[PMUBPF_IMAGE_NSTATS];
	struct pmubpf_seen mark = { .pgen = 0, .noticed = 1 }; /* no generation is 0 */
	int go[2], err, status;
	__u32 tgid;
	pid_t pid;
	char c;

	if ((err = images__stats(stats_fd, nr_cpus, before)))
		return err;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	if (pid == 0) { /* waits until marked, then exits */
		close(go[1]);
		_exit(read(go[0], &c, 1) < 0);
	}
	close(go[0]);
	tgid = (__u32)pid;
	err = bpf_map_update_elem(seen_fd, &tgid, &mark, BPF_ANY) ? -errno : 0;
	close(go[1]); /* the child reads EOF and exits */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (err)
		return err;
	if ((err = images__stats(stats_fd, nr_cpus, after)))
		return err;
	if (after[PMUBPF_IMAGE_WALKS] > before[PMUBPF_IMAGE_WALKS])
		return 1;
	if (after[PMUBPF_IMAGE_NOMM] > before[PMUBPF_IMAGE_NOMM])
		return 0;
	return -ESRCH; /* the exit went unseen */
}
