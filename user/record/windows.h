/* windows.h — the two sets of maps samples are counted in, alternately.
 *
 * A recording that writes a profile per window, or serves one, must take
 * the aggregated counts out of the kernel while sampling goes on, without
 * losing or double-counting a sample at the boundary. BPF counts every
 * sample in the maps of the window it read at its start (counts0/1,
 * stacks0/1, the drops slots of that window: bpf/base.bpf.h `window`).
 * windows__flip points new samples at the other set and returns once no
 * sample still running can write the old one (a map-in-map update, which
 * the kernel completes with an RCU grace period); the old set is then
 * read at leisure (report) and emptied (windows__clear) before the next
 * flip reuses it.
 */
#ifndef PMUBPF_WINDOWS_H
#define PMUBPF_WINDOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct windows {
	uint32_t *window;        /* the BPF .bss word (mmapped) */
	int grace_fd;            /* ARRAY_OF_MAPS, one slot */
	int grace_inner_fd;      /* what is put into it */
	int counts_fd[2], stacks_fd[2];
	int drops_fd;            /* PMUBPF_DROP_INDEX(window, ev, reason) */
	int stacks_new_fd;       /* per-CPU new stacks stored, per window */
	bool data;               /* --data-addr: data_fd[] are used too */
	int data_fd[2];
	int nr_cpus;             /* possible CPUs (per-CPU values) */
};

/* Samples go to the other window from now on; *closed is the one they
 * left, complete when this returns 0. -errno with a reason in err. */
int windows__flip(const struct windows *w, uint32_t *closed, char *err, size_t errlen);

/* Empty window win's counts, data and stacks maps and zero its drops slots
 * (win must be closed). The drain empties the maps as it reads them
 * (report_maps.empty): here that costs a look at each. 0 or -errno. */
int windows__clear(const struct windows *w, uint32_t win);

/* How many new stacks window win's stacks map took so far (all CPUs):
 * 0 or -errno. */
int windows__stacks_stored(const struct windows *w, uint32_t win, uint64_t *n);

/* Empty a hash map (exposed for tests). 0 or -errno. */
int windows__empty_map(int fd, size_t key_size);

#endif
