/* httpd.h — `pmubpf --http`: pprof and Prometheus metrics over HTTP from
 * one running recording, the way Parca, Grafana Alloy/Pyroscope and
 * Prometheus scrape them.
 *
 *   GET /debug/pprof/profile?seconds=N[&event=EVENT][&nosymbol=1]
 *   GET /debug/pprof/EVENT?seconds=N          (one path per -e event)
 *   GET /metrics                              (Prometheus text format)
 *
 * The recording (recorder.h) samples every -e event from the start; a
 * profile request gets the next N seconds of it, exactly (the windows
 * from its arrival to its deadline), as Go's net/http/pprof would, and
 * any number of requests may overlap (up to RECORDER_MAX_JOBS). The HTTP
 * side is libmicrohttpd: a thread per connection, bounded in number, in
 * request size and in idle time (httpd.c). Loopback by default; any
 * other address needs a bearer token (--http-token-file).
 *
 * The parts below are pure (no I/O but reading the token file) and
 * unit-tested in tests/unit/test_httpd.c.
 */
#ifndef PMUBPF_HTTPD_H
#define PMUBPF_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include "config/config.h"
#include "config/values.h"

#define HTTPD_DEFAULT_SECONDS 30   /* as Go's /debug/pprof/profile */
#define HTTPD_MAX_SECONDS 3600
#define HTTPD_TOKEN_MAX 4096

/* What a profile request asks for. */
struct httpd_profile {
	double seconds;
	int event;      /* index into cfg->events */
	bool nosymbol;
};

/* The event named name (as given to -e, or its file-name form: the
 * /debug/pprof/EVENT paths use either), or -1. */
int httpd__find_event(const struct config *cfg, const char *name);

/* A profile request's parameters (NULL: not given; path_event: the
 * EVENT of /debug/pprof/EVENT, else NULL) into out. 0, or -EINVAL with a
 * one-line reason (the status is 400). */
int httpd__profile_params(const struct config *cfg, const char *path_event,
			  const char *seconds, const char *event, const char *nosymbol,
			  const char *hz, struct httpd_profile *out, char *err, size_t errlen);

/* Does the Authorization header value carry "Bearer TOKEN" (the scheme in
 * any case) with token? Compared in constant time: how long it takes
 * says nothing about how much of a guess was right. */
bool httpd__bearer_ok(const char *authorization, const char *token);

/* Is a a loopback address (127.0.0.0/8, ::1)? */
bool httpd__is_loopback(const struct listen_addr *a);

/* Serve until SIGINT/SIGTERM (or the end of every -p/-t target).
 * Everything is checked before listening (the token, BTF, targets,
 * privileges, events: BPF is loaded and sampling started); a failure is
 * one line on stderr and a non-zero status. Returns the exit status. */
int httpd__serve(const struct config *cfg, const char *sysfs_root);

#endif
