/* recorder.h — the one recording `pmubpf --http` answers every request
 * from.
 *
 * BPF is loaded once (a windowed session, record/session.h) and the
 * thread that calls recorder__run drives it alone (procs and symbols are
 * not thread-safe). Request threads hand it jobs (recorder__submit) and
 * wait (recorder__wait). At a job's arrival the recorder closes the
 * window under way (session__drain_window: a new one opens at once), so
 * the job's data starts there; every window closed while the job runs is
 * merged into the job's own report_data (report_data__merge), and at its
 * deadline one more close ends it: the profile covers exactly the
 * windows from its start to its end, whose summed length is its
 * duration_nanos. With no job due, a window is still closed every
 * --window seconds, so the maps never hold more than that.
 *
 * Arrival and deadline are seen at the recorder's next step (at most
 * ~100 ms later); the profile is built and gzipped by the recorder, then
 * handed to the waiting thread.
 */
#ifndef PMUBPF_HTTP_RECORDER_H
#define PMUBPF_HTTP_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "config/config.h"
#include "metrics.h"

#define RECORDER_MAX_JOBS 64       /* profile requests at once; 503 beyond */
#define RECORDER_DEFAULT_WINDOW 10 /* seconds, --window */

struct recorder;
struct recorder_job;

struct recorder_request {
	double seconds;      /* how long */
	int event;           /* index into cfg->events */
	bool nosymbol;       /* addresses and build-ids only */
	const char *comment; /* for the profile's first comment (copied) */
};

struct recorder_result {
	int status;          /* 200, or the HTTP status of the error */
	uint8_t *body;       /* status 200: the gzipped profile (malloc'd) */
	size_t len;
	uint64_t samples;    /* in the profile (not the lost ones) */
	bool gone;           /* the client left first: nothing to send */
	char err[512];       /* otherwise: one line */
};

/* cfg must outlive the recorder; its window (--window, default 10 s) is
 * the session's. NULL + errno. */
struct recorder *recorder__new(const struct config *cfg);
/* Load BPF, start sampling: 0, or -1 with a one-line reason in err and
 * the process's exit status in *status. */
int recorder__start(struct recorder *r, char *err, size_t errlen, int *status);
/* Drive the recording until SIGINT/SIGTERM or the end of every -p/-t
 * target; jobs under way then get what was recorded, later ones 503.
 * Returns the exit status (1 on an error, said on stderr). */
int recorder__run(struct recorder *r);
void recorder__free(struct recorder *r);

/* From any thread. A job, or NULL with the status (503: too many, or
 * stopping) and a one-line reason in res. */
struct recorder_job *recorder__submit(struct recorder *r, const struct recorder_request *rq,
				      struct recorder_result *res);
/* Wait for j's profile; gone(arg) is asked every 200 ms: true gives the
 * job up (its data dropped at the recorder's next step). j is freed. */
void recorder__wait(struct recorder *r, struct recorder_job *j, bool (*gone)(void *arg),
		    void *arg, struct recorder_result *res);

/* The recording's side of /metrics (the process's own is metrics__self). */
void recorder__metrics(struct recorder *r, struct metrics *m);

#endif
