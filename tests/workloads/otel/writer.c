/* writer.c — see writer.h. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include "writer.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

/* The OTEP: "a single thread-local, otel_thread_ctx_v1", exported. */
__attribute__((visibility("default"))) __thread struct otel_record *otel_thread_ctx_v1;

#define FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)

struct otel_ctx_header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t published_at_ns;
	uint64_t payload;
};

static struct otel_ctx_header *hdr;

/* --- a protobuf encoder, just what the payload needs ------------------- */
struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void varint(struct buf *b, uint64_t v)
{
	do {
		uint8_t c = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		put(b, &c, 1);
		v >>= 7;
	} while (v);
}

static void field(struct buf *b, int num, const void *d, size_t n)
{
	varint(b, (uint64_t)num << 3 | 2);
	varint(b, n);
	put(b, d, n);
}

static void any_string(struct buf *b, const char *s)
{
	field(b, 1, s, strlen(s)); /* AnyValue.string_value */
}

static void key_value(struct buf *out, const char *key, const struct buf *any)
{
	struct buf kv = { 0 };

	field(&kv, 1, key, strlen(key));
	field(&kv, 2, any->p, any->n);
	field(out, 2, kv.p, kv.n); /* ProcessContext.extra_attributes */
	free(kv.p);
}

static struct buf payload(const char *schema, const char *const *keys, int nkeys)
{
	struct buf out = { 0 }, res = { 0 }, kv = { 0 }, any = { 0 }, arr = { 0 };

	/* resource { attributes { service.name = otel_work } } */
	field(&kv, 1, "service.name", 12);
	any_string(&any, "otel_work");
	field(&kv, 2, any.p, any.n);
	field(&res, 1, kv.p, kv.n);
	field(&out, 1, res.p, res.n);
	any.n = 0;
	any_string(&any, schema);
	key_value(&out, "threadlocal.schema_version", &any);
	for (int i = 0; i < nkeys; i++) {
		struct buf v = { 0 };

		any_string(&v, keys[i]);
		field(&arr, 1, v.p, v.n); /* ArrayValue.values */
		free(v.p);
	}
	any.n = 0;
	field(&any, 5, arr.p, arr.n); /* AnyValue.array_value */
	key_value(&out, "threadlocal.attribute_key_map", &any);
	free(res.p);
	free(kv.p);
	free(any.p);
	free(arr.p);
	return out;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int otelw_publish(uint32_t version, const char *schema, const char *const *keys, int nkeys)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = memfd_create("OTEL_CTX", MFD_CLOEXEC);
	struct buf pl = payload(schema, keys, nkeys);

	if (fd < 0 || ftruncate(fd, page))
		return -1;
	hdr = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (hdr == MAP_FAILED)
		return -1;
	madvise(hdr, page, MADV_DONTFORK);
	hdr->version = version;
	hdr->payload_size = (uint32_t)pl.n;
	hdr->published_at_ns = now_ns();
	hdr->payload = (uint64_t)(uintptr_t)pl.p; /* kept for the process's life */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(hdr->signature, "OTEL_CTX", 8); /* last */
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)hdr, page, "OTEL_CTX");
	return 0;
}

int otelw_update(const char *schema, const char *const *keys, int nkeys)
{
	struct buf pl = payload(schema, keys, nkeys);
	long page = sysconf(_SC_PAGESIZE);

	__atomic_store_n(&hdr->published_at_ns, 0, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	hdr->payload = (uint64_t)(uintptr_t)pl.p; /* the old one stays: a reader may hold it */
	hdr->payload_size = (uint32_t)pl.n;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&hdr->published_at_ns, now_ns(), __ATOMIC_SEQ_CST);
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)hdr, page, "OTEL_CTX");
	return 0;
}

static void unhex(uint8_t *out, const char *hex, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char b[3] = { hex[2 * i], hex[2 * i + 1], 0 };
		out[i] = (uint8_t)strtoul(b, NULL, 16);
	}
}

static void fill(struct otel_record *rec, const char *trace_hex, const char *span_hex, int nattrs,
		 const uint8_t *idx, const char *const *vals)
{
	size_t off = 0;

	memset(rec->trace_id, 0, sizeof(rec->trace_id));
	memset(rec->span_id, 0, sizeof(rec->span_id));
	rec->trace_flags = 0;
	if (trace_hex) {
		unhex(rec->trace_id, trace_hex, 16);
		unhex(rec->span_id, span_hex, 8);
		rec->trace_flags = 1; /* sampled */
	}
	for (int i = 0; i < nattrs; i++) {
		size_t n = strlen(vals[i]);

		if (n > 255 || off + 2 + n > sizeof(rec->attrs_data))
			abort();
		rec->attrs_data[off] = idx[i];
		rec->attrs_data[off + 1] = (uint8_t)n;
		memcpy(rec->attrs_data + off + 2, vals[i], n);
		off += 2 + n;
	}
	rec->attrs_data_size = (uint16_t)off;
}

void otelw_fill(struct otel_record *rec, const char *trace_hex, const char *span_hex, int nattrs,
		const uint8_t *idx, const char *const *vals)
{
	rec->valid = 0;
	FENCE();
	fill(rec, trace_hex, span_hex, nattrs, idx, vals);
	FENCE();
	rec->valid = 1;
	FENCE();
}

void otelw_attach(struct otel_record *rec)
{
	FENCE();
	*(struct otel_record *volatile *)&otel_thread_ctx_v1 = rec;
	FENCE();
}

void otelw_rewrite(struct otel_record *rec, const char *trace_hex, const char *span_hex,
		   int nattrs, const uint8_t *idx, const char *const *vals)
{
	volatile uint8_t *valid = &rec->valid;

	*valid = 0;
	FENCE();
	fill(rec, trace_hex, span_hex, nattrs, idx, vals);
	FENCE();
	*valid = 1;
	FENCE();
}

void otelw_set_raw(void *p)
{
	otelw_attach(p);
}
