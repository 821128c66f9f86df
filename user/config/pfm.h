/* pfm.h — named model-specific PMU events (MEM_LOAD_RETIRED.L3_MISS,
 * INST_RETIRED.ANY_P) through libpfm4, the event tables PAPI and
 * HPCToolkit use.
 *
 * events.c consults this only for names it does not know itself, so
 * every generic, cache, raw, sysfs and tracepoint name keeps its meaning.
 * libpfm4 picks the tables of the host's CPU model (CPUID); the
 * environment variable LIBPFM_FORCE_PMU=MODEL (e.g. skl, icl,
 * amd64_fam19h_zen3) picks another one's, which is how the encodings are
 * tested on a machine without that PMU. libpfm4 is set up once per
 * process, at the first call: it cannot be switched to another model
 * afterwards (its pfm_terminate leaves the old model active).
 */
#ifndef PMUBPF_PFM_H
#define PMUBPF_PFM_H

#include <linux/perf_event.h>
#include <stddef.h>

/* name is the event in libpfm4's syntax, perf's modifiers already
 * removed: "MEM_LOAD_RETIRED.L3_MISS", "INST_RETIRED:ANY_P:c=2:u=1",
 * "INST_RETIRED.ANY_P:precise=2" ('.' or ':' before the unit mask).
 * spec is the whole event string, for messages. Fills attr's type,
 * config, config1/2, exclude_user/kernel/hv and precise_ip (and leaves
 * the sampling fields alone). Returns
 *   1   encoded;
 *   0   libpfm4 names no such event on a core PMU of this model (nor
 *       anything at all: no tables for this CPU): not a named event;
 *   <0  the event exists but the rest is wrong (unit mask, attribute),
 *       or names a PMU pmubpf cannot sample (uncore, RAPL), with a
 *       one-line reason in err. */
int pfm__encode(const char *spec, const char *name, struct perf_event_attr *attr,
		char *err, size_t errlen);

/* The core PMUs libpfm4 found for this CPU (or LIBPFM_FORCE_PMU), as
 * "Intel Skylake (skl)", several joined by ", ". Returns how many
 * (0: buf says why there are none). */
int pfm__host(char *buf, size_t len);

/* One named event of a core PMU, for `pmubpf list`. */
struct pfm_named {
	const char *pmu;      /* libpfm4's PMU name: "skl" */
	const char *pmu_desc; /* "Intel Skylake" */
	const char *name;     /* "MEM_LOAD_RETIRED.L3_MISS", or "EVENT"
	                       * for an event without unit masks */
	const char *desc;     /* the unit mask's (else the event's) text */
};

/* Call fn for every event.umask of every core PMU found, in libpfm4's
 * table order. Returns how many. */
int pfm__foreach(void (*fn)(const struct pfm_named *n, void *arg), void *arg);

#endif
