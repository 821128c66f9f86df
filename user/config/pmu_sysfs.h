/* pmu_sysfs.h — the "PMU/term=value,.../" event syntax, resolved against
 * sysfs (SYSFS/PMU/type, SYSFS/PMU/format/TERM, SYSFS/PMU/events/ALIAS).
 * Used by events.c; split out to keep that file small.
 */
#ifndef PMUBPF_PMU_SYSFS_H
#define PMUBPF_PMU_SYSFS_H

#include <linux/perf_event.h>
#include <stddef.h>

/* body is "PMU/terms/" (modifiers already removed); spec is the full event
 * string, used in messages. Sets attr->type and config/config1/config2.
 * Returns 0, or a negative errno with a one-line reason in err:
 * unknown PMU, unknown term, value too wide for its field, bad value. */
int pmu_sysfs__parse(const char *sysfs_root, const char *spec,
		     const char *body, struct perf_event_attr *attr,
		     char *err, size_t errlen);

#endif
