/* cli.h — the command line (perf's conventions) into a struct config.
 *
 * First stage of every run: `pmubpf -e cycles:pp -F 999 -p 42 -d 5`.
 * Every mistake ends in one line on stderr (returned, not printed here)
 * naming the option and what was wrong.
 */
#ifndef PMUBPF_CLI_H
#define PMUBPF_CLI_H

#include <stddef.h>
#include <stdio.h>
#include "config/config.h"

enum cli_action { CLI_RECORD, CLI_LIST, CLI_HELP, CLI_VERSION, CLI_SERVE,
		  CLI_TOP, CLI_FEATURES };

/* Parse argv. sysfs_root is passed to event__parse. Returns the action
 * (>= 0) or -EINVAL with a one-line reason in err. */
int cli__parse(int argc, char **argv, const char *sysfs_root,
	       struct config *cfg, char *err, size_t errlen);
void cli__usage(FILE *f);

/* The next event of a -e list at *s (perf's syntax: comma-separated, but
 * commas inside PMU/terms/ belong to the event) into buf: 1 and *s moved
 * past it, 0 at the end, -EINVAL if it does not fit. */
int cli__next_event(const char **s, char *buf, size_t len);

#endif
