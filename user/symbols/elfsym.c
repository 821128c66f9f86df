/* elfsym.c — a bounded cache of ELF objects: build-ids, PT_LOAD segments
 * and, through elfsym_tab.c, symbol tables, read with libelf.
 *
 * Symbolization input, second stage: procmaps says which object and file
 * offset a user frame is in; this turns the offset into a link-time
 * virtual address (PT_LOAD); elfsym_lookup.c then finds the symbol at
 * that address in the tables elfsym_tab.c reads.
 * Objects arrive as file descriptors (from /proc/PID/map_files) and are
 * keyed by GNU build-id, else by (dev, inode, size, mtime). The build-id
 * and segments are read at once; symbols are loaded at first lookup, after
 * which the object keeps only its own copies and closes its fd.
 *
 * Binaries are untrusted: libelf checks that headers and section data lie
 * inside the file (and ELF_C_READ copies instead of mmapping, so a file
 * truncated under us cannot SIGBUS); everything else — string indices,
 * note sizes, section links, counts — is checked here and in
 * elfsym_tab.c.
 */
#include "elfsym.h"
#include "elfsym_int.h"
#include "elfutil.h"
#include "lib/hashtab.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_OPEN        128        /* objects holding an fd, unloaded */

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
		o->segs[o->nsegs++] = (struct seg){ ph.p_offset, ph.p_filesz, ph.p_vaddr,
						    ph.p_memsz, (ph.p_flags & PF_X) != 0 };
	}
}

/* --- loading ------------------------------------------------------------ */

/* Load o's symbols (once), then drop its ELF handle and fd and count it
 * in the cache's totals. */
void elfobj_load_syms(struct elfobj *o)
{
	struct symcache *c = o->cache;

	if (o->loaded)
		return;
	o->loaded = true;
	if (!elfsym_read_tables(o))
		c->over_budget++;
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

static void obj_free(struct elfobj *o)
{
	if (o->aux_free)
		o->aux_free(o->aux);
	hashtab__free(o->byname);
	close_elf(o);
	free(o->syms);
	free(o->other);
	free(o->names);
	free(o);
}

void symcache__free(struct symcache *c)
{
	if (!c)
		return;
	for (size_t b = 0; b < NBUCKETS; b++) {
		for (struct elfobj *o = c->buckets[b], *next; o; o = next) {
			next = o->hnext;
			obj_free(o);
		}
	}
	free(c);
}

void symcache__stats(const struct symcache *c, struct symcache_stats *st)
{
	*st = (struct symcache_stats){ c->nobjs, c->nopen, c->nloaded, c->nsyms,
				       c->bytes + c->nobjs * sizeof(struct elfobj),
				       c->hits, c->over_budget, c->evicted };
}

void symcache__for_each(struct symcache *c, void (*fn)(struct elfobj *, void *), void *ctx)
{
	for (size_t b = 0; c && b < NBUCKETS; b++)
		for (struct elfobj *o = c->buckets[b], *next; o; o = next) {
			next = o->hnext; /* fn may not free, but be safe */
			fn(o, ctx);
		}
}

/* --- eviction ----------------------------------------------------------- */

void symcache__mark_begin(struct symcache *c)
{
	c->epoch++;
}

void symcache__mark(struct elfobj *o)
{
	if (o)
		o->used = o->cache->epoch;
}

static size_t id_bucket(const struct elfobj *k);

/* Unlink o from both hash chains and the open list, undo its counts. */
static void evict(struct symcache *c, struct elfobj *o)
{
	struct elfobj **pp;

	for (pp = &c->buckets[obj_bucket(o->build_id, o->dev, o->inode)]; *pp; pp = &(*pp)->hnext)
		if (*pp == o) {
			*pp = o->hnext;
			break;
		}
	for (pp = &c->fbuckets[id_bucket(o)]; *pp; pp = &(*pp)->fnext)
		if (*pp == o) {
			*pp = o->fnext;
			break;
		}
	if (o->loaded) {
		c->nloaded--;
		c->nsyms -= o->nsyms + o->nother;
		c->bytes -= o->bytes;
	} else {
		open_list_remove(c, o);
	}
	c->nobjs--;
	c->evicted++;
	obj_free(o);
}

static int by_used_desc(const void *a, const void *b)
{
	uint64_t x = (*(struct elfobj *const *)a)->used, y = (*(struct elfobj *const *)b)->used;

	return x < y ? 1 : x > y ? -1 : 0;
}

size_t symcache__sweep(struct symcache *c, size_t keep_idle)
{
	struct elfobj **idle;
	size_t n = 0, freed = 0;

	if (!c || !c->nobjs)
		return 0;
	/* Out of memory: nothing is freed this time, nothing is wrong. */
	if (!(idle = malloc(c->nobjs * sizeof(*idle))))
		return 0;
	for (size_t b = 0; b < NBUCKETS; b++)
		for (struct elfobj *o = c->buckets[b]; o; o = o->hnext)
			if (o->used != c->epoch)
				idle[n++] = o;
	if (n > keep_idle) {
		qsort(idle, n, sizeof(*idle), by_used_desc);
		for (size_t i = keep_idle; i < n; i++, freed++)
			evict(c, idle[i]);
	}
	free(idle);
	return freed;
}

static size_t id_bucket(const struct elfobj *k)
{
	uint64_t h = (k->dev * 0x9e3779b97f4a7c15ULL) ^ k->inode ^ (k->fsize << 17) ^ (uint64_t)k->mtime_ns;

	h *= 0xff51afd7ed558ccdULL;
	return (size_t)((h ^ h >> 29) % NBUCKETS);
}

/* The object opened from exactly this file (dev, inode, size, mtime) or
 * memory image (content hash, size): found without reading any ELF. */
static struct elfobj *identity_find(struct symcache *c, const struct elfobj *key)
{
	for (struct elfobj *o = c->fbuckets[id_bucket(key)]; o; o = o->fnext)
		if (o->dev == key->dev && o->inode == key->inode && o->fsize == key->fsize &&
		    o->mtime_ns == key->mtime_ns)
			return o;
	return NULL;
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
		o->used = c->epoch;
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
	o->used = c->epoch; /* as recent as the last marked, for the sweep's order */
	o->fd = fd;
	o->elf = elf;
	o->mem = mem;
	o->type = eh.e_type;
	read_segments(elf, o);

	size_t b = obj_bucket(o->build_id, o->dev, o->inode);
	o->hnext = c->buckets[b];
	c->buckets[b] = o;
	b = id_bucket(o);
	o->fnext = c->fbuckets[b];
	c->fbuckets[b] = o;
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
		elfobj_load_syms(c->ohead);
	return o;
}

/* The file's identity, as the cache knows a file without a build-id. */
static void stat_key(struct elfobj *key, const struct stat *st, uint64_t dev, uint64_t inode)
{
	memset(key, 0, sizeof(*key));
	key->dev = dev || inode ? dev : (uint64_t)st->st_dev;
	key->inode = dev || inode ? inode : (uint64_t)st->st_ino;
	key->fsize = (uint64_t)st->st_size;
	key->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static struct elfobj *stat_find(struct symcache *c, const struct elfobj *key)
{
	struct elfobj *o = identity_find(c, key);

	if (o) { /* the same file again (every process maps libc) */
		c->hits++;
		o->used = c->epoch;
	}
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
	stat_key(&key, &st, dev, inode);
	struct elfobj *o = stat_find(c, &key);
	if (o) {
		close(fd);
		return o;
	}
	return get_elf(c, fd, elf_begin(fd, ELF_C_READ, NULL), NULL, &key);
}

struct elfobj *symcache__get_stat(struct symcache *c, const struct stat *st)
{
	struct elfobj key;

	if (!c || !S_ISREG(st->st_mode))
		return NULL;
	stat_key(&key, st, 0, 0);
	return stat_find(c, &key);
}

struct elfobj *symcache__get_build_id(struct symcache *c, const uint8_t *id, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	struct elfobj key, *o;

	if (!c || !len || len > BUILD_ID_MAX)
		return NULL;
	memset(&key, 0, sizeof(key));
	for (size_t i = 0; i < len; i++) { /* elfutil__build_id's form */
		key.build_id[2 * i] = hex[id[i] >> 4];
		key.build_id[2 * i + 1] = hex[id[i] & 15];
	}
	o = cache_find(c, &key);
	if (o) {
		c->hits++;
		o->used = c->epoch;
	}
	return o;
}

struct elfobj *symcache__get_mem(struct symcache *c, const void *buf, size_t len)
{
	struct elfobj key, *o;
	uint64_t h = 0xcbf29ce484222325ULL, w;
	const unsigned char *b = buf;
	size_t i = 0;
	void *mem;

	if (!c || !buf) {
		errno = EINVAL;
		return NULL;
	}
	/* Identity: a hash of the content, 8 bytes a step (the vDSO of
	 * every process is hashed; the same image is then found at once). */
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 32;
	}
	for (; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	memset(&key, 0, sizeof(key));
	key.inode = h;
	key.fsize = len;
	key.mtime_ns = -1; /* never equal to a file's */
	if ((o = identity_find(c, &key))) {
		c->hits++;
		o->used = c->epoch;
		return o;
	}
	if (!(mem = elfutil__copy_image(buf, len)))
		return NULL;
	return get_elf(c, -1, elf_memory(mem, len), mem, &key);
}

uint64_t elfobj__key(const struct elfobj *o)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	if (*o->build_id) {
		for (const char *p = o->build_id; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
		return h;
	}
	uint64_t w[4] = { o->dev, o->inode, o->fsize, (uint64_t)o->mtime_ns };
	for (int i = 0; i < 4; i++) {
		h = (h ^ w[i]) * 0x100000001b3ULL;
		h ^= h >> 31;
	}
	return h;
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

size_t elfobj__exec_segments(const struct elfobj *o, struct elfseg *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < o->nsegs && n < max; i++)
		if (o->segs[i].exec)
			out[n++] = (struct elfseg){ o->segs[i].off, o->segs[i].filesz, o->segs[i].vaddr };
	return n;
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

int elfobj__type(const struct elfobj *o)
{
	return o->type;
}
