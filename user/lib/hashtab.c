/* hashtab.c — open-addressing hash index (see hashtab.h for the contract).
 *
 * Slots are (hash, value) pairs in a power-of-two array probed linearly.
 * A stored hash of 0 marks an empty slot, so caller hashes of 0 are stored
 * as 1 (only the equality callback decides a match, so this is harmless).
 * Removal shifts following entries back instead of leaving tombstones, so
 * probe sequences never degrade under insert/remove churn.
 */
#include "hashtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HASHTAB_MIN_CAP 16

struct hashtab_slot {
	uint64_t hash; /* 0 = empty */
	uint64_t value;
};

struct hashtab {
	struct hashtab_slot *slots;
	size_t cap;   /* power of two, or 0 before the first insert */
	size_t count;
	hashtab_eq_fn eq;
	void *ctx;
};

static inline uint64_t stored_hash(uint64_t hash)
{
	return hash ? hash : 1;
}

struct hashtab *hashtab__new(hashtab_eq_fn eq, void *ctx)
{
	if (!eq) {
		errno = EINVAL;
		return NULL;
	}
	struct hashtab *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->eq = eq;
	h->ctx = ctx;
	return h;
}

void hashtab__free(struct hashtab *h)
{
	if (!h)
		return;
	free(h->slots);
	free(h);
}

size_t hashtab__count(const struct hashtab *h)
{
	return h->count;
}

/* Place (hash, value) into a table known to have a free slot. */
static void place(struct hashtab_slot *slots, size_t cap, uint64_t hash,
		  uint64_t value)
{
	size_t mask = cap - 1, i = (size_t)hash & mask;
	while (slots[i].hash)
		i = (i + 1) & mask;
	slots[i].hash = hash;
	slots[i].value = value;
}

static int resize(struct hashtab *h, size_t new_cap)
{
	struct hashtab_slot *slots = calloc(new_cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < h->cap; i++)
		if (h->slots[i].hash)
			place(slots, new_cap, h->slots[i].hash, h->slots[i].value);
	free(h->slots);
	h->slots = slots;
	h->cap = new_cap;
	return 0;
}

int hashtab__reserve(struct hashtab *h, size_t n)
{
	size_t cap = h->cap ? h->cap : HASHTAB_MIN_CAP;
	/* Keep count <= 3/4 cap. */
	while (n > cap / 4 * 3) {
		if (cap > SIZE_MAX / 2 / sizeof(struct hashtab_slot))
			return -ENOMEM;
		cap *= 2;
	}
	if (cap == h->cap)
		return 0;
	return resize(h, cap);
}

bool hashtab__find(const struct hashtab *h, uint64_t hash, const void *key,
		   uint64_t *value)
{
	if (!h->count)
		return false;
	uint64_t sh = stored_hash(hash);
	size_t mask = h->cap - 1, i = (size_t)sh & mask;
	for (; h->slots[i].hash; i = (i + 1) & mask) {
		if (h->slots[i].hash == sh &&
		    h->eq(key, h->slots[i].value, h->ctx)) {
			if (value)
				*value = h->slots[i].value;
			return true;
		}
	}
	return false;
}

int hashtab__insert(struct hashtab *h, uint64_t hash, uint64_t value)
{
	if (h->count == SIZE_MAX)
		return -ENOMEM;
	int err = hashtab__reserve(h, h->count + 1);
	if (err)
		return err;
	place(h->slots, h->cap, stored_hash(hash), value);
	h->count++;
	return 0;
}

bool hashtab__remove(struct hashtab *h, uint64_t hash, const void *key,
		     uint64_t *value)
{
	if (!h->count)
		return false;
	uint64_t sh = stored_hash(hash);
	size_t mask = h->cap - 1, i = (size_t)sh & mask;
	for (;; i = (i + 1) & mask) {
		if (!h->slots[i].hash)
			return false;
		if (h->slots[i].hash == sh &&
		    h->eq(key, h->slots[i].value, h->ctx))
			break;
	}
	if (value)
		*value = h->slots[i].value;
	/* Backward shift: pull later entries of the run into the hole when
	 * their home slot is not in (hole, j] cyclically. */
	size_t hole = i;
	for (size_t j = (i + 1) & mask; h->slots[j].hash; j = (j + 1) & mask) {
		size_t home = (size_t)h->slots[j].hash & mask;
		bool stays = hole <= j ? (home > hole && home <= j)
				       : (home > hole || home <= j);
		if (stays)
			continue;
		h->slots[hole] = h->slots[j];
		hole = j;
	}
	h->slots[hole].hash = 0;
	h->slots[hole].value = 0;
	h->count--;
	return true;
}

/* Finalizer of SplitMix64 / MurmurHash3: every input bit affects every
 * output bit, so the low bits used for the slot index are well spread. */
uint64_t hashtab__hash_u64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

uint64_t hashtab__hash_mix(uint64_t h, uint64_t x)
{
	return hashtab__hash_u64(h ^ (x + 0x9e3779b97f4a7c15ULL + (h << 6) +
				      (h >> 2)));
}

uint64_t hashtab__hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0x243f6a8885a308d3ULL ^ (len * 0x9e3779b97f4a7c15ULL);
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ hashtab__hash_u64(w)) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
		p += 8;
		len -= 8;
	}
	if (len) {
		uint64_t w = 0;
		memcpy(&w, p, len);
		h = (h ^ hashtab__hash_u64(w ^ 0xa0761d6478bd642fULL)) *
		    0xff51afd7ed558ccdULL;
	}
	return hashtab__hash_u64(h);
}

uint64_t hashtab__hash_str(const char *s)
{
	return hashtab__hash_bytes(s, strlen(s));
}
