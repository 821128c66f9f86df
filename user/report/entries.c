/* entries.c — see entries.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hashtab.h"
#include "entries.h"
#include "lib/grow.h"

static bool stack_eq(const void *key, uint64_t off, void *ctx)
{
	return ((struct report_data *)ctx)->pool[off] == *(const uint64_t *)key;
}

int report_data__init(struct report_data *d)
{
	memset(d, 0, sizeof(*d));
	d->stack_index = hashtab__new(stack_eq, d);
	return d->stack_index ? 0 : -ENOMEM;
}

void report_data__free(struct report_data *d)
{
	for (int e = 0; e < PMUBPF_MAX_EVENTS; e++) {
		free(d->ev[e].v);
		free(d->data[e].v);
	}
	hashtab__free(d->stack_index);
	hashtab__free(d->entry_index);
	free(d->pool);
	memset(d, 0, sizeof(*d));
}

int report_data__add_entry(struct report_data *d, const struct pmubpf_key *k,
			   const struct pmubpf_val *v)
{
	if (k->event >= PMUBPF_MAX_EVENTS)
		return -EINVAL;
	struct report_event *ev = &d->ev[k->event];
	if (GROW(ev->v, ev->cap, ev->n, 1))
		return -ENOMEM;
	ev->v[ev->n++] = (struct report_entry){ .k = *k, .v = *v };
	return 0;
}

int report_data__add_data(struct report_data *d, const struct pmubpf_key *k, uint64_t addr,
			  const struct pmubpf_val *v)
{
	if (k->event >= PMUBPF_MAX_EVENTS)
		return -EINVAL;
	struct report_event *ev = &d->data[k->event];
	if (GROW(ev->v, ev->cap, ev->n, 1))
		return -ENOMEM;
	ev->v[ev->n++] = (struct report_entry){ .k = *k, .v = *v, .addr = addr };
	return 0;
}

/* Keep (key, nr frames at ips) unless key is there: 0 or -ENOMEM. */
static int add_frames(struct report_data *d, uint64_t key, uint64_t nr, const void *ips)
{
	uint64_t h = hashtab__hash_u64(key), off;

	if (hashtab__find(d->stack_index, h, &key, &off))
		return 0;
	off = d->npool;
	if (GROW(d->pool, d->cap_pool, d->npool, 2 + nr) || hashtab__insert(d->stack_index, h, off))
		return -ENOMEM;
	d->pool[off] = key;
	d->pool[off + 1] = nr;
	memcpy(&d->pool[off + 2], ips, nr * sizeof(uint64_t));
	d->npool += 2 + nr;
	d->nstacks++;
	return 0;
}

int report_data__add_stack(struct report_data *d, uint64_t key, const struct pmubpf_stack *st)
{
	if (st->nr > PMUBPF_MAX_DEPTH)
		return -EINVAL;
	return add_frames(d, key, st->nr, st->ips);
}

const struct report_stack *report_data__stack(const struct report_data *d, uint64_t key)
{
	uint64_t off;

	if (hashtab__find(d->stack_index, hashtab__hash_u64(key), &key, &off))
		return (const struct report_stack *)&d->pool[off + 1];
	return NULL;
}

/* entry_index values: the event in the top byte, then whether it is a
 * data entry, then the index. */
#define ENTRY_EV_SHIFT 56
#define ENTRY_DATA_BIT (1ULL << 55)
#define ENTRY_IDX(v) ((v) & (ENTRY_DATA_BIT - 1))

static const struct report_event *side(const struct report_data *d, uint64_t val)
{
	return val & ENTRY_DATA_BIT ? &d->data[val >> ENTRY_EV_SHIFT] : &d->ev[val >> ENTRY_EV_SHIFT];
}

struct entry_probe {
	const struct report_entry *en;
	bool data;
};

/* Entries are equal when their side, key and data address are. */
static bool entry_eq(const void *key, uint64_t val, void *ctx)
{
	const struct entry_probe *a = key;
	const struct report_entry *b = &side(ctx, val)->v[ENTRY_IDX(val)];

	return a->data == !!(val & ENTRY_DATA_BIT) && a->en->addr == b->addr &&
	       !memcmp(&a->en->k, &b->k, sizeof(b->k));
}

static uint64_t entry_hash(const struct report_entry *en, bool data)
{
	return hashtab__hash_bytes(&en->k, sizeof(en->k)) ^
	       hashtab__hash_u64(en->addr + data);
}

static uint64_t entry_val(int e, bool data, size_t i)
{
	return (uint64_t)e << ENTRY_EV_SHIFT | (data ? ENTRY_DATA_BIT : 0) | i;
}

/* Index dst's entries not indexed yet. */
static int index_entries(struct report_data *d)
{
	if (!d->entry_index && !(d->entry_index = hashtab__new(entry_eq, d)))
		return -ENOMEM;
	for (int data = 0; data < 2; data++)
		for (int e = 0; e < PMUBPF_MAX_EVENTS; e++) {
			const struct report_event *ev = data ? &d->data[e] : &d->ev[e];

			for (size_t i = d->indexed[data][e]; i < ev->n; i++)
				if (hashtab__insert(d->entry_index, entry_hash(&ev->v[i], data),
						    entry_val(e, data, i)))
					return -ENOMEM;
			d->indexed[data][e] = ev->n;
		}
	return 0;
}

/* Add src's entries of one side of event e to dst's. */
static int merge_side(struct report_data *dst, const struct report_event *se, int e, bool data)
{
	struct report_event *de = data ? &dst->data[e] : &dst->ev[e];
	uint64_t val;

	for (size_t i = 0; i < se->n; i++) {
		const struct report_entry *en = &se->v[i];
		struct entry_probe probe = { en, data };
		uint64_t h = entry_hash(en, data);

		if (hashtab__find(dst->entry_index, h, &probe, &val)) {
			struct pmubpf_val *v = &de->v[ENTRY_IDX(val)].v;

			v->count += en->v.count;
			v->period += en->v.period;
			continue;
		}
		if ((data ? report_data__add_data(dst, &en->k, en->addr, &en->v)
			  : report_data__add_entry(dst, &en->k, &en->v)) ||
		    hashtab__insert(dst->entry_index, h, entry_val(e, data, de->n - 1)))
			return -ENOMEM;
		dst->indexed[data][e] = de->n;
	}
	return 0;
}

int report_data__merge(struct report_data *dst, const struct report_data *src)
{
	if (index_entries(dst))
		return -ENOMEM;
	for (size_t off = 0; off < src->npool; off += 2 + src->pool[off + 1])
		if (add_frames(dst, src->pool[off], src->pool[off + 1], &src->pool[off + 2]))
			return -ENOMEM;
	for (int e = 0; e < PMUBPF_MAX_EVENTS; e++) {
		const struct report_event *se = &src->ev[e];
		struct report_event *de = &dst->ev[e];

		for (int r = 0; r < PMUBPF_DROP__MAX; r++) {
			de->drops[r].count += se->drops[r].count;
			de->drops[r].period += se->drops[r].period;
		}
		if (merge_side(dst, se, e, false) || merge_side(dst, &src->data[e], e, true))
			return -ENOMEM;
	}
	return 0;
}

struct addr_set {
	uint64_t *v;
	size_t n, cap;
};

static bool addr_eq(const void *key, uint64_t idx, void *ctx)
{
	return ((struct addr_set *)ctx)->v[idx] == *(const uint64_t *)key;
}

int report_data__kernel_addrs(const struct report_data *d, uint64_t **out, size_t *n)
{
	struct addr_set set = { 0 };
	struct hashtab *h = hashtab__new(addr_eq, &set);
	int err = h ? 0 : -ENOMEM;

	for (size_t off = 0; !err && off < d->npool; off += 2 + d->pool[off + 1]) {
		const uint64_t nr = d->pool[off + 1], *ips = &d->pool[off + 2];

		if (!nr || !(ips[0] >> 63))
			continue; /* a user stack */
		for (uint64_t i = 0; !err && i < nr; i++) {
			uint64_t a = i ? ips[i] - 1 : ips[i], hash = hashtab__hash_u64(a);

			if (hashtab__find(h, hash, &a, NULL))
				continue;
			if (GROW(set.v, set.cap, set.n, 1) || hashtab__insert(h, hash, set.n))
				err = -ENOMEM;
			else
				set.v[set.n++] = a;
		}
	}
	hashtab__free(h);
	if (err) {
		free(set.v);
		return err;
	}
	*out = set.v;
	*n = set.n;
	return 0;
}
