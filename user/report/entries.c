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
