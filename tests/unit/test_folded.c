/* test_folded.c — the folded-stack writer (user/pprof/pprof_folded.c):
 * from a profile built like report.c builds one, the exact text
 * FlameGraph and inferno read: root label first, frames root to leaf with
 * inlined functions expanded, unnamed frames by file offset or address,
 * separators in names replaced, equal stacks merged, lines sorted; and
 * the same no-partial-file guarantee as pprof__write.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pprof/pprof.h"
#include "testing.h"

static char dir[] = "/tmp/test_folded.XXXXXX";

/* The whole file at path into a new string (NULL if unreadable). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return NULL;
	n = getdelim(&buf, &cap, '\0', f);
	fclose(f);
	if (n < 0) {
		free(buf);
		return strdup("");
	}
	return buf;
}

/* Five samples over five locations; two share a stack and a comm. */
static struct pprof *build(void)
{
	struct pprof *p = pprof__new("cpu", "nanoseconds", 1000);
	const struct pprof_line inl[] = { { .function = "leaf_inl" }, { .function = "leaf" } };
	const struct pprof_line mainl = { .function = "main" };
	const struct pprof_line odd = { .function = "a;b\nc" };
	uint64_t m, a, b, c, d, e;

	if (!p)
		return NULL;
	m = pprof__add_mapping(p, 0x1000, 0x2000, 0x4000, "/usr/lib/libx.so", NULL, true);
	a = pprof__add_location(p, m, 0x1100, inl, 2);
	b = pprof__add_location(p, m, 0x1200, &mainl, 1);
	c = pprof__add_location(p, m, 0x1300, NULL, 0);
	d = pprof__add_location(p, 0, 0xdead, NULL, 0);
	e = pprof__add_location(p, m, 0x1400, &odd, 1);
	if (!m || !a || !b || !c || !d || !e)
		goto fail;
	struct pprof_label l1[] = { { .key = "pid", .num = 1 }, { .key = "comm", .str = "app" } };
	struct pprof_label l2[] = { { .key = "pid", .num = 2 }, { .key = "comm", .str = "app" } };
	struct pprof_label l3[] = { { .key = "comm", .str = "x;y" } };
	uint64_t s1[] = { a, b }, s3[] = { c, b };
	if (pprof__add_sample(p, s1, 2, 1, 10, l1, 2) ||
	    pprof__add_sample(p, s1, 2, 1, 5, l2, 2) ||
	    pprof__add_sample(p, s3, 2, 1, 7, l3, 1) ||
	    pprof__add_sample(p, &d, 1, 1, 3, NULL, 0) ||
	    pprof__add_sample(p, &e, 1, 1, 1, l1, 2))
		goto fail;
	return p;
fail:
	pprof__free(p);
	return NULL;
}

static bool write_and_read(const char *root, const char *want)
{
	struct pprof *p = build();
	char path[64], *got;

	CHECK(p);
	snprintf(path, sizeof(path), "%s/out.folded", dir);
	CHECK_EQ_INT(pprof__write_folded(p, path, root), 0);
	pprof__free(p);
	got = slurp(path);
	unlink(path);
	if (!got || strcmp(got, want)) {
		printf("  got:\n%s  want:\n%s", got ? got : "(unreadable)\n", want);
		free(got);
		return false;
	}
	free(got);
	return true;
}

static bool rooted_by_comm(void)
{
	return write_and_read("comm",
		"0xdead 3\n"
		"app;a_b_c 1\n"
		"app;main;leaf;leaf_inl 15\n"
		"x_y;main;libx.so+0x4300 7\n");
}

static bool rooted_by_number(void)
{
	return write_and_read("pid",
		"0xdead 3\n"
		"1;a_b_c 1\n"
		"1;main;leaf;leaf_inl 10\n"
		"2;main;leaf;leaf_inl 5\n"
		"main;libx.so+0x4300 7\n");
}

static bool unrooted(void)
{
	if (!write_and_read(NULL, "0xdead 3\na_b_c 1\nmain;leaf;leaf_inl 15\nmain;libx.so+0x4300 7\n"))
		return false;
	/* A key no sample has: no roots either. */
	return write_and_read("tenant", "0xdead 3\na_b_c 1\nmain;leaf;leaf_inl 15\nmain;libx.so+0x4300 7\n");
}

static bool empty_profile(void)
{
	struct pprof *p = pprof__new("cpu", "nanoseconds", 1000);
	char path[64], *got;

	CHECK(p);
	snprintf(path, sizeof(path), "%s/empty.folded", dir);
	CHECK_EQ_INT(pprof__write_folded(p, path, "comm"), 0);
	pprof__free(p);
	got = slurp(path);
	unlink(path);
	CHECK(got && !*got);
	free(got);
	return true;
}

/* Failures return -errno and leave nothing behind, as pprof__write. */
static bool failure_leaves_nothing(void)
{
	struct pprof *p = build();
	char path[96];
	struct stat st;

	CHECK(p);
	snprintf(path, sizeof(path), "%s/missing/out.folded", dir);
	CHECK_EQ_INT(pprof__write_folded(p, path, "comm"), -ENOENT);
	CHECK_EQ_INT(pprof__write_folded(p, "", "comm"), -EINVAL);
	/* The target a directory: rename fails, the temp file is removed. */
	snprintf(path, sizeof(path), "%s/adir", dir);
	CHECK(mkdir(path, 0700) == 0);
	CHECK(pprof__write_folded(p, path, "comm") < 0);
	pprof__free(p);
	CHECK(rmdir(path) == 0); /* still empty, and nothing beside it: */
	CHECK(rmdir(dir) == 0);
	CHECK(mkdir(dir, 0700) == 0);
	CHECK(stat(path, &st) != 0);
	return true;
}

static bool setup(void)
{
	CHECK(mkdtemp(dir));
	return true;
}

static bool teardown(void)
{
	CHECK(rmdir(dir) == 0);
	return true;
}

TEST_MAIN("folded", TEST(setup), TEST(rooted_by_comm), TEST(rooted_by_number), TEST(unrooted),
	  TEST(empty_profile), TEST(failure_leaves_nothing), TEST(teardown))
