/* tracefs.h — tracepoint ids from tracefs (events/SYS/NAME/id), for
 * `-e sched:sched_switch` and `pmubpf list tracepoints`. */
#ifndef PMUBPF_TRACEFS_H
#define PMUBPF_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>

/* The directory holding events/: /sys/kernel/tracing, else
 * /sys/kernel/debug/tracing; mounted at the first where neither is (perf
 * does the same: tracepoint ids exist nowhere else). NULL if none. */
const char *tracefs__root(void);
/* Use root instead (tests: a fake tree); NULL: the default again. */
void tracefs__set_root(const char *root);

/* A system or tracepoint name: [A-Za-z0-9_-]+ (never a path). */
bool tracefs__word(const char *s, size_t n);

/* The id of SYS:NAME. 0; -ENOSYS: no tracefs; -ENODEV: no such system;
 * -ENOENT: no such tracepoint in it. */
int tracefs__id(const char *sys, const char *name, unsigned long long *id);

/* Call fn for every SYS:NAME with an id, sorted. 0 or -errno. */
int tracefs__foreach(void (*fn)(const char *sys, const char *name, void *arg), void *arg);

#endif
