/* recorder_int.h — what the recorder (recorder.c) and its metrics
 * (recorder_metrics.c) share. Not a public interface: see recorder.h.
 */
#ifndef PMUBPF_HTTP_RECORDER_INT_H
#define PMUBPF_HTTP_RECORDER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "push/push.h"
#include "record/session.h"
#include "report/entries.h"
#include "recorder.h"

enum job_state { JOB_PENDING, JOB_RUNNING, JOB_DONE };

struct recorder_job {
	struct recorder_request rq;
	char *comment;
	enum job_state state;        /* under r->lock */
	bool cancelled;              /* under r->lock: its client left */
	struct recorder_job *next;   /* in pending or running (under r->lock) */
	/* the recorder thread's alone while running */
	struct report_data d;
	bool d_ok;
	bool ended;                  /* its last window is merged in */
	int64_t deadline;            /* CLOCK_MONOTONIC ns */
	int64_t start;               /* its first window's start (mono ns) */
	int64_t start_wall, duration;/* of the windows merged in */
	int nwindows;
	struct recorder_result res;  /* set before JOB_DONE */
	bool pushed;                 /* --push/--otlp's: no client; its
	                              * profile goes to the senders, and
	                              * the next one starts where it ends */
};

struct recorder {
	struct config cfg;           /* the caller's, with every = --window */
	struct session *s;
	int stats_fd;                /* BPF_ENABLE_STATS, -1 if refused */
	int64_t next_drain, next_metrics;
	int64_t flipped;             /* the last window's close (mono ns) */
	pthread_mutex_t lock;
	pthread_cond_t done;         /* a job became JOB_DONE */
	struct recorder_job *pending, *running;
	int njobs;                   /* pending + running + not yet collected */
	bool stopping;
	struct metrics m;            /* under lock */
	struct push *push[2];        /* --push, --otlp; NULL where not given */
	double push_every;           /* --every: their profiles' length */
};

/* The recording's side of /metrics, brought up to date (once a second
 * and at the end: recorder.c's tick). */
void recorder__refresh_metrics(struct recorder *r);

#endif
