/* fuzz_events.c — libFuzzer target: event strings (user/config/events.c,
 * and through it pmu_sysfs.c against a fixed fake tree): event__parse,
 * the -e list splitter cli__next_event, and (for unknown names) the
 * "did you mean" search.
 * The input is one -e argument (a comma-separated list). */
#include "fuzz.h"
#include "config/events.h"
#include "cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmubpf_event ev;
	char err[256], one[256];

	char *text = fuzz_cstr(data, size);
	const char *s = text;
	int k = 0, r;
	while (k++ < 4 && (r = cli__next_event(&s, one, sizeof(one))) == 1) {
		err[0] = '\0';
		if (event__parse(one, fuzz_sysfs(), &ev, err, sizeof(err)) == 0) {
			if (!memchr(ev.file_tag, 0, sizeof(ev.file_tag)) || !ev.base[0])
				abort();
		} else if (fuzz_bad_err(err, data, size)) {
			abort(); /* an error is one line, always given */
		}
	}
	err[0] = '\0';
	if (event__parse(text, fuzz_sysfs(), &ev, err, sizeof(err)) != 0 && !err[0])
		abort();
	free(text);
	return 0;
}
