// SPDX-License-Identifier: GPL-2.0
/* procgen.bpf.h — process generations: (tgid, pgen) names one address
 * space. A process's first sighting makes its generation (compat.bpf.h's
 * new_pgen) and sends userspace its notice, so that the loader snapshots
 * its mappings while it still exists.
 *
 * Included by pmubpf.bpf.c, offcpu.bpf.h and images.bpf.h.
 */
#ifndef PMUBPF_PROCGEN_BPF_H
#define PMUBPF_PROCGEN_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"
#include "compat.bpf.h"

/* The start time of the current process (its leader's), CLOCK_MONOTONIC. */
static __always_inline __u64 process_start(void)
{
	struct task_struct *task = current_task();

	return BPF_CORE_READ(task, group_leader, start_time);
}

/* The process generation of tgid, announcing a first sighting. An entry
 * of another process that had the pid (its exit leaves the entry, so
 * that the samples the exit still takes keep the image BPF sent) is
 * replaced. */
static __always_inline __u32 process_gen(__u32 maker, __u32 es, __u32 tgid, __u32 tid,
					 __u64 period)
{
	struct pmubpf_seen *s = bpf_map_lookup_elem(&seen, &tgid);
	__u64 start = process_start();

	if (!s || (s->start && s->start != start)) {
		struct pmubpf_seen nv = {
			.pgen = new_pgen(maker, nr_cpus),
			.start = start,
		};
		bpf_map_update_elem(&seen, &tgid, &nv, s ? BPF_EXIST : BPF_NOEXIST);
		s = bpf_map_lookup_elem(&seen, &tgid);
		if (!s) /* LRU could not hold it: treat as unannounced */
			return nv.pgen;
	} else if (!s->start) {
		s->start = start; /* the loader's (-p, read already): this process's */
	}
	if (!s->noticed) {
		/* Several CPUs may race here; duplicates are harmless (the
		 * snapshot is keyed by (tgid, pgen)), misses are retried. */
		if (send_proc_notice(tgid, tid, s->pgen, PMUBPF_NOTICE_PROC))
			count_drop(es, PMUBPF_DROP_NOTICE, period);
		else
			s->noticed = 1;
	}
	return s->pgen;
}

#endif
