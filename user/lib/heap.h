/* heap.h — malloc's policy for a recording that runs for days.
 *
 * A long recording (--every, --http, top) builds a profile every window:
 * the build's tables peak at several times what the recording holds
 * between windows, then are freed. glibc raises its mmap threshold each
 * time a large mmapped block is freed (up to 32 MiB), so after the first
 * build the next builds' big tables come from the heap, where the
 * symbols and process records allocated during the build pin pages
 * between them: free memory malloc_trim cannot give back, growing window
 * after window (the soak's "held RSS creeps while the heap in use stays
 * flat"). A fixed threshold keeps every large block in its own mapping,
 * returned whole when freed.
 */
#ifndef PMUBPF_HEAP_H
#define PMUBPF_HEAP_H

#include <stdbool.h>

/* Call once, before the recording allocates. */
void heap__long_running(void);

/* A one-shot recording's policy, the other way round: it allocates most
 * of what it will ever hold at its start and end (the kernel's BTF, the
 * unwind tables, the DWARF it names frames with) and exits, so memory it
 * frees is kept for the next allocation rather than given back, and the
 * heap is reserved at once (virtual memory; RSS grows as it is touched)
 * and asked to be backed by transparent huge pages where the kernel
 * does that on request (THP "madvise"). Where a page fault is costly (a
 * VM: 25 us each on the PVM machine of docs/benchmarks.md), the faults
 * of first touches were a third of a short recording's CPU. Call once,
 * before anything large is allocated; PMUBPF_HEAP_DEFAULT=1 in the
 * environment leaves glibc's defaults. */
void heap__one_shot(void);

/* What was freed, given back to the system (malloc_trim), unless the
 * one-shot policy keeps it for reuse: trimming splits the huge pages and
 * the next allocation faults its pages in again (on the cost bench:
 * 1,300 faults a recording kept, 4,300-5,200 trimmed; peak RSS 26 MB
 * against 24). */
void heap__give_back(void);
/* Whether heap__one_shot's policy is on: memory freed is kept, resident,
 * for the next allocation (a reader may rather fill the heap than map a
 * file: symbols/dwarf.c). */
bool heap__keeps_freed(void);

#endif
