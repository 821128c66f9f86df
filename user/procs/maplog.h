/* maplog.h — the kernel's recent history of every process's address
 * space: its mmap reports (PERF_RECORD_MMAP2), execs (COMM with
 * COMM_EXEC) and forks, for the last few seconds, whoever the process.
 *
 * Why: pmubpf learns of a process at its first sample and reads its maps
 * some milliseconds later, on the loader's own cadence (no wakeup per new
 * process: under churn those wakeups cost the machine more than the
 * reading). A process that lives a millisecond (a shell's /bin/true) is
 * gone by then, and a process that exec'd meanwhile has other maps. The
 * kernel reported everything it mapped as it happened, so its image at
 * the time of the sample is put together from the log instead: the image
 * the process had at that time (from its exec, or from its parent's image
 * at fork), with the files it mapped until its next exec. This is how
 * perf record knows every process without reading /proc.
 *
 * Bounded: entries older than the retention (MAPLOG_RETAIN_NS) are
 * dropped, and at most MAPLOG_MAX entries are held (the oldest go first,
 * counted). Paths are kept once each, refcounted: under churn every
 * process maps the same few files.
 */
#ifndef PMUBPF_MAPLOG_H
#define PMUBPF_MAPLOG_H

#include <stdbool.h>
#include <stdint.h>
#include "procmaps.h"

#define MAPLOG_RETAIN_NS 5000000000LL /* 5 s: the loader's worst lag we cover */
#define MAPLOG_MAX 131072             /* entries; ~80 bytes each */

struct maplog;

struct maplog_stats {
	uint64_t dropped;             /* pushed out by MAPLOG_MAX before their age */
	size_t held;                  /* entries held now */
};

struct maplog *maplog__new(void);
void maplog__free(struct maplog *l);

/* Times are CLOCK_MONOTONIC ns (the perf records' clockid and the BPF
 * notices' bpf_ktime_get_ns()). m: an executable file mapping. */
void maplog__map(struct maplog *l, uint32_t tgid, int64_t t, const struct procmap *m);
void maplog__exec(struct maplog *l, uint32_t tgid, int64_t t);
/* A new process tgid forked from ptgid (a new thread is no fork here). */
void maplog__fork(struct maplog *l, uint32_t tgid, uint32_t ptgid, int64_t t);
/* Drop what is older than now - MAPLOG_RETAIN_NS. */
void maplog__prune(struct maplog *l, int64_t now);

/* Where an image in the log began. */
struct maplog_origin {
	enum {
		MAPLOG_UNKNOWN, /* before the log: before the recording or the retention */
		MAPLOG_EXEC,    /* at an exec: the image is whole */
		MAPLOG_FORK,    /* at a fork: the parent's image then, and these */
	} kind;
	uint32_t ptgid;     /* MAPLOG_FORK: the parent */
	int64_t t;          /* the exec's or fork's time */
	uint64_t exe_inode; /* MAPLOG_EXEC: the inode of its first mapping,
	                     * the executable (the kernel maps it before the
	                     * interpreter); 0 if none */
};

/* The image tgid had at time t: the executable mappings it made from the
 * start of that image (*origin) until its next exec, later ones replacing
 * earlier ones they overlap, sorted by start, appended to out (empty
 * first). Returns how many mappings, or -ENOMEM. A caller that gets
 * MAPLOG_FORK adds the parent's image at origin->t under these. */
int maplog__image(struct maplog *l, uint32_t tgid, int64_t t, struct procmaps *out,
		  struct maplog_origin *origin);
/* Did tgid exec in (after, before]? (after a sample: /proc/tgid shows a
 * later image than the sample's; before INT64_MAX: any time since.) */
bool maplog__exec_between(const struct maplog *l, uint32_t tgid, int64_t after, int64_t before);

const struct maplog_stats *maplog__stats(struct maplog *l);

/* Put the mappings of `under` beneath those of `over` (sorted by start,
 * both): a mapping of under that any of over's overlaps is left out.
 * over's paths are moved into the result, under's copied; out replaces
 * over. 0 or -ENOMEM (over unchanged). */
int maplog__layer(struct procmaps *over, const struct procmaps *under);

#endif
