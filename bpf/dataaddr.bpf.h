/* dataaddr.bpf.h — --data-addr: samples keyed by the data address too.
 *
 * Included by pmubpf.bpf.c. For the events data_events names (a bit per
 * event index), each sample is also counted in the window's data map under
 * {its counts key, the sample's data address} (struct
 * bpf_perf_event_data's addr: perf's PERF_SAMPLE_ADDR, set by
 * user/perf/perfev.c for these events). A separate map rather than an
 * address in the counts key: the code profile keeps its few entries per
 * stack, and only the data profile pays for one entry per distinct
 * address, within its own size bound (a full map loses the data side of
 * the sample only: PMUBPF_DROP_DATA_FULL). Two maps, one per window, as
 * counts0/1: drained and emptied with them (user/record/windows.c).
 */
#ifndef PMUBPF_DATAADDR_BPF_H
#define PMUBPF_DATAADDR_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"

const volatile __u32 data_events = 0; /* bit ev: --data-addr for event ev */

#define DATA_MAP(name)							\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__type(key, struct pmubpf_data_key);			\
		__type(value, struct pmubpf_val);			\
		__uint(max_entries, 1); /* resized by the loader */	\
	} name SEC(".maps")
DATA_MAP(data0);
DATA_MAP(data1);

/* data_w[{key, addr}] += {1, period}; a full map counted in drops. */
static __always_inline void count_data(const struct pmubpf_key *key, __u64 addr, __u32 w,
				       __u32 es, __u64 period)
{
	struct pmubpf_data_key dk = { .k = *key, .addr = addr };
	struct pmubpf_val *val, one = { .count = 1, .period = period };

	if (key->event >= 32 || !(data_events & (1u << key->event)))
		return;
	val = w ? bpf_map_lookup_elem(&data1, &dk) : bpf_map_lookup_elem(&data0, &dk);
	if (!val) {
		if (!(w ? bpf_map_update_elem(&data1, &dk, &one, BPF_NOEXIST)
			: bpf_map_update_elem(&data0, &dk, &one, BPF_NOEXIST)))
			return;
		val = w ? bpf_map_lookup_elem(&data1, &dk) : bpf_map_lookup_elem(&data0, &dk);
		if (!val) {
			count_drop(es, PMUBPF_DROP_DATA_FULL, period);
			return;
		}
	}
	__sync_fetch_and_add(&val->count, 1);
	__sync_fetch_and_add(&val->period, period);
}

#endif
