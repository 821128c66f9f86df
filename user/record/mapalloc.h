/* mapalloc.h — whether a hash map that BPF programs only read (and
 * tracepoints update) may allocate its entries as they come rather than
 * all at once when it is made.
 *
 * A preallocated hash map holds max_entries entries from its creation:
 * unswappable kernel memory, zeroed and threaded on a free list at
 * start-up (label_slots alone: 65536 entries, 5.6 MB). Kernels before
 * 6.1 refuse a perf_event program a map that allocates as it fills (an
 * allocation in NMI could deadlock); 6.1's BPF memory allocator made it
 * safe and lifted the rule. Asked of the kernel by loading an
 * eight-instruction program that looks such a map up, not by its
 * version (backports).
 */
#ifndef PMUBPF_RECORD_MAPALLOC_H
#define PMUBPF_RECORD_MAPALLOC_H

#include <stdbool.h>

/* Does this kernel load a perf_event program that looks up a
 * BPF_F_NO_PREALLOC hash map? Asked once; PMUBPF_MAP_PREALLOC=1 in the
 * environment says no (for tests and comparisons). */
bool mapalloc__lazy_ok(void);

/* Fill each listed CPU's cache of free entries of map fd, a hash map
 * that allocates as it fills, before sampling starts. The kernel's BPF
 * allocator starts a CPU with one free entry for entries over 256 bytes
 * and refills it (irq_work, right after the interrupt) only once an
 * allocation there found it low; a sample stores up to two new stacks in
 * one interrupt, so each CPU's first such sample would lose its second
 * stack. One insert of key (value zeroed) and its delete, made from each
 * CPU in turn (this thread moved there), have the kernel refill that
 * CPU's cache. key must be one BPF never stores. Restores the thread's
 * CPU affinity. Returns the number of CPUs warmed; a CPU this thread may
 * not run on (cpuset) is left as it was. */
int mapalloc__warm(int fd, const void *key, size_t value_size, const int *cpus, int ncpus);

#endif
