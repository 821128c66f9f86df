/* test_events.c — unit tests of user/events.c (and user/pmu_sysfs.c).
 *
 * Table-driven: every symbolic and generic cache name to (type, config),
 * raw rNNNN, the PMU/terms/ syntax against a fake sysfs tree built in a
 * temporary directory (format bit layouts, flags, config1, multi-range
 * fields, events/ aliases), the u/k/p modifiers, error messages and
 * "did you mean", file tags and pprof value types. Then the live kernel:
 * cpu-clock must open; cycles either opens or says why in one line.
 */
#include "config/events.h"
#include "config/tracefs.h"
#include "testing.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- fake sysfs -------------------------------------------------------- */

static char fake_root[64];

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

static void fake_cleanup(void)
{
	if (fake_root[0])
		nftw(fake_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static bool put(const char *rel, const char *content)
{
	char path[256], dir[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fake_root, rel);
	/* mkdir -p of the parent directories */
	for (char *s = strchr(path + strlen(fake_root) + 1, '/'); s;
	     s = strchr(s + 1, '/')) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(s - path), path);
		if (mkdir(dir, 0755) && errno != EEXIST)
			return false;
	}
	f = fopen(path, "w");
	if (!f)
		return false;
	fprintf(f, "%s\n", content);
	return fclose(f) == 0;
}

/* The tree, built once: a "cpu" PMU with Intel-like formats and two
 * aliases, a "software" PMU, and an "odd" PMU with a split field. */
static const char *root(void)
{
	static const char *const files[][2] = {
		{ "cpu/type", "4" },
		{ "cpu/format/event", "config:0-7" },
		{ "cpu/format/umask", "config:8-15" },
		{ "cpu/format/cmask", "config:24-31" },
		{ "cpu/format/inv", "config:23" },
		{ "cpu/format/edge", "config:18" },
		{ "cpu/format/ldlat", "config1:0-15" },
		{ "cpu/events/cache-misses", "event=0x2e,umask=0x41" },
		{ "cpu/events/mem-loads", "event=0xcd,umask=0x1" },
		{ "cpu/events/cache-misses.unit", "count" },
		{ "software/type", "1" },
		{ "odd/type", "42" },
		{ "odd/format/split", "config2:0-3,8-11" },
		{ "odd/format/wide", "config:0-63" },
		{ "odd/format/bad", "confi:0-7" },
		/* a tracefs beside it (event__parse's tracepoints) */
		{ "tracefs/events/sched/sched_switch/id", "316" },
		{ "tracefs/events/sched/sched_wakeup/id", "317" },
		{ "tracefs/events/ras/mc_event/id", "901" },
		{ "tracefs/events/syscalls/sys_enter_write/id", "702" },
		{ "tracefs/events/syscalls/no_id/format", "x" },
	};

	if (fake_root[0])
		return fake_root;
	snprintf(fake_root, sizeof(fake_root), "/tmp/pmubpf-events-XXXXXX");
	if (!mkdtemp(fake_root)) {
		fake_root[0] = '\0';
		return "/nonexistent";
	}
	atexit(fake_cleanup);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!put(files[i][0], files[i][1]))
			fprintf(stdout, "  could not write %s\n", files[i][0]);
	return fake_root;
}

static int parse(const char *spec, struct pmubpf_event *ev, char *err,
		 size_t errlen)
{
	return event__parse(spec, root(), ev, err, errlen);
}

/* ---- names ------------------------------------------------------------- */

static const struct {
	const char *spec, *base;
	__u32 type;
	__u64 config;
} sym_cases[] = {
	{ "cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "stalled-cycles-frontend", "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "idle-cycles-frontend", "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "idle-cycles-backend", "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "cpu-clock", "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "CYCLES", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "alignment-faults", "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "cgroup-switches", "cgroup-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES },
};

static bool symbolic_names(void)
{
	for (size_t i = 0; i < sizeof(sym_cases) / sizeof(sym_cases[0]); i++) {
		struct pmubpf_event ev;
		char err[256];

		CHECK_EQ_INT(parse(sym_cases[i].spec, &ev, err, sizeof(err)), 0);
		CHECK_STR(ev.name, sym_cases[i].spec);
		CHECK_STR(ev.base, sym_cases[i].base);
		CHECK_EQ_INT(ev.attr.type, sym_cases[i].type);
		CHECK_EQ_INT(ev.attr.config, sym_cases[i].config);
		CHECK_EQ_INT(ev.attr.size, sizeof(struct perf_event_attr));
		CHECK_EQ_INT(ev.hardware, sym_cases[i].type == PERF_TYPE_HARDWARE);
		/* sampling fields belong to the caller */
		CHECK_EQ_INT(ev.attr.sample_period, 0);
		CHECK_EQ_INT(ev.attr.freq, 0);
		CHECK_EQ_INT(ev.attr.sample_type, 0);
		CHECK_EQ_INT(ev.attr.precise_ip, 0);
		CHECK_EQ_INT(ev.attr.exclude_user | ev.attr.exclude_kernel, 0);
	}
	return true;
}

#define CACHE(id, op, res) (PERF_COUNT_HW_CACHE_##id | \
	(PERF_COUNT_HW_CACHE_OP_##op << 8) | (PERF_COUNT_HW_CACHE_RESULT_##res << 16))

static const struct { const char *spec; __u64 config; } cache_cases[] = {
	{ "L1-dcache-loads", 0x0 },
	{ "L1-dcache-load-misses", 0x10000 },
	{ "L1-dcache-stores", 0x100 },
	{ "L1-dcache-store-misses", 0x10100 },
	{ "L1-dcache-prefetches", 0x200 },
	{ "L1-dcache-prefetch-misses", 0x10200 },
	{ "L1-icache-loads", 0x1 },
	{ "L1-icache-load-misses", 0x10001 },
	{ "LLC-loads", 0x2 },
	{ "LLC-load-misses", 0x10002 },
	{ "LLC-stores", 0x102 },
	{ "LLC-store-misses", 0x10102 },
	{ "LLC-prefetch-misses", 0x10202 },
	{ "dTLB-loads", 0x3 },
	{ "dTLB-load-misses", 0x10003 },
	{ "dTLB-store-misses", 0x10103 },
	{ "iTLB-loads", 0x4 },
	{ "iTLB-load-misses", 0x10004 },
	{ "branch-loads", 0x5 },
	{ "branch-load-misses", 0x10005 },
	{ "node-loads", 0x6 },
	{ "node-load-misses", 0x10006 },
	{ "node-stores", 0x106 },
	{ "node-prefetch-misses", 0x10206 },
	{ "llc-load-misses", 0x10002 },
	{ "LLC-load-misses", CACHE(LL, READ, MISS) },
	{ "dTLB-store-misses", CACHE(DTLB, WRITE, MISS) },
	{ "node-prefetches", CACHE(NODE, PREFETCH, ACCESS) },
};

static bool cache_names(void)
{
	for (size_t i = 0; i < sizeof(cache_cases) / sizeof(cache_cases[0]); i++) {
		struct pmubpf_event ev;
		char err[256];

		CHECK_EQ_INT(parse(cache_cases[i].spec, &ev, err, sizeof(err)), 0);
		CHECK_EQ_INT(ev.attr.type, PERF_TYPE_HW_CACHE);
		CHECK_EQ_INT(ev.attr.config, cache_cases[i].config);
		CHECK(ev.hardware);
		CHECK(!ev.is_timer);
		CHECK_STR(ev.value_unit, "count");
	}
	/* canonical spelling even when typed in another case */
	struct pmubpf_event ev;
	char err[256];
	CHECK_EQ_INT(parse("llc-load-misses", &ev, err, sizeof(err)), 0);
	CHECK_STR(ev.base, "LLC-load-misses");
	CHECK_STR(ev.name, "llc-load-misses");
	return true;
}

static bool raw_events(void)
{
	static const struct { const char *spec, *base; __u64 config; } c[] = {
		{ "r1a2", "r1a2", 0x1a2 },
		{ "r01c2", "r01c2", 0x1c2 },
		{ "r01C2", "r01C2", 0x1c2 },
		{ "R1a2", "r1a2", 0x1a2 },
		{ "r0x1a2", "r0x1a2", 0x1a2 },
		{ "rffffffffffffffff", "rffffffffffffffff", ~0ULL },
		{ "r1a2:u", "r1a2", 0x1a2 },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct pmubpf_event ev;
		char err[256];

		CHECK_EQ_INT(parse(c[i].spec, &ev, err, sizeof(err)), 0);
		CHECK_EQ_INT(ev.attr.type, PERF_TYPE_RAW);
		CHECK_EQ_INT(ev.attr.config, c[i].config);
		CHECK_STR(ev.base, c[i].base);
		CHECK_STR(ev.value_type, c[i].base);
		CHECK(ev.hardware);
	}
	return true;
}

/* ---- sysfs PMU syntax -------------------------------------------------- */

static const struct {
	const char *spec;
	__u32 type;
	__u64 config, config1, config2;
	bool hardware;
} pmu_cases[] = {
	{ "cpu/event=0x3c,umask=0x01/", 4, 0x13c, 0, 0, true },
	{ "cpu/event=0x3c,umask=0x00/", 4, 0x3c, 0, 0, true },
	{ "cpu/event=60,umask=1/", 4, 0x13c, 0, 0, true },
	{ "cpu/umask=0x1,event=0xc0/", 4, 0x1c0, 0, 0, true },
	{ "cpu/event=0xc0,umask=0x1,cmask=2,inv/", 4,
	  0xc0 | 0x100 | (1ULL << 23) | (2ULL << 24), 0, 0, true },
	{ "cpu/event=0xc0,edge/", 4, 0xc0 | (1ULL << 18), 0, 0, true },
	{ "cpu/event=0xc0,inv=0/", 4, 0xc0, 0, 0, true },
	{ "cpu/event=0xcd,umask=0x1,ldlat=3/", 4, 0x1cd, 3, 0, true },
	{ "cpu/ldlat=0xffff/", 4, 0, 0xffff, 0, true },
	{ "cpu/cache-misses/", 4, 0x412e, 0, 0, true },
	{ "cpu/mem-loads,ldlat=3/", 4, 0x1cd, 3, 0, true },
	{ "cpu/cache-misses,umask=0x1/", 4, 0x12e, 0, 0, true },
	{ "cpu/config=0x1234,config1=5,config2=0x7/", 4, 0x1234, 5, 7, true },
	{ "cpu//", 4, 0, 0, 0, true },
	{ "odd/split=0xab/", 42, 0, 0, 0xa0b, true },
	{ "odd/wide=0xffffffffffffffff/", 42, ~0ULL, 0, 0, true },
	{ "software/config=0/", PERF_TYPE_SOFTWARE, 0, 0, 0, false },
	{ "software/config=3/", PERF_TYPE_SOFTWARE, 3, 0, 0, false },
};

static bool pmu_syntax(void)
{
	for (size_t i = 0; i < sizeof(pmu_cases) / sizeof(pmu_cases[0]); i++) {
		struct pmubpf_event ev;
		char err[256];
		int r = parse(pmu_cases[i].spec, &ev, err, sizeof(err));

		if (r)
			fprintf(stdout, "  %s: %s\n", pmu_cases[i].spec, err);
		CHECK_EQ_INT(r, 0);
		CHECK_EQ_INT(ev.attr.type, pmu_cases[i].type);
		CHECK_EQ_INT(ev.attr.config, pmu_cases[i].config);
		CHECK_EQ_INT(ev.attr.config1, pmu_cases[i].config1);
		CHECK_EQ_INT(ev.attr.config2, pmu_cases[i].config2);
		CHECK_EQ_INT(ev.hardware, pmu_cases[i].hardware);
		CHECK_STR(ev.base, pmu_cases[i].spec);
		CHECK_STR(ev.value_type, ev.is_timer ? "cpu" : pmu_cases[i].spec);
	}
	/* software/config=0/ is cpu-clock: a timer */
	struct pmubpf_event ev;
	char err[256];
	CHECK_EQ_INT(parse("software/config=0/", &ev, err, sizeof(err)), 0);
	CHECK(ev.is_timer);
	CHECK_STR(ev.value_unit, "nanoseconds");
	return true;
}

/* ---- modifiers --------------------------------------------------------- */

static const struct {
	const char *spec, *base;
	int excl_user, excl_kernel, excl_hv, precise;
} mod_cases[] = {
	{ "cycles", "cycles", 0, 0, 0, 0 },
	{ "cycles:u", "cycles", 0, 1, 1, 0 },
	{ "cycles:k", "cycles", 1, 0, 1, 0 },
	{ "cycles:uk", "cycles", 0, 0, 1, 0 },
	{ "cycles:p", "cycles", 0, 0, 0, 1 },
	{ "cycles:pp", "cycles", 0, 0, 0, 2 },
	{ "cycles:ppp", "cycles", 0, 0, 0, 3 },
	{ "cycles:upp", "cycles", 0, 1, 1, 2 },
	{ "cycles:ppu", "cycles", 0, 1, 1, 2 },
	{ "cpu-cycles:kp", "cycles", 1, 0, 1, 1 },
	{ "LLC-load-misses:pp", "LLC-load-misses", 0, 0, 0, 2 },
	{ "r1a2:up", "r1a2", 0, 1, 1, 1 },
	{ "cpu-clock:u", "cpu-clock", 0, 1, 1, 0 },
	{ "cpu-clock:k", "cpu-clock", 1, 0, 1, 0 },
	{ "cpu/event=0x3c/pp", "cpu/event=0x3c/", 0, 0, 0, 2 },
	{ "cpu/event=0x3c/:u", "cpu/event=0x3c/", 0, 1, 1, 0 },
	{ "cpu/cache-misses/upp", "cpu/cache-misses/", 0, 1, 1, 2 },
};

static bool modifiers(void)
{
	for (size_t i = 0; i < sizeof(mod_cases) / sizeof(mod_cases[0]); i++) {
		struct pmubpf_event ev;
		char err[256];

		CHECK_EQ_INT(parse(mod_cases[i].spec, &ev, err, sizeof(err)), 0);
		CHECK_STR(ev.name, mod_cases[i].spec);
		CHECK_STR(ev.base, mod_cases[i].base);
		CHECK_EQ_INT(ev.attr.exclude_user, mod_cases[i].excl_user);
		CHECK_EQ_INT(ev.attr.exclude_kernel, mod_cases[i].excl_kernel);
		CHECK_EQ_INT(ev.attr.exclude_hv, mod_cases[i].excl_hv);
		CHECK_EQ_INT(ev.attr.precise_ip, mod_cases[i].precise);
	}
	return true;
}

/* ---- errors ------------------------------------------------------------ */

static const struct { const char *spec, *want; bool exact; } err_cases[] = {
	{ "cache-mises", "unknown event 'cache-mises' (did you mean 'cache-misses'?)", true },
	{ "cache-mises:pp", "unknown event 'cache-mises' (did you mean 'cache-misses'?)", true },
	{ "xyz", "unknown event 'xyz' (see 'pmubpf list')", true },
	{ "cyles", "did you mean 'cycles'", false },
	{ "LLC-load-mises", "did you mean 'LLC-load-misses'", false },
	{ "cycles:x", "event 'cycles:x': unknown modifier 'x' (use u, k, p)", true },
	{ "cycles:pppp", "at most 3", false },
	{ "cycles:", "empty modifier", false },
	{ ":pp", "missing event name", false },
	{ "cpu/event=0x1ff/", "value 0x1ff too big for term 'event' (8 bits)", false },
	{ "cpu/ldlat=0x10000/", "too big for term 'ldlat' (16 bits)", false },
	{ "cpu/inv=2/", "too big for term 'inv' (1 bits)", false },
	{ "nopmu/event=1/", "unknown PMU 'nopmu'", false },
	{ "cpu/bogus=1/", "unknown term 'bogus' for PMU 'cpu'", false },
	{ "cpu/bogus/", "unknown term or event 'bogus' for PMU 'cpu'", false },
	{ "cpu/event=0x3c", "missing closing '/'", false },
	{ "cpu/event=0x3c/umask=1/", "unexpected '/'", false },
	{ "cpu/event=zz/", "bad value 'zz' for term 'event'", false },
	{ "cpu/event=/", "bad value '' for term 'event'", false },
	{ "cpu/event=-1/", "bad value '-1'", false },
	{ "cpu/event=0x3c,,umask=1/", "empty term", false },
	{ "cpu/period=1000/", "use -c", false },
	{ "cpu/event=0x3c/x", "unknown modifier 'x'", false },
	{ "cpu/event=0x3c/:", "empty modifier", false },
	{ "../cpu/event=1/", "unexpected '/'", false },
	{ ".hidden/event=1/", "bad PMU name '.hidden'", false },
	{ "TLB-loads", "unknown event 'TLB-loads' (did you mean 'dTLB-loads', 'iTLB-loads', 'LLC-loads'?)", true },
	{ "cpu/../x/", "unexpected '/'", false },
	{ "cpu/..=1/", "bad term '..'", false },
	{ "odd/bad=1/", "can't parse", false },
	{ "cpu-clock:p", "event 'cpu-clock:p': precise modifier :p needs a hardware event", true },
	{ "page-faults:pp", "precise modifier :p needs a hardware event", false },
	{ "software/config=0/p", "precise modifier :p needs a hardware event", false },
	{ "", "empty event name", false },
	{ "r", "bad raw event 'r'", false },
	{ "rxyz", "bad raw event 'rxyz'", false },
	{ "r12345678901234567", "bad raw event", false },
	{ "r0x", "bad raw event", false },
};

static bool errors(void)
{
	for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		struct pmubpf_event ev;
		char err[256] = "sentinel";
		int r;

		memset(&ev, 0x5a, sizeof(ev));
		r = parse(err_cases[i].spec, &ev, err, sizeof(err));
		if (r != -EINVAL || !strstr(err, err_cases[i].want))
			fprintf(stdout, "  '%s' -> %d \"%s\"\n", err_cases[i].spec, r, err);
		CHECK_EQ_INT(r, -EINVAL);
		if (err_cases[i].exact)
			CHECK_STR(err, err_cases[i].want);
		else
			CHECK(strstr(err, err_cases[i].want));
		CHECK(!strchr(err, '\n'));
		CHECK(strncmp(err, "pmubpf:", 7));
		CHECK_EQ_INT(ev.attr.type, 0);	/* cleared on failure */
	}
	/* overlong, NULL spec, tiny error buffer */
	char big[EVENT_NAME_MAX + 10], err[256];
	struct pmubpf_event ev;
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_EQ_INT(event__parse(big, root(), &ev, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "too long"));
	CHECK_EQ_INT(event__parse(NULL, root(), &ev, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(event__parse("cache-mises", root(), &ev, err, 8), -EINVAL);
	CHECK_EQ_INT(strlen(err), 7);
	CHECK_EQ_INT(event__parse("bogus", root(), &ev, NULL, 0), -EINVAL);
	return true;
}

static bool suggestions(void)
{
	const char *out[3];

	CHECK_EQ_INT(event__suggest("cache-mises", out, 3) >= 1, 1);
	CHECK_STR(out[0], "cache-misses");
	CHECK_EQ_INT(event__suggest("CACHE-MISES", out, 3) >= 1, 1);
	CHECK_STR(out[0], "cache-misses");
	CHECK_EQ_INT(event__suggest("instrutcions", out, 3) >= 1, 1);
	CHECK_STR(out[0], "instructions");
	CHECK_EQ_INT(event__suggest("l1-dcache-load-mises", out, 3) >= 1, 1);
	CHECK_STR(out[0], "L1-dcache-load-misses");
	CHECK_EQ_INT(event__suggest("xyz", out, 3), 0);
	CHECK_EQ_INT(event__suggest("completely-unrelated", out, 3), 0);
	CHECK_EQ_INT(event__suggest("", out, 3), 0);
	/* several close names, closest first, capped by max */
	CHECK_EQ_INT(event__suggest("iTLB-loads-misses", out, 3), 2);
	CHECK_STR(out[0], "iTLB-load-misses");
	CHECK_STR(out[1], "dTLB-load-misses");
	CHECK_EQ_INT(event__suggest("iTLB-loads-misses", out, 1), 1);
	CHECK_STR(out[0], "iTLB-load-misses");
	CHECK_EQ_INT(event__suggest("TLB-loads", out, 3), 3);
	CHECK_STR(out[0], "dTLB-loads");
	CHECK_STR(out[1], "iTLB-loads");
	CHECK_STR(out[2], "LLC-loads");
	CHECK_EQ_INT(event__suggest("cycles", out, 0), 0);
	return true;
}

/* ---- derived names ----------------------------------------------------- */

static bool file_tags(void)
{
	static const char *const c[][2] = {
		{ "cycles", "cycles" },
		{ "cycles:pp", "cycles_pp" },
		{ "cpu/event=0x3c,umask=0x0/", "cpu_event_0x3c_umask_0x0" },
		{ "cpu/event=0x3c,umask=0x0/:u", "cpu_event_0x3c_umask_0x0_u" },
		{ "cpu/cache-misses/pp", "cpu_cache-misses_pp" },
		{ "L1-dcache-load-misses:u", "L1-dcache-load-misses_u" },
		{ "r1a2", "r1a2" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct pmubpf_event ev;
		char err[256];

		CHECK_EQ_INT(parse(c[i][0], &ev, err, sizeof(err)), 0);
		CHECK_STR(ev.file_tag, c[i][1]);
	}
	return true;
}

static bool value_types(void)
{
	static const struct {
		const char *spec, *type, *unit;
		bool timer, hw;
	} c[] = {
		{ "cpu-clock", "cpu", "nanoseconds", true, false },
		{ "task-clock", "cpu", "nanoseconds", true, false },
		{ "cpu-clock:u", "cpu", "nanoseconds", true, false },
		{ "cycles", "cycles", "count", false, true },
		{ "cycles:pp", "cycles", "count", false, true },
		{ "cpu-cycles", "cycles", "count", false, true },
		{ "cache-misses", "cache-misses", "count", false, true },
		{ "r1a2", "r1a2", "count", false, true },
		{ "cs", "context-switches", "count", false, false },
		{ "page-faults", "page-faults", "count", false, false },
		{ "LLC-load-misses", "LLC-load-misses", "count", false, true },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct pmubpf_event ev;
		char err[256];

		CHECK_EQ_INT(parse(c[i].spec, &ev, err, sizeof(err)), 0);
		CHECK_STR(ev.value_type, c[i].type);
		CHECK_STR(ev.value_unit, c[i].unit);
		CHECK_EQ_INT(ev.is_timer, c[i].timer);
		CHECK_EQ_INT(ev.hardware, c[i].hw);
	}
	return true;
}

/* ---- open errors and the live kernel ----------------------------------- */

static bool open_error_text(void)
{
	struct pmubpf_event ev;
	char err[256];

	CHECK_EQ_INT(parse("cycles", &ev, err, sizeof(err)), 0);
	event__open_error(&ev, ENOENT, err, sizeof(err));
	CHECK_STR(err, "event 'cycles': not supported on this machine (no hardware PMU, e.g. inside a VM): try -e cpu-clock");
	event__open_error(&ev, -EOPNOTSUPP, err, sizeof(err));
	CHECK(strstr(err, "not supported on this machine"));
	event__open_error(&ev, EINVAL, err, sizeof(err));
	CHECK(strstr(err, "not supported on this machine"));
	event__open_error(&ev, EACCES, err, sizeof(err));
	CHECK(strstr(err, "event 'cycles': permission denied: run as root or grant CAP_PERFMON"));
	if (access("/proc/sys/kernel/perf_event_paranoid", R_OK) == 0)
		CHECK(strstr(err, "(kernel.perf_event_paranoid="));
	event__open_error(&ev, EPERM, err, sizeof(err));
	CHECK(strstr(err, "permission denied"));
	event__open_error(&ev, EMFILE, err, sizeof(err));
	CHECK(strstr(err, "too many open files"));
	event__open_error(&ev, EBUSY, err, sizeof(err));
	CHECK(strstr(err, "event 'cycles': perf_event_open: "));
	CHECK(!strchr(err, '\n'));

	CHECK_EQ_INT(parse("cycles:ppp", &ev, err, sizeof(err)), 0);
	event__open_error(&ev, EOPNOTSUPP, err, sizeof(err));
	CHECK(strstr(err, "event 'cycles:ppp': precise level 3"));
	CHECK(strstr(err, "try fewer p"));
	event__open_error(&ev, ENOENT, err, sizeof(err));
	CHECK(strstr(err, "not supported on this machine"));

	/* software events: ENOENT is not "no PMU" */
	CHECK_EQ_INT(parse("cpu-clock", &ev, err, sizeof(err)), 0);
	event__open_error(&ev, ENOENT, err, sizeof(err));
	CHECK(strstr(err, "event 'cpu-clock': perf_event_open: "));
	CHECK(!strstr(err, "not supported on this machine"));

	/* dynamic PMU (type not HARDWARE/HW_CACHE/RAW): EINVAL is a bad
	 * config, ENODEV a missing PMU */
	CHECK_EQ_INT(parse("odd/wide=1/", &ev, err, sizeof(err)), 0);
	event__open_error(&ev, EINVAL, err, sizeof(err));
	CHECK(strstr(err, "perf_event_open: "));
	event__open_error(&ev, ENODEV, err, sizeof(err));
	CHECK(strstr(err, "not supported on this machine"));
	return true;
}

static bool probe_cpu_clock(void)
{
	struct pmubpf_event ev;
	char err[256];
	int r;

	CHECK_EQ_INT(event__parse("cpu-clock", NULL, &ev, err, sizeof(err)), 0);
	r = event__probe(&ev, err, sizeof(err));
	if (r && geteuid() != 0)
		SKIP("not root and cpu-clock does not open");
	if (r)
		fprintf(stdout, "  %s\n", err);
	CHECK_EQ_INT(r, 0);
	CHECK_EQ_INT(event__parse("task-clock:u", NULL, &ev, err, sizeof(err)), 0);
	CHECK_EQ_INT(event__probe(&ev, err, sizeof(err)), 0);
	return true;
}

static bool probe_cycles(void)
{
	struct pmubpf_event ev;
	char err[256] = "";
	int r;

	CHECK_EQ_INT(event__parse("cycles", NULL, &ev, err, sizeof(err)), 0);
	r = event__probe(&ev, err, sizeof(err));
	if (r == 0)
		return true;	/* a PMU exists */
	if (r == -EACCES || r == -EPERM) {
		CHECK(strstr(err, "permission denied"));
		SKIP("no permission to open cycles");
	}
	CHECK(strstr(err, "event 'cycles': "));
	CHECK(strstr(err, "not supported on this machine"));
	CHECK(strstr(err, "try -e cpu-clock"));
	CHECK(!strchr(err, '\n'));
	return true;
}

/* event__list(root(), filter), its stdout into buf; returns its result. */
static int list_into(const char *filter, char *buf, size_t len)
{
	char path[] = "/tmp/pmubpf-list-XXXXXX";
	int fd = mkstemp(path), saved, r;
	ssize_t n;

	if (fd < 0)
		return -100;
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(fd, STDOUT_FILENO);
	r = event__list(root(), filter);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	n = pread(fd, buf, len - 1, 0);
	close(fd);
	unlink(path);
	buf[n > 0 ? n : 0] = '\0';
	return r;
}

static char tracefs_dir[128];

static void use_fake_tracefs(void)
{
	snprintf(tracefs_dir, sizeof(tracefs_dir), "%s/tracefs", root());
	tracefs__set_root(tracefs_dir);
}

/* `pmubpf list` against the fake tree, stdout captured in a file. */
static bool list_output(void)
{
	char buf[16384];

	use_fake_tracefs();
	CHECK_EQ_INT(list_into(NULL, buf, sizeof(buf)), 0);
	CHECK(strstr(buf, "cpu-clock"));
	/* cpu-clock's own line says "available" as its whole verdict (a bare
	 * strstr would also take "not available" or another line's word). */
	const char *cl = strstr(buf, "\n  cpu-clock ");
	CHECK(cl);
	const char *eol = strchr(cl + 1, '\n');
	CHECK(eol);
	if (geteuid() == 0) {
		const char *want = " software   available";

		CHECK(eol - cl > (long)strlen(want));
		CHECK(!strncmp(eol - strlen(want), want, strlen(want)));
	}
	CHECK(strstr(buf, "cycles | cpu-cycles"));
	CHECK(strstr(buf, "LLC-load-misses"));
	CHECK(strstr(buf, "node-prefetch-misses"));
	CHECK(strstr(buf, "cpu/cache-misses/"));
	CHECK(strstr(buf, "cpu/mem-loads/"));
	CHECK(!strstr(buf, "cache-misses.unit"));
	CHECK(strstr(buf, "alignment-faults"));
	CHECK(!strstr(buf, "sched:sched_switch")); /* tracepoints: only when asked */
	tracefs__set_root(NULL);
	return true;
}

/* The cpu-clock event's own row: not the hint "try -e cpu-clock" that
 * rows of hardware events carry where there is no PMU (libpfm4 names
 * events of this CPU, e.g. Zen 4's *SCHEDULER* ones, even in a VM). */
#define CPU_CLOCK_ROW "\n  cpu-clock "

/* `pmubpf list WORD` / `pmubpf list tracepoints`. */
static bool list_filters(void)
{
	char buf[16384];

	use_fake_tracefs();
	CHECK_EQ_INT(list_into("mem-loads", buf, sizeof(buf)), 0);
	CHECK(strstr(buf, "cpu/mem-loads/"));
	CHECK(!strstr(buf, "Symbolic") && !strstr(buf, "cpu/cache-misses/"));
	CHECK_EQ_INT(list_into("sched", buf, sizeof(buf)), 0);
	CHECK(strstr(buf, "sched:sched_switch") && strstr(buf, "sched:sched_wakeup"));
	CHECK(!strstr(buf, "ras:mc_event") && !strstr(buf, CPU_CLOCK_ROW));
	CHECK_EQ_INT(list_into("FAULTS", buf, sizeof(buf)), 0); /* any case */
	CHECK(strstr(buf, "page-faults") && strstr(buf, "alignment-faults"));
	CHECK(!strstr(buf, CPU_CLOCK_ROW));
	CHECK_EQ_INT(list_into("tracepoints", buf, sizeof(buf)), 0);
	CHECK(strstr(buf, "sched:sched_switch") && strstr(buf, "ras:mc_event") &&
	      strstr(buf, "syscalls:sys_enter_write"));
	CHECK(!strstr(buf, "no_id") && !strstr(buf, CPU_CLOCK_ROW));
	CHECK(!strstr(buf, "tracepoint available")); /* not opened one by one */
	CHECK_EQ_INT(list_into("zzz-nothing", buf, sizeof(buf)), 1);
	CHECK_EQ_INT(buf[0], '\0');
	tracefs__set_root(NULL);
	return true;
}

static bool tracepoints(void)
{
	struct pmubpf_event ev;
	char err[256];
	const struct { const char *spec, *want; } bad[] = {
		{ "sched:nope", "unknown tracepoint 'sched:nope' (see 'pmubpf list sched'" },
		{ "nosys:x", "unknown tracepoint 'nosys:x'" },
		{ "syscalls:no_id", "unknown tracepoint" },
		{ "sched:sched_switch:k", "tracepoints take no modifiers" },
		{ "sched:a.b", "bad tracepoint" },
		{ "cycles:x", "unknown modifier 'x'" },
		{ "cache-mises:u", "did you mean 'cache-misses'" },
	};

	use_fake_tracefs();
	CHECK_EQ_INT(parse("sched:sched_switch", &ev, err, sizeof(err)), 0);
	CHECK(ev.tracepoint && !ev.hardware && !ev.is_timer);
	CHECK_EQ_INT(ev.attr.type, PERF_TYPE_TRACEPOINT);
	CHECK_EQ_INT(ev.attr.config, 316);
	CHECK_STR(ev.base, "sched:sched_switch");
	CHECK_STR(ev.value_type, "sched:sched_switch");
	CHECK_STR(ev.value_unit, "count");
	CHECK_STR(ev.file_tag, "sched_sched_switch");
	/* "ras" looks like a raw event code; the tracepoint wins. */
	CHECK_EQ_INT(parse("ras:mc_event", &ev, err, sizeof(err)), 0);
	CHECK_EQ_INT(ev.attr.config, 901);
	CHECK_EQ_INT(parse("syscalls:sys_enter_write", &ev, err, sizeof(err)), 0);
	CHECK_EQ_INT(ev.attr.config, 702);
	/* events with modifiers stay what they were */
	CHECK_EQ_INT(parse("cycles:pp", &ev, err, sizeof(err)), 0);
	CHECK(!ev.tracepoint && ev.attr.precise_ip == 2);
	CHECK_EQ_INT(parse("r01c2:u", &ev, err, sizeof(err)), 0);
	CHECK(!ev.tracepoint && ev.attr.exclude_kernel);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (parse(bad[i].spec, &ev, err, sizeof(err)) != -EINVAL || !strstr(err, bad[i].want)) {
			printf("  %s: got '%s', want '%s'\n", bad[i].spec, err, bad[i].want);
			return false;
		}
	}
	tracefs__set_root("/nonexistent");
	CHECK_EQ_INT(parse("sched:sched_switch", &ev, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "no tracefs"));
	tracefs__set_root(NULL);
	return true;
}

/* list and the record-time error call "available" only what opens for
 * sampling: the msr PMU counts (tsc) but has no overflow interrupt. */
/* off-cpu: a pseudo-event, no perf_event (BPF measures the waits). */
static bool offcpu(void)
{
	struct pmubpf_event ev;
	const char *out[3];
	char err[256];

	CHECK_EQ_INT(parse("off-cpu", &ev, err, sizeof(err)), 0);
	CHECK(ev.offcpu && !ev.hardware && !ev.tracepoint && !ev.is_timer);
	CHECK_STR(ev.value_type, "off-cpu");
	CHECK_STR(ev.value_unit, "nanoseconds");
	CHECK_STR(ev.file_tag, "off-cpu");
	CHECK_EQ_INT(event__probe(&ev, err, sizeof(err)), 0);
	CHECK_EQ_INT(parse("off-cpu:u", &ev, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "off-cpu takes no modifiers") != NULL);
	CHECK_EQ_INT(parse("off-cpus", &ev, err, sizeof(err)), -EINVAL);
	CHECK_EQ_INT(event__suggest("offcpu", out, 3) >= 1, 1);
	CHECK_STR(out[0], "off-cpu");
	return true;
}

static bool counting_only_pmu(void)
{
	struct pmubpf_event ev;
	char err[256] = "";

	if (access("/sys/bus/event_source/devices/msr/events/tsc", R_OK))
		SKIP("no msr PMU with a tsc event on this machine");
	CHECK_EQ_INT(event__parse("msr/tsc/", NULL, &ev, err, sizeof(err)), 0);
	CHECK(event__probe(&ev, err, sizeof(err)) < 0);
	CHECK(strstr(err, "counts but cannot sample"));
	return true;
}

TEST_MAIN("events",
	TEST(symbolic_names),
	TEST(cache_names),
	TEST(raw_events),
	TEST(pmu_syntax),
	TEST(modifiers),
	TEST(errors),
	TEST(suggestions),
	TEST(file_tags),
	TEST(value_types),
	TEST(open_error_text),
	TEST(probe_cpu_clock),
	TEST(probe_cycles),
	TEST(list_output),
	TEST(list_filters),
	TEST(tracepoints),
	TEST(offcpu),
	TEST(counting_only_pmu))
