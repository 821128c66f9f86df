// SPDX-License-Identifier: GPL-2.0
/* groups.bpf.h — event groups: members counted at their leader's samples.
 *
 * Included by pmubpf.bpf.c. A member of `-e {a,b}` does not sample: at
 * each sample of its leader, BPF reads the member's counter on this CPU
 * and counts its delta since the leader's previous sample there, under
 * the leader's sample key.
 */
#ifndef PMUBPF_GROUPS_BPF_H
#define PMUBPF_GROUPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"

/* Group members' counters, [member * nr_cpus + cpu] (the loader puts
 * each member's per-CPU fd there), and per CPU the value read at the
 * leader's last sample, so that a sample carries the member's count
 * since the one before it on that CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(max_entries, 1); /* resized by the loader */
} group_members SEC(".maps");

struct group_read {
	__u64 last;   /* the member's counter at the previous leader sample */
	__u64 delta;  /* its count since then, for the sample being taken */
	__u32 ok;     /* 1: delta valid; 2: first read (no interval yet);
	               * 0: the read failed */
	__u32 primed; /* last holds a reading */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct group_read);
	__uint(max_entries, PMUBPF_MAX_EVENTS);
} group_last SEC(".maps");

/* Read leader ev's group members on this CPU: each one's count since the
 * leader's previous sample here. Done for every sample, target or not,
 * so that an interval never spans another task's samples. */
static __always_inline void read_members(__u32 ev)
{
	__u32 cpu = bpf_get_smp_processor_id();

	for (__u32 i = 0; i < PMUBPF_MAX_EVENTS; i++) { /* i apart from m: count_members */
		struct bpf_perf_event_value v;
		struct group_read *g;
		__u32 m = i;

		if (i >= nr_events)
			break;
		if (leader_of[i] != ev + 1)
			continue;
		g = bpf_map_lookup_elem(&group_last, &m);
		if (!g)
			continue;
		g->ok = 0;
		if (bpf_perf_event_read_value(&group_members, i * nr_cpus + cpu, &v, sizeof(v)))
			continue;
		/* The first read on a CPU starts the intervals (what came
		 * before it was counted while the events were being set up). */
		g->ok = g->primed && v.counter >= g->last ? 1 : 2;
		g->delta = v.counter - g->last;
		g->last = v.counter;
		g->primed = 1;
	}
}

/* The members' intervals, under the leader's sample key. */
static __always_inline void count_members(struct pmubpf_key *key, __u32 w, __u32 ev)
{
	/* The counter apart from m, whose address the lookups take: the
	 * verifier keeps the stack copy of a variable only as bytes, and a
	 * loop whose counter it cannot see change is refused as infinite. */
	for (__u32 i = 0; i < PMUBPF_MAX_EVENTS; i++) {
		__u32 m = i, es = w * PMUBPF_MAX_EVENTS + i;
		struct pmubpf_drop_val *tot;
		struct group_read *g;

		if (i >= nr_events)
			break;
		if (leader_of[i] != ev + 1)
			continue;
		g = bpf_map_lookup_elem(&group_last, &m);
		if (!g)
			continue;
		if (g->ok != 1) {
			if (!g->ok)
				count_drop(es, PMUBPF_DROP_GROUP_READ, 0);
			continue;
		}
		tot = bpf_map_lookup_elem(&totals, &m);
		if (tot) { /* per-CPU slot */
			tot->count += 1;
			tot->period += g->delta;
		}
		key->event = i;
		add_count(key, w, es, g->delta);
	}
	key->event = ev;
}

#endif
