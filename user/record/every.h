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

/* --keep: of the files in prefix's directory named PREFIX + a stamp of
 * REPORT_STAMP_LEN characters + ".pb.gz" or ".folded" (report__window_path), remove
 * all but the newest keep (by stamp). Returns how many were removed, or
 * -errno. Exposed for tests. */
int every__prune(const char *prefix, int keep);

#endif
