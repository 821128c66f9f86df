/* test_procmaps.c — unit tests of user/procmaps.c.
 *
 * A table of /proc/PID/maps lines (normal, anonymous, [vdso], paths with
 * spaces, deleted files, malformed lines) checked field by field; then the
 * live file of this very process, and a pid that does not exist; opening
 * a mapping's file, and refusing another file at its path.
 */
#include "procs/procmaps.h"
#include "testing.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct line_case {
	const char *line;
	bool ok;
	uint64_t start, end, pgoff, inode;
	uint32_t maj, min;
	bool exec, deleted;
	const char *path;
};

static const struct line_case cases[] = {
	{ "55d0c7a00000-55d0c7a21000 r-xp 00002000 08:01 1835043                    /usr/bin/cat",
	  true, 0x55d0c7a00000, 0x55d0c7a21000, 0x2000, 1835043, 8, 1, true, false, "/usr/bin/cat" },
	{ "7f2a1c000000-7f2a1c021000 rw-p 00000000 00:00 0 ",
	  true, 0x7f2a1c000000, 0x7f2a1c021000, 0, 0, 0, 0, false, false, "" },
	{ "7f2a1c000000-7f2a1c021000 rw-p 00000000 00:00 0",
	  true, 0x7f2a1c000000, 0x7f2a1c021000, 0, 0, 0, 0, false, false, "" },
	{ "7ffd5a5f0000-7ffd5a5f2000 r-xp 00000000 00:00 0                          [vdso]",
	  true, 0x7ffd5a5f0000, 0x7ffd5a5f2000, 0, 0, 0, 0, true, false, "[vdso]" },
	{ "7f0000001000-7f0000002000 r-xs 0001f000 fd:1a 99 /opt/My App/lib x.so",
	  true, 0x7f0000001000, 0x7f0000002000, 0x1f000, 99, 0xfd, 0x1a, true, false, "/opt/My App/lib x.so" },
	{ "7f2a1d000000-7f2a1d100000 r-xp 00000000 08:01 42         /tmp/x (deleted)",
	  true, 0x7f2a1d000000, 0x7f2a1d100000, 0, 42, 8, 1, true, true, "/tmp/x" },
	{ "7f2a1d000000-7f2a1d100000 r-xp 00000000 08:01 42         /tmp/a b (deleted)",
	  true, 0x7f2a1d000000, 0x7f2a1d100000, 0, 42, 8, 1, true, true, "/tmp/a b" },
	{ "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]",
	  true, 0xffffffffff600000, 0xffffffffff601000, 0, 0, 0, 0, true, false, "[vsyscall]" },
	/* malformed */
	{ "garbage", false, 0, 0, 0, 0, 0, 0, false, false, NULL },
	{ "1000-2000 r-xp 0 08:01", false, 0, 0, 0, 0, 0, 0, false, false, NULL },
	{ "2000-1000 r-xp 00000000 08:01 1 /x", false, 0, 0, 0, 0, 0, 0, false, false, NULL },
	{ "1000-2000 r-x 00000000 08:01 1 /x", false, 0, 0, 0, 0, 0, 0, false, false, NULL },
	{ "1000-2000 rzxp 00000000 08:01 1 /x", false, 0, 0, 0, 0, 0, 0, false, false, NULL },
	{ "1000-2000 r-xp 00000000 0801 1 /x", false, 0, 0, 0, 0, 0, 0, false, false, NULL },
	{ "1000-2000 r-xp 00000000 08:01 12x /x", false, 0, 0, 0, 0, 0, 0, false, false, NULL },
	{ "11112222333344445-2000 r-xp 00000000 08:01 1 /x", false, 0, 0, 0, 0, 0, 0, false, false, NULL },
	{ "1000 2000 r-xp 00000000 08:01 1 /x", false, 0, 0, 0, 0, 0, 0, false, false, NULL },
};

static bool line_table(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct line_case *c = &cases[i];
		struct procmaps m;
		int err = procmaps__parse(c->line, false, &m);

		if (!c->ok) {
			if (err != -EINVAL || m.n != 0)
				printf("  case %zu: \"%s\"\n", i, c->line);
			CHECK_EQ_INT(err, -EINVAL);
			CHECK_EQ_INT(m.n, 0);
			continue;
		}
		if (err || m.n != 1)
			printf("  case %zu: \"%s\"\n", i, c->line);
		CHECK_EQ_INT(err, 0);
		CHECK_EQ_INT(m.n, 1);
		const struct procmap *p = &m.maps[0];
		CHECK(p->start == c->start && p->end == c->end);
		CHECK(p->pgoff == c->pgoff);
		CHECK(p->inode == c->inode);
		CHECK_EQ_INT(p->dev_major, c->maj);
		CHECK_EQ_INT(p->dev_minor, c->min);
		CHECK_EQ_INT(p->exec, c->exec);
		CHECK_EQ_INT(p->deleted, c->deleted);
		CHECK_STR(p->path, c->path);
		procmaps__free(&m);
	}
	return true;
}

static const char multi[] =
	"7f0000003000-7f0000004000 r--p 00000000 08:01 7 /lib/libc.so.6\n"
	"this line is malformed\n"
	"\n"
	"7f0000001000-7f0000002000 r-xp 00001000 08:01 7 /lib/libc.so.6\n"
	"7f0000005000-7f0000006000 r-xp 00000000 00:00 0 [vdso]\n"
	"55d0c7a00000-55d0c7a21000 r-xp 00002000 08:01 9 /usr/bin/my prog (deleted)\n"
	"7f0000006000-7f0000008000 rw-p 00000000 00:00 0"; /* no final newline */

static bool multi_line_sorted_and_find(void)
{
	struct procmaps m;

	CHECK_EQ_INT(procmaps__parse(multi, false, &m), 0);
	CHECK_EQ_INT(m.n, 5);
	for (size_t i = 1; i < m.n; i++)
		CHECK(m.maps[i - 1].start < m.maps[i].start);
	CHECK_STR(m.maps[0].path, "/usr/bin/my prog");
	CHECK(m.maps[0].deleted);
	CHECK(procmaps__find(&m, 0x7f0000003000) == &m.maps[2]);
	CHECK(procmaps__find(&m, 0x7f0000003fff) == &m.maps[2]);
	CHECK(procmaps__find(&m, 0x7f0000004000) == NULL); /* gap */
	CHECK(procmaps__find(&m, 0x7f0000000fff) == NULL);
	CHECK(procmaps__find(&m, 0x7f0000007fff) == &m.maps[4]);
	CHECK(procmaps__find(&m, 0x7f0000008000) == NULL);
	CHECK(procmaps__find(&m, 0) == NULL);
	CHECK(procmaps__find(&m, UINT64_MAX) == NULL);
	procmaps__free(&m);
	CHECK(m.maps == NULL && m.n == 0);
	procmaps__free(&m); /* idempotent */
	return true;
}

static bool exec_only_filters(void)
{
	struct procmaps m;

	CHECK_EQ_INT(procmaps__parse(multi, true, &m), 0);
	CHECK_EQ_INT(m.n, 3);
	for (size_t i = 0; i < m.n; i++)
		CHECK(m.maps[i].exec);
	CHECK_STR(m.maps[1].path, "/lib/libc.so.6");
	CHECK(m.maps[1].pgoff == 0x1000);
	CHECK_STR(m.maps[2].path, "[vdso]");
	CHECK(procmaps__find(&m, 0x7f0000003000) == NULL); /* r--p filtered */
	procmaps__free(&m);

	/* Only non-exec lines: parsed fine, nothing kept, no error. */
	CHECK_EQ_INT(procmaps__parse("1000-2000 rw-p 00000000 00:00 0\n", true, &m), 0);
	CHECK_EQ_INT(m.n, 0);
	procmaps__free(&m);
	return true;
}

static bool empty_and_all_bad(void)
{
	struct procmaps m;

	CHECK_EQ_INT(procmaps__parse("", false, &m), 0);
	CHECK_EQ_INT(m.n, 0);
	CHECK(procmaps__find(&m, 0x1000) == NULL);
	procmaps__free(&m);
	CHECK_EQ_INT(procmaps__parse("bad\nworse\n", false, &m), -EINVAL);
	CHECK_EQ_INT(m.n, 0);
	procmaps__free(&m);
	return true;
}

static __attribute__((noinline)) int marker_function(int x)
{
	return x * 3 + 1;
}

static bool read_self(void)
{
	struct procmaps m;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	uint64_t addr = (uint64_t)(uintptr_t)&marker_function;

	CHECK(n > 0);
	exe[n] = '\0';
	CHECK(marker_function(1) == 4);
	CHECK_EQ_INT(procmaps__read(getpid(), true, &m), 0);
	CHECK(m.n > 0);
	const struct procmap *p = procmaps__find(&m, addr);
	CHECK(p != NULL);
	CHECK(p->exec);
	CHECK_STR(p->path, exe);
	CHECK(!p->deleted);
	CHECK(p->inode != 0);
	procmaps__free(&m);

	/* Without the filter the stack is there too ("[stack]" normally,
	 * an anonymous mapping under valgrind). */
	CHECK_EQ_INT(procmaps__read(getpid(), false, &m), 0);
	int local = 0;
	p = procmaps__find(&m, (uint64_t)(uintptr_t)&local);
	bool stack_ok = p && !p->exec;
	procmaps__free(&m);
	CHECK(stack_ok);
	return true;
}

static bool read_gone(void)
{
	struct procmaps m;
	char buf[64];
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	long pid_max = 4194304;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			pid_max = atol(buf);
		fclose(f);
	}
	/* pid_max itself is never handed out. */
	CHECK_EQ_INT(procmaps__read((pid_t)pid_max, true, &m), -ESRCH);
	CHECK_EQ_INT(m.n, 0);
	CHECK_EQ_INT(procmaps__read(-5, true, &m), -ESRCH);
	return true;
}

/* The inode of the file procmaps__open opens for m in tgid, or its
 * -errno. */
static long long opened_ino(uint32_t tgid, const struct procmap *m)
{
	struct stat st;
	int fd = procmaps__open(tgid, m, &st);

	if (fd < 0)
		return fd;
	close(fd);
	return (long long)st.st_ino;
}

/* procmaps__open: map_files first; by path (the process's root, then
 * ours once it is gone) only the file with the mapping's inode. */
static bool open_mapped_file(void)
{
	uint64_t addr = (uint64_t)(uintptr_t)&marker_function;
	uint32_t self = (uint32_t)getpid(), gone = 4194304;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	struct procmaps m;

	if (f) {
		if (fscanf(f, "%u", &gone) != 1)
			gone = 4194304;
		fclose(f);
	}
	CHECK_EQ_INT(procmaps__read(getpid(), true, &m), 0);
	const struct procmap *p = procmaps__find(&m, addr);
	CHECK(p != NULL);
	struct procmap real = *p, fake = *p;
	long long ino = (long long)real.inode;

	CHECK_EQ_INT(opened_ino(self, &real), ino);
	/* No such mapping (map_files fails): the path, as the same inode. */
	fake.start = 0x1000;
	fake.end = 0x2000;
	CHECK_EQ_INT(opened_ino(self, &fake), ino);
	/* Another file at that path now: refused, not misnamed. */
	fake.inode = real.inode + 1;
	CHECK_EQ_INT(opened_ino(self, &fake), -ESTALE);
	/* Inode unknown: the path as it is. */
	fake.inode = 0;
	CHECK_EQ_INT(opened_ino(self, &fake), ino);
	/* The process gone: our own path, only with a known, equal inode. */
	fake.inode = real.inode;
	CHECK_EQ_INT(opened_ino(gone, &fake), ino);
	fake.inode = real.inode + 1;
	CHECK(opened_ino(gone, &fake) < 0);
	fake.inode = 0;
	CHECK(opened_ino(gone, &fake) < 0);
	procmaps__free(&m);
	return true;
}

TEST_MAIN("procmaps",
	  TEST(line_table),
	  TEST(multi_line_sorted_and_find),
	  TEST(exec_only_filters),
	  TEST(empty_and_all_bad),
	  TEST(read_self),
	  TEST(open_mapped_file),
	  TEST(read_gone))
