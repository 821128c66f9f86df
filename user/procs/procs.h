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
#include "cgroups.h"

struct procs;

struct proc {
	uint32_t tgid, pgen;
	uint32_t prev_pgen;       /* the generation of tgid noticed before
	                           * this one (0: none): an mmap report read
	                           * late may be of its image */
	uint32_t via;             /* the id its /proc files and memory are
	                           * read through: tgid, or, where the leader
	                           * left first (pthread_exit: a zombie, no
	                           * maps, root or map_files), a live thread
	                           * of it, another when that one leaves */
	char comm[PMUBPF_COMM_LEN + 1];
	bool snapshotted;         /* false: gone before its maps were read */
	struct procmaps maps;     /* executable mappings, sorted */
	struct elfobj **objs;     /* per mapping; NULL if unreadable */
	uint64_t exe_ino;         /* inode of /proc/PID/exe at the snapshot,
	                           * 0 if unknown: names its main mapping */
	int64_t seen_ns;          /* its first sample's time (CLOCK_MONOTONIC),
	                           * 0 if unknown */
	bool seen_moving;         /* first sampled inside execve or while
	                           * exiting: the log alone does not say */
	bool seen_execing;        /* first sampled inside an exec past its
	                           * point of no return (NOTICE_F_EXECING):
	                           * BPF sends its image at the exec's end */
	bool seen_nomm;           /* first sampled with no address space
	                           * (late in its exit): no image to read */
	uint8_t log_behind;       /* 1: alive at its notice but sampled after
	                           * the reports were last read, its read
	                           * waits for them (procs__settle); 2: done */
	bool log_wait;            /* gone, and not in the log of reports yet:
	                           * tried again at procs__settle */
	int64_t image_wait;       /* images from BPF: its first read waits
	                           * until then (CLOCK_MONOTONIC) for BPF's
	                           * image at its end; 0: not waiting */
	bool image_waited;        /* that wait is over: read it when asked */
	int rescans;              /* maps re-read and merged so far */
	int64_t next_rescan;      /* CLOCK_MONOTONIC ns */
	struct procmaps reported; /* mmap reports since the last read */
	struct procmaps left;     /* its image as it ended, from BPF
	                           * (procs_images.c), if not read before */
	size_t left_cap;
	uint64_t left_exe;        /* the executable's inode, from BPF */
	uint32_t like_tgid, like_pgen; /* its image ended as that process's
	                           * (BPF's NOTICE_LIKE: a fork child in its
	                           * parent's image); 0: no */
	struct procmaps data_maps;/* --data-addr: every mapping, data ones
	                           * too, merged across reads (datamaps.c) */
	int64_t report_due;       /* re-read for them by then; 0: none */
	bool dead;                /* exited or exec'd: its maps are final */
	bool in_act;              /* on procs__tick's list */
	int64_t dead_ns;          /* when that was found (CLOCK_MONOTONIC) */
	/* labels */
	int label_state;          /* enum proc_label_state (procs.c) */
	int label_tries;
	uint64_t record_addr;
	uint32_t label_sets;      /* sets kept, and their bytes (caps: */
	uint32_t label_bytes;     /* LABEL_SETS_*, LABEL_BYTES_*) */
	uint32_t label_sets_win;  /* of them read since the last window's end */
	uint32_t label_bytes_win;
	bool label_sets_over;     /* a set was not kept: over a cap */
	bool custom_done;         /* custom-labels writer found or refused */
	bool otel_done;           /* OpenTelemetry thread context: found or refused */
	struct otelctx *otel;     /* its process context (key names), or NULL */
	/* symbols beyond mapped files (procsyms.c) */
	bool other_mntns;         /* in another mount namespace than pmubpf */
	uint32_t mntns;           /* its mount namespace at the first sample
	                           * (nsfs inode, from BPF), 0 if unknown */
	uint64_t cgroup_id;       /* its cgroup v2 id at the first sample (BPF) */
	struct cgroup_info *cg;   /* its cgroup named (a reference), or NULL */
	struct perfmap_src jit_src;
	struct perfmap *jit;      /* its /tmp/perf-PID.map, NULL if none */
	int64_t jit_read_ms;      /* last read, CLOCK_MONOTONIC ms */
	int jit_reads;
	int jit_refused;          /* -errno: its map was refused (owner,
	                           * type, size), 0 if not */
	bool jit_refusal_noted;   /* counted (and said with -v) */
};

struct procs_stats {
	uint64_t notices;          /* process notices handled */
	uint64_t gone;             /* process exited before its snapshot */
	uint64_t gone_nomm;        /* of those, first sampled with no address
	                            * space (late in its exit): no user stack,
	                            * nothing to read (not in `gone`) */
	uint64_t objs_unreadable;  /* mappings whose file could not be opened */
	uint64_t rescans;          /* maps re-read and merged (new libraries) */
	uint64_t maps_from_reports;/* mappings taken from mmap reports (gone) */
	uint64_t from_log;         /* images put together from the kernel's
	                            * reports (maplog.h): gone, or exec'd,
	                            * before their maps were read */
	uint64_t from_images;      /* images BPF sent as they ended (exit or
	                            * exec): gone before their maps were read */
	uint64_t from_parent;      /* of them, fork children whose image was
	                            * their parent's (NOTICE_LIKE) */
	uint64_t image_maps;       /* mappings BPF sent so */
	uint64_t image_maps_unnamed; /* of them without a path (too deep or
	                            * long, or its path was not kept) */
	uint64_t image_maps_lost;  /* not sent: the ring buffer was full */
	bool images;               /* images from BPF, not mmap reports */
	uint64_t live_from_log;    /* live processes whose first image came
	                            * from those reports, no maps read */
	uint64_t live_read;        /* live processes read from /proc, ... */
	uint64_t live_read_moving; /* ... first sampled inside execve or an
	                            * exit (not from the log alone) */
	uint64_t maps_reads;       /* first reads of a process's maps from
	                            * /proc, whatever they found */
	uint64_t reports_lost;     /* mmap/exec/fork reports the kernel dropped
	                            * (the reader's buffer was full) */
	uint64_t log_dropped;      /* reports pushed out of the log before
	                            * their time (maplog.h: MAPLOG_MAX) */
	uint64_t label_records;    /* processes with a valid label record */
	uint64_t label_bad_records;/* records found but rejected (hostile/old) */
	uint64_t label_sets;       /* label sets read */
	uint64_t label_sets_stale; /* set freed/reused before it could be read */
	uint64_t label_sets_bad;   /* malformed set */
	uint64_t label_sets_over;  /* not kept: a cap on sets or bytes reached */
	uint64_t label_sets_forgotten; /* freed: no window used them (procs__labels_gc) */
	uint64_t label_bytes;      /* memory of the sets kept */
	/* labels from other writers (procs_flabels.c) */
	uint64_t go_processes;     /* Go programs whose labels BPF reads */
	uint64_t go_refused;       /* Go programs refused: version unknown */
	uint64_t custom_processes; /* custom-labels v1 writers read */
	uint64_t custom_refused;   /* ... refused: version, TLS (dynamic) */
	char go_refused_version[32]; /* the last refused one's version */
	uint64_t otel_processes;   /* OpenTelemetry thread context read */
	uint64_t otel_refused;     /* ... refused: process context, schema, TLS */
	uint64_t otel_keys_unknown;/* attributes left out: key index not in the
	                            * process context's attribute_key_map */
	uint64_t flabel_sets;      /* other writers' sets read */
	uint64_t flabel_sets_bad;  /* refused: too many labels, unreadable,
	                            * malformed */
	uint64_t label_unions;     /* label sets made of several writers' */
	uint64_t over_cap;         /* processes not recorded: max_procs reached */
	uint64_t collected;        /* dead processes forgotten (procs__gc) */
	size_t max_procs;
	uint64_t jit_maps_refused; /* processes whose perf map was refused */
	uint64_t cgroups_named;    /* cgroups named (cgroups.h), each once while used */
	uint64_t cgroups_unnamed;  /* processes whose cgroup could not be named */
	uint64_t cgroup_reads;     /* /proc/PID/cgroup read (v2 said nothing) */
};

/* label_slots_fd: the BPF map tgid -> struct pmubpf_label_slot, or -1;
 * seen_fd: the BPF map tgid -> generation (to tell whether a process is
 * still in the address space a snapshot was taken of), or -1. */
struct procs *procs__new(struct symcache *sc, int label_slots_fd, int seen_fd);
/* go_slots_fd: the BPF map tgid -> struct pmubpf_go_slot (Go programs'
 * pprof labels), or -1 (the default: Go labels not read). */
void procs__set_go_slots(struct procs *p, int go_slots_fd);
/* custom_slots_fd: tgid -> struct pmubpf_custom_slot, or -1 (default). */
void procs__set_custom_slots(struct procs *p, int custom_slots_fd);
/* otel_slots_fd: tgid -> struct pmubpf_otel_slot, or -1 (default). */
void procs__set_otel_slots(struct procs *p, int otel_slots_fd);
/* At most max process records (default PROCS_MAX): beyond, a process is
 * not snapshotted (its samples stay, unsymbolized, comm "[unknown]";
 * counted in over_cap). Each recorded process has at least one counts map
 * entry, so the counts map's size is the natural cap. */
#define PROCS_MAX 262144
void procs__set_max(struct procs *p, size_t max);
struct debuginfo;
/* Note each new object's debug sources with dbg at snapshot (debuginfo.h);
 * without it objects get ELF symbols only. */
void procs__set_debuginfo(struct procs *p, struct debuginfo *dbg);
/* --data-addr: keep every mapping of each process (heap, stack, data
 * files, anonymous), not only the executable ones, read with them. */
void procs__set_data_maps(struct procs *p, bool on);
/* pr's mapping (any kind, as kept by procs__set_data_maps) holding addr,
 * or NULL. */
const struct procmap *procs__data_map(const struct proc *pr, uint64_t addr);
/* verbose > 0: say on stderr what is refused per process (perf maps). */
void procs__set_verbose(struct procs *p, int verbose);
void procs__free(struct procs *p);
/* Called with each process whose maps were just read (first snapshot) or
 * changed (a re-read merged something in): --call-graph dwarf loads its
 * unwind tables for BPF there (user/unwind.c). Called once more when the
 * process is found gone (pr->dead: exited or exec'd), so that what was
 * held for it while it lived is given back; and once, dead, for a
 * process gone before it was read, its image put together without it
 * (from BPF or the kernel's reports): its files' tables are built. */
/* The object of the file at path (our mount namespace), as a mapping
 * of it would be opened (its debug info noted): for files read before
 * any process maps them. NULL if unreadable or not ELF. */
struct elfobj *procs__open_path(struct procs *p, const char *path);
/* The same for mapping m of live process tgid (through its map_files). */
struct elfobj *procs__open_mapping(struct procs *p, uint32_t tgid, const struct procmap *m);
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

/* The kernel reported an executable mmap m by tgid at time t
 * (PERF_RECORD_MMAP2; CLOCK_MONOTONIC ns): it goes into the log of recent
 * history (maplog.h) and, for a process already snapshotted, its maps are
 * re-read within REPORT_DELAY (2 ms; the reports of one ld.so run or
 * dlopen come in bursts and share that one read). m is kept: if the
 * process is gone by then, m itself is merged (m may be NULL: a data
 * mapping, which only asks for the re-read). */
void procs__mapped(struct procs *p, uint32_t tgid, const struct procmap *m, int64_t t);
/* The kernel reported an exec by tgid, a new process tgid forked from
 * ptgid (PERF_RECORD_COMM with COMM_EXEC, PERF_RECORD_FORK): the log's
 * image boundaries. */
void procs__exec(struct procs *p, uint32_t tgid, int64_t t);
void procs__forked(struct procs *p, uint32_t tgid, uint32_t ptgid, int64_t t);
/* The kernel dropped n reports: the log may lack a process's history. */
void procs__reports_lost(struct procs *p, uint64_t n);
/* Every report the kernel wrote before upto (CLOCK_MONOTONIC) is in:
 * said after each read of them (mmapwatch). */
void procs__reports_read(struct procs *p, int64_t upto);

/* Decide on the processes found gone, or in another image, at their
 * first read (procs_snapshot): call after reading the reports that came
 * in while the notices were read, so that the log is whole up to now.
 * What is still missing then counts as gone. */
void procs__settle(struct procs *p);
/* Images from BPF (procs__set_image_files): a process's first read waits
 * PROCS_IMAGE_WAIT_NS after its first sample, for BPF's image of it at
 * its exit or exec. Most short-lived processes end within it and are
 * never read from /proc (under churn: 6 reads in 10 s where reading at
 * the notice made 450, a third of the loader's time while recording); a
 * process that lives on is read after it: its unwind tables and labels
 * record come that much later (10 ms: a 40 ms program is still unwound
 * by its tables for most of its life, always.evicts_objects).
 * procs__settle reads those whose wait is over; procs__read_waiting all
 * of them now (before a profile is built from their samples). */
#define PROCS_IMAGE_WAIT_NS 10000000LL
/* A process first sampled inside an exec past its point of no return
 * waits on, while the exec goes on, for the image BPF sends at its end
 * (under qemu an exec's loading outlasts the wait: /proc then showed the
 * new image, and a fork child named by its parent's was read as the
 * program it exec'd), at most this long after its sample. */
#define PROCS_EXEC_WAIT_NS 1000000000LL
void procs__read_waiting(struct procs *p);
/* The wait, from the next process on (the loader's cadence: session.c);
 * PROCS_IMAGE_WAIT_NS until set. */
void procs__set_image_wait(struct procs *p, int64_t ns);
/* When the first of those waits ends (CLOCK_MONOTONIC), 0 if none: the
 * caller looks again by then. */
int64_t procs__wait_due(const struct procs *p);
/* A profile is being built from the processes (hold true), or no longer
 * (false; holds nest). While held, nothing frees or replaces what a
 * process holds: mmap reports of a process already gone, merged into its
 * maps at once otherwise, wait for the release (the notices and reports
 * are taken in during builds: a 16-CPU churn's builder read a maps array
 * a report had just replaced). */
void procs__hold(struct procs *p, bool hold);

/* Forget the processes found dead before `before` (CLOCK_MONOTONIC ns),
 * with their label sets: a recording that writes windows calls it with
 * the start of the oldest window not yet symbolized, whose samples such a
 * process cannot have (it was gone before that window began). Keeps a
 * recording of days bounded by the processes alive at once, not by all
 * that ever ran. Returns how many were freed. */
size_t procs__gc(struct procs *p, int64_t before);
/* symcache__mark every object a remembered process maps (the objects a
 * symcache__sweep must keep). */
void procs__mark_objects(const struct procs *p);
/* Process records held now. */
size_t procs__count(const struct procs *p);

/* Re-read maps that are due (mmap reports; 20 ms, 200 ms, 2 s after
 * first sight, then every 10 s: a safety net for mmaps whose records were
 * lost), and retry processes whose label record was not ready yet (a
 * process seen before its constructors ran). At most one pass per
 * millisecond, however often it is called. Returns how many processes have
 * something pending: the caller polls faster while any do. */
int procs__tick(struct procs *p);

/* pr's main executable mapping (the first of /proc/PID/exe's inode),
 * or NULL if unknown. Inline: procs' own files and the report's use it,
 * and none of them may call the others back. */
static inline const struct procmap *procs__main_map(const struct proc *pr)
{
	if (!pr->exe_ino)
		return NULL;
	for (size_t i = 0; i < pr->maps.n; i++)
		if (pr->maps.maps[i].inode == pr->exe_ino && pr->maps.maps[i].path[0])
			return &pr->maps.maps[i];
	return NULL;
}

/* The snapshot of (tgid, pgen); if none was taken (notice lost or came
 * too late), one is made now, marked !snapshotted if the process is gone,
 * so callers always get a record (NULL on ENOMEM, or past max_procs). */
struct proc *procs__get(struct procs *p, uint32_t tgid, uint32_t pgen);
/* Label sets read: at most LABEL_SETS_PER_PROC sets and
 * LABEL_BYTES_PER_PROC bytes per process, LABEL_SETS_MAX and
 * LABEL_BYTES_MAX in all, per window (a process making a new set per
 * request must not grow pmubpf without a bound); past them a process's
 * new sets are named "[too many sets]" (counted). A one-shot recording
 * is one window. The unions of other writers' sets (procs_labels.c)
 * count in bytes, not in sets: a program whose one writer is
 * OpenTelemetry's has one beside every span it reads. Where windows end
 * (procs__labels_gc), the sets no window uses any more go, and those
 * alive at once are also held to LABEL_ALIVE times the bytes caps and
 * twice that times the sets caps (with unions): a set lives through the
 * window after its last use (retired) and the one under way, so a
 * program making a new set per sample holds about three windows' worth. */
#define LABEL_SETS_PER_PROC 16384
#define LABEL_SETS_MAX 65536
#define LABEL_BYTES_PER_PROC (8u << 20)
#define LABEL_BYTES_MAX (32u << 20)
#define LABEL_ALIVE 3

/* A label set as kept: the pairs point into the same allocation, so a
 * typical set costs ~100 bytes, not a struct label_set's 5 KiB. */
struct label_kv {
	const char *key, *value;
};
struct proc_label_set {
	uint64_t id;
	uint32_t n;
	bool truncated;
	bool ours;          /* pmubpf's own (e.g. [too many sets]): keys as they are */
	uint8_t source;     /* enum pmubpf_label_source, or PMUBPF_LSRC_UNION */
	struct label_kv pairs[];
};
/* The label set `id` of proc, or NULL if it was never read. A process
 * whose sets went over a cap (above) gets, for sets not kept, one
 * pair PROCS_LABELS_KEY = "[too many sets]". */
#define PROCS_LABELS_KEY "pmubpf_labels"
const struct proc_label_set *procs__label_set(const struct procs *p,
					      const struct proc *pr, uint64_t id);

/* Label sets for as long as windows use them (--every, --http, top):
 * the sets a drained window's samples name are marked used
 * (procs__labels_used, with the window's end); procs__labels_gc, once
 * everything before `before` is written, retires the sets no window
 * since `before` used (BPF's seen_labels entry deleted: a later sample
 * sends the set again) and frees those retired that no window drained
 * since used. The caps above then bound the sets alive in a window, not
 * every set a process ever made. A one-shot recording never calls it.
 * seen_labels_fd: BPF's map (-1: none, as in the unit tests). */
void procs__set_seen_labels(struct procs *p, int seen_labels_fd);
void procs__labels_used(struct procs *p, uint32_t tgid, uint32_t pgen, uint64_t label, int64_t ns);
size_t procs__labels_gc(struct procs *p, int64_t before, int64_t now);

const struct procs_stats *procs__stats(const struct procs *p);
/* Images of processes gone come from BPF (PMUBPF_NOTICE_MAP) through
 * image_files (its table of files whose path was sent). */
void procs__set_image_files(struct procs *p, int image_files_fd);
/* BPF's count of mappings it could not send (ring buffer full). */
void procs__set_image_maps_lost(struct procs *p, uint64_t n);
/* Process records held (for monitoring). */
size_t procs__count(const struct procs *p);
/* Label sets held now (every writer's and the unions). */
size_t procs__label_sets_held(const struct procs *p);

#endif
