/* test_lib.c — user/lib's helpers: array growth (doubling, contents kept,
 * every overflow refused with the array left as it was), the error
 * formatter, and spans (first fit, neighbours merged, the top lowered,
 * a full array refusing). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/errmsg.h"
#include "lib/grow.h"
#include "lib/spans.h"
#include "testing.h"

static bool grow_appends(void)
{
	int *v = NULL;
	size_t n = 0, cap = 0, reallocs = 0;

	for (int i = 0; i < 1000; i++) {
		size_t before = cap;

		CHECK_EQ_INT(GROW(v, cap, n, 1), 0);
		reallocs += cap != before;
		CHECK(cap >= n + 1);
		v[n++] = i;
	}
	for (int i = 0; i < 1000; i++)
		CHECK_EQ_INT(v[i], i);
	/* Doubling from GROW_MIN: 16, 32, ..., 1024. */
	CHECK_EQ_INT(cap, 1024);
	CHECK_EQ_INT(reallocs, 7);
	/* Room already: nothing moves. */
	int *same = v;
	CHECK_EQ_INT(GROW(v, cap, n, 24), 0);
	CHECK(v == same && cap == 1024);
	/* More than doubling asks for: exactly what is needed. */
	CHECK_EQ_INT(GROW(v, cap, n, 5000), 0);
	CHECK_EQ_INT(cap, 6000);
	free(v);
	return true;
}

static bool grow_overflow_refused(void)
{
	char *b = NULL;
	size_t cap = 0;
	uint64_t *w = NULL;

	/* n + extra wraps size_t. */
	CHECK_EQ_INT(grow__reserve((void **)&b, &cap, SIZE_MAX - 1, 2, 1, SIZE_MAX), -EOVERFLOW);
	/* count * size wraps size_t. */
	CHECK_EQ_INT(GROW(w, cap, 0, SIZE_MAX / sizeof(*w) + 1), -EOVERFLOW);
	CHECK(w == NULL && cap == 0);
	CHECK_EQ_INT(GROW(w, cap, 1, SIZE_MAX / sizeof(*w)), -EOVERFLOW);
	CHECK(w == NULL && cap == 0);
	return true;
}

static bool grow_bounded_by_type(void)
{
	char *v = NULL;
	int8_t cap8 = 0;
	uint8_t ucap = 0;
	int8_t n = 0;

	/* A signed capacity stops at its type's maximum, never wraps. */
	while (n < INT8_MAX) {
		CHECK_EQ_INT(GROW(v, cap8, n, 1), 0);
		CHECK(cap8 > n);
		v[n++] = 'x';
	}
	CHECK_EQ_INT(cap8, INT8_MAX);
	char *keep = v;
	CHECK_EQ_INT(GROW(v, cap8, n, 1), -EOVERFLOW);
	CHECK(v == keep && cap8 == INT8_MAX);
	free(v);
	v = NULL;
	CHECK_EQ_INT(GROW(v, ucap, 200, 55), 0);
	CHECK_EQ_INT(ucap, 255);
	CHECK_EQ_INT(GROW(v, ucap, 255, 1), -EOVERFLOW);
	free(v);
	return true;
}

static bool grow_upto(void)
{
	char *v = NULL;
	size_t cap = 0;

	CHECK_EQ_INT(GROW_UPTO(v, cap, 0, 100, 150), 0);
	CHECK_EQ_INT(cap, 100);
	/* Doubling would give 200: clamped to the bound. */
	CHECK_EQ_INT(GROW_UPTO(v, cap, 100, 1, 150), 0);
	CHECK_EQ_INT(cap, 150);
	CHECK_EQ_INT(GROW_UPTO(v, cap, 150, 1, 150), -EOVERFLOW);
	CHECK_EQ_INT(cap, 150);
	free(v);
	return true;
}

static bool errmsg_formats(void)
{
	char err[16];

	CHECK_EQ_INT(errmsg(err, sizeof(err), "bad '%s': %d", "x", 42), -EINVAL);
	CHECK_STR(err, "bad 'x': 42");
	/* Cut to fit, still terminated. */
	CHECK_EQ_INT(errmsg(err, sizeof(err), "%s", "a message longer than sixteen"), -EINVAL);
	CHECK_STR(err, "a message longe");
	/* No buffer: nothing written, still an error. */
	CHECK_EQ_INT(errmsg(NULL, 0, "unused %d", 1), -EINVAL);
	err[0] = '#';
	CHECK_EQ_INT(errmsg(err, 0, "unused"), -EINVAL);
	CHECK(err[0] == '#');
	return true;
}

static bool spans_first_fit_and_merge(void)
{
	struct spans s;
	uint32_t a, b, c, d, x;

	spans__init(&s, 100);
	CHECK_EQ_INT(spans__alloc(&s, 30, &a), 0);
	CHECK_EQ_INT(spans__alloc(&s, 30, &b), 0);
	CHECK_EQ_INT(spans__alloc(&s, 30, &c), 0);
	CHECK_EQ_INT(a, 0);
	CHECK_EQ_INT(b, 30);
	CHECK_EQ_INT(c, 60);
	CHECK_EQ_INT(spans__alloc(&s, 11, &x), -ENOSPC); /* 10 left */
	CHECK_EQ_INT(s.used, 90);
	/* A hole in the middle: first fit takes it, a longer one does not. */
	CHECK_EQ_INT(spans__free(&s, b, 30), 0);
	CHECK_EQ_INT(spans__alloc(&s, 31, &x), -ENOSPC);
	CHECK_EQ_INT(spans__alloc(&s, 20, &d), 0);
	CHECK_EQ_INT(d, 30);
	CHECK_EQ_INT(s.n, 1); /* [50, 60) left */
	/* Freeing both neighbours of the hole merges them into one span. */
	CHECK_EQ_INT(spans__free(&s, a, 30), 0);
	CHECK_EQ_INT(spans__free(&s, d, 20), 0);
	CHECK_EQ_INT(s.n, 1);
	CHECK_EQ_INT(s.free[0].off, 0);
	CHECK_EQ_INT(s.free[0].len, 60);
	CHECK_EQ_INT(spans__alloc(&s, 60, &x), 0);
	CHECK_EQ_INT(x, 0);
	CHECK_EQ_INT(spans__free(&s, x, 60), 0);
	/* The last span freed reaches the top: everything is untouched again. */
	CHECK_EQ_INT(spans__free(&s, c, 30), 0);
	CHECK_EQ_INT(s.n, 0);
	CHECK_EQ_INT(s.top, 0);
	CHECK_EQ_INT(s.used, 0);
	CHECK_EQ_INT(spans__alloc(&s, 100, &x), 0);
	CHECK_EQ_INT(spans__alloc(&s, 0, &x), -EINVAL);
	spans__fini(&s);
	return true;
}

/* Many frees in shuffled order: the free list always sorted, never two
 * adjacent spans, and the used count true. */
static bool spans_shuffled_frees(void)
{
	struct spans s;
	uint32_t off[64], order[64];

	spans__init(&s, 64 * 7);
	for (uint32_t i = 0; i < 64; i++) {
		CHECK_EQ_INT(spans__alloc(&s, 7, &off[i]), 0);
		order[i] = i;
	}
	srand(7);
	for (uint32_t i = 63; i > 0; i--) {
		uint32_t j = (uint32_t)rand() % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (uint32_t i = 0; i < 63; i++) {
		CHECK_EQ_INT(spans__free(&s, off[order[i]], 7), 0);
		CHECK_EQ_INT(s.used, (uint64_t)(63 - i) * 7);
		for (size_t k = 1; k < s.n; k++)
			CHECK(s.free[k - 1].off + s.free[k - 1].len < s.free[k].off);
	}
	CHECK_EQ_INT(spans__free(&s, off[order[63]], 7), 0);
	CHECK_EQ_INT(s.n, 0);
	CHECK_EQ_INT(s.top, 0);
	spans__fini(&s);
	return true;
}

TEST_MAIN("lib", TEST(grow_appends), TEST(grow_overflow_refused), TEST(grow_bounded_by_type),
	  TEST(grow_upto), TEST(errmsg_formats), TEST(spans_first_fit_and_merge),
	  TEST(spans_shuffled_frees))
