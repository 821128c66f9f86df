/* status.h — the live one-line status of a recording on a terminal:
 *   pmubpf: 3.2 s, 6391 samples, 0 lost
 * on stderr, rewritten in place (\r) a few times a second, only when
 * stderr is a TTY (never in a pipe or a log). Sample counts come from the
 * BPF totals map (per CPU, per event) and losses from the drops map:
 * small per-CPU array reads per refresh, nothing per sample. */
#ifndef PMUBPF_STATUS_H
#define PMUBPF_STATUS_H

#include <stdint.h>
#include <stdio.h>

struct status;

/* NULL when out is not a terminal (or no memory): then every call below
 * does nothing. */
struct status *status__new(FILE *out, int totals_fd, int drops_fd, int nevents, int nr_cpus);
/* Redraw if at least 250 ms passed since the last one; now and t0 in
 * CLOCK_MONOTONIC ns. */
void status__tick(struct status *s, int64_t t0, int64_t now);
/* Erase the line (before anything else is printed), and free. */
void status__end(struct status *s);

/* The line's text for elapsed ns, samples, lost samples, lost stacks
 * (exposed for tests). */
void status__format(char *buf, size_t len, int64_t elapsed, uint64_t samples,
		    uint64_t lost, uint64_t stacks_lost);

#endif
