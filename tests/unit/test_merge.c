/* test_merge.c — report_data__merge: windows drained one by one and
 * merged add up to the same data drained as one (the HTTP server builds
 * each request's profile this way, user/http/recorder.c). */
#include <stdlib.h>
#include <string.h>
#include "report/entries.h"
#include "testing.h"

static struct pmubpf_key key(uint32_t ev, uint32_t tid, uint64_t ustack)
{
	return (struct pmubpf_key){ .event = ev, .tgid = 100, .tid = tid, .pgen = 1,
				    .ustack = ustack, .kstack = PMUBPF_STACK_NONE };
}

static const struct report_entry *find(const struct report_data *d, const struct pmubpf_key *k)
{
	const struct report_event *e = &d->ev[k->event];

	for (size_t i = 0; i < e->n; i++)
		if (!memcmp(&e->v[i].k, k, sizeof(*k)))
			return &e->v[i];
	return NULL;
}

/* Three windows with overlapping keys: sums per key, one entry per key,
 * stacks copied once, drops summed. */
static bool sums_per_key(void)
{
	struct report_data w[3], dst;
	struct pmubpf_stack st = { .nr = 2, .ips = { 0x401000, 0x402000 } };
	uint64_t skey = PMUBPF_STACK_KEY_MIN | 42;

	CHECK(report_data__init(&dst) == 0);
	for (int i = 0; i < 3; i++) {
		CHECK(report_data__init(&w[i]) == 0);
		CHECK(report_data__add_stack(&w[i], skey, &st) == 0);
		for (uint32_t t = 0; t <= (uint32_t)i; t++) { /* window i: threads 0..i */
			struct pmubpf_key k = key(0, t, skey);
			struct pmubpf_val v = { .count = 1 + t, .period = 1000 * (1 + t) };

			CHECK(report_data__add_entry(&w[i], &k, &v) == 0);
		}
		struct pmubpf_key k1 = key(1, 7, PMUBPF_STACK_LOST); /* another event */
		CHECK(report_data__add_entry(&w[i], &k1, &(struct pmubpf_val){ 5, 50 }) == 0);
		w[i].ev[0].drops[PMUBPF_DROP_COUNTS_FULL] = (struct pmubpf_drop_val){ (uint64_t)i, 10 };
		CHECK(report_data__merge(&dst, &w[i]) == 0);
	}
	CHECK_EQ_INT(dst.ev[0].n, 3);
	CHECK_EQ_INT(dst.ev[1].n, 1);
	CHECK_EQ_INT(dst.nstacks, 1);
	CHECK(report_data__stack(&dst, skey) && report_data__stack(&dst, skey)->ips[1] == 0x402000);
	for (uint32_t t = 0; t < 3; t++) {
		struct pmubpf_key k = key(0, t, skey);
		const struct report_entry *en = find(&dst, &k);

		CHECK(en);
		CHECK_EQ_INT(en->v.count, (3 - t) * (1 + t));      /* in windows t..2 */
		CHECK_EQ_INT(en->v.period, (3 - t) * 1000 * (1 + t));
	}
	struct pmubpf_key k1 = key(1, 7, PMUBPF_STACK_LOST);
	CHECK(find(&dst, &k1) && find(&dst, &k1)->v.count == 15);
	CHECK_EQ_INT(dst.ev[0].drops[PMUBPF_DROP_COUNTS_FULL].count, 3);
	CHECK_EQ_INT(dst.ev[0].drops[PMUBPF_DROP_COUNTS_FULL].period, 30);
	for (int i = 0; i < 3; i++)
		report_data__free(&w[i]);
	report_data__free(&dst);
	return true;
}

/* Many windows of random keys: every key's total equals the sum over the
 * windows, and entries added to dst between merges are kept and merged
 * into too. */
static bool random_windows(void)
{
	enum { KEYS = 3000, WINDOWS = 20 };
	uint64_t *want = calloc(KEYS, sizeof(*want));
	struct report_data dst;
	unsigned seed = 7;

	CHECK(want && report_data__init(&dst) == 0);
	/* One entry added by hand first (as a drain into dst would). */
	struct pmubpf_key k0 = key(2, 0, PMUBPF_STACK_KEY_MIN | 0);
	CHECK(report_data__add_entry(&dst, &k0, &(struct pmubpf_val){ 1, 1 }) == 0);
	want[0] = 1;
	for (int w = 0; w < WINDOWS; w++) {
		struct report_data win;
		bool used[KEYS] = { false };

		CHECK(report_data__init(&win) == 0);
		for (int i = 0; i < 500; i++) {
			uint32_t t = (uint32_t)(rand_r(&seed) % KEYS);

			if (used[t])
				continue; /* a window has each key once, as BPF's map */
			used[t] = true;
			struct pmubpf_key k = key(2, t, PMUBPF_STACK_KEY_MIN | t);
			CHECK(report_data__add_entry(&win, &k, &(struct pmubpf_val){ t + 1, 1 }) == 0);
			want[t] += t + 1;
		}
		CHECK(report_data__merge(&dst, &win) == 0);
		report_data__free(&win);
	}
	size_t distinct = 0;
	for (uint32_t t = 0; t < KEYS; t++) {
		struct pmubpf_key k = key(2, t, PMUBPF_STACK_KEY_MIN | t);
		const struct report_entry *en = find(&dst, &k);

		distinct += want[t] != 0;
		CHECK(want[t] ? en && en->v.count == want[t] : !en);
	}
	CHECK_EQ_INT(dst.ev[2].n, distinct);
	report_data__free(&dst);
	free(want);
	return true;
}

/* --data-addr's entries: summed by key and address, kept apart from the
 * code entries of the same key (address 0 included: "no address"). */
static bool data_by_address(void)
{
	struct report_data w, dst;
	struct pmubpf_key k = key(0, 1, PMUBPF_STACK_NONE);
	struct pmubpf_val one = { 1, 10 };

	CHECK(report_data__init(&dst) == 0);
	for (int i = 0; i < 2; i++) {
		CHECK(report_data__init(&w) == 0);
		CHECK(report_data__add_entry(&w, &k, &one) == 0);
		CHECK(report_data__add_data(&w, &k, 0, &one) == 0);
		CHECK(report_data__add_data(&w, &k, 0x1000, &one) == 0);
		CHECK(report_data__add_data(&w, &k, 0x2000 + (uint64_t)i, &one) == 0);
		CHECK(report_data__merge(&dst, &w) == 0);
		report_data__free(&w);
	}
	CHECK_EQ_INT(dst.ev[0].n, 1);
	CHECK_EQ_INT(dst.ev[0].v[0].v.count, 2);
	CHECK_EQ_INT(dst.data[0].n, 4); /* 0, 0x1000, 0x2000, 0x2001 */
	for (size_t i = 0; i < dst.data[0].n; i++) {
		const struct report_entry *en = &dst.data[0].v[i];

		CHECK_EQ_INT(en->v.count, en->addr < 0x2000 ? 2 : 1);
		CHECK_EQ_INT(en->v.period, en->addr < 0x2000 ? 20 : 10);
	}
	report_data__free(&dst);
	return true;
}

TEST_MAIN("merge", TEST(sums_per_key), TEST(random_windows), TEST(data_by_address))
