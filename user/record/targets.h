/* targets.h — what a recording is about, checked and started: online CPUs,
 * whether -p/-t targets are alive, the output directory, and the `--
 * command` held before its exec until the events are attached.
 */
#ifndef PMUBPF_TARGETS_H
#define PMUBPF_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "config/config.h"

/* Online CPUs from /sys/devices/system/cpu/online. 0 or -errno. */
int targets__online_cpus(int **cpus, int *n);
/* -p/-t: is any target still alive? (like perf, stop when none is) */
bool targets__alive(const struct config *cfg);
/* 0 if every profile the recording writes (-o, or NAME.EVENT.pb.gz per
 * event) can be written (lib/outfile.h: a new or regular file in a
 * writable directory, or one character device/FIFO), else -errno and a
 * one-line reason in err. */
int targets__check_outputs(const struct config *cfg, char *err, size_t errlen);
/* What cfg names must exist before anything loads: every -p process and
 * -t thread alive, the outputs writable (targets__check_outputs; with
 * --http only the directory), every -C CPU online.
 * With cpus non-NULL, *cpus (malloc'ed) and *ncpus are the CPUs to open
 * the events on: -C, else every online CPU. 0, or -errno with a one-line
 * reason in err. */
int targets__check(const struct config *cfg, int **cpus, int *ncpus,
		   char *err, size_t errlen);
/* Fork argv held before exec until a byte is written to *go_fd; exec
 * errors come back as an int errno on *err_fd (CLOEXEC: EOF means the exec
 * succeeded). Returns the pid, or -1 + errno. */
pid_t targets__start_command(char **argv, int *go_fd, int *err_fd);

#endif
