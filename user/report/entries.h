/* entries.h — a recording's raw results as plain data: what drain.c reads
 * out of the BPF maps and build.c turns into profiles.
 *
 * Per event: the counts entries (key, value) and the drop counters summed
 * over CPUs; for all events: the stacks the entries name, by key. Nothing
 * here touches BPF, so the unit tests make these up by hand.
 */
#ifndef PMUBPF_REPORT_ENTRIES_H
#define PMUBPF_REPORT_ENTRIES_H

#include <stddef.h>
#include <stdint.h>
#include "pmubpf_abi.h"

struct hashtab;

struct report_entry {
	struct pmubpf_key k;
	struct pmubpf_val v;
	uint64_t addr; /* data entries (--data-addr): the data address; else 0 */
};

struct report_event {
	struct report_entry *v;
	size_t n, cap;
	struct pmubpf_drop_val drops[PMUBPF_DROP__MAX]; /* summed over CPUs */
};

struct report_data {
	struct report_event ev[PMUBPF_MAX_EVENTS];
	/* --data-addr: the data map's entries, per event (their drops stay
	 * in ev[]); the stacks below serve both. */
	struct report_event data[PMUBPF_MAX_EVENTS];
	/* stacks: key -> frames, end to end in one pool as (key, nr,
	 * ips[nr]): a BPF stack value is 1 KiB whatever its depth, so
	 * copies of whole values (~20 frames used) were most of what a
	 * whole-machine recording held while its profile was built. */
	struct hashtab *stack_index; /* key -> offset of its key in pool */
	uint64_t *pool;
	size_t npool, cap_pool;
	size_t nstacks;
	/* report_data__merge's index of the entries by key (made at the
	 * first merge; entries added since are indexed at the next). */
	struct hashtab *entry_index;
	size_t indexed[2][PMUBPF_MAX_EVENTS]; /* [0]: ev, [1]: data */
};

/* 0 or -ENOMEM. report_data__free frees what init and the adds made. */
int report_data__init(struct report_data *d);
void report_data__free(struct report_data *d);
/* Append an entry to event k->event's list: 0, -EINVAL (event out of
 * range) or -ENOMEM. */
int report_data__add_entry(struct report_data *d, const struct pmubpf_key *k,
			   const struct pmubpf_val *v);
/* Append a data entry (the data map's key k, address addr) to event
 * k->event's data list: same returns. */
int report_data__add_data(struct report_data *d, const struct pmubpf_key *k, uint64_t addr,
			  const struct pmubpf_val *v);
/* Keep a copy of stack `key`'s frames (nr <= PMUBPF_MAX_DEPTH, else
 * -EINVAL): 0 or -ENOMEM. A key already there is left as it is. */
int report_data__add_stack(struct report_data *d, uint64_t key, const struct pmubpf_stack *st);
/* One stack's frames, leaf first, as the pool holds them. */
struct report_stack {
	uint64_t nr;
	uint64_t ips[];
};
/* The frames of stack `key`, or NULL if none was added; valid until the
 * next add to d. */
const struct report_stack *report_data__stack(const struct report_data *d, uint64_t key);
/* The addresses a profile of d looks kernel symbols up by: of each
 * kernel stack (kernel addresses have the top bit set), the leaf's own
 * and each caller's return address - 1 (the call, which may be a
 * function's last instruction). Distinct, in no order, in *out (the
 * caller frees it). 0 or -ENOMEM. */
int report_data__kernel_addrs(const struct report_data *d, uint64_t **out, size_t *n);
/* Add src (one window drained) to dst (what a longer span has so far):
 * an entry whose key dst holds gets src's count and period added, the
 * others are appended; src's stacks dst lacks are copied (stack keys are
 * hashes of the frames, the same in every window); drops are summed. So
 * dst stays as large as its distinct keys, however many windows go in.
 * 0, or -ENOMEM with dst holding part of src (the caller drops it). */
int report_data__merge(struct report_data *dst, const struct report_data *src);

#endif
