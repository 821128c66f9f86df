/* maplog.c — see maplog.h.
 *
 * The entries live in one ring in arrival order, each numbered by a
 * sequence number (seq; the ring slot is seq % cap). Each entry links to
 * the previous entry of its process (prev), and an index maps a tgid to
 * its latest entry: a process's history is a walk back along its chain
 * until the ring's oldest entry. Dropping from the front keeps that true:
 * a tgid whose latest entry goes has no entries left, and leaves the
 * index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/grow.h"
#include "lib/hashtab.h"
#include "maplog.h"

enum { ENT_MAP, ENT_EXEC, ENT_FORK };

struct ent {
	int64_t t;
	uint64_t prev;      /* seq + 1 of this tgid's previous entry; 0: none */
	uint64_t start, end, pgoff, inode;
	uint32_t tgid;
	uint32_t aux;       /* ENT_FORK: the parent; ENT_MAP: the path's id */
	uint32_t dev_major, dev_minor;
	uint8_t kind;
};

struct pstr {
	char *s;
	uint32_t refs;
};

struct maplog {
	struct ent *v;
	size_t cap;
	uint64_t head, tail;      /* seqs: oldest held, next to give */
	struct hashtab *latest;   /* tgid -> seq of its latest entry */
	struct pstr *paths;       /* by id; a free one has s == NULL */
	size_t npaths, cappaths;
	uint32_t *free_ids;
	size_t nfree, capfree;
	struct hashtab *path_index; /* string -> id */
	struct maplog_stats st;
	uint64_t *scratch;        /* maplog__image's walk */
	size_t capscratch;
};

static struct ent *at(const struct maplog *l, uint64_t seq)
{
	return &l->v[seq % l->cap];
}

static bool tgid_eq(const void *key, uint64_t seq, void *ctx)
{
	return at(ctx, seq)->tgid == *(const uint32_t *)key;
}

static bool path_eq(const void *key, uint64_t id, void *ctx)
{
	const struct maplog *l = ctx;

	return !strcmp(l->paths[id].s, key);
}

struct maplog *maplog__new(void)
{
	struct maplog *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->latest = hashtab__new(tgid_eq, l);
	l->path_index = hashtab__new(path_eq, l);
	if (!l->latest || !l->path_index) {
		maplog__free(l);
		return NULL;
	}
	return l;
}

void maplog__free(struct maplog *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->npaths; i++)
		free(l->paths[i].s);
	free(l->paths);
	free(l->free_ids);
	free(l->v);
	free(l->scratch);
	hashtab__free(l->latest);
	hashtab__free(l->path_index);
	free(l);
}

/* The id of path, its count taken; UINT32_MAX on ENOMEM. */
static uint32_t path_get(struct maplog *l, const char *path)
{
	uint64_t h = hashtab__hash_str(path), id;

	if (hashtab__find(l->path_index, h, path, &id)) {
		l->paths[id].refs++;
		return (uint32_t)id;
	}
	char *s = strdup(path);
	if (!s)
		return UINT32_MAX;
	if (l->nfree) {
		id = l->free_ids[--l->nfree];
	} else {
		/* free_ids keeps room for every id: path_put never fails. */
		if (GROW(l->paths, l->cappaths, l->npaths, 1) ||
		    GROW(l->free_ids, l->capfree, l->npaths, 1)) {
			free(s);
			return UINT32_MAX;
		}
		id = l->npaths++;
	}
	if (hashtab__insert(l->path_index, h, id)) {
		free(s);
		l->paths[id].s = NULL;
		l->free_ids[l->nfree++] = (uint32_t)id;
		return UINT32_MAX;
	}
	l->paths[id] = (struct pstr){ .s = s, .refs = 1 };
	return (uint32_t)id;
}

static void path_put(struct maplog *l, uint32_t id)
{
	struct pstr *p = &l->paths[id];

	if (--p->refs)
		return;
	hashtab__remove(l->path_index, hashtab__hash_str(p->s), p->s, NULL);
	free(p->s);
	p->s = NULL;
	l->free_ids[l->nfree++] = id; /* room kept (path_get) */
}

/* Drop the oldest entry. */
static void pop(struct maplog *l)
{
	struct ent *e = at(l, l->head);
	uint64_t seq;

	if (hashtab__find(l->latest, hashtab__hash_u64(e->tgid), &e->tgid, &seq) && seq == l->head)
		hashtab__remove(l->latest, hashtab__hash_u64(e->tgid), &e->tgid, NULL);
	if (e->kind == ENT_MAP)
		path_put(l, e->aux);
	l->head++;
}

/* Room for one more entry: the ring grows up to MAPLOG_MAX, then drops
 * its oldest. */
static int make_room(struct maplog *l)
{
	if (l->tail - l->head < l->cap)
		return 0;
	if (l->cap < MAPLOG_MAX) {
		size_t ncap = l->cap ? l->cap * 2 : 1024;
		struct ent *nv = malloc(ncap * sizeof(*nv));

		if (nv) {
			for (uint64_t s = l->head; s < l->tail; s++)
				nv[s % ncap] = *at(l, s);
			free(l->v);
			l->v = nv;
			l->cap = ncap;
			return 0;
		}
		if (!l->cap)
			return -ENOMEM;
	}
	pop(l);
	l->st.dropped++;
	return 0;
}

static struct ent *push(struct maplog *l, uint32_t tgid, int64_t t, uint8_t kind)
{
	uint64_t h = hashtab__hash_u64(tgid), prev;
	struct ent *e;

	if (make_room(l) || hashtab__reserve(l->latest, hashtab__count(l->latest) + 1))
		return NULL;
	e = at(l, l->tail);
	*e = (struct ent){ .t = t, .tgid = tgid, .kind = kind };
	if (hashtab__remove(l->latest, h, &tgid, &prev))
		e->prev = prev + 1;
	hashtab__insert(l->latest, h, l->tail); /* room reserved */
	l->tail++;
	return e;
}

void maplog__map(struct maplog *l, uint32_t tgid, int64_t t, const struct procmap *m)
{
	uint32_t id = path_get(l, m->path);
	struct ent *e;

	if (id == UINT32_MAX)
		return;
	e = push(l, tgid, t, ENT_MAP);
	if (!e) {
		path_put(l, id);
		return;
	}
	e->aux = id;
	e->start = m->start;
	e->end = m->end;
	e->pgoff = m->pgoff;
	e->inode = m->inode;
	e->dev_major = m->dev_major;
	e->dev_minor = m->dev_minor;
}

void maplog__exec(struct maplog *l, uint32_t tgid, int64_t t)
{
	push(l, tgid, t, ENT_EXEC);
}

void maplog__fork(struct maplog *l, uint32_t tgid, uint32_t ptgid, int64_t t)
{
	struct ent *e = push(l, tgid, t, ENT_FORK);

	if (e)
		e->aux = ptgid;
}

void maplog__prune(struct maplog *l, int64_t now)
{
	while (l->head < l->tail && at(l, l->head)->t < now - MAPLOG_RETAIN_NS)
		pop(l);
}

/* tgid's entries, oldest first in time, into l->scratch (seqs); how many,
 * or -ENOMEM. */
static long history(struct maplog *l, uint32_t tgid)
{
	uint64_t seq;
	size_t n = 0;

	if (!hashtab__find(l->latest, hashtab__hash_u64(tgid), &tgid, &seq))
		return 0;
	for (;;) {
		if (GROW(l->scratch, l->capscratch, n, 1))
			return -ENOMEM;
		l->scratch[n++] = seq;
		uint64_t prev = at(l, seq)->prev;
		if (!prev || prev - 1 < l->head)
			break;
		seq = prev - 1;
	}
	/* Newest first now: reverse, then order by time (records of one
	 * process reach us through several CPUs' buffers, so arrival order
	 * is nearly but not exactly time order: an insertion sort). */
	for (size_t i = 0; i < n / 2; i++) {
		uint64_t x = l->scratch[i];

		l->scratch[i] = l->scratch[n - 1 - i];
		l->scratch[n - 1 - i] = x;
	}
	for (size_t i = 1; i < n; i++) {
		uint64_t x = l->scratch[i];
		size_t j = i;

		while (j && at(l, l->scratch[j - 1])->t > at(l, x)->t) {
			l->scratch[j] = l->scratch[j - 1];
			j--;
		}
		l->scratch[j] = x;
	}
	return (long)n;
}

bool maplog__exec_between(const struct maplog *l, uint32_t tgid, int64_t after, int64_t before)
{
	uint64_t seq;

	if (!hashtab__find(l->latest, hashtab__hash_u64(tgid), &tgid, &seq))
		return false;
	for (;;) {
		const struct ent *e = at(l, seq);

		if (e->kind == ENT_EXEC && e->t > after && e->t <= before)
			return true;
		if (!e->prev || e->prev - 1 < l->head)
			return false;
		seq = e->prev - 1;
	}
}

static int cmp_start(const void *a, const void *b)
{
	const struct procmap *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

int maplog__image(struct maplog *l, uint32_t tgid, int64_t t, struct procmaps *out,
		  struct maplog_origin *origin)
{
	long n = history(l, tgid);
	size_t first = 0, end, k = 0, cap = 0;
	struct procmap *v = NULL;

	*origin = (struct maplog_origin){ .kind = MAPLOG_UNKNOWN };
	if (n < 0)
		return -ENOMEM;
	/* The image's start: the last exec or fork at or before t. */
	for (long i = 0; i < n; i++) {
		const struct ent *e = at(l, l->scratch[i]);

		if (e->t > t)
			break;
		if (e->kind == ENT_EXEC || e->kind == ENT_FORK) {
			*origin = (struct maplog_origin){
				.kind = e->kind == ENT_EXEC ? MAPLOG_EXEC : MAPLOG_FORK,
				.ptgid = e->kind == ENT_FORK ? e->aux : 0, .t = e->t,
			};
			first = (size_t)i + 1;
		}
	}
	/* Its end: the next exec. */
	for (end = first; end < (size_t)n && at(l, l->scratch[end])->kind != ENT_EXEC; end++)
		if (origin->kind == MAPLOG_EXEC && !origin->exe_inode &&
		    at(l, l->scratch[end])->kind == ENT_MAP)
			origin->exe_inode = at(l, l->scratch[end])->inode;
	for (size_t i = first; i < end; i++) {
		const struct ent *e = at(l, l->scratch[i]);

		if (e->kind != ENT_MAP)
			continue;
		/* A later mapping replaces the earlier ones it overlaps
		 * (MAP_FIXED over them; munmap is not reported). */
		size_t j = 0;
		for (size_t i2 = 0; i2 < k; i2++) {
			if (v[i2].start < e->end && e->start < v[i2].end)
				free(v[i2].path);
			else
				v[j++] = v[i2];
		}
		k = j;
		if (GROW(v, cap, k, 1))
			goto nomem;
		v[k] = (struct procmap){
			.start = e->start, .end = e->end, .pgoff = e->pgoff, .inode = e->inode,
			.dev_major = e->dev_major, .dev_minor = e->dev_minor, .exec = true,
			.path = strdup(l->paths[e->aux].s),
		};
		if (!v[k].path)
			goto nomem;
		k++;
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_start);
	procmaps__free(out);
	out->maps = v;
	out->n = k;
	return (int)k;
nomem:
	for (size_t i = 0; i < k; i++)
		free(v[i].path);
	free(v);
	return -ENOMEM;
}

int maplog__layer(struct procmaps *over, const struct procmaps *under)
{
	size_t n = over->n + under->n, k = 0;
	struct procmap *v = malloc((n ? n : 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < under->n; i++) {
		const struct procmap *u = &under->maps[i];
		bool covered = false;

		for (size_t j = 0; j < over->n && !covered; j++)
			covered = u->start < over->maps[j].end && over->maps[j].start < u->end;
		if (covered)
			continue;
		v[k] = *u;
		v[k].path = strdup(u->path);
		if (!v[k].path) {
			for (size_t i2 = 0; i2 < k; i2++)
				free(v[i2].path);
			free(v);
			return -ENOMEM;
		}
		k++;
	}
	if (over->n)
		memcpy(v + k, over->maps, over->n * sizeof(*v));
	k += over->n;
	qsort(v, k, sizeof(*v), cmp_start);
	free(over->maps); /* its paths moved */
	over->maps = v;
	over->n = k;
	return 0;
}

const struct maplog_stats *maplog__stats(struct maplog *l)
{
	l->st.held = l->tail - l->head;
	return &l->st;
}
