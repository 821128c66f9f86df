/* symbolize.c — see symbolize.h. Locations are deduplicated by pprof
 * (mapping, address) before any symbol lookup, so each distinct address
 * of a profile is resolved once. */
#include <stdio.h>
#include "symbolize.h"

#define KERNEL_MAPPING_NAME "[kernel.kallsyms]"

uint64_t symb__user(struct pprof *p, struct proc *pr, uint64_t ip, bool leaf,
		    struct symb_stats *st)
{
	const struct procmap *m = pr ? procmaps__find(&pr->maps, ip) : NULL;
	struct elfobj *obj = NULL;
	uint64_t mid = 0, loc, vaddr;
	const struct elfsym *sym = NULL;

	if (m) {
		obj = pr->objs[m - pr->maps.maps];
		mid = pprof__add_mapping(p, m->start, m->end, m->pgoff, m->path,
					 obj ? elfobj__build_id(obj) : NULL, obj != NULL);
	}
	loc = pprof__find_location(p, mid, ip);
	if (loc)
		return loc;
	if (obj) {
		uint64_t off = (leaf ? ip : ip - 1) - m->start + m->pgoff;

		if (!elfobj__offset_to_vaddr(obj, off, &vaddr))
			sym = elfobj__lookup(obj, vaddr);
	}
	st->user_frames++;
	if (!sym) {
		st->user_unknown++;
		return pprof__add_location(p, mid, ip, NULL, 0);
	}
	struct pprof_line line = { .function = sym->name };
	return pprof__add_location(p, mid, ip, &line, 1);
}

static uint64_t kernel_mapping(struct pprof *p, const struct ksyms *ks)
{
	/* One mapping for the kernel and its modules; pprof needs one so
	 * that the frames are not taken for unsymbolized user code. */
	return pprof__add_mapping(p, 0xffff800000000000ULL, UINT64_MAX, 0,
				  KERNEL_MAPPING_NAME, NULL, ks != NULL);
}

uint64_t symb__kernel(struct pprof *p, const struct ksyms *ks, uint64_t ip,
		      bool leaf, struct symb_stats *st)
{
	uint64_t mid = kernel_mapping(p, ks), loc;
	const struct ksym *k;
	char modfile[80];

	loc = pprof__find_location(p, mid, ip);
	if (loc)
		return loc;
	st->kernel_frames++;
	k = ks ? ksyms__lookup(ks, leaf ? ip : ip - 1) : NULL;
	if (!k) {
		st->kernel_unknown++;
		return pprof__add_location(p, mid, ip, NULL, 0);
	}
	struct pprof_line line = { .function = k->name };
	if (k->module) {
		snprintf(modfile, sizeof(modfile), "[%s]", k->module);
		line.filename = modfile;
	}
	return pprof__add_location(p, mid, ip, &line, 1);
}

static const char *const synth_names[SYNTH__MAX] = {
	[SYNTH_LOST_COUNTS_FULL] = "[lost: counts map full]",
	[SYNTH_LOST_USTACK_FULL] = "[lost: user stack (stacks map full)]",
	[SYNTH_LOST_USTACK_ERROR] = "[lost: user stack (walk failed)]",
	[SYNTH_LOST_KSTACK_FULL] = "[lost: kernel stack (stacks map full)]",
	[SYNTH_LOST_KSTACK_ERROR] = "[lost: kernel stack (walk failed)]",
	[SYNTH_NO_STACK] = "[no stack]",
};

uint64_t symb__synthetic(struct pprof *p, enum symb_synth what)
{
	/* Mapping 0 holds only these, at fake addresses 1, 2, ...: pprof
	 * keys locations by (mapping, address). */
	uint64_t addr = (uint64_t)what + 1, loc;

	if (what >= SYNTH__MAX)
		return 0;
	loc = pprof__find_location(p, 0, addr);
	if (loc)
		return loc;
	struct pprof_line line = { .function = synth_names[what] };
	return pprof__add_location(p, 0, addr, &line, 1);
}
