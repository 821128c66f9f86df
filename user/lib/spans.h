/* spans.h — free space in a fixed array of N elements, handed out as
 * spans [off, off + len): first fit among the spans given back, else from
 * the untouched top.
 *
 * The BPF unwinder's rows array is fixed at load (a BPF map cannot grow),
 * and an always-on recording sees new binaries for days: without giving
 * back the rows of tables no process uses any more, the array fills once
 * and every later binary is walked by frame pointer. Freed spans are kept
 * sorted by offset and merged with their neighbours (and with the top),
 * so that a run of frees leaves one span, not fragments.
 */
#ifndef PMUBPF_SPANS_H
#define PMUBPF_SPANS_H

#include <stddef.h>
#include <stdint.h>

struct span {
	uint32_t off, len;
};

struct spans {
	uint32_t size;      /* elements in all */
	uint32_t top;       /* [top, size) never handed out (or all given back) */
	uint64_t used;      /* elements handed out now */
	struct span *free;  /* given back below top: sorted, never adjacent */
	size_t n, cap;
};

void spans__init(struct spans *s, uint32_t size);
/* A span of len elements (len > 0): 0 and *off, -ENOSPC (no free span
 * that long; fragmentation included), -ENOMEM. */
int spans__alloc(struct spans *s, uint32_t len, uint32_t *off);
/* Give back [off, off + len), handed out before. -ENOMEM if the free
 * list cannot grow: the span is then lost (counted by the caller). */
int spans__free(struct spans *s, uint32_t off, uint32_t len);
void spans__fini(struct spans *s);

#endif
