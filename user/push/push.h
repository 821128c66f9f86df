/* push.h — sends each window's profiles to a server (--push URL:
 * Pyroscope's /ingest), never holding the recording up.
 *
 * The recording thread hands in a window's profile per event
 * (push__profile): it is cut into one profile per series (the service
 * name a template makes from each sample's labels, pyroscope.c), each
 * encoded and gzipped there, and queued. One sender thread (sender.c)
 * posts the queue's items with libcurl, one at a time. The queue is
 * bounded in bytes: when a slow or dead server lets it fill, the oldest
 * profiles go first. A failure the server may get over (no connection,
 * a timeout, 429, 5xx) is tried again after a backoff (1 s, doubling, or
 * the server's Retry-After) up to PUSH_ATTEMPTS times; any other answer
 * (400, 401, 413...) drops the profile at once. Every loss is counted
 * (struct push_stats) and said on stderr at most once per
 * PUSH_LOG_EVERY_S, with how many were not said.
 */
#ifndef PMUBPF_PUSH_H
#define PMUBPF_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "pprof/pprof.h"

#define PUSH_ATTEMPTS 5
#define PUSH_LOG_EVERY_S 60
#define PUSH_MAX_SAMPLES 16000 /* Pyroscope refuses a profile with more */
#define PUSH_DEFAULT_SERVICE "{container_id|comm}"
#define PUSH_MAX_HEADERS 8
#define PUSH_EXIT_WAIT_S 10 /* at the end, what is queued is sent for so long */

enum push_kind { PUSH_PYROSCOPE, PUSH_OTLP };

struct push_opts {
	enum push_kind kind;         /* --push (Pyroscope) or --otlp */
	const char *url;             /* the server's base address */
	const char *service;         /* the service_name template: text, and
	                              * {a|b|...}: the first of those labels
	                              * a sample has ("" if none) */
	const char *headers[PUSH_MAX_HEADERS]; /* "Name: value" each */
	int nheaders;
	const char *token;           /* Authorization: Bearer TOKEN, NULL: none */
	const char *ca;              /* CA certificates (PEM) for https://,
	                              * NULL: the system's */
	size_t queue_bytes;          /* the queue's bound */
	double timeout_s;            /* one POST's longest (connection and all) */
	double backoff_s;            /* the first retry's wait; doubles */
};

struct push_stats {
	uint64_t profiles_queued, profiles_sent, bytes_sent;
	uint64_t retries;            /* POSTs tried again */
	uint64_t dropped_full;       /* pushed out of a full queue */
	uint64_t dropped_refused;    /* answered with a status not retried */
	uint64_t dropped_failed;     /* PUSH_ATTEMPTS failures */
	uint64_t dropped_exit;       /* still queued when the recording ended */
	uint64_t dropped_encode;     /* not made: out of memory */
	uint64_t queue_bytes, queue_items; /* now */
};

struct push;

/* Check the options (a bad URL or template: -1, one line in err) and
 * start the sender thread. NULL + err. */
struct push *push__new(const struct push_opts *o, char *err, size_t errlen);

/* Queue window [start_wall, start_wall + duration) of event `event`: its
 * profile p, cut per service. Returns at once (the encoding is done
 * here; the sending is the thread's). 0, or -ENOMEM (counted). */
int push__profile(struct push *ps, const char *event, const struct pprof *p,
		  int64_t start_wall, int64_t duration);

void push__stats(struct push *ps, struct push_stats *out);

/* A profile that could not be made (out of memory): counted as
 * dropped_encode. */
void push__lost_profile(struct push *ps);

/* Send what is queued, for at most wait_s seconds, then stop the thread;
 * what is left is dropped and counted. Says the totals on stderr, and
 * into *final if given. Frees ps (NULL: nothing). */
void push__close(struct push *ps, double wait_s, struct push_stats *final);

/* The senders cfg asks for: out[0] for --push, out[1] for --otlp (NULL
 * where not given). 0, or -1 with one line in err (nothing started). */
struct config;
int push__start_all(const struct config *cfg, struct push *out[2], char *err, size_t errlen);

/* Parse one template (for the command line's checks): 0, or -1 with why
 * in err. */
int push__check_template(const char *tmpl, char *err, size_t errlen);

#endif
