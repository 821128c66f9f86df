/* test_httpd.c — the HTTP server's pure parts: a profile request's
 * parameters and events, the bearer token (file, header, comparison),
 * loopback addresses, the --http options, and /metrics' text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "http/httpd.h"
#include "http/metrics.h"
#include "lib/token.h"
#include "testing.h"

#define SYSFS "/sys/bus/event_source/devices"
#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static int parse_cli(struct config *c, const char *const *args, char *err, size_t errlen)
{
	char *argv[24] = { (char *)"pmubpf" };
	int argc = 1;

	while (args[argc - 1])
		argv[argc] = (char *)args[argc - 1], argc++;
	return cli__parse(argc, argv, SYSFS, c, err, errlen);
}

/* Several events served at once, --window and --http-token-file taken
 * only with --http. */
static bool options(void)
{
	struct config c;
	char err[256];

	CHECK_EQ_INT(parse_cli(&c, ARGS("--http", ":0", "-e", "cpu-clock", "-e", "task-clock",
					 "--window", "2.5", "--http-token-file", "/x"), err, sizeof(err)), CLI_SERVE);
	CHECK_EQ_INT(c.nevents, 2);
	CHECK(c.window == 2.5);
	CHECK_STR(c.http_token_file, "/x");
	config__free(&c);
	/* A one-shot recording takes --window too: how often its maps are
	 * emptied into the one profile. */
	CHECK_EQ_INT(parse_cli(&c, ARGS("--window", "5", "-d", "60"), err, sizeof(err)), CLI_RECORD);
	CHECK(c.window == 5);
	config__free(&c);
	const struct { const char *const *args; const char *want; } bad[] = {
		{ ARGS("--http-token-file", "/x", "-d", "1"), "--http-token-file needs --http" },
		{ ARGS("--http", ":0", "--window", "0"), "bad window '--window 0'" },
		{ ARGS("--http", ":0", "--window", "3601"), "bad window" },
		{ ARGS("--http", ":0", "--every", "5"), "--every excludes --http" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (parse_cli(&c, bad[i].args, err, sizeof(err)) >= 0 || !strstr(err, bad[i].want)) {
			printf("  case %zu: got '%s', want '%s'\n", i, err, bad[i].want);
			return false;
		}
		config__free(&c);
	}
	return true;
}

/* seconds= (default 30), event= and /debug/pprof/EVENT among the
 * recorded events, nosymbol=; each mistake one line. */
static bool params(void)
{
	struct config c;
	struct httpd_profile p;
	char err[256];

	CHECK_EQ_INT(parse_cli(&c, ARGS("--http", ":0", "-e", "cpu-clock", "-e", "task-clock:u"),
			       err, sizeof(err)), CLI_SERVE);
	CHECK_EQ_INT(httpd__profile_params(&c, NULL, NULL, NULL, NULL, NULL, &p, err, sizeof(err)), 0);
	CHECK(p.seconds == HTTPD_DEFAULT_SECONDS && p.event == 0 && !p.nosymbol);
	CHECK_EQ_INT(httpd__profile_params(&c, NULL, "2.5", "task-clock:u", "1", NULL, &p, err, sizeof(err)), 0);
	CHECK(p.seconds == 2.5 && p.event == 1 && p.nosymbol);
	/* The path's event, by name or by its file-name form. */
	CHECK_EQ_INT(httpd__find_event(&c, "task-clock_u"), 1);
	CHECK_EQ_INT(httpd__find_event(&c, "cpu-clock"), 0);
	CHECK_EQ_INT(httpd__find_event(&c, "task-clock"), -1);
	CHECK_EQ_INT(httpd__profile_params(&c, "task-clock_u", "3600", NULL, "0", NULL, &p, err, sizeof(err)), 0);
	CHECK(p.seconds == 3600 && p.event == 1 && !p.nosymbol);
	CHECK_EQ_INT(httpd__profile_params(&c, "task-clock_u", NULL, "task-clock:u", NULL, NULL, &p, err, sizeof(err)), 0);

	const struct {
		const char *path_event, *seconds, *event, *nosymbol, *hz, *want;
	} bad[] = {
		{ NULL, "abc", NULL, NULL, NULL, "bad duration 'seconds=abc': want seconds from 1 to 3600" },
		{ NULL, "0", NULL, NULL, NULL, "bad duration" }, { NULL, "0.5", NULL, NULL, NULL, "bad duration" },
		{ NULL, "3600.5", NULL, NULL, NULL, "bad duration" }, { NULL, "nan", NULL, NULL, NULL, "bad duration" },
		{ NULL, "", NULL, NULL, NULL, "bad duration" }, { NULL, "5s", NULL, NULL, NULL, "bad duration" },
		{ NULL, NULL, "cycles", NULL, NULL,
		  "event 'cycles' is not recorded by this server (it records cpu-clock, task-clock:u;" },
		{ "cpu-clock", NULL, "task-clock:u", NULL, NULL, "contradicts the path's event" },
		{ NULL, NULL, NULL, "yes", NULL, "bad 'nosymbol=yes': want 1 or 0" },
		{ NULL, NULL, NULL, NULL, "99", "hz= is not taken" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (httpd__profile_params(&c, bad[i].path_event, bad[i].seconds, bad[i].event,
					  bad[i].nosymbol, bad[i].hz, &p, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, bad[i].want) || strchr(err, '\n')) {
			printf("  case %zu: got '%s', want '%s'\n", i, err, bad[i].want);
			return false;
		}
	}
	config__free(&c);
	return true;
}

static bool write_file(const char *path, const char *s, size_t n)
{
	FILE *f = fopen(path, "w");

	return f && fwrite(s, 1, n, f) == n && !fclose(f);
}

/* The token file's first line; bad files refused with one line. */
static bool token_file(void)
{
	char path[] = "/tmp/pmubpf-token-XXXXXX", tok[HTTPD_TOKEN_MAX + 2], err[256];
	int fd = mkstemp(path);
	static char big[HTTPD_TOKEN_MAX + 2];

	CHECK(fd >= 0);
	close(fd);
	CHECK(write_file(path, "s3cret-Token\nsecond line\n", 25));
	CHECK_EQ_INT(token__read(path, "--http-token-file", tok, sizeof(tok), err, sizeof(err)), 0);
	CHECK_STR(tok, "s3cret-Token");
	CHECK(write_file(path, "crlf\r\n", 6));
	CHECK_EQ_INT(token__read(path, "--http-token-file", tok, sizeof(tok), err, sizeof(err)), 0);
	CHECK_STR(tok, "crlf");
	CHECK(write_file(path, "no-newline", 10));
	CHECK_EQ_INT(token__read(path, "--http-token-file", tok, sizeof(tok), err, sizeof(err)), 0);
	CHECK_STR(tok, "no-newline");
	memset(big, 'a', HTTPD_TOKEN_MAX);
	CHECK(write_file(path, big, HTTPD_TOKEN_MAX));
	CHECK_EQ_INT(token__read(path, "--http-token-file", tok, sizeof(tok), err, sizeof(err)), 0);
	CHECK(write_file(path, big, HTTPD_TOKEN_MAX + 1));
	CHECK(token__read(path, "--http-token-file", tok, sizeof(tok), err, sizeof(err)) < 0 && strstr(err, "longer than"));
	CHECK(write_file(path, "\n", 1));
	CHECK(token__read(path, "--http-token-file", tok, sizeof(tok), err, sizeof(err)) < 0 && strstr(err, "no token"));
	CHECK(write_file(path, "two words\n", 10));
	CHECK(token__read(path, "--http-token-file", tok, sizeof(tok), err, sizeof(err)) < 0 && strstr(err, "printable"));
	unlink(path);
	CHECK(token__read(path, "--http-token-file", tok, sizeof(tok), err, sizeof(err)) < 0 &&
	      strstr(err, "cannot read --http-token-file") && strstr(err, "No such file"));
	return true;
}

static bool bearer(void)
{
	const char *t = "s3cret-Token";

	CHECK(httpd__bearer_ok("Bearer s3cret-Token", t));
	CHECK(httpd__bearer_ok("bearer  s3cret-Token ", t));
	CHECK(httpd__bearer_ok(" BEARER\ts3cret-Token", t));
	const char *bad[] = {
		NULL, "", "Bearer", "Bearer ", "Bearer s3cret-Toke", "Bearer s3cret-Tokenx",
		"Bearer s3cret-token", "Basic s3cret-Token", "Bearers3cret-Token", "s3cret-Token",
		"Bearer x3cret-Token", "Bearer s3cret-Token2", "Bearer s3cret Token",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (httpd__bearer_ok(bad[i], t)) {
			printf("  case %zu ('%s') accepted\n", i, bad[i] ? bad[i] : "(null)");
			return false;
		}
	return true;
}

static bool loopback(void)
{
	const struct { const char *s; bool lo; } cases[] = {
		{ ":6060", true }, { "localhost:1", true }, { "127.0.0.1:1", true }, { "127.1.2.3:1", true },
		{ "[::1]:1", true }, { "0.0.0.0:1", false }, { "[::]:1", false }, { "192.0.2.2:1", false },
		{ "[::ffff:127.0.0.1]:1", true }, { "[::ffff:10.0.0.1]:1", false }, { "128.0.0.1:1", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct listen_addr a;

		CHECK(values__parse_listen(cases[i].s, &a) == 0);
		if (httpd__is_loopback(&a) != cases[i].lo) {
			printf("  %s: loopback %d, want %d\n", cases[i].s, !cases[i].lo, cases[i].lo);
			return false;
		}
	}
	return true;
}

/* The text format: every sample line after its HELP and TYPE, label
 * values escaped, one line per event and reason, nothing unnamed. */
static bool metrics_text(void)
{
	struct metrics m = { .nevents = 2, .event = { "cpu-clock", "we\"ird\\ev\nent" },
			     .samples = { 10, 20 }, .windows = 3, .window_seconds = 10,
			     .bpf_stats = true, .nprogs = 1, .prog_name = { "on_sample" },
			     .run_time_ns = { 2000 }, .run_cnt = { 4 }, .label_sets_over = 9,
			     .cgroups_named = 4 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	m.drops[1][PMUBPF_DROP_COUNTS_FULL] = 7;
	m.drops[0][PMUBPF_DROP_IDLE] = 5;
	m.drops[0][PMUBPF_DROP_DWARF_TRUNCATED] = 2;
	metrics__self(&m);
	CHECK(f && metrics__format(&m, f) == 0 && !fclose(f));
	CHECK(strstr(buf, "\npmubpf_samples_total{event=\"cpu-clock\"} 10\n"));
	CHECK(strstr(buf, "\npmubpf_lost_samples_total{event=\"we\\\"ird\\\\ev\\nent\",reason=\"counts_map_full\"} 7\n"));
	CHECK(strstr(buf, "\npmubpf_idle_samples_total{event=\"cpu-clock\"} 5\n"));
	CHECK(strstr(buf, "\npmubpf_dwarf_incomplete_total{event=\"cpu-clock\",reason=\"truncated\"} 2\n"));
	CHECK(strstr(buf, "\npmubpf_bpf_seconds_per_run{program=\"on_sample\"} 0.000000500\n"));
	CHECK(strstr(buf, "\npmubpf_label_sets_over_cap_total 9\n"));
	CHECK(strstr(buf, "\npmubpf_cgroups_named_total 4\n"));
	CHECK(strstr(buf, "\nprocess_resident_memory_bytes ") && !strstr(buf, "\nprocess_resident_memory_bytes 0\n"));
	CHECK(m.cpu_seconds > 0 && m.threads >= 1 && m.start_time_seconds > 1e9);
	/* Every reason lands in exactly one family, and none is unnamed. */
	CHECK(!strstr(buf, "reason_"));
	size_t lost = 0, dwarf = 0;
	for (char *p = buf; (p = strstr(p, "\npmubpf_lost_samples_total{")); p++)
		lost++;
	for (char *p = buf; (p = strstr(p, "\npmubpf_dwarf_incomplete_total{")); p++)
		dwarf++;
	CHECK_EQ_INT(lost + dwarf + 2 /* idle, per event */, 2 * PMUBPF_DROP__MAX);
	/* Each family's HELP and TYPE come before its samples, once. */
	for (char *line = buf; *line; line = strchr(line, '\n') + 1) {
		char name[128];

		if (*line == '#')
			continue;
		CHECK(sscanf(line, "%127[a-z_]", name) == 1);
		char want[200];
		snprintf(want, sizeof(want), "# TYPE %s ", name);
		char *type = strstr(buf, want);
		CHECK(type && type < line);
		CHECK(!strstr(type + 1, want));
	}
	free(buf);
	return true;
}

TEST_MAIN("httpd", TEST(options), TEST(params), TEST(token_file), TEST(bearer), TEST(loopback),
	  TEST(metrics_text))
