/* pprof_read.h — read back a profile pmubpf wrote: gunzip, decode with
 * the generated protobuf-c code, and look things up in it.
 *
 * Header only, like testing.h: the suites that check written profiles
 * (test_pprof, test_report, test_symbolize) share it.
 */
#ifndef PMUBPF_PPROF_READ_H
#define PMUBPF_PPROF_READ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;

/* Read a gzip file (a real gzip stream, not passthrough) and decode it:
 * NULL if unreadable or invalid. Free with pb_free. */
static inline pb_profile *load(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char in[65536];
	unsigned char *out = NULL;
	size_t cap = 0, len = 0;
	z_stream zs;
	int zr = Z_OK;
	pb_profile *prof = NULL;

	if (!f)
		return NULL;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 16) != Z_OK) {
		fclose(f);
		return NULL;
	}
	while (zr != Z_STREAM_END) {
		zs.avail_in = (uInt)fread(in, 1, sizeof(in), f);
		if (!zs.avail_in)
			break;
		zs.next_in = in;
		while (zs.avail_in && zr != Z_STREAM_END) {
			if (len == cap) {
				cap = cap ? cap * 2 : 1 << 20;
				unsigned char *o = realloc(out, cap);
				if (!o)
					goto out;
				out = o;
			}
			zs.next_out = out + len;
			zs.avail_out = (uInt)(cap - len);
			zr = inflate(&zs, Z_NO_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END)
				goto out;
			len = cap - zs.avail_out;
		}
	}
	if (zr == Z_STREAM_END)
		prof = perftools__profiles__profile__unpack(NULL, len, out);
out:
	inflateEnd(&zs);
	fclose(f);
	free(out);
	return prof;
}

static inline void pb_free(pb_profile *p)
{
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
}

static inline const char *str(const pb_profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : NULL;
}

static inline const Perftools__Profiles__Location *pb_location(const pb_profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	return NULL;
}

static inline const Perftools__Profiles__Mapping *pb_mapping(const pb_profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_mapping; i++)
		if (p->mapping[i]->id == id)
			return p->mapping[i];
	return NULL;
}

/* Function name of location id's leaf line, or NULL. */
static inline const char *pb_loc_name(const pb_profile *p, uint64_t id)
{
	const Perftools__Profiles__Location *l = pb_location(p, id);

	if (!l || !l->n_line)
		return NULL;
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == l->line[0]->function_id)
			return str(p, p->function[i]->name);
	return NULL;
}

/* Is there a comment equal to text? */
static inline bool pb_has_comment(const pb_profile *p, const char *text)
{
	for (size_t i = 0; i < p->n_comment; i++)
		if (!strcmp(str(p, p->comment[i]) ? str(p, p->comment[i]) : "", text))
			return true;
	return false;
}

#endif
