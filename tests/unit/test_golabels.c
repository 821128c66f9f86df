/* test_golabels.c — Go's pprof labels, the custom-labels writer's name
 * rule, and the union of label sources
 * (issue 12), without a Go toolchain: the offsets table per Go version
 * (goversion.c), buildinfo parsing, and synthetic memory images laid out
 * as each Go version lays out g, m and its label set, read by
 * golabels.c (the same steps as bpf/labels_go.bpf.h) and decoded by
 * flabels.c; then flabels.c's hostile-input and union rules.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "procs/customlabels.h"
#include "procs/flabels.h"
#include "procs/golabels.h"
#include "procs/goversion.h"
#include "testing.h"

/* --- the table ----------------------------------------------------- */

static bool version_parse(void)
{
	unsigned ma, mi;

	CHECK(goversion__parse("go1.19.8", &ma, &mi) == 0 && ma == 1 && mi == 19);
	CHECK(goversion__parse("go1.24rc1", &ma, &mi) == 0 && ma == 1 && mi == 24);
	CHECK(goversion__parse("go1.21", &ma, &mi) == 0 && mi == 21);
	CHECK_EQ_INT(goversion__parse("devel go1.25-abc", &ma, &mi), -EINVAL);
	CHECK_EQ_INT(goversion__parse("go2", &ma, &mi), -EINVAL);
	return true;
}

/* Every release pmubpf knows, and the ones around them it must refuse. */
static bool table_rows(void)
{
	static const struct { unsigned minor; int labels, layout; } want[] = {
		{ 17, -1, 0 }, { 18, 360, PMUBPF_GO_MAP }, { 19, 360, PMUBPF_GO_MAP },
		{ 20, 360, PMUBPF_GO_MAP }, { 21, 344, PMUBPF_GO_MAP }, { 22, 344, PMUBPF_GO_MAP },
		{ 23, 352, PMUBPF_GO_MAP }, { 24, 352, PMUBPF_GO_SLICE }, { 25, -1, 0 },
	};
	struct pmubpf_go_slot s;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int err = goversion__offsets(1, want[i].minor, &s);

		if (want[i].labels < 0) {
			CHECK_EQ_INT(err, -EPROTONOSUPPORT);
			continue;
		}
		CHECK_EQ_INT(err, 0);
		CHECK_EQ_INT(s.g_m, 48);
		CHECK_EQ_INT(s.m_curg, 192);
		CHECK_EQ_INT(s.g_labels, want[i].labels);
		CHECK_EQ_INT(s.layout, want[i].layout);
	}
	CHECK_EQ_INT(goversion__offsets(2, 0, &s), -EPROTONOSUPPORT);
	return true;
}

static size_t buildinfo(uint8_t *b, uint8_t flags, const char *v)
{
	size_t n = strlen(v);

	memset(b, 0, 64);
	memcpy(b, "\xff Go buildinf:", 14);
	b[14] = 8;
	b[15] = flags;
	b[32] = (uint8_t)n;
	memcpy(b + 33, v, n);
	return 33 + n;
}

static bool buildinfo_parse(void)
{
	uint8_t b[64];
	char v[32];
	const char *why = NULL;
	size_t n;

	n = buildinfo(b, 2, "go1.21.3");
	CHECK_EQ_INT(goversion__buildinfo(b, n, v, sizeof(v), &why), 0);
	CHECK_STR(v, "go1.21.3");
	n = buildinfo(b, 0, "go1.21.3"); /* go1.17's: strings by pointer */
	CHECK_EQ_INT(goversion__buildinfo(b, n, v, sizeof(v), &why), -EPROTONOSUPPORT);
	n = buildinfo(b, 2, "go1.21.3");
	b[0] = 0;
	CHECK_EQ_INT(goversion__buildinfo(b, n, v, sizeof(v), &why), -EPROTO);
	n = buildinfo(b, 2, "go1.21.3");
	CHECK_EQ_INT(goversion__buildinfo(b, n - 1, v, sizeof(v), &why), -EPROTO); /* cut */
	b[32] = 0x80; /* a varint that never ends */
	CHECK_EQ_INT(goversion__buildinfo(b, 33, v, sizeof(v), &why), -EPROTO);
	n = buildinfo(b, 2, "go1.21.3");
	b[32] = 40; /* longer than the output */
	CHECK_EQ_INT(goversion__buildinfo(b, sizeof(b), v, sizeof(v), &why), -EPROTO);
	return true;
}

/* --- memory images --------------------------------------------------- */

#define IMG_BASE 0x10000ULL
#define IMG_SIZE 0x8000
struct img {
	uint8_t mem[IMG_SIZE];
};

static int img_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct img *m = ctx;

	if (addr < IMG_BASE || addr - IMG_BASE > IMG_SIZE || len > IMG_SIZE - (addr - IMG_BASE))
		return -EFAULT;
	memcpy(buf, m->mem + (addr - IMG_BASE), len);
	return 0;
}

static void put64(struct img *m, uint64_t addr, uint64_t v)
{
	memcpy(m->mem + (addr - IMG_BASE), &v, 8);
}

static uint64_t put_str(struct img *m, uint64_t *heap, const char *s)
{
	uint64_t at = *heap;

	memcpy(m->mem + (at - IMG_BASE), s, strlen(s));
	*heap += (strlen(s) + 15) & ~15ULL;
	return at;
}

/* g at G (its m at g + g_m), m at M (curg at m + m_curg = G), the set at
 * g + g_labels, laid out as `layout` does: pairs kv[0..n). The map puts
 * pairs in bucket slots 1, 3, 5... (empty slots between, as hashing does). */
#define G 0x11000ULL
#define M 0x12000ULL
#define SET 0x13000ULL
static void lay_out(struct img *m, const struct pmubpf_go_slot *s, const char *const kv[][2],
		    int n, uint32_t hash0)
{
	uint64_t heap = 0x16000;

	memset(m->mem, 0, sizeof(m->mem));
	put64(m, G + s->g_m, M);
	put64(m, M + s->m_curg, G);
	put64(m, G + s->g_labels, SET);
	if (s->layout == PMUBPF_GO_MAP) {
		uint64_t hmap = 0x14000, bucket = 0x15000;

		put64(m, SET, hmap);              /* *labelMap */
		put64(m, hmap, (uint64_t)n);      /* count */
		memcpy(m->mem + (hmap + 12 - IMG_BASE), &hash0, 4);
		put64(m, hmap + 16, bucket);      /* buckets; B (hmap + 9) = 0 */
		for (int i = 0; i < n; i++) {
			int slot = 2 * i + 1;

			m->mem[bucket - IMG_BASE + slot] = (uint8_t)(0x80 + i); /* tophash */
			put64(m, bucket + 8 + 16 * slot, put_str(m, &heap, kv[i][0]));
			put64(m, bucket + 8 + 16 * slot + 8, strlen(kv[i][0]));
			put64(m, bucket + 8 + 128 + 16 * slot, put_str(m, &heap, kv[i][1]));
			put64(m, bucket + 8 + 128 + 16 * slot + 8, strlen(kv[i][1]));
		}
	} else {
		uint64_t list = 0x14000;

		put64(m, SET, list);
		put64(m, SET + 8, (uint64_t)n);
		put64(m, SET + 16, (uint64_t)n);
		for (int i = 0; i < n; i++) {
			put64(m, list + 32 * i, put_str(m, &heap, kv[i][0]));
			put64(m, list + 32 * i + 8, strlen(kv[i][0]));
			put64(m, list + 32 * i + 16, put_str(m, &heap, kv[i][1]));
			put64(m, list + 32 * i + 24, strlen(kv[i][1]));
		}
	}
}

/* What BPF does at a sample and at the set's first sight: g -> g.m ->
 * m.curg -> curg.labels by the table's offsets, the id, the copy. */
static int read_set(struct img *m, const struct pmubpf_go_slot *s, struct label_set *out)
{
	uint8_t w[8];
	uint64_t g = G, mm, curg, labels, id;
	struct pmubpf_flabel_notice n;
	int err;

	if (img_read(m, g + s->g_m, w, 8))
		return -EFAULT;
	memcpy(&mm, w, 8);
	if (img_read(m, mm + s->m_curg, w, 8))
		return -EFAULT;
	memcpy(&curg, w, 8);
	if (img_read(m, curg + s->g_labels, w, 8))
		return -EFAULT;
	memcpy(&labels, w, 8);
	if ((err = golabels__id(img_read, m, s->layout, labels, &id)))
		return err;
	if (!id)
		return -ENOENT;
	memset(&n, 0, sizeof(n));
	n.hdr.label = id;
	if ((err = golabels__copy(img_read, m, s->layout, labels, id, &n)))
		return err;
	return flabels__decode(&n, out, NULL);
}

static const char *get(const struct label_set *s, const char *key)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (!strcmp(s->pairs[i].key, key))
			return s->pairs[i].value;
	return NULL;
}

static struct img image;

/* Each version's layout, read with its own offsets, gives its labels;
 * read with a neighbour's offsets, it does not. */
static bool each_version_image(void)
{
	static const char *const kv[][2] = { { "tenant", "a" }, { "req", "1" } };
	static const unsigned minors[] = { 18, 19, 20, 21, 22, 23, 24 };

	for (size_t i = 0; i < sizeof(minors) / sizeof(minors[0]); i++) {
		struct pmubpf_go_slot s, other;
		struct label_set set;

		CHECK(goversion__offsets(1, minors[i], &s) == 0);
		lay_out(&image, &s, kv, 2, 0x5eed);
		CHECK_EQ_INT(read_set(&image, &s, &set), 0);
		CHECK_EQ_INT(set.n, 2);
		CHECK_STR(get(&set, "tenant"), "a");
		CHECK_STR(get(&set, "req"), "1");
		CHECK(!set.truncated);
		/* go1.21's offsets on a go1.19 image and the reverse; go1.23's
		 * (map) layout on go1.24's list. */
		unsigned wrong = minors[i] <= 20 ? 21 : minors[i] <= 23 ? 19 : 23;
		CHECK(goversion__offsets(1, wrong, &other) == 0);
		CHECK(read_set(&image, &other, &set) != 0 || !get(&set, "tenant"));
	}
	return true;
}

/* A set freed and its memory reused by another (a new map: a new hash0)
 * is not taken for the one BPF named. */
static bool stale_set_refused(void)
{
	static const char *const kv[][2] = { { "tenant", "a" } };
	struct pmubpf_go_slot s;
	struct pmubpf_flabel_notice n;
	uint64_t id;

	CHECK(goversion__offsets(1, 19, &s) == 0);
	lay_out(&image, &s, kv, 1, 1111);
	CHECK(golabels__id(img_read, &image, s.layout, SET, &id) == 0 && id);
	lay_out(&image, &s, kv, 1, 2222);
	CHECK_EQ_INT(golabels__copy(img_read, &image, s.layout, SET, id, &n), -ESTALE);
	return true;
}

/* A map[string]string bucket as Go lays it out: tophash[8], keys[8],
 * elems[8], overflow. */
#define GO_BUCKET 272
static void bucket_pair(struct img *m, uint64_t bucket, int slot, uint64_t *heap, const char *k,
			const char *v)
{
	m->mem[bucket - IMG_BASE + slot] = (uint8_t)(0x80 + slot);
	put64(m, bucket + 8 + 16 * slot, put_str(m, heap, k));
	put64(m, bucket + 8 + 16 * slot + 8, strlen(k));
	put64(m, bucket + 8 + 128 + 16 * slot, put_str(m, heap, v));
	put64(m, bucket + 8 + 128 + 16 * slot + 8, strlen(v));
}

/* 12 labels as Go keeps them past 8: B = 1 (two buckets), the second
 * with an overflow bucket (a skewed hash): BPF leaves it to userspace,
 * which reads all 12. */
static uint64_t lay_out_12(struct img *m, const struct pmubpf_go_slot *s)
{
	static const char *const keys[] = { "k0", "k1", "k2", "k3", "k4", "k5",
					    "k6", "k7", "k8", "k9", "k10", "k11" };
	uint64_t heap = 0x16000, hmap = 0x14000, buckets = 0x15000, over = 0x15000 + 2 * GO_BUCKET;
	uint64_t id;

	memset(m->mem, 0, sizeof(m->mem));
	put64(m, G + s->g_m, M);
	put64(m, M + s->m_curg, G);
	put64(m, G + s->g_labels, SET);
	put64(m, SET, hmap);
	put64(m, hmap, 12);                  /* count */
	m->mem[hmap + 9 - IMG_BASE] = 1;     /* B = 1 */
	memcpy(m->mem + (hmap + 12 - IMG_BASE), &(uint32_t){ 77 }, 4);
	put64(m, hmap + 16, buckets);
	for (int i = 0; i < 3; i++)          /* bucket 0: 3 pairs */
		bucket_pair(m, buckets, 2 * i, &heap, keys[i], "v");
	for (int i = 0; i < 8; i++)          /* bucket 1: full ... */
		bucket_pair(m, buckets + GO_BUCKET, i, &heap, keys[3 + i], "v");
	put64(m, buckets + GO_BUCKET + 264, over);
	bucket_pair(m, over, 0, &heap, keys[11], "last"); /* ... and 1 overflowed */
	CHECK(golabels__id(img_read, m, s->layout, SET, &id) == 0 && id);
	return id;
}

static int copy_12(const struct pmubpf_go_slot *s, uint64_t id, struct pmubpf_flabel_notice *n)
{
	memset(n, 0, sizeof(*n));
	n->hdr.label = id;
	return golabels__copy(img_read, &image, s->layout, SET, id, n);
}

/* Past one bucket: every bucket and overflow bucket read; a map still
 * growing, one past 16 labels or 4 buckets, and an overflow cycle are
 * refused whole, not half read. An empty set: no id. */
static bool map_limits(void)
{
	struct pmubpf_go_slot s;
	struct pmubpf_flabel_notice n;
	struct label_set set;
	const char *why = NULL;
	uint64_t id;

	CHECK(goversion__offsets(1, 22, &s) == 0);
	id = lay_out_12(&image, &s);
	CHECK_EQ_INT(copy_12(&s, id, &n), 0);
	CHECK_EQ_INT(n.status, PMUBPF_FLABEL_OK);
	CHECK_EQ_INT(n.nslots, 12);
	CHECK_EQ_INT(flabels__decode(&n, &set, &why), 0);
	CHECK_EQ_INT(set.n, 12);
	CHECK_STR(get(&set, "k0"), "v");
	CHECK_STR(get(&set, "k10"), "v");
	CHECK_STR(get(&set, "k11"), "last");
	/* Growing: oldbuckets set (hash0 unchanged: the same id). */
	put64(&image, 0x14000 + 24, 0x15800);
	CHECK_EQ_INT(copy_12(&s, id, &n), 0);
	CHECK_EQ_INT(n.status, PMUBPF_FLABEL_TOO_MANY);
	CHECK_EQ_INT(flabels__decode(&n, &set, &why), -EPROTO);
	put64(&image, 0x14000 + 24, 0);
	/* An overflow bucket pointing back at itself. */
	put64(&image, 0x15000 + 2 * GO_BUCKET + 264, 0x15000 + 2 * GO_BUCKET);
	CHECK_EQ_INT(copy_12(&s, id, &n), 0);
	CHECK_EQ_INT(n.status, PMUBPF_FLABEL_UNREADABLE);
	put64(&image, 0x15000 + 2 * GO_BUCKET + 264, 0);
	/* More pairs in the buckets than the header's count (a torn read):
	 * refused, not 16 of them kept. */
	for (int i = 0; i < 8; i++)
		bucket_pair(&image, 0x15000 + 3 * GO_BUCKET, i, &(uint64_t){ 0x17400 + 0x40 * (uint64_t)i }, "x", "y");
	put64(&image, 0x15000 + 2 * GO_BUCKET + 264, 0x15000 + 3 * GO_BUCKET);
	CHECK_EQ_INT(copy_12(&s, id, &n), 0);
	CHECK_EQ_INT(n.status, PMUBPF_FLABEL_UNREADABLE);
	/* 17 labels, or B = 3: more than pmubpf reads. */
	put64(&image, 0x14000, 17);
	CHECK_EQ_INT(copy_12(&s, id, &n), 0);
	CHECK_EQ_INT(n.status, PMUBPF_FLABEL_TOO_MANY);
	put64(&image, 0x14000, 12);
	image.mem[0x14000 + 9 - IMG_BASE] = 3;
	CHECK_EQ_INT(copy_12(&s, id, &n), 0);
	CHECK_EQ_INT(n.status, PMUBPF_FLABEL_TOO_MANY);
	put64(&image, 0x14000, 0); /* count 0 */
	CHECK(golabels__id(img_read, &image, s.layout, SET, &id) == 0 && id == 0);
	return true;
}

/* --- flabels: hostile copies and the union rule ----------------------- */

static struct pmubpf_flabel_notice note;

static void pair(int i, const char *k, const char *v)
{
	note.pairs[i].flags = PMUBPF_FLABEL_PRESENT;
	note.pairs[i].klen = (uint32_t)strlen(k);
	note.pairs[i].vlen = (uint32_t)strlen(v);
	memcpy(note.pairs[i].key, k, strlen(k));
	memcpy(note.pairs[i].val, v, strlen(v));
}

static bool decode_rules(void)
{
	struct label_set s;

	memset(&note, 0, sizeof(note));
	note.hdr.label = 42;
	pair(0, "tenant", "a");
	pair(2, "tenant", "b"); /* a duplicate: the first wins */
	pair(3, "", "x");       /* an empty key: skipped */
	pair(4, "span", "7");
	note.nslots = 5;
	note.total = 4;
	CHECK_EQ_INT(flabels__decode(&note, &s, NULL), 0);
	CHECK_EQ_INT(s.id, 42);
	CHECK_EQ_INT(s.n, 2);
	CHECK_STR(get(&s, "tenant"), "a");
	CHECK_STR(get(&s, "span"), "7");
	CHECK(!s.truncated);
	/* The writer's value was longer than BPF copies: cut. */
	memset(note.pairs[4].val, 'x', PMUBPF_FLABEL_VAL - 1);
	note.pairs[4].vlen = 1000;
	CHECK_EQ_INT(flabels__decode(&note, &s, NULL), 0);
	CHECK(s.truncated);
	CHECK_EQ_INT(strlen(get(&s, "span")), PMUBPF_FLABEL_VAL - 1);
	note.pairs[4].vlen = 1;
	note.total = 9; /* the writer's count and its slots disagree */
	CHECK_EQ_INT(flabels__decode(&note, &s, NULL), 0);
	CHECK(s.truncated);
	note.total = 4;
	note.pairs[0].key[2] = 0; /* a NUL inside the copied bytes */
	CHECK_EQ_INT(flabels__decode(&note, &s, NULL), -EPROTO);
	note.pairs[0].key[2] = 'n';
	note.pairs[4].flags |= PMUBPF_FLABEL_FAULT;
	CHECK_EQ_INT(flabels__decode(&note, &s, NULL), -EPROTO);
	note.pairs[4].flags = PMUBPF_FLABEL_PRESENT;
	note.nslots = PMUBPF_FLABEL_MAX + 1;
	CHECK_EQ_INT(flabels__decode(&note, &s, NULL), -EPROTO);
	note.nslots = 5;
	note.status = PMUBPF_FLABEL_UNREADABLE;
	CHECK_EQ_INT(flabels__decode(&note, &s, NULL), -EPROTO);
	note.status = PMUBPF_FLABEL_OK;
	note.pairs[1].klen = 0xffffffff; /* not present: its lengths unread */
	CHECK_EQ_INT(flabels__decode(&note, &s, NULL), 0);
	return true;
}

static struct label_set ours, theirs;

static void set_of(struct label_set *s, int n, const char *prefix)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < n; i++) {
		snprintf(s->pairs[i].key, LABELS_KEY_MAX, "k%d", i);
		snprintf(s->pairs[i].value, LABELS_VALUE_MAX, "%s%d", prefix, i);
	}
	s->n = (uint32_t)n;
}

/* Our header's pairs win a clash; the union holds at most LABELS_MAX. */
static bool union_rule(void)
{
	set_of(&ours, 2, "ours");
	set_of(&theirs, 3, "go");
	flabels__union(&ours, &theirs);
	CHECK_EQ_INT(ours.n, 3);
	CHECK_STR(get(&ours, "k0"), "ours0");
	CHECK_STR(get(&ours, "k1"), "ours1");
	CHECK_STR(get(&ours, "k2"), "go2");
	CHECK(!ours.truncated);
	set_of(&ours, LABELS_MAX - 1, "ours");
	set_of(&theirs, LABELS_MAX, "go");
	for (int i = 0; i < LABELS_MAX; i++)
		theirs.pairs[i].key[0] = 'x'; /* all keys new */
	flabels__union(&ours, &theirs);
	CHECK_EQ_INT(ours.n, LABELS_MAX);
	CHECK(ours.truncated);
	return true;
}

/* The custom-labels ABI's rule on where its writer may live. */
static bool custom_names(void)
{
	CHECK(customlabels__name_ok("/usr/bin/anything", true));
	CHECK(customlabels__name_ok("/usr/lib/libcustomlabels.so", false));
	CHECK(customlabels__name_ok("/opt/x/libcustomlabels_rs-1.2.so", false));
	CHECK(customlabels__name_ok("/app/node_modules/customlabels.node", false));
	CHECK(!customlabels__name_ok("/usr/lib/libcustomlabels.so.1", false));
	CHECK(!customlabels__name_ok("/usr/lib/libother.so", false));
	CHECK(!customlabels__name_ok("/usr/lib/mycustomlabels.node", false));
	return true;
}

TEST_MAIN("golabels", TEST(version_parse), TEST(table_rows), TEST(buildinfo_parse),
	  TEST(each_version_image), TEST(stale_set_refused), TEST(map_limits),
	  TEST(decode_rules), TEST(union_rule), TEST(custom_names))
