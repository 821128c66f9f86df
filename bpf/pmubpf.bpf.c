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
 * It is the top of bpf/: it holds sample() and its two entries, on_sample
 * and on_tracepoint, and includes the parts, each a header that includes
 * what it uses (nothing in bpf/ uses what this file defines;
 * tools/bpf_layers.py checks that includes and uses point one way):
 * base.bpf.h (the loader's flags, the maps every part uses, count_drop,
 * add_count, the process notice), compat.bpf.h (what a kernel may lack),
 * labels.bpf.h (the label set id), procgen.bpf.h (process generations),
 * stacks.bpf.h (stacks stored by a hash of their frames), unwind.bpf.h
 * (user stacks from .eh_frame tables), groups.bpf.h (group members read
 * at their leader's samples), dataaddr.bpf.h (--data-addr: samples by
 * data address); and at the end, the parts with programs of their own:
 * offcpu.bpf.h (-e off-cpu: the scheduler's switches, each wait weighed
 * in nanoseconds by the stack it blocked with), images.bpf.h (the image a
 * sampled process leaves), lifecycle.bpf.h (exec, fork and exit
 * tracepoints: process generations, `-- command` targets).
 *
 * Every way to lose something is counted in drops (per CPU, per event).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pmubpf_abi.h"

char LICENSE[] SEC("license") = "GPL"; /* bpf_get_stackid is GPL-only */

#include "base.bpf.h"
#include "compat.bpf.h"
#include "labels.bpf.h"
#include "procgen.bpf.h"
#include "stacks.bpf.h"
#include "unwind.bpf.h"
#include "groups.bpf.h"
#include "dataaddr.bpf.h"

/* One sample of event ev, from either entry below (maker: which one,
 * for the process generations it makes: compat.bpf.h). regs: the registers
 * of an interrupted user-mode task, else NULL (the unwinder then takes
 * the task's saved user registers). addr: the sample's data address
 * (--data-addr), 0 if none. */
static __always_inline int sample(__u32 maker, void *ctx, bpf_user_pt_regs_t *regs, __u32 ev, __u64 period,
				  __u64 addr, __u64 go_reg)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u32 w = *(volatile __u32 *)&window & 1; /* once: see base.bpf.h's `window` */
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
	if (filter_cgroups && !in_cgroup_targets())
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
		key.label = label_key(es, tgid, tid, key.pgen, period, go_reg);
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
	__u64 go_reg = 0; /* arm64: x28, Go's g, read here: the verifier
			   * takes ctx fields only at constant offsets */

#if defined(__TARGET_ARCH_x86)
	if ((ctx->regs.cs & 3) == 3)
		regs = &ctx->regs;
#else /* arm64: EL0 (pstate's mode bits 0), a 64-bit task (bit 4 clear) */
	if ((ctx->regs.pstate & 0x1f) == 0) {
		regs = &ctx->regs;
		go_reg = ctx->regs.regs[28];
	}
#endif
	return sample(PGEN_BY_SAMPLE, ctx, regs, event_of(ctx), ctx->sample_period,
		      data_events ? ctx->addr : 0, go_reg);
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
	sample(PGEN_BY_TRACEPOINT, ctx, NULL, ev, tp_period, 0, 0);
	return 0;
}

/* The parts with programs of their own, after the sampling programs: the
 * object's sections keep their order. */
#include "offcpu.bpf.h"
#include "images.bpf.h"
#include "lifecycle.bpf.h"
