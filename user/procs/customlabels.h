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
 * is accepted too. The offset itself: tlsvar.h.
 */
#ifndef PMUBPF_CUSTOMLABELS_H
#define PMUBPF_CUSTOMLABELS_H

#include <stdbool.h>
#include <stdint.h>

#define CUSTOMLABELS_VERSION_SYMBOL "custom_labels_abi_version"
#define CUSTOMLABELS_SET_SYMBOL "custom_labels_current_set"

/* May an object of this path define the ABI (main: the executable)? */
bool customlabels__name_ok(const char *path, bool main);

#endif
