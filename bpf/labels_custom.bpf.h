// SPDX-License-Identifier: GPL-2.0
/* labels_custom.bpf.h — labels of the custom-labels ABI v1 (Polar
 * Signals' libcustomlabels, used from Rust and C), read at sample time.
 *
 * Included by labels.bpf.h and lifecycle.bpf.h. The thread-local
 * custom_labels_current_set points at {storage, count, capacity}; storage
 * at count labels {key, value}, each a {len, buf} string. Userspace fills
 * custom_slots[tgid] with the variable's offset from the thread pointer
 * (the executable's static TLS, or a library's TLS descriptor:
 * user/procs/customlabels.c).
 *
 * Unlike our header's and Go's, these sets are changed in place: the
 * library replaces a value in the same set, and a freed string's memory
 * is the first malloc hands out again, so neither the set's address nor
 * its strings' addresses name its contents. The id is therefore a hash of
 * the contents themselves (at most 63 key and 255 value bytes per label,
 * as far as they are copied), read at every sample: 2 + 2 x labels reads.
 */
#ifndef PMUBPF_LABELS_CUSTOM_BPF_H
#define PMUBPF_LABELS_CUSTOM_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"
#include "labels_common.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32); /* tgid */
	__type(value, struct pmubpf_custom_slot);
	__uint(max_entries, 16384);
} custom_slots SEC(".maps");

struct cl_str {
	__u64 len, buf; /* custom_labels_string_t: buf NULL = absent */
};
struct cl_label {
	struct cl_str key, val;
};
#define CL_WORDS (PMUBPF_FLABEL_VAL / 8)
struct cl_scratch {
	struct cl_label st[PMUBPF_FLABEL_MAX];
	__u64 words[CL_WORDS];
	__u32 fault; /* a string of the set being hashed was unreadable */
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct cl_scratch);
	__uint(max_entries, 1);
} cl_scratch SEC(".maps");

#define CL_PRIME 0x100000001b3ULL

/* Mix the length and the first bytes (up to the key's or the value's
 * room) of label i's key (val 0) or value (val 1), in this CPU's scratch,
 * into h; s->fault set if unreadable. A global function with scalar
 * arguments, so the verifier walks its word loop once, not once for each
 * of the 2 x 16 strings of a set (85% of on_sample's load time when it
 * was inlined: 0.15 s of every recording's start). */
__noinline __u64 pmubpf_cl_hash_str(__u64 h, __u32 i, __u32 val)
{
	struct cl_scratch *s;
	struct cl_str *str;
	__u32 zero = 0, n;

	s = bpf_map_lookup_elem(&cl_scratch, &zero);
	if (!s || i >= PMUBPF_FLABEL_MAX)
		return h;
	str = val ? &s->st[i].val : &s->st[i].key;
	n = flabel_clamp(str->len, val ? PMUBPF_FLABEL_VAL - 1 : PMUBPF_FLABEL_KEY - 1);
	h = (h ^ str->len) * CL_PRIME;
	if (!n)
		return h;
	if (bpf_probe_read_user(s->words, n, (void *)str->buf)) {
		s->fault = 1;
		return h;
	}
	for (int j = 0; j < CL_WORDS; j++) {
		__u64 w;

		if (j * 8 >= n)
			break;
		w = s->words[j];
		if (j * 8 + 8 > n) /* the bytes past the string are stale */
			w &= (1ULL << ((n - j * 8) * 8)) - 1;
		h = (h ^ w) * CL_PRIME;
	}
	return h;
}

/* The set's first sight: its labels, from the storage the hash read into
 * this CPU's scratch. Global, like the hash: verified once. */
__noinline int pmubpf_custom_notice(__u64 tgid_tid, __u64 pgen_count, __u64 id, __u64 set)
{
	__u32 tgid = tgid_tid >> 32, tid = (__u32)tgid_tid;
	__u32 pgen = pgen_count >> 32, count = (__u32)pgen_count;
	struct pmubpf_flabel_notice *n;
	struct cl_scratch *s;
	__u32 zero = 0;

	s = bpf_map_lookup_elem(&cl_scratch, &zero);
	if (!s)
		return -1;
	n = bpf_ringbuf_reserve(&notices, sizeof(*n), 0);
	if (!n)
		return -1;
	fill_notice(&n->hdr, PMUBPF_NOTICE_FLABEL, tgid, tid, pgen, id, set);
	n->source = PMUBPF_LSRC_CUSTOM;
	n->status = PMUBPF_FLABEL_OK;
	n->total = count;
	n->nslots = count;
#pragma unroll
	for (int i = 0; i < PMUBPF_FLABEL_MAX; i++) {
		n->pairs[i].flags = 0;
		/* An absent key (buf NULL): not a label (the ABI's rule). */
		if (i < count && s->st[i].key.buf) {
			flabel_copy_pair(&n->pairs[i], s->st[i].key.buf, s->st[i].key.len,
					 s->st[i].val.buf, s->st[i].val.len);
			if (!s->st[i].val.buf) /* "must never be null" */
				n->pairs[i].flags |= PMUBPF_FLABEL_FAULT;
		}
	}
	bpf_ringbuf_submit(n, 0);
	return 0;
}

/* The hash of the contents of `count` labels at storage (read into this
 * CPU's scratch): 0 if unreadable, 1 if no label has a key, else the
 * hash. A global function: the verifier checks it once, not once per
 * path of on_sample that reaches it (3x the program's load time). */
__noinline __u64 pmubpf_custom_hash(__u64 storage, __u32 count)
{
	__u64 h = 0xcbf29ce484222325ULL;
	struct cl_scratch *s;
	__u32 zero = 0, sz;
	int present = 0;

	sz = count * sizeof(struct cl_label);
	asm volatile("%0 &= 1023" : "+r"(sz));
	if (sz > sizeof(s->st))
		return 0;
	s = bpf_map_lookup_elem(&cl_scratch, &zero);
	if (!s || bpf_probe_read_user(s->st, sz, (void *)storage))
		return 0;
	s->fault = 0;
	for (int i = 0; i < PMUBPF_FLABEL_MAX; i++) {
		if (i >= count)
			break;
		if (!s->st[i].key.buf)
			continue;
		present = 1;
		h = pmubpf_cl_hash_str(h, i, 0);
		h = pmubpf_cl_hash_str(h, i, 1);
	}
	if (s->fault)
		return 0;
	if (!present)
		return 1;
	return h > 1 ? h : 2;
}

/* The id of the thread's current custom-labels set (0: none, or
 * unreadable: counted). */
static __always_inline __u64 custom_label_id(__u32 es, __u32 tgid, __u32 tid, __u32 pgen,
					     __u64 period, __u64 tp)
{
	struct pmubpf_custom_slot *slot = bpf_map_lookup_elem(&custom_slots, &tgid);
	struct { __u64 storage, count, capacity; } hdr;
	__u64 set = 0, h;
	__u32 count;

	if (!slot || slot->pgen != pgen || !tp)
		return 0;
	if (bpf_probe_read_user(&set, sizeof(set), (void *)(tp + slot->tls_offset)))
		goto fault;
	if (!set)
		return 0;
	if (bpf_probe_read_user(&hdr, sizeof(hdr), (void *)set))
		goto fault;
	if (!hdr.count)
		return 0;
	/* More labels than a set of ours holds: refused (counted), rather
	 * than named by a part of them. */
	if (hdr.count > PMUBPF_FLABEL_MAX)
		goto fault;
	count = hdr.count;
	h = pmubpf_custom_hash(hdr.storage, count);
	if (!h)
		goto fault;
	if (h == 1)
		return 0;

	if (!label_seen(tgid, pgen, h, PMUBPF_LSRC_CUSTOM))
		label_noticed(tgid, pgen, h, PMUBPF_LSRC_CUSTOM,
			      pmubpf_custom_notice((__u64)tgid << 32 | tid,
						   (__u64)pgen << 32 | count, h, set),
			      es, period);
	return h;
fault:
	count_drop(es, PMUBPF_DROP_LABEL_FOREIGN, period);
	return 0;
}

#endif
