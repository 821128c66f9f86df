// SPDX-License-Identifier: GPL-2.0
/* pmubpf.bpf.c — the in-kernel half of pmubpf.
 *
 * on_sample runs on every overflow of every perf_event pmubpf opened (one
 * per event x CPU), in the interrupted task's context. It filters by
 * target, stores the user and kernel stacks in the stacks map (keyed by
 * a hash of their frames), reads the thread's label key, and adds one to counts[{event, tgid, tid, pgen,
 * ustack, kstack, label}] together with the sample's period. Nothing per
 * sample crosses to userspace: only the first sample of a process (or of a
 * label set in a process) sends a notice through the ring buffer, so
 * userspace can snapshot the process's mappings while it still exists.
 *
 * Its parts, included in order: labels.bpf.h (the label set id),
 * unwind.bpf.h (user stacks from .eh_frame tables), groups.bpf.h (group
 * members read at their leader's samples), dataaddr.bpf.h (--data-addr:
 * samples by data address), lifecycle.bpf.h (exec, fork and exit
 * tracepoints: process generations, `-- command` targets), offcpu.bpf.h
 * (-e off-cpu: the scheduler's switches, each wait weighed in nanoseconds
 * by the stack it blocked with).
 *
 * Every way to lose something is counted in drops (per CPU, per event).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "pmubpf_abi.h"

#define EFAULT 14
#define EEXIST 17

char LICENSE[] SEC("license") = "GPL"; /* bpf_get_stackid is GPL-only */

/* Set by the loader before load (read-only after). */
const volatile bool filter_targets = false; /* only targets map entries */
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
	/* Which files its paths name: the loader asked /proc/PID/ns/mnt at
	 * every new process (a path walk each, under churn). */
	n->mntns = BPF_CORE_READ(task, nsproxy, mnt_ns, ns.inum);
	n->label = label;
	n->label_ptr = ptr;
	n->ts = bpf_ktime_get_ns();
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

#include "labels.bpf.h"

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

/* Store the stack in scratch st (st->nr frames) by content hash. */
static __always_inline __u64 store_stack(struct pmubpf_stack *st, __u32 es,
					 __u32 reason, __u64 period)
{
	__u64 h = 0xcbf29ce484222325ULL; /* FNV offset basis */

	if (!st->nr)
		return PMUBPF_STACK_NONE;
	for (int i = 0; i < PMUBPF_MAX_DEPTH; i++) {
		if (i >= st->nr)
			break;
		h = (h ^ st->ips[i]) * 0x100000001b3ULL; /* FNV-1a, per word */
		h ^= h >> 29;
	}
	h |= PMUBPF_STACK_KEY_MIN;
	/* One helper call per map, each with a constant map: the verifier
	 * needs to know which map a call touches. */
	bool w1 = es >= PMUBPF_MAX_EVENTS;
	if (w1 ? bpf_map_lookup_elem(&stacks1, &h) : bpf_map_lookup_elem(&stacks0, &h))
		return h;
	/* -EEXIST means another CPU stored it first: fine. */
	long err = w1 ? bpf_map_update_elem(&stacks1, &h, st, BPF_NOEXIST)
		      : bpf_map_update_elem(&stacks0, &h, st, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		count_drop(es, reason, period);
		return PMUBPF_STACK_LOST;
	}
	if (!err) {
		__u32 k = w1;
		__u64 *n = bpf_map_lookup_elem(&stacks_new, &k);

		if (n)
			*n += 1;
	}
	return h;
}

/* store_stack of the per-CPU scratch stack, as a global function: the
 * verifier checks its hash loop (up to PMUBPF_MAX_DEPTH turns) once, not
 * at each of its callers in each of their states. */
__noinline __u64 pmubpf_store_scratch(__u32 es, __u32 reason, __u64 period)
{
	__u32 zero = 0;
	struct pmubpf_stack *st = bpf_map_lookup_elem(&scratch, &zero);

	return st ? store_stack(st, es, reason, period) : PMUBPF_STACK_ERROR;
}

/* Walk one stack (user or kernel) into st. PMUBPF_STACK_WALKED if st
 * now holds its frames, else the status to record in their place. */
#define PMUBPF_STACK_WALKED PMUBPF_STACK_KEY_MIN
static __always_inline __u64 walk_stack(void *ctx, struct pmubpf_stack *st, __u32 es,
					__u64 flags, __u32 reason, __u64 period)
{
	long n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), flags);

	/* -EFAULT: no such stack (kernel thread; user-mode sample's kernel
	 * side). Not a loss. */
	if (n == -EFAULT || n == 0)
		return PMUBPF_STACK_NONE;
	if (n < 0) {
		count_drop(es, reason, period);
		return PMUBPF_STACK_ERROR;
	}
	st->nr = (__u64)n / sizeof(__u64);
	return PMUBPF_STACK_WALKED;
}

/* Walk one stack (user or kernel) and store it by content hash. */
static __always_inline __u64 stack_key(void *ctx, __u32 es, __u64 flags,
				       __u32 reason, __u64 period)
{
	__u32 zero = 0;
	struct pmubpf_stack *st = bpf_map_lookup_elem(&scratch, &zero);
	__u64 r;

	if (!st)
		return PMUBPF_STACK_ERROR;
	r = walk_stack(ctx, st, es, flags, reason, period);
	return r == PMUBPF_STACK_WALKED ? pmubpf_store_scratch(es, reason, period) : r;
}

#include "unwind.bpf.h"

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

#include "groups.bpf.h"
#include "dataaddr.bpf.h"

/* One sample of event ev, from either entry below (maker: which one,
 * for the process generations it makes: compat.bpf.h). regs: the registers
 * of an interrupted user-mode task, else NULL (the unwinder then takes
 * the task's saved user registers). addr: the sample's data address
 * (--data-addr), 0 if none. */
static __always_inline int sample(__u32 maker, void *ctx, bpf_user_pt_regs_t *regs, __u32 ev, __u64 period,
				  __u64 addr)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u32 w = *(volatile __u32 *)&window & 1; /* once: see `window` */
	__u32 es = w * PMUBPF_MAX_EVENTS + ev;
	struct pmubpf_key key = {};

	if (ev >= nr_events || ev >= PMUBPF_MAX_EVENTS)
		return 0;
	if (has_members)
		read_members(ev);
	if (!recording)
		return 0;
	if (filter_targets && !is_target(tgid, tid))
		return 0;
	struct pmubpf_drop_val *tot = bpf_map_lookup_elem(&totals, &ev);
	if (tot) { /* per-CPU slot: no atomics needed */
		tot->count += 1;
		tot->period += period;
	}
	if (tgid == 0 && !include_idle) {
		count_drop(es, PMUBPF_DROP_IDLE, period);
		return 0;
	}

	key.event = ev;
	key.tgid = tgid;
	key.tid = tid;
	if (tgid) { /* first: the DWARF unwinder checks the generation */
		key.pgen = process_gen(maker, es, tgid, tid, period);
		key.label = label_key(es, tgid, tid, key.pgen, period);
	}
	if (want_user)
		key.ustack = ustack_key(ctx, regs, es, tgid, key.pgen, period);
	if (want_kernel)
		key.kstack = stack_key(ctx, es, 0, PMUBPF_DROP_KSTACK, period);

	add_count(&key, w, es, period);
	if (data_events)
		count_data(&key, addr, w, es, period);
	if (has_members)
		count_members(&key, w, ev);
	return 0;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	bpf_user_pt_regs_t *regs = NULL;

#if defined(__TARGET_ARCH_x86)
	if ((ctx->regs.cs & 3) == 3)
		regs = &ctx->regs;
#endif
	return sample(PGEN_BY_SAMPLE, ctx, regs, event_of(ctx), ctx->sample_period,
		      data_events ? ctx->addr : 0);
}

/* Tracepoint events: the kernel attaches only tracepoint-type programs
 * to them, and runs them at every hit of the tracepoint on any CPU, once
 * (the program belongs to the tracepoint, not to one perf event: the
 * loader attaches it to one event per tracepoint), before and instead of
 * perf's own sampling (returning 0 skips that). Their ctx is the trace
 * record, not the registers; the task is in the kernel, so the user
 * stack starts from its saved user registers. A sample every tp_period
 * hits per CPU, each weighing that many. */
SEC("tracepoint")
int on_tracepoint(void *ctx)
{
	__u32 ev = event_of(ctx), cpu;
	__u64 *hits;

	if (!recording || ev >= PMUBPF_MAX_EVENTS)
		return 0;
	if (tp_filter_cpus) {
		__u8 *ok;

		cpu = bpf_get_smp_processor_id();
		ok = bpf_map_lookup_elem(&tp_cpus, &cpu);
		if (!ok || !*ok)
			return 0;
	}
	hits = bpf_map_lookup_elem(&tp_hits, &ev);
	if (!hits)
		return 0;
	if (++*hits < tp_period)
		return 0;
	*hits = 0;
	sample(PGEN_BY_TRACEPOINT, ctx, NULL, ev, tp_period, 0);
	return 0;
}

#include "offcpu.bpf.h"
#include "images.bpf.h"
#include "lifecycle.bpf.h"
