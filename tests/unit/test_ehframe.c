/* test_ehframe.c — unit tests of user/ehframe.c and user/ehframe_elf.c.
 *
 * The reference is binutils: for each object, `readelf
 * --debug-dump=frames-interp` prints every FDE's table of rules; every
 * row it prints (CFA, rbp, return address) must be what our compact
 * table answers for that pc. Objects: libc, ld.so, libstdc++ (zPLR
 * CIEs), libgcc_s, python3 if present, the vDSO (dumped from memory),
 * and programs compiled here without frame pointers, with -O0 (rbp-based
 * CFA), with only .debug_frame, and with a compressed .debug_frame.
 * Hand-assembled CFI checks encodings and opcodes one by one, and
 * mutated copies of libc's .eh_frame check that hostile bytes are
 * survived.
 */
#include "ehframe.h"
#include "testing.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
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
	CHECK(readelf_ok("/lib/x86_64-linux-gnu/libc.so.6", 1000));
	return true;
}

static bool ldso_matches_readelf(void)
{
	CHECK(readelf_ok("/lib64/ld-linux-x86-64.so.2", 100));
	return true;
}

static bool libstdcxx_matches_readelf(void)
{
	const char *p = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";

	if (access(p, R_OK))
		SKIP("no libstdc++");
	CHECK(readelf_ok(p, 1000));
	return true;
}

static bool libgcc_matches_readelf(void)
{
	const char *p = "/lib/x86_64-linux-gnu/libgcc_s.so.1";

	if (access(p, R_OK))
		SKIP("no libgcc_s");
	CHECK(readelf_ok(p, 50));
	return true;
}

static bool python_matches_readelf(void)
{
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

/* ---- hand-assembled CFI ------------------------------------------------ */

struct buf {
	uint8_t b[512];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}
static void put8(struct buf *b, uint8_t v) { put(b, &v, 1); }
static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }

/* Entry: length placeholder, returns its offset; end fixes it (padded
 * with nops to 4). */
static size_t begin(struct buf *b) { size_t o = b->n; put32(b, 0); return o; }
static void end(struct buf *b, size_t o)
{
	while ((b->n - o) % 4)
		put8(b, 0);
	uint32_t len = (uint32_t)(b->n - o - 4);
	memcpy(b->b + o, &len, 4);
}

static const char *rule_at(const struct ehf_table *t, uint64_t pc, char *s)
{
	const struct pmubpf_urow *r = ehf__lookup(t, pc);

	if (!r)
		return "(no row)";
	ehf__rule_str(r->rule, s, 48);
	return s;
}

#define SEC_VADDR 0x2000ULL
#define FN 0x1000ULL

/* CIE "zR" (or "zRS") with FDE encoding enc, then one FDE for
 * [FN, FN + 0x40) with instructions ins. */
static void make_cfi(struct buf *b, uint8_t enc, const char *aug, const uint8_t *ins, size_t nins)
{
	size_t c = begin(b);
	put32(b, 0);               /* CIE id */
	put8(b, 1);                /* version */
	put(b, aug, strlen(aug) + 1);
	put8(b, 1);                /* code align */
	put8(b, 0x78);             /* data align -8 */
	put8(b, 16);               /* ra */
	put8(b, 1);                /* aug length */
	put8(b, enc);
	put8(b, 0x0c); put8(b, 7); put8(b, 8); /* def_cfa rsp+8 */
	put8(b, 0x90); put8(b, 1);             /* ra at cfa-8 */
	end(b, c);
	size_t f = begin(b);
	put32(b, (uint32_t)(b->n - c));        /* CIE pointer */
	if ((enc & 0x70) == 0x10) {            /* pcrel sdata4 */
		put32(b, (uint32_t)(FN - (SEC_VADDR + b->n)));
		put32(b, 0x40);
	} else if ((enc & 0x0f) == 0x01) {     /* uleb128 (datarel base 0x800) */
		put8(b, 0x80 | ((FN - 0x800) & 0x7f)); put8(b, (uint8_t)((FN - 0x800) >> 7));
		put8(b, 0x40);
	} else {                               /* udata4, datarel */
		put32(b, (uint32_t)(FN - 0x800));
		put32(b, 0x40);
	}
	put8(b, 0);                            /* aug length */
	put(b, ins, nins);
	end(b, f);
	put32(b, 0);                           /* terminator */
}

static bool build_buf(const struct buf *b, struct ehf_table *t)
{
	struct ehf_input in = { .eh_frame = { b->b, b->n, SEC_VADDR }, .datarel_base = 0x800 };

	return ehf__build(&in, t) == 0;
}

static bool synthetic_opcodes(void)
{
	static const uint8_t ins[] = {
		0x41, 0x0e, 16, 0x86, 2,   /* +1: cfa rsp+16, rbp at c-16 */
		0x43, 0x0d, 6,             /* +4: cfa rbp+16 */
		0x0a,                      /* remember */
		0x4a, 0x0c, 7, 8,          /* +14: cfa rsp+8 */
		0xc6,                      /* restore rbp: unchanged */
		0x41, 0x0b,                /* +15: restore_state: rbp+16, c-16 */
		0x02, 5, 0x2e, 8,          /* +20: args_size (ignored) */
		0x11, 6, 0x7c,             /* rbp at c+32 (sf: -4 * -8) */
		0x03, 4, 0, 0x13, 0x7e,    /* +24: cfa_offset_sf -2 * -8 = 16 */
		0x04, 2, 0, 0, 0, 0x07, 16,/* +26: ra undefined: end */
	};
	struct buf b = { .n = 0 };
	struct ehf_table t;
	char s[48];

	make_cfi(&b, 0x1b, "zR", ins, sizeof(ins));
	CHECK(build_buf(&b, &t));
	CHECK_EQ_INT(t.st.fdes, 1);
	CHECK_STR(rule_at(&t, FN, s), "rsp+8");
	CHECK_STR(rule_at(&t, FN + 1, s), "rsp+16 rbp=c-16");
	CHECK_STR(rule_at(&t, FN + 3, s), "rsp+16 rbp=c-16");
	CHECK_STR(rule_at(&t, FN + 4, s), "rbp+16 rbp=c-16");
	CHECK_STR(rule_at(&t, FN + 14, s), "rsp+8");
	CHECK_STR(rule_at(&t, FN + 15, s), "rbp+16 rbp=c-16");
	CHECK_STR(rule_at(&t, FN + 20, s), "rbp+16 rbp=c+32");
	CHECK_STR(rule_at(&t, FN + 24, s), "rbp+16 rbp=c+32");
	CHECK_STR(rule_at(&t, FN + 26, s), "end");
	CHECK_STR(rule_at(&t, FN + 0x3f, s), "end");
	CHECK_STR(rule_at(&t, FN + 0x40, s), "none");
	CHECK_STR(rule_at(&t, FN - 1, s), "(no row)");
	ehf__free(&t);
	return true;
}

static bool synthetic_encodings(void)
{
	static const uint8_t ins[] = { 0x41, 0x0e, 16 };
	static const uint8_t encs[] = { 0x1b /* pcrel sdata4 */, 0x33 /* datarel udata4 */,
					0x31 /* datarel uleb128 */, 0x3b /* datarel sdata4 */ };
	char s[48];

	for (size_t i = 0; i < sizeof(encs); i++) {
		struct buf b = { .n = 0 };
		struct ehf_table t;

		make_cfi(&b, encs[i], "zR", ins, sizeof(ins));
		CHECK(build_buf(&b, &t));
		CHECK_EQ_INT(t.st.fdes, 1);
		CHECK_EQ_INT(t.base, FN);
		CHECK_STR(rule_at(&t, FN + 1, s), "rsp+16");
		ehf__free(&t);
	}
	return true;
}

static bool synthetic_plt_and_signal(void)
{
	static const uint8_t plt[] = {
		0x0e, 16, 0x46, 0x0e, 24, 0x4a,
		0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22,
	};
	static const uint8_t sig[] = {
		0x0f, 4, 0x77, 0xa0, 0x01, 0x06,     /* cfa = *(rsp + 160) */
		0x10, 6, 3, 0x77, 0xf8, 0x00,        /* rbp at rsp + 120 */
		0x10, 16, 3, 0x77, 0xa8, 0x01,       /* rip at rsp + 168 */
	};
	static const uint8_t other[] = { 0x0f, 2, 0x76, 0x78 }; /* cfa = rbp - 8 */
	struct buf b = { .n = 0 };
	struct ehf_table t;
	char s[48];

	make_cfi(&b, 0x1b, "zR", plt, sizeof(plt));
	CHECK(build_buf(&b, &t));
	CHECK_STR(rule_at(&t, FN + 6, s), "rsp+24");
	CHECK_STR(rule_at(&t, FN + 16, s), "plt+8/11");
	CHECK_EQ_INT(t.st.plt, 1);
	ehf__free(&t);

	b.n = 0;
	make_cfi(&b, 0x1b, "zRS", sig, sizeof(sig));
	CHECK(build_buf(&b, &t));
	CHECK_STR(rule_at(&t, FN, s), "signal");
	ehf__free(&t);

	b.n = 0; /* the same without 'S': not trusted as a signal frame */
	make_cfi(&b, 0x1b, "zR", sig, sizeof(sig));
	CHECK(build_buf(&b, &t));
	CHECK_STR(rule_at(&t, FN, s), "unsupported");
	ehf__free(&t);

	b.n = 0;
	make_cfi(&b, 0x1b, "zR", other, sizeof(other));
	CHECK(build_buf(&b, &t));
	CHECK_STR(rule_at(&t, FN, s), "unsupported");
	CHECK_EQ_INT(t.st.unsupported, 1);
	ehf__free(&t);
	return true;
}

static bool synthetic_malformed(void)
{
	static const uint8_t bad_op[] = { 0x41, 0x3f }; /* unknown opcode */
	static const uint8_t past[] = { 0x0b };         /* restore_state, empty */
	struct buf b = { .n = 0 };
	struct ehf_table t;

	make_cfi(&b, 0x1b, "zR", bad_op, sizeof(bad_op));
	CHECK(build_buf(&b, &t));
	CHECK_EQ_INT(t.n, 0);
	CHECK_EQ_INT(t.st.bad_entries, 1);
	ehf__free(&t);
	b.n = 0;
	make_cfi(&b, 0x1b, "zR", past, sizeof(past));
	CHECK(build_buf(&b, &t));
	CHECK_EQ_INT(t.st.bad_entries, 1);
	ehf__free(&t);
	/* Every truncation of a valid section. */
	b.n = 0;
	make_cfi(&b, 0x1b, "zR", past, 0);
	for (size_t n = 0; n < b.n; n++) {
		struct buf c = b;

		c.n = n;
		CHECK(build_buf(&c, &t));
		ehf__free(&t);
	}
	return true;
}

/* libc's .eh_frame with random bytes changed: no crash, no hang. */
static bool mutated_libc(void)
{
	int fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	uint8_t *copy = NULL;
	size_t len = 0, shstrndx;
	uint64_t vaddr = 0;

	if (fd < 0)
		SKIP("no libc");
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(e && !elf_getshdrstrndx(e, &shstrndx));
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(n, ".eh_frame")) {
			Elf_Data *d = elf_getdata(scn, NULL);

			CHECK(d && d->d_size);
			copy = malloc(d->d_size);
			CHECK(copy);
			memcpy(copy, d->d_buf, d->d_size);
			len = d->d_size;
			vaddr = sh.sh_addr;
		}
	}
	elf_end(e);
	close(fd);
	CHECK(copy);
	srand(42);
	uint8_t *m = malloc(len);
	CHECK(m);
	for (int round = 0; round < 150; round++) {
		struct ehf_table t;

		memcpy(m, copy, len);
		for (int k = 0; k < 1 + round % 40; k++)
			m[(size_t)rand() % len] = (uint8_t)rand();
		struct ehf_input in = { .eh_frame = { m, len - (size_t)(round % 7) * 3, vaddr } };
		CHECK(ehf__build(&in, &t) == 0);
		ehf__free(&t);
	}
	free(m);
	free(copy);
	return true;
}

static bool not_x86_or_not_elf(void)
{
	struct ehf_table t;
	static const char junk[] = "not an ELF file at all, just text";

	CHECK_EQ_INT(ehf__build_mem(junk, sizeof(junk), &t), -ENOEXEC);
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
	  TEST(synthetic_opcodes),
	  TEST(synthetic_encodings),
	  TEST(synthetic_plt_and_signal),
	  TEST(synthetic_malformed),
	  TEST(not_x86_or_not_elf),
	  TEST(libc_matches_readelf),
	  TEST(ldso_matches_readelf),
	  TEST(libstdcxx_matches_readelf),
	  TEST(libgcc_matches_readelf),
	  TEST(python_matches_readelf),
	  TEST(vdso_matches_readelf),
	  TEST(compiled_programs_match),
	  TEST(debug_frame_only),
	  TEST(mutated_libc),
	  TEST(teardown))
