/* test_encode.c — pprof_encode.c's profile.proto against protobuf-c's.
 *
 * The encoder writes the wire format by hand; these tests decode what it
 * wrote with the generated protobuf-c code, compare it field by field with
 * the profile that was built, and pack the decoded message again with
 * protobuf-c: the bytes must be the same, so every field, its order, its
 * packing and its omission when zero are what protobuf-c itself writes.
 * The file (pprof__write) and the HTTP answer (pprof__encode_gz) must hold
 * the same bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "pprof/pprof.h"
#include "pprof_read.h"
#include "testing.h"

/* gunzip a whole buffer: malloc'd bytes in *out, or NULL. */
static uint8_t *gunzip(const uint8_t *in, size_t inlen, size_t *outlen)
{
	z_stream zs;
	size_t cap = 1 << 16, len = 0;
	uint8_t *out = malloc(cap);
	int zr = Z_OK;

	memset(&zs, 0, sizeof(zs));
	if (!out || inflateInit2(&zs, 15 + 16) != Z_OK) {
		free(out);
		return NULL;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)inlen;
	while (zr == Z_OK) {
		if (len == cap) {
			uint8_t *o = realloc(out, cap *= 2);
			if (!o)
				break;
			out = o;
		}
		zs.next_out = out + len;
		zs.avail_out = (uInt)(cap - len);
		zr = inflate(&zs, Z_NO_FLUSH);
		len = cap - zs.avail_out;
	}
	inflateEnd(&zs);
	if (zr != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	*outlen = len;
	return out;
}

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
	    (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (f) {
		*len = (size_t)ftell(f);
		fclose(f);
	}
	return buf;
}

enum { DEEP = 300, NSAMPLES = 1000 };

/* A profile that reaches every field and every length case: a main
 * mapping that is not the first added, a build id added on a repeat,
 * inlined lines, negative and large values, string, numeric and unit
 * labels shared by many samples, a sample without labels, one without
 * locations, one deep enough that its length takes two bytes, a string
 * longer than 127 bytes, comments. */
static struct pprof *build(uint64_t *deep_locs)
{
	struct pprof *p = pprof__new("cpu", "nanoseconds", 10101010);
	char longname[300];
	uint64_t m1, m2, m3, locs[4];

	if (!p)
		return NULL;
	pprof__set_time(p, 1700000000123456789LL, 3000000000LL);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	m1 = pprof__add_mapping(p, 0x1000, 0x2000, 0, "/lib/a.so", NULL, false);
	m2 = pprof__add_mapping(p, 0x400000, 0x500000, 0x1000, "/bin/main", NULL, true);
	m3 = pprof__add_mapping(p, 0xffffffff80000000ULL, UINT64_MAX, 0, "[kernel.kallsyms]", NULL, true);
	if (!m1 || !m2 || !m3 || pprof__set_main_mapping(p, m2) ||
	    pprof__add_mapping(p, 0x400000, 0x500000, 0x1000, "/bin/main", "cafe01", true) != m2)
		goto fail;
	const struct pprof_line inl[] = {
		{ "inner", NULL, "main.c", 12, 10 },
		{ "outer", "_Z5outerv", "main.c", 40, 35 },
	};
	const struct pprof_line lng[] = { { longname, NULL, NULL, 0, 0 } };
	const struct pprof_line neg[] = { { "neg", NULL, "n.c", -1, -7 } };
	if (!(locs[0] = pprof__add_location(p, m2, 0x401234, inl, 2)) ||
	    !(locs[1] = pprof__add_location(p, m1, 0x1100, lng, 1)) ||
	    !(locs[2] = pprof__add_location(p, m3, 0xffffffff81000000ULL, neg, 1)) ||
	    !(locs[3] = pprof__add_location(p, 0, 0xdead, NULL, 0)))
		goto fail;
	for (size_t i = 0; i < DEEP; i++)
		if (!(deep_locs[i] = pprof__add_location(p, m2, 0x410000 + i * 4, NULL, 0)))
			goto fail;
	const struct pprof_label la[] = {
		{ .key = "comm", .str = "main" },
		{ .key = "tid", .num = -5 },
		{ .key = "size", .num = 1 << 20, .num_unit = "bytes" },
	};
	/* As la but for one number: label sets are shared only when equal. */
	const struct pprof_label lc[] = {
		{ .key = "comm", .str = "main" },
		{ .key = "tid", .num = -5 },
		{ .key = "size", .num = 2 << 20, .num_unit = "bytes" },
	};
	const struct pprof_label lb[] = { { .key = "comm", .str = "other" } };
	for (size_t i = 0; i < NSAMPLES; i++) {
		const struct pprof_label *l = i % 3 == 0 ? lb : i % 3 == 1 ? la : lc;
		if (pprof__add_sample(p, locs, 1 + i % 4, (int64_t)i + 1, -(int64_t)i * 1000003,
				      l, i % 3 ? 3 : 1))
			goto fail;
	}
	if (pprof__add_sample(p, locs, 4, 7, 7, NULL, 0) ||
	    pprof__add_sample(p, NULL, 0, 1, INT64_MAX, la, 3) ||
	    pprof__add_sample(p, deep_locs, DEEP, 2, 2, lb, 1) ||
	    pprof__add_comment(p, "first comment") || pprof__add_comment(p, "%s", longname))
		goto fail;
	return p;
fail:
	pprof__free(p);
	return NULL;
}

/* Field by field: what build() added is what protobuf-c reads. */
static bool check_fields(const pb_profile *r, const uint64_t *deep_locs)
{
	CHECK_EQ_INT(r->n_sample_type, 2);
	CHECK_STR(str(r, r->sample_type[0]->type), "samples");
	CHECK_STR(str(r, r->sample_type[1]->unit), "nanoseconds");
	CHECK(r->period_type);
	CHECK_STR(str(r, r->period_type->type), "cpu");
	CHECK_EQ_INT(r->period, 10101010);
	CHECK_EQ_INT(r->time_nanos, 1700000000123456789LL);
	CHECK_EQ_INT(r->duration_nanos, 3000000000LL);
	CHECK_EQ_INT(r->n_comment, 2);
	CHECK_STR(str(r, r->comment[0]), "first comment");
	CHECK_EQ_INT(strlen(str(r, r->comment[1])), 299);

	/* The main mapping first, the others after it in order. */
	CHECK_EQ_INT(r->n_mapping, 3);
	CHECK_EQ_INT(r->mapping[0]->id, 1);
	CHECK_STR(str(r, r->mapping[0]->filename), "/bin/main");
	CHECK_STR(str(r, r->mapping[0]->build_id), "cafe01");
	CHECK_EQ_INT(r->mapping[0]->memory_start, 0x400000);
	CHECK_EQ_INT(r->mapping[0]->file_offset, 0x1000);
	CHECK(r->mapping[0]->has_functions && r->mapping[0]->has_filenames &&
	      r->mapping[0]->has_line_numbers && r->mapping[0]->has_inline_frames);
	CHECK_EQ_INT(r->mapping[1]->id, 2);
	CHECK_STR(str(r, r->mapping[1]->filename), "/lib/a.so");
	CHECK(!r->mapping[1]->has_functions && !r->mapping[1]->has_filenames);
	CHECK_EQ_INT(r->mapping[2]->memory_limit, UINT64_MAX);

	CHECK_EQ_INT(r->n_location, 4 + DEEP);
	const Perftools__Profiles__Location *l = r->location[0];
	CHECK_EQ_INT(l->id, 1);
	CHECK_EQ_INT(l->mapping_id, 1);
	CHECK_EQ_INT(l->address, 0x401234);
	CHECK_EQ_INT(l->n_line, 2);
	CHECK_EQ_INT(l->line[0]->line, 12);
	CHECK_STR(str(r, r->function[l->line[1]->function_id - 1]->system_name), "_Z5outerv");
	CHECK_EQ_INT(r->function[l->line[1]->function_id - 1]->start_line, 35);
	CHECK_EQ_INT(r->location[1]->mapping_id, 2);
	l = r->location[2];
	CHECK_EQ_INT(l->mapping_id, 3);
	CHECK_EQ_INT(l->line[0]->line, -1);
	CHECK_EQ_INT(r->function[l->line[0]->function_id - 1]->start_line, -7);
	CHECK_EQ_INT(r->location[3]->mapping_id, 0);
	CHECK_EQ_INT(r->location[3]->n_line, 0);
	CHECK_EQ_INT(r->n_function, 4);

	CHECK_EQ_INT(r->n_sample, NSAMPLES + 3);
	for (size_t i = 0; i < NSAMPLES; i++) {
		const Perftools__Profiles__Sample *s = r->sample[i];
		CHECK_EQ_INT(s->n_location_id, 1 + i % 4);
		CHECK_EQ_INT(s->location_id[s->n_location_id - 1], s->n_location_id);
		CHECK_EQ_INT(s->n_value, 2);
		CHECK_EQ_INT(s->value[0], (int64_t)i + 1);
		CHECK_EQ_INT(s->value[1], -(int64_t)i * 1000003);
		CHECK_EQ_INT(s->n_label, i % 3 ? 3 : 1);
		CHECK_STR(str(r, s->label[0]->str), i % 3 ? "main" : "other");
		if (i % 3) {
			CHECK_EQ_INT(s->label[1]->num, -5);
			CHECK_STR(str(r, s->label[2]->key), "size");
			CHECK_EQ_INT(s->label[2]->num, i % 3 == 1 ? 1 << 20 : 2 << 20);
			CHECK_STR(str(r, s->label[2]->num_unit), "bytes");
		}
	}
	CHECK_EQ_INT(r->sample[NSAMPLES]->n_label, 0);
	CHECK_EQ_INT(r->sample[NSAMPLES + 1]->n_location_id, 0);
	CHECK_EQ_INT(r->sample[NSAMPLES + 1]->value[1], INT64_MAX);
	const Perftools__Profiles__Sample *d = r->sample[NSAMPLES + 2];
	CHECK_EQ_INT(d->n_location_id, DEEP);
	for (size_t i = 0; i < DEEP; i++)
		CHECK_EQ_INT(d->location_id[i], deep_locs[i]);
	return true;
}

static bool same_as_protobuf_c(void)
{
	uint64_t deep[DEEP];
	struct pprof *p = build(deep);
	char path[] = "/tmp/pmubpf-encode-XXXXXX";
	uint8_t *gz = NULL, *file = NULL, *raw = NULL, *raw2 = NULL, *repacked = NULL;
	size_t gzlen = 0, filelen = 0, rawlen = 0, raw2len = 0;
	int fd = mkstemp(path);

	CHECK(p && fd >= 0);
	close(fd);
	CHECK_EQ_INT(pprof__write(p, path), 0);
	CHECK_EQ_INT(pprof__encode_gz(p, &gz, &gzlen), 0);
	pprof__free(p);
	file = read_all(path, &filelen);
	unlink(path);
	CHECK(file && gz);
	raw = gunzip(file, filelen, &rawlen);
	raw2 = gunzip(gz, gzlen, &raw2len);
	CHECK(raw && raw2);
	CHECK_EQ_INT(raw2len, rawlen);
	CHECK(!memcmp(raw, raw2, rawlen));

	pb_profile *r = perftools__profiles__profile__unpack(NULL, rawlen, raw);
	CHECK(r);
	if (!check_fields(r, deep))
		return false;
	size_t n = protobuf_c_message_get_packed_size(&r->base);
	CHECK_EQ_INT(n, rawlen);
	repacked = malloc(n);
	CHECK(repacked);
	CHECK_EQ_INT(protobuf_c_message_pack(&r->base, repacked), n);
	for (size_t i = 0; i < n; i++)
		if (repacked[i] != raw[i]) {
			printf("  first difference at byte %zu of %zu\n", i, n);
			return false;
		}
	pb_free(r);
	free(repacked);
	free(raw);
	free(raw2);
	free(file);
	free(gz);
	return true;
}

/* An empty profile is still a valid message with its sample types. */
static bool empty_profile(void)
{
	struct pprof *p = pprof__new("cpu", "nanoseconds", 1);
	uint8_t *gz = NULL, *raw;
	size_t gzlen = 0, rawlen = 0;

	CHECK(p);
	CHECK_EQ_INT(pprof__encode_gz(p, &gz, &gzlen), 0);
	pprof__free(p);
	raw = gunzip(gz, gzlen, &rawlen);
	CHECK(raw);
	pb_profile *r = perftools__profiles__profile__unpack(NULL, rawlen, raw);
	CHECK(r);
	CHECK_EQ_INT(r->n_sample, 0);
	CHECK_EQ_INT(r->n_string_table, 5);
	CHECK_STR(str(r, r->sample_type[1]->type), "cpu");
	uint8_t repacked[256];
	CHECK(protobuf_c_message_get_packed_size(&r->base) == rawlen && rawlen <= sizeof(repacked));
	protobuf_c_message_pack(&r->base, repacked);
	CHECK(!memcmp(repacked, raw, rawlen));
	pb_free(r);
	free(raw);
	free(gz);
	return true;
}

TEST_MAIN("encode",
	  TEST(same_as_protobuf_c),
	  TEST(empty_profile))
