/* drain.c — see drain.h. */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drain.h"

/* Entries read from the kernel per call: one syscall for a batch, where
 * a key-by-key walk made two each (get_next_key and lookup: 7% of the
 * write of a churn recording's 22000 entries), and emptying the map after
 * two more (get_next_key and delete: 10% of the recorder under churn,
 * whose windows hold ~30000 new stacks each). Stacks are ~1 KB: fewer. */
#define BATCH 1024
#define STACK_BATCH 128

/* What one entry of a drained map adds to d. */
typedef int (*drain_fn)(const struct report_maps *m, struct report_data *d, const void *key,
			const void *val);

/* Every entry of the hash map fd (keys of ksz bytes, values of vsz) to
 * fn, `batch` a syscall; taken out of the map as read if m->empty. The
 * window's maps are flipped out before a drain, so nothing writes them
 * while they are walked. */
static int drain_map(const struct report_maps *m, struct report_data *d, int fd, size_t ksz,
		     size_t vsz, uint32_t batch, drain_fn fn)
{
	char *keys = malloc(batch * ksz), *vals = malloc(batch * vsz);
	uint32_t token = 0; /* a hash map's: the next bucket */
	bool more = true;
	int ret = 0;

	if (!keys || !vals)
		ret = -ENOMEM;
	for (bool first = true; !ret && more; first = false) {
		__u32 n = batch;
		int err = m->empty ? bpf_map_lookup_and_delete_batch(fd, first ? NULL : &token, &token,
								     keys, vals, &n, NULL)
				   : bpf_map_lookup_batch(fd, first ? NULL : &token, &token, keys,
							  vals, &n, NULL);
		/* The last batch ends with ENOENT, and may hold entries. */
		if (err) {
			if (errno != ENOENT) {
				ret = -errno;
				break;
			}
			more = false;
		}
		for (__u32 i = 0; !ret && i < n; i++)
			ret = fn(m, d, keys + i * ksz, vals + i * vsz);
	}
	free(keys);
	free(vals);
	return ret;
}

/* A stack of the window, kept unless d has it (from a window before) or
 * it is no stack (its samples say "walk failed"). A stack no entry names
 * (its sample's count was dropped: counted) costs d its frames only. */
static int add_stack(const struct report_maps *m, struct report_data *d, const void *key,
		     const void *val)
{
	const struct pmubpf_stack *st = val;
	uint64_t k;

	(void)m;
	memcpy(&k, key, sizeof(k));
	if (k < PMUBPF_STACK_KEY_MIN || st->nr > PMUBPF_MAX_DEPTH || report_data__stack(d, k))
		return 0;
	return report_data__add_stack(d, k, st);
}

static int add_count(const struct report_maps *m, struct report_data *d, const void *key,
		     const void *val)
{
	const struct pmubpf_key *k = key;

	if (k->event >= (uint32_t)m->nevents)
		return 0;
	return report_data__add_entry(d, k, val);
}

/* --data-addr: a data map entry (its stacks are in the stacks map). */
static int add_data(const struct report_maps *m, struct report_data *d, const void *key,
		    const void *val)
{
	const struct pmubpf_data_key *k = key;

	if (k->k.event >= (uint32_t)m->nevents)
		return 0;
	return report_data__add_data(d, &k->k, k->addr, val);
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
	int ret = drain_map(m, d, m->stacks_fd, sizeof(uint64_t), sizeof(struct pmubpf_stack),
			    STACK_BATCH, add_stack);

	if (ret) {
		snprintf(err, errlen, "reading the stacks map: %s", strerror(-ret));
		return ret;
	}
	ret = drain_map(m, d, m->counts_fd, sizeof(struct pmubpf_key), sizeof(struct pmubpf_val), BATCH,
			add_count);
	if (ret) {
		snprintf(err, errlen, "reading the counts map: %s", strerror(-ret));
		return ret;
	}
	if (m->data && (ret = drain_map(m, d, m->data_fd, sizeof(struct pmubpf_data_key),
					sizeof(struct pmubpf_val), BATCH, add_data)) != 0) {
		snprintf(err, errlen, "reading the data map (--data-addr): %s", strerror(-ret));
		return ret;
	}
	ret = sum_drops(m, d);
	if (ret)
		snprintf(err, errlen, "reading the drops map (what was lost): %s", strerror(-ret));
	return ret;
}
