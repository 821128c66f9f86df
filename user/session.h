/* session.h — one recording, from loading BPF to writing the profiles.
 *
 * The orchestration stage: checks the machine (BTF, privileges), loads the
 * skeleton with maps sized for the run, sets targets, starts the command
 * if any, opens and attaches the events, serves ring-buffer notices until
 * the duration ends, a signal arrives or the command exits, then hands the
 * maps to report. See docs/architecture.md for the whole data flow.
 */
#ifndef PMUBPF_SESSION_H
#define PMUBPF_SESSION_H

#include "config.h"

/* Run the recording described by cfg. Returns the process exit status:
 * 0, 1 on an error (already printed as one line on stderr), or the
 * command's status in `-- command` mode. */
int session__run(const struct config *cfg);

/* Map sizes derived from -F/-c, -d and the number of CPUs (exposed for
 * tests). */
void session__map_sizes(const struct config *cfg, int ncpus,
			uint32_t *stack_entries, uint32_t *count_entries);

#endif
