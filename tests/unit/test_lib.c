/* test_lib.c — user/lib's helpers: array growth (doubling, contents kept,
 * every overflow refused with the array left as it was) and the error
 * formatter. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "lib/errmsg.h"
#include "lib/grow.h"
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

TEST_MAIN("lib", TEST(grow_appends), TEST(grow_overflow_refused), TEST(grow_bounded_by_type),
	  TEST(grow_upto), TEST(errmsg_formats))
