/* session.h — one recording, from loading BPF to writing the profiles.
 *
 * The orchestration stage: checks the machine (BTF, privileges), loads the
 * skeleton with maps sized for the run, sets targets, starts the command
 * if any, opens and attaches the events, serves ring-buffer notices until
 * the duration ends, a signal arrives or the command exits, then hands the
 * maps to report. See docs/architecture.md for the whole data flow.
 */
#ifndef PMUBPF_SESSION_H
#define PMUBPF_SESSION_H

#include "config/config.h"

/* Run the recording described by cfg. Returns the process exit status:
 * 0, 1 on an error (already printed as one line on stderr), or the
 * command's status in `-- command` mode. */
int session__run(const struct config *cfg);

/* What one recording gave, for a caller that reports it itself (the HTTP
 * server, user/httpd.c). */
struct session_result {
	uint64_t samples;   /* samples in the profiles, every event */
	char err[512];      /* on failure: the one-line reason */
};

/* session__run, but with res non-NULL nothing goes to stdout and only
 * warnings to stderr: no summary, the error in res->err. gone, if not
 * NULL, is asked every ~100 ms while recording: true ends the recording
 * early (whoever wanted it went away). Callable again and again in one
 * process, one recording at a time. */
int session__record(const struct config *cfg, struct session_result *res,
		    bool (*gone)(void *arg), void *arg);

/* What session__record checks before it loads anything: BTF, then
 * targets__check (targets.h). 0, or -errno with a one-line reason. */
int session__check(const struct config *cfg, int **cpus, int *ncpus,
		   char *err, size_t errlen);

/* SIGINT, SIGTERM, SIGHUP and SIGQUIT (session__stop_signals) from now
 * on end the recording under way (or the next one) instead of the
 * process, and SIGPIPE is ignored; session__stop_signal says which
 * arrived, 0 if none. session__record installs this itself once the
 * events are attached; a caller that must hear signals earlier calls it
 * first (and blocks session__stop_signals in its other threads). */
#define SESSION_NSTOP_SIGNALS 4
extern const int session__stop_signals[SESSION_NSTOP_SIGNALS];
void session__catch_signals(void);
int session__stop_signal(void);

/* Map sizes derived from -F/-c, -d and the number of CPUs (exposed for
 * tests). */
void session__map_sizes(const struct config *cfg, int ncpus,
			uint32_t *stack_entries, uint32_t *count_entries);

#endif
