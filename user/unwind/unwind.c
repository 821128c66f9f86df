/* unwind.c — the table cache and the BPF side's unwind maps (see
 * unwind.h). Runs on the ring-buffer callback: work per new process and
 * per new object, never per sample.
 *
 * Publication order keeps BPF consistent without locks: an object's rows
 * are written into free space of the rows array (through a passing mmap
 * of just those pages: see write_array) before its descriptor is, and a
 * slot is complete before unwind_pids points at it.
 * A process whose mappings change gets a new slot; the old one is reused
 * only after a grace period (a BPF program may still be reading it).
 */
#include "unwind.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "ehframe.h"
#include "lib/hashtab.h"
#include "lib/grow.h"
#include "lib/spans.h"
#include "unwind_int.h"

#define MAX_TABLE_ROWS (1u << 24) /* what BPF's binary search covers */
#define WRITE_WINDOW (256u << 10)   /* bytes of a map mapped at once (write_array) */
#define SMALL_WRITE PMUBPF_UW_MAX_MAPS /* elements written by one batch update */
#define FULL_RETRY_NS 1000000000LL /* a table that did not fit: tried again after */
#define PID_ENTRY_BYTES 64        /* hash map element, approximately */
#define FILE_ENTRY_BYTES 150      /* unwind_files' element, approximately */

void unwind__sizes(bool system_wide, uint32_t *max_rows, uint32_t *max_tables,
		   uint32_t *max_slots)
{
	/* libc is ~23k rows, libstdc++ ~34k, python3 ~58k: one big program
	 * needs ~150k. Whole system: more programs, more processes. */
	*max_rows = system_wide ? 2u << 20 : 1u << 20;
	*max_tables = 8192;
	*max_slots = system_wide ? 1024 : 256;
}

/* unwind_files entries: two files per table id (a build-id in two
 * places, containers' copies), 150 bytes each as the kernel holds them. */
static uint32_t files_max(uint32_t max_tables)
{
	return max_tables * 2;
}

int unwind__size_maps(const struct unwind_bpf *b, bool dwarf, bool system_wide, bool files)
{
	uint32_t rows = 1, tables = 1, slots = 1;

	if (dwarf)
		unwind__sizes(system_wide, &rows, &tables, &slots);
	if (bpf_map__set_max_entries(b->files, dwarf && files ? files_max(tables) : 1) ||
	    bpf_map__set_max_entries(b->asked, dwarf && files ? 1024 : 1) ||
	    bpf_map__set_max_entries(b->rows, rows) ||
	    bpf_map__set_max_entries(b->tables, tables) ||
	    bpf_map__set_max_entries(b->slots, slots * PMUBPF_UW_MAX_MAPS) ||
	    bpf_map__set_max_entries(b->pids, slots))
		return -errno;
	return 0;
}

struct unwind *unwind__open(const struct unwind_bpf *b, int verbose, bool files)
{
	struct unwind_maps m = {
		.rows_fd = bpf_map__fd(b->rows),
		.tables_fd = bpf_map__fd(b->tables),
		.slots_fd = bpf_map__fd(b->slots),
		.pids_fd = bpf_map__fd(b->pids),
		.files_fd = files ? bpf_map__fd(b->files) : -1,
		.asked_fd = files ? bpf_map__fd(b->asked) : -1,
		.key_prog_fd = files && b->key_prog && bpf_program__fd(b->key_prog) >= 0 ? bpf_program__fd(b->key_prog) : -1,
		.max_rows = bpf_map__max_entries(b->rows),
		.max_tables = bpf_map__max_entries(b->tables),
		.max_slots = bpf_map__max_entries(b->pids),
	};

	return unwind__new(&m, verbose);
}

static bool tab_eq(const void *key, uint64_t idx, void *ctx)
{
	struct unwind *u = ctx;

	return u->tabs[idx].key == *(const uint64_t *)key;
}

/* Write n values of size bytes (the array's element stride: a multiple
 * of 8) into the BPF_F_MMAPABLE array map fd from index first, through a
 * mapping of only the pages they fall in, unmapped at once. A memcpy,
 * where batch updates copied and checked element by element (13% of a
 * 2 s -a recording's CPU under churn, 1% now); and unlike a mapping of the whole
 * map kept open, pmubpf's RSS does not count the map's tens of MiB
 * (already the kernel's, as BPF map memory) a second time. The syscalls
 * that publish the values (a table's descriptor, a pid's slot) come
 * after the copy. A handful of values (a pid's slot) go by one batch
 * update instead. */
static int write_array(int fd, uint32_t first, const void *values, size_t n, size_t size)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = (uint64_t)first * size, end = start + n * size;
	const char *src = values;

	/* A few elements (a process's slot: its mappings) by one batch
	 * update: a mapping costs an mmap, a page fault and an munmap
	 * whose TLB flush reaches every CPU our threads ran on, once per
	 * new process under churn (6% of the loop's CPU on 16 CPUs). */
	if (n <= SMALL_WRITE) {
		uint32_t keys[SMALL_WRITE], count = (uint32_t)n;

		for (uint32_t k = 0; k < count; k++)
			keys[k] = first + k;
		if (!bpf_map_update_batch(fd, keys, values, &count, NULL))
			return 0;
		if (errno != EINVAL && errno != ENOTSUP && errno != EOPNOTSUPP)
			return -errno; /* else: a kernel without it, mapped below */
	}

	/* A window at a time: the mapped pages count in RSS while mapped. */
	while (start < end) {
		uint64_t off = start & ~(page - 1);
		size_t len = (size_t)(end - off < WRITE_WINDOW ? end - off : WRITE_WINDOW);
		size_t part = len - (size_t)(start - off);
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);

		if (p == MAP_FAILED)
			return -errno;
		memcpy((char *)p + (start - off), src, part);
		munmap(p, len);
		src += part;
		start += part;
	}
	return 0;
}

struct unwind *unwind__new(const struct unwind_maps *m, int verbose)
{
	struct unwind *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->m = *m;
	u->verbose = verbose;
	u->vdso.id = PMUBPF_UW_NO_TABLE;
	u->free_ids = calloc(m->max_tables ? m->max_tables : 1, sizeof(*u->free_ids));
	spans__init(&u->rows, m->max_rows);
	u->index = hashtab__new(tab_eq, u);
	u->slots = calloc(m->max_slots, sizeof(*u->slots));
	u->free_slots = calloc(m->max_slots, sizeof(*u->free_slots));
	if (!u->free_ids || !u->index || !u->slots || !u->free_slots || unwind_files__init(u)) {
		unwind__free(u);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < m->max_slots; i++) /* slot 0 first */
		u->free_slots[u->nfree++] = m->max_slots - 1 - i;
	u->st.max_rows = m->max_rows;
	u->st.max_slots = m->max_slots;
	u->st.bpf_bytes = (uint64_t)m->max_rows * sizeof(struct pmubpf_urow) +
			  (uint64_t)m->max_tables * sizeof(struct pmubpf_utable) +
			  (uint64_t)m->max_slots * (PMUBPF_UW_MAX_MAPS * sizeof(struct pmubpf_umap) +
						    PID_ENTRY_BYTES);
	if (m->files_fd >= 0)
		u->st.bpf_bytes += (uint64_t)files_max(m->max_tables) * FILE_ENTRY_BYTES;
	return u;
}

void unwind__free(struct unwind *u)
{
	if (!u)
		return;
	free(u->free_ids);
	free(u->free_tabs);
	spans__fini(&u->rows);
	for (uint32_t s = 0; u->slots && s < u->m.max_slots; s++)
		free(u->slots[s].tix);
	hashtab__free(u->index);
	unwind_files__fini(u);
	free(u->tabs);
	free(u->slots);
	free(u->free_slots);
	free(u);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void reclaim(struct unwind *u);

/* Room for a table of n rows: rows and a descriptor id. Short of
 * either, the tables no process uses are given back first (reclaim). */
static int take_space(struct unwind *u, uint32_t n, uint32_t *off, uint32_t *id)
{
	for (int round = 0; round < 2; round++) {
		bool have_id = u->nfree_ids || u->next_table < u->m.max_tables;

		if (have_id && !spans__alloc(&u->rows, n, off)) {
			*id = u->nfree_ids ? u->free_ids[--u->nfree_ids] : u->next_table++;
			return 0;
		}
		if (!round)
			reclaim(u);
	}
	return -ENOSPC;
}

/* Give back t's rows and id (no slot refers to it). */
static void drop_rows(struct unwind *u, struct tab *t)
{
	if (t->id == PMUBPF_UW_NO_TABLE)
		return;
	if (spans__free(&u->rows, t->off, t->len))
		u->st.rows_lost += t->len; /* out of memory: those rows stay taken */
	u->free_ids[u->nfree_ids++] = t->id;
	t->id = PMUBPF_UW_NO_TABLE;
	u->st.rows = u->rows.used;
}

/* Copy a built table into BPF; fills t->id, t->off, t->len, t->base. */
static void publish(struct unwind *u, const char *name, struct ehf_table *et, struct tab *t,
		    int64_t build_ns)
{
	uint32_t off, id;

	t->id = PMUBPF_UW_NO_TABLE;
	t->base = et->base;
	if (!et->n) {
		u->st.objects_nocfi++;
		return;
	}
	if (et->n > MAX_TABLE_ROWS || take_space(u, (uint32_t)et->n, &off, &id)) {
		t->full = et->n <= MAX_TABLE_ROWS;
		u->st.objects_full++;
		if (u->verbose)
			fprintf(stderr, "pmubpf: unwind: %s: %zu rows do not fit (%llu of %u used): frame pointers there\n",
				name, et->n, (unsigned long long)u->rows.used, u->m.max_rows);
		return;
	}
	t->id = id;
	t->off = off;
	t->len = (uint32_t)et->n;
	struct pmubpf_utable d = { .off = off, .len = (uint32_t)et->n };
	if (write_array(u->m.rows_fd, off, et->rows, et->n, sizeof(*et->rows)) ||
	    bpf_map_update_elem(u->m.tables_fd, &id, &d, BPF_ANY)) {
		drop_rows(u, t);
		t->full = true;
		u->st.objects_full++;
		return;
	}
	t->full = false;
	u->st.objects++;
	u->st.rows = u->rows.used;
	u->st.unsupported += et->st.unsupported;
	if (u->verbose)
		fprintf(stderr, "pmubpf: unwind: %s: %zu rows (%zu KiB), %llu FDEs, %llu unsupported, %.1f ms CPU\n",
			name, et->n, ehf__bytes(et) >> 10, (unsigned long long)et->st.fdes,
			(unsigned long long)et->st.unsupported, (double)build_ns / 1e6);
}

/* Entries kept at most: beyond, the unused ones go (reclaim). */
static size_t tabs_max(const struct unwind *u)
{
	return (size_t)u->m.max_tables * 2;
}

/* Back to the free list: t no longer in the index. */
static void forget_tab(struct unwind *u, uint32_t i)
{
	struct tab *t = &u->tabs[i];

	unwind_files__forget_tab(u, i);
	drop_rows(u, t);
	hashtab__remove(u->index, hashtab__hash_u64(t->key), &t->key, NULL);
	t->live = false;
	u->live_tabs--;
	if (!GROW(u->free_tabs, u->cap_free_tabs, u->nfree_tabs, 1))
		u->free_tabs[u->nfree_tabs++] = i; /* else the entry is not reused */
}

/* Build m's table into t and publish it. -errno if the file cannot be
 * opened now (t unchanged). */
static int build(struct unwind *u, const struct proc *pr, const struct procmap *m, struct tab *t)
{
	struct ehf_table et;
	struct stat st;
	int fd, err;

	fd = pr ? procmaps__open(pr->tgid, m, &st) : open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pr ? fd : -errno;
	int64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID); /* CPU time: load-proof */
	err = ehf__build_fd(fd, &et);
	close(fd);
	int64_t dt = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	u->st.build_ns += (uint64_t)dt;
	if (err) {
		memset(&et, 0, sizeof(et));
		if (u->verbose)
			fprintf(stderr, "pmubpf: unwind: %s: no CFI (%s): frame pointers there\n",
				base_name(m->path), strerror(-err));
	}
	t->tried_ns = mono_ns();
	t->tried_releases = u->releases;
	publish(u, base_name(m->path), &et, t, dt);
	ehf__free(&et);
	return 0;
}

/* The table of the object mapped by m (opened as procmaps__open does), built
 * at first sight. NULL if it cannot be read now (not cached: retried). */
const struct tab *unwind_table_for(struct unwind *u, const struct proc *pr,
				  const struct procmap *m, const struct elfobj *obj)
{
	uint64_t idx, key = elfobj__key(obj), h = hashtab__hash_u64(key);
	uint32_t i;

	if (hashtab__find(u->index, h, &key, &idx)) {
		struct tab *t = &u->tabs[idx];

		t->pin = u->epoch;
		/* Left out for want of room, and room may have come since. */
		if (t->full && t->tried_releases != u->releases &&
		    mono_ns() - t->tried_ns >= FULL_RETRY_NS)
			build(u, pr, m, t);
		return t;
	}
	if (u->live_tabs >= tabs_max(u))
		reclaim(u);
	if (u->nfree_tabs) {
		i = u->free_tabs[--u->nfree_tabs];
	} else if (GROW(u->tabs, u->cap, u->ntabs, 1)) {
		return NULL;
	} else {
		i = (uint32_t)u->ntabs++;
	}
	struct tab *t = &u->tabs[i];
	*t = (struct tab){ .key = key, .id = PMUBPF_UW_NO_TABLE, .pin = u->epoch, .live = true };
	u->live_tabs++;
	if (build(u, pr, m, t) || hashtab__insert(u->index, h, i)) {
		forget_tab(u, i);
		return NULL;
	}
	return t;
}

/* Our own vDSO is every 64-bit process's (one kernel image). */
static const struct tab *vdso_table(struct unwind *u, uint64_t map_len)
{
	if (!u->vdso_done) {
		const uint8_t *img = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
		FILE *f = fopen("/proc/self/maps", "r");
		char line[512];
		unsigned long lo = 0, hi = 0;
		struct ehf_table et;

		u->vdso_done = true;
		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, "[vdso]"))
				sscanf(line, "%lx-%lx", &lo, &hi);
		if (f)
			fclose(f);
		if (!img || lo != (uintptr_t)img || hi <= lo)
			return NULL;
		u->vdso_size = hi - lo;
		/* Load bias: the image is mapped from its lowest PT_LOAD. */
		const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
		u->vdso_min_vaddr = UINT64_MAX;
		if (eh->e_phoff < u->vdso_size && eh->e_phnum < 64 &&
		    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) <= u->vdso_size) {
			const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff);

			for (int i = 0; i < eh->e_phnum; i++)
				if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr - ph[i].p_offset < u->vdso_min_vaddr)
					u->vdso_min_vaddr = ph[i].p_vaddr - ph[i].p_offset;
		}
		if (u->vdso_min_vaddr == UINT64_MAX || ehf__build_mem(img, u->vdso_size, &et))
			return NULL;
		publish(u, "[vdso]", &et, &u->vdso, 0);
		ehf__free(&et);
		unwind_files__note_vdso(u, u->vdso_min_vaddr);
	}
	if (u->vdso.id == PMUBPF_UW_NO_TABLE || map_len != u->vdso_size)
		return NULL;
	return &u->vdso;
}

/* Give back every table no slot refers to (after freeing the slots past
 * their grace period: a BPF program may still walk a retired slot's
 * tables within it, never after). Such a table is built again if its
 * object is mapped again. */
static void reclaim(struct unwind *u)
{
	bool unfiled = false;

	unwind_slots__sweep(u);
	/* Files BPF finds a table by go first, and a sample that found one
	 * before may still be walking its rows: they are given back only
	 * after every BPF program running now has ended (an RCU grace
	 * period: BPF programs run inside rcu_read_lock). */
	for (uint32_t i = 0; i < u->ntabs; i++) {
		const struct tab *t = &u->tabs[i];

		if (t->live && !t->refs && t->pin != u->epoch && t->nfiles) {
			unwind_files__forget_tab(u, i);
			unfiled = true;
		}
	}
	if (unfiled && syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(SLOT_GRACE_NS / 1000);
	for (uint32_t i = 0; i < u->ntabs; i++) {
		const struct tab *t = &u->tabs[i];

		if (t->live && !t->refs && t->pin != u->epoch) {
			forget_tab(u, i);
			u->st.tables_reclaimed++;
		}
	}
}

/* A process gone before it was read (its image from BPF or the reports):
 * no slot, but its files' tables, for BPF to unwind the next process of
 * them by. Under churn most processes are never read alive: a compiler
 * run a thousand times would never get a table otherwise. */
static void files_of_gone(struct unwind *u, const struct proc *pr)
{
	if (u->m.files_fd < 0 || !pr->objs)
		return;
	for (size_t i = 0; i < pr->maps.n; i++) {
		const struct procmap *m = &pr->maps.maps[i];
		const struct elfobj *obj = pr->objs[i];
		const struct tab *t;

		if (!m->exec || !obj || !m->path || m->path[0] != '/' || unwind_files__known(u, m))
			continue;
		u->epoch++;
		t = unwind_table_for(u, NULL, m, obj);
		if (t && t->id != PMUBPF_UW_NO_TABLE)
			unwind_files__note(u, m, obj, (uint32_t)(t - u->tabs));
	}
}

void unwind__proc(void *ctx, const struct proc *pr)
{
	struct unwind *u = ctx;
	static struct pmubpf_umap up[PMUBPF_UW_MAX_MAPS]; /* 4 KiB: not on the stack */
	uint32_t tix[PMUBPF_UW_MAX_MAPS];
	uint32_t n = 0;
	uint64_t dropped = 0;

	if (pr->dead) {
		unwind_slots__release(u, pr); /* also once stopped: the summary counts slots */
		if (!u->stopped)
			files_of_gone(u, pr);
		return;
	}
	if (u->stopped)
		return;
	memset(up, 0, sizeof(up));
	u->epoch++; /* the tables found from here on are pinned */
	for (size_t i = 0; i < pr->maps.n; i++) {
		const struct procmap *m = &pr->maps.maps[i];
		const struct elfobj *obj = pr->objs ? pr->objs[i] : NULL;
		const struct tab *t = NULL;
		uint64_t bias = 0, mv;

		if (!m->exec || !m->path)
			continue;
		if (!m->path[0]) {
			/* anonymous: JIT code, walked by frame pointer (JITs
			 * keep them); an address in no mapping stops the walk */
		} else if (!strcmp(m->path, "[vdso]")) {
			t = vdso_table(u, m->end - m->start);
			if (t)
				bias = m->start - u->vdso_min_vaddr + t->base;
		} else if (m->path[0] == '[') {
			continue;
		} else if (obj && !elfobj__mapping_vaddr(obj, m->pgoff, m->end - m->start, &mv)) {
			t = unwind_table_for(u, pr, m, obj);
			if (t) {
				bias = m->start - mv + t->base;
				unwind_files__note(u, m, obj, (uint32_t)(t - u->tabs));
			}
		}
		if (n == PMUBPF_UW_MAX_MAPS) {
			dropped++;
			continue;
		}
		tix[n] = t && t != &u->vdso ? (uint32_t)(t - u->tabs) : NO_TAB;
		up[n++] = (struct pmubpf_umap){
			.start = m->start, .end = m->end, .bias = bias,
			.table = t ? t->id : PMUBPF_UW_NO_TABLE,
		};
	}
	if (!n)
		return; /* kernel thread, or gone */
	uint64_t h = hashtab__hash_bytes(up, n * sizeof(up[0]));
	int old = unwind_slots__current(u, pr->tgid);
	if (old >= 0 && u->slots[old].pgen == pr->pgen && u->slots[old].hash == h)
		return; /* nothing changed for unwinding */
	u->st.maps_dropped += dropped;
	if (!u->nfree)
		unwind_slots__sweep(u);
	if (!u->nfree) {
		u->st.slots_full++;
		return; /* BPF keeps the old slot, or walks by frame pointer */
	}
	uint32_t s = u->free_slots[--u->nfree];
	struct pmubpf_upid pid = { .slot = s, .pgen = pr->pgen, .nmaps = n };
	/* Its tables' references first: a slot whose tables could be
	 * reclaimed under it would send BPF into another object's rows. */
	uint32_t *refs = malloc(n * sizeof(*refs));
	/* The slot is free (no pid entry points at it): fill it, then
	 * publish it (the syscall orders the stores before it). */
	if (!refs || write_array(u->m.slots_fd, s * PMUBPF_UW_MAX_MAPS, up, n, sizeof(up[0])) ||
	    bpf_map_update_elem(u->m.pids_fd, &pr->tgid, &pid, BPF_ANY)) {
		free(refs);
		u->free_slots[u->nfree++] = s;
		u->st.slots_full++;
		return;
	}
	memcpy(refs, tix, n * sizeof(*refs));
	for (uint32_t k = 0; k < n; k++)
		if (tix[k] != NO_TAB)
			u->tabs[tix[k]].refs++;
	u->slots[s] = (struct slot){ .tgid = pr->tgid, .pgen = pr->pgen, .used = true, .hash = h,
				     .tix = refs, .ntix = n };
	u->st.slots_used++;
	if (old >= 0)
		unwind_slots__retire(u, (uint32_t)old);
	else
		u->st.procs++;
}

void unwind__preload_vdso(struct unwind *u)
{
	if (u->m.files_fd >= 0 && !u->stopped)
		vdso_table(u, 0); /* built and noted; the size asked matches none */
}

void unwind__stop(struct unwind *u)
{
	u->stopped = true;
}

void unwind__stats(const struct unwind *u, struct unwind_stats *st)
{
	*st = u->st;
}

void unwind__summary(const struct unwind_stats *st, char *buf, size_t len)
{
	snprintf(buf, len,
		 "unwind tables: %llu objects, %llu rows (%llu KiB of %llu KiB), %llu rows by frame pointer, "
		 "%llu objects without CFI, %llu left out (full), %llu reclaimed (unused); %llu processes, slots %llu/%llu in use, "
		 "%llu without a slot, %llu reclaimed from processes gone before their slot was published, "
		 "%llu mappings over %d; %llu files found by inode (%llu left out, %llu built before their first process; "
		 "%llu asked for by BPF, %llu answered); "
		 "%llu KiB of BPF maps; %.1f ms CPU parsing",
		 (unsigned long long)st->objects, (unsigned long long)st->rows,
		 (unsigned long long)(st->rows * sizeof(struct pmubpf_urow) >> 10),
		 (unsigned long long)(st->max_rows * sizeof(struct pmubpf_urow) >> 10),
		 (unsigned long long)st->unsupported, (unsigned long long)st->objects_nocfi,
		 (unsigned long long)st->objects_full, (unsigned long long)st->tables_reclaimed,
		 (unsigned long long)st->procs,
		 (unsigned long long)st->slots_used, (unsigned long long)st->max_slots,
		 (unsigned long long)st->slots_full, (unsigned long long)st->slots_orphaned,
		 (unsigned long long)st->maps_dropped,
		 PMUBPF_UW_MAX_MAPS, (unsigned long long)st->files, (unsigned long long)st->files_full,
		 (unsigned long long)st->preloaded, (unsigned long long)st->asked, (unsigned long long)st->answered,
		 (unsigned long long)(st->bpf_bytes >> 10),
		 (double)st->build_ns / 1e6);
}
