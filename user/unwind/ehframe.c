/* ehframe.c — CIE/FDE parser for x86-64 and the assembly of its output
 * into one sorted table of compact rows (the CFA programs themselves run
 * in ehframe_cfa.c). See ehframe.h; the DWARF 5 spec (6.4) and the LSB's
 * .eh_frame chapter are the references for the encodings.
 */
#include "ehframe.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ehframe_int.h"
#include "lib/sorted.h"
#include "lib/grow.h"


struct entry {
	size_t off;             /* of the length field */
	const uint8_t *id_at;   /* the CIE id / CIE pointer field */
	uint64_t id;
	const uint8_t *body, *end;
	bool last;              /* zero terminator or end of section */
};

static int read_entry(const struct ehf_section *sec, size_t off, struct entry *e)
{
	struct cur c = { sec->data + off, sec->data + sec->size, false };
	uint64_t len;
	bool dw64 = false;

	memset(e, 0, sizeof(*e));
	e->off = off;
	if (sec->size - off < 4) {
		e->last = true;
		return 0;
	}
	len = get_un(&c, 4);
	if (len == 0) {
		e->last = true;
		return 0;
	}
	if (len == 0xffffffffULL) {
		len = get_un(&c, 8);
		dw64 = true;
	}
	if (c.bad || len > (uint64_t)(c.end - c.p) || len < (dw64 ? 8u : 4u))
		return -EINVAL;
	e->end = c.p + len;
	e->id_at = c.p;
	e->id = get_un(&c, dw64 ? 8 : 4);
	if (!dw64 && e->id == 0xffffffffULL)
		e->id = ~0ULL; /* .debug_frame CIE id, either width */
	e->body = c.p;
	return 0;
}

static int parse_cie(const struct src *s, size_t off, struct cie *cie)
{
	struct entry e;
	struct cur c;
	const char *aug;
	uint8_t version;

	if (cie->off == off)
		return 0;
	if (off >= s->sec->size || read_entry(s->sec, off, &e) || e.last)
		return -EINVAL;
	if (s->eh ? e.id != 0 : e.id != ~0ULL)
		return -EINVAL;
	memset(cie, 0, sizeof(*cie));
	cie->off = (size_t)-1;
	c = (struct cur){ e.body, e.end, false };
	version = get_u8(&c);
	if (version != 1 && version != 3 && version != 4)
		return -EINVAL;
	aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	if (c.p >= c.end)
		return -EINVAL;
	c.p++;
	if (aug[0] && aug[0] != 'z')
		return -EINVAL; /* "eh" and unknown ones: FDE layout unknown */
	cie->addr_size = 8;
	if (version == 4) {
		cie->addr_size = get_u8(&c);
		if (get_u8(&c) != 0 || (cie->addr_size != 4 && cie->addr_size != 8))
			return -EINVAL; /* segment selectors: no */
	}
	cie->code_align = get_uleb(&c);
	cie->data_align = get_sleb(&c);
	cie->ra_reg = version == 1 ? get_u8(&c) : get_uleb(&c);
	cie->fde_enc = PE_ABSPTR;
	if (aug[0] == 'z') {
		uint64_t alen = get_uleb(&c);
		const uint8_t *aend;

		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return -EINVAL;
		aend = c.p + alen;
		struct cur a = { c.p, aend, false };
		cie->has_z = true;
		for (const char *k = aug + 1; *k && !a.bad; k++) {
			if (*k == 'L') {
				get_u8(&a);
			} else if (*k == 'P') {
				uint8_t penc = get_u8(&a);

				ehf_get_encoded(&a, s, penc & ~PE_INDIRECT, false);
			} else if (*k == 'R') {
				cie->fde_enc = get_u8(&a);
			} else if (*k == 'S') {
				cie->signal = true;
			} else if (*k != 'B' && *k != 'G') {
				break; /* unknown: the length lets us skip the rest */
			}
		}
		if (a.bad)
			return -EINVAL;
		c.p = aend;
	}
	if (c.bad || !cie->code_align)
		return -EINVAL;
	cie->insns = c.p;
	cie->insns_end = e.end;
	cie->off = off;
	return 0;
}

/* ---- sections ------------------------------------------------------- */

struct range {
	uint64_t lo, hi;
};

struct ranges {
	struct range *v;
	size_t n, cap;
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

static bool overlaps(const struct ranges *r, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = r->n;

	while (a < b) { /* first range with lo >= hi */
		size_t m = (a + b) / 2;

		if (r->v[m].lo < hi)
			a = m + 1;
		else
			b = m;
	}
	/* ranges are disjoint-ish: check a few below */
	for (size_t i = a, k = 0; i > 0 && k < 4; i--, k++)
		if (r->v[i - 1].hi > lo)
			return true;
	return false;
}

static int do_section(const struct ehf_input *in, const struct ehf_section *sec, bool eh,
		      struct builder *b, struct ranges *eh_ranges)
{
	struct src s = { sec, in, eh };
	struct cie cie = { .off = (size_t)-1 };
	size_t off = 0;
	int err = 0;

	while (off < sec->size && !err) {
		struct entry e;
		size_t cie_off;

		if (read_entry(sec, off, &e)) {
			b->st->bad_entries++;
			break; /* cannot find the next entry */
		}
		if (e.last)
			break;
		off = (size_t)(e.end - sec->data);
		if (eh ? e.id == 0 : e.id == ~0ULL) {
			b->st->cies++;
			continue;
		}
		if (eh) {
			if (e.id > (uint64_t)(e.id_at - sec->data)) {
				b->st->bad_entries++;
				continue;
			}
			cie_off = (size_t)(e.id_at - sec->data) - (size_t)e.id;
		} else {
			cie_off = (size_t)e.id;
		}
		if (parse_cie(&s, cie_off, &cie)) {
			b->st->bad_entries++;
			cie.off = (size_t)-1;
			continue;
		}
		struct cur c = { e.body, e.end, false };
		uint64_t pc, range;
		if (eh) {
			pc = ehf_get_encoded(&c, &s, cie.fde_enc, false);
			range = ehf_get_encoded(&c, &s, cie.fde_enc, true);
		} else {
			pc = get_un(&c, cie.addr_size);
			range = get_un(&c, cie.addr_size);
		}
		if (cie.has_z) {
			uint64_t alen = get_uleb(&c);

			if (alen > (uint64_t)(c.end - c.p))
				c.bad = true;
			else
				c.p += alen;
		}
		if (c.bad || (cie.fde_enc & PE_INDIRECT)) {
			b->st->bad_entries++;
			continue;
		}
		if (!pc || !range || pc + range < pc)
			continue; /* discarded (COMDAT/GC'd) function */
		if (!eh && overlaps(eh_ranges, pc, pc + range)) {
			b->st->fdes_overlap++;
			continue;
		}
		b->st->fdes++;
		b->st->fdes_debug += !eh;
		if (eh && eh_ranges) {
			if (GROW(eh_ranges->v, eh_ranges->cap, eh_ranges->n, 1))
				return -ENOMEM;
			eh_ranges->v[eh_ranges->n++] = (struct range){ pc, pc + range };
		}

		size_t mark = b->n;
		uint64_t rows_before = b->st->rows_raw;
		err = ehf_run_fde(&s, &cie, pc, range, c.p, e.end, b);
		if (err == -EINVAL) { /* drop what this FDE emitted */
			b->n = mark;
			b->st->rows_raw = rows_before;
			b->st->bad_entries++;
			b->st->fdes--;
			err = 0;
		}
	}
	return err;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	if (x->real != y->real)
		return x->real < y->real ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

struct run {
	size_t start, n;
};

static int cmp_run(const void *a, const void *b, void *rows)
{
	const struct raw *v = rows;

	return cmp_raw(&v[((const struct run *)a)->start], &v[((const struct run *)b)->start]);
}

static bool rows_sorted(const struct raw *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (cmp_raw(&v[i - 1], &v[i]) > 0)
			return false;
	return true;
}

/* Sort b's rows by cmp_raw. Each FDE emits its rows in address order,
 * ending with its end marker, so the rows are a few thousand sorted runs
 * (one per FDE, libc: 3700 runs of 29k rows) laid out in no particular
 * order: sorting the runs by their first row and laying them end to end
 * sorts everything whenever FDEs do not overlap (checked; else a full
 * sort). A full qsort was 60%
 * of building a table, and tables 25% of pmubpf's CPU under churn. */
static int sort_rows(struct builder *b)
{
	struct run *runs = NULL;
	size_t nruns = 0, cap = 0;
	struct raw *out;

	for (size_t i = 0; i < b->n; i++) {
		/* A run ends at an FDE's end marker: runs that are FDEs
		 * never interleave (maximal ascending runs spanning several
		 * FDEs would, and end in the full sort). */
		if (i && b->v[i - 1].real && cmp_raw(&b->v[i - 1], &b->v[i]) <= 0) {
			runs[nruns - 1].n++;
			continue;
		}
		if (GROW(runs, cap, nruns, 1)) {
			free(runs);
			return -ENOMEM;
		}
		runs[nruns++] = (struct run){ i, 1 };
	}
	if (nruns <= 1) {
		free(runs);
		return 0;
	}
	if (!(out = malloc(b->n * sizeof(*out)))) {
		free(runs);
		return -ENOMEM;
	}
	qsort_r(runs, nruns, sizeof(*runs), cmp_run, b->v);
	for (size_t r = 0, k = 0; r < nruns; k += runs[r].n, r++)
		memcpy(&out[k], &b->v[runs[r].start], runs[r].n * sizeof(*out));
	free(runs);
	free(b->v);
	b->v = out;
	b->cap = b->n;
	if (!rows_sorted(b->v, b->n))
		qsort(b->v, b->n, sizeof(*b->v), cmp_raw);
	return 0;
}

int ehf__build(const struct ehf_input *in, struct ehf_table *out)
{
	struct builder b = { 0 };
	struct ranges eh_ranges = { 0 };
	int err = 0;

	memset(out, 0, sizeof(*out));
	b.st = &out->st;
	if (in->eh_frame.data && in->eh_frame.size)
		err = do_section(in, &in->eh_frame, true, &b, &eh_ranges);
	if (!err && in->debug_frame.data && in->debug_frame.size) {
		if (eh_ranges.n) /* qsort(NULL, 0) is undefined */
			qsort(eh_ranges.v, eh_ranges.n, sizeof(*eh_ranges.v), cmp_range);
		err = do_section(in, &in->debug_frame, false, &b, &eh_ranges);
	}
	free(eh_ranges.v);
	if (err == -E2BIG)
		err = 0; /* keep what fit */
	if (err || !b.n) {
		free(b.v);
		return err;
	}
	err = sort_rows(&b);
	if (err) {
		free(b.v);
		return err;
	}
	out->base = b.v[0].vaddr;
	out->rows = malloc(b.n * sizeof(*out->rows));
	if (!out->rows) {
		free(b.v);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < b.n; i++) {
		/* At one address the last sorted entry wins: a real row over an
		 * FDE's end marker, a later row over an earlier one. */
		if (i + 1 < b.n && b.v[i + 1].vaddr == b.v[i].vaddr)
			continue;
		uint64_t rel = b.v[i].vaddr - out->base;
		if (rel > UINT32_MAX) {
			out->st.fdes_far += b.v[i].real;
			continue;
		}
		if (k ? out->rows[k - 1].rule == b.v[i].rule
		      : PMUBPF_UW_KIND(b.v[i].rule) == PMUBPF_UW_NONE)
			continue;
		/* An FDE's end right before the next FDE (alignment padding,
		 * never executed): let the previous rule run on. */
		if (!b.v[i].real && i + 1 < b.n && b.v[i + 1].vaddr - b.v[i].vaddr < PAD_GAP)
			continue;
		out->rows[k++] = (struct pmubpf_urow){ (uint32_t)rel, b.v[i].rule };
	}
	free(b.v);
	out->n = k;
	for (size_t i = 0; i < k; i++) {
		uint32_t kind = PMUBPF_UW_KIND(out->rows[i].rule);

		out->st.unsupported += kind == PMUBPF_UW_UNSUPPORTED;
		out->st.plt += kind == PMUBPF_UW_PLT;
		out->st.signal += kind == PMUBPF_UW_SIGNAL;
		out->st.end += kind == PMUBPF_UW_END;
	}
	if (k) {
		struct pmubpf_urow *shrunk = realloc(out->rows, k * sizeof(*shrunk));

		if (shrunk)
			out->rows = shrunk;
	}
	return 0;
}

void ehf__free(struct ehf_table *t)
{
	if (!t)
		return;
	free(t->rows);
	t->rows = NULL;
	t->n = 0;
}

const struct pmubpf_urow *ehf__lookup(const struct ehf_table *t, uint64_t vaddr)
{
	size_t i;

	if (!t->n || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return NULL;
	i = UPPER_BOUND(t->rows, t->n, pc, vaddr - t->base);
	return i ? &t->rows[i - 1] : NULL;
}

void ehf__rule_str(uint32_t rule, char *buf, size_t len)
{
	int rbp = PMUBPF_UW_RBP(rule);
	unsigned off = PMUBPF_UW_CFA_OFF(rule);
	char r[24] = "";

	if (rbp)
		snprintf(r, sizeof(r), " rbp=c%+d", rbp * 8);
	switch (PMUBPF_UW_KIND(rule)) {
	case PMUBPF_UW_NONE: snprintf(buf, len, "none"); break;
	case PMUBPF_UW_CFA_RSP: snprintf(buf, len, "rsp+%u%s", off, r); break;
	case PMUBPF_UW_CFA_RBP: snprintf(buf, len, "rbp+%u%s", off, r); break;
	case PMUBPF_UW_PLT: snprintf(buf, len, "plt+%u/%d", off, rbp); break;
	case PMUBPF_UW_END: snprintf(buf, len, "end"); break;
	case PMUBPF_UW_SIGNAL: snprintf(buf, len, "signal"); break;
	default: snprintf(buf, len, "unsupported"); break;
	}
}

size_t ehf__bytes(const struct ehf_table *t)
{
	return t->n * sizeof(*t->rows);
}
