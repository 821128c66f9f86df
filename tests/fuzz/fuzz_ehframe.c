/* fuzz_ehframe.c — libFuzzer target: raw .eh_frame and .debug_frame
 * bytes to BPF unwind rows (user/unwind/ehframe*.c), without an ELF
 * around them (fuzz_symbols reaches the same code through ELF files).
 * Input: a 4-byte header, then the sections' bytes:
 *   [0..1] little-endian split: the first split % (len+1) bytes are
 *          .eh_frame, the rest .debug_frame
 *   [2]    bit 0: no .eh_frame, bit 1: no .debug_frame
 *   [3]    the sections' load address, in pages (pc-relative pointers)
 * The rows must come out sorted by pc, and every lookup inside them must
 * find the row that covers it. */
#include "fuzz.h"
#include "unwind/ehframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ehf_input in = { 0 };
	struct ehf_table t;
	char rule[64];

	if (size < 4)
		return 0;
	size_t len = size - 4, split = (data[0] | data[1] << 8) % (len + 1);
	/* Own copies of exactly the section sizes: ASan sees overreads. */
	uint8_t *eh = malloc(split ? split : 1), *dbg = malloc(len - split ? len - split : 1);
	if (!eh || !dbg)
		abort();
	memcpy(eh, data + 4, split);
	memcpy(dbg, data + 4 + split, len - split);
	uint64_t vaddr = (uint64_t)data[3] << 12;
	if (!(data[2] & 1))
		in.eh_frame = (struct ehf_section){ eh, split, vaddr };
	if (!(data[2] & 2))
		in.debug_frame = (struct ehf_section){ dbg, len - split, 0 };
	in.datarel_base = vaddr + 0x10000;
	in.textrel_base = vaddr + 0x400;
	if (ehf__build(&in, &t) == 0) {
		for (size_t i = 0; i < t.n; i++) {
			if (i && t.rows[i - 1].pc >= t.rows[i].pc)
				abort(); /* rows sorted, one per pc */
			const struct pmubpf_urow *r = ehf__lookup(&t, t.base + t.rows[i].pc);
			if (r != &t.rows[i])
				abort();
			if (i < 64)
				ehf__rule_str(t.rows[i].rule, rule, sizeof(rule));
		}
		(void)ehf__lookup(&t, 0);
		(void)ehf__lookup(&t, UINT64_MAX);
		(void)ehf__bytes(&t);
		ehf__free(&t);
	}
	free(eh);
	free(dbg);
	return 0;
}
