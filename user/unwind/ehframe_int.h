/* ehframe_int.h — what ehframe.c (CIE/FDE parsing, table assembly) and
 * ehframe_cfa.c (the CFA-program interpreter) share: bounds-checked
 * readers of untrusted bytes, the parsed CIE, the raw rows, and the one
 * call between them: ehframe.c runs each FDE through ehf_run_fde, which
 * pushes its rows (ehframe_cfa.c calls nothing in ehframe.c).
 * Not a public interface: see ehframe.h.
 */
#ifndef PMUBPF_EHFRAME_INT_H
#define PMUBPF_EHFRAME_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ehframe.h"


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

static inline uint8_t get_u8(struct cur *c)
{
	if (c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	return *c->p++;
}

static inline uint64_t get_un(struct cur *c, size_t n)
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

/* An LEB128 number's bits; *shift and *last say how many and the last
 * byte (for the sign of an SLEB128). */
static inline uint64_t get_leb(struct cur *c, unsigned *shift, uint8_t *last)
{
	uint64_t v = 0;
	uint8_t b;

	*shift = 0;
	do {
		b = get_u8(c);
		if (c->bad)
			return 0;
		if (*shift < 64)
			v |= (uint64_t)(b & 0x7f) << *shift;
		*shift += 7;
	} while (b & 0x80);
	*last = b;
	return v;
}

static inline uint64_t get_uleb(struct cur *c)
{
	unsigned shift;
	uint8_t b;

	return get_leb(c, &shift, &b);
}

static inline int64_t get_sleb(struct cur *c)
{
	unsigned shift;
	uint8_t b = 0;
	uint64_t v = get_leb(c, &shift, &b);

	if (!c->bad && shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return c->bad ? 0 : (int64_t)v;
}

/* Where the bytes come from, for pc-relative pointers. */
struct src {
	const struct ehf_section *sec;
	const struct ehf_input *in;
	bool eh; /* .eh_frame (else .debug_frame) */
};

static inline uint64_t field_vaddr(const struct src *s, const struct cur *c)
{
	return s->sec->vaddr + (uint64_t)(c->p - s->sec->data);
}

/* A DW_EH_PE-encoded pointer. abs_only: a pc range (format only). A
 * reader like those above, shared by the CIE/FDE parser and the CFA
 * interpreter (DW_CFA_set_loc). */
static inline uint64_t ehf_get_encoded(struct cur *c, const struct src *s, uint8_t enc, bool abs_only)
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

/* Run the CIE's initial and the FDE's instructions for [pc, pc + range)
 * and push its rows, then its end marker. 0, -EINVAL (malformed: the
 * caller drops what was pushed), -ENOMEM or -E2BIG. */
int ehf_run_fde(const struct src *s, const struct cie *cie, uint64_t pc, uint64_t range,
		const uint8_t *insns, const uint8_t *end, struct builder *b);

#endif
