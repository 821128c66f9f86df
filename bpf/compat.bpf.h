/* compat.bpf.h — every piece of the BPF side that a kernel of the
 * supported range (5.10 to the newest) may lack, in one place, with what
 * stands in for it. Included by base.bpf.h after the loader's flags, and
 * by every part that uses its pieces.
 *
 * The loader probes each feature (user/record/features.c) and sets the
 * flags below before load. A branch on a flag that is false is never
 * verified, so a helper or instruction the kernel does not know may
 * stand behind one. Not so a bpf_loop callback: a program that names
 * one is refused by a kernel before 5.13 whatever the branches say
 * ("number of funcs in func_info doesn't match"), so the programs every
 * recording loads name none (their loops are bounded loops around a
 * function of their own: unwind.bpf.h).
 *
 * The features each optional program needs (off-CPU: bpf_for_each_map_elem
 * and syscall programs; images: sched_prepare_exec and the VMA iterator)
 * are probed where the loader chooses those programs, not here.
 */
#ifndef PMUBPF_COMPAT_BPF_H
#define PMUBPF_COMPAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "pmubpf_abi.h"

const volatile bool has_attach_cookie = true; /* bpf_get_attach_cookie: 5.15 */
const volatile bool has_task_pt_regs = true;  /* bpf_task_pt_regs: 5.15 */

/* The current task, for reads through BPF_CORE_READ (probe reads): the
 * plain helper, which every kernel has (bpf_get_current_task_btf, 5.11,
 * gives a pointer the verifier trusts; only images.bpf.h's iterator,
 * a 6.x feature, needs that). */
static __always_inline struct task_struct *current_task(void)
{
	return (struct task_struct *)bpf_get_current_task();
}

/* The perf event (or tracepoint) a sample came from: its index, which the
 * loader gave as the event's BPF cookie. Without cookies a recording has
 * one event (the loader refuses more), index 0. */
static __always_inline __u32 event_of(void *ctx)
{
	return has_attach_cookie ? (__u32)bpf_get_attach_cookie(ctx) : 0;
}

/* The user registers the current task saved at its entry into the
 * kernel: at the top of its kernel stack (task_pt_regs), found without
 * the helper as the kernel itself finds them: THREAD_SIZE above
 * task->stack, less the registers (x86-64: 16 KiB, no padding; a
 * KASAN kernel's 32 KiB stack would need the helper, which every kernel
 * since 5.15 has). The helper wants the task as a pointer
 * the verifier trusts (bpf_get_current_task_btf, 5.11). */
#if defined(__TARGET_ARCH_x86) /* arm64's user stacks are the kernel's walk (unwind.bpf.h) */
#define PMUBPF_THREAD_SIZE 16384
static __always_inline struct pt_regs *current_user_regs(void)
{
	void *stack;

	if (has_task_pt_regs)
		return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	stack = BPF_CORE_READ(current_task(), stack);
	return stack ? (struct pt_regs *)(stack + PMUBPF_THREAD_SIZE) - 1 : NULL;
}
#endif

/* Process generations: numbers unique for the whole recording, so that
 * (tgid, pgen) names one address space. Counted per CPU and per kind of
 * program that makes them (enum pgen_maker), interleaved so that no two
 * counters give the same number: no fetching atomic (5.12; a program
 * that has one does not load before, whatever the branches say), no
 * line shared by every CPU. Programs of one kind never nest on a CPU
 * (a perf_event program does not run inside another; nor a tracepoint's),
 * but a sample's NMI may come inside a tp_btf program: each kind has its
 * own counter. */
/* enum pgen_maker: pmubpf_abi.h (the loader makes some too). */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, PGEN_MAKERS);
} pgen_count SEC(".maps");

/* A new generation (never 0), or 0 if none could be made. */
static __always_inline __u32 new_pgen(__u32 maker, __u32 ncpus)
{
	__u32 cpu = bpf_get_smp_processor_id(), *c;

	c = bpf_map_lookup_elem(&pgen_count, &maker);
	if (!c)
		return 0;
	*c += 1;
	return (*c * (ncpus ? ncpus : 1) + cpu) * PGEN_MAKERS + maker;
}

#endif
