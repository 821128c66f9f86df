// nofp_sort.cc — std::sort with a lambda comparator, built without frame
// pointers: the hot function (sort_key, called by the lambda) sits under
// libstdc++'s introsort templates instantiated in the program, under
// sort_vector and main. C linkage for the names the tests look for.
// Runs argv[1] seconds (default 3).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "warmup.h"

static volatile uint64_t sink;

extern "C" __attribute__((noinline)) uint64_t sort_key(uint32_t x)
{
	uint64_t h = x;

	for (int i = 0; i < 24; i++)
		h = h * 0x5851f42d4c957f2dULL + 0x14057b7ef767814fULL;
	sink += h;
	return x;
}

extern "C" __attribute__((noinline)) void sort_vector(std::vector<uint32_t> &v, uint32_t seed)
{
	for (auto &x : v)
		x = seed = seed * 1664525u + 1013904223u;
	std::sort(v.begin(), v.end(), [](uint32_t a, uint32_t b) { return sort_key(a) < sort_key(b); });
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? std::atof(argv[1]) : 3;
	std::vector<uint32_t> v(20000);
	warm_up();
	auto t0 = std::chrono::steady_clock::now();
	uint32_t round = 0;

	do
		sort_vector(v, ++round);
	while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < secs);
	std::printf("%u rounds, first %u\n", round, v[0]);
	return 0;
}
