/* events.h — event strings (perf's spelling) to perf_event_attr.
 *
 * First stage of the pipeline: `-e cache-misses:pp` becomes a
 * struct pmubpf_event that perf_setup opens per CPU. Pure parsing: no
 * perf_event_open here except in event__probe (used by `pmubpf list` and
 * to turn an open failure into a one-line reason).
 */
#ifndef PMUBPF_EVENTS_H
#define PMUBPF_EVENTS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

#define EVENT_NAME_MAX 128
#define OFFCPU_NAME "off-cpu" /* the pseudo-event of off-CPU time */

struct pmubpf_event {
	char name[EVENT_NAME_MAX];   /* as given, modifiers included: "cycles:pp" */
	char base[EVENT_NAME_MAX];   /* canonical name without modifiers:
	                              * "cycles", "LLC-load-misses", "r01c2",
	                              * "cpu/event=0x3c,umask=0x0/" */
	char value_type[EVENT_NAME_MAX]; /* pprof sample_type[1].type:
	                                  * "cpu" for cpu-clock/task-clock,
	                                  * else the base name ("cycles",
	                                  * "cache-misses", "r01c2", ...) */
	char value_unit[32];             /* "nanoseconds" or "count" */
	char file_tag[EVENT_NAME_MAX];   /* filesystem-safe form of name for
	                                  * output file names: "cycles_pp" */
	struct perf_event_attr attr;     /* type, config, config1/2,
	                                  * exclude_user/kernel, precise_ip set;
	                                  * sampling fields are NOT set here */
	bool is_timer;                   /* cpu-clock/task-clock: period in ns */
	bool hardware;                   /* needs a PMU (HARDWARE, HW_CACHE,
	                                  * RAW or a sysfs PMU other than
	                                  * software/tracepoint) */
	bool tracepoint;                 /* "sys:name": PERF_TYPE_TRACEPOINT,
	                                  * sampled every hit (or every -c N)
	                                  * by the tracepoint-type BPF entry */
	bool offcpu;                     /* "off-cpu": no perf_event; BPF
	                                  * weighs every wait of a target
	                                  * thread in ns at sched_switch */
	/* Groups ("{a,b,c}", set by the command line): the leader samples;
	 * each member only counts, and BPF reads its count at every leader
	 * sample. leader is the index (in the config's events) of the
	 * member's leader; meaningless unless member. */
	bool member;
	int leader;
};

/* Parse one event string into *ev. sysfs_root is the directory holding
 * the PMU devices ("/sys/bus/event_source/devices" normally; tests pass a
 * fake tree). Accepted:
 *   cpu-clock task-clock cycles cpu-cycles instructions cache-references
 *   cache-misses branches branch-instructions branch-misses bus-cycles
 *   ref-cycles stalled-cycles-frontend stalled-cycles-backend
 *   page-faults context-switches cpu-migrations minor-faults major-faults
 *   generic cache events: {L1-dcache,L1-icache,LLC,dTLB,iTLB,branch,node}-
 *     {loads,load-misses,stores,store-misses,prefetches,prefetch-misses}
 *   alignment-faults emulation-faults cgroup-switches
 *   rNNNN (hex raw config)
 *   SYS:NAME, a tracepoint (tracefs events/SYS/NAME), e.g. sched:sched_switch
 *   off-cpu, time switched out (no perf_event: type "off-cpu", ns)
 *   PMU/term=value,term=value,.../ with terms from SYSFS/PMU/format/ and
 *     bare event names from SYSFS/PMU/events/
 * each optionally followed by :MODS with MODS from u, k, p (repeatable to
 * 3). Returns 0, or -EINVAL with a one-line reason in err (no trailing
 * newline, no "pmubpf:" prefix), e.g.
 *   "unknown event 'cache-mises' (did you mean 'cache-misses'?)". */
int event__parse(const char *spec, const char *sysfs_root,
		 struct pmubpf_event *ev, char *err, size_t errlen);

/* Closest known event names to a misspelt one, for "did you mean":
 * writes up to 'max' names (Levenshtein distance <= 3) into out. */
int event__suggest(const char *bad, const char **out, int max);

/* Try to open ev as pmubpf would sample it (a sampling period, on this
 * thread, cpu -1, disabled): an event that only counts (msr/tsc/) fails
 * here rather than at record time.
 * Returns 0 if it opens; else -errno with a one-line reason in err:
 *   "not supported on this machine (no hardware PMU, e.g. inside a VM): try -e cpu-clock"
 * for ENOENT/EOPNOTSUPP/ENODEV on hardware events where no cycles counter
 * samples either, "not counted by this machine's PMU: ..." where one
 * does (the PMU lacks this event), and strerror-based text
 * otherwise (EACCES/EPERM: "permission denied: run as root or grant
 * CAP_PERFMON"). */
int event__probe(const struct pmubpf_event *ev, char *err, size_t errlen);

/* Same reason text for an errno from a failed perf_event_open of ev. */
void event__open_error(const struct pmubpf_event *ev, int err_no,
		       char *err, size_t errlen);

/* `pmubpf list [FILTER]`: print every known event (symbolic, cache, each
 * sysfs PMU's events/ aliases and, when asked for, tracepoints) with
 * "available" (opens for sampling) or why not, to stdout. FILTER NULL:
 * everything but tracepoints; "tracepoints": only tracepoints; another
 * word: only events (tracepoints included) whose name contains it.
 * 0, or 1 with a line on stderr when nothing matches the filter. */
int event__list(const char *sysfs_root, const char *filter);

#endif
