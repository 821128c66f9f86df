/* pprof_dump.c — print a gzipped pprof profile as one JSON object.
 *
 * Test tool: the integration tests run pmubpf, then `pprof_dump out.pb.gz`
 * and inspect the JSON (with python3/jq) instead of parsing protobuf. All
 * string-table references are resolved, and stacks are expanded:
 *
 *   {"sample_type":[["samples","count"],["cycles","count"]],
 *    "period_type":["cycles","count"], "period":N, "time_nanos":N,
 *    "duration_nanos":N, "comments":["..."],
 *    "mappings":[{"id":1,"start":N,"limit":N,"offset":N,"file":"...",
 *                 "build_id":"...","has_functions":true}],
 *    "samples":[{"values":[count,weight], "labels":{"comm":"x","tid":42},
 *                "stack":[{"addr":N,"mapping":1,
 *                          "frames":[{"func":"f","file":"f.c","line":3,
 *                                     "system_name":"_Z1fv","start_line":1}]}]}]}
 *   (system_name only when it differs from func, start_line only if known)
 *
 * Stacks and frames are in file order: leaf location first, and within a
 * location the innermost inlined function first. Numbers are plain JSON
 * integers (addresses too, so readers must not round them to doubles).
 * Strings are escaped; invalid UTF-8 bytes become U+FFFD. Exit status: 0,
 * 1 with one line on stderr for unreadable or invalid input (bad gzip,
 * bad protobuf, dangling references), 2 for bad usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/hashtab.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;

static const char *prog = "pprof_dump";

/* --- input -------------------------------------------------------------- */

/* Read and gunzip path into a malloc'ed buffer. NULL + *why on failure. */
static unsigned char *read_gzip(const char *path, size_t *len, const char **why)
{
	FILE *f = fopen(path, "rb");
	unsigned char in[65536], *out = NULL;
	size_t cap = 0, n = 0;
	z_stream zs;
	int zr = Z_OK;
	bool first = true;

	if (!f) {
		*why = strerror(errno);
		return NULL;
	}
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 16) != Z_OK) {
		fclose(f);
		*why = "zlib initialization failed";
		return NULL;
	}
	*why = NULL;
	while (!*why && zr != Z_STREAM_END) {
		zs.avail_in = (uInt)fread(in, 1, sizeof(in), f);
		if (ferror(f)) {
			*why = strerror(errno);
			break;
		}
		if (!zs.avail_in) {
			*why = first ? "empty file" : "truncated gzip stream";
			break;
		}
		if (first && (zs.avail_in < 2 || in[0] != 0x1f || in[1] != 0x8b)) {
			*why = "not a gzip file";
			break;
		}
		first = false;
		zs.next_in = in;
		while (zs.avail_in && zr != Z_STREAM_END) {
			if (n == cap) {
				unsigned char *o = realloc(out, cap = cap ? cap * 2 : 1 << 20);
				if (!o) {
					*why = "out of memory";
					break;
				}
				out = o;
			}
			zs.next_out = out + n;
			zs.avail_out = (uInt)(cap - n);
			zr = inflate(&zs, Z_NO_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END) {
				*why = zs.msg ? zs.msg : "corrupt gzip stream";
				break;
			}
			n = cap - zs.avail_out;
		}
	}
	inflateEnd(&zs);
	fclose(f);
	if (*why) {
		free(out);
		return NULL;
	}
	*len = n;
	return out ? out : calloc(1, 1);
}

/* --- id lookup ---------------------------------------------------------- */

struct id_index {
	uint64_t *ids; /* ids[i] = id of the i-th message */
	struct hashtab *h;
};

static bool id_eq(const void *key, uint64_t v, void *ctx)
{
	return ((const uint64_t *)ctx)[v] == *(const uint64_t *)key;
}

/* Takes ownership of ids. Fails on ENOMEM or a zero/duplicate id. */
static const char *index_init(struct id_index *x, uint64_t *ids, size_t n)
{
	x->ids = ids;
	x->h = hashtab__new(id_eq, ids);
	if (!ids || !x->h || hashtab__reserve(x->h, n))
		return "out of memory";
	for (size_t i = 0; i < n; i++) {
		uint64_t hash = hashtab__hash_u64(ids[i]);
		if (!ids[i] || hashtab__find(x->h, hash, &ids[i], NULL))
			return "zero or duplicate id";
		if (hashtab__insert(x->h, hash, i))
			return "out of memory";
	}
	return NULL;
}

/* Index of the message with this id, or -1. */
static long index_get(const struct id_index *x, uint64_t id)
{
	uint64_t v;
	return hashtab__find(x->h, hashtab__hash_u64(id), &id, &v) ? (long)v : -1;
}

static void index_free(struct id_index *x)
{
	hashtab__free(x->h);
	free(x->ids);
}

/* --- validation --------------------------------------------------------- */

struct dump {
	const pb_profile *p;
	struct id_index maps, locs, funcs;
	char **loc_json;     /* per location index: its JSON, rendered once */
	size_t *loc_json_len;
};

static bool str_ok(const pb_profile *p, int64_t i)
{
	return i >= 0 && (uint64_t)i < p->n_string_table;
}

/* Every reference must resolve; returns a reason or NULL. */
static const char *validate(struct dump *d)
{
	const pb_profile *p = d->p;
	const char *why;

	if (!p->n_string_table || p->string_table[0][0])
		return "string_table[0] is not \"\"";
#define IDS(field, n, ix) do { \
		uint64_t *ids = calloc((n) ? (n) : 1, sizeof(*ids)); \
		for (size_t i = 0; ids && i < (n); i++) \
			ids[i] = p->field[i]->id; \
		if ((why = index_init(&d->ix, ids, (n)))) \
			return why; } while (0)
	IDS(mapping, p->n_mapping, maps);
	IDS(location, p->n_location, locs);
	IDS(function, p->n_function, funcs);
#undef IDS
	for (size_t i = 0; i < p->n_sample_type; i++)
		if (!str_ok(p, p->sample_type[i]->type) ||
		    !str_ok(p, p->sample_type[i]->unit))
			return "bad string index in sample_type";
	if (p->period_type && (!str_ok(p, p->period_type->type) ||
			       !str_ok(p, p->period_type->unit)))
		return "bad string index in period_type";
	for (size_t i = 0; i < p->n_comment; i++)
		if (!str_ok(p, p->comment[i]))
			return "bad string index in comment";
	for (size_t i = 0; i < p->n_mapping; i++)
		if (!str_ok(p, p->mapping[i]->filename) ||
		    !str_ok(p, p->mapping[i]->build_id))
			return "bad string index in mapping";
	for (size_t i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];
		if (!str_ok(p, f->name) || !str_ok(p, f->system_name) ||
		    !str_ok(p, f->filename))
			return "bad string index in function";
	}
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		if (l->mapping_id && index_get(&d->maps, l->mapping_id) < 0)
			return "location refers to a missing mapping";
		for (size_t j = 0; j < l->n_line; j++)
			if (l->line[j]->function_id &&
			    index_get(&d->funcs, l->line[j]->function_id) < 0)
				return "line refers to a missing function";
	}
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		for (size_t j = 0; j < s->n_location_id; j++)
			if (index_get(&d->locs, s->location_id[j]) < 0)
				return "sample refers to a missing location";
		for (size_t j = 0; j < s->n_label; j++)
			if (!str_ok(p, s->label[j]->key) ||
			    !str_ok(p, s->label[j]->str))
				return "bad string index in label";
	}
	return NULL;
}

/* --- JSON output -------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static int utf8_len(const unsigned char *s)
{
	int n;
	uint32_t c;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Reject overlongs, surrogates and > U+10FFFF. */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

static void json_str(FILE *o, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	putc('"', o);
	while (*s) {
		int n = utf8_len(s);
		if (!n) {
			fputs("\\ufffd", o);
			s++;
		} else if (n > 1) {
			fwrite(s, 1, (size_t)n, o);
			s += n;
		} else {
			switch (*s) {
			case '"':  fputs("\\\"", o); break;
			case '\\': fputs("\\\\", o); break;
			case '\n': fputs("\\n", o); break;
			case '\r': fputs("\\r", o); break;
			case '\t': fputs("\\t", o); break;
			default:
				if (*s < 0x20 || *s == 0x7f)
					fprintf(o, "\\u%04x", *s);
				else
					putc(*s, o);
			}
			s++;
		}
	}
	putc('"', o);
}

static const char *S(const pb_profile *p, int64_t i)
{
	return p->string_table[i];
}

static void json_pair(FILE *o, const pb_profile *p, const Perftools__Profiles__ValueType *v)
{
	putc('[', o);
	json_str(o, v ? S(p, v->type) : "");
	putc(',', o);
	json_str(o, v ? S(p, v->unit) : "");
	putc(']', o);
}

static void render_location(FILE *o, const struct dump *d,
			    const Perftools__Profiles__Location *l)
{
	const pb_profile *p = d->p;

	fprintf(o, "{\"addr\":%" PRIu64 ",\"mapping\":%" PRIu64 ",\"frames\":[",
		l->address, l->mapping_id);
	for (size_t i = 0; i < l->n_line; i++) {
		const Perftools__Profiles__Line *ln = l->line[i];
		const Perftools__Profiles__Function *f = NULL;
		if (ln->function_id)
			f = p->function[index_get(&d->funcs, ln->function_id)];
		fputs(i ? ",{\"func\":" : "{\"func\":", o);
		json_str(o, f ? S(p, f->name) : "");
		fputs(",\"file\":", o);
		json_str(o, f ? S(p, f->filename) : "");
		fprintf(o, ",\"line\":%" PRId64, ln->line);
		if (f && f->system_name && f->system_name != f->name) {
			fputs(",\"system_name\":", o);
			json_str(o, S(p, f->system_name));
		}
		if (f && f->start_line)
			fprintf(o, ",\"start_line\":%" PRId64, f->start_line);
		fputc('}', o);
	}
	fputs("]}", o);
}

/* Stacks repeat the same locations over and over: render each once. */
static int dump_location(FILE *o, struct dump *d, uint64_t id)
{
	long i = index_get(&d->locs, id);
	if (!d->loc_json[i]) {
		FILE *m = open_memstream(&d->loc_json[i], &d->loc_json_len[i]);
		if (!m)
			return -1;
		render_location(m, d, d->p->location[i]);
		if (fclose(m))
			return -1;
	}
	return fwrite(d->loc_json[i], 1, d->loc_json_len[i], o) ==
	       d->loc_json_len[i] ? 0 : -1;
}

static int dump(FILE *o, struct dump *d)
{
	const pb_profile *p = d->p;

	fputs("{\"sample_type\":[", o);
	for (size_t i = 0; i < p->n_sample_type; i++) {
		if (i)
			putc(',', o);
		json_pair(o, p, p->sample_type[i]);
	}
	fputs("],\"period_type\":", o);
	json_pair(o, p, p->period_type);
	fprintf(o, ",\"period\":%" PRId64 ",\"time_nanos\":%" PRId64
		",\"duration_nanos\":%" PRId64 ",\"comments\":[",
		p->period, p->time_nanos, p->duration_nanos);
	for (size_t i = 0; i < p->n_comment; i++) {
		if (i)
			putc(',', o);
		json_str(o, S(p, p->comment[i]));
	}
	fputs("],\"mappings\":[", o);
	for (size_t i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = p->mapping[i];
		fprintf(o, "%s{\"id\":%" PRIu64 ",\"start\":%" PRIu64 ",\"limit\":%"
			PRIu64 ",\"offset\":%" PRIu64 ",\"file\":", i ? "," : "",
			m->id, m->memory_start, m->memory_limit, m->file_offset);
		json_str(o, S(p, m->filename));
		fputs(",\"build_id\":", o);
		json_str(o, S(p, m->build_id));
		fprintf(o, ",\"has_functions\":%s}", m->has_functions ? "true" : "false");
	}
	fputs("],\"samples\":[", o);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		fputs(i ? ",\n{\"values\":[" : "\n{\"values\":[", o);
		for (size_t j = 0; j < s->n_value; j++)
			fprintf(o, "%s%" PRId64, j ? "," : "", s->value[j]);
		fputs("],\"labels\":{", o);
		for (size_t j = 0; j < s->n_label; j++) {
			const Perftools__Profiles__Label *l = s->label[j];
			if (j)
				putc(',', o);
			json_str(o, S(p, l->key));
			putc(':', o);
			if (l->str)
				json_str(o, S(p, l->str));
			else
				fprintf(o, "%" PRId64, l->num);
		}
		fputs("},\"stack\":[", o);
		for (size_t j = 0; j < s->n_location_id; j++) {
			if (j)
				putc(',', o);
			if (dump_location(o, d, s->location_id[j]))
				return -1;
		}
		fputs("]}", o);
	}
	fputs("]}\n", o);
	return 0;
}

int main(int argc, char **argv)
{
	struct dump d;
	const char *why = NULL;
	unsigned char *buf;
	size_t len = 0;
	int rc = 1;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: %s FILE.pb.gz\n", prog);
		return 2;
	}
	memset(&d, 0, sizeof(d));
	buf = read_gzip(argv[1], &len, &why);
	if (!buf)
		goto out;
	d.p = perftools__profiles__profile__unpack(NULL, len, buf);
	free(buf);
	if (!d.p) {
		why = "not a valid profile protobuf";
		goto out;
	}
	why = validate(&d);
	if (why)
		goto out;
	d.loc_json = calloc(d.p->n_location + 1, sizeof(*d.loc_json));
	d.loc_json_len = calloc(d.p->n_location + 1, sizeof(*d.loc_json_len));
	if (!d.loc_json || !d.loc_json_len ||
	    (dump(stdout, &d) && !ferror(stdout)))
		why = "out of memory";
	else if (fflush(stdout) || ferror(stdout))
		why = "error writing stdout";
	else
		rc = 0;
out:
	if (why)
		fprintf(stderr, "%s: %s: %s\n", prog, argv[1], why);
	for (size_t i = 0; d.loc_json && i < d.p->n_location; i++)
		free(d.loc_json[i]);
	free(d.loc_json);
	free(d.loc_json_len);
	index_free(&d.maps);
	index_free(&d.locs);
	index_free(&d.funcs);
	if (d.p)
		perftools__profiles__profile__free_unpacked((pb_profile *)d.p, NULL);
	return rc;
}
