/* dataaddr.c — see dataaddr.h. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "symbols/elfsym.h"
#include "dataaddr.h"
#include "symbolize.h"

/* A global in one of pr's ELF objects. Each object's load bias comes from
 * one of its executable mappings; an address outside the object's
 * segments maps to a vaddr none of its symbols covers, so trying every
 * object is right, not only fast enough (a few per process). */
static const struct elfsym *find_global(struct proc *pr, uint64_t addr, const struct procmap **om,
				       uint64_t *bias)
{
	for (size_t i = 0; pr->objs && i < pr->maps.n; i++) {
		const struct procmap *m = &pr->maps.maps[i];
		struct elfobj *o = pr->objs[i];
		const struct elfsym *s;
		uint64_t v;

		if (!o || (i > 0 && pr->objs[i - 1] == o))
			continue; /* none, or the same object's next mapping */
		if (elfobj__mapping_vaddr(o, m->pgoff, m->end - m->start, &v))
			continue;
		if ((s = elfobj__lookup_data(o, addr - (m->start - v)))) {
			*om = m;
			*bias = m->start - v;
			return s;
		}
	}
	return NULL;
}

uint64_t dataaddr__location(struct pprof *p, struct proc *pr, uint64_t addr, uint64_t n,
			    struct data_stats *st)
{
	const struct procmap *m = NULL, *om = NULL;
	const struct elfsym *g = NULL;
	uint64_t mid, loc, bias = 0;

	if (!addr) {
		st->none += n;
		return symb__synthetic(p, SYNTH_DATA_NONE);
	}
	if (pr) {
		m = procs__data_map(pr, addr);
		g = find_global(pr, addr, &om, &bias);
	}
	if (!m && !g) {
		st->unknown += n;
		return symb__synthetic(p, SYNTH_DATA_UNKNOWN);
	}
	/* The mapping: the data one holding addr (a .bss past its file page
	 * is an anonymous one), else the object's. has_functions: pprof
	 * must not try to symbolize data addresses itself. */
	if (!m)
		m = om;
	const char *kind = m->path[0] ? m->path : "[anon]";
	if (g)
		st->global += n;
	else if (m->path[0] == '/')
		st->file += n;
	else if (!strcmp(kind, "[heap]"))
		st->heap += n;
	else if (!strncmp(kind, "[stack", 6))
		st->stack += n;
	else if (!strcmp(kind, "[anon]") || !strncmp(kind, "[anon:", 6))
		st->anon += n;
	else
		st->other += n;
	mid = pprof__add_mapping(p, m->start, m->end, m->pgoff, kind, NULL, true);
	if (!mid)
		return 0;
	/* A data address equal to a code frame's in the same mapping shares
	 * its location (pprof keys them so): only code read as data. */
	if ((loc = pprof__find_location(p, mid, addr)))
		return loc;
	struct pprof_line line = { .function = kind, .filename = m->path[0] == '/' ? m->path : NULL };
	if (g) { /* the offset into the variable */
		line.function = g->name;
		line.filename = om->path;
		line.line = (int64_t)(addr - bias - g->addr);
	} else if (m->path[0] == '/') {
		line.line = (int64_t)(addr - m->start + m->pgoff);
	} else {
		line.line = (int64_t)(addr - m->start);
	}
	return pprof__add_location(p, mid, addr, &line, 1);
}

void dataaddr__summary(const struct data_stats *st, char *buf, size_t len)
{
	snprintf(buf, len, "data addresses (samples): %" PRIu64 " globals, %" PRIu64 " mapped files, %" PRIu64 " [heap], %" PRIu64 " [stack], %" PRIu64 " anonymous, %" PRIu64 " other mappings, %" PRIu64 " in no known mapping, %" PRIu64 " without an address",
		 st->global, st->file, st->heap, st->stack, st->anon, st->other, st->unknown, st->none);
}
