/* ehframe_cfa.c — the CFA-program interpreter of ehframe.c: runs a CIE's
 * initial instructions and an FDE's, tracking only what BPF evaluates on
 * x86-64 (the CFA, rbp, the return address), and pushes one raw row per
 * location advance, already reduced to its compact rule (pmubpf_abi.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ehframe_int.h"
#include "lib/grow.h"

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

/* value * factor, wrapping (hostile operands must not be UB; absurd
 * offsets then fail the range checks of state_rule). */
static int64_t factored(uint64_t value, int64_t factor)
{
	return (int64_t)(value * (uint64_t)factor);
}

static struct regrule *reg_of(struct interp *it, uint64_t reg)
{
	if (reg == REG_RBP)
		return &it->cur.rbp;
	if (reg == it->cie->ra_reg)
		return &it->cur.ra;
	return NULL;
}

/* Append a raw row (real: a rule; else an FDE's end marker). */
static int push_raw(struct builder *b, uint64_t vaddr, uint32_t rule, bool real)
{
	if (b->n >= MAX_ENTRIES)
		return -E2BIG;
	if (GROW(b->v, b->cap, b->n, 1))
		return -ENOMEM;
	b->v[b->n++] = (struct raw){ vaddr, rule, b->seq++, real };
	return 0;
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
			off = factored(get_uleb(&c), cie->data_align);
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
			uint64_t to = it->s->eh ? ehf_get_encoded(&c, it->s, cie->fde_enc, false)
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
			off = factored(get_uleb(&c), cie->data_align);
			if ((r = reg_of(it, reg)))
				*r = (struct regrule){ R_OFFSET, op == 0x2f ? (int64_t)(0 - (uint64_t)off) : off };
			break;
		case 0x11: /* offset_extended_sf */
			reg = get_uleb(&c);
			off = factored((uint64_t)get_sleb(&c), cie->data_align);
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
			it->cur.cfa_off = factored((uint64_t)get_sleb(&c), cie->data_align);
			break;
		case 0x0d: /* def_cfa_register */
			it->cur.cfa_how = CFA_REG;
			it->cur.cfa_reg = get_uleb(&c);
			break;
		case 0x0e: /* def_cfa_offset */
			it->cur.cfa_off = (int64_t)get_uleb(&c);
			break;
		case 0x13: /* def_cfa_offset_sf */
			it->cur.cfa_off = factored((uint64_t)get_sleb(&c), cie->data_align);
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

int ehf_run_fde(const struct src *s, const struct cie *cie, uint64_t pc, uint64_t range,
		const uint8_t *insns, const uint8_t *end, struct builder *b)
{
	struct interp it = { .s = s, .cie = cie, .loc = pc, .pc_end = pc + range, .b = b };
	int err;

	it.cur = (struct state){ .cfa_how = CFA_REG, .cfa_reg = REG_RSP, .cfa_off = 8,
				 .rbp = { R_SAME, 0 }, .ra = { R_SAME, 0 } };
	err = run_program(&it, cie->insns, cie->insns_end);
	it.init = it.cur;
	it.depth = it.overflow = 0;
	it.loc = pc; /* the CIE may not advance */
	it.emit = true;
	if (!err)
		err = run_program(&it, insns, end);
	if (!err)
		err = emit_row(&it);
	if (!err)
		err = push_raw(b, pc + range, PMUBPF_UW_RULE(PMUBPF_UW_NONE, 0, 0), false);
	return err;
}
