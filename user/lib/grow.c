/* grow.c — see grow.h. */
#include "grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int grow__reserve(void **v, size_t *cap, size_t n, size_t extra, size_t elem,
		  size_t max_cap)
{
	size_t limit = SIZE_MAX / elem, nc;
	void *nv;

	if (n <= *cap && extra <= *cap - n)
		return 0;
	if (limit > max_cap)
		limit = max_cap;
	if (extra > limit || n > limit - extra)
		return -EOVERFLOW;
	/* Doubling keeps appends amortized O(1); near the limit, the limit. */
	nc = *cap > limit / 2 ? limit : *cap * 2;
	if (nc < GROW_MIN)
		nc = GROW_MIN < limit ? GROW_MIN : limit;
	if (nc < n + extra)
		nc = n + extra;
	nv = realloc(*v, nc * elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = nc;
	return 0;
}
