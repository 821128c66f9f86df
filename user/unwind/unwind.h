/* unwind.h — unwind tables for --call-graph dwarf: built once per object,
 * loaded into the BPF maps that bpf/unwind.bpf.h reads.
 *
 * procs.c calls unwind__proc (through its maps hook) whenever it has read
 * a process's maps. For each executable file mapping we find the object's
 * table in a cache keyed by its elfobj (that is, by build-id, else by
 * device and inode), building it at first sight from the file's .eh_frame
 * and .debug_frame (user/ehframe.c) and appending its rows to the
 * unwind_rows array (batch updates); the vDSO's table comes from our own vDSO
 * (the same kernel image). The process then gets a slot: its mappings,
 * each with load bias and table, and unwind_pids[tgid] points BPF at it.
 *
 * Memory is bounded by the map sizes chosen before load: rows (8 bytes
 * each, shared by every process using an object) and slots (one per live
 * process). When full, the object or process goes without tables and BPF
 * falls back to frame pointers for it (counted, reported).
 */
#ifndef PMUBPF_UNWIND_H
#define PMUBPF_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "procs/procs.h"

struct unwind;

/* The BPF maps (fds) and their sizes, as loaded: unwind_rows (max_rows
 * entries), unwind_tables (max_tables), unwind_slots (max_slots *
 * PMUBPF_UW_MAX_MAPS), unwind_pids (max_slots). */
struct unwind_maps {
	int rows_fd, tables_fd, slots_fd, pids_fd;
	int files_fd; /* unwind_files, or -1: the kernel cannot walk VMAs */
	int asked_fd; /* unwind_asked (files BPF asked for), or -1 */
	int key_prog_fd; /* uw_file_key (a file's identity as BPF reads it), or -1 */
	uint32_t max_rows, max_tables, max_slots;
};

struct unwind_stats {
	uint64_t objects;        /* objects with a table in BPF */
	uint64_t objects_nocfi;  /* objects without usable CFI (no .eh_frame,
	                          * not x86-64, unreadable) */
	uint64_t objects_full;   /* objects left out: rows or tables full */
	uint64_t rows, max_rows; /* rows used / available */
	uint64_t tables_reclaimed; /* tables no process used, given back when
	                            * rows, ids or entries ran short */
	uint64_t rows_lost;      /* rows not given back (out of memory) */
	uint64_t unsupported;    /* rows BPF unwinds by frame pointer */
	uint64_t procs;          /* processes given a slot */
	uint64_t slots_used, max_slots;
	uint64_t slots_full;     /* processes left without a slot */
	uint64_t slots_orphaned; /* pid entries deleted here: published
	                          * after their process had exited */
	uint64_t maps_dropped;   /* mappings over PMUBPF_UW_MAX_MAPS */
	uint64_t files;          /* files BPF finds a table for by their inode */
	uint64_t files_full;     /* files left out: unwind_files full */
	uint64_t preloaded;      /* files' tables built before any process
	                          * was read (unwind__preload) */
	uint64_t asked;          /* files BPF asked for (NOTICE_UFILE) */
	uint64_t answered;       /* of them, given an entry */
	uint64_t build_ns;       /* time spent parsing CFI */
	uint64_t bpf_bytes;      /* BPF memory of all unwind maps */
};

/* Map sizes for a recording: nslots processes at once, nrows rows. */
void unwind__sizes(bool system_wide, uint32_t *max_rows, uint32_t *max_tables,
		   uint32_t *max_slots);

/* The walker's four maps in the loaded BPF object. */
struct bpf_map;
struct unwind_bpf {
	struct bpf_map *rows, *tables, *slots, *pids, *files, *asked;
	struct bpf_program *key_prog; /* uw_file_key, if loaded */
};

/* Before the object is loaded: size the maps for a recording (system-wide
 * or of targets: unwind__sizes), or to one entry each when dwarf is off
 * (BPF never reads them then); the files map too where files (BPF
 * unwinds a process with no slot by its files' tables). */
int unwind__size_maps(const struct unwind_bpf *b, bool dwarf, bool system_wide, bool files);

/* After load: the unwinder on those maps (fds and sizes read back);
 * files as given to unwind__size_maps. */
struct unwind *unwind__open(const struct unwind_bpf *b, int verbose, bool files);

/* NULL + errno (ENOMEM). */
struct unwind *unwind__new(const struct unwind_maps *m, int verbose);
void unwind__free(struct unwind *u);

/* procs_maps_hook: (re)load pr's mappings and their tables; a dead pr
 * (exited or exec'd) gives its slot back. */
void unwind__proc(void *u, const struct proc *pr);
struct symcache;
/* Build the table of the ELF file at path (in our mount namespace) before
 * any process maps it, for BPF to find by the file (no-op without the
 * files map). 0, or -errno (not readable, not ELF, no room). */
int unwind__preload(struct unwind *u, struct procs *p, const char *path);
/* The vDSO's table (ours: the kernel's one image), the same way. */
void unwind__preload_vdso(struct unwind *u);
struct pmubpf_ufile_notice;
/* BPF met a file without an entry (NOTICE_UFILE): its mapping in the
 * process found, its table built if need be, the entry written under the
 * identity BPF read. */
void unwind__file_notice(struct unwind *u, struct procs *p, const struct pmubpf_ufile_notice *n);
/* Sampling has stopped: later maps re-reads need no tables. */
void unwind__stop(struct unwind *u);

void unwind__stats(const struct unwind *u, struct unwind_stats *st);
/* One line for the profile's comments and -v: tables, rows, memory. */
void unwind__summary(const struct unwind_stats *st, char *buf, size_t len);

#endif
