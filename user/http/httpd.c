/* httpd.c — the server of `pmubpf --http` (see httpd.h).
 *
 * The main thread accepts; each connection gets a thread that reads one
 * bounded request (HTTPD_MAX_REQUEST bytes within HTTPD_READ_TIMEOUT_MS),
 * answers it and closes, so a slow client holds only its own thread. At
 * MAX_CONNS a new connection evicts the oldest one still reading its
 * head, so slow or silent clients cannot lock the others out. A
 * profile request's thread runs the recording itself (session__record)
 * while the others keep answering: 503 to a second profile request, the
 * index, errors. The stop signals are blocked in every thread but the main
 * thread's ppoll, whose handler sets the session's stop flag: a recording
 * under way ends, is still answered, and then the server stops.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "httpd.h"
#include "record/session.h"

#define MAX_CONNS 16      /* connections served at once */
/* Threads at once, evicted ones still closing included: past MAX_CONNS a
 * new connection evicts the oldest one still reading its request head
 * (whose thread ends at once), and only when none is left gets 503. */
#define MAX_THREADS (2 * MAX_CONNS)
#define SEND_TIMEOUT_S 10 /* a client that stops reading is dropped */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

struct server {
	const struct config *cfg;
	const char *sysfs_root;
	struct listen_addr addr;
	char tmpdir[PATH_MAX - 64]; /* each recording's private directory goes here */
	int stop_fd;                /* eventfd: readable once the server stops */
	atomic_bool recording;
	_Atomic int64_t recording_until; /* CLOCK_MONOTONIC ms, for Retry-After */
	pthread_mutex_t lock;
	pthread_cond_t idle;
	int conns;                  /* connection threads alive (lock) */
	int evicted;                /* of which evicted, still closing (lock) */
	struct conn *live[MAX_THREADS]; /* the connections alive (lock) */
};

struct conn {
	struct server *srv;
	int fd;
	char peer[64];
	int64_t since;              /* accepted, CLOCK_MONOTONIC ms */
	bool reading;               /* still reading its head (srv->lock) */
	bool evicted;               /* shut down for a newer one (srv->lock) */
};

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	/* Only the profile, or pprof__write's temp file if writing failed. */
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

/* The complete profile (it exists only after its rename), length first. */
static int send_profile(int fd, int in)
{
	char buf[65536];
	struct stat st;
	ssize_t n;
	int ret;

	if (fstat(in, &st))
		return -errno;
	n = snprintf(buf, sizeof(buf),
		     "HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\n"
		     "Content-Disposition: attachment; filename=\"profile.pb.gz\"\r\n"
		     "Content-Length: %lld\r\nX-Content-Type-Options: nosniff\r\n"
		     "Connection: close\r\n\r\n", (long long)st.st_size);
	ret = httpd__send_all(fd, buf, (size_t)n);
	while (!ret && (n = read(in, buf, sizeof(buf))) > 0)
		ret = httpd__send_all(fd, buf, (size_t)n);
	return !ret && n < 0 ? -errno : ret;
}

static void fail500(struct conn *c, const struct httpd_req *r, const char *msg)
{
	httpd__respond_line(c->fd, 500, NULL, msg, false);
	fprintf(stderr, "pmubpf: %s: %s -> 500: %s\n", c->peer, r->shown, msg);
}

/* The client closed its side (it gave up, like go tool pprof on Ctrl-C):
 * as Go's server does, take that as gone, so that an abandoned hour-long
 * request does not hold the only recording slot. */
static bool client_gone(void *arg)
{
	struct pollfd pf = { .fd = *(int *)arg, .events = POLLIN | POLLRDHUP };

	return poll(&pf, 1, 0) > 0 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* One recording, with this thread holding the server's only slot. */
static void record(struct conn *c, const struct httpd_req *r, struct config *cfg)
{
	struct server *s = c->srv;
	char dir[PATH_MAX], path[PATH_MAX + 16], *cmdline = NULL;
	struct session_result res;
	int in, ret;

	snprintf(dir, sizeof(dir), "%s/pmubpf-http.XXXXXX", s->tmpdir);
	if (!mkdtemp(dir)) {
		snprintf(res.err, sizeof(res.err), "cannot make a directory in '%.256s': %s",
			 s->tmpdir, strerror(errno));
		fail500(c, r, res.err);
		return;
	}
	snprintf(path, sizeof(path), "%s/profile.pb.gz", dir);
	/* The profile's comments say which request made it. */
	if (asprintf(&cmdline, "%s; %s from %s", s->cfg->cmdline, r->shown, c->peer) < 0)
		cmdline = NULL;
	cfg->output = path;
	cfg->cmdline = cmdline ? cmdline : s->cfg->cmdline;
	atomic_store(&s->recording_until, mono_ms() + (int64_t)(cfg->duration * 1000));
	if (session__record(cfg, &res, client_gone, &c->fd)) {
		fail500(c, r, res.err);
	} else if (client_gone(&c->fd)) {
		fprintf(stderr, "pmubpf: %s: %s -> client gone, %llu samples not sent\n", c->peer,
			r->shown, (unsigned long long)res.samples);
	} else if ((in = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		fail500(c, r, "the recording left no profile");
	} else {
		ret = send_profile(c->fd, in);
		close(in);
		fprintf(stderr, "pmubpf: %s: %s -> 200, %llu samples%s%s\n", c->peer, r->shown,
			(unsigned long long)res.samples, ret ? "; not delivered: " : "",
			ret ? strerror(-ret) : "");
	}
	remove_dir(dir);
	free(cmdline);
}

static void profile(struct conn *c, struct httpd_req *r, bool head)
{
	struct server *s = c->srv;
	struct httpd_params p;
	struct config cfg;
	char err[512], extra[64];

	if (httpd__parse_query(r->query, &p, err, sizeof(err)) ||
	    httpd__profile_config(s->cfg, &p, s->sysfs_root, &cfg, err, sizeof(err)) ||
	    event__probe(&cfg.events[0], err, sizeof(err))) {
		httpd__respond_line(c->fd, 400, NULL, err, head);
		fprintf(stderr, "pmubpf: %s: %s -> 400\n", c->peer, r->shown);
		return;
	}
	if (head ? atomic_load(&s->recording) : atomic_exchange(&s->recording, true)) {
		int64_t left = atomic_load(&s->recording_until) - mono_ms();
		long secs = left > 0 ? (long)(left / 1000) + 1 : 1;

		snprintf(extra, sizeof(extra), "Retry-After: %ld\r\n", secs);
		snprintf(err, sizeof(err), "a recording is under way (one at a time): retry in %ld s", secs);
		httpd__respond_line(c->fd, 503, extra, err, head);
		fprintf(stderr, "pmubpf: %s: %s -> 503\n", c->peer, r->shown);
		return;
	}
	if (head) {
		static const char hdr[] = "HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\n"
			"Content-Disposition: attachment; filename=\"profile.pb.gz\"\r\n"
			"X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n";

		httpd__send_all(c->fd, hdr, sizeof(hdr) - 1);
		fprintf(stderr, "pmubpf: %s: %s -> 200\n", c->peer, r->shown);
		return;
	}
	record(c, r, &cfg);
	atomic_store(&s->recording, false);
}

static void index_page(struct conn *c, bool head)
{
	const struct config *cfg = c->srv->cfg;
	const struct listen_addr *a = &c->srv->addr;
	char body[2048];

	snprintf(body, sizeof(body),
		 "pmubpf: pprof over HTTP\n\n"
		 "/debug/pprof/profile?seconds=N  record N seconds (default %d, 1..%d, fractions\n"
		 "                                allowed): a gzipped pprof profile\n"
		 "    &event=EVENT  sample EVENT instead of %s (one event; see pmubpf list)\n"
		 "    &hz=N         N samples per second per CPU (1..%d) instead of -F/-c\n"
		 "One recording at a time: 503 while one is under way.\n\n"
		 "Server: %.512s\n\n"
		 "go tool pprof 'http://%s:%u/debug/pprof/profile?seconds=10'\n",
		 HTTPD_DEFAULT_SECONDS, HTTPD_MAX_SECONDS, cfg->events[0].name, MAX_FREQ,
		 cfg->cmdline ? cfg->cmdline : "pmubpf", a->host, a->port);
	httpd__respond(c->fd, 200, NULL, body, head);
}

static void handle(struct conn *c, char *buf)
{
	struct httpd_req r;
	char err[256];
	bool head;

	if (httpd__parse_request(buf, &r, err, sizeof(err))) {
		httpd__respond_line(c->fd, 400, NULL, err, false);
		fprintf(stderr, "pmubpf: %s: %s -> 400\n", c->peer, r.shown);
		return;
	}
	head = !strcmp(r.method, "HEAD");
	if (!head && strcmp(r.method, "GET")) {
		httpd__respond_line(c->fd, 405, "Allow: GET, HEAD\r\n", "method not allowed: GET or HEAD", false);
		fprintf(stderr, "pmubpf: %s: %s -> 405\n", c->peer, r.shown);
	} else if (!strcmp(r.path, "/debug/pprof/profile")) {
		profile(c, &r, head);
	} else if (!strcmp(r.path, "/debug/pprof/") || !strcmp(r.path, "/debug/pprof")) {
		index_page(c, head);
		fprintf(stderr, "pmubpf: %s: %s -> 200\n", c->peer, r.shown);
	} else {
		httpd__respond_line(c->fd, 404, NULL, "not found: see /debug/pprof/", head);
		fprintf(stderr, "pmubpf: %s: %s -> 404\n", c->peer, r.shown);
	}
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct server *s = c->srv;
	char buf[HTTPD_MAX_REQUEST + 1];
	ssize_t n = httpd__read_request(c->fd, s->stop_fd, buf);
	bool evicted;

	pthread_mutex_lock(&s->lock);
	c->reading = false; /* from now on it is served, never evicted */
	evicted = c->evicted;
	pthread_mutex_unlock(&s->lock);
	if (evicted) {
		fprintf(stderr, "pmubpf: %s: (incomplete request) -> dropped for a newer connection (%d at once)\n",
			c->peer, MAX_CONNS);
	} else if (n == -ETIMEDOUT || n == -E2BIG) {
		int code = n == -E2BIG ? 431 : 408;

		httpd__respond_line(c->fd, code, NULL, code == 408 ? "no complete request in time"
			     : "request headers too large", false);
		fprintf(stderr, "pmubpf: %s: (incomplete request) -> %d\n", c->peer, code);
	} else if (n > 0) {
		handle(c, buf);
	}
	if (evicted)
		close(c->fd); /* shut down already: nothing to linger for */
	else
		httpd__linger_close(c->fd);
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < MAX_THREADS; i++)
		if (s->live[i] == c)
			s->live[i] = NULL;
	s->evicted -= evicted;
	if (--s->conns == 0)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
	free(c);
	return NULL;
}

/* At the connection limit: shut down the oldest connection still reading
 * its request head (lock held). A client that sends slowly, or nothing,
 * then holds a slot only until MAX_CONNS newer connections come, instead
 * of locking everyone out until its read timeout. False if none reads. */
static bool evict_oldest_reader(struct server *s)
{
	struct conn *old = NULL;

	for (int i = 0; i < MAX_THREADS; i++) {
		struct conn *c = s->live[i];

		if (c && c->reading && !c->evicted && (!old || c->since < old->since))
			old = c;
	}
	if (!old)
		return false;
	old->evicted = true;
	s->evicted++;
	shutdown(old->fd, SHUT_RDWR); /* its poll and recv return at once */
	return true;
}

static void start_conn(struct server *s, int fd, const struct sockaddr_storage *peer)
{
	struct timeval tv = { .tv_sec = SEND_TIMEOUT_S };
	struct conn *c = calloc(1, sizeof(*c));
	char ip[INET6_ADDRSTRLEN] = "?";
	const void *src = peer->ss_family == AF_INET6
		? (const void *)&((const struct sockaddr_in6 *)peer)->sin6_addr
		: (const void *)&((const struct sockaddr_in *)peer)->sin_addr;
	uint16_t port = ntohs(((const struct sockaddr_in *)peer)->sin_port); /* same offset in both */
	pthread_attr_t attr;
	pthread_t th;
	bool ok = false;

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	pthread_mutex_lock(&s->lock);
	if (c && s->conns - s->evicted >= MAX_CONNS && s->conns < MAX_THREADS)
		evict_oldest_reader(s);
	if (c && s->conns - s->evicted < MAX_CONNS && s->conns < MAX_THREADS) {
		inet_ntop(peer->ss_family, src, ip, sizeof(ip));
		snprintf(c->peer, sizeof(c->peer), peer->ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u",
			 ip, port);
		c->srv = s;
		c->fd = fd;
		c->since = mono_ms();
		c->reading = true;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		/* The thread inherits this thread's mask: signals blocked. */
		ok = !pthread_create(&th, &attr, conn_main, c);
		pthread_attr_destroy(&attr);
		s->conns += ok;
		for (int i = 0; ok && i < MAX_THREADS; i++)
			if (!s->live[i]) {
				s->live[i] = c;
				break;
			}
	}
	pthread_mutex_unlock(&s->lock);
	if (!ok) {
		httpd__respond_line(fd, 503, "Retry-After: 1\r\n", "too many connections", false);
		close(fd);
		free(c);
	}
}

/* pmubpf needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN): said now, not
 * at the first request. If capget fails, the first recording will say. */
static int check_privileges(char *err, size_t errlen)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };
	bool admin, bpf, perfmon;

	if (syscall(SYS_capget, &h, d))
		return 0;
	admin = d[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32));
	bpf = d[CAP_BPF / 32].effective & (1u << (CAP_BPF % 32));
	perfmon = d[CAP_PERFMON / 32].effective & (1u << (CAP_PERFMON % 32));
	if ((admin || bpf) && (admin || perfmon))
		return 0;
	snprintf(err, errlen, "permission denied: run as root (or grant CAP_BPF and CAP_PERFMON)");
	return -EPERM;
}

/* Everything a request's recording will check, checked once now, so that
 * bad input fails at start and not at the first request. */
static int start_checks(struct server *s, char *err, size_t errlen)
{
	struct config probe = *s->cfg;
	const char *t = getenv("TMPDIR");
	char path[PATH_MAX];

	snprintf(s->tmpdir, sizeof(s->tmpdir), "%s", t && *t ? t : "/tmp");
	snprintf(path, sizeof(path), "%s/profile.pb.gz", s->tmpdir);
	probe.output = path;
	if (session__check(&probe, NULL, NULL, err, errlen) || check_privileges(err, errlen) ||
	    event__probe(&s->cfg->events[0], err, errlen))
		return -1;
	if (values__parse_listen(s->cfg->http, &s->addr)) { /* cli.c checked it */
		snprintf(err, errlen, "bad --http '%s'", s->cfg->http);
		return -1;
	}
	return 0;
}

static int listen_on(struct server *s, char *err, size_t errlen)
{
	int one = 1, fd = socket(s->addr.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_storage got;
	socklen_t len = sizeof(got);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&s->addr.ss, s->addr.len) || listen(fd, 16) ||
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

int httpd__serve(const struct config *cfg, const char *sysfs_root)
{
	struct server s = { .cfg = cfg, .sysfs_root = sysfs_root, .stop_fd = -1,
			    .lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER };
	sigset_t block, orig;
	uint64_t one = 1;
	char err[512];
	int lfd, ret = 0;

	if (start_checks(&s, err, sizeof(err)) || (lfd = listen_on(&s, err, sizeof(err))) < 0) {
		fprintf(stderr, "pmubpf: %s\n", err);
		return 1;
	}
	s.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (s.stop_fd < 0) {
		fprintf(stderr, "pmubpf: eventfd: %s\n", strerror(errno));
		close(lfd);
		return 1;
	}
	session__catch_signals();
	sigemptyset(&block);
	for (int i = 0; i < SESSION_NSTOP_SIGNALS; i++)
		sigaddset(&block, session__stop_signals[i]);
	pthread_sigmask(SIG_BLOCK, &block, &orig);
	fprintf(stderr, "pmubpf: serving pprof on http://%s:%u/debug/pprof/\n", s.addr.host, s.addr.port);

	while (!session__stop_signal()) {
		struct pollfd pf = { .fd = lfd, .events = POLLIN };
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int fd;

		/* Signals arrive only here, atomically with the wait. */
		if (ppoll(&pf, 1, NULL, &orig) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "pmubpf: waiting for connections: %s\n", strerror(errno));
			ret = 1;
			break;
		}
		fd = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
		if (fd >= 0)
			start_conn(&s, fd, &peer);
		else if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			poll(NULL, 0, 100); /* out of fds or memory: do not spin */
	}
	/* Refuse new connections, wake the readers, let a recording finish
	 * and deliver its profile. */
	close(lfd);
	if (write(s.stop_fd, &one, sizeof(one)) < 0)
		fprintf(stderr, "pmubpf: eventfd: %s\n", strerror(errno));
	pthread_mutex_lock(&s.lock);
	while (s.conns)
		pthread_cond_wait(&s.idle, &s.lock);
	pthread_mutex_unlock(&s.lock);
	close(s.stop_fd);
	return ret;
}
