/* live.h — `pmubpf top`: the hottest functions of the last window,
 * refreshed every --delay seconds (like perf top).
 *
 * One windowed recording (session.h, cfg->every = cfg->window = delay):
 * each delay the window under way is drained, built into a profile per
 * event as a recording's would be (report__build, so the same symbols,
 * losses and weights), and only its --top table shown; nothing is
 * written. On a terminal the screen is redrawn and 'q' quits; otherwise
 * the tables follow one another, for pipes and tests.
 */
#ifndef PMUBPF_TOP_LIVE_H
#define PMUBPF_TOP_LIVE_H

#include "config/config.h"

/* The process exit status: 0, or 1 on an error (one line on stderr). */
int live__run(const struct config *cfg);

#endif
