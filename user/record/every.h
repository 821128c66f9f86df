/* every.h — `pmubpf --every SEC`: one recording, a profile per event per
 * window, for as long as it runs.
 *
 * BPF is loaded and attached once; every --window seconds (10 by
 * default) the window under way is closed and drained into memory
 * (session__drain_window: every sample in exactly one window), so the BPF
 * maps hold at most one window's keys however long --every is; every SEC
 * seconds what was drained since the last profiles is written (temp file + rename: complete before
 * they appear) under names carrying the event and the window's start, and
 * with --keep N the oldest beyond N per event removed. Ends as a
 * recording does (-d, a signal, the command's or the targets' end), with
 * the last, shorter window written too.
 */
#ifndef PMUBPF_EVERY_H
#define PMUBPF_EVERY_H

#include "config/config.h"

/* The process exit status: 0, 1 on an error (one line on stderr), or the
 * command's status in `-- command` mode. */
int every__run(const struct config *cfg);

/* The stamp (wall ns, whole seconds) naming a window's profiles that
 * start at start_wall: its second, unless that is not after *last_sec
 * (the previous window's name: two windows can start within one second
 * when a write ran late) or a profile of any event (or its data profile)
 * by that name exists already (another run's, in the same second): then
 * the first later second free for all of them. Names are at second
 * resolution and a write replaces a file (rename), so without this a
 * window's profiles would replace another's. *last_sec is updated.
 * Exposed for tests. */
int64_t every__stamp(const struct config *cfg, int64_t start_wall, int64_t *last_sec);

/* --keep: of the files in prefix's directory named PREFIX + a stamp of
 * REPORT_STAMP_LEN characters + ".pb.gz" or ".folded" (report__window_path), remove
 * all but the newest keep (by stamp). Returns how many were removed, or
 * -errno. Exposed for tests. */
int every__prune(const char *prefix, int keep);

#endif
