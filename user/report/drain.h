/* drain.h — read a stopped recording's BPF maps into plain data.
 *
 * The only part of the report that touches BPF: every counts entry, every
 * stack an entry names, and each event's drop counters summed over CPUs
 * go into a struct report_data (entries.h) for build.c.
 */
#ifndef PMUBPF_REPORT_DRAIN_H
#define PMUBPF_REPORT_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include "entries.h"

struct report_maps {
	int counts_fd, stacks_fd, drops_fd; /* the window's counts and stacks */
	uint32_t window;  /* whose drops slots (PMUBPF_DROP_INDEX) */
	int nr_cpus;  /* possible CPUs (per-CPU map values) */
	int nevents;
	bool data;    /* --data-addr: also read data_fd, the window's data map */
	int data_fd;
	bool empty;   /* take the entries out as they are read: the maps are
	               * left empty for the window's next turn */
};

/* Add the maps' contents to d (report_data__init'ed): every stack of the
 * stacks map, then the entries that name them. Entries are appended and
 * drop counters added, so several windows drained into one d make one
 * profile of them all. With m->empty the counts, data and stacks maps
 * are left empty (the drops slots are not). Returns 0, or -errno with a
 * one-line reason in err: a map that cannot be read fully is an error,
 * never a silent zero. A stack the stacks map does not have is left out
 * of d (its samples get a [lost: ... (walk failed)] frame). */
int report__drain(const struct report_maps *m, struct report_data *d, char *err, size_t errlen);

#endif
