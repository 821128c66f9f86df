/* grow.h — the one way an array grows: room for `extra` more elements
 * after the first n, capacity doubling (from GROW_MIN), every size
 * overflow-checked.
 *
 * Counts and capacities are of many types across the tree (int, size_t,
 * uint32_t); GROW also refuses a capacity that its own variable could not
 * hold, so an int-counted list stops at INT_MAX elements with an error
 * instead of wrapping. The usual use:
 *
 *	if (GROW(list->v, list->cap, list->n, 1))
 *		return -ENOMEM;
 *	list->v[list->n++] = x;
 */
#ifndef PMUBPF_GROW_H
#define PMUBPF_GROW_H

#include <stddef.h>

#define GROW_MIN 16 /* elements of a first allocation */

/* Make *v (elements of elem bytes, room for *cap) hold at least n + extra
 * elements, at most max_cap. 0 (also when there was room already),
 * -EOVERFLOW when n + extra elements are more than max_cap or than
 * size_t can count in bytes, -ENOMEM when realloc fails; on an error *v
 * and *cap are unchanged (and *v still valid). */
int grow__reserve(void **v, size_t *cap, size_t n, size_t extra, size_t elem,
		  size_t max_cap);

/* The largest value of an integer lvalue's type, as a size_t. */
#define GROW_TYPE_MAX(x)						\
	((__typeof__(x))-1 > 0 ? (size_t)(__typeof__(x))-1		\
			       : (size_t)((((__typeof__(x))1 << (sizeof(x) * 8 - 2)) - 1) * 2 + 1))

/* grow__reserve for the array lvalue v (any element type) whose capacity
 * is the integer lvalue cap (any integer type), up to max elements; n and
 * extra are element counts. v and cap are evaluated more than once: plain
 * lvalues only. A statement expression (GNU C) whose value is
 * grow__reserve's. */
#define GROW_UPTO(v, cap, n, extra, max) __extension__ ({		\
	void *grow_v_ = (v);						\
	size_t grow_cap_ = (size_t)(cap), grow_max_ = (max);		\
	int grow_r_ = grow__reserve(&grow_v_, &grow_cap_, (size_t)(n),	\
				    (size_t)(extra), sizeof(*(v)),	\
				    grow_max_ < GROW_TYPE_MAX(cap) ?	\
				    grow_max_ : GROW_TYPE_MAX(cap));	\
	(v) = grow_v_;							\
	(cap) = (__typeof__(cap))grow_cap_;				\
	grow_r_;							\
})
/* The same, bounded only by what cap's type can hold. */
#define GROW(v, cap, n, extra) GROW_UPTO(v, cap, n, extra, GROW_TYPE_MAX(cap))

#endif
