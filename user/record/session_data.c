/* session_data.c — what a session's recording yields, apart from its
 * life (session.c): the notices taken while it runs, a window drained,
 * the inputs the profile writers ask for (report_in with the kernel
 * symbols, totals, sizes, symbol cache stats), and the forgetting of what
 * no window still holds (gc). Calls nothing in session.c.
 */
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/clock.h"
#include "symbols/debuginfo.h"
#include "symbols/elfsym.h"
#include "symbols/ksyms.h"
#include "procs/mmapwatch.h"
#include "perf/perfev.h"
#include "pmubpf.skel.h"
#include "procs/procs.h"
#include "report/drain.h"
#include "report/report.h"
#include "session.h"
#include "images.h"
#include "ksymnames.h"
#include "session_int.h"
#include "offcpu.h"
#include "windows.h"
#include "perf/timekeeper.h"
#include "unwind/unwind.h"

/* Kernel symbols for building profiles: the snapshot read at start; a
 * recording of many windows re-reads it every 10 minutes (modules come
 * and go). NULL with a warning once if unavailable. */
#define KSYMS_REFRESH_NS (600 * 1000000000LL)
static struct ksyms *kernel_symbols(struct session *s)
{
	if (s->cfg->no_kernel)
		return NULL;
	if (s->kload) {
		s->ks = ksyms__join(s->kload);
		s->kload = NULL;
		s->ks_loaded = mono_ns();
		if (!s->ks)
			fprintf(stderr, "pmubpf: warning: kernel symbols unavailable (%s): kernel frames stay addresses\n",
				strerror(errno));
	} else if (s->ks && !s->stopped && mono_ns() - s->ks_loaded > KSYMS_REFRESH_NS) {
		struct ksyms *k = ksyms__load("/proc/kallsyms");

		s->ks_loaded = mono_ns();
		if (k) {
			ksyms__free(s->ks);
			s->ks = k;
		}
	}
	return s->ks;
}

void session__report_in(struct session *s, const struct session_span *span, struct report_in *in)
{
	const struct config *cfg = s->cfg;

	if (!s->stopped)
		timekeeper__stats(s->tk, &s->tk_st);
	*in = (struct report_in){
		.cfg = cfg,
		.data = s->win.data,
		.procs = s->procs,
		.ksyms = s->kn ? NULL : kernel_symbols(s),
		.kname = s->kn ? ksymnames__table : NULL,
		.kname_ctx = s->kn,
		.time_nanos = span->start_wall,
		.duration_nanos = span->duration,
		.stack_map_size = s->stack_entries,
		.counts_map_size = s->count_entries,
		.timer = &s->tk_st,
		.command_pid = s->cmd.pid,
		.quiet = s->quiet,
	};
	if (s->uw) {
		unwind__stats(s->uw, &s->uw_st);
		in->unwind = &s->uw_st;
	}
	for (int e = 0; e < cfg->nevents; e++) {
		perfev__times(s->pev, e, &in->enabled[e], &in->running[e]);
		perfev__throttled(s->pev, e, &in->throttles[e], &in->throttled_ns[e],
				  &in->throttles_unseen[e]);
		in->throttle_unwatched[e] = perfev__throttle_unwatched(s->pev, e);
	}
	in->max_sample_rate = perfev__max_sample_rate();
}

size_t session__gc(struct session *s, int64_t before, size_t *tracked)
{
	/* Label sets no window since `before` used: retired, then freed
	 * (procs.h); before the processes, whose sets go with them. */
	procs__labels_gc(s->procs, before, mono_ns());
	size_t n = procs__gc(s->procs, before);

	/* Then the ELF objects no remembered process maps (the most recently
	 * used SYMCACHE_IDLE_KEEP stay), with their DWARF, and the debug
	 * files only those used. Their unwind tables stay in BPF, keyed by
	 * what the object is: one read again finds its rows. */
	symcache__mark_begin(s->sc);
	procs__mark_objects(s->procs);
	symcache__sweep(s->sc, SYMCACHE_IDLE_KEEP);
	debuginfo__sweep(s->dbg, s->sc);
	if (tracked)
		*tracked = procs__count(s->procs);
	return n;
}

void session__symcache_stats(const struct session *s, struct symcache_stats *st)
{
	symcache__stats(s->sc, st);
}

int session__totals(struct session *s, int ev, uint64_t *count, uint64_t *period)
{
	struct pmubpf_drop_val *v = calloc(s->win.nr_cpus, sizeof(*v));
	uint32_t key = (uint32_t)ev;
	int err = 0;

	*count = *period = 0;
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.totals), &key, v))
		err = -errno;
	for (int c = 0; !err && c < s->win.nr_cpus; c++) {
		*count += v[c].count;
		*period += v[c].period;
	}
	free(v);
	return err;
}

void session__say_totals(struct session *s, int windows)
{
	/* What the windows add up to: each sample is in exactly one of them
	 * (as a sample, a lost one, or an idle one left out). */
	for (int ev = 0; ev < s->cfg->nevents; ev++) {
		uint64_t n, period;

		if (!session__totals(s, ev, &n, &period))
			fprintf(stderr, "pmubpf: %s: %llu samples taken in all windows (%d windows)\n",
				s->cfg->events[ev].name, (unsigned long long)n, windows);
	}
}

void session__sizes(struct session *s, struct session_sizes *z)
{
	struct symcache_stats sc = { 0 };

	if (s->sc)
		symcache__stats(s->sc, &sc);
	*z = (struct session_sizes){
		.procs = s->procs ? procs__count(s->procs) : 0,
		.symcache_objects = sc.objects, .symcache_bytes = sc.bytes,
		.symcache_hits = sc.hits, .symcache_evicted = sc.evicted,
		.stack_entries = s->stack_entries, .count_entries = s->count_entries,
	};
	if (s->uw) {
		struct unwind_stats us;

		unwind__stats(s->uw, &us);
		z->unwind_objects = us.objects;
		z->unwind_objects_full = us.objects_full;
		z->unwind_build_ns = us.build_ns;
	}
	if (s->procs) {
		const struct procs_stats *ps = procs__stats(s->procs);

		z->label_sets = procs__label_sets_held(s->procs);
		z->label_bytes = ps->label_bytes;
		z->label_sets_read = ps->label_sets + ps->flabel_sets;
		z->label_sets_over = ps->label_sets_over;
		z->label_sets_forgotten = ps->label_sets_forgotten;
		z->cgroups_named = ps->cgroups_named;
		z->cgroups_unnamed = ps->cgroups_unnamed;
		z->proc_notices = ps->notices;
		z->proc_maps_reads = ps->maps_reads;
		z->proc_gone = ps->gone;
		z->proc_over_cap = ps->over_cap;
		z->reports_lost = ps->reports_lost;
		z->image_maps_lost = ps->image_maps_lost;
		z->objs_unreadable = ps->objs_unreadable;
	}
	if (!s->skel)
		return;
	z->prog_fd[z->nprogs] = bpf_program__fd(s->skel->progs.on_sample);
	z->prog_name[z->nprogs++] = "on_sample";
	if (s->has_tp) {
		z->prog_fd[z->nprogs] = bpf_program__fd(s->skel->progs.on_tracepoint);
		z->prog_name[z->nprogs++] = "on_tracepoint";
	}
	if (s->offcpu) {
		z->prog_fd[z->nprogs] = bpf_program__fd(s->skel->progs.on_switch);
		z->prog_name[z->nprogs++] = "on_switch";
	}
}

/* The label sets d's samples name are in use up to `end` (procs.h:
 * procs__labels_gc forgets the others). */
static void mark_labels_used(struct session *s, const struct report_data *d, int64_t end)
{
	for (int e = 0; e < s->cfg->nevents; e++) {
		const struct report_event *evs[2] = { &d->ev[e], &d->data[e] };

		for (int w = 0; w < 2; w++)
			for (size_t i = 0; i < evs[w]->n; i++) {
				const struct pmubpf_key *k = &evs[w]->v[i].k;

				if (k->label)
					procs__labels_used(s->procs, k->tgid, k->pgen, k->label, end);
			}
	}
}

int session__drain_window(struct session *s, struct report_data *d, struct session_span *span)
{
	struct report_maps m = { .drops_fd = s->win.drops_fd, .nr_cpus = s->win.nr_cpus,
				 .nevents = s->cfg->nevents, .data = s->win.data };
	int64_t now = mono_ns(), now_wall = clock_ns(CLOCK_REALTIME);
	uint32_t closed;
	int err;

	if (s->stopped) { /* sampling is over: the window under way is the last */
		closed = __atomic_load_n(s->win.window, __ATOMIC_ACQUIRE) & 1;
		now = s->t0 + s->duration;
		now_wall = s->t0_wall + s->duration;
	} else if (offcpu__flush(s->skel, now, true)) {
		/* the waits under way, up to the window's end: exact windows */
		return session_fail(s, "counting the off-CPU waits under way: %s", strerror(errno));
	} else if (windows__flip(&s->win, &closed, s->err, sizeof(s->err))) {
		return -1;
	}
	s->full = false; /* the window now under way is empty */
	/* Notices of the closed window's samples (new processes, label
	 * sets) before its entries are looked up. */
	session__take_notices(s);
	procs__read_waiting(s->procs); /* the window's profile may be built now */
	if (s->images) { /* for the window's profile (its `images:` comment) */
		uint64_t st[PMUBPF_IMAGE_NSTATS];

		if (!images__stats(bpf_map__fd(s->skel->maps.image_stats), s->win.nr_cpus, st))
			procs__set_image_maps_lost(s->procs, st[PMUBPF_IMAGE_LOST]);
	}
	span->start_wall = s->win_start_wall;
	span->duration = now - s->win_start;
	span->end = now;
	s->win_start = now;
	s->win_start_wall = now_wall;
	m.counts_fd = s->win.counts_fd[closed];
	m.stacks_fd = s->win.stacks_fd[closed];
	m.data_fd = s->win.data_fd[closed];
	m.window = closed;
	/* Emptied as read, for the window's next turn; not the last window,
	 * whose maps go with the BPF object. */
	m.empty = !s->stopped;
	if (report__drain(&m, d, s->err, sizeof(s->err)))
		return -1;
	mark_labels_used(s, d, now);
	if (s->stopped)
		return 0;
	err = windows__clear(&s->win, closed);
	if (err)
		return session_fail(s, "emptying the maps of a closed window: %s", strerror(-err));
	return 0;
}

int session__take_notices(struct session *s)
{
	int n;

	/* The kernel's mmap reports before and after: a notice's process is
	 * put together from them if gone (a notice may also name a process
	 * whose library a report says to read), and the reports written
	 * while a long batch of notices was read (new processes, sampled
	 * meanwhile) are in before procs__settle decides on those gone. */
	if (s->mw)
		mmapwatch__consume(s->mw);
	n = ring_buffer__consume(s->rb);
	if (s->mw)
		mmapwatch__consume(s->mw);
	procs__settle(s->procs);
	/* Is the window under way's stacks map half full? Then its driver
	 * drains it before its time (the other half takes what comes in
	 * before it does: a loop step is at most 100 ms). Asked at most
	 * every 50 ms, not at each of the ~150 wakeups a second churn
	 * brings: the read is a syscall that was a fifth of the loop's CPU
	 * on a VM whose syscalls are slow. Read at the first step 50 ms
	 * after the last read, the fill is still seen within 100 ms of
	 * crossing half, as before (the steps' longest gap). */
	uint64_t stored;
	int64_t now = mono_ns();

	if (s->windowed && !s->stopped && now - s->full_asked >= SESSION_FULL_ASK_NS) {
		s->full_asked = now;
		if (!windows__stacks_stored(&s->win, __atomic_load_n(s->win.window, __ATOMIC_ACQUIRE),
					    &stored))
			s->full = stored > s->stack_entries / 2;
	}
	return n;
}

bool session__window_full(const struct session *s)
{
	return s->full;
}
