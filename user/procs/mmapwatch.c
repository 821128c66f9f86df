/* mmapwatch.c — see mmapwatch.h. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "mmapwatch.h"

#define PAGES_PER_CPU 8 /* 32 KiB: MMAP2 records are ~100 bytes */

struct mmapwatch {
	struct perf_buffer *pb;
	struct procs *procs;
	unsigned long long lost;
};

/* PERF_RECORD_MMAP2 as the kernel lays it out (no sample_id_all). */
struct mmap2_record {
	struct perf_event_header header;
	__u32 pid, tid;
	__u64 addr, len, pgoff;
	__u32 maj, min;
	__u64 ino, ino_generation;
	__u32 prot, flags;
	char filename[];
};

static enum bpf_perf_event_ret on_record(void *ctx, int cpu, struct perf_event_header *h)
{
	struct mmapwatch *w = ctx;

	(void)cpu;
	if (h->type == PERF_RECORD_MMAP2 && h->size >= sizeof(struct mmap2_record)) {
		const struct mmap2_record *r = (const void *)h;
		size_t room = h->size - sizeof(*r);
		char path[4096];
		size_t len = strnlen(r->filename, room < sizeof(path) - 1 ? room : sizeof(path) - 1);
		struct procmap m = {
			.start = r->addr, .end = r->addr + r->len, .pgoff = r->pgoff,
			.inode = r->ino, .dev_major = r->maj, .dev_minor = r->min,
			.exec = true, .path = path,
		};

		memcpy(path, r->filename, len);
		path[len] = '\0';
		/* A data mapping (--data-addr) only asks for a re-read: it is
		 * no code, and the re-read keeps it in the data maps. */
		procs__mapped(w->procs, r->pid, path[0] == '/' && (r->prot & PROT_EXEC) ? &m : NULL);
	} else if (h->type == PERF_RECORD_LOST && h->size >= sizeof(*h) + 16) {
		__u64 n;

		memcpy(&n, (const char *)h + sizeof(*h) + 8, sizeof(n));
		w->lost += n;
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
		.watermark = 1,       /* wake the reader at each record: */
		.wakeup_watermark = 1,/* wakeup_events counts samples only */
	};
	struct mmapwatch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->procs = procs;
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
	return perf_buffer__consume(w->pb);
}

unsigned long long mmapwatch__lost(const struct mmapwatch *w)
{
	return w ? w->lost : 0;
}

void mmapwatch__free(struct mmapwatch *w)
{
	if (!w)
		return;
	perf_buffer__free(w->pb);
	free(w);
}
