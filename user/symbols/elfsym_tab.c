/* elfsym_tab.c — an ELF object's symbol tables: read from .symtab (else
 * .dynsym), sorted, searched by address and by name.
 *
 * Symbolization, the step after elfsym.c has turned a file offset into a
 * link-time address: the symbol covering that address. Tables are read on
 * an object's first lookup (elfsym_load_syms), copied out of libelf's
 * buffers into one block of names, and kept in two arrays: code, one
 * symbol per address (the preferred alias), for lookups by address; data,
 * TLS and the other aliases, for lookups by name only.
 *
 * The tables are untrusted: string indices, section links and counts are
 * checked, and symbols per object and memory over the whole cache capped.
 */
#include "elfsym.h"
#include "elfsym_int.h"
#include "lib/sorted.h"

#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BYTES       (1ULL << 30) /* symbol memory, whole cache */
#define MAX_OBJ_SYMS    (1u << 22) /* symbols kept per object */
#define NESTED_WALK     4          /* lower symbols tried when one misses */
#define DUP_WINDOW      8          /* same-address symbols checked for dups */

/* A symbol being collected: name points into libelf's string table. */
struct cand {
	uint64_t addr, size;
	const char *name;
	size_t len;
	uint32_t seq;
	uint8_t type, bind;
};

static bool is_code(uint8_t type)
{
	return type == STT_FUNC || type == STT_GNU_IFUNC;
}

/* --- symbols ------------------------------------------------------------ */

static Elf_Scn *find_section(Elf *elf, uint32_t type)
{
	Elf_Scn *scn = NULL;

	for (size_t i = 0; i < MAX_HEADERS && (scn = elf_nextscn(elf, scn)); i++) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	}
	return NULL;
}

/* Append the wanted symbols of one table to *v. Returns the number of code
 * symbols added, or -1 on allocation failure. */
static long collect(Elf *elf, uint32_t sec_type, struct cand **v, size_t *n,
		    size_t *cap)
{
	Elf_Scn *scn = find_section(elf, sec_type), *strscn;
	GElf_Shdr sh, strsh;
	Elf_Data *d, *sd;
	long ncode = 0;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_link == 0 ||
	    !(strscn = elf_getscn(elf, sh.sh_link)) ||
	    !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
		return 0;
	d = elf_getdata(scn, NULL);
	sd = elf_getdata(strscn, NULL);
	size_t entsz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!d || !d->d_buf || !sd || !sd->d_buf || !sd->d_size || !entsz)
		return 0;
	const char *strs = sd->d_buf;
	size_t strsz = sd->d_size, nent = d->d_size / entsz;

	for (size_t i = 1; i < nent && i < INT_MAX && *n < MAX_OBJ_SYMS; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s))
			break;
		uint8_t type = GELF_ST_TYPE(s.st_info);
		if (s.st_shndx == SHN_UNDEF || s.st_name == 0 || s.st_name >= strsz)
			continue;
		/* TLS values are offsets into the TLS block: 0 is fine. */
		if (type != STT_TLS && (!s.st_value || !(is_code(type) || type == STT_OBJECT)))
			continue;
		const char *name = strs + s.st_name;
		const char *nul = memchr(name, '\0', strsz - s.st_name);
		if (!nul || nul == name)
			continue;
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 1024;
			struct cand *nv = realloc(*v, ncap * sizeof(*nv));
			if (!nv)
				return -1;
			*v = nv;
			*cap = ncap;
		}
		uint32_t seq = (uint32_t)*n;
		(*v)[seq] = (struct cand){ s.st_value, s.st_size, name,
			(size_t)(nul - name), seq, type, GELF_ST_BIND(s.st_info) };
		(*n)++;
		ncode += is_code(type);
	}
	return ncode;
}

static int bind_rank(uint8_t bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : bind == STB_LOCAL ? 2 : 3;
}

/* Code first, by address; at one address the preferred symbol first:
 * global over weak over local, sized over unsized, then table order. */
static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	int cx = !is_code(x->type), cy = !is_code(y->type);

	if (cx != cy)
		return cx - cy;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (bind_rank(x->bind) != bind_rank(y->bind))
		return bind_rank(x->bind) - bind_rank(y->bind);
	if (!x->size != !y->size)
		return !x->size - !y->size;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void put(struct elfsym *dst, const struct cand *c, char **names)
{
	memcpy(*names, c->name, c->len + 1);
	*dst = (struct elfsym){ c->addr, c->size, *names, c->type, c->bind };
	*names += c->len + 1;
}

/* Sort and split the candidates into o->syms and o->other, copying names
 * into one block. Returns false if over the memory budget or out of it. */
static bool build_tables(struct symcache *c, struct elfobj *o, struct cand *v,
			 size_t n)
{
	size_t nsyms = 0, nother = 0, nbytes = 0;

	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_cand);
	/* Count what each table will hold; mark exact duplicates (same
	 * address and name, looked for among a few predecessors so that a
	 * hostile run of one address stays linear) with len = SIZE_MAX. */
	for (size_t i = 0; i < n; i++) {
		bool code = is_code(v[i].type);
		bool head = !code || i == 0 || !is_code(v[i - 1].type) ||
			    v[i - 1].addr != v[i].addr;
		/* Stop at the first match: once marked, v[i].len is SIZE_MAX,
		 * and comparing on would memcmp that many bytes against an
		 * earlier duplicate (also marked SIZE_MAX). */
		for (size_t j = i; !head && j-- > 0 && i - j <= DUP_WINDOW &&
		     v[j].addr == v[i].addr && is_code(v[j].type);)
			if (v[j].len == v[i].len && !memcmp(v[j].name, v[i].name, v[i].len)) {
				v[i].len = SIZE_MAX;
				break;
			}
		if (v[i].len == SIZE_MAX)
			continue;
		*(code && head ? &nsyms : &nother) += 1;
		nbytes += v[i].len + 1;
	}
	size_t total = (nsyms + nother) * sizeof(struct elfsym) + nbytes;
	if (c->bytes + total > MAX_BYTES)
		return false;
	o->syms = malloc((nsyms ? nsyms : 1) * sizeof(*o->syms));
	o->other = malloc((nother ? nother : 1) * sizeof(*o->other));
	o->names = malloc(nbytes ? nbytes : 1);
	if (!o->syms || !o->other || !o->names)
		return false;

	char *np = o->names;
	for (size_t i = 0; i < n; i++) {
		if (v[i].len == SIZE_MAX)
			continue;
		bool code = is_code(v[i].type);
		if (code && (i == 0 || !is_code(v[i - 1].type) || v[i - 1].addr != v[i].addr)) {
			put(&o->syms[o->nsyms++], &v[i], &np);
		} else {
			put(&o->other[o->nother++], &v[i], &np);
			/* An unsized preferred symbol takes its alias's size. */
			if (code && !o->syms[o->nsyms - 1].size)
				o->syms[o->nsyms - 1].size = v[i].size;
		}
	}
	o->bytes = total;
	return true;
}

/* Collect, sort and keep o's symbols; on failure free what was built. */
bool elfsym_read_tables(struct elfobj *o)
{
	struct symcache *c = o->cache;
	struct cand *v = NULL;
	size_t n = 0, cap = 0;
	bool ok = false;

	if (o->elf) {
		long ncode = collect(o->elf, SHT_SYMTAB, &v, &n, &cap);
		if (ncode == 0) { /* no .symtab, or no functions in it */
			n = 0;
			ncode = collect(o->elf, SHT_DYNSYM, &v, &n, &cap);
		}
		ok = ncode >= 0 && build_tables(c, o, v, n);
	}
	free(v);
	if (!ok) {
		free(o->syms);
		free(o->other);
		free(o->names);
		o->syms = o->other = NULL;
		o->names = NULL;
		o->nsyms = o->nother = 0;
		o->bytes = 0;
	}
	return ok;
}

/* --- lookups ------------------------------------------------------------ */

/* Is vaddr in the same PT_LOAD segment (by memory size) as addr? True
 * when there are no segments to tell. */
static bool same_segment(const struct elfobj *o, uint64_t addr, uint64_t vaddr)
{
	if (!o->nsegs)
		return true;
	for (size_t i = 0; i < o->nsegs; i++) {
		const struct seg *s = &o->segs[i];
		if (addr - s->vaddr < s->memsz)
			return vaddr - s->vaddr < s->memsz;
	}
	return false;
}

const struct elfsym *elfobj__lookup(struct elfobj *o, uint64_t vaddr)
{
	size_t n;

	if (!o)
		return NULL;
	elfsym_load_syms(o);
	n = UPPER_BOUND(o->syms, o->nsyms, addr, vaddr); /* last addr <= vaddr */
	if (!n)
		return NULL;
	size_t i = n - 1;
	const struct elfsym *s = &o->syms[i];
	if (s->size ? vaddr - s->addr < s->size
		    : (i + 1 < o->nsyms || same_segment(o, s->addr, vaddr)))
		return s;
	/* A small symbol nested in a bigger one that covers vaddr. */
	for (size_t j = i; j-- > 0 && i - j <= NESTED_WALK;)
		if (o->syms[j].size && vaddr - o->syms[j].addr < o->syms[j].size)
			return &o->syms[j];
	return NULL;
}

const struct elfsym *elfobj__find(struct elfobj *o, const char *name)
{
	if (!o || !name)
		return NULL;
	elfsym_load_syms(o);
	for (size_t i = 0; i < o->nsyms; i++)
		if (!strcmp(o->syms[i].name, name))
			return &o->syms[i];
	for (size_t i = 0; i < o->nother; i++)
		if (!strcmp(o->other[i].name, name))
			return &o->other[i];
	return NULL;
}

size_t elfobj__nsyms(struct elfobj *o)
{
	elfsym_load_syms(o);
	return o->nsyms + o->nother;
}
