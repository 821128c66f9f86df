/* httpd.h — serve profiles over HTTP the way Go's net/http/pprof does.
 *
 * `pmubpf --http 127.0.0.1:6060 -a` listens, and each
 *   GET /debug/pprof/profile?seconds=N[&event=EVENT][&hz=N]
 * runs one recording (session__record) with a copy of the server's config
 * and answers with the gzipped pprof, so that
 *   go tool pprof http://HOST:6060/debug/pprof/profile?seconds=5
 * works against the machine. One recording at a time (503 otherwise),
 * one request per connection (HTTP/1.0 style, Connection: close), each
 * connection in its own thread with a bounded request (8 KiB of headers
 * within 5 s). No authentication: the default address is loopback.
 *
 * The parsing below is pure (no I/O but event__parse's sysfs reads) and
 * unit-tested in tests/unit/test_httpd.c; the server is in httpd.c, the
 * parsing and the wire in httpd_proto.c.
 */
#ifndef PMUBPF_HTTPD_H
#define PMUBPF_HTTPD_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include "config/config.h"
#include "config/values.h"

#define HTTPD_MAX_REQUEST 8192     /* request line + headers, bytes */
#define HTTPD_READ_TIMEOUT_MS 5000 /* for the whole request */
#define HTTPD_DEFAULT_SECONDS 30   /* as Go's /debug/pprof/profile */
#define HTTPD_MAX_SECONDS 3600

/* Where the request's header block ends (just past its blank line, CRLF
 * or bare LF), 0 while it has not arrived. */
size_t httpd__header_end(const char *buf, size_t len);

struct httpd_req {
	char *method;    /* "GET" */
	char *path;      /* "/debug/pprof/profile", not decoded */
	char *query;     /* "seconds=5", NULL if the target has no '?' */
	char shown[256]; /* "GET /debug/pprof/profile?seconds=5" for logs:
	                  * printable ASCII only, cut with "..." */
};

/* Split the request line of buf (a complete header block, NUL-terminated)
 * in place: METHOD SP /PATH[?QUERY] SP HTTP/1.x. Headers are not needed
 * and not read. 0, or -EINVAL with a one-line reason in err. */
int httpd__parse_request(char *buf, struct httpd_req *r, char *err, size_t errlen);

/* Percent-decode s in place ('+' is a space, as in forms). -EINVAL on a
 * bad escape or a decoded control character (answers stay one line). */
int httpd__percent_decode(char *s);

/* The profile endpoint's parameters, decoded (NULL: not given). Others
 * are ignored, as Go's handler does. */
struct httpd_params {
	const char *seconds, *event, *hz;
};

/* Parse a query string in place. 0, or -EINVAL with a one-line reason
 * (a bad escape, a parameter given twice). */
int httpd__parse_query(char *query, struct httpd_params *p, char *err, size_t errlen);

/* The recording a profile request asks for: *out is a shallow copy of
 * base (its lists borrowed) with the request's duration (default 30 s),
 * event and rate, one event, no --top. The message on -EINVAL is the one
 * the command line gives for the same mistake. out->output and
 * out->cmdline are left for the caller. */
int httpd__profile_config(const struct config *base, const struct httpd_params *p,
			  const char *sysfs_root, struct config *out,
			  char *err, size_t errlen);

/* ---- the wire (httpd_proto.c) ---- */

/* Read one request's header block from fd into buf (HTTPD_MAX_REQUEST + 1
 * bytes) within HTTPD_READ_TIMEOUT_MS, NUL-terminated. Returns its
 * length, or -ETIMEDOUT, -E2BIG (too long), -ECANCELED (stop_fd became
 * readable: the server stops), -ECONNRESET (the client left first). */
ssize_t httpd__read_request(int fd, int stop_fd, char *buf);
/* Send all of buf: short writes and EINTR retried. 0 or -errno (EPIPE
 * for a client gone; EAGAIN once the socket's SO_SNDTIMEO expires). */
int httpd__send_all(int fd, const void *buf, size_t len);
/* A plain-text answer (Connection: close); extra: more header lines,
 * each ending in CRLF; the body is left out for HEAD. respond_line adds
 * the newline to a one-line message. */
void httpd__respond(int fd, int code, const char *extra, const char *body, bool head);
void httpd__respond_line(int fd, int code, const char *extra, const char *msg, bool head);
/* Half-close, drain what the client still sends (bounded), close. */
void httpd__linger_close(int fd);

/* Serve until SIGINT/SIGTERM. Everything is checked before listening
 * (BTF, targets, privileges, the event); a failure is one line on
 * stderr and exit status 1. Returns the process's exit status. */
int httpd__serve(const struct config *cfg, const char *sysfs_root);

#endif
