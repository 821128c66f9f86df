/* losses.h — one table of what a recording lost or left out, told twice:
 * as profile comments and as stderr lines, in the same words.
 *
 * Each note is a line such as
 *   lost: 12 samples: counts map full (--counts-map-size 1024 too small)
 * The profile carries it as a comment; stderr says
 *   pmubpf: EVENT: lost: 12 samples: counts map full (...)
 * for the notes marked on_stderr (every loss; a note that only describes,
 * such as the label bookkeeping with nothing rejected, stays in the file).
 */
#ifndef PMUBPF_REPORT_LOSSES_H
#define PMUBPF_REPORT_LOSSES_H

#include <stdbool.h>
#include <stdint.h>
#include "procs/procs.h"
#include "pmubpf_abi.h"

#define REPORT_NOTE_LEN 256
#define REPORT_NOTES_MAX 24

struct report_note {
	char text[REPORT_NOTE_LEN];
	bool on_stderr;
};

struct report_notes {
	struct report_note v[REPORT_NOTES_MAX];
	int n;
};

struct loss_sizes {
	uint32_t counts_map_size, stack_map_size; /* named in the hints */
};

/* How an event's weights are scaled back to the whole: the time its
 * counter was enabled, ran (multiplexed: less) and, of that, was stopped
 * by the kernel's sample-rate throttle (user/perf/throttle.h). */
struct loss_scale {
	uint64_t enabled, running;  /* ns, summed over CPUs; 0: not known */
	uint64_t throttles, throttled_ns, throttles_unseen;
	int unwatched;              /* CPUs whose throttling is not known */
	bool member;                /* a group member: its leader's throttling */
	unsigned long max_rate;     /* kernel.perf_event_max_sample_rate, 0: unknown */
};

/* The factor the weights are multiplied by: enabled / running (the
 * multiplexed counter's share of its time), 1.0 where it always ran.
 * The throttle's stops are said, not scaled up: the rate lost in them is
 * the rate just before each (a CPU over the limit), not the event's mean
 * over the recording, which time alone would assume (on qemu's PMU a
 * 0.36 s command so scaled came out 55% short: the recording's quiet
 * start diluted the mean). */
double report__scale(const struct loss_scale *sc);

/* The notes of one event: its drop counters d (summed over CPUs), its
 * scale (multiplexing, throttling; NULL: none) and the label bookkeeping
 * ps (may be NULL). */
void report__loss_notes(const struct pmubpf_drop_val *d, const struct loss_sizes *sz,
			const struct loss_scale *sc, const struct procs_stats *ps,
			struct report_notes *out);

#endif
