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

/* What the events attach to. */
struct perfev_progs {
	struct bpf_program *sample;     /* perf_event program: every event but */
	struct bpf_program *tracepoint; /* tracepoints, which take this type */
	int members_fd;                 /* group_members map (PERF_EVENT_ARRAY) */
	int nr_cpus;                    /* its row length: possible CPUs */
};

/* Open and attach everything (group members: opened in their leader's
 * group, not attached, their fds into members_fd). On failure returns
 * NULL with a one-line reason in err (e.g. the event's "not supported on
 * this machine"). */
struct perfev *perfev__open_all(const struct config *cfg, const int *cpus,
				int ncpus, const struct perfev_progs *pp,
				char *err, size_t errlen);
/* Disable every event (samples stop; fds stay for perfev__times). */
void perfev__stop(struct perfev *p);
/* Sum of time_enabled / time_running (ns) over the CPUs of event ev. */
int perfev__times(struct perfev *p, int ev, uint64_t *enabled, uint64_t *running);
void perfev__free(struct perfev *p);
/* Read the kernel's throttle records so far (user/perf/throttle.h): call
 * every few tens of ms while recording. */
void perfev__poll(struct perfev *p);
/* Event ev's throttling (a member: its leader's): times stopped, their
 * ns over the CPUs, and stops whose records a full ring lost. */
void perfev__throttled(struct perfev *p, int ev, uint64_t *episodes, uint64_t *ns, uint64_t *unseen);
/* CPUs where event ev's throttling is not watched (its ring could not be
 * mapped: the locked-memory limit of a user without CAP_IPC_LOCK). */
int perfev__throttle_unwatched(struct perfev *p, int ev);
/* kernel.perf_event_max_sample_rate now (0: unreadable). */
unsigned long perfev__max_sample_rate(void);
/* Number of CPUs the events were opened on (cpu indexes 0..n-1). */
int perfev__ncpus(const struct perfev *p);
/* The number of the CPU of index ci, or -1. */
int perfev__cpu(const struct perfev *p, int ci);
/* PERF_EVENT_IOC_PERIOD on event ev's fd on CPU index ci: 0, -ENOENT if
 * there is no such event (CPU offline), else -errno. The kernel changes
 * the period on the event's CPU: called from another CPU, the caller
 * waits (spinning) for that CPU to take the interrupt. */
int perfev__set_period(struct perfev *p, int ev, int ci, uint64_t period);

/* How ev samples, one line for the profile's comments ("sampling: ..."). */
void perfev__describe(const struct config *cfg, const struct pmubpf_event *ev,
		      char *buf, size_t len);

/* Can ev's samples carry the data address they touched (--data-addr,
 * PERF_SAMPLE_ADDR)? The page-fault software events (the faulting
 * address, on every machine), and hardware events sampled precisely
 * (:p, where Intel PEBS load/store events and AMD IBS op report the
 * address; a precise event that is no memory access gets 0, named
 * "[no address]"), or AMD's ibs_op PMU. */
bool perfev__carries_addr(const struct pmubpf_event *ev);

/* Fill a sampling attr for ev from cfg (period or frequency, precise
 * events get PERF_SAMPLE_CALLCHAIN as the kernel requires for BPF stack
 * helpers). Exposed for tests. */
void perfev__sampling_attr(const struct config *cfg, const struct pmubpf_event *ev,
			   struct perf_event_attr *attr);

#endif
