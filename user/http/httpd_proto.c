/* httpd_proto.c — the HTTP server's protocol: addresses, the request
 * line, query strings, the recording a request asks for, and the bounded
 * reads and complete writes on a connection (see httpd.h).
 *
 * Everything here reads client bytes: lengths come from the bounded
 * request buffer, parsing is in place, and nothing is allocated.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "lib/clock.h"
#include "httpd.h"

#define LINGER_MS 1000 /* how long to read what the client still sends */

int httpd__parse_addr(const char *s, struct httpd_addr *a)
{
	/* Two bytes short of a->host: an IPv6 host is announced as "[%s]".
	 * The longest literal (INET6_ADDRSTRLEN 46 with its NUL) still fits. */
	char host[sizeof(((struct httpd_addr *)0)->host) - 2];
	const char *colon, *h = s;
	size_t hl;
	char *end;
	unsigned long port;

	memset(a, 0, sizeof(*a));
	if (*s == '[') { /* [IPv6]:PORT */
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':')
			return -EINVAL;
		h = s + 1;
		hl = rb - h;
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hl = colon - s;
	}
	if (hl >= sizeof(host) || colon[1] < '0' || colon[1] > '9')
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || port > 65535)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (!hl || !strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");

	struct sockaddr_in *in4 = (struct sockaddr_in *)&a->ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;

	if (*s != '[' && inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		a->len = sizeof(*in4);
		snprintf(a->host, sizeof(a->host), "%s", host);
	} else if (*s == '[' && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		a->len = sizeof(*in6);
		snprintf(a->host, sizeof(a->host), "[%s]", host);
	} else {
		return -EINVAL;
	}
	a->port = (uint16_t)port;
	return 0;
}

size_t httpd__header_end(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/* RFC 9110 token characters: what a method may be made of. */
static bool tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* For logs: "A B" (or A), printable ASCII only, cut with "..." to fit. */
static void show(struct httpd_req *r, const char *a, const char *b)
{
	const char *part[2] = { a, b };
	size_t n = 0, max = sizeof(r->shown) - 4;

	for (int i = 0; i < 2 && part[i]; i++) {
		const char *s = part[i];

		if (i && n < max)
			r->shown[n++] = ' ';
		for (; *s && n < max; s++)
			r->shown[n++] = *s >= 0x20 && *s < 0x7f ? *s : '?';
		if (*s) {
			strcpy(r->shown + n, "...");
			return;
		}
	}
	r->shown[n] = '\0';
}

int httpd__parse_request(char *buf, struct httpd_req *r, char *err, size_t errlen)
{
	char *p = buf, *target, *version, *eol;

	memset(r, 0, sizeof(*r));
	eol = strchr(buf, '\n');
	if (!eol)
		return cli__fail(err, errlen, "no request line");
	if (eol > buf && eol[-1] == '\r')
		eol--;
	*eol = '\0';

	show(r, buf, NULL); /* the whole line until the target is known */

	r->method = p;
	while (tchar(*p))
		p++;
	if (p == r->method || p - r->method > 32 || *p != ' ')
		return cli__fail(err, errlen, "malformed request line");
	*p++ = '\0';
	target = p;
	while (*p > ' ' && *p < 0x7f)
		p++;
	if (*p != ' ' || *target != '/')
		return cli__fail(err, errlen, "malformed request target (want /PATH[?QUERY])");
	*p++ = '\0';
	show(r, r->method, target);
	version = p;
	if (strncmp(version, "HTTP/1.", 7) || version[7] < '0' || version[7] > '9' || version[8])
		return cli__fail(err, errlen, "unsupported protocol '%.16s' (want HTTP/1.x)", version);

	r->path = target;
	r->query = strchr(target, '?');
	if (r->query)
		*r->query++ = '\0';
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int httpd__percent_decode(char *s)
{
	char *out = s;

	for (; *s; s++) {
		int c = (unsigned char)*s;

		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			int hi = hexval(s[1]), lo = hi < 0 ? -1 : hexval(s[2]);

			if (lo < 0)
				return -EINVAL;
			c = hi << 4 | lo;
			s += 2;
		}
		if (c < 0x20 || c == 0x7f)
			return -EINVAL;
		*out++ = (char)c;
	}
	*out = '\0';
	return 0;
}

int httpd__parse_query(char *query, struct httpd_params *p, char *err, size_t errlen)
{
	static const char *const names[] = { "seconds", "event", "hz" };
	const char **slots[] = { &p->seconds, &p->event, &p->hz };
	char *save = NULL, *kv;

	memset(p, 0, sizeof(*p));
	for (kv = query ? strtok_r(query, "&", &save) : NULL; kv; kv = strtok_r(NULL, "&", &save)) {
		char *val = strchr(kv, '=');

		if (val)
			*val++ = '\0';
		if (httpd__percent_decode(kv) || (val && httpd__percent_decode(val)))
			return cli__fail(err, errlen, "bad percent-encoding in the query");
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (strcmp(kv, names[i]))
				continue;
			if (*slots[i])
				return cli__fail(err, errlen, "parameter '%s' given twice", names[i]);
			*slots[i] = val ? val : "";
		}
	}
	return 0;
}

int httpd__profile_config(const struct config *base, const struct httpd_params *p,
			  const char *sysfs_root, struct config *out,
			  char *err, size_t errlen)
{
	*out = *base;
	out->duration = HTTPD_DEFAULT_SECONDS;
	out->top = 0;
	out->http = NULL;
	if (p->seconds && cli__parse_seconds(p->seconds, 1, HTTPD_MAX_SECONDS, &out->duration))
		return cli__fail(err, errlen, "bad duration 'seconds=%.64s': want seconds from 1 to %d, e.g. 30 or 2.5",
			    p->seconds, HTTPD_MAX_SECONDS);
	if (p->hz) {
		if (cli__parse_freq("hz=", p->hz, &out->freq, err, errlen))
			return -EINVAL;
		out->period = 0; /* overrides -c as well as -F */
	}
	if (p->event) {
		if (event__parse(p->event, sysfs_root, &out->events[0], err, errlen))
			return -EINVAL;
		out->nevents = 1;
	}
	return 0;
}

/* ---- the wire: bounded reads, complete writes ----------------------- */

/* MSG_NOSIGNAL: a client gone is EPIPE, not SIGPIPE. */
int httpd__send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static const char *reason(int code)
{
	switch (code) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	default: return "Internal Server Error";
	}
}

void httpd__respond(int fd, int code, const char *extra, const char *body, bool head)
{
	char hdr[512];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.0 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
			 "Content-Length: %zu\r\nX-Content-Type-Options: nosniff\r\n"
			 "Connection: close\r\n%s\r\n",
			 code, reason(code), strlen(body), extra ? extra : "");

	if (!httpd__send_all(fd, hdr, (size_t)n) && !head)
		httpd__send_all(fd, body, strlen(body));
}

void httpd__respond_line(int fd, int code, const char *extra, const char *msg, bool head)
{
	char body[600];

	snprintf(body, sizeof(body), "%s\n", msg);
	httpd__respond(fd, code, extra, body, head);
}

ssize_t httpd__read_request(int fd, int stop_fd, char *buf)
{
	int64_t deadline = mono_ms() + HTTPD_READ_TIMEOUT_MS;
	size_t len = 0;

	for (;;) {
		struct pollfd pf[2] = { { .fd = fd, .events = POLLIN },
					{ .fd = stop_fd, .events = POLLIN } };
		int64_t left = deadline - mono_ms();
		ssize_t got;
		size_t from;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(pf, 2, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pf[1].revents)
			return -ECANCELED;
		if (!pf[0].revents)
			continue; /* timed out: the deadline says so */
		got = recv(fd, buf + len, HTTPD_MAX_REQUEST - len, MSG_DONTWAIT);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -ECONNRESET;
		/* The blank line may straddle the previous read. */
		from = len >= 2 ? len - 2 : 0;
		len += (size_t)got;
		buf[len] = '\0';
		if (httpd__header_end(buf + from, len - from))
			return (ssize_t)len;
		if (len == HTTPD_MAX_REQUEST)
			return -E2BIG;
	}
}

/* Closing a socket with unread data makes the kernel send a reset, which
 * can destroy the answer in flight: read that data (a body we did not
 * want, the client's own close) for a moment first. */
void httpd__linger_close(int fd)
{
	int64_t deadline = mono_ms() + LINGER_MS;
	size_t total = 0;
	char junk[4096];

	shutdown(fd, SHUT_WR);
	while (total < 64 * 1024) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - mono_ms();
		ssize_t n;

		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN)))
			break;
		total += n > 0 ? (size_t)n : 0;
	}
	close(fd);
}
