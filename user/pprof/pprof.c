/* pprof.c — accumulate a pprof profile: strings, mappings, functions,
 * locations and samples, each deduplicated.
 *
 * Last stage of the pipeline (contract in pprof.h); the layout of the
 * profile in memory is in pprof_int.h, and pprof_write.c encodes and
 * writes it.
 *
 * Deduplication goes through hashtab.h indices: strings by content,
 * mappings by (start, limit, offset, filename), functions by (name,
 * system_name, filename) as string ids, locations by (mapping_id,
 * address), label sets by their labels. Every add is O(1) amortized. Ids
 * are array index + 1.
 *
 * The symbolizer adds a frame's mapping for every frame, millions in a
 * large profile, nearly all of them repeats: a mapping is looked up by
 * its numbers and its file name compared in place, and its strings are
 * interned only when it is new (interning hashes the whole path).
 */
#include "pprof.h"
#include "pprof_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hashtab.h"
#include "lib/grow.h"

struct map_key { uint64_t start, limit, offset; const char *filename, *build_id; };
struct func_key { int64_t name, system_name, filename; };

/* Make room for `extra` more elements after the first n of array f. */
#define RESERVE(p, f, extra) GROW((p)->f, (p)->cap_##f, (p)->n##f, (extra))

/* --- hash keys ---------------------------------------------------------- */

static bool str_eq(const void *key, uint64_t v, void *ctx)
{
	return strcmp(((struct pprof *)ctx)->strs[v], key) == 0;
}

static bool map_eq(const void *key, uint64_t v, void *ctx)
{
	const struct map_key *k = key;
	const struct pprof *p = ctx;
	const struct pprof_mapping *m = &p->maps[v];
	return m->memory_start == k->start && m->memory_limit == k->limit &&
	       m->file_offset == k->offset && !strcmp(p->strs[m->filename], k->filename) &&
	       (!k->build_id || !*k->build_id || !m->build_id ||
		!strcmp(p->strs[m->build_id], k->build_id));
}

static bool func_eq(const void *key, uint64_t v, void *ctx)
{
	const struct func_key *k = key;
	const struct pprof_function *f = &((struct pprof *)ctx)->funcs[v];
	return f->name == k->name && f->system_name == k->system_name &&
	       f->filename == k->filename;
}

/* --- the location index -------------------------------------------------
 * The symbolizer looks up every frame of every sample by (mapping,
 * address) before anything else: millions of lookups in a table of tens
 * of thousands. A hashtab.h index would compare through the locations
 * array, a second cache miss per lookup; this one keeps the key in the
 * slot. Linear probing, power-of-two size, at most 3/4 full; id 0 marks a
 * free slot. */

#define LOCIDX_MIN 1024

static size_t loc_home(uint64_t mapping_id, uint64_t address, size_t mask)
{
	return (size_t)hashtab__hash_mix(mapping_id, address) & mask;
}

static pprof_locid locidx_find(const struct pprof *p, uint64_t mapping_id, uint64_t address)
{
	size_t mask = p->loc_cap - 1;

	if (!p->loc_cap)
		return 0;
	for (size_t i = loc_home(mapping_id, address, mask); p->loc_slots[i].id; i = (i + 1) & mask)
		if (p->loc_slots[i].address == address && p->loc_slots[i].mapping_id == mapping_id)
			return p->loc_slots[i].id;
	return 0;
}

static void locidx_place(struct pprof_locslot *slots, size_t cap, struct pprof_locslot s)
{
	size_t i = loc_home(s.mapping_id, s.address, cap - 1);

	while (slots[i].id)
		i = (i + 1) & (cap - 1);
	slots[i] = s;
}

/* Room for one more location in the index. 0 or -ENOMEM. */
static int locidx_reserve(struct pprof *p)
{
	size_t cap = p->loc_cap ? p->loc_cap * 2 : LOCIDX_MIN;
	struct pprof_locslot *slots;

	if (p->nlocs + 1 <= p->loc_cap / 4 * 3)
		return 0;
	if (!(slots = calloc(cap, sizeof(*slots))))
		return -ENOMEM;
	for (size_t i = 0; i < p->loc_cap; i++)
		if (p->loc_slots[i].id)
			locidx_place(slots, cap, p->loc_slots[i]);
	free(p->loc_slots);
	p->loc_slots = slots;
	p->loc_cap = cap;
	return 0;
}

/* A label set (key: the candidate's labels, at the end of the pool) is
 * equal to set v if it has the same labels in the same order. */
struct lset_key { const struct pprof_labelrec *labels; uint32_t n; };

static bool lset_eq(const void *key, uint64_t v, void *ctx)
{
	const struct lset_key *k = key;
	const struct pprof *p = ctx;
	const struct pprof_labelset *ls = &p->lsets[v];
	return ls->n == k->n &&
	       !memcmp(&p->labels[ls->off], k->labels, k->n * sizeof(*k->labels));
}

static uint64_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
	return hashtab__hash_mix(hashtab__hash_mix(hashtab__hash_u64(a), b), c);
}

/* Index of s in the string table, adding it if new. NULL and "" are 0. */
static int intern(struct pprof *p, const char *s, int64_t *out)
{
	uint64_t h, v;

	if (!s || !*s) {
		*out = 0;
		return 0;
	}
	h = hashtab__hash_str(s);
	if (hashtab__find(p->str_ht, h, s, &v)) {
		*out = (int64_t)v;
		return 0;
	}
	if (RESERVE(p, strs, 1))
		return -ENOMEM;
	char *copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	if (hashtab__insert(p->str_ht, h, p->nstrs)) {
		free(copy);
		return -ENOMEM;
	}
	p->strs[p->nstrs] = copy;
	*out = (int64_t)p->nstrs++;
	return 0;
}

/* --- construction ------------------------------------------------------- */

struct pprof *pprof__new(const char *value_type, const char *value_unit,
			 int64_t period)
{
	struct pprof *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->period = period;

	p->str_ht = hashtab__new(str_eq, p);
	p->map_ht = hashtab__new(map_eq, p);
	p->func_ht = hashtab__new(func_eq, p);
	p->lset_ht = hashtab__new(lset_eq, p);
	if (!p->str_ht || !p->map_ht || !p->func_ht || !p->lset_ht)
		goto fail;
	if (RESERVE(p, lsets, 1))
		goto fail;
	p->lsets[p->nlsets++] = (struct pprof_labelset){ 0, 0 };
	if (RESERVE(p, strs, 1) || !(p->strs[0] = strdup("")))
		goto fail;
	p->nstrs = 1;
	if (intern(p, "samples", &p->sample_type[0].type) ||
	    intern(p, "count", &p->sample_type[0].unit) ||
	    intern(p, value_type, &p->sample_type[1].type) ||
	    intern(p, value_unit, &p->sample_type[1].unit))
		goto fail;
	p->period_type.type = p->sample_type[1].type;
	p->period_type.unit = p->sample_type[1].unit;
	return p;
fail:
	pprof__free(p);
	errno = ENOMEM;
	return NULL;
}

void pprof__free(struct pprof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nstrs; i++)
		free(p->strs[i]);
	free(p->strs);
	free(p->maps);
	free(p->funcs);
	free(p->locs);
	free(p->lines);
	free(p->samples);
	free(p->locids);
	free(p->labels);
	free(p->lsets);
	free(p->comments);
	hashtab__free(p->str_ht);
	hashtab__free(p->map_ht);
	hashtab__free(p->func_ht);
	free(p->loc_slots);
	hashtab__free(p->lset_ht);
	free(p);
}

void pprof__set_time(struct pprof *p, int64_t time_nanos, int64_t duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

int pprof__add_comment(struct pprof *p, const char *fmt, ...)
{
	char *s;
	int64_t idx;
	va_list ap;
	int n, err;

	if (RESERVE(p, comments, 1))
		return -ENOMEM;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	err = intern(p, s, &idx);
	free(s);
	if (err)
		return err;
	p->comments[p->ncomments++] = idx;
	return 0;
}

/* A mapping added again: it can only add information. */
static uint64_t mapping_again(struct pprof *p, uint64_t v, const char *build_id, bool has_functions)
{
	struct pprof_mapping *m = &p->maps[v];
	int64_t bid;

	m->has_functions = m->has_functions || has_functions;
	if (!m->build_id && build_id && *build_id) {
		if (intern(p, build_id, &bid)) {
			errno = ENOMEM;
			return 0;
		}
		m->build_id = bid;
	}
	p->last_map = v + 1;
	return v + 1;
}

/* Mappings are deduplicated on (start, limit, offset, filename) and the
 * build id where both have one (two builds of a file at one path, as
 * symb__place's shared mappings of many processes can be, stay apart). A
 * repeat add can only add information: has_functions is OR-ed in and a
 * missing build id is filled in. Frames come in runs of one mapping (every
 * kernel frame is in one): the last answer is tried before the index. */
uint64_t pprof__add_mapping(struct pprof *p, uint64_t start, uint64_t limit,
			    uint64_t offset, const char *filename,
			    const char *build_id, bool has_functions)
{
	struct map_key k = { start, limit, offset, filename ? filename : "", build_id };
	int64_t file, bid;
	uint64_t h, v;

	if (p->last_map && map_eq(&k, p->last_map - 1, p))
		return mapping_again(p, p->last_map - 1, build_id, has_functions);
	h = hash3(hashtab__hash_mix(start, limit), offset, 0);
	if (hashtab__find(p->map_ht, h, &k, &v))
		return mapping_again(p, v, build_id, has_functions);
	if (p->nmaps >= UINT32_MAX) { /* the location index keeps 32 bits */
		errno = EOVERFLOW;
		return 0;
	}
	if (intern(p, filename, &file) || intern(p, build_id, &bid) ||
	    RESERVE(p, maps, 1) || hashtab__insert(p->map_ht, h, p->nmaps)) {
		errno = ENOMEM;
		return 0;
	}
	p->maps[p->nmaps] = (struct pprof_mapping){
		.memory_start = start,
		.memory_limit = limit,
		.file_offset = offset,
		.filename = file,
		.build_id = bid,
		.has_functions = has_functions,
	};
	p->last_map = p->nmaps + 1;
	return ++p->nmaps;
}

int pprof__set_main_mapping(struct pprof *p, uint64_t id)
{
	if (!id || id > p->nmaps)
		return -EINVAL;
	p->main_map = id;
	return 0;
}

/* Function id for a line's (name, system_name, filename), adding it if new.
 * A repeat with a known start_line fills in an unknown one. */
static int function_id(struct pprof *p, const struct pprof_line *l,
		       uint64_t *id)
{
	struct func_key k;
	uint64_t h, v;

	if (intern(p, l->function, &k.name) ||
	    intern(p, l->filename, &k.filename))
		return -ENOMEM;
	if (!l->system_name)
		k.system_name = k.name;
	else if (intern(p, l->system_name, &k.system_name))
		return -ENOMEM;
	h = hash3((uint64_t)k.name, (uint64_t)k.system_name, (uint64_t)k.filename);
	if (hashtab__find(p->func_ht, h, &k, &v)) {
		if (!p->funcs[v].start_line)
			p->funcs[v].start_line = l->start_line;
		*id = v + 1;
		return 0;
	}
	if (RESERVE(p, funcs, 1) || hashtab__insert(p->func_ht, h, p->nfuncs))
		return -ENOMEM;
	p->funcs[p->nfuncs] = (struct pprof_function){
		.name = k.name,
		.system_name = k.system_name,
		.filename = k.filename,
		.start_line = l->start_line,
	};
	*id = ++p->nfuncs;
	return 0;
}

uint64_t pprof__find_location(struct pprof *p, uint64_t mapping_id,
			      uint64_t address)
{
	return locidx_find(p, mapping_id, address);
}

/* Room for one more location of nlines lines: 0, or -1 with errno
 * (EOVERFLOW: ids are stored as pprof_locid; ENOMEM). */
static int location_room(struct pprof *p, size_t nlines)
{
	if (p->nlocs >= UINT32_MAX - 1) {
		errno = EOVERFLOW;
		return -1;
	}
	if (RESERVE(p, locs, 1) || RESERVE(p, lines, nlines) || locidx_reserve(p)) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* Add the location (mapping_id, address) whose lines are the ones
 * written from line0 to the end of p->lines (room made by
 * location_room); its mapping learns what they have. Returns its id. */
static uint64_t commit_location(struct pprof *p, uint64_t mapping_id, uint64_t address,
				size_t line0)
{
	locidx_place(p->loc_slots, p->loc_cap, (struct pprof_locslot){
		.address = address, .mapping_id = (uint32_t)mapping_id,
		.id = (pprof_locid)(p->nlocs + 1) });
	p->locs[p->nlocs] = (struct pprof_loc){
		.mapping_id = mapping_id, .address = address,
		.line_off = line0, .nlines = p->nlines - line0,
	};
	if (mapping_id) {
		struct pprof_mapping *m = &p->maps[mapping_id - 1];

		for (size_t i = line0; i < p->nlines; i++) {
			m->has_filenames = m->has_filenames ||
					   p->funcs[p->lines[i].function_id - 1].filename;
			m->has_line_numbers = m->has_line_numbers || p->lines[i].line > 0;
		}
		m->has_inline_frames = m->has_inline_frames || p->nlines - line0 > 1;
	}
	return ++p->nlocs;
}

/* mapping_id must be 0 or an existing mapping (else EINVAL). */
uint64_t pprof__add_location(struct pprof *p, uint64_t mapping_id,
			     uint64_t address, const struct pprof_line *lines,
			     size_t nlines)
{
	size_t line0 = p->nlines;
	pprof_locid id;

	if (mapping_id > p->nmaps || (nlines && !lines)) {
		errno = EINVAL;
		return 0;
	}
	if ((id = locidx_find(p, mapping_id, address)))
		return id;
	if (location_room(p, nlines))
		return 0;
	for (size_t i = 0; i < nlines; i++) {
		uint64_t fid;

		if (function_id(p, &lines[i], &fid)) {
			p->nlines = line0;
			errno = ENOMEM;
			return 0;
		}
		p->lines[p->nlines++] = (struct pprof_lineref){ fid, lines[i].line };
	}
	return commit_location(p, mapping_id, address, line0);
}

uint64_t pprof__add_location_like(struct pprof *p, uint64_t mapping_id,
				  uint64_t address, uint64_t like)
{
	size_t line0 = p->nlines;
	pprof_locid id;

	if (mapping_id > p->nmaps || !like || like > p->nlocs) {
		errno = EINVAL;
		return 0;
	}
	if ((id = locidx_find(p, mapping_id, address)))
		return id;
	const struct pprof_loc src = p->locs[like - 1];
	if (location_room(p, src.nlines))
		return 0;
	/* Copied, not shared: the encoder walks each location's own run. */
	memcpy(&p->lines[line0], &p->lines[src.line_off], src.nlines * sizeof(*p->lines));
	p->nlines += src.nlines;
	return commit_location(p, mapping_id, address, line0);
}

/* The set of labels at the end of the pool (written there, not yet
 * committed): an existing equal set's index, else the new set's. */
static int label_set(struct pprof *p, size_t n, uint32_t *out)
{
	struct lset_key k = { &p->labels[p->nlabels], (uint32_t)n };
	uint64_t h = hashtab__hash_bytes(k.labels, n * sizeof(*k.labels)), v;

	if (!n) {
		*out = 0;
		return 0;
	}
	if (hashtab__find(p->lset_ht, h, &k, &v)) {
		*out = (uint32_t)v;
		return 0;
	}
	if (p->nlsets >= UINT32_MAX || RESERVE(p, lsets, 1) ||
	    hashtab__insert(p->lset_ht, h, p->nlsets))
		return -ENOMEM;
	p->lsets[p->nlsets] = (struct pprof_labelset){ p->nlabels, (uint32_t)n };
	p->nlabels += n;
	*out = (uint32_t)p->nlsets++;
	return 0;
}

/* Location ids must exist (else -EINVAL); labels need a key. */
int pprof__add_sample(struct pprof *p, const uint64_t *locs, size_t nlocs,
		      int64_t count, int64_t weight,
		      const struct pprof_label *labels, size_t nlabels)
{
	uint32_t lset;

	if ((nlocs && !locs) || (nlabels && !labels) || nlocs > UINT32_MAX ||
	    nlabels > UINT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < nlocs; i++)
		if (!locs[i] || locs[i] > p->nlocs)
			return -EINVAL;
	for (size_t i = 0; i < nlabels; i++)
		if (!labels[i].key || !*labels[i].key)
			return -EINVAL;
	if (RESERVE(p, samples, 1) || RESERVE(p, locids, nlocs) ||
	    RESERVE(p, labels, nlabels))
		return -ENOMEM;
	/* Fill the pools past their ends; commit only once all succeeded. */
	for (size_t i = 0; i < nlabels; i++) {
		const struct pprof_label *in = &labels[i];
		struct pprof_labelrec *l = &p->labels[p->nlabels + i];

		*l = (struct pprof_labelrec){ 0 };
		if (intern(p, in->key, &l->key))
			return -ENOMEM;
		if (in->str) {
			if (intern(p, in->str, &l->str))
				return -ENOMEM;
		} else {
			l->num = in->num;
			if (intern(p, in->num_unit, &l->num_unit))
				return -ENOMEM;
		}
	}
	if (label_set(p, nlabels, &lset))
		return -ENOMEM;
	for (size_t i = 0; i < nlocs; i++)
		p->locids[p->nlocids + i] = (pprof_locid)locs[i];
	p->samples[p->nsamples++] = (struct pprof_sample){
		.loc_off = p->nlocids, .nlocs = (uint32_t)nlocs, .lset = lset,
		.value = { count, weight },
	};
	p->nlocids += nlocs;
	return 0;
}

/* --- lookups ------------------------------------------------------------ */

const char *pprof__intern(struct pprof *p, const char *s)
{
	int64_t idx;
	if (intern(p, s, &idx)) {
		errno = ENOMEM;
		return NULL;
	}
	return p->strs[idx];
}

const char *pprof__location_name(struct pprof *p, uint64_t loc)
{
	if (!loc || loc > p->nlocs || !p->locs[loc - 1].nlines)
		return NULL;
	const struct pprof_lineref *l = &p->lines[p->locs[loc - 1].line_off];
	int64_t name = p->funcs[l->function_id - 1].name;
	return name ? p->strs[name] : NULL;
}

uint64_t pprof__location_address(struct pprof *p, uint64_t loc)
{
	return loc && loc <= p->nlocs ? p->locs[loc - 1].address : 0;
}

const char *pprof__location_mapping_file(struct pprof *p, uint64_t loc)
{
	uint64_t m;

	if (!loc || loc > p->nlocs)
		return NULL;
	m = p->locs[loc - 1].mapping_id;
	if (!m || m > p->nmaps || !p->maps[m - 1].filename)
		return NULL;
	return p->strs[p->maps[m - 1].filename];
}
