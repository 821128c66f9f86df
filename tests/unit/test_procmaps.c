/* test_procmaps.c — unit tests of user/procmaps.c.
 *
 * A table of /proc/PID/maps lines (normal, anonymous, [vdso], paths with
 * spaces, deleted files, malformed lines) checked field by field; then the
 * live file of this very process, and a pid that does not exist; opening
 * a mapping's file, and refusing another file at its path. Then the two
 * readers, PROCMAP_QUERY and the text, against each other on live
 * processes (this one, bash with its libraries, a binary deleted while it
 * runs), and the switch that forces the text.
 */
#include "procs/procmaps.h"
#include "symbols/elfsym.h"
#include "testing.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* The two readers' results are the same, field by field, but for x86's
 * [vsyscall] (the text only: not a VMA of the process). */
static bool same_maps(const struct procmaps *text, const struct procmaps *query)
{
	size_t j = 0;

	for (size_t i = 0; i < text->n; i++) {
		const struct procmap *t = &text->maps[i];

		if (!strcmp(t->path, "[vsyscall]"))
			continue;
		CHECK(j < query->n);
		const struct procmap *q = &query->maps[j++];
		if (t->start != q->start || t->end != q->end || t->pgoff != q->pgoff ||
		    t->inode != q->inode || t->dev_major != q->dev_major ||
		    t->dev_minor != q->dev_minor || t->exec != q->exec ||
		    t->deleted != q->deleted || strcmp(t->path, q->path)) {
			printf("  text  %llx-%llx %llx %llu %u:%u x%d d%d %s\n"
			       "  query %llx-%llx %llx %llu %u:%u x%d d%d %s\n",
			       (unsigned long long)t->start, (unsigned long long)t->end,
			       (unsigned long long)t->pgoff, (unsigned long long)t->inode,
			       t->dev_major, t->dev_minor, t->exec, t->deleted, t->path,
			       (unsigned long long)q->start, (unsigned long long)q->end,
			       (unsigned long long)q->pgoff, (unsigned long long)q->inode,
			       q->dev_major, q->dev_minor, q->exec, q->deleted, q->path);
			return false;
		}
	}
	CHECK_EQ_INT(j, query->n);
	return true;
}

/* Read pid both ways (exec_only as asked) and compare; *n_out: how many
 * mappings, *deleted_out: how many of them deleted. -1: no ioctl here. */
static int compare_readers(pid_t pid, bool exec_only, size_t *n_out, size_t *deleted_out)
{
	struct procmaps t, q;
	int eq = procmaps__query(pid, exec_only, &q);

	if (eq == -EOPNOTSUPP)
		return -1;
	int et = procmaps__read_text(pid, exec_only, &t);
	bool ok = et == 0 && eq == 0 && same_maps(&t, &q);

	if (!ok)
		printf("  pid %d exec_only %d: text %d, query %d\n", (int)pid, exec_only, et, eq);
	*n_out = q.n;
	*deleted_out = 0;
	for (size_t i = 0; i < q.n; i++)
		*deleted_out += q.maps[i].deleted;
	procmaps__free(&t);
	procmaps__free(&q);
	return ok;
}

/* Start argv[0] (a path) and wait until it runs it, loaded and asleep. */
static pid_t start_sleeper(char *const argv[])
{
	char want[PATH_MAX], exe[PATH_MAX], path[64], stat[512];
	pid_t pid;

	if (!realpath(argv[0], want))
		return -1;
	pid = fork();
	if (pid == 0) {
		/* A group of its own, killed whole by stop(): bash's sleep
		 * outliving it held the test's output open, and the test
		 * runner waited the sleep's 60 s for its end. */
		setpgid(0, 0);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	setpgid(pid, pid); /* either side may come first */
	for (int i = 0; i < 1000; i++) { /* 10 s at most */
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		n = readlink(path, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? read(fd, stat, sizeof(stat) - 1) : -1;
		if (fd >= 0)
			close(fd);
		stat[n > 0 ? n : 0] = '\0';
		const char *st = strrchr(stat, ')');
		if (!strcmp(exe, want) && st && st[1] == ' ' && st[2] == 'S')
			return pid;
		usleep(10000);
	}
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static void stop(pid_t pid)
{
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* This process: its executable mappings (the whole table changes under
 * our own mallocs, so only these). */
static bool readers_agree_self(void)
{
	size_t n, del;
	int r = compare_readers(getpid(), true, &n, &del);

	if (r < 0)
		SKIP("this kernel has no PROCMAP_QUERY (Linux 6.11+)");
	CHECK(r == 1);
	CHECK(n >= 3); /* the test, libc, ld.so, [vdso] */
	return true;
}

/* bash (libtinfo, libc, ld.so): every mapping, and the executable ones. */
static bool readers_agree_bash(void)
{
	char *argv[] = { "/bin/bash", "-c", "sleep 60; true", NULL };
	size_t n_all, n_exec, del;
	pid_t pid = start_sleeper(argv);

	CHECK(pid > 0);
	int r1 = compare_readers(pid, false, &n_all, &del);
	int r2 = compare_readers(pid, true, &n_exec, &del);
	stop(pid);
	if (r1 < 0)
		SKIP("this kernel has no PROCMAP_QUERY (Linux 6.11+)");
	CHECK(r1 == 1 && r2 == 1);
	CHECK(n_exec >= 4 && n_all > n_exec);
	return true;
}

/* A binary deleted while it runs: " (deleted)" taken off the same way. */
static bool readers_agree_deleted(void)
{
	char dir[] = "/tmp/pmubpf-procmaps-XXXXXX", bin[64], cmd[256];
	size_t n, del;

	CHECK(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/sleepy", dir);
	snprintf(cmd, sizeof(cmd), "cp /bin/sleep %s", bin);
	CHECK(system(cmd) == 0);
	char *argv[] = { bin, "60", NULL };
	pid_t pid = start_sleeper(argv);
	unlink(bin);
	rmdir(dir);
	CHECK(pid > 0);
	int r1 = compare_readers(pid, false, &n, &del);
	int r2 = r1 < 0 ? r1 : compare_readers(pid, true, &n, &del);
	stop(pid);
	if (r1 < 0)
		SKIP("this kernel has no PROCMAP_QUERY (Linux 6.11+)");
	CHECK(r1 == 1 && r2 == 1);
	CHECK(del >= 1);
	return true;
}

/* The ioctl's build-id of our executable is the one the object cache
 * reads from the file, and finds the cached object by, without a file. */
static bool query_build_id(void)
{
	uint64_t addr = (uint64_t)(uintptr_t)&marker_function;
	struct procmaps q, t;
	char hex[2 * PROCMAP_BUILD_ID_MAX + 1];
	int err = procmaps__query(getpid(), true, &q);

	if (err == -EOPNOTSUPP)
		SKIP("this kernel has no PROCMAP_QUERY (Linux 6.11+)");
	CHECK_EQ_INT(err, 0);
	const struct procmap *m = procmaps__find(&q, addr);
	CHECK(m != NULL);
	CHECK(m->build_id_len > 0 && m->build_id_len <= PROCMAP_BUILD_ID_MAX);
	for (size_t i = 0; i < m->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
	struct symcache *sc = symcache__new();
	CHECK(sc != NULL);
	CHECK(symcache__get_build_id(sc, m->build_id, m->build_id_len) == NULL); /* not cached yet */
	struct elfobj *o = symcache__get_path(sc, "/proc/self/exe");
	bool ok = o && !strcmp(elfobj__build_id(o), hex) &&
		  symcache__get_build_id(sc, m->build_id, m->build_id_len) == o;
	uint8_t other[PROCMAP_BUILD_ID_MAX];
	memcpy(other, m->build_id, m->build_id_len);
	other[0] ^= 1;
	ok = ok && symcache__get_build_id(sc, other, m->build_id_len) == NULL;
	if (!ok)
		printf("  ioctl %s, file %s\n", hex, o ? elfobj__build_id(o) : "(not read)");
	symcache__free(sc);
	procmaps__free(&q);
	CHECK(ok);
	/* The text has none. */
	CHECK_EQ_INT(procmaps__read_text(getpid(), true, &t), 0);
	m = procmaps__find(&t, addr);
	ok = m && m->build_id_len == 0;
	procmaps__free(&t);
	CHECK(ok);
	return true;
}

/* A zombie (and a kernel thread) has no address space: both readers
 * give no mappings and no error, which procs.c takes as "seen, nothing
 * mapped", not as gone. */
static bool readers_agree_zombie(void)
{
	struct procmaps t, q;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	CHECK(pid > 0);
	char path[64], st[256];
	for (int i = 0; i < 1000; i++) { /* until it is a zombie: 10 s at most */
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "r");
		st[0] = '\0';
		if (f) {
			if (!fgets(st, sizeof(st), f))
				st[0] = '\0';
			fclose(f);
		}
		const char *p = strrchr(st, ')');
		if (p && p[1] == ' ' && p[2] == 'Z')
			break;
		usleep(10000);
	}
	int eq = procmaps__query(pid, true, &q);
	int et = procmaps__read_text(pid, true, &t);
	size_t nq = q.n, nt = t.n;

	procmaps__free(&q);
	procmaps__free(&t);
	waitpid(pid, NULL, 0);
	if (eq == -EOPNOTSUPP)
		SKIP("this kernel has no PROCMAP_QUERY (Linux 6.11+)");
	CHECK_EQ_INT(et, 0);
	CHECK_EQ_INT(nt, 0);
	CHECK_EQ_INT(eq, 0);
	CHECK_EQ_INT(nq, 0);
	return true;
}

/* The reader procmaps__read picks, in a fresh process (it is chosen once
 * per run) with PMUBPF_NO_PROCMAP_QUERY as given (NULL: unset). */
static bool reader_with(const char *env, char *buf, size_t len)
{
	int fds[2];
	pid_t pid;
	ssize_t n;

	if (pipe(fds))
		return false;
	pid = fork();
	if (pid == 0) {
		const char *r;

		if (env)
			setenv("PMUBPF_NO_PROCMAP_QUERY", env, 1);
		else
			unsetenv("PMUBPF_NO_PROCMAP_QUERY");
		r = procmaps__reader();
		_exit(write(fds[1], r, strlen(r)) < 0);
	}
	close(fds[1]);
	n = pid > 0 ? read(fds[0], buf, len - 1) : -1;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	buf[n > 0 ? n : 0] = '\0';
	return n > 0;
}

static bool text_switch(void)
{
	struct procmaps q;
	char r[32];
	bool have = procmaps__query(getpid(), true, &q) != -EOPNOTSUPP;

	procmaps__free(&q);
	CHECK(reader_with("1", r, sizeof(r)));
	CHECK_STR(r, "text");
	CHECK(reader_with("0", r, sizeof(r)));
	CHECK_STR(r, have ? "PROCMAP_QUERY" : "text");
	CHECK(reader_with(NULL, r, sizeof(r)));
	CHECK_STR(r, have ? "PROCMAP_QUERY" : "text");
	if (!have)
		SKIP("this kernel has no PROCMAP_QUERY (Linux 6.11+): text either way");
	return true;
}

TEST_MAIN("procmaps",
	  TEST(line_table),
	  TEST(multi_line_sorted_and_find),
	  TEST(exec_only_filters),
	  TEST(empty_and_all_bad),
	  TEST(read_self),
	  TEST(open_mapped_file),
	  TEST(read_gone),
	  TEST(readers_agree_self),
	  TEST(readers_agree_bash),
	  TEST(readers_agree_deleted),
	  TEST(readers_agree_zombie),
	  TEST(query_build_id),
	  TEST(text_switch))
