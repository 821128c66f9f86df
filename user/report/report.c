/* report.c — see report.h. */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hashtab.h"
#include "pprof/pprof.h"
#include "report.h"
#include "symbolize.h"

#define MAX_DEPTH PMUBPF_MAX_DEPTH

struct entry {
	struct pmubpf_key k;
	struct pmubpf_val v;
};

struct entries {
	struct entry *v;
	size_t n, cap;
};

/* Stack key -> frames, read from the stacks map once per recording. */
struct stack_cache {
	int fd;
	struct hashtab *index; /* key -> index into v */
	struct pmubpf_stack *v;
	uint64_t *keys;
	size_t n, cap;
};

static bool stack_eq(const void *key, uint64_t idx, void *ctx)
{
	struct stack_cache *c = ctx;

	return c->keys[idx] == *(const uint64_t *)key;
}

/* Frames of a stack, or NULL if the map does not have it. */
static const struct pmubpf_stack *stack_get(struct stack_cache *c, uint64_t key)
{
	uint64_t idx, h = hashtab__hash_u64(key);

	if (hashtab__find(c->index, h, &key, &idx))
		return &c->v[idx];
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		struct pmubpf_stack *nv = realloc(c->v, cap * sizeof(*nv));
		uint64_t *nk;

		if (!nv)
			return NULL;
		c->v = nv;
		nk = realloc(c->keys, cap * sizeof(*nk));
		if (!nk)
			return NULL;
		c->keys = nk;
		c->cap = cap;
	}
	struct pmubpf_stack *st = &c->v[c->n];
	if (bpf_map_lookup_elem(c->fd, &key, st) || st->nr > MAX_DEPTH)
		return NULL;
	c->keys[c->n] = key;
	if (hashtab__insert(c->index, h, c->n))
		return NULL;
	return &c->v[c->n++];
}

static int drain_counts(int fd, int nevents, struct entries *per_event)
{
	struct pmubpf_key key, next;
	void *prev = NULL;
	int err;

	while ((err = bpf_map_get_next_key(fd, prev, &next)) == 0) {
		struct entry e = { .k = next };

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &next, &e.v))
			continue; /* deleted under us: cannot happen after stop */
		if (e.k.event >= (uint32_t)nevents)
			continue;
		struct entries *es = &per_event[e.k.event];
		if (es->n == es->cap) {
			size_t cap = es->cap ? es->cap * 2 : 4096;
			struct entry *nv = realloc(es->v, cap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			es->v = nv;
			es->cap = cap;
		}
		es->v[es->n++] = e;
	}
	return errno == ENOENT || err == -ENOENT ? 0 : -errno;
}

static void sum_drops(const struct report_in *in, int ev, struct pmubpf_drop_val *out)
{
	struct pmubpf_drop_val *vals = calloc(in->nr_cpus, sizeof(*vals));

	memset(out, 0, sizeof(*out) * PMUBPF_DROP__MAX);
	if (!vals)
		return;
	for (uint32_t r = 0; r < PMUBPF_DROP__MAX; r++) {
		uint32_t idx = ev * PMUBPF_DROP__MAX + r;

		if (bpf_map_lookup_elem(in->drops_fd, &idx, vals))
			continue;
		for (int c = 0; c < in->nr_cpus; c++) {
			out[r].count += vals[c].count;
			out[r].period += vals[c].period;
		}
	}
	free(vals);
}

void report__output_path(const struct config *cfg, int ev, char *buf, size_t len)
{
	const char *out = cfg->output, *slash = strrchr(out, '/');
	const char *base = slash ? slash + 1 : out;
	size_t stem;

	if (cfg->nevents == 1) {
		snprintf(buf, len, "%s", out);
		return;
	}
	const char *want = cfg->format == FORMAT_FOLDED ? FOLDED_SUFFIX : ".pb.gz";
	const char *ext = strstr(base, want);
	if (ext && ext[strlen(want)] == '\0')
		stem = (size_t)(ext - out);
	else
		stem = strlen(out), ext = "";
	snprintf(buf, len, "%.*s.%s%s", (int)stem, out, cfg->events[ev].file_tag, ext);
}

/* Append a stack's locations for one side. */
static size_t add_side(struct pprof *p, struct stack_cache *sc, uint64_t key, bool user,
		       struct proc *pr, const struct ksyms *ks, uint64_t *locs, size_t n,
		       struct symb_stats *st)
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
	const struct pmubpf_stack *f = stack_get(sc, key);
	if (!f) {
		locs[n++] = symb__synthetic(p, user ? SYNTH_LOST_USTACK_ERROR : SYNTH_LOST_KSTACK_ERROR);
		return n;
	}
	for (uint64_t i = 0; i < f->nr; i++) {
		uint64_t l = user ? symb__user(p, pr, f->ips[i], n == 0 && i == 0, st)
				  : symb__kernel(p, ks, f->ips[i], i == 0, st);
		if (l)
			locs[n++] = l;
	}
	return n;
}

/* ---- top-N: flat and cumulative weight per function name ---- */
struct top_row {
	const char *name;
	int64_t flat, cum;
	uint64_t seen; /* sample serial that last added cum */
};
struct top {
	struct top_row *v;
	size_t n, cap;
	struct hashtab *index;
	int64_t total;
	uint64_t serial;
};

static bool top_eq(const void *key, uint64_t idx, void *ctx)
{
	return !strcmp(((struct top *)ctx)->v[idx].name, key);
}

static struct top_row *top_row(struct top *t, const char *name)
{
	uint64_t idx, h = hashtab__hash_str(name);

	if (hashtab__find(t->index, h, name, &idx))
		return &t->v[idx];
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct top_row *nv = realloc(t->v, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		t->v = nv;
		t->cap = cap;
	}
	if (hashtab__insert(t->index, h, t->n))
		return NULL;
	t->v[t->n] = (struct top_row){ .name = name };
	return &t->v[t->n++];
}

static int top_cmp(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->flat != y->flat)
		return x->flat < y->flat ? 1 : -1;
	return strcmp(x->name, y->name);
}

static const char *frame_name(struct pprof *p, uint64_t loc, char *buf, size_t len);

static void top_add(struct top *t, struct pprof *p, const uint64_t *locs, size_t n, int64_t w)
{
	char buf[256];

	t->total += w;
	t->serial++;
	for (size_t i = 0; i < n; i++) {
		const char *name = frame_name(p, locs[i], buf, sizeof(buf));
		struct top_row *r = top_row(t, name);

		if (!r)
			return;
		if (i == 0)
			r->flat += w;
		if (r->seen != t->serial) {
			r->cum += w;
			r->seen = t->serial;
		}
	}
}

static void top_print(struct top *t, const char *event, const char *unit, int rows)
{
	qsort(t->v, t->n, sizeof(*t->v), top_cmp);
	printf("\nTop %d functions for %s (flat %s, %% of %lld):\n", rows, event, unit,
	       (long long)t->total);
	printf("%14s %7s %14s %7s  %s\n", "flat", "flat%", "cum", "cum%", "function");
	for (size_t i = 0; i < t->n && i < (size_t)rows; i++) {
		double d = t->total ? 100.0 / (double)t->total : 0;
		printf("%14lld %6.2f%% %14lld %6.2f%%  %s\n", (long long)t->v[i].flat,
		       t->v[i].flat * d, (long long)t->v[i].cum, t->v[i].cum * d, t->v[i].name);
	}
}

/* pprof owns the names; the top table borrows them (profile outlives it).
 * Frames without a symbol are grouped by their file: "[libc.so.6]". */
static const char *frame_name(struct pprof *p, uint64_t loc, char *buf, size_t len)
{
	const char *name = pprof__location_name(p, loc), *file;

	if (name)
		return name;
	file = pprof__location_mapping_file(p, loc);
	if (file && *file) {
		const char *base = strrchr(file, '/');

		snprintf(buf, len, "[%s]", base ? base + 1 : file);
	} else {
		snprintf(buf, len, "0x%llx", (unsigned long long)pprof__location_address(p, loc));
	}
	return pprof__intern(p, buf);
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
	[PMUBPF_DROP_DWARF_NO_CFI] = "have frames unwound by frame pointer: no CFI covers the pc (JIT code, objects without .eh_frame)",
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
	if (in->unwind) {
		unwind__summary(in->unwind, buf, sizeof(buf));
		pprof__add_comment(p, "%s", buf);
	}
	for (int r = 0; r < PMUBPF_DROP__MAX; r++)
		if (dwarf_reasons[r] && d[r].count)
			pprof__add_comment(p, "dwarf: %llu user stacks %s",
					   (unsigned long long)d[r].count, dwarf_reasons[r]);
}

static void add_comments(struct pprof *p, const struct report_in *in, int ev,
			 const struct pmubpf_drop_val *d, double scale)
{
	const struct config *cfg = in->cfg;
	const struct pmubpf_event *e = &cfg->events[ev];

	pprof__add_comment(p, "pmubpf: %s", cfg->cmdline ? cfg->cmdline : "");
	pprof__add_comment(p, "event: %s (type %u, config %#llx)%s", e->name, e->attr.type,
			   (unsigned long long)e->attr.config,
			   e->attr.precise_ip ? " precise" : "");
	if (cfg->period)
		pprof__add_comment(p, "sampling: every %llu %s", (unsigned long long)cfg->period,
				   e->is_timer ? "ns" : "events");
	else
		pprof__add_comment(p, "sampling: %llu Hz per CPU (weights are each sample's own period)",
				   (unsigned long long)cfg->freq);
	if (e->is_timer && in->timer && in->timer->dithering)
		pprof__add_comment(p, "dither: timer periods re-drawn every ~100 ms, rates 5-15%% off nominal, against aliasing (%llu changes, %llu refused; --no-dither keeps them fixed)",
				   (unsigned long long)in->timer->redraws, (unsigned long long)in->timer->failures);
	else if (e->is_timer)
		pprof__add_comment(p, "dither: off (fixed timer period; a loop in step with it can alias)");
	if (d[PMUBPF_DROP_COUNTS_FULL].count)
		pprof__add_comment(p, "lost: %llu samples: counts map full (--counts-map-size %u too small)",
				   (unsigned long long)d[PMUBPF_DROP_COUNTS_FULL].count, in->counts_map_size);
	if (d[PMUBPF_DROP_USTACK].count)
		pprof__add_comment(p, "lost: %llu user stacks: stacks map full or walk failed (--stack-map-size %u)",
				   (unsigned long long)d[PMUBPF_DROP_USTACK].count, in->stack_map_size);
	if (d[PMUBPF_DROP_KSTACK].count)
		pprof__add_comment(p, "lost: %llu kernel stacks: stacks map full or walk failed (--stack-map-size %u)",
				   (unsigned long long)d[PMUBPF_DROP_KSTACK].count, in->stack_map_size);
	if (d[PMUBPF_DROP_NOTICE].count)
		pprof__add_comment(p, "lost: %llu process/label notices: ring buffer full (retried on later samples)",
				   (unsigned long long)d[PMUBPF_DROP_NOTICE].count);
	if (d[PMUBPF_DROP_LABEL_READ].count)
		pprof__add_comment(p, "lost: %llu label reads: label word unreadable (samples kept unlabelled)",
				   (unsigned long long)d[PMUBPF_DROP_LABEL_READ].count);
	if (d[PMUBPF_DROP_IDLE].count)
		pprof__add_comment(p, "left out: %llu idle samples (--include-idle keeps them)",
				   (unsigned long long)d[PMUBPF_DROP_IDLE].count);
	add_unwind_comments(p, in, d);
	if (scale > 1.0)
		pprof__add_comment(p, "multiplexed: the counter ran %.1f%% of the time it was enabled; weights scaled by %.3f",
				   100.0 / scale, scale);

	const struct procs_stats *ps = procs__stats(in->procs);
	pprof__add_comment(p, "processes: %llu seen, %llu gone before their maps were read, %llu mapped files unreadable, %llu maps re-reads, %llu mappings from mmap reports",
			   (unsigned long long)ps->notices, (unsigned long long)ps->gone,
			   (unsigned long long)ps->objs_unreadable, (unsigned long long)ps->rescans,
			   (unsigned long long)ps->maps_from_reports);
	if (ps->label_records || ps->label_bad_records || ps->label_sets)
		pprof__add_comment(p, "labels: %llu processes registered, %llu records rejected; %llu sets read, %llu gone before read, %llu malformed",
				   (unsigned long long)ps->label_records,
				   (unsigned long long)ps->label_bad_records,
				   (unsigned long long)ps->label_sets,
				   (unsigned long long)ps->label_sets_stale,
				   (unsigned long long)ps->label_sets_bad);
}

static int write_event(const struct report_in *in, int ev, struct entries *es,
		       struct stack_cache *sc, char *err, size_t errlen)
{
	const struct config *cfg = in->cfg;
	const struct pmubpf_event *e = &cfg->events[ev];
	struct pmubpf_drop_val d[PMUBPF_DROP__MAX];
	struct symb_stats st = { 0 };
	struct top top = { 0 };
	uint64_t locs[2 * MAX_DEPTH + 2], nsamples = 0, weight = 0;
	char path[4096];
	double scale = 1.0;
	int64_t period;
	int ret = 0;

	sum_drops(in, ev, d);
	for (size_t i = 0; i < es->n; i++) {
		nsamples += es->v[i].v.count;
		weight += es->v[i].v.period;
	}
	if (in->running[ev] && in->enabled[ev] > in->running[ev])
		scale = (double)in->enabled[ev] / (double)in->running[ev];
	/* A timer's nominal period (ns), -c's, else the mean per sample. */
	period = (int64_t)timekeeper__timer_period(cfg, e);
	if (!period)
		period = cfg->period ? (int64_t)cfg->period
				     : nsamples ? (int64_t)(weight / nsamples) : 0;

	struct pprof *p = pprof__new(e->value_type, e->value_unit, period);
	if (!p || (cfg->top && !(top.index = hashtab__new(top_eq, &top)))) {
		snprintf(err, errlen, "out of memory building the profile");
		pprof__free(p);
		return -ENOMEM;
	}
	pprof__set_time(p, in->time_nanos, in->duration_nanos);
	add_comments(p, in, ev, d, scale);

	for (size_t i = 0; i < es->n; i++) {
		const struct entry *en = &es->v[i];
		struct proc *pr = en->k.tgid ? procs__get(in->procs, en->k.tgid, en->k.pgen) : NULL;
		size_t n = 0;

		n = add_side(p, sc, en->k.kstack, false, pr, in->ksyms, locs, n, &st);
		n = add_side(p, sc, en->k.ustack, true, pr, in->ksyms, locs, n, &st);
		if (!n)
			locs[n++] = symb__synthetic(p, SYNTH_NO_STACK);

		struct pprof_label labels[3 + 16];
		char keys[16][LABELS_PROFILE_KEY_MAX]; /* reserved keys renamed */
		size_t nl = 0;
		labels[nl++] = (struct pprof_label){ .key = "pid", .num = en->k.tgid };
		labels[nl++] = (struct pprof_label){ .key = "tid", .num = en->k.tid };
		labels[nl++] = (struct pprof_label){ .key = "comm",
			.str = en->k.tgid == 0 ? "swapper" : (pr && pr->comm[0] ? pr->comm : "[unknown]") };
		if (en->k.label) {
			const struct label_set *ls = pr ? procs__label_set(in->procs, pr, en->k.label) : NULL;

			if (!ls)
				labels[nl++] = (struct pprof_label){ .key = "pmubpf_labels", .str = "[unread]" };
			for (uint32_t j = 0; ls && j < ls->n && j < 16; j++)
				labels[nl++] = (struct pprof_label){ .key = labels__profile_key(ls->pairs[j].key, keys[j]),
								     .str = ls->pairs[j].value };
		}
		int64_t w = (int64_t)((double)en->v.period * scale);
		ret = pprof__add_sample(p, locs, n, (int64_t)en->v.count, w, labels, nl);
		if (ret)
			break;
		if (cfg->top)
			top_add(&top, p, locs, n, w);
	}
	if (st.user_frames || st.kernel_frames)
		pprof__add_comment(p, "symbols: %llu user locations (%llu unnamed, %llu with source lines, %llu with inlined frames, %llu JIT), %llu kernel (%llu unnamed)%s",
				   (unsigned long long)st.user_frames, (unsigned long long)st.user_unknown,
				   (unsigned long long)st.user_lines, (unsigned long long)st.user_inlined,
				   (unsigned long long)st.user_jit, (unsigned long long)st.kernel_frames,
				   (unsigned long long)st.kernel_unknown,
				   cfg->no_symbol ? "; --no-symbol: addresses only" : "");
	if (!ret && d[PMUBPF_DROP_COUNTS_FULL].count) {
		locs[0] = symb__synthetic(p, SYNTH_LOST_COUNTS_FULL);
		ret = pprof__add_sample(p, locs, 1, (int64_t)d[PMUBPF_DROP_COUNTS_FULL].count,
					(int64_t)((double)d[PMUBPF_DROP_COUNTS_FULL].period * scale), NULL, 0);
	}
	report__output_path(cfg, ev, path, sizeof(path));
	if (!ret)
		ret = cfg->format == FORMAT_FOLDED ? pprof__write_folded(p, path, "comm")
						   : pprof__write(p, path);
	if (ret) {
		snprintf(err, errlen, "writing '%s': %s", path, strerror(-ret));
	} else if (in->samples) {
		*in->samples += nsamples;
	}
	if (!ret && !in->quiet) {
		fprintf(stderr, "pmubpf: %s: %llu samples (%zu distinct) -> %s\n", e->name,
			(unsigned long long)nsamples, es->n, path);
		uint64_t lost = d[PMUBPF_DROP_COUNTS_FULL].count;
		if (lost || d[PMUBPF_DROP_USTACK].count || d[PMUBPF_DROP_KSTACK].count)
			fprintf(stderr, "pmubpf: %s: lost %llu samples (counts map full), %llu user and %llu kernel stacks (stacks map full or walk failed)\n",
				e->name, (unsigned long long)lost,
				(unsigned long long)d[PMUBPF_DROP_USTACK].count,
				(unsigned long long)d[PMUBPF_DROP_KSTACK].count);
		if (d[PMUBPF_DROP_NOTICE].count || d[PMUBPF_DROP_LABEL_READ].count)
			fprintf(stderr, "pmubpf: %s: %llu notices lost (ring buffer full), %llu label reads failed\n",
				e->name, (unsigned long long)d[PMUBPF_DROP_NOTICE].count,
				(unsigned long long)d[PMUBPF_DROP_LABEL_READ].count);
		const struct procs_stats *ps = procs__stats(in->procs);
		if (ps->label_bad_records || ps->label_sets_stale || ps->label_sets_bad)
			fprintf(stderr, "pmubpf: %s: labels: %llu records rejected, %llu sets gone before read, %llu malformed\n",
				e->name, (unsigned long long)ps->label_bad_records,
				(unsigned long long)ps->label_sets_stale,
				(unsigned long long)ps->label_sets_bad);
		if (d[PMUBPF_DROP_IDLE].count)
			fprintf(stderr, "pmubpf: %s: left out %llu idle samples (--include-idle keeps them)\n",
				e->name, (unsigned long long)d[PMUBPF_DROP_IDLE].count);
		if (scale > 1.0)
			fprintf(stderr, "pmubpf: %s: multiplexed (ran %.1f%% of the time); weights scaled by %.3f\n",
				e->name, 100.0 / scale, scale);
		if (cfg->top)
			top_print(&top, e->name, e->value_unit, cfg->top);
	}
	free(top.v);
	hashtab__free(top.index);
	pprof__free(p);
	return ret;
}

int report__write_all(const struct report_in *in, char *err, size_t errlen)
{
	struct entries es[PMUBPF_MAX_EVENTS] = { 0 };
	struct stack_cache sc = { .fd = in->stacks_fd };
	int ret;

	sc.index = hashtab__new(stack_eq, &sc);
	if (!sc.index) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = drain_counts(in->counts_fd, in->cfg->nevents, es);
	if (ret)
		snprintf(err, errlen, "reading the counts map: %s", strerror(-ret));
	for (int ev = 0; !ret && ev < in->cfg->nevents; ev++)
		ret = write_event(in, ev, &es[ev], &sc, err, errlen);
	for (int ev = 0; ev < PMUBPF_MAX_EVENTS; ev++)
		free(es[ev].v);
	hashtab__free(sc.index);
	free(sc.v);
	free(sc.keys);
	return ret;
}
