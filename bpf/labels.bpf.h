// SPDX-License-Identifier: GPL-2.0
/* labels.bpf.h — the thread's label set, read at sample time.
 *
 * Included by pmubpf.bpf.c after its notice and drop helpers. A process
 * that registered with include/pmubpf/labels.h gets a slot (label_slots,
 * filled by userspace once it found the registration record): the offset
 * of the thread's label word from the thread pointer. A sample reads the
 * word, then the set's unique id; the first sample of a (process, set)
 * sends userspace a copy of the set (docs/labels-abi.md).
 */
#ifndef PMUBPF_LABELS_BPF_H
#define PMUBPF_LABELS_BPF_H

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

#endif
