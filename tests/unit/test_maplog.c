/* test_maplog.c — the log of the kernel's mmap, exec and fork reports
 * (user/procs/maplog.c): the image a process had at a time, across execs
 * and from its parent at a fork; later mappings over earlier ones; the
 * bounds (retention, MAPLOG_MAX) and that the paths are given back (run
 * under ASan too).
 */
#include <stdint.h>
#include <stdlib.h>
#include "procs/maplog.h"
#include "testing.h"

#define MS 1000000LL

static void map(struct maplog *l, uint32_t tgid, int64_t t, uint64_t start, uint64_t end,
		uint64_t ino, const char *path)
{
	struct procmap m = { .start = start, .end = end, .inode = ino, .exec = true, .path = (char *)path };

	maplog__map(l, tgid, t, &m);
}

/* env execs true in the same pid: each sample gets its own image. */
static bool two_images(void)
{
	struct maplog *l = maplog__new();
	struct procmaps out = { 0 };
	struct maplog_origin o;

	CHECK(l);
	maplog__exec(l, 100, 10 * MS);
	map(l, 100, 11 * MS, 0x5000, 0x6000, 7, "/usr/bin/env");
	map(l, 100, 12 * MS, 0x7f000, 0x7f800, 8, "/lib/ld.so");
	maplog__exec(l, 100, 20 * MS);
	map(l, 100, 21 * MS, 0x9000, 0xa000, 9, "/usr/bin/true");
	map(l, 100, 22 * MS, 0x7e000, 0x7e800, 8, "/lib/ld.so");
	map(l, 100, 23 * MS, 0x1000, 0x2000, 5, "/lib/libc.so");

	CHECK_EQ_INT(maplog__image(l, 100, 15 * MS, &out, &o), 2);
	CHECK_EQ_INT(o.kind, MAPLOG_EXEC);
	CHECK_EQ_INT(o.exe_inode, 7);
	CHECK_STR(out.maps[0].path, "/usr/bin/env");
	CHECK(out.maps[1].start == 0x7f000);
	/* true's image: its libc mapped after the sample is in it too. */
	CHECK_EQ_INT(maplog__image(l, 100, 21 * MS + 500, &out, &o), 3);
	CHECK_EQ_INT(o.exe_inode, 9);
	CHECK(out.maps[0].start == 0x1000 && out.maps[1].start == 0x9000 && out.maps[2].start == 0x7e000);
	CHECK(maplog__exec_between(l, 100, 15 * MS, INT64_MAX));
	CHECK(!maplog__exec_between(l, 100, 21 * MS, INT64_MAX));
	CHECK(!maplog__exec_between(l, 100, 11 * MS, 19 * MS));
	/* Another process's history is its own. */
	CHECK_EQ_INT(maplog__image(l, 101, 15 * MS, &out, &o), 0);
	CHECK_EQ_INT(o.kind, MAPLOG_UNKNOWN);
	procmaps__free(&out);
	maplog__free(l);
	return true;
}

/* A child that has not exec'd (yet) is in its parent's image: the log
 * says where to look, and what the child mapped itself. */
static bool fork_origin(void)
{
	struct maplog *l = maplog__new();
	struct procmaps out = { 0 }, under = { 0 };
	struct maplog_origin o;

	CHECK(l);
	maplog__exec(l, 200, 1 * MS);
	map(l, 200, 2 * MS, 0x4000, 0x5000, 3, "/usr/bin/parent");
	maplog__fork(l, 201, 200, 5 * MS);
	map(l, 201, 6 * MS, 0x8000, 0x9000, 4, "/plugin.so");
	maplog__exec(l, 201, 9 * MS);

	CHECK_EQ_INT(maplog__image(l, 201, 7 * MS, &out, &o), 1);
	CHECK_EQ_INT(o.kind, MAPLOG_FORK);
	CHECK_EQ_INT(o.ptgid, 200);
	CHECK(o.t == 5 * MS);
	CHECK_EQ_INT(maplog__image(l, o.ptgid, o.t, &under, &o), 1);
	CHECK_EQ_INT(o.kind, MAPLOG_EXEC);
	CHECK(maplog__layer(&out, &under) == 0);
	CHECK_EQ_INT(out.n, 2);
	CHECK_STR(out.maps[0].path, "/usr/bin/parent");
	CHECK_STR(out.maps[1].path, "/plugin.so");
	procmaps__free(&out);
	procmaps__free(&under);
	maplog__free(l);
	return true;
}

/* A later mapping replaces the earlier ones it overlaps (MAP_FIXED over
 * them; munmap is never reported); layering keeps the upper one. */
static bool later_replaces(void)
{
	struct maplog *l = maplog__new();
	struct procmaps out = { 0 }, under = { 0 };
	struct maplog_origin o;

	CHECK(l);
	maplog__exec(l, 300, 1 * MS);
	map(l, 300, 2 * MS, 0x1000, 0x3000, 1, "/old.so");
	map(l, 300, 3 * MS, 0x2000, 0x4000, 2, "/new.so");
	map(l, 300, 4 * MS, 0x8000, 0x9000, 3, "/other.so");
	CHECK_EQ_INT(maplog__image(l, 300, 5 * MS, &out, &o), 2);
	CHECK_STR(out.maps[0].path, "/new.so");
	CHECK_STR(out.maps[1].path, "/other.so");
	/* Layered over a snapshot that had /old.so there and /x.so apart. */
	under.maps = calloc(2, sizeof(*under.maps));
	CHECK(under.maps);
	under.n = 2;
	under.maps[0] = (struct procmap){ .start = 0x1000, .end = 0x3000, .path = strdup("/old.so") };
	under.maps[1] = (struct procmap){ .start = 0x20000, .end = 0x21000, .path = strdup("/x.so") };
	CHECK(maplog__layer(&out, &under) == 0);
	CHECK_EQ_INT(out.n, 3);
	CHECK_STR(out.maps[0].path, "/new.so");
	CHECK_STR(out.maps[2].path, "/x.so");
	procmaps__free(&out);
	procmaps__free(&under);
	maplog__free(l);
	return true;
}

/* Reports reach us through several CPUs' buffers, out of time order. */
static bool out_of_order(void)
{
	struct maplog *l = maplog__new();
	struct procmaps out = { 0 };
	struct maplog_origin o;

	CHECK(l);
	map(l, 400, 12 * MS, 0x5000, 0x6000, 7, "/bin/b"); /* CPU 1's buffer, read first */
	maplog__exec(l, 400, 11 * MS);                      /* CPU 0's */
	map(l, 400, 9 * MS, 0x1000, 0x2000, 6, "/bin/a");   /* before the exec: a's image */
	CHECK_EQ_INT(maplog__image(l, 400, 13 * MS, &out, &o), 1);
	CHECK_EQ_INT(o.kind, MAPLOG_EXEC);
	CHECK_STR(out.maps[0].path, "/bin/b");
	CHECK_EQ_INT(maplog__image(l, 400, 10 * MS, &out, &o), 1);
	CHECK_STR(out.maps[0].path, "/bin/a");
	procmaps__free(&out);
	maplog__free(l);
	return true;
}

/* Bounded: what is older than the retention goes, and past MAPLOG_MAX
 * entries the oldest go first (counted); a process whose entries all
 * went has no history. Paths are shared and given back (ASan: no leak). */
static bool bounded(void)
{
	struct maplog *l = maplog__new();
	struct procmaps out = { 0 };
	struct maplog_origin o;

	CHECK(l);
	maplog__exec(l, 1, 1 * MS);
	map(l, 1, 2 * MS, 0x1000, 0x2000, 1, "/bin/old");
	maplog__exec(l, 2, MAPLOG_RETAIN_NS + 3 * MS);
	map(l, 2, MAPLOG_RETAIN_NS + 4 * MS, 0x1000, 0x2000, 2, "/bin/young");
	maplog__prune(l, MAPLOG_RETAIN_NS + 2 * MS + 1);
	CHECK_EQ_INT(maplog__stats(l)->held, 2);
	CHECK_EQ_INT(maplog__image(l, 1, 3 * MS, &out, &o), 0);
	CHECK_EQ_INT(maplog__image(l, 2, MAPLOG_RETAIN_NS + 5 * MS, &out, &o), 1);
	CHECK_EQ_INT(maplog__stats(l)->dropped, 0);
	for (uint32_t i = 0; i < MAPLOG_MAX + 10; i++)
		map(l, 1000 + i % 5000, MAPLOG_RETAIN_NS + 5 * MS + i, 0x1000, 0x2000, i % 7,
		    i % 2 ? "/lib/a" : "/lib/b");
	CHECK_EQ_INT(maplog__stats(l)->held, MAPLOG_MAX);
	CHECK_EQ_INT(maplog__stats(l)->dropped, 12);
	CHECK_EQ_INT(maplog__image(l, 2, MAPLOG_RETAIN_NS + 5 * MS, &out, &o), 0);
	CHECK_EQ_INT(o.kind, MAPLOG_UNKNOWN);
	/* One process's chain runs through the whole ring. */
	CHECK(maplog__image(l, 1000, INT64_MAX, &out, &o) == 1);
	procmaps__free(&out);
	maplog__prune(l, INT64_MAX);
	CHECK_EQ_INT(maplog__stats(l)->held, 0);
	maplog__free(l);
	return true;
}

TEST_MAIN("maplog", TEST(two_images), TEST(fork_origin), TEST(later_replaces), TEST(out_of_order),
	  TEST(bounded))
