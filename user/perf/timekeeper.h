/* timekeeper.h — the recording's clock: the -d deadline and timer dither.
 *
 * One thread, started once the events are attached:
 *  - at the -d deadline it disables every event, whatever the main loop
 *    is busy with, so a slow notice cannot stretch the recording;
 *  - every ~100 ms (at least 20 periods, randomized) it gives each timer
 *    event (cpu-clock, task-clock) on each CPU a fresh period, its rate
 *    5-15% above or below the nominal one. A timer with a fixed period hits the same
 *    phase of any workload that runs in step with it (a loop whose round
 *    is a multiple of the period) and can put every sample in one
 *    function; re-drawing the period (and, since the kernel restarts the
 *    timer on a period change, its phase) turns that lock into the
 *    independent draws the binomial error bars assume. --no-dither keeps
 *    periods fixed, as perf does.
 */
#ifndef PMUBPF_TIMEKEEPER_H
#define PMUBPF_TIMEKEEPER_H

#include <stdbool.h>
#include <stdint.h>
#include "config/config.h"

struct perfev;
struct timekeeper;

struct timekeeper_stats {
	bool dithering;       /* some event's period is re-drawn */
	uint64_t redraws;     /* successful period changes */
	uint64_t failures;    /* refused by the kernel (that fd is left fixed) */
	uint64_t local;       /* of which made from the event's own CPU (no
	                       * cross-CPU call: timekeeper.c, redraw) */
};

/* Start the thread for pev (already attached). deadline: CLOCK_MONOTONIC
 * ns at which to close the window (*recording = 0, the flag the BPF
 * program checks) and disable the events, 0 for none. Returns NULL (and
 * does nothing) when there is neither a deadline nor a timer to dither,
 * or when the thread cannot start (then the caller enforces the deadline). */
struct timekeeper *timekeeper__start(struct perfev *pev, const struct config *cfg,
				     int64_t deadline, uint32_t *recording);
/* True once the deadline has passed and the events are disabled. */
bool timekeeper__fired(struct timekeeper *tk);
/* Stop and join the thread (before the events are freed); tk may be NULL. */
void timekeeper__stop(struct timekeeper *tk, struct timekeeper_stats *st);
/* The counts so far, while the thread runs (a recording of windows
 * describes its dither in every window's profile). */
void timekeeper__stats(struct timekeeper *tk, struct timekeeper_stats *st);

/* The nominal period in ns of a timer event under cfg, 0 if ev is not a
 * timer (its period counts events, not time). */
uint64_t timekeeper__timer_period(const struct config *cfg, const struct pmubpf_event *ev);
/* How long until the next re-draw: uniform in [0.5, 1.5] x max(100 ms,
 * 20 periods). */
uint64_t timekeeper__interval(uint64_t period, uint64_t *rng);
/* A rate deviation: magnitude uniform in [0.05, 0.15], either sign. */
double timekeeper__deviation(uint64_t *rng);
/* The period for a segment of interval ns whose rate deviates by dev:
 * the rate, not the period, is what deviates (so the expected count is
 * linear in dev), shortened by period/(2 interval) to pay back the half
 * period the restart costs on average. Never below the kernel's 10 us
 * floor. */
uint64_t timekeeper__draw(uint64_t period, uint64_t interval, double dev);

#endif
