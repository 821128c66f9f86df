/* main.c — pmubpf's entry point: parse the command line, then list the
 * events, run one recording (session.c), show it live (live.c) or serve
 * them (httpd.c). */
#include <stdio.h>
#include "cli/cli.h"
#include "http/httpd.h"
#include "lib/heap.h"
#include "record/every.h"
#include "record/features.h"
#include "record/session.h"
#include "top/live.h"

#define PMUBPF_VERSION "0.1.0"
#define SYSFS_PMUS "/sys/bus/event_source/devices"

int main(int argc, char **argv)
{
	struct config cfg;
	char err[512];
	int action, ret;

	action = cli__parse(argc, argv, SYSFS_PMUS, &cfg, err, sizeof(err));
	if ((action == CLI_RECORD && cfg.every > 0) || action == CLI_TOP || action == CLI_SERVE)
		heap__long_running();
	else if (action == CLI_RECORD)
		heap__one_shot();
	switch (action) {
	case CLI_HELP:
		cli__usage(stdout);
		ret = 0;
		break;
	case CLI_VERSION:
		printf("pmubpf %s\n", PMUBPF_VERSION);
		ret = 0;
		break;
	case CLI_LIST:
		ret = event__list(SYSFS_PMUS, cfg.list_filter) ? 1 : 0;
		break;
	case CLI_FEATURES:
		ret = features__print(stdout);
		break;
	case CLI_RECORD:
		ret = cfg.every > 0 ? every__run(&cfg) : session__run(&cfg);
		break;
	case CLI_TOP:
		ret = live__run(&cfg);
		break;
	case CLI_SERVE:
		ret = httpd__serve(&cfg, SYSFS_PMUS);
		break;
	default:
		/* Messages quote the input: a newline or escape in it would
		 * break the one line a refusal is (tests/fuzz/fuzz_cli.c). */
		for (char *c = err; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		fprintf(stderr, "pmubpf: %s\n", err);
		ret = 2;
		break;
	}
	config__free(&cfg);
	return ret;
}
