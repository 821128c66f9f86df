/* images.c — see images.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "images.h"
#include "btfnames.h"
#include "lib/envflag.h"
#include "exitprobe.skel.h"

static const char *why_not = "";

/* Does the exit tracepoint see an exiting process's mm? A child that
 * exits at once, watched by exitprobe.bpf.c: 1 yes, 0 no, -errno if it
 * could not tell. */
static int exit_has_mm(void)
{
	struct exitprobe_bpf *skel = exitprobe_bpf__open_and_load();
	int err, status, go[2] = { -1, -1 };
	pid_t pid;

	if (!skel)
		return errno ? -errno : -ENOTSUP;
	if (exitprobe_bpf__attach(skel)) {
		err = errno ? -errno : -ENOTSUP;
		goto out;
	}
	/* The child's tgid is known only after fork: it waits for it to be
	 * set (a pipe's EOF) before it exits. */
	if (pipe2(go, O_CLOEXEC)) {
		err = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out;
	}
	if (pid == 0) {
		char c;

		close(go[1]);
		_exit(read(go[0], &c, 1) < 0);
	}
	skel->bss->probe_tgid = (__u32)pid;
	close(go[1]); /* the child reads EOF and exits */
	go[1] = -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	err = !skel->bss->exits ? -ESRCH : skel->bss->with_mm > 0;
out:
	for (int i = 0; i < 2; i++)
		if (go[i] >= 0)
			close(go[i]);
	exitprobe_bpf__destroy(skel);
	return err;
}

bool images__supported(void)
{
	static const char *const need[] = { "bpf_iter_task_vma_new", "btf_trace_sched_prepare_exec" };
	static int known = -1;
	int r;

	if (envflag_on(getenv("PMUBPF_MMAP_REPORTS"))) {
		why_not = "PMUBPF_MMAP_REPORTS=1";
		return false;
	}
	if (known >= 0)
		return known;
	if (!btfnames__all(need, sizeof(need) / sizeof(need[0]))) {
		why_not = "this kernel's BTF has no VMA iterator (6.7) or sched_prepare_exec (6.10)";
		return (known = 0);
	}
	r = exit_has_mm();
	if (r < 0) {
		static char text[96];

		snprintf(text, sizeof(text), "its exit could not be watched: %s", strerror(-r));
		why_not = text;
		return false; /* asked again next time */
	}
	if (!r)
		why_not = "this kernel releases an exiting process's memory before its exit tracepoint (6.16 keeps it)";
	return (known = r);
}

const char *images__why_not(void)
{
	return why_not;
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
