/* test_otelctx.c — OpenTelemetry thread context (OTEP 4947) and its
 * process context (OTEP 4719), without a process (issue 12): the
 * protobuf payload decoded as hostile bytes, the reading protocol over a
 * memory image (signature, version, an update under way, a torn read),
 * and records turned into pairs that flabels.c decodes: hex ids, the
 * last entry of a key winning, unknown key indexes counted, torn and
 * invalid records refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procs/flabels.h"
#include "procs/otelctx.h"
#include "testing.h"

/* --- a protobuf encoder for the payloads --------------------------- */

struct pbuf {
	uint8_t b[4096];
	size_t n;
};

static void put(struct pbuf *o, const void *d, size_t n)
{
	memcpy(o->b + o->n, d, n);
	o->n += n;
}

static void varint(struct pbuf *o, uint64_t v)
{
	do {
		uint8_t c = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		put(o, &c, 1);
		v >>= 7;
	} while (v);
}

static void field(struct pbuf *o, int num, const void *d, size_t n)
{
	varint(o, (uint64_t)num << 3 | 2);
	varint(o, n);
	put(o, d, n);
}

static void any_str(struct pbuf *o, const char *s, size_t n)
{
	field(o, 1, s, n);
}

/* A KeyValue {key, AnyValue} into o as field `num`. */
static void kv(struct pbuf *o, int num, const char *key, const struct pbuf *any)
{
	struct pbuf k = { .n = 0 };

	field(&k, 1, key, strlen(key));
	field(&k, 2, any->b, any->n);
	field(o, num, k.b, k.n);
}

/* A key map of n entries from names (NULL: a non-string entry). */
static void key_map(struct pbuf *any, const char *const *names, const size_t *lens, int n)
{
	struct pbuf arr = { .n = 0 };

	for (int i = 0; i < n; i++) {
		struct pbuf v = { .n = 0 };

		if (names[i])
			any_str(&v, names[i], lens ? lens[i] : strlen(names[i]));
		else {
			varint(&v, 3 << 3); /* AnyValue.int_value = 7 */
			varint(&v, 7);
		}
		field(&arr, 1, v.b, v.n);
	}
	field(any, 5, arr.b, arr.n);
}

/* ProcessContext with the threadlocal keys under extra_attributes (2),
 * or inside resource (1) when in_resource. */
static void payload(struct pbuf *o, const char *schema, const char *const *names, int n,
		    bool in_resource)
{
	struct pbuf s = { .n = 0 }, m = { .n = 0 }, res = { .n = 0 }, svc = { .n = 0 };

	o->n = 0;
	any_str(&svc, "svc", 3);
	kv(&res, 1, "service.name", &svc);
	any_str(&s, schema, strlen(schema));
	key_map(&m, names, NULL, n);
	if (in_resource) {
		kv(&res, 1, "threadlocal.schema_version", &s);
		kv(&res, 1, "threadlocal.attribute_key_map", &m);
		field(o, 1, res.b, res.n);
	} else {
		field(o, 1, res.b, res.n);
		kv(o, 2, "threadlocal.schema_version", &s);
		kv(o, 2, "threadlocal.attribute_key_map", &m);
	}
}

static const char *const names3[] = { "http.route", "phase", "user.id" };

static bool decode_payload(void)
{
	struct otelctx c = { 0 };
	struct pbuf p;
	const char *why = NULL;

	for (int in_res = 0; in_res < 2; in_res++) {
		payload(&p, "tlsdesc_v1_dev", names3, 3, in_res);
		CHECK_EQ_INT(otelctx__decode(p.b, p.n, &c, &why), 0);
		CHECK_STR(c.schema, "tlsdesc_v1_dev");
		CHECK(otelctx__schema_ok(c.schema));
		CHECK_EQ_INT(c.nkeys, 3);
		CHECK_STR(c.keys[0], "http.route");
		CHECK_STR(c.keys[2], "user.id");
		CHECK_EQ_INT(c.key_len[1], 5);
	}
	/* No threadlocal keys: decodes, nothing taken (the reader waits). */
	struct pbuf res = { .n = 0 }, svc = { .n = 0 };
	any_str(&svc, "svc", 3);
	kv(&res, 1, "service.name", &svc);
	p.n = 0;
	field(&p, 1, res.b, res.n);
	CHECK_EQ_INT(otelctx__decode(p.b, p.n, &c, &why), 0);
	CHECK_EQ_INT(c.nkeys, 0);
	CHECK_STR(c.schema, "");
	CHECK(!otelctx__schema_ok("go_pprof_labels_v1"));
	CHECK(otelctx__schema_ok("tls_v1"));
	otelctx__clear(&c);
	return true;
}

/* Entries that name nothing, and the 256-entry cap. */
static bool key_map_entries(void)
{
	static const char *const names[] = { "ok", NULL, "", "nul\0x", "last" };
	static const size_t lens[] = { 2, 0, 0, 5, 4 };
	struct pbuf p = { .n = 0 }, any = { .n = 0 }, s = { .n = 0 };
	struct otelctx c = { 0 };
	const char *why;

	any_str(&s, "tls_v1", 6);
	kv(&p, 2, "threadlocal.schema_version", &s);
	key_map(&any, names, lens, 5);
	kv(&p, 2, "threadlocal.attribute_key_map", &any);
	CHECK_EQ_INT(otelctx__decode(p.b, p.n, &c, &why), 0);
	CHECK_EQ_INT(c.nkeys, 5);
	CHECK_STR(c.keys[0], "ok");
	CHECK(!c.keys[1] && !c.keys[2] && !c.keys[3]); /* int, empty, a NUL */
	CHECK_STR(c.keys[4], "last");

	static const char *many[300];
	for (int i = 0; i < 300; i++)
		many[i] = "k";
	static struct pbuf big;
	payload(&big, "tls_v1", many, 300, false);
	CHECK_EQ_INT(otelctx__decode(big.b, big.n, &c, &why), 0);
	CHECK_EQ_INT(c.nkeys, OTELCTX_KEYS_MAX); /* a u8 index names no more */
	otelctx__clear(&c);
	return true;
}

static bool payload_malformed(void)
{
	struct otelctx c = { 0 };
	struct pbuf p;
	const char *why = NULL;

	payload(&p, "tlsdesc_v1_dev", names3, 3, false);
	/* Every cut of a valid payload is refused or decodes less: never
	 * read past its end (ASan builds check that too). */
	for (size_t n = 0; n < p.n; n++) {
		int err = otelctx__decode(p.b, n, &c, &why);
		CHECK(err == 0 || err == -EPROTO);
	}
	static const uint8_t bad[][6] = {
		{ 0x12, 0x7f, 0x0a },                   /* length past the end */
		{ 0x0b, 0x00 },                         /* a group */
		{ 0x12, 0xff, 0xff, 0xff, 0xff, 0xff }, /* a varint running off */
		{ 0x02, 0x00 },                         /* field 0 */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		CHECK_EQ_INT(otelctx__decode(bad[i], i == 2 ? 6 : 3, &c, &why), -EPROTO);
		/* refused by the walker itself, not by what lies past the end */
		CHECK_STR(why, "payload is not a ProcessContext message");
	}
	/* A schema that is not a string. */
	struct pbuf q = { .n = 0 }, any = { .n = 0 };
	varint(&any, 3 << 3);
	varint(&any, 1);
	kv(&q, 2, "threadlocal.schema_version", &any);
	CHECK_EQ_INT(otelctx__decode(q.b, q.n, &c, &why), -EPROTO);
	otelctx__clear(&c);
	return true;
}

/* --- the reading protocol over a memory image ------------------------ */

struct image {
	uint8_t hdr[OTELCTX_HEADER_SIZE];
	struct pbuf payload;
	int payload_reads;
	bool bump; /* published_at changes at each payload read: torn */
};
#define HDR_AT 0x1000
#define PAYLOAD_AT 0x8000

static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *im = ctx;

	if (addr >= HDR_AT && addr + len <= HDR_AT + sizeof(im->hdr)) {
		memcpy(buf, im->hdr + (addr - HDR_AT), len);
		return 0;
	}
	if (addr == PAYLOAD_AT && len <= im->payload.n) {
		memcpy(buf, im->payload.b, len);
		im->payload_reads++;
		if (im->bump)
			im->hdr[16]++;
		return 0;
	}
	return -EFAULT;
}

static void image_init(struct image *im, uint32_t version)
{
	uint64_t at = 123456789, ptr = PAYLOAD_AT;
	uint32_t size;

	memset(im, 0, sizeof(*im));
	payload(&im->payload, "tlsdesc_v1_dev", names3, 3, false);
	size = (uint32_t)im->payload.n;
	memcpy(im->hdr, "OTEL_CTX", 8);
	memcpy(im->hdr + 8, &version, 4);
	memcpy(im->hdr + 12, &size, 4);
	memcpy(im->hdr + 16, &at, 8);
	memcpy(im->hdr + 24, &ptr, 8);
}

static bool read_protocol(void)
{
	static struct image im;
	struct otelctx c = { 0 };
	const char *why = NULL;

	image_init(&im, 2);
	CHECK_EQ_INT(otelctx__read(image_read, &im, HDR_AT, &c, &why), 0);
	CHECK_EQ_INT(c.nkeys, 3);
	CHECK_EQ_INT(c.published_at, 123456789);
	CHECK_EQ_INT(c.addr, HDR_AT);

	image_init(&im, 3); /* a version we do not know */
	CHECK_EQ_INT(otelctx__read(image_read, &im, HDR_AT, &c, &why), -EPROTO);
	image_init(&im, 2); /* the signature is written last: not yet */
	im.hdr[0] = 0;
	CHECK_EQ_INT(otelctx__read(image_read, &im, HDR_AT, &c, &why), -EAGAIN);
	image_init(&im, 2); /* published_at 0: an update under way */
	memset(im.hdr + 16, 0, 8);
	CHECK_EQ_INT(otelctx__read(image_read, &im, HDR_AT, &c, &why), -EAGAIN);
	image_init(&im, 2); /* payload sizes 0 and past 64 KiB */
	memset(im.hdr + 12, 0, 4);
	CHECK_EQ_INT(otelctx__read(image_read, &im, HDR_AT, &c, &why), -EPROTO);
	uint32_t huge = OTELCTX_PAYLOAD_MAX + 1;
	memcpy(im.hdr + 12, &huge, 4);
	CHECK_EQ_INT(otelctx__read(image_read, &im, HDR_AT, &c, &why), -EPROTO);
	image_init(&im, 2); /* updated under every read: retried, then given up */
	im.bump = true;
	CHECK_EQ_INT(otelctx__read(image_read, &im, HDR_AT, &c, &why), -EAGAIN);
	CHECK_EQ_INT(im.payload_reads, 3);
	image_init(&im, 2); /* the payload pointer unreadable */
	memset(im.hdr + 24, 0, 8);
	CHECK_EQ_INT(otelctx__read(image_read, &im, HDR_AT, &c, &why), -EFAULT);
	CHECK(otelctx__is_mapping("/memfd:OTEL_CTX"));
	CHECK(otelctx__is_mapping("[anon_shmem:OTEL_CTX]"));
	CHECK(otelctx__is_mapping("[anon:OTEL_CTX]"));
	CHECK(!otelctx__is_mapping("/memfd:OTEL_CTX_other"));
	otelctx__clear(&c);
	return true;
}

/* --- records into pairs --------------------------------------------- */

static struct pmubpf_flabel_notice rn, out;

/* A record in rn: ids (NULL: zeroes), entries {idx, value}. */
static void record(const uint8_t *trace, const uint8_t *span, int n, const uint8_t *idx,
		   const char *const *vals)
{
	uint8_t *r = rn.raw, *a = rn.raw + PMUBPF_OTEL_HDR;
	uint32_t off = 0;

	memset(&rn, 0, sizeof(rn));
	rn.source = PMUBPF_LSRC_OTEL;
	rn.hdr.label = 42;
	if (trace) {
		memcpy(r, trace, 16);
		memcpy(r + 16, span, 8);
	}
	r[24] = 1;
	for (int i = 0; i < n; i++) {
		size_t len = strlen(vals[i]);
		a[off] = idx[i];
		a[off + 1] = (uint8_t)len;
		memcpy(a + off + 2, vals[i], len);
		off += 2 + (uint32_t)len;
	}
	r[26] = off & 0xff;
	r[27] = off >> 8;
	rn.total = PMUBPF_OTEL_HDR + off;
}

static struct otelctx keys3(void)
{
	struct otelctx c = { 0 };

	c.nkeys = 3;
	for (int i = 0; i < 3; i++) {
		c.keys[i] = strdup(names3[i]);
		c.key_len[i] = (uint32_t)strlen(names3[i]);
	}
	return c;
}

static const char *get(const struct label_set *s, const char *key)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (!strcmp(s->pairs[i].key, key))
			return s->pairs[i].value;
	return NULL;
}

static const uint8_t trace[16] = { 0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd,
				   0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c };
static const uint8_t span[8] = { 0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31 };

static bool record_pairs(void)
{
	static const uint8_t idx[] = { 0, 1, 0, 7, 2 };
	static const char *const vals[] = { "/stale", "a", "/a", "x", "" };
	struct otelctx c = keys3();
	struct label_set s;
	uint32_t unknown;
	const char *why;

	record(trace, span, 5, idx, vals);
	CHECK_EQ_INT(otelctx__pairs(&rn, &c, &out, &unknown, &why), 0);
	CHECK_EQ_INT(unknown, 1); /* index 7: not in a 3-key map, left out */
	CHECK_EQ_INT(flabels__decode(&out, &s, &why), 0);
	CHECK_EQ_INT(s.id, 42);
	CHECK(!s.truncated);
	CHECK_STR(get(&s, "trace_id"), "0af7651916cd43dd8448eb211c80319c");
	CHECK_STR(get(&s, "span_id"), "b7ad6b7169203331");
	CHECK_STR(get(&s, "http.route"), "/a"); /* the last entry of a key wins */
	CHECK_STR(get(&s, "phase"), "a");
	CHECK_STR(get(&s, "user.id"), ""); /* empty values are values */
	CHECK_EQ_INT(s.n, 5);
	/* No key map at all: every attribute unknown, the ids stay. */
	CHECK_EQ_INT(otelctx__pairs(&rn, NULL, &out, &unknown, &why), 0);
	CHECK_EQ_INT(unknown, 4);
	CHECK_EQ_INT(flabels__decode(&out, &s, &why), 0);
	CHECK_EQ_INT(s.n, 2);
	/* No span: zero ids give no id labels. */
	record(NULL, NULL, 1, idx + 1, vals + 1);
	CHECK_EQ_INT(otelctx__pairs(&rn, &c, &out, &unknown, &why), 0);
	CHECK_EQ_INT(flabels__decode(&out, &s, &why), 0);
	CHECK_EQ_INT(s.n, 1);
	CHECK(!get(&s, "trace_id"));
	otelctx__clear(&c);
	return true;
}

static bool record_refused(void)
{
	static const uint8_t idx[] = { 1 };
	static const char *const vals[] = { "a" };
	struct otelctx c = keys3();
	struct label_set s;
	uint32_t unknown;
	const char *why;

	record(trace, span, 1, idx, vals);
	rn.raw[24] = 2; /* valid: only 1 is */
	CHECK_EQ_INT(otelctx__pairs(&rn, &c, &out, &unknown, &why), -EPROTO);
	record(trace, span, 1, idx, vals);
	rn.total++; /* its size and the copy's disagree: torn */
	CHECK_EQ_INT(otelctx__pairs(&rn, &c, &out, &unknown, &why), -EPROTO);
	record(trace, span, 1, idx, vals);
	rn.total = PMUBPF_OTEL_REC_MAX + 1;
	CHECK_EQ_INT(otelctx__pairs(&rn, &c, &out, &unknown, &why), -EPROTO);
	record(trace, span, 1, idx, vals);
	rn.status = PMUBPF_FLABEL_UNREADABLE;
	CHECK_EQ_INT(otelctx__pairs(&rn, &c, &out, &unknown, &why), -EPROTO);
	record(NULL, span, 1, idx, vals);
	memcpy(rn.raw + 16, span, 8); /* a span without a trace */
	CHECK_EQ_INT(otelctx__pairs(&rn, &c, &out, &unknown, &why), -EPROTO);
	/* A NUL inside a value: flabels.c refuses the set, as any writer's. */
	static const char *const nul[] = { "a\001b" };
	record(trace, span, 1, idx, nul);
	rn.raw[PMUBPF_OTEL_HDR + 3] = 0;
	CHECK_EQ_INT(otelctx__pairs(&rn, &c, &out, &unknown, &why), 0);
	CHECK_EQ_INT(flabels__decode(&out, &s, &why), -EPROTO);
	otelctx__clear(&c);
	return true;
}

/* An entry the buffer cannot hold whole ends parsing, and more pairs
 * than a set holds: both mark the set truncated. */
static bool record_truncated(void)
{
	static const uint8_t idx[] = { 0, 1 };
	static const char *const vals[] = { "/a", "abc" };
	struct otelctx c = { 0 };
	struct label_set s;
	uint32_t unknown;
	const char *why;

	c = keys3();
	record(trace, span, 2, idx, vals);
	rn.raw[PMUBPF_OTEL_HDR + 5] = 9; /* the second entry's length: past the end */
	CHECK_EQ_INT(otelctx__pairs(&rn, &c, &out, &unknown, &why), 0);
	CHECK_EQ_INT(flabels__decode(&out, &s, &why), 0);
	CHECK(s.truncated);
	CHECK_STR(get(&s, "http.route"), "/a");
	CHECK(!get(&s, "phase"));
	otelctx__clear(&c);

	static char name[20][8];
	uint8_t many_idx[20];
	const char *many_vals[20];
	c.nkeys = 20;
	for (int i = 0; i < 20; i++) {
		snprintf(name[i], sizeof(name[i]), "k%d", i);
		c.keys[i] = strdup(name[i]);
		c.key_len[i] = (uint32_t)strlen(name[i]);
		many_idx[i] = (uint8_t)i;
		many_vals[i] = "v";
	}
	record(trace, span, 20, many_idx, many_vals);
	CHECK_EQ_INT(otelctx__pairs(&rn, &c, &out, &unknown, &why), 0);
	CHECK_EQ_INT(flabels__decode(&out, &s, &why), 0);
	CHECK(s.truncated);
	CHECK_EQ_INT(s.n, PMUBPF_FLABEL_MAX);
	otelctx__clear(&c);
	return true;
}

TEST_MAIN("otelctx", TEST(decode_payload), TEST(key_map_entries), TEST(payload_malformed),
	  TEST(read_protocol), TEST(record_pairs), TEST(record_refused), TEST(record_truncated))
