/* test_timekeeper.c — the timer dither's arithmetic: which events are
 * dithered and around which period, segment lengths, and that the drawn
 * periods keep the expected sample count at its nominal value (the
 * profile's weights assume it) while actually varying the rate. */
#include <math.h>
#include <stdlib.h>
#include "cli/cli.h"
#include "perf/timekeeper.h"
#include "testing.h"

#define SYSFS "/sys/bus/event_source/devices"

static int parse(struct config *c, int argc, const char **argv)
{
	char err[256];

	return cli__parse(argc, (char **)argv, SYSFS, c, err, sizeof(err));
}

static bool timer_periods(void)
{
	struct config c;
	const char *a1[] = { "pmubpf", "-e", "cpu-clock", "-e", "task-clock", "-e", "cycles", "-e", "page-faults", NULL };
	const char *a2[] = { "pmubpf", "-c", "250000", NULL };
	const char *a3[] = { "pmubpf", "--no-dither", NULL };

	CHECK_EQ_INT(parse(&c, 9, a1), CLI_RECORD);
	CHECK_EQ_INT(timekeeper__timer_period(&c, &c.events[0]), 1000000000ULL / DEFAULT_FREQ);
	CHECK_EQ_INT(timekeeper__timer_period(&c, &c.events[1]), 1000000000ULL / DEFAULT_FREQ);
	CHECK_EQ_INT(timekeeper__timer_period(&c, &c.events[2]), 0); /* counts events */
	CHECK_EQ_INT(timekeeper__timer_period(&c, &c.events[3]), 0);
	CHECK(!c.no_dither);
	config__free(&c);
	CHECK_EQ_INT(parse(&c, 3, a2), CLI_RECORD);
	CHECK_EQ_INT(timekeeper__timer_period(&c, &c.events[0]), 250000);
	config__free(&c);
	CHECK_EQ_INT(parse(&c, 2, a3), CLI_RECORD);
	CHECK(c.no_dither);
	config__free(&c);
	return true;
}

static bool intervals(void)
{
	uint64_t rng = 42, lo = UINT64_MAX, hi = 0;

	for (int i = 0; i < 10000; i++) {
		uint64_t iv = timekeeper__interval(1000000, &rng); /* 1 ms: 100 ms base */

		lo = iv < lo ? iv : lo;
		hi = iv > hi ? iv : hi;
	}
	CHECK(lo >= 50000000 && lo < 52000000);   /* [0.5, 1.5] x 100 ms, */
	CHECK(hi <= 150000000 && hi > 148000000); /* both ends reached */
	for (int i = 0; i < 1000; i++) {          /* 1 s: 20 periods */
		uint64_t iv = timekeeper__interval(1000000000, &rng);

		CHECK(iv >= 10000000000ULL && iv <= 30000000000ULL);
	}
	return true;
}

static bool deviations(void)
{
	uint64_t rng = 7;
	double sum = 0, lo = 1, hi = -1, small = 1;
	const int n = 100000;

	for (int i = 0; i < n; i++) {
		double d = timekeeper__deviation(&rng);

		sum += d;
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		small = fabs(d) < small ? fabs(d) : small;
	}
	CHECK(lo >= -0.15 && lo < -0.149);
	CHECK(hi <= 0.15 && hi > 0.149);
	CHECK(small >= 0.05 && small < 0.051); /* never near the nominal rate */
	/* +-U(0.05, 0.15): sd 0.104, of the mean 3.3e-4; 6 sd */
	CHECK(fabs(sum / n) < 2e-3);
	return true;
}

/* A segment of T ns at period P' yields T/P' - 1/2 samples on average
 * (the restart cuts its last interval). */
static double expected(uint64_t interval, uint64_t period)
{
	return (double)interval / (double)period - 0.5;
}

static bool draws_keep_the_count(void)
{
	const uint64_t P = 1001001, T = 100000000; /* 999 Hz, 100 ms */
	double nominal = (double)T / (double)P;

	/* No deviation: the restart's half period is paid back. */
	CHECK(fabs(expected(T, timekeeper__draw(P, T, 0.0)) - nominal) < 0.01);
	/* Antithetic pair: exactly twice the nominal count. */
	for (double d = 0.01; d <= 0.1; d += 0.01) {
		double pair = expected(T, timekeeper__draw(P, T, d)) + expected(T, timekeeper__draw(P, T, -d));

		CHECK(fabs(pair - 2 * nominal) < 0.01);
	}
	/* The rate, not the period, moves by dev: +10% rate, -9.1% period. */
	CHECK(fabs(expected(T, timekeeper__draw(P, T, 0.1)) - nominal * 1.1) < 0.06);
	CHECK(timekeeper__draw(P, T, 0.1) < timekeeper__draw(P, T, 0.0));
	CHECK(timekeeper__draw(P, T, -0.1) > timekeeper__draw(P, T, 0.0));
	/* The kernel's floor. */
	CHECK_EQ_INT(timekeeper__draw(10000, 100000000, 0.1), 10000);
	return true;
}

TEST_MAIN("timekeeper",
	TEST(timer_periods),
	TEST(intervals),
	TEST(deviations),
	TEST(draws_keep_the_count))
