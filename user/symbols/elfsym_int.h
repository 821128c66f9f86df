/* elfsym_int.h — what the object cache (elfsym.c: opening, build-ids,
 * segments, the cache itself), its lookups (elfsym_lookup.c) and the
 * symbol tables (elfsym_tab.c: reading, sorting) share: the object and
 * cache records, the step from the cache down to the tables, and the
 * load the lookups ask of the cache. elfsym_tab.c calls nothing in
 * elfsym.c, elfsym.c nothing in elfsym_lookup.c. Not a public
 * interface: see elfsym.h.
 */
#ifndef PMUBPF_ELFSYM_INT_H
#define PMUBPF_ELFSYM_INT_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elfsym.h"
#include "elfutil.h"

#define MAX_SEGS        16         /* PT_LOAD segments kept per object */
#define MAX_HEADERS     65536      /* program/section headers scanned */
#define BUILD_ID_MAX    ELFUTIL_BUILD_ID_MAX
#define NBUCKETS        1024

struct seg {
	uint64_t off, filesz, vaddr, memsz;
	bool exec; /* PF_X */
};

struct elfobj {
	struct elfobj *hnext;         /* hash chain (build-id, else identity) */
	struct elfobj *fnext;         /* chain by identity: the file (or image)
	                               * it was opened from */
	struct elfobj *oprev, *onext; /* open list: fd held, oldest first */
	struct symcache *cache;
	int fd;                       /* -1 once symbols are loaded */
	Elf *elf;
	int type;
	uint64_t dev, inode, fsize;   /* identity without a build-id */
	int64_t mtime_ns;
	char build_id[2 * BUILD_ID_MAX + 1];
	struct seg segs[MAX_SEGS];
	size_t nsegs;
	bool loaded;
	struct elfsym *syms;          /* code, one per address, sorted */
	size_t nsyms;
	struct elfsym *other;         /* data/TLS and same-address aliases */
	size_t nother;
	char *names;
	struct hashtab *byname;       /* name -> symbol (elfobj__find), built at
	                               * its first call */
	size_t bytes;
	void *mem;                    /* image of a memory object, until loaded */
	void *aux;                    /* caller's data (elfobj__set_aux) */
	uint64_t used;                /* the cache's epoch when last marked */
	void (*aux_free)(void *);
};

struct symcache {
	struct elfobj *buckets[NBUCKETS];
	struct elfobj *fbuckets[NBUCKETS]; /* by identity: no ELF read on a hit */
	struct elfobj *ohead, *otail;
	size_t nobjs, nopen, nloaded, nsyms, bytes, hits, over_budget;
	size_t evicted;
	uint64_t epoch;                    /* symcache__mark_begin's count */
};

/* Read o's .symtab (else .dynsym) through o->elf into o->syms, o->other
 * and o->names, within the cache's memory budget (elfsym_tab.c). Returns
 * false, with the tables left empty, when nothing could be kept: no
 * handle, over a cap, or out of memory. */
bool elfsym_read_tables(struct elfobj *o);

/* Load o's symbols once (elfsym_read_tables), then close its ELF handle
 * and fd and count it in the cache's totals (elfsym.c; the lookups of
 * elfsym_lookup.c call it first). */
void elfobj_load_syms(struct elfobj *o);

#endif
