/* pprof_otlp.c — a profile as an OpenTelemetry OTLP profiles export
 * request (pprof.h, pprof__encode_otlp), the messages and field numbers
 * of opentelemetry-proto v1.11.0's profiles/v1development (our own
 * description of them: proto/otlp_profiles.proto).
 *
 * The profile's own tables are the request's dictionary as they are:
 * pprof ids are 1-based and OTLP's tables keep index 0 for the zero
 * value, so mapping, location and function id N is table index N, and
 * string N is string N (both start with ""). Each label record of the
 * label-set pool is an attribute (index = pool index + 1: the pool is
 * already shared by every sample with the same labels); each mapping's
 * build-id one more (process.executable.build_id.gnu); each sample its
 * own stack. Samples go to the resource of their group (a service),
 * each with one Profile: the event's weights, its period, the window.
 */
#include "pprof_pb.h"

#include <stdio.h>

enum { WIRE_I64 = 1 };

#define BUILD_ID_KEY "process.executable.build_id.gnu"
#define SERVICE_KEY "service.name"

static void put_fixed64(struct pbuf *w, unsigned field, uint64_t v)
{
	if (!v)
		return;
	put_tag(w, field, WIRE_I64);
	for (int i = 0; i < 8; i++)
		w->b[w->len++] = (uint8_t)(v >> (8 * i));
}

static void put_str(struct pbuf *w, unsigned field, const char *s)
{
	size_t n = strlen(s);

	if (n)
		put_bytes(w, field, s, n);
}

/* An empty message: a table's entry 0. */
static void put_empty(struct pbuf *w, unsigned field)
{
	put_tag(w, field, WIRE_LEN);
	put_varint(w, 0);
}

struct enc {
	const struct pprof *p;
	const struct pprof_otlp_opts *o;
	struct pbuf w;
	const int *group;            /* group of each label set, -1: left out;
	                              * NULL: all in group 0 */
	size_t *nin;                 /* samples in each group */
	int64_t type_str, key_str;   /* the extra strings' indices */
	char type[128];
};

static int put_value_type(struct enc *e, unsigned field)
{
	size_t at;
	int err = reserve(&e->w, 4 * (1 + VARINT_MAX));

	if (err)
		return err;
	at = begin(&e->w, field);
	put_u64(&e->w, 1, (uint64_t)e->type_str);
	put_u64(&e->w, 2, (uint64_t)e->p->sample_type[1].unit);
	end(&e->w, at);
	return 0;
}

static int put_sample(struct enc *e, size_t i)
{
	const struct pprof_sample *s = &e->p->samples[i];
	const struct pprof_labelset *set = &e->p->lsets[s->lset];
	struct pbuf *w = &e->w;
	size_t at, in;
	int err = reserve(w, 6 * (1 + VARINT_MAX) + (size_t)set->n * VARINT_MAX);

	if (err)
		return err;
	at = begin(w, 2);
	put_u64(w, 1, i + 1); /* stack_index: the sample's own */
	if (set->n) {
		in = begin(w, 2);
		for (uint32_t k = 0; k < set->n; k++)
			put_varint(w, set->off + k + 1);
		end(w, in);
	}
	in = begin(w, 4);
	put_varint(w, (uint64_t)s->value[1]);
	end(w, in);
	end(w, at);
	return 0;
}

static int group_of_sample(const struct enc *e, size_t i)
{
	return e->group ? e->group[e->p->samples[i].lset] : 0;
}

/* ResourceProfiles of group g: resource {service.name}, one scope, one
 * Profile with the group's samples. */
static int put_resource(struct enc *e, size_t g)
{
	const struct pprof_otlp_opts *o = e->o;
	const struct pprof *p = e->p;
	struct pbuf *w = &e->w;
	const char *name = o->groups ? o->groups[g] : "";
	size_t rp, x, y, z, sp, prof;
	int err = reserve(w, 16 * (1 + VARINT_MAX) + strlen(name) + sizeof(SERVICE_KEY) +
			     strlen(o->scope_name ?: "") + strlen(o->scope_version ?: ""));

	if (err)
		return err;
	rp = begin(w, 1);
	x = begin(w, 1);                 /* resource */
	y = begin(w, 1);                 /* attributes: KeyValue */
	put_str(w, 1, SERVICE_KEY);
	z = begin(w, 2);                 /* AnyValue */
	put_bytes(w, 1, name, strlen(name)); /* string_value, even "" */
	end(w, z);
	end(w, y);
	end(w, x);
	sp = begin(w, 2);                /* scope_profiles */
	x = begin(w, 1);                 /* scope */
	put_str(w, 1, o->scope_name ?: "");
	put_str(w, 2, o->scope_version ?: "");
	end(w, x);
	prof = begin(w, 2);              /* profiles */
	if ((err = put_value_type(e, 1)))
		return err;
	for (size_t i = 0; i < p->nsamples; i++)
		if (group_of_sample(e, i) == (int)g && (err = put_sample(e, i)))
			return err;
	if ((err = reserve(w, 4 * (1 + VARINT_MAX) + 9)))
		return err;
	put_fixed64(w, 3, (uint64_t)p->time_nanos);
	put_u64(w, 4, (uint64_t)p->duration_nanos);
	if ((err = put_value_type(e, 5)))
		return err;
	if ((err = reserve(w, 1 + VARINT_MAX + 3 * VARINT_MAX))) /* and the ends' lengths */
		return err;
	put_u64(w, 6, (uint64_t)p->period);
	end(w, prof);
	end(w, sp);
	end(w, rp);
	return 0;
}

static int put_dictionary(struct enc *e)
{
	const struct pprof *p = e->p;
	struct pbuf *w = &e->w;
	size_t dict, at, in;
	int err = reserve(w, 1 + VARINT_MAX + 8 * 2);

	if (err)
		return err;
	dict = begin(w, 2);
	put_empty(w, 1);                                     /* mapping_table */
	size_t bids = 0; /* build-id attributes so far: they follow the labels' */
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct pprof_mapping *m = &p->maps[i];

		if ((err = reserve(w, 8 * (1 + VARINT_MAX))))
			return err;
		at = begin(w, 1);
		put_u64(w, 1, m->memory_start);
		put_u64(w, 2, m->memory_limit);
		put_u64(w, 3, m->file_offset);
		put_u64(w, 4, (uint64_t)m->filename);
		if (m->build_id && *p->strs[m->build_id]) {
			in = begin(w, 5);
			put_varint(w, p->nlabels + 1 + bids++);
			end(w, in);
		}
		end(w, at);
	}
	if ((err = reserve(w, 2)))
		return err;
	put_empty(w, 2);                                     /* location_table */
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct pprof_loc *l = &p->locs[i];

		if ((err = reserve(w, 4 * (1 + VARINT_MAX) + l->nlines * 6 * (1 + VARINT_MAX))))
			return err;
		at = begin(w, 2);
		put_u64(w, 1, l->mapping_id);
		put_u64(w, 2, l->address);
		for (size_t k = 0; k < l->nlines; k++) {
			const struct pprof_lineref *r = &p->lines[l->line_off + k];

			in = begin(w, 3);
			put_u64(w, 1, r->function_id);
			put_u64(w, 2, (uint64_t)r->line);
			end(w, in);
		}
		end(w, at);
	}
	if ((err = reserve(w, 2)))
		return err;
	put_empty(w, 3);                                     /* function_table */
	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct pprof_function *f = &p->funcs[i];

		if ((err = reserve(w, 6 * (1 + VARINT_MAX))))
			return err;
		at = begin(w, 3);
		put_u64(w, 1, (uint64_t)f->name);
		put_u64(w, 2, (uint64_t)f->system_name);
		put_u64(w, 3, (uint64_t)f->filename);
		put_u64(w, 4, (uint64_t)f->start_line);
		end(w, at);
	}
	if ((err = reserve(w, 2)))
		return err;
	put_empty(w, 4);                                     /* link_table */
	for (size_t i = 0; i < p->nstrs; i++) {               /* string_table */
		size_t n = strlen(p->strs[i]);

		if ((err = reserve(w, 1 + VARINT_MAX + n)))
			return err;
		put_tag(w, 5, WIRE_LEN); /* every one, "" too: the indices count them */
		put_varint(w, n);
		memcpy(w->b + w->len, p->strs[i], n);
		w->len += n;
	}
	const char *extra[] = { e->type, BUILD_ID_KEY };
	for (size_t i = 0; i < 2; i++) {
		size_t n = strlen(extra[i]);
		if ((err = reserve(w, 1 + VARINT_MAX + n)))
			return err;
		put_bytes(w, 5, extra[i], n);
	}
	if ((err = reserve(w, 2)))
		return err;
	put_empty(w, 6);                                     /* attribute_table */
	for (size_t i = 0; i < p->nlabels; i++) {
		const struct pprof_labelrec *r = &p->labels[i];
		const char *v = r->str ? p->strs[r->str] : NULL;

		if ((err = reserve(w, 8 * (1 + VARINT_MAX) + (v ? strlen(v) : 0))))
			return err;
		at = begin(w, 6);
		put_u64(w, 1, (uint64_t)r->key);
		in = begin(w, 2);
		if (r->str)
			put_bytes(w, 1, v, strlen(v));
		else {
			put_tag(w, 3, WIRE_VARINT); /* int_value, 0 too: a value */
			put_varint(w, (uint64_t)r->num);
		}
		end(w, in);
		put_u64(w, 3, (uint64_t)r->num_unit);
		end(w, at);
	}
	for (size_t i = 0; i < p->nmaps; i++) {
		const char *bid = p->strs[p->maps[i].build_id];

		if (!p->maps[i].build_id || !*bid)
			continue;
		if ((err = reserve(w, 8 * (1 + VARINT_MAX) + strlen(bid))))
			return err;
		at = begin(w, 6);
		put_u64(w, 1, (uint64_t)e->key_str);
		in = begin(w, 2);
		put_bytes(w, 1, bid, strlen(bid));
		end(w, in);
		end(w, at);
	}
	if ((err = reserve(w, 2)))
		return err;
	put_empty(w, 7);                                     /* stack_table */
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pprof_sample *s = &p->samples[i];

		if ((err = reserve(w, 4 * (1 + VARINT_MAX) + (size_t)s->nlocs * VARINT_MAX)))
			return err;
		at = begin(w, 7);
		if (s->nlocs) {
			in = begin(w, 1);
			for (uint32_t k = 0; k < s->nlocs; k++)
				put_varint(w, p->locids[s->loc_off + k]);
			end(w, in);
		}
		end(w, at);
	}
	if ((err = reserve(w, VARINT_MAX)))
		return err;
	end(w, dict);
	return 0;
}

int pprof__encode_otlp(const struct pprof *p, const struct pprof_otlp_opts *o, uint8_t **out,
		       size_t *len)
{
	struct enc e = { .p = p, .o = o, .group = o->set_group };
	size_t ngroups = o->groups ? o->ngroups : 1;
	int err = 0;

	snprintf(e.type, sizeof(e.type), "%s", o->value_type ? o->value_type
						   : p->strs[p->sample_type[1].type]);
	if (o->sanitize_names)
		pprof__sanitize(e.type);
	e.type_str = (int64_t)p->nstrs;
	e.key_str = (int64_t)p->nstrs + 1;
	if (!(e.nin = calloc(ngroups + 1, sizeof(*e.nin))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < p->nsamples; i++) {
		int g = group_of_sample(&e, i);
		if (g >= 0 && (size_t)g < ngroups)
			e.nin[g]++;
	}
	for (size_t g = 0; !err && g < ngroups; g++) /* a group without samples says nothing */
		if (e.nin[g])
			err = put_resource(&e, g);
	if (!err)
		err = put_dictionary(&e);
	free(e.nin);
	if (err) {
		free(e.w.b);
		return err;
	}
	*out = e.w.b;
	*len = e.w.len;
	return 0;
}
