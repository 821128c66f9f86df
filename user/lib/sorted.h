/* sorted.h — the binary search every sorted address table shares.
 *
 * kallsyms (ksyms.c), /proc/PID/maps (procmaps.c), ELF symbols
 * (elfsym_tab.c), DWARF ranges (dwarf.c), perf maps (perfmap.c) and unwind
 * rows (ehframe.c) are arrays sorted by a start address, and a lookup in
 * any of them first asks the same question: how many entries start at or
 * below addr? The last of those is the candidate; each table then decides
 * whether it (or one of a few before it, where entries overlap) really
 * covers addr.
 */
#ifndef PMUBPF_SORTED_H
#define PMUBPF_SORTED_H

#include <stddef.h>

/* The number of leading elements of v[0..n) whose member `field` is <=
 * key, for v sorted by that member: the index just past the last such
 * element, 0 if there is none. n and key are evaluated once; v is not
 * read when n is 0. A statement expression (GNU C), so that one search
 * serves tables of any element type. */
#define UPPER_BOUND(v, n, field, key) __extension__ ({			\
	size_t lo_ = 0, hi_ = (n);					\
	__typeof__(key) key_ = (key);					\
									\
	while (lo_ < hi_) {						\
		size_t mid_ = lo_ + (hi_ - lo_) / 2;			\
		if ((v)[mid_].field <= key_)				\
			lo_ = mid_ + 1;					\
		else							\
			hi_ = mid_;					\
	}								\
	lo_;								\
})

#endif
