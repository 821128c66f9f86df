/* tlsvar.h — the offset from the thread pointer of a thread-local
 * variable another writer exports (custom-labels' custom_labels_current_set,
 * OpenTelemetry's otel_thread_ctx_v1), which BPF adds to the sampled
 * thread's pointer at each sample.
 *
 * The main executable's TLS block is the first, ending at the thread
 * pointer (x86-64 TLS variant II): offset = the symbol's value minus the
 * block's aligned size (local-exec and initial-exec both end there). A
 * library reaches its variable through a TLS descriptor
 * (R_X86_64_TLSDESC) or a GOT slot (R_X86_64_TPOFF64, initial-exec); the
 * descriptor's second word, once the dynamic linker resolved it for
 * static TLS, is the offset; one for dynamic TLS holds a pointer instead,
 * and is refused, as is the legacy general-dynamic model (a module id and
 * offset in the GOT, resolved per thread through the DTV).
 */
#ifndef PMUBPF_TLSVAR_H
#define PMUBPF_TLSVAR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The TLS offset of variable `var` in the ELF file fd, mapped with load
 * bias `bias` in process pid: for the main executable from its PT_TLS
 * and the symbol's value sym_value; for a library from its relocation
 * read in the process. Returns 0, -ENOENT (no relocation for it),
 * -EAGAIN (not relocated yet: retry), -EPROTO (dynamic TLS, or an offset
 * out of range; *why), or a read error. */
int tlsvar__offset(int fd, pid_t pid, uint64_t bias, bool main, const char *var, uint64_t sym_value,
		   int64_t *off, const char **why);

#endif
