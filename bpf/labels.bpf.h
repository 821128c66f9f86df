// SPDX-License-Identifier: GPL-2.0
/* labels.bpf.h — the thread's label set, read at sample time.
 *
 * Included by pmubpf.bpf.c and offcpu.bpf.h. Each writer's labels have a
 * reader of their own, which gives its own id: ours (labels_ours.bpf.h:
 * include/pmubpf/labels.h), and other writers' (labels_go.bpf.h: Go's
 * pprof labels; labels_custom.bpf.h: the custom-labels ABI v1;
 * labels_otel.bpf.h: OpenTelemetry thread context, OTEP 4947), all over
 * labels_common.bpf.h. A sample's label key is the union of every
 * source's id (label_key below): our id alone when no other source has
 * labels, so a program using only our header is keyed exactly as before.
 */
#ifndef PMUBPF_LABELS_BPF_H
#define PMUBPF_LABELS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"
#include "compat.bpf.h"
#include "labels_common.bpf.h"
#include "labels_ours.bpf.h"
#include "labels_go.bpf.h"
#include "labels_custom.bpf.h"
#include "labels_otel.bpf.h"

/* Send the components of union key `key`. */
static __always_inline int send_union_notice(__u32 tgid, __u32 tid, __u32 pgen, __u64 key,
					     const __u64 *ids)
{
	struct pmubpf_lunion_notice *n = bpf_ringbuf_reserve(&notices, sizeof(*n), 0);

	if (!n)
		return -1;
	fill_notice(&n->hdr, PMUBPF_NOTICE_LUNION, tgid, tid, pgen, key, 0);
#pragma unroll
	for (int i = 0; i < PMUBPF_LSRC__MAX; i++)
		n->ids[i] = ids[i];
	bpf_ringbuf_submit(n, 0);
	return 0;
}

/* Each source's reader as a global function, verified once by itself:
 * inlined, the verifier walked every combination of the four sources'
 * outcomes (each returns 0 on a dozen paths), half of on_sample's
 * verification. Five arguments at most: packed, tgid:tid, pgen:es. */
#define LABEL_SOURCE(name, reader)                                                        \
	__noinline __u64 name(__u64 tgid_tid, __u64 pgen_es, __u64 period, __u64 tp)     \
	{                                                                                 \
		return reader((__u32)pgen_es, tgid_tid >> 32, (__u32)tgid_tid, pgen_es >> 32, \
			      period, tp);                                                \
	}
LABEL_SOURCE(pmubpf_own_label, own_label_id)
LABEL_SOURCE(pmubpf_go_label, go_label_id)
LABEL_SOURCE(pmubpf_custom_label, custom_label_id)
LABEL_SOURCE(pmubpf_otel_label, otel_label_id)

/* The sample's label key: every source's set id, as one u64. Inlined in
 * its caller, not a function of its own: each source's reader (a
 * function) calls its notice's (another), and a frame more between the
 * sample and those made the chain's stack more than the 512 bytes that
 * verifiers without private stacks (before 6.13) allow a whole chain. */
/* Go's g where the architecture keeps it in a register (arm64: x28):
 * go_reg, the interrupted user-mode sample's x28, else (a kernel-mode
 * sample, off-CPU: go_reg 0) the task's saved one; 0 where neither can
 * be had (before bpf_task_pt_regs, 5.15). x86-64 keeps g in TLS: the
 * thread pointer. */
static __always_inline __u64 go_g_base(__u64 go_reg, __u64 tp)
{
#if defined(__TARGET_ARCH_x86)
	return tp;
#else
	__u64 g = 0;

	if (go_reg)
		return go_reg;
	if (has_task_pt_regs) {
		void *r = (void *)bpf_task_pt_regs(bpf_get_current_task_btf());

		if (r)
			bpf_probe_read_kernel(&g, sizeof(g), r + 28 * sizeof(__u64));
	}
	return g;
#endif
}

static __always_inline __u64 label_key(__u32 es, __u32 tgid, __u32 tid,
				       __u32 pgen, __u64 period, __u64 go_reg)
{
	struct task_struct *task = current_task();
	__u64 ids[PMUBPF_LSRC__MAX], key, foreign = 0;
	__u64 tp;

#if defined(__TARGET_ARCH_x86)
	tp = BPF_CORE_READ(task, thread.fsbase);
#else
	tp = BPF_CORE_READ(task, thread.uw.tp_value);
#endif
	__u64 tt = (__u64)tgid << 32 | tid, pe = (__u64)pgen << 32 | es;

	ids[PMUBPF_LSRC_OURS] = pmubpf_own_label(tt, pe, period, tp);
	ids[PMUBPF_LSRC_GO] = pmubpf_go_label(tt, pe, period, go_g_base(go_reg, tp));
	ids[PMUBPF_LSRC_CUSTOM] = pmubpf_custom_label(tt, pe, period, tp);
	ids[PMUBPF_LSRC_OTEL] = pmubpf_otel_label(tt, pe, period, tp);
#pragma unroll
	for (int i = 1; i < PMUBPF_LSRC__MAX; i++)
		foreign |= ids[i];
	if (!foreign)
		return ids[PMUBPF_LSRC_OURS];
	/* The union: a 64-bit mix of the ids (FNV-1a per word, as the stack
	 * hash), named to userspace once per process and key. */
	key = 0xcbf29ce484222325ULL;
#pragma unroll
	for (int i = 0; i < PMUBPF_LSRC__MAX; i++)
		key = (key ^ ids[i]) * 0x100000001b3ULL;
	key = key ? key : 1;

	if (!label_seen(tgid, pgen, key, PMUBPF_LSRC_UNION))
		label_noticed(tgid, pgen, key, PMUBPF_LSRC_UNION,
			      send_union_notice(tgid, tid, pgen, key, ids),
			      es, period);
	return key;
}

#endif
