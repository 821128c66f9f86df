/* test_push.c — a push's parts without a server: the service template
 * (push/service.c), a profile's subsets (pprof/pprof_subset.c: only what
 * the kept samples use, one sample type without '-', string labels with
 * plain names, cut at a sample bound) and the queue's bound and
 * accounting (push/push.c: every profile queued is sent or counted as
 * dropped, the queue never above its bytes).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "pprof/pprof.h"
#include "pprof_read.h"
#include "push/push.h"
#include "push/push_int.h"
#include "push/service.h"
#include "testing.h"

static bool template_names(void)
{
	struct pprof_label web[] = { { .key = "comm", .str = "web" }, { .key = "pid", .num = 42 } };
	struct pprof_label ctr[] = { { .key = "comm", .str = "web" },
				     { .key = "container_id", .str = "abc123" },
				     { .key = "pod_uid", .str = "p-1" } };
	struct pprof_label empty[] = { { .key = "container_id", .str = "" }, { .key = "comm", .str = "db" } };
	char out[64];

	CHECK_EQ_INT(service__name("{container_id|comm}", web, 2, out, sizeof(out)), 0);
	CHECK_STR(out, "web");
	CHECK_EQ_INT(service__name("{container_id|comm}", ctr, 3, out, sizeof(out)), 0);
	CHECK_STR(out, "abc123");
	/* an empty label counts as none */
	CHECK_EQ_INT(service__name("{container_id|comm}", empty, 2, out, sizeof(out)), 0);
	CHECK_STR(out, "db");
	CHECK_EQ_INT(service__name("k8s/{pod_uid}/{comm}", ctr, 3, out, sizeof(out)), 0);
	CHECK_STR(out, "k8s/p-1/web");
	CHECK_EQ_INT(service__name("x/{pod_uid}", web, 2, out, sizeof(out)), 0);
	CHECK_STR(out, "x/");
	CHECK_EQ_INT(service__name("{comm}-{pid}", web, 2, out, sizeof(out)), 0);
	CHECK_STR(out, "web-42");
	CHECK_EQ_INT(service__name("plain", web, 2, out, sizeof(out)), 0);
	CHECK_STR(out, "plain");
	CHECK_EQ_INT(service__name("{comm}-{pid}", web, 2, out, 5), -ENOSPC);
	return true;
}

static bool template_refused(void)
{
	static const char *bad[] = { "", "{", "}", "{comm", "a}", "{}", "{a||b}", "{|a}", "{a|}",
				     "{a{b}}" };
	static const char *good[] = { "{comm}", "{container_id|systemd_unit|comm}", "svc", "a/{b}/c" };
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (service__check(bad[i], err, sizeof(err)) == 0 || !strstr(err, "service template")) {
			printf("  accepted '%s' (%s)\n", bad[i], err);
			return false;
		}
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (service__check(good[i], err, sizeof(err))) {
			printf("  refused '%s': %s\n", good[i], err);
			return false;
		}
	return true;
}

/* Samples of comm a (two, one deep), b, and a third of a: locations 1-2
 * used by a only, 3 by b only. */
static struct pprof *three_comms(void)
{
	struct pprof *p = pprof__new("cache-misses", "count", 1000);
	struct pprof_line fa = { .function = "fa" }, fb = { .function = "fb" }, fm = { .function = "main" };
	uint64_t m1, m2, l1, l2, l3;

	if (!p)
		return NULL;
	m1 = pprof__add_mapping(p, 0x1000, 0x2000, 0, "/bin/a", "aa", true);
	m2 = pprof__add_mapping(p, 0x5000, 0x6000, 0, "/bin/b", "bb", true);
	l1 = pprof__add_location(p, m1, 0x1100, &fa, 1);
	l2 = pprof__add_location(p, m1, 0x1200, &fm, 1);
	l3 = pprof__add_location(p, m2, 0x5100, &fb, 1);
	uint64_t sa[] = { l1, l2 }, sb[] = { l3 };
	struct pprof_label la[] = { { .key = "comm", .str = "a" }, { .key = "pid", .num = 7 },
				    { .key = "my.key", .str = "v" } };
	struct pprof_label la2[] = { { .key = "comm", .str = "a" }, { .key = "pid", .num = 8 },
				     { .key = "my.key", .str = "v" } };
	struct pprof_label lb[] = { { .key = "comm", .str = "b" } };
	if (pprof__add_sample(p, sa, 2, 3, 3000, la, 3) || pprof__add_sample(p, sb, 1, 1, 1000, lb, 1) ||
	    pprof__add_sample(p, sa, 1, 2, 2000, la2, 3)) {
		pprof__free(p);
		return NULL;
	}
	return p;
}

/* pprof__group_sets's question: group 0 for comm a, none else. */
static int only_a(void *ctx, const struct pprof_label *l, size_t n)
{
	(void)ctx;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i].key, "comm"))
			return l[i].str && !strcmp(l[i].str, "a") ? 0 : -1;
	return -1;
}

static pb_profile *round_trip(struct pprof *p)
{
	char path[] = "/tmp/test_push.XXXXXX";
	int fd = mkstemp(path);
	pb_profile *r = NULL;

	if (fd < 0)
		return NULL;
	close(fd);
	if (!pprof__write(p, path))
		r = load(path);
	unlink(path);
	return r;
}

static bool subset_of_one_service(void)
{
	struct pprof *p = three_comms(), *s;
	int *groups = p ? pprof__group_sets(p, only_a, NULL) : NULL;
	struct pprof_subset_opts o = { .set_group = groups, .group = 0, .weight_only = true,
				       .sanitize_names = true, .drop_numeric = true };
	size_t cursor = 0;
	pb_profile *r;

	CHECK(p && groups);
	s = pprof__subset(p, &o, &cursor);
	free(groups);
	CHECK(s);
	CHECK_EQ_INT(cursor, 3);
	CHECK_EQ_INT(pprof__nsamples(s), 2);
	r = round_trip(s);
	pprof__free(s);
	pprof__free(p);
	CHECK(r);
	CHECK_EQ_INT(r->n_sample_type, 1);
	CHECK_STR(r->string_table[r->sample_type[0]->type], "cache_misses");
	CHECK_STR(r->string_table[r->sample_type[0]->unit], "count");
	CHECK_STR(r->string_table[r->period_type->type], "cache_misses");
	CHECK_EQ_INT(r->period, 1000);
	CHECK_EQ_INT(r->n_sample, 2);
	CHECK_EQ_INT(r->n_mapping, 1); /* /bin/b's is not used */
	CHECK_EQ_INT(r->n_location, 2);
	CHECK_EQ_INT(r->n_function, 2);
	int64_t w = 0;
	for (size_t i = 0; i < r->n_sample; i++) {
		CHECK_EQ_INT(r->sample[i]->n_value, 1);
		w += r->sample[i]->value[0];
		CHECK_EQ_INT(r->sample[i]->n_label, 2); /* comm, my_key; no pid */
		for (size_t j = 0; j < r->sample[i]->n_label; j++) {
			const char *k = r->string_table[r->sample[i]->label[j]->key];
			CHECK(!strcmp(k, "comm") || !strcmp(k, "my_key"));
			CHECK(r->sample[i]->label[j]->str);
		}
	}
	CHECK_EQ_INT(w, 5000);
	for (size_t i = 0; i < r->n_string_table; i++)
		CHECK(strcmp(r->string_table[i], "fb") && strcmp(r->string_table[i], "/bin/b"));
	perftools__profiles__profile__free_unpacked(r, NULL);
	return true;
}

static bool subset_cut_in_parts(void)
{
	struct pprof *p = three_comms(), *s;
	struct pprof_subset_opts o = { .max_samples = 2 };
	size_t cursor = 0, total = 0;
	int parts = 0;

	CHECK(p);
	while (cursor < pprof__nsamples(p)) {
		s = pprof__subset(p, &o, &cursor);
		CHECK(s);
		total += pprof__nsamples(s);
		CHECK(pprof__nsamples(s) <= 2);
		pprof__free(s);
		parts++;
	}
	pprof__free(p);
	CHECK_EQ_INT(parts, 2);
	CHECK_EQ_INT(total, 3);
	return true;
}

static struct push_item *item(size_t len)
{
	struct push_item *it = calloc(1, sizeof(*it));

	if (!it)
		return NULL;
	it->body = calloc(1, len);
	it->len = len;
	it->url = strdup("http://127.0.0.1:1/ingest");
	it->ctype = "application/octet-stream";
	snprintf(it->what, sizeof(it->what), "test");
	return it;
}

/* A server that is not there (port 1 refuses): the queue holds at most
 * its bytes, and at the end every profile is sent or counted dropped. */
static bool queue_bounded_and_counted(void)
{
	struct push_opts o = { .url = "http://127.0.0.1:1", .queue_bytes = 1000, .backoff_s = 5 };
	struct push_stats st, fin;
	char err[256];
	struct push *ps = push__new(&o, err, sizeof(err));

	CHECK(ps);
	for (int i = 0; i < 10; i++) {
		struct push_item *it = item(300);
		CHECK(it);
		push__enqueue(ps, it);
		push__stats(ps, &st);
		CHECK(st.queue_bytes <= 1000);
	}
	push__enqueue(ps, item(2000)); /* bigger than the queue: never fits */
	push__stats(ps, &st);
	CHECK_EQ_INT(st.profiles_queued, 10);
	CHECK(st.dropped_full >= 7);
	push__close(ps, 0.2, &fin);
	CHECK_EQ_INT(fin.profiles_sent, 0);
	CHECK_EQ_INT(fin.dropped_full + fin.dropped_exit + fin.dropped_failed + fin.dropped_refused,
		     11);
	CHECK(fin.dropped_exit >= 1);
	return true;
}

static bool bad_url_refused(void)
{
	struct push_opts o = { .url = "ftp://host" };
	char err[256] = "";

	CHECK(!push__new(&o, err, sizeof(err)));
	CHECK(strstr(err, "bad --push 'ftp://host'"));
	o.url = "http://h:1";
	o.service = "{comm";
	CHECK(!push__new(&o, err, sizeof(err)));
	CHECK(strstr(err, "service template"));
	return true;
}

TEST_MAIN("push",
	  TEST(template_names),
	  TEST(template_refused),
	  TEST(subset_of_one_service),
	  TEST(subset_cut_in_parts),
	  TEST(queue_bounded_and_counted),
	  TEST(bad_url_refused))
