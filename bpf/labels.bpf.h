// SPDX-License-Identifier: GPL-2.0
/* labels.bpf.h — the thread's label set, read at sample time.
 *
 * Included by pmubpf.bpf.c after its notice and drop helpers. A process
 * that registered with include/pmubpf/labels.h gets a slot (label_slots,
 * filled by userspace once it found the registration record): the offset
 * of the thread's label word from the thread pointer. A sample reads the
 * word, then the set's unique id; the first sample of a (process, set)
 * sends userspace a copy of the set (docs/labels-abi.md).
 *
 * Other writers' labels (labels_go.bpf.h: Go's pprof labels;
 * labels_custom.bpf.h: the custom-labels ABI v1; labels_otel.bpf.h:
 * OpenTelemetry thread context, OTEP 4947) give their
 * own ids; a sample's label key is the union of every source's id
 * (label_key below): our id alone when no other source has labels, so a
 * program using only our header is keyed exactly as before.
 */
#ifndef PMUBPF_LABELS_BPF_H
#define PMUBPF_LABELS_BPF_H

struct label_seen_key {
	__u32 tgid;
	__u32 pgen;
	__u64 label;
	__u32 src; /* enum pmubpf_label_source, or PMUBPF_LSRC_UNION */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct label_seen_key);
	__type(value, __u8);
	__uint(max_entries, 65536);
} seen_labels SEC(".maps");

/* Has this process generation's set `id` (from src) been named to
 * userspace? Once it has, later samples only carry the id. */
static __always_inline bool label_seen(__u32 tgid, __u32 pgen, __u64 id, __u32 src)
{
	struct label_seen_key lk = { .tgid = tgid, .pgen = pgen, .label = id, .src = src };

	return bpf_map_lookup_elem(&seen_labels, &lk) != NULL;
}

/* The set's notice went out (sent == 0: remembered) or did not (the
 * ring buffer full: counted, and tried again at the set's next sample). */
static __always_inline void label_noticed(__u32 tgid, __u32 pgen, __u64 id, __u32 src, int sent,
					  __u32 es, __u64 period)
{
	struct label_seen_key lk = { .tgid = tgid, .pgen = pgen, .label = id, .src = src };
	__u8 one = 1;

	if (sent)
		count_drop(es, PMUBPF_DROP_NOTICE, period);
	else
		bpf_map_update_elem(&seen_labels, &lk, &one, BPF_ANY);
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32); /* tgid */
	__type(value, struct pmubpf_label_slot);
	__uint(max_entries, 65536);
} label_slots SEC(".maps");

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

/* The thread's label set id, from the slot its process registered. */
static __always_inline __u64 own_label_id(__u32 es, __u32 tgid, __u32 tid,
					  __u32 pgen, __u64 period, __u64 tp)
{
	struct pmubpf_label_slot *slot = bpf_map_lookup_elem(&label_slots, &tgid);
	__u64 set = 0, id = 0;

	if (!slot)
		return 0;
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

	if (!label_seen(tgid, pgen, id, PMUBPF_LSRC_OURS))
		label_noticed(tgid, pgen, id, PMUBPF_LSRC_OURS,
			      send_label_notice(tgid, tid, pgen, id, set),
			      es, period);
	return id;
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
static __always_inline __u64 label_key(__u32 es, __u32 tgid, __u32 tid,
				       __u32 pgen, __u64 period)
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
	ids[PMUBPF_LSRC_GO] = pmubpf_go_label(tt, pe, period, tp);
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
