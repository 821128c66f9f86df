// SPDX-License-Identifier: GPL-2.0
/* labels_ours.bpf.h — our own labels (include/pmubpf/labels.h), read at
 * sample time.
 *
 * Included by labels.bpf.h and lifecycle.bpf.h. A process that
 * registered with include/pmubpf/labels.h gets a slot (label_slots, filled
 * by userspace once it found the registration record): the offset of the
 * thread's label word from the thread pointer. A sample reads the word,
 * then the set's unique id; the first sample of a (process, set) sends
 * userspace a copy of the set (docs/labels-abi.md).
 */
#ifndef PMUBPF_LABELS_OURS_BPF_H
#define PMUBPF_LABELS_OURS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"
#include "labels_common.bpf.h"

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

#endif
