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

enum cli_action { CLI_RECORD, CLI_LIST, CLI_HELP, CLI_VERSION, CLI_SERVE };

#define CLI_MAX_FREQ 100000 /* -F; beyond this the kernel throttles anyway */
/* Entries of a list as written (-C, and all -p, all -t together): a range
 * like -p 1-2000000000 would otherwise be expanded into gigabytes. */
#define CLI_LIST_MAX 65536

/* Parse argv. sysfs_root is passed to event__parse. Returns the action
 * (>= 0) or -EINVAL with a one-line reason in err. */
int cli__parse(int argc, char **argv, const char *sysfs_root,
	       struct config *cfg, char *err, size_t errlen);
void cli__usage(FILE *f);

/* The next event of a -e list at *s (perf's syntax: comma-separated, but
 * commas inside PMU/terms/ belong to the event) into buf: 1 and *s moved
 * past it, 0 at the end, -EINVAL if it does not fit. */
int cli__next_event(const char **s, char *buf, size_t len);

/* The one-line error of every parser here: format into err, return
 * -EINVAL. */
int cli__fail(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Parse "0-3,5,7-8" into a sorted, unique int list of at most
 * CLI_LIST_MAX entries as written (duplicates counted). 0 or -EINVAL. */
int cli__parse_list(const char *s, int **out, int *n, int max_value);

/* Seconds, fractions allowed: a whole finite number > 0 in [lo, hi].
 * 0 or -EINVAL. (-d, and the HTTP server's seconds=) */
int cli__parse_seconds(const char *s, double lo, double hi, double *out);
/* A rate of 1..CLI_MAX_FREQ Hz, or "max" (the kernel's
 * perf_event_max_sample_rate, capped there). opt spells it in the error:
 * "-F " gives "bad frequency '-F 0': want 1..100000 Hz or max", "hz=" the
 * HTTP server's.
 * 0 or -EINVAL with that line in err. */
int cli__parse_freq(const char *opt, const char *s, uint64_t *hz, char *err, size_t errlen);

#endif
