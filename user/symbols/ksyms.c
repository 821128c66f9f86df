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
	uint64_t size;     /* 0: unknown */
	uint32_t name_off;
	uint32_t mod_off;  /* NO_MOD: core kernel */
	uint32_t seq;      /* input order, for a deterministic sort */
	bool global;       /* 'T' / 'W' */
};
_Static_assert(sizeof(struct kent) == sizeof(struct ksym), "kent becomes ksym in place");

/* A table being put together, from either source: symbols in any order,
 * names and module names in one arena (module names interned, since both
 * sources give each module's symbols together). */
struct ksyms_builder {
	char *buf;
	size_t len, cap;
	struct kent *ents;
	size_t n, cap_ents;
	uint32_t seq, last_mod_off;
	char *last_mod; /* copy of the last module name, for interning */
	size_t last_mod_len;
	bool unsorted;
};

static bool arena_add(struct ksyms_builder *b, const char *s, size_t len, uint32_t *off)
{
	if (b->len + len + 1 > UINT32_MAX || GROW(b->buf, b->cap, b->len, len + 1))
		return false;
	memcpy(b->buf + b->len, s, len);
	b->buf[b->len + len] = '\0';
	*off = (uint32_t)b->len;
	b->len += len + 1;
	return true;
}

struct ksyms_builder *ksyms__builder(void)
{
	struct ksyms_builder *b = calloc(1, sizeof(*b));

	if (b)
		b->last_mod_off = NO_MOD;
	return b;
}

void ksyms__builder_free(struct ksyms_builder *b)
{
	if (!b)
		return;
	free(b->buf);
	free(b->ents);
	free(b->last_mod);
	free(b);
}

/* 0 or -ENOMEM. */
static int builder_add(struct ksyms_builder *b, uint64_t addr, uint64_t size, bool global,
		       const char *name, size_t name_len, const char *mod, size_t mod_len)
{
	struct kent *e;

	if (GROW(b->ents, b->cap_ents, b->n, 1))
		return -ENOMEM;
	e = &b->ents[b->n];
	e->addr = addr;
	e->size = size;
	e->seq = b->seq++;
	e->global = global;
	if (!arena_add(b, name, name_len, &e->name_off))
		return -ENOMEM;
	e->mod_off = NO_MOD;
	if (mod) {
		if (!b->last_mod || mod_len != b->last_mod_len || memcmp(mod, b->last_mod, mod_len)) {
			char *copy = strndup(mod, mod_len);

			if (!copy || !arena_add(b, mod, mod_len, &b->last_mod_off)) {
				free(copy);
				return -ENOMEM;
			}
			free(b->last_mod);
			b->last_mod = copy;
			b->last_mod_len = mod_len;
		}
		e->mod_off = b->last_mod_off;
	}
	if (b->n && b->ents[b->n - 1].addr > addr)
		b->unsorted = true;
	b->n++;
	return 0;
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

/* "NAME+0xOFF/0xSIZE[ [MODULE]]", as the kernel's %pS prints a symbol;
 * any other text (the address itself: no symbol there) is not one. */
bool ksyms__parse_symbolic(const char *text, uint64_t addr, struct ksym_text *out)
{
	const char *plus = NULL, *q;
	uint64_t off, size;

	/* The last '+' before the offset: a name may hold '+' itself? No
	 * (C and Rust symbols do not), but '.' and '$' are common. */
	for (q = text; *q && *q != ' '; q++)
		if (*q == '+')
			plus = q;
	if (!plus || plus == text || strncmp(plus + 1, "0x", 2))
		return false;
	q = plus + 3;
	if (!hex_parse(&q, &off) || strncmp(q, "/0x", 3))
		return false;
	q += 3;
	if (!hex_parse(&q, &size) || !size || off >= size || off > addr)
		return false;
	*out = (struct ksym_text){ .start = addr - off, .size = size, .name = text,
				   .name_len = (size_t)(plus - text) };
	if (*q == '\0')
		return true;
	if (q[0] != ' ' || q[1] != '[')
		return false;
	const char *close = strchr(q + 2, ']');
	if (!close || close == q + 2 || close[1])
		return false;
	out->module = q + 2;
	out->mod_len = (size_t)(close - (q + 2));
	return true;
}

int ksyms__builder_add(struct ksyms_builder *b, const struct ksym_text *t)
{
	return builder_add(b, t->start, t->size, true, t->name, t->name_len, t->module, t->mod_len);
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

struct ksyms *ksyms__build(struct ksyms_builder *b)
{
	struct ksyms *k = NULL;
	size_t n = b->n;

	if (!n) {
		errno = ENODATA;
		goto out;
	}
	if (b->unsorted)
		qsort(b->ents, n, sizeof(*b->ents), cmp_kent);
	n = dedup(b->ents, n);
	k = calloc(1, sizeof(*k));
	if (!k) {
		errno = ENOMEM;
		goto out;
	}
	/* Both at their size: a recording may keep them to its end. */
	char *buf = realloc(b->buf, b->len);
	if (buf)
		b->buf = buf;
	struct kent *fit = realloc(b->ents, n * sizeof(*b->ents));
	if (fit)
		b->ents = fit;
	for (size_t i = 0; i < n; i++) {
		struct kent e = b->ents[i];
		struct ksym sym = {
			.addr = e.addr,
			.size = e.size,
			.name = b->buf + e.name_off,
			.module = e.mod_off == NO_MOD ? NULL : b->buf + e.mod_off,
		};

		memcpy(&b->ents[i], &sym, sizeof(sym));
	}
	k->syms = (struct ksym *)b->ents;
	k->n = n;
	k->arena = b->buf;
	b->ents = NULL;
	b->buf = NULL;
out:
	ksyms__builder_free(b);
	return k;
}

struct ksyms *ksyms__load(const char *path)
{
	struct ksyms_builder *b = ksyms__builder();
	size_t parsed = 0;
	bool any_nonzero = false;
	char *line = NULL;
	size_t line_cap = 0;
	int err = ENOMEM;
	FILE *f = b ? fopen(path, "re") : NULL;

	if (!f) {
		err = b ? errno : ENOMEM;
		goto fail;
	}
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
		if (builder_add(b, addr, 0, type == 'T' || type == 'W', name, name_len, mod, mod_len))
			goto fail;
	}
	if (ferror(f)) {
		err = errno ? errno : EIO;
		goto fail;
	}
	if (parsed && !any_nonzero) {
		err = EPERM; /* kptr_restrict hides every address */
		goto fail;
	}
	fclose(f);
	free(line);
	return ksyms__build(b); /* ENODATA if it had no text symbol */
fail:
	if (f)
		fclose(f);
	free(line);
	ksyms__builder_free(b);
	errno = err;
	return NULL;
}

const struct ksym *ksyms__lookup(const struct ksyms *k, uint64_t addr)
{
	size_t i;

	if (!k)
		return NULL;
	i = UPPER_BOUND(k->syms, k->n, addr, addr);
	if (!i || (k->syms[i - 1].size && addr - k->syms[i - 1].addr >= k->syms[i - 1].size))
		return NULL;
	return &k->syms[i - 1];
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
