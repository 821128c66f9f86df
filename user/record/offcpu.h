/* offcpu.h — the session's side of -e off-cpu (bpf/offcpu.bpf.h).
 *
 * No perf_event: BPF's sched_switch program measures every wait of a
 * target thread. Userspace only configures it before load, tells it when
 * the recording began, and flushes the waits still under way when the
 * recording ends or a window closes (they have no switch-in yet to be
 * counted at).
 */
#ifndef PMUBPF_OFFCPU_H
#define PMUBPF_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>
#include "config/config.h"

struct pmubpf_bpf;

/* Before load: the off-cpu event's index for BPF, and the switch and
 * flush programs loaded only when it is asked for. true if it is. */
bool offcpu__configure(struct pmubpf_bpf *skel, const struct config *cfg);

/* The recording begins at t0 (CLOCK_MONOTONIC ns, BPF's ktime). */
void offcpu__start(struct pmubpf_bpf *skel, int64_t t0);

/* Count every wait under way up to end (CLOCK_MONOTONIC ns) in the
 * current window; restart: they go on from end (a window closes), else
 * the recording is over. 0, or -errno. */
int offcpu__flush(struct pmubpf_bpf *skel, int64_t end, bool restart);

#endif
