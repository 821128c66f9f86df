/* test_pprof.c — unit tests of the pprof builder and writer (user/pprof.c,
 * user/pprof_write.c) and of the hash index it is built on
 * (user/hashtab.c).
 *
 * Profiles are written into a fresh temp directory, read back with zlib +
 * the generated protobuf-c decoder, and checked for the invariants every
 * pprof reader relies on (string 0 is "", dense unique ids, resolvable
 * references, one value per sample type) plus the exact content we put in.
 * Failure paths must return -errno and leave no file behind. When `go` is
 * on PATH, `go tool pprof -raw` must also accept the output silently.
 */
#include <errno.h>
#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/hashtab.h"
#include "pprof/pprof.h"
#include "pprof_read.h"
#include "testing.h"

/* --- helpers ------------------------------------------------------------ */

static char *make_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *d;
	if (asprintf(&d, "%s/test_pprof.XXXXXX", base && *base ? base : "/tmp") < 0)
		return NULL;
	if (!mkdtemp(d)) {
		free(d);
		return NULL;
	}
	return d;
}

static void rm_rf(const char *d)
{
	char *cmd;
	if (asprintf(&cmd, "rm -rf '%s'", d) >= 0) {
		if (system(cmd)) { /* best effort */ }
		free(cmd);
	}
}

static char *join(const char *dir, const char *name)
{
	char *s;
	return asprintf(&s, "%s/%s", dir, name) < 0 ? NULL : s;
}

/* Number of directory entries other than . and .. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* Are the n ids exactly {1..n}? */
static bool dense_ids(const uint64_t *ids, size_t n)
{
	bool ok = true;
	char *seen = calloc(n + 1, 1);
	if (!seen)
		return false;
	for (size_t i = 0; i < n && ok; i++) {
		ok = ids[i] >= 1 && ids[i] <= n && !seen[ids[i]];
		if (ok)
			seen[ids[i]] = 1;
	}
	free(seen);
	return ok;
}

#define STR_OK(p, i) CHECK(str((p), (i)) != NULL)

/* Invariants every pprof reader relies on. Our ids are also in order. */
static bool check_invariants(const pb_profile *p)
{
	CHECK(p->n_string_table >= 1);
	CHECK_STR(p->string_table[0], "");
	CHECK_EQ_INT(p->n_sample_type, 2);
	for (size_t i = 0; i < p->n_sample_type; i++) {
		STR_OK(p, p->sample_type[i]->type);
		STR_OK(p, p->sample_type[i]->unit);
	}
	CHECK(p->period_type);
	STR_OK(p, p->period_type->type);
	for (size_t i = 0; i < p->n_comment; i++)
		STR_OK(p, p->comment[i]);

	size_t nmax = p->n_mapping + p->n_location + p->n_function + 1;
	uint64_t *ids = calloc(nmax, sizeof(*ids));
	CHECK(ids);
	for (size_t i = 0; i < p->n_mapping; i++) {
		ids[i] = p->mapping[i]->id;
		if (ids[i] != i + 1 || !str(p, p->mapping[i]->filename) ||
		    !str(p, p->mapping[i]->build_id))
			ids[0] = 0;
	}
	bool ok = dense_ids(ids, p->n_mapping);
	for (size_t i = 0; i < p->n_function && ok; i++) {
		const Perftools__Profiles__Function *f = p->function[i];
		ids[i] = f->id;
		ok = f->id == i + 1 && str(p, f->name) && str(p, f->system_name) &&
		     str(p, f->filename);
	}
	ok = ok && dense_ids(ids, p->n_function);
	for (size_t i = 0; i < p->n_location && ok; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		ids[i] = l->id;
		ok = l->id == i + 1 && l->mapping_id <= p->n_mapping;
		for (size_t j = 0; j < l->n_line && ok; j++)
			ok = l->line[j]->function_id >= 1 &&
			     l->line[j]->function_id <= p->n_function;
	}
	ok = ok && dense_ids(ids, p->n_location);
	free(ids);
	CHECK(ok);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		CHECK_EQ_INT(s->n_value, p->n_sample_type);
		for (size_t j = 0; j < s->n_location_id; j++)
			CHECK(s->location_id[j] >= 1 &&
			      s->location_id[j] <= p->n_location);
		for (size_t j = 0; j < s->n_label; j++) {
			STR_OK(p, s->label[j]->key);
			STR_OK(p, s->label[j]->str);
			STR_OK(p, s->label[j]->num_unit);
		}
	}
	return true;
}

static const char *func_name(const pb_profile *p, uint64_t loc, size_t line)
{
	const Perftools__Profiles__Location *l = p->location[loc - 1];
	if (line >= l->n_line)
		return NULL;
	return str(p, p->function[l->line[line]->function_id - 1]->name);
}

/* --- the sample profile ------------------------------------------------- */

struct ids { uint64_t m1, m2, leaf, mid, root, bare, nomap; };

/* The profile most tests use. NULL + errno if any call fails. */
static struct pprof *build_small(struct ids *id)
{
	struct pprof *p = pprof__new("cycles", "count", 100003);
	int err = -EINVAL;
	if (!p)
		return NULL;
	pprof__set_time(p, 1700000000123456789LL, 2500000000LL);
	id->m1 = pprof__add_mapping(p, 0x400000, 0x500000, 0x1000, "/usr/bin/demo",
				    "abcdef0123", true);
	id->m2 = pprof__add_mapping(p, 0x7f0000000000, 0x7f0000100000, 0,
				    "/lib/libc.so.6", NULL, true);
	if (!id->m1 || !id->m2)
		goto fail_errno;
	/* Inlined: memcpy_inl inlined into copy. */
	const struct pprof_line inl[] = {
		{ "memcpy_inl", NULL, "demo.h", 12, 10 },
		{ "copy", "_Z4copyv", "demo.c", 40, 35 },
	};
	const struct pprof_line one[] = { { "main", NULL, "demo.c", 7, 5 } };
	const struct pprof_line libc[] = { { "__libc_start_main", NULL, NULL, 0, 0 } };
	if (!(id->leaf = pprof__add_location(p, id->m1, 0x401234, inl, 2)) ||
	    !(id->mid = pprof__add_location(p, id->m1, 0x402000, one, 1)) ||
	    !(id->root = pprof__add_location(p, id->m2, 0x7f0000001000, libc, 1)) ||
	    !(id->bare = pprof__add_location(p, id->m2, 0x7f0000002000, NULL, 0)) ||
	    !(id->nomap = pprof__add_location(p, 0, 0xdead, NULL, 0)))
		goto fail_errno;
	uint64_t s1[] = { id->leaf, id->mid, id->root };
	uint64_t s2[] = { id->bare, id->root };
	const struct pprof_label l1[] = {
		{ .key = "comm", .str = "demo" },
		{ .key = "tid", .num = 4242 },
		{ .key = "bytes", .num = 4096, .num_unit = "bytes" },
	};
	const struct pprof_label l2[] = { { .key = "comm", .str = "other" } };
	if ((err = pprof__add_sample(p, s1, 3, 1, 100003, l1, 3)) ||
	    (err = pprof__add_sample(p, s2, 2, 2, 200006, l2, 1)) ||
	    (err = pprof__add_sample(p, s1, 3, 1, 100003, l1, 3)) ||
	    (err = pprof__add_comment(p, "pmubpf record -e %s", "cycles")) ||
	    (err = pprof__add_comment(p, "lost=%d", 0)))
		goto fail;
	return p;
fail_errno:
	err = -errno;
fail:
	pprof__free(p);
	errno = -err;
	return NULL;
}

/* --- allocation failure injection ---------------------------------------
 * While fi_armed, the fi_countdown-th allocation fails (once) and fi_live
 * counts allocations minus frees, so a leak on any path shows as != 0.
 * The wrappers forward to the next allocator (glibc's, or AddressSanitizer's
 * under make SANITIZE=1: ASan also allocates behind strdup and others, so
 * its blocks must be freed by it, never by __libc_free). dlsym may
 * allocate while they are being looked up: those few bytes come from a
 * static arena and are never freed. */
static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static bool fi_armed, fi_fired;
static long fi_countdown, fi_live;
static _Alignas(16) char boot[4096];
static size_t boot_used;

static bool in_boot(const void *p)
{
	return (const char *)p >= boot && (const char *)p < boot + sizeof(boot);
}

static void *boot_alloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n > sizeof(boot) - boot_used)
		abort();
	boot_used += n;
	return boot + boot_used - n; /* static storage: already zeroed */
}

static bool resolve(void)
{
	static bool busy;

	if (next_free)
		return true;
	if (busy)
		return false;
	busy = true;
	next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	busy = false;
	if (!next_malloc || !next_calloc || !next_realloc || !next_free)
		abort();
	return true;
}

static bool fi_fail(void)
{
	if (!fi_armed || fi_fired || fi_countdown-- > 0)
		return false;
	fi_fired = true;
	errno = ENOMEM;
	return true;
}

void *malloc(size_t n)
{
	if (!resolve())
		return boot_alloc(n);
	void *r = fi_fail() ? NULL : next_malloc(n);
	fi_live += r && fi_armed;
	return r;
}

void *calloc(size_t n, size_t m)
{
	if (!resolve())
		return n && m > SIZE_MAX / n ? NULL : boot_alloc(n * m);
	void *r = fi_fail() ? NULL : next_calloc(n, m);
	fi_live += r && fi_armed;
	return r;
}

void *realloc(void *p, size_t n)
{
	if (!resolve() || in_boot(p))
		abort(); /* not needed by dlsym; arena blocks never grow */
	void *r = fi_fail() ? NULL : next_realloc(p, n);
	fi_live += r && !p && fi_armed;
	return r;
}

/* AddressSanitizer implements these itself, on its own heap, not through
 * malloc: without wrappers their blocks would be freed here but never
 * counted. */
char *strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *r = malloc(n);
	return r ? memcpy(r, s, n) : NULL;
}

char *strndup(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	char *r = malloc(n + 1);
	if (r) {
		memcpy(r, s, n);
		r[n] = '\0';
	}
	return r;
}

void free(void *p)
{
	if (!p || in_boot(p))
		return;
	fi_live -= fi_armed;
	resolve();
	next_free(p);
}

/* --- tests -------------------------------------------------------------- */

static bool eq_u64(const void *key, uint64_t v, void *ctx)
{
	return ((const uint64_t *)ctx)[v] == *(const uint64_t *)key;
}

static bool hashtab_basic(void)
{
	enum { N = 5000 };
	uint64_t *keys = malloc(N * sizeof(*keys)), v;
	CHECK(keys);
	struct hashtab *h = hashtab__new(eq_u64, keys);
	CHECK(h);
	/* Half of the keys share hash 7 to exercise long probe runs. */
	for (uint64_t i = 0; i < N; i++) {
		keys[i] = i * 977;
		uint64_t hash = i % 2 ? 7 : hashtab__hash_u64(keys[i]);
		CHECK(!hashtab__find(h, hash, &keys[i], NULL));
		CHECK_EQ_INT(hashtab__insert(h, hash, i), 0);
	}
	CHECK_EQ_INT(hashtab__count(h), N);
	for (uint64_t i = 0; i < N; i += 3) {
		uint64_t hash = i % 2 ? 7 : hashtab__hash_u64(keys[i]);
		CHECK(hashtab__remove(h, hash, &keys[i], &v));
		CHECK_EQ_INT(v, i);
	}
	for (uint64_t i = 0; i < N; i++) {
		uint64_t hash = i % 2 ? 7 : hashtab__hash_u64(keys[i]);
		bool found = hashtab__find(h, hash, &keys[i], &v);
		CHECK_EQ_INT(found, i % 3 != 0);
		if (found)
			CHECK_EQ_INT(v, i);
	}
	CHECK_EQ_INT(hashtab__count(h), N - (N + 2) / 3);
	CHECK(hashtab__hash_str("abc") != hashtab__hash_str("abd"));
	CHECK(hashtab__hash_bytes("", 0) != hashtab__hash_bytes("\0", 1));
	hashtab__free(h);
	free(keys);
	return true;
}

static bool dedup_and_errors(void)
{
	struct ids id;
	struct pprof *p = build_small(&id);
	CHECK(p);
	CHECK_EQ_INT(id.m1, 1);
	CHECK_EQ_INT(id.m2, 2);
	CHECK_EQ_INT(pprof__add_mapping(p, 0x400000, 0x500000, 0x1000,
					"/usr/bin/demo", NULL, false), id.m1);
	CHECK_EQ_INT(pprof__add_mapping(p, 0x400000, 0x500000, 0x2000,
					"/usr/bin/demo", NULL, false), 3);
	/* The last mapping again (tried before the index), and one that
	 * differs from it by its file alone. */
	CHECK_EQ_INT(pprof__add_mapping(p, 0x400000, 0x500000, 0x2000,
					"/usr/bin/demo", NULL, false), 3);
	CHECK_EQ_INT(pprof__add_mapping(p, 0x400000, 0x500000, 0x2000,
					"/usr/bin/other", NULL, false), 4);
	CHECK_EQ_INT(pprof__add_mapping(p, 0x400000, 0x500000, 0x2000,
					"/usr/bin/demo", NULL, false), 3);
	const struct pprof_line other[] = { { "zzz", NULL, NULL, 1, 0 } };
	CHECK_EQ_INT(pprof__add_location(p, id.m1, 0x401234, other, 1), id.leaf);
	CHECK_EQ_INT(pprof__add_location(p, id.m2, 0x401234, NULL, 0), 6);
	CHECK_EQ_INT(pprof__find_location(p, id.m1, 0x402000), id.mid);
	CHECK_EQ_INT(pprof__find_location(p, 0, 0xdead), id.nomap);
	CHECK_EQ_INT(pprof__find_location(p, id.m1, 0x999), 0);
	CHECK_STR(pprof__location_name(p, id.leaf), "memcpy_inl");
	CHECK_STR(pprof__location_name(p, id.root), "__libc_start_main");
	CHECK(!pprof__location_name(p, id.bare) && !pprof__location_name(p, 99));
	CHECK_EQ_INT(pprof__location_address(p, id.mid), 0x402000);
	CHECK_EQ_INT(pprof__location_address(p, 0), 0);
	const char *in = pprof__intern(p, "0x1234");
	CHECK_STR(in, "0x1234");
	CHECK(pprof__intern(p, "0x1234") == in);
	CHECK(pprof__intern(p, "demo") == pprof__intern(p, "demo"));
	errno = 0;
	CHECK_EQ_INT(pprof__add_location(p, 99, 0x1, NULL, 0), 0);
	CHECK_EQ_INT(errno, EINVAL);
	uint64_t bad[] = { id.leaf, 77 }, zero[] = { 0 };
	CHECK_EQ_INT(pprof__add_sample(p, bad, 2, 1, 1, NULL, 0), -EINVAL);
	CHECK_EQ_INT(pprof__add_sample(p, zero, 1, 1, 1, NULL, 0), -EINVAL);
	const struct pprof_label nokey[] = { { .key = NULL, .num = 1 } };
	CHECK_EQ_INT(pprof__add_sample(p, NULL, 0, 1, 1, nokey, 1), -EINVAL);
	CHECK_EQ_INT(pprof__add_sample(p, NULL, 0, 1, 1, NULL, 0), 0);
	pprof__free(p);
	return true;
}

/* A location made like another (the same code in another process):
 * its own mapping and address, the other's lines (both inlined frames,
 * file and line), its mapping's line flags; written and read back. */
static bool location_like(void)
{
	struct ids id;
	char *dir = make_tmpdir(), *path = dir ? join(dir, "like.pb.gz") : NULL;
	struct pprof *p = build_small(&id);
	uint64_t m3, like, locs[1];

	CHECK(path && p);
	CHECK((m3 = pprof__add_mapping(p, 0x7f1000, 0x7f2000, 0x1000, "/usr/bin/demo", NULL, true)));
	CHECK((like = pprof__add_location_like(p, m3, 0x7f1234, id.leaf)));
	CHECK(like != id.leaf);
	CHECK_EQ_INT(pprof__add_location_like(p, m3, 0x7f1234, id.mid), like); /* exists: as it was */
	CHECK_STR(pprof__location_name(p, like), "memcpy_inl");
	errno = 0;
	CHECK_EQ_INT(pprof__add_location_like(p, m3, 0x7f1300, 999), 0);
	CHECK_EQ_INT(errno, EINVAL);
	locs[0] = like;
	CHECK_EQ_INT(pprof__add_sample(p, locs, 1, 1, 1, NULL, 0), 0);
	CHECK_EQ_INT(pprof__write(p, path), 0);
	pprof__free(p);
	pb_profile *r = load(path);
	CHECK(r);
	if (!check_invariants(r))
		return false;
	const Perftools__Profiles__Location *l = r->location[like - 1];
	CHECK_EQ_INT(l->address, 0x7f1234);
	CHECK_EQ_INT(l->mapping_id, m3);
	CHECK_EQ_INT(l->n_line, 2);
	CHECK_STR(func_name(r, like, 0), "memcpy_inl");
	CHECK_STR(func_name(r, like, 1), "copy");
	CHECK_EQ_INT(l->line[0]->line, 12);
	CHECK(r->mapping[m3 - 1]->has_filenames && r->mapping[m3 - 1]->has_line_numbers &&
	      r->mapping[m3 - 1]->has_inline_frames);
	perftools__profiles__profile__free_unpacked(r, NULL);
	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
	return true;
}

static bool roundtrip_small(void)
{
	struct ids id;
	char *dir = make_tmpdir(), *path = dir ? join(dir, "p.pb.gz") : NULL;
	CHECK(path);
	struct pprof *p = build_small(&id);
	CHECK(p);
	/* Duplicate adds after the fact must not create anything. */
	CHECK_EQ_INT(pprof__add_mapping(p, 0x400000, 0x500000, 0x1000,
					"/usr/bin/demo", "abcdef0123", true), 1);
	CHECK_EQ_INT(pprof__add_location(p, id.m2, 0x7f0000001000, NULL, 0), id.root);
	CHECK_EQ_INT(pprof__write(p, path), 0);
	pprof__free(p);

	struct stat st;
	CHECK_EQ_INT(stat(path, &st), 0);
	CHECK_EQ_INT(st.st_mode & 0777, 0644);
	CHECK_EQ_INT(count_entries(dir), 1);
	pb_profile *r = load(path);
	CHECK(r);
	if (!check_invariants(r))
		return false;
	CHECK_STR(str(r, r->sample_type[0]->type), "samples");
	CHECK_STR(str(r, r->sample_type[0]->unit), "count");
	CHECK_STR(str(r, r->sample_type[1]->type), "cycles");
	CHECK_STR(str(r, r->sample_type[1]->unit), "count");
	CHECK_STR(str(r, r->period_type->type), "cycles");
	CHECK_EQ_INT(r->period, 100003);
	CHECK_EQ_INT(r->time_nanos, 1700000000123456789LL);
	CHECK_EQ_INT(r->duration_nanos, 2500000000LL);
	CHECK_EQ_INT(r->n_comment, 2);
	CHECK_STR(str(r, r->comment[0]), "pmubpf record -e cycles");
	CHECK_STR(str(r, r->comment[1]), "lost=0");

	CHECK_EQ_INT(r->n_mapping, 2);
	const Perftools__Profiles__Mapping *m = r->mapping[0];
	CHECK_EQ_INT(m->memory_start, 0x400000);
	CHECK_EQ_INT(m->memory_limit, 0x500000);
	CHECK_EQ_INT(m->file_offset, 0x1000);
	CHECK_STR(str(r, m->filename), "/usr/bin/demo");
	CHECK_STR(str(r, m->build_id), "abcdef0123");
	CHECK(m->has_functions && m->has_filenames && m->has_line_numbers &&
	      m->has_inline_frames);
	m = r->mapping[1];
	CHECK_STR(str(r, m->build_id), "");
	CHECK(m->has_functions && !m->has_filenames && !m->has_line_numbers &&
	      !m->has_inline_frames);

	/* 4 functions: memcpy_inl, copy, main, __libc_start_main. */
	CHECK_EQ_INT(r->n_location, 5);
	CHECK_EQ_INT(r->n_function, 4);
	const Perftools__Profiles__Location *l = r->location[id.leaf - 1];
	CHECK_EQ_INT(l->address, 0x401234);
	CHECK_EQ_INT(l->mapping_id, id.m1);
	CHECK_EQ_INT(l->n_line, 2);
	CHECK_STR(func_name(r, id.leaf, 0), "memcpy_inl");
	CHECK_STR(func_name(r, id.leaf, 1), "copy");
	CHECK_EQ_INT(l->line[0]->line, 12);
	const Perftools__Profiles__Function *f =
		r->function[l->line[1]->function_id - 1];
	CHECK_STR(str(r, f->system_name), "_Z4copyv");
	CHECK_STR(str(r, f->filename), "demo.c");
	CHECK_EQ_INT(f->start_line, 35);
	f = r->function[l->line[0]->function_id - 1];
	CHECK_STR(str(r, f->system_name), "memcpy_inl");
	CHECK_EQ_INT(r->location[id.bare - 1]->n_line, 0);
	CHECK_EQ_INT(r->location[id.nomap - 1]->mapping_id, 0);

	CHECK_EQ_INT(r->n_sample, 3); /* appended, not merged */
	const Perftools__Profiles__Sample *s = r->sample[0];
	CHECK_EQ_INT(s->n_location_id, 3);
	CHECK_EQ_INT(s->location_id[0], id.leaf);
	CHECK_EQ_INT(s->location_id[2], id.root);
	CHECK_EQ_INT(s->value[0], 1);
	CHECK_EQ_INT(s->value[1], 100003);
	CHECK_EQ_INT(s->n_label, 3);
	CHECK_STR(str(r, s->label[0]->key), "comm");
	CHECK_STR(str(r, s->label[0]->str), "demo");
	CHECK_STR(str(r, s->label[1]->key), "tid");
	CHECK_EQ_INT(s->label[1]->str, 0);
	CHECK_EQ_INT(s->label[1]->num, 4242);
	CHECK_EQ_INT(s->label[1]->num_unit, 0);
	CHECK_STR(str(r, s->label[2]->num_unit), "bytes");
	CHECK_EQ_INT(s->label[2]->num, 4096);
	s = r->sample[1];
	CHECK_EQ_INT(s->value[0], 2);
	CHECK_EQ_INT(s->location_id[0], id.bare);
	CHECK_STR(str(r, s->label[0]->str), "other");

	/* Each string once. */
	for (size_t i = 0; i < r->n_string_table; i++)
		for (size_t j = i + 1; j < r->n_string_table; j++)
			CHECK(strcmp(r->string_table[i], r->string_table[j]));
	perftools__profiles__profile__free_unpacked(r, NULL);
	rm_rf(dir);
	free(path);
	free(dir);
	return true;
}

static bool write_missing_dir(void)
{
	struct ids id;
	char *dir = make_tmpdir(), *path = dir ? join(dir, "nope/p.pb.gz") : NULL;
	CHECK(path);
	struct pprof *p = build_small(&id);
	CHECK(p);
	CHECK_EQ_INT(pprof__write(p, path), -ENOENT);
	CHECK_EQ_INT(count_entries(dir), 0);
	CHECK_EQ_INT(pprof__write(p, ""), -EINVAL);
	pprof__free(p);
	rm_rf(dir);
	free(path);
	free(dir);
	return true;
}

/* Failures after the temp file exists: the rename (target is a directory)
 * and the write itself (RLIMIT_FSIZE). Neither may leave a .tmp behind. */
static bool write_fails_cleanly(void)
{
	char *dir = make_tmpdir(), *path = dir ? join(dir, "p.pb.gz") : NULL;
	CHECK(path);
	CHECK_EQ_INT(mkdir(path, 0755), 0);
	struct pprof *p = pprof__new("cpu", "nanoseconds", 1000);
	CHECK(p);
	/* Enough incompressible variety that the output exceeds 4 KiB. */
	uint64_t m = pprof__add_mapping(p, 0x1000, 0x100000000, 0, "/bin/x", NULL, false);
	for (uint64_t i = 0; i < 4000; i++) {
		uint64_t a = hashtab__hash_u64(i) & 0xfffffff, loc;
		loc = pprof__add_location(p, m, 0x1000 + a, NULL, 0);
		CHECK(loc);
		CHECK_EQ_INT(pprof__add_sample(p, &loc, 1, 1, (int64_t)a, NULL, 0), 0);
	}
	int err = pprof__write(p, path);
	CHECK(err == -EISDIR || err == -ENOTEMPTY || err == -EEXIST);
	CHECK_EQ_INT(count_entries(dir), 1);
	CHECK_EQ_INT(rmdir(path), 0);

	struct rlimit old, small = { 4096, 4096 };
	CHECK_EQ_INT(getrlimit(RLIMIT_FSIZE, &old), 0);
	small.rlim_max = old.rlim_max;
	void (*oldsig)(int) = signal(SIGXFSZ, SIG_IGN);
	CHECK_EQ_INT(setrlimit(RLIMIT_FSIZE, &small), 0);
	err = pprof__write(p, path);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, oldsig);
	CHECK_EQ_INT(err, -EFBIG);
	CHECK_EQ_INT(count_entries(dir), 0);

	/* And it still works afterwards, replacing an existing file. */
	CHECK_EQ_INT(pprof__write(p, path), 0);
	CHECK_EQ_INT(pprof__write(p, path), 0);
	CHECK_EQ_INT(count_entries(dir), 1);
	pprof__free(p);
	rm_rf(dir);
	free(path);
	free(dir);
	return true;
}

static bool large_roundtrip(void)
{
	enum { NLOC = 20000, NSAMPLE = 200000, DEPTH = 8 };
	char *dir = make_tmpdir(), *path = dir ? join(dir, "big.pb.gz") : NULL;
	CHECK(path);
	struct pprof *p = pprof__new("cpu", "nanoseconds", 10000000);
	CHECK(p);
	uint64_t m = pprof__add_mapping(p, 0x400000, 0x40000000, 0, "/bin/big",
					"00ff", true);
	char name[32];
	for (uint64_t i = 0; i < NLOC; i++) {
		snprintf(name, sizeof(name), "fn_%llu", (unsigned long long)(i / 4));
		const struct pprof_line ln = { name, NULL, "big.c", (int64_t)i, 0 };
		CHECK_EQ_INT(pprof__add_location(p, m, 0x400000 + i * 16, &ln, 1), i + 1);
	}
	int64_t total = 0;
	for (uint64_t i = 0; i < NSAMPLE; i++) {
		uint64_t stack[DEPTH];
		for (int d = 0; d < DEPTH; d++) /* re-add: dedup must hold */
			stack[d] = pprof__add_location(p, m, 0x400000 +
				(hashtab__hash_mix(i, d) % NLOC) * 16, NULL, 0);
		const struct pprof_label lb = { .key = "tid", .num = (int64_t)(i % 64) };
		CHECK_EQ_INT(pprof__add_sample(p, stack, DEPTH, 1, (int64_t)i, &lb, 1), 0);
		total += (int64_t)i;
	}
	CHECK_EQ_INT(pprof__write(p, path), 0);
	pprof__free(p);
	pb_profile *r = load(path);
	CHECK(r);
	if (!check_invariants(r))
		return false;
	CHECK_EQ_INT(r->n_location, NLOC);
	CHECK_EQ_INT(r->n_function, NLOC / 4);
	CHECK_EQ_INT(r->n_sample, NSAMPLE);
	int64_t got = 0;
	for (size_t i = 0; i < r->n_sample; i++) {
		CHECK_EQ_INT(r->sample[i]->n_location_id, DEPTH);
		got += r->sample[i]->value[1];
	}
	CHECK_EQ_INT(got, total);
	CHECK_EQ_INT(r->sample[NSAMPLE - 1]->label[0]->num, (NSAMPLE - 1) % 64);
	perftools__profiles__profile__free_unpacked(r, NULL);
	rm_rf(dir);
	free(path);
	free(dir);
	return true;
}

/* Fail each allocation in turn: every call must report ENOMEM (or succeed),
 * free everything it took, and never leave a file behind. */
static bool enomem_paths(void)
{
	/* Under valgrind (without --soname-synonyms=somalloc=nouserintercepts)
	 * or a sanitizer our malloc is bypassed: detect that and skip. */
	void *(*volatile vmalloc)(size_t) = malloc;
	fi_countdown = 0;
	fi_fired = false;
	fi_armed = true;
	void *probe = vmalloc(16);
	fi_armed = false;
	free(probe);
	if (!fi_fired)
		SKIP("malloc is not interposable here (valgrind/sanitizer)");

	char *dir = make_tmpdir(), *path = dir ? join(dir, "p.pb.gz") : NULL;
	CHECK(path);
	long k;
	for (k = 0;; k++) {
		struct ids id;
		int err;
		fi_countdown = k;
		fi_fired = false;
		fi_live = 0;
		fi_armed = true;
		struct pprof *p = build_small(&id);
		if (!p) {
			err = -errno;
		} else {
			err = pprof__write(p, path);
			pprof__free(p);
		}
		fi_armed = false;
		CHECK_EQ_INT(fi_live, 0);
		if (!fi_fired) {
			CHECK_EQ_INT(err, 0);
			break;
		}
		CHECK(err == 0 || err == -ENOMEM);
		CHECK_EQ_INT(count_entries(dir), err ? 0 : 1);
		unlink(path);
	}
	CHECK(k > 30);
	pb_profile *r = load(path);
	CHECK(r && r->n_sample == 3);
	perftools__profiles__profile__free_unpacked(r, NULL);
	rm_rf(dir);
	free(path);
	free(dir);
	return true;
}

static bool go_pprof_accepts(void)
{
	/* tools/deps.sh installs golang-go: missing is a failure, not a skip. */
	if (system("command -v go >/dev/null 2>&1")) {
		fprintf(stdout, "  go not installed (tools/deps.sh installs golang-go)\n");
		return false;
	}
	struct ids id;
	char *dir = make_tmpdir(), *path = dir ? join(dir, "p.pb.gz") : NULL;
	CHECK(path);
	setenv("HOME", dir, 0);
	char *cache = join(dir, "gocache");
	CHECK(cache);
	setenv("GOCACHE", cache, 0);
	free(cache);
	struct pprof *p = build_small(&id);
	CHECK(p);
	CHECK_EQ_INT(pprof__write(p, path), 0);
	pprof__free(p);
	char *cmd;
	CHECK(asprintf(&cmd, "go tool pprof -raw '%s' >'%s/out' 2>'%s/err'",
		       path, dir, dir) > 0);
	int rc = system(cmd);
	free(cmd);
	CHECK_EQ_INT(rc, 0);
	char buf[8192] = "";
	char *errf = join(dir, "err");
	FILE *f = errf ? fopen(errf, "r") : NULL;
	free(errf);
	CHECK(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	if (strcasestr(buf, "warning") || strcasestr(buf, "error")) {
		printf("  go tool pprof stderr: %s\n", buf);
		return false;
	}
	rm_rf(dir);
	free(path);
	free(dir);
	return true;
}

TEST_MAIN("pprof",
	  TEST(hashtab_basic),
	  TEST(dedup_and_errors),
	  TEST(location_like),
	  TEST(roundtrip_small),
	  TEST(write_missing_dir),
	  TEST(write_fails_cleanly),
	  TEST(large_roundtrip),
	  TEST(enomem_paths),
	  TEST(go_pprof_accepts))
