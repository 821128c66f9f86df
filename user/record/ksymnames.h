/* ksymnames.h — kernel symbols named by the kernel, for the addresses a
 * profile needs (bpf/ksymnames.bpf.c), in place of reading all of
 * /proc/kallsyms.
 *
 * What it gives: a few thousand names in a few ms where kallsyms costs
 * ~50 ms of CPU and a 5 MB table, and names as of the profile: a module
 * or BPF program loaded while recording is named (kallsyms was read at
 * start); one unloaded before its window's profile is built is not.
 * PMUBPF_KALLSYMS=1 in the environment keeps /proc/kallsyms.
 */
#ifndef PMUBPF_KSYMNAMES_H
#define PMUBPF_KSYMNAMES_H

#include <stddef.h>
#include <stdint.h>
#include "symbols/ksyms.h"

struct ksymnames;

/* Load the program: NULL + errno where the kernel cannot run it (before
 * 5.14, or without CAP_BPF/CAP_PERFMON), or PMUBPF_KALLSYMS=1. */
struct ksymnames *ksymnames__open(void);
void ksymnames__close(struct ksymnames *kn);
/* The table of the symbols of addrs; an address the kernel has no symbol
 * for is left out (its frame stays unnamed). NULL + errno if the program
 * failed. Safe from several threads (one runs at a time). A function of
 * report_in's kname shape (ctx: the ksymnames). */
struct ksyms *ksymnames__table(void *kn, const uint64_t *addrs, size_t n);

#endif
