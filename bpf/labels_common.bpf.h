// SPDX-License-Identifier: GPL-2.0
/* labels_common.bpf.h — what every label source's reader shares: which
 * (process generation, set) userspace has been told of (label_seen,
 * label_noticed), and the copy of a foreign set's pairs into a notice.
 *
 * Included by labels_ours.bpf.h, labels_go.bpf.h, labels_custom.bpf.h,
 * labels_otel.bpf.h and labels.bpf.h.
 */
#ifndef PMUBPF_LABELS_COMMON_BPF_H
#define PMUBPF_LABELS_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct pmubpf_label_seen_key);
	__type(value, __u8);
	__uint(max_entries, 65536);
} seen_labels SEC(".maps");

/* Has this process generation's set `id` (from src) been named to
 * userspace? Once it has, later samples only carry the id. */
static __always_inline bool label_seen(__u32 tgid, __u32 pgen, __u64 id, __u32 src)
{
	struct pmubpf_label_seen_key lk = { .tgid = tgid, .pgen = pgen, .label = id, .src = src };

	return bpf_map_lookup_elem(&seen_labels, &lk) != NULL;
}

/* The set's notice went out (sent == 0: remembered) or did not (the
 * ring buffer full: counted, and tried again at the set's next sample). */
static __always_inline void label_noticed(__u32 tgid, __u32 pgen, __u64 id, __u32 src, int sent,
					  __u32 es, __u64 period)
{
	struct pmubpf_label_seen_key lk = { .tgid = tgid, .pgen = pgen, .label = id, .src = src };
	__u8 one = 1;

	if (sent)
		count_drop(es, PMUBPF_DROP_NOTICE, period);
	else
		bpf_map_update_elem(&seen_labels, &lk, &one, BPF_ANY);
}

/* Other writers' readers share these. */

/* n clamped to mask (a power of two minus one) in a way the compiler
 * cannot fold away: the verifier must see the bound at the call. */
static __always_inline __u32 flabel_clamp(__u64 n, __u32 mask)
{
	__u32 v = n > mask ? mask : (__u32)n;

	asm volatile("%0 &= %1" : "+r"(v) : "i"(PMUBPF_FLABEL_VAL - 1));
	return v & mask;
}

/* One pair of a foreign set into a notice slot (key at kp, kn bytes). */
static __always_inline void flabel_copy_pair(struct pmubpf_flabel *p, __u64 kp, __u64 kn,
					     __u64 vp, __u64 vn)
{
	__u32 kl = flabel_clamp(kn, PMUBPF_FLABEL_KEY - 1);
	__u32 vl = flabel_clamp(vn, PMUBPF_FLABEL_VAL - 1);

	p->flags = PMUBPF_FLABEL_PRESENT;
	p->klen = kn > 0xffff ? 0xffff : kn;
	p->vlen = vn > 0xffff ? 0xffff : vn;
	if ((kl && bpf_probe_read_user(p->key, kl, (void *)kp)) ||
	    (vl && bpf_probe_read_user(p->val, vl, (void *)vp)))
		p->flags |= PMUBPF_FLABEL_FAULT;
}

#endif
