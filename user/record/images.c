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
#include "lib/envflag.h"
#include "exitprobe.skel.h"

/* Does the kernel's BTF name every one of names[0..n)? Only its string
 * section is read, in pieces through one buffer, for "\0NAME\0": ~1 ms
 * of CPU where parsing the whole BTF (types, index) took ~16 ms, 8% of
 * a short recording's CPU on a VM whose page faults are slow. A string
 * is a name of some type; the names asked here are of a function and of
 * a tracepoint's typedef, which nothing else is called. */
static bool btf_names_all(const char *const *names, size_t n)
{
	struct {
		uint16_t magic;
		uint8_t version, flags;
		uint32_t hdr_len, type_off, type_len, str_off, str_len;
	} h;
	char needle[8][64];
	size_t nlen[8], longest = 0, left = n;
	bool found[8] = { false };
	static char buf[64 << 10];
	size_t carry = 0;
	uint64_t off, end;
	int fd;

	if (n > 8)
		return false;
	for (size_t i = 0; i < n; i++) {
		int l = snprintf(needle[i], sizeof(needle[i]), "%c%s%c", 0, names[i], 0);

		if (l < 0 || (size_t)l >= sizeof(needle[i]))
			return false;
		nlen[i] = (size_t)l;
		longest = nlen[i] > longest ? nlen[i] : longest;
	}
	fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.magic != 0xeb9f ||
	    h.hdr_len < sizeof(h)) {
		close(fd);
		return false;
	}
	off = (uint64_t)h.hdr_len + h.str_off;
	end = off + h.str_len;
	while (left && off < end) {
		size_t want = sizeof(buf) - carry;
		ssize_t r;

		if (want > end - off)
			want = (size_t)(end - off);
		r = pread(fd, buf + carry, want, (off_t)off);
		if (r <= 0)
			break;
		off += (uint64_t)r;
		carry += (size_t)r;
		for (size_t i = 0; i < n; i++)
			if (!found[i] && memmem(buf, carry, needle[i], nlen[i])) {
				found[i] = true;
				left--;
			}
		/* Keep the tail a needle could straddle into the next piece. */
		if (carry >= longest) {
			memmove(buf, buf + carry - (longest - 1), longest - 1);
			carry = longest - 1;
		}
	}
	close(fd);
	return !left;
}

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
	if (!btf_names_all(need, sizeof(need) / sizeof(need[0]))) {
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
