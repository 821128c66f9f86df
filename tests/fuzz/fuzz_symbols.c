/* fuzz_symbols.c — libFuzzer target for pmubpf's symbol readers.
 *
 * Everything symbolization reads can be written by an unprivileged user:
 * binaries, debug files, MiniDebugInfo, /tmp/perf-PID.map. The first
 * input byte picks the reader, the rest is the file:
 *   0: an ELF image -> elfsym (build-id, segments, symbol tables),
 *      dwarf (units, functions, inline chains, lines) at many addresses,
 *      and its call frame information (ehframe: unwind tables)
 *   1: perf map text -> perfmap parse and lookups
 *   2: xz data -> MiniDebugInfo decompression, then as an ELF image (0)
 * Build: make fuzz; run: build/fuzz/fuzz_symbols tests/fuzz/corpus
 * (tests/integration/fuzz.sh runs a short bounded pass in make test).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/debuginfo.h"
#include "symbols/dwarf.h"
#include "unwind/ehframe.h"
#include "symbols/elfsym.h"
#include "symbols/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void probe_elf(const uint8_t *img, size_t len)
{
	struct symcache *c = symcache__new();
	struct elfobj *o = c ? symcache__get_mem(c, img, len) : NULL;
	struct dwarfobj *d = dwarf__open_mem(img, len);
	struct dwarf_frame f[DWARF_MAX_FRAMES];
	uint64_t v;

	if (o) {
		(void)elfobj__build_id(o);
		(void)elfobj__mapping_vaddr(o, 0, 0x1000, &v);
		(void)elfobj__find(o, "main");
	}
	/* Addresses around every symbol and on a grid. */
	for (uint64_t a = 0; a < 0x4000; a += 0x3f) {
		if (o && !elfobj__offset_to_vaddr(o, a, &v))
			(void)elfobj__lookup(o, v);
		if (d)
			(void)dwarf__lookup(d, a, f, DWARF_MAX_FRAMES);
	}
	if (o && elfobj__nsyms(o)) {
		for (uint64_t a = 0x1000; a < 0x1200; a++) {
			const struct elfsym *s = elfobj__lookup(o, a);
			if (s && d)
				(void)dwarf__lookup(d, s->addr, f, DWARF_MAX_FRAMES);
		}
	}
	dwarf__free(d);
	symcache__free(c);

	struct ehf_table t;
	if (!ehf__build_mem(img, len, &t)) {
		for (uint64_t a = t.base; a < t.base + 0x4000; a += 0x1f)
			(void)ehf__lookup(&t, a);
		ehf__free(&t);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const uint8_t *p = data + 1;
	size_t n = size - 1;

	switch (data[0] % 3) {
	case 0:
		if (n)
			probe_elf(p, n);
		break;
	case 1: {
		struct perfmap *m = NULL;

		if (perfmap__parse((const char *)p, n, &m) == 0) {
			for (size_t i = 0; i + 8 <= n && i < 256; i += 8) {
				uint64_t a;
				memcpy(&a, p + i, 8);
				(void)perfmap__lookup(m, a);
			}
			(void)perfmap__lookup(m, 0x1000);
		}
		perfmap__free(m);
		break;
	}
	case 2: {
		size_t out = 0;
		void *img = n ? debuginfo__unxz(p, n, &out) : NULL;

		if (img)
			probe_elf(img, out);
		free(img);
		break;
	}
	}
	return 0;
}
