/* preload.h — unwind tables built before the first process needs them. */
#ifndef PMUBPF_PRELOAD_H
#define PMUBPF_PRELOAD_H

#include "procs/procs.h"
#include "unwind/unwind.h"

/* The files whose tables BPF should have before a process maps them
 * (unwind_files.c): libc and the loader, which nearly every process
 * maps (ours, that is the machine's: a container's own copies are found
 * once a process of it is read), the shell, and the command `--` runs
 * with the libraries it links (DT_NEEDED, transitively: by run path,
 * LD_LIBRARY_PATH, our libc's directory and the usual ones).
 * Built here, they unwind a new process's first samples, which come
 * before its maps are read (~10 ms); else those go by frame pointer. */
void preload__tables(struct unwind *uw, struct procs *p, const char *command);

#endif
