/* otelctx.h — OpenTelemetry thread context (OTEP 4947) with the process
 * context (OTEP 4719) that names its attributes (docs/labels-abi.md,
 * "OpenTelemetry thread context").
 *
 * The process context is a mapping named OTEL_CTX ("/memfd:OTEL_CTX",
 * "[anon_shmem:OTEL_CTX]" or "[anon:OTEL_CTX]") holding a 32-byte header
 * {char signature[8] "OTEL_CTX", u32 version (2), u32 payload_size, u64
 * published_at_ns (0 while being written), u64 payload pointer} and a
 * protobuf payload: ProcessContext {Resource resource = 1; repeated
 * KeyValue extra_attributes = 2}. Of its attributes pmubpf takes two:
 * threadlocal.schema_version (a string: "tlsdesc_v1_dev" or "tls_v1")
 * and threadlocal.attribute_key_map (an array of strings: entry i names
 * key index i). It is read once per process, in userspace, and again
 * only when a record holds a key index the map did not have (the map is
 * append-only).
 *
 * A record (bpf/labels_otel.bpf.h copies its bytes) becomes the pairs of
 * a struct pmubpf_flabel_notice, so the rules every other writer's sets
 * go through (flabels.c) apply to it too: trace_id and span_id in
 * lower-case hex, then each attribute under its key's name, the last of
 * two entries with one key index winning (the OTEP's rule).
 *
 * Everything read here is hostile bytes: lengths are bounded, strings
 * with a NUL are refused, a read that crosses an update is retried.
 */
#ifndef PMUBPF_OTELCTX_H
#define PMUBPF_OTELCTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pmubpf_abi.h"

#define OTELCTX_TLS_SYMBOL "otel_thread_ctx_v1"
#define OTELCTX_KEYS_MAX 256          /* key indexes are a u8 */
#define OTELCTX_PAYLOAD_MAX 65536     /* larger payloads are refused */
#define OTELCTX_HEADER_SIZE 32

/* Read len bytes at addr into buf: 0 or a negative errno. */
typedef int (*otelctx_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* What pmubpf takes from a process context. */
struct otelctx {
	uint64_t addr;          /* the header's address in the process */
	uint64_t published_at;  /* of the payload decoded */
	char schema[32];        /* threadlocal.schema_version, "" if absent */
	uint32_t nkeys;         /* entries of threadlocal.attribute_key_map */
	char *keys[OTELCTX_KEYS_MAX]; /* NULL: an entry not a usable string */
	uint32_t key_len[OTELCTX_KEYS_MAX]; /* the writer's lengths */
};

/* Is a /proc/PID/maps path (" (deleted)" removed) the process context's? */
bool otelctx__is_mapping(const char *path);

/* Decode a ProcessContext payload into c's schema and keys (replacing
 * them). 0 or -EPROTO (*why). */
int otelctx__decode(const uint8_t *p, size_t n, struct otelctx *c, const char **why);

/* Read the process context at addr by OTEP 4719's reading protocol:
 * header, payload, header again (published_at_ns unchanged, else
 * retried a few times). 0, -EAGAIN (being written: try later), -EPROTO
 * (signature, version, size, payload; *why), or the reader's error. */
int otelctx__read(otelctx_read_fn rd, void *ctx, uint64_t addr, struct otelctx *c,
		  const char **why);

/* Does the schema name a thread-local record pmubpf reads? */
bool otelctx__schema_ok(const char *schema);

void otelctx__clear(struct otelctx *c);

/* Turn the record in n->raw (n->total bytes) into out's pairs, keys
 * named by c (NULL: none). Entries whose key index c does not name are
 * left out and counted in *unknown. 0 or -EPROTO (*why: a torn or
 * invalid record). */
int otelctx__pairs(const struct pmubpf_flabel_notice *n, const struct otelctx *c,
		   struct pmubpf_flabel_notice *out, uint32_t *unknown, const char **why);

#endif
