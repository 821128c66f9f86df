/* test_ehframe_synth.c — unit tests of user/ehframe.c on hand-assembled
 * CFI: each opcode and pointer encoding the parser supports, the PLT and
 * signal-trampoline expressions (and look-alikes that must not pass),
 * malformed and truncated entries; then mutated copies of libc's
 * .eh_frame, which must be survived (no crash, no hang). The readelf
 * comparisons on real objects are in test_ehframe.c.
 */
#include "unwind/ehframe.h"
#include "testing.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- hand-assembled CFI ------------------------------------------------ */

struct buf {
	uint8_t b[512];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}
static void put8(struct buf *b, uint8_t v) { put(b, &v, 1); }
static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }

/* Entry: length placeholder, returns its offset; end fixes it (padded
 * with nops to 4). */
static size_t begin(struct buf *b) { size_t o = b->n; put32(b, 0); return o; }
static void end(struct buf *b, size_t o)
{
	while ((b->n - o) % 4)
		put8(b, 0);
	uint32_t len = (uint32_t)(b->n - o - 4);
	memcpy(b->b + o, &len, 4);
}

static const char *rule_at(const struct ehf_table *t, uint64_t pc, char *s)
{
	const struct pmubpf_urow *r = ehf__lookup(t, pc);

	if (!r)
		return "(no row)";
	ehf__rule_str(r->rule, s, 48);
	return s;
}

#define SEC_VADDR 0x2000ULL
#define FN 0x1000ULL

/* CIE "zR" (or "zRS") with FDE encoding enc, then one FDE for
 * [FN, FN + 0x40) with instructions ins. */
static void make_cfi(struct buf *b, uint8_t enc, const char *aug, const uint8_t *ins, size_t nins)
{
	size_t c = begin(b);
	put32(b, 0);               /* CIE id */
	put8(b, 1);                /* version */
	put(b, aug, strlen(aug) + 1);
	put8(b, 1);                /* code align */
	put8(b, 0x78);             /* data align -8 */
	put8(b, 16);               /* ra */
	put8(b, 1);                /* aug length */
	put8(b, enc);
	put8(b, 0x0c); put8(b, 7); put8(b, 8); /* def_cfa rsp+8 */
	put8(b, 0x90); put8(b, 1);             /* ra at cfa-8 */
	end(b, c);
	size_t f = begin(b);
	put32(b, (uint32_t)(b->n - c));        /* CIE pointer */
	if ((enc & 0x70) == 0x10) {            /* pcrel sdata4 */
		put32(b, (uint32_t)(FN - (SEC_VADDR + b->n)));
		put32(b, 0x40);
	} else if ((enc & 0x0f) == 0x01) {     /* uleb128 (datarel base 0x800) */
		put8(b, 0x80 | ((FN - 0x800) & 0x7f)); put8(b, (uint8_t)((FN - 0x800) >> 7));
		put8(b, 0x40);
	} else {                               /* udata4, datarel */
		put32(b, (uint32_t)(FN - 0x800));
		put32(b, 0x40);
	}
	put8(b, 0);                            /* aug length */
	put(b, ins, nins);
	end(b, f);
	put32(b, 0);                           /* terminator */
}

static bool build_buf(const struct buf *b, struct ehf_table *t)
{
	struct ehf_input in = { .eh_frame = { b->b, b->n, SEC_VADDR }, .datarel_base = 0x800 };

	return ehf__build(&in, t) == 0;
}

static bool synthetic_opcodes(void)
{
	static const uint8_t ins[] = {
		0x41, 0x0e, 16, 0x86, 2,   /* +1: cfa rsp+16, rbp at c-16 */
		0x43, 0x0d, 6,             /* +4: cfa rbp+16 */
		0x0a,                      /* remember */
		0x4a, 0x0c, 7, 8,          /* +14: cfa rsp+8 */
		0xc6,                      /* restore rbp: unchanged */
		0x41, 0x0b,                /* +15: restore_state: rbp+16, c-16 */
		0x02, 5, 0x2e, 8,          /* +20: args_size (ignored) */
		0x11, 6, 0x7c,             /* rbp at c+32 (sf: -4 * -8) */
		0x03, 4, 0, 0x13, 0x7e,    /* +24: cfa_offset_sf -2 * -8 = 16 */
		0x04, 2, 0, 0, 0, 0x07, 16,/* +26: ra undefined: end */
	};
	struct buf b = { .n = 0 };
	struct ehf_table t;
	char s[48];

	make_cfi(&b, 0x1b, "zR", ins, sizeof(ins));
	CHECK(build_buf(&b, &t));
	CHECK_EQ_INT(t.st.fdes, 1);
	CHECK_STR(rule_at(&t, FN, s), "rsp+8");
	CHECK_STR(rule_at(&t, FN + 1, s), "rsp+16 rbp=c-16");
	CHECK_STR(rule_at(&t, FN + 3, s), "rsp+16 rbp=c-16");
	CHECK_STR(rule_at(&t, FN + 4, s), "rbp+16 rbp=c-16");
	CHECK_STR(rule_at(&t, FN + 14, s), "rsp+8");
	CHECK_STR(rule_at(&t, FN + 15, s), "rbp+16 rbp=c-16");
	CHECK_STR(rule_at(&t, FN + 20, s), "rbp+16 rbp=c+32");
	CHECK_STR(rule_at(&t, FN + 24, s), "rbp+16 rbp=c+32");
	CHECK_STR(rule_at(&t, FN + 26, s), "end");
	CHECK_STR(rule_at(&t, FN + 0x3f, s), "end");
	CHECK_STR(rule_at(&t, FN + 0x40, s), "none");
	CHECK_STR(rule_at(&t, FN - 1, s), "(no row)");
	ehf__free(&t);
	return true;
}

static bool synthetic_encodings(void)
{
	static const uint8_t ins[] = { 0x41, 0x0e, 16 };
	static const uint8_t encs[] = { 0x1b /* pcrel sdata4 */, 0x33 /* datarel udata4 */,
					0x31 /* datarel uleb128 */, 0x3b /* datarel sdata4 */ };
	char s[48];

	for (size_t i = 0; i < sizeof(encs); i++) {
		struct buf b = { .n = 0 };
		struct ehf_table t;

		make_cfi(&b, encs[i], "zR", ins, sizeof(ins));
		CHECK(build_buf(&b, &t));
		CHECK_EQ_INT(t.st.fdes, 1);
		CHECK_EQ_INT(t.base, FN);
		CHECK_STR(rule_at(&t, FN + 1, s), "rsp+16");
		ehf__free(&t);
	}
	return true;
}

static bool synthetic_plt_and_signal(void)
{
	static const uint8_t plt[] = {
		0x0e, 16, 0x46, 0x0e, 24, 0x4a,
		0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22,
	};
	static const uint8_t sig[] = {
		0x0f, 4, 0x77, 0xa0, 0x01, 0x06,     /* cfa = *(rsp + 160) */
		0x10, 6, 3, 0x77, 0xf8, 0x00,        /* rbp at rsp + 120 */
		0x10, 16, 3, 0x77, 0xa8, 0x01,       /* rip at rsp + 168 */
	};
	static const uint8_t other[] = { 0x0f, 2, 0x76, 0x78 }; /* cfa = rbp - 8 */
	struct buf b = { .n = 0 };
	struct ehf_table t;
	char s[48];

	make_cfi(&b, 0x1b, "zR", plt, sizeof(plt));
	CHECK(build_buf(&b, &t));
	CHECK_STR(rule_at(&t, FN + 6, s), "rsp+24");
	CHECK_STR(rule_at(&t, FN + 16, s), "plt+8/11");
	CHECK_EQ_INT(t.st.plt, 1);
	ehf__free(&t);

	b.n = 0;
	make_cfi(&b, 0x1b, "zRS", sig, sizeof(sig));
	CHECK(build_buf(&b, &t));
	CHECK_STR(rule_at(&t, FN, s), "signal");
	ehf__free(&t);

	b.n = 0; /* the same without 'S': not trusted as a signal frame */
	make_cfi(&b, 0x1b, "zR", sig, sizeof(sig));
	CHECK(build_buf(&b, &t));
	CHECK_STR(rule_at(&t, FN, s), "unsupported");
	ehf__free(&t);

	b.n = 0;
	make_cfi(&b, 0x1b, "zR", other, sizeof(other));
	CHECK(build_buf(&b, &t));
	CHECK_STR(rule_at(&t, FN, s), "unsupported");
	CHECK_EQ_INT(t.st.unsupported, 1);
	ehf__free(&t);
	return true;
}

static bool synthetic_malformed(void)
{
	static const uint8_t bad_op[] = { 0x41, 0x3f }; /* unknown opcode */
	static const uint8_t past[] = { 0x0b };         /* restore_state, empty */
	struct buf b = { .n = 0 };
	struct ehf_table t;

	make_cfi(&b, 0x1b, "zR", bad_op, sizeof(bad_op));
	CHECK(build_buf(&b, &t));
	CHECK_EQ_INT(t.n, 0);
	CHECK_EQ_INT(t.st.bad_entries, 1);
	ehf__free(&t);
	b.n = 0;
	make_cfi(&b, 0x1b, "zR", past, sizeof(past));
	CHECK(build_buf(&b, &t));
	CHECK_EQ_INT(t.st.bad_entries, 1);
	ehf__free(&t);
	/* Every truncation of a valid section. */
	b.n = 0;
	make_cfi(&b, 0x1b, "zR", past, 0);
	for (size_t n = 0; n < b.n; n++) {
		struct buf c = b;

		c.n = n;
		CHECK(build_buf(&c, &t));
		ehf__free(&t);
	}
	return true;
}

/* libc's .eh_frame with random bytes changed: no crash, no hang. */
static bool mutated_libc(void)
{
	int fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	uint8_t *copy = NULL;
	size_t len = 0, shstrndx;
	uint64_t vaddr = 0;

	if (fd < 0)
		SKIP("no libc");
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(e && !elf_getshdrstrndx(e, &shstrndx));
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(n, ".eh_frame")) {
			Elf_Data *d = elf_getdata(scn, NULL);

			CHECK(d && d->d_size);
			copy = malloc(d->d_size);
			CHECK(copy);
			memcpy(copy, d->d_buf, d->d_size);
			len = d->d_size;
			vaddr = sh.sh_addr;
		}
	}
	elf_end(e);
	close(fd);
	CHECK(copy);
	srand(42);
	uint8_t *m = malloc(len);
	CHECK(m);
	for (int round = 0; round < 150; round++) {
		struct ehf_table t;

		memcpy(m, copy, len);
		for (int k = 0; k < 1 + round % 40; k++)
			m[(size_t)rand() % len] = (uint8_t)rand();
		struct ehf_input in = { .eh_frame = { m, len - (size_t)(round % 7) * 3, vaddr } };
		CHECK(ehf__build(&in, &t) == 0);
		ehf__free(&t);
	}
	free(m);
	free(copy);
	return true;
}

static bool not_x86_or_not_elf(void)
{
	struct ehf_table t;
	static const char junk[] = "not an ELF file at all, just text";

	CHECK_EQ_INT(ehf__build_mem(junk, sizeof(junk), &t), -ENOEXEC);
	return true;
}
TEST_MAIN("ehframe_synth",
	  TEST(synthetic_opcodes),
	  TEST(synthetic_encodings),
	  TEST(synthetic_plt_and_signal),
	  TEST(synthetic_malformed),
	  TEST(not_x86_or_not_elf),
	  TEST(mutated_libc))
