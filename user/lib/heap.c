/* heap.c — see heap.h. */
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "heap.h"
#include "envflag.h"

/* 128 KiB: glibc's own starting value; fixing it stops the dynamic
 * raise. The trim threshold is fixed with it (setting either stops both
 * moving): 1 MiB of free top is given back at once. */
#define HEAP_MMAP_THRESHOLD (128 * 1024)
#define HEAP_TRIM_THRESHOLD (1024 * 1024)

static bool heap_keep; /* heap__one_shot: freed memory is kept */

void heap__long_running(void)
{
	mallopt(M_MMAP_THRESHOLD, HEAP_MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, HEAP_TRIM_THRESHOLD);
}

/* heap__one_shot: blocks up to glibc's ceiling (32 MiB) come from the
 * heap; free top is kept up to 256 MiB; the heap is grown by ~80 MiB at
 * once so that one madvise covers what the recording will use. */
#define HEAP_ONESHOT_MMAP_MAX (32 << 20)
#define HEAP_ONESHOT_TRIM (256 << 20)
#define HEAP_ONESHOT_FIRST (16 << 20)
#define HEAP_ONESHOT_PAD (64 << 20)
#define HEAP_HUGE (2UL << 20)

void heap__one_shot(void)
{
	uintptr_t lo, hi;
	void *p;

	if (envflag_on(getenv("PMUBPF_HEAP_DEFAULT")))
		return;
	heap_keep = true;
	mallopt(M_MMAP_THRESHOLD, HEAP_ONESHOT_MMAP_MAX);
	mallopt(M_TRIM_THRESHOLD, HEAP_ONESHOT_TRIM);
	mallopt(M_TOP_PAD, HEAP_ONESHOT_PAD);
	lo = (uintptr_t)sbrk(0);
	p = malloc(HEAP_ONESHOT_FIRST); /* the heap grows by it and the pad */
	__asm__ volatile("" : : "r"(p) : "memory"); /* else the pair is dropped */
	hi = (uintptr_t)sbrk(0);
	free(p);
	mallopt(M_TOP_PAD, 0);
	if (lo == (uintptr_t)-1 || hi <= lo)
		return; /* not from the heap (mmapped): nothing to advise */
	lo = (lo + HEAP_HUGE - 1) & ~(HEAP_HUGE - 1);
	hi &= ~(HEAP_HUGE - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint: errors ignored */
}

bool heap__keeps_freed(void)
{
	return heap_keep;
}

void heap__give_back(void)
{
	if (!heap_keep)
		malloc_trim(0);
}
