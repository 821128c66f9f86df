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
 * Three BTF tracepoints keep that bookkeeping right: exec gives a process
 * a new generation (its mappings changed) and arms `-- command` targets,
 * fork adds children of followed targets, exit forgets the process so a
 * reused pid is never symbolized with a dead process's snapshot.
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

/* Process generations: one counter for all processes, so (tgid, pgen)
 * names one address space for the whole recording. */
__u32 next_pgen = 0;

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

struct label_seen_key {
	__u32 tgid;
	__u32 pgen;
	__u64 label;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct label_seen_key);
	__type(value, __u8);
	__uint(max_entries, 65536);
} seen_labels SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32); /* tgid */
	__type(value, struct pmubpf_label_slot);
	__uint(max_entries, 65536);
} label_slots SEC(".maps");

/* Never written by BPF: userspace opens a dummy software event per CPU
 * with attr.mmap2 through this map (libbpf's perf_buffer), and the kernel
 * reports every executable mmap into it (perf's PERF_RECORD_MMAP2), so a
 * library mapped after a process's first sample is read while it exists. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} mmap_events SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024); /* ~190 label notices in flight */
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

static __always_inline void fill_notice(struct pmubpf_notice *n, __u32 kind, __u32 tgid,
					__u32 tid, __u32 pgen, __u64 label, __u64 ptr)
{
	struct task_struct *task = bpf_get_current_task_btf();

	n->kind = kind;
	n->tgid = tgid;
	n->tid = tid;
	n->pgen = pgen;
	n->label = label;
	n->label_ptr = ptr;
	/* The process's name is its leader's comm, not this thread's. */
	BPF_CORE_READ_STR_INTO(&n->comm, task, group_leader, comm);
}

/* Tell userspace about a process it must (re-)read now. */
static __always_inline int send_proc_notice(__u32 tgid, __u32 tid, __u32 pgen, __u32 kind)
{
	struct pmubpf_notice *n = bpf_ringbuf_reserve(&notices, sizeof(*n), 0);

	if (!n)
		return -1;
	fill_notice(n, kind, tgid, tid, pgen, 0, 0);
	bpf_ringbuf_submit(n, 0);
	return 0;
}

/* Send a copy of label set `id` at `set` (labels ABI v1: its total size
 * is the u32 at byte 16). */
static __always_inline int send_label_notice(__u32 tgid, __u32 tid, __u32 pgen,
					     __u64 id, __u64 set)
{
	struct pmubpf_label_notice *n = bpf_ringbuf_reserve(&notices, sizeof(*n), 0);
	__u32 total = 0;

	if (!n)
		return -1;
	fill_notice(&n->hdr, PMUBPF_NOTICE_LABEL, tgid, tid, pgen, id, set);
	if (bpf_probe_read_user(&total, sizeof(total), (void *)(set + 16)))
		total = 0;
	if (total > PMUBPF_LABEL_SET_MAX)
		total = PMUBPF_LABEL_SET_MAX;
	if (total && bpf_probe_read_user(n->data, total, (void *)set))
		total = 0;
	n->len = total;
	bpf_ringbuf_submit(n, 0);
	return 0;
}

/* The process generation of tgid, announcing a first sighting. */
static __always_inline __u32 process_gen(__u32 es, __u32 tgid, __u32 tid,
					 __u64 period)
{
	struct pmubpf_seen *s = bpf_map_lookup_elem(&seen, &tgid);

	if (!s) {
		struct pmubpf_seen nv = {
			.pgen = __sync_fetch_and_add(&next_pgen, 1) + 1,
		};
		bpf_map_update_elem(&seen, &tgid, &nv, BPF_NOEXIST);
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

/* The thread's label set id, from the slot its process registered. */
static __always_inline __u64 label_key(__u32 es, __u32 tgid, __u32 tid,
				       __u32 pgen, __u64 period)
{
	struct pmubpf_label_slot *slot = bpf_map_lookup_elem(&label_slots, &tgid);
	struct task_struct *task;
	__u64 tp, set = 0, id = 0;

	if (!slot)
		return 0;
	task = bpf_get_current_task_btf();
#if defined(__TARGET_ARCH_x86)
	tp = BPF_CORE_READ(task, thread.fsbase);
#else
	tp = BPF_CORE_READ(task, thread.uw.tp_value);
#endif
	if (!tp || bpf_probe_read_user(&set, sizeof(set), (void *)(tp + slot->tls_offset))) {
		count_drop(es, PMUBPF_DROP_LABEL_READ, period);
		return 0;
	}
	if (!set)
		return 0;
	/* A set starts with its unique id: that, not the address, is the key,
	 * so a freed set whose memory is reused never mislabels. */
	if (bpf_probe_read_user(&id, sizeof(id), (void *)set)) {
		count_drop(es, PMUBPF_DROP_LABEL_READ, period);
		return 0;
	}
	if (!id)
		return 0;

	struct label_seen_key lk = { .tgid = tgid, .pgen = pgen, .label = id };
	__u8 one = 1;
	if (!bpf_map_lookup_elem(&seen_labels, &lk)) {
		if (send_label_notice(tgid, tid, pgen, id, set))
			count_drop(es, PMUBPF_DROP_NOTICE, period);
		else
			bpf_map_update_elem(&seen_labels, &lk, &one, BPF_ANY);
	}
	return id;
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
	return h;
}

/* Walk one stack (user or kernel) and store it by content hash. */
static __always_inline __u64 stack_key(void *ctx, __u32 es, __u64 flags,
				       __u32 reason, __u64 period)
{
	__u32 zero = 0;
	struct pmubpf_stack *st = bpf_map_lookup_elem(&scratch, &zero);
	long n;

	if (!st)
		return PMUBPF_STACK_ERROR;
	n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), flags);
	/* -EFAULT: no such stack (kernel thread; user-mode sample's kernel
	 * side). Not a loss. */
	if (n == -EFAULT || n == 0)
		return PMUBPF_STACK_NONE;
	if (n < 0) {
		count_drop(es, reason, period);
		return PMUBPF_STACK_ERROR;
	}
	st->nr = (__u64)n / sizeof(__u64);
	return store_stack(st, es, reason, period);
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

/* Read leader ev's group members on this CPU: each one's count since the
 * leader's previous sample here. Done for every sample, target or not,
 * so that an interval never spans another task's samples. */
static __always_inline void read_members(__u32 ev)
{
	__u32 cpu = bpf_get_smp_processor_id();

	for (__u32 m = 0; m < PMUBPF_MAX_EVENTS; m++) {
		struct bpf_perf_event_value v;
		struct group_read *g;

		if (m >= nr_events)
			break;
		if (leader_of[m] != ev + 1)
			continue;
		g = bpf_map_lookup_elem(&group_last, &m);
		if (!g)
			continue;
		g->ok = 0;
		if (bpf_perf_event_read_value(&group_members, m * nr_cpus + cpu, &v, sizeof(v)))
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
	for (__u32 m = 0; m < PMUBPF_MAX_EVENTS; m++) {
		__u32 es = w * PMUBPF_MAX_EVENTS + m;
		struct pmubpf_drop_val *tot;
		struct group_read *g;

		if (m >= nr_events)
			break;
		if (leader_of[m] != ev + 1)
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
		key->event = m;
		add_count(key, w, es, g->delta);
	}
	key->event = ev;
}

/* One sample of event ev, from either entry below. regs: the registers
 * of an interrupted user-mode task, else NULL (the unwinder then takes
 * the task's saved user registers). */
static __always_inline int sample(void *ctx, bpf_user_pt_regs_t *regs, __u32 ev, __u64 period)
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
		key.pgen = process_gen(es, tgid, tid, period);
		key.label = label_key(es, tgid, tid, key.pgen, period);
	}
	if (want_user && call_graph_dwarf && tgid)
		key.ustack = dwarf_ustack_key(ctx, regs, es, tgid, key.pgen, period);
	else if (want_user)
		key.ustack = stack_key(ctx, es, BPF_F_USER_STACK, PMUBPF_DROP_USTACK, period);
	if (want_kernel)
		key.kstack = stack_key(ctx, es, 0, PMUBPF_DROP_KSTACK, period);

	add_count(&key, w, es, period);
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
	return sample(ctx, regs, (__u32)bpf_get_attach_cookie(ctx), ctx->sample_period);
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
	__u32 ev = (__u32)bpf_get_attach_cookie(ctx), cpu;
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
	sample(ctx, NULL, ev, tp_period);
	return 0;
}

/* exec: new address space. Forget the snapshot generation and the label
 * slot (both belong to the old image); arm a `-- command` target. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct pmubpf_target t = { .id = tgid, .kind = PMUBPF_TARGET_TGID };
	__u32 *state, active = PMUBPF_TARGET_ACTIVE;

	bpf_map_delete_elem(&seen, &tgid);
	bpf_map_delete_elem(&label_slots, &tgid);
	bpf_map_delete_elem(&unwind_pids, &tgid); /* the old image's tables */
	state = bpf_map_lookup_elem(&targets, &t);
	if (state && *state == PMUBPF_TARGET_AT_EXEC)
		bpf_map_update_elem(&targets, &t, &active, BPF_EXIST);
	return 0;
}

/* fork: a followed target's new process is a target too; it shares the
 * parent's image (until it execs), hence its label slot. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct pmubpf_target t = { .id = ptgid, .kind = PMUBPF_TARGET_TGID };
	struct pmubpf_label_slot *slot;
	__u32 *state;

	if (ptgid == ctgid) /* a new thread, already covered by its tgid */
		return 0;
	slot = bpf_map_lookup_elem(&label_slots, &ptgid);
	if (slot)
		bpf_map_update_elem(&label_slots, &ctgid, slot, BPF_ANY);
	if (!follow_forks)
		return 0;
	state = bpf_map_lookup_elem(&targets, &t);
	if (state && *state == PMUBPF_TARGET_ACTIVE) {
		t.id = ctgid;
		bpf_map_update_elem(&targets, &t, state, BPF_ANY);
	}
	return 0;
}

/* exit of a process's leader: its pid may be reused by another process,
 * which must get a new generation and no inherited slot. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), pid = BPF_CORE_READ(p, pid);

	if (pid != tgid)
		return 0;
	bpf_map_delete_elem(&seen, &tgid);
	bpf_map_delete_elem(&label_slots, &tgid);
	bpf_map_delete_elem(&unwind_pids, &tgid);
	return 0;
}
