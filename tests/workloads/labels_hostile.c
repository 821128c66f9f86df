/* labels_hostile.c — a process that registers a broken labels record, to
 * prove pmubpf survives hostile memory and counts what it rejected.
 *
 *   labels_hostile MODE [SECONDS]
 *   badmagic   record with the wrong magic: rejected, counted
 *   hugesize   record claiming a size of 1 GiB: rejected, counted
 *   unmapped   valid record whose tls_offset points at unmapped memory:
 *              accepted, every label read fails in BPF and is counted
 *   badset     valid record and TLS word, but the "set" it points to has
 *              1000 labels: the set is rejected, samples say [unread]
 *   emptykey   a well-formed set but for its one key, "" (pprof has no
 *              empty keys): rejected, samples say [unread], profile kept
 * It does not include <pmubpf/labels.h>: it forges the ABI by hand.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct record { /* labels ABI v1, see docs/labels-abi.md */
	uint64_t magic;
	uint32_t version, size;
	int64_t tls_offset;
	uint32_t ready, tls_size, set_magic, set_header_size, set_max_size;
	uint16_t max_labels, max_key_len, max_value_len;
	uint8_t reserved[14];
};

struct record pmubpf_labels_record = {
	.magic = 0x424c465042554d50ULL, .version = 1, .size = sizeof(struct record),
	.tls_size = 8, .set_magic = 0x5445534c, .set_header_size = 152,
	.set_max_size = 5272, .max_labels = 16, .max_key_len = 63, .max_value_len = 255,
};

static __thread void *volatile word __attribute__((tls_model("initial-exec")));
static uint64_t fake_set[64] __attribute__((aligned(8)));
static volatile uint64_t sink;

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "badmagic";
	double secs = argc > 2 ? atof(argv[2]) : 2;
	int64_t off = (char *)&word - (char *)__builtin_thread_pointer();
	struct timespec t0, t;

	if (!strcmp(mode, "badmagic")) {
		pmubpf_labels_record.magic ^= 1;
	} else if (!strcmp(mode, "hugesize")) {
		pmubpf_labels_record.size = 1u << 30;
	} else if (!strcmp(mode, "unmapped")) {
		off = -(int64_t)(64 << 20); /* 64 MiB below the thread pointer */
	} else if (!strcmp(mode, "badset")) {
		fake_set[0] = 0x1234567;    /* id */
		fake_set[1] = 0x5445534c | (1000ULL << 32); /* magic, count=1000 */
		fake_set[2] = 152;          /* total_size */
		word = fake_set;
	} else if (!strcmp(mode, "emptykey")) {
		fake_set[0] = 0x1234567;    /* id */
		fake_set[1] = 0x5445534c | (1ULL << 32); /* magic, count=1 */
		fake_set[2] = 155;          /* total_size: header + "\0v\0" */
		/* labels[0]: key at 152 (length 0), value "v" at 153 */
		fake_set[3] = 152 | (153ULL << 32) | (1ULL << 48);
		fake_set[19] = (uint64_t)'v' << 8; /* bytes 152..154: 0 'v' 0 */
		word = fake_set;
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	pmubpf_labels_record.tls_offset = off;
	__atomic_store_n(&pmubpf_labels_record.ready, 1, __ATOMIC_RELEASE);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			sink = sink * 6364136223846793005ULL + 1;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
