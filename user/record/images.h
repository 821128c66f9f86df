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

/* Can BPF send the images of processes as they end? The kernel's BTF
 * names the open-coded VMA iterator (6.7) and the sched_prepare_exec
 * tracepoint (6.10), and its exit tracepoint runs while the process
 * still has its address space (6.16; before, the kernel released it
 * first): bpf/exitprobe.bpf.c, loaded on its own, watches a child exit
 * (~15 ms of CPU, once per run). PMUBPF_MMAP_REPORTS=1 in the environment says
 * no (the reports' way, for tests and comparisons). */
bool images__supported(void);

/* Why images__supported said no: one phrase, "" if it said yes. */
const char *images__why_not(void);

/* BPF's counts (enum pmubpf_image_stat), summed over CPUs. */
int images__stats(int stats_fd, int nr_cpus, uint64_t out[PMUBPF_IMAGE_NSTATS]);

#endif
