/* mmapwatch.c — see mmapwatch.h. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "mmapwatch.h"

/* 256 KiB a CPU: records are read on the loader's cadence (every
 * POLL_MS, or when half full), not each as it comes. Under heavy churn
 * (2000 processes/s, ~8 records each, ~80 bytes a record) half a buffer
 * is ~0.2 s of one CPU's records. */
#define PAGES_PER_CPU 64

struct mmapwatch {
	struct perf_buffer *pb;
	struct procs *procs;
};

/* What sample_id_all appends to every record (sample_type TID | TIME). */
struct sample_id {
	__u32 pid, tid;
	__u64 time; /* CLOCK_MONOTONIC ns (use_clockid) */
};

/* PERF_RECORD_MMAP2 as the kernel lays it out, before its sample_id. */
struct mmap2_record {
	struct perf_event_header header;
	__u32 pid, tid;
	__u64 addr, len, pgoff;
	__u32 maj, min;
	__u64 ino, ino_generation;
	__u32 prot, flags;
	char filename[];
};

struct fork_record {
	struct perf_event_header header;
	__u32 pid, ppid, tid, ptid;
	__u64 time;
};

struct comm_record {
	struct perf_event_header header;
	__u32 pid, tid;
	char comm[];
};

static void on_mmap2(struct mmapwatch *w, const struct perf_event_header *h, int64_t t)
{
	const struct mmap2_record *r = (const void *)h;
	size_t room = h->size - sizeof(*r) - sizeof(struct sample_id);
	char path[4096];
	size_t len = strnlen(r->filename, room < sizeof(path) - 1 ? room : sizeof(path) - 1);
	struct procmap m = {
		.start = r->addr, .end = r->addr + r->len, .pgoff = r->pgoff,
		.inode = r->ino, .dev_major = r->maj, .dev_minor = r->min,
		.exec = true, .path = path,
	};

	memcpy(path, r->filename, len);
	path[len] = '\0';
	/* A data mapping (--data-addr) only asks for a re-read: it is no
	 * code, and the re-read keeps it in the data maps. The vDSO is
	 * code without a file, logged for processes gone before a read. */
	bool code = (r->prot & PROT_EXEC) && (path[0] == '/' || !strcmp(path, "[vdso]"));
	procs__mapped(w->procs, r->pid, code ? &m : NULL, t);
}

static enum bpf_perf_event_ret on_record(void *ctx, int cpu, struct perf_event_header *h)
{
	struct mmapwatch *w = ctx;
	struct sample_id id;

	(void)cpu;
	if (h->size < sizeof(*h) + sizeof(id))
		return LIBBPF_PERF_EVENT_CONT;
	memcpy(&id, (const char *)h + h->size - sizeof(id), sizeof(id));
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		if (h->size >= sizeof(struct mmap2_record) + sizeof(id))
			on_mmap2(w, h, (int64_t)id.time);
		break;
	case PERF_RECORD_COMM:
		/* Only an exec's (a thread renaming itself is nothing here). */
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			procs__exec(w->procs, ((const struct comm_record *)h)->pid, (int64_t)id.time);
		break;
	case PERF_RECORD_FORK:
		if (h->size >= sizeof(struct fork_record) + sizeof(id)) {
			const struct fork_record *r = (const void *)h;

			if (r->pid != r->ppid) /* a new process, not a thread */
				procs__forked(w->procs, r->pid, r->ppid, (int64_t)id.time);
		}
		break;
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(*h) + 16 + sizeof(id)) {
			__u64 n;

			memcpy(&n, (const char *)h + sizeof(*h) + 8, sizeof(n));
			procs__reports_lost(w->procs, n);
		}
		break;
	}
	return LIBBPF_PERF_EVENT_CONT;
}

struct mmapwatch *mmapwatch__new(int map_fd, struct procs *procs, bool data)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_period = 1,
		.mmap = 1,            /* executable file mappings only (the kernel
		                       * counts watchers by .mmap) ... */
		.mmap2 = 1,           /* ... reported in the MMAP2 format */
		.mmap_data = data,    /* --data-addr: data mappings too */
		.comm = 1,            /* execs (COMM_EXEC): an image ends */
		.comm_exec = 1,
		.task = 1,            /* forks: a child starts in its parent's image */
		.sample_id_all = 1,   /* each record's time, ... */
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.use_clockid = 1,     /* ... on the BPF notices' clock */
		.clockid = CLOCK_MONOTONIC,
		/* Woken when half full; else read on the loader's cadence. One
		 * wakeup per record cost the machine more than the reading:
		 * under churn, a context switch for each of ~8 records per
		 * process slowed the load 2x (docs/benchmarks.md). */
		.watermark = 1,
	};
	struct mmapwatch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->procs = procs;
	attr.wakeup_watermark = (__u32)(PAGES_PER_CPU * sysconf(_SC_PAGESIZE) / 2);
	w->pb = perf_buffer__new_raw(map_fd, PAGES_PER_CPU, &attr, on_record, w, NULL);
	if (!w->pb) {
		int en = errno;

		free(w);
		errno = en;
		return NULL;
	}
	return w;
}

int mmapwatch__fd(const struct mmapwatch *w)
{
	return perf_buffer__epoll_fd(w->pb);
}

int mmapwatch__consume(struct mmapwatch *w)
{
	/* A report is stamped and written in one go: those stamped before
	 * the read began are in. */
	int64_t t0 = mono_ns();
	int err = perf_buffer__consume(w->pb);

	procs__reports_read(w->procs, t0);
	return err;
}

void mmapwatch__free(struct mmapwatch *w)
{
	if (!w)
		return;
	perf_buffer__free(w->pb);
	free(w);
}
