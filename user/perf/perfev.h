/* perfev.h — perf_event_open per (event x CPU) with the BPF program attached.
 *
 * Second stage: after the skeleton is loaded, perfev__open_all opens every
 * event on every selected CPU in sampling mode, attaches on_sample with
 * the event's index as bpf_cookie, and keeps fds and links. At the end,
 * perfev__stop disables them and perfev__times sums time_enabled and
 * time_running per event, which tells whether the kernel multiplexed it.
 */
#ifndef PMUBPF_PERFEV_H
#define PMUBPF_PERFEV_H

#include <stddef.h>
#include <stdint.h>
#include "config/config.h"

struct bpf_program;
struct perfev;

/* Open and attach everything. On failure returns NULL with a one-line
 * reason in err (e.g. the event's "not supported on this machine"). */
struct perfev *perfev__open_all(const struct config *cfg, const int *cpus,
				int ncpus, struct bpf_program *prog,
				char *err, size_t errlen);
/* Disable every event (samples stop; fds stay for perfev__times). */
void perfev__stop(struct perfev *p);
/* Sum of time_enabled / time_running (ns) over the CPUs of event ev. */
int perfev__times(struct perfev *p, int ev, uint64_t *enabled, uint64_t *running);
void perfev__free(struct perfev *p);
/* Number of CPUs the events were opened on (cpu indexes 0..n-1). */
int perfev__ncpus(const struct perfev *p);
/* PERF_EVENT_IOC_PERIOD on event ev's fd on CPU index ci: 0, -ENOENT if
 * there is no such event (CPU offline), else -errno. */
int perfev__set_period(struct perfev *p, int ev, int ci, uint64_t period);

/* Fill a sampling attr for ev from cfg (period or frequency, precise
 * events get PERF_SAMPLE_CALLCHAIN as the kernel requires for BPF stack
 * helpers). Exposed for tests. */
void perfev__sampling_attr(const struct config *cfg, const struct pmubpf_event *ev,
			   struct perf_event_attr *attr);

#endif
