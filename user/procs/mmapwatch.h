/* mmapwatch.h — the kernel's reports of executable mmaps, execs and
 * forks, system-wide.
 *
 * A dummy software event per CPU with attr.mmap2, comm_exec and task
 * (perf's mechanism for tracking address spaces) delivers
 * PERF_RECORD_MMAP2 for every file mapped executable, COMM at each exec
 * and FORK at each new process, each with its time (CLOCK_MONOTONIC).
 * They go to procs (procs__mapped, procs__exec, procs__forked): into its
 * log of recent history (maplog.h), which names processes gone before
 * their maps were read, and, for a process already read, a re-read of
 * its maps while the new mapping exists (libraries dlopen'ed, or mapped
 * by ld.so, after the first sample). Costs nothing per sample and
 * nothing per syscall: only per exec mmap, exec and fork, read in
 * batches (the buffer wakes the loader only when half full).
 */
#ifndef PMUBPF_MMAPWATCH_H
#define PMUBPF_MMAPWATCH_H

#include <stdbool.h>

#include "procs.h"

struct mmapwatch;

/* Open on every CPU, reporting into the PERF_EVENT_ARRAY map map_fd.
 * NULL + errno if the kernel refuses (callers go on without it: the
 * periodic re-reads in procs still find new libraries, later). data:
 * report data mappings too (--data-addr: each asks for a re-read). */
struct mmapwatch *mmapwatch__new(int map_fd, struct procs *procs, bool data);
/* fd to poll (epoll) for records. */
int mmapwatch__fd(const struct mmapwatch *w);
/* Handle every pending record. Returns the number or -errno. */
int mmapwatch__consume(struct mmapwatch *w);
void mmapwatch__free(struct mmapwatch *w);

#endif
