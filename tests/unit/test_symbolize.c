/* test_symbolize.c — addresses to pprof locations (user/report/symbolize.c).
 *
 * User addresses of this test process (its own functions, libc's) against
 * a snapshot of itself; kernel addresses against a made-up kallsyms file;
 * and the addresses nothing names — in a file without symbols, in
 * anonymous memory, in no mapping, below the first kernel symbol — which
 * get "file+0xOFFSET" names so that viewers keep them, the address staying
 * in the location. --no-symbol keeps addresses only.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pprof/pprof.h"
#include "procs/procs.h"
#include "report/symbolize.h"
#include "symbols/elfsym.h"
#include "symbols/ksyms.h"
#include "testing.h"

/* libc's own qsort: under ASan the name qsort binds to the sanitizer's
 * interceptor, which lives elsewhere. */
static uint64_t libc_qsort(void)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *f = h ? dlsym(h, "qsort") : NULL;

	return (uint64_t)(uintptr_t)(f ? f : (void *)qsort);
}

__attribute__((noinline, used)) int symb_target(int x) { return x * 7 + 3; }
__attribute__((noinline, used)) int symb_other(int x) { return symb_target(x) - 1; }

static char tmpdir[64];

struct env {
	struct symcache *sc;
	struct procs *ps;
	struct proc *pr;
	struct pprof *p;
	struct symb_stats st;
};

static bool env_open(struct env *e)
{
	memset(e, 0, sizeof(*e));
	e->sc = symcache__new();
	e->ps = e->sc ? procs__new(e->sc, -1, -1) : NULL;
	e->pr = e->ps ? procs__get(e->ps, (uint32_t)getpid(), 1) : NULL;
	e->p = pprof__new("cpu", "nanoseconds", 1000);
	return e->pr && e->p;
}

static void env_close(struct env *e)
{
	symb__done(&e->st);
	pprof__free(e->p);
	procs__free(e->ps);
	symcache__free(e->sc);
}

static const char *user_name(struct env *e, uint64_t ip, bool leaf)
{
	uint64_t loc = symb__user(e->p, e->pr, ip, leaf, &e->st);

	return loc ? pprof__location_name(e->p, loc) : NULL;
}

/* Our own functions and libc's, by symbol; a return address is looked up
 * one byte back, so it names the function the call is in. */
static bool user_functions(void)
{
	struct env e;
	uint64_t target = (uint64_t)(uintptr_t)symb_target;

	CHECK(env_open(&e));
	CHECK_STR(user_name(&e, target + 1, true), "symb_target");
	CHECK_STR(user_name(&e, (uint64_t)(uintptr_t)symb_other + 2, true), "symb_other");
	/* A return address just past symb_target's first byte: still it. */
	CHECK_STR(user_name(&e, target + 1, false), "symb_target");
	const char *q = user_name(&e, libc_qsort() + 1, true);
	CHECK(q && strstr(q, "qsort"));
	/* This PIE's code is in a mapping shared by every process that maps
	 * it: the location's address is its offset in the file. */
	uint64_t loc = symb__user(e.p, e.pr, target + 1, true, &e.st);
	const struct procmap *m = procmaps__find(&e.pr->maps, target + 1);
	CHECK(m != NULL);
	CHECK_EQ_INT(pprof__location_address(e.p, loc), target + 1 - m->start + m->pgoff);
	const char *file = pprof__location_mapping_file(e.p, loc);
	CHECK(file && strstr(file, "/test_symbolize"));
	CHECK_EQ_INT(e.st.user_unknown, 0);
	CHECK(e.st.user_frames >= 3);
	env_close(&e);
	return true;
}

/* The same address as a caller's return address and, later, as a sampled
 * pc (a function's first byte: where qemu delivers interrupts; a
 * function pointer on the stack read as a frame): two locations, each
 * named for what it is. One location per address named the leaf's
 * samples after the function before it (hot_compare came out as
 * frame_dummy, under qemu, in unwind.fp_mode). */
static bool return_then_leaf(void)
{
	char path[128];
	struct env e;
	struct ksyms *ks;
	FILE *f;
	uint64_t target = (uint64_t)(uintptr_t)symb_target;

	CHECK(env_open(&e));
	const char *before = user_name(&e, target, false);
	CHECK(before && strcmp(before, "symb_target"));
	CHECK_STR(user_name(&e, target, true), "symb_target");
	snprintf(path, sizeof(path), "%s/kallsyms2", tmpdir);
	CHECK((f = fopen(path, "w")));
	fputs("ffffffff81001000 T do_thing\n"
	      "ffffffff81002000 t helper_fn\n", f);
	fclose(f);
	CHECK((ks = ksyms__load(path)));
	uint64_t ret = symb__kernel(e.p, ks, 0xffffffff81002000ULL, false, &e.st);
	uint64_t pc = symb__kernel(e.p, ks, 0xffffffff81002000ULL, true, &e.st);
	CHECK_STR(pprof__location_name(e.p, ret), "do_thing");
	CHECK_STR(pprof__location_name(e.p, pc), "helper_fn");
	CHECK(ret != pc);
	env_close(&e);
	ksyms__free(ks);
	return true;
}

/* Kernel frames: by a kallsyms file; modules named as the file; below the
 * first symbol (or without kallsyms) the address names it. */
static bool kernel_frames(void)
{
	char path[128];
	struct env e;
	struct ksyms *ks;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kallsyms", tmpdir);
	CHECK((f = fopen(path, "w")));
	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81001000 T do_thing\n"
	      "ffffffff81002000 t helper_fn\n"
	      "ffffffffc0001000 t mod_fn\t[mymod]\n", f);
	fclose(f);
	CHECK((ks = ksyms__load(path)));
	CHECK(env_open(&e));
	uint64_t l1 = symb__kernel(e.p, ks, 0xffffffff81001010ULL, true, &e.st);
	uint64_t l2 = symb__kernel(e.p, ks, 0xffffffff81002000ULL, false, &e.st); /* ret addr */
	uint64_t l3 = symb__kernel(e.p, ks, 0xffffffffc0001004ULL, true, &e.st);
	uint64_t l4 = symb__kernel(e.p, ks, 0xffffffff80000010ULL, true, &e.st);
	uint64_t l5 = symb__kernel(e.p, NULL, 0xffffffff81001010ULL, true, &e.st);
	CHECK_STR(pprof__location_name(e.p, l1), "do_thing");
	CHECK_STR(pprof__location_name(e.p, l2), "do_thing");
	CHECK_STR(pprof__location_name(e.p, l3), "mod_fn");
	CHECK_STR(pprof__location_name(e.p, l4), "[kernel.kallsyms]+0xffffffff80000010");
	CHECK_EQ_INT(pprof__location_address(e.p, l4), 0xffffffff80000010ULL);
	CHECK_STR(pprof__location_mapping_file(e.p, l4), "[kernel.kallsyms]");
	/* The same address, but the kernel mapping with and without symbols
	 * is one mapping: the first location stays. */
	CHECK(l5 == l1);
	CHECK_EQ_INT(e.st.kernel_frames, 4);
	CHECK_EQ_INT(e.st.kernel_unknown, 1);
	env_close(&e);
	ksyms__free(ks);
	return true;
}

/* Addresses nothing names get "file+0xOFFSET" (the offset in the file),
 * "[anon]+0xADDR", "[unknown]+0xADDR"; the location keeps the address. */
static bool unnamed_frames(void)
{
	char path[128];
	struct env e;
	int fd;

	/* Two pages of a file that is not ELF, mapped executable from its
	 * second page: no symbols, file offset = 0x1000 + in-page offset. */
	snprintf(path, sizeof(path), "%s/blob.bin", tmpdir);
	CHECK((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) >= 0);
	CHECK(ftruncate(fd, 2 * 4096) == 0);
	void *blob = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 4096);
	close(fd);
	CHECK(blob != MAP_FAILED);
	void *anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(anon != MAP_FAILED);
	CHECK(env_open(&e)); /* the snapshot sees both */

	uint64_t ip = (uint64_t)(uintptr_t)blob + 0x10;
	uint64_t loc = symb__user(e.p, e.pr, ip, true, &e.st);
	CHECK_STR(pprof__location_name(e.p, loc), "blob.bin+0x1010");
	CHECK_EQ_INT(pprof__location_address(e.p, loc), ip);
	CHECK(strstr(pprof__location_mapping_file(e.p, loc), "/blob.bin"));

	char want[64];
	ip = (uint64_t)(uintptr_t)anon + 0x20;
	snprintf(want, sizeof(want), "[anon]+0x%llx", (unsigned long long)ip);
	CHECK_STR(user_name(&e, ip, true), want);
	CHECK_STR(user_name(&e, 0x10, true), "[unknown]+0x10");
	CHECK_EQ_INT(e.st.user_unknown, 3);
	env_close(&e);
	munmap(blob, 4096);
	munmap(anon, 4096);
	return true;
}

/* --no-symbol: addresses and mappings only, named or not. */
static bool no_symbol(void)
{
	struct symb_options on = { .no_symbol = true }, off = { 0 };
	struct env e;
	uint64_t loc;

	CHECK(env_open(&e));
	symb__set_options(&on);
	loc = symb__user(e.p, e.pr, (uint64_t)(uintptr_t)symb_target + 1, true, &e.st);
	CHECK(loc && !pprof__location_name(e.p, loc));
	CHECK(strstr(pprof__location_mapping_file(e.p, loc), "/test_symbolize"));
	CHECK(!pprof__location_name(e.p, symb__user(e.p, e.pr, 0x10, true, &e.st)));
	CHECK(!pprof__location_name(e.p, symb__kernel(e.p, NULL, 0xffffffff81000000ULL, true, &e.st)));
	symb__set_options(&off);
	env_close(&e);
	return true;
}

/* Synthetic frames: one location each, at fake addresses in mapping 0. */
static bool synthetic(void)
{
	struct pprof *p = pprof__new("cpu", "nanoseconds", 1);
	uint64_t a, b;

	CHECK(p);
	a = symb__synthetic(p, SYNTH_LOST_COUNTS_FULL);
	b = symb__synthetic(p, SYNTH_LOST_USTACK_ERROR);
	CHECK(a && b && a != b);
	CHECK(symb__synthetic(p, SYNTH_LOST_COUNTS_FULL) == a);
	CHECK_STR(pprof__location_name(p, a), "[lost: counts map full]");
	CHECK_STR(pprof__location_name(p, b), "[lost: user stack (walk failed)]");
	CHECK_STR(pprof__location_name(p, symb__synthetic(p, SYNTH_NO_STACK)), "[no stack]");
	CHECK_EQ_INT(symb__synthetic(p, SYNTH__MAX), 0);
	pprof__free(p);
	return true;
}

static bool setup_tmp(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_symbolize.XXXXXX");
	return mkdtemp(tmpdir) != NULL;
}

static bool cleanup_tmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0;
}

TEST_MAIN("symbolize",
	TEST(setup_tmp),
	TEST(user_functions),
	TEST(kernel_frames),
	TEST(return_then_leaf),
	TEST(unnamed_frames),
	TEST(no_symbol),
	TEST(synthetic),
	TEST(cleanup_tmp),
)
