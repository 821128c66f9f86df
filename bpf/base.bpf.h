// SPDX-License-Identifier: GPL-2.0
/* base.bpf.h — what every part of the BPF side stands on: the flags the
 * loader sets before load, the recording window, the recording's maps
 * (each window's stacks and counts, drops, totals, targets, the seen
 * generations, the notices ring; and the few that only userspace or
 * pmubpf.bpf.c's entries touch), and the helpers the parts count with:
 * count_drop, add_count, is_target, and the process notice (fill_notice,
 * send_proc_notice).
 *
 * Included first by pmubpf.bpf.c, and by every part that uses it. It
 * includes compat.bpf.h after the loader's flags, so that they stay first
 * in .rodata (and in the skeleton's rodata struct).
 */
#ifndef PMUBPF_BASE_BPF_H
#define PMUBPF_BASE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "pmubpf_abi.h"

#define EFAULT 14
#define EEXIST 17

/* Set by the loader before load (read-only after). */
const volatile bool filter_targets = false; /* only targets map entries */
const volatile __u32 filter_cgroups = 0;    /* --cgroup/--container: only tasks
					     * under the first N cgroup_targets */
const volatile bool include_idle = false;   /* keep pid 0 samples */
const volatile bool want_user = true;       /* --no-user clears */
const volatile bool want_kernel = true;     /* --no-kernel clears */
const volatile bool follow_forks = false;   /* -- command: add children */
const volatile __u32 nr_events = 1;
/* Groups: leader_of[m] is 1 + the index of event m's leader when m is a
 * group member (it only counts; read at each of its leader's samples),
 * else 0. */
const volatile __u32 leader_of[PMUBPF_MAX_EVENTS] = {};
const volatile bool has_members = false;
const volatile __u32 nr_cpus = 1;    /* possible CPUs: group_members rows */
const volatile __u64 tp_period = 1;  /* a tracepoint sample's weight (-c) */

#include "compat.bpf.h"
#include "execwin.bpf.h"

/* The recording window, set and cleared by userspace through the mmap'd
 * .bss: samples count only between the two stores, however long opening,
 * attaching (event by event, CPU by CPU) and disabling the events take on
 * an overloaded machine (seen: 2 events at 100 kHz in a VM turned a 0.3 s
 * -d into 2-6 s of samples). */
__u32 recording = 0;

/* Which of the two sets of counts/stacks maps (and of drops slots) the
 * samples go to: 0 or 1. Each sample reads it once, at its start, and
 * uses that window for everything it records; userspace flips it, waits
 * for every program that may have read the old value to finish (a
 * map-in-map update is an RCU grace period: see the grace map below) and
 * then drains and clears the old window's maps, so that every sample is
 * counted in exactly one window. A recording that never flips uses
 * window 0 only (window 1's maps are then sized to one entry). */
__u32 window = 0;

/* Stacks keyed by a 64-bit hash of their frames. Not a STACK_TRACE map:
 * that one keys by a hash truncated to the bucket count and refuses (or,
 * with REUSE_STACKID, overwrites) a colliding stack, which by the
 * birthday bound loses stacks long before the map is full. */
#define STACKS_MAP(name)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__type(key, __u64);					\
		__type(value, struct pmubpf_stack);			\
		__uint(max_entries, 16384); /* resized by the loader */	\
	} name SEC(".maps")
STACKS_MAP(stacks0);
STACKS_MAP(stacks1);

/* New stacks stored in each window's stacks map, per CPU: userspace
 * drains a window early once its map is half full (process churn brings
 * a new user stack nearly every sample, and many CPUs fill a map long
 * before the window's time is up). Counted on insert only, so a steady
 * workload, whose stacks repeat, pays nothing. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 2);
} stacks_new SEC(".maps");

/* Per-CPU scratch for the stack being walked (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct pmubpf_stack);
	__uint(max_entries, 1);
} scratch SEC(".maps");

#define COUNTS_MAP(name)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__type(key, struct pmubpf_key);				\
		__type(value, struct pmubpf_val);			\
		__uint(max_entries, 65536); /* resized by the loader */	\
	} name SEC(".maps")
COUNTS_MAP(counts0);
COUNTS_MAP(counts1);

/* Never read by BPF: userspace updates its one slot after flipping the
 * window, because the kernel finishes every map-in-map update with
 * synchronize_rcu() (so that userspace knows no program still uses the
 * old value), and BPF programs, in interrupt and NMI context too, run
 * inside RCU read-side sections: when the update returns, no sample that
 * read the old window is still running. */
struct grace_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} grace_inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct grace_inner);
} grace SEC(".maps") = {
	.values = { &grace_inner },
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct pmubpf_drop_val);
	__uint(max_entries, 2 * PMUBPF_MAX_EVENTS * PMUBPF_DROP__MAX); /* per window */
} drops SEC(".maps");

/* Every sample that passed the window and target checks, per event and
 * CPU, whatever became of it, across windows: the total that the
 * windows' counts, their counts-map and idle drops must add up to (a
 * sample counted in exactly one window), and the running count a
 * terminal status line shows. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct pmubpf_drop_val);
	__uint(max_entries, PMUBPF_MAX_EVENTS);
} totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct pmubpf_target);
	__type(value, __u32); /* enum pmubpf_target_state */
	__uint(max_entries, 65536);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32); /* tgid */
	__type(value, struct pmubpf_seen);
	__uint(max_entries, 65536);
} seen SEC(".maps");

/* Never written by BPF: userspace opens a dummy software event per CPU
 * with attr.mmap2 through this map (libbpf's perf_buffer), and the kernel
 * reports every executable mmap into it (perf's PERF_RECORD_MMAP2), so a
 * library mapped after a process's first sample is read while it exists. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} mmap_events SEC(".maps");

/* Tracepoints: hits since the last sample, per CPU and event (-c N). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, PMUBPF_MAX_EVENTS);
} tp_hits SEC(".maps");

/* -C with tracepoints: tp_cpus[cpu] != 0 for the CPUs wanted (a
 * tracepoint's program runs wherever it fires, not per CPU event). */
const volatile bool tp_filter_cpus = false;
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1); /* resized by the loader: possible CPUs */
} tp_cpus SEC(".maps");

#define NOTICES_BYTES (1024 * 1024)
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, NOTICES_BYTES); /* ~190 label notices in flight */
} notices SEC(".maps");

/* es, "event slot", is window * PMUBPF_MAX_EVENTS + event: the sample's
 * event in the window it counts in (pmubpf_abi.h, PMUBPF_DROP_INDEX). */
static __always_inline void count_drop(__u32 es, __u32 reason, __u64 period)
{
	__u32 idx = es * PMUBPF_DROP__MAX + reason;
	struct pmubpf_drop_val *d = bpf_map_lookup_elem(&drops, &idx);

	if (d) { /* per-CPU slot: no atomics needed */
		d->count += 1;
		d->period += period;
	}
}

/* --cgroup, --container: the cgroups (v2) whose tasks are recorded,
 * descendants too (user/record/cgfilter.c fills it). */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, PMUBPF_MAX_CGROUPS);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_targets SEC(".maps");

/* Is the current task under one of those cgroups? */
static __always_inline bool in_cgroup_targets(void)
{
	for (__u32 i = 0; i < PMUBPF_MAX_CGROUPS; i++) {
		if (i >= filter_cgroups)
			break;
		if (bpf_current_task_under_cgroup(&cgroup_targets, i) == 1)
			return true;
	}
	return false;
}

static __always_inline bool is_target(__u32 tgid, __u32 tid)
{
	struct pmubpf_target t = { .id = tgid, .kind = PMUBPF_TARGET_TGID };
	__u32 *state = bpf_map_lookup_elem(&targets, &t);

	if (state && *state == PMUBPF_TARGET_ACTIVE)
		return true;
	t.id = tid;
	t.kind = PMUBPF_TARGET_TID;
	state = bpf_map_lookup_elem(&targets, &t);
	return state && *state == PMUBPF_TARGET_ACTIVE;
}

/* task_struct's flags and in_execve bit, under a name of our own:
 * vmlinux/vmlinux.h has neither, and a kernel may lack in_execve (then
 * never in exec). */
struct task_struct___exec {
	unsigned int flags;
	unsigned int in_execve : 1;
} __attribute__((preserve_access_index));

#define PMUBPF_PF_EXITING 0x00000004 /* include/linux/sched.h */

/* Is the task between two images, or leaving its last? */
static __always_inline __u32 task_moving(struct task_struct *task)
{
	struct task_struct___exec *t = (void *)task;

	if (BPF_CORE_READ(t, flags) & PMUBPF_PF_EXITING)
		return PMUBPF_NOTICE_F_MOVING;
	if (bpf_core_field_exists(t->in_execve) && BPF_CORE_READ_BITFIELD_PROBED(t, in_execve))
		return PMUBPF_NOTICE_F_MOVING;
	return 0;
}

static __always_inline void fill_notice(struct pmubpf_notice *n, __u32 kind, __u32 tgid,
					__u32 tid, __u32 pgen, __u64 label, __u64 ptr)
{
	struct task_struct *task = current_task();

	n->kind = kind;
	n->tgid = tgid;
	n->tid = tid;
	n->pgen = pgen;
	n->flags = task_moving(task) | (BPF_CORE_READ(task, mm) ? 0 : PMUBPF_NOTICE_F_NOMM);
	if (kind == PMUBPF_NOTICE_PROC && exec_unseen(tgid))
		n->flags |= PMUBPF_NOTICE_F_EXECING | PMUBPF_NOTICE_F_MOVING;
	/* Which files its paths name: the loader asked /proc/PID/ns/mnt at
	 * every new process (a path walk each, under churn). */
	n->mntns = BPF_CORE_READ(task, nsproxy, mnt_ns, ns.inum);
	n->label = label;
	n->label_ptr = ptr;
	n->ts = bpf_ktime_get_ns();
	n->cgroup = bpf_get_current_cgroup_id();
	/* The process's name is its leader's comm, not this thread's. */
	BPF_CORE_READ_STR_INTO(&n->comm, task, group_leader, comm);
}

/* When the last process notice woke the loader (bpf_ktime_get_ns()), and
 * the loader's cadence (it sets it, pmubpf_abi.h; 0: the default). */
__u64 last_notice_wake = 0;
__u64 notice_wake_ns = 0;

/* Tell userspace about a new process. The loader is woken for it at most
 * once per notice_wake_ns (or when the ring is a quarter full): a
 * wakeup per new process cost a machine under process churn more than
 * all the reading it asked for, and the loader, once awake, reads what
 * came since in one batch (it polls again within notice_wake_ns
 * while notices come). Processes gone meanwhile are put together from
 * the kernel's mmap reports (user/procs/maplog.h). */
static __always_inline int send_proc_notice(__u32 tgid, __u32 tid, __u32 pgen, __u32 kind)
{
	struct pmubpf_notice *n = bpf_ringbuf_reserve(&notices, sizeof(*n), 0);
	__u64 wake = notice_wake_ns ? notice_wake_ns : PMUBPF_NOTICE_WAKE_NS;
	__u64 flags = 1; /* BPF_RB_NO_WAKEUP */

	if (!n)
		return -1;
	fill_notice(n, kind, tgid, tid, pgen, 0, 0);
	if (n->ts - last_notice_wake >= wake ||
	    bpf_ringbuf_query(&notices, 0 /* BPF_RB_AVAIL_DATA */) >= NOTICES_BYTES / 4) {
		last_notice_wake = n->ts;
		flags = 2; /* BPF_RB_FORCE_WAKEUP */
	}
	bpf_ringbuf_submit(n, flags);
	return 0;
}

/* counts[key] += {1, period} in window w's map (es: key->event's slot
 * in w). false if the map is full (counted). */
static __always_inline bool add_count(struct pmubpf_key *key, __u32 w, __u32 es, __u64 period)
{
	struct pmubpf_val *val, one = { .count = 1, .period = period };

	val = w ? bpf_map_lookup_elem(&counts1, key) : bpf_map_lookup_elem(&counts0, key);
	if (!val) {
		if (!(w ? bpf_map_update_elem(&counts1, key, &one, BPF_NOEXIST)
			: bpf_map_update_elem(&counts0, key, &one, BPF_NOEXIST)))
			return true;
		/* lost a race */
		val = w ? bpf_map_lookup_elem(&counts1, key) : bpf_map_lookup_elem(&counts0, key);
		if (!val) {
			count_drop(es, PMUBPF_DROP_COUNTS_FULL, period);
			return false;
		}
	}
	__sync_fetch_and_add(&val->count, 1);
	__sync_fetch_and_add(&val->period, period);
	return true;
}

#endif
