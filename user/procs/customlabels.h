/* customlabels.h — finding a process's custom-labels ABI v1 writer
 * (Polar Signals' libcustomlabels; docs/labels-abi.md, "custom-labels"):
 * the object that exports custom_labels_abi_version (a u32 that must read
 * 1) and the thread-local custom_labels_current_set, and the offset of
 * that variable from the thread pointer, which BPF reads at each sample.
 *
 * The ABI's rules: the object is the main executable (static TLS: its
 * block ends at the thread pointer, x86-64 variant II) or a library
 * loaded at start-up whose name matches libcustomlabels.*\.so or
 * customlabels.node, reaching the variable through a TLS descriptor
 * (R_X86_64_TLSDESC). The descriptor's second word, once the dynamic
 * linker resolved it for static TLS, is the offset from the thread
 * pointer; a descriptor for dynamic TLS holds a pointer instead, and is
 * refused. Initial-exec (R_X86_64_TPOFF64: the offset itself in the GOT)
 * is accepted too.
 */
#ifndef PMUBPF_CUSTOMLABELS_H
#define PMUBPF_CUSTOMLABELS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define CUSTOMLABELS_VERSION_SYMBOL "custom_labels_abi_version"
#define CUSTOMLABELS_SET_SYMBOL "custom_labels_current_set"

/* May an object of this path define the ABI (main: the executable)? */
bool customlabels__name_ok(const char *path, bool main);

/* The TLS offset of the variable in the ELF file fd, mapped with load
 * bias `bias` in process pid: for the main executable from its PT_TLS
 * and the symbol's value sym_value; for a library from its TLS
 * descriptor read in the process. Returns 0, -ENOENT (no descriptor or
 * relocation for it), -EAGAIN (not relocated yet: retry), -EPROTO (dynamic TLS, or an offset out of range;
 * *why), or a read error. */
int customlabels__tls_offset(int fd, pid_t pid, uint64_t bias, bool main, uint64_t sym_value,
			     int64_t *off, const char **why);

#endif
