/* drain.c — see drain.h. */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drain.h"

/* Keep stack `key` if it is a real key (not a status) not read yet. */
static int read_stack(int fd, struct report_data *d, uint64_t key, struct pmubpf_stack *buf)
{
	if (key < PMUBPF_STACK_KEY_MIN || report_data__stack(d, key))
		return 0;
	if (bpf_map_lookup_elem(fd, &key, buf) || buf->nr > PMUBPF_MAX_DEPTH)
		return 0; /* absent: its samples say "walk failed" */
	return report_data__add_stack(d, key, buf);
}

/* Entries read from the kernel per call: one syscall for BATCH entries,
 * where a key-by-key walk made two each (get_next_key and lookup: 7% of
 * the write of a churn recording's 22000 entries). */
#define BATCH 1024

static int drain_counts(const struct report_maps *m, struct report_data *d)
{
	struct pmubpf_key *keys = malloc(BATCH * sizeof(*keys));
	struct pmubpf_val *vals = malloc(BATCH * sizeof(*vals));
	struct pmubpf_stack *buf = malloc(sizeof(*buf));
	uint32_t token = 0;
	bool more = true;
	int ret = 0;

	if (!keys || !vals || !buf)
		ret = -ENOMEM;
	for (bool first = true; !ret && more; first = false) {
		__u32 n = BATCH;
		/* The last batch ends with ENOENT, and may hold entries. */
		if (bpf_map_lookup_batch(m->counts_fd, first ? NULL : &token, &token, keys, vals, &n,
					 NULL)) {
			if (errno != ENOENT) {
				ret = -errno;
				break;
			}
			more = false;
		}
		for (__u32 i = 0; !ret && i < n; i++) {
			if (keys[i].event >= (uint32_t)m->nevents)
				continue;
			if (report_data__add_entry(d, &keys[i], &vals[i]) ||
			    read_stack(m->stacks_fd, d, keys[i].ustack, buf) ||
			    read_stack(m->stacks_fd, d, keys[i].kstack, buf))
				ret = -ENOMEM;
		}
	}
	free(keys);
	free(vals);
	free(buf);
	return ret;
}

/* --data-addr: every data map entry, and the stacks it names. */
static int drain_data(const struct report_maps *m, struct report_data *d)
{
	struct pmubpf_data_key key, next;
	struct pmubpf_stack *buf = malloc(sizeof(*buf));
	void *prev = NULL;
	int err;

	if (!buf)
		return -ENOMEM;
	while ((err = bpf_map_get_next_key(m->data_fd, prev, &next)) == 0) {
		struct pmubpf_val v;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(m->data_fd, &next, &v) || next.k.event >= (uint32_t)m->nevents)
			continue;
		if (report_data__add_data(d, &next.k, next.addr, &v) ||
		    read_stack(m->stacks_fd, d, next.k.ustack, buf) ||
		    read_stack(m->stacks_fd, d, next.k.kstack, buf)) {
			free(buf);
			return -ENOMEM;
		}
	}
	free(buf);
	return errno == ENOENT || err == -ENOENT ? 0 : -errno;
}

/* Each event's drop counters, summed over CPUs. */
static int sum_drops(const struct report_maps *m, struct report_data *d)
{
	struct pmubpf_drop_val *vals = calloc(m->nr_cpus > 0 ? m->nr_cpus : 1, sizeof(*vals));

	if (!vals)
		return -ENOMEM;
	for (int ev = 0; ev < m->nevents; ev++) {
		struct pmubpf_drop_val *out = d->ev[ev].drops;

		for (uint32_t r = 0; r < PMUBPF_DROP__MAX; r++) {
			uint32_t idx = PMUBPF_DROP_INDEX(m->window, (uint32_t)ev, r);

			if (bpf_map_lookup_elem(m->drops_fd, &idx, vals)) {
				int err = -errno;

				free(vals);
				return err ? err : -EIO;
			}
			for (int c = 0; c < m->nr_cpus; c++) {
				out[r].count += vals[c].count;
				out[r].period += vals[c].period;
			}
		}
	}
	free(vals);
	return 0;
}

int report__drain(const struct report_maps *m, struct report_data *d, char *err, size_t errlen)
{
	int ret = drain_counts(m, d);

	if (ret) {
		snprintf(err, errlen, "reading the counts map: %s", strerror(-ret));
		return ret;
	}
	if (m->data && (ret = drain_data(m, d)) != 0) {
		snprintf(err, errlen, "reading the data map (--data-addr): %s", strerror(-ret));
		return ret;
	}
	ret = sum_drops(m, d);
	if (ret)
		snprintf(err, errlen, "reading the drops map (what was lost): %s", strerror(-ret));
	return ret;
}
