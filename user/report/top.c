/* top.c — see top.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hashtab.h"
#include "top.h"
#include "lib/grow.h"

struct top_row {
	const char *name;
	int64_t flat, cum;
	uint64_t seen; /* sample serial that last added cum */
};

struct top {
	struct top_row *v;
	size_t n, cap;
	struct hashtab *index;
	int64_t total;
	uint64_t serial;
};

static bool top_eq(const void *key, uint64_t idx, void *ctx)
{
	return !strcmp(((struct top *)ctx)->v[idx].name, key);
}

struct top *top__new(void)
{
	struct top *t = calloc(1, sizeof(*t));

	if (t && !(t->index = hashtab__new(top_eq, t))) {
		free(t);
		return NULL;
	}
	return t;
}

void top__free(struct top *t)
{
	if (!t)
		return;
	hashtab__free(t->index);
	free(t->v);
	free(t);
}

static struct top_row *top_row(struct top *t, const char *name)
{
	uint64_t idx, h = hashtab__hash_str(name);

	if (hashtab__find(t->index, h, name, &idx))
		return &t->v[idx];
	if (GROW(t->v, t->cap, t->n, 1))
		return NULL;
	if (hashtab__insert(t->index, h, t->n))
		return NULL;
	t->v[t->n] = (struct top_row){ .name = name };
	return &t->v[t->n++];
}

/* pprof owns the names; the table borrows them. Frames without a
 * function (--no-symbol) are grouped by their file: "[libc.so.6]". */
static const char *frame_name(struct pprof *p, uint64_t loc)
{
	const char *name = pprof__location_name(p, loc), *file;
	char buf[256];

	if (name)
		return name;
	file = pprof__location_mapping_file(p, loc);
	if (file && *file) {
		const char *base = strrchr(file, '/');

		snprintf(buf, sizeof(buf), "[%s]", base ? base + 1 : file);
	} else {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)pprof__location_address(p, loc));
	}
	return pprof__intern(p, buf);
}

int top__add(struct top *t, struct pprof *p, const uint64_t *locs, size_t n, int64_t w)
{
	t->total += w;
	t->serial++;
	for (size_t i = 0; i < n; i++) {
		const char *name = frame_name(p, locs[i]);
		struct top_row *r = name ? top_row(t, name) : NULL;

		if (!r)
			return -ENOMEM;
		if (i == 0)
			r->flat += w;
		if (r->seen != t->serial) {
			r->cum += w;
			r->seen = t->serial;
		}
	}
	return 0;
}

static int top_cmp(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->flat != y->flat)
		return x->flat < y->flat ? 1 : -1;
	return strcmp(x->name, y->name);
}

struct scale { const char *name; double factor; };

static const struct scale time_units[] = { /* in ns */
	{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "hrs", 3600e9 },
};
static const struct scale count_units[] = {
	{ "", 1 }, { "k", 1e3 }, { "M", 1e6 }, { "G", 1e9 }, { "T", 1e12 },
};

void top__scaled(int64_t value, const char *unit, char *buf, size_t len)
{
	bool time = !strcmp(unit, "nanoseconds") || !strcmp(unit, "ns");
	const struct scale *u = time ? time_units : count_units;
	double v = (double)value, mag = v < 0 ? -v : v;
	size_t k = 0;

	/* The largest unit that keeps the value at least 1, as pprof's
	 * measurement.ScaledLabel does (counts: k/M/G/T, which it leaves raw). */
	for (size_t i = 1; i < 5; i++)
		if (mag >= u[i].factor)
			k = i;
	snprintf(buf, len, "%.2f", v / u[k].factor);
	size_t n = strlen(buf);
	if (n > 3 && !strcmp(buf + n - 3, ".00"))
		buf[n - 3] = '\0';
	if (!strcmp(buf, "0") || !strcmp(buf, "-0")) {
		snprintf(buf, len, "0");
		return;
	}
	strncat(buf, u[k].name, len - strlen(buf) - 1);
}

void top__print(struct top *t, FILE *f, const char *event, const char *type, const char *unit,
		int rows)
{
	char total[32], flat[32], cum[32];

	qsort(t->v, t->n, sizeof(*t->v), top_cmp);
	top__scaled(t->total, unit, total, sizeof(total));
	fprintf(f, "\nTop %d functions for %s (%s; 100%% = %s):\n", rows, event, type, total);
	fprintf(f, "%10s %7s %10s %7s  %s\n", "flat", "flat%", "cum", "cum%", "function");
	for (size_t i = 0; i < t->n && i < (size_t)rows; i++) {
		double d = t->total ? 100.0 / (double)t->total : 0;

		top__scaled(t->v[i].flat, unit, flat, sizeof(flat));
		top__scaled(t->v[i].cum, unit, cum, sizeof(cum));
		fprintf(f, "%10s %6.2f%% %10s %6.2f%%  %s\n", flat, t->v[i].flat * d, cum,
			t->v[i].cum * d, t->v[i].name);
	}
}
