/* ehframe.c — CIE/FDE parser and CFA-program interpreter for x86-64, and
 * the assembly of its output into one sorted table of compact rows. See
 * ehframe.h; the DWARF 5 spec (6.4) and the LSB's .eh_frame chapter are
 * the references for the encodings.
 */
#include "ehframe.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REG_RBP 6
#define REG_RSP 7
#define REG_RIP 16
#define STATE_STACK 16          /* remember_state depth we keep */
#define MAX_ENTRIES (1u << 26)  /* raw rows per object: 1 GiB of input */
#define PAD_GAP 16              /* bytes between FDEs taken as padding */

/* x86-64 rt_sigframe: the ucontext starts at rsp when the trampoline
 * runs; uc_mcontext is at 40, and rbp/rsp/rip at 80/120/128 inside it. */
#define SIG_RBP 120
#define SIG_CFA 160
#define SIG_RIP 168

/* DW_EH_PE_* */
#define PE_OMIT 0xff
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_TEXTREL 0x20
#define PE_DATAREL 0x30
#define PE_INDIRECT 0x80

struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static uint8_t get_u8(struct cur *c)
{
	if (c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	return *c->p++;
}

static uint64_t get_un(struct cur *c, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t get_uleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = get_u8(c);
		if (c->bad)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return v;
}

static int64_t get_sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = get_u8(c);
		if (c->bad)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return (int64_t)v;
}

/* Where the bytes come from, for pc-relative pointers. */
struct src {
	const struct ehf_section *sec;
	const struct ehf_input *in;
	bool eh; /* .eh_frame (else .debug_frame) */
};

static uint64_t field_vaddr(const struct src *s, const struct cur *c)
{
	return s->sec->vaddr + (uint64_t)(c->p - s->sec->data);
}

/* A DW_EH_PE-encoded pointer. abs_only: a pc range (format only). */
static uint64_t get_encoded(struct cur *c, const struct src *s, uint8_t enc, bool abs_only)
{
	uint64_t base = 0, v;

	if (enc == PE_OMIT)
		return 0;
	if (!abs_only) {
		switch (enc & 0x70) {
		case 0: break;
		case PE_PCREL: base = field_vaddr(s, c); break;
		case PE_TEXTREL: base = s->in->textrel_base; break;
		case PE_DATAREL: base = s->in->datarel_base; break;
		default: c->bad = true; return 0; /* funcrel, aligned */
		}
	}
	switch (enc & 0x0f) {
	case PE_ABSPTR: v = get_un(c, 8); break;
	case PE_ULEB128: v = get_uleb(c); break;
	case PE_UDATA2: v = get_un(c, 2); break;
	case PE_UDATA4: v = get_un(c, 4); break;
	case PE_UDATA8: v = get_un(c, 8); break;
	case PE_SLEB128: v = (uint64_t)get_sleb(c); break;
	case PE_SDATA2: v = (uint64_t)(int64_t)(int16_t)get_un(c, 2); break;
	case PE_SDATA4: v = (uint64_t)(int64_t)(int32_t)get_un(c, 4); break;
	case PE_SDATA8: v = get_un(c, 8); break;
	default: c->bad = true; return 0;
	}
	return base + v;
}

struct cie {
	size_t off;            /* in its section; (size_t)-1: none cached */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	uint8_t addr_size;     /* .debug_frame addresses */
	bool has_z, signal;
	const uint8_t *insns, *insns_end;
};

/* One entry's header: its body and the id/pointer field. */
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

				get_encoded(&a, s, penc & ~PE_INDIRECT, false);
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

/* ---- the CFA program ---------------------------------------------- */

enum { CFA_REG, CFA_PLT, CFA_SIGNAL, CFA_OTHER };
enum { R_SAME, R_OFFSET, R_UNDEF, R_SIGEXPR, R_OTHER };

struct regrule {
	uint8_t how;
	int64_t off;
};

struct state {
	uint8_t cfa_how;
	uint8_t plt_t;
	uint64_t cfa_reg;
	int64_t cfa_off;
	struct regrule rbp, ra;
};

struct raw {
	uint64_t vaddr;
	uint32_t rule;
	uint32_t seq;  /* emission order */
	uint8_t real;  /* 0: end-of-FDE marker */
};

struct builder {
	struct raw *v;
	size_t n, cap;
	uint32_t seq;
	struct ehf_stats *st;
};

static int push_raw(struct builder *b, uint64_t vaddr, uint32_t rule, bool real)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		struct raw *nv;

		if (cap > MAX_ENTRIES)
			return -E2BIG;
		nv = realloc(b->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		b->v = nv;
		b->cap = cap;
	}
	b->v[b->n++] = (struct raw){ vaddr, rule, b->seq++, real };
	return 0;
}

/* DW_OP block: the PLT formula, "breg7 N; deref" (signal CFA), or
 * "breg7 N" (a register saved at rsp + N, signal frames). */
enum { EX_OTHER, EX_PLT, EX_RSP_DEREF, EX_RSP };

static int classify_expr(const uint8_t *p, uint64_t len, int64_t *n, uint8_t *t)
{
	struct cur c = { p, p + len, false };
	uint8_t op = get_u8(&c);

	if (op != 0x77) /* DW_OP_breg7 (rsp) */
		return EX_OTHER;
	*n = get_sleb(&c);
	if (c.bad)
		return EX_OTHER;
	if (c.p == c.end)
		return EX_RSP;
	op = get_u8(&c);
	if (op == 0x06 && c.p == c.end) /* DW_OP_deref */
		return EX_RSP_DEREF;
	/* breg16 0; lit15; and; litT; ge; lit3; shl; plus */
	if (op != 0x80 || get_sleb(&c) != 0 || get_u8(&c) != 0x3f || get_u8(&c) != 0x1a)
		return EX_OTHER;
	op = get_u8(&c);
	if (op < 0x30 || op > 0x3f)
		return EX_OTHER;
	*t = op - 0x30;
	if (get_u8(&c) != 0x2a || get_u8(&c) != 0x33 || get_u8(&c) != 0x24 ||
	    get_u8(&c) != 0x22 || c.bad || c.p != c.end)
		return EX_OTHER;
	return EX_PLT;
}

static uint32_t state_rule(const struct state *s, bool signal_cie)
{
	int rbp8 = 0;

	if (s->ra.how == R_UNDEF)
		return PMUBPF_UW_RULE(PMUBPF_UW_END, 0, 0);
	if (s->cfa_how == CFA_SIGNAL) {
		if (signal_cie && s->cfa_off == SIG_CFA && s->ra.how == R_SIGEXPR &&
		    s->ra.off == SIG_RIP && s->rbp.how == R_SIGEXPR && s->rbp.off == SIG_RBP)
			return PMUBPF_UW_RULE(PMUBPF_UW_SIGNAL, 0, 0);
		return PMUBPF_UW_RULE(PMUBPF_UW_UNSUPPORTED, 0, 0);
	}
	if (s->ra.how != R_OFFSET || s->ra.off != -8)
		return PMUBPF_UW_RULE(PMUBPF_UW_UNSUPPORTED, 0, 0);
	if (s->rbp.how == R_OFFSET) {
		if (s->rbp.off % 8 || s->rbp.off / 8 < -128 || s->rbp.off / 8 > 127 || !s->rbp.off)
			return PMUBPF_UW_RULE(PMUBPF_UW_UNSUPPORTED, 0, 0);
		rbp8 = (int)(s->rbp.off / 8);
	} else if (s->rbp.how != R_SAME && s->rbp.how != R_UNDEF) {
		return PMUBPF_UW_RULE(PMUBPF_UW_UNSUPPORTED, 0, 0);
	}
	if (s->cfa_off < 0 || s->cfa_off > (int64_t)PMUBPF_UW_CFA_OFF_MAX)
		return PMUBPF_UW_RULE(PMUBPF_UW_UNSUPPORTED, 0, 0);
	if (s->cfa_how == CFA_PLT)
		return rbp8 ? PMUBPF_UW_RULE(PMUBPF_UW_UNSUPPORTED, 0, 0)
			    : PMUBPF_UW_RULE(PMUBPF_UW_PLT, s->plt_t, s->cfa_off);
	if (s->cfa_how != CFA_REG)
		return PMUBPF_UW_RULE(PMUBPF_UW_UNSUPPORTED, 0, 0);
	if (s->cfa_reg == REG_RSP)
		return PMUBPF_UW_RULE(PMUBPF_UW_CFA_RSP, rbp8, s->cfa_off);
	if (s->cfa_reg == REG_RBP)
		return PMUBPF_UW_RULE(PMUBPF_UW_CFA_RBP, rbp8, s->cfa_off);
	return PMUBPF_UW_RULE(PMUBPF_UW_UNSUPPORTED, 0, 0);
}

struct interp {
	const struct src *s;
	const struct cie *cie;
	struct state cur, init;
	struct state stack[STATE_STACK];
	int depth, overflow;
	uint64_t loc, pc_end;
	struct builder *b;
	bool emit; /* false while running the CIE's initial instructions */
};

static struct regrule *reg_of(struct interp *it, uint64_t reg)
{
	if (reg == REG_RBP)
		return &it->cur.rbp;
	if (reg == it->cie->ra_reg)
		return &it->cur.ra;
	return NULL;
}

static int emit_row(struct interp *it)
{
	if (!it->emit || it->loc >= it->pc_end)
		return 0;
	it->b->st->rows_raw++;
	return push_raw(it->b, it->loc, state_rule(&it->cur, it->cie->signal), true);
}

static int advance(struct interp *it, uint64_t to)
{
	int err;

	if (to < it->loc)
		return -EINVAL;
	err = emit_row(it);
	it->loc = to;
	return err;
}

/* Run one CFA program. Returns 0, -EINVAL (malformed: skip the FDE) or
 * -ENOMEM/-E2BIG. */
static int run_program(struct interp *it, const uint8_t *p, const uint8_t *end)
{
	struct cur c = { p, end, false };
	const struct cie *cie = it->cie;
	int err = 0;

	while (c.p < c.end && !c.bad && !err) {
		uint8_t op = get_u8(&c), low = op & 0x3f;
		uint64_t reg, len;
		int64_t off;
		struct regrule *r;

		switch (op & 0xc0) {
		case 0x40: /* advance_loc */
			err = advance(it, it->loc + low * cie->code_align);
			continue;
		case 0x80: /* offset */
			off = (int64_t)get_uleb(&c) * cie->data_align;
			if ((r = reg_of(it, low)))
				*r = (struct regrule){ R_OFFSET, off };
			continue;
		case 0xc0: /* restore */
			if ((r = reg_of(it, low)))
				*r = low == REG_RBP ? it->init.rbp : it->init.ra;
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: { /* set_loc */
			uint64_t to = it->s->eh ? get_encoded(&c, it->s, cie->fde_enc, false)
						: get_un(&c, cie->addr_size);
			if (!c.bad)
				err = advance(it, to);
			break;
		}
		case 0x02:
			err = advance(it, it->loc + get_un(&c, 1) * cie->code_align);
			break;
		case 0x03:
			err = advance(it, it->loc + get_un(&c, 2) * cie->code_align);
			break;
		case 0x04:
			err = advance(it, it->loc + get_un(&c, 4) * cie->code_align);
			break;
		case 0x05: /* offset_extended */
		case 0x2f: /* GNU_negative_offset_extended */
			reg = get_uleb(&c);
			off = (int64_t)get_uleb(&c) * cie->data_align;
			if ((r = reg_of(it, reg)))
				*r = (struct regrule){ R_OFFSET, op == 0x2f ? -off : off };
			break;
		case 0x11: /* offset_extended_sf */
			reg = get_uleb(&c);
			off = get_sleb(&c) * cie->data_align;
			if ((r = reg_of(it, reg)))
				*r = (struct regrule){ R_OFFSET, off };
			break;
		case 0x06: /* restore_extended */
			reg = get_uleb(&c);
			if ((r = reg_of(it, reg)))
				*r = reg == REG_RBP ? it->init.rbp : it->init.ra;
			break;
		case 0x07: /* undefined */
		case 0x08: /* same_value */
			reg = get_uleb(&c);
			if ((r = reg_of(it, reg)))
				*r = (struct regrule){ op == 0x07 ? R_UNDEF : R_SAME, 0 };
			break;
		case 0x09: /* register */
			reg = get_uleb(&c);
			get_uleb(&c);
			if ((r = reg_of(it, reg)))
				*r = (struct regrule){ R_OTHER, 0 };
			break;
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf */
			reg = get_uleb(&c);
			if (op == 0x14)
				get_uleb(&c);
			else
				get_sleb(&c);
			if ((r = reg_of(it, reg)))
				*r = (struct regrule){ R_OTHER, 0 };
			break;
		case 0x0a: /* remember_state */
			if (it->depth < STATE_STACK)
				it->stack[it->depth++] = it->cur;
			else
				it->overflow++;
			break;
		case 0x0b: /* restore_state: the whole row, CFA included, as
			    * libgcc and readelf do */
			if (it->overflow) {
				it->overflow--;
				it->cur.rbp = it->cur.ra = (struct regrule){ R_OTHER, 0 };
			} else if (it->depth) {
				struct state saved = it->stack[--it->depth];

				it->cur = saved;
			} else {
				c.bad = true;
			}
			break;
		case 0x0c: /* def_cfa */
			it->cur.cfa_how = CFA_REG;
			it->cur.cfa_reg = get_uleb(&c);
			it->cur.cfa_off = (int64_t)get_uleb(&c);
			break;
		case 0x12: /* def_cfa_sf */
			it->cur.cfa_how = CFA_REG;
			it->cur.cfa_reg = get_uleb(&c);
			it->cur.cfa_off = get_sleb(&c) * cie->data_align;
			break;
		case 0x0d: /* def_cfa_register */
			it->cur.cfa_how = CFA_REG;
			it->cur.cfa_reg = get_uleb(&c);
			break;
		case 0x0e: /* def_cfa_offset */
			it->cur.cfa_off = (int64_t)get_uleb(&c);
			break;
		case 0x13: /* def_cfa_offset_sf */
			it->cur.cfa_off = get_sleb(&c) * cie->data_align;
			break;
		case 0x0f: { /* def_cfa_expression */
			int64_t n = 0;
			uint8_t t = 0;
			int kind;

			len = get_uleb(&c);
			if (c.bad || len > (uint64_t)(c.end - c.p)) {
				c.bad = true;
				break;
			}
			kind = classify_expr(c.p, len, &n, &t);
			c.p += len;
			it->cur.cfa_how = kind == EX_PLT ? CFA_PLT : kind == EX_RSP_DEREF ? CFA_SIGNAL : CFA_OTHER;
			it->cur.cfa_off = n;
			it->cur.plt_t = t;
			break;
		}
		case 0x10: /* expression */
		case 0x16: { /* val_expression */
			int64_t n = 0;
			uint8_t t;
			int kind;

			reg = get_uleb(&c);
			len = get_uleb(&c);
			if (c.bad || len > (uint64_t)(c.end - c.p)) {
				c.bad = true;
				break;
			}
			kind = classify_expr(c.p, len, &n, &t);
			c.p += len;
			if ((r = reg_of(it, reg)))
				*r = (struct regrule){ op == 0x10 && kind == EX_RSP ? R_SIGEXPR : R_OTHER, n };
			break;
		}
		case 0x2e: /* GNU_args_size */
			get_uleb(&c);
			break;
		case 0x2d: /* GNU_window_save (SPARC; AArch64 negate_ra_state) */
			break;
		default:
			c.bad = true;
		}
	}
	if (c.bad)
		return -EINVAL;
	return err;
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
			pc = get_encoded(&c, &s, cie.fde_enc, false);
			range = get_encoded(&c, &s, cie.fde_enc, true);
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
			if (eh_ranges->n == eh_ranges->cap) {
				size_t cap = eh_ranges->cap ? eh_ranges->cap * 2 : 1024;
				struct range *nv = realloc(eh_ranges->v, cap * sizeof(*nv));

				if (!nv)
					return -ENOMEM;
				eh_ranges->v = nv;
				eh_ranges->cap = cap;
			}
			eh_ranges->v[eh_ranges->n++] = (struct range){ pc, pc + range };
		}

		struct interp it = { .s = &s, .cie = &cie, .loc = pc, .pc_end = pc + range, .b = b };
		it.cur = (struct state){ .cfa_how = CFA_REG, .cfa_reg = REG_RSP, .cfa_off = 8,
					 .rbp = { R_SAME, 0 }, .ra = { R_SAME, 0 } };
		size_t mark = b->n;
		uint64_t rows_before = b->st->rows_raw;
		err = run_program(&it, cie.insns, cie.insns_end);
		it.init = it.cur;
		it.depth = it.overflow = 0;
		it.loc = pc; /* the CIE may not advance */
		it.emit = true;
		if (!err)
			err = run_program(&it, c.p, e.end);
		if (!err)
			err = emit_row(&it);
		if (!err)
			err = push_raw(b, pc + range, PMUBPF_UW_RULE(PMUBPF_UW_NONE, 0, 0), false);
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
	qsort(b.v, b.n, sizeof(*b.v), cmp_raw);
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
	size_t lo = 0, hi = t->n;
	uint64_t rel;

	if (!t->n || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return NULL;
	rel = vaddr - t->base;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->rows[mid].pc <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->rows[lo - 1] : NULL;
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
