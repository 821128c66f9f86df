/* fuzz_procmaps.c — libFuzzer target: /proc/PID/maps text
 * (user/procs/procmaps.c). First byte: bit 0 = exec_only; the rest is the
 * file. Every parsed mapping is looked up by its own bounds. */
#include "fuzz.h"
#include "procs/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps m = { 0 };

	if (size < 1)
		return 0;
	char *text = fuzz_cstr(data + 1, size - 1);
	if (procmaps__parse(text, data[0] & 1, &m) == 0) {
		for (size_t i = 0; i < m.n && i < 64; i++) {
			const struct procmap *p = procmaps__find(&m, m.maps[i].start);
			(void)procmaps__find(&m, m.maps[i].end - 1);
			(void)procmaps__find(&m, m.maps[i].end);
			if (p && (p->path == NULL || m.maps[i].start >= m.maps[i].end))
				abort(); /* a found mapping always has a path and a size */
		}
		(void)procmaps__find(&m, 0);
		(void)procmaps__find(&m, UINT64_MAX);
	}
	procmaps__free(&m);
	free(text);
	return 0;
}
