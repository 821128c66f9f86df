/* jit.c — a tiny "JIT" for the symbols tests: copies the machine code of
 * one function into anonymous executable memory, names it in
 * /tmp/perf-PID.map (perf's JIT map format), and runs it in a loop.
 *
 * The copied function lives alone in section "jit_src", whose bounds the
 * linker provides (__start_jit_src/__stop_jit_src); it is a leaf with no
 * PC-relative references, so it runs anywhere. Frame pointers are kept,
 * so the profiler walks from the JIT code back into main.
 * Usage: jit SECONDS [NAME]   (NAME: symbol written to the map)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline, section("jit_src"))) uint64_t jit_template(uint64_t x)
{
	for (int i = 0; i < 20000; i++)
		x = (x ^ (x >> 9)) * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
	return x;
}

extern const char __start_jit_src[], __stop_jit_src[];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t call_jit(uint64_t (*fn)(uint64_t), uint64_t x)
{
	return fn(x) + 1;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, t0;
	const char *name = argc > 2 ? argv[2] : "jitted_hot_loop";
	size_t len = (size_t)(__stop_jit_src - __start_jit_src);
	static volatile uint64_t sink;
	char path[64];
	FILE *f;

	void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED || len == 0 || len > 4096)
		return 1;
	memcpy(mem, __start_jit_src, len);
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (!(f = fopen(path, "w")))
		return 1;
	fprintf(f, "%lx %zx %s\n", (unsigned long)(uintptr_t)mem, len, name);
	fclose(f);
	printf("jit %p %zu\n", mem, len);
	fflush(stdout);

	uint64_t (*fn)(uint64_t) = (uint64_t (*)(uint64_t))mem;
	for (t0 = now(); now() - t0 < secs;)
		sink = call_jit(fn, sink);
	unlink(path);
	return 0;
}
