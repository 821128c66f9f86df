/* symbolize.c — see symbolize.h. Locations are deduplicated by pprof
 * (mapping, address) before any symbol lookup, so each distinct address
 * of a profile is resolved once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/debuginfo.h"
#include "symbols/demangle.h"
#include "symbols/dwarf.h"
#include "procs/procsyms.h"
#include "lib/grow.h"
#include "lib/hashtab.h"
#include "symbolize.h"

#define KERNEL_MAPPING_NAME "[kernel.kallsyms]"
#define PATH_MAX_NAME 300 /* a file name (NAME_MAX) and "+0x" and 16 digits */

static struct symb_options opts;

void symb__set_options(const struct symb_options *o)
{
	opts = *o;
}

/* Lines of a DWARF answer; names demangled into *owned (freed by the
 * caller). The outermost frame falls back to sym's name. */
static size_t dwarf_lines(const struct dwarf_frame *f, int n, const struct elfsym *sym,
			  struct pprof_line *out, char **owned)
{
	size_t k = 0;

	for (int i = 0; i < n; i++) {
		const char *mangled = f[i].linkage_name ? f[i].linkage_name
				    : (!f[i].name && i == n - 1 && sym) ? sym->name : NULL;
		char *dem = demangle(mangled);
		const char *name = dem ? dem : mangled ? mangled : f[i].name;

		owned[i] = dem;
		out[k++] = (struct pprof_line){
			.function = name ? name : "??",
			.system_name = dem ? mangled : NULL,
			.filename = f[i].file ? f[i].file : f[i].decl_file,
			.line = f[i].line,
			.start_line = f[i].decl_line,
		};
	}
	return k;
}

/* A frame in JIT code named by the process's perf map. */
static uint64_t jit_location(struct pprof *p, struct proc *pr, const struct procmap *m,
			     uint64_t ip, const struct perfmap_sym *js, struct symb_stats *st)
{
	char file[64];
	uint64_t mid, loc;

	snprintf(file, sizeof(file), "/tmp/perf-%u.map", pr->jit_src.nspid);
	mid = m ? pprof__add_mapping(p, m->start, m->end, m->pgoff, m->path, NULL, true)
		: pprof__add_mapping(p, js->start, js->start + js->size, 0, file, NULL, true);
	if ((loc = pprof__find_location(p, mid, ip)))
		return loc;
	st->user_frames++;
	st->user_jit++;
	struct pprof_line line = { .function = js->name };
	return pprof__add_location(p, mid, ip, &line, 1);
}

/* Is m's file loaded away from where it was linked (a PIE or a shared
 * library, ASLR'd), so that each process has it at its own addresses? */
static bool relocated(const struct elfobj *obj, const struct procmap *m)
{
	uint64_t vaddr;

	return !elfobj__mapping_vaddr(obj, m->pgoff, m->end - m->start, &vaddr) && vaddr != m->start;
}

uint64_t symb__place(struct pprof *p, struct proc *pr, const struct procmap *m, uint64_t ip,
		     uint64_t *addr)
{
	struct elfobj *obj = pr->objs ? pr->objs[m - pr->maps.maps] : NULL;
	const char *bid = obj ? elfobj__build_id(obj) : NULL;

	if (!opts.no_symbol && bid && *bid && m->path[0] == '/' && relocated(obj, m)) {
		*addr = ip - m->start + m->pgoff;
		return pprof__add_mapping(p, m->pgoff, m->pgoff + (m->end - m->start), m->pgoff,
					  m->path, bid, true);
	}
	*addr = ip;
	return pprof__add_mapping(p, m->start, m->end, m->pgoff, m->path, bid,
				  obj != NULL && !opts.no_symbol);
}

uint64_t symb__mapping(struct pprof *p, struct proc *pr, const struct procmap *m)
{
	uint64_t addr;

	return symb__place(p, pr, m, m->start, &addr);
}

/* A name for a frame no symbol covers, so that viewers which drop
 * nameless frames (speedscope) keep it: "libc.so.6+0x2a3f0", the file
 * offset in the mapping's file; "[anon]+0xADDR" or "[unknown]+0xADDR"
 * (the address) where there is no file. */
static void address_name(const struct procmap *m, uint64_t ip, char *buf, size_t len)
{
	const char *base;

	if (!m) {
		snprintf(buf, len, "[unknown]+0x%llx", (unsigned long long)ip);
		return;
	}
	if (!m->path[0] || m->path[0] == '[') {
		snprintf(buf, len, "%s+0x%llx", m->path[0] ? m->path : "[anon]",
			 (unsigned long long)ip);
		return;
	}
	base = strrchr(m->path, '/');
	snprintf(buf, len, "%s+0x%llx", base ? base + 1 : m->path,
		 (unsigned long long)(ip - m->start + m->pgoff));
}

struct memo_ent {
	const struct elfobj *obj;
	uint64_t vaddr, loc;
	bool line, inlined; /* counted again in the stats for each location */
};
struct symb_memo {
	struct hashtab *index; /* (obj, vaddr) -> index in v */
	struct memo_ent *v;
	size_t n, cap;
};

static uint64_t memo_hash(const struct elfobj *obj, uint64_t vaddr)
{
	return hashtab__hash_mix(hashtab__hash_u64((uint64_t)(uintptr_t)obj), vaddr);
}

static bool memo_eq(const void *key, uint64_t idx, void *ctx)
{
	const struct memo_ent *k = key, *e = &((struct symb_memo *)ctx)->v[idx];

	return e->obj == k->obj && e->vaddr == k->vaddr;
}

/* A location of this profile already named for (obj, vaddr), or NULL. */
static const struct memo_ent *memo_find(struct symb_stats *st, const struct elfobj *obj,
					uint64_t vaddr)
{
	struct memo_ent k = { obj, vaddr, 0, false, false };
	uint64_t idx;

	if (!st->memo || !hashtab__find(st->memo->index, memo_hash(obj, vaddr), &k, &idx))
		return NULL;
	return &st->memo->v[idx];
}

/* Remember loc for (obj, vaddr); out of memory, nothing is (it is only
 * a shortcut). */
static void memo_add(struct symb_stats *st, const struct elfobj *obj, uint64_t vaddr, uint64_t loc,
		     bool line, bool inlined)
{
	struct symb_memo *m = st->memo;

	if (!m) {
		if (!(m = calloc(1, sizeof(*m))))
			return;
		if (!(m->index = hashtab__new(memo_eq, m))) {
			free(m);
			return;
		}
		st->memo = m;
	}
	if (GROW(m->v, m->cap, m->n, 1) || hashtab__insert(m->index, memo_hash(obj, vaddr), m->n))
		return;
	m->v[m->n++] = (struct memo_ent){ obj, vaddr, loc, line, inlined };
}

void symb__done(struct symb_stats *st)
{
	if (!st->memo)
		return;
	hashtab__free(st->memo->index);
	free(st->memo->v);
	free(st->memo);
	st->memo = NULL;
}

struct elfobj *symb__object(struct proc *pr, uint64_t ip, const struct procmap **mp)
{
	const struct procmap *m = pr ? procmaps__find(&pr->maps, ip) : NULL;

	if (mp)
		*mp = m;
	return m && pr->objs ? pr->objs[m - pr->maps.maps] : NULL;
}

uint64_t symb__user(struct pprof *p, struct proc *pr, uint64_t ip, bool leaf,
		    struct symb_stats *st)
{
	const struct procmap *m;
	struct elfobj *obj = symb__object(pr, leaf ? ip : ip - 1, &m); /* the call's mapping */
	/* A caller's frame is its return address: named, and kept as a
	 * location, at the call (ip - 1), as profile.proto has it ("a
	 * non-leaf address may be in the middle of a call instruction").
	 * Kept at ip, a return address that was also a sampled pc (a
	 * function's first byte, where qemu's interrupts land, with the
	 * comparator's address on qsort's stack taken for a frame) named
	 * the leaf's samples after the function before it: hot_compare's
	 * came out as frame_dummy. */
	uint64_t mid = 0, loc, vaddr, pc = leaf ? ip : ip - 1, addr = pc;
	const struct elfsym *sym = NULL;
	struct dwarf_frame frames[DWARF_MAX_FRAMES];
	struct pprof_line lines[DWARF_MAX_FRAMES];
	char *owned[DWARF_MAX_FRAMES] = { 0 };
	int nframes = 0;
	size_t nlines = 0;

	if (!obj && pr && !opts.no_symbol &&
	    (!m || !m->path[0] || !strncmp(m->path, "[anon", 5))) {
		/* Anonymous executable memory, or mapped after the last read. */
		const struct perfmap_sym *js = procsyms__jit_lookup(pr, pc);

		if (js)
			return jit_location(p, pr, m, pc, js, st);
	}
	if (m)
		mid = symb__place(p, pr, m, pc, &addr);
	loc = pprof__find_location(p, mid, addr);
	if (loc)
		return loc;
	st->user_frames++;
	if (opts.no_symbol)
		return pprof__add_location(p, mid, addr, NULL, 0);
	if (obj) {
		uint64_t off = pc - m->start + m->pgoff;

		if (!elfobj__offset_to_vaddr(obj, off, &vaddr)) {
			const struct memo_ent *like = memo_find(st, obj, vaddr);

			if (like && (loc = pprof__add_location_like(p, mid, addr, like->loc))) {
				st->user_same++;
				st->user_lines += like->line;
				st->user_inlined += like->inlined;
				return loc;
			}
			nframes = dwarf__lookup(debuginfo__dwarf(obj), vaddr, frames,
						DWARF_MAX_FRAMES);
			sym = debuginfo__symbol(obj, vaddr);
		} else {
			obj = NULL; /* nothing to remember it by */
		}
	}
	if (nframes > 0) {
		nlines = dwarf_lines(frames, nframes, sym, lines, owned);
		st->user_lines += frames[0].line > 0;
		st->user_inlined += nframes > 1;
	} else if (sym) {
		owned[0] = demangle(sym->name);
		lines[0] = (struct pprof_line){ .function = owned[0] ? owned[0] : sym->name,
						.system_name = owned[0] ? sym->name : NULL };
		nlines = 1;
	}
	char anon[PATH_MAX_NAME];
	if (!nlines) {
		st->user_unknown++;
		address_name(m, pc, anon, sizeof(anon)); /* at the location's address */
		lines[0] = (struct pprof_line){ .function = anon };
		nlines = 1;
	}
	loc = pprof__add_location(p, mid, addr, lines, nlines);
	for (int i = 0; i < DWARF_MAX_FRAMES; i++)
		free(owned[i]);
	if (loc && obj && lines[0].function != anon)
		memo_add(st, obj, vaddr, loc, nframes > 0 && frames[0].line > 0, nframes > 1);
	return loc;
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
	const struct ksym *k;
	char modfile[80];
	uint64_t mid, loc;

	if (opts.no_symbol)
		ks = NULL; /* addresses only, like user frames */
	mid = kernel_mapping(p, ks);
	ip = leaf ? ip : ip - 1; /* a caller's: at its call, as in symb__user */
	loc = pprof__find_location(p, mid, ip);
	if (loc)
		return loc;
	st->kernel_frames++;
	k = ks ? ksyms__lookup(ks, ip) : NULL;
	if (!k) {
		char name[64];
		struct pprof_line line = { .function = name };

		st->kernel_unknown++;
		if (opts.no_symbol)
			return pprof__add_location(p, mid, ip, NULL, 0);
		/* Named for viewers that drop nameless frames; the kernel
		 * "file" is its address space, so the offset is the address. */
		snprintf(name, sizeof(name), KERNEL_MAPPING_NAME "+0x%llx", (unsigned long long)ip);
		return pprof__add_location(p, mid, ip, &line, 1);
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
	[SYNTH_LOST_DATA_FULL] = "[lost: data map full]",
	[SYNTH_DATA_NONE] = "[no address]",
	[SYNTH_DATA_UNKNOWN] = "[unknown]",
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
