/* test_debuginfo.c — unit tests of user/debuginfo.c.
 *
 * Builds a program with gcc -O1 -g, splits it the way distributions do
 * (objcopy --only-keep-debug, strip, --add-gnu-debuglink) and checks each
 * way to find the debug file: by build-id under an extra directory, by
 * debuglink next to the binary and in .debug/ (and a wrong CRC refused),
 * and MiniDebugInfo (xz'ed .symtab in .gnu_debugdata); each time the
 * static function, absent from the stripped binary, must be named.
 */
#include "symbols/debuginfo.h"
#include "symbols/elfsym.h"
#include "fixtures.h"
#include "testing.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char dir[64];

static const char src[] =
	"__attribute__((noinline)) static int hidden_static(int x) { return x * 7 + 3; }\n"
	"int main(int argc, char **argv) { (void)argv; return hidden_static(argc); }\n";

static bool nm_addr(const char *path, const char *name, uint64_t *addr)
{
	char cmd[512], line[512], n[256];
	unsigned long long a;
	char t;
	FILE *f;
	bool ok = false;

	snprintf(cmd, sizeof(cmd), "nm %s", path);
	if (!(f = popen(cmd, "r")))
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &t, n) == 3 && !strcmp(n, name)) {
			*addr = a;
			ok = true;
		}
	pclose(f);
	return ok;
}

static uint64_t hidden; /* hidden_static's address */
static char bid[128];

static bool setup(void)
{
	FILE *f;
	char path[128];

	snprintf(dir, sizeof(dir), "/tmp/pmubpf-test-dbg.XXXXXX");
	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.c", dir);
	CHECK((f = fopen(path, "w")) && fputs(src, f) >= 0 && fclose(f) == 0);
	CHECK(sh("cd %s && gcc -O1 -g -Wl,--build-id -o prog p.c && "
		 "objcopy --only-keep-debug prog prog.debug && "
		 "strip --strip-all -o stripped prog && "
		 "objcopy --add-gnu-debuglink=prog.debug stripped", dir));
	snprintf(path, sizeof(path), "%s/prog", dir);
	CHECK(nm_addr(path, "hidden_static", &hidden));
	snprintf(path, sizeof(path), "readelf -n %s/prog | awk '/Build ID/ {print $3}'", dir);
	CHECK((f = popen(path, "r")) && fscanf(f, "%127s", bid) == 1);
	pclose(f);
	return true;
}

/* Symbol name of hidden for the binary at rel (inside dir), noted as if
 * mapped from path bindir/rel, with extra debug dirs. */
static const char *name_via(const char *rel, const char *const *dirs, int ndirs,
			    struct debuginfo_stats *st, bool *has_dwarf)
{
	static char out[128];
	char path[256];
	struct symcache *c = symcache__new();
	struct debuginfo *dbg = debuginfo__new(dirs, ndirs);
	struct elfobj *o;
	const struct elfsym *s;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	o = symcache__get_path(c, path);
	out[0] = '\0';
	if (o && dbg) {
		debuginfo__note(dbg, o, open(path, O_RDONLY | O_CLOEXEC), 0, path, false);
		s = debuginfo__symbol(o, hidden);
		snprintf(out, sizeof(out), "%s", s ? s->name : "");
		*has_dwarf = debuginfo__dwarf(o) != NULL;
		debuginfo__stats(dbg, st);
	}
	symcache__free(c);
	debuginfo__free(dbg);
	return out;
}

static bool stripped_alone(void)
{
	struct debuginfo_stats st;
	bool dw = true;

	/* prog.debug sits next to it: move it away for this one. */
	CHECK(sh("cd %s && mkdir -p alone && cp stripped alone/", dir));
	CHECK(strcmp(name_via("alone/stripped", NULL, 0, &st, &dw), "hidden_static"));
	CHECK(!dw);
	return true;
}

static bool by_build_id_dir(void)
{
	struct debuginfo_stats st;
	char d[128];
	const char *dirs[] = { d };
	bool dw = false;

	snprintf(d, sizeof(d), "%s/dbg", dir);
	CHECK(sh("mkdir -p %s/.build-id/%.2s && cp %s/prog.debug %s/.build-id/%.2s/%s.debug",
		 d, bid, dir, d, bid, bid + 2));
	CHECK_STR(name_via("alone/stripped", dirs, 1, &st, &dw), "hidden_static");
	CHECK(dw);
	CHECK_EQ_INT(st.by_build_id, 1);
	return true;
}

static bool by_debuglink(void)
{
	struct debuginfo_stats st;
	bool dw = false;

	/* Next to the binary. */
	CHECK_STR(name_via("stripped", NULL, 0, &st, &dw), "hidden_static");
	CHECK(dw);
	CHECK_EQ_INT(st.by_debuglink, 1);
	/* In .debug/ beside it. */
	CHECK(sh("cd %s && mkdir -p dd/.debug && cp stripped dd/ && cp prog.debug dd/.debug/", dir));
	CHECK_STR(name_via("dd/stripped", NULL, 0, &st, &dw), "hidden_static");
	CHECK_EQ_INT(st.by_debuglink, 1);
	/* A file of that name with another CRC is refused. */
	CHECK(sh("cd %s && mkdir -p bad && cp stripped bad/ && cp prog.debug bad/prog.debug && "
		 "printf x >> bad/prog.debug", dir));
	CHECK(strcmp(name_via("bad/stripped", NULL, 0, &st, &dw), "hidden_static"));
	CHECK(st.crc_mismatch >= 1);
	return true;
}

static bool minidebuginfo(void)
{
	struct debuginfo_stats st;
	bool dw = true;

	CHECK(sh("cd %s && objcopy --strip-debug prog.debug mini.elf && xz -c mini.elf > mini.xz && "
		 "mkdir -p mdi && objcopy --add-section .gnu_debugdata=mini.xz alone/stripped mdi/m", dir));
	CHECK_STR(name_via("mdi/m", NULL, 0, &st, &dw), "hidden_static");
	CHECK(!dw);
	CHECK_EQ_INT(st.minidebuginfo, 1);
	return true;
}

static bool unxz_hostile(void)
{
	size_t n = 0;
	unsigned char junk[64] = "\xfd" "7zXZ";

	errno = 0;
	CHECK(!debuginfo__unxz(junk, sizeof(junk), &n));
	CHECK(!debuginfo__unxz("", 0, &n));
	return true;
}

static bool file_crc(void)
{
	char path[128];
	uint32_t crc = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/crc", dir);
	CHECK(sh("printf 'hello world' > %s", path));
	CHECK((fd = open(path, O_RDONLY)) >= 0);
	CHECK_EQ_INT(debuginfo__file_crc(fd, &crc), 0);
	close(fd);
	CHECK_EQ_INT(crc, 0x0d4a1185); /* CRC-32 of "hello world" */
	return true;
}

static bool cleanup(void)
{
	return sh("rm -rf %s", dir);
}

TEST_MAIN("debuginfo", TEST(setup), TEST(stripped_alone), TEST(by_build_id_dir),
	  TEST(by_debuglink), TEST(minidebuginfo), TEST(unxz_hostile), TEST(file_crc),
	  TEST(cleanup))
