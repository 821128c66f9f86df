/* procs.c — the process registry: records by (tgid, generation), the
 * notices and the kernel's reports that reach them, the per-tick work
 * (reading a process: procs_read.c; labels: procs_labels.c), the GC.
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
	p->seen_labels_fd = -1;
	p->image_files_fd = -1;
	p->image_wait_ns = PROCS_IMAGE_WAIT_NS;
	p->st.max_procs = PROCS_MAX;
	p->index = hashtab__new(proc_eq, p);
	p->by_tgid = hashtab__new(tgid_eq, p);
	p->set_index = hashtab__new(procs_labels_set_eq, p);
	p->log = maplog__new();
	p->cg = cgroups__new();
	if (!p->index || !p->by_tgid || !p->set_index || !p->log || !p->cg) {
		procs__free(p);
		return NULL;
	}
	return p;
}

static void proc_free(struct procs *p, struct proc *pr)
{
	if (!pr)
		return;
	cgroups__put(p->cg, pr->cg);
	procmaps__free(&pr->maps);
	procmaps__free(&pr->reported);
	procmaps__free(&pr->left);
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
		proc_free(p, p->v[i]);
	free(p->act);
	free(p->v);
	for (size_t i = 0; i < p->nsets; i++)
		free(p->sets[i].set);
	free(p->sets);
	free(p->unions);
	free(p->refused);
	hashtab__free(p->index);
	hashtab__free(p->by_tgid);
	hashtab__free(p->set_index);
	maplog__free(p->log);
	cgroups__free(p->cg);
	procs_images_free(p);
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

const struct procs_stats *procs__stats(const struct procs *p)
{
	return &p->st;
}

#define REPORT_DELAY_NS 2000000LL /* mmap reports: one read per burst */
#define TICK_MIN_NS 1000000LL     /* procs__tick: one pass per ms at most */

void procs__set_image_files(struct procs *p, int image_files_fd)
{
	p->image_files_fd = image_files_fd;
	p->st.images = true;
}

void procs__set_image_maps_lost(struct procs *p, uint64_t n)
{
	p->st.image_maps_lost = n;
}

/* The log's count, kept current in the stats (procs__stats is const). */
static void log_stats(struct procs *p)
{
	p->st.log_dropped = maplog__stats(p->log)->dropped;
	p->st.cgroups_named = cgroups__stats(p->cg)->resolved;
	p->st.cgroup_reads = cgroups__stats(p->cg)->proc_reads;
}

void procs__set_maps_hook(struct procs *p, procs_maps_hook fn, void *ctx)
{
	p->maps_hook = fn;
	p->maps_hook_ctx = ctx;
}

/* Put pr on procs__tick's list, once. 0 or -ENOMEM. */
static int act_add(struct procs *p, struct proc *pr)
{
	if (pr->in_act)
		return 0;
	if (GROW(p->act, p->capact, p->nact, 1))
		return -ENOMEM;
	p->act[p->nact++] = pr;
	pr->in_act = true;
	return 0;
}

static struct proc *lookup(struct procs *p, uint32_t tgid, uint32_t pgen)
{
	struct proc_key k = { tgid, pgen };
	uint64_t idx;

	if (hashtab__find(p->index, key_hash(tgid, pgen), &k, &idx))
		return p->v[idx];
	return NULL;
}

void procs__labels_used(struct procs *p, uint32_t tgid, uint32_t pgen, uint64_t label, int64_t ns)
{
	struct proc *pr;

	if (label && p->nsets && (pr = lookup(p, tgid, pgen)))
		procs_labels_used(p, pr, label, ns);
}

/* A mapping pr made since its maps were read (an mmap report, or BPF's
 * image at its end): merged at a re-read soon, or now if it is gone. */
static void add_reported(struct procs *p, struct proc *pr, const struct procmap *m)
{
	if (m) {
		struct procmap *nm = reallocarray(pr->reported.maps, pr->reported.n + 1, sizeof(*nm));

		if (nm) {
			pr->reported.maps = nm;
			nm[pr->reported.n] = *m;
			if ((nm[pr->reported.n].path = strdup(m->path)))
				pr->reported.n++;
		}
	}
	if (pr->dead && !p->held)
		procs_gone(p, pr); /* merge it now */
	else if (pr->dead)
		act_add(p, pr); /* at the release (procs__hold) or the next tick */
	else if (!pr->report_due) {
		pr->report_due = mono_ns() + REPORT_DELAY_NS;
		/* The next procs__tick must count it as pending, even within
		 * its rate limit: else the caller may sleep a whole POLL_MS
		 * before the read (seen: libc unwound ~100 ms late). */
		p->last_tick = 0;
	}
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
	/* Exited (its seen entry is gone), or BPF's generation not noticed
	 * here yet: the last generation noticed, unless the report is of a
	 * later image (the exec check below). */
	if (!pr)
		pr = p->v[idx];
	/* A report older than pr's image (an exec between the two) is of an
	 * earlier generation's: read late, under churn, after the process
	 * exec'd again. A program's ld.so maps libc after its first sample
	 * (the image then read from the log has no libc yet) and the process
	 * exec'd /bin/true before the report was read: libc went to true's
	 * generation, and exec_work's samples in libc were unnamed (0.5% on
	 * this machine, 5-7% under qemu). */
	for (int hops = 0; pr && pr->prev_pgen && t < pr->seen_ns && hops < 8; hops++) {
		if (!maplog__exec_between(p->log, tgid, t, pr->seen_ns))
			break;
		pr = lookup(p, tgid, pr->prev_pgen);
	}
	/* A mapping of an image after pr's (the seen entry is gone at exec
	 * too, until the new image's first sample) is not pr's. */
	if (pr && pr->seen_ns && maplog__exec_between(p->log, tgid, pr->seen_ns, t))
		return;
	/* Only processes already snapshotted: a first snapshot reads all. */
	if (!pr || !pr->snapshotted)
		return;
	add_reported(p, pr, m);
}

/* Has procs__tick work for pr: maps to re-read, a label record to try
 * again; or procs__settle: the log; or procs__hold's release: reports
 * of it, gone, that came in while a profile was built. */
static bool needs_tick(const struct proc *pr)
{
	return (pr->snapshotted && !pr->dead) || pr->label_state == LABELS_PENDING || pr->log_wait ||
	       pr->image_wait || (pr->dead && pr->reported.n);
}

void procs__hold(struct procs *p, bool hold)
{
	if (!p)
		return;
	p->held += hold ? 1 : -1;
	if (p->held > 0)
		return;
	p->held = 0;
	/* What waited: the reports of processes already gone. */
	for (size_t i = 0; i < p->nact; i++)
		if (p->act[i]->dead && p->act[i]->reported.n)
			procs_gone(p, p->act[i]);
}

/* If pr's image ended as its parent's (NOTICE_LIKE) and BPF sent no
 * other: the parent's maps, as if BPF had sent them, once the parent has
 * its own (its wait for them ended here). Nothing if the parent has
 * none: pr is then read, or gone. Called before pr's snapshot or its
 * retry (procs_read.c), which take the maps as BPF's. */
static void take_like(struct procs *p, struct proc *pr)
{
	struct proc *par;

	if (!pr->like_tgid || pr->left.n)
		return;
	par = lookup(p, pr->like_tgid, pr->like_pgen);
	pr->like_tgid = 0;
	if (!par || par == pr)
		return;
	if (par->image_wait)
		procs_image_wait_end(p, par);
	if (!par->snapshotted || !par->maps.n)
		return;
	struct procmap *m = calloc(par->maps.n, sizeof(*m));
	size_t n = 0;

	if (!m)
		return;
	for (size_t i = 0; i < par->maps.n; i++) {
		m[n] = par->maps.maps[i];
		if ((m[n].path = strdup(par->maps.maps[i].path ? par->maps.maps[i].path : "")))
			n++;
	}
	pr->left.maps = m;
	pr->left.n = n;
	pr->left_cap = par->maps.n;
	pr->left_exe = par->exe_ino;
	p->st.from_parent++;
}

/* The waits for BPF's images that are over (all: every one), after the
 * log's retries: a process found gone here retries at the next settle,
 * once the notices written meanwhile are in. */
static void end_waits(struct procs *p, bool all)
{
	int64_t now = mono_ns(), due = 0;

	for (size_t i = 0; i < p->nact; i++) {
		struct proc *pr = p->act[i];

		if (!pr->image_wait)
			continue;
		take_like(p, pr);
		if (all || pr->left.n || now >= pr->image_wait)
			procs_image_wait_end(p, pr);
		if (pr->image_wait && (!due || pr->image_wait < due)) /* on, or again (an exec) */
			due = pr->image_wait;
	}
	p->wait_due = due;
}

void procs__settle(struct procs *p)
{
	log_stats(p);
	for (size_t i = 0; i < p->nact; i++) {
		struct proc *pr = p->act[i];

		if (!pr->log_wait)
			continue;
		take_like(p, pr);
		procs_log_retry(p, pr);
	}
	end_waits(p, false);
}

void procs__read_waiting(struct procs *p)
{
	p->reading_all = true; /* an exec under way is waited for no more */
	end_waits(p, true);
	p->reading_all = false;
}

void procs__set_image_wait(struct procs *p, int64_t ns)
{
	p->image_wait_ns = ns;
}

int64_t procs__wait_due(const struct procs *p)
{
	return p->wait_due;
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
	p->lost_ns = mono_ns();
}

void procs__reports_read(struct procs *p, int64_t upto)
{
	p->reports_upto = upto;
}

/* A record for (tgid, pgen), snapshotted: from its first notice n (its
 * name, sample time, BPF's flags), or NULL when asked after the fact. */
static struct proc *add(struct procs *p, uint32_t tgid, uint32_t pgen,
			const struct pmubpf_notice *n)
{
	const char *comm = n ? n->comm : NULL;
	int64_t t = n ? (int64_t)n->ts : 0;
	struct proc *pr;

	if (p->n >= p->st.max_procs)
		return NULL;
	if (GROW(p->v, p->cap, p->n, 1))
		return NULL;
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return NULL;
	pr->tgid = tgid;
	pr->via = tgid;
	pr->pgen = pgen;
	pr->seen_ns = t;
	pr->seen_moving = n && (n->flags & PMUBPF_NOTICE_F_MOVING);
	pr->seen_execing = n && (n->flags & PMUBPF_NOTICE_F_EXECING);
	pr->seen_nomm = n && (n->flags & PMUBPF_NOTICE_F_NOMM);
	pr->mntns = n ? n->mntns : 0;
	/* Named now, while the cgroup surely exists (a container's ends
	 * with its last process). Where the id says nothing (v1
	 * hierarchies), the snapshot of a live process reads /proc. */
	pr->cgroup_id = n ? n->cgroup : 0;
	if (!cgroups__id_says_nothing(p->cg, pr->cgroup_id) &&
	    !(pr->cg = cgroups__of_id(p->cg, pr->cgroup_id)))
		p->st.cgroups_unnamed++;
	if (comm) { /* a copy, not snprintf: 1.4% of the recorder under churn */
		size_t len = strnlen(comm, PMUBPF_COMM_LEN);

		memcpy(pr->comm, comm, len);
		pr->comm[len] = '\0';
	}
	uint64_t prev;

	if (hashtab__find(p->by_tgid, hashtab__hash_u64(tgid), &tgid, &prev))
		pr->prev_pgen = p->v[prev]->pgen;
	if (hashtab__reserve(p->by_tgid, hashtab__count(p->by_tgid) + 1) ||
	    hashtab__insert(p->index, key_hash(tgid, pgen), p->n)) {
		cgroups__put(p->cg, pr->cg);
		free(pr);
		return NULL;
	}
	p->v[p->n] = pr;
	tgid_latest(p->by_tgid, tgid, p->n);
	p->n++;
	procs_snapshot(p, pr, t);
	if (!pr->snapshotted && !pr->log_wait && !pr->image_wait) /* gone before its maps were read */
		procs_set_dead(pr);
	if (needs_tick(pr))
		act_add(p, pr); /* failing that, no re-reads for it: still a snapshot */
	if (pr->image_wait && (!p->wait_due || pr->image_wait < p->wait_due))
		p->wait_due = pr->image_wait;
	return pr;
}

/* The process a notice (any kind) is the first word of. */
static struct proc *add_noticed(struct procs *p, const struct pmubpf_notice *n)
{
	return add(p, n->tgid, n->pgen, n);
}

/* A mapping of the image pr (tgid, pgen) left as it ended (BPF's
 * notices): read already, it merges as a report of it would; else it is
 * the image, taken at the process's first read or its retry
 * (procs_read.c). */
static void image_take(struct procs *p, struct proc *pr, struct procmap *m, uint64_t exe_ino)
{
	if (pr->snapshotted) {
		add_reported(p, pr, m);
		return;
	}
	if (GROW(pr->left.maps, pr->left_cap, pr->left.n, 1) || !(m->path = strdup(m->path)))
		return;
	pr->left.maps[pr->left.n++] = *m;
	pr->left_exe = exe_ino;
}

/* A mapping and its path (NOTICE_MAP), or a path alone. */
static void image_mapping(struct procs *p, struct proc *pr, const struct pmubpf_map_notice *n, size_t size)
{
	char buf[PMUBPF_MAP_COMPS * (PMUBPF_MAP_NAME + 1) + 1];
	struct procmap m;

	/* No path; or of a generation not noticed (lost, over the cap). */
	if (procs_images_mapping(p, n, size, &m, buf, sizeof(buf)) && pr)
		image_take(p, pr, &m, n->exe_ino);
}

/* The mappings of an image (NOTICE_IMAGE), each as image_mapping's. */
static void image_entries(struct procs *p, struct proc *pr, const struct pmubpf_image_notice *n, size_t size)
{
	size_t have = size >= PMUBPF_IMAGE_NOTICE_SIZE(0) ?
		(size - PMUBPF_IMAGE_NOTICE_SIZE(0)) / sizeof(n->m[0]) : 0;
	struct procmap m;

	for (uint32_t i = 0; i < n->n && i < have && i < PMUBPF_IMAGE_MAPS; i++)
		if (procs_images_entry(p, &n->m[i], NULL, &m) && pr)
			image_take(p, pr, &m, n->exe_ino);
}

int procs__notice(struct procs *p, const struct pmubpf_notice *n, size_t size)
{
	struct proc *pr = lookup(p, n->tgid, n->pgen);

	if (n->kind == PMUBPF_NOTICE_PROC) {
		p->st.notices++;
		if (!pr && !add_noticed(p, n) && p->n >= p->st.max_procs)
			p->st.over_cap++;
		return 0;
	}
	if (n->kind == PMUBPF_NOTICE_MAP) {
		image_mapping(p, pr, (const struct pmubpf_map_notice *)n, size);
		return 0;
	}
	if (n->kind == PMUBPF_NOTICE_IMAGE) {
		image_entries(p, pr, (const struct pmubpf_image_notice *)n, size);
		return 0;
	}
	if (n->kind == PMUBPF_NOTICE_LIKE && size >= sizeof(struct pmubpf_like_notice)) {
		const struct pmubpf_like_notice *l = (const struct pmubpf_like_notice *)n;

		if (pr && !pr->snapshotted && l->like_tgid) { /* taken when its wait ends */
			pr->like_tgid = l->like_tgid;
			pr->like_pgen = l->like_pgen;
		}
		return 0;
	}
	if (n->kind == PMUBPF_NOTICE_LABEL && size >= sizeof(struct pmubpf_label_notice)) {
		if (!pr)
			pr = add_noticed(p, n);
		if (pr)
			procs_labels_notice(p, pr, (const struct pmubpf_label_notice *)n);
	}
	if (n->kind == PMUBPF_NOTICE_FLABEL && size >= sizeof(struct pmubpf_flabel_notice)) {
		if (!pr)
			pr = add_noticed(p, n);
		if (pr)
			procs_flabels_notice(p, pr, (const struct pmubpf_flabel_notice *)n);
	}
	if (n->kind == PMUBPF_NOTICE_LUNION && size >= sizeof(struct pmubpf_lunion_notice)) {
		if (!pr)
			pr = add_noticed(p, n);
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
				procs_rescan(p, pr, true);
			else if (pr->report_due && now >= pr->report_due)
				procs_rescan(p, pr, false);
			pending += pr->report_due != 0;
			procsyms__jit_poll(pr, now_ms);
			procs_note_jit_refusal(p, pr);
		}
		if (pr->label_state == LABELS_PENDING) {
			procs_labels_retry(p, pr);
			pending += pr->label_state == LABELS_PENDING;
		}
		if (needs_tick(pr))
			p->act[k++] = pr; /* the dead drop out: ticks stay cheap */
		else
			pr->in_act = false;
	}
	p->nact = k;
	p->last_pending = pending;
	return pending;
}

size_t procs__label_sets_held(const struct procs *p)
{
	return p->nsets;
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
			proc_free(p, pr);
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

	return pr ? pr : add(p, tgid, pgen, NULL);
}

