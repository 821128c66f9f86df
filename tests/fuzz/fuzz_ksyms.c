/* fuzz_ksyms.c — libFuzzer target: /proc/kallsyms text
 * (user/symbols/ksyms.c). The loader takes a path: the input is written
 * to a memfd and loaded through /proc/self/fd/N. Every symbol found must
 * lie at or below the address looked up. */
#include "fuzz.h"
#include <sys/mman.h>
#include "symbols/ksyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64];

	if (fd < 0 && (fd = memfd_create("kallsyms", MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct ksyms *k = ksyms__load(path);
	if (!k)
		return 0;
	for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
		uint64_t a;
		memcpy(&a, data + i, 8);
		const struct ksym *s = ksyms__lookup(k, a);
		if (s && (s->addr > a || !s->name))
			abort();
	}
	(void)ksyms__lookup(k, 0);
	(void)ksyms__lookup(k, UINT64_MAX);
	(void)ksyms__count(k);
	ksyms__free(k);
	return 0;
}
