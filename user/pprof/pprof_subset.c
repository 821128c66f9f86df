/* pprof_subset.c — a profile of some of another's samples (pprof.h,
 * pprof__subset): what a push sends per series. Only the mappings,
 * locations, functions and strings those samples use are copied, so a
 * host's profile split into a hundred services is not a hundred copies
 * of every table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof_int.h"

static const char *str(const struct pprof *p, int64_t i)
{
	return i > 0 && (size_t)i < p->nstrs ? p->strs[i] : NULL;
}

void pprof__sanitize(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			*s = '_';
}

/* The labels of set `ls` as pprof_labels (strings borrowed from src,
 * keys sanitized into keybuf when asked). n_out: how many kept. */
static int set_labels(const struct pprof *src, uint32_t ls, const struct pprof_subset_opts *o,
		      struct pprof_label **out, char ***keys, size_t *n_out)
{
	const struct pprof_labelset *set = &src->lsets[ls];
	struct pprof_label *l = calloc(set->n ? set->n : 1, sizeof(*l));
	char **k = calloc(set->n ? set->n : 1, sizeof(*k));
	size_t n = 0;

	if (!l || !k)
		goto nomem;
	for (uint32_t i = 0; i < set->n; i++) {
		const struct pprof_labelrec *r = &src->labels[set->off + i];

		if (!r->str && o->drop_numeric)
			continue;
		l[n].key = str(src, r->key);
		l[n].str = r->str ? str(src, r->str) : NULL;
		if (r->str && !l[n].str)
			l[n].str = "";
		l[n].num = r->num;
		l[n].num_unit = str(src, r->num_unit);
		if (!l[n].key)
			continue;
		if (o->sanitize_names) {
			if (!(k[n] = strdup(l[n].key)))
				goto nomem;
			pprof__sanitize(k[n]);
			l[n].key = k[n];
		}
		n++;
	}
	*out = l;
	*keys = k;
	*n_out = n;
	return 0;
nomem:
	free(l);
	free(k);
	return -ENOMEM;
}

static void free_keys(char **k, size_t n)
{
	for (size_t i = 0; k && i < n; i++)
		free(k[i]);
	free(k);
}

/* The copy's id of src's mapping `id` (made on first use); 0 + errno. */
static uint64_t copy_mapping(struct pprof *dst, const struct pprof *src, uint64_t *ids,
			     uint64_t id)
{
	if (!id)
		return 0;
	if (!ids[id - 1]) {
		const struct pprof_mapping *m = &src->maps[id - 1];

		ids[id - 1] = pprof__add_mapping(dst, m->memory_start, m->memory_limit,
						 m->file_offset, str(src, m->filename),
						 str(src, m->build_id), m->has_functions);
		if (ids[id - 1] && id == src->main_map)
			pprof__set_main_mapping(dst, ids[id - 1]);
	}
	return ids[id - 1];
}

static uint64_t copy_location(struct pprof *dst, const struct pprof *src, uint64_t *map_ids,
			      uint64_t *loc_ids, pprof_locid id)
{
	const struct pprof_loc *lc = &src->locs[id - 1];
	struct pprof_line lines[64], *lp = lines;
	uint64_t mid = 0, got;

	if (loc_ids[id - 1])
		return loc_ids[id - 1];
	if (lc->mapping_id && !(mid = copy_mapping(dst, src, map_ids, lc->mapping_id)))
		return 0;
	if (lc->nlines > 64 && !(lp = calloc(lc->nlines, sizeof(*lp))))
		return 0;
	for (size_t i = 0; i < lc->nlines; i++) {
		const struct pprof_lineref *r = &src->lines[lc->line_off + i];
		const struct pprof_function *f = &src->funcs[r->function_id - 1];

		lp[i] = (struct pprof_line){
			.function = str(src, f->name) ? str(src, f->name) : "",
			.system_name = str(src, f->system_name),
			.filename = str(src, f->filename),
			.line = r->line,
			.start_line = f->start_line,
		};
	}
	got = pprof__add_location(dst, mid, lc->address, lp, lc->nlines);
	if (lp != lines)
		free(lp);
	return loc_ids[id - 1] = got;
}

struct pprof *pprof__subset(const struct pprof *src, const struct pprof_subset_opts *o,
			    size_t *cursor)
{
	char vtype[128];
	const char *vt = str(src, src->sample_type[1].type);
	const char *vu = str(src, src->sample_type[1].unit);
	uint64_t *map_ids = calloc(src->nmaps + 1, sizeof(*map_ids));
	uint64_t *loc_ids = calloc(src->nlocs + 1, sizeof(*loc_ids));
	struct pprof *dst = NULL;
	size_t i = cursor ? *cursor : 0, taken = 0;
	int err = -ENOMEM;

	if (!map_ids || !loc_ids)
		goto out;
	snprintf(vtype, sizeof(vtype), "%s", o->value_type ? o->value_type : vt ? vt : "");
	if (o->sanitize_names)
		pprof__sanitize(vtype);
	if (!(dst = pprof__new(vtype, vu ? vu : "", src->period)))
		goto out;
	dst->weight_only = o->weight_only;
	pprof__set_time(dst, src->time_nanos, src->duration_nanos);
	for (size_t c = 0; c < src->ncomments; c++)
		if (pprof__add_comment(dst, "%s", str(src, src->comments[c]) ?: ""))
			goto out;
	for (; i < src->nsamples && (!o->max_samples || taken < o->max_samples); i++) {
		const struct pprof_sample *s = &src->samples[i];
		uint64_t locs[256], *lp = locs;
		struct pprof_label *l;
		char **k;
		size_t n;

		if (o->set_group && o->set_group[s->lset] != o->group)
			continue;
		if (s->nlocs > 256 && !(lp = calloc(s->nlocs, sizeof(*lp))))
			goto out;
		bool bad = false;
		for (uint32_t j = 0; j < s->nlocs && !bad; j++)
			bad = !(lp[j] = copy_location(dst, src, map_ids, loc_ids,
						      src->locids[s->loc_off + j]));
		if (bad) {
			if (lp != locs)
				free(lp);
			goto out;
		}
		if (set_labels(src, s->lset, o, &l, &k, &n)) {
			if (lp != locs)
				free(lp);
			goto out;
		}
		err = pprof__add_sample(dst, lp, s->nlocs, s->value[0], s->value[1], l, n);
		free_keys(k, n);
		free(l);
		if (lp != locs)
			free(lp);
		if (err)
			goto out;
		err = -ENOMEM;
		taken++;
	}
	err = 0;
out:
	free(map_ids);
	free(loc_ids);
	if (err) {
		pprof__free(dst);
		errno = -err;
		return NULL;
	}
	if (cursor)
		*cursor = i;
	return dst;
}

size_t pprof__nsamples(const struct pprof *p)
{
	return p->nsamples;
}

int *pprof__group_sets(const struct pprof *p,
		       int (*group_of)(void *ctx, const struct pprof_label *l, size_t n), void *ctx)
{
	static const struct pprof_subset_opts plain;
	int *group = calloc(p->nlsets + 1, sizeof(*group));

	for (uint32_t ls = 0; group && ls < p->nlsets; ls++) {
		struct pprof_label *l;
		char **k;
		size_t n;
		int g = -ENOMEM;

		if (!set_labels(p, ls, &plain, &l, &k, &n)) {
			g = group_of(ctx, l, n);
			free_keys(k, n);
			free(l);
		}
		if (g < -1) {
			free(group);
			errno = -g;
			return NULL;
		}
		group[ls] = g;
	}
	if (!group)
		errno = ENOMEM;
	return group;
}
