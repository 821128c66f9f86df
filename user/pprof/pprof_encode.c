/* pprof_encode.c — write the in-memory profile (pprof_int.h) as a
 * profile.proto message, straight from its records into a sink.
 *
 * Why not protobuf-c: packing with it needs a message tree over the whole
 * profile (a struct and a pointer per sample, location, line and label)
 * and the whole packed message in one buffer, both as large as the
 * profile itself, before the first byte is compressed. Here each record
 * is encoded as it is read into a small buffer that goes to the caller's
 * put (a gzip stream, pprof_write.c) every BUF_FLUSH bytes; the memory this takes does
 * not grow with the profile.
 *
 * The bytes are what protobuf-c (and Go's encoder) write for the same
 * message: fields in field-number order, proto3 zeros left out, repeated
 * scalars packed, every string of the table written (the first is "").
 * test_pprof checks this by decoding with protobuf-c and packing again.
 */
#include "pprof_int.h"
#include "pprof_pb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* File id of mapping `id`: the main mapping is written first as 1, those
 * before it move up by one, so ids stay 1..n in file order. */
static uint64_t file_map_id(const struct pprof *p, uint64_t id)
{
	if (!p->main_map || !id || id > p->main_map)
		return id;
	return id == p->main_map ? 1 : id + 1;
}

static void put_value_type(struct pbuf *w, unsigned field, const struct pprof_value_type *v)
{
	size_t at = begin(w, field);

	put_u64(w, 1, (uint64_t)v->type);
	put_u64(w, 2, (uint64_t)v->unit);
	end(w, at);
}

static int put_sample(struct pbuf *w, const struct pprof *p, const struct pprof_sample *s)
{
	const struct pprof_labelset *ls = &p->lsets[s->lset];
	/* Sample and 3 packed/label headers, ids, values, labels. */
	size_t at, in, bound = 4 * (1 + VARINT_MAX) + (size_t)s->nlocs * VARINT_MAX +
			       2 * VARINT_MAX + ls->n * (1 + VARINT_MAX + 4 * (1 + VARINT_MAX));
	int err = reserve(w, bound);

	if (err)
		return err;
	at = begin(w, 2);
	if (s->nlocs) {
		in = begin(w, 1);
		for (size_t i = 0; i < s->nlocs; i++)
			put_varint(w, p->locids[s->loc_off + i]);
		end(w, in);
	}
	in = begin(w, 2);
	if (!p->weight_only)
		put_varint(w, (uint64_t)s->value[0]);
	put_varint(w, (uint64_t)s->value[1]);
	end(w, in);
	for (size_t i = 0; i < ls->n; i++) {
		const struct pprof_labelrec *l = &p->labels[ls->off + i];

		in = begin(w, 3);
		put_u64(w, 1, (uint64_t)l->key);
		put_u64(w, 2, (uint64_t)l->str);
		put_u64(w, 3, (uint64_t)l->num);
		put_u64(w, 4, (uint64_t)l->num_unit);
		end(w, in);
	}
	end(w, at);
	return flush(w, false);
}

static int put_mapping(struct pbuf *w, const struct pprof *p, uint64_t id)
{
	const struct pprof_mapping *m = &p->maps[id - 1];
	size_t at;
	int err = reserve(w, 1 + VARINT_MAX + 10 * (1 + VARINT_MAX));

	if (err)
		return err;
	at = begin(w, 3);
	put_u64(w, 1, file_map_id(p, id));
	put_u64(w, 2, m->memory_start);
	put_u64(w, 3, m->memory_limit);
	put_u64(w, 4, m->file_offset);
	put_u64(w, 5, (uint64_t)m->filename);
	put_u64(w, 6, (uint64_t)m->build_id);
	put_u64(w, 7, m->has_functions);
	put_u64(w, 8, m->has_filenames);
	put_u64(w, 9, m->has_line_numbers);
	put_u64(w, 10, m->has_inline_frames);
	end(w, at);
	return flush(w, false);
}

static int put_location(struct pbuf *w, const struct pprof *p, size_t i)
{
	const struct pprof_loc *l = &p->locs[i];
	size_t at, in;
	int err = reserve(w, 4 * (1 + VARINT_MAX) + l->nlines * 3 * (1 + VARINT_MAX));

	if (err)
		return err;
	at = begin(w, 4);
	put_u64(w, 1, i + 1);
	put_u64(w, 2, file_map_id(p, l->mapping_id));
	put_u64(w, 3, l->address);
	for (size_t j = 0; j < l->nlines; j++) {
		const struct pprof_lineref *ln = &p->lines[l->line_off + j];

		in = begin(w, 4);
		put_u64(w, 1, ln->function_id);
		put_u64(w, 2, (uint64_t)ln->line);
		end(w, in);
	}
	end(w, at);
	return flush(w, false);
}

static int put_function(struct pbuf *w, const struct pprof *p, size_t i)
{
	const struct pprof_function *f = &p->funcs[i];
	size_t at;
	int err = reserve(w, 6 * (1 + VARINT_MAX));

	if (err)
		return err;
	at = begin(w, 5);
	put_u64(w, 1, i + 1);
	put_u64(w, 2, (uint64_t)f->name);
	put_u64(w, 3, (uint64_t)f->system_name);
	put_u64(w, 4, (uint64_t)f->filename);
	put_u64(w, 5, (uint64_t)f->start_line);
	end(w, at);
	return flush(w, false);
}

static int put_tail(struct pbuf *w, const struct pprof *p)
{
	size_t at;
	int err = reserve(w, 6 * (1 + VARINT_MAX) + 1 + VARINT_MAX +
			     p->ncomments * VARINT_MAX);

	if (err)
		return err;
	put_u64(w, 9, (uint64_t)p->time_nanos);
	put_u64(w, 10, (uint64_t)p->duration_nanos);
	put_value_type(w, 11, &p->period_type);
	put_u64(w, 12, (uint64_t)p->period);
	if (p->ncomments) {
		at = begin(w, 13);
		for (size_t i = 0; i < p->ncomments; i++)
			put_varint(w, (uint64_t)p->comments[i]);
		end(w, at);
	}
	return 0;
}

int pprof__encode(const struct pprof *p, pprof_put_fn put, void *ctx)
{
	struct pbuf w = { .put = put, .ctx = ctx };
	int err = reserve(&w, 2 * 3 * (1 + VARINT_MAX));

	if (err)
		return err;
	if (!p->weight_only)
		put_value_type(&w, 1, &p->sample_type[0]);
	put_value_type(&w, 1, &p->sample_type[1]);
	for (size_t i = 0; !err && i < p->nsamples; i++)
		err = put_sample(&w, p, &p->samples[i]);
	if (!err && p->main_map)
		err = put_mapping(&w, p, p->main_map);
	for (size_t i = 1; !err && i <= p->nmaps; i++)
		if (i != p->main_map)
			err = put_mapping(&w, p, i);
	for (size_t i = 0; !err && i < p->nlocs; i++)
		err = put_location(&w, p, i);
	for (size_t i = 0; !err && i < p->nfuncs; i++)
		err = put_function(&w, p, i);
	for (size_t i = 0; !err && i < p->nstrs; i++) {
		size_t len = strlen(p->strs[i]);

		if (!(err = reserve(&w, 1 + VARINT_MAX + len))) {
			put_bytes(&w, 6, p->strs[i], len);
			err = flush(&w, false);
		}
	}
	if (!err)
		err = put_tail(&w, p);
	if (!err)
		err = flush(&w, true);
	free(w.b);
	return err;
}
