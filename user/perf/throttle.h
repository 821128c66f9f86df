/* throttle.h — what the kernel's sample-rate throttle took from each
 * sampled event.
 *
 * A CPU that takes more samples in one tick than
 * kernel.perf_event_max_sample_rate allows (the kernel lowers that rate by
 * itself when sampling interrupts run long) stops the event until the
 * next tick: its counter does not count and no sample comes, while its
 * time_running goes on. BPF never hears of it; the kernel writes a
 * PERF_RECORD_THROTTLE and, at the tick, a PERF_RECORD_UNTHROTTLE into
 * the event's ring buffer, if it has one. So each sampled perf_event gets
 * a small ring (no samples go there: BPF takes them), read here; the
 * stopped time is taken from time_running as multiplexing's is from
 * time_enabled, and the profile says so (docs/architecture.md,
 * "Sampling weights").
 */
#ifndef PMUBPF_THROTTLE_H
#define PMUBPF_THROTTLE_H

#include <stdint.h>

struct throttle;

struct throttle_stats {
	uint64_t episodes;   /* times the kernel stopped the event */
	uint64_t stopped_ns; /* for how long in all, over the CPUs */
	uint64_t unseen;     /* records lost to a full ring: episodes of unknown length */
	int unwatched;       /* CPUs whose ring could not be mapped */
};

/* Watch fds[i] (i < n; -1: none) as the rings of event ev_of[i]. The
 * events must have been opened with use_clockid, CLOCK_MONOTONIC. */
struct throttle *throttle__watch(const int *fds, const int *ev_of, int n, int nevents);
/* Read what the rings hold (call every few tens of ms while recording:
 * a ring holds 128 episodes). */
void throttle__poll(struct throttle *t);
/* Event ev's totals; an episode still open counts until now_mono. */
void throttle__stats(struct throttle *t, int ev, int64_t now_mono, struct throttle_stats *out);
void throttle__free(struct throttle *t);

#endif
