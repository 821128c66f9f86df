/* procs_images.c — the images BPF sends as sampled processes end
 * (bpf/images.bpf.h, PMUBPF_NOTICE_IMAGE): each of a notice's entries
 * made a mapping, its path from the paths kept (BPF sends a file's path
 * alone, a PMUBPF_NOTICE_MAP of generation 0, before the first image
 * that maps it; a NOTICE_MAP of a generation is a mapping and its
 * path). procs.c gives it to
 * its generation's record: its snapshot if the process was gone before
 * its maps were read (procs_read.c), or merged as a report would be if
 * it was read and mapped more since.
 *
 * Paths: BPF sends a file's path once, and then only its (dev, ino);
 * the table here keeps them (bounded: past IMAGE_PATHS_MAX, a file's
 * entry is taken out of BPF's table, so that its path comes each time).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "lib/grow.h"
#include "lib/hashtab.h"
#include "procs_int.h"

#define IMAGE_PATHS_MAX 16384 /* as BPF's image_files */

struct image_path {
	uint64_t ino;
	uint32_t dev;
	char *path;
};

struct image_paths {
	struct hashtab *index; /* (dev, ino) -> index in v */
	struct image_path *v;
	size_t n, cap;
};

struct image_key {
	uint64_t ino;
	uint32_t dev, pad;
};

static bool path_eq(const void *key, uint64_t idx, void *ctx)
{
	const struct image_key *k = key;
	const struct image_paths *t = ctx;

	return t->v[idx].ino == k->ino && t->v[idx].dev == k->dev;
}

static uint64_t key_hash(const struct image_key *k)
{
	return hashtab__hash_mix(hashtab__hash_u64(k->ino), k->dev);
}

void procs_images_free(struct procs *p)
{
	struct image_paths *t = p->image_paths;

	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].path);
	free(t->v);
	hashtab__free(t->index);
	free(t);
	p->image_paths = NULL;
}

static const char *known_path(struct procs *p, const struct image_key *k)
{
	struct image_paths *t = p->image_paths;
	uint64_t idx;

	if (t && hashtab__find(t->index, key_hash(k), k, &idx))
		return t->v[idx].path;
	return NULL;
}

/* Keep k's path; if it cannot be kept, BPF must send it again. */
static void keep_path(struct procs *p, const struct image_key *k, const char *path)
{
	struct image_paths *t = p->image_paths;
	uint64_t idx;
	char *copy;

	/* Sent again (BPF's table forgot it): the newer path. */
	if (t && hashtab__find(t->index, key_hash(k), k, &idx)) {
		if (strcmp(t->v[idx].path, path) && (copy = strdup(path))) {
			free(t->v[idx].path);
			t->v[idx].path = copy;
		}
		return;
	}
	if (!t && (t = p->image_paths = calloc(1, sizeof(*t))) &&
	    !(t->index = hashtab__new(path_eq, t))) {
		free(t);
		t = p->image_paths = NULL;
	}
	if (!t || t->n >= IMAGE_PATHS_MAX || GROW(t->v, t->cap, t->n, 1) || !(copy = strdup(path)) ||
	    (hashtab__insert(t->index, key_hash(k), t->n) && (free(copy), 1))) {
		if (p->image_files_fd >= 0)
			bpf_map_delete_elem(p->image_files_fd, k);
		return;
	}
	t->v[t->n++] = (struct image_path){ k->ino, k->dev, copy };
}

/* The path of BPF's first k names (leaf first): "/" and the names from
 * the root. */
static void join_path(const struct pmubpf_map_notice *n, int k, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = k - 1; i >= 0 && i < PMUBPF_MAP_COMPS; i--) {
		int w = snprintf(buf + at, len - at, "/%.*s", PMUBPF_MAP_NAME, n->names[i]);

		if (w < 0 || (size_t)w >= len - at) {
			buf[0] = '\0';
			return;
		}
		at += (size_t)w;
	}
}

static bool is_file(const char *path, const struct pmubpf_map_notice *n)
{
	struct stat st;

	return !stat(path, &st) && st.st_ino == n->ino;
}

/* The path BPF sent, into buf (empty if none): from the mount
 * namespace's root, or from the process's own root (F_ROOT, a chroot
 * met on the way up) where only that names the file here: a loader in
 * the same chroot as the process, or a path too deep to send whole. Two
 * that differ are told apart by a stat each, once per file. */
static void sent_path(const struct pmubpf_map_notice *n, char *buf, size_t len)
{
	bool whole = !(n->flags & PMUBPF_MAP_F_LONG), own = n->flags & PMUBPF_MAP_F_ROOT;

	buf[0] = '\0';
	if (whole)
		join_path(n, n->ncomp, buf, len);
	if (!own || (whole && buf[0] && (n->rootk == n->ncomp || is_file(buf, n))))
		return;
	char *mine = malloc(len);

	if (!mine)
		return;
	join_path(n, n->rootk, mine, len);
	if (!buf[0] || is_file(mine, n))
		memcpy(buf, mine, len);
	free(mine);
}

bool procs_images_entry(struct procs *p, const struct pmubpf_image_map *e, const char *given,
			struct procmap *m)
{
	struct image_key k = { e->ino, e->dev, 0 };
	const char *path = given;

	p->st.image_maps++;
	if (e->flags & PMUBPF_MAP_F_VDSO)
		path = "[vdso]";
	else if (!(e->flags & PMUBPF_MAP_F_PATH) && !(path = known_path(p, &k)) && p->image_files_fd >= 0)
		bpf_map_delete_elem(p->image_files_fd, &k); /* the next time, with it */
	if (!path) {
		p->st.image_maps_unnamed++;
		return false;
	}
	*m = (struct procmap){
		.start = e->start, .end = e->end, .pgoff = e->pgoff * (uint64_t)sysconf(_SC_PAGESIZE),
		.inode = e->ino, .dev_major = e->dev >> 20, .dev_minor = e->dev & 0xfffff,
		.exec = true, .path = (char *)path,
	};
	return true;
}

bool procs_images_mapping(struct procs *p, const struct pmubpf_map_notice *n, size_t size,
			  struct procmap *m, char *buf, size_t len)
{
	struct image_key k = { n->ino, n->dev, 0 };
	const char *path = NULL;

	if (size < PMUBPF_MAP_NOTICE_SHORT || ((n->flags & PMUBPF_MAP_F_PATH) && size < sizeof(*n)))
		return false;
	if (n->flags & PMUBPF_MAP_F_PATH) {
		sent_path(n, buf, len);
		if (buf[0]) {
			path = buf;
			keep_path(p, &k, path);
		}
	}
	/* A path alone, before the image that maps it: not a mapping (one
	 * too long to send is counted at the mapping, unnamed). */
	if (n->hdr.pgen == 0)
		return false;
	struct pmubpf_image_map e = { .start = n->start, .end = n->end, .pgoff = n->pgoff,
				      .ino = n->ino, .dev = n->dev, .flags = n->flags };

	return procs_images_entry(p, &e, path, m);
}
