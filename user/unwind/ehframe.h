/* ehframe.h — x86-64 call frame information (.eh_frame, .debug_frame) to
 * the compact unwind rows that bpf/unwind.bpf.h evaluates.
 *
 * The parser walks every CIE/FDE of the sections, runs the CFA programs
 * (the subset compilers emit on x86-64: advance_loc*, set_loc, def_cfa*,
 * offset*, restore*, remember/restore_state, same_value, undefined,
 * register, GNU_args_size, nop, and the expressions of PLT stubs and of
 * the sigreturn trampoline) and keeps, per pc range, only what BPF needs:
 * how to find the CFA (rsp+off, rbp+off, the PLT formula), where rbp was
 * saved, whether this is the outermost frame or a signal frame. Anything
 * else becomes PMUBPF_UW_UNSUPPORTED (BPF falls back to the frame pointer
 * for that frame). Rows are sorted, identical neighbours merged; pc ranges
 * no FDE covers get a PMUBPF_UW_NONE row.
 *
 * Input bytes are untrusted (any mapped file): every read is bounds
 * checked and a malformed entry is skipped (counted), never trusted.
 */
#ifndef PMUBPF_EHFRAME_H
#define PMUBPF_EHFRAME_H

#include <stddef.h>
#include <stdint.h>
#include "pmubpf_abi.h"

/* One section's bytes and the link-time address they were loaded at. */
struct ehf_section {
	const uint8_t *data; /* NULL if the object has no such section */
	size_t size;
	uint64_t vaddr;      /* sh_addr (0 for a non-allocated .debug_frame) */
};

struct ehf_input {
	struct ehf_section eh_frame;
	struct ehf_section debug_frame; /* used where .eh_frame has no FDE */
	uint64_t datarel_base;          /* DW_EH_PE_datarel base (.got) */
	uint64_t textrel_base;          /* DW_EH_PE_textrel base (.text) */
};

struct ehf_stats {
	uint64_t cies, fdes;     /* parsed */
	uint64_t fdes_debug;     /* of which from .debug_frame */
	uint64_t bad_entries;    /* malformed CIE/FDE/program: skipped */
	uint64_t fdes_overlap;   /* .debug_frame FDEs .eh_frame already covers */
	uint64_t fdes_far;       /* FDEs beyond 4 GiB of the table base */
	uint64_t rows_raw;       /* rows before merging */
	uint64_t unsupported;    /* rows kept as PMUBPF_UW_UNSUPPORTED */
	uint64_t plt, signal, end; /* rows of these kinds */
};

struct ehf_table {
	struct pmubpf_urow *rows; /* sorted by pc, merged */
	size_t n;
	uint64_t base;            /* link-time vaddr of row pc 0 */
	struct ehf_stats st;
};

/* Build the table of one object. 0 (possibly with n == 0), or -ENOMEM. */
int ehf__build(const struct ehf_input *in, struct ehf_table *out);

/* The same from an ELF file (read with pread: a file truncated under us
 * is an error, not a SIGBUS) or an ELF image in memory (the vDSO). Only
 * 64-bit little-endian x86-64 objects: else -ENOTSUP. Compressed
 * .debug_frame (SHF_COMPRESSED, zlib) is inflated. 0 or -errno. */
int ehf__build_fd(int fd, struct ehf_table *out);
int ehf__build_mem(const void *image, size_t len, struct ehf_table *out);
void ehf__free(struct ehf_table *t);

/* The row covering link-time vaddr, or NULL (before the first row). */
const struct pmubpf_urow *ehf__lookup(const struct ehf_table *t, uint64_t vaddr);

/* Human-readable rule, e.g. "rsp+16 rbp=c-16", "plt", "end" (tests). */
void ehf__rule_str(uint32_t rule, char *buf, size_t len);

/* Bytes of table memory held by t (rows). */
size_t ehf__bytes(const struct ehf_table *t);

#endif
