// SPDX-License-Identifier: GPL-2.0
/* stacks.bpf.h — stacks walked (bpf_get_stack) into the per-CPU scratch
 * and stored in the window's stacks map by a hash of their frames.
 *
 * Included by pmubpf.bpf.c (the kernel stack of a sample), unwind.bpf.h
 * (its walks store through pmubpf_store_scratch) and offcpu.bpf.h.
 */
#ifndef PMUBPF_STACKS_BPF_H
#define PMUBPF_STACKS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"

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

#endif
