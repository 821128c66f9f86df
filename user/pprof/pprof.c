/* pprof.c — accumulate a pprof profile: strings, mappings, functions,
 * locations and samples, each deduplicated.
 *
 * Last stage of the pipeline (contract in pprof.h); the layout of the
 * profile in memory is in pprof_int.h, and pprof_write.c encodes and
 * writes it.
 *
 * Deduplication goes through hashtab.h indices keyed by interned string
 * ids: strings by content, mappings by (start, limit, offset, filename),
 * functions by (name, system_name, filename), locations by (mapping_id,
 * address). Every add is O(1) amortized. Ids are array index + 1.
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

struct map_key { uint64_t start, limit, offset; int64_t filename; };
struct func_key { int64_t name, system_name, filename; };
struct loc_key { uint64_t mapping_id, address; };

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
	const pb_mapping *m = &((struct pprof *)ctx)->maps[v];
	return m->memory_start == k->start && m->memory_limit == k->limit &&
	       m->file_offset == k->offset && m->filename == k->filename;
}

static bool func_eq(const void *key, uint64_t v, void *ctx)
{
	const struct func_key *k = key;
	const pb_function *f = &((struct pprof *)ctx)->funcs[v];
	return f->name == k->name && f->system_name == k->system_name &&
	       f->filename == k->filename;
}

static bool loc_eq(const void *key, uint64_t v, void *ctx)
{
	const struct loc_key *k = key;
	const struct pprof_loc *l = &((struct pprof *)ctx)->locs[v];
	return l->mapping_id == k->mapping_id && l->address == k->address;
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
	perftools__profiles__value_type__init(&p->sample_type[0]);
	perftools__profiles__value_type__init(&p->sample_type[1]);
	perftools__profiles__value_type__init(&p->period_type);
	p->period = period;

	p->str_ht = hashtab__new(str_eq, p);
	p->map_ht = hashtab__new(map_eq, p);
	p->func_ht = hashtab__new(func_eq, p);
	p->loc_ht = hashtab__new(loc_eq, p);
	if (!p->str_ht || !p->map_ht || !p->func_ht || !p->loc_ht)
		goto fail;
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
	free(p->comments);
	hashtab__free(p->str_ht);
	hashtab__free(p->map_ht);
	hashtab__free(p->func_ht);
	hashtab__free(p->loc_ht);
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

/* Mappings are deduplicated on (start, limit, offset, filename). A repeat
 * add can only add information: has_functions is OR-ed in and a missing
 * build id is filled in. */
uint64_t pprof__add_mapping(struct pprof *p, uint64_t start, uint64_t limit,
			    uint64_t offset, const char *filename,
			    const char *build_id, bool has_functions)
{
	struct map_key k = { start, limit, offset, 0 };
	int64_t bid;
	uint64_t h, v;

	if (intern(p, filename, &k.filename) || intern(p, build_id, &bid)) {
		errno = ENOMEM;
		return 0;
	}
	h = hash3(hashtab__hash_mix(start, limit), offset, (uint64_t)k.filename);
	if (hashtab__find(p->map_ht, h, &k, &v)) {
		pb_mapping *m = &p->maps[v];
		m->has_functions = m->has_functions || has_functions;
		if (!m->build_id)
			m->build_id = bid;
		return v + 1;
	}
	if (RESERVE(p, maps, 1) || hashtab__insert(p->map_ht, h, p->nmaps)) {
		errno = ENOMEM;
		return 0;
	}
	pb_mapping *m = &p->maps[p->nmaps];
	perftools__profiles__mapping__init(m);
	m->id = p->nmaps + 1;
	m->memory_start = start;
	m->memory_limit = limit;
	m->file_offset = offset;
	m->filename = k.filename;
	m->build_id = bid;
	m->has_functions = has_functions;
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
	pb_function *f = &p->funcs[p->nfuncs];
	perftools__profiles__function__init(f);
	f->id = p->nfuncs + 1;
	f->name = k.name;
	f->system_name = k.system_name;
	f->filename = k.filename;
	f->start_line = l->start_line;
	*id = ++p->nfuncs;
	return 0;
}

uint64_t pprof__find_location(struct pprof *p, uint64_t mapping_id,
			      uint64_t address)
{
	struct loc_key k = { mapping_id, address };
	uint64_t v;

	if (hashtab__find(p->loc_ht, hashtab__hash_mix(mapping_id, address),
			  &k, &v))
		return v + 1;
	return 0;
}

/* mapping_id must be 0 or an existing mapping (else EINVAL). */
uint64_t pprof__add_location(struct pprof *p, uint64_t mapping_id,
			     uint64_t address, const struct pprof_line *lines,
			     size_t nlines)
{
	struct loc_key k = { mapping_id, address };
	uint64_t h = hashtab__hash_mix(mapping_id, address), v;
	size_t line0 = p->nlines;
	bool has_files = false, has_numbers = false;

	if (mapping_id > p->nmaps || (nlines && !lines)) {
		errno = EINVAL;
		return 0;
	}
	if (hashtab__find(p->loc_ht, h, &k, &v))
		return v + 1;
	if (RESERVE(p, locs, 1) || RESERVE(p, lines, nlines))
		goto nomem;
	for (size_t i = 0; i < nlines; i++) {
		uint64_t fid;
		if (function_id(p, &lines[i], &fid))
			goto nomem;
		pb_line *l = &p->lines[p->nlines++];
		perftools__profiles__line__init(l);
		l->function_id = fid;
		l->line = lines[i].line;
		has_files = has_files || (lines[i].filename && *lines[i].filename);
		has_numbers = has_numbers || lines[i].line > 0;
	}
	if (hashtab__insert(p->loc_ht, h, p->nlocs))
		goto nomem;
	p->locs[p->nlocs] = (struct pprof_loc){
		.mapping_id = mapping_id, .address = address,
		.line_off = line0, .nlines = nlines,
	};
	if (mapping_id) {
		pb_mapping *m = &p->maps[mapping_id - 1];
		m->has_filenames = m->has_filenames || has_files;
		m->has_line_numbers = m->has_line_numbers || has_numbers;
		m->has_inline_frames = m->has_inline_frames || nlines > 1;
	}
	return ++p->nlocs;
nomem:
	p->nlines = line0;
	errno = ENOMEM;
	return 0;
}

/* Location ids must exist (else -EINVAL); labels need a key. */
int pprof__add_sample(struct pprof *p, const uint64_t *locs, size_t nlocs,
		      int64_t count, int64_t weight,
		      const struct pprof_label *labels, size_t nlabels)
{
	if ((nlocs && !locs) || (nlabels && !labels))
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
		pb_label *l = &p->labels[p->nlabels + i];
		perftools__profiles__label__init(l);
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
	if (nlocs)
		memcpy(&p->locids[p->nlocids], locs, nlocs * sizeof(*locs));
	p->samples[p->nsamples++] = (struct pprof_sample){
		.loc_off = p->nlocids, .nlocs = nlocs,
		.label_off = p->nlabels, .nlabels = nlabels,
		.value = { count, weight },
	};
	p->nlocids += nlocs;
	p->nlabels += nlabels;
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
	const pb_line *l = &p->lines[p->locs[loc - 1].line_off];
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
