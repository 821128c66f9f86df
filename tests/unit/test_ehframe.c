/* test_ehframe.c — unit tests of user/ehframe.c and user/ehframe_elf.c.
 *
 * The reference is binutils: for each object, `readelf
 * --debug-dump=frames-interp` prints every FDE's table of rules; every
 * row it prints (CFA, rbp, return address) must be what our compact
 * table answers for that pc. Objects: libc, ld.so, libstdc++ (zPLR
 * CIEs), libgcc_s, python3 if present, the vDSO (dumped from memory),
 * and programs compiled here without frame pointers, with -O0 (rbp-based
 * CFA), with only .debug_frame, and with a compressed .debug_frame.
 * Hand-assembled CFI and hostile bytes: test_ehframe_synth.c.
 */
#include "unwind/ehframe.h"
#include "testing.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

static char dir[64];

static bool sh(const char *cmd)
{
	return system(cmd) == 0;
}

/* ---- readelf comparison ---------------------------------------------- */

/* What the rule should be, in ehf__rule_str's words, from readelf's
 * columns; "exp" accepts any expression kind. */
static void expect_rule(const char *cfa, const char *rbp, const char *ra, char *buf, size_t len)
{
	char r[24] = "";
	unsigned off;

	if (!strcmp(ra, "u")) {
		snprintf(buf, len, "end");
		return;
	}
	if (!strcmp(cfa, "exp")) {
		snprintf(buf, len, "exp");
		return;
	}
	if (strcmp(ra, "c-8")) {
		snprintf(buf, len, "unsupported");
		return;
	}
	if (rbp && rbp[0] == 'c') {
		int o = atoi(rbp + 1);

		if (o % 8 || o == 0 || o / 8 < -128 || o / 8 > 127) {
			snprintf(buf, len, "unsupported");
			return;
		}
		snprintf(r, sizeof(r), " rbp=c%+d", o);
	} else if (rbp && strcmp(rbp, "u") && strcmp(rbp, "s")) {
		snprintf(buf, len, "unsupported");
		return;
	}
	if (sscanf(cfa, "rsp+%u", &off) == 1 && off <= PMUBPF_UW_CFA_OFF_MAX)
		snprintf(buf, len, "rsp+%u%s", off, r);
	else if (sscanf(cfa, "rbp+%u", &off) == 1 && off <= PMUBPF_UW_CFA_OFF_MAX)
		snprintf(buf, len, "rbp+%u%s", off, r);
	else
		snprintf(buf, len, "unsupported");
}

struct cmp_stats {
	unsigned fdes, rows, mismatches;
};

static bool check_row(const struct ehf_table *t, unsigned long loc, const char *want,
		      struct cmp_stats *cs, const char *what)
{
	const struct pmubpf_urow *row = ehf__lookup(t, loc);
	char got[48] = "(no row)";

	cs->rows++;
	if (row)
		ehf__rule_str(row->rule, got, sizeof(got));
	bool ok = !strcmp(want, "exp") ? row && (!strncmp(got, "plt", 3) || !strcmp(got, "signal") ||
						   !strcmp(got, "unsupported"))
				       : !strcmp(got, want);
	if (!ok && cs->mismatches++ < 5)
		printf("  %s: pc %#lx: readelf says %s, table says %s\n", what, loc, want, got);
	return ok;
}

/* Compare the table of path with readelf. sections: "eh" (only
 * .eh_frame), "debug" (only .debug_frame). */
static bool compare_readelf(const char *path, const char *section, struct cmp_stats *cs)
{
	char cmd[512], line[1024], cols[16][16];
	int ncols = 0;
	unsigned long fde_hi = 0, pend_loc = 0;
	bool in_sec = false, in_fde = false, have_pend = false;
	char pend[48] = "";
	struct ehf_table t;
	int fd = open(path, O_RDONLY);

	memset(cs, 0, sizeof(*cs));
	if (fd < 0)
		return false;
	int err = ehf__build_fd(fd, &t);
	close(fd);
	if (err) {
		printf("  ehf__build_fd(%s): %s\n", path, strerror(-err));
		return false;
	}
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	FILE *f = popen(cmd, "r");
	if (!f) {
		ehf__free(&t);
		return false;
	}
#define FLUSH_PEND() do { if (have_pend && pend_loc < fde_hi) check_row(&t, pend_loc, pend, cs, path); \
	have_pend = false; } while (0)
	/* An FDE readelf prints no rows for has the CIE's rules, unless it
	 * only changed a rule without advancing (readelf then prints
	 * nothing): unknowable from this output, so not checked. */
#define END_FDE() do { FLUSH_PEND(); in_fde = false; } while (0)
	while (fgets(line, sizeof(line), f)) {
		unsigned long off, a, b, c;
		char kind[8];

		if (!strncmp(line, "Contents of the ", 16)) {
			END_FDE();
			in_sec = strstr(line, section[0] == 'e' ? ".eh_frame " : ".debug_frame ") != NULL;
			continue;
		}
		if (!in_sec)
			continue;
		if (sscanf(line, "%lx %lx %lx %7s", &off, &a, &b, kind) == 4 && !strcmp(kind, "CIE")) {
			END_FDE();
			continue;
		}
		unsigned long lo, hi;
		if (sscanf(line, "%lx %lx %lx FDE cie=%lx pc=%lx..%lx", &off, &a, &b, &c, &lo, &hi) == 6) {
			END_FDE();
			(void)lo;
			fde_hi = hi;
			in_fde = true;
			cs->fdes++;
			continue;
		}
		if (strstr(line, "   LOC ")) {
			char *save = NULL, *tok = strtok_r(line, " \n", &save);

			ncols = 0;
			while (tok && ncols < 16) {
				snprintf(cols[ncols++], sizeof(cols[0]), "%s", tok);
				tok = strtok_r(NULL, " \n", &save);
			}
			continue;
		}
		char *save = NULL, *tok = strtok_r(line, " \n", &save), *vals[16];
		int nv = 0;
		while (tok && nv < 16) {
			vals[nv++] = tok;
			tok = strtok_r(NULL, " \n", &save);
		}
		if (nv < 2 || nv != ncols || strlen(vals[0]) != 16 || !ncols)
			continue;
		const char *cfa = NULL, *rbp = NULL, *ra = NULL;
		for (int i = 1; i < nv; i++) {
			if (!strcmp(cols[i], "CFA"))
				cfa = vals[i];
			else if (!strcmp(cols[i], "rbp"))
				rbp = vals[i];
			else if (!strcmp(cols[i], "ra"))
				ra = vals[i];
		}
		if (!cfa || !ra)
			continue;
		char want[48];
		expect_rule(cfa, rbp, ra, want, sizeof(want));
		if (!in_fde)
			continue;
		unsigned long loc = strtoul(vals[0], NULL, 16);
		if (have_pend && pend_loc != loc)
			FLUSH_PEND();
		/* same loc again: the later row wins, as in our table */
		snprintf(pend, sizeof(pend), "%s", want);
		pend_loc = loc;
		have_pend = true;
	}
	END_FDE();
	pclose(f);
	ehf__free(&t);
	if (cs->mismatches)
		printf("  %s: %u of %u rows differ\n", path, cs->mismatches, cs->rows);
	return cs->mismatches == 0 && cs->fdes > 0;
}

/* The parser reads x86-64 objects only (ehf__build_fd: -ENOTSUP else). */
#if defined(__x86_64__)
#define NEED_X86_64() do { } while (0)
#else
#define NEED_X86_64() SKIP("x86-64 objects only")
#endif

static bool readelf_ok(const char *path, unsigned min_fdes)
{
	struct cmp_stats cs;

	if (access(path, R_OK))
		return false;
	if (!compare_readelf(path, "eh", &cs))
		return false;
	printf("  %s: %u FDEs, %u rows agree with readelf\n", path, cs.fdes, cs.rows);
	return cs.fdes >= min_fdes;
}

static bool libc_matches_readelf(void)
{
	NEED_X86_64();
	CHECK(readelf_ok("/lib/x86_64-linux-gnu/libc.so.6", 1000));
	return true;
}

static bool ldso_matches_readelf(void)
{
	NEED_X86_64();
	CHECK(readelf_ok("/lib64/ld-linux-x86-64.so.2", 100));
	return true;
}

static bool libstdcxx_matches_readelf(void)
{
	NEED_X86_64();
	const char *p = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";

	if (access(p, R_OK))
		SKIP("no libstdc++");
	CHECK(readelf_ok(p, 1000));
	return true;
}

static bool libgcc_matches_readelf(void)
{
	NEED_X86_64();
	const char *p = "/lib/x86_64-linux-gnu/libgcc_s.so.1";

	if (access(p, R_OK))
		SKIP("no libgcc_s");
	CHECK(readelf_ok(p, 50));
	return true;
}

static bool python_matches_readelf(void)
{
	NEED_X86_64();
	const char *p = "/usr/bin/python3.11";

	if (access(p, R_OK))
		SKIP("no python3.11");
	CHECK(readelf_ok(p, 1000));
	return true;
}

static const char prog_src[] =
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }\n"
	"__attribute__((noinline)) int big(int n) { char buf[70000]; memset(buf, n, sizeof(buf));"
	" return buf[n % 70000] + buf[7]; }\n"
	"__attribute__((noinline)) int aligned(int n) { int v[64] __attribute__((aligned(64)));"
	" for (int i = 0; i < 64; i++) v[i] = n * i; qsort(v, 64, sizeof(int), cmp); return v[3]; }\n"
	"int main(int argc, char **argv) { (void)argv; return big(argc) + aligned(argc); }\n";

static bool compile_ok(const char *compiler, const char *flags, const char *out)
{
	char cmd[1024], src[128];
	FILE *f;

	snprintf(src, sizeof(src), "%s/prog.c", dir);
	f = fopen(src, "w");
	if (!f)
		return false;
	fputs(prog_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s %s %s -o %s/%s 2>/dev/null", compiler, flags, src, dir, out);
	return sh(cmd);
}

static bool compiled_programs_match(void)
{
	NEED_X86_64();
	static const struct { const char *cc, *flags, *out; } v[] = {
		{ "clang", "-O2 -fomit-frame-pointer -g", "nofp_clang" },
		{ "gcc", "-O2 -fomit-frame-pointer", "nofp_gcc" },
		{ "gcc", "-O0 -fno-omit-frame-pointer", "fp_gcc_O0" },
		{ "g++ -x c++", "-O2 -fexceptions", "cxx" },
	};
	char path[128];
	int built = 0;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (!compile_ok(v[i].cc, v[i].flags, v[i].out))
			continue;
		built++;
		snprintf(path, sizeof(path), "%s/%s", dir, v[i].out);
		CHECK(readelf_ok(path, 3));
	}
	if (!built)
		SKIP("no compiler");
	return true;
}

static bool debug_frame_only(void)
{
	NEED_X86_64();
	struct cmp_stats cs;
	char path[128];

	if (!compile_ok("gcc", "-O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables", "dbgframe"))
		SKIP("no gcc");
	snprintf(path, sizeof(path), "%s/dbgframe", dir);
	CHECK(compare_readelf(path, "debug", &cs));
	printf("  .debug_frame: %u FDEs, %u rows agree\n", cs.fdes, cs.rows);
	CHECK(cs.fdes >= 3);
	/* Compressed (zlib) .debug_frame: the same table. */
	char cmd[512], zpath[128];
	snprintf(zpath, sizeof(zpath), "%s/dbgframe.z", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib %s %s 2>/dev/null", path, zpath);
	if (!sh(cmd))
		SKIP("objcopy cannot compress");
	struct ehf_table a, b;
	int fa = open(path, O_RDONLY), fb = open(zpath, O_RDONLY);
	CHECK(fa >= 0 && fb >= 0);
	CHECK_EQ_INT(ehf__build_fd(fa, &a), 0);
	CHECK_EQ_INT(ehf__build_fd(fb, &b), 0);
	close(fa);
	close(fb);
	CHECK(a.n > 0);
	CHECK_EQ_INT(a.n, b.n);
	CHECK(!memcmp(a.rows, b.rows, a.n * sizeof(*a.rows)));
	ehf__free(&a);
	ehf__free(&b);
	return true;
}

static bool vdso_matches_readelf(void)
{
	NEED_X86_64();
	const uint8_t *vdso = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	struct cmp_stats cs;
	char path[128];
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo = 0, hi = 0;

	if (!vdso || !maps)
		SKIP("no vDSO");
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%lx-%lx", &lo, &hi);
	fclose(maps);
	CHECK(lo == (unsigned long)vdso && hi > lo);
	struct ehf_table t;
	CHECK_EQ_INT(ehf__build_mem(vdso, hi - lo, &t), 0);
	CHECK(t.n > 0);
	ehf__free(&t);
	snprintf(path, sizeof(path), "%s/vdso.so", dir);
	FILE *f = fopen(path, "w");
	CHECK(f && fwrite(vdso, 1, hi - lo, f) == hi - lo);
	fclose(f);
	CHECK(compare_readelf(path, "eh", &cs));
	printf("  vDSO: %u FDEs, %u rows agree\n", cs.fdes, cs.rows);
	return true;
}

static bool setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_ehframe.XXXXXX");
	return mkdtemp(dir) != NULL;
}

static bool teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return sh(cmd);
}

TEST_MAIN("ehframe",
	  TEST(setup),
	  TEST(libc_matches_readelf),
	  TEST(ldso_matches_readelf),
	  TEST(libstdcxx_matches_readelf),
	  TEST(libgcc_matches_readelf),
	  TEST(python_matches_readelf),
	  TEST(vdso_matches_readelf),
	  TEST(compiled_programs_match),
	  TEST(debug_frame_only),
	  TEST(teardown))
