/* unwind_int.h — what unwind.c (the tables, a process's slot filled)
 * and unwind_slots.c (slots retired, swept, released) share: the cache's
 * state. Not for other folders: unwind.h is the interface. */
#ifndef PMUBPF_UNWIND_INT_H
#define PMUBPF_UNWIND_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/spans.h"
#include "unwind.h"

#define SLOT_GRACE_NS 20000000LL  /* 20 ms before a replaced slot is reused */
#define NO_TAB UINT32_MAX        /* a mapping without an entry in tabs */

/* An object's table: rows [off, off + len) of unwind_rows, descriptor id
 * of unwind_tables. Kept while any slot refers to it (refs, counting
 * slots retired but in their grace period) and after, until the rows or
 * ids run short or too many entries are kept: then reclaim() gives back
 * every table no slot refers to. */
struct tab {
	uint64_t key;  /* elfobj__key: the same after an eviction and reload */
	uint32_t id;   /* PMUBPF_UW_NO_TABLE: none */
	uint64_t base; /* link-time vaddr of row pc 0 */
	uint32_t off, len;
	uint32_t refs;  /* slots (in use or in grace) whose mappings use it */
	uint32_t pin;   /* == epoch: in the slot being built (not reclaimed) */
	bool live;      /* else on the free_tabs list */
	bool full;      /* no room when built: tried again once room may
			 * have come (a slot released since), at most
			 * every FULL_RETRY_NS (a CFI parse each time) */
	int64_t tried_ns;
	uint64_t tried_releases;
	uint32_t nfiles;    /* unwind_files entries naming it */
};

struct slot {
	uint32_t tgid, pgen;
	bool used;
	int64_t retired_ns; /* 0: current */
	uint64_t hash;      /* of its content */
	uint32_t *tix, ntix; /* tabs indexes it refers to (NO_TAB: none) */
};

struct unwind {
	struct unwind_maps m;
	struct spans rows;     /* unwind_rows' free space */
	uint32_t next_table, *free_ids, nfree_ids; /* unwind_tables ids */
	struct tab *tabs;
	size_t ntabs, cap, live_tabs;
	uint32_t *free_tabs;   /* dead tabs entries, reused */
	size_t nfree_tabs, cap_free_tabs;
	uint32_t epoch;        /* of unwind__proc calls (tab.pin) */
	uint64_t releases;     /* slots retired or found gone: tables may
				* have become unused */
	struct hashtab *index; /* elfobj__key -> tabs index: an object evicted
				* and read again finds its table while kept */
	struct tab vdso;
	bool vdso_done;
	uint64_t vdso_size, vdso_min_vaddr;
	struct slot *slots;
	uint32_t *free_slots, nfree;
	struct ufile *files;   /* unwind_files entries (unwind_files.c) */
	size_t nfiles, cap_files;
	uint32_t *free_files;
	size_t nfree_files, cap_free_files;
	struct hashtab *files_index; /* key -> files index */
	struct unwind_stats st;
	int verbose;
	bool stopped;
};

/* Free the slots no process points at any more (retired ones past their
 * grace period, current ones whose pid entry BPF deleted); their tables
 * lose their references. */
void unwind_slots__sweep(struct unwind *u);
/* Take slot s out of service (reused after the grace period). */
void unwind_slots__retire(struct unwind *u, uint32_t s);
/* tgid's current slot, or -1. */
int unwind_slots__current(const struct unwind *u, uint32_t tgid);
/* pr exited or exec'd: its slot goes back (and its pid entry, if still
 * this generation's). */
void unwind_slots__release(struct unwind *u, const struct proc *pr);

struct procmap;
struct elfobj;
/* unwind_files.c: the files index (0 or -ENOMEM), freed. */
int unwind_files__init(struct unwind *u);
void unwind_files__fini(struct unwind *u);
/* The file m maps holds obj, whose table is tabs[tix]: BPF may unwind
 * a process with no slot by it (an entry written unless known). */
void unwind_files__note(struct unwind *u, const struct procmap *m, const struct elfobj *obj,
			uint32_t tix);
/* unwind.c, for unwind_ahead.c: the table of the object m maps (built
 * at first sight; pr NULL: opened by m's path), or NULL. */
const struct tab *unwind_table_for(struct unwind *u, const struct proc *pr,
				  const struct procmap *m, const struct elfobj *obj);
/* Has the file m maps an entry (whatever its object)? */
bool unwind_files__known(const struct unwind *u, const struct procmap *m);
/* The same for a file BPF knows by key (NOTICE_UFILE). 0 or -errno. */
int unwind_files__note_key(struct unwind *u, const struct pmubpf_ufile_key *key,
			   const struct elfobj *obj, uint32_t tix);
/* The vDSO's table (u->vdso, image mapped from min_vaddr) for BPF. */
void unwind_files__note_vdso(struct unwind *u, uint64_t min_vaddr);
/* tabs[tix] is to be given back: the entries naming it go first. */
void unwind_files__forget_tab(struct unwind *u, uint32_t tix);

#endif
