/* test_report.c — the report layer on made-up entries (user/report/):
 * build.c's profiles, losses.c's one table told twice, top.c's units,
 * mainexe.c's first mapping, entries.c's data.
 *
 * No BPF: a struct report_data is filled by hand (entries, drops, stacks
 * whose user frames are functions of this test binary), written with
 * report__write_data into a temp directory, read back with protobuf-c
 * (pprof_read.h), and checked value by value. stderr's summary goes to a
 * memory stream and is compared with the profile's comments.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cli/cli.h"
#include "report/drain.h"
#include "report/build.h"
#include "report/entries.h"
#include "report/losses.h"
#include "report/mainexe.h"
#include "report/report.h"
#include "report/top.h"
#include "report/symbolize.h"
#include "symbols/debuginfo.h"
#include "symbols/ksyms.h"
#include "pprof_read.h"
#include "testing.h"

/* libc's own qsort: under ASan the name qsort binds to the sanitizer's
 * interceptor, which lives elsewhere. */
static uint64_t libc_qsort(void)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *f = h ? dlsym(h, "qsort") : NULL;

	return (uint64_t)(uintptr_t)(f ? f : (void *)qsort);
}

/* Frames of the made-up user stacks: real functions of this binary, so
 * symbolization against our own snapshot names them. */
__attribute__((noinline, used)) int report_leaf(int x) { return x * 3 + 1; }
__attribute__((noinline, used)) int report_caller(int x) { return report_leaf(x) + 2; }

#define USTACK_KEY (PMUBPF_STACK_KEY_MIN | 0x1234)
#define MISSING_KEY (PMUBPF_STACK_KEY_MIN | 0x9999) /* never added */

struct fixture {
	char dir[64], out[128];
	struct config cfg;
	struct symcache *sc;
	struct procs *procs;
	struct report_in in;
	struct report_data d;
	char *said;   /* what report__write_data said (stderr) */
	size_t said_len;
};

static bool setup(struct fixture *f, const char *const *args)
{
	char *argv[16] = { (char *)"pmubpf" }, err[256];
	int argc = 1;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_report.XXXXXX");
	if (!mkdtemp(f->dir))
		return false;
	snprintf(f->out, sizeof(f->out), "%s/out.pb.gz", f->dir);
	argv[argc++] = (char *)"-o";
	argv[argc++] = f->out;
	while (*args && argc < 14)
		argv[argc++] = (char *)*args++;
	if (cli__parse(argc, argv, "/sys/bus/event_source/devices", &f->cfg, err, sizeof(err)) != CLI_RECORD) {
		printf("  cli: %s\n", err);
		return false;
	}
	f->sc = symcache__new();
	f->procs = f->sc ? procs__new(f->sc, -1, -1) : NULL;
	if (!f->procs || report_data__init(&f->d))
		return false;
	f->in = (struct report_in){
		.cfg = &f->cfg,
		.procs = f->procs, .counts_map_size = 4096, .stack_map_size = 2048,
		.time_nanos = 1, .duration_nanos = 1000000000,
	};
	/* One user stack: report_leaf called from report_caller. */
	struct pmubpf_stack st = { .nr = 2 };
	st.ips[0] = (uint64_t)(uintptr_t)report_leaf + 1;
	st.ips[1] = (uint64_t)(uintptr_t)report_caller + 4;
	return report_data__add_stack(&f->d, USTACK_KEY, &st) == 0;
}

static void teardown(struct fixture *f)
{
	char cmd[128];

	report_data__free(&f->d);
	procs__free(f->procs);
	symcache__free(f->sc);
	config__free(&f->cfg);
	free(f->said);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd)) { /* best effort */ }
}

static void add(struct fixture *f, uint32_t ev, uint32_t tid, uint64_t ustack,
		uint64_t count, uint64_t period)
{
	struct pmubpf_key k = { .event = ev, .tgid = (uint32_t)getpid(), .tid = tid, .pgen = 1,
				.ustack = ustack, .kstack = PMUBPF_STACK_NONE };
	struct pmubpf_val v = { count, period };

	if (report_data__add_entry(&f->d, &k, &v))
		abort();
}

/* report__write_data into f->out, its stderr into f->said. */
static int write_profiles(struct fixture *f)
{
	char err[256] = "";
	FILE *say = open_memstream(&f->said, &f->said_len);
	int ret;

	if (!say)
		return -ENOMEM;
	ret = report__write_data(&f->in, &f->d, say, NULL, err, sizeof(err));
	fclose(say);
	if (ret)
		printf("  report__write_data: %s\n", err);
	return ret;
}

static int64_t total(const pb_profile *p, int v)
{
	int64_t t = 0;

	for (size_t i = 0; i < p->n_sample; i++)
		t += p->sample[i]->value[v];
	return t;
}

/* The sample whose leaf is named `leaf`, or NULL. */
static const Perftools__Profiles__Sample *sample_with_leaf(const pb_profile *p, const char *leaf)
{
	for (size_t i = 0; i < p->n_sample; i++) {
		const char *n = p->sample[i]->n_location_id ? pb_loc_name(p, p->sample[i]->location_id[0]) : NULL;
		if (n && !strcmp(n, leaf))
			return p->sample[i];
	}
	return NULL;
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* value[0] = samples, value[1] = the sum of each sample's period: made-up
 * entries come out value for value, named, and nothing is added. */
static bool weights(void)
{
	struct fixture f;
	bool ok = false;
	pb_profile *p = NULL;

	if (!setup(&f, ARGS("-e", "cpu-clock")))
		goto out;
	add(&f, 0, 100, USTACK_KEY, 3, 3003003);
	add(&f, 0, 101, USTACK_KEY, 5, 4000000);
	add(&f, 0, 102, USTACK_KEY, 1, 999);
	if (write_profiles(&f) || !(p = load(f.out)))
		goto out;
	CHECK_EQ_INT(p->n_sample, 3);
	CHECK_EQ_INT(total(p, 0), 9);
	CHECK_EQ_INT(total(p, 1), 3003003 + 4000000 + 999);
	CHECK_STR(str(p, p->sample_type[1]->type), "cpu");
	CHECK_STR(str(p, p->sample_type[1]->unit), "nanoseconds");
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		CHECK_EQ_INT(s->n_location_id, 2);
		CHECK_STR(pb_loc_name(p, s->location_id[0]), "report_leaf");
		CHECK_STR(pb_loc_name(p, s->location_id[1]), "report_caller");
		CHECK(s->value[0] == 3 ? s->value[1] == 3003003 : s->value[0] == 5 ? s->value[1] == 4000000
		      : s->value[1] == 999);
	}
	CHECK(strstr(f.said, ": 9 samples (3 distinct) -> "));
	ok = true;
out:
	pb_free(p);
	teardown(&f);
	return ok;
}

/* Multiplexing: weights scaled by enabled/running, and the comment (and
 * stderr) says by how much; no scaling when the counter always ran. */
static bool multiplexed(void)
{
	struct fixture f;
	pb_profile *p = NULL, *q = NULL;
	bool ok = false;

	if (!setup(&f, ARGS("-e", "cpu-clock")))
		goto out;
	add(&f, 0, 100, USTACK_KEY, 4, 1000000);
	f.in.enabled[0] = 4000;
	f.in.running[0] = 1000; /* ran a quarter of the time */
	if (write_profiles(&f) || !(p = load(f.out)))
		goto out;
	CHECK_EQ_INT(total(p, 0), 4);
	CHECK_EQ_INT(total(p, 1), 4000000);
	CHECK(pb_has_comment(p, "multiplexed: the counter ran 25.0% of the time it was enabled; weights scaled by 4.000"));
	CHECK(strstr(f.said, "multiplexed: the counter ran 25.0%"));

	f.in.running[0] = 4000; /* always ran: as recorded */
	free(f.said);
	f.said = NULL;
	if (write_profiles(&f) || !(q = load(f.out)))
		goto out;
	CHECK_EQ_INT(total(q, 1), 1000000);
	for (size_t i = 0; i < q->n_comment; i++)
		CHECK(!strstr(str(q, q->comment[i]), "multiplexed"));
	CHECK(!strstr(f.said, "multiplexed"));
	ok = true;
out:
	pb_free(p);
	pb_free(q);
	teardown(&f);
	return ok;
}

/* Lost samples and stacks stay in the profile as [lost: ...] frames with
 * their weight (scaled like the rest). */
static bool lost_frames(void)
{
	struct fixture f;
	pb_profile *p = NULL;
	const Perftools__Profiles__Sample *s;
	bool ok = false;

	if (!setup(&f, ARGS("-e", "cpu-clock")))
		goto out;
	add(&f, 0, 100, USTACK_KEY, 2, 2000);
	add(&f, 0, 101, PMUBPF_STACK_LOST, 3, 3000);
	add(&f, 0, 102, PMUBPF_STACK_ERROR, 4, 4000);
	add(&f, 0, 103, MISSING_KEY, 5, 5000); /* the stacks map lacked it */
	f.d.ev[0].drops[PMUBPF_DROP_COUNTS_FULL] = (struct pmubpf_drop_val){ .count = 7, .period = 7000 };
	f.in.enabled[0] = 2;
	f.in.running[0] = 1;
	if (write_profiles(&f) || !(p = load(f.out)))
		goto out;
	CHECK((s = sample_with_leaf(p, "[lost: user stack (stacks map full)]")));
	CHECK_EQ_INT(s->value[0], 3);
	CHECK_EQ_INT(s->value[1], 6000);
	CHECK((s = sample_with_leaf(p, "[lost: counts map full]")));
	CHECK_EQ_INT(s->value[0], 7);
	CHECK_EQ_INT(s->value[1], 14000);
	CHECK_EQ_INT(s->n_location_id, 1);
	/* Walk failed, or its stack missing from the map: the same frame. */
	int64_t failed = 0;
	for (size_t i = 0; i < p->n_sample; i++) {
		const char *n = pb_loc_name(p, p->sample[i]->location_id[0]);
		if (n && !strcmp(n, "[lost: user stack (walk failed)]"))
			failed += p->sample[i]->value[0];
	}
	CHECK_EQ_INT(failed, 9);
	CHECK_EQ_INT(total(p, 0), 2 + 3 + 4 + 5 + 7);
	CHECK_EQ_INT(total(p, 1), 2 * (2000 + 3000 + 4000 + 5000 + 7000));
	ok = true;
out:
	pb_free(p);
	teardown(&f);
	return ok;
}

/* One table, told twice: every loss note is a comment and, word for word,
 * a stderr line "pmubpf: EVENT: NOTE"; idle samples are left out (no
 * sample of pid 0 is made up), counted in both. */
static bool losses_told_twice(void)
{
	struct fixture f;
	pb_profile *p = NULL;
	bool ok = false;
	int told = 0;

	if (!setup(&f, ARGS("-e", "cpu-clock")))
		goto out;
	add(&f, 0, 100, USTACK_KEY, 1, 1000);
	for (int r = 0; r < PMUBPF_DROP__MAX; r++)
		f.d.ev[0].drops[r] = (struct pmubpf_drop_val){ .count = 10 + r, .period = 1000 };
	f.in.enabled[0] = 3;
	f.in.running[0] = 2;
	if (write_profiles(&f) || !(p = load(f.out)))
		goto out;
	/* Every stderr line after the summary is a comment of the profile. */
	for (char *line = strtok(f.said, "\n"); line; line = strtok(NULL, "\n")) {
		const char *prefix = "pmubpf: cpu-clock: ";
		CHECK(!strncmp(line, prefix, strlen(prefix)));
		if (strstr(line, " distinct) -> "))
			continue;
		if (!pb_has_comment(p, line + strlen(prefix))) {
			printf("  said but not a comment: %s\n", line);
			return false;
		}
		told++;
	}
	/* ... and every loss comment was said. */
	for (size_t i = 0; i < p->n_comment; i++) {
		const char *c = str(p, p->comment[i]);
		if (!strncmp(c, "lost: ", 6) || !strncmp(c, "left out: ", 10) || !strncmp(c, "multiplexed: ", 13))
			told--;
	}
	CHECK_EQ_INT(told, 0);
	CHECK(pb_has_comment(p, "lost: 10 samples: counts map full (--counts-map-size 4096 too small)"));
	CHECK(pb_has_comment(p, "lost: 11 user stacks: stacks map full or walk failed (--stack-map-size 2048)"));
	CHECK(pb_has_comment(p, "lost: 12 kernel stacks: stacks map full or walk failed (--stack-map-size 2048)"));
	CHECK(pb_has_comment(p, "lost: 13 process/label notices: ring buffer full (retried on later samples)"));
	CHECK(pb_has_comment(p, "lost: 14 label reads: label word unreadable (samples kept unlabelled)"));
	CHECK(pb_has_comment(p, "left out: 15 idle samples (--include-idle keeps them)"));
	for (size_t i = 0; i < p->n_sample; i++)
		for (size_t j = 0; j < p->sample[i]->n_label; j++)
			CHECK(strcmp(str(p, p->sample[i]->label[j]->key), "pid") ||
			      p->sample[i]->label[j]->num != 0);
	ok = true;
out:
	pb_free(p);
	teardown(&f);
	return ok;
}

/* The table alone: nothing lost, nothing said; label bookkeeping is said
 * on stderr only when something was rejected. */
static bool loss_table(void)
{
	struct pmubpf_drop_val d[PMUBPF_DROP__MAX] = { 0 };
	struct loss_sizes sz = { 1, 2 };
	struct procs_stats ps = { 0 };
	struct report_notes n;

	report__loss_notes(d, &sz, NULL, &ps, &n);
	CHECK_EQ_INT(n.n, 0);
	d[PMUBPF_DROP_DWARF_TRUNCATED].count = 5; /* kept samples: not a loss */
	report__loss_notes(d, &sz, NULL, &ps, &n);
	CHECK_EQ_INT(n.n, 0);
	ps.label_records = 1;
	ps.label_sets = 2;
	report__loss_notes(d, &sz, NULL, &ps, &n);
	CHECK_EQ_INT(n.n, 1);
	CHECK(!n.v[0].on_stderr);
	ps.label_sets_bad = 1;
	report__loss_notes(d, &sz, NULL, &ps, &n);
	CHECK(n.v[0].on_stderr);
	CHECK_STR(n.v[0].text, "labels: 1 processes registered, 0 records rejected; 2 sets read, 0 gone before read, 1 malformed");
	/* mmap reports the kernel dropped: a loss, said on stderr too. */
	ps.reports_lost = 3;
	report__loss_notes(d, &sz, NULL, &ps, &n);
	CHECK_EQ_INT(n.n, 2);
	CHECK(n.v[1].on_stderr);
	CHECK(!strncmp(n.v[1].text, "lost: 3 mmap/exec/fork reports", 30));
	return true;
}

/* Multiplexing scales the weights back by the counter's share of its
 * time; the kernel's throttle is said (stops, their time, records lost,
 * rings not mapped), not scaled. */
static bool loss_scale_notes(void)
{
	struct pmubpf_drop_val d[PMUBPF_DROP__MAX] = { 0 };
	struct loss_sizes sz = { 1, 2 };
	struct report_notes n;
	struct loss_scale sc = { .enabled = 1000, .running = 1000 };

	CHECK(report__scale(NULL) == 1.0);
	CHECK(report__scale(&sc) == 1.0);
	report__loss_notes(d, &sz, &sc, NULL, &n);
	CHECK_EQ_INT(n.n, 0);
	sc.running = 800; /* multiplexed: ran 80% */
	CHECK(report__scale(&sc) == 1.25);
	report__loss_notes(d, &sz, &sc, NULL, &n);
	CHECK_EQ_INT(n.n, 1);
	CHECK_STR(n.v[0].text, "multiplexed: the counter ran 80.0% of the time it was enabled; weights scaled by 1.250");
	/* Throttled 7 times, 2.5 of the 10 ms it ran: said, not scaled. */
	sc.enabled = sc.running = 10000000;
	sc.throttles = 7;
	sc.throttled_ns = 2500000;
	sc.max_rate = 250;
	CHECK(report__scale(&sc) == 1.0);
	report__loss_notes(d, &sz, &sc, NULL, &n);
	CHECK_EQ_INT(n.n, 1);
	CHECK_STR(n.v[0].text, "throttled: the kernel stopped the counter 7 times for 2.5 ms of the 10.0 ms it ran (more samples a second on a CPU than kernel.perf_event_max_sample_rate=250 allows): no samples then, weights not scaled up");
	CHECK(n.v[0].on_stderr);
	/* Under 1% of the time (a frequency event's first tick): in the
	 * profile only. */
	sc.throttled_ns = 99999;
	report__loss_notes(d, &sz, &sc, NULL, &n);
	CHECK(!n.v[0].on_stderr);
	sc.throttled_ns = 2500000;
	/* Records lost to a full ring: counted. */
	sc.throttles_unseen = 4;
	report__loss_notes(d, &sz, &sc, NULL, &n);
	CHECK(strstr(n.v[0].text, "not scaled up; 4 more records lost, their stops untimed"));
	/* Rings that could not be mapped: said, as a loss. */
	sc.unwatched = 2;
	report__loss_notes(d, &sz, &sc, NULL, &n);
	CHECK_EQ_INT(n.n, 2);
	CHECK(!strncmp(n.v[0].text, "throttling not watched on 2 CPUs", 32));
	CHECK(n.v[0].on_stderr);
	sc.unwatched = 0;
	/* A group member: its leader's stops. */
	sc.member = true;
	report__loss_notes(d, &sz, &sc, NULL, &n);
	CHECK(strstr(n.v[0].text, "its leader's samples then are missing"));
	return true;
}

/* One profile per event, each with only its own entries and units. */
static bool profile_per_event(void)
{
	struct fixture f;
	pb_profile *p = NULL, *q = NULL;
	char path[160];
	bool ok = false;

	if (!setup(&f, ARGS("-e", "cpu-clock", "-e", "page-faults")))
		goto out;
	add(&f, 0, 100, USTACK_KEY, 2, 2000000);
	add(&f, 1, 100, USTACK_KEY, 6, 6);
	add(&f, 1, 101, PMUBPF_STACK_LOST, 1, 1);
	if (write_profiles(&f))
		goto out;
	report__output_path(&f.cfg, 0, path, sizeof(path));
	CHECK((p = load(path)));
	report__output_path(&f.cfg, 1, path, sizeof(path));
	CHECK((q = load(path)));
	CHECK_EQ_INT(p->n_sample, 1);
	CHECK_EQ_INT(total(p, 1), 2000000);
	CHECK_STR(str(p, p->sample_type[1]->unit), "nanoseconds");
	CHECK_EQ_INT(q->n_sample, 2);
	CHECK_EQ_INT(total(q, 0), 7);
	CHECK_STR(str(q, q->sample_type[1]->type), "page-faults");
	CHECK_STR(str(q, q->sample_type[1]->unit), "count");
	CHECK(strstr(f.said, "pmubpf: cpu-clock: 2 samples (1 distinct)"));
	CHECK(strstr(f.said, "pmubpf: page-faults: 7 samples (2 distinct)"));
	ok = true;
out:
	pb_free(p);
	pb_free(q);
	teardown(&f);
	return ok;
}

/* pprof's "File:" is the first mapping: -p names the profiled process's
 * executable (this test binary), though libc's frames came first. */
static bool main_executable_first(void)
{
	struct fixture f;
	pb_profile *p = NULL;
	char pid[16];
	bool ok = false;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (!setup(&f, ARGS("-p", pid)))
		goto out;
	/* A stack of libc only, added first: its mapping is met first. */
	struct pmubpf_stack st = { .nr = 1 };
	st.ips[0] = libc_qsort() + 1;
	if (report_data__add_stack(&f.d, PMUBPF_STACK_KEY_MIN | 7, &st))
		goto out;
	add(&f, 0, 100, PMUBPF_STACK_KEY_MIN | 7, 1, 1000);
	add(&f, 0, 100, USTACK_KEY, 1, 1000);
	if (write_profiles(&f) || !(p = load(f.out)))
		goto out;
	CHECK(p->n_mapping >= 2);
	const char *first = str(p, p->mapping[0]->filename);
	CHECK(first && strstr(first, "/test_report"));
	/* Ids stay 1..n in file order, and locations follow the move. */
	for (size_t i = 0; i < p->n_mapping; i++)
		CHECK_EQ_INT(p->mapping[i]->id, i + 1);
	const Perftools__Profiles__Sample *s = sample_with_leaf(p, "report_leaf");
	CHECK(s);
	const Perftools__Profiles__Location *l = pb_location(p, s->location_id[0]);
	CHECK(l && l->mapping_id == 1);
	s = sample_with_leaf(p, "qsort");
	CHECK(s && (l = pb_location(p, s->location_id[0])) && l->mapping_id != 1);
	ok = true;
out:
	pb_free(p);
	teardown(&f);
	return ok;
}

/* A child running sleep(1), once it has exec'd (its exe is sleep). */
static pid_t spawn_sleep(void)
{
	char path[64], link[256];
	pid_t pid = fork();

	if (pid == 0) {
		execlp("sleep", "sleep", "10", (char *)NULL);
		_exit(127);
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	for (int i = 0; pid > 0 && i < 2000; i++) {
		ssize_t n = readlink(path, link, sizeof(link) - 1);
		if (n > 0 && (link[n] = '\0', strstr(link, "sleep")))
			return pid;
		usleep(1000);
	}
	return -1;
}

/* -a: the executable with the most weight summed over its processes;
 * a process's main executable is the mapping of /proc/PID/exe. */
static bool main_executable_most_samples(void)
{
	pid_t child = spawn_sleep();
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	struct proc *me = ps ? procs__get(ps, (uint32_t)getpid(), 1) : NULL;
	struct proc *other = ps && child > 0 ? procs__get(ps, (uint32_t)child, 1) : NULL;

	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	struct config cfg = { .all = true };
	struct mainexe *m = mainexe__new(&cfg, 0);
	struct proc *pr = NULL;
	const struct procmap *exe;

	CHECK(me && other && m);
	CHECK((exe = procs__main_map(me)) && strstr(exe->path, "/test_report"));
	CHECK((exe = procs__main_map(other)) && strstr(exe->path, "sleep"));
	CHECK(mainexe__add(m, me, 1, 10) == 0);
	CHECK(mainexe__add(m, other, 1, 6) == 0);
	CHECK(mainexe__add(m, other, 1, 6) == 0); /* other: 12 > 10 */
	CHECK(mainexe__add(m, NULL, 0, 100) == 0); /* idle: no process */
	exe = mainexe__pick(m, &pr);
	CHECK(exe && pr == other);
	mainexe__free(m);
	/* With -p, the profiled process wins even with fewer samples. */
	cfg.all = false;
	pid_t pid = getpid();
	cfg.pids = &pid;
	cfg.npids = 1;
	CHECK((m = mainexe__new(&cfg, 0)));
	CHECK(mainexe__add(m, me, 1, 10) == 0);
	CHECK(mainexe__add(m, other, 1, 100) == 0);
	exe = mainexe__pick(m, &pr);
	CHECK(exe && pr == me);
	mainexe__free(m);
	procs__free(ps);
	symcache__free(sc);
	return true;
}

/* --top's numbers in pprof's units. */
static bool top_units(void)
{
	static const struct { int64_t v; const char *unit, *want; } cases[] = {
		{ 7931931924, "nanoseconds", "7.93s" },
		{ 1000000, "nanoseconds", "1ms" },
		{ 350000, "nanoseconds", "350us" },
		{ 12, "nanoseconds", "12ns" },
		{ 0, "nanoseconds", "0" },
		{ 7200000000000, "nanoseconds", "2hrs" },
		{ 1200000, "count", "1.20M" },
		{ 999, "count", "999" },
		{ 1500, "count", "1.50k" },
		{ 3000000000, "count", "3G" },
		{ -2500000, "nanoseconds", "-2.50ms" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		top__scaled(cases[i].v, cases[i].unit, buf, sizeof(buf));
		CHECK_STR(buf, cases[i].want);
	}
	return true;
}

/* The --top table: flat (leaf) and cum (anywhere in the stack, once per
 * sample) per function, heaviest first, in units. */
static bool top_table(void)
{
	struct pprof *p = pprof__new("cpu", "nanoseconds", 1000);
	struct top *t = top__new();
	struct pprof_line a = { .function = "a" }, b = { .function = "b" };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	CHECK(p && t && f);
	uint64_t la = pprof__add_location(p, 0, 1, &a, 1), lb = pprof__add_location(p, 0, 2, &b, 1);
	uint64_t s1[] = { la, lb }, s2[] = { lb, lb }; /* b recursing: cum once */
	CHECK(top__add(t, p, s1, 2, 3000000000) == 0);
	CHECK(top__add(t, p, s2, 2, 1000000) == 0);
	top__print(t, f, "cpu-clock", "cpu", "nanoseconds", 10);
	fclose(f);
	CHECK(strstr(out, "Top 10 functions for cpu-clock (cpu; 100% = 3s):"));
	CHECK(strstr(out, "        3s  99.97%         3s  99.97%  a\n"));
	CHECK(strstr(out, "       1ms   0.03%         3s 100.00%  b\n"));
	CHECK(strstr(out, "  a\n") < strstr(out, "  b\n"));
	free(out);
	top__free(t);
	pprof__free(p);
	return true;
}

/* The stack table keeps the first copy of a key and refuses bad depths. */
static bool entries_data(void)
{
	struct report_data d;
	struct pmubpf_stack a = { .nr = 1, .ips = { 11 } }, b = { .nr = 1, .ips = { 22 } };
	struct pmubpf_stack bad = { .nr = PMUBPF_MAX_DEPTH + 1 };
	struct pmubpf_key k = { .event = PMUBPF_MAX_EVENTS };
	struct pmubpf_val v = { 1, 1 };

	CHECK(report_data__init(&d) == 0);
	for (uint64_t i = 0; i < 3000; i++) /* past the first growth */
		CHECK(report_data__add_stack(&d, PMUBPF_STACK_KEY_MIN | i, i == 5 ? &a : &b) == 0);
	CHECK(report_data__add_stack(&d, PMUBPF_STACK_KEY_MIN | 5, &b) == 0);
	CHECK_EQ_INT(report_data__stack(&d, PMUBPF_STACK_KEY_MIN | 5)->ips[0], 11);
	CHECK_EQ_INT(report_data__stack(&d, PMUBPF_STACK_KEY_MIN | 2999)->ips[0], 22);
	CHECK(!report_data__stack(&d, PMUBPF_STACK_KEY_MIN | 3000));
	CHECK_EQ_INT(report_data__add_stack(&d, 1, &bad), -EINVAL);
	CHECK_EQ_INT(report_data__add_entry(&d, &k, &v), -EINVAL);
	report_data__free(&d);
	return true;
}

/* drain.c against real (unattached) BPF maps shaped like pmubpf's: every
 * entry, every stack it names, drops summed over CPUs; a drops map that
 * cannot be read is an error, never zero losses. */
static bool drain_maps(void)
{
	int ncpu = libbpf_num_possible_cpus();
	int counts = bpf_map_create(BPF_MAP_TYPE_HASH, "t_counts", sizeof(struct pmubpf_key),
				    sizeof(struct pmubpf_val), 64, NULL);
	int stacks = bpf_map_create(BPF_MAP_TYPE_HASH, "t_stacks", 8, sizeof(struct pmubpf_stack), 64, NULL);
	int drops = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "t_drops", 4, sizeof(struct pmubpf_drop_val),
				   2 * PMUBPF_DROP__MAX, NULL);
	int short_drops = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "t_drops1", 4,
					 sizeof(struct pmubpf_drop_val), PMUBPF_DROP__MAX, NULL);
	struct report_maps m = { .counts_fd = counts, .stacks_fd = stacks, .drops_fd = drops,
				 .nr_cpus = ncpu, .nevents = 2 };
	struct pmubpf_stack st = { .nr = 2, .ips = { 5, 6 } };
	struct pmubpf_drop_val *dv = calloc(ncpu > 0 ? ncpu : 1, sizeof(*dv));
	struct report_data d;
	char err[256] = "";
	uint64_t skey = PMUBPF_STACK_KEY_MIN | 42;

	CHECK(ncpu > 0 && dv);
	CHECK(counts >= 0 && stacks >= 0 && drops >= 0 && short_drops >= 0);
	for (uint32_t i = 0; i < 10; i++) {
		struct pmubpf_key k = { .event = i % 2, .tgid = 7, .tid = i,
					.ustack = i < 5 ? skey : PMUBPF_STACK_KEY_MIN | 43, /* 43: absent */
					.kstack = PMUBPF_STACK_NONE };
		struct pmubpf_val v = { i + 1, 1000 * (i + 1) };
		CHECK(bpf_map_update_elem(counts, &k, &v, BPF_ANY) == 0);
	}
	CHECK(bpf_map_update_elem(stacks, &skey, &st, BPF_ANY) == 0);
	for (int c = 0; c < ncpu; c++)
		dv[c] = (struct pmubpf_drop_val){ .count = 1, .period = 10 };
	uint32_t idx = 1 * PMUBPF_DROP__MAX + PMUBPF_DROP_IDLE;
	CHECK(bpf_map_update_elem(drops, &idx, dv, BPF_ANY) == 0);

	CHECK(report_data__init(&d) == 0);
	CHECK_EQ_INT(report__drain(&m, &d, err, sizeof(err)), 0);
	CHECK_EQ_INT(d.ev[0].n + d.ev[1].n, 10);
	CHECK_EQ_INT(d.ev[0].n, 5);
	CHECK(report_data__stack(&d, skey) && report_data__stack(&d, skey)->ips[1] == 6);
	CHECK(!report_data__stack(&d, PMUBPF_STACK_KEY_MIN | 43));
	CHECK_EQ_INT(d.ev[1].drops[PMUBPF_DROP_IDLE].count, ncpu);
	CHECK_EQ_INT(d.ev[1].drops[PMUBPF_DROP_IDLE].period, 10 * ncpu);
	CHECK_EQ_INT(d.ev[0].drops[PMUBPF_DROP_IDLE].count, 0);
	report_data__free(&d);

	/* Event 1's drops are not in the map: an error that names it. */
	m.drops_fd = short_drops;
	CHECK(report_data__init(&d) == 0);
	CHECK(report__drain(&m, &d, err, sizeof(err)) < 0);
	CHECK(strstr(err, "reading the drops map"));
	report_data__free(&d);
	m.counts_fd = -1;
	CHECK(report_data__init(&d) == 0);
	CHECK(report__drain(&m, &d, err, sizeof(err)) < 0);
	CHECK(strstr(err, "reading the counts map"));
	report_data__free(&d);
	free(dv);
	close(counts);
	close(stacks);
	close(drops);
	close(short_drops);
	return true;
}

/* A window's drain with m.empty: every entry and stack over several
 * batches (stacks come 128 a call, counts 1024), and the maps left empty
 * for the window's next turn; without it the maps are left as they were. */
static bool drain_empties(void)
{
	enum { NCOUNTS = 3000, NSTACKS = 300 };
	int ncpu = libbpf_num_possible_cpus();
	int counts = bpf_map_create(BPF_MAP_TYPE_HASH, "t_counts", sizeof(struct pmubpf_key),
				    sizeof(struct pmubpf_val), 4096, NULL);
	int stacks = bpf_map_create(BPF_MAP_TYPE_HASH, "t_stacks", 8, sizeof(struct pmubpf_stack), 512, NULL);
	int drops = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "t_drops", 4, sizeof(struct pmubpf_drop_val),
				   2 * PMUBPF_DROP__MAX, NULL);
	struct report_maps m = { .counts_fd = counts, .stacks_fd = stacks, .drops_fd = drops,
				 .nr_cpus = ncpu, .nevents = 1 };
	struct report_data d;
	char err[256] = "";
	struct pmubpf_key next;
	uint64_t key;
	bool all = true;

	CHECK(counts >= 0 && stacks >= 0 && drops >= 0);
	for (uint32_t i = 0; i < NSTACKS; i++) {
		struct pmubpf_stack st = { .nr = 1, .ips = { 1000 + i } };

		key = PMUBPF_STACK_KEY_MIN | i;
		CHECK(bpf_map_update_elem(stacks, &key, &st, BPF_ANY) == 0);
	}
	for (uint32_t i = 0; i < NCOUNTS; i++) {
		struct pmubpf_key k = { .tgid = 7, .tid = i, .ustack = PMUBPF_STACK_KEY_MIN | (i % NSTACKS),
					.kstack = PMUBPF_STACK_NONE };
		struct pmubpf_val v = { 1, 1 };

		CHECK(bpf_map_update_elem(counts, &k, &v, BPF_ANY) == 0);
	}
	for (int empty = 0; empty < 2; empty++) {
		m.empty = empty;
		CHECK(report_data__init(&d) == 0);
		CHECK_EQ_INT(report__drain(&m, &d, err, sizeof(err)), 0);
		CHECK_EQ_INT(d.ev[0].n, NCOUNTS);
		for (uint32_t i = 0; i < NSTACKS; i++) {
			const struct report_stack *st = report_data__stack(&d, PMUBPF_STACK_KEY_MIN | i);

			all = all && st && st->ips[0] == 1000 + i;
		}
		CHECK(all);
		report_data__free(&d);
		/* Left as they were, then empty. */
		CHECK_EQ_INT(bpf_map_get_next_key(counts, NULL, &next) == 0, !empty);
		CHECK_EQ_INT(bpf_map_get_next_key(stacks, NULL, &key) == 0, !empty);
	}
	m.stacks_fd = -1;
	CHECK(report_data__init(&d) == 0);
	CHECK(report__drain(&m, &d, err, sizeof(err)) < 0);
	CHECK(strstr(err, "reading the stacks map"));
	report_data__free(&d);
	close(counts);
	close(stacks);
	close(drops);
	return true;
}


/* Each sample's frames as text: "name:line" per location line, leaf first,
 * then its values; the samples sorted (ids and order may differ). */
static char *profile_text(const pb_profile *p)
{
	char *buf = NULL, **lines = calloc(p->n_sample + 1, sizeof(*lines));
	size_t len = 0;
	FILE *m;

	for (size_t i = 0; lines && i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		size_t n = 0;
		FILE *o = open_memstream(&lines[i], &n);

		for (size_t j = 0; o && j < s->n_location_id; j++) {
			const Perftools__Profiles__Location *l = pb_location(p, s->location_id[j]);

			for (size_t k = 0; l && k < l->n_line; k++)
				for (size_t fi = 0; fi < p->n_function; fi++)
					if (p->function[fi]->id == l->line[k]->function_id)
						fprintf(o, "%s:%lld ", str(p, p->function[fi]->name),
							(long long)l->line[k]->line);
			fprintf(o, "| ");
		}
		if (o) {
			fprintf(o, "= %lld %lld", (long long)s->value[0], (long long)s->value[1]);
			fclose(o);
		}
	}
	if (!lines || !(m = open_memstream(&buf, &len)))
		return NULL;
	for (size_t i = 1; i < p->n_sample; i++) /* insertion sort: a few samples */
		for (size_t j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
			char *t = lines[j];
			lines[j] = lines[j - 1];
			lines[j - 1] = t;
		}
	for (size_t i = 0; i < p->n_sample; i++) {
		fprintf(m, "%s\n", lines[i]);
		free(lines[i]);
	}
	free(lines);
	fclose(m);
	return buf;
}

#define KSTACK_KEY (PMUBPF_STACK_KEY_MIN | 0x4321)
#define KSTACK_TRACE_KEY (PMUBPF_STACK_KEY_MIN | 0x4322)

/* The last profile of a recording (report_in.last) gives back what named
 * its frames as it goes: the kernel symbols once the kernel frames are
 * named, each object's DWARF once its frames are; and it is the profile
 * the same data make without giving anything back (names, source lines,
 * the tracepoint dispatch frames left out of a kernel stack). */
static bool last_gives_back(void)
{
	struct fixture f;
	struct debuginfo *dbg = NULL;
	struct ksyms *ks = NULL;
	pb_profile *p = NULL, *q = NULL;
	char *a = NULL, *b = NULL, path[160];
	struct dwarf_stats ds;
	bool ok = false;
	FILE *kf;

	if (!setup(&f, ARGS("-e", "cpu-clock")))
		goto out;
	snprintf(path, sizeof(path), "%s/kallsyms", f.dir);
	CHECK((kf = fopen(path, "w")));
	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81001000 T k_work\n"
	      "ffffffff81002000 T __traceiter_sched_switch\n"
	      "ffffffff81003000 T k_end\n", kf);
	fclose(kf);
	CHECK((ks = ksyms__load(path)));
	CHECK((dbg = debuginfo__new(NULL, 0)));
	procs__set_debuginfo(f.procs, dbg);
	struct pmubpf_stack st = { .nr = 2 };
	st.ips[0] = 0xffffffff81001010ULL;
	st.ips[1] = 0xffffffff81003010ULL;
	CHECK(report_data__add_stack(&f.d, KSTACK_KEY, &st) == 0);
	st.ips[0] = 0xffffffff81002010ULL; /* dispatch, then the traced code */
	st.ips[1] = 0xffffffff81001020ULL;
	CHECK(report_data__add_stack(&f.d, KSTACK_TRACE_KEY, &st) == 0);
	add(&f, 0, 100, USTACK_KEY, 3, 3000);
	struct pmubpf_key k = { .event = 0, .tgid = (uint32_t)getpid(), .tid = 101, .pgen = 1,
				.ustack = USTACK_KEY, .kstack = KSTACK_KEY };
	struct pmubpf_val v = { 2, 2000 };
	CHECK(report_data__add_entry(&f.d, &k, &v) == 0);
	k.tid = 102;
	k.kstack = KSTACK_TRACE_KEY;
	CHECK(report_data__add_entry(&f.d, &k, &v) == 0);
	f.in.ksyms = ks;

	CHECK(write_profiles(&f) == 0 && (p = load(f.out)));
	struct proc *pr = procs__get(f.procs, (uint32_t)getpid(), 1);
	struct elfobj *obj = symb__object(pr, (uint64_t)(uintptr_t)report_leaf, NULL);
	CHECK(obj && debuginfo__dwarf(obj));
	dwarf__stats(debuginfo__dwarf(obj), &ds);
	CHECK(ds.loaded && ds.releases == 0);
	CHECK(ksyms__count(ks) == 4);

	f.in.last = true;
	free(f.said);
	f.said = NULL;
	CHECK(write_profiles(&f) == 0 && (q = load(f.out)));
	dwarf__stats(debuginfo__dwarf(obj), &ds);
	CHECK(!ds.loaded && ds.releases == 1 && ds.units == 0);
	CHECK_EQ_INT(ksyms__count(ks), 0);

	CHECK((a = profile_text(p)) && (b = profile_text(q)));
	CHECK_STR(b, a);
	CHECK(strstr(a, "report_leaf:")); /* DWARF named it, with a line */
	CHECK(!strstr(a, "report_leaf:0 "));
	CHECK(strstr(a, "k_work:0 | k_end:0 | report_leaf:"));
	CHECK(strstr(a, "k_work:0 | report_leaf:")); /* dispatch left out */
	CHECK(!strstr(a, "__traceiter") && !strstr(b, "kallsyms]+"));
	ok = true;
out:
	free(a);
	free(b);
	pb_free(p);
	pb_free(q);
	teardown(&f);
	debuginfo__free(dbg); /* after the objects it noted (teardown) */
	ksyms__free(ks);
	return ok;
}

TEST_MAIN("report",
	TEST(weights),
	TEST(multiplexed),
	TEST(lost_frames),
	TEST(losses_told_twice),
	TEST(loss_table),
	TEST(loss_scale_notes),
	TEST(profile_per_event),
	TEST(main_executable_first),
	TEST(main_executable_most_samples),
	TEST(top_units),
	TEST(top_table),
	TEST(entries_data),
	TEST(drain_maps),
	TEST(drain_empties),
	TEST(last_gives_back),
)
