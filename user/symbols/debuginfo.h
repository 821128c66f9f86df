/* debuginfo.h — where an object's symbols and DWARF come from.
 *
 * A binary may carry its DWARF, or have it in a separate file: found by
 * build-id (DIR/.build-id/xx/rest.debug), by .gnu_debuglink (name and
 * CRC32, next to the binary, in .debug/ beside it, under DIR/<bindir>),
 * or fetched by build-id from debuginfod servers (DEBUGINFOD_URLS,
 * elfutils' client, loaded with dlopen; at most 60 s of queries a run,
 * DEBUGINFOD_TIMEOUT 10 s and DEBUGINFOD_MAXTIME 60 s unless set). DIR is each --debuginfo-dir,
 * then /usr/lib/debug. A stripped binary may also carry MiniDebugInfo
 * (.gnu_debugdata: an xz-compressed ELF holding a .symtab).
 *
 * At snapshot time (the process still exists) debuginfo__note keeps what
 * is needed later: the binary's fd if it has DWARF or MiniDebugInfo, and
 * any debug file visible only in the process's mount namespace (through
 * /proc/PID/root). The search and the loading happen at the first lookup
 * in the object; the state hangs off the elfobj (elfobj__set_aux).
 */
#ifndef PMUBPF_DEBUGINFO_H
#define PMUBPF_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "debugcache.h"
#include "dwarf.h"
#include "elfsym.h"

struct debuginfo;

struct debuginfo_stats {
	size_t objects;        /* objects noted */
	size_t own_dwarf;      /* DWARF in the binary itself */
	size_t by_build_id;    /* separate debug file by build-id */
	size_t by_debuglink;   /* separate debug file by .gnu_debuglink */
	size_t by_debuginfod;  /* fetched from a debuginfod server */
	size_t minidebuginfo;  /* .gnu_debugdata symbols */
	size_t in_namespace;   /* debug file found inside the process's root */
	size_t crc_mismatch;   /* debuglink candidates with the wrong CRC */
	size_t fd_budget;      /* objects whose fd could not be kept */
	struct debugcache_stats cache; /* uncompressed copies (debugcache.h) */
};

/* dirs: extra debug directories searched before /usr/lib/debug (copied).
 * debuginfod is used if DEBUGINFOD_URLS is set and the library loads.
 * NULL + errno on ENOMEM. */
struct debuginfo *debuginfo__new(const char *const *dirs, int ndirs);
/* Free after symcache__free of every cache whose objects were noted. */
void debuginfo__free(struct debuginfo *dbg);
void debuginfo__stats(const struct debuginfo *dbg, struct debuginfo_stats *st);
/* After a sweep of the objects' cache `main`: free the debug files' and
 * MiniDebugInfo's tables that no remaining object of it uses. */
void debuginfo__sweep(struct debuginfo *dbg, struct symcache *main);

/* Snapshot time: remember o's debug sources. Takes ownership of bin_fd
 * (an fd of the mapped file; -1 = none). path: the file as the process
 * sees it; tgid: the process, searched through /proc/TGID/root when
 * other_ns (another mount namespace than pmubpf's: the caller knows, see
 * procsyms__other_mntns). No-op if o was noted before. */
void debuginfo__note(struct debuginfo *dbg, struct elfobj *o, int bin_fd,
		     uint32_t tgid, const char *path, bool other_ns);

/* Lookup time (lazy: the first call per object searches and loads). */
/* The DWARF of o (own or separate), or NULL. */
struct dwarfobj *debuginfo__dwarf(struct elfobj *o);
/* Give back o's loaded DWARF (dwarf__release): a build done with o's
 * frames; a later lookup loads it again. The symbol tables stay. */
void debuginfo__release(struct elfobj *o);
/* The symbol for vaddr: the debug file's or MiniDebugInfo's .symtab,
 * else o's own tables; whichever covers vaddr most closely. */
const struct elfsym *debuginfo__symbol(struct elfobj *o, uint64_t vaddr);

/* Decompress a .gnu_debugdata image (xz); malloc'ed buffer or NULL +
 * errno (EINVAL: not xz, EFBIG: over the size cap). Exposed for tests
 * and the fuzzer. */
void *debuginfo__unxz(const void *in, size_t len, size_t *outlen);
/* CRC32 of a whole file as .gnu_debuglink computes it; 0 or -errno. */
int debuginfo__file_crc(int fd, uint32_t *crc);

#endif
