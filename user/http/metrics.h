/* metrics.h — /metrics: what pmubpf's recording and process cost and
 * lost, in Prometheus' text format (version 0.0.4).
 *
 * The recorder fills a struct metrics (recorder.h) as it drains windows;
 * the request's thread adds the process's own CPU time and memory and
 * formats it. Pure but for metrics__self, so the unit test and `promtool
 * check metrics` see the same text the server sends.
 */
#ifndef PMUBPF_HTTP_METRICS_H
#define PMUBPF_HTTP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "pmubpf_abi.h"
#include "push/push.h"

struct metrics {
	int nevents;
	const char *event[PMUBPF_MAX_EVENTS];       /* names, as given to -e */
	/* BPF's running totals: every sample that passed the filters */
	uint64_t samples[PMUBPF_MAX_EVENTS], weight[PMUBPF_MAX_EVENTS];
	/* drop counters of the windows drained so far, summed */
	uint64_t drops[PMUBPF_MAX_EVENTS][PMUBPF_DROP__MAX];
	uint64_t windows;                           /* drained so far */
	uint64_t windows_in_builds;                 /* of which while a profile
	                                             * was being built */
	double window_seconds;                      /* --window */
	size_t procs, symcache_objects, symcache_bytes;
	/* label sets (procs.h: kept per window) and cgroups named */
	size_t label_sets, label_bytes;             /* held now */
	uint64_t label_sets_read, label_sets_over, label_sets_forgotten;
	uint64_t cgroups_named, cgroups_unnamed;
	uint64_t proc_notices, proc_maps_reads, proc_gone, proc_over_cap;
	uint64_t reports_lost, image_maps_lost, objs_unreadable;
	uint64_t symcache_hits, symcache_evicted;
	uint64_t unwind_objects, unwind_objects_full, unwind_build_ns;
	uint32_t stack_entries, count_entries;      /* each window's maps */
	int requests_active;                        /* profile requests */
	uint64_t requests_served;                   /* answered 200 */
	/* BPF programs' run time (bpf_stats on), per program */
	bool bpf_stats;
	int nprogs;
	const char *prog_name[3];
	uint64_t run_time_ns[3], run_cnt[3];
	/* --push (0) and --otlp (1), where given */
	bool pushing[2];
	struct push_stats push[2];
	/* the process itself (metrics__self) */
	double cpu_seconds, start_time_seconds;
	uint64_t rss_bytes, vsize_bytes;
	int threads;
};

/* The process's CPU seconds (user + system, all threads), resident and
 * virtual memory and threads, from getrusage and /proc/self/stat{m,us}. */
void metrics__self(struct metrics *m);

/* Write m in the text format. 0 or -errno (a write error of f). */
int metrics__format(const struct metrics *m, FILE *f);

#endif
