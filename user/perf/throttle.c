/* throttle.c — PERF_RECORD_THROTTLE/UNTHROTTLE from each sampled event's
 * ring buffer (throttle.h says why).
 */
#include "throttle.h"

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define RING_DATA_PAGES 2 /* 8 KiB: 256 records of 32 bytes, 128 episodes */

struct ring {
	struct perf_event_mmap_page *meta; /* NULL: not watched */
	size_t size;                       /* data bytes, a power of two */
	int ev;
	int64_t since;                     /* an open episode's start, else 0 */
};

struct throttle {
	int n, nevents;
	long page;
	struct ring *rings;
	struct throttle_stats *st; /* [nevents], closed episodes */
};

/* The records read here: the header, then (THROTTLE, UNTHROTTLE) time,
 * id, stream_id, or (LOST) id, lost. */
struct rec_throttle {
	struct perf_event_header h;
	uint64_t time, id, stream_id;
};
struct rec_lost {
	struct perf_event_header h;
	uint64_t id, lost;
};

struct throttle *throttle__watch(const int *fds, const int *ev_of, int n, int nevents)
{
	struct throttle *t = calloc(1, sizeof(*t));

	if (!t || !(t->rings = calloc(n ? n : 1, sizeof(*t->rings))) ||
	    !(t->st = calloc(nevents ? nevents : 1, sizeof(*t->st)))) {
		throttle__free(t);
		return NULL;
	}
	t->n = n;
	t->nevents = nevents;
	t->page = sysconf(_SC_PAGESIZE);
	for (int i = 0; i < n; i++) {
		struct ring *r = &t->rings[i];
		size_t len = (size_t)t->page * (1 + RING_DATA_PAGES);
		void *m;

		r->ev = ev_of[i];
		if (fds[i] < 0 || r->ev < 0 || r->ev >= nevents)
			continue;
		/* Read-write: the kernel then never overwrites what is not
		 * read yet (it counts it lost instead). */
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], 0);
		if (m == MAP_FAILED) { /* locked-memory limit without CAP_IPC_LOCK */
			t->st[r->ev].unwatched++;
			continue;
		}
		r->meta = m;
		r->size = (size_t)t->page * RING_DATA_PAGES;
	}
	return t;
}

static void take(struct throttle *t, struct ring *r, const void *rec, uint16_t type)
{
	struct throttle_stats *s = &t->st[r->ev];

	if (type == PERF_RECORD_THROTTLE) {
		const struct rec_throttle *x = rec;

		s->episodes++;
		r->since = (int64_t)x->time ? (int64_t)x->time : 1;
	} else if (type == PERF_RECORD_UNTHROTTLE) {
		const struct rec_throttle *x = rec;

		if (r->since && (int64_t)x->time > r->since)
			s->stopped_ns += (uint64_t)((int64_t)x->time - r->since);
		r->since = 0;
	} else if (type == PERF_RECORD_LOST) {
		const struct rec_lost *x = rec;

		s->unseen += x->lost;
	}
}

static void poll_ring(struct throttle *t, struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	const unsigned char *data = (const unsigned char *)r->meta + t->page;

	while (tail < head) {
		union {
			struct perf_event_header h;
			struct rec_throttle th;
			struct rec_lost lost;
			unsigned char b[64];
		} rec;
		size_t off = tail & (r->size - 1), first;
		struct perf_event_header h;

		/* A record may wrap around the ring's end: copied in two. */
		first = r->size - off < sizeof(h) ? r->size - off : sizeof(h);
		memcpy(&h, data + off, first);
		memcpy((unsigned char *)&h + first, data, sizeof(h) - first);
		if (h.size < sizeof(h) || tail + h.size > head)
			break; /* cannot be: the kernel writes whole records */
		size_t len = h.size < sizeof(rec) ? h.size : sizeof(rec);

		memset(&rec, 0, sizeof(rec));
		first = r->size - off < len ? r->size - off : len;
		memcpy(rec.b, data + off, first);
		memcpy(rec.b + first, data, len - first);
		take(t, r, &rec, h.type);
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

void throttle__poll(struct throttle *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		if (t->rings[i].meta)
			poll_ring(t, &t->rings[i]);
}

void throttle__stats(struct throttle *t, int ev, int64_t now_mono, struct throttle_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!t || ev < 0 || ev >= t->nevents)
		return;
	*out = t->st[ev];
	for (int i = 0; i < t->n; i++) {
		const struct ring *r = &t->rings[i];

		if (r->ev == ev && r->meta && r->since && now_mono > r->since)
			out->stopped_ns += (uint64_t)(now_mono - r->since);
	}
}

void throttle__free(struct throttle *t)
{
	if (!t)
		return;
	for (int i = 0; t->rings && i < t->n; i++)
		if (t->rings[i].meta)
			munmap(t->rings[i].meta, (size_t)t->page * (1 + RING_DATA_PAGES));
	free(t->rings);
	free(t->st);
	free(t);
}
