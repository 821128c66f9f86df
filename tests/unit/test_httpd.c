/* test_httpd.c — the HTTP server's pure parts: where a
 * request's headers end, the request line, percent-decoding, query
 * strings, the recording a request asks for; and the wire helpers over a
 * socketpair (bounded reads, answers). Table-driven where it can be. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include "cli/cli.h"
#include "http/httpd.h"
#include "testing.h"

#define SYSFS "/sys/bus/event_source/devices"

static bool header_end(void)
{
	const char *crlf = "GET / HTTP/1.1\r\nHost: x\r\n\r\nBODY", *lf = "GET / HTTP/1.0\n\nX";

	CHECK_EQ_INT(httpd__header_end(crlf, strlen(crlf)), strlen(crlf) - 4);
	CHECK_EQ_INT(httpd__header_end(lf, strlen(lf)), strlen(lf) - 1);
	CHECK_EQ_INT(httpd__header_end("GET / HTTP/1.1\r\n", 16), 0);
	CHECK_EQ_INT(httpd__header_end("GET / HTTP/1.1\r\nHost: x\r\n\r", 27), 0);
	CHECK_EQ_INT(httpd__header_end("", 0), 0);
	return true;
}

static bool request_line(void)
{
	struct httpd_req r;
	char err[256], buf[512];

	strcpy(buf, "GET /debug/pprof/profile?seconds=5&x=%41 HTTP/1.1\r\nHost: h\r\n\r\n");
	CHECK_EQ_INT(httpd__parse_request(buf, &r, err, sizeof(err)), 0);
	CHECK_STR(r.method, "GET");
	CHECK_STR(r.path, "/debug/pprof/profile");
	CHECK_STR(r.query, "seconds=5&x=%41");
	CHECK_STR(r.shown, "GET /debug/pprof/profile?seconds=5&x=%41");
	strcpy(buf, "HEAD /debug/pprof/ HTTP/1.0\n\n");
	CHECK_EQ_INT(httpd__parse_request(buf, &r, err, sizeof(err)), 0);
	CHECK_STR(r.method, "HEAD");
	CHECK_STR(r.path, "/debug/pprof/");
	CHECK(!r.query);
	strcpy(buf, "POST /x? HTTP/1.1\r\n\r\n"); /* any token is a method; 405 is the caller's */
	CHECK_EQ_INT(httpd__parse_request(buf, &r, err, sizeof(err)), 0);
	CHECK_STR(r.method, "POST");
	CHECK_STR(r.query, "");

	const char *bad[] = {
		"\r\n\r\n", "GET\r\n\r\n", "GET /\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n",
		"GET / HTTP/2.0\r\n\r\n", "GET / HTTP/1.1 x\r\n\r\n", "GET / http/1.1\r\n\r\n",
		"GET http://h/ HTTP/1.1\r\n\r\n", "GET * HTTP/1.1\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n",
		"GET /a\tb HTTP/1.1\r\n\r\n", "GET /\x80 HTTP/1.1\r\n\r\n", " GET / HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.\r\n\r\n", "no newline at all",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		err[0] = '\0';
		if (httpd__parse_request(buf, &r, err, sizeof(err)) != -EINVAL || !err[0] ||
		    strchr(err, '\n')) {
			printf("  case %zu accepted or no one-line reason: '%s'\n", i, err);
			return false;
		}
	}
	/* What logs show is printable and bounded, whatever was sent. */
	strcpy(buf, "GET /\x1b[31m HTTP/1.1\r\n\r\n");
	CHECK(httpd__parse_request(buf, &r, err, sizeof(err)) < 0);
	CHECK_STR(r.shown, "GET /?[31m HTTP/1.1");
	memset(buf, 'a', 400);
	memcpy(buf, "GET /", 5);
	strcpy(buf + 400, " HTTP/1.1\r\n\r\n");
	CHECK_EQ_INT(httpd__parse_request(buf, &r, err, sizeof(err)), 0);
	CHECK_EQ_INT(strlen(r.shown), sizeof(r.shown) - 1);
	CHECK(!strcmp(r.shown + sizeof(r.shown) - 4, "..."));
	return true;
}

static bool percent_decoding(void)
{
	const struct { const char *in, *out; } good[] = {
		{ "a%20b+c", "a b c" }, { "%41%6a%2F", "Aj/" }, { "cycles%3App", "cycles:pp" },
		{ "", "" }, { "%e2%82%ac", "\xe2\x82\xac" }, { "plain", "plain" },
	};
	const char *bad[] = { "%", "%4", "%zz", "%4g", "100%", "%00", "%0a", "a%0Db", "%7f", "%1F" };
	char buf[64];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		strcpy(buf, good[i].in);
		CHECK_EQ_INT(httpd__percent_decode(buf), 0);
		CHECK_STR(buf, good[i].out);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strcpy(buf, bad[i]);
		if (httpd__percent_decode(buf) != -EINVAL) {
			printf("  '%s' accepted\n", bad[i]);
			return false;
		}
	}
	return true;
}

static bool queries(void)
{
	struct httpd_params p;
	char err[256], q[256];

	strcpy(q, "seconds=2.5&event=cycles%3App&hz=99&debug=1");
	CHECK_EQ_INT(httpd__parse_query(q, &p, err, sizeof(err)), 0);
	CHECK_STR(p.seconds, "2.5");
	CHECK_STR(p.event, "cycles:pp");
	CHECK_STR(p.hz, "99");
	strcpy(q, "&&event=cpu/event=0x3c,umask=0x00/&seconds&");
	CHECK_EQ_INT(httpd__parse_query(q, &p, err, sizeof(err)), 0);
	CHECK_STR(p.event, "cpu/event=0x3c,umask=0x00/");
	CHECK_STR(p.seconds, "");
	CHECK(!p.hz);
	CHECK_EQ_INT(httpd__parse_query(NULL, &p, err, sizeof(err)), 0);
	CHECK(!p.seconds && !p.event && !p.hz);
	strcpy(q, "seconds=1&seconds=2");
	CHECK(httpd__parse_query(q, &p, err, sizeof(err)) < 0);
	CHECK(strstr(err, "'seconds' given twice"));
	strcpy(q, "event=a%0ab");
	CHECK(httpd__parse_query(q, &p, err, sizeof(err)) < 0);
	CHECK(strstr(err, "percent-encoding"));
	strcpy(q, "x%zz=1");
	CHECK(httpd__parse_query(q, &p, err, sizeof(err)) < 0);
	return true;
}

static int parse_cli(struct config *c, const char *const *args)
{
	char *argv[16] = { (char *)"pmubpf" }, err[256];
	int argc = 1;

	while (args[argc - 1])
		argv[argc] = (char *)args[argc - 1], argc++;
	return cli__parse(argc, argv, SYSFS, c, err, sizeof(err));
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Each request's recording: the server's config with the request's
 * seconds, event and rate, and the command line's messages. */
static bool profile_config(void)
{
	struct config base, out;
	struct httpd_params p = { 0 };
	char err[256];

	CHECK_EQ_INT(parse_cli(&base, ARGS("--http", ":0", "-c", "1000000", "-p", "1")), CLI_SERVE);
	CHECK_EQ_INT(httpd__profile_config(&base, &p, SYSFS, &out, err, sizeof(err)), 0);
	CHECK(out.duration == HTTPD_DEFAULT_SECONDS);
	CHECK_STR(out.events[0].name, "cpu-clock");
	CHECK_EQ_INT(out.period, 1000000);
	CHECK(out.pids == base.pids && out.npids == 1);
	CHECK(!out.http && !out.top);

	p = (struct httpd_params){ .seconds = "2.5", .event = "task-clock", .hz = "4999" };
	CHECK_EQ_INT(httpd__profile_config(&base, &p, SYSFS, &out, err, sizeof(err)), 0);
	CHECK(out.duration == 2.5);
	CHECK_EQ_INT(out.nevents, 1);
	CHECK_STR(out.events[0].name, "task-clock");
	CHECK_EQ_INT(out.freq, 4999);
	CHECK_EQ_INT(out.period, 0); /* hz= replaces -c too */
	p.seconds = "3600";
	CHECK_EQ_INT(httpd__profile_config(&base, &p, SYSFS, &out, err, sizeof(err)), 0);

	const struct { struct httpd_params p; const char *want; } bad[] = {
		{ { .seconds = "abc" }, "bad duration 'seconds=abc': want seconds from 1 to 3600" },
		{ { .seconds = "0" }, "bad duration" }, { { .seconds = "0.5" }, "bad duration" },
		{ { .seconds = "3600.5" }, "bad duration" }, { { .seconds = "nan" }, "bad duration" },
		{ { .seconds = "inf" }, "bad duration" }, { { .seconds = "" }, "bad duration" },
		{ { .seconds = "5s" }, "bad duration" },
		{ { .hz = "0" }, "bad frequency 'hz=0': want 1..100000 Hz" },
		{ { .hz = "100001" }, "bad frequency" }, { { .hz = "-5" }, "bad frequency" },
		{ { .event = "cache-mises" }, "unknown event 'cache-mises' (did you mean 'cache-misses'" },
		{ { .event = "cycles:x" }, "modifier" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (httpd__profile_config(&base, &bad[i].p, SYSFS, &out, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, bad[i].want) || strchr(err, '\n')) {
			printf("  case %zu: got '%s', want '%s'\n", i, err, bad[i].want);
			return false;
		}
	}
	config__free(&base);
	return true;
}

/* The wire, over a socketpair: a request in pieces, the limits, the
 * server stopping, an answer's bytes. */
static bool wire(void)
{
	char buf[HTTPD_MAX_REQUEST + 1], big[HTTPD_MAX_REQUEST];
	int sv[2], stop = eventfd(0, EFD_CLOEXEC);
	uint64_t one = 1;
	ssize_t n;

	CHECK(stop >= 0);
	CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_EQ_INT(write(sv[1], "GET / HTTP/1.0\r", 15), 15);
	CHECK_EQ_INT(write(sv[1], "\n\r\n", 3), 3);
	CHECK_EQ_INT(httpd__read_request(sv[0], stop, buf), 18);
	CHECK_STR(buf, "GET / HTTP/1.0\r\n\r\n");

	memset(big, 'a', sizeof(big));
	CHECK_EQ_INT(write(sv[1], big, sizeof(big)), sizeof(big));
	CHECK_EQ_INT(httpd__read_request(sv[0], stop, buf), -E2BIG);

	httpd__respond_line(sv[0], 404, "X-A: b\r\n", "not here", false);
	n = read(sv[1], buf, sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n] = '\0';
	CHECK(!strncmp(buf, "HTTP/1.0 404 Not Found\r\n", 24));
	CHECK(strstr(buf, "\r\nContent-Length: 9\r\n"));
	CHECK(strstr(buf, "\r\nConnection: close\r\nX-A: b\r\n\r\nnot here\n"));
	httpd__respond(sv[0], 200, NULL, "body\n", true); /* HEAD: no body */
	n = read(sv[1], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(strstr(buf, "Content-Length: 5\r\n"));
	CHECK(!strcmp(buf + n - 4, "\r\n\r\n"));

	CHECK_EQ_INT(write(stop, &one, sizeof(one)), sizeof(one));
	CHECK_EQ_INT(httpd__read_request(sv[0], stop, buf), -ECANCELED);
	close(stop);
	stop = eventfd(0, EFD_CLOEXEC);
	close(sv[1]);
	CHECK_EQ_INT(httpd__read_request(sv[0], stop, buf), -ECONNRESET);
	close(sv[0]);
	close(stop);
	return true;
}

TEST_MAIN("httpd",
	  TEST(header_end),
	  TEST(request_line),
	  TEST(percent_decoding),
	  TEST(queries),
	  TEST(profile_config),
	  TEST(wire))
