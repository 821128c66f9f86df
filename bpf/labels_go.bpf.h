// SPDX-License-Identifier: GPL-2.0
/* labels_go.bpf.h — a Go program's pprof labels, read at sample time.
 *
 * Included by labels.bpf.h and lifecycle.bpf.h. Go keeps the labels of
 * pprof.Do (and of SetGoroutineLabels) in the goroutine: runtime.g.labels.
 * The running goroutine of a thread is m.curg, where m is the g in the
 * thread's TLS slot (g.m): when the thread runs the runtime on its system
 * stack (g0, gsignal) curg is still the goroutine it runs for. Userspace
 * fills go_slots[tgid] from the binary's Go version
 * (user/procs/goversion.c: the offsets, and the layout of the labels,
 * which changed in go1.24); a version it does not know gets no slot, so
 * BPF never reads with guessed offsets.
 *
 * The set's id: Go's label sets are immutable (pprof.Do makes a new one),
 * but they are garbage-collected and their memory reused, so the address
 * alone could name another set later. A go1.18-1.23 set is a map whose
 * header holds hash0, a random seed drawn at each makemap: (address, map
 * header, hash0) changes when the memory is reused. go1.24's list has no
 * such seed: (address, list address, length) is the id, and a set whose
 * two allocations are both reused by a set of the same length would be
 * named by the first (docs/labels-abi.md says so).
 */
#ifndef PMUBPF_LABELS_GO_BPF_H
#define PMUBPF_LABELS_GO_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"
#include "labels_common.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32); /* tgid */
	__type(value, struct pmubpf_go_slot);
	__uint(max_entries, 16384);
} go_slots SEC(".maps");

/* A Go string or slice header, and go1.24's label. */
struct go_str {
	__u64 ptr, len;
};
struct go_hmap { /* runtime.hmap, go1.18-1.23: the fields read */
	__u64 count;
	__u8 flags, B;
	__u16 noverflow;
	__u32 hash0;
	__u64 buckets;
};
#define GO_BUCKET_SLOTS 8
struct go_bucket { /* map[string]string's bucket */
	__u8 tophash[GO_BUCKET_SLOTS];
	struct go_str keys[GO_BUCKET_SLOTS];
	struct go_str vals[GO_BUCKET_SLOTS];
};
#define GO_MIN_TOPHASH 5 /* below: an empty (or evacuated) slot */

/* Scratch for the notice's copy: a bucket, or up to 16 list elements. */
union go_scratch {
	struct go_bucket b;
	struct go_str list[2 * PMUBPF_FLABEL_MAX];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, union go_scratch);
	__uint(max_entries, 1);
} go_scratch SEC(".maps");

/* Copy set `labels` (the g.labels pointer) into a notice. A global
 * function: the verifier checks it once, not on every path of on_sample
 * (the 24 unrolled pair copies are most of this reader's instructions).
 * It reads the set's header again: first sight only. */
__noinline int pmubpf_go_notice(__u64 tgid_tid, __u64 pgen_layout, __u64 id, __u64 labels)
{
	__u32 tgid = tgid_tid >> 32, tid = (__u32)tgid_tid;
	__u32 pgen = pgen_layout >> 32, layout = (__u32)pgen_layout;
	struct pmubpf_flabel_notice *n;
	union go_scratch *s;
	__u32 zero = 0;
	__u64 hmap = 0;

	s = bpf_map_lookup_elem(&go_scratch, &zero);
	if (!s)
		return -1;
	n = bpf_ringbuf_reserve(&notices, sizeof(*n), 0);
	if (!n)
		return -1;
	fill_notice(&n->hdr, PMUBPF_NOTICE_FLABEL, tgid, tid, pgen, id, labels);
	n->source = PMUBPF_LSRC_GO;
	n->nslots = 0;
	n->total = 0;
	n->status = PMUBPF_FLABEL_OK;
	if (layout == PMUBPF_GO_MAP) {
		struct go_hmap h;

		if (bpf_probe_read_user(&hmap, sizeof(hmap), (void *)labels) ||
		    bpf_probe_read_user(&h, sizeof(h), (void *)hmap)) {
			n->status = PMUBPF_FLABEL_UNREADABLE;
			goto out;
		}
		n->total = h.count > 0xffff ? 0xffff : h.count;
		/* Up to 8 pairs fit the first bucket and never grow the map
		 * (B stays 0). A bigger map is left to userspace (TOO_MANY:
		 * user/procs/golabels.c reads all its buckets from the
		 * process, up to 16 labels). */
		if (h.B != 0 || h.count > GO_BUCKET_SLOTS) {
			n->status = PMUBPF_FLABEL_TOO_MANY;
			goto out;
		}
		if (bpf_probe_read_user(&s->b, sizeof(s->b), (void *)h.buckets)) {
			n->status = PMUBPF_FLABEL_UNREADABLE;
			goto out;
		}
		n->nslots = GO_BUCKET_SLOTS;
#pragma unroll
		for (int i = 0; i < GO_BUCKET_SLOTS; i++) {
			n->pairs[i].flags = 0;
			if (s->b.tophash[i] >= GO_MIN_TOPHASH)
				flabel_copy_pair(&n->pairs[i], s->b.keys[i].ptr, s->b.keys[i].len,
						 s->b.vals[i].ptr, s->b.vals[i].len);
		}
	} else {
		struct go_str sl; /* {array, len}; cap not read */

		if (bpf_probe_read_user(&sl, sizeof(sl), (void *)labels)) {
			n->status = PMUBPF_FLABEL_UNREADABLE;
			goto out;
		}
		n->total = sl.len > 0xffff ? 0xffff : sl.len;
		if (sl.len > PMUBPF_FLABEL_MAX) {
			n->status = PMUBPF_FLABEL_TOO_MANY;
			goto out;
		}
		if (bpf_probe_read_user(s->list, sl.len * 2 * sizeof(struct go_str) &
						 (sizeof(s->list) - 1), (void *)sl.ptr)) {
			n->status = PMUBPF_FLABEL_UNREADABLE;
			goto out;
		}
		n->nslots = sl.len;
#pragma unroll
		for (int i = 0; i < PMUBPF_FLABEL_MAX; i++) {
			n->pairs[i].flags = 0;
			if (i < sl.len)
				flabel_copy_pair(&n->pairs[i], s->list[2 * i].ptr, s->list[2 * i].len,
						 s->list[2 * i + 1].ptr, s->list[2 * i + 1].len);
		}
	}
out:
	bpf_ringbuf_submit(n, 0);
	return 0;
}

/* The id of the current goroutine's label set (0: none, not Go, or
 * unreadable: counted). tp: where g is found (labels.bpf.h go_g_base):
 * x86-64, the thread pointer (g in TLS at tp + g_tls); arm64, g itself
 * (x28). */
static __always_inline __u64 go_label_id(__u32 es, __u32 tgid, __u32 tid, __u32 pgen,
					 __u64 period, __u64 tp)
{
	struct pmubpf_go_slot *slot = bpf_map_lookup_elem(&go_slots, &tgid);
	__u64 g = 0, m = 0, curg = 0, labels = 0, id;
	union {
		struct go_hmap h;
		struct go_str sl;
	} hdr;

	if (!slot || slot->pgen != pgen || !tp)
		return 0;
#if defined(__TARGET_ARCH_x86)
	/* A thread the Go runtime did not make (cgo's, a C library's) has
	 * no g: no labels, and not an error. */
	if (bpf_probe_read_user(&g, sizeof(g), (void *)(tp + slot->g_tls)) || !g)
		return 0;
	if (bpf_probe_read_user(&m, sizeof(m), (void *)(g + slot->g_m)) || !m ||
	    bpf_probe_read_user(&curg, sizeof(curg), (void *)(m + slot->m_curg)))
		goto fault;
#else
	/* x28 holds g while Go code runs; in C or the vDSO it may hold
	 * anything. So g is believed only if its M's current goroutine or
	 * g0 (m's first field) is g: else no labels, and not an error. */
	__u64 g0 = 0;

	g = tp;
	if (!g || bpf_probe_read_user(&m, sizeof(m), (void *)(g + slot->g_m)) || !m ||
	    bpf_probe_read_user(&curg, sizeof(curg), (void *)(m + slot->m_curg)) ||
	    bpf_probe_read_user(&g0, sizeof(g0), (void *)m))
		return 0;
	if (g != curg && g != g0)
		return 0;
#endif
	if (!curg) /* the M runs no goroutine (scheduler, idle) */
		return 0;
	if (bpf_probe_read_user(&labels, sizeof(labels), (void *)(curg + slot->g_labels)))
		goto fault;
	if (!labels)
		return 0;
	if (slot->layout == PMUBPF_GO_MAP) {
		__u64 hmap = 0;

		/* g.labels points at a labelMap variable holding the map. */
		if (bpf_probe_read_user(&hmap, sizeof(hmap), (void *)labels) || !hmap ||
		    bpf_probe_read_user(&hdr.h, sizeof(hdr.h), (void *)hmap))
			goto fault;
		if (!hdr.h.count)
			return 0;
		id = labels * 0x9E3779B97F4A7C15ULL ^ hmap ^ ((__u64)hdr.h.hash0 << 32);
	} else {
		if (bpf_probe_read_user(&hdr.sl, sizeof(hdr.sl), (void *)labels))
			goto fault;
		if (!hdr.sl.len)
			return 0;
		id = labels * 0x9E3779B97F4A7C15ULL ^ hdr.sl.ptr ^ (hdr.sl.len << 48);
	}
	id = id ? id : 1;

	if (!label_seen(tgid, pgen, id, PMUBPF_LSRC_GO))
		label_noticed(tgid, pgen, id, PMUBPF_LSRC_GO,
			      pmubpf_go_notice((__u64)tgid << 32 | tid,
					       (__u64)pgen << 32 | slot->layout, id, labels),
			      es, period);
	return id;
fault:
	count_drop(es, PMUBPF_DROP_LABEL_FOREIGN, period);
	return 0;
}

#endif
