/* pprof_folded.c — write the in-memory profile as folded stacks, the
 * format of FlameGraph (stackcollapse-*.pl, flamegraph.pl) and inferno.
 *
 * Built from the same struct pprof the pprof encoder reads, so both
 * formats carry the same samples, names, inlined frames and [lost: ...]
 * frames; only the file differs. Each sample becomes one line of text
 * (root first); equal lines are merged by sorting, which also makes the
 * output deterministic, and the text goes to disk through
 * pprof__write_atomic like a pprof file.
 *
 * What folded stacks cannot carry: labels other than the root one,
 * mappings, addresses of named frames, comments (the losses stay visible
 * as [lost: ...] frames and on stderr).
 */
#include "pprof.h"
#include "pprof_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct folded_line {
	char *stack;
	int64_t weight;
};

/* One frame name, with the characters the format gives a meaning (';'
 * separates frames, a newline ends the line) replaced. */
static void put_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' || (unsigned char)*s < 0x20 ? '_' : *s, f);
}

/* A location without a function name: "FILE+0xOFFSET" (the file offset,
 * as perf prints it) when its mapping has a file, else "0xADDRESS". */
static void put_address(FILE *f, const struct pprof *p, const struct pprof_loc *l)
{
	const struct pprof_mapping *m = l->mapping_id ? &p->maps[l->mapping_id - 1] : NULL;

	if (m && m->filename) {
		const char *file = p->strs[m->filename], *slash = strrchr(file, '/');

		put_name(f, slash ? slash + 1 : file);
		fprintf(f, "+0x%llx", (unsigned long long)(l->address - m->memory_start +
							  m->file_offset));
	} else {
		fprintf(f, "0x%llx", (unsigned long long)l->address);
	}
}

/* The sample's value for label key (a string index), written as a frame;
 * false if it has none. */
static bool put_root(FILE *f, const struct pprof *p, const struct pprof_sample *s,
		     int64_t key)
{
	const struct pprof_labelset *ls = &p->lsets[s->lset];

	for (size_t i = 0; key && i < ls->n; i++) {
		const struct pprof_labelrec *l = &p->labels[ls->off + i];

		if (l->key != key)
			continue;
		if (l->str)
			put_name(f, p->strs[l->str]);
		else
			fprintf(f, "%lld", (long long)l->num);
		return true;
	}
	return false;
}

/* "ROOT;outer;...;leaf" for sample s into a new string (NULL: ENOMEM). */
static char *fold_sample(const struct pprof *p, const struct pprof_sample *s,
			 int64_t root_key)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool first;

	if (!f)
		return NULL;
	first = !put_root(f, p, s, root_key);
	/* locids are leaf first, a location's lines innermost first. */
	for (size_t i = s->nlocs; i-- > 0;) {
		const struct pprof_loc *l = &p->locs[p->locids[s->loc_off + i] - 1];
		size_t j = l->nlines;

		do {
			const struct pprof_lineref *ln = j ? &p->lines[l->line_off + j - 1] : NULL;
			int64_t name = ln ? p->funcs[ln->function_id - 1].name : 0;

			if (!first)
				fputc(';', f);
			first = false;
			if (name)
				put_name(f, p->strs[name]);
			else
				put_address(f, p, l);
		} while (j && --j > 0);
	}
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack,
		      ((const struct folded_line *)b)->stack);
}

int pprof__write_folded(struct pprof *p, const char *path, const char *root_key)
{
	struct folded_line *v;
	char *text = NULL;
	size_t n = 0, len = 0;
	int64_t key = 0;
	FILE *out = NULL;
	int err = -ENOMEM;

	if (!path || !*path)
		return -EINVAL;
	/* A key no sample has is not in the string table: no roots. */
	for (size_t i = 1; root_key && i < p->nstrs && !key; i++)
		if (!strcmp(p->strs[i], root_key))
			key = (int64_t)i;
	v = calloc(p->nsamples ? p->nsamples : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (; n < p->nsamples; n++) {
		v[n].stack = fold_sample(p, &p->samples[n], key);
		v[n].weight = p->samples[n].value[1];
		if (!v[n].stack)
			goto out;
	}
	qsort(v, n, sizeof(*v), cmp_line);
	out = open_memstream(&text, &len);
	if (!out)
		goto out;
	for (size_t i = 0; i < n;) {
		int64_t w = 0;
		size_t j = i;

		for (; j < n && !strcmp(v[j].stack, v[i].stack); j++)
			w += v[j].weight;
		fprintf(out, "%s %lld\n", v[i].stack, (long long)w);
		i = j;
	}
	if (ferror(out) || fclose(out)) {
		out = NULL;
		goto out;
	}
	out = NULL;
	err = pprof__write_atomic(path, (const uint8_t *)text, len, false);
out:
	if (out)
		fclose(out);
	for (size_t i = 0; i < n; i++)
		free(v[i].stack);
	free(v);
	free(text);
	return err;
}
