/* fuzz_perfmap.c — libFuzzer target: /tmp/perf-PID.map text
 * (user/symbols/perfmap.c), parsed from the raw bytes (the parser takes a
 * length, no NUL), then looked up at each symbol's edges and at addresses
 * taken from the input. */
#include "fuzz.h"
#include "symbols/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *m = NULL;
	/* Own copy, exactly size bytes: ASan sees any read past the end. */
	char *text = malloc(size ? size : 1);

	if (!text)
		abort();
	memcpy(text, data, size);
	if (perfmap__parse(text, size, &m) == 0) {
		for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
			uint64_t a;
			memcpy(&a, data + i, 8);
			const struct perfmap_sym *s = perfmap__lookup(m, a);
			if (s) {
				if (!s->name || a < s->start || a - s->start >= s->size)
					abort(); /* the entry must cover the address */
				(void)perfmap__lookup(m, s->start);
				(void)perfmap__lookup(m, s->start + s->size - 1);
				(void)perfmap__lookup(m, s->start + s->size);
			}
		}
		(void)perfmap__lookup(m, 0);
		(void)perfmap__lookup(m, UINT64_MAX);
		(void)perfmap__count(m);
	}
	perfmap__free(m);
	free(text);
	return 0;
}
