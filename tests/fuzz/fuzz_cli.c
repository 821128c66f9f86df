/* fuzz_cli.c — libFuzzer target: the command line (user/cli/cli.c).
 * The input is argv after "pmubpf", arguments separated by NUL bytes (at
 * most 64); events resolve against a fake sysfs tree. A refusal must be
 * one line, and a config must free cleanly either way. Also the list,
 * seconds and frequency parsers on the first argument. */
#include "fuzz.h"
#include "cli/cli.h"
#include "config/values.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[66], err[512];
	struct config cfg;
	int argc = 1, *list = NULL, nlist = 0;
	double secs;
	uint64_t hz;

	char *buf = malloc(size + 1);
	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "pmubpf";
	for (size_t i = 0; i < size && argc < 65;) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;

	memset(&cfg, 0, sizeof(cfg));
	err[0] = '\0';
	int r = cli__parse(argc, argv, fuzz_sysfs(), &cfg, err, sizeof(err));
	if (r < 0 && fuzz_bad_err(err, data, size))
		abort(); /* an error is one line, always given */
	config__free(&cfg);

	if (argc > 1) {
		if (values__parse_list(argv[1], &list, &nlist, 4096) == 0)
			for (int i = 1; i < nlist; i++)
				if (list[i - 1] >= list[i])
					abort(); /* sorted and unique */
		free(list);
		(void)values__parse_seconds(argv[1], 1, 3600, &secs);
		(void)values__parse_freq("-F ", argv[1], &hz, err, sizeof(err));
	}
	free(buf);
	return 0;
}
