/* otelctx.c — see otelctx.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "otelctx.h"

bool otelctx__is_mapping(const char *path)
{
	return !strcmp(path, "/memfd:OTEL_CTX") || !strcmp(path, "[anon_shmem:OTEL_CTX]") ||
	       !strcmp(path, "[anon:OTEL_CTX]");
}

bool otelctx__schema_ok(const char *schema)
{
	/* "tlsdesc_v1_dev" while the OTEP is a draft, "tls_v1" once merged. */
	return !strcmp(schema, "tlsdesc_v1_dev") || !strcmp(schema, "tls_v1");
}

void otelctx__clear(struct otelctx *c)
{
	for (uint32_t i = 0; i < c->nkeys; i++)
		free(c->keys[i]);
	c->nkeys = 0;
	c->schema[0] = 0;
	memset(c->keys, 0, sizeof(c->keys));
}

/* --- a protobuf walker, just what the payload needs ---------------------- */

struct pb {
	const uint8_t *p, *end;
};

static bool pb_varint(struct pb *b, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (b->p >= b->end)
			return false;
		uint8_t c = *b->p++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/* The next field: its number, and for a length-delimited one its bytes
 * in *sub. False at the end; *bad on malformed input. */
static bool pb_next(struct pb *b, uint32_t *field, struct pb *sub, bool *bad)
{
	uint64_t tag, v;

	*bad = false;
	sub->p = sub->end = NULL;
	if (b->p >= b->end)
		return false;
	if (!pb_varint(b, &tag) || tag >> 3 == 0 || tag >> 3 > UINT32_MAX)
		goto bad;
	*field = (uint32_t)(tag >> 3);
	switch (tag & 7) {
	case 0:
		if (!pb_varint(b, &v))
			goto bad;
		return true;
	case 1:
	case 5: {
		size_t n = (tag & 7) == 1 ? 8 : 4;
		if ((size_t)(b->end - b->p) < n)
			goto bad;
		b->p += n;
		return true;
	}
	case 2:
		if (!pb_varint(b, &v) || v > (uint64_t)(b->end - b->p))
			goto bad;
		sub->p = b->p;
		sub->end = b->p + v;
		b->p += v;
		return true;
	default: /* groups (3, 4) are not in these messages */
		goto bad;
	}
bad:
	*bad = true;
	return false;
}

/* AnyValue's string_value (field 1), or false if it holds another kind. */
static bool any_string(struct pb any, struct pb *str, bool *bad)
{
	struct pb sub;
	uint32_t f;
	bool found = false;

	while (pb_next(&any, &f, &sub, bad))
		if (f == 1 && sub.p) {
			*str = sub;
			found = true;
		}
	return found && !*bad;
}

static bool str_is(struct pb s, const char *want)
{
	size_t n = strlen(want);

	return (size_t)(s.end - s.p) == n && !memcmp(s.p, want, n);
}

/* threadlocal.attribute_key_map: AnyValue.array_value (field 5) =
 * ArrayValue {repeated AnyValue values = 1}. */
static int key_map(struct pb any, struct otelctx *c, const char **why)
{
	struct pb arr = { 0 }, sub, str;
	uint32_t f;
	bool bad, have = false;

	while (pb_next(&any, &f, &sub, &bad))
		if (f == 5 && sub.p) {
			arr = sub;
			have = true;
		}
	if (bad || !have) {
		*why = "threadlocal.attribute_key_map is not an array";
		return -EPROTO;
	}
	for (uint32_t i = 0; i < c->nkeys; i++)
		free(c->keys[i]);
	memset(c->keys, 0, sizeof(c->keys));
	c->nkeys = 0;
	while (pb_next(&arr, &f, &sub, &bad)) {
		if (f != 1 || !sub.p)
			continue;
		if (c->nkeys == OTELCTX_KEYS_MAX)
			continue; /* past index 255: no record can name it */
		uint32_t i = c->nkeys++;
		if (!any_string(sub, &str, &bad)) {
			if (bad)
				break;
			continue; /* not a string: that index stays unnamed */
		}
		size_t n = (size_t)(str.end - str.p);
		/* An empty name or one with a NUL names nothing. */
		if (!n || memchr(str.p, 0, n))
			continue;
		c->key_len[i] = (uint32_t)n;
		if (n > PMUBPF_FLABEL_VAL - 1)
			n = PMUBPF_FLABEL_VAL - 1;
		c->keys[i] = strndup((const char *)str.p, n);
		if (!c->keys[i])
			return -ENOMEM;
	}
	if (bad) {
		*why = "threadlocal.attribute_key_map malformed";
		return -EPROTO;
	}
	return 0;
}

/* One KeyValue {string key = 1; AnyValue value = 2}. */
static int key_value(struct pb kv, struct otelctx *c, const char **why)
{
	struct pb key = { 0 }, val = { 0 }, sub, str;
	uint32_t f;
	bool bad, hk = false, hv = false;

	while (pb_next(&kv, &f, &sub, &bad)) {
		if (f == 1 && sub.p) {
			key = sub;
			hk = true;
		} else if (f == 2 && sub.p) {
			val = sub;
			hv = true;
		}
	}
	if (bad) {
		*why = "a KeyValue malformed";
		return -EPROTO;
	}
	if (!hk || !hv)
		return 0;
	if (str_is(key, "threadlocal.schema_version")) {
		size_t n;

		if (!any_string(val, &str, &bad) || (n = (size_t)(str.end - str.p)) >= sizeof(c->schema) ||
		    memchr(str.p, 0, n)) {
			*why = "threadlocal.schema_version is not a short string";
			return -EPROTO;
		}
		memcpy(c->schema, str.p, n);
		c->schema[n] = 0;
	} else if (str_is(key, "threadlocal.attribute_key_map")) {
		return key_map(val, c, why);
	}
	return 0;
}

int otelctx__decode(const uint8_t *p, size_t n, struct otelctx *c, const char **why)
{
	struct pb b = { p, p + n }, sub, kv;
	const char *dummy;
	uint32_t f, g;
	bool bad;
	int err;

	why = why ? why : &dummy;
	otelctx__clear(c);
	/* ProcessContext: resource (1) = Resource {repeated KeyValue
	 * attributes = 1}; extra_attributes (2) = KeyValue. */
	while (pb_next(&b, &f, &sub, &bad)) {
		if (!sub.p)
			continue;
		if (f == 2) {
			if ((err = key_value(sub, c, why)))
				return err;
		} else if (f == 1) {
			while (pb_next(&sub, &g, &kv, &bad))
				if (g == 1 && kv.p && (err = key_value(kv, c, why)))
					return err;
			if (bad)
				break;
		}
	}
	if (bad) {
		*why = "payload is not a ProcessContext message";
		return -EPROTO;
	}
	return 0;
}

struct otel_hdr {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t published_at;
	uint64_t payload;
};

static int read_once(otelctx_read_fn rd, void *ctx, uint64_t addr, struct otelctx *c,
		     const char **why)
{
	struct otel_hdr h;
	uint64_t again;
	uint8_t *buf;
	int err;

	if ((err = rd(ctx, addr, &h, sizeof(h))))
		return err;
	/* The signature is written last: without it, not published yet. */
	if (memcmp(h.signature, "OTEL_CTX", 8)) {
		*why = "no OTEL_CTX signature";
		return -EAGAIN;
	}
	if (h.version != 2) {
		*why = "process context version is not 2";
		return -EPROTO;
	}
	if (!h.published_at)
		return -EAGAIN; /* an update under way */
	if (!h.payload_size || h.payload_size > OTELCTX_PAYLOAD_MAX) {
		*why = "payload size 0 or over 64 KiB";
		return -EPROTO;
	}
	buf = malloc(h.payload_size);
	if (!buf)
		return -ENOMEM;
	err = rd(ctx, h.payload, buf, h.payload_size);
	if (!err)
		err = rd(ctx, addr + offsetof(struct otel_hdr, published_at), &again, sizeof(again));
	if (!err && again != h.published_at)
		err = -EAGAIN; /* changed while we read: read again */
	if (!err) {
		err = otelctx__decode(buf, h.payload_size, c, why);
		c->published_at = h.published_at;
	}
	free(buf);
	return err;
}

int otelctx__read(otelctx_read_fn rd, void *ctx, uint64_t addr, struct otelctx *c,
		  const char **why)
{
	const char *dummy;
	int err = -EAGAIN;

	why = why ? why : &dummy;
	c->addr = addr;
	for (int i = 0; i < 3 && err == -EAGAIN; i++)
		err = read_once(rd, ctx, addr, c, why);
	return err;
}

/* --- a record into pairs ------------------------------------------------- */

static void hex(char *out, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = 0;
}

static bool all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static struct pmubpf_flabel *add(struct pmubpf_flabel_notice *out, const char *key, uint32_t klen)
{
	struct pmubpf_flabel *p;
	size_t n = klen < PMUBPF_FLABEL_KEY - 1 ? klen : PMUBPF_FLABEL_KEY - 1;

	out->total++;
	if (out->nslots == PMUBPF_FLABEL_MAX)
		return NULL; /* out->total > slots: flabels marks it truncated */
	p = &out->pairs[out->nslots++];
	memset(p, 0, sizeof(*p));
	p->flags = PMUBPF_FLABEL_PRESENT;
	p->klen = klen;
	memcpy(p->key, key, n);
	return p;
}

int otelctx__pairs(const struct pmubpf_flabel_notice *n, const struct otelctx *c,
		   struct pmubpf_flabel_notice *out, uint32_t *unknown, const char **why)
{
	const uint8_t *r = n->raw, *a = n->raw + PMUBPF_OTEL_HDR;
	uint32_t size, at[OTELCTX_KEYS_MAX], order[OTELCTX_KEYS_MAX], norder = 0;
	const char *dummy;
	struct pmubpf_flabel *p;

	why = why ? why : &dummy;
	*unknown = 0;
	memset(out, 0, offsetof(struct pmubpf_flabel_notice, pairs));
	out->hdr = n->hdr;
	out->source = n->source;
	if (n->status != PMUBPF_FLABEL_OK) {
		*why = "record unreadable";
		return -EPROTO;
	}
	if (n->total < PMUBPF_OTEL_HDR || n->total > PMUBPF_OTEL_REC_MAX) {
		*why = "record size out of bounds";
		return -EPROTO;
	}
	size = r[26] | (uint32_t)r[27] << 8;
	if (r[24] != 1 || PMUBPF_OTEL_HDR + size != n->total) {
		*why = "record torn or not valid";
		return -EPROTO;
	}
	/* Zeroes are no span; "if either of trace-id/span-id are set, both
	 * must be set". */
	bool no_trace = all_zero(r, 16), no_span = all_zero(r + 16, 8);
	if (no_trace != no_span) {
		*why = "trace-id and span-id not both set";
		return -EPROTO;
	}
	if (!no_trace) {
		p = add(out, "trace_id", 8);
		hex(p->val, r, 16);
		p->vlen = 32;
		p = add(out, "span_id", 7);
		hex(p->val, r + 16, 8);
		p->vlen = 16;
	}
	/* Entries {key index, length, value}, packed; parsing stops at one
	 * the buffer cannot hold whole; of two with one index the last
	 * wins, in the place of the first. */
	memset(at, 0xff, sizeof(at));
	for (uint32_t off = 0; off + 2 <= size;) {
		uint32_t k = a[off], len = a[off + 1];

		if (off + 2 + len > size) {
			out->total++; /* a cut entry: the set is marked truncated */
			break;
		}
		if (at[k] == UINT32_MAX)
			order[norder++] = k;
		at[k] = off;
		off += 2 + len;
	}
	for (uint32_t i = 0; i < norder; i++) {
		uint32_t k = order[i], len = a[at[k] + 1];

		if (!c || k >= c->nkeys || !c->keys[k]) {
			(*unknown)++; /* "readers MUST ignore" such entries */
			continue;
		}
		p = add(out, c->keys[k], c->key_len[k]);
		if (!p)
			continue;
		memcpy(p->val, a + at[k] + 2, len); /* len <= 255 < sizeof(p->val) */
		p->vlen = len;
	}
	return 0;
}
