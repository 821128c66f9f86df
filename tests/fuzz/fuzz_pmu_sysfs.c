/* fuzz_pmu_sysfs.c — libFuzzer target: the "PMU/terms/" syntax resolved
 * against sysfs (user/config/pmu_sysfs.c), with the sysfs files
 * themselves from the input. A fake tree holds one PMU, "f"; the input is
 * '\n'-separated fields:
 *   body (the "PMU/terms/" part), type, format/a, format/b, format/c,
 *   events/x, events/y
 * each written to its file in the tree before the parse (a missing field
 * leaves the file empty). Terms a, b, c, aliases x, y. */
#include "fuzz.h"
#include <linux/perf_event.h>
#include "config/pmu_sysfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const files[] = {
		"f/type", "f/format/a", "f/format/b", "f/format/c",
		"f/events/x", "f/events/y",
	};
	static char root[300];
	struct perf_event_attr attr;
	char err[256], *f[7];

	if (!root[0]) {
		snprintf(root, sizeof(root), "%s/own", fuzz_sysfs());
		if (mkdir(root, 0755))
			abort();
	}
	char *text = fuzz_cstr(data, size);
	int n = fuzz_split(text, '\n', f, 7);
	for (int i = 0; i < 6; i++) {
		const char *c = i + 1 < n ? f[i + 1] : "";
		fuzz_put(root, files[i], c, strlen(c));
	}
	memset(&attr, 0, sizeof(attr));
	err[0] = '\0';
	if (pmu_sysfs__parse(root, f[0], f[0], &attr, err, sizeof(err)) != 0 &&
	    fuzz_bad_err(err, (const uint8_t *)text, size))
		abort(); /* an error is one line, always given */
	free(text);
	return 0;
}
