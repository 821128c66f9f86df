// SPDX-License-Identifier: GPL-2.0
/* labels_otel.bpf.h — OpenTelemetry thread context (OTEP 4947), read at
 * sample time.
 *
 * Included by labels.bpf.h and lifecycle.bpf.h. The thread-local
 * otel_thread_ctx_v1 points at a Thread-Local Context Record:
 * trace-id[16], span-id[8], valid (u8), trace-flags (u8), attrs-data-size
 * (u16), then that many bytes of attributes {key index u8, length u8,
 * value}. Userspace fills otel_slots[tgid] with the variable's offset from
 * the thread pointer (user/procs/otelctx.c) once the process context (OTEP
 * 4719) says the process publishes thread context.
 *
 * A writer may keep one record per thread and rewrite it in place between
 * valid = 0 and valid = 1 (the OTEP allows it), so neither the record's
 * address nor anything in it names its contents: the id is a hash of the
 * record's bytes, read at every sample (three reads: the TLS word, the
 * 28-byte header, the attributes). The key indexes are named only by the
 * process context, so BPF sends the bytes it hashed at a record's first
 * sight and userspace turns them into labels.
 */
#ifndef PMUBPF_LABELS_OTEL_BPF_H
#define PMUBPF_LABELS_OTEL_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"
#include "labels_common.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32); /* tgid */
	__type(value, struct pmubpf_otel_slot);
	__uint(max_entries, 16384);
} otel_slots SEC(".maps");

#define OTEL_ATTRS_MAX (PMUBPF_OTEL_REC_MAX - PMUBPF_OTEL_HDR)
struct otel_scratch {
	/* room for the header plus a read clamped to 1023 bytes, so the
	 * verifier sees every read in bounds */
	__u8 rec[PMUBPF_OTEL_HDR + 1024 + 4];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct otel_scratch);
	__uint(max_entries, 1);
} otel_scratch SEC(".maps");

/* pmubpf_otel_hash's answers below 3: no context, unreadable, invalid. */
#define OTEL_NONE 0
#define OTEL_FAULT 1
#define OTEL_INVALID 2

/* Read the record at rec into this CPU's scratch and hash its bytes.
 * A global function: the verifier checks it once, not once per path of
 * on_sample (as pmubpf_custom_hash). */
__noinline __u64 pmubpf_otel_hash(__u64 rec)
{
	__u64 h = 0xcbf29ce484222325ULL, any = 0;
	struct otel_scratch *s;
	__u32 zero = 0, size, total;

	s = bpf_map_lookup_elem(&otel_scratch, &zero);
	if (!s)
		return OTEL_FAULT;
	if (bpf_probe_read_user(s->rec, PMUBPF_OTEL_HDR, (void *)rec))
		return OTEL_FAULT;
	/* valid: 1 = complete; 0 = detached or being rewritten (the
	 * writer's protocol): no context; any other value is reserved, and
	 * the OTEP asks readers to ignore the record: refused, counted. */
	if (s->rec[24] == 0)
		return OTEL_NONE;
	if (s->rec[24] != 1)
		return OTEL_INVALID;
	size = s->rec[26] | (__u32)s->rec[27] << 8;
	if (size > OTEL_ATTRS_MAX)
		return OTEL_INVALID; /* larger than any record we read: refused whole */
	asm volatile("%0 &= 1023" : "+r"(size));
	if (size && bpf_probe_read_user(s->rec + PMUBPF_OTEL_HDR, size, (void *)(rec + PMUBPF_OTEL_HDR)))
		return OTEL_FAULT;
	total = PMUBPF_OTEL_HDR + size;
	for (int j = 0; j < PMUBPF_OTEL_REC_MAX / 8; j++) {
		__u64 w;

		if (j * 8 >= total)
			break;
		w = *(__u64 *)(s->rec + j * 8);
		if (j * 8 + 8 > total) /* the bytes past the record are stale */
			w &= (1ULL << ((total - j * 8) * 8)) - 1;
		if (j < 3 || j * 8 >= PMUBPF_OTEL_HDR)
			any |= w; /* ids (24 bytes) or attributes */
		h = (h ^ w) * 0x100000001b3ULL;
	}
	if (!any && !size)
		return OTEL_NONE; /* valid, but no span and no attributes */
	return h > OTEL_INVALID ? h : OTEL_INVALID + 1;
}

/* The record's first sight: the bytes the hash read, from this CPU's
 * scratch. Global, like the hash. */
__noinline int pmubpf_otel_notice(__u64 tgid_tid, __u32 pgen, __u64 id, __u64 rec)
{
	struct pmubpf_flabel_notice *n;
	struct otel_scratch *s;
	__u32 zero = 0;

	s = bpf_map_lookup_elem(&otel_scratch, &zero);
	if (!s)
		return -1;
	n = bpf_ringbuf_reserve(&notices, sizeof(*n), 0);
	if (!n)
		return -1;
	fill_notice(&n->hdr, PMUBPF_NOTICE_FLABEL, tgid_tid >> 32, (__u32)tgid_tid, pgen, id, rec);
	n->source = PMUBPF_LSRC_OTEL;
	n->status = PMUBPF_FLABEL_OK;
	n->nslots = 0;
	n->total = PMUBPF_OTEL_HDR + (s->rec[26] | (__u32)s->rec[27] << 8);
	if (bpf_probe_read_kernel(n->raw, sizeof(n->raw), s->rec))
		n->status = PMUBPF_FLABEL_UNREADABLE;
	bpf_ringbuf_submit(n, 0);
	return 0;
}

/* The id of the thread's current OpenTelemetry context record (0: none,
 * or refused: counted). */
static __always_inline __u64 otel_label_id(__u32 es, __u32 tgid, __u32 tid, __u32 pgen,
					   __u64 period, __u64 tp)
{
	struct pmubpf_otel_slot *slot = bpf_map_lookup_elem(&otel_slots, &tgid);
	__u64 rec = 0, h;

	if (!slot || slot->pgen != pgen || !tp)
		return 0;
	if (bpf_probe_read_user(&rec, sizeof(rec), (void *)(tp + slot->tls_offset)))
		goto fault;
	if (!rec)
		return 0;
	h = pmubpf_otel_hash(rec);
	if (h == OTEL_NONE)
		return 0;
	if (h == OTEL_FAULT)
		goto fault;
	if (h == OTEL_INVALID) {
		count_drop(es, PMUBPF_DROP_LABEL_INVALID, period);
		return 0;
	}

	if (!label_seen(tgid, pgen, h, PMUBPF_LSRC_OTEL))
		label_noticed(tgid, pgen, h, PMUBPF_LSRC_OTEL,
			      pmubpf_otel_notice((__u64)tgid << 32 | tid, pgen, h, rec),
			      es, period);
	return h;
fault:
	count_drop(es, PMUBPF_DROP_LABEL_FOREIGN, period);
	return 0;
}

#endif
