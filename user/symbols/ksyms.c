/* ksyms.c — kernel text symbols from /proc/kallsyms.
 *
 * Symbolization input for kernel frames: loaded once per recording, before
 * sampling starts, so that frames in modules unloaded mid-recording still
 * get names. Only text symbols (t T w W) are kept, sorted by address with
 * one symbol per address; every name and module name lives in one string
 * arena (module names interned, since kallsyms lists each module's symbols
 * together). Lookup returns the closest lower symbol.
 */
#include "ksyms.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sorted.h"
#include "lib/grow.h"
#include "lib/hex.h"

struct ksyms {
	struct ksym *syms;
	size_t n;
	char *arena;
};

/* While parsing, names are arena offsets (the arena moves as it grows).
 * The same size as struct ksym: the array becomes the symbols in place
 * (a second array of 120k+ entries was 3 MiB more at the peak). */
#define NO_MOD UINT32_MAX
struct kent {
	uint64_t addr;
	uint32_t name_off;
	uint32_t mod_off; /* NO_MOD: core kernel */
	uint32_t seq;     /* input order, for a deterministic sort */
	bool global;      /* 'T' / 'W' */
};
_Static_assert(sizeof(struct kent) == sizeof(struct ksym), "kent becomes ksym in place");

struct arena {
	char *buf;
	size_t len, cap;
};

static bool arena_add(struct arena *a, const char *s, size_t len, uint32_t *off)
{
	if (a->len + len + 1 > UINT32_MAX || GROW(a->buf, a->cap, a->len, len + 1))
		return false;
	memcpy(a->buf + a->len, s, len);
	a->buf[a->len + len] = '\0';
	*off = a->len;
	a->len += len + 1;
	return true;
}

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* Parse "ADDR TYPE NAME[\t[MODULE]]" (no newline). Returns false if the
 * line is malformed. */
static bool parse_line(char *line, uint64_t *addr, char *type, char **name,
		       size_t *name_len, char **mod, size_t *mod_len)
{
	const char *q = line;
	char *p;

	if (!hex_parse(&q, addr) || *q != ' ')
		return false;
	p = line + (q - line) + 1;
	if (!*p || p[1] != ' ')
		return false;
	*type = *p;
	p += 2;
	*name = p;
	while (*p && *p != '\t' && *p != ' ')
		p++;
	*name_len = (size_t)(p - *name);
	if (!*name_len)
		return false;
	*mod = NULL;
	*mod_len = 0;
	while (*p == '\t' || *p == ' ')
		p++;
	if (*p == '[') {
		char *close = strchr(p + 1, ']');
		if (!close || close == p + 1)
			return false;
		*mod = p + 1;
		*mod_len = (size_t)(close - (p + 1));
	}
	return true;
}

static int cmp_kent(const void *a, const void *b)
{
	const struct kent *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Keep one symbol per address: the first global one, else the first. */
static size_t dedup(struct kent *e, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n;) {
		size_t j = i, best = i;
		for (; j < n && e[j].addr == e[i].addr; j++)
			if (e[j].global && !e[best].global)
				best = j;
		e[out++] = e[best];
		i = j;
	}
	return out;
}

struct ksyms *ksyms__load(const char *path)
{
	struct arena ar = { 0 };
	struct kent *ents = NULL;
	size_t n = 0, cap = 0, parsed = 0;
	uint32_t seq = 0, last_mod_off = NO_MOD;
	char *last_mod = NULL; /* copy of the last module name, for interning */
	size_t last_mod_len = 0;
	bool any_nonzero = false, sorted = true;
	char *line = NULL;
	size_t line_cap = 0;
	struct ksyms *k = NULL;
	int err = ENOMEM;
	FILE *f = fopen(path, "re");

	if (!f)
		return NULL;
	errno = 0;
	while (getline(&line, &line_cap, f) > 0) {
		uint64_t addr;
		char type, *name, *mod;
		size_t name_len, mod_len;

		line[strcspn(line, "\n")] = '\0';
		if (!parse_line(line, &addr, &type, &name, &name_len, &mod, &mod_len))
			continue;
		parsed++;
		if (addr)
			any_nonzero = true;
		if (!is_text_type(type))
			continue;
		if (GROW(ents, cap, n, 1))
			goto out;
		struct kent *e = &ents[n];
		e->addr = addr;
		e->seq = seq++;
		e->global = type == 'T' || type == 'W';
		if (!arena_add(&ar, name, name_len, &e->name_off))
			goto out;
		e->mod_off = NO_MOD;
		if (mod) {
			if (!last_mod || mod_len != last_mod_len ||
			    memcmp(mod, last_mod, mod_len)) {
				char *copy = strndup(mod, mod_len);
				if (!copy || !arena_add(&ar, mod, mod_len, &last_mod_off)) {
					free(copy);
					goto out;
				}
				free(last_mod);
				last_mod = copy;
				last_mod_len = mod_len;
			}
			e->mod_off = last_mod_off;
		}
		if (n && ents[n - 1].addr > addr)
			sorted = false;
		n++;
	}
	if (ferror(f)) {
		err = errno ? errno : EIO;
		goto out;
	}
	if (parsed && !any_nonzero) {
		err = EPERM; /* kptr_restrict hides every address */
		goto out;
	}
	if (!n) {
		err = ENODATA;
		goto out;
	}
	if (!sorted)
		qsort(ents, n, sizeof(*ents), cmp_kent);
	n = dedup(ents, n);

	k = calloc(1, sizeof(*k));
	if (!k)
		goto out;
	/* Both at their size: they are kept for the whole recording. */
	char *buf = realloc(ar.buf, ar.len);
	if (buf)
		ar.buf = buf;
	struct kent *fit = realloc(ents, n * sizeof(*ents));
	if (fit)
		ents = fit;
	for (size_t i = 0; i < n; i++) {
		struct kent e = ents[i];
		struct ksym sym = {
			.addr = e.addr,
			.name = ar.buf + e.name_off,
			.module = e.mod_off == NO_MOD ? NULL : ar.buf + e.mod_off,
		};

		memcpy(&ents[i], &sym, sizeof(sym));
	}
	k->syms = (struct ksym *)ents;
	ents = NULL;
	k->n = n;
	k->arena = ar.buf;
	ar.buf = NULL;
	err = 0;
out:
	fclose(f);
	free(line);
	free(last_mod);
	free(ents);
	free(ar.buf);
	if (!k)
		errno = err;
	return k;
}

const struct ksym *ksyms__lookup(const struct ksyms *k, uint64_t addr)
{
	size_t i;

	if (!k)
		return NULL;
	i = UPPER_BOUND(k->syms, k->n, addr, addr);
	return i ? &k->syms[i - 1] : NULL;
}

size_t ksyms__count(const struct ksyms *k)
{
	return k ? k->n : 0;
}

void ksyms__release(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->arena);
	k->syms = NULL;
	k->arena = NULL;
	k->n = 0;
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->arena);
	free(k);
}

struct ksyms_loader {
	pthread_t th;
	bool started;
	char *path;
	struct ksyms *ks;
	int err;
};

static void *load_thread(void *arg)
{
	struct ksyms_loader *l = arg;

	l->ks = ksyms__load(l->path);
	l->err = l->ks ? 0 : errno;
	/* This thread's malloc arena held the parse's outgrown arrays
	 * (every doubling's old copy, ~7 MiB free but resident for the
	 * whole recording): give them back. */
	malloc_trim(0);
	return NULL;
}

struct ksyms_loader *ksyms__load_async(const char *path)
{
	struct ksyms_loader *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->path = strdup(path);
	if (!l->path) {
		free(l);
		return NULL;
	}
	l->started = pthread_create(&l->th, NULL, load_thread, l) == 0;
	return l;
}

struct ksyms *ksyms__join(struct ksyms_loader *l)
{
	struct ksyms *ks;
	int err;

	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	if (l->started) {
		pthread_join(l->th, NULL);
		ks = l->ks;
		err = l->err;
	} else {
		ks = ksyms__load(l->path);
		err = errno;
	}
	free(l->path);
	free(l);
	if (!ks)
		errno = err;
	return ks;
}
