/* btfnames.h — what the kernel's BTF names, asked without parsing it. */
#ifndef PMUBPF_BTFNAMES_H
#define PMUBPF_BTFNAMES_H

#include <stdbool.h>
#include <stddef.h>

/* Does /sys/kernel/btf/vmlinux name every one of names[0..n) (n <= 8,
 * each under 62 bytes)? Only its string section is read. */
bool btfnames__all(const char *const *names, size_t n);

#endif
