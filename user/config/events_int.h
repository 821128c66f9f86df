/* events_int.h — the event name tables, shared by events.c (parsing) and
 * events_list.c (`pmubpf list`). Not for other folders. */
#ifndef PMUBPF_EVENTS_INT_H
#define PMUBPF_EVENTS_INT_H

#include <linux/types.h>

struct sym_event {
	const char *name;
	const char *canon;	/* NULL: name is the canonical spelling */
	__u32 type;
	__u64 config;
};

extern const struct sym_event event_syms[]; /* cpu-clock, cycles, ... */
extern const int event_nsym;
extern const char *const event_caches[];    /* LLC-load-misses, ... */
extern const int event_ncache;

#endif
