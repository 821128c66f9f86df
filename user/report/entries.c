/* entries.c — see entries.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hashtab.h"
#include "entries.h"
#include "lib/grow.h"

static bool stack_eq(const void *key, uint64_t idx, void *ctx)
{
	return ((struct report_data *)ctx)->stack_keys[idx] == *(const uint64_t *)key;
}

int report_data__init(struct report_data *d)
{
	memset(d, 0, sizeof(*d));
	d->stack_index = hashtab__new(stack_eq, d);
	return d->stack_index ? 0 : -ENOMEM;
}

void report_data__free(struct report_data *d)
{
	for (int e = 0; e < PMUBPF_MAX_EVENTS; e++)
		free(d->ev[e].v);
	hashtab__free(d->stack_index);
	hashtab__free(d->entry_index);
	free(d->stacks);
	free(d->stack_keys);
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

int report_data__add_stack(struct report_data *d, uint64_t key, const struct pmubpf_stack *st)
{
	uint64_t h = hashtab__hash_u64(key), idx;
	size_t cap = d->cap_stacks;

	if (st->nr > PMUBPF_MAX_DEPTH)
		return -EINVAL;
	if (hashtab__find(d->stack_index, h, &key, &idx))
		return 0;
	/* Two arrays of one capacity: both grow before it is committed. */
	size_t kcap = cap;
	if (GROW(d->stacks, cap, d->nstacks, 1) || GROW(d->stack_keys, kcap, d->nstacks, cap - d->nstacks))
		return -ENOMEM;
	d->cap_stacks = cap < kcap ? cap : kcap;
	if (hashtab__insert(d->stack_index, h, d->nstacks))
		return -ENOMEM;
	d->stacks[d->nstacks] = *st;
	d->stack_keys[d->nstacks++] = key;
	return 0;
}

const struct pmubpf_stack *report_data__stack(const struct report_data *d, uint64_t key)
{
	uint64_t idx;

	if (hashtab__find(d->stack_index, hashtab__hash_u64(key), &key, &idx))
		return &d->stacks[idx];
	return NULL;
}

/* entry_index values: the event in the top byte, the index below. */
#define ENTRY_EV_SHIFT 56

static bool entry_eq(const void *key, uint64_t val, void *ctx)
{
	const struct report_data *d = ctx;
	const struct report_event *ev = &d->ev[val >> ENTRY_EV_SHIFT];

	return !memcmp(&ev->v[val & ((1ULL << ENTRY_EV_SHIFT) - 1)].k, key, sizeof(struct pmubpf_key));
}

static uint64_t entry_hash(const struct pmubpf_key *k)
{
	return hashtab__hash_bytes(k, sizeof(*k));
}

/* Index dst's entries not indexed yet. */
static int index_entries(struct report_data *d)
{
	if (!d->entry_index && !(d->entry_index = hashtab__new(entry_eq, d)))
		return -ENOMEM;
	for (int e = 0; e < PMUBPF_MAX_EVENTS; e++) {
		for (size_t i = d->indexed[e]; i < d->ev[e].n; i++)
			if (hashtab__insert(d->entry_index, entry_hash(&d->ev[e].v[i].k),
					    (uint64_t)e << ENTRY_EV_SHIFT | i))
				return -ENOMEM;
		d->indexed[e] = d->ev[e].n;
	}
	return 0;
}

int report_data__merge(struct report_data *dst, const struct report_data *src)
{
	uint64_t val;

	if (index_entries(dst))
		return -ENOMEM;
	for (size_t i = 0; i < src->nstacks; i++)
		if (report_data__add_stack(dst, src->stack_keys[i], &src->stacks[i]))
			return -ENOMEM;
	for (int e = 0; e < PMUBPF_MAX_EVENTS; e++) {
		const struct report_event *se = &src->ev[e];
		struct report_event *de = &dst->ev[e];

		for (int r = 0; r < PMUBPF_DROP__MAX; r++) {
			de->drops[r].count += se->drops[r].count;
			de->drops[r].period += se->drops[r].period;
		}
		for (size_t i = 0; i < se->n; i++) {
			const struct report_entry *en = &se->v[i];
			uint64_t h = entry_hash(&en->k);

			if (hashtab__find(dst->entry_index, h, &en->k, &val)) {
				struct pmubpf_val *v = &de->v[val & ((1ULL << ENTRY_EV_SHIFT) - 1)].v;

				v->count += en->v.count;
				v->period += en->v.period;
				continue;
			}
			if (report_data__add_entry(dst, &en->k, &en->v) ||
			    hashtab__insert(dst->entry_index, h, (uint64_t)e << ENTRY_EV_SHIFT | (de->n - 1)))
				return -ENOMEM;
			dst->indexed[e] = de->n;
		}
	}
	return 0;
}
