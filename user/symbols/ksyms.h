/* ksyms.h — kernel symbols from /proc/kallsyms.
 *
 * Loaded once per recording, before sampling starts, so kernel frames are
 * named even for modules unloaded during the recording. Text symbols only
 * (t/T/w/W), sorted by address, looked up by binary search.
 *   ffffffff81000000 T _stext
 *   ffffffffc0a01000 t xfs_fs_fill_super	[xfs]
 */
#ifndef PMUBPF_KSYMS_H
#define PMUBPF_KSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksyms;
struct ksym {
	uint64_t addr;
	const char *name;
	const char *module; /* NULL for the core kernel, else "xfs" */
};

/* Load path ("/proc/kallsyms" or a test file in that format). NULL + errno
 * (EPERM if every address reads 0: kptr_restrict, not root). */
struct ksyms *ksyms__load(const char *path);
/* Symbol covering addr (closest lower), or NULL below the first. */
const struct ksym *ksyms__lookup(const struct ksyms *k, uint64_t addr);
size_t ksyms__count(const struct ksyms *k);
void ksyms__free(struct ksyms *k);
/* Give back the table (~6 MB on a distribution kernel), keeping k: later
 * lookups find nothing. For the last profile of a recording, once its
 * kernel frames are named, before user objects' debug info is loaded. */
void ksyms__release(struct ksyms *k);

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
