/* elfsym.h — ELF symbol tables and build-ids, cached per object.
 *
 * An "object" is one ELF file (executable or shared library), identified by
 * its GNU build-id when it has one, else by (dev, inode). Symbols come from
 * .symtab, falling back to .dynsym, through libelf; they are loaded lazily
 * at first lookup, sorted by address, and searched by binary search.
 *
 * Objects are opened from a file descriptor the caller hands over (usually
 * from /proc/PID/map_files/START-END, which works for deleted binaries and
 * binaries inside other mount namespaces), so the cache never needs the
 * path to still exist.
 */
#ifndef PMUBPF_ELFSYM_H
#define PMUBPF_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elfobj;
struct symcache;

struct elfsym {
	uint64_t addr; /* st_value (link-time virtual address) */
	uint64_t size;
	const char *name; /* owned by the object */
	uint8_t type;     /* STT_FUNC, STT_GNU_IFUNC, STT_OBJECT or STT_TLS */
	uint8_t bind;     /* STB_LOCAL, STB_GLOBAL, STB_WEAK, ... */
};

/* The cache is bounded: at most SYMCACHE_MAX_OBJECTS objects (more:
 * NULL + ENOSPC), a fixed number of objects holding an fd whose symbols
 * are not loaded yet (the oldest is loaded early to make room), a cap on
 * symbols per object and on symbol memory overall (an object past it
 * loads no symbols). Once its symbols are loaded an object has copied
 * everything it needs and closes its fd. */
#define SYMCACHE_MAX_OBJECTS 16384

struct symcache_stats {
	size_t objects;   /* objects cached */
	size_t open;      /* of which still hold their fd (symbols not loaded) */
	size_t loaded;    /* of which have loaded their symbols */
	size_t syms;      /* symbols held, all objects */
	size_t bytes;     /* memory held: object records, symbols, names */
	size_t hits;      /* symcache__get_* answered from the cache */
	size_t over_budget; /* objects that loaded no symbols: over a cap,
	                     * or out of memory */
	size_t evicted;     /* objects freed by symcache__sweep */
};

struct symcache *symcache__new(void);
void symcache__free(struct symcache *c);
/* Counters and sizes of the cache (cheap: kept as it goes). */
void symcache__stats(const struct symcache *c, struct symcache_stats *st);

/* Eviction, for a recording of days: the caller says which objects it
 * still holds, and the others are freed, except the keep_idle most
 * recently held (a short-lived program run again and again, /bin/true
 * under a shell loop, finds its object there instead of reading its ELF
 * anew). Between symcache__mark_begin and symcache__sweep, symcache__mark
 * each object held; after the sweep, a pointer to any other object is
 * invalid (and its aux freed). Returns the number freed. */
#define SYMCACHE_IDLE_KEEP 64
void symcache__mark_begin(struct symcache *c);
void symcache__mark(struct elfobj *o);
size_t symcache__sweep(struct symcache *c, size_t keep_idle);
/* Call fn for every object cached (in no particular order). */
void symcache__for_each(struct symcache *c, void (*fn)(struct elfobj *, void *),
			void *ctx);
/* A 64-bit key for what the object is, the same whenever the same file
 * (or image) is cached again after an eviction: a hash of its build-id,
 * else of its (dev, inode, size, mtime) or content hash. */
uint64_t elfobj__key(const struct elfobj *o);

/* Object for an open fd. The cache takes ownership of fd in every case
 * (closes it if the object was already cached or on error). dev/inode
 * identify it when it has no build-id. Returns a borrowed pointer valid
 * until symcache__free (or a sweep that did not see it marked), or NULL + errno (ENOEXEC: not ELF). */
struct elfobj *symcache__get_fd(struct symcache *c, int fd, uint64_t dev,
				uint64_t inode);
/* The object cached with this GNU build-id (raw bytes, as the kernel's
 * PROCMAP_QUERY gives them), or NULL: no file opened, nothing read. The
 * build-id is what the cache knows an object by (elfobj__key), so this
 * finds what symcache__get_fd would for a file with that build-id. */
struct elfobj *symcache__get_build_id(struct symcache *c, const uint8_t *id, size_t len);
/* The object cached for the file stat() described (its dev, inode, size
 * and mtime: what symcache__get_fd knows a file by after its fstat), or
 * NULL: no file opened. A cached object with a build-id is found by
 * that identity too. */
struct stat;
struct elfobj *symcache__get_stat(struct symcache *c, const struct stat *st);
/* Same, opening path (O_RDONLY|O_CLOEXEC) first. */
struct elfobj *symcache__get_path(struct symcache *c, const char *path);
/* Object for an ELF image in memory (e.g. a vDSO read out of a process,
 * a decompressed MiniDebugInfo): buf is copied. Keyed by build-id, else
 * by a hash of the bytes. NULL + errno (ENOEXEC: not ELF). */
struct elfobj *symcache__get_mem(struct symcache *c, const void *buf, size_t len);

/* GNU build-id as lowercase hex, or "" if none. */
const char *elfobj__build_id(const struct elfobj *o);
/* One pointer of the caller's per object (debuginfo keeps its state
 * there); free_fn(aux) runs when it is replaced and at symcache__free. */
void elfobj__set_aux(struct elfobj *o, void *aux, void (*free_fn)(void *));
void *elfobj__aux(const struct elfobj *o);
/* Translate a file offset to the link-time virtual address, using the
 * PT_LOAD program headers. Returns 0 or -ENOENT if no segment covers it. */
int elfobj__offset_to_vaddr(const struct elfobj *o, uint64_t off, uint64_t *vaddr);
/* An executable PT_LOAD segment: file bytes [off, off + filesz) at
 * link-time address vaddr. */
struct elfseg {
	uint64_t off, filesz, vaddr;
};
/* o's executable segments, the first max of them, in header order. */
size_t elfobj__exec_segments(const struct elfobj *o, struct elfseg *out, size_t max);
/* The link-time vaddr that corresponds to file offset pgoff for a mapping
 * of [pgoff, pgoff + len): taken from the PT_LOAD segment that overlaps
 * the mapping most, so it holds even where pgoff itself lies in another
 * segment's tail or before a segment that starts mid-page. The object's
 * load bias is then map_start - *vaddr. 0 or -ENOENT. */
int elfobj__mapping_vaddr(const struct elfobj *o, uint64_t pgoff, uint64_t len,
			  uint64_t *vaddr);
/* Symbol covering vaddr (addr <= vaddr < addr+size, or the closest lower
 * symbol with size 0), or NULL. Loads symbols on first use. */
const struct elfsym *elfobj__lookup(struct elfobj *o, uint64_t vaddr);
/* Data object (STT_OBJECT, sized) covering vaddr, or NULL: a global or
 * static variable, for --data-addr. Loads symbols on first use. */
const struct elfsym *elfobj__lookup_data(struct elfobj *o, uint64_t vaddr);
/* Symbol by exact name (first match, .symtab then .dynsym), or NULL. */
const struct elfsym *elfobj__find(struct elfobj *o, const char *name);
/* ELF type (ET_EXEC, ET_DYN), number of symbols loaded (for stats). */
int elfobj__type(const struct elfobj *o);
size_t elfobj__nsyms(struct elfobj *o);

#endif
