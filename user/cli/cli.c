/* cli.c — pmubpf's command line into a struct config.
 *
 * perf's spellings: -e -c -F -p -t -a -C -d -o, `--` before a command.
 * Validation happens here so that later stages can trust the config: a
 * bad value is one line of error text and CLI_RECORD is never returned.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "config/values.h"
#include "perf/perfev.h"
#include "push/push.h"
#include "lib/errmsg.h"

enum {
	OPT_NO_KERNEL = 256, OPT_NO_USER, OPT_INCLUDE_IDLE, OPT_TOP,
	OPT_STACK_MAP, OPT_COUNTS_MAP, OPT_VERSION,
	OPT_NO_SYMBOL = 300, OPT_DEBUGINFO_DIR,
	OPT_CALL_GRAPH = 320, OPT_NO_DITHER,
	OPT_HTTP = 340,
	OPT_EVERY = 341,
	OPT_KEEP = 342,
	OPT_WINDOW = 343,
	OPT_FORMAT = 360,
	OPT_HTTP_TOKEN = 344,
	OPT_DELAY = 380,
	OPT_DATA_ADDR = 400,
	OPT_CGROUP = 420, OPT_CONTAINER,
	OPT_PUSH = 440, OPT_PUSH_SERVICE, OPT_PUSH_HEADER, OPT_PUSH_TOKEN, OPT_PUSH_QUEUE, OPT_OTLP, OPT_PUSH_CA,
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
	{ "every", required_argument, NULL, OPT_EVERY },
	{ "keep", required_argument, NULL, OPT_KEEP },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "http-token-file", required_argument, NULL, OPT_HTTP_TOKEN },
	{ "delay", required_argument, NULL, OPT_DELAY },
	{ "data-addr", no_argument, NULL, OPT_DATA_ADDR },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "container", required_argument, NULL, OPT_CONTAINER },
	{ "push", required_argument, NULL, OPT_PUSH },
	{ "push-service", required_argument, NULL, OPT_PUSH_SERVICE },
	{ "push-header", required_argument, NULL, OPT_PUSH_HEADER },
	{ "push-token-file", required_argument, NULL, OPT_PUSH_TOKEN },
	{ "push-queue", required_argument, NULL, OPT_PUSH_QUEUE },
	{ "otlp", required_argument, NULL, OPT_OTLP },
	{ "push-ca", required_argument, NULL, OPT_PUSH_CA },
	{ "rows", required_argument, NULL, 'n' },
	{ 0 },
};

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

/* One event of a -e list into the config. A group ("{a,b}") arrives as
 * tokens "{a" and "b}": *group is the leader's index while one is open,
 * else -1. */
static int add_event(struct config *cfg, const char *list, char *one, int *group,
		     const char *sysfs_root, char *err, size_t errlen)
{
	char *tok = one, *close;
	bool opens = *tok == '{', closes;
	struct pmubpf_event *ev;

	if (opens) {
		if (*group >= 0)
			return errmsg(err, errlen, "nested '{' in '-e %s'", list);
		tok++;
	}
	close = strchr(tok, '}');
	closes = close != NULL;
	if (closes) {
		if (close[1])
			return errmsg(err, errlen, "group modifiers ('%s') are not supported in '-e %s': the group's first event samples, the others are read at its samples",
					 close + 1, list);
		*close = '\0';
		if (*group < 0 && !opens)
			return errmsg(err, errlen, "'}' without '{' in '-e %s'", list);
	}
	if (strchr(tok, '{') || strchr(tok, '}'))
		return errmsg(err, errlen, "bad group in '-e %s': want {EVENT,EVENT,...}", list);
	if (!*tok)
		return errmsg(err, errlen, "empty event in '-e %s'", list);
	if (cfg->nevents == PMUBPF_MAX_EVENTS)
		return errmsg(err, errlen, "too many events (at most %d)", PMUBPF_MAX_EVENTS);
	ev = &cfg->events[cfg->nevents];
	if (event__parse(tok, sysfs_root, ev, err, errlen))
		return -EINVAL;
	for (int i = 0; i < cfg->nevents; i++)
		if (!strcmp(cfg->events[i].name, ev->name))
			return errmsg(err, errlen, "event '%s' given twice", tok);
	if (*group >= 0) {
		ev->member = true;
		ev->leader = *group;
		if (ev->tracepoint || ev->offcpu)
			return errmsg(err, errlen, "event '%s': %s cannot be in a group (give it its own -e)", tok,
				      ev->offcpu ? "off-cpu" : "a tracepoint");
	} else if (opens && ev->offcpu) {
		return errmsg(err, errlen, "event '%s': off-cpu cannot lead a group (it is measured at context switches, not sampled per CPU)", tok);
	} else if (opens && ev->tracepoint) {
		return errmsg(err, errlen, "event '%s': a tracepoint cannot lead a group (its program runs wherever it fires, not per CPU)", tok);
	} else if (opens) {
		*group = cfg->nevents;
	}
	if (closes)
		*group = -1;
	cfg->nevents++;
	return 0;
}

/* -e LIST: one or more events, comma-separated as perf takes them, groups
 * in braces. */
static int add_events(struct config *cfg, const char *list, const char *sysfs_root,
		      char *err, size_t errlen)
{
	char one[512];
	const char *s = list;
	int r, group = -1;

	if (!*list)
		return errmsg(err, errlen, "empty event list '-e'");
	while ((r = cli__next_event(&s, one, sizeof(one))) > 0)
		if (add_event(cfg, list, one, &group, sysfs_root, err, errlen))
			return -EINVAL;
	if (r < 0)
		return errmsg(err, errlen, "event too long in '-e %.64s...'", list);
	if (s > list && s[-1] == ',')
		return errmsg(err, errlen, "empty event in '-e %s'", list);
	if (group >= 0)
		return errmsg(err, errlen, "unclosed group in '-e %s': want {EVENT,EVENT,...}", list);
	return 0;
}

/* --call-graph MODE[,SIZE] (perf's spelling). */
static int parse_call_graph(struct config *cfg, const char *arg, char *err, size_t errlen)
{
	const char *comma = strchr(arg, ',');
	size_t n = comma ? (size_t)(comma - arg) : strlen(arg);
	uint64_t size;

	if (n == 2 && !strncmp(arg, "fp", 2)) {
		if (comma)
			return errmsg(err, errlen, "bad --call-graph '%s': fp takes no size", arg);
		cfg->call_graph = CALL_GRAPH_FP;
		return 0;
	}
	if (n == 3 && !strncmp(arg, "lbr", 3))
		return errmsg(err, errlen, "--call-graph lbr is not supported: a BPF program can read a sample's last-branch records (bpf_read_branch_records), but pmubpf does not build stacks from them: no machine it is tested on has LBR (use dwarf, the default, or fp)");
	if (n != 5 || strncmp(arg, "dwarf", 5))
		return errmsg(err, errlen, "bad --call-graph '%s': want dwarf[,SIZE], fp (or perf's lbr, not supported)", arg);
#if !defined(__x86_64__)
	return errmsg(err, errlen, "--call-graph dwarf is only implemented on x86-64 (use fp)");
#endif
	/* perf copies SIZE bytes of stack into every sample; pmubpf copies
	 * none (BPF walks the stack from unwind tables), so the size is
	 * checked as perf checks it and otherwise has no effect. */
	if (comma && (values__parse_u64(comma + 1, 8, 65528, &size) || size % 8))
		return errmsg(err, errlen, "bad --call-graph '%s': SIZE is a multiple of 8 in 8..65528 bytes (accepted for perf's habit; pmubpf copies no stack)", arg);
	cfg->call_graph = CALL_GRAPH_DWARF;
	return 0;
}

static int append_pids(const char *s, pid_t **list, int *n)
{
	int *v, cnt, ret;

	ret = values__parse_list(s, &v, &cnt, INT_MAX);
	if (ret)
		return ret;
	for (int i = 0; i < cnt; i++)
		if (v[i] <= 0) {
			free(v);
			return -EINVAL;
		}
	if (cnt > VALUES_LIST_MAX - *n) { /* all -p (-t) options together */
		free(v);
		return -EINVAL;
	}
	/* Exactly sized (config has no capacity field): reallocarray checks
	 * the byte count, the first test the int count. */
	pid_t *nl = cnt > INT_MAX - *n ? NULL : reallocarray(*list, (size_t)*n + cnt, sizeof(pid_t));
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

/* Options about the files a recording writes or serves: not pmubpf
 * top's. */
static bool writes_only(int opt)
{
	return opt == 'o' || opt == OPT_EVERY || opt == OPT_KEEP || opt == OPT_WINDOW ||
	       opt == OPT_FORMAT || opt == OPT_TOP || opt == OPT_HTTP || opt == OPT_HTTP_TOKEN ||
	       opt == OPT_DATA_ADDR;
}

static const char *long_name(int opt)
{
	for (const struct option *o = long_opts; o->name; o++)
		if (o->val == opt)
			return o->name;
	return "?";
}

/* What the profiles' comments say of argument i: secrets a push carries
 * (a --push-header's value, a --push URL's user:password@) shown as
 * "***", the rest as given. */
static void shown_arg(int argc, char **argv, int i, char *buf, size_t len)
{
	const char *a = argv[i];
	bool header = (i > 0 && !strcmp(argv[i - 1], "--push-header")) ||
		      !strncmp(a, "--push-header=", 14);
	bool url = (i > 0 && (!strcmp(argv[i - 1], "--push") || !strcmp(argv[i - 1], "--otlp"))) ||
		   !strncmp(a, "--push=", 7) || !strncmp(a, "--otlp=", 7);
	const char *colon = strchr(a, ':'), *at = strchr(a, '@');

	(void)argc;
	if (header && colon && !(a[0] == '-' && a[1] == '-' && !strchr(a, '=')))
		snprintf(buf, len, "%.*s: ***", (int)(colon - a), a);
	else if (url && at && strstr(a, "://") && strstr(a, "://") < at)
		snprintf(buf, len, "%.*s***%s", (int)(strstr(a, "://") + 3 - a), a, at);
	else
		snprintf(buf, len, "%s", a);
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s, one[4096];

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 8;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		shown_arg(argc, argv, i, one, sizeof(one));
		strncat(s, one, len - strlen(s) - 1);
	}
	return s;
}

int cli__parse(int argc, char **argv, const char *sysfs_root,
	       struct config *cfg, char *err, size_t errlen)
{
	int opt, ret;
	bool freq_given = false, period_given = false, output_given = false;
	bool format_given = false;
	uint64_t v;

	memset(cfg, 0, sizeof(*cfg));
	cfg->output = DEFAULT_OUTPUT;
	cfg->cmdline = join_args(argc, argv);
	if (!cfg->cmdline)
		return errmsg(err, errlen, "out of memory");

	if (argc >= 2 && !strcmp(argv[1], "list")) {
		if (argc > 3)
			return errmsg(err, errlen, "'list' takes at most one argument: tracepoints or a word to look for");
		cfg->list_filter = argc == 3 ? argv[2] : NULL;
		return CLI_LIST;
	}

	if (argc >= 2 && !strcmp(argv[1], "features")) {
		if (argc > 2)
			return errmsg(err, errlen, "'features' takes no arguments");
		return CLI_FEATURES;
	}

	/* `pmubpf top [options]`: the record options, shown live. */
	bool live = argc >= 2 && !strcmp(argv[1], "top");
	bool delay_given = false, rows_given = false;

	if (live) {
		argc--;
		argv++;
		cfg->every = 2;
	}
	optind = 0; /* glibc: 0 re-initialises getopt fully (cli__parse may run twice) */
	opterr = 0;
	/* '+': stop at the first non-option, so `-- cmd -x` keeps its -x. */
	while ((opt = getopt_long(argc, argv, "+e:c:F:p:t:aC:d:o:vhgn:", long_opts, NULL)) != -1) {
		if (live && writes_only(opt))
			return errmsg(err, errlen, "'pmubpf top' takes no --%s: it shows each --delay window's table and writes nothing",
				      long_name(opt));
		switch (opt) {
		case 'e':
			if (add_events(cfg, optarg, sysfs_root, err, errlen))
				return -EINVAL;
			break;
		case 'g':
			break; /* perf's "record stacks": pmubpf always does */
		case 'c':
			if (values__parse_u64(optarg, 1, (1ULL << 62), &v))
				return errmsg(err, errlen, "bad period '-c %s': want a whole number of events >= 1", optarg);
			cfg->period = v;
			period_given = true;
			break;
		case 'F':
			if (values__parse_freq("-F ", optarg, &cfg->freq, err, errlen))
				return -EINVAL;
			freq_given = true;
			break;
		case 'p':
			if (append_pids(optarg, &cfg->pids, &cfg->npids))
				return errmsg(err, errlen, "bad pid list '-p %s': want PID[,PID...], at most %d in all", optarg, VALUES_LIST_MAX);
			break;
		case 't':
			if (append_pids(optarg, &cfg->tids, &cfg->ntids))
				return errmsg(err, errlen, "bad thread list '-t %s': want TID[,TID...], at most %d in all", optarg, VALUES_LIST_MAX);
			break;
		case 'a':
			cfg->all = true;
			break;
		case OPT_CGROUP:
		case OPT_CONTAINER: /* resolved when the recording opens (record/cgfilter.c) */
			if (cfg->ncgroup_args >= PMUBPF_MAX_CGROUPS)
				return errmsg(err, errlen, "at most %d --cgroup and --container options", PMUBPF_MAX_CGROUPS);
			cfg->cgroup_is_container[cfg->ncgroup_args] = opt == OPT_CONTAINER;
			cfg->cgroup_args[cfg->ncgroup_args++] = optarg;
			break;
		case 'C':
			free(cfg->cpus);
			cfg->cpus = NULL;
			if (values__parse_list(optarg, &cfg->cpus, &cfg->ncpus, 65535))
				return errmsg(err, errlen, "bad CPU list '-C %s': want e.g. 0-3,6", optarg);
			cfg->cpus_given = true;
			break;
		case 'd':
			if (values__parse_seconds(optarg, 0, 31536000, &cfg->duration))
				return errmsg(err, errlen, "bad duration '-d %s': want seconds over 0, up to 31536000 (a year), e.g. 10 or 0.5", optarg);
			break;
		case 'o':
			if (!*optarg)
				return errmsg(err, errlen, "empty output path (-o)");
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
				return errmsg(err, errlen, "empty --debuginfo-dir");
			if (cfg->ndebuginfo_dirs == 16)
				return errmsg(err, errlen, "too many --debuginfo-dir (at most 16)");
			nd = reallocarray(cfg->debuginfo_dirs, cfg->ndebuginfo_dirs + 1, sizeof(*nd));
			if (!nd)
				return errmsg(err, errlen, "out of memory");
			cfg->debuginfo_dirs = nd;
			nd[cfg->ndebuginfo_dirs++] = optarg;
			break;
		}
		case OPT_NO_USER:
			cfg->no_user = true;
			break;
		case OPT_CALL_GRAPH:
			if (parse_call_graph(cfg, optarg, err, errlen))
				return -EINVAL;
			break;
		case OPT_INCLUDE_IDLE:
			cfg->include_idle = true;
			break;
		case OPT_NO_DITHER:
			cfg->no_dither = true;
			break;
		case OPT_EVERY:
			if (values__parse_seconds(optarg, 1, 31536000, &cfg->every))
				return errmsg(err, errlen, "bad window '--every %s': want seconds from 1 to 31536000 (a year), e.g. 60", optarg);
			break;
		case OPT_WINDOW:
			if (values__parse_seconds(optarg, 0.1, 3600, &cfg->window))
				return errmsg(err, errlen, "bad window '--window %s': want seconds from 0.1 to 3600, e.g. 10", optarg);
			break;
		case OPT_KEEP: {
			uint64_t n;

			if (values__parse_u64(optarg, 1, 1000000, &n))
				return errmsg(err, errlen, "bad count '--keep %s': want 1..1000000 profiles per event", optarg);
			cfg->keep = (int)n;
			break;
		}
		case OPT_HTTP_TOKEN:
			cfg->http_token_file = optarg;
			break;
		case OPT_PUSH:
		case OPT_OTLP:
			if (strncmp(optarg, "http://", 7) && strncmp(optarg, "https://", 8))
				return errmsg(err, errlen, "bad %s '%s': want the server's address, http://HOST:PORT or https://...",
					      opt == OPT_OTLP ? "--otlp" : "--push", optarg);
			*(opt == OPT_OTLP ? &cfg->otlp_url : &cfg->push_url) = optarg;
			break;
		case OPT_PUSH_SERVICE:
			if (push__check_template(optarg, err, errlen))
				return -1;
			cfg->push_service = optarg;
			break;
		case OPT_PUSH_HEADER: {
			const char *colon = strchr(optarg, ':');

			if (!colon || colon == optarg || strpbrk(optarg, "\r\n"))
				return errmsg(err, errlen, "bad --push-header '%s': want 'Name: value', e.g. 'X-Scope-OrgID: tenant1'", optarg);
			if (cfg->npush_headers == (int)(sizeof(cfg->push_headers) / sizeof(cfg->push_headers[0])))
				return errmsg(err, errlen, "too many --push-header (at most %zu)", sizeof(cfg->push_headers) / sizeof(cfg->push_headers[0]));
			cfg->push_headers[cfg->npush_headers++] = optarg;
			break;
		}
		case OPT_PUSH_TOKEN:
			cfg->push_token_file = optarg;
			break;
		case OPT_PUSH_CA:
			if (access(optarg, R_OK))
				return errmsg(err, errlen, "cannot read --push-ca '%s': %s", optarg, strerror(errno));
			cfg->push_ca = optarg;
			break;
		case OPT_PUSH_QUEUE:
			if (values__parse_seconds(optarg, 0.0625, 65536, &cfg->push_queue_mib))
				return errmsg(err, errlen, "bad --push-queue '%s': want MiB from 0.0625 to 65536, e.g. 64", optarg);
			break;
		case OPT_HTTP: {
			struct listen_addr a;

			if (values__parse_listen(optarg, &a))
				return errmsg(err, errlen, "bad --http '%s': want HOST:PORT, HOST an IP address ([...] for IPv6), localhost or empty for 127.0.0.1, e.g. :6060 or 0.0.0.0:6060", optarg);
			cfg->http = optarg;
			break;
		}
		case OPT_FORMAT:
			if (!strcmp(optarg, "pprof"))
				cfg->format = FORMAT_PPROF;
			else if (!strcmp(optarg, "folded"))
				cfg->format = FORMAT_FOLDED;
			else
				return errmsg(err, errlen, "bad --format '%s': want pprof or folded", optarg);
			format_given = true;
			break;
		case OPT_DELAY:
			if (values__parse_seconds(optarg, 0.1, 3600, &cfg->every))
				return errmsg(err, errlen, "bad delay '--delay %s': want seconds from 0.1 to 3600, e.g. 2", optarg);
			delay_given = true;
			break;
		case 'n':
			if (values__parse_u64(optarg, 1, 1000, &v))
				return errmsg(err, errlen, "bad row count '-n %s': want 1..1000", optarg);
			cfg->top = (int)v;
			rows_given = true;
			break;
		case OPT_DATA_ADDR:
			cfg->data_addr = true;
			break;
		case OPT_TOP:
			if (values__parse_u64(optarg, 1, 1000, &v))
				return errmsg(err, errlen, "bad --top '%s': want 1..1000", optarg);
			cfg->top = (int)v;
			break;
		case OPT_STACK_MAP:
		case OPT_COUNTS_MAP:
			if (values__parse_u64(optarg, 1024, 1u << 24, &v))
				return errmsg(err, errlen, "bad %s '%s': want 1024..16777216 entries",
					    opt == OPT_STACK_MAP ? "--stack-map-size" : "--counts-map-size", optarg);
			if (opt == OPT_STACK_MAP)
				cfg->stack_map_size = (uint32_t)v;
			else
				cfg->counts_map_size = (uint32_t)v;
			break;
		case '?':
		default:
			if (optopt >= 256) /* a long option's missing value */
				return errmsg(err, errlen, "option '%s' needs a value (see --help)", argv[optind - 1]);
			if (optopt && strchr("ecFptCdon", optopt))
				return errmsg(err, errlen, "option '-%c' needs a value (see --help)", optopt);
			if (optopt)
				return errmsg(err, errlen, "unknown option '-%c' (see --help)", optopt);
			return errmsg(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		/* getopt leaves "--" consumed; anything left is the command. */
		if (strcmp(argv[optind - 1], "--") != 0)
			return errmsg(err, errlen, "unexpected argument '%s' (put a command after --)", argv[optind]);
		cfg->command = &argv[optind];
	}
	if (!live && (delay_given || rows_given))
		return errmsg(err, errlen, "%s belongs to 'pmubpf top' (the live view)", delay_given ? "--delay" : "-n");
	if (live && cfg->command)
		return errmsg(err, errlen, "'pmubpf top' takes no command: start it, then pmubpf top -p PID");
	if (period_given && freq_given)
		return errmsg(err, errlen, "-c and -F exclude each other");
	if (!period_given)
		cfg->freq = freq_given ? cfg->freq : DEFAULT_FREQ;
	if (!cfg->call_graph)
		cfg->call_graph = DEFAULT_CALL_GRAPH;
	if (cfg->no_kernel && cfg->no_user)
		return errmsg(err, errlen, "--no-kernel and --no-user leave no stack to record");
	if (cfg->command && (cfg->npids || cfg->ntids || cfg->all))
		return errmsg(err, errlen, "a command excludes -p, -t and -a");
	if (cfg->ncgroup_args && (cfg->command || cfg->npids || cfg->ntids))
		return errmsg(err, errlen, "--cgroup and --container exclude -p, -t and a command (they record every CPU)");
	if (cfg->ncgroup_args)
		cfg->all = true;
	if ((cfg->npids || cfg->ntids) && cfg->all)
		return errmsg(err, errlen, "-a excludes -p and -t");
	/* -o NAME.folded asks for folded stacks; --format says it outright. */
	if (!format_given && output_given) {
		size_t n = strlen(cfg->output), k = strlen(FOLDED_SUFFIX);

		if (n > k && !strcmp(cfg->output + n - k, FOLDED_SUFFIX))
			cfg->format = FORMAT_FOLDED;
	}
	if (cfg->format == FORMAT_FOLDED && !output_given)
		cfg->output = DEFAULT_OUTPUT_FOLDED;
	if (cfg->http) {
		/* Each request says how long, and gets its profile back. */
		if (cfg->command)
			return errmsg(err, errlen, "--http excludes a command (-- ...): serve -a, -p or -t targets");
		if (cfg->duration > 0)
			return errmsg(err, errlen, "--http excludes -d: each request says how long (?seconds=N)");
		if (output_given)
			return errmsg(err, errlen, "--http excludes -o: each request gets its profile back");
		if (cfg->top)
			return errmsg(err, errlen, "--http excludes --top: nothing is printed per request");
		if (format_given)
			return errmsg(err, errlen, "--http excludes --format: requests get pprof profiles");
		if (cfg->data_addr)
			return errmsg(err, errlen, "--http excludes --data-addr: data-address profiles are written to files (-o, --every)");
	} else if (cfg->http_token_file) {
		return errmsg(err, errlen, "--http-token-file needs --http");
	}
	if ((cfg->push_service || cfg->npush_headers || cfg->push_token_file || cfg->push_queue_mib ||
	     cfg->push_ca) && !cfg->push_url && !cfg->otlp_url)
		return errmsg(err, errlen, "--push-service, --push-header, --push-token-file, --push-ca and --push-queue need --push URL or --otlp URL");
	if ((cfg->push_url || cfg->otlp_url) && (cfg->every <= 0 || cfg->live))
		return errmsg(err, errlen, "%s needs --every SEC (each window's profiles are pushed as it ends)",
			      cfg->push_url ? "--push" : "--otlp");
	if (cfg->keep && cfg->every <= 0)
		return errmsg(err, errlen, "--keep needs --every (it bounds the profiles written per window)");
	if (cfg->every > 0 && cfg->http && !cfg->push_url && !cfg->otlp_url)
		return errmsg(err, errlen, "--every excludes --http (the server answers each request with its own window), unless --push or --otlp: then it is their profiles' length");
	if (cfg->keep && cfg->http)
		return errmsg(err, errlen, "--http excludes --keep: the server writes no files");
	if (!cfg->command && !cfg->npids && !cfg->ntids)
		cfg->all = true;
	if (!cfg->nevents) {
		ret = event__parse("cpu-clock", sysfs_root, &cfg->events[0], err, errlen);
		if (ret)
			return -EINVAL;
		cfg->nevents = 1;
	}
	if (!strcmp(cfg->output, "-")) {
		/* stdout carries one profile's bytes and nothing else. */
		if (cfg->nevents > 1)
			return errmsg(err, errlen, "-o - writes one profile to stdout, and %d events make %d (one per event, group members included): give -o FILE",
					 cfg->nevents, cfg->nevents);
		if (cfg->top)
			return errmsg(err, errlen, "-o - excludes --top: stdout carries the profile");
		if (cfg->every > 0)
			return errmsg(err, errlen, "-o - excludes --every: each window is a profile of its own (give -o DIR/ or -o FILE)");
		if (cfg->data_addr)
			return errmsg(err, errlen, "-o - excludes --data-addr: that makes two profiles (give -o FILE)");
	}
	for (int e = 0; cfg->data_addr && e < cfg->nevents; e++)
		if (!cfg->events[e].member && !perfev__carries_addr(&cfg->events[e]))
			return errmsg(err, errlen, "--data-addr: event '%s' carries no data address: use page-faults (minor-faults, major-faults) or a precise memory event such as cpu/mem-loads/pp (Intel) or ibs_op// (AMD)",
				      cfg->events[e].name);
	if (live) {
		/* One window per refresh: both window map sets sized for it. */
		cfg->window = cfg->every;
		cfg->live = true;
		return CLI_TOP;
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
