/* elfsym.c — a bounded cache of ELF objects: build-ids, PT_LOAD segments
 * and symbol tables, read through libelf.
 *
 * Symbolization input, second stage: procmaps says which object and file
 * offset a user frame is in; this turns the offset into a link-time
 * virtual address (PT_LOAD) and the address into a symbol. Objects arrive
 * as file descriptors (from /proc/PID/map_files) and are keyed by GNU
 * build-id, else by (dev, inode, size, mtime). The build-id and segments
 * are read at once; symbols are loaded at first lookup, after which the
 * object keeps only its own copies and closes its fd.
 *
 * Binaries are untrusted: libelf checks that headers and section data lie
 * inside the file (and ELF_C_READ copies instead of mmapping, so a file
 * truncated under us cannot SIGBUS); everything else — string indices,
 * note sizes, section links, counts — is checked here.
 */
#include "elfsym.h"
#include "elfutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_OPEN        128        /* objects holding an fd, unloaded */
#define MAX_BYTES       (1ULL << 30) /* symbol memory, whole cache */
#define MAX_OBJ_SYMS    (1u << 22) /* symbols kept per object */
#define MAX_SEGS        16         /* PT_LOAD segments kept per object */
#define MAX_HEADERS     65536      /* program/section headers scanned */
#define BUILD_ID_MAX    ELFUTIL_BUILD_ID_MAX
#define NBUCKETS        1024
#define NESTED_WALK     4          /* lower symbols tried when one misses */
#define DUP_WINDOW      8          /* same-address symbols checked for dups */

struct seg {
	uint64_t off, filesz, vaddr, memsz;
};

struct elfobj {
	struct elfobj *hnext;         /* hash chain */
	struct elfobj *oprev, *onext; /* open list: fd held, oldest first */
	struct symcache *cache;
	int fd;                       /* -1 once symbols are loaded */
	Elf *elf;
	int type;
	uint64_t dev, inode, fsize;   /* identity without a build-id */
	int64_t mtime_ns;
	char build_id[2 * BUILD_ID_MAX + 1];
	struct seg segs[MAX_SEGS];
	size_t nsegs;
	bool loaded;
	struct elfsym *syms;          /* code, one per address, sorted */
	size_t nsyms;
	struct elfsym *other;         /* data/TLS and same-address aliases */
	size_t nother;
	char *names;
	size_t bytes;
	void *mem;                    /* image of a memory object, until loaded */
	void *aux;                    /* caller's data (elfobj__set_aux) */
	void (*aux_free)(void *);
};

struct symcache {
	struct elfobj *buckets[NBUCKETS];
	struct elfobj *ohead, *otail;
	size_t nobjs, nopen, nloaded, nsyms, bytes, hits, over_budget;
};

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

/* --- hashing and lists -------------------------------------------------- */

static size_t obj_bucket(const char *build_id, uint64_t dev, uint64_t inode)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a, then a final mix */

	if (!*build_id)
		h ^= dev * 0x9e3779b97f4a7c15ULL ^ inode;
	for (const char *p = build_id; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	h *= 0xff51afd7ed558ccdULL;
	return (size_t)((h ^ h >> 29) % NBUCKETS);
}

static void open_list_remove(struct symcache *c, struct elfobj *o)
{
	if (o->oprev)
		o->oprev->onext = o->onext;
	else
		c->ohead = o->onext;
	if (o->onext)
		o->onext->oprev = o->oprev;
	else
		c->otail = o->oprev;
	o->oprev = o->onext = NULL;
	c->nopen--;
}

static void close_elf(struct elfobj *o)
{
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	free(o->mem);
	o->elf = NULL;
	o->fd = -1;
	o->mem = NULL;
}

/* --- segments ----------------------------------------------------------- */

static void read_segments(Elf *elf, struct elfobj *o)
{
	size_t phnum = 0;

	if (elf_getphdrnum(elf, &phnum))
		return;
	for (size_t i = 0; i < phnum && i < MAX_HEADERS && o->nsegs < MAX_SEGS; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset + ph.p_filesz < ph.p_offset)
			continue; /* wraps: bogus */
		o->segs[o->nsegs++] = (struct seg){ ph.p_offset, ph.p_filesz,
						    ph.p_vaddr, ph.p_memsz };
	}
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
		for (size_t j = i; !head && j-- > 0 && i - j <= DUP_WINDOW &&
		     v[j].addr == v[i].addr && is_code(v[j].type);)
			if (v[j].len == v[i].len && !memcmp(v[j].name, v[i].name, v[i].len))
				v[i].len = SIZE_MAX;
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

/* Load symbols (once), then drop the ELF handle and fd. */
static void load_syms(struct elfobj *o)
{
	struct symcache *c = o->cache;
	struct cand *v = NULL;
	size_t n = 0, cap = 0;
	bool ok = false;

	if (o->loaded)
		return;
	o->loaded = true;
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
		c->over_budget++;
	}
	close_elf(o);
	open_list_remove(c, o);
	c->nloaded++;
	c->nsyms += o->nsyms + o->nother;
	c->bytes += o->bytes;
}

/* --- cache -------------------------------------------------------------- */

struct symcache *symcache__new(void)
{
	static bool elf_ready;

	if (!elf_ready) {
		if (elf_version(EV_CURRENT) == EV_NONE) {
			errno = ELIBBAD;
			return NULL;
		}
		elf_ready = true;
	}
	return calloc(1, sizeof(struct symcache));
}

void symcache__free(struct symcache *c)
{
	if (!c)
		return;
	for (size_t b = 0; b < NBUCKETS; b++) {
		for (struct elfobj *o = c->buckets[b], *next; o; o = next) {
			next = o->hnext;
			if (o->aux_free)
				o->aux_free(o->aux);
			close_elf(o);
			free(o->syms);
			free(o->other);
			free(o->names);
			free(o);
		}
	}
	free(c);
}

void symcache__stats(const struct symcache *c, struct symcache_stats *st)
{
	*st = (struct symcache_stats){ c->nobjs, c->nopen, c->nloaded, c->nsyms,
				       c->bytes + c->nobjs * sizeof(struct elfobj),
				       c->hits, c->over_budget };
}

static struct elfobj *cache_find(struct symcache *c, const struct elfobj *key)
{
	size_t b = obj_bucket(key->build_id, key->dev, key->inode);

	for (struct elfobj *o = c->buckets[b]; o; o = o->hnext) {
		if (*key->build_id) {
			if (!strcmp(o->build_id, key->build_id))
				return o;
		} else if (!*o->build_id && o->dev == key->dev &&
			   o->inode == key->inode && o->fsize == key->fsize &&
			   o->mtime_ns == key->mtime_ns) {
			return o;
		}
	}
	return NULL;
}

static struct elfobj *fail(int fd, Elf *elf, int err)
{
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	errno = err;
	return NULL;
}

/* Cache lookup or insert of an open ELF (fd -1 and mem for a memory
 * image); takes ownership of fd, elf and mem in every case. */
static struct elfobj *get_elf(struct symcache *c, int fd, Elf *elf, void *mem,
			      const struct elfobj *id)
{
	struct elfobj key, *o;
	GElf_Ehdr eh;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		fail(fd, elf, ENOEXEC); /* elf_end before the image goes */
		free(mem);
		return NULL;
	}
	key = *id;
	elfutil__build_id(elf, key.build_id);
	o = cache_find(c, &key);
	if (o) {
		c->hits++;
		elf_end(elf);
		free(mem);
		if (fd >= 0)
			close(fd);
		return o;
	}
	if (c->nobjs >= SYMCACHE_MAX_OBJECTS || !(o = malloc(sizeof(*o)))) {
		fail(fd, elf, c->nobjs >= SYMCACHE_MAX_OBJECTS ? ENOSPC : ENOMEM);
		free(mem);
		return NULL;
	}
	*o = key;
	o->cache = c;
	o->fd = fd;
	o->elf = elf;
	o->mem = mem;
	o->type = eh.e_type;
	read_segments(elf, o);

	size_t b = obj_bucket(o->build_id, o->dev, o->inode);
	o->hnext = c->buckets[b];
	c->buckets[b] = o;
	c->nobjs++;
	o->oprev = c->otail;
	if (c->otail)
		c->otail->onext = o;
	else
		c->ohead = o;
	c->otail = o;
	c->nopen++;
	/* Bound the fds held: load the oldest unloaded object now. */
	if (c->nopen > MAX_OPEN)
		load_syms(c->ohead);
	return o;
}

struct elfobj *symcache__get_fd(struct symcache *c, int fd, uint64_t dev,
				uint64_t inode)
{
	struct stat st;
	struct elfobj key;

	if (fd < 0)
		return fail(-1, NULL, EBADF);
	if (!c)
		return fail(fd, NULL, EINVAL);
	if (fstat(fd, &st))
		return fail(fd, NULL, errno);
	if (!S_ISREG(st.st_mode))
		return fail(fd, NULL, ENOEXEC);
	memset(&key, 0, sizeof(key));
	key.dev = dev || inode ? dev : (uint64_t)st.st_dev;
	key.inode = dev || inode ? inode : (uint64_t)st.st_ino;
	key.fsize = (uint64_t)st.st_size;
	key.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return get_elf(c, fd, elf_begin(fd, ELF_C_READ, NULL), NULL, &key);
}

struct elfobj *symcache__get_mem(struct symcache *c, const void *buf, size_t len)
{
	struct elfobj key;
	uint64_t h = 0xcbf29ce484222325ULL;
	void *mem;

	if (!c || !buf || !len) {
		errno = EINVAL;
		return NULL;
	}
	if (!(mem = malloc(len))) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(mem, buf, len);
	for (size_t i = 0; i < len; i++) /* identity without a build-id */
		h = (h ^ ((const unsigned char *)buf)[i]) * 0x100000001b3ULL;
	memset(&key, 0, sizeof(key));
	key.inode = h;
	key.fsize = len;
	key.mtime_ns = -1; /* never equal to a file's */
	return get_elf(c, -1, elf_memory(mem, len), mem, &key);
}

struct elfobj *symcache__get_path(struct symcache *c, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	return symcache__get_fd(c, fd, 0, 0);
}

/* --- objects ------------------------------------------------------------ */

const char *elfobj__build_id(const struct elfobj *o)
{
	return o->build_id;
}

void elfobj__set_aux(struct elfobj *o, void *aux, void (*free_fn)(void *))
{
	if (o->aux_free && o->aux != aux)
		o->aux_free(o->aux);
	o->aux = aux;
	o->aux_free = free_fn;
}

void *elfobj__aux(const struct elfobj *o)
{
	return o->aux;
}

int elfobj__offset_to_vaddr(const struct elfobj *o, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < o->nsegs; i++) {
		const struct seg *s = &o->segs[i];
		if (off >= s->off && off - s->off < s->filesz) {
			*vaddr = off - s->off + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

int elfobj__mapping_vaddr(const struct elfobj *o, uint64_t pgoff, uint64_t len,
			  uint64_t *vaddr)
{
	const struct seg *best = NULL;
	uint64_t best_overlap = 0;

	for (size_t i = 0; i < o->nsegs; i++) {
		const struct seg *s = &o->segs[i];
		uint64_t lo = pgoff > s->off ? pgoff : s->off;
		uint64_t hi_m = pgoff + len, hi_s = s->off + s->filesz;
		uint64_t hi = hi_m < hi_s ? hi_m : hi_s;

		if (hi > lo && hi - lo > best_overlap) {
			best_overlap = hi - lo;
			best = s;
		}
	}
	if (!best)
		return -ENOENT;
	/* Modular arithmetic: pgoff may lie below the segment's p_offset
	 * when the segment does not start on a page boundary. */
	*vaddr = pgoff - best->off + best->vaddr;
	return 0;
}

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
	size_t lo = 0, hi;

	if (!o)
		return NULL;
	load_syms(o);
	hi = o->nsyms;
	while (lo < hi) { /* last symbol with addr <= vaddr */
		size_t mid = lo + (hi - lo) / 2;
		if (o->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	size_t i = lo - 1;
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
	load_syms(o);
	for (size_t i = 0; i < o->nsyms; i++)
		if (!strcmp(o->syms[i].name, name))
			return &o->syms[i];
	for (size_t i = 0; i < o->nother; i++)
		if (!strcmp(o->other[i].name, name))
			return &o->other[i];
	return NULL;
}

int elfobj__type(const struct elfobj *o)
{
	return o->type;
}

size_t elfobj__nsyms(struct elfobj *o)
{
	load_syms(o);
	return o->nsyms + o->nother;
}
