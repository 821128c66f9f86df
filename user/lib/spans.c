/* spans.c — see spans.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "grow.h"
#include "spans.h"

void spans__init(struct spans *s, uint32_t size)
{
	memset(s, 0, sizeof(*s));
	s->size = size;
}

int spans__alloc(struct spans *s, uint32_t len, uint32_t *off)
{
	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < s->n; i++) {
		struct span *f = &s->free[i];

		if (f->len < len)
			continue;
		*off = f->off;
		f->off += len;
		f->len -= len;
		if (!f->len) {
			memmove(f, f + 1, (s->n - i - 1) * sizeof(*f));
			s->n--;
		}
		s->used += len;
		return 0;
	}
	if (len > s->size - s->top)
		return -ENOSPC;
	*off = s->top;
	s->top += len;
	s->used += len;
	return 0;
}

int spans__free(struct spans *s, uint32_t off, uint32_t len)
{
	size_t i = 0;

	if (!len)
		return 0;
	while (i < s->n && s->free[i].off < off)
		i++;
	bool prev = i > 0 && s->free[i - 1].off + s->free[i - 1].len == off;
	bool next = i < s->n && off + len == s->free[i].off;

	if (prev && next) {
		s->free[i - 1].len += len + s->free[i].len;
		memmove(&s->free[i], &s->free[i + 1], (s->n - i - 1) * sizeof(s->free[0]));
		s->n--;
	} else if (prev) {
		s->free[i - 1].len += len;
	} else if (next) {
		s->free[i].off = off;
		s->free[i].len += len;
	} else {
		if (GROW(s->free, s->cap, s->n, 1))
			return -ENOMEM;
		memmove(&s->free[i + 1], &s->free[i], (s->n - i) * sizeof(s->free[0]));
		s->free[i] = (struct span){ off, len };
		s->n++;
	}
	s->used -= len;
	/* The last free span reaching the top goes back to it. */
	if (s->n && s->free[s->n - 1].off + s->free[s->n - 1].len == s->top) {
		s->top = s->free[s->n - 1].off;
		s->n--;
	}
	return 0;
}

void spans__fini(struct spans *s)
{
	free(s->free);
	memset(s, 0, sizeof(*s));
}
