/* dwarf.c — see dwarf.h. Two lazily built, sorted tables per object:
 * address ranges -> unit, and per unit, address ranges -> subprogram DIE.
 * A lookup is two binary searches, then a walk down the subprogram's
 * children that contain the address (inlined subroutines, lexical
 * blocks) to build the inline chain; the line table gives the leaf's
 * file:line, each inlined subroutine's DW_AT_call_file/call_line its
 * caller's. DWARF is untrusted: depths, counts and indices are bounded.
 */
#include "dwarf.h"

/* elfutils' DW_* constants: this directory's dwarf.h (on -I) shadows <dwarf.h>. */
#include <elfutils/../dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dwarf_src.h"
#include "lib/heap.h"
#include "elfutil.h"
#include "lib/sorted.h"
#include "lib/grow.h"

#define MAX_RANGES     (1u << 22) /* unit ranges per object */
#define MAX_FNS        (1u << 20) /* function ranges per unit */
#define MAX_NEST       16         /* namespace/class depth walked for functions */
#define MAX_INLINE_WALK 64        /* scopes descended per lookup */
#define MAX_CHILDREN   (1u << 20) /* children scanned per scope */
#define MAX_FILES      (1u << 20) /* file names per unit cached */
#define OVERLAP_WALK   8          /* lower entries tried when one misses */
/* Line rows decoded and held before the object starts over. libdw keeps
 * each unit's whole line table once decoded (~48 bytes a row) until
 * dwarf_end, and has no call to drop one: a profile with frames in many
 * units of a large library (libpython's 71 units with samples: 24 MB of
 * rows) held them all. Past the budget, the next unit not decoded yet
 * unloads everything and loads the object again (its unit index is
 * rebuilt: tens of ms for libpython, and libc's debug file decompressed
 * again, 45 ms); callers that look up addresses in order (report's
 * build) start over about once per budget. 2^16 rows (3 MB): at 2^15 a
 * 10 s recording of process churn started libc over once, 8% of the
 * recorder's CPU for the write. */
#define ROWS_BUDGET    (1u << 16)

struct range {
	uint64_t lo, hi;
	uint64_t ref; /* unit index, or DIE offset */
};

struct unit {
	Dwarf_Off off; /* CU DIE offset */
	bool built;
	struct range *fns;
	size_t nfns;
	char **paths; /* joined file names by index, filled on demand */
	size_t npaths;
	size_t rows;  /* line rows libdw decoded for it (0: none yet) */
};

struct dwarfobj {
	struct dwarf_src src;
	Dwarf *dw;        /* NULL while released (dwarf__release) */
	bool indexed;
	struct unit *units;
	size_t nunits;
	struct range *ranges;
	size_t nranges, nfunctions, nbuilt;
	size_t rows;  /* line rows held, over all units */
	size_t releases, restarts;
};

/* --- open/free ---------------------------------------------------------- */

/* (Re)open the ELF image and begin libdw on it: 0, or -errno. */
static int load(struct dwarfobj *d)
{
	int err = 0;

	if (!d->dw)
		d->dw = dwarf_src__begin(&d->src, &err);
	return err;
}

/* Free the tables and libdw's state, keeping the source (fd or image). */
static void unload(struct dwarfobj *d)
{
	for (size_t i = 0; i < d->nunits; i++) {
		struct unit *u = &d->units[i];

		for (size_t j = 0; j < u->npaths; j++)
			free(u->paths[j]);
		free(u->paths);
		free(u->fns);
	}
	free(d->units);
	free(d->ranges);
	d->units = NULL;
	d->ranges = NULL;
	d->nunits = d->nranges = d->nfunctions = d->nbuilt = d->rows = 0;
	d->indexed = false;
	dwarf_src__end(&d->src, d->dw);
	d->dw = NULL;
}

static struct dwarfobj *open_src(int fd, bool use_map, void *mem, size_t memlen)
{
	struct dwarfobj *d = calloc(1, sizeof(*d));
	int err;

	if (!d) {
		if (fd >= 0)
			close(fd);
		free(mem);
		errno = ENOMEM;
		return NULL;
	}
	d->src = (struct dwarf_src){ .fd = fd, .use_map = use_map, .mem = mem, .memlen = memlen };
	if ((err = load(d))) {
		dwarf__free(d);
		errno = -err;
		return NULL;
	}
	return d;
}

struct dwarfobj *dwarf__open_fd(int fd)
{
	struct stat st;

	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = ENOEXEC;
		return NULL;
	}
	/* mmap only what nobody but root can truncate under us; and not in a
	 * one-shot recording, whose heap keeps what it freed (the kernel's
	 * BTF, parsed at start-up): read into it, the sections take pages
	 * already resident, where mapped ones came on top (libc's kept
	 * uncompressed copy, debugcache.h: 24.9 -> 28.9 MB peak RSS on the
	 * cost bench, 24-25.6 MB read; the same CPU). */
	return open_src(fd, st.st_uid == 0 && !heap__keeps_freed(), NULL, 0);
}

struct dwarfobj *dwarf__open_mem(const void *buf, size_t len)
{
	void *mem = elfutil__copy_image(buf, len);

	if (!mem)
		return NULL;
	return open_src(-1, false, mem, len);
}

void dwarf__release(struct dwarfobj *d)
{
	if (d && d->dw) {
		unload(d);
		d->releases++;
	}
}

void dwarf__free(struct dwarfobj *d)
{
	if (!d)
		return;
	unload(d);
	dwarf_src__close(&d->src);
	free(d);
}

void dwarf__stats(const struct dwarfobj *d, struct dwarf_stats *st)
{
	*st = (struct dwarf_stats){ d->nunits, d->nranges, d->nbuilt, d->nfunctions,
				    d->dw != NULL, d->releases, d->rows, d->restarts };
}

/* --- sorted range tables ------------------------------------------------ */

static int push(struct range **v, size_t *n, size_t *cap, size_t max,
		uint64_t lo, uint64_t hi, uint64_t ref)
{
	if (hi <= lo)
		return 0;
	if (*n >= max)
		return -ENOSPC;
	if (GROW(*v, *cap, *n, 1))
		return -ENOMEM;
	(*v)[(*n)++] = (struct range){ lo, hi, ref };
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* Smaller (more specific) ranges first at one start. */
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* The range containing addr: the last one starting at or below it, else
 * one of the few before it (overlaps, nesting). */
static const struct range *find_range(const struct range *v, size_t n, uint64_t addr)
{
	size_t below = UPPER_BOUND(v, n, lo, addr);

	for (size_t i = below, k = 0; i-- > 0 && k <= OVERLAP_WALK; k++)
		if (addr < v[i].hi)
			return &v[i];
	return NULL;
}

/* Push every address range of die. */
static int push_ranges(Dwarf_Die *die, struct range **v, size_t *n, size_t *cap,
		       size_t max, uint64_t ref)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	int err = 0;

	for (int i = 0; !err && i < 65536 &&
	     (off = dwarf_ranges(die, off, &base, &start, &end)) > 0; i++)
		err = push(v, n, cap, max, start, end, ref);
	return err;
}

/* Unit index: every compile unit's ranges. */
static void build_index(struct dwarfobj *d)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t type;
	size_t ucap = 0, rcap = 0;

	d->indexed = true;
	while (dwarf_get_units(d->dw, cu, &cu, &version, &type, &cudie, &subdie) == 0) {
		if (dwarf_tag(&cudie) != DW_TAG_compile_unit)
			continue;
		if (GROW(d->units, ucap, d->nunits, 1))
			break;
		size_t before = d->nranges;
		if (push_ranges(&cudie, &d->ranges, &d->nranges, &rcap, MAX_RANGES,
				d->nunits) == -ENOMEM)
			break;
		if (d->nranges == before)
			continue; /* no code */
		d->units[d->nunits++] = (struct unit){ .off = dwarf_dieoffset(&cudie) };
		if (d->nranges >= MAX_RANGES)
			break;
	}
	if (d->nranges > 1)
		qsort(d->ranges, d->nranges, sizeof(*d->ranges), cmp_range);
}

/* Collect the subprograms with code of a scope (unit, namespace, class). */
static void walk_functions(struct unit *u, Dwarf_Die *scope, size_t *cap, int depth)
{
	Dwarf_Die child;
	size_t k = 0;

	if (depth > MAX_NEST || dwarf_child(scope, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram) {
			if (push_ranges(&child, &u->fns, &u->nfns, cap, MAX_FNS,
					dwarf_dieoffset(&child)))
				return;
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			   tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
			   tag == DW_TAG_module) {
			walk_functions(u, &child, cap, depth + 1);
		}
	} while (++k < MAX_CHILDREN && dwarf_siblingof(&child, &child) == 0);
}

static void build_unit(struct dwarfobj *d, struct unit *u, Dwarf_Die *cudie)
{
	size_t cap = 0;

	u->built = true;
	walk_functions(u, cudie, &cap, 0);
	if (u->nfns > 1)
		qsort(u->fns, u->nfns, sizeof(*u->fns), cmp_range);
	d->nbuilt++;
	d->nfunctions += u->nfns;
}

/* --- names, files ------------------------------------------------------- */

static const char *attr_string(Dwarf_Die *die, int name)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, name, &a));
}

static const char *linkage_name(Dwarf_Die *die)
{
	const char *s = attr_string(die, DW_AT_linkage_name);

	return s ? s : attr_string(die, DW_AT_MIPS_linkage_name);
}

/* File idx of the unit's file table, joined to the unit's DW_AT_comp_dir
 * when relative; cached per unit. */
static const char *unit_file(struct unit *u, Dwarf_Die *cudie, uint64_t idx)
{
	Dwarf_Files *files;
	size_t nfiles;
	const char *name, *dir;

	if (dwarf_getsrcfiles(cudie, &files, &nfiles) || idx >= nfiles || idx >= MAX_FILES)
		return NULL;
	if (!u->paths) {
		u->paths = calloc(nfiles, sizeof(*u->paths));
		if (!u->paths)
			return NULL;
		u->npaths = nfiles;
	}
	if (idx >= u->npaths)
		return NULL;
	if (u->paths[idx])
		return u->paths[idx];
	name = dwarf_filesrc(files, idx, NULL, NULL);
	if (!name)
		return NULL;
	dir = attr_string(cudie, DW_AT_comp_dir);
	if (name[0] == '/' || !dir || !*dir)
		u->paths[idx] = strdup(name);
	else if (asprintf(&u->paths[idx], "%s/%s", dir, name) < 0)
		u->paths[idx] = NULL;
	return u->paths[idx];
}

static const char *decl_file(struct unit *u, Dwarf_Die *cudie, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;

	if (dwarf_formudata(dwarf_attr_integrate(die, DW_AT_decl_file, &a), &idx))
		return NULL;
	return unit_file(u, cudie, idx);
}

static void fill_frame(struct dwarf_frame *f, struct unit *u, Dwarf_Die *cudie,
		       Dwarf_Die *die)
{
	int line = 0;

	f->name = attr_string(die, DW_AT_name);
	f->linkage_name = linkage_name(die);
	f->decl_file = decl_file(u, cudie, die);
	f->decl_line = dwarf_decl_line(die, &line) == 0 && line > 0 ? line : 0;
}

/* --- lookup ------------------------------------------------------------- */

/* Is die a scope that can hold the inline chain further down? */
static bool is_inner_scope(int tag)
{
	return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
	       tag == DW_TAG_try_block || tag == DW_TAG_catch_block;
}

/* Descend from the subprogram to the innermost scope containing addr,
 * recording the function and each inlined subroutine (outermost first). */
static int inline_chain(Dwarf_Die *fn, uint64_t addr, Dwarf_Die *chain, int max)
{
	Dwarf_Die cur = *fn, child;
	int n = 0;

	chain[n++] = *fn;
	for (int depth = 0; depth < MAX_INLINE_WALK; depth++) {
		bool found = false;
		size_t k = 0;

		if (dwarf_child(&cur, &child) != 0)
			break;
		do {
			int tag = dwarf_tag(&child);

			if (!is_inner_scope(tag) || dwarf_haspc(&child, addr) != 1)
				continue;
			if (tag == DW_TAG_inlined_subroutine) {
				if (n == max) { /* too deep: drop the outermost inline */
					memmove(chain + 1, chain + 2, (size_t)(max - 2) * sizeof(*chain));
					n--;
				}
				chain[n++] = child;
			}
			cur = child;
			found = true;
			break;
		} while (++k < MAX_CHILDREN && dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
	}
	return n;
}

static int lookup_unit(struct dwarfobj *d, struct unit *u, Dwarf_Die *cudie, uint64_t vaddr,
		       struct dwarf_frame *out, int max);

int dwarf__lookup(struct dwarfobj *d, uint64_t vaddr, struct dwarf_frame *out, int max)
{
	Dwarf_Die cudie;
	const struct range *r;
	int n;

	if (!d || max <= 0 || load(d))
		return 0;
	if (!d->indexed)
		build_index(d);
	if (!(r = find_range(d->ranges, d->nranges, vaddr)) || r->ref >= d->nunits)
		return 0;
	if (!d->units[r->ref].rows && d->rows > ROWS_BUDGET) {
		unload(d); /* over budget: start over (ROWS_BUDGET) */
		d->restarts++;
		if (load(d))
			return 0;
		build_index(d);
		if (!(r = find_range(d->ranges, d->nranges, vaddr)) || r->ref >= d->nunits)
			return 0;
	}
	struct unit *u = &d->units[r->ref];
	if (!dwarf_offdie(d->dw, u->off, &cudie))
		return 0;
	n = lookup_unit(d, u, &cudie, vaddr, out, max);
	if (!u->rows) { /* its lines were decoded (or tried): count them */
		Dwarf_Lines *lines;
		size_t nl = 0;

		u->rows = dwarf_getsrclines(&cudie, &lines, &nl) == 0 && nl ? nl : 1;
		d->rows += u->rows;
	}
	return n;
}

/* The frames of vaddr inside unit u (its DIE: cudie). */
static int lookup_unit(struct dwarfobj *d, struct unit *u, Dwarf_Die *cudie, uint64_t vaddr,
		       struct dwarf_frame *out, int max)
{
	Dwarf_Die fn, chain[DWARF_MAX_FRAMES];
	const char *file = NULL;
	int64_t line = 0;
	int n = 0;

	if (!u->built)
		build_unit(d, u, cudie);

	Dwarf_Line *dl = dwarf_getsrc_die(cudie, vaddr);
	if (dl) {
		Dwarf_Files *files;
		size_t idx;
		int ln = 0;

		if (dwarf_line_file(dl, &files, &idx) == 0)
			file = unit_file(u, cudie, idx);
		if (dwarf_lineno(dl, &ln) == 0 && ln > 0)
			line = ln;
	}
	const struct range *fr = find_range(u->fns, u->nfns, vaddr);
	if (!fr || !dwarf_offdie(d->dw, fr->ref, &fn)) {
		/* The unit covers it, no function does: file and line only. */
		out[0] = (struct dwarf_frame){ .file = file, .line = line };
		return 1;
	}
	int depth = inline_chain(&fn, vaddr, chain, DWARF_MAX_FRAMES);
	for (int i = depth - 1; i >= 0 && n < max; i--) {
		struct dwarf_frame *f = &out[n++];
		Dwarf_Attribute a;
		Dwarf_Word w;

		fill_frame(f, u, cudie, &chain[i]);
		f->file = file;
		f->line = line;
		if (!f->file)
			f->file = f->decl_file;
		if (!f->decl_file)
			f->decl_file = f->file;
		if (dwarf_tag(&chain[i]) != DW_TAG_inlined_subroutine)
			continue;
		/* The caller stands at the call site. */
		file = dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_file, &a), &w) == 0
			? unit_file(u, cudie, w) : NULL;
		line = dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &a), &w) == 0 &&
		       w < INT32_MAX ? (int64_t)w : 0;
	}
	return n;
}
