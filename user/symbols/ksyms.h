/* ksyms.h — tables of kernel symbols, sorted by address, looked up by
 * binary search. Two sources fill them:
 * - /proc/kallsyms (ksyms__load): every text symbol (t/T/w/W), no sizes;
 *     ffffffff81000000 T _stext
 *     ffffffffc0a01000 t xfs_fs_fill_super	[xfs]
 * - the kernel's own names of the addresses a profile needs, as its %pS
 *   prints them (record/ksymnames.c), through a builder:
 *     do_syscall_64+0x82/0x190
 *     xfs_fs_fill_super+0x1a/0x6f0 [xfs]
 */
#ifndef PMUBPF_KSYMS_H
#define PMUBPF_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksyms;
struct ksym {
	uint64_t addr;
	uint64_t size;      /* bytes; 0: unknown (kallsyms), the next symbol ends it */
	const char *name;
	const char *module; /* NULL for the core kernel, else "xfs" */
};

/* Load path ("/proc/kallsyms" or a test file in that format). NULL + errno
 * (EPERM if every address reads 0: kptr_restrict, not root). */
struct ksyms *ksyms__load(const char *path);
/* Symbol covering addr (closest lower, within its size if known), or
 * NULL. */
const struct ksym *ksyms__lookup(const struct ksyms *k, uint64_t addr);
size_t ksyms__count(const struct ksyms *k);
void ksyms__free(struct ksyms *k);
/* Give back the table (~6 MB on a distribution kernel), keeping k: later
 * lookups find nothing. For the last profile of a recording, once its
 * kernel frames are named, before user objects' debug info is loaded. */
void ksyms__release(struct ksyms *k);

/* A symbol as %pS names an address: "NAME+0xOFF/0xSIZE" and " [MODULE]"
 * for a module's. name and module point into the text parsed. */
struct ksym_text {
	uint64_t start, size;
	const char *name, *module; /* module NULL: the core kernel */
	size_t name_len, mod_len;
};
/* Parse text, the name of address addr: false if it names no symbol (the
 * kernel prints the address itself where it has none; a name cut short
 * has no size). */
bool ksyms__parse_symbolic(const char *text, uint64_t addr, struct ksym_text *out);

/* Put a table together from symbols in any order (the same symbol may
 * come many times: one is kept). ksyms__build frees the builder and
 * returns the table, or NULL + errno (ENODATA: no symbol added). */
struct ksyms_builder;
struct ksyms_builder *ksyms__builder(void);
int ksyms__builder_add(struct ksyms_builder *b, const struct ksym_text *t); /* 0, -ENOMEM */
struct ksyms *ksyms__build(struct ksyms_builder *b);
void ksyms__builder_free(struct ksyms_builder *b);

/* ksyms__load in a thread of its own: reading kallsyms takes tens of ms
 * that neither a command starting nor the first processes' notices (hence
 * their unwind tables) should wait for. ksyms__join waits for it (or, if
 * the thread could not start, loads here) and returns what ksyms__load
 * returned, errno set on NULL, and frees the loader. A NULL loader (the
 * allocation failed) gives NULL with ENOMEM. */
struct ksyms_loader;
struct ksyms_loader *ksyms__load_async(const char *path);
struct ksyms *ksyms__join(struct ksyms_loader *l);

#endif
