/* procs_int.h — what the process registry (procs.c) and its labels half
 * (procs_labels.c: record discovery, label sets) share. Not a public
 * interface: see procs.h.
 */
#ifndef PMUBPF_PROCS_INT_H
#define PMUBPF_PROCS_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <bpf/bpf.h>
#include <sys/stat.h>
#include "lib/clock.h"
#include "goversion.h"
#include "labels.h"
#include "procs.h"
#include "procsyms.h"

#define LABEL_RECORD_SYMBOL "pmubpf_labels_record"
#define LABEL_MAX_TRIES 1000 /* procs__tick passes: >= 1 s (one per ms at most) */

enum proc_label_state {
	LABELS_NONE,    /* no record symbol in any mapped object */
	LABELS_PENDING, /* record found, not initialised yet: retry */
	LABELS_READY,   /* slot given to BPF */
	LABELS_BAD,     /* record rejected */
};

/* The stats of files that images from the mmap reports mapped (of
 * processes gone, or read from the log), by path and inode, each kept
 * STAT_MEMO_NS (procs_stat_path). */
#define STAT_MEMO_N 8
#define STAT_MEMO_PATH 256 /* longer paths are stat'ed each time */
#define STAT_MEMO_NS 1000000000LL
struct stat_memo {
	struct {
		char path[STAT_MEMO_PATH];
		uint64_t ino;
		int64_t at_ns; /* when stat'ed; 0: empty */
		struct stat st;
	} e[STAT_MEMO_N];
	unsigned next; /* the slot the next miss takes */
};

/* What find_go (procs_flabels.c) learned of a main executable, by its
 * object's key (elfobj__key): under churn the same few programs start
 * thousands of times a second, and each look opened /proc/PID/exe and
 * read its section headers (7-8% of the loop's CPU). Direct-mapped by
 * key; key 0: empty. */
#define GO_MEMO_N 64
struct go_memo {
	uint64_t key;
	int err;           /* goversion__read's answer */
	const char *why;
	struct go_info gi;
};

struct procs {
	struct symcache *sc;
	struct vdso_memo own_vdso; /* for processes gone (procsyms.h) */
	struct stat_memo path_stats;
	struct debuginfo *dbg;
	int slots_fd;
	int go_fd;             /* go_slots, or -1 */
	struct go_memo go_memo[GO_MEMO_N];
	int custom_fd;         /* custom_slots, or -1 */
	int otel_fd;           /* otel_slots, or -1 */
	int seen_fd;
	int seen_labels_fd;    /* BPF's seen_labels: -1 none (tests) */
	struct proc **v;
	size_t n, cap;
	struct proc **act;     /* the ones procs__tick still has work for */
	size_t nact, capact;
	int held;              /* procs__hold: a profile is being built */
	struct hashtab *index; /* (tgid, pgen) -> index in v */
	struct hashtab *by_tgid; /* tgid -> index in v of its latest generation */
	struct set_rec *sets;  /* label sets read, all processes */
	size_t nsets, capsets;
	size_t set_bytes;      /* of all kept sets (struct proc_label_set) */
	size_t nsets_win, set_bytes_win; /* of them read since the last window's end */
	struct pmubpf_label_seen_key *refused; /* sets a cap refused this window: */
	size_t nrefused, caprefused;           /* sent again after it (procs__labels_gc) */
	struct hashtab *set_index; /* (proc, source, id) -> index in sets */
	struct union_rec *unions;  /* union keys whose sets are not all read */
	size_t nunions, capunions;
	struct procs_stats st;
	struct maplog *log;    /* the kernel's recent reports (maplog.h) */
	int64_t reports_upto;  /* the reports written before it are in the
	                        * log (0: none read, or none watched) */
	struct image_paths *image_paths; /* procs_images.c */
	int image_files_fd;    /* BPF's image_files, or -1 */
	int64_t lost_ns;       /* when reports were last lost (0: never): an
	                        * image begun before may lack some */
	int verbose;
	bool data_maps;        /* --data-addr: pr->data_maps kept */
	procs_maps_hook maps_hook; /* unwinding: after each (re-)read */
	void *maps_hook_ctx;
	int64_t wait_due;      /* procs__wait_due: the earliest image_wait */
	int64_t image_wait_ns; /* procs__set_image_wait */
	bool reading_all;      /* procs__read_waiting: every wait ends now */
	struct cgroups *cg;    /* the cgroups of process records (cgroups.h) */
	int64_t last_tick;     /* procs__tick's last pass, and its result */
	int last_pending;
};

struct set_rec {
	const struct proc *pr;
	struct proc_label_set *set; /* one allocation: pairs, then strings */
	size_t bytes;               /* its size, counted in set_bytes */
	int64_t used_ns;            /* kept, or the end of the last window
	                             * drained with a sample of it */
	int64_t retired_ns;         /* 0, or when it was retired (its BPF
	                             * seen_labels entry deleted): freed once
	                             * no window since used it */
};

struct set_key {
	const struct proc *pr;
	uint64_t id;
	uint32_t src; /* enum pmubpf_label_source, or PMUBPF_LSRC_UNION */
};

/* A union key (several writers' sets on one sample) not made yet: one of
 * its sets has not been read (its notice comes later, or never). */
struct union_rec {
	const struct proc *pr;
	uint64_t key;
	uint64_t ids[PMUBPF_LSRC__MAX];
};

/* pr has exited or exec'd (its maps are final): from when, the first time
 * it is found so (procs__gc forgets it once no window can hold it). */
static inline void procs_set_dead(struct proc *pr)
{
	if (!pr->dead) {
		pr->dead = true;
		pr->dead_ns = mono_ns();
	}
}

/* Is pr's tgid still in the address space of generation pr->pgen? The
 * seen map loses a tgid's entry at exec and marks it ended at the
 * process's end (its last thread's exit), so equality (not ended) means yes.
 * (Inline: both halves use it, and neither may call the other back.) */
static inline bool procs_same_generation(struct procs *p, const struct proc *pr)
{
	struct pmubpf_seen v;

	if (p->seen_fd < 0)
		return false;
	return bpf_map_lookup_elem(p->seen_fd, &pr->tgid, &v) == 0 && v.pgen == pr->pgen && !v.ended;
}
/* Write a slot for pr's current generation into BPF map fd (a writer's
 * slot: go_slots, custom_slots, otel_slots); false if not (gone
 * meanwhile: an exec or exit deleted the entry, or will). Inline, as
 * procs_same_generation: procs_flabels.c and procs_otel.c both use it. */
static inline bool procs_publish_slot(struct procs *p, struct proc *pr, int fd, const void *slot)
{
	if (p->seen_fd >= 0 && !procs_same_generation(p, pr))
		return false;
	if (bpf_map_update_elem(fd, &pr->tgid, slot, BPF_ANY))
		return false;
	/* Written after an exit or exec deleted it: delete it ourselves (the
	 * entry's pgen keeps BPF from using it meanwhile). */
	if (p->seen_fd >= 0 && !procs_same_generation(p, pr)) {
		bpf_map_delete_elem(fd, &pr->tgid);
		return false;
	}
	return true;
}
/* The object behind one of pr's mappings (its file, or the vDSO's image
 * read out of the process), NULL if unreadable (counted). */
struct elfobj *procs_open_obj(struct procs *p, const struct proc *pr, const struct procmap *m);
/* When to read the maps of a live process again, after the n-th read
 * (ns): a first sample often comes while ld.so is still mapping
 * libraries, and dlopen can come at any time. Then every 10 s. */
static inline int64_t procs_rescan_delay(int n)
{
	static const int64_t steps[] = { 20000000LL, 200000000LL, 2000000000LL };

	return n < 3 ? steps[n] : 10000000000LL;
}
/* procs_read.c: reading a process. */
/* The first read of pr, sampled at t (CLOCK_MONOTONIC; 0: unknown):
 * from /proc, or, gone or in another image, pr->log_wait is set for
 * procs_log_retry after the next read of the reports. */
int procs_snapshot(struct procs *p, struct proc *pr, int64_t t);
/* The second and last try for a process gone or moved at its first read. */
void procs_log_retry(struct procs *p, struct proc *pr);
/* pr's wait for BPF's image is over: its image if it came, else its
 * first read. */
void procs_image_wait_end(struct procs *p, struct proc *pr);
/* procs_via.c: procmaps__read of pr's process through pr->via, moved to
 * a live thread of it where that id gives none (a zombie leader, a
 * thread gone). 0 or -errno. */
int procs_read_maps(struct proc *pr, bool exec_only, struct procmaps *maps);
/* procs_rescan.c: reading a live process again. */
/* Read pr's maps again and merge them (scheduled: the safety net,
 * advanced; else for mmap reports); found gone: procs_gone. */
int procs_rescan(struct procs *p, struct proc *pr, bool scheduled);
/* pr exited or exec'd: its maps are final (reported mappings merged). */
void procs_gone(struct procs *p, struct proc *pr);
/* procs_images.c: the mapping a NOTICE_MAP gives (its path in buf, or
 * kept), counted; false if none (no path, or a path alone). */
bool procs_images_mapping(struct procs *p, const struct pmubpf_map_notice *n, size_t size,
			  struct procmap *m, char *buf, size_t len);
/* The mapping one entry of a NOTICE_IMAGE gives (or a NOTICE_MAP's, as
 * an entry), counted: its path given (the notice's own), the vDSO, or
 * the one kept for its file; false if none (the file's entry then taken
 * out of BPF's table, so that the next image sends its path). */
bool procs_images_entry(struct procs *p, const struct pmubpf_image_map *e, const char *given,
			struct procmap *m);
void procs_images_free(struct procs *p);
/* Count a refused perf map once per process (say it with -v). */
void procs_note_jit_refusal(struct procs *p, struct proc *pr);
/* --data-addr: read pr's maps, every kind, and merge them into
 * pr->data_maps (datamaps.c). */
void procs_datamaps_read(struct proc *pr);
/* Look for the labels record in pr's mapped objects and, if found, give
 * BPF its slot (procs_labels_retry); LABELS_NONE if no object has it. */
void procs_labels_find(struct procs *p, struct proc *pr);
/* Read the record at pr->record_addr and publish the TLS word's place to
 * BPF: LABELS_READY, LABELS_PENDING (not initialised yet: retry from
 * procs__tick) or LABELS_BAD. */
void procs_labels_retry(struct procs *p, struct proc *pr);
/* A label notice: decode BPF's copy of the set (or read it) and keep it. */
void procs_labels_notice(struct procs *p, struct proc *pr, const struct pmubpf_label_notice *n);
/* As procs_labels_kept, and a set kept is marked used now (a sample
 * named it again: its notice came again). */
bool procs_labels_touch(struct procs *p, const struct proc *pr, uint32_t src, uint64_t id);
/* Keep a decoded set of source src (enum pmubpf_label_source, or
 * PMUBPF_LSRC_UNION) under the caps; make the unions waiting for it. */
void procs_labels_keep(struct procs *p, struct proc *pr, uint32_t src, const struct label_set *set);
struct proc_label_set *procs_labels_kept(const struct procs *p, const struct proc *pr,
					 uint32_t src, uint64_t id);
/* procs_flabels.c: other writers' labels. */
/* At the snapshot (rescan false) and maps re-reads (true). */
void procs_flabels_find(struct procs *p, struct proc *pr, bool rescan);
void procs_flabels_notice(struct procs *p, struct proc *pr, const struct pmubpf_flabel_notice *n);
/* What the other writers' readers keep per process, freed with it. */
void procs_flabels_free(struct proc *pr);
/* procs_otel.c: OpenTelemetry thread context. At the snapshot and maps
 * re-reads, until found or refused: */
void procs_otel_find(struct procs *p, struct proc *pr);
/* A record BPF copied (n->raw) into out's pairs: 0 or -EPROTO (*why). */
int procs_otel_pairs(struct procs *p, struct proc *pr, const struct pmubpf_flabel_notice *n,
		     struct pmubpf_flabel_notice *out, const char **why);
/* A union notice: make its set, or wait for its parts (procs_labels.c). */
void procs_labels_union(struct procs *p, struct proc *pr, const struct pmubpf_lunion_notice *n);
/* A set of pr was kept: make the waiting unions it completes. */
void procs_labels_complete(struct procs *p, const struct proc *pr);
/* procs__gc: forget the waiting unions of processes dead before `before`. */
void procs_labels_forget_unions(struct procs *p, int64_t before);
/* pr's set `label` (a union's, or our header's) is used up to ns
 * (procs__labels_used). */
void procs_labels_used(struct procs *p, const struct proc *pr, uint64_t label, int64_t ns);

/* hashtab equality for p->set_index. */
/* procs__gc: drop the sets of processes dead before `before` and index
 * the rest in `index` (empty, room reserved), which replaces the old. */
void procs_labels_forget(struct procs *p, int64_t before, struct hashtab *index);
bool procs_labels_set_eq(const void *key, uint64_t idx, void *ctx);

/* stat(2) of path, a file a process mapped as inode ino (its mmap
 * report; the process gone, or in our mount namespace): true, with *st,
 * if the path is still that inode. Answered from p's memo for
 * STAT_MEMO_NS after a stat (now: CLOCK_MONOTONIC ns):
 * under churn the same few files are asked for thousands of times a
 * second, and a path lookup each was 5% of the recording's CPU. A file
 * replaced since is another inode, so a hit is still the file the
 * report named. */
bool procs_stat_path(struct procs *p, const char *path, uint64_t ino, int64_t now,
		     struct stat *st);

#endif
