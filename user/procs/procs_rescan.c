/* procs_rescan.c — a live process's maps read again and merged into its
 * snapshot (libraries mapped since: the 20 ms / 200 ms / 2 s / 10 s
 * safety net, and mmap reports), and its maps made final once it is
 * gone. Its first read is procs_read.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/clock.h"
#include "procs.h"
#include "procs_int.h"
#include "procsyms.h"

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
								     : procs_open_obj(p, pr, &fresh->maps[i]);
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
void procs_gone(struct procs *p, struct proc *pr)
{
	size_t n = pr->reported.n;
	bool first = !pr->dead;

	procs_set_dead(pr);
	pr->next_rescan = INT64_MAX;
	pr->report_due = 0;
	if (n && merge_maps(p, pr, &pr->reported) == 0)
		p->st.maps_from_reports += n;
	procmaps__free(&pr->reported);
	/* Once: what was held for it while it lived (its unwind slot) goes. */
	if (first && pr->snapshotted && p->maps_hook)
		p->maps_hook(p->maps_hook_ctx, pr);
}

/* Is a read of pr's maps of pr's image? Its executable stays mapped
 * where every read of that image found it (an exec maps the new one
 * elsewhere, or a new program); unknown (no main mapping seen, or an
 * executable whose /proc/PID/exe inode differs from its mapping's, as
 * on overlayfs): yes. */
static bool same_image(const struct proc *pr, const struct procmaps *fresh)
{
	const struct procmap *m = procs__main_map(pr);

	if (!m)
		return true;
	for (size_t i = 0; i < fresh->n; i++)
		if (fresh->maps[i].start == m->start && fresh->maps[i].inode == m->inode)
			return true;
	return false;
}

/* Read pr's maps again and merge them. scheduled: the 20 ms / 200 ms /
 * 2 s / 10 s safety net (advances it), else for mmap reports. */
int procs_rescan(struct procs *p, struct proc *pr, bool scheduled)
{
	struct procmaps fresh = { 0 };
	int err;

	if (scheduled)
		pr->next_rescan = mono_ns() + procs_rescan_delay(++pr->rescans);
	pr->report_due = 0;
	if (pr->dead || !procs_same_generation(p, pr)) {
		procs_gone(p, pr);
		return -ESRCH;
	}
	err = procs_read_maps(pr, true, &fresh);
	/* Read in the middle of an exec, past its point of no return and
	 * before BPF hears it is done: the maps are the new image's while
	 * BPF's generation is still pr's. Merged, they put the new image's
	 * mappings into pr and dropped the reports of pr's own (an exec_work
	 * read as it exec'd /bin/true lost its libc: 2% of its samples
	 * unnamed under qemu, where an exec's loading takes long). pr is
	 * gone then, its reports merged. */
	if (!err && (!procs_same_generation(p, pr) || !same_image(pr, &fresh))) {
		procmaps__free(&fresh);
		err = -ESRCH;
	}
	if (err) {
		procs_gone(p, pr);
		return err;
	}
	procmaps__free(&pr->reported); /* the fresh read has them */
	if (p->data_maps)
		procs_datamaps_read(pr);
	procsyms__jit_refresh(pr);
	procs_note_jit_refusal(p, pr);
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
			procs_rescan(p, p->v[i], false);
}
