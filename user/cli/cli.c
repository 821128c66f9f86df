/* cli.c — pmubpf's command line into a struct config.
 *
 * perf's spellings: -e -c -F -p -t -a -C -d -o, `--` before a command.
 * Validation happens here so that later stages can trust the config: a
 * bad value is one line of error text and CLI_RECORD is never returned.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "http/httpd.h"

enum {
	OPT_NO_KERNEL = 256, OPT_NO_USER, OPT_INCLUDE_IDLE, OPT_TOP,
	OPT_STACK_MAP, OPT_COUNTS_MAP, OPT_VERSION,
	OPT_NO_SYMBOL = 300, OPT_DEBUGINFO_DIR,
	OPT_CALL_GRAPH = 320, OPT_NO_DITHER,
	OPT_HTTP = 340,
};

static const struct option long_opts[] = {
	{ "event", required_argument, NULL, 'e' },
	{ "count", required_argument, NULL, 'c' },
	{ "freq", required_argument, NULL, 'F' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },
	{ "no-symbol", no_argument, NULL, OPT_NO_SYMBOL },
	{ "debuginfo-dir", required_argument, NULL, OPT_DEBUGINFO_DIR },
	{ "no-user", no_argument, NULL, OPT_NO_USER },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "include-idle", no_argument, NULL, OPT_INCLUDE_IDLE },
	{ "no-dither", no_argument, NULL, OPT_NO_DITHER },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "stack-map-size", required_argument, NULL, OPT_STACK_MAP },
	{ "counts-map-size", required_argument, NULL, OPT_COUNTS_MAP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "http", required_argument, NULL, OPT_HTTP },
	{ 0 },
};

void cli__usage(FILE *f)
{
	fputs(
"usage: pmubpf [options] [-- command [args...]]\n"
"       pmubpf --http [HOST]:PORT [options]\n"
"       pmubpf list\n"
"\n"
"Samples stacks system-wide with eBPF on timer or hardware PMU events and\n"
"writes a gzipped pprof profile per event.\n"
"\n"
"Events (repeat -e for several; one profile each):\n"
"  -e, --event EVENT[,EVENT...]\n"
"                        cpu-clock (default), task-clock, cycles, instructions,\n"
"                        cache-references, cache-misses, branches, branch-misses,\n"
"                        bus-cycles, ref-cycles, LLC-loads, LLC-load-misses,\n"
"                        L1-dcache-load-misses, dTLB-load-misses, ..., rNNNN (raw),\n"
"                        PMU/event=0xNN,umask=0xNN/; modifiers :u :k :p :pp :ppp\n"
"  -c, --count PERIOD    sample every PERIOD events (ns for cpu-clock/task-clock)\n"
"  -F, --freq HZ         samples per second per CPU (default 999); 'max': the\n"
"                        kernel's perf_event_max_sample_rate\n"
"      --no-dither       keep timer periods fixed (by default cpu-clock and\n"
"                        task-clock rates are re-drawn 5-15% above or below\n"
"                        nominal every ~100 ms so that no loop can run in step\n"
"                        with them)\n"
"\n"
"Targets (default -a):\n"
"  -a, --all-cpus        whole system\n"
"  -p, --pid PID,...     processes (all their threads, also ones created later)\n"
"  -t, --tid TID,...     threads\n"
"  -C, --cpu LIST        only these CPUs, e.g. 0-3,6\n"
"  -- command args       run it; profile it and every process it starts, until\n"
"                        it exits; pmubpf exits with its status\n"
"\n"
"Recording:\n"
"  -d, --duration SEC    stop after SEC seconds (fractions allowed); Ctrl-C or\n"
"                        SIGTERM also stop and still write the profile\n"
"  -o, --output FILE     profile path (default pmubpf.pb.gz); with several events\n"
"                        the event goes into each name: FILE -> NAME.EVENT.pb.gz\n"
"      --no-kernel       no kernel stacks\n"
"      --no-symbol       addresses and mappings (with build-ids) only: symbolize\n"
"                        later, e.g. go tool pprof -symbolize=local\n"
"      --debuginfo-dir DIR  look for separate debug files in DIR too (by\n"
"                        .build-id/ and .gnu_debuglink); repeatable\n"
"      --no-user         no user stacks\n"
"      --call-graph MODE user stacks by dwarf (.eh_frame unwind tables, in\n"
"                        BPF; the default on x86-64) or fp (frame pointers)\n"
"      --include-idle    keep the idle task's samples (-a leaves them out)\n"
"      --top N           print the N hottest functions of each profile\n"
"      --stack-map-size N, --counts-map-size N\n"
"                        BPF map sizes (default: from -F, -d and CPUs)\n"
"  -g                    accepted for perf's habit: stacks are always recorded\n"
"  -v, --verbose         libbpf and debug output (repeat for more)\n"
"  -h, --help            this text;  --version  the version\n"
"\n"
"Serving pprof over HTTP (like Go's net/http/pprof), until SIGINT/SIGTERM:\n"
"      --http HOST:PORT  GET /debug/pprof/profile?seconds=N records N seconds\n"
"                        (default 30, 1..3600) with the options given here and\n"
"                        answers with the profile; &event=EVENT and &hz=N\n"
"                        replace -e and -F; one recording at a time. HOST empty\n"
"                        or localhost: 127.0.0.1 (0.0.0.0 for every interface);\n"
"                        PORT 0: any free one. Excludes -d, -o, --top and a\n"
"                        command. No authentication: whoever can connect can\n"
"                        profile this machine. e.g. pmubpf --http :6060 -a, then\n"
"                        go tool pprof http://127.0.0.1:6060/debug/pprof/profile\n"
"\n"
"Needs root (or CAP_BPF + CAP_PERFMON) and a kernel with BTF.\n", f);
}

int cli__fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Strictly parse an unsigned decimal in [min, max]. */
static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli__next_event(const char **s, char *buf, size_t len)
{
	const char *p = *s;
	size_t n = 0;
	int slashes = 0;

	if (!*p)
		return 0;
	/* A comma separates events only outside PMU/terms/ (even slashes). */
	for (; *p && !(*p == ',' && slashes % 2 == 0); p++, n++)
		slashes += *p == '/';
	if (n >= len)
		return -EINVAL;
	memcpy(buf, *s, n);
	buf[n] = '\0';
	*s = *p ? p + 1 : p;
	return 1;
}

/* -e LIST: one or more events, comma-separated as perf takes them. */
static int add_events(struct config *cfg, const char *list, const char *sysfs_root,
		      char *err, size_t errlen)
{
	char one[512];
	const char *s = list;
	int r;

	if (!*list)
		return cli__fail(err, errlen, "empty event list '-e'");
	while ((r = cli__next_event(&s, one, sizeof(one))) > 0) {
		if (!one[0])
			return cli__fail(err, errlen, "empty event in '-e %s'", list);
		if (cfg->nevents == PMUBPF_MAX_EVENTS)
			return cli__fail(err, errlen, "too many events (at most %d)", PMUBPF_MAX_EVENTS);
		if (event__parse(one, sysfs_root, &cfg->events[cfg->nevents], err, errlen))
			return -EINVAL;
		for (int i = 0; i < cfg->nevents; i++)
			if (!strcmp(cfg->events[i].name, cfg->events[cfg->nevents].name))
				return cli__fail(err, errlen, "event '%s' given twice", one);
		cfg->nevents++;
	}
	if (r < 0)
		return cli__fail(err, errlen, "event too long in '-e %.64s...'", list);
	if (s > list && s[-1] == ',')
		return cli__fail(err, errlen, "empty event in '-e %s'", list);
	return 0;
}

/* -F max: the kernel's perf_event_max_sample_rate, as perf reads it. */
static int read_max_rate(uint64_t *v)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	unsigned long long r = 0;
	int ok = f && fscanf(f, "%llu", &r) == 1 && r >= 1;

	if (f)
		fclose(f);
	if (!ok)
		return -EINVAL;
	*v = r < CLI_MAX_FREQ ? r : CLI_MAX_FREQ;
	return 0;
}

int cli__parse_seconds(const char *s, double lo, double hi, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || *end || end == s || !isfinite(d) || d <= 0 || d < lo || d > hi)
		return -EINVAL;
	*out = d;
	return 0;
}

int cli__parse_freq(const char *opt, const char *s, uint64_t *hz, char *err, size_t errlen)
{
	if (!strcmp(s, "max")) {
		if (read_max_rate(hz))
			return cli__fail(err, errlen, "%smax: cannot read /proc/sys/kernel/perf_event_max_sample_rate", opt);
	} else if (parse_u64(s, 1, CLI_MAX_FREQ, hz)) {
		return cli__fail(err, errlen, "bad frequency '%s%.64s': want 1..%d Hz or max", opt, s, CLI_MAX_FREQ);
	}
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int cli__parse_list(const char *s, int **out, int *n, int max_value)
{
	char *copy, *tok, *save = NULL;
	int *v = NULL, cnt = 0, cap = 0, ret = 0;

	if (!s || !*s)
		return -EINVAL;
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t lo, hi;
		char *dash = strchr(tok, '-');

		if (dash) {
			*dash = '\0';
			if (parse_u64(tok, 0, max_value, &lo) || parse_u64(dash + 1, 0, max_value, &hi) || hi < lo) {
				ret = -EINVAL;
				goto out;
			}
		} else if (parse_u64(tok, 0, max_value, &lo)) {
			ret = -EINVAL;
			goto out;
		} else {
			hi = lo;
		}
		if (hi - lo >= (uint64_t)(CLI_LIST_MAX - cnt)) {
			ret = -EINVAL;
			goto out;
		}
		for (uint64_t i = lo; i <= hi; i++) {
			if (cnt == cap) {
				int *nv;

				cap = cap ? cap * 2 : 16;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					ret = -ENOMEM;
					goto out;
				}
				v = nv;
			}
			v[cnt++] = (int)i;
		}
	}
	if (!cnt) {
		ret = -EINVAL;
		goto out;
	}
	qsort(v, cnt, sizeof(*v), cmp_int);
	int u = 0;
	for (int i = 0; i < cnt; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	*out = v;
	*n = u;
	v = NULL;
out:
	free(v);
	free(copy);
	return ret;
}

static int append_pids(const char *s, pid_t **list, int *n)
{
	int *v, cnt, ret;

	ret = cli__parse_list(s, &v, &cnt, INT_MAX);
	if (ret)
		return ret;
	for (int i = 0; i < cnt; i++)
		if (v[i] <= 0) {
			free(v);
			return -EINVAL;
		}
	if (cnt > CLI_LIST_MAX - *n) { /* all -p (-t) options together */
		free(v);
		return -EINVAL;
	}
	pid_t *nl = realloc(*list, (*n + cnt) * sizeof(pid_t));
	if (!nl) {
		free(v);
		return -ENOMEM;
	}
	for (int i = 0; i < cnt; i++)
		nl[*n + i] = v[i];
	*list = nl;
	*n += cnt;
	free(v);
	return 0;
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

int cli__parse(int argc, char **argv, const char *sysfs_root,
	       struct config *cfg, char *err, size_t errlen)
{
	int opt, ret;
	bool freq_given = false, period_given = false, output_given = false;
	uint64_t v;

	memset(cfg, 0, sizeof(*cfg));
	cfg->output = DEFAULT_OUTPUT;
	cfg->cmdline = join_args(argc, argv);
	if (!cfg->cmdline)
		return cli__fail(err, errlen, "out of memory");

	if (argc >= 2 && !strcmp(argv[1], "list"))
		return argc == 2 ? CLI_LIST : cli__fail(err, errlen, "'list' takes no arguments");

	optind = 0; /* glibc: 0 re-initialises getopt fully (cli__parse may run twice) */
	opterr = 0;
	/* '+': stop at the first non-option, so `-- cmd -x` keeps its -x. */
	while ((opt = getopt_long(argc, argv, "+e:c:F:p:t:aC:d:o:vhg", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			if (add_events(cfg, optarg, sysfs_root, err, errlen))
				return -EINVAL;
			break;
		case 'g':
			break; /* perf's "record stacks": pmubpf always does */
		case 'c':
			if (parse_u64(optarg, 1, (1ULL << 62), &v))
				return cli__fail(err, errlen, "bad period '-c %s': want a whole number of events >= 1", optarg);
			cfg->period = v;
			period_given = true;
			break;
		case 'F':
			if (cli__parse_freq("-F ", optarg, &cfg->freq, err, errlen))
				return -EINVAL;
			freq_given = true;
			break;
		case 'p':
			if (append_pids(optarg, &cfg->pids, &cfg->npids))
				return cli__fail(err, errlen, "bad pid list '-p %s': want PID[,PID...], at most %d in all", optarg, CLI_LIST_MAX);
			break;
		case 't':
			if (append_pids(optarg, &cfg->tids, &cfg->ntids))
				return cli__fail(err, errlen, "bad thread list '-t %s': want TID[,TID...], at most %d in all", optarg, CLI_LIST_MAX);
			break;
		case 'a':
			cfg->all = true;
			break;
		case 'C':
			free(cfg->cpus);
			cfg->cpus = NULL;
			if (cli__parse_list(optarg, &cfg->cpus, &cfg->ncpus, 65535))
				return cli__fail(err, errlen, "bad CPU list '-C %s': want e.g. 0-3,6", optarg);
			cfg->cpus_given = true;
			break;
		case 'd':
			if (cli__parse_seconds(optarg, 0, 31536000, &cfg->duration))
				return cli__fail(err, errlen, "bad duration '-d %s': want seconds > 0, e.g. 10 or 0.5", optarg);
			break;
		case 'o':
			if (!*optarg)
				return cli__fail(err, errlen, "empty output path (-o)");
			cfg->output = optarg;
			output_given = true;
			break;
		case 'v':
			cfg->verbose++;
			break;
		case 'h':
			return CLI_HELP;
		case OPT_VERSION:
			return CLI_VERSION;
		case OPT_NO_KERNEL:
			cfg->no_kernel = true;
			break;
		case OPT_NO_SYMBOL:
			cfg->no_symbol = true;
			break;
		case OPT_DEBUGINFO_DIR: {
			char **nd;

			if (!*optarg)
				return cli__fail(err, errlen, "empty --debuginfo-dir");
			if (cfg->ndebuginfo_dirs == 16)
				return cli__fail(err, errlen, "too many --debuginfo-dir (at most 16)");
			nd = realloc(cfg->debuginfo_dirs, (cfg->ndebuginfo_dirs + 1) * sizeof(*nd));
			if (!nd)
				return cli__fail(err, errlen, "out of memory");
			cfg->debuginfo_dirs = nd;
			nd[cfg->ndebuginfo_dirs++] = optarg;
			break;
		}
		case OPT_NO_USER:
			cfg->no_user = true;
			break;
		case OPT_CALL_GRAPH:
			if (!strcmp(optarg, "fp")) {
				cfg->call_graph = CALL_GRAPH_FP;
			} else if (!strcmp(optarg, "dwarf")) {
#if !defined(__x86_64__)
				return cli__fail(err, errlen, "--call-graph dwarf is only implemented on x86-64 (use fp)");
#endif
				cfg->call_graph = CALL_GRAPH_DWARF;
			} else {
				return cli__fail(err, errlen, "bad --call-graph '%s': want fp or dwarf", optarg);
			}
			break;
		case OPT_INCLUDE_IDLE:
			cfg->include_idle = true;
			break;
		case OPT_NO_DITHER:
			cfg->no_dither = true;
			break;
		case OPT_HTTP: {
			struct httpd_addr a;

			if (httpd__parse_addr(optarg, &a))
				return cli__fail(err, errlen, "bad --http '%s': want HOST:PORT, HOST an IP address ([...] for IPv6), localhost or empty for 127.0.0.1, e.g. :6060 or 0.0.0.0:6060", optarg);
			cfg->http = optarg;
			break;
		}
		case OPT_TOP:
			if (parse_u64(optarg, 1, 1000, &v))
				return cli__fail(err, errlen, "bad --top '%s': want 1..1000", optarg);
			cfg->top = (int)v;
			break;
		case OPT_STACK_MAP:
		case OPT_COUNTS_MAP:
			if (parse_u64(optarg, 1024, 1u << 24, &v))
				return cli__fail(err, errlen, "bad %s '%s': want 1024..16777216 entries",
					    opt == OPT_STACK_MAP ? "--stack-map-size" : "--counts-map-size", optarg);
			if (opt == OPT_STACK_MAP)
				cfg->stack_map_size = (uint32_t)v;
			else
				cfg->counts_map_size = (uint32_t)v;
			break;
		case '?':
		default:
			if (optopt >= 256) /* a long option's missing value */
				return cli__fail(err, errlen, "option '%s' needs a value (see --help)", argv[optind - 1]);
			if (optopt && strchr("ecFptCdo", optopt))
				return cli__fail(err, errlen, "option '-%c' needs a value (see --help)", optopt);
			if (optopt)
				return cli__fail(err, errlen, "unknown option '-%c' (see --help)", optopt);
			return cli__fail(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		/* getopt leaves "--" consumed; anything left is the command. */
		if (strcmp(argv[optind - 1], "--") != 0)
			return cli__fail(err, errlen, "unexpected argument '%s' (put a command after --)", argv[optind]);
		cfg->command = &argv[optind];
	}
	if (period_given && freq_given)
		return cli__fail(err, errlen, "-c and -F exclude each other");
	if (!period_given)
		cfg->freq = freq_given ? cfg->freq : DEFAULT_FREQ;
	if (!cfg->call_graph)
		cfg->call_graph = DEFAULT_CALL_GRAPH;
	if (cfg->no_kernel && cfg->no_user)
		return cli__fail(err, errlen, "--no-kernel and --no-user leave no stack to record");
	if (cfg->command && (cfg->npids || cfg->ntids || cfg->all))
		return cli__fail(err, errlen, "a command excludes -p, -t and -a");
	if ((cfg->npids || cfg->ntids) && cfg->all)
		return cli__fail(err, errlen, "-a excludes -p and -t");
	if (cfg->http) {
		/* Each request says how long, and gets its profile back. */
		if (cfg->command)
			return cli__fail(err, errlen, "--http excludes a command (-- ...): serve -a, -p or -t targets");
		if (cfg->duration > 0)
			return cli__fail(err, errlen, "--http excludes -d: each request says how long (?seconds=N)");
		if (output_given)
			return cli__fail(err, errlen, "--http excludes -o: each request gets its profile back");
		if (cfg->top)
			return cli__fail(err, errlen, "--http excludes --top: nothing is printed per request");
		if (cfg->nevents > 1)
			return cli__fail(err, errlen, "--http takes one -e (one profile per request; ?event= picks another)");
	}
	if (!cfg->command && !cfg->npids && !cfg->ntids)
		cfg->all = true;
	if (!cfg->nevents) {
		ret = event__parse("cpu-clock", sysfs_root, &cfg->events[0], err, errlen);
		if (ret)
			return -EINVAL;
		cfg->nevents = 1;
	}
	return cfg->http ? CLI_SERVE : CLI_RECORD;
}

void config__free(struct config *c)
{
	free(c->pids);
	free(c->tids);
	free(c->cpus);
	free(c->cmdline);
	free(c->debuginfo_dirs);
	memset(c, 0, sizeof(*c));
}
