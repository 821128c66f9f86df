/* elfsym_lookup.c — what an object of the cache (elfsym.c) answers once
 * its symbols are loaded: the code or data symbol at a link-time virtual
 * address, and a symbol by name (through an index built at the first
 * such question). Loads the tables (elfsym_tab.c) at the first lookup.
 */
#include "elfsym.h"
#include "elfsym_int.h"
#include "lib/hashtab.h"
#include "lib/sorted.h"

#include <gelf.h>
#include <string.h>

#define NESTED_WALK     4          /* lower symbols tried when one misses */

/* Is vaddr in the same PT_LOAD segment (by memory size) as addr? True
 * when there are no segments to tell. */
static bool same_segment(const struct elfobj *o, uint64_t addr, uint64_t vaddr)
{
	if (!o->nsegs)
		return true;
	for (size_t i = 0; i < o->nsegs; i++) {
		const struct seg *s = &o->segs[i];
		if (addr - s->vaddr < s->memsz)
			return vaddr - s->vaddr < s->memsz;
	}
	return false;
}

const struct elfsym *elfobj__lookup(struct elfobj *o, uint64_t vaddr)
{
	size_t n;

	if (!o)
		return NULL;
	elfobj_load_syms(o);
	n = UPPER_BOUND(o->syms, o->nsyms, addr, vaddr); /* last addr <= vaddr */
	if (!n)
		return NULL;
	size_t i = n - 1;
	const struct elfsym *s = &o->syms[i];
	if (s->size ? vaddr - s->addr < s->size
		    : (i + 1 < o->nsyms || same_segment(o, s->addr, vaddr)))
		return s;
	/* A small symbol nested in a bigger one that covers vaddr. */
	for (size_t j = i; j-- > 0 && i - j <= NESTED_WALK;)
		if (o->syms[j].size && vaddr - o->syms[j].addr < o->syms[j].size)
			return &o->syms[j];
	return NULL;
}

const struct elfsym *elfobj__lookup_data(struct elfobj *o, uint64_t vaddr)
{
	size_t lo = 0, hi, n;

	if (!o)
		return NULL;
	elfobj_load_syms(o);
	/* o->other: same-address code aliases, then data and TLS symbols,
	 * each part sorted by address (elfsym_tab.c): find where data
	 * starts, then search that part. */
	hi = o->nother;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint8_t t = o->other[mid].type;

		if (t == STT_FUNC || t == STT_GNU_IFUNC)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct elfsym *data = o->other + lo;
	n = UPPER_BOUND(data, o->nother - lo, addr, vaddr);
	/* The last object at or below vaddr that covers it, looking past a
	 * few smaller ones nested in a bigger (or unsized labels). */
	for (size_t j = n; j-- > 0 && n - j <= NESTED_WALK + 1;)
		if (data[j].type == STT_OBJECT && data[j].size && vaddr - data[j].addr < data[j].size)
			return &data[j];
	return NULL;
}

static const struct elfsym *sym_at(const struct elfobj *o, uint64_t i)
{
	return i < o->nsyms ? &o->syms[i] : &o->other[i - o->nsyms];
}

static bool name_eq(const void *key, uint64_t i, void *ctx)
{
	return !strcmp(sym_at(ctx, i)->name, key);
}

/* The name index: every process snapshot asks each of its objects for
 * the same few names (the labels record), and a scan of libc's symbols
 * per process was 9% of pmubpf's CPU under process churn. Built once per
 * object; the first of several equal names is kept (.symtab before
 * .dynsym's aliases), as the scan found it. */
static struct hashtab *name_index(struct elfobj *o)
{
	size_t n = o->nsyms + o->nother;
	struct hashtab *h = hashtab__new(name_eq, o);

	if (!h || hashtab__reserve(h, n)) {
		hashtab__free(h);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = sym_at(o, i)->name;
		uint64_t hash = hashtab__hash_str(name);

		if (!hashtab__find(h, hash, name, NULL))
			hashtab__insert(h, hash, i); /* reserved */
	}
	size_t bytes = n * 2 * 16; /* the table: about two slots per entry */
	o->bytes += bytes;
	o->cache->bytes += bytes;
	return h;
}

const struct elfsym *elfobj__find(struct elfobj *o, const char *name)
{
	uint64_t i;

	if (!o || !name)
		return NULL;
	elfobj_load_syms(o);
	if (!o->byname && !(o->byname = name_index(o))) {
		for (i = 0; i < o->nsyms + o->nother; i++) /* out of memory: scan */
			if (!strcmp(sym_at(o, i)->name, name))
				return sym_at(o, i);
		return NULL;
	}
	return hashtab__find(o->byname, hashtab__hash_str(name), name, &i) ? sym_at(o, i) : NULL;
}

size_t elfobj__nsyms(struct elfobj *o)
{
	elfobj_load_syms(o);
	return o->nsyms + o->nother;
}
