/* test_windows.c — windows: maps emptied, old profiles pruned, and every
 * sample counted in exactly one window however often the windows flip
 * (a real recording, hammered). */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "config/config.h"
#include "config/events.h"
#include "record/every.h"
#include "record/session.h"
#include "record/windows.h"
#include "report/entries.h"
#include "report/report.h"
#include "testing.h"

static bool empty_map(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_empty", 8, 8, 8192, NULL);
	uint64_t k, v = 1;

	CHECK(fd >= 0);
	for (k = 1; k <= 5000; k++)
		CHECK(bpf_map_update_elem(fd, &k, &v, BPF_ANY) == 0);
	CHECK_EQ_INT(windows__empty_map(fd, sizeof(k)), 0);
	CHECK(bpf_map_get_next_key(fd, NULL, &k) != 0 && errno == ENOENT);
	CHECK_EQ_INT(windows__empty_map(fd, sizeof(k)), 0); /* empty already */
	close(fd);
	return true;
}

static bool touch(const char *dir, const char *name)
{
	char p[512];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static bool exists(const char *dir, const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static bool prune_keeps_newest(void)
{
	char dir[] = "/tmp/pmubpf-prune.XXXXXX", prefix[256];
	const char *mine[] = { "p.cycles.20261122T100000Z.pb.gz", "p.cycles.20261122T100100Z.pb.gz",
			       "p.cycles.20261122T100200Z.pb.gz", "p.cycles.20261121T235900Z.pb.gz",
			       "p.cycles.20261122T100300Z.pb.gz" };
	const char *others[] = { "p.cycles.pb.gz", "p.cycles.20261122T1000Z.pb.gz",
				 "p.instructions.20261122T090000Z.pb.gz", "q.cycles.20261122T090000Z.pb.gz",
				 "p.cycles.20261122T090000Z.pb.gz.tmp.abc123" };

	CHECK(mkdtemp(dir));
	for (size_t i = 0; i < 5; i++)
		CHECK(touch(dir, mine[i]) && touch(dir, others[i]));
	snprintf(prefix, sizeof(prefix), "%s/p.cycles.", dir);
	CHECK_EQ_INT(every__prune(prefix, 2), 3);
	CHECK(exists(dir, mine[2]) && exists(dir, mine[4]));
	CHECK(!exists(dir, mine[0]) && !exists(dir, mine[1]) && !exists(dir, mine[3]));
	for (size_t i = 0; i < 5; i++)
		CHECK(exists(dir, others[i]));
	CHECK_EQ_INT(every__prune(prefix, 2), 0);
	for (size_t i = 0; i < 5; i++) {
		char p[512];

		snprintf(p, sizeof(p), "%s/%s", dir, others[i]);
		unlink(p);
		snprintf(p, sizeof(p), "%s/%s", dir, mine[i]);
		unlink(p);
	}
	CHECK(rmdir(dir) == 0);
	return true;
}

static bool window_names(void)
{
	struct config c = { .nevents = 1, .output = "/tmp/x/prof.pb.gz" };
	char path[256], prefix[256];
	int64_t t = 1795000000LL * 1000000000LL + 123; /* 2026-11-18T11:06:40Z */

	snprintf(c.events[0].file_tag, sizeof(c.events[0].file_tag), "cache-misses");
	report__window_path(&c, 0, t, path, sizeof(path), prefix, sizeof(prefix));
	CHECK_STR(path, "/tmp/x/prof.cache-misses.20261118T110640Z.pb.gz");
	CHECK_STR(prefix, "/tmp/x/prof.cache-misses.");
	c.output = "/tmp/x/";
	report__window_path(&c, 0, t, path, sizeof(path), NULL, 0);
	CHECK_STR(path, "/tmp/x/pmubpf.cache-misses.20261118T110640Z.pb.gz");
	c.output = "/tmp";  /* an existing directory */
	report__window_path(&c, 0, t, path, sizeof(path), NULL, 0);
	CHECK_STR(path, "/tmp/pmubpf.cache-misses.20261118T110640Z.pb.gz");
	return true;
}

/* Two windows starting within one second (a write ran late, the next
 * came on time) or a file of another run by the same name: the stamp
 * moves to the first free later second, for every event's file at once,
 * so no window's profiles replace another's. */
static bool stamps_unique(void)
{
	char dir[] = "/tmp/pmubpf-stamp.XXXXXX", out[300], path[400];
	struct config c = { .nevents = 2 };
	int64_t last = 0, s0 = 1795000000LL, ns = 1000000000LL;

	CHECK(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/p.pb.gz", dir);
	c.output = out;
	snprintf(c.events[0].file_tag, sizeof(c.events[0].file_tag), "cycles");
	snprintf(c.events[1].file_tag, sizeof(c.events[1].file_tag), "instructions");
	CHECK_EQ_INT(every__stamp(&c, s0 * ns + ns / 100, &last), s0 * ns);      /* s0.01 */
	CHECK_EQ_INT(every__stamp(&c, s0 * ns + ns * 99 / 100, &last), (s0 + 1) * ns); /* s0.99 */
	CHECK_EQ_INT(every__stamp(&c, (s0 + 1) * ns + ns * 98 / 100, &last), (s0 + 2) * ns);
	CHECK_EQ_INT(every__stamp(&c, (s0 + 4) * ns, &last), (s0 + 4) * ns); /* caught up */
	/* Another run's second event's file at s0+10 and s0+11: both taken. */
	for (int i = 10; i <= 11; i++) {
		report__window_path(&c, 1, (s0 + i) * ns, path, sizeof(path), NULL, 0);
		CHECK(touch("/", path));
	}
	last = 0;
	CHECK_EQ_INT(every__stamp(&c, (s0 + 10) * ns + 5, &last), (s0 + 12) * ns);
	CHECK_EQ_INT(last, s0 + 12);
	for (int i = 10; i <= 11; i++) {
		report__window_path(&c, 1, (s0 + i) * ns, path, sizeof(path), NULL, 0);
		unlink(path);
	}
	CHECK(rmdir(dir) == 0);
	return true;
}

/* A recording of a spinning child at a high rate whose windows flip
 * every millisecond or so for 2 s: the windows' samples, counts-map
 * losses and idle samples must add up exactly to BPF's total of samples
 * taken, in count and in period. */
static bool hammered_windows_add_up(void)
{
	struct config cfg = { .nevents = 1, .freq = 4000, .call_graph = CALL_GRAPH_FP,
			      .every = 1, .output = "/tmp/pmubpf-test-windows.pb.gz", .no_symbol = true };
	char err[256];
	pid_t child = fork();
	struct report_data d;
	uint64_t total = 0, total_period, sum = 0, sum_period = 0;
	int flips = 0;

	if (child == 0) {
		for (volatile unsigned long i = 0;; i++)
			;
	}
	CHECK(child > 0);
	CHECK(event__parse("cpu-clock", NULL, &cfg.events[0], err, sizeof(err)) == 0);
	cfg.pids = &child;
	cfg.npids = 1;
	CHECK(report_data__init(&d) == 0);
	struct session *s = session__new(&cfg, true);
	CHECK(s);
	bool ok = session__open(s) == 0 && session__build(s) == 0 && session__start(s) == 0;
	if (!ok)
		printf("  session: %s\n", session__error(s));
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ok) {
		struct session_span span;

		ok = session__drain_window(s, &d, &span) == 0;
		flips++;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= 2)
			break;
		usleep(200);
	}
	if (ok) {
		struct session_span span;

		session__stop(s);
		ok = session__drain_window(s, &d, &span) == 0 &&
		     session__totals(s, 0, &total, &total_period) == 0;
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	session__free(s);
	CHECK(ok);
	for (size_t i = 0; i < d.ev[0].n; i++) {
		sum += d.ev[0].v[i].v.count;
		sum_period += d.ev[0].v[i].v.period;
	}
	sum += d.ev[0].drops[PMUBPF_DROP_COUNTS_FULL].count + d.ev[0].drops[PMUBPF_DROP_IDLE].count;
	sum_period += d.ev[0].drops[PMUBPF_DROP_COUNTS_FULL].period + d.ev[0].drops[PMUBPF_DROP_IDLE].period;
	printf("  %d windows, %llu samples taken, %llu in the windows\n", flips,
	       (unsigned long long)total, (unsigned long long)sum);
	report_data__free(&d);
	CHECK(flips > 40); /* each flip waits an RCU grace period (ms) */
	CHECK(total > 500); /* the child ran: the check is not vacuous */
	CHECK_EQ_INT(sum, total);
	CHECK_EQ_INT(sum_period, total_period);
	return true;
}

TEST_MAIN("windows",
	  TEST(empty_map),
	  TEST(prune_keeps_newest),
	  TEST(window_names),
	  TEST(stamps_unique),
	  TEST(hammered_windows_add_up))
