/* writer.h — a writer of OpenTelemetry thread context (OTEP 4947) and of
 * the process context that names its attribute keys (OTEP 4719), written
 * from the OTEPs' text for pmubpf's tests (issue 12). Built into the
 * executable (otel_work: the TLS variable is the executable's, static
 * TLS) or as libotelwriter.so (otel_work_lib: reached through a TLS
 * descriptor, the dialect the OTEP recommends).
 */
#ifndef OTEL_WRITER_H
#define OTEL_WRITER_H

#include <stddef.h>
#include <stdint.h>

/* Thread-Local Context Record: byte-packed, native endianness, 2-aligned
 * (this layout has no padding: the u16 is at offset 26). */
struct otel_record {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t valid;
	uint8_t trace_flags;
	uint16_t attrs_data_size;
	uint8_t attrs_data[612]; /* 640 bytes in all, the OTEP's recommended cap */
};

/* Publish the process context: schema and key map under
 * extra_attributes, version as given (2 is the OTEP's). */
int otelw_publish(uint32_t version, const char *schema, const char *const *keys, int nkeys);
/* Re-publish with another key map (the OTEP 4719 updating protocol). */
int otelw_update(const char *schema, const char *const *keys, int nkeys);

/* Fill rec (valid = 0 while it is written, 1 at the end): trace and span
 * ids from hex (NULL: zeroes), then nattrs {index, value} entries. */
void otelw_fill(struct otel_record *rec, const char *trace_hex, const char *span_hex, int nattrs,
		const uint8_t *idx, const char *const *vals);
/* Make rec this thread's current record (NULL: none). */
void otelw_attach(struct otel_record *rec);
/* The thread's record, rewritten in place under the valid flag. */
void otelw_rewrite(struct otel_record *rec, const char *trace_hex, const char *span_hex,
		   int nattrs, const uint8_t *idx, const char *const *vals);
/* For the hostile tests: the TLS word itself. */
void otelw_set_raw(void *p);

#endif
