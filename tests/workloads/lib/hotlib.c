/* hotlib.c — a shared library that a workload dlopen()s after it started,
 * so its mapping appears after pmubpf's first snapshot of the process. */
#include <stdint.h>

uint64_t hotlib_spin(uint64_t iters);

__attribute__((noinline)) uint64_t hotlib_spin(uint64_t iters)
{
	uint64_t x = iters | 1;

	for (uint64_t i = 0; i < iters; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}
