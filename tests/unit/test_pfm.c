/* test_pfm.c — named PMU events (user/config/pfm.c, through libpfm4).
 *
 * No PMU is needed: libpfm4 is forced to a CPU model with
 * LIBPFM_FORCE_PMU, and the perf_event_attr that event__parse builds is
 * checked against the vendors' published encodings. libpfm4 reads the
 * variable once per process (and cannot be switched to another model
 * afterwards), so each test runs in a child of its own.
 *
 * Sources of the expected values (cited again at each use):
 *  [SKL]  Intel perfmon, SKL/events/skylake_core.json (github.com/intel/perfmon)
 *  [ICL]  Intel perfmon, ICL/events/icelake_core.json
 *  [SDM]  Intel SDM Vol. 3B, Table B-2, IA32_PERFEVTSEL0 (186H): event
 *         select 7:0, umask 15:8, edge 18, INV 23, CMASK 31:24
 *  [SDMP] Intel SDM Vol. 3B, Table 18-56 "Precise Events for the Skylake
 *         Microarchitecture": MEM_LOAD_RETIRED D1H/L3_MISS 20H,
 *         MEM_LOAD_L3_HIT_RETIRED D2H/XSNP_HITM 04H
 *  [ZEN3] AMD Family 19h PPR (55898), as carried by Linux
 *         tools/perf/pmu-events/arch/x86/amdzen3/{core,cache}.json:
 *         ex_ret_instr 0xc0, ex_ret_brn_misp 0xc3, ex_ret_fused_instr
 *         0x1d0, ic_tag_hit_miss.instruction_cache_miss 0x18e umask 0x18
 *  [AMDF] AMD PerfEvtSel layout as the kernel gives it (arch/x86/events/
 *         amd/core.c, format "event" = config:0-7,32-35, "umask" =
 *         config:8-15): event select bits 11:8 go to config bits 35:32
 */
#include "config/events.h"
#include "config/pfm.h"
#include "config/tracefs.h"
#include "testing.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run fn in a child with LIBPFM_FORCE_PMU=model; true if it passed. */
static bool in_model(const char *model, bool (*fn)(void))
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		if (model)
			setenv("LIBPFM_FORCE_PMU", model, 1);
		else
			unsetenv("LIBPFM_FORCE_PMU");
		bool ok = fn();
		fflush(stdout);
		_exit(ok ? 0 : 1);
	}
	if (waitpid(pid, &st, 0) != pid)
		return false;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

struct want {
	const char *spec;
	__u32 type;
	__u64 config, config1;
	unsigned precise;
	unsigned exclude_user, exclude_kernel;
};

/* Every row parses, as a hardware event of the expected encoding. */
static bool check_rows(const struct want *w, int n)
{
	for (int i = 0; i < n; i++) {
		struct pmubpf_event ev;
		char err[256];
		int r = event__parse(w[i].spec, NULL, &ev, err, sizeof(err));

		if (r) {
			printf("  %s: %s\n", w[i].spec, err);
			return false;
		}
		if (ev.attr.type != w[i].type || ev.attr.config != w[i].config ||
		    ev.attr.config1 != w[i].config1 || ev.attr.precise_ip != w[i].precise ||
		    ev.attr.exclude_user != w[i].exclude_user ||
		    ev.attr.exclude_kernel != w[i].exclude_kernel || !ev.hardware) {
			printf("  %s: type %u config %#llx config1 %#llx precise %u exclude_user %u exclude_kernel %u hardware %d; want type %u config %#llx config1 %#llx precise %u exclude_user %u exclude_kernel %u\n",
			       w[i].spec, ev.attr.type, (unsigned long long)ev.attr.config,
			       (unsigned long long)ev.attr.config1, (unsigned)ev.attr.precise_ip,
			       (unsigned)ev.attr.exclude_user, (unsigned)ev.attr.exclude_kernel,
			       ev.hardware, w[i].type, (unsigned long long)w[i].config,
			       (unsigned long long)w[i].config1, w[i].precise, w[i].exclude_user,
			       w[i].exclude_kernel);
			return false;
		}
	}
	return true;
}

#define ROWS(w) check_rows(w, (int)(sizeof(w) / sizeof(w[0])))

/* ---- Skylake ------------------------------------------------------------ */

static bool skl_rows(void)
{
	static const struct want w[] = {
		/* [SKL] EventCode 0xD1 UMask 0x20; also [SDMP] */
		{ "MEM_LOAD_RETIRED.L3_MISS", PERF_TYPE_RAW, 0x20d1, 0, 0, 0, 0 },
		/* libpfm4's own spelling, and any case: the same event */
		{ "MEM_LOAD_RETIRED:L3_MISS", PERF_TYPE_RAW, 0x20d1, 0, 0, 0, 0 },
		{ "mem_load_retired.l3_miss", PERF_TYPE_RAW, 0x20d1, 0, 0, 0, 0 },
		/* [SKL] EventCode 0xC0 UMask 0x00 */
		{ "INST_RETIRED.ANY_P", PERF_TYPE_RAW, 0xc0, 0, 0, 0, 0 },
		/* [SKL] 0xD2/0x04, the HITM (false sharing) event; [SDMP] */
		{ "MEM_LOAD_L3_HIT_RETIRED.XSNP_HITM", PERF_TYPE_RAW, 0x04d2, 0, 0, 0, 0 },
		/* [SKL] 0xD0/0x81 (a Data_LA event: carries addresses) */
		{ "MEM_INST_RETIRED.ALL_LOADS", PERF_TYPE_RAW, 0x81d0, 0, 0, 0, 0 },
		/* [SKL] 0xA3/0x06 CounterMask 6; [SDM] CMASK at 31:24 */
		{ "CYCLE_ACTIVITY.STALLS_L3_MISS", PERF_TYPE_RAW, 0x060006a3, 0, 0, 0, 0 },
		/* [SKL] MEM_TRANS_RETIRED.LOAD_LATENCY_GT_32: 0xCD/0x01 with
		 * MSRValue 0x20 in MSR 0x3F6 (the threshold), which perf
		 * carries in config1 ("ldlat" = config1:0-15, the kernel's
		 * arch/x86/events/intel/core.c) */
		{ "MEM_TRANS_RETIRED.LOAD_LATENCY:ldlat=32", PERF_TYPE_RAW, 0x01cd, 0x20, 0, 0, 0 },
		/* [SKL] 0xC3/0x01 CounterMask 1 EdgeDetect 1; [SDM] edge at 18 */
		{ "MACHINE_CLEARS.COUNT", PERF_TYPE_RAW, 0x010401c3, 0, 0, 0, 0 },
	};
	return ROWS(w);
}

static bool skylake(void)
{
	return in_model("skl", skl_rows);
}

/* ---- Ice Lake ----------------------------------------------------------- */

static bool icl_rows(void)
{
	static const struct want w[] = {
		/* [ICL] 0xd1/0x20 */
		{ "MEM_LOAD_RETIRED.L3_MISS", PERF_TYPE_RAW, 0x20d1, 0, 0, 0, 0 },
		/* [ICL] 0xd2/0x04 */
		{ "MEM_LOAD_L3_HIT_RETIRED.XSNP_HITM", PERF_TYPE_RAW, 0x04d2, 0, 0, 0, 0 },
		/* [ICL] 0xc0/0x00 */
		{ "INST_RETIRED.ANY_P", PERF_TYPE_RAW, 0xc0, 0, 0, 0, 0 },
		/* [ICL] 0xc2/0x02 CounterMask 1 Invert 1; [SDM] INV at 23 */
		{ "UOPS_RETIRED.STALL_CYCLES", PERF_TYPE_RAW, 0x018002c2, 0, 0, 0, 0 },
		/* [ICL] 0xc5/0x00 */
		{ "BR_MISP_RETIRED.ALL_BRANCHES", PERF_TYPE_RAW, 0xc5, 0, 0, 0, 0 },
	};
	return ROWS(w);
}

static bool icelake(void)
{
	return in_model("icl", icl_rows);
}

/* ---- Zen 3 -------------------------------------------------------------- */

static bool zen3_rows(void)
{
	static const struct want w[] = {
		/* [ZEN3] ex_ret_instr PMCx0C0 */
		{ "RETIRED_INSTRUCTIONS", PERF_TYPE_RAW, 0xc0, 0, 0, 0, 0 },
		/* [ZEN3] ex_ret_brn_misp PMCx0C3 */
		{ "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", PERF_TYPE_RAW, 0xc3, 0, 0, 0, 0 },
		/* [ZEN3] ex_ret_fused_instr PMCx1D0; [AMDF] 0x1 -> bits 35:32 */
		{ "RETIRED_FUSED_INSTRUCTIONS", PERF_TYPE_RAW, 0x1000000d0ULL, 0, 0, 0, 0 },
		/* [ZEN3] PMCx18E umask 0x18; [AMDF] */
		{ "IC_TAG_HIT_MISS.IC_MISS", PERF_TYPE_RAW, 0x10000188eULL, 0, 0, 0, 0 },
	};
	struct pmubpf_event ev;
	char err[256];

	if (!ROWS(w))
		return false;
	/* Intel's names are not Zen 3's: the usual unknown-event line. */
	CHECK(event__parse("MEM_LOAD_RETIRED.L3_MISS", NULL, &ev, err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "unknown event 'MEM_LOAD_RETIRED.L3_MISS' (not a named event of AMD64 Fam19h Zen3 (amd64_fam19h_zen3) either; see 'pmubpf list')");
	return true;
}

static bool zen3(void)
{
	return in_model("amd64_fam19h_zen3", zen3_rows);
}

/* ---- modifiers ---------------------------------------------------------- */

static bool modifier_rows(void)
{
	/* INST_RETIRED.ANY_P is 0xc0/0x00 [SKL]; [SDM] bit positions. */
	static const struct want w[] = {
		/* perf's group */
		{ "INST_RETIRED.ANY_P:pp", PERF_TYPE_RAW, 0xc0, 0, 2, 0, 0 },
		{ "INST_RETIRED.ANY_P:u", PERF_TYPE_RAW, 0xc0, 0, 0, 0, 1 },
		{ "INST_RETIRED.ANY_P:k", PERF_TYPE_RAW, 0xc0, 0, 0, 1, 0 },
		{ "INST_RETIRED.ANY_P:ukp", PERF_TYPE_RAW, 0xc0, 0, 1, 0, 0 },
		/* libpfm4's attributes */
		{ "INST_RETIRED.ANY_P:u=1:k=0", PERF_TYPE_RAW, 0xc0, 0, 0, 0, 1 },
		{ "INST_RETIRED.ANY_P:precise=2", PERF_TYPE_RAW, 0xc0, 0, 2, 0, 0 },
		/* CMASK 2 <<24, INV <<23, edge <<18 */
		{ "INST_RETIRED:ANY_P:c=2:e:i", PERF_TYPE_RAW, 0x028400c0, 0, 0, 0, 0 },
		/* both: libpfm4's first, perf's group last */
		{ "INST_RETIRED.ANY_P:c=2:pp", PERF_TYPE_RAW, 0x020000c0, 0, 2, 0, 0 },
		{ "INST_RETIRED.ANY_P:precise=3:u", PERF_TYPE_RAW, 0xc0, 0, 3, 0, 1 },
	};
	struct pmubpf_event ev;
	char err[256];

	if (!ROWS(w))
		return false;
	/* The base name (pprof's sample type) keeps libpfm4's part,
	 * without perf's group; the file tag is made from the whole. */
	CHECK(!event__parse("MEM_LOAD_RETIRED.L3_MISS:pp", NULL, &ev, err, sizeof(err)));
	CHECK_STR(ev.base, "MEM_LOAD_RETIRED.L3_MISS");
	CHECK_STR(ev.value_type, "MEM_LOAD_RETIRED.L3_MISS");
	CHECK_STR(ev.value_unit, "count");
	CHECK_STR(ev.file_tag, "MEM_LOAD_RETIRED.L3_MISS_pp");
	CHECK(!ev.is_timer && !ev.tracepoint);
	/* Shaped like a tracepoint ("SYS:NAME:..."), whose check fails
	 * first: the named event wins and no error text is left behind. */
	CHECK(!event__parse("INST_RETIRED:ANY_P:c=2", NULL, &ev, err, sizeof(err)));
	CHECK_STR(err, "");
	return true;
}

static bool modifiers(void)
{
	return in_model("skl", modifier_rows);
}

/* ---- errors ------------------------------------------------------------- */

static bool error_rows(void)
{
	static const struct { const char *spec, *says; } bad[] = {
		{ "MEM_LOAD_RETIRED", "unit mask" },
		{ "MEM_LOAD_RETIRED.NO_SUCH_UMASK", "'pmubpf list MEM_LOAD_RETIRED'" },
		{ "INST_RETIRED.ANY_P:period=1000", "with -c or -F" },
		{ "INST_RETIRED.ANY_P:freq=99", "with -c or -F" },
		{ "INST_RETIRED.ANY_P:cpu=1", "with -C" },
		{ "INST_RETIRED.ANY_P:pppp", "at most 3 p" },
		{ "INST_RETIRED.ANY_P:zz", "event 'INST_RETIRED.ANY_P:zz'" },
		{ "NO_SUCH_EVENT.ANY", "unknown event 'NO_SUCH_EVENT.ANY'" },
		/* what libpfm4 refuses as a string (not as an event) is an
		 * unknown event, not libpfm4's "invalid parameters" */
		{ "cache misses", "unknown event 'cache misses' (did you mean 'cache-misses'?)" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pmubpf_event ev;
		char err[256] = "";

		if (event__parse(bad[i].spec, NULL, &ev, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, bad[i].says) || strchr(err, '\n')) {
			printf("  %s: '%s', want a line with '%s'\n", bad[i].spec, err, bad[i].says);
			return false;
		}
	}
	return true;
}

static bool errors(void)
{
	return in_model("skl", error_rows);
}

/* ---- precedence: every name pmubpf knew keeps its meaning --------------- */

static char tp_root[64];

static bool put(const char *rel, const char *content)
{
	char path[256], dir[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tp_root, rel);
	for (char *s = strchr(path + strlen(tp_root) + 1, '/'); s; s = strchr(s + 1, '/')) {
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

static bool precedence_rows(void)
{
	static const struct { const char *spec; __u32 type; __u64 config; } old[] = {
		/* libpfm4 knows these spellings too (its perf and ix86arch
		 * tables); pmubpf's own meaning wins */
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "INSTRUCTIONS", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		{ "branch-misses:pp", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		{ "LLC-load-misses", PERF_TYPE_HW_CACHE,
		  PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
		  (PERF_COUNT_HW_CACHE_RESULT_MISS << 16) },
		{ "r01c2", PERF_TYPE_RAW, 0x01c2 },
		/* a tracepoint named like a libpfm4 event stays the tracepoint */
		{ "MEM_LOAD_RETIRED:L3_MISS", PERF_TYPE_TRACEPOINT, 4242 },
	};

	tracefs__set_root(tp_root);
	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
		struct pmubpf_event ev;
		char err[256];

		if (event__parse(old[i].spec, NULL, &ev, err, sizeof(err))) {
			printf("  %s: %s\n", old[i].spec, err);
			return false;
		}
		if (ev.attr.type != old[i].type || ev.attr.config != old[i].config) {
			printf("  %s: type %u config %#llx, want type %u config %#llx\n",
			       old[i].spec, ev.attr.type, (unsigned long long)ev.attr.config,
			       old[i].type, (unsigned long long)old[i].config);
			return false;
		}
	}
	return true;
}

/* Knights Corner's libpfm4 table has BRANCHES: still pmubpf's. */
static bool knc_rows(void)
{
	struct pmubpf_event ev;
	char err[256];

	CHECK(!event__parse("branches", NULL, &ev, err, sizeof(err)));
	CHECK_EQ_INT(ev.attr.type, PERF_TYPE_HARDWARE);
	CHECK_EQ_INT(ev.attr.config, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
	CHECK(!event__parse("BRANCHES:u", NULL, &ev, err, sizeof(err)));
	CHECK_EQ_INT(ev.attr.type, PERF_TYPE_HARDWARE);
	return true;
}

/* Zen 4's RESYNCS looks like a raw code but is none (not hex): it was
 * "bad raw event" and is now the named event. A hex one stays raw. */
static bool zen4_rows(void)
{
	struct pmubpf_event ev;
	char err[256];

	CHECK(!event__parse("RESYNCS", NULL, &ev, err, sizeof(err)));
	CHECK_STR(ev.base, "RESYNCS");
	CHECK_EQ_INT(ev.attr.type, PERF_TYPE_RAW);
	CHECK(ev.hardware && err[0] == '\0');
	CHECK(!event__parse("rc0", NULL, &ev, err, sizeof(err)));
	CHECK_EQ_INT(ev.attr.config, 0xc0);
	CHECK_STR(ev.base, "rc0");
	return true;
}

static bool precedence(void)
{
	static const char *const made[] = {
		"events/MEM_LOAD_RETIRED/L3_MISS/id", "events/MEM_LOAD_RETIRED/L3_MISS",
		"events/MEM_LOAD_RETIRED", "events", "",
	};
	char path[256];
	bool ok;

	snprintf(tp_root, sizeof(tp_root), "/tmp/pmubpf-pfm-XXXXXX");
	CHECK(mkdtemp(tp_root));
	ok = put("events/MEM_LOAD_RETIRED/L3_MISS/id", "4242") &&
	     in_model("skl", precedence_rows) && in_model("knc", knc_rows) &&
	     in_model("amd64_fam19h_zen4", zen4_rows);
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tp_root, made[i]);
		remove(path);
	}
	return ok;
}

/* ---- the model's list --------------------------------------------------- */

struct seen { int n; bool l3_miss, described; };

static void count_named(const struct pfm_named *n, void *arg)
{
	struct seen *s = arg;

	s->n++;
	if (!strcmp(n->name, "MEM_LOAD_RETIRED.L3_MISS")) {
		s->l3_miss = true;
		s->described = n->desc && strlen(n->desc) > 10;
	}
}

static bool list_rows(void)
{
	struct seen s = { 0 };
	char host[256];

	CHECK_EQ_INT(pfm__host(host, sizeof(host)), 1);
	CHECK(strstr(host, "(skl)"));
	CHECK(pfm__foreach(count_named, &s) == s.n);
	CHECK(s.n > 100);
	CHECK(s.l3_miss && s.described);
	return true;
}

static bool model_list(void)
{
	return in_model("skl", list_rows);
}

/* A model libpfm4 does not have: no named events, said in one line. */
static bool none_rows(void)
{
	struct pmubpf_event ev;
	char host[256], err[256];

	CHECK_EQ_INT(pfm__host(host, sizeof(host)), 0);
	CHECK(strstr(host, "no event tables"));
	CHECK_EQ_INT(pfm__foreach(count_named, &(struct seen){ 0 }), 0);
	CHECK(event__parse("MEM_LOAD_RETIRED.L3_MISS", NULL, &ev, err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "unknown event 'MEM_LOAD_RETIRED.L3_MISS' (libpfm4 has no event tables for this CPU; see 'pmubpf list')");
	return true;
}

static bool no_tables(void)
{
	return in_model("no_such_model", none_rows);
}

TEST_MAIN("pfm",
	TEST(skylake),
	TEST(icelake),
	TEST(zen3),
	TEST(modifiers),
	TEST(errors),
	TEST(precedence),
	TEST(model_list),
	TEST(no_tables))
