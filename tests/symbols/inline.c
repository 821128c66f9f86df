/* inline.c — workload of the symbols tests: a hot loop inlined into its
 * caller, and a static function (named only by .symtab or DWARF).
 *
 * Built by tests/integration/symbols.sh with -O2 -g, so hot_inner is
 * inlined into hot_outer: its samples must show two frames in one
 * location, hot_inner at the INNER line and hot_outer at the OUTER line.
 * Usage: inline SECONDS [vdso]   (vdso: spin on clock_gettime instead,
 * so the vDSO's functions get samples)
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long hot_inner(unsigned long x)
{
	unsigned long s = x;

	for (int i = 0; i < 4000; i++)
		s = s * 6364136223846793005UL + (s >> 7); /* INNER */
	return s;
}

__attribute__((noinline)) unsigned long hot_outer(unsigned long x)
{
	return hot_inner(x) ^ (x >> 3); /* OUTER */
}

__attribute__((noinline)) static unsigned long static_spin(unsigned long x)
{
	for (int i = 0; i < 4000; i++)
		x = x * 2862933555777941757UL + 3037000493UL + (x >> 11);
	return x;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, t0 = now();

	if (argc > 2) {
		while (now() - t0 < secs)
			;
		return 0;
	}
	while (now() - t0 < secs) {
		sink += hot_outer(sink);
		sink += static_spin(sink);
	}
	return 0;
}
