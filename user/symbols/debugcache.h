/* debugcache.h — uncompressed copies of debug files, kept by build-id.
 *
 * Distributions compress the DWARF of their debug packages (Debian's
 * libc6-dbg: 4 MB on disk, 10 MB of sections), and libdw inflates every
 * debug section into the heap each time a file is opened: for libc ~90 ms
 * of a one-shot recording on the PVM machine, again at every window of a
 * long-running recorder once the DWARF was given back. The first time a
 * file with compressed sections is opened, a copy with those sections
 * inflated is written to the cache directory under the file's build-id;
 * later opens map the copy instead, and libdw reads its sections where
 * they lie (pages of the page cache, touched only where a lookup reads).
 *
 * The directory: $PMUBPF_DEBUG_CACHE, else /var/cache/pmubpf/debug
 * (made 0700 when missing); PMUBPF_DEBUG_CACHE=0 switches the cache off.
 * It is used only when it is owned by our effective user and writable by
 * nobody else; every access goes through the directory's fd (openat,
 * O_NOFOLLOW). A copy is written under a temporary name, synced, and
 * renamed into place; a copy is used only when its build-id is the one
 * asked for and it holds no compressed section. The directory is bounded
 * (DEBUGCACHE_MAX_BYTES): after a copy is written, the least recently
 * used copies are removed until a quarter of the bound is free.
 */
#ifndef PMUBPF_DEBUGCACHE_H
#define PMUBPF_DEBUGCACHE_H

#include <stddef.h>
#include <stdint.h>

#define DEBUGCACHE_DEFAULT_DIR "/var/cache/pmubpf/debug"
#define DEBUGCACHE_MAX_BYTES   (512ull << 20)
#define DEBUGCACHE_MIN_BYTES   (64u << 10) /* compressed bytes below which
                                            * inflating costs less than a copy */

struct debugcache;

struct debugcache_stats {
	size_t reused;   /* opens answered by a copy already there */
	size_t made;     /* copies written */
	size_t failed;   /* copies that could not be written or were unusable */
	size_t evicted;  /* copies removed to keep the bound */
	int refused;     /* the directory: 0 in use (or not needed yet), else
	                  * the errno that switched the cache off */
	int off;         /* no cache (PMUBPF_DEBUG_CACHE=0) */
};

/* The cache the environment asks for; NULL when switched off (or no
 * memory). Nothing is created on disk until a copy is needed. */
struct debugcache *debugcache__new(void);
/* The same over the directory dir, with bound max_bytes, for files with
 * at least min_bytes of compressed sections (tests). */
struct debugcache *debugcache__new_at(const char *dir, uint64_t max_bytes, uint64_t min_bytes);
void debugcache__free(struct debugcache *c);
void debugcache__stats(const struct debugcache *c, struct debugcache_stats *st);

/* fd: a debug file whose build-id is bid (lowercase hex). Returns the fd
 * to read its DWARF from: a copy's, fd then closed, when fd has
 * compressed sections and the cache holds or can make a copy; else fd
 * itself. Only a file owned by root (or our euid) that nobody else may
 * write is copied or answered from a copy: a copy serves every later
 * file of its build-id. Callers pass only files of their own file system
 * found by build-id or debuglink, never one named by a process (its
 * binary, a file in its mount namespace), which may claim any build-id.
 * c may be NULL. */
int debugcache__swap(struct debugcache *c, int fd, const char *bid);

#endif
