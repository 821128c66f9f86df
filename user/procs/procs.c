/* procs.c — the process registry: snapshots at first sight, maps re-read
 * as libraries arrive, the per-tick work (labels: procs_labels.c).
 *
 * Runs on the ring-buffer callback, i.e. while sampling goes on: work
 * here is per new process (or new label set), never per sample.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "symbols/debuginfo.h"
#include "lib/hashtab.h"
#include "maplog.h"
#include "procs.h"
#include "procs_int.h"
#include "procsyms.h"
#include "lib/grow.h"

struct proc_key {
	uint32_t tgid, pgen;
};

static uint64_t key_hash(uint32_t tgid, uint32_t pgen)
{
	return hashtab__hash_u64(((uint64_t)tgid << 32) | pgen);
}

static bool proc_eq(const void *key, uint64_t idx, void *ctx)
{
	const struct proc_key *k = key;
	struct procs *p = ctx;

	return p->v[idx]->tgid == k->tgid && p->v[idx]->pgen == k->pgen;
}

static bool tgid_eq(const void *key, uint64_t idx, void *ctx)
{
	struct procs *p = ctx;

	return p->v[idx]->tgid == *(const uint32_t *)key;
}

/* by_tgid[tgid] = idx, replacing an older generation's (room reserved). */
static void tgid_latest(struct hashtab *by_tgid, uint32_t tgid, size_t idx)
{
	uint64_t h = hashtab__hash_u64(tgid);

	hashtab__remove(by_tgid, h, &tgid, NULL);
	hashtab__insert(by_tgid, h, idx);
}

struct procs *procs__new(struct symcache *sc, int label_slots_fd, int seen_fd)
{
	struct procs *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->sc = sc;
	p->slots_fd = label_slots_fd;
	p->go_fd = -1;
	p->custom_fd = -1;
	p->otel_fd = -1;
	p->seen_fd = seen_fd;
	p->st.max_procs = PROCS_MAX;
	p->index = hashtab__new(proc_eq, p);
	p->by_tgid = hashtab__new(tgid_eq, p);
	p->set_index = hashtab__new(procs_labels_set_eq, p);
	p->log = maplog__new();
	if (!p->index || !p->by_tgid || !p->set_index || !p->log) {
		procs__free(p);
		return NULL;
	}
	return p;
}

static void proc_free(struct proc *pr)
{
	if (!pr)
		return;
	procmaps__free(&pr->maps);
	procmaps__free(&pr->reported);
	procmaps__free(&pr->data_maps);
	procsyms__release(pr);
	procs_flabels_free(pr);
	free(pr->objs);
	free(pr);
}

void procs__free(struct procs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		proc_free(p->v[i]);
	free(p->act);
	free(p->v);
	for (size_t i = 0; i < p->nsets; i++)
		free(p->sets[i].set);
	free(p->sets);
	free(p->unions);
	hashtab__free(p->index);
	hashtab__free(p->by_tgid);
	hashtab__free(p->set_index);
	maplog__free(p->log);
	free(p);
}

void procs__set_max(struct procs *p, size_t max)
{
	p->st.max_procs = max;
}

void procs__set_debuginfo(struct procs *p, struct debuginfo *dbg)
{
	p->dbg = dbg;
}

void procs__set_verbose(struct procs *p, int verbose)
{
	p->verbose = verbose;
}

/* A perf map refused for its owner, type or size would otherwise make
 * JIT frames addresses in silence: count it once per process, say it
 * with -v. */
static void note_jit_refusal(struct procs *p, struct proc *pr)
{
	int e = -pr->jit_refused;

	if (!pr->jit_refused || pr->jit_refusal_noted)
		return;
	pr->jit_refusal_noted = true;
	p->st.jit_maps_refused++;
	if (p->verbose)
		fprintf(stderr, "pmubpf: pid %u (%s): perf map /tmp/perf-%u.map refused: %s\n",
			pr->tgid, pr->comm, pr->jit_src.nspid,
			e == EPERM ? "neither root's nor the process user's file, or a symbolic link" :
			e == EFBIG ? "larger than 64 MiB" : "not a regular file");
}

const struct procs_stats *procs__stats(const struct procs *p)
{
	return &p->st;
}

/* The log's count, kept current in the stats (procs__stats is const). */
static void log_stats(struct procs *p)
{
	p->st.log_dropped = maplog__stats(p->log)->dropped;
}

/* The object behind one mapping: its file (procmaps__open), or the
 * vDSO's image read out of the process. */
static struct elfobj *open_obj(struct procs *p, const struct proc *pr, const struct procmap *m)
{
	uint32_t tgid = pr->dead ? 0 : pr->tgid; /* gone: by path (procmaps__open) */
	struct stat st;
	int fd;

	if (!strcmp(m->path, "[vdso]"))
		return procsyms__vdso(p->sc, tgid, m);
	if (!m->path[0] || m->path[0] == '[')
		return NULL; /* anonymous, [stack], ... */
	/* A file the cache has already, known by the build-id the kernel
	 * read: no open, no fstat (under churn every new process maps the
	 * same few files). Its debuginfo was noted when first opened. */
	struct elfobj *known = symcache__get_build_id(p->sc, m->build_id, m->build_id_len);
	if (known)
		return known;
	fd = procmaps__open(tgid, m, &st);
	if (fd < 0) {
		p->st.objs_unreadable++;
		return NULL;
	}
	int keep = p->dbg ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	struct elfobj *o = symcache__get_fd(p->sc, fd, st.st_dev, st.st_ino);
	if (!o) {
		p->st.objs_unreadable++;
		if (keep >= 0)
			close(keep);
	} else if (p->dbg) {
		debuginfo__note(p->dbg, o, keep, tgid, m->path, pr->other_mntns);
	}
	return o;
}

static void read_comm(uint32_t tgid, char *comm, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, len - 1);
	close(fd);
	if (n > 0) {
		comm[n] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
	}
}

/* The main executable's inode: the report names its mapping first. */
static void read_exe(struct proc *pr)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u/exe", pr->tgid);
	if (!stat(path, &st))
		pr->exe_ino = st.st_ino;
}

/* When to read the maps of a live process again, after the n-th read: a
 * first sample often comes while ld.so is still mapping libraries, and
 * dlopen can come at any time. Then every RESCAN_MAX_NS. */
#define RESCAN_MAX_NS 10000000000LL
#define REPORT_DELAY_NS 2000000LL /* mmap reports: one read per burst */
#define TICK_MIN_NS 1000000LL     /* procs__tick: one pass per ms at most */
static int64_t rescan_delay(int n)
{
	static const int64_t steps[] = { 20000000LL, 200000000LL, 2000000000LL };

	return n < 3 ? steps[n] : RESCAN_MAX_NS;
}

static bool same_mapping(const struct procmap *a, const struct procmap *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->inode == b->inode && !strcmp(a->path, b->path);
}

static int cmp_map_idx(const void *a, const void *b, void *ctx)
{
	const struct procmap *m = ctx;
	uint64_t x = m[*(const size_t *)a].start, y = m[*(const size_t *)b].start;

	return (x > y) - (x < y);
}

/* Merge a fresh read of the maps into the snapshot: new mappings are
 * added (their files opened), mappings that are gone now are kept (old
 * samples may point into a library since dlclose'd) unless a new
 * mapping overlaps them. */
static int merge_maps(struct procs *p, struct proc *pr, struct procmaps *fresh)
{
	size_t n = fresh->n + pr->maps.n, k = 0;
	struct procmap *all = calloc(n ? n : 1, sizeof(*all));
	struct elfobj **objs = calloc(n ? n : 1, sizeof(*objs));
	size_t *order = calloc(n ? n : 1, sizeof(*order));

	if (!all || !objs || !order) {
		free(all), free(objs), free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < fresh->n; i++) {
		const struct procmap *old = procmaps__find(&pr->maps, fresh->maps[i].start);

		all[k] = fresh->maps[i];
		objs[k] = old && same_mapping(old, &fresh->maps[i]) ? pr->objs[old - pr->maps.maps]
								     : open_obj(p, pr, &fresh->maps[i]);
		k++;
	}
	for (size_t i = 0; i < pr->maps.n; i++) {
		const struct procmap *o = &pr->maps.maps[i];
		bool overlaps = false;

		for (size_t j = 0; j < fresh->n && !overlaps; j++)
			overlaps = o->start < fresh->maps[j].end && fresh->maps[j].start < o->end;
		if (overlaps) {
			free(o->path);
			continue;
		}
		all[k] = *o;
		objs[k++] = pr->objs[i];
	}
	/* Sort both arrays by start (procmaps__find binary-searches). */
	for (size_t i = 0; i < k; i++)
		order[i] = i;
	qsort_r(order, k, sizeof(*order), cmp_map_idx, all);
	struct procmap *sm = calloc(k ? k : 1, sizeof(*sm));
	struct elfobj **so = calloc(k ? k : 1, sizeof(*so));
	if (!sm || !so) {
		free(sm), free(so), free(order), free(objs);
		/* all[] holds the only copies of the paths now: keep them. */
		free(pr->maps.maps);
		free(pr->objs);
		pr->maps.maps = all;
		pr->maps.n = k;
		pr->objs = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < k; i++) {
		sm[i] = all[order[i]];
		so[i] = objs[order[i]];
	}
	free(pr->maps.maps); /* paths moved into sm */
	free(pr->objs);
	pr->maps.maps = sm;
	pr->maps.n = k;
	pr->objs = so;
	free(fresh->maps); /* paths moved too */
	fresh->maps = NULL;
	fresh->n = 0;
	free(all), free(objs), free(order);
	return 0;
}

/* pr has exited or exec'd: its maps are final. The mappings the kernel
 * reported since the last read go in as reported (their files opened by
 * path, if still the same inode). */
static void gone(struct procs *p, struct proc *pr)
{
	size_t n = pr->reported.n;
	bool first = !pr->dead;

	pr->dead = true;
	if (first)
		pr->dead_ns = mono_ns();
	pr->next_rescan = INT64_MAX;
	pr->report_due = 0;
	if (n && merge_maps(p, pr, &pr->reported) == 0)
		p->st.maps_from_reports += n;
	procmaps__free(&pr->reported);
	/* Once: what was held for it while it lived (its unwind slot) goes. */
	if (first && pr->snapshotted && p->maps_hook)
		p->maps_hook(p->maps_hook_ctx, pr);
}

/* Read pr's maps again and merge them. scheduled: the 20 ms / 200 ms /
 * 2 s / 10 s safety net (advances it), else for mmap reports. */
static int rescan(struct procs *p, struct proc *pr, bool scheduled)
{
	struct procmaps fresh = { 0 };
	int err;

	if (scheduled)
		pr->next_rescan = mono_ns() + rescan_delay(++pr->rescans);
	pr->report_due = 0;
	if (pr->dead || !procs_same_generation(p, pr)) {
		gone(p, pr);
		return -ESRCH;
	}
	err = procmaps__read(pr->tgid, true, &fresh);
	if (err) {
		gone(p, pr);
		return err;
	}
	procmaps__free(&pr->reported); /* the fresh read has them */
	if (p->data_maps)
		procs_datamaps_read(pr);
	procsyms__jit_refresh(pr);
	note_jit_refusal(p, pr);
	if (merge_maps(p, pr, &fresh) == 0) {
		p->st.rescans++;
		if (p->maps_hook)
			p->maps_hook(p->maps_hook_ctx, pr);
		/* A library that uses labels may come late: a plugin or a
		 * Python extension module dlopen()ed after the first sample. */
		if (pr->label_state == LABELS_NONE)
			procs_labels_find(p, pr);
		procs_flabels_find(p, pr, true);
	}
	procmaps__free(&fresh);
	return 0;
}

void procs__rescan_all(struct procs *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i]->snapshotted && !p->v[i]->dead)
			rescan(p, p->v[i], false);
}

/* The image's maps are known: open its objects, note what it is. */
static void snapshot_objects(struct procs *p, struct proc *pr)
{
	for (size_t i = 0; i < pr->maps.n; i++)
		pr->objs[i] = open_obj(p, pr, &pr->maps.maps[i]);
}

/* pr's image put together from the kernel's reports (maplog.h): gone, or
 * exec'd, before its maps were read. A process forked without exec'ing
 * has its parent's image at the fork under its own mappings: from the
 * log, or from the parent's snapshot for a parent older than the log.
 * *whole: the image's start is in the log (an exec, or a fork from an
 * image whose start is known), so nothing of it is missing. 0 and maps,
 * -ESRCH (nothing in the log) or -ENOMEM. */
static int log_image(struct procs *p, const struct proc *pr, int64_t t, struct procmaps *maps,
		     uint64_t *exe, bool *whole)
{
	struct maplog_origin o;
	int n = maplog__image(p->log, pr->tgid, t, maps, &o);

	*exe = o.kind == MAPLOG_EXEC ? o.exe_inode : 0;
	for (int depth = 0; n >= 0 && o.kind == MAPLOG_FORK && depth < 8; depth++) {
		struct procmaps under = { 0 };
		uint32_t parent = o.ptgid;
		uint64_t idx;

		n = maplog__image(p->log, parent, o.t, &under, &o);
		if (n >= 0 && o.kind == MAPLOG_EXEC)
			*exe = o.exe_inode;
		if (n >= 0 && o.kind == MAPLOG_UNKNOWN &&
		    hashtab__find(p->by_tgid, hashtab__hash_u64(parent), &parent, &idx) &&
		    p->v[idx]->snapshotted) { /* what the log lacks, the parent's snapshot has */
			n = maplog__layer(&under, &p->v[idx]->maps);
			*exe = p->v[idx]->exe_ino;
			o.kind = MAPLOG_EXEC; /* whole: the snapshot was read whole */
		}
		if (n >= 0)
			n = maplog__layer(maps, &under);
		procmaps__free(&under);
	}
	*whole = o.kind == MAPLOG_EXEC;
	if (n < 0 || !maps->n) {
		procmaps__free(maps);
		return n < 0 ? n : -ESRCH;
	}
	return 0;
}

/* pr's snapshot from a log image (taken over): final, as the process is
 * gone or in another image. */
static int snapshot_from_log(struct procs *p, struct proc *pr, struct procmaps *maps, uint64_t exe)
{
	pr->objs = calloc(maps->n, sizeof(*pr->objs));
	if (!pr->objs) {
		procmaps__free(maps);
		return -ENOMEM;
	}
	pr->maps = *maps;
	*maps = (struct procmaps){ 0 };
	pr->exe_ino = exe;
	pr->dead = true; /* exited or exec'd: these maps are final */
	pr->dead_ns = mono_ns();
	snapshot_objects(p, pr);
	pr->snapshotted = true;
	pr->next_rescan = INT64_MAX;
	p->st.from_log++;
	return 0;
}

enum image_state {
	IMAGE_SAME,   /* /proc shows the image pr was sampled in */
	IMAGE_MOVED,  /* it exec'd since (or is gone): the log has pr's */
	IMAGE_UNSURE, /* BPF forgot it: exited or exec'd, or LRU-evicted */
};

/* Is the process still in the image pr (sampled at t) was taken in? The
 * log says it exec'd since t, or BPF's generation has moved on to a later
 * image; an absent generation says it exited or exec'd (exec and exit
 * delete it) before the log has heard, or that the LRU evicted it. */
static enum image_state image_state(struct procs *p, const struct proc *pr, int64_t t)
{
	struct pmubpf_seen v;

	if (t && maplog__exec_between(p->log, pr->tgid, t, INT64_MAX))
		return IMAGE_MOVED;
	if (p->seen_fd < 0) /* no BPF (unit tests): the read is all there is */
		return IMAGE_SAME;
	if (bpf_map_lookup_elem(p->seen_fd, &pr->tgid, &v))
		return IMAGE_UNSURE;
	return v.pgen == pr->pgen ? IMAGE_SAME : IMAGE_MOVED;
}

/* A live process's snapshot from its maps just read (taken over). */
static int snapshot_live(struct procs *p, struct proc *pr, struct procmaps *maps)
{
	pr->maps = *maps;
	*maps = (struct procmaps){ 0 };
	pr->objs = calloc(pr->maps.n ? pr->maps.n : 1, sizeof(*pr->objs));
	if (!pr->objs)
		return -ENOMEM;
	if (p->data_maps)
		procs_datamaps_read(pr);
	pr->other_mntns = procsyms__other_mntns(pr->tgid);
	snapshot_objects(p, pr);
	read_comm(pr->tgid, pr->comm, sizeof(pr->comm));
	read_exe(pr);
	procsyms__jit_snapshot(pr);
	note_jit_refusal(p, pr);
	pr->snapshotted = true;
	pr->next_rescan = mono_ns() + rescan_delay(0);
	if (p->maps_hook)
		p->maps_hook(p->maps_hook_ctx, pr);
	procs_labels_find(p, pr);
	procs_flabels_find(p, pr, false);
	return 0;
}

/* Read maps of pr's process, and whether they are of the image pr was
 * sampled in (IMAGE_MOVED: the read failed, the process is gone). */
static enum image_state read_live(struct procs *p, const struct proc *pr, int64_t t,
				  struct procmaps *maps)
{
	char comm[sizeof(pr->comm)] = "";
	enum image_state st;

	if (procmaps__read(pr->tgid, true, maps))
		return IMAGE_MOVED;
	st = image_state(p, pr, t);
	/* In the middle of an exec (past its point of no return, before BPF
	 * hears it is done) the maps are the new image's, BPF's generation
	 * the old one's: no executable mapping yet, or the name already
	 * changed (the kernel renames before it maps the new program). */
	if (st == IMAGE_SAME && t) {
		read_comm(pr->tgid, comm, sizeof(comm));
		if (!maps->n || strncmp(comm, pr->comm, PMUBPF_COMM_LEN - 1))
			st = IMAGE_UNSURE;
	}
	return st;
}

/* The first read of pr, sampled at t (CLOCK_MONOTONIC; 0: unknown, now).
 * A process that is gone, or not in that image any more (or may not be),
 * waits for procs__settle: only after the reports written meanwhile are
 * read is the log whole up to now. */
static int snapshot(struct procs *p, struct proc *pr, int64_t t)
{
	struct procmaps maps = { 0 };
	enum image_state st = read_live(p, pr, t, &maps);
	uint64_t exe;
	bool whole;
	int err;

	if (st == IMAGE_SAME || (st == IMAGE_UNSURE && !t))
		return snapshot_live(p, pr, &maps);
	procmaps__free(&maps);
	if (t) {
		pr->log_wait = true;
		return -EAGAIN;
	}
	/* No sample time (procs__get after the fact): the latest image. */
	err = log_image(p, pr, mono_ns(), &maps, &exe, &whole);
	if (!err)
		err = snapshot_from_log(p, pr, &maps, exe);
	if (err)
		p->st.gone++;
	return err;
}

/* The second and last try for a process gone or moved at its first read
 * (procs__settle, procs__tick), the reports that came meanwhile read: a
 * whole image from the log; else, if it still lives in the image it was
 * sampled in (no exec since in the log: BPF's LRU forgot it), its maps;
 * else what the log has of it; else it is gone (counted). */
static void log_retry(struct procs *p, struct proc *pr)
{
	struct procmaps maps = { 0 }, live = { 0 };
	uint64_t exe = 0;
	bool whole = false;
	int err = log_image(p, pr, pr->seen_ns, &maps, &exe, &whole);

	pr->log_wait = false;
	if (err || !whole) {
		enum image_state st = read_live(p, pr, pr->seen_ns, &live);

		if (st != IMAGE_MOVED && live.n &&
		    !maplog__exec_between(p->log, pr->tgid, pr->seen_ns, INT64_MAX)) {
			procmaps__free(&maps);
			snapshot_live(p, pr, &live);
			return;
		}
		procmaps__free(&live);
	}
	if (!err)
		err = snapshot_from_log(p, pr, &maps, exe);
	if (err)
		p->st.gone++;
	if (!pr->snapshotted && !pr->dead) {
		pr->dead = true;
		pr->dead_ns = mono_ns();
	}
}

void procs__set_maps_hook(struct procs *p, procs_maps_hook fn, void *ctx)
{
	p->maps_hook = fn;
	p->maps_hook_ctx = ctx;
}

static struct proc *lookup(struct procs *p, uint32_t tgid, uint32_t pgen)
{
	struct proc_key k = { tgid, pgen };
	uint64_t idx;

	if (hashtab__find(p->index, key_hash(tgid, pgen), &k, &idx))
		return p->v[idx];
	return NULL;
}

void procs__mapped(struct procs *p, uint32_t tgid, const struct procmap *m, int64_t t)
{
	struct pmubpf_seen v;
	struct proc *pr = NULL;
	uint64_t idx;

	if (m)
		maplog__map(p->log, tgid, t, m);
	/* Never sampled (most reports under churn: a new program's ld.so at
	 * work): the log is all it needs. */
	if (!hashtab__find(p->by_tgid, hashtab__hash_u64(tgid), &tgid, &idx))
		return;
	if (p->seen_fd >= 0 && bpf_map_lookup_elem(p->seen_fd, &tgid, &v) == 0)
		pr = lookup(p, tgid, v.pgen);
	else
		pr = p->v[idx]; /* exited (its seen entry is gone): its last generation */
	/* A mapping of an image after pr's (the seen entry is gone at exec
	 * too, until the new image's first sample) is not pr's. */
	if (pr && pr->seen_ns && maplog__exec_between(p->log, tgid, pr->seen_ns, t))
		return;
	/* Only processes already snapshotted: a first snapshot reads all. */
	if (!pr || !pr->snapshotted)
		return;
	if (m) {
		struct procmap *nm = reallocarray(pr->reported.maps, pr->reported.n + 1, sizeof(*nm));

		if (nm) {
			pr->reported.maps = nm;
			nm[pr->reported.n] = *m;
			if ((nm[pr->reported.n].path = strdup(m->path)))
				pr->reported.n++;
		}
	}
	if (pr->dead)
		gone(p, pr); /* merge it now */
	else if (!pr->report_due) {
		pr->report_due = mono_ns() + REPORT_DELAY_NS;
		/* The next procs__tick must count it as pending, even within
		 * its rate limit: else the caller may sleep a whole POLL_MS
		 * before the read (seen: libc unwound ~100 ms late). */
		p->last_tick = 0;
	}
}

/* Has procs__tick work for pr: maps to re-read, a label record or the
 * log to try again. */
static bool needs_tick(const struct proc *pr)
{
	return (pr->snapshotted && !pr->dead) || pr->label_state == LABELS_PENDING || pr->log_wait;
}

void procs__settle(struct procs *p)
{
	log_stats(p);
	for (size_t i = 0; i < p->nact; i++)
		if (p->act[i]->log_wait)
			log_retry(p, p->act[i]);
}

void procs__exec(struct procs *p, uint32_t tgid, int64_t t)
{
	maplog__exec(p->log, tgid, t);
}

void procs__forked(struct procs *p, uint32_t tgid, uint32_t ptgid, int64_t t)
{
	maplog__fork(p->log, tgid, ptgid, t);
}

void procs__reports_lost(struct procs *p, uint64_t n)
{
	p->st.reports_lost += n;
}

static struct proc *add(struct procs *p, uint32_t tgid, uint32_t pgen, const char *comm,
			int64_t t)
{
	struct proc *pr;

	if (p->n >= p->st.max_procs)
		return NULL;
	if (GROW(p->v, p->cap, p->n, 1))
		return NULL;
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return NULL;
	pr->tgid = tgid;
	pr->pgen = pgen;
	pr->seen_ns = t;
	if (comm)
		snprintf(pr->comm, sizeof(pr->comm), "%.*s", PMUBPF_COMM_LEN, comm);
	if (hashtab__reserve(p->by_tgid, hashtab__count(p->by_tgid) + 1) ||
	    hashtab__insert(p->index, key_hash(tgid, pgen), p->n)) {
		free(pr);
		return NULL;
	}
	p->v[p->n] = pr;
	tgid_latest(p->by_tgid, tgid, p->n);
	p->n++;
	snapshot(p, pr, t);
	if (!pr->snapshotted && !pr->dead && !pr->log_wait) { /* gone before its maps were read */
		pr->dead = true;
		pr->dead_ns = mono_ns();
	}
	if (needs_tick(pr)) {
		if (GROW(p->act, p->capact, p->nact, 1))
			return pr; /* no re-reads for it: still a snapshot */
		p->act[p->nact++] = pr;
	}
	return pr;
}

int procs__notice(struct procs *p, const struct pmubpf_notice *n, size_t size)
{
	struct proc *pr = lookup(p, n->tgid, n->pgen);

	if (n->kind == PMUBPF_NOTICE_PROC) {
		p->st.notices++;
		if (!pr && !add(p, n->tgid, n->pgen, n->comm, (int64_t)n->ts) && p->n >= p->st.max_procs)
			p->st.over_cap++;
		return 0;
	}
	if (n->kind == PMUBPF_NOTICE_LABEL && size >= sizeof(struct pmubpf_label_notice)) {
		if (!pr)
			pr = add(p, n->tgid, n->pgen, n->comm, (int64_t)n->ts);
		if (pr)
			procs_labels_notice(p, pr, (const struct pmubpf_label_notice *)n);
	}
	if (n->kind == PMUBPF_NOTICE_FLABEL && size >= sizeof(struct pmubpf_flabel_notice)) {
		if (!pr)
			pr = add(p, n->tgid, n->pgen, n->comm, (int64_t)n->ts);
		if (pr)
			procs_flabels_notice(p, pr, (const struct pmubpf_flabel_notice *)n);
	}
	if (n->kind == PMUBPF_NOTICE_LUNION && size >= sizeof(struct pmubpf_lunion_notice)) {
		if (!pr)
			pr = add(p, n->tgid, n->pgen, n->comm, (int64_t)n->ts);
		if (pr)
			procs_labels_union(p, pr, (const struct pmubpf_lunion_notice *)n);
	}
	return 0;
}

int procs__tick(struct procs *p)
{
	int64_t now = mono_ns(), now_ms = now / 1000000;
	int pending = 0;

	if (now - p->last_tick < TICK_MIN_NS)
		return p->last_pending;
	p->last_tick = now;
	maplog__prune(p->log, now);
	log_stats(p);
	size_t k = 0;
	for (size_t i = 0; i < p->nact; i++) {
		struct proc *pr = p->act[i];

		if (pr->snapshotted && !pr->dead) {
			if (now >= pr->next_rescan)
				rescan(p, pr, true);
			else if (pr->report_due && now >= pr->report_due)
				rescan(p, pr, false);
			pending += pr->report_due != 0;
			procsyms__jit_poll(pr, now_ms);
			note_jit_refusal(p, pr);
		}
		if (pr->log_wait)
			log_retry(p, pr);
		if (pr->label_state == LABELS_PENDING) {
			procs_labels_retry(p, pr);
			pending += pr->label_state == LABELS_PENDING;
		}
		if (needs_tick(pr))
			p->act[k++] = pr; /* the dead drop out: ticks stay cheap */
	}
	p->nact = k;
	p->last_pending = pending;
	return pending;
}

size_t procs__count(const struct procs *p)
{
	return p->n;
}

static bool collectable(const struct proc *pr, int64_t before)
{
	return pr->dead && pr->dead_ns < before;
}

void procs__mark_objects(const struct procs *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct proc *pr = p->v[i];

		for (size_t j = 0; pr->objs && j < pr->maps.n; j++)
			symcache__mark(pr->objs[j]);
	}
}

size_t procs__gc(struct procs *p, int64_t before)
{
	size_t k = 0, freed = 0;

	for (size_t i = 0; i < p->n; i++)
		freed += collectable(p->v[i], before);
	if (!freed)
		return 0;
	/* New indexes, sized, before anything changes: out of memory, nothing
	 * is forgotten this time. */
	struct hashtab *index = hashtab__new(proc_eq, p);
	struct hashtab *by_tgid = hashtab__new(tgid_eq, p);
	struct hashtab *sets = hashtab__new(procs_labels_set_eq, p);
	if (!index || !by_tgid || !sets || hashtab__reserve(index, p->n - freed) ||
	    hashtab__reserve(by_tgid, p->n - freed) || hashtab__reserve(sets, p->nsets)) {
		hashtab__free(index);
		hashtab__free(by_tgid);
		hashtab__free(sets);
		return 0;
	}
	/* Their label sets and tick-list entries first (both point at them). */
	procs_labels_forget(p, before, sets);
	for (size_t i = 0; i < p->nact; i++)
		if (!collectable(p->act[i], before))
			p->act[k++] = p->act[i];
	p->nact = k;
	/* Then the records; the index is rebuilt over the survivors. */
	hashtab__free(p->index);
	hashtab__free(p->by_tgid);
	p->index = index;
	p->by_tgid = by_tgid;
	k = 0;
	for (size_t i = 0; i < p->n; i++) {
		struct proc *pr = p->v[i];

		if (collectable(pr, before)) {
			proc_free(pr);
			continue;
		}
		p->v[k] = pr;
		hashtab__insert(index, key_hash(pr->tgid, pr->pgen), k); /* reserved */
		tgid_latest(by_tgid, pr->tgid, k); /* in order: the latest wins */
		k++;
	}
	p->n = k;
	p->st.collected += freed;
	return freed;
}

struct proc *procs__get(struct procs *p, uint32_t tgid, uint32_t pgen)
{
	struct proc *pr = lookup(p, tgid, pgen);

	return pr ? pr : add(p, tgid, pgen, NULL, 0);
}

