/* test_debugcache.c — unit tests of user/symbols/debugcache.c.
 *
 * Compiles a small program with -g and a build-id, compresses its debug
 * sections with objcopy (as Debian's debug packages are), then checks:
 * a first swap writes an uncompressed copy named by the build-id whose
 * sections are the inflated originals, and a second reuses it; DWARF
 * lookups through the copy answer as through the compressed file; files
 * with nothing compressed, too little, another build-id, or that others
 * own or may write are left alone; a directory others may write, or reached through a link, is
 * refused; a damaged or linked copy is made again; the bound removes the
 * least recently used copies and abandoned temporaries; the environment
 * picks the directory, and 0 switches the cache off.
 */
#include "symbols/debugcache.h"
#include "symbols/dwarf.h"
#include "fixtures.h"
#include "testing.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64], prog[128], progz[128], plain_bid[64];
static char bids[3][64], progs[3][128];

static const char src_fmt[] =
	"static inline __attribute__((always_inline)) int inner(int x)\n"
	"{\n"
	"	int s = %d;\n"
	"	for (int i = 0; i < x; i++) s += i * x ^ (s >> 3);\n"
	"	return s;\n"
	"}\n"
	"__attribute__((noinline)) int outer(int x)\n"
	"{\n"
	"	return inner(x) + 1;\n"
	"}\n"
	"int main(int argc, char **argv) { (void)argv; return outer(argc); }\n";

/* The build-id of path, as readelf -n prints it. */
static bool build_id_of(const char *path, char *out, size_t len)
{
	char cmd[256];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -n %s | awk '/Build ID/ {print $3}'", path);
	if (!(f = popen(cmd, "r")))
		return false;
	bool ok = fgets(out, (int)len, f) != NULL;
	pclose(f);
	out[strcspn(out, "\n")] = '\0';
	return ok && strlen(out) >= 16;
}

/* Compile variant v of the program with -g and a build-id, then compress
 * its debug sections into out. */
static bool compile(int v, const char *plain, const char *out)
{
	char src[160], text[1024];

	snprintf(src, sizeof(src), "%s/t%d.c", dir, v);
	snprintf(text, sizeof(text), src_fmt, v);
	return write_file(src, text) &&
	       sh("clang -O2 -g -Wl,--build-id -o %s %s", plain, src) &&
	       sh("objcopy --compress-debug-sections=zlib %s %s", plain, out) &&
	       sh("readelf -SW %s | grep -q ' \\.debug_info .* C '", out);
}

static bool setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/pmubpf-test-debugcache.XXXXXX");
	CHECK(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/t", dir);
	snprintf(progz, sizeof(progz), "%s/t.z", dir);
	CHECK(compile(0, prog, progz));
	CHECK(build_id_of(progz, plain_bid, sizeof(plain_bid)));
	for (int v = 0; v < 3; v++) {
		char plain[160];

		snprintf(plain, sizeof(plain), "%s/v%d", dir, v + 1);
		snprintf(progs[v], sizeof(progs[v]), "%s/v%d.z", dir, v + 1);
		CHECK(compile(v + 1, plain, progs[v]));
		CHECK(build_id_of(progs[v], bids[v], sizeof(bids[v])));
	}
	return true;
}

static int open_ro(const char *path)
{
	return open(path, O_RDONLY | O_CLOEXEC);
}

static bool fd_closed(int fd)
{
	return fcntl(fd, F_GETFD) < 0 && errno == EBADF;
}

/* A cache over a fresh directory DIR/name (0700, made here). */
static struct debugcache *fresh(const char *name, char *cdir, size_t len, uint64_t max)
{
	snprintf(cdir, len, "%s/%s", dir, name);
	return debugcache__new_at(cdir, max, 0);
}

/* The md5 of section sec of path, decompressed where compressed. */
static bool section_md5(const char *path, const char *sec, char *out)
{
	char cmd[384];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -x %s --decompress %s 2>/dev/null | tail -n +2 | md5sum",
		 sec, path);
	if (!(f = popen(cmd, "r")))
		return false;
	bool ok = fgets(out, 33, f) != NULL;
	pclose(f);
	return ok;
}

static bool made_then_reused(void)
{
	char cdir[160], copy[256], a[40], b[40];
	struct debugcache *c = fresh("c1", cdir, sizeof(cdir), DEBUGCACHE_MAX_BYTES);
	struct debugcache_stats st;
	struct stat sb;
	int fd = open_ro(progz), got;

	CHECK(c && fd >= 0);
	got = debugcache__swap(c, fd, plain_bid);
	CHECK(got >= 0 && got != fd);
	CHECK(fd_closed(fd));
	debugcache__stats(c, &st);
	CHECK_EQ_INT(st.made, 1);
	CHECK_EQ_INT(st.reused, 0);
	CHECK_EQ_INT(st.failed, 0);
	snprintf(copy, sizeof(copy), "%s/%s.debug", cdir, plain_bid);
	CHECK(stat(copy, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & 0777) == 0600);
	CHECK(stat(cdir, &sb) == 0 && (sb.st_mode & 0777) == 0700);
	/* Nothing compressed in the copy, its build-id and sections the same. */
	CHECK(!sh("readelf -SW %s | grep -q ' \\.debug_[a-z_]* .* C '", copy));
	CHECK(sh("readelf -n %s | grep -q %s", copy, plain_bid));
	for (const char *sec = ".debug_info"; sec; sec = strcmp(sec, ".debug_info") ? NULL : ".debug_line") {
		CHECK(section_md5(progz, sec, a) && section_md5(copy, sec, b));
		CHECK_STR(a, b);
	}
	/* The code the program headers point at is where it was. */
	CHECK(sh("cmp -s -i 64 -n 4032 %s %s", progz, copy));
	close(got);
	fd = open_ro(progz);
	got = debugcache__swap(c, fd, plain_bid);
	CHECK(got >= 0 && got != fd && fd_closed(fd));
	debugcache__stats(c, &st);
	CHECK_EQ_INT(st.made, 1);
	CHECK_EQ_INT(st.reused, 1);
	close(got);
	debugcache__free(c);
	return true;
}

/* Every address of outer: the frames through the copy are those through
 * the compressed file. */
static bool same_answers(void)
{
	char cdir[160];
	struct debugcache *c = fresh("c2", cdir, sizeof(cdir), DEBUGCACHE_MAX_BYTES);
	struct dwarfobj *dz = dwarf__open_fd(open_ro(progz)), *dc;
	struct debugcache_stats st;
	uint64_t addr, size;
	int n2 = 0;

	CHECK(c && dz);
	dc = dwarf__open_fd(debugcache__swap(c, open_ro(progz), plain_bid));
	CHECK(dc);
	debugcache__stats(c, &st);
	CHECK_EQ_INT(st.made, 1);
	CHECK(nm_sym(prog, "outer", &addr, &size) && size > 0);
	for (uint64_t x = addr; x < addr + size; x++) {
		struct dwarf_frame f[DWARF_MAX_FRAMES], g[DWARF_MAX_FRAMES];
		int n = dwarf__lookup(dz, x, f, DWARF_MAX_FRAMES);

		CHECK(n >= 1);
		CHECK_EQ_INT(dwarf__lookup(dc, x, g, DWARF_MAX_FRAMES), n);
		for (int i = 0; i < n; i++) {
			CHECK_STR(g[i].name, f[i].name);
			CHECK_STR(g[i].file, f[i].file);
			CHECK_EQ_INT(g[i].line, f[i].line);
			CHECK_EQ_INT(g[i].decl_line, f[i].decl_line);
		}
		n2 += n == 2;
	}
	CHECK(n2 > 0); /* the inlined callee was named too */
	dwarf__free(dz);
	dwarf__free(dc);
	debugcache__free(c);
	return true;
}

static bool left_alone(void)
{
	char cdir[160], other[160];
	struct debugcache *c = fresh("c3", cdir, sizeof(cdir), DEBUGCACHE_MAX_BYTES);
	struct debugcache_stats st;
	struct stat sb;
	int fd;

	CHECK(c);
	/* Nothing compressed. */
	fd = open_ro(prog);
	CHECK_EQ_INT(debugcache__swap(c, fd, plain_bid), fd);
	close(fd);
	/* Another build-id than the one asked for. */
	fd = open_ro(progz);
	CHECK_EQ_INT(debugcache__swap(c, fd, bids[0]), fd);
	CHECK_EQ_INT(debugcache__swap(c, fd, ""), fd);
	close(fd);
	/* Not ours alone: another owner, or writable by others. */
	for (int k = 0; k < 2; k++) {
		snprintf(other, sizeof(other), "%s/t.z.%d", dir, k);
		CHECK(sh(k ? "cp %s %s && chmod 0666 %s" : "cp %s %s && chown 65534 %s", progz, other, other));
		fd = open_ro(other);
		CHECK_EQ_INT(debugcache__swap(c, fd, plain_bid), fd);
		close(fd);
	}
	/* No cache: the file itself. */
	fd = open_ro(progz);
	CHECK_EQ_INT(debugcache__swap(NULL, fd, plain_bid), fd);
	close(fd);
	debugcache__stats(c, &st);
	CHECK(st.made == 0 && st.reused == 0 && st.failed == 0);
	CHECK(stat(cdir, &sb) != 0); /* not even made */
	debugcache__free(c);
	/* Less compressed than the minimum. */
	snprintf(other, sizeof(other), "%s/c3min", dir);
	CHECK((c = debugcache__new_at(other, DEBUGCACHE_MAX_BYTES, 1u << 30)));
	fd = open_ro(progz);
	CHECK_EQ_INT(debugcache__swap(c, fd, plain_bid), fd);
	close(fd);
	debugcache__free(c);
	/* A copy bigger than half the bound. */
	CHECK((c = debugcache__new_at(other, 1024, 0)));
	fd = open_ro(progz);
	CHECK_EQ_INT(debugcache__swap(c, fd, plain_bid), fd);
	close(fd);
	debugcache__free(c);
	return true;
}

/* The directory must be ours alone and reached without a link. */
static bool refused_dirs(void)
{
	static const char *const how[] = { "chmod 0777 %s", "chmod 0720 %s", "chown 65534 %s" };
	struct debugcache_stats st;
	char cdir[160], link[192];

	for (size_t i = 0; i < sizeof(how) / sizeof(*how); i++) {
		struct debugcache *c;
		char name[16];
		int fd;

		snprintf(name, sizeof(name), "r%zu", i);
		snprintf(cdir, sizeof(cdir), "%s/%s", dir, name);
		CHECK(mkdir(cdir, 0700) == 0);
		CHECK(sh(how[i], cdir));
		CHECK((c = debugcache__new_at(cdir, DEBUGCACHE_MAX_BYTES, 0)));
		fd = open_ro(progz);
		CHECK_EQ_INT(debugcache__swap(c, fd, plain_bid), fd);
		close(fd);
		debugcache__stats(c, &st);
		CHECK_EQ_INT(st.refused, EPERM);
		CHECK(sh("test -z \"$(ls -A %s)\"", cdir));
		debugcache__free(c);
	}
	snprintf(cdir, sizeof(cdir), "%s/target", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	CHECK(mkdir(cdir, 0700) == 0 && symlink(cdir, link) == 0);
	struct debugcache *c = debugcache__new_at(link, DEBUGCACHE_MAX_BYTES, 0);
	int fd = open_ro(progz);

	CHECK(c);
	CHECK_EQ_INT(debugcache__swap(c, fd, plain_bid), fd);
	close(fd);
	debugcache__stats(c, &st);
	CHECK(st.refused == ELOOP || st.refused == ENOTDIR);
	CHECK(sh("test -z \"$(ls -A %s)\"", cdir));
	debugcache__free(c);
	return true;
}

/* A copy cut short, or a link put in its place, is made again. */
static bool damaged_copies(void)
{
	static const char *const damage[] = {
		"truncate -s 3000 %s", "truncate -s 0 %s", "ln -sf /etc/passwd %s",
		NULL, /* another program's uncompressed bytes (below) */
		/* the biggest section's offset past the end (ELF64 headers) */
		"python3 -c 'import struct,sys\n"
		"f=open(sys.argv[1],\"r+b\"); b=f.read()\n"
		"so,=struct.unpack_from(\"<Q\",b,0x28); es,n=struct.unpack_from(\"<HH\",b,0x3a)\n"
		"i=max(range(1,n),key=lambda i:struct.unpack_from(\"<Q\",b,so+i*es+0x20)[0])\n"
		"f.seek(so+i*es+0x18); f.write(struct.pack(\"<Q\",1<<40))' %s",
	};
	char cdir[160], copy[256];
	struct debugcache *c = fresh("c4", cdir, sizeof(cdir), DEBUGCACHE_MAX_BYTES);
	struct debugcache_stats st;
	int fd, got;

	CHECK(c);
	fd = open_ro(progz);
	CHECK((got = debugcache__swap(c, fd, plain_bid)) != fd);
	close(got);
	snprintf(copy, sizeof(copy), "%s/%s.debug", cdir, plain_bid);
	for (size_t i = 0; i < sizeof(damage) / sizeof(*damage); i++) {
		if (i == 3)
			CHECK(sh("cp %s/v1 %s", dir, copy));
		else
			CHECK(sh(damage[i], copy));
		fd = open_ro(progz);
		CHECK((got = debugcache__swap(c, fd, plain_bid)) != fd);
		struct dwarfobj *d = dwarf__open_fd(got);
		struct dwarf_frame f[4];
		uint64_t addr, size;

		CHECK(d);
		CHECK(nm_sym(prog, "outer", &addr, &size));
		int n = dwarf__lookup(d, addr, f, 4);

		CHECK(n >= 1 && !strcmp(f[n - 1].name, "outer"));
		dwarf__free(d);
		debugcache__stats(c, &st);
		CHECK_EQ_INT(st.failed, (long long)i + 1);
		CHECK_EQ_INT(st.made, (long long)i + 2);
		CHECK(sh("test -f %s && ! test -L %s", copy, copy));
	}
	debugcache__free(c);
	return true;
}

/* Over the bound, the least recently used copies go, the one just made
 * stays; abandoned temporaries go, a recent one stays. */
static bool bounded(void)
{
	char cdir[160], path[256];
	struct debugcache *c;
	struct debugcache_stats st;
	struct stat sb;
	uint64_t one;
	int fd, got;

	/* The size of one copy on disk, from a first cache. */
	CHECK((c = fresh("c5", cdir, sizeof(cdir), DEBUGCACHE_MAX_BYTES)));
	fd = open_ro(progs[0]);
	CHECK((got = debugcache__swap(c, fd, bids[0])) != fd);
	close(got);
	debugcache__free(c);
	snprintf(path, sizeof(path), "%s/%s.debug", cdir, bids[0]);
	CHECK(stat(path, &sb) == 0);
	one = (uint64_t)sb.st_blocks * 512;
	CHECK(sh("touch -d '2 hours ago' %s", path));
	CHECK(sh("touch -d '2 hours ago' %s/.stale.debug.1.tmp && touch %s/.fresh.debug.2.tmp", cdir, cdir));
	/* Room for two and a half copies: the third makes the first go. */
	CHECK((c = debugcache__new_at(cdir, one * 5 / 2, 0)));
	for (int v = 1; v < 3; v++) {
		fd = open_ro(progs[v]);
		CHECK((got = debugcache__swap(c, fd, bids[v])) != fd);
		close(got);
		if (v == 1)
			CHECK(sh("touch -d '1 hour ago' %s/%s.debug", cdir, bids[1]));
	}
	debugcache__stats(c, &st);
	CHECK_EQ_INT(st.made, 2);
	CHECK(st.evicted >= 1);
	CHECK(stat(path, &sb) != 0); /* the oldest */
	snprintf(path, sizeof(path), "%s/%s.debug", cdir, bids[2]);
	CHECK(stat(path, &sb) == 0); /* the newest */
	CHECK(sh("! test -e %s/.stale.debug.1.tmp && test -e %s/.fresh.debug.2.tmp", cdir, cdir));
	debugcache__free(c);
	return true;
}

static bool environment(void)
{
	char cdir[160];
	struct debugcache *c;
	struct debugcache_stats st;
	int fd, got;

	setenv("PMUBPF_DEBUG_CACHE", "0", 1);
	CHECK(!debugcache__new());
	snprintf(cdir, sizeof(cdir), "%s/env", dir);
	setenv("PMUBPF_DEBUG_CACHE", cdir, 1);
	CHECK((c = debugcache__new()));
	fd = open_ro(progz); /* a few KiB compressed: under the default minimum */
	CHECK_EQ_INT(debugcache__swap(c, fd, plain_bid), fd);
	close(fd);
	debugcache__stats(c, &st);
	CHECK_EQ_INT(st.made, 0);
	debugcache__free(c);
	unsetenv("PMUBPF_DEBUG_CACHE");
	CHECK((c = debugcache__new()));
	debugcache__free(c);
	(void)got;
	return true;
}

static bool cleanup(void)
{
	CHECK(sh("rm -rf %s", dir));
	return true;
}

TEST_MAIN("debugcache", TEST(setup), TEST(made_then_reused), TEST(same_answers), TEST(left_alone),
	  TEST(refused_dirs), TEST(damaged_copies), TEST(bounded), TEST(environment), TEST(cleanup))
