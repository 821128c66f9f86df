/* mainexe.h — which executable a profile names first.
 *
 * pprof readers take the first mapping for the profile's main binary:
 * `go tool pprof` prints it as "File:" and its web UI as the title. Left
 * to the order frames were met, that is whatever library came first
 * (libc.so.6, [kernel.kallsyms]). So the report counts each sample's
 * weight against its process, and names first:
 *   - with -p, -t or -- command: the main executable of the profiled
 *     process (of the one with the most samples, if several; the
 *     command's own process, not its children);
 *   - otherwise (-a, -C), or if those processes have no samples: the
 *     executable with the most samples, summed over every process that
 *     runs it.
 * A process's main executable is the mapping of the file /proc/PID/exe
 * named at its snapshot.
 */
#ifndef PMUBPF_REPORT_MAINEXE_H
#define PMUBPF_REPORT_MAINEXE_H

#include <stdint.h>
#include <sys/types.h>
#include "config/config.h"
#include "procs/procs.h"

struct mainexe;

/* command_pid: the -- command's process, or 0. NULL on ENOMEM. */
struct mainexe *mainexe__new(const struct config *cfg, pid_t command_pid);
void mainexe__free(struct mainexe *m);
/* Count a sample's weight w (pr may be NULL: not counted). 0 or -ENOMEM. */
int mainexe__add(struct mainexe *m, struct proc *pr, uint32_t tid, int64_t w);
/* The executable mapping to name first and its process (*pr), or NULL
 * if no sampled process has a known executable. The last call: it
 * consumes the counts. */
const struct procmap *mainexe__pick(struct mainexe *m, struct proc **pr);

#endif
