/* test_dwarf.c — unit tests of user/dwarf.c and user/demangle.c.
 *
 * Compiles a small C program with clang -O2 -g (an always_inline callee
 * in a noinline caller, a static function) and a C++ one, then checks
 * dwarf__lookup at every address of the caller against the source's
 * marked lines: the inlined callee as its own leaf frame with its file
 * and line, the caller at the call site, decl lines; linkage names of
 * C++ functions and their demangling; graceful answers outside code,
 * for a file with no DWARF, and for truncated images.
 */
#include "symbols/demangle.h"
#include "symbols/dwarf.h"
#include "fixtures.h"
#include "testing.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64], prog[128], cxx[128], nodwarf[128];

static const char c_src[] =
	"static inline __attribute__((always_inline)) int inner(int x)\n" /* 1 */
	"{\n"
	"	int s = 0;\n"
	"	for (int i = 0; i < x; i++) s += i * x ^ (s >> 3); /* L4 */\n"
	"	return s;\n"
	"}\n"
	"__attribute__((noinline)) int outer(int x)\n" /* 7 */
	"{\n"
	"	return inner(x) + 1; /* L9 */\n"
	"}\n"
	"int main(int argc, char **argv) { (void)argv; return outer(argc); }\n";

static const char cxx_src[] =
	"namespace ns { struct K { __attribute__((noinline)) int f(int); }; }\n"
	"int ns::K::f(int x) { return x * 3 + 1; }\n"
	"int main(int argc, char **) { ns::K k; return k.f(argc); }\n";

static struct dwarfobj *open_path(const char *path)
{
	return dwarf__open_fd(open(path, O_RDONLY | O_CLOEXEC));
}

static bool setup(void)
{
	char src[128];

	snprintf(dir, sizeof(dir), "/tmp/pmubpf-test-dwarf.XXXXXX");
	CHECK(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/t.c", dir);
	snprintf(prog, sizeof(prog), "%s/t", dir);
	snprintf(nodwarf, sizeof(nodwarf), "%s/t.nodwarf", dir);
	snprintf(cxx, sizeof(cxx), "%s/k", dir);
	CHECK(write_file(src, c_src));
	CHECK(sh("clang -O2 -g -o %s %s", prog, src));
	CHECK(sh("strip --strip-debug -o %s %s", nodwarf, prog));
	snprintf(src, sizeof(src), "%s/k.cc", dir);
	CHECK(write_file(src, cxx_src));
	CHECK(sh("clang++ -O2 -g -o %s %s", cxx, src));
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);
	return s && n >= m && !strcmp(s + n - m, suffix);
}

static bool inline_frames(void)
{
	struct dwarfobj *d = open_path(prog);
	uint64_t addr, size;
	int two = 0;

	CHECK(d);
	CHECK(nm_sym(prog, "outer", &addr, &size));
	for (uint64_t a = addr; a < addr + size; a++) {
		struct dwarf_frame f[DWARF_MAX_FRAMES];
		int n = dwarf__lookup(d, a, f, DWARF_MAX_FRAMES);

		CHECK(n >= 1);
		CHECK_STR(f[n - 1].name, "outer");
		CHECK_EQ_INT(f[n - 1].decl_line, 7);
		CHECK(ends_with(f[n - 1].decl_file, "/t.c"));
		if (n == 2) {
			two++;
			CHECK_STR(f[0].name, "inner");
			CHECK_EQ_INT(f[0].decl_line, 1);
			CHECK(f[0].line == 0 || (f[0].line >= 3 && f[0].line <= 5));
			CHECK(ends_with(f[0].file, "/t.c"));
			CHECK_EQ_INT(f[1].line, 9); /* the call site */
		}
	}
	CHECK(two > 0); /* some instructions are inner's */
	/* max = 1 keeps the leaf. */
	for (uint64_t a = addr; a < addr + size; a++) {
		struct dwarf_frame f[2], g;
		if (dwarf__lookup(d, a, f, 2) == 2) {
			CHECK_EQ_INT(dwarf__lookup(d, a, &g, 1), 1);
			CHECK_STR(g.name, "inner");
			break;
		}
	}
	struct dwarf_stats st;
	dwarf__stats(d, &st);
	CHECK(st.units >= 1 && st.units_indexed >= 1 && st.functions >= 2);
	dwarf__free(d);
	return true;
}

static bool outside_code(void)
{
	struct dwarfobj *d = open_path(prog);
	struct dwarf_frame f[4];

	CHECK(d);
	CHECK_EQ_INT(dwarf__lookup(d, 0, f, 4), 0);
	CHECK_EQ_INT(dwarf__lookup(d, UINT64_MAX, f, 4), 0);
	CHECK_EQ_INT(dwarf__lookup(d, 0x10, f, 0), 0);
	CHECK_EQ_INT(dwarf__lookup(NULL, 0x1000, f, 4), 0);
	dwarf__free(d);
	return true;
}

static bool no_dwarf(void)
{
	errno = 0;
	CHECK(!open_path(nodwarf));
	CHECK_EQ_INT(errno, ENODATA);
	CHECK(!dwarf__open_fd(open("/dev/null", O_RDONLY)));
	CHECK(!dwarf__open_fd(-1));
	return true;
}

static bool cxx_linkage(void)
{
	struct dwarfobj *d = open_path(cxx);
	uint64_t addr, size;
	struct dwarf_frame f[4];
	char *dem;

	CHECK(d);
	CHECK(nm_sym(cxx, "_ZN2ns1K1fEi", &addr, &size));
	CHECK(dwarf__lookup(d, addr, f, 4) >= 1);
	CHECK_STR(f[0].linkage_name, "_ZN2ns1K1fEi");
	CHECK_STR(f[0].name, "f");
	dem = demangle(f[0].linkage_name);
	CHECK_STR(dem, "ns::K::f(int)");
	free(dem);
	dwarf__free(d);
	return true;
}

static bool demangling(void)
{
	char *s = demangle("_ZNSt6vectorIiSaIiEE9push_backERKi");

	CHECK_STR(s, "std::vector<int, std::allocator<int> >::push_back(int const&)");
	free(s);
	CHECK(!demangle("main"));
	CHECK(!demangle("_Z"));       /* not a valid mangling */
	CHECK(!demangle("_Zxyzzy"));
	CHECK(!demangle(NULL));
	return true;
}

/* Every prefix of the image: no crash, no frames from garbage. */
static bool truncated_images(void)
{
	struct stat st;
	int fd = open(prog, O_RDONLY);
	char *buf;

	CHECK(fd >= 0 && fstat(fd, &st) == 0);
	buf = malloc((size_t)st.st_size);
	CHECK(buf && read(fd, buf, (size_t)st.st_size) == st.st_size);
	close(fd);
	for (off_t len = 0; len <= st.st_size; len += st.st_size / 61 + 1) {
		struct dwarfobj *d = dwarf__open_mem(buf, (size_t)len);
		struct dwarf_frame f[DWARF_MAX_FRAMES];

		for (uint64_t a = 0x1000; d && a < 0x1400; a += 7)
			dwarf__lookup(d, a, f, DWARF_MAX_FRAMES);
		dwarf__free(d);
	}
	/* Flipped bytes inside the DWARF sections. */
	for (int k = 0; k < 40; k++) {
		char *c = malloc((size_t)st.st_size);
		CHECK(c);
		memcpy(c, buf, (size_t)st.st_size);
		srand((unsigned)k);
		for (int j = 0; j < 64; j++)
			c[st.st_size / 2 + rand() % (st.st_size / 2)] ^= (char)(1 + rand() % 255);
		struct dwarfobj *d = dwarf__open_mem(c, (size_t)st.st_size);
		struct dwarf_frame f[DWARF_MAX_FRAMES];
		for (uint64_t a = 0x1000; d && a < 0x1400; a += 3)
			dwarf__lookup(d, a, f, DWARF_MAX_FRAMES);
		dwarf__free(d);
		free(c);
	}
	free(buf);
	return true;
}

static bool cleanup(void)
{
	return sh("rm -rf %s", dir);
}


/* Every lookup in outer as text ("name:line@file" per frame). */
static char *lookups(struct dwarfobj *d, uint64_t addr, uint64_t size)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	for (uint64_t a = addr; m && a < addr + size; a++) {
		struct dwarf_frame f[DWARF_MAX_FRAMES];
		int n = dwarf__lookup(d, a, f, DWARF_MAX_FRAMES);

		for (int i = 0; i < n; i++)
			fprintf(m, "%s:%lld@%s ", f[i].name ? f[i].name : "?", (long long)f[i].line,
				f[i].file ? f[i].file : "?");
		fprintf(m, "\n");
	}
	if (m)
		fclose(m);
	return buf;
}

/* dwarf__release gives back everything but the file, and the next
 * lookup loads it again with the same answers; a file whose debug
 * sections are compressed (mapped by us, the compressed pages dropped,
 * the sections libdw need not read hidden) answers the same too, and so
 * does one not owned by root (read by libelf, not mapped). */
static bool release_reload(void)
{
	char z[160], *a = NULL, *b = NULL, *c = NULL;
	struct dwarfobj *d = open_path(prog), *dz = NULL;
	struct dwarf_stats st;
	uint64_t addr, size;

	CHECK(d);
	CHECK(nm_sym(prog, "outer", &addr, &size));
	CHECK((a = lookups(d, addr, size)) && strstr(a, "inner:"));
	dwarf__stats(d, &st);
	CHECK(st.loaded && st.units >= 1 && st.rows > 0 && st.releases == 0);
	dwarf__release(d);
	dwarf__stats(d, &st);
	CHECK(!st.loaded && st.units == 0 && st.units_indexed == 0 && st.rows == 0);
	CHECK_EQ_INT(st.releases, 1);
	dwarf__release(d); /* nothing held: not counted */
	dwarf__stats(d, &st);
	CHECK_EQ_INT(st.releases, 1);
	CHECK((b = lookups(d, addr, size)));
	CHECK_STR(b, a);
	dwarf__stats(d, &st);
	CHECK(st.loaded && st.units >= 1);

	snprintf(z, sizeof(z), "%s/t.z", dir);
	CHECK(sh("objcopy --compress-debug-sections=zlib %s %s", prog, z));
	CHECK(sh("readelf -SW %s | grep -q ' \\.debug_info .* C '", z));
	CHECK((dz = open_path(z)));
	CHECK((c = lookups(dz, addr, size)));
	CHECK_STR(c, a);
	dwarf__release(dz);
	free(c);
	CHECK((c = lookups(dz, addr, size)));
	CHECK_STR(c, a);
	dwarf__free(dz);
	/* Owned by another user: read, not mapped (the headers still hidden). */
	snprintf(z, sizeof(z), "%s/t.other", dir);
	CHECK(sh("cp %s %s && chown 65534 %s", prog, z, z));
	CHECK((dz = open_path(z)));
	free(c);
	CHECK((c = lookups(dz, addr, size)));
	CHECK_STR(c, a);
	dwarf__free(dz);
	dwarf__free(d);
	free(a);
	free(b);
	free(c);
	return true;
}

TEST_MAIN("dwarf", TEST(setup), TEST(inline_frames), TEST(release_reload), TEST(outside_code), TEST(no_dwarf),
	  TEST(cxx_linkage), TEST(demangling), TEST(truncated_images), TEST(cleanup))
