/* session.h — one recording, from loading BPF to writing the profiles.
 *
 * The orchestration stage, as a `struct session` that goes through named
 * phases, each a function that returns 0 or -1 with a one-line reason in
 * session__error():
 *
 *   session__new     nothing loaded yet
 *   session__open    checks (BTF, targets, output), the BPF object sized
 *                    for the run, loaded, its tracepoints attached, the
 *                    -p/-t targets in its map
 *   session__build   the pipeline behind the ring buffer: symbol cache,
 *                    process registry, debug info, unwinder, notices,
 *                    mmap reports, epoll
 *   session__start   the command (held before its exec), the events, the
 *                    window opened, the timekeeper, kallsyms in a thread,
 *                    the command released
 *   session__step    one pass of the loop (callable per window or tick):
 *                    wait ≤ 100 ms for notices, handle them and the
 *                    per-tick work; SESSION_GOING or why it should end
 *   session__finish  window closed, events stopped, last notices, the
 *                    profiles written; the exit status
 *   session__free    everything released, also after a failed phase
 *
 * session__record strings them together; see docs/architecture.md for the
 * whole data flow.
 */
#ifndef PMUBPF_SESSION_H
#define PMUBPF_SESSION_H

#include <stdbool.h>
#include "config/config.h"

struct session;

/* Why the loop ends (session__step). */
enum session_end {
	SESSION_GOING = 0,     /* not yet */
	SESSION_DEADLINE,      /* -d elapsed */
	SESSION_SIGNAL,        /* SIGINT/SIGTERM (session__stop_signal) */
	SESSION_COMMAND_EXITED,/* `-- command` ended */
	SESSION_TARGETS_EXITED,/* every -p/-t target has exited */
	SESSION_GONE,          /* the caller's gone() said so */
	SESSION_ERROR,         /* waiting for or reading notices failed */
};

/* What one recording gave, for a caller that reports it itself (the HTTP
 * server, user/http/httpd.c). */
struct session_result {
	uint64_t samples;   /* samples in the profiles, every event */
	char err[512];      /* on failure: the one-line reason */
};

/* quiet: nothing to stdout, only warnings to stderr (no summary, no --top
 * table). cfg must outlive the session. NULL + errno. */
struct session *session__new(const struct config *cfg, bool quiet);
int session__open(struct session *s);
int session__build(struct session *s);
int session__start(struct session *s);
enum session_end session__step(struct session *s);
/* Writes the profiles whatever ended the loop (end: what step returned,
 * or SESSION_GONE); samples, if not NULL, gets the samples written. The
 * exit status: 0; 1 on an error (reason in session__error); or the
 * command's status in `-- command` mode (128 + signal if killed). */
int session__finish(struct session *s, enum session_end end, uint64_t *samples);
/* Windows (cfg->every > 0): the recording goes on while what it counted
 * so far is taken out of the kernel (windows.h). session__drain_window
 * closes the window under way (a new one starts at once), adds its counts
 * and losses to d (report_data__init'ed; several windows may go into one
 * d) and empties its maps; span gets its start (wall clock) and length.
 * session__report_in fills in (report.h) for building profiles of data
 * drained from s over span. 0, or -1 with the reason in session__error. */
struct report_data;
struct report_in;
struct session_span {
	int64_t start_wall, duration; /* ns */
	int64_t end;                  /* CLOCK_MONOTONIC ns: the next window's start */
};
int session__drain_window(struct session *s, struct report_data *d, struct session_span *span);
/* Take in the notices waiting in the ring buffer (new processes, label
 * sets), with the kernel's mmap reports before and after them. Safe
 * while profiles are being built from the processes (a windowed
 * recording calls it from report_in.tick, so that a long build does not
 * let the ring buffer fill): a notice only adds processes and label
 * sets, and procs__settle only gives a process waiting for the reports
 * its first maps; nothing a builder holds is changed or freed (re-reads
 * of maps, which do, wait for the next step). session__drain_window
 * takes them in too, and is as safe there. Returns how many notices, or
 * the ring buffer's -errno. */
int session__take_notices(struct session *s);
void session__report_in(struct session *s, const struct session_span *span, struct report_in *in);
/* Once everything drained up to `before` (a span's end, CLOCK_MONOTONIC)
 * is built into profiles: forget the processes that were found dead
 * before it (procs__gc), and the ELF objects (symbols, DWARF, debug
 * files) that no remembered process maps, beyond the SYMCACHE_IDLE_KEEP
 * most recently used, so that a recording of days holds what the live
 * processes need, not all that ever ran. Returns how many; *tracked
 * (if not NULL) gets how many are still held. */
size_t session__gc(struct session *s, int64_t before, size_t *tracked);
/* The symbol cache's counters (elfsym.h). */
struct symcache_stats;
void session__symcache_stats(const struct session *s, struct symcache_stats *st);
/* Every sample of event ev that passed the window and target checks since
 * the start, whatever became of it (BPF's totals map, summed over CPUs):
 * what all windows' samples, counts-map losses and idle samples add up
 * to. 0 or -errno. */
int session__totals(struct session *s, int ev, uint64_t *count, uint64_t *period);
/* Say on stderr, per event, the samples BPF took in all `windows`
 * windows (session__totals): what their profiles must add up to. */
void session__say_totals(struct session *s, int windows);
/* For monitoring (the HTTP server's /metrics): what the recording
 * holds, and its sampling BPF programs (for their run-time stats). */
struct session_sizes {
	size_t procs;                          /* process records */
	size_t symcache_objects, symcache_bytes;
	uint32_t stack_entries, count_entries; /* each window's maps */
	size_t label_sets, label_bytes;        /* label sets held */
	uint64_t label_sets_read, label_sets_over, label_sets_forgotten;
	uint64_t cgroups_named, cgroups_unnamed;
	/* what a fleet's operator alerts on (/metrics): processes' reads
	 * and losses, the caches, the unwind tables' parsing */
	uint64_t proc_notices, proc_maps_reads, proc_gone, proc_over_cap;
	uint64_t reports_lost, image_maps_lost, objs_unreadable;
	uint64_t symcache_hits, symcache_evicted;
	uint64_t unwind_objects, unwind_objects_full, unwind_build_ns;
	int nprogs;                            /* on_sample, on_tracepoint, on_switch */
	int prog_fd[3];
	const char *prog_name[3];
};
void session__sizes(struct session *s, struct session_sizes *z);
/* Sampling over: window closed, events stopped, last notices read (also
 * done by session__finish; once is enough). */
void session__stop(struct session *s);
/* session__finish for a windowed recording, whose last window the caller
 * drained and wrote: the command's exit status, no profile written. */
int session__end(struct session *s);

/* The status a failed phase leaves: 1, or 127 when the command could not
 * be executed. */
int session__status(const struct session *s);
const char *session__error(const struct session *s);
void session__free(struct session *s);

/* Run the recording described by cfg. Returns the process exit status:
 * 0, 1 on an error (printed as one line on stderr), or the command's
 * status in `-- command` mode. */
int session__run(const struct config *cfg);

/* session__run, but nothing goes to stdout and only warnings to stderr:
 * the error in res->err. gone, if not NULL, is asked every ~100 ms while
 * recording: true ends the recording early (whoever wanted it went away).
 * Callable again and again in one process, one recording at a time. */
int session__record(const struct config *cfg, struct session_result *res,
		    bool (*gone)(void *arg), void *arg);

/* What session__open checks before it loads anything: BTF, then
 * targets__check (targets.h). 0, or -errno with a one-line reason. */
int session__check(const struct config *cfg, int **cpus, int *ncpus,
		   char *err, size_t errlen);

/* SIGINT, SIGTERM, SIGHUP and SIGQUIT (session__stop_signals) from now
 * on end the recording under way (or the next one) instead of the
 * process, and SIGPIPE is ignored; session__stop_signal says which
 * arrived, 0 if none. session__start installs this itself once the
 * events are attached; a caller that must hear signals earlier calls it
 * first (and blocks session__stop_signals in its other threads). */
#define SESSION_NSTOP_SIGNALS 4
extern const int session__stop_signals[SESSION_NSTOP_SIGNALS];
void session__catch_signals(void);
int session__stop_signal(void);

/* How long a window lasts: --window if given, else SESSION_WINDOW s,
 * at most --every, and (without --window) no longer than the stacks map
 * holds at one new stack a sample (STACK_ENTRIES_MAX entries, or
 * --stack-map-size), but at least SESSION_WINDOW_MIN. Each window's maps
 * are sized for it and emptied that often. */
#define SESSION_WINDOW 10.0
#define SESSION_WINDOW_MIN 0.5
#define STACK_ENTRIES_MAX 65536
double session__window(const struct config *cfg, int ncpus);
/* Does the recording flip windows: --every, --http, and a one-shot
 * recording longer than a window (or with no -d), whose windows are
 * drained as they end into the one profile built at its end. */
bool session__windowed(const struct config *cfg, int ncpus);
/* The window of an opened session (session__window of its CPUs). */
double session__window_secs(const struct session *s);
/* The window under way's stacks map is half full (as of the last
 * session__take_notices): its driver drains it now, before its time,
 * so that a burst of new stacks (process churn, many CPUs) is not lost
 * to a full map. Cleared by session__drain_window. */
bool session__window_full(const struct session *s);

/* Map sizes derived from -F/-c, -d and the number of CPUs (exposed for
 * tests). */
void session__map_sizes(const struct config *cfg, int ncpus,
			uint32_t *stack_entries, uint32_t *count_entries);
/* The cap on process records for cfg's recording with count_entries in
 * its counts map: those of every window held before a profile is built
 * (all of a one-shot recording's, those before a write for --every,
 * PROCS_MAX for --http). */
size_t session__procs_max(const struct config *cfg, int ncpus, uint32_t count_entries);

#endif
