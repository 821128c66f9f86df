/* fuzz_labels.c — libFuzzer target: label records and label sets as read
 * from a target's memory (user/procs/labels.c). The input is placed in
 * this process's memory and read back through process_vm_readv of our
 * own pid, exactly as from a target, and also parsed as the copy BPF
 * sends. First byte: bits 0-2 pick the address's misalignment; the rest
 * is memory (a record or a set). The set's id is taken from its own first
 * 8 bytes, so the parser goes past the id check. */
#include "fuzz.h"
#include "procs/labels.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct labels_record_info rec;
	struct label_set set;
	const char *why;
	uint64_t id = 0;

	if (size < 1)
		return 0;
	size_t n = size - 1, mis = data[0] & 7;
	/* Aligned, plus the chosen misalignment; exactly n bytes readable in
	 * ASan's eyes (process_vm_readv reads past them only in the kernel,
	 * and returns a short count there as a target would). */
	uint8_t *mem = aligned_alloc(8, ((n + mis) | 7) + 1);
	if (!mem)
		abort();
	memcpy(mem + mis, data + 1, n);
	uint64_t addr = (uint64_t)(uintptr_t)(mem + mis);
	if (n >= 8)
		memcpy(&id, data + 1, 8);

	(void)labels__read_record(getpid(), addr, &rec, &why);
	if (id) {
		if (labels__read_set(getpid(), addr, id, &set, &why) == 0 && set.n > LABELS_MAX)
			abort();
		if (labels__parse_set(data + 1, n, id, &set, &why) == 0) {
			if (set.n > LABELS_MAX)
				abort();
			for (uint32_t i = 0; i < set.n; i++)
				if (strnlen(set.pairs[i].key, LABELS_KEY_MAX) == LABELS_KEY_MAX ||
				    strnlen(set.pairs[i].value, LABELS_VALUE_MAX) == LABELS_VALUE_MAX)
					abort(); /* strings always terminated */
		}
	}
	free(mem);
	return 0;
}
