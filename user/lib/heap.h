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

/* Call once, before the recording allocates. */
void heap__long_running(void);

#endif
