/* labeled.c — a library that uses the labels header on its own, for
 * programs that dlopen() it long after they started (dlopen_work.c loads
 * it as it loads libhotlib.so): its hotlib_spin runs under the set
 * {phase=plugin}. The labels record lives in this library, not in the
 * executable, so pmubpf must find it when the library arrives. */
#include <pmubpf/labels.h>
#include <stdint.h>

uint64_t hotlib_spin(uint64_t n);

__attribute__((noinline)) static uint64_t plugin_work(uint64_t n)
{
	uint64_t x = n | 1;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

uint64_t hotlib_spin(uint64_t n)
{
	static const pmubpf_labels *set;
	const pmubpf_labels *prev;
	uint64_t x;

	if (!set)
		set = pmubpf_labels_new(NULL, "phase", "plugin", NULL);
	prev = pmubpf_labels_set(set);
	x = plugin_work(n);
	pmubpf_labels_set(prev);
	return x;
}
