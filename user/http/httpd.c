/* httpd.c — the HTTP side of `pmubpf --http` (see httpd.h): libmicrohttpd
 * answers, the recorder (recorder.h) records.
 *
 * libmicrohttpd runs a thread per connection, at most HTTPD_MAX_CONNS of
 * them (HTTPD_MAX_PER_IP from one address), each closed after
 * HTTPD_IDLE_S seconds without traffic and bounded to HTTPD_CONN_MEMORY
 * bytes of request: a client that sends slowly or nothing holds its own
 * thread, not anyone else's. A profile request's thread submits a job
 * and blocks until the recorder hands back the gzipped profile, checking
 * meanwhile whether its client left. The main thread is the recorder's.
 * SIGINT/SIGTERM reach only the main thread (blocked in the others): the
 * recorder answers the jobs under way with what they have, then the
 * server stops accepting, lets those answers go out, and exits 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/clock.h"
#include "lib/token.h"
#include "httpd.h"
#include "metrics.h"
#include "recorder.h"

#define HTTPD_MAX_CONNS 128        /* connection threads at once */
#define HTTPD_MAX_PER_IP 64        /* of which from one address */
#define HTTPD_IDLE_S 10            /* a connection silent this long is closed */
#define HTTPD_CONN_MEMORY 16384    /* request line + headers, per connection */
#define HTTPD_THREAD_STACK (256 * 1024)
#define HTTPD_DRAIN_S 10           /* at exit: answers under way may finish */
#define HTTPD_DENIED_LOG_S 10      /* 401s: one line at most this often */

struct server {
	const struct config *cfg;
	struct listen_addr addr;
	struct recorder *rec;
	char token[HTTPD_TOKEN_MAX + 2];
	bool need_token;
	atomic_int in_flight;      /* requests between their first call and completion */
	pthread_mutex_t denied_mu; /* the 401s' lines (log_denied) */
	int64_t denied_logged_ns;  /* the last one said */
	uint64_t denied_quiet;     /* 401s since then, not said */
};

/* Go's net/http/pprof profiles pmubpf does not have; both scrapers ask
 * for some of them by default. */
static const char *const go_profiles[] = {
	"allocs", "block", "goroutine", "mutex", "heap", "threadcreate", "cmdline", "symbol", "trace",
};

/* ---- answers ---- */

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *type,
			      void *body, size_t len, bool must_free, const char *h1, const char *v1)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body,
		must_free ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r) {
		if (must_free)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (h1)
		MHD_add_response_header(r, h1, v1);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* An error: one line of text/plain. */
static enum MHD_Result answer_line(struct MHD_Connection *c, unsigned status, const char *msg,
				   const char *h1, const char *v1)
{
	char body[640];
	int n = snprintf(body, sizeof(body), "%s\n", msg);

	return answer(c, status, "text/plain; charset=utf-8", body,
		      n < (int)sizeof(body) ? (size_t)n : sizeof(body) - 1, false, h1, v1);
}

/* ---- the log ---- */

struct req_log {
	char peer[64];
	char shown[320]; /* "GET /debug/pprof/profile?seconds=5", printable, bounded */
	size_t n;
	int nargs;
};

static void show_append(struct req_log *l, const char *s)
{
	size_t max = sizeof(l->shown) - 4;

	for (; s && *s && l->n < max; s++)
		l->shown[l->n++] = *s >= 0x20 && *s < 0x7f ? *s : '?';
	if (s && *s && l->n >= max)
		strcpy(l->shown + max, "...");
	else
		l->shown[l->n] = '\0';
}

static enum MHD_Result show_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct req_log *l = cls;

	(void)kind;
	show_append(l, l->nargs++ ? "&" : "?");
	show_append(l, key);
	if (value) {
		show_append(l, "=");
		show_append(l, value);
	}
	return MHD_YES;
}

static void describe(struct MHD_Connection *c, const char *method, const char *url, struct req_log *l)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char ip[INET6_ADDRSTRLEN] = "?";

	memset(l, 0, sizeof(*l));
	if (ci && ci->client_addr) {
		const struct sockaddr *sa = ci->client_addr;
		bool v6 = sa->sa_family == AF_INET6;
		const void *src = v6 ? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
				     : (const void *)&((const struct sockaddr_in *)sa)->sin_addr;

		inet_ntop(sa->sa_family, src, ip, sizeof(ip));
		snprintf(l->peer, sizeof(l->peer), v6 ? "[%s]:%u" : "%s:%u", ip,
			 ntohs(((const struct sockaddr_in *)sa)->sin_port)); /* same offset in both */
	} else {
		snprintf(l->peer, sizeof(l->peer), "?");
	}
	show_append(l, method);
	show_append(l, " ");
	show_append(l, url);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, show_arg, l);
}

static void log_status(const struct req_log *l, unsigned status, const char *more)
{
	fprintf(stderr, "pmubpf: %s: %s -> %u%s%s\n", l->peer, l->shown, status, more ? ", " : "",
		more ? more : "");
}

/* A 401, logged at most once per HTTPD_DENIED_LOG_S: a client without
 * the token cannot flood stderr. The line says how many came meanwhile
 * unsaid; those after the last line are said at exit (denied_said). */
static void log_denied(struct server *s, const struct req_log *l)
{
	int64_t now = mono_ns();
	uint64_t quiet = 0;
	bool say;

	pthread_mutex_lock(&s->denied_mu);
	say = !s->denied_logged_ns || now - s->denied_logged_ns >= HTTPD_DENIED_LOG_S * 1000000000LL;
	if (say) {
		quiet = s->denied_quiet;
		s->denied_quiet = 0;
		s->denied_logged_ns = now;
	} else {
		s->denied_quiet++;
	}
	pthread_mutex_unlock(&s->denied_mu);
	if (!say)
		return;
	char more[96];

	snprintf(more, sizeof(more), "%llu more 401s unlogged before it (one line per %d s)",
		 (unsigned long long)quiet, HTTPD_DENIED_LOG_S);
	log_status(l, 401, quiet ? more : NULL);
}

static void denied_said(struct server *s)
{
	if (s->denied_quiet)
		fprintf(stderr, "pmubpf: %llu more 401s unlogged since the last line (one line per %d s)\n",
			(unsigned long long)s->denied_quiet, HTTPD_DENIED_LOG_S);
}

/* ---- pages ---- */

static enum MHD_Result index_page(struct server *s, struct MHD_Connection *c)
{
	char body[4096];
	size_t n = 0;

	n += (size_t)snprintf(body + n, sizeof(body) - n,
		"pmubpf: pprof and metrics over HTTP, from one recording\n\n"
		"/debug/pprof/profile?seconds=N  the next N seconds (default %d, 1..%d, fractions\n"
		"                                allowed): a gzipped pprof profile\n"
		"    &event=EVENT  one of the recorded events (default %s)\n"
		"    &nosymbol=1   addresses and build-ids only (symbolize later)\n",
		HTTPD_DEFAULT_SECONDS, HTTPD_MAX_SECONDS, s->cfg->events[0].name);
	for (int e = 0; e < s->cfg->nevents && n < sizeof(body); e++)
		n += (size_t)snprintf(body + n, sizeof(body) - n, "/debug/pprof/%s?seconds=N\n",
				      s->cfg->events[e].file_tag);
	if (n < sizeof(body))
		n += (size_t)snprintf(body + n, sizeof(body) - n,
			"/metrics  Prometheus metrics: samples, losses, caches, pmubpf's own cost\n\n"
			"Server: %.512s\n\n"
			"go tool pprof 'http://%s:%u/debug/pprof/profile?seconds=10'\n",
			s->cfg->cmdline ? s->cfg->cmdline : "pmubpf", s->addr.host, s->addr.port);
	return answer(c, 200, "text/plain; charset=utf-8", body, strnlen(body, sizeof(body)), false, NULL, NULL);
}

static enum MHD_Result metrics_page(struct server *s, struct MHD_Connection *c, const struct req_log *l)
{
	struct metrics m;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		return answer_line(c, 500, "out of memory", NULL, NULL);
	recorder__metrics(s->rec, &m);
	metrics__self(&m);
	ret = metrics__format(&m, f);
	if (fclose(f) || ret) {
		free(buf);
		log_status(l, 500, NULL);
		return answer_line(c, 500, "out of memory", NULL, NULL);
	}
	return answer(c, 200, "text/plain; version=0.0.4; charset=utf-8", buf, len, true, NULL, NULL);
}

/* The client closed its side (it gave up, like a scraper at its
 * timeout): its job is dropped rather than built for nobody. */
static bool client_gone(void *arg)
{
	struct pollfd pf = { .fd = *(int *)arg, .events = POLLRDHUP };

	return pf.fd >= 0 && poll(&pf, 1, 0) > 0 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static enum MHD_Result profile(struct server *s, struct MHD_Connection *c, const char *path_event,
			       bool head, const struct req_log *l)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct recorder_request rq = { 0 };
	struct recorder_result res;
	struct httpd_profile p;
	struct recorder_job *j;
	char err[640], more[64], *comment = NULL;
	int fd = ci ? ci->connect_fd : -1;

	if (httpd__profile_params(s->cfg, path_event,
				  MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds"),
				  MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "event"),
				  MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "nosymbol"),
				  MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "hz"),
				  &p, err, sizeof(err))) {
		log_status(l, 400, NULL);
		return answer_line(c, 400, err, NULL, NULL);
	}
	if (head) { /* what a GET would get, without recording */
		log_status(l, 200, NULL);
		return answer(c, 200, "application/octet-stream", "", 0, false,
			      MHD_HTTP_HEADER_CONTENT_DISPOSITION, "attachment; filename=\"profile.pb.gz\"");
	}
	/* The profile's comments say which request made it. */
	if (asprintf(&comment, "%s; %s from %s", s->cfg->cmdline ? s->cfg->cmdline : "pmubpf",
		     l->shown, l->peer) < 0)
		comment = NULL;
	rq = (struct recorder_request){ .seconds = p.seconds, .event = p.event,
					.nosymbol = p.nosymbol, .comment = comment };
	j = recorder__submit(s->rec, &rq, &res);
	free(comment);
	if (!j) {
		log_status(l, (unsigned)res.status, res.err);
		return answer_line(c, (unsigned)res.status, res.err, MHD_HTTP_HEADER_RETRY_AFTER, "5");
	}
	recorder__wait(s->rec, j, client_gone, &fd, &res);
	if (res.gone) {
		fprintf(stderr, "pmubpf: %s: %s -> client gone\n", l->peer, l->shown);
		return MHD_NO;
	}
	if (res.status != 200) {
		log_status(l, (unsigned)res.status, res.err);
		return answer_line(c, (unsigned)res.status, res.err, NULL, NULL);
	}
	snprintf(more, sizeof(more), "%llu samples", (unsigned long long)res.samples);
	log_status(l, 200, more);
	return answer(c, 200, "application/octet-stream", res.body, res.len, true,
		      MHD_HTTP_HEADER_CONTENT_DISPOSITION, "attachment; filename=\"profile.pb.gz\"");
}

/* ---- routing ---- */

static enum MHD_Result route(struct server *s, struct MHD_Connection *c, const char *url,
			     bool head, const struct req_log *l)
{
	const char *prefix = "/debug/pprof/";
	size_t plen = strlen(prefix);

	if (!strcmp(url, "/") || !strcmp(url, "/debug/pprof") || !strcmp(url, prefix)) {
		log_status(l, 200, NULL);
		return index_page(s, c);
	}
	if (!strcmp(url, "/metrics"))
		return metrics_page(s, c, l);
	if (!strcmp(url, "/debug/pprof/profile"))
		return profile(s, c, NULL, head, l);
	if (!strncmp(url, prefix, plen)) {
		const char *name = url + plen;

		if (httpd__find_event(s->cfg, name) >= 0)
			return profile(s, c, name, head, l);
		for (size_t i = 0; i < sizeof(go_profiles) / sizeof(go_profiles[0]); i++)
			if (!strcmp(name, go_profiles[i])) {
				log_status(l, 404, NULL);
				return answer_line(c, 404, "not available: pmubpf serves CPU and PMU profiles (/debug/pprof/profile), not Go runtime ones", NULL, NULL);
			}
	}
	log_status(l, 404, NULL);
	return answer_line(c, 404, "not found: see /debug/pprof/", NULL, NULL);
}

static int in_flight_marker;

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **ctx)
{
	struct server *s = cls;
	struct req_log l;
	bool head = !strcmp(method, MHD_HTTP_METHOD_HEAD);

	(void)version;
	(void)upload;
	if (*ctx) { /* a body arriving (a POST's): refused at its first call */
		*upload_size = 0;
		return MHD_YES;
	}
	*ctx = &in_flight_marker;
	atomic_fetch_add(&s->in_flight, 1);
	describe(c, method, url, &l);
	if (s->need_token &&
	    !httpd__bearer_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
			      s->token)) {
		log_denied(s, &l);
		return answer_line(c, 401, "unauthorized: send Authorization: Bearer TOKEN (the server's --http-token-file)",
				   MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"pmubpf\"");
	}
	if (!head && strcmp(method, MHD_HTTP_METHOD_GET)) {
		log_status(&l, 405, NULL);
		return answer_line(c, 405, "method not allowed: GET or HEAD", MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	}
	return route(s, c, url, head, &l);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **ctx,
			 enum MHD_RequestTerminationCode why)
{
	struct server *s = cls;

	(void)c;
	(void)why;
	if (*ctx == &in_flight_marker)
		atomic_fetch_sub(&s->in_flight, 1);
	*ctx = NULL;
}

/* ---- start and stop ---- */

static int listen_on(struct server *s, char *err, size_t errlen)
{
	int one = 1, fd = socket(s->addr.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_storage got;
	socklen_t len = sizeof(got);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&s->addr.ss, s->addr.len) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&got, &len)) {
		snprintf(err, errlen, "cannot listen on %s:%u: %s", s->addr.host, s->addr.port,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	s->addr.port = ntohs(((struct sockaddr_in *)&got)->sin_port); /* port 0: the one given */
	return fd;
}

/* Before anything is loaded: the address, and a token where one is
 * needed. */
static int check_access(struct server *s, char *err, size_t errlen)
{
	const struct config *cfg = s->cfg;

	if (values__parse_listen(cfg->http, &s->addr)) { /* cli.c checked it */
		snprintf(err, errlen, "bad --http '%s'", cfg->http);
		return -1;
	}
	if (cfg->http_token_file) {
		if (token__read(cfg->http_token_file, "--http-token-file", s->token, sizeof(s->token), err, errlen))
			return -1;
		s->need_token = true;
	} else if (!httpd__is_loopback(&s->addr)) {
		snprintf(err, errlen, "--http %s listens beyond loopback: whoever connects could profile this machine; give --http-token-file FILE (clients send Authorization: Bearer TOKEN)",
			 cfg->http);
		return -1;
	}
	return 0;
}

int httpd__serve(const struct config *cfg, const char *sysfs_root)
{
	struct server s = { .cfg = cfg, .denied_mu = PTHREAD_MUTEX_INITIALIZER };
	struct MHD_Daemon *d = NULL;
	sigset_t block, orig;
	char err[640];
	int lfd = -1, ret = 1, status = 1;

	(void)sysfs_root;
	if (check_access(&s, err, sizeof(err)))
		goto fail;
	s.rec = recorder__new(cfg);
	if (!s.rec) {
		snprintf(err, sizeof(err), "out of memory");
		goto fail;
	}
	if (recorder__start(s.rec, err, sizeof(err), &status)) {
		ret = status;
		goto fail;
	}
	if ((lfd = listen_on(&s, err, sizeof(err))) < 0)
		goto fail;
	/* libmicrohttpd's threads inherit this mask: signals go to the
	 * recorder's thread only, whose step returns on them. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &orig);
	d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_POLL | MHD_USE_ITC | (s.addr.ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
			     0, NULL, NULL, on_request, &s,
			     MHD_OPTION_LISTEN_SOCKET, lfd,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTPD_MAX_CONNS,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)HTTPD_MAX_PER_IP,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTPD_IDLE_S,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTPD_CONN_MEMORY,
			     MHD_OPTION_THREAD_STACK_SIZE, (size_t)HTTPD_THREAD_STACK,
			     MHD_OPTION_NOTIFY_COMPLETED, on_completed, &s,
			     MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &orig, NULL);
	if (!d) {
		snprintf(err, sizeof(err), "cannot start the HTTP server on %s:%u", s.addr.host, s.addr.port);
		goto fail;
	}
	fprintf(stderr, "pmubpf: serving pprof on http://%s:%u/debug/pprof/\n", s.addr.host, s.addr.port);

	ret = recorder__run(s.rec);

	/* No new connections; the answers under way go out (bounded). */
	MHD_socket q = MHD_quiesce_daemon(d);
	for (int64_t until = mono_ns() + HTTPD_DRAIN_S * 1000000000LL;
	     atomic_load(&s.in_flight) > 0 && mono_ns() < until;)
		usleep(20000);
	MHD_stop_daemon(d); /* closes lfd unless quiesced */
	if (q != MHD_INVALID_SOCKET)
		close(q);
	denied_said(&s);
	recorder__free(s.rec);
	return ret;
fail:
	fprintf(stderr, "pmubpf: %s\n", err);
	if (lfd >= 0)
		close(lfd);
	recorder__free(s.rec);
	return ret;
}
