/* test_cli.c — the command line: every option into struct config, every
 * mistake into one line naming it; derived map sizes
 * and per-event output names. Table-driven. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "config/values.h"
#include "report/report.h"
#include "procs/procs.h"
#include "record/session.h"
#include "testing.h"

#define SYSFS "/sys/bus/event_source/devices"
#define MAXARGS 48

static int parse(struct config *c, char *err, const char *const *args)
{
	char *argv[MAXARGS + 2] = { (char *)"pmubpf" };
	int argc = 1;

	while (args[argc - 1] && argc <= MAXARGS)
		argv[argc] = (char *)args[argc - 1], argc++;
	argv[argc] = NULL;
	return cli__parse(argc, argv, SYSFS, c, err, 256);
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static bool defaults(void)
{
	struct config c;
	char err[256];

	CHECK_EQ_INT(parse(&c, err, ARGS("-d", "1")), CLI_RECORD);
	CHECK(c.all);
	CHECK_EQ_INT(c.nevents, 1);
	CHECK_STR(c.events[0].name, "cpu-clock");
	CHECK_EQ_INT(c.freq, DEFAULT_FREQ);
	CHECK_EQ_INT(c.period, 0);
	CHECK_STR(c.output, DEFAULT_OUTPUT);
	CHECK(c.duration == 1.0);
	config__free(&c);
	return true;
}

static bool options(void)
{
	struct config c;
	char err[256];

	CHECK_EQ_INT(parse(&c, err, ARGS("-e", "cycles:pp", "-e", "task-clock", "-c", "100000",
					 "-p", "1,2", "-p", "7", "-t", "9", "-C", "3,0-1",
					 "-d", "0.25", "-o", "x.pb.gz", "--no-kernel", "--top", "5",
					 "--include-idle", "--stack-map-size", "4096", "-v", "-v")), CLI_RECORD);
	CHECK_EQ_INT(c.nevents, 2);
	CHECK_EQ_INT(c.events[0].attr.precise_ip, 2);
	CHECK_EQ_INT(c.period, 100000);
	CHECK_EQ_INT(c.freq, 0);
	CHECK_EQ_INT(c.npids, 3);
	CHECK_EQ_INT(c.pids[2], 7);
	CHECK_EQ_INT(c.ntids, 1);
	CHECK_EQ_INT(c.ncpus, 3);
	CHECK_EQ_INT(c.cpus[0], 0);
	CHECK_EQ_INT(c.cpus[2], 3);
	CHECK(!c.all);
	CHECK(c.duration == 0.25);
	CHECK(c.no_kernel && !c.no_user && c.include_idle);
	CHECK_EQ_INT(c.top, 5);
	CHECK_EQ_INT(c.stack_map_size, 4096);
	CHECK_EQ_INT(c.verbose, 2);
	config__free(&c);
	return true;
}

static bool command(void)
{
	struct config c;
	char err[256];

	/* Options after -- belong to the command. */
	CHECK_EQ_INT(parse(&c, err, ARGS("-F", "99", "--", "ls", "-l", "-d")), CLI_RECORD);
	CHECK(c.command && !strcmp(c.command[0], "ls") && !strcmp(c.command[2], "-d") && !c.command[3]);
	CHECK(!c.all);
	CHECK(c.duration == 0);
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("list")), CLI_LIST);
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("--help")), CLI_HELP);
	config__free(&c);
	return true;
}

/* -e takes perf's comma lists; commas inside PMU/terms/ stay. */
static bool event_lists(void)
{
	const char *s = "cycles:pp,cpu/event=0x3c,umask=0x00/u,r01c2,cpu/mem-loads,ldlat=30/";
	const char *want[] = { "cycles:pp", "cpu/event=0x3c,umask=0x00/u", "r01c2", "cpu/mem-loads,ldlat=30/" };
	char buf[64], small[4];
	int n = 0, r;
	struct config c;
	char err[256];

	while ((r = cli__next_event(&s, buf, sizeof(buf))) > 0) {
		CHECK(n < 4);
		CHECK_STR(buf, want[n]);
		n++;
	}
	CHECK_EQ_INT(r, 0);
	CHECK_EQ_INT(n, 4);
	s = "cache-misses";
	CHECK(cli__next_event(&s, small, sizeof(small)) < 0); /* does not fit */
	CHECK_EQ_INT(parse(&c, err, ARGS("-e", "cpu-clock,task-clock", "-e", "cycles", "-g")), CLI_RECORD);
	CHECK_EQ_INT(c.nevents, 3);
	CHECK_STR(c.events[0].name, "cpu-clock");
	CHECK_STR(c.events[1].name, "task-clock");
	CHECK_STR(c.events[2].name, "cycles");
	config__free(&c);
	/* -F max: the kernel's limit (capped at 100000) */
	CHECK_EQ_INT(parse(&c, err, ARGS("-F", "max")), CLI_RECORD);
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	unsigned long long rate = 0;
	CHECK(f && fscanf(f, "%llu", &rate) == 1);
	fclose(f);
	CHECK_EQ_INT(c.freq, rate < 100000 ? rate : 100000);
	config__free(&c);
	return true;
}

static bool serve(void)
{
	struct config c;
	char err[256];

	CHECK_EQ_INT(parse(&c, err, ARGS("--http", "127.0.0.1:6060", "-p", "1", "-e", "task-clock")), CLI_SERVE);
	CHECK_STR(c.http, "127.0.0.1:6060");
	CHECK(!c.all && c.npids == 1);
	CHECK(c.duration == 0);
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("--http", ":0")), CLI_SERVE);
	CHECK(c.all);
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("-d", "1")), CLI_RECORD);
	CHECK(!c.http);
	config__free(&c);
	return true;
}

static bool errors(void)
{
	const struct { const char *const *args; const char *want; } cases[] = {
		{ ARGS("-e", "cache-mises"), "did you mean 'cache-misses'" },
		{ ARGS("-e", "cycles", "-e", "cycles"), "given twice" },
		{ ARGS("-e", "cycles,instructions,cycles"), "given twice" },
		{ ARGS("-e", "cycles,"), "empty event" },
		{ ARGS("-e", ",cycles"), "empty event" },
		{ ARGS("-e", "cycles,,instructions"), "empty event" },
		{ ARGS("-e", "cycles,cache-mises"), "did you mean 'cache-misses'" },
		{ ARGS("-F", "maxx"), "bad frequency" },
		{ ARGS("-F", "0"), "bad frequency '-F 0'" },
		{ ARGS("-F", "100001"), "bad frequency" },
		{ ARGS("-F", "10x"), "bad frequency" },
		{ ARGS("-c", "0"), "bad period" },
		{ ARGS("-c", "-3"), "bad period" },
		{ ARGS("-c", "5", "-F", "5"), "exclude each other" },
		{ ARGS("-p", "0"), "bad pid list" },
		{ ARGS("-p", "abc"), "bad pid list" },
		{ ARGS("-t", ""), "bad thread list" },
		{ ARGS("-C", "2-1"), "bad CPU list" },
		{ ARGS("-d", "0"), "bad duration" },
		{ ARGS("-d", "nan"), "bad duration" },
		{ ARGS("-d", "1e9"), "up to 31536000 (a year)" },
		{ ARGS("--every", "0.5"), "from 1 to 31536000" },
		{ ARGS("-o", ""), "empty output" },
		{ ARGS("--top", "0"), "bad --top" },
		{ ARGS("--counts-map-size", "10"), "bad --counts-map-size" },
		{ ARGS("--no-user", "--no-kernel"), "no stack" },
		{ ARGS("-a", "-p", "1"), "-a excludes" },
		{ ARGS("-p", "1", "--", "ls"), "a command excludes" },
		{ ARGS("--frob"), "unknown option" },
		{ ARGS("-x"), "unknown option '-x'" },
		{ ARGS("-e"), "needs a value" },
		{ ARGS("stray"), "unexpected argument 'stray'" },
		{ ARGS("list", "x", "y"), "at most one argument" },
		{ ARGS("--call-graph", "lbr"), "lbr is not supported: a BPF program can read" },
		{ ARGS("--call-graph", "dwarf,100"), "multiple of 8" },
		{ ARGS("--call-graph", "dwarf,0"), "multiple of 8" },
		{ ARGS("--call-graph", "dwarf,65536"), "multiple of 8" },
		{ ARGS("--call-graph", "dwarf,"), "multiple of 8" },
		{ ARGS("--call-graph", "fp,8192"), "fp takes no size" },
		{ ARGS("--call-graph", "dwarfx"), "bad --call-graph" },
		{ ARGS("-o", "-", "-e", "cpu-clock,task-clock"), "-o - writes one profile" },
		{ ARGS("-o", "-", "-e", "{cpu-clock,page-faults}"), "-o - writes one profile" },
		{ ARGS("-o", "-", "--top", "3"), "-o - excludes --top" },
		{ ARGS("-o", "-", "--every", "5"), "-o - excludes --every" },
		{ ARGS("-e", "{cpu-clock,page-faults"), "unclosed group" },
		{ ARGS("-e", "cpu-clock}"), "'}' without '{'" },
		{ ARGS("-e", "{cpu-clock,{page-faults}}"), "nested" },
		{ ARGS("-e", "{cpu-clock,page-faults}:S"), "group modifiers (':S') are not supported" },
		{ ARGS("-e", "{}"), "empty event" },
		{ ARGS("-e", "{cpu-clock},{cpu-clock}"), "given twice" },
		{ ARGS("--http", "6060"), "bad --http '6060'" },
		{ ARGS("--http", "example.com:80"), "bad --http" },
		{ ARGS("--http", ":0", "-d", "1"), "--http excludes -d" },
		{ ARGS("--http", ":0", "-o", "x.pb.gz"), "--http excludes -o" },
		{ ARGS("--http", ":0", "--top", "5"), "--http excludes --top" },
		{ ARGS("--http", ":0", "--", "ls"), "--http excludes a command" },
		{ ARGS("--http", ":0", "--window", "0"), "bad window '--window 0'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config c;
		char err[256] = "";
		int r = parse(&c, err, cases[i].args);

		config__free(&c);
		if (r >= 0 || !strstr(err, cases[i].want) || strchr(err, '\n')) {
			printf("  case %zu (%s ...): got %d '%s', want error containing '%s'\n",
			       i, cases[i].args[0], r, err, cases[i].want);
			return false;
		}
	}
	return true;
}

/* Lists are bounded as written (fuzz_cli: -p 1-66160063 took seconds),
 * and -p options add up to one bound. (The list syntax itself:
 * test_values.c.) */
static bool list_bounds(void)
{
	int *v, n;

	/* Bounded as written (fuzz_cli: -p 1-66160063 took seconds). */
	CHECK_EQ_INT(values__parse_list("0-65535", &v, &n, 65535), 0);
	CHECK_EQ_INT(n, VALUES_LIST_MAX);
	free(v);
	CHECK(values__parse_list("0-65536", &v, &n, INT_MAX) < 0);
	CHECK(values__parse_list("1-2000000000", &v, &n, INT_MAX) < 0);
	CHECK(values__parse_list("0-65535,7", &v, &n, 65535) < 0);
	/* -p options add up: the bound is on all of them. */
	struct config c;
	char err[256];
	CHECK_EQ_INT(parse(&c, err, ARGS("-p", "1-40000", "-d", "1")), CLI_RECORD);
	config__free(&c);
	CHECK(parse(&c, err, ARGS("-p", "1-40000", "-p", "1-40000", "-d", "1")) < 0);
	CHECK(strstr(err, "at most 65536 in all"));
	config__free(&c);
	return true;
}

static bool map_sizes(void)
{
	struct config c = { .freq = 999, .nevents = 1 };
	uint32_t st, co;

	/* No -d: windowed, a window of 10 s: 999 Hz x 2 CPUs x 10 s = 20k
	 * samples, an entry each, stacks and counts. */
	CHECK(session__windowed(&c, 2));
	CHECK(session__window(&c, 2) == SESSION_WINDOW);
	session__map_sizes(&c, 2, &st, &co);
	CHECK_EQ_INT(st, 32768);
	CHECK_EQ_INT(co, 32768);
	c.duration = 0.1; /* tiny: one window, the floors */
	CHECK(!session__windowed(&c, 1));
	session__map_sizes(&c, 1, &st, &co);
	CHECK_EQ_INT(st, 16384);
	CHECK_EQ_INT(co, 16384);
	c.duration = 10; /* one window of -d */
	CHECK(!session__windowed(&c, 2));
	session__map_sizes(&c, 2, &st, &co);
	CHECK_EQ_INT(st, 32768);
	CHECK_EQ_INT(co, 32768);
	c.duration = 40; /* windows of 10 s, sized for one */
	CHECK(session__windowed(&c, 2));
	session__map_sizes(&c, 2, &st, &co);
	CHECK_EQ_INT(st, 32768);
	/* 16 CPUs: 16k samples a second, each with a new user and kernel
	 * stack at worst, fill 65536 stacks in 2.05 s, so the window is that
	 * long (a 10 s -d on such a machine under churn lost 24% of its user
	 * stacks in one window), and a -d 10 flips. */
	c.duration = 10;
	double w = session__window(&c, 16);
	CHECK(w > 2.0 && w < 2.1);
	c.no_kernel = true; /* one stack a sample */
	w = session__window(&c, 16);
	CHECK(w > 4.0 && w < 4.2);
	c.no_kernel = false;
	CHECK(session__windowed(&c, 16));
	session__map_sizes(&c, 16, &st, &co); /* an entry a sample of 2.05 s */
	CHECK_EQ_INT(st, 32768);
	CHECK_EQ_INT(co, 32768);
	/* --window as asked, even past what the stacks map holds. */
	c.window = 8;
	CHECK(session__window(&c, 16) == 8);
	c.window = 0;
	/* A smaller --stack-map-size shortens the window, down to its floor. */
	c.stack_map_size = 4096;
	w = session__window(&c, 2);
	CHECK(w > 1.0 && w < 1.05);
	c.stack_map_size = 16;
	CHECK(session__window(&c, 2) == SESSION_WINDOW_MIN);
	c.stack_map_size = 0;
	/* --every: sized for one window (10 s, or --every if shorter). */
	c.duration = 3600; c.every = 60;
	session__map_sizes(&c, 2, &st, &co);
	CHECK_EQ_INT(st, 32768);
	CHECK_EQ_INT(co, 32768);
	c.window = 2;
	session__map_sizes(&c, 2, &st, &co);
	CHECK_EQ_INT(st, 16384);
	CHECK_EQ_INT(co, 16384);
	c.every = 0; c.window = 0;
	c.duration = 3600; c.freq = 9999; /* huge: the caps, the window's floor */
	CHECK(session__window(&c, 64) == SESSION_WINDOW_MIN);
	session__map_sizes(&c, 64, &st, &co);
	CHECK_EQ_INT(st, 65536);
	CHECK_EQ_INT(co, 262144);
	c.stack_map_size = 1234; c.counts_map_size = 5678; /* settable */
	session__map_sizes(&c, 64, &st, &co);
	CHECK_EQ_INT(st, 1234);
	CHECK_EQ_INT(co, 5678);
	return true;
}

/* Process records: a counts entry each, of every window held before its
 * profile is built. */
static bool procs_cap(void)
{
	struct config c = { .freq = 999, .nevents = 1, .duration = 5 };

	CHECK_EQ_INT(session__procs_max(&c, 2, 32768), 32768); /* one-shot: one window */
	c.duration = 25; /* one-shot, 3 windows of 10 s: all held to the end */
	CHECK_EQ_INT(session__procs_max(&c, 2, 32768), 3 * 32768);
	c.duration = 0; /* one-shot with no end: the most there is */
	CHECK_EQ_INT(session__procs_max(&c, 2, 32768), PROCS_MAX);
	c.every = 60; /* 6 windows of 10 s, + 1 drained during the write */
	CHECK_EQ_INT(session__procs_max(&c, 2, 32768), 7 * 32768);
	c.window = 25; /* 60/25: 3 windows, + 1 */
	CHECK_EQ_INT(session__procs_max(&c, 2, 16384), 4 * 16384);
	c.every = 5; c.window = 0; /* --every shorter than a window: 1 + 1 */
	CHECK_EQ_INT(session__procs_max(&c, 2, 16384), 2 * 16384);
	c.every = 3600; /* the most there is */
	CHECK_EQ_INT(session__procs_max(&c, 2, 32768), PROCS_MAX);
	c.every = 0; c.http = "127.0.0.1:0";
	CHECK_EQ_INT(session__procs_max(&c, 2, 32768), PROCS_MAX);
	return true;
}

static bool output_paths(void)
{
	struct config c;
	char err[256], buf[256];

	CHECK_EQ_INT(parse(&c, err, ARGS("-e", "cycles", "-o", "/tmp/a.pb.gz")), CLI_RECORD);
	report__output_path(&c, 0, buf, sizeof(buf));
	CHECK_STR(buf, "/tmp/a.pb.gz");
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("-e", "cycles:pp", "-e", "r01c2", "-o", "/tmp/a.pb.gz")), CLI_RECORD);
	report__output_path(&c, 0, buf, sizeof(buf));
	CHECK_STR(buf, "/tmp/a.cycles_pp.pb.gz");
	report__output_path(&c, 1, buf, sizeof(buf));
	CHECK_STR(buf, "/tmp/a.r01c2.pb.gz");
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("-e", "cycles", "-e", "instructions", "-o", "prof")), CLI_RECORD);
	report__output_path(&c, 1, buf, sizeof(buf));
	CHECK_STR(buf, "prof.instructions");
	config__free(&c);
	/* DIR/ stays a directory (refused before recording), with several
	 * events too: not DIR/.EVENT. */
	CHECK_EQ_INT(parse(&c, err, ARGS("-e", "cycles", "-e", "instructions", "-o", "/tmp/d/")), CLI_RECORD);
	report__output_path(&c, 1, buf, sizeof(buf));
	CHECK_STR(buf, "/tmp/d/");
	config__free(&c);
	return true;
}

/* Issue 14: perf's spellings: groups, --call-graph dwarf,SIZE, -o -,
 * list FILTER. */
static bool perf_habits(void)
{
	struct config c;
	char err[256];

	CHECK_EQ_INT(parse(&c, err, ARGS("-e", "{cpu-clock,page-faults,minor-faults},task-clock",
					 "-e", "{context-switches}")), CLI_RECORD);
	CHECK_EQ_INT(c.nevents, 5);
	CHECK(!c.events[0].member);
	CHECK(c.events[1].member && c.events[1].leader == 0);
	CHECK(c.events[2].member && c.events[2].leader == 0);
	CHECK(!c.events[3].member); /* after the group */
	CHECK(!c.events[4].member); /* a group of one is the event alone */
	CHECK_STR(c.events[1].name, "page-faults");
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("--call-graph", "dwarf,16384")), CLI_RECORD);
	CHECK_EQ_INT(c.call_graph, CALL_GRAPH_DWARF);
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("--call-graph", "dwarf,65528")), CLI_RECORD);
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("--call-graph", "fp")), CLI_RECORD);
	CHECK_EQ_INT(c.call_graph, CALL_GRAPH_FP);
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("-o", "-", "-d", "1")), CLI_RECORD);
	CHECK_STR(c.output, "-");
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("list", "sched")), CLI_LIST);
	CHECK_STR(c.list_filter, "sched");
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("list")), CLI_LIST);
	CHECK(!c.list_filter);
	config__free(&c);
	return true;
}

/* Symbolization options (issue 4). */
static bool symbol_options(void)
{
	struct config c;
	char err[256];

	CHECK_EQ_INT(parse(&c, err, ARGS("-d", "1")), CLI_RECORD);
	CHECK(!c.no_symbol);
	CHECK_EQ_INT(c.ndebuginfo_dirs, 0);
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("--no-symbol", "--debuginfo-dir", "/a",
					 "--debuginfo-dir", "/b/c", "-d", "1")), CLI_RECORD);
	CHECK(c.no_symbol);
	CHECK_EQ_INT(c.ndebuginfo_dirs, 2);
	CHECK_STR(c.debuginfo_dirs[1], "/b/c");
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("--debuginfo-dir", "")), -EINVAL);
	CHECK(strstr(err, "--debuginfo-dir"));
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("--debuginfo-dir")), -EINVAL);
	CHECK(strstr(err, "--debuginfo-dir") && strstr(err, "needs a value"));
	config__free(&c);
	return true;
}

/* --format, and the -o suffix that implies it (issue 14). */
static bool output_format(void)
{
	struct config c;
	char err[256], buf[256];

	CHECK_EQ_INT(parse(&c, err, ARGS("-d", "1")), CLI_RECORD);
	CHECK_EQ_INT(c.format, FORMAT_PPROF);
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("--format", "folded")), CLI_RECORD);
	CHECK_EQ_INT(c.format, FORMAT_FOLDED);
	CHECK_STR(c.output, "pmubpf.folded");
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("-o", "/tmp/x.folded")), CLI_RECORD);
	CHECK_EQ_INT(c.format, FORMAT_FOLDED);
	config__free(&c);
	/* Said outright, the format wins over the suffix. */
	CHECK_EQ_INT(parse(&c, err, ARGS("--format", "pprof", "-o", "/tmp/x.folded")), CLI_RECORD);
	CHECK_EQ_INT(c.format, FORMAT_PPROF);
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("-o", ".folded2")), CLI_RECORD);
	CHECK_EQ_INT(c.format, FORMAT_PPROF);
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("-e", "cpu-clock,task-clock", "-o", "/tmp/x.folded")), CLI_RECORD);
	report__output_path(&c, 1, buf, sizeof(buf));
	CHECK_STR(buf, "/tmp/x.task-clock.folded");
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("--format", "svg")), -EINVAL);
	CHECK(strstr(err, "--format 'svg'") && strstr(err, "pprof or folded"));
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("--http", ":0", "--format", "folded")), -EINVAL);
	CHECK(strstr(err, "--http excludes --format"));
	config__free(&c);
	return true;
}

/* pmubpf top: the record options, one window per --delay, no file. */
static bool live(void)
{
	struct config c;
	char err[256];

	CHECK_EQ_INT(parse(&c, err, ARGS("top")), CLI_TOP);
	CHECK(c.live && c.all);
	CHECK(c.every == 2 && c.window == 2); /* both map sets sized for one delay */
	CHECK_EQ_INT(c.top, 0);                /* rows: fit the terminal */
	config__free(&c);
	CHECK_EQ_INT(parse(&c, err, ARGS("top", "-p", "7", "-e", "task-clock", "--delay", "0.5",
					 "-n", "12", "-d", "3", "-F", "99")), CLI_TOP);
	CHECK(!c.all && c.npids == 1 && c.pids[0] == 7);
	CHECK(c.every == 0.5 && c.window == 0.5 && c.duration == 3);
	CHECK_EQ_INT(c.top, 12);
	CHECK_STR(c.events[0].name, "task-clock");
	config__free(&c);
	const struct { const char *const *args; const char *want; } cases[] = {
		{ ARGS("top", "-o", "x.pb.gz"), "takes no --output" },
		{ ARGS("top", "--every", "5"), "takes no --every" },
		{ ARGS("top", "--top", "5"), "takes no --top" },
		{ ARGS("top", "--http", ":0"), "takes no --http" },
		{ ARGS("top", "--format", "folded"), "takes no --format" },
		{ ARGS("top", "--", "ls"), "takes no command" },
		{ ARGS("top", "--delay", "0.05"), "bad delay" },
		{ ARGS("top", "-n", "0"), "bad row count" },
		{ ARGS("top", "-n"), "needs a value" },
		{ ARGS("--delay", "1"), "--delay belongs to 'pmubpf top'" },
		{ ARGS("-n", "5"), "-n belongs to 'pmubpf top'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = parse(&c, err, cases[i].args);

		if (r != -EINVAL || !strstr(err, cases[i].want)) {
			fprintf(stderr, "case %zu: got %d '%s', want '%s'\n", i, r, err, cases[i].want);
			config__free(&c);
			return false;
		}
		config__free(&c);
	}
	return true;
}

TEST_MAIN("cli", TEST(defaults), TEST(options), TEST(command), TEST(event_lists), TEST(serve), TEST(errors),
	  TEST(map_sizes),
	  TEST(procs_cap), TEST(output_paths), TEST(symbol_options),
	  TEST(perf_habits), TEST(output_format), TEST(list_bounds), TEST(live))
