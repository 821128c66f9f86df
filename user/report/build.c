/* build.c — see build.h. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "build.h"
#include "lib/grow.h"
#include "lib/hashtab.h"
#include "lib/heap.h"
#include "symbols/debuginfo.h"
#include "procs/labels.h"
#include "perf/perfev.h"
#include "dataaddr.h"
#include "mainexe.h"
#include "symbolize.h"

#define MAX_DEPTH PMUBPF_MAX_DEPTH
#define MAX_LABELS 16 /* of a thread's label set, per sample */

/* Kernel stacks that begin with the kernel's tracepoint dispatch
 * (__traceiter_NAME, there when several programs share a tracepoint:
 * -e off-cpu's sched_switch beside another tool's): our own path, not
 * the profiled code. Counted while the kernel symbols are there
 * (name_frames), so that the samples can leave those frames out after
 * the symbols were given back. */
struct kskip { uint64_t key; uint32_t n; };
struct kskips {
	struct hashtab *index; /* stack key -> index into v */
	struct kskip *v;
	size_t n, cap;
};

static bool kskip_eq(const void *key, uint64_t idx, void *ctx)
{
	return ((struct kskips *)ctx)->v[idx].key == *(const uint64_t *)key;
}

static uint32_t kskip_get(const struct kskips *sk, uint64_t key)
{
	uint64_t idx;

	return hashtab__find(sk->index, hashtab__hash_u64(key), &key, &idx) ? sk->v[idx].n : 0;
}

/* Count stack `key`'s leading dispatch frames (none: nothing kept). */
static int kskip_count(struct kskips *sk, const struct ksyms *ks, uint64_t key,
		       const struct report_stack *f)
{
	uint32_t i = 0;

	while (ks && i < f->nr) {
		const struct ksym *k = ksyms__lookup(ks, i ? f->ips[i] - 1 : f->ips[i]);

		if (!k || strncmp(k->name, "__traceiter_", 12))
			break;
		i++;
	}
	if (!i || kskip_get(sk, key))
		return 0;
	if (GROW(sk->v, sk->cap, sk->n, 1) ||
	    hashtab__insert(sk->index, hashtab__hash_u64(key), sk->n))
		return -ENOMEM;
	sk->v[sk->n++] = (struct kskip){ key, i };
	return 0;
}

/* Append a stack's locations for one side. */
static size_t add_side(struct pprof *p, const struct report_data *d, uint64_t key, bool user,
		       struct proc *pr, const struct ksyms *ks, const struct kskips *sk,
		       uint64_t *locs, size_t n, struct symb_stats *st)
{
	if (key == PMUBPF_STACK_NONE)
		return n;
	if (key < PMUBPF_STACK_KEY_MIN) {
		enum symb_synth s = key == PMUBPF_STACK_LOST ?
			(user ? SYNTH_LOST_USTACK_FULL : SYNTH_LOST_KSTACK_FULL) :
			(user ? SYNTH_LOST_USTACK_ERROR : SYNTH_LOST_KSTACK_ERROR);
		locs[n++] = symb__synthetic(p, s);
		return n;
	}
	const struct report_stack *f = report_data__stack(d, key);
	if (!f) {
		locs[n++] = symb__synthetic(p, user ? SYNTH_LOST_USTACK_ERROR : SYNTH_LOST_KSTACK_ERROR);
		return n;
	}
	for (uint64_t i = user ? 0 : kskip_get(sk, key); i < f->nr; i++) {
		uint64_t l = user ? symb__user(p, pr, f->ips[i], n == 0 && i == 0, st)
				  : symb__kernel(p, ks, f->ips[i], i == 0, st);
		if (l)
			locs[n++] = l;
	}
	return n;
}

/* --- naming the frames, one source at a time ------------------------------
 * Before the samples are added, every frame of the event is named: the
 * kernel's first, then the user frames grouped by ELF object, by file
 * offset within each (so by DWARF unit: dwarf.c bounds the line tables
 * it holds and starts over when past the budget). An object's
 * debug info is loaded at its first frame (libc's separate debug file:
 * 11 MB of decompressed sections and ~5 MB of libdw's tables), so naming
 * in sample order held every object's at once, beside the kernel
 * symbols (~6 MB), at the peak of a whole-machine recording. With
 * in->last, each source is given back as soon as its frames are named:
 * the build holds one object's debug info at a time. The samples pass
 * then finds every location already made. */

/* A user frame whose location the profile does not have yet. */
struct pending {
	struct elfobj *obj;
	struct proc *pr;
	uint64_t ip, mid;
	uint64_t off; /* in the object's file: its units in turn (dwarf.h) */
	bool leaf;
	uint64_t addr; /* ip's address in the profile's mapping mid */
};

struct naming {
	struct pending *v;
	size_t n, cap;
	struct hashtab *seen; /* (mapping, address) -> index into v */
};

static bool pending_eq(const void *key, uint64_t idx, void *ctx)
{
	const struct pending *k = key, *e = &((struct naming *)ctx)->v[idx];

	return e->mid == k->mid && e->addr == k->addr;
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->obj != y->obj)
		return (uintptr_t)x->obj < (uintptr_t)y->obj ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->ip < y->ip ? -1 : x->ip > y->ip; /* (mid, addr) are distinct */
}

/* Queue entry en's user frames that need naming (n: locations before
 * them, as in add_samples). 0 or -ENOMEM. */
static int queue_user(struct pprof *p, struct naming *nm, const struct report_data *d,
		      const struct report_entry *en, struct proc *pr, size_t n)
{
	const struct report_stack *f;

	if (!pr || en->k.ustack < PMUBPF_STACK_KEY_MIN ||
	    !(f = report_data__stack(d, en->k.ustack)))
		return 0;
	for (uint32_t i = 0; i < f->nr; i++) {
		const struct procmap *m;
		bool leaf = n == 0 && i == 0;
		struct elfobj *obj = symb__object(pr, leaf ? f->ips[i] : f->ips[i] - 1, &m); /* as symb__user */
		struct pending q = { obj, pr, f->ips[i], 0, 0, leaf, 0 };

		if (!obj)
			continue; /* no debug info to load: named with the samples */
		q.off = q.ip - m->start + m->pgoff;
		if (!(q.mid = symb__place(p, pr, m, q.leaf ? q.ip : q.ip - 1, &q.addr))) /* as symb__user */
			return -ENOMEM;
		uint64_t h = hashtab__hash_mix(q.mid, q.addr);
		if (pprof__find_location(p, q.mid, q.addr) || hashtab__find(nm->seen, h, &q, NULL))
			continue;
		if (GROW(nm->v, nm->cap, nm->n, 1) || hashtab__insert(nm->seen, h, nm->n))
			return -ENOMEM;
		nm->v[nm->n++] = q;
	}
	return 0;
}

static int name_frames(struct pprof *p, const struct report_in *in, const struct report_data *d,
		       const struct report_event *es, struct kskips *sk, struct symb_stats *st)
{
	struct naming nm = { 0 };
	uint64_t locs[MAX_DEPTH + 1];
	int ret = 0;

	if (!(nm.seen = hashtab__new(pending_eq, &nm)))
		return -ENOMEM;
	for (size_t i = 0; !ret && i < es->n; i++) {
		const struct report_entry *en = &es->v[i];
		struct proc *pr = en->k.tgid ? procs__get(in->procs, en->k.tgid, en->k.pgen) : NULL;
		const struct report_stack *kf = en->k.kstack >= PMUBPF_STACK_KEY_MIN ?
			report_data__stack(d, en->k.kstack) : NULL;
		size_t n = in->data_profile ? 1 : 0; /* the data leaf goes first */

		if (in->tick && !(i & 255))
			in->tick(in->tick_ctx);
		if (kf && (ret = kskip_count(sk, in->ksyms, en->k.kstack, kf)))
			break;
		n = add_side(p, d, en->k.kstack, false, pr, in->ksyms, sk, locs, n, st);
		ret = queue_user(p, &nm, d, en, pr, n);
	}
	hashtab__free(nm.seen);
	if (in->last && in->ksyms) {
		ksyms__release(in->ksyms);
		heap__give_back();
	}
	if (!ret && nm.n > 1)
		qsort(nm.v, nm.n, sizeof(*nm.v), cmp_pending);
	for (size_t a = 0, b; !ret && a < nm.n; a = b) {
		for (b = a; !ret && b < nm.n && nm.v[b].obj == nm.v[a].obj; b++) {
			if (in->tick && !(b & 255))
				in->tick(in->tick_ctx);
			if (!symb__user(p, nm.v[b].pr, nm.v[b].ip, nm.v[b].leaf, st))
				ret = -ENOMEM;
		}
		if (in->last) {
			debuginfo__release(nm.v[a].obj);
			heap__give_back();
		}
		/* An object's first name can be its slowest step (its debug
		 * file read, or asked of debuginfod): a tick after each. */
		if (in->tick)
			in->tick(in->tick_ctx);
	}
	free(nm.v);
	return ret;
}

/* --call-graph: the mode, the unwind tables, and how DWARF walks ended
 * when not at the outermost frame (every sample is kept). */
static const char *const dwarf_reasons[PMUBPF_DROP__MAX] = {
	[PMUBPF_DROP_DWARF_NO_TABLE] = "walked by frame pointer instead: the process had no unwind tables yet (first samples) or no slot",
	[PMUBPF_DROP_DWARF_TRUNCATED] = "truncated at " PMUBPF_MAX_DEPTH_STR " frames",
	[PMUBPF_DROP_DWARF_READ_FAIL] = "end early: stack memory unreadable",
	[PMUBPF_DROP_DWARF_UNMAPPED] = "end at an address in no known mapping (not executable, or mapped after the last snapshot)",
	[PMUBPF_DROP_DWARF_BAD_FRAME] = "end early: an unwound frame was not above the previous one",
	[PMUBPF_DROP_DWARF_BAD_RULE] = "have frames unwound by frame pointer: a CFI rule BPF does not evaluate",
	[PMUBPF_DROP_DWARF_NO_CFI] = "have frames unwound by frame pointer: no CFI covers the pc (JIT code, objects without .eh_frame or whose table is not built yet)",
	[PMUBPF_DROP_DWARF_BY_FILE] = "unwound by the tables of the files mapped: the process had no slot yet (first samples)",
};

static void add_unwind_comments(struct pprof *p, const struct report_in *in,
				const struct pmubpf_drop_val *d)
{
	char buf[512];

	if (in->cfg->no_user)
		return;
	if (in->cfg->call_graph != CALL_GRAPH_DWARF || !in->unwind) {
		pprof__add_comment(p, "call graph: fp (user stacks by frame pointers)");
		return;
	}
	pprof__add_comment(p, "call graph: dwarf (user stacks unwound in BPF from .eh_frame/.debug_frame tables)");
	unwind__summary(in->unwind, buf, sizeof(buf));
	pprof__add_comment(p, "%s", buf);
	for (int r = 0; r < PMUBPF_DROP__MAX; r++)
		if (dwarf_reasons[r] && d[r].count)
			pprof__add_comment(p, "dwarf: %llu user stacks %s",
					   (unsigned long long)d[r].count, dwarf_reasons[r]);
}

static void add_comments(struct pprof *p, const struct report_in *in, int ev,
			 const struct pmubpf_drop_val *d, const struct report_notes *notes)
{
	const struct config *cfg = in->cfg;
	const struct pmubpf_event *e = &cfg->events[ev];

	pprof__add_comment(p, "pmubpf: %s", cfg->cmdline ? cfg->cmdline : "");
	pprof__add_comment(p, "event: %s (type %u, config %#llx)%s", e->name, e->attr.type,
			   (unsigned long long)e->attr.config,
			   e->attr.precise_ip ? " precise" : "");
	char how[256];
	perfev__describe(cfg, e, how, sizeof(how));
	pprof__add_comment(p, "%s", how);
	if (e->is_timer && in->timer && in->timer->dithering)
		pprof__add_comment(p, "dither: timer periods re-drawn every ~100 ms, rates 5-15%% off nominal, against aliasing (%llu changes, %llu refused, %llu made from the event's own CPU; --no-dither keeps them fixed)",
				   (unsigned long long)in->timer->redraws, (unsigned long long)in->timer->failures,
				   (unsigned long long)in->timer->local);
	else if (e->is_timer)
		pprof__add_comment(p, "dither: off (fixed timer period; a loop in step with it can alias)");
	for (int i = 0; i < notes->n; i++)
		pprof__add_comment(p, "%s", notes->v[i].text);
	add_unwind_comments(p, in, d);

	const struct procs_stats *ps = procs__stats(in->procs);
	pprof__add_comment(p, "processes: %llu seen, %llu gone before their maps were read, %llu mapped files unreadable, %llu maps re-reads, %llu mappings from %s, %llu images put together from mmap reports (gone or exec'd before their maps were read), %llu live ones from mmap reports (begun while recording: no maps read), %llu live ones read from /proc (%llu of them first sampled inside execve or an exit), %llu first sampled with no address space left (late in their exit: no user stack, nothing to read)",
			   (unsigned long long)ps->notices, (unsigned long long)ps->gone,
			   (unsigned long long)ps->objs_unreadable, (unsigned long long)ps->rescans,
			   (unsigned long long)ps->maps_from_reports, ps->images ? "BPF's images" : "mmap reports",
			   (unsigned long long)ps->from_log,
			   (unsigned long long)ps->live_from_log, (unsigned long long)ps->live_read,
			   (unsigned long long)ps->live_read_moving, (unsigned long long)ps->gone_nomm);
	pprof__add_comment(p, "cgroups: %llu named (labels cgroup, container_id, pod_uid, systemd_unit), %llu processes whose cgroup could not be named (removed before their first sample was read), %llu /proc/PID/cgroup reads (where the cgroup v2 id says nothing: v1 hierarchies)",
			   (unsigned long long)ps->cgroups_named, (unsigned long long)ps->cgroups_unnamed,
			   (unsigned long long)ps->cgroup_reads);
	if (ps->images)
		pprof__add_comment(p, "images: sent by BPF as sampled processes ended (exit or exec; no mmap reports): %llu mappings, %llu images of processes gone before their maps were read (%llu of them their parent's: fork children that exec'd before their first sample), %llu mappings without a path, %llu mappings lost (ring buffer full)",
				   (unsigned long long)ps->image_maps, (unsigned long long)ps->from_images,
				   (unsigned long long)ps->from_parent,
				   (unsigned long long)ps->image_maps_unnamed, (unsigned long long)ps->image_maps_lost);
}

/* One sample's labels: pid, tid, comm, then its label set's pairs. */
/* Reserved names (pid, tid, comm, pmubpf_*) in a program's labels come
 * out renamed into keys[] (labels.h, labels__profile_key). */
static size_t sample_labels(const struct report_in *in, const struct report_entry *en,
			    struct proc *pr, struct pprof_label *labels,
			    char keys[][LABELS_PROFILE_KEY_MAX])
{
	size_t nl = 0;

	labels[nl++] = (struct pprof_label){ .key = "pid", .num = en->k.tgid };
	labels[nl++] = (struct pprof_label){ .key = "tid", .num = en->k.tid };
	labels[nl++] = (struct pprof_label){ .key = "comm",
		.str = en->k.tgid == 0 ? "swapper" : (pr && pr->comm[0] ? pr->comm : "[unknown]") };
	if (pr && pr->cg) { /* its cgroup (procs/cgroups.h), and what it names */
		const struct cgroup_names *cn = &pr->cg->names;

		labels[nl++] = (struct pprof_label){ .key = "cgroup", .str = pr->cg->path };
		if (cn->container_id[0])
			labels[nl++] = (struct pprof_label){ .key = "container_id", .str = cn->container_id };
		if (cn->pod_uid[0])
			labels[nl++] = (struct pprof_label){ .key = "pod_uid", .str = cn->pod_uid };
		if (cn->unit[0])
			labels[nl++] = (struct pprof_label){ .key = "systemd_unit", .str = cn->unit };
	}
	if (en->k.label) {
		const struct proc_label_set *ls = pr ? procs__label_set(in->procs, pr, en->k.label) : NULL;

		if (!ls)
			labels[nl++] = (struct pprof_label){ .key = "pmubpf_labels", .str = "[unread]" };
		for (uint32_t j = 0; ls && j < ls->n && j < MAX_LABELS; j++)
			labels[nl++] = (struct pprof_label){
				.key = ls->ours ? ls->pairs[j].key
						: labels__profile_key(ls->pairs[j].key, keys[j]),
				.str = ls->pairs[j].value };
	}
	return nl;
}

/* Every entry as a sample; the main executable counted on the way. */
static int add_samples(struct pprof *p, const struct report_in *in, const struct report_data *d,
		       const struct report_event *es, const struct kskips *sk, double scale,
		       struct top *top, struct mainexe *me, struct symb_stats *st,
		       struct data_stats *ds)
{
	uint64_t locs[2 * MAX_DEPTH + 2];

	for (size_t i = 0; i < es->n; i++) {
		const struct report_entry *en = &es->v[i];
		struct proc *pr = en->k.tgid ? procs__get(in->procs, en->k.tgid, en->k.pgen) : NULL;
		struct pprof_label labels[8 + MAX_LABELS];
		char keys[MAX_LABELS][LABELS_PROFILE_KEY_MAX];
		size_t n = 0, nl;
		int ret;

		if (in->tick && !(i & 255))
			in->tick(in->tick_ctx);
		/* --data-addr's profile: the data touched is the leaf. */
		if (in->data_profile && !(locs[n++] = dataaddr__location(p, pr, en->addr, en->v.count, ds)))
			return -ENOMEM;
		n = add_side(p, d, en->k.kstack, false, pr, in->ksyms, sk, locs, n, st);
		n = add_side(p, d, en->k.ustack, true, pr, in->ksyms, sk, locs, n, st);
		if (n == (in->data_profile ? 1u : 0u))
			locs[n++] = symb__synthetic(p, SYNTH_NO_STACK);
		nl = sample_labels(in, en, pr, labels, keys);
		int64_t w = (int64_t)((double)en->v.period * scale);
		ret = pprof__add_sample(p, locs, n, (int64_t)en->v.count, w, labels, nl);
		if (!ret && top)
			ret = top__add(top, p, locs, n, w);
		if (!ret)
			ret = mainexe__add(me, pr, en->k.tid, w);
		if (ret)
			return ret;
	}
	return 0;
}

/* Name the main executable's mapping first (mainexe.h). */
static int set_main_mapping(struct pprof *p, struct mainexe *me)
{
	struct proc *pr = NULL;
	const struct procmap *m = mainexe__pick(me, &pr);
	uint64_t id;

	if (!m)
		return 0;
	id = symb__mapping(p, pr, m);
	return id ? pprof__set_main_mapping(p, id) : -ENOMEM;
}

static int build(const struct report_in *in, const struct report_data *d, int ev,
		 struct top *top, struct report_built *out, char *err, size_t errlen)
{
	const struct config *cfg = in->cfg;
	const struct pmubpf_event *e = &cfg->events[ev];
	const struct report_event *es = in->data_profile ? &d->data[ev] : &d->ev[ev];
	const struct pmubpf_drop_val *drops = es->drops;
	const struct loss_sizes sizes = { in->counts_map_size, in->stack_map_size };
	struct symb_stats st = { 0 };
	struct data_stats ds = { 0 };
	struct kskips skips = { 0 };
	uint64_t nsamples = 0, weight = 0, loc;
	double scale = 1.0;
	int64_t period;
	int ret;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < es->n; i++) {
		nsamples += es->v[i].v.count;
		weight += es->v[i].v.period;
	}
	struct loss_scale sc = {
		.enabled = in->enabled[ev], .running = in->running[ev],
		.throttles = in->throttles[ev], .throttled_ns = in->throttled_ns[ev],
		.throttles_unseen = in->throttles_unseen[ev], .member = e->member,
		.unwatched = in->throttle_unwatched[ev],
		.max_rate = in->max_sample_rate,
	};
	scale = report__scale(&sc);
	/* A timer's nominal period (ns), -c's, else the mean per sample. */
	period = (int64_t)timekeeper__timer_period(cfg, e);
	if (!period)
		period = cfg->period ? (int64_t)cfg->period
				     : nsamples ? (int64_t)(weight / nsamples) : 0;

	struct pprof *p = pprof__new(e->value_type, e->value_unit, period);
	struct mainexe *me = mainexe__new(cfg, in->command_pid);
	skips.index = hashtab__new(kskip_eq, &skips);
	if (!p || !me || !skips.index) {
		ret = -ENOMEM;
		goto fail;
	}
	pprof__set_time(p, in->time_nanos, in->duration_nanos);
	report__loss_notes(drops, &sizes, &sc, procs__stats(in->procs), &out->notes);
	add_comments(p, in, ev, drops, &out->notes);
	if (in->data_profile)
		pprof__add_comment(p, "data addresses (--data-addr): each sample's leaf frame is the data it touched (a global by its ELF symbol, a mapped file, [heap], [stack], [anon]; the byte offset into it is the line), then its code stack");
	ret = name_frames(p, in, d, es, &skips, &st);
	if (!ret)
		ret = add_samples(p, in, d, es, &skips, scale, top, me, &st, &ds);
	symb__done(&st);
	if (ret)
		goto fail;
	if (in->data_profile) {
		char sum[512];

		dataaddr__summary(&ds, sum, sizeof(sum));
		pprof__add_comment(p, "%s", sum);
	}
	if (st.user_frames || st.kernel_frames)
		pprof__add_comment(p, "symbols: %llu user locations (%llu unnamed, %llu with source lines, %llu with inlined frames, %llu JIT), %llu kernel (%llu unnamed)%s",
				   (unsigned long long)st.user_frames, (unsigned long long)st.user_unknown,
				   (unsigned long long)st.user_lines, (unsigned long long)st.user_inlined,
				   (unsigned long long)st.user_jit, (unsigned long long)st.kernel_frames,
				   (unsigned long long)st.kernel_unknown,
				   cfg->no_symbol ? "; --no-symbol: addresses only" : "");
	if (!in->data_profile && drops[PMUBPF_DROP_COUNTS_FULL].count) {
		loc = symb__synthetic(p, SYNTH_LOST_COUNTS_FULL);
		ret = loc ? pprof__add_sample(p, &loc, 1, (int64_t)drops[PMUBPF_DROP_COUNTS_FULL].count,
					      (int64_t)((double)drops[PMUBPF_DROP_COUNTS_FULL].period * scale),
					      NULL, 0)
			  : -ENOMEM;
		if (ret)
			goto fail;
	}
	if (in->data_profile && drops[PMUBPF_DROP_DATA_FULL].count) {
		loc = symb__synthetic(p, SYNTH_LOST_DATA_FULL);
		ret = loc ? pprof__add_sample(p, &loc, 1, (int64_t)drops[PMUBPF_DROP_DATA_FULL].count,
					      (int64_t)((double)drops[PMUBPF_DROP_DATA_FULL].period * scale),
					      NULL, 0)
			  : -ENOMEM;
		if (ret)
			goto fail;
	}
	ret = set_main_mapping(p, me);
	if (ret)
		goto fail;
	mainexe__free(me);
	hashtab__free(skips.index);
	free(skips.v);
	out->p = p;
	out->nsamples = nsamples;
	out->distinct = es->n;
	return 0;
fail:
	snprintf(err, errlen, "building the %s profile: %s", e->name, strerror(-ret));
	mainexe__free(me);
	hashtab__free(skips.index);
	free(skips.v);
	pprof__free(p);
	return ret;
}

struct ksyms *report__kernel_names(const struct report_in *in, const struct report_data *d)
{
	struct ksyms *ks = NULL;
	uint64_t *addrs;
	size_t n;

	if (in->cfg->no_kernel || report_data__kernel_addrs(d, &addrs, &n))
		return NULL;
	if (n)
		ks = in->kname(in->kname_ctx, addrs, n);
	free(addrs);
	return ks;
}

int report__build(const struct report_in *in, const struct report_data *d, int ev,
		  struct top *top, struct report_built *out, char *err, size_t errlen)
{
	struct report_in named;
	int ret;

	/* The builder keeps pointers into processes' maps (mainexe's
	 * candidates, the frames being named) while in->tick takes in
	 * notices and mmap reports: nothing of a process is replaced until
	 * it is done. */
	procs__hold(in->procs, true);
	if (in->kname) {
		named = *in;
		named.ksyms = report__kernel_names(in, d);
		named.kname = NULL;
		ret = build(&named, d, ev, top, out, err, errlen);
		ksyms__free(named.ksyms);
	} else {
		ret = build(in, d, ev, top, out, err, errlen);
	}
	procs__hold(in->procs, false);
	return ret;
}
