/* hashtab.h — a small open-addressing hash index, shared by pmubpf modules.
 *
 * The table maps a caller-computed 64-bit hash to a 64-bit value, and knows
 * nothing about keys: lookups pass a key pointer that the caller's equality
 * callback compares against a stored value. The usual pattern is to keep
 * the real records in a growable array and store their *indices* here, so
 * the array may be reallocated freely while the index stays valid:
 *
 *	static bool name_eq(const void *key, uint64_t idx, void *ctx)
 *	{
 *		struct names *n = ctx;
 *		return strcmp(n->v[idx], key) == 0;
 *	}
 *	h = hashtab__new(name_eq, names);
 *	uint64_t hash = hashtab__hash_str(s), idx;
 *	if (!hashtab__find(h, hash, s, &idx)) {
 *		idx = append(names, s);
 *		if (hashtab__insert(h, hash, idx)) ... ENOMEM
 *	}
 *
 * Linear probing, power-of-two capacity, load factor at most 3/4, stored
 * hashes compared before the callback is called, backward-shift deletion
 * (no tombstones). Find, insert and remove are O(1) expected, insert
 * amortized over growth. Not thread-safe.
 */
#ifndef PMUBPF_HASHTAB_H
#define PMUBPF_HASHTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashtab;

/* Does the record identified by `value` have key `key`? ctx is the pointer
 * given to hashtab__new. Only called for entries whose hash matches. */
typedef bool (*hashtab_eq_fn)(const void *key, uint64_t value, void *ctx);

/* New empty table. Returns NULL + errno (ENOMEM, or EINVAL if eq is NULL). */
struct hashtab *hashtab__new(hashtab_eq_fn eq, void *ctx);
/* Frees the table (never the caller's records). NULL is fine. */
void hashtab__free(struct hashtab *h);

/* Look for an entry with this hash whose value eq() accepts for key. On a
 * hit, stores the value in *value (if value is non-NULL) and returns true. */
bool hashtab__find(const struct hashtab *h, uint64_t hash, const void *key,
		   uint64_t *value);

/* Add (hash, value). Does not check for an existing equal entry: call
 * hashtab__find first when keys must be unique. Returns 0 or -ENOMEM (the
 * table is unchanged on failure). */
int hashtab__insert(struct hashtab *h, uint64_t hash, uint64_t value);

/* Remove the entry find() would return for (hash, key). Stores its value in
 * *value if non-NULL. Returns true if an entry was removed. */
bool hashtab__remove(struct hashtab *h, uint64_t hash, const void *key,
		     uint64_t *value);

/* Make room for n entries in total without further growth. 0 or -ENOMEM. */
int hashtab__reserve(struct hashtab *h, size_t n);
/* Number of entries. */
size_t hashtab__count(const struct hashtab *h);

/* Hash helpers: well-mixed 64-bit hashes for common key shapes. Combine
 * several fields with hashtab__hash_mix(hashtab__hash_mix(a, b), c)... */
uint64_t hashtab__hash_u64(uint64_t x);
uint64_t hashtab__hash_mix(uint64_t h, uint64_t x);
uint64_t hashtab__hash_bytes(const void *data, size_t len);
uint64_t hashtab__hash_str(const char *s);

#endif
