/* procs.h — what pmubpf remembers of each sampled process.
 *
 * At the first sample of a process generation (tgid, pgen) BPF sends a
 * notice; procs__notice then snapshots it while it still exists (and
 * re-reads its maps a few times after, merging in libraries mapped later):
 * comm, executable mappings, and an open ELF object per mapped file (through
 * /proc/PID/map_files, so deleted binaries and binaries inside other mount
 * namespaces are read). It also looks for the labels registration record
 * and, when found, tells BPF where the process keeps its label word. Label
 * sets named by later notices are read out of the process at once and
 * kept, so the profile can name them after the process has exited.
 */
#ifndef PMUBPF_PROCS_H
#define PMUBPF_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include "symbols/elfsym.h"
#include "labels.h"
#include "symbols/perfmap.h"
#include "pmubpf_abi.h"
#include "procmaps.h"

struct procs;

struct proc {
	uint32_t tgid, pgen;
	char comm[PMUBPF_COMM_LEN + 1];
	bool snapshotted;         /* false: gone before its maps were read */
	struct procmaps maps;     /* executable mappings, sorted */
	struct elfobj **objs;     /* per mapping; NULL if unreadable */
	uint64_t exe_ino;         /* inode of /proc/PID/exe at the snapshot,
	                           * 0 if unknown: names its main mapping */
	int rescans;              /* maps re-read and merged so far */
	int64_t next_rescan;      /* CLOCK_MONOTONIC ns */
	struct procmaps reported; /* mmap reports since the last read */
	int64_t report_due;       /* re-read for them by then; 0: none */
	bool dead;                /* exited or exec'd: its maps are final */
	/* labels */
	int label_state;          /* enum proc_label_state (procs.c) */
	int label_tries;
	uint64_t record_addr;
	/* symbols beyond mapped files (procsyms.c) */
	bool other_mntns;         /* in another mount namespace than pmubpf */
	struct perfmap_src jit_src;
	struct perfmap *jit;      /* its /tmp/perf-PID.map, NULL if none */
	int64_t jit_read_ms;      /* last read, CLOCK_MONOTONIC ms */
	int jit_reads;
};

struct procs_stats {
	uint64_t notices;          /* process notices handled */
	uint64_t gone;             /* process exited before its snapshot */
	uint64_t objs_unreadable;  /* mappings whose file could not be opened */
	uint64_t rescans;          /* maps re-read and merged (new libraries) */
	uint64_t maps_from_reports;/* mappings taken from mmap reports (gone) */
	uint64_t label_records;    /* processes with a valid label record */
	uint64_t label_bad_records;/* records found but rejected (hostile/old) */
	uint64_t label_sets;       /* label sets read */
	uint64_t label_sets_stale; /* set freed/reused before it could be read */
	uint64_t label_sets_bad;   /* malformed set */
};

/* label_slots_fd: the BPF map tgid -> struct pmubpf_label_slot, or -1;
 * seen_fd: the BPF map tgid -> generation (to tell whether a process is
 * still in the address space a snapshot was taken of), or -1. */
struct procs *procs__new(struct symcache *sc, int label_slots_fd, int seen_fd);
struct debuginfo;
/* Note each new object's debug sources with dbg at snapshot (debuginfo.h);
 * without it objects get ELF symbols only. */
void procs__set_debuginfo(struct procs *p, struct debuginfo *dbg);
void procs__free(struct procs *p);
/* Called with each process whose maps were just read (first snapshot) or
 * changed (a re-read merged something in): --call-graph dwarf loads its
 * unwind tables for BPF there (user/unwind.c). */
typedef void (*procs_maps_hook)(void *ctx, const struct proc *pr);
void procs__set_maps_hook(struct procs *p, procs_maps_hook fn, void *ctx);

/* Handle one ring-buffer notice of size bytes (a struct pmubpf_notice,
 * or a struct pmubpf_label_notice for NOTICE_LABEL). Returns 0 (failures
 * are counted). */
int procs__notice(struct procs *p, const struct pmubpf_notice *n, size_t size);
/* Re-read the maps of every process still in its snapshot's generation
 * and merge them in (call once after sampling stopped, before symbolizing:
 * libraries mapped since the last read are then named). */
void procs__rescan_all(struct procs *p);

/* The kernel reported an executable mmap m by tgid (PERF_RECORD_MMAP2):
 * re-read its maps within REPORT_DELAY (2 ms; the reports of one ld.so
 * run or dlopen come in bursts and share that one read). m is kept: if
 * the process is gone by then, m itself is merged (m may be NULL). */
void procs__mapped(struct procs *p, uint32_t tgid, const struct procmap *m);

/* Re-read maps that are due (mmap reports; 20 ms, 200 ms, 2 s after
 * first sight, then every 10 s: a safety net for mmaps whose records were
 * lost), and retry processes whose label record was not ready yet (a
 * process seen before its constructors ran). At most one pass per
 * millisecond, however often it is called. Returns how many processes have
 * something pending: the caller polls faster while any do. */
int procs__tick(struct procs *p);

/* The snapshot of (tgid, pgen); if none was taken (notice lost or came
 * too late), one is made now, marked !snapshotted if the process is gone,
 * so callers always get a record (NULL only on ENOMEM). */
struct proc *procs__get(struct procs *p, uint32_t tgid, uint32_t pgen);
/* The label set `id` of proc, or NULL if it was never read. */
const struct label_set *procs__label_set(const struct procs *p,
					 const struct proc *pr, uint64_t id);

const struct procs_stats *procs__stats(const struct procs *p);
/* Process records held (for monitoring). */
size_t procs__count(const struct procs *p);

#endif
