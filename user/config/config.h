/* config.h — one recording's settings, as the command line set them.
 *
 * Filled by cli__parse, read by every later stage (session, perf events,
 * report). Plain data; the lists are owned by the config.
 */
#ifndef PMUBPF_CONFIG_H
#define PMUBPF_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "events.h"
#include "pmubpf_abi.h"

#define DEFAULT_FREQ 999         /* Hz, every event unless -c/-F */

/* How user stacks are walked (--call-graph, perf's spelling). */
enum call_graph {
	CALL_GRAPH_FP = 1,    /* frame pointers (the kernel's walk) */
	CALL_GRAPH_DWARF = 2, /* .eh_frame tables, unwound in BPF (x86-64) */
};
#if defined(__x86_64__)
#define DEFAULT_CALL_GRAPH CALL_GRAPH_DWARF
#else
#define DEFAULT_CALL_GRAPH CALL_GRAPH_FP
#endif
#define DEFAULT_OUTPUT "pmubpf.pb.gz"

/* What the profile file holds (--format, else the -o suffix). */
enum output_format {
	FORMAT_PPROF = 0, /* gzipped profile.proto */
	FORMAT_FOLDED,    /* folded stacks for FlameGraph/inferno, rooted by comm */
};
#define FOLDED_SUFFIX ".folded"
#define DEFAULT_OUTPUT_FOLDED "pmubpf" FOLDED_SUFFIX

struct config {
	struct pmubpf_event events[PMUBPF_MAX_EVENTS];
	int nevents;

	uint64_t period; /* -c: events per sample (ns for timers); 0 = use freq */
	uint64_t freq;   /* -F: samples per second per CPU */

	pid_t *pids;  int npids;  /* -p */
	pid_t *tids;  int ntids;  /* -t */
	int *cpus;    int ncpus;  /* -C, else every online CPU */
	bool cpus_given;
	bool all;                 /* -a (also the default with no target) */
	/* --cgroup PATH / --container ID (borrowed argv), in order: only the
	 * tasks of those cgroups (v2) and those under them, on every CPU */
	const char *cgroup_args[PMUBPF_MAX_CGROUPS];
	bool cgroup_is_container[PMUBPF_MAX_CGROUPS];
	int ncgroup_args;
	char **command;           /* after --, NULL-terminated; NULL if none */

	double duration;          /* -d seconds; 0 = until Ctrl-C/command exit */
	double every;             /* --every SEC: a profile per window of SEC
	                           * seconds (0: one for the whole recording) */
	double window;            /* --window SEC: with --every or --http, the
	                           * longest the kernel's maps go undrained
	                           * (0: 10 s); they are sized for it */
	int keep;                 /* --keep N: with --every, the newest N
	                           * profiles per event stay on disk (0: all) */
	const char *output;       /* -o; "-": stdout (one event only) */
	int format;               /* enum output_format */
	bool no_kernel, no_user, include_idle;
	bool no_dither;           /* --no-dither: timer periods stay fixed */
	int call_graph;           /* --call-graph: enum call_graph */
	bool no_symbol;           /* --no-symbol: addresses + mappings only */
	bool data_addr;           /* --data-addr: a data-address profile per
	                           * event too (report/dataaddr.c) */
	char **debuginfo_dirs;    /* --debuginfo-dir (repeatable), borrowed argv */
	int ndebuginfo_dirs;
	int verbose;              /* -v count */
	int top;                  /* --top N: print the N hottest functions */
	uint32_t stack_map_size;  /* --stack-map-size, 0 = derived */
	uint32_t counts_map_size; /* --counts-map-size, 0 = derived */
	char *cmdline;            /* pmubpf's own argv joined, for comments */
	const char *http;         /* --http ADDR:PORT: serve pprof, borrowed argv */
	const char *http_token_file; /* --http-token-file: bearer token */
	/* --push URL: each --every window's profiles to a Pyroscope server
	 * (user/push), borrowed argv */
	const char *push_url;
	const char *otlp_url;         /* --otlp URL: the same to an OTel collector */
	const char *push_service;     /* --push-service TEMPLATE, NULL: default */
	const char *push_headers[8];  /* --push-header 'Name: value' */
	int npush_headers;
	const char *push_token_file;  /* --push-token-file: bearer token */
	const char *push_ca;          /* --push-ca FILE: CA certificates for https:// */
	double push_queue_mib;        /* --push-queue MiB, 0: 64 */
	const char *list_filter;  /* pmubpf list WORD, borrowed argv; NULL: all */
	bool live;                /* pmubpf top: windows of `every` seconds
	                           * shown as tables (top rows, 0: fit the
	                           * terminal), no file written */
};

void config__free(struct config *c);

#endif
