/* mainexe.c — see mainexe.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hashtab.h"
#include "mainexe.h"
#include "lib/grow.h"

struct exe_row {
	struct proc *pr;
	const struct procmap *exe; /* NULL: unknown */
	int64_t weight;
	bool primary;              /* one of the profiled processes */
};

struct mainexe {
	const struct config *cfg;
	pid_t command_pid;
	struct exe_row *v;
	size_t n, cap;
	struct hashtab *index;     /* proc pointer -> row */
};

static bool row_eq(const void *key, uint64_t idx, void *ctx)
{
	return ((struct mainexe *)ctx)->v[idx].pr == key;
}

struct mainexe *mainexe__new(const struct config *cfg, pid_t command_pid)
{
	struct mainexe *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->cfg = cfg;
	m->command_pid = command_pid;
	if (!(m->index = hashtab__new(row_eq, m))) {
		free(m);
		return NULL;
	}
	return m;
}

void mainexe__free(struct mainexe *m)
{
	if (!m)
		return;
	hashtab__free(m->index);
	free(m->v);
	free(m);
}

static bool is_primary(const struct mainexe *m, const struct proc *pr, uint32_t tid)
{
	const struct config *c = m->cfg;

	if (m->command_pid && pr->tgid == (uint32_t)m->command_pid)
		return true;
	for (int i = 0; i < c->npids; i++)
		if (pr->tgid == (uint32_t)c->pids[i])
			return true;
	for (int i = 0; i < c->ntids; i++)
		if (tid == (uint32_t)c->tids[i])
			return true;
	return false;
}

int mainexe__add(struct mainexe *m, struct proc *pr, uint32_t tid, int64_t w)
{
	uint64_t idx, h = hashtab__hash_u64((uint64_t)(uintptr_t)pr);

	if (!pr)
		return 0;
	if (!hashtab__find(m->index, h, pr, &idx)) {
		if (GROW(m->v, m->cap, m->n, 1))
			return -ENOMEM;
		if (hashtab__insert(m->index, h, m->n))
			return -ENOMEM;
		m->v[m->n] = (struct exe_row){ .pr = pr, .exe = procs__main_map(pr) };
		idx = m->n++;
	}
	m->v[idx].weight += w;
	/* -t: a process is profiled if one of its sampled threads is. */
	m->v[idx].primary = m->v[idx].primary || is_primary(m, pr, tid);
	return 0;
}

/* Rows with a known executable first, grouped by its path. */
static int by_path(const void *a, const void *b)
{
	const struct exe_row *x = a, *y = b;

	if (!x->exe || !y->exe)
		return !x->exe - !y->exe;
	return strcmp(x->exe->path, y->exe->path);
}

const struct procmap *mainexe__pick(struct mainexe *m, struct proc **pr)
{
	const struct exe_row *best = NULL;
	int64_t best_sum = -1;
	bool any_primary = false;

	for (size_t i = 0; i < m->n; i++)
		any_primary = any_primary || (m->v[i].primary && m->v[i].exe);
	/* The index is not needed any more: sorting reorders the rows. */
	qsort(m->v, m->n, sizeof(*m->v), by_path);
	for (size_t i = 0; i < m->n && m->v[i].exe;) {
		const struct exe_row *top = NULL;
		int64_t sum = 0;
		size_t j = i;

		/* One executable: its weight summed, its heaviest process. */
		for (; j < m->n && m->v[j].exe && !strcmp(m->v[j].exe->path, m->v[i].exe->path); j++) {
			if (any_primary && !m->v[j].primary)
				continue;
			sum += m->v[j].weight;
			if (!top || m->v[j].weight > top->weight)
				top = &m->v[j];
		}
		if (top && sum > best_sum) {
			best = top;
			best_sum = sum;
		}
		i = j;
	}
	hashtab__free(m->index);
	m->index = NULL;
	if (!best)
		return NULL;
	*pr = best->pr;
	return best->exe;
}
