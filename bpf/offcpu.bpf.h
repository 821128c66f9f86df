// SPDX-License-Identifier: GPL-2.0
/* offcpu.bpf.h — -e off-cpu: how long each thread waited, and where.
 *
 * Included by pmubpf.bpf.c, after the sampling programs, whose pieces it
 * reuses (procgen, labels, stacks and unwind headers). Not sampled: every
 * switch of a target thread is seen.
 *
 * At sched_switch, in the context of the thread being switched out
 * (prev is current), its wait begins: its user and kernel stacks are
 * walked exactly as for a sample, but the frames are kept, with the
 * key's other fields (thread, process generation, label set) and the
 * time, in offcpu_waits[tid]. When the scheduler picks the thread again
 * (next, at a later sched_switch on any CPU) the wait ends: its stacks
 * are stored by content hash in the window of that moment, and
 * counts[key] += {1, now - start}, under the off-cpu event's index, so
 * that reports, windows, labels and losses treat it as any sample whose
 * period is nanoseconds. Frames rather than stack keys are kept because
 * a wait may outlive the window it began in: the window's stacks map is
 * emptied when it closes, and a key would then name nothing.
 *
 * Preempted time counts: a thread switched out while still runnable
 * waits too (for a CPU), so that cpu-clock + off-cpu add up to each
 * thread's wall-clock time. perf's --off-cpu counts only sleeps (state
 * not RUNNING); bcc's offcputime counts every state by default, as here.
 * Its kernel stack tells the two apart (preempt_schedule_*, irqentry_*
 * against the sleeping call).
 *
 * Waits still under way when the recording ends, or when a window
 * closes, are counted up to that moment by offcpu_flush (run by
 * userspace, BPF_PROG_TEST_RUN), and a window's flush restarts them
 * there, so each window holds exactly its own share. A wait that began
 * before the recording has no stack (it cannot be read from outside the
 * thread) and is counted in drops only (PMUBPF_DROP_OFFCPU_UNSEEN).
 */
#ifndef PMUBPF_OFFCPU_BPF_H
#define PMUBPF_OFFCPU_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"
#include "procgen.bpf.h"
#include "labels.bpf.h"
#include "stacks.bpf.h"
#include "unwind.bpf.h"

/* The off-cpu event's index in -e, or PMUBPF_MAX_EVENTS: none (the
 * switch program is then not even loaded). */
const volatile __u32 offcpu_event = PMUBPF_MAX_EVENTS;

/* ustack/kstack of a wait's key: PMUBPF_STACK_WALKED (frames in ust,
 * kst, stored when the wait is counted) or a stack status. */
struct offcpu_wait {
	__u64 start; /* ns (bpf_ktime_get_ns); 0: taken by whoever counts it */
	struct pmubpf_key key;
	struct pmubpf_stack ust, kst;
};

/* Thread id -> its wait under way. Not preallocated: each entry is
 * 2 KiB, and only threads off CPU right now hold one. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct offcpu_wait);
	__uint(max_entries, PMUBPF_OFFCPU_WAITS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} offcpu_waits SEC(".maps");

/* Per-CPU scratch where a wait is put together before it is copied in. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct offcpu_wait);
	__uint(max_entries, 1);
} offcpu_scratch SEC(".maps");

/* When the recording began (ns, bpf_ktime_get_ns's clock), set by
 * userspace: a wait ending without a start counts from there. */
__u64 offcpu_t0 = 0;

/* Count wait w (taken: its start already swapped out) of length ns in
 * the current window. */
static __always_inline void offcpu_count(struct offcpu_wait *w, __u64 ns)
{
	__u32 ev = offcpu_event;
	__u32 win = *(volatile __u32 *)&window & 1; /* once: see base.bpf.h's `window` */
	__u32 es = win * PMUBPF_MAX_EVENTS + ev;
	struct pmubpf_key key = w->key;
	struct pmubpf_drop_val *tot;

	if (ev >= PMUBPF_MAX_EVENTS)
		return;
	tot = bpf_map_lookup_elem(&totals, &ev);
	if (tot) {
		__sync_fetch_and_add(&tot->count, 1); /* the flush runs on any CPU */
		__sync_fetch_and_add(&tot->period, ns);
	}
	if (key.ustack == PMUBPF_STACK_WALKED)
		key.ustack = store_stack(&w->ust, es, PMUBPF_DROP_USTACK, ns);
	if (key.kstack == PMUBPF_STACK_WALKED)
		key.kstack = store_stack(&w->kst, es, PMUBPF_DROP_KSTACK, ns);
	add_count(&key, win, es, ns);
}

/* prev (the current task) stops running: its wait begins. */
static __always_inline void offcpu_begin(void *ctx, __u32 ev, __u64 now)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, zero = 0;
	__u32 es = (*(volatile __u32 *)&window & 1) * PMUBPF_MAX_EVENTS + ev;
	struct offcpu_wait *w;

	if (!tid) /* the idle task does not wait */
		return;
	if (filter_targets && !is_target(tgid, tid))
		return;
	if (filter_cgroups && !in_cgroup_targets())
		return;
	if (tp_filter_cpus) { /* -C: waits that begin on those CPUs */
		__u32 cpu = bpf_get_smp_processor_id();
		__u8 *ok = bpf_map_lookup_elem(&tp_cpus, &cpu);

		if (!ok || !*ok)
			return;
	}
	w = bpf_map_lookup_elem(&offcpu_scratch, &zero);
	if (!w)
		return;
	w->start = now;
	w->key = (struct pmubpf_key){ .event = ev, .tgid = tgid, .tid = tid };
	if (tgid) {
		w->key.pgen = process_gen(PGEN_BY_TP_BTF, es, tgid, tid, 0);
		w->key.label = label_key(es, tgid, tid, w->key.pgen, 0, 0);
	}
	/* The stacks' drops, counted now, have no period yet: 0. */
	if (want_user) {
		__u64 r = ustack_walk(ctx, NULL, es, tgid, w->key.pgen, 0);
		struct pmubpf_stack *st = bpf_map_lookup_elem(&scratch, &zero);

		if (r == PMUBPF_STACK_WALKED && st)
			__builtin_memcpy(&w->ust, st, sizeof(*st));
		w->key.ustack = r == PMUBPF_STACK_WALKED && !st ? PMUBPF_STACK_ERROR : r;
	}
	/* Skip our own two frames (this program and bpf_trace_run4): the
	 * stack then begins in __schedule. */
	if (want_kernel)
		w->key.kstack = walk_stack(ctx, &w->kst, es, 2 & BPF_F_SKIP_FIELD_MASK,
					   PMUBPF_DROP_KSTACK, 0);
	/* Its last wait ended (offcpu_end deleted it): the one update.
	 * Still recorded: the switch that ended it never ran on_switch
	 * (seen on 6.18.44: no run of the program at all for that switch,
	 * and no recursion miss). Its time since its start, or since the
	 * last window's flush, is lost: counted as such, not dropped in
	 * silence by this wait replacing it. */
	long err = bpf_map_update_elem(&offcpu_waits, &tid, w, BPF_NOEXIST);

	if (err == -EEXIST) {
		struct offcpu_wait *stale = bpf_map_lookup_elem(&offcpu_waits, &tid);

		if (stale) {
			__u64 s = __sync_lock_test_and_set(&stale->start, 0);

			if (s && now > s)
				count_drop(es, PMUBPF_DROP_OFFCPU_END_UNSEEN, now - s);
		}
		err = bpf_map_update_elem(&offcpu_waits, &tid, w, BPF_ANY);
	}
	if (err)
		count_drop(es, PMUBPF_DROP_OFFCPU_FULL, 0);
}

/* next is picked to run: its wait, if it began in the recording, ends. */
static __always_inline void offcpu_end(struct task_struct *next, __u32 ev, __u64 now)
{
	__u32 tid = BPF_CORE_READ(next, pid), tgid = BPF_CORE_READ(next, tgid);
	struct offcpu_wait *w;
	__u64 start;

	if (!tid)
		return;
	w = bpf_map_lookup_elem(&offcpu_waits, &tid);
	if (!w) {
		/* A target's wait not seen begin: before the recording (or
		 * the map was full then). Its time in the recording is known,
		 * its stack is not. A thread created since t0 runs for the
		 * first time: no wait. */
		__u32 es = (*(volatile __u32 *)&window & 1) * PMUBPF_MAX_EVENTS + ev;
		__u64 t0 = offcpu_t0;

		if (t0 && now > t0 && BPF_CORE_READ(next, start_time) < t0 &&
		    (!filter_targets || is_target(tgid, tid)) &&
		    !filter_cgroups) /* next is not the current task: its cgroup untold */
			count_drop(es, PMUBPF_DROP_OFFCPU_UNSEEN, now - t0);
		return;
	}
	/* Swapped out: a flush on another CPU may be counting this wait now;
	 * whoever gets the start counts it. */
	start = __sync_lock_test_and_set(&w->start, 0);
	if (start && now > start)
		offcpu_count(w, now - start);
	bpf_map_delete_elem(&offcpu_waits, &tid);
}

#define OFFCPU_TASK_DEAD 0x80 /* include/linux/sched.h TASK_DEAD */

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 ev = offcpu_event;
	__u64 now;

	/* Not recording (before t0, or after the end): nothing begins, and
	 * nothing ends here: the flush at the end counts what was under way
	 * up to the end itself. */
	if (!recording || ev >= PMUBPF_MAX_EVENTS)
		return 0;
	now = bpf_ktime_get_ns();
	/* A thread's last switch, at its exit (do_task_dead), is no wait:
	 * it never comes back. */
	if (!(BPF_CORE_READ(prev, __state) & OFFCPU_TASK_DEAD))
		offcpu_begin(ctx, ev, now);
	offcpu_end(next, ev, now);
	return 0;
}

/* Userspace runs this when the recording ends (restart 0) or a window
 * closes (restart 1): every wait under way is counted up to end (ns,
 * bpf_ktime_get_ns's clock) in the current window, and restarts at end
 * if the recording goes on. */
struct offcpu_flush_args {
	__u64 end;
	__u64 restart;
};

static long flush_one(struct bpf_map *map, __u32 *tid, struct offcpu_wait *w,
		      struct offcpu_flush_args *a)
{
	__u64 start = __sync_lock_test_and_set(&w->start, a->restart ? a->end : 0);

	if (start && a->end > start)
		offcpu_count(w, a->end - start);
	return 0;
}

SEC("syscall")
int offcpu_flush(struct offcpu_flush_args *args)
{
	struct offcpu_flush_args a = { .end = args->end, .restart = args->restart };

	bpf_for_each_map_elem(&offcpu_waits, flush_one, &a, 0);
	return 0;
}

#endif
