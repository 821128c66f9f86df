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

/* What one entry of a drained map adds to d: its sample and its stacks. */
typedef int (*drain_fn)(const struct report_maps *m, struct report_data *d, const void *key,
			const void *val, struct pmubpf_stack *buf);

/* Every entry of the hash map fd (keys of ksz bytes, values struct
 * pmubpf_val) to fn, BATCH a syscall. The window's maps are flipped out
 * before a drain, so nothing writes them while they are walked. */
static int drain_map(const struct report_maps *m, struct report_data *d, int fd, size_t ksz,
		     drain_fn fn)
{
	char *keys = malloc(BATCH * ksz);
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
		if (bpf_map_lookup_batch(fd, first ? NULL : &token, &token, keys, vals, &n, NULL)) {
			if (errno != ENOENT) {
				ret = -errno;
				break;
			}
			more = false;
		}
		for (__u32 i = 0; !ret && i < n; i++)
			ret = fn(m, d, keys + i * ksz, &vals[i], buf);
	}
	free(keys);
	free(vals);
	free(buf);
	return ret;
}

static int add_count(const struct report_maps *m, struct report_data *d, const void *key,
		     const void *val, struct pmubpf_stack *buf)
{
	const struct pmubpf_key *k = key;

	if (k->event >= (uint32_t)m->nevents)
		return 0;
	if (report_data__add_entry(d, k, val) || read_stack(m->stacks_fd, d, k->ustack, buf) ||
	    read_stack(m->stacks_fd, d, k->kstack, buf))
		return -ENOMEM;
	return 0;
}

/* --data-addr: a data map entry, and the stacks it names. */
static int add_data(const struct report_maps *m, struct report_data *d, const void *key,
		    const void *val, struct pmubpf_stack *buf)
{
	const struct pmubpf_data_key *k = key;

	if (k->k.event >= (uint32_t)m->nevents)
		return 0;
	if (report_data__add_data(d, &k->k, k->addr, val) ||
	    read_stack(m->stacks_fd, d, k->k.ustack, buf) ||
	    read_stack(m->stacks_fd, d, k->k.kstack, buf))
		return -ENOMEM;
	return 0;
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
	int ret = drain_map(m, d, m->counts_fd, sizeof(struct pmubpf_key), add_count);

	if (ret) {
		snprintf(err, errlen, "reading the counts map: %s", strerror(-ret));
		return ret;
	}
	if (m->data &&
	    (ret = drain_map(m, d, m->data_fd, sizeof(struct pmubpf_data_key), add_data)) != 0) {
		snprintf(err, errlen, "reading the data map (--data-addr): %s", strerror(-ret));
		return ret;
	}
	ret = sum_drops(m, d);
	if (ret)
		snprintf(err, errlen, "reading the drops map (what was lost): %s", strerror(-ret));
	return ret;
}
