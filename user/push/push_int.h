/* push_int.h — what the queue (push.c) and the profile cutter
 * (pyroscope.c) share. Not a public interface: see push.h.
 */
#ifndef PMUBPF_PUSH_INT_H
#define PMUBPF_PUSH_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "push.h"

#define PUSH_STR(x) #x
#define PUSH_XSTR(x) PUSH_STR(x)
#define PUSH_ATTEMPTS_S PUSH_XSTR(PUSH_ATTEMPTS)

/* One POST: its address and gzipped body. */
struct push_item {
	struct push_item *next;
	char *url;
	uint8_t *body;
	size_t len;
	const char *ctype;           /* its Content-Type (a literal) */
	int attempts;
	int64_t not_before;          /* CLOCK_MONOTONIC ns: a retry's wait */
	char what[160];              /* for the log: "cpu-clock of web" */
};

struct curl_fns;

struct push {
	const struct curl_fns *cu;   /* libcurl (dlopen()ed: curl.h) */
	struct push_opts o;
	char *base;                  /* o.url without trailing '/' */
	char *hdrs[PUSH_MAX_HEADERS + 3];
	int nhdrs;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;           /* an item queued, or stop */
	struct push_item *head, *tail;
	size_t bytes, items;
	bool stop;                   /* push__close: send what is left, then end */
	int64_t deadline;            /* ... until then (CLOCK_MONOTONIC ns) */
	int abort;                   /* past it: the POST under way is cut off */
	bool failing;                /* the last POST failed (one line a run) */
	int64_t said;                /* the last line on stderr (mono ns) */
	uint64_t quiet_lines, quiet_full;
	struct push_stats st;
};

#define PUSH_VERSION "0.1.0" /* the scope's version in OTLP requests */

/* Queue it (push.c); the queue owns it from then on. */
void push__enqueue(struct push *ps, struct push_item *it);

/* A window's profile of one event, queued as each kind of server takes
 * it (pyroscope.c, otlp.c). 0 or -errno. */
int push__pyroscope(struct push *ps, const char *event, const struct pprof *p,
		    int64_t start_wall, int64_t duration);
int push__otlp(struct push *ps, const char *event, const struct pprof *p);

#endif
