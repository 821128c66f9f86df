/* test_perfmap.c — unit tests of user/perfmap.c, user/procsyms.c and the
 * kernel side of user/symbolize.c.
 *
 * Perf maps: parsing (hex with or without 0x, names with spaces, CRLF),
 * malformed and hostile lines skipped, the later of two entries for one
 * address winning, lookups at the edges; reading this process's own
 * /tmp/perf-PID.map through /proc/PID/root, refused when owned by another
 * user or a symlink; a miss re-reads the map, rate-limited. The vDSO of
 * this process read from its memory and named; kernel frames in modules
 * carry the module as their file.
 */
#include "symbols/ksyms.h"
#include "symbols/perfmap.h"
#include "pprof/pprof.h"
#include "procs/procs.h"
#include "procs/procsyms.h"
#include "report/symbolize.h"
#include "testing.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool parse_basic(void)
{
	static const char text[] =
		"7f0000001000 100 jit_a\n"
		"0x7f0000002000 0x80 LazyCompile:~foo bar.js:12\r\n"
		"7f0000003000 10 old\n"
		"7f0000003000 20 new\n";
	struct perfmap *m;
	const struct perfmap_sym *s;

	CHECK_EQ_INT(perfmap__parse(text, strlen(text), &m), 0);
	CHECK_EQ_INT(perfmap__count(m), 4);
	CHECK_STR(perfmap__lookup(m, 0x7f0000001000)->name, "jit_a");
	CHECK_STR(perfmap__lookup(m, 0x7f00000010ff)->name, "jit_a");
	CHECK(!perfmap__lookup(m, 0x7f0000001100));
	CHECK(!perfmap__lookup(m, 0x7f0000000fff));
	s = perfmap__lookup(m, 0x7f0000002010);
	CHECK(s);
	CHECK_STR(s->name, "LazyCompile:~foo bar.js:12");
	CHECK_EQ_INT(s->size, 0x80);
	CHECK_STR(perfmap__lookup(m, 0x7f0000003005)->name, "new"); /* later line wins */
	CHECK_STR(perfmap__lookup(m, 0x7f0000003015)->name, "new");
	perfmap__free(m);
	return true;
}

static bool parse_hostile(void)
{
	static const char text[] =
		"\n"
		"zzzz 10 bad_start\n"
		"1000 zz bad_size\n"
		"1000 0 zero_size\n"
		"ffffffffffffff00 1000 wraps\n"
		"12345678901234567 10 too_long\n"
		"1000 10\n"
		"1000\n"
		"2000 10 ok\n"
		"3000 10 trailing";
	struct perfmap *m;

	CHECK_EQ_INT(perfmap__parse(text, strlen(text), &m), 0);
	CHECK_EQ_INT(perfmap__count(m), 2);
	CHECK_STR(perfmap__lookup(m, 0x2005)->name, "ok");
	CHECK_STR(perfmap__lookup(m, 0x3000)->name, "trailing");
	CHECK(!perfmap__lookup(m, 0x1005));
	perfmap__free(m);
	/* Embedded NUL and no trailing newline, not NUL-terminated. */
	char raw[] = { '1', '0', ' ', '5', ' ', 'a', '\0', 'b', '\n', '2', '0', ' ', '5', ' ', 'c' };
	CHECK_EQ_INT(perfmap__parse(raw, sizeof(raw), &m), 0);
	CHECK_EQ_INT(perfmap__count(m), 1);
	CHECK_STR(perfmap__lookup(m, 0x20)->name, "c");
	perfmap__free(m);
	CHECK_EQ_INT(perfmap__parse("", 0, &m), 0);
	CHECK(!perfmap__lookup(m, 0));
	perfmap__free(m);
	CHECK(!perfmap__lookup(NULL, 0));
	return true;
}

static bool read_own(void)
{
	struct perfmap_src src;
	struct perfmap *m = NULL;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	CHECK((f = fopen(path, "w")) && fputs("1000 10 own_fn\n", f) >= 0 && fclose(f) == 0);
	CHECK_EQ_INT(perfmap__source((uint32_t)getpid(), false, &src), 0);
	CHECK_EQ_INT(src.nspid, getpid());
	CHECK_EQ_INT(perfmap__read(&src, false, &m), 0);
	CHECK_STR(perfmap__lookup(m, 0x1001)->name, "own_fn");
	perfmap__free(m);
	m = NULL;
	CHECK_EQ_INT(perfmap__read(&src, true, &m), -EALREADY); /* unchanged */
	if (getuid() == 0) {
		/* Another user's file is refused, like perf does. */
		CHECK_EQ_INT(chown(path, 65534, 65534), 0);
		CHECK_EQ_INT(perfmap__read(&src, false, &m), -EPERM);
		unlink(path);
		/* So is a symlink. */
		CHECK_EQ_INT(symlink("/etc/passwd", path), 0);
		CHECK_EQ_INT(perfmap__read(&src, false, &m), -EPERM);
	}
	unlink(path);
	CHECK_EQ_INT(perfmap__read(&src, false, &m), -ENOENT);
	return true;
}

/* A miss re-reads the map, at most once per PROCSYMS_JIT_REREAD_MS. */
static bool jit_reread_rate_limited(void)
{
	struct proc pr;
	char path[64];
	FILE *f;

	char anon_path[1] = "";
	struct procmap anon = { .start = 0x5000, .end = 0x8000, .path = anon_path };

	memset(&pr, 0, sizeof(pr));
	pr.tgid = pr.via = (uint32_t)getpid();
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	procsyms__jit_snapshot(&pr); /* no JIT memory: not even looked for */
	CHECK(!pr.jit_src.known);
	pr.maps.maps = &anon; /* anonymous executable memory: a JIT, maybe */
	pr.maps.n = 1;
	procsyms__jit_snapshot(&pr); /* no map yet */
	CHECK(pr.jit_src.known);
	CHECK(!pr.jit);
	CHECK((f = fopen(path, "w")) && fputs("5000 10 first\n", f) >= 0 && fclose(f) == 0);
	usleep((PROCSYMS_JIT_REREAD_MS + 20) * 1000);
	CHECK(procsyms__jit_lookup(&pr, 0x5004)); /* miss -> re-read -> hit */
	CHECK_STR(procsyms__jit_lookup(&pr, 0x5004)->name, "first");
	CHECK((f = fopen(path, "a")) && fputs("6000 10 second\n", f) >= 0 && fclose(f) == 0);
	CHECK(!procsyms__jit_lookup(&pr, 0x6004)); /* too soon to re-read */
	usleep((PROCSYMS_JIT_REREAD_MS + 20) * 1000);
	CHECK(procsyms__jit_lookup(&pr, 0x6004));
	CHECK_STR(procsyms__jit_lookup(&pr, 0x6004)->name, "second");
	int reads = pr.jit_reads;
	for (int i = 0; i < 5; i++)
		CHECK(!procsyms__jit_lookup(&pr, 0x7000)); /* misses in a burst: one read */
	CHECK(pr.jit_reads <= reads + 1);
	unlink(path);
	procsyms__release(&pr);
	pr.maps.maps = NULL;
	pr.maps.n = 0;
	return true;
}

static bool vdso_named(void)
{
	struct procmaps maps = { 0 };
	struct symcache *c = symcache__new();
	const struct procmap *v = NULL;

	CHECK(c);
	CHECK_EQ_INT(procmaps__read(getpid(), true, &maps), 0);
	for (size_t i = 0; i < maps.n; i++)
		if (!strcmp(maps.maps[i].path, "[vdso]"))
			v = &maps.maps[i];
	if (!v) {
		procmaps__free(&maps);
		symcache__free(c);
		SKIP("no [vdso] mapping");
	}
	struct elfobj *o = procsyms__vdso(c, (uint32_t)getpid(), v, NULL);
	CHECK(o);
	CHECK(elfobj__build_id(o)[0]);
	const struct elfsym *s = elfobj__find(o, "__vdso_clock_gettime");
	CHECK(s);
	uint64_t vaddr;
	CHECK_EQ_INT(elfobj__mapping_vaddr(o, v->pgoff, v->end - v->start, &vaddr), 0);
	/* The function's runtime address is named after it. */
	const struct elfsym *back = elfobj__lookup(o, s->addr + 1);
	CHECK(back);
	CHECK(strstr(back->name, "clock_gettime"));
	/* Same image again: the same object. */
	CHECK(procsyms__vdso(c, (uint32_t)getpid(), v, NULL) == o);
	/* A process gone (tgid 0): our own image, through the memo; kept
	 * while nothing is evicted, found again after an eviction (the
	 * memo's object may be the one freed). */
	struct vdso_memo memo = { 0 };
	CHECK(procsyms__vdso(c, 0, v, &memo) == o);
	CHECK(memo.obj == o);
	CHECK(procsyms__vdso(c, 0, v, &memo) == o);
	symcache__mark_begin(c);
	CHECK_EQ_INT(symcache__sweep(c, 0), 1);
	struct elfobj *again = procsyms__vdso(c, 0, v, &memo);
	CHECK(again && memo.obj == again);
	CHECK(elfobj__find(again, "__vdso_clock_gettime"));
	procmaps__free(&maps);
	symcache__free(c);
	return true;
}

static bool kernel_module_file(void)
{
	char path[] = "/tmp/pmubpf-test-ksyms.XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct symb_stats st = { 0 };

	CHECK(f);
	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81001000 T do_work\n"
	      "ffffffffc0a01000 t xfs_fs_fill_super\t[xfs]\n"
	      "ffffffffc0a02000 t xfs_other\t[xfs]\n", f);
	fclose(f);
	struct ksyms *ks = ksyms__load(path);
	unlink(path);
	CHECK(ks);
	struct pprof *p = pprof__new("cpu", "nanoseconds", 1);
	CHECK(p);
	uint64_t l1 = symb__kernel(p, ks, 0xffffffffc0a01010, true, &st);
	uint64_t l2 = symb__kernel(p, ks, 0xffffffff81001010, true, &st);
	CHECK(l1 && l2);
	CHECK_STR(pprof__location_name(p, l1), "xfs_fs_fill_super");
	CHECK_STR(pprof__location_name(p, l2), "do_work");
	CHECK_STR(pprof__location_mapping_file(p, l1), "[kernel.kallsyms]");
	CHECK_EQ_INT(pprof__add_sample(p, &l1, 1, 1, 1, NULL, 0), 0);
	char out[] = "/tmp/pmubpf-test-kprof.XXXXXX";
	int ofd = mkstemp(out);
	CHECK(ofd >= 0);
	close(ofd);
	CHECK_EQ_INT(pprof__write(p, out), 0);
	char cmd[256], line[4096] = "";
	const char *build = getenv("PMUBPF_BUILD"); /* build-san: make SANITIZE=1 test */
	snprintf(cmd, sizeof(cmd), "%s/tests/pprof_dump %s", build ? build : "build", out);
	FILE *d = popen(cmd, "r");
	CHECK(d);
	size_t n = fread(line, 1, sizeof(line) - 1, d);
	line[n] = '\0';
	pclose(d);
	unlink(out);
	CHECK(strstr(line, "\"func\":\"xfs_fs_fill_super\",\"file\":\"[xfs]\""));
	pprof__free(p);
	ksyms__free(ks);
	return true;
}

TEST_MAIN("perfmap", TEST(parse_basic), TEST(parse_hostile), TEST(read_own),
	  TEST(jit_reread_rate_limited), TEST(vdso_named), TEST(kernel_module_file))
