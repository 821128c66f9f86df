/* unwind_files.c — files' tables for BPF: unwind_files[(dev, ino)] = the
 * table of the object a file holds and where its executable segments
 * are, so that a process with no slot yet is unwound by the tables of
 * the files it maps (bpf/unwind.bpf.h, pmubpf_uw_gather) rather than by
 * frame pointer. Noted for every file mapping a process read here has a
 * table for (unwind__proc), and for files asked for before any process
 * maps them (unwind__preload: libc, the loader, the shell, the command).
 *
 * A file is known by the kernel's identity of its inode, the one
 * /proc/PID/maps prints and BPF reads from the VMA: the device (major <<
 * 20 | minor) and the inode number. An entry goes when its table is
 * given back (reclaim: the entries first, the rows a grace period later).
 * A file rewritten in place (same inode, other content) keeps its old
 * entry until a process mapping it is read here, which notes the new
 * table: its first samples meanwhile may end early (counted).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "lib/grow.h"
#include "lib/hashtab.h"
#include "symbols/elfsym.h"
#include "unwind_int.h"

struct ufile {
	struct pmubpf_ufile_key key;
	uint32_t tix; /* tabs index; NO_TAB: entry free */
};

static bool file_eq(const void *key, uint64_t idx, void *ctx)
{
	const struct unwind *u = ctx;

	return !memcmp(&u->files[idx].key, key, sizeof(struct pmubpf_ufile_key));
}

static uint64_t file_hash(const struct pmubpf_ufile_key *k)
{
	return hashtab__hash_mix(hashtab__hash_u64(k->ino), k->dev);
}

int unwind_files__init(struct unwind *u)
{
	u->files_index = hashtab__new(file_eq, u);
	return u->files_index ? 0 : -ENOMEM;
}

void unwind_files__fini(struct unwind *u)
{
	hashtab__free(u->files_index);
	free(u->files);
	free(u->free_files);
}

/* Write key's entry: table t, segments segs[0..n) (adj from the table's
 * base). 0, or -errno (the map full: counted). */
static int write_entry(struct unwind *u, const struct pmubpf_ufile_key *key, const struct tab *t,
		       const struct elfseg *segs, size_t n)
{
	struct pmubpf_ufile v = { .table = t->id, .nsegs = (uint32_t)n };

	for (size_t i = 0; i < n; i++) {
		v.seg[i].off = segs[i].off;
		v.seg[i].end = segs[i].off + segs[i].filesz;
		v.seg[i].adj = segs[i].off - segs[i].vaddr + t->base;
	}
	if (bpf_map_update_elem(u->m.files_fd, key, &v, BPF_ANY)) {
		u->st.files_full++;
		return -errno;
	}
	return 0;
}

/* key's entry here (its files index), or -1. */
static int64_t find(const struct unwind *u, const struct pmubpf_ufile_key *key)
{
	uint64_t idx;

	return hashtab__find(u->files_index, file_hash(key), key, &idx) ? (int64_t)idx : -1;
}

/* Key's entry for obj's table tix: its exec segments are read only where
 * an entry is written (most calls find the file known: under churn,
 * every new process's libc). */
static int note(struct unwind *u, const struct pmubpf_ufile_key *key, uint32_t tix,
		const struct elfobj *obj)
{
	struct elfseg segs[PMUBPF_UW_FILE_SEGS];
	struct tab *t = &u->tabs[tix];
	int64_t at = find(u, key);
	size_t n;
	uint32_t i;
	int err;

	if (u->m.files_fd < 0 || t->id == PMUBPF_UW_NO_TABLE)
		return -ENOENT;
	if (at >= 0 && u->files[at].tix == tix)
		return 0; /* the usual case: known */
	if (!(n = elfobj__exec_segments(obj, segs, PMUBPF_UW_FILE_SEGS)))
		return -ENOENT;
	if (at >= 0) {
		struct ufile *f = &u->files[at];

		/* The file now holds another object (rewritten in place). */
		if ((err = write_entry(u, key, t, segs, n)))
			return err;
		u->tabs[f->tix].nfiles--;
		f->tix = tix;
		t->nfiles++;
		return 0;
	}
	bool fresh = !u->nfree_files;

	if (!fresh) {
		i = u->free_files[--u->nfree_files];
	} else {
		if (GROW(u->files, u->cap_files, u->nfiles, 1))
			return -ENOMEM;
		i = (uint32_t)u->nfiles;
	}
	if ((err = write_entry(u, key, t, segs, n)) ||
	    (err = hashtab__insert(u->files_index, file_hash(key), i))) {
		bpf_map_delete_elem(u->m.files_fd, key);
		if (!fresh)
			u->free_files[u->nfree_files++] = i;
		return err;
	}
	if (fresh)
		u->nfiles++;
	u->files[i] = (struct ufile){ .key = *key, .tix = tix };
	t->nfiles++;
	u->st.files++;
	return 0;
}

int unwind_files__note_key(struct unwind *u, const struct pmubpf_ufile_key *key,
			   const struct elfobj *obj, uint32_t tix)
{
	return note(u, key, tix, obj);
}

bool unwind_files__known(const struct unwind *u, const struct procmap *m)
{
	struct pmubpf_ufile_key key = { .ino = m->inode, .dev = (m->dev_major << 20) | m->dev_minor };

	return find(u, &key) >= 0;
}

void unwind_files__note(struct unwind *u, const struct procmap *m, const struct elfobj *obj,
			uint32_t tix)
{
	struct pmubpf_ufile_key key = {
		.ino = m->inode,
		.dev = (m->dev_major << 20) | m->dev_minor,
	};

	if (!m->inode || tix == NO_TAB)
		return;
	note(u, &key, tix, obj);
}

void unwind_files__note_vdso(struct unwind *u, uint64_t min_vaddr)
{
	/* The vDSO is found by address, not by file: key 0, 0; its one
	 * segment covers the image, mapped from its lowest PT_LOAD. */
	static const struct pmubpf_ufile_key key = { 0 };
	struct elfseg seg = { .off = 0, .filesz = UINT64_MAX / 2, .vaddr = min_vaddr };

	if (u->m.files_fd >= 0 && u->vdso.id != PMUBPF_UW_NO_TABLE)
		write_entry(u, &key, &u->vdso, &seg, 1);
}

void unwind_files__forget_tab(struct unwind *u, uint32_t tix)
{
	for (size_t i = 0; i < u->nfiles && u->tabs[tix].nfiles; i++) {
		struct ufile *f = &u->files[i];

		if (f->tix != tix)
			continue;
		bpf_map_delete_elem(u->m.files_fd, &f->key);
		if (u->m.asked_fd >= 0) /* BPF may ask for it again */
			bpf_map_delete_elem(u->m.asked_fd, &f->key);
		hashtab__remove(u->files_index, file_hash(&f->key), &f->key, NULL);
		f->tix = NO_TAB;
		u->tabs[tix].nfiles--;
		u->st.files--;
		if (!GROW(u->free_files, u->cap_free_files, u->nfree_files, 1))
			u->free_files[u->nfree_files++] = (uint32_t)i;
	}
}
