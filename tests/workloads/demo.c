/* demo.c — the program `make run` profiles: a toy "request handler" whose
 * time goes to three stages of unequal cost (parse < hash < render), plus
 * a little system-call work, for argv[1] seconds (default 3). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static __attribute__((noinline)) uint64_t parse_request(const char *s, int rounds)
{
	uint64_t h = 0;

	for (int r = 0; r < rounds; r++)
		for (const char *p = s; *p; p++)
			h = h * 31 + (unsigned char)*p;
	return h;
}

static __attribute__((noinline)) uint64_t hash_payload(uint64_t seed, int rounds)
{
	uint64_t x = seed | 1;

	for (int i = 0; i < rounds * 1000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

static int cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static __attribute__((noinline)) uint64_t render_page(uint64_t seed)
{
	static uint32_t v[4096];

	for (int i = 0; i < 4096; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		v[i] = (uint32_t)(seed >> 33);
	}
	qsort(v, 4096, sizeof(v[0]), cmp);
	return v[17];
}

static __attribute__((noinline)) void log_request(void)
{
	char buf[64];

	(void)!write(STDERR_FILENO, buf, 0);
	(void)!getppid();
}

static __attribute__((noinline)) void handle_request(int i)
{
	static const char req[] = "GET /render?page=42&user=alice HTTP/1.1";
	uint64_t h = parse_request(req, 40);

	h = hash_payload(h + (uint64_t)i, 200);
	sink += render_page(h);
	log_request();
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;
	long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		handle_request((int)n++);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("demo: handled %ld requests in %.1f s\n", n, secs);
	return 0;
}
