/* heap.c — see heap.h. */
#include <malloc.h>
#include "heap.h"

/* 128 KiB: glibc's own starting value; fixing it stops the dynamic
 * raise. The trim threshold is fixed with it (setting either stops both
 * moving): 1 MiB of free top is given back at once. */
#define HEAP_MMAP_THRESHOLD (128 * 1024)
#define HEAP_TRIM_THRESHOLD (1024 * 1024)

void heap__long_running(void)
{
	mallopt(M_MMAP_THRESHOLD, HEAP_MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, HEAP_TRIM_THRESHOLD);
}
