/* report.h — drain the BPF maps into one pprof profile per event.
 *
 * The last stage of a recording: after the events are disabled, every
 * counts entry becomes a pprof sample (kernel frames, then user frames,
 * leaf first; labels pid, tid, comm and the thread's label set), lost
 * samples become [lost: ...] samples and comments, and each profile is
 * written atomically. A summary goes to stderr, a top-N table to stdout.
 */
#ifndef PMUBPF_REPORT_H
#define PMUBPF_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include "config/config.h"
#include "symbols/ksyms.h"
#include "procs/procs.h"
#include "perf/timekeeper.h"
#include "unwind/unwind.h"

struct report_in {
	const struct config *cfg;
	int counts_fd, stacks_fd, drops_fd;
	int nr_cpus;                  /* possible CPUs (per-CPU map values) */
	struct procs *procs;
	const struct ksyms *ksyms;    /* NULL: kernel frames unsymbolized */
	int64_t time_nanos;           /* wall clock at start */
	int64_t duration_nanos;
	uint64_t enabled[PMUBPF_MAX_EVENTS], running[PMUBPF_MAX_EVENTS];
	uint32_t stack_map_size, counts_map_size;
	const struct unwind_stats *unwind; /* --call-graph dwarf, else NULL */
	const struct timekeeper_stats *timer; /* period dither, NULL: none */
	bool quiet;                   /* no summary on stderr, no --top table */
	uint64_t *samples;            /* if set: += each profile's samples */
};

/* Where event ev's profile goes: cfg->output with one event; with
 * several, "DIR/NAME.TAG.pb.gz" from "DIR/NAME.pb.gz" (or NAME.TAG;
 * NAME.TAG.folded from NAME.folded for --format folded). */
void report__output_path(const struct config *cfg, int ev, char *buf, size_t len);

/* Write every event's profile. Returns 0, or -errno with a one-line
 * reason in err; profiles already written stay (each is complete). */
int report__write_all(const struct report_in *in, char *err, size_t errlen);

#endif
