/* images.h — whether the images of processes gone come from BPF
 * (bpf/images.bpf.h: the VMAs walked as a sampled image ends) or from
 * the kernel's mmap reports (user/procs/mmapwatch.c), and what BPF
 * counted. docs/architecture.md, "Images of processes gone".
 */
#ifndef PMUBPF_RECORD_IMAGES_H
#define PMUBPF_RECORD_IMAGES_H

#include <stdbool.h>
#include <stdint.h>
#include "pmubpf_abi.h"

/* Does this kernel offer what the walk needs: the open-coded VMA
 * iterator (6.7) and the sched_prepare_exec tracepoint (6.10)? From its
 * BTF. PMUBPF_MMAP_REPORTS=1 in the environment says no (the reports'
 * way, for tests and comparisons). */
bool images__supported(void);

/* After the programs are attached: does the exit tracepoint run while
 * the process still has its address space (6.16; before, the kernel
 * released it first)? A child that exits, marked sampled in `seen`.
 * 1 yes, 0 no, -errno if it could not tell. */
int images__exit_probe(int seen_fd, int stats_fd, int nr_cpus);

/* BPF's counts (enum pmubpf_image_stat), summed over CPUs. */
int images__stats(int stats_fd, int nr_cpus, uint64_t out[PMUBPF_IMAGE_NSTATS]);

#endif
