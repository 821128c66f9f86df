/* test_elfsym.c — unit tests of user/elfsym.c and user/elfsym_tab.c.
 *
 * Compiles tiny C programs with gcc into a temporary directory (a PIE
 * with known functions and data, a shared library, a build-id-less
 * binary), then checks symbolization against what binutils (nm, readelf)
 * say about the same files: build-ids, lookups inside functions, the
 * .dynsym fallback of a stripped library, file offset -> vaddr, caching
 * by build-id, deleted files, and robustness to corrupted binaries.
 */
#include "symbols/elfsym.h"
#include "symbols/elfutil.h"
#include "fixtures.h"
#include "testing.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static char prog[128], lib[128], libstrip[128], nobid[128];

static const char prog_src[] =
	"int pmubpf_labels_record = 42;\n"
	"__thread int tls_var;\n"
	"__attribute__((noinline)) int alpha(int x) { return x * 2 + 1; }\n"
	"__attribute__((noinline)) int beta(int x) {\n"
	"	int s = 0;\n"
	"	for (int i = 0; i < x; i++) s += alpha(i) * (s | 1);\n"
	"	return s;\n"
	"}\n"
	"__attribute__((noinline)) static int gamma_local(int x) { return beta(x) - 1; }\n"
	"int main(int argc, char **argv) {\n"
	"	(void)argv;\n"
	"	return gamma_local(argc) + pmubpf_labels_record + tls_var;\n"
	"}\n";

static const char lib_src[] =
	"__attribute__((noinline)) static int hidden_fn(int x) { return x ^ 0x55; }\n"
	"int exported_fn(int x) { int s = 0; for (int i = 0; i < x; i++) s += hidden_fn(i); return s; }\n"
	"int exported_two(int x) { return exported_fn(x) + 1; }\n";

/* Build-id as `readelf -n` prints it, or "". */
static void readelf_build_id(const char *path, char *out, size_t len)
{
	char cmd[256], line[512];
	FILE *f;

	out[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n %s", path);
	if (!(f = popen(cmd, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "Build ID: ");
		if (p && !out[0]) {
			snprintf(out, len, "%s", p + strlen("Build ID: "));
			out[strcspn(out, "\n")] = '\0';
		}
	}
	pclose(f);
}

static bool build_fixtures(void)
{
	char src[128], lsrc[128];

	strcpy(dir, "/tmp/test_elfsym.XXXXXX");
	CHECK(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/prog.c", dir);
	snprintf(lsrc, sizeof(lsrc), "%s/lib.c", dir);
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(lib, sizeof(lib), "%s/lib.so", dir);
	snprintf(libstrip, sizeof(libstrip), "%s/lib_stripped.so", dir);
	snprintf(nobid, sizeof(nobid), "%s/nobid", dir);
	CHECK(write_file(src, prog_src));
	CHECK(write_file(lsrc, lib_src));
	CHECK(sh("gcc -O0 -fPIE -pie -Wl,--build-id -o %s %s", prog, src));
	CHECK(sh("gcc -O0 -fPIC -shared -Wl,--build-id -o %s %s", lib, lsrc));
	CHECK(sh("strip --strip-all -o %s %s", libstrip, lib));
	CHECK(sh("gcc -O0 -Wl,--build-id=none -o %s %s", nobid, src));
	return true;
}

static bool build_id_matches_readelf(void)
{
	struct symcache *c = symcache__new();
	char want[256];

	CHECK(c);
	readelf_build_id(prog, want, sizeof(want));
	CHECK(strlen(want) == 40); /* sha1 */
	struct elfobj *o = symcache__get_path(c, prog);
	CHECK(o);
	CHECK_STR(elfobj__build_id(o), want);
	CHECK_EQ_INT(elfobj__type(o), ET_DYN);
	o = symcache__get_path(c, nobid);
	CHECK(o);
	CHECK_STR(elfobj__build_id(o), "");
	symcache__free(c);
	return true;
}

static bool lookup_functions(void)
{
	static const char *const fns[] = { "alpha", "beta", "gamma_local", "main" };
	struct symcache *c = symcache__new();
	struct elfobj *o = symcache__get_path(c, prog);

	CHECK(o);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		uint64_t addr, size;
		CHECK(nm_sym(prog, fns[i], &addr, &size));
		CHECK(size > 4);
		for (uint64_t d = 0; d < size; d += (d < 4 ? 1 : size / 3)) {
			const struct elfsym *s = elfobj__lookup(o, addr + d);
			CHECK(s);
			CHECK_STR(s->name, fns[i]);
			CHECK(s->addr == addr && s->size == size);
			CHECK_EQ_INT(s->type, STT_FUNC);
		}
		const struct elfsym *s = elfobj__lookup(o, addr + size - 1);
		CHECK(s && !strcmp(s->name, fns[i]));
		s = elfobj__lookup(o, addr + size);
		CHECK(!s || strcmp(s->name, fns[i]));
	}
	CHECK(elfobj__lookup(o, 0) == NULL);
	CHECK(elfobj__lookup(o, 0x10) == NULL);
	CHECK(elfobj__lookup(o, UINT64_MAX) == NULL);
	CHECK(elfobj__nsyms(o) > 4);
	struct symcache_stats st;
	symcache__stats(c, &st);
	CHECK_EQ_INT(st.objects, 1);
	CHECK_EQ_INT(st.loaded, 1);
	CHECK_EQ_INT(st.open, 0);
	CHECK(st.syms == elfobj__nsyms(o));
	CHECK(st.bytes > 0);
	symcache__free(c);
	return true;
}

static bool find_data_symbols(void)
{
	struct symcache *c = symcache__new();
	struct elfobj *o = symcache__get_path(c, prog);
	uint64_t addr, size;

	CHECK(o);
	CHECK(nm_sym(prog, "pmubpf_labels_record", &addr, &size));
	const struct elfsym *s = elfobj__find(o, "pmubpf_labels_record");
	CHECK(s);
	CHECK(s->addr == addr);
	CHECK_EQ_INT(s->size, 4);
	CHECK_EQ_INT(s->type, STT_OBJECT);
	CHECK_EQ_INT(s->bind, STB_GLOBAL);
	s = elfobj__find(o, "tls_var");
	CHECK(s);
	CHECK_EQ_INT(s->type, STT_TLS);
	s = elfobj__find(o, "beta");
	CHECK(s && s->type == STT_FUNC);
	CHECK(elfobj__find(o, "no_such_symbol") == NULL);
	CHECK(elfobj__find(o, "") == NULL);
	symcache__free(c);
	return true;
}

static bool stripped_falls_back_to_dynsym(void)
{
	struct symcache *c = symcache__new();
	uint64_t addr, size;

	CHECK(nm_sym(lib, "exported_fn", &addr, &size));
	/* Own cache: lib.so shares the build-id and would be a hit. */
	struct elfobj *o = symcache__get_path(c, libstrip);
	CHECK(o);
	CHECK(sh("nm %s 2>&1 | grep -q 'no symbols'", libstrip));
	const struct elfsym *s = elfobj__lookup(o, addr + 3);
	CHECK(s);
	CHECK_STR(s->name, "exported_fn");
	CHECK(s->size == size);
	CHECK(elfobj__find(o, "exported_two"));
	CHECK(elfobj__find(o, "hidden_fn") == NULL); /* .symtab only */
	symcache__free(c);

	c = symcache__new();
	o = symcache__get_path(c, lib);
	CHECK(o);
	CHECK(elfobj__find(o, "hidden_fn"));
	CHECK_STR(elfobj__lookup(o, addr + 3)->name, "exported_fn");
	symcache__free(c);
	return true;
}

static bool offset_to_vaddr_pie(void)
{
	struct symcache *c = symcache__new();
	struct elfobj *o = symcache__get_path(c, prog);
	char cmd[256], line[512];
	int nload = 0;

	CHECK(o);
	snprintf(cmd, sizeof(cmd), "readelf -lW %s", prog);
	FILE *f = popen(cmd, "r");
	CHECK(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long off, va, pa, fsz, msz;
		uint64_t v;
		if (sscanf(line, " LOAD 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx",
			   &off, &va, &pa, &fsz, &msz) != 5 || !fsz)
			continue;
		nload++;
		if (elfobj__offset_to_vaddr(o, off, &v) || v != va ||
		    elfobj__offset_to_vaddr(o, off + fsz - 1, &v) || v != va + fsz - 1) {
			pclose(f);
			CHECK(!"PT_LOAD translation");
		}
	}
	pclose(f);
	CHECK(nload >= 2);
	uint64_t v;
	CHECK_EQ_INT(elfobj__offset_to_vaddr(o, 1ULL << 40, &v), -ENOENT);

	/* A function's own file offset maps back to its address. */
	uint64_t addr, size;
	CHECK(nm_sym(prog, "alpha", &addr, &size));
	snprintf(cmd, sizeof(cmd), "objdump -dF %s | grep -m1 '^[0-9a-f]* <alpha> (File Offset'", prog);
	f = popen(cmd, "r");
	CHECK(f);
	unsigned long long foff = 0;
	char *p = fgets(line, sizeof(line), f) ? strstr(line, "File Offset: 0x") : NULL;
	pclose(f);
	CHECK(p && sscanf(p, "File Offset: 0x%llx", &foff) == 1);
	CHECK_EQ_INT(elfobj__offset_to_vaddr(o, foff, &v), 0);
	CHECK(v == addr);
	symcache__free(c);
	return true;
}

static bool not_elf_is_enoexec(void)
{
	struct symcache *c = symcache__new();
	char path[160];

	snprintf(path, sizeof(path), "%s/not_elf", dir);
	CHECK(write_file(path, "#!/bin/sh\necho this is not an ELF file\n"));
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	errno = 0;
	CHECK(symcache__get_fd(c, fd, 1, 2) == NULL);
	CHECK_EQ_INT(errno, ENOEXEC);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF); /* fd taken */
	CHECK(write_file(path, ""));
	errno = 0;
	CHECK(symcache__get_path(c, path) == NULL);
	CHECK_EQ_INT(errno, ENOEXEC);
	errno = 0;
	CHECK(symcache__get_path(c, dir) == NULL); /* a directory */
	CHECK_EQ_INT(errno, ENOEXEC);
	errno = 0;
	CHECK(symcache__get_path(c, "/nonexistent/x") == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	symcache__free(c);
	return true;
}

static bool same_object_cached(void)
{
	struct symcache *c = symcache__new();
	char copy[160], copy2[160];
	struct symcache_stats st;

	snprintf(copy, sizeof(copy), "%s/prog_copy", dir);
	snprintf(copy2, sizeof(copy2), "%s/nobid_copy", dir);
	CHECK(sh("cp %s %s", prog, copy));
	CHECK(sh("cp %s %s", nobid, copy2));
	struct elfobj *a = symcache__get_path(c, prog);
	CHECK(a);
	int fd = open(copy, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(symcache__get_fd(c, fd, 99, 99) == a); /* other file, same build-id */
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
	CHECK(symcache__get_path(c, prog) == a);
	/* Without a build-id: the same file is one object, a copy another. */
	struct elfobj *b = symcache__get_path(c, nobid);
	CHECK(b && b != a);
	CHECK(symcache__get_path(c, nobid) == b);
	struct elfobj *b2 = symcache__get_path(c, copy2);
	CHECK(b2 && b2 != b);
	symcache__stats(c, &st);
	CHECK_EQ_INT(st.objects, 3);
	CHECK_EQ_INT(st.hits, 3);
	CHECK_EQ_INT(st.open, 3);
	symcache__free(c);
	return true;
}

/* By stat() alone (a gone process's file, by its path): what the cache
 * has for that dev, inode, size and mtime, with or without a build-id;
 * a file not opened yet, or changed since (mtime), is not found. */
static bool found_by_stat(void)
{
	struct symcache *c = symcache__new();
	char copy[160];
	struct stat st;

	snprintf(copy, sizeof(copy), "%s/stat_copy", dir);
	CHECK(sh("cp %s %s", nobid, copy));
	CHECK(stat(copy, &st) == 0);
	CHECK(symcache__get_stat(c, &st) == NULL); /* not opened yet */
	struct elfobj *b = symcache__get_path(c, copy);
	CHECK(b);
	CHECK(symcache__get_stat(c, &st) == b);
	struct elfobj *a = symcache__get_path(c, prog);
	CHECK(a && stat(prog, &st) == 0);
	CHECK(symcache__get_stat(c, &st) == a); /* with a build-id too */
	CHECK(sh("touch -d '2001-01-01' %s", copy));
	CHECK(stat(copy, &st) == 0);
	CHECK(symcache__get_stat(c, &st) == NULL); /* changed since */
	CHECK(stat(dir, &st) == 0);
	CHECK(symcache__get_stat(c, &st) == NULL); /* not a file */
	symcache__free(c);
	return true;
}

static bool deleted_file_resolves(void)
{
	struct symcache *c = symcache__new();
	char copy[160];
	uint64_t addr, size;

	CHECK(nm_sym(prog, "beta", &addr, &size));
	snprintf(copy, sizeof(copy), "%s/prog_deleted", dir);
	CHECK(sh("cp %s %s", prog, copy));
	int fd = open(copy, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(unlink(copy) == 0);
	struct elfobj *o = symcache__get_fd(c, fd, 0, 0);
	CHECK(o);
	const struct elfsym *s = elfobj__lookup(o, addr + 2);
	CHECK(s);
	CHECK_STR(s->name, "beta");
	CHECK(elfobj__find(o, "pmubpf_labels_record"));
	symcache__free(c);
	return true;
}

/* More objects than the cache keeps fds for: the oldest load early. */
static bool open_fds_bounded(void)
{
	struct symcache *c = symcache__new();
	struct elfobj *objs[200];
	struct symcache_stats st;
	uint64_t addr, size;
	char path[160];

	CHECK(nm_sym(nobid, "alpha", &addr, &size));
	for (int i = 0; i < 200; i++) {
		snprintf(path, sizeof(path), "%s/many.%d", dir, i);
		CHECK(sh("cp %s %s", nobid, path));
		objs[i] = symcache__get_path(c, path);
		CHECK(objs[i]);
		CHECK(unlink(path) == 0);
	}
	symcache__stats(c, &st);
	CHECK_EQ_INT(st.objects, 200);
	CHECK(st.open <= 128);
	CHECK(st.loaded >= 72);
	for (int i = 0; i < 200; i++) {
		const struct elfsym *s = elfobj__lookup(objs[i], addr + 1);
		CHECK(s && !strcmp(s->name, "alpha"));
	}
	symcache__stats(c, &st);
	CHECK_EQ_INT(st.open, 0);
	CHECK_EQ_INT(st.loaded, 200);
	symcache__free(c);
	return true;
}

static int aux_freed;
static void count_aux_free(void *p) { (void)p; aux_freed++; }

/* A sweep frees the objects not marked, beyond the keep_idle most
 * recently used, with their aux; marked ones survive untouched; an
 * object read again after its eviction has the same key. */
static bool sweep_evicts_unmarked(void)
{
	struct symcache *c = symcache__new();
	struct elfobj *objs[10];
	struct symcache_stats st;
	uint64_t addr, size, keys[10];
	char path[10][160];

	CHECK(nm_sym(nobid, "alpha", &addr, &size));
	aux_freed = 0;
	for (int i = 0; i < 10; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/sweep.%d", dir, i);
		CHECK(sh("cp %s %s", nobid, path[i]));
		objs[i] = symcache__get_path(c, path[i]);
		CHECK(objs[i]);
		keys[i] = elfobj__key(objs[i]);
		elfobj__set_aux(objs[i], objs[i], count_aux_free);
		if (i % 2) /* half of them loaded, half still holding their fd */
			CHECK(elfobj__lookup(objs[i], addr + 1));
	}
	for (int i = 0; i < 10; i++)
		for (int j = 0; j < i; j++)
			CHECK(keys[i] != keys[j]); /* distinct files */
	/* Round 1: 0..3 held; of the idle 4..9, 8 and 9 used last. */
	symcache__mark_begin(c);
	symcache__mark(objs[8]);
	symcache__mark(objs[9]);
	symcache__mark_begin(c);
	for (int i = 0; i < 4; i++)
		symcache__mark(objs[i]);
	CHECK_EQ_INT(symcache__sweep(c, 2), 4);
	symcache__stats(c, &st);
	CHECK_EQ_INT(st.objects, 6);
	CHECK_EQ_INT(st.evicted, 4);
	CHECK_EQ_INT(aux_freed, 4);
	CHECK_EQ_INT(st.open + st.loaded, st.objects);
	for (int i = 0; i < 4; i++) { /* the held ones still answer */
		const struct elfsym *s = elfobj__lookup(objs[i], addr + 1);
		CHECK(s && !strcmp(s->name, "alpha"));
	}
	/* 8 and 9 kept idle: found again without a new object. */
	CHECK(symcache__get_path(c, path[9]) == objs[9]);
	/* 5 was evicted: read again, a new object with the same key. */
	struct elfobj *again = symcache__get_path(c, path[5]);
	CHECK(again && elfobj__key(again) == keys[5]);
	symcache__stats(c, &st);
	CHECK_EQ_INT(st.objects, 7);
	/* Round 2: nothing held, none kept: everything goes, counts to 0. */
	symcache__mark_begin(c);
	CHECK_EQ_INT(symcache__sweep(c, 0), 7);
	symcache__stats(c, &st);
	CHECK_EQ_INT(st.objects, 0);
	CHECK_EQ_INT(st.open, 0);
	CHECK_EQ_INT(st.loaded, 0);
	CHECK_EQ_INT(st.syms, 0);
	CHECK_EQ_INT(st.bytes, 0);
	CHECK_EQ_INT(aux_freed, 10);
	symcache__free(c);
	for (int i = 0; i < 10; i++)
		unlink(path[i]);
	return true;
}

/* Corrupt copies (random bytes over headers and tables) must not crash,
 * leak or read out of bounds (run under valgrind). */
static bool corrupted_binaries(void)
{
	char path[160];
	struct stat st;
	int fd = open(prog, O_RDONLY);
	unsigned seed = 12345;

	CHECK(fd >= 0 && fstat(fd, &st) == 0);
	size_t len = (size_t)st.st_size;
	unsigned char *orig = malloc(len), *buf = malloc(len);
	CHECK(orig && buf && read(fd, orig, len) == (ssize_t)len);
	close(fd);
	snprintf(path, sizeof(path), "%s/corrupt", dir);
	for (int round = 0; round < 300; round++) {
		memcpy(buf, orig, len);
		int nflip = 1 + round % 16;
		for (int k = 0; k < nflip; k++) {
			seed = seed * 1103515245 + 12345;
			size_t pos = (seed >> 8) % len;
			/* Aim at the ELF and program headers half the time. */
			if (round & 1)
				pos %= 512;
			buf[pos] = (unsigned char)(seed >> 3);
		}
		size_t cut = round % 7 == 0 ? (seed >> 4) % len : len; /* truncate */
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0 && write(fd, buf, cut) == (ssize_t)cut);
		lseek(fd, 0, SEEK_SET);
		struct symcache *c = symcache__new();
		struct elfobj *o = symcache__get_fd(c, fd, 0, 0);
		if (o) {
			uint64_t v;
			elfobj__build_id(o);
			elfobj__offset_to_vaddr(o, 0x1000, &v);
			for (uint64_t a = 0; a < 0x5000; a += 0x40)
				elfobj__lookup(o, a);
			elfobj__find(o, "pmubpf_labels_record");
			elfobj__nsyms(o);
		}
		symcache__free(c);
	}
	unlink(path);
	free(orig);
	free(buf);
	return true;
}

/* DT_NEEDED names, in order, and the run path: as readelf -d says. */
static void append_name(const char *name, void *arg)
{
	char *out = arg;

	strcat(out, name);
	strcat(out, " ");
}

static bool needed_matches_readelf(void)
{
	char linked[160], src[160], cmd[512], want[512] = "", got[512] = "", rp[256];
	FILE *p;

	snprintf(linked, sizeof(linked), "%s/linked", dir);
	snprintf(src, sizeof(src), "%s/prog.c", dir);
	CHECK(sh("gcc -O0 -o %s %s -Wl,--no-as-needed %s -lm -Wl,-rpath,'$ORIGIN/sub:/opt/x'", linked, src, lib));
	char line[512];

	snprintf(cmd, sizeof(cmd), "readelf -d %s", linked);
	CHECK((p = popen(cmd, "r")));
	while (fgets(line, sizeof(line), p)) {
		char *a = strchr(line, '['), *b = strrchr(line, ']');

		if (strstr(line, "(NEEDED)") && a && b > a) {
			*b = 0;
			strcat(want, a + 1);
			strcat(want, " ");
		}
	}
	pclose(p);
	CHECK(strstr(want, "lib.so") && strstr(want, "libc.so.6"));

	int fd = open(linked, O_RDONLY);
	Elf *e;

	CHECK(fd >= 0);
	elf_version(EV_CURRENT);
	CHECK((e = elf_begin(fd, ELF_C_READ, NULL)));
	int n = elfutil__needed(e, append_name, got, rp, sizeof(rp));

	CHECK_STR(got, want);
	CHECK(n >= 2);
	CHECK_STR(rp, "$ORIGIN/sub:/opt/x");
	/* A library without a run path (nor libc: it calls nothing): "". */
	elf_end(e);
	close(fd);
	fd = open(lib, O_RDONLY);
	CHECK(fd >= 0 && (e = elf_begin(fd, ELF_C_READ, NULL)));
	got[0] = 0;
	CHECK(elfutil__needed(e, append_name, got, rp, sizeof(rp)) >= 0);
	CHECK_STR(rp, "");
	elf_end(e);
	close(fd);
	return true;
}

static bool cleanup(void)
{
	CHECK(sh("rm -rf %s", dir));
	return true;
}

TEST_MAIN("elfsym",
	  TEST(build_fixtures),
	  TEST(build_id_matches_readelf),
	  TEST(lookup_functions),
	  TEST(find_data_symbols),
	  TEST(stripped_falls_back_to_dynsym),
	  TEST(offset_to_vaddr_pie),
	  TEST(not_elf_is_enoexec),
	  TEST(same_object_cached),
	  TEST(found_by_stat),
	  TEST(deleted_file_resolves),
	  TEST(open_fds_bounded),
	  TEST(sweep_evicts_unmarked),
	  TEST(corrupted_binaries),
	  TEST(needed_matches_readelf),
	  TEST(cleanup))
