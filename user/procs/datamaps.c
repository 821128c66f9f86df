/* datamaps.c — --data-addr: every mapping of a process, not only the
 * executable ones procs.c keeps for code.
 *
 * A data address lands in the heap, a stack, an anonymous mapping (a
 * large malloc, a .bss past its file page), or a mapped data file: the
 * data profile names it by that mapping (report/dataaddr.c). Read with
 * the executable maps (first sight, each re-read: the scheduled ones and
 * those the kernel's mmap reports ask for, which --data-addr extends to
 * data mappings) and merged the same way: mappings gone since are kept,
 * since samples taken while they existed may point into them, unless a
 * newer mapping overlaps them. At most DATAMAPS_MAX per process: a
 * process with more keeps the newest read whole and drops old ones.
 */
#include <stdlib.h>
#include <string.h>
#include "procs.h"
#include "procs_int.h"

#define DATAMAPS_MAX 65536

void procs__set_data_maps(struct procs *p, bool on)
{
	p->data_maps = on;
}

const struct procmap *procs__data_map(const struct proc *pr, uint64_t addr)
{
	return procmaps__find(&pr->data_maps, addr);
}

static int cmp_start(const void *a, const void *b)
{
	const struct procmap *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

void procs_datamaps_read(struct proc *pr)
{
	struct procmaps fresh = { 0 }, *old = &pr->data_maps;
	struct procmap *all;
	size_t k;

	if (procs_read_maps(pr, false, &fresh) || !fresh.n) {
		procmaps__free(&fresh);
		return;
	}
	all = calloc(fresh.n + old->n, sizeof(*all));
	if (!all) {
		procmaps__free(&fresh);
		return;
	}
	memcpy(all, fresh.maps, fresh.n * sizeof(*all));
	k = fresh.n;
	for (size_t i = 0; i < old->n; i++) {
		const struct procmap *o = &old->maps[i];
		/* fresh is sorted: the first mapping ending after o starts. */
		size_t lo = 0, hi = fresh.n;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (fresh.maps[mid].end <= o->start)
				lo = mid + 1;
			else
				hi = mid;
		}
		if ((lo < fresh.n && fresh.maps[lo].start < o->end) || k >= DATAMAPS_MAX) {
			free(o->path);
			continue;
		}
		all[k++] = *o;
	}
	qsort(all, k, sizeof(*all), cmp_start);
	free(old->maps);
	free(fresh.maps); /* paths moved into all */
	old->maps = all;
	old->n = k;
}
