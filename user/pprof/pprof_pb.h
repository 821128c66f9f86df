/* pprof_pb.h — the protobuf writer the encoders share (pprof_encode.c:
 * profile.proto streamed in pieces; pprof_otlp.c: an OTLP request whole
 * in memory). Not a public interface.
 *
 * Every record reserves its upper bound first, so the put_* helpers never
 * check; fields in field-number order, proto3 zeros left out, as
 * protobuf-c writes them.
 */
#ifndef PMUBPF_PPROF_PB_H
#define PMUBPF_PPROF_PB_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pprof_int.h"

#define BUF_FLUSH (64 * 1024)
#define VARINT_MAX 10 /* bytes of the longest varint */

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

struct pbuf {
	uint8_t *b;
	size_t len, cap;
	pprof_put_fn put;
	void *ctx;
};

/* Room for n more bytes. Every record reserves its upper bound first, so
 * the put_* helpers below never check. */
static inline int reserve(struct pbuf *w, size_t n)
{
	size_t cap = w->cap ? w->cap : BUF_FLUSH * 2;
	uint8_t *b;

	if (w->cap - w->len >= n)
		return 0;
	while (cap - w->len < n) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	if (!(b = realloc(w->b, cap)))
		return -ENOMEM;
	w->b = b;
	w->cap = cap;
	return 0;
}

/* Hand what is buffered to the sink once there is enough of it (a
 * buffer without a sink, put NULL, keeps everything: pprof_otlp.c). */
static inline int flush(struct pbuf *w, bool always)
{
	int err;

	if (!w->put || !w->len || (!always && w->len < BUF_FLUSH))
		return 0;
	err = w->put(w->ctx, w->b, w->len);
	w->len = 0;
	return err;
}

static inline size_t varint_size(uint64_t v)
{
	size_t n = 1;

	for (; v >= 0x80; v >>= 7)
		n++;
	return n;
}

static inline void put_varint(struct pbuf *w, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		w->b[w->len++] = (uint8_t)(v | 0x80);
	w->b[w->len++] = (uint8_t)v;
}

static inline void put_tag(struct pbuf *w, unsigned field, unsigned wire)
{
	put_varint(w, (uint64_t)field << 3 | wire);
}

/* A scalar field; proto3 leaves zeros out. int64 and bool are varints of
 * the same bits. */
static inline void put_u64(struct pbuf *w, unsigned field, uint64_t v)
{
	if (!v)
		return;
	put_tag(w, field, WIRE_VARINT);
	put_varint(w, v);
}

/* A length-delimited field whose length is known before its body. */
static inline void put_bytes(struct pbuf *w, unsigned field, const void *data, size_t len)
{
	put_tag(w, field, WIRE_LEN);
	put_varint(w, len);
	memcpy(w->b + w->len, data, len);
	w->len += len;
}

/* A length-delimited field written before its length is known: begin
 * leaves one byte for the length, end writes it and, for a body of 128
 * bytes or more, moves the body up to make room (the reserve of each
 * record counts VARINT_MAX per nested message for this). */
static inline size_t begin(struct pbuf *w, unsigned field)
{
	put_tag(w, field, WIRE_LEN);
	return ++w->len;
}

static inline void end(struct pbuf *w, size_t at)
{
	size_t len = w->len - at, n = varint_size(len);

	if (n > 1)
		memmove(w->b + at + n - 1, w->b + at, len);
	w->len = at - 1;
	put_varint(w, len);
	w->len += len;
}

#endif
