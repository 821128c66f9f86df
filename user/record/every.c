/* every.c — see every.h. */
#include "every.h"
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/clock.h"
#include "lib/grow.h"
#include "push/push.h"
#include "report/entries.h"
#include "report/report.h"
#include "symbols/elfsym.h"
#include "session.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is name PREFIXBASE + stamp + ".pb.gz" (or ".folded"), the stamp made of
 * digits, T and Z? */
static bool is_window_file(const char *name, const char *base, size_t blen)
{
	size_t n = strlen(name);

	if (n <= blen + REPORT_STAMP_LEN || strncmp(name, base, blen) ||
	    (strcmp(name + blen + REPORT_STAMP_LEN, ".pb.gz") &&
	     strcmp(name + blen + REPORT_STAMP_LEN, FOLDED_SUFFIX)))
		return false;
	for (size_t i = blen; i < blen + REPORT_STAMP_LEN; i++)
		if (!strchr("0123456789TZ", name[i]))
			return false;
	return true;
}

int every__prune(const char *prefix, int keep)
{
	char dirbuf[4096], *dir, **names = NULL;
	const char *slash = strrchr(prefix, '/'), *base = slash ? slash + 1 : prefix;
	size_t blen = strlen(base), n = 0, cap = 0;
	struct dirent *de;
	int removed = 0, ret = 0;
	DIR *d;

	snprintf(dirbuf, sizeof(dirbuf), "%.*s", slash ? (int)(slash - prefix + 1) : 0, prefix);
	dir = *dirbuf ? dirbuf : ".";
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!is_window_file(de->d_name, base, blen))
			continue;
		if (GROW(names, cap, n, 1) || !(names[n] = strdup(de->d_name))) {
			ret = -ENOMEM;
			goto out;
		}
		n++;
	}
	qsort(names, n, sizeof(*names), by_name); /* the stamps sort by time */
	for (size_t i = 0; keep >= 0 && i + (size_t)keep < n; i++) {
		if (unlinkat(dirfd(d), names[i], 0) == 0)
			removed++;
		else if (errno != ENOENT)
			ret = -errno;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return ret ? ret : removed;
}

/* Only a name that is there counts as taken: an error (a directory we
 * cannot search) is left for the write to report, not looped on. */
static bool path_exists(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0;
}

int64_t every__stamp(const struct config *cfg, int64_t start_wall, int64_t *last_sec)
{
	int64_t sec = start_wall / 1000000000;
	char path[4096];

	if (sec <= *last_sec)
		sec = *last_sec + 1;
	for (bool taken = true; taken; ) {
		taken = false;
		for (int ev = 0; ev < cfg->nevents && !taken; ev++) {
			report__window_path(cfg, ev, sec * 1000000000, path, sizeof(path), NULL, 0);
			taken = path_exists(path);
			if (!taken && cfg->data_addr) {
				report__data_path(cfg, ev, sec * 1000000000, path, sizeof(path));
				taken = path_exists(path);
			}
		}
		if (taken)
			sec++;
	}
	*last_sec = sec;
	return sec * 1000000000;
}

/* Windows drained and not written yet. */
struct acc {
	struct report_data d;
	bool have;              /* d holds at least one drained window */
	int64_t start_wall;     /* the first one's start (wall ns) */
	int64_t duration;       /* their length together (ns) */
	int64_t end;            /* the last one's end (CLOCK_MONOTONIC ns) */
};

/* One --every run. Two accumulators: the windows of the profiles being
 * written, and those drained while they are (a window comes due while a
 * big profile is symbolized: the tick below drains it on time, so that
 * it never holds more than its size). */
struct every {
	struct session *s;
	const struct config *cfg;
	struct acc acc[2];
	int cur;                /* acc[cur]: what the next profiles hold */
	int64_t next_drain, drain_step; /* CLOCK_MONOTONIC ns */
	int late_drains;        /* windows drained during a write */
	int failed;             /* a drain during a write failed */
	int profiles;           /* sets of profiles written */
	int64_t last_stamp;     /* the last profiles' name (s): every__stamp */
	struct push *push[2];   /* --push, --otlp; NULL where not given */
	struct session_span pushing; /* the window being written */
};

/* Close the window under way and add it to a: the maps are emptied
 * every --window seconds, however long --every is. */
static int drain_into(struct every *e, struct acc *a)
{
	struct session_span span;

	if (!a->have && report_data__init(&a->d)) {
		fprintf(stderr, "pmubpf: out of memory\n");
		return -1;
	}
	if (!a->have) {
		a->have = true;
		a->duration = 0;
		a->start_wall = 0;
	}
	if (session__drain_window(e->s, &a->d, &span)) {
		fprintf(stderr, "pmubpf: %s\n", session__error(e->s));
		return -1;
	}
	if (!a->start_wall)
		a->start_wall = span.start_wall;
	a->duration += span.duration;
	a->end = span.end;
	return 0;
}

static int drain(struct every *e)
{
	return drain_into(e, &e->acc[e->cur]);
}

/* report_in.tick while acc[cur] is written: the notices taken in (the
 * ring buffer would fill during a long build: 25038 lost in a soak's
 * window), and a window due goes into the other accumulator. */
static void tick(void *ctx)
{
	struct every *e = ctx;
	int64_t now = mono_ns();

	session__take_notices(e->s);
	if ((now < e->next_drain && !session__window_full(e->s)) || e->failed)
		return;
	if (drain_into(e, &e->acc[!e->cur]))
		e->failed = 1;
	e->late_drains++;
	e->next_drain = now + e->drain_step;
}

/* report_in.built: a written profile to the server. */
static void push_built(void *ctx, int ev, const struct pprof *p)
{
	struct every *e = ctx;

	for (int i = 0; i < 2; i++)
		if (e->push[i])
			push__profile(e->push[i], e->cfg->events[ev].name, p,
				      e->pushing.start_wall, e->pushing.duration);
}

/* Write the drained windows' profiles (one per event), then forget what
 * they needed. */
static int write_profiles(struct every *e)
{
	const struct config *cfg = e->cfg;
	struct acc *a = &e->acc[e->cur];
	struct session_span span = { a->start_wall, a->duration, a->end };
	struct report_in in;
	char err[512], prefix[4096], path[4096];
	int ret;

	if (!a->have)
		return 0;
	int64_t stamp = every__stamp(cfg, span.start_wall, &e->last_stamp);

	session__report_in(e->s, &span, &in);
	in.file_stamp = stamp;
	in.tick = tick;
	in.tick_ctx = e;
	if (e->push[0] || e->push[1]) {
		e->pushing = span;
		in.built = push_built;
		in.built_ctx = e;
	}
	ret = report__write_data(&in, &a->d, stderr, stdout, err, sizeof(err));
	report_data__free(&a->d);
	a->have = false;
	e->cur = !e->cur; /* what was drained meanwhile comes next */
	if (!ret && e->failed)
		ret = -1, snprintf(err, sizeof(err), "draining a window while writing failed");
	if (ret) {
		fprintf(stderr, "pmubpf: %s\n", err);
		goto out;
	}
	e->profiles++;
	/* Everything before the window now under way is written. */
	size_t tracked, forgotten = session__gc(e->s, span.end, &tracked);
	if (cfg->verbose) {
		struct symcache_stats ss;

		session__symcache_stats(e->s, &ss);
		/* The heap in use against what malloc holds: RSS that grows
		 * while the first stays flat is fragmentation, not a leak. */
		struct mallinfo2 mi = mallinfo2();

		fprintf(stderr, "pmubpf: window: %zu processes tracked, %zu forgotten; symbol cache: %zu objects (%zu evicted), %zu symbols, %zu KiB; heap: %zu KiB in use, %zu KiB free\n",
			tracked, forgotten, ss.objects, ss.evicted, ss.syms, ss.bytes >> 10,
			(mi.uordblks + mi.hblkhd) >> 10, mi.fordblks >> 10);
	}
	for (int ev = 0; cfg->keep && ev < cfg->nevents; ev++) {
		report__window_path(cfg, ev, stamp, path, sizeof(path), prefix, sizeof(prefix));
		int r = every__prune(prefix, cfg->keep);

		if (r >= 0 && cfg->data_addr && !cfg->events[ev].member) {
			/* the data profiles: NAME.EVENT.data.STAMP.pb.gz */
			strncat(prefix, "data.", sizeof(prefix) - strlen(prefix) - 1);
			r = every__prune(prefix, cfg->keep);
		}
		if (r < 0)
			fprintf(stderr, "pmubpf: warning: --keep: cannot remove old profiles %s*: %s\n",
				prefix, strerror(-r));
	}
out:
	/* Building a window's profiles peaks at many times what the
	 * recording holds between windows (symbols, the stack table, the
	 * pprof tables): give the freed heap back, so that RSS between
	 * windows says what is kept, not the last report's high water. */
	malloc_trim(0);
	return ret;
}

int every__run(const struct config *cfg)
{
	struct every e = { .cfg = cfg };
	enum session_end end;
	int64_t next_write, now;
	int64_t write_step = (int64_t)(cfg->every * 1e9);
	int ret;

	char perr[512];
	if (push__start_all(cfg, e.push, perr, sizeof(perr))) {
		fprintf(stderr, "pmubpf: %s\n", perr);
		return 1;
	}
	e.s = session__new(cfg, false);
	if (!e.s) {
		fprintf(stderr, "pmubpf: out of memory\n");
		for (int i = 0; i < 2; i++)
			push__close(e.push[i], 0, NULL);
		return 1;
	}
	if (session__open(e.s) || session__build(e.s) || session__start(e.s)) {
		fprintf(stderr, "pmubpf: %s\n", session__error(e.s));
		ret = session__status(e.s);
		goto out;
	}
	now = mono_ns();
	e.drain_step = (int64_t)(session__window_secs(e.s) * 1e9);
	next_write = now + write_step;
	e.next_drain = now + e.drain_step;
	ret = 0;
	while ((end = session__step(e.s)) == SESSION_GOING) {
		now = mono_ns();
		if (now < e.next_drain && now < next_write && !session__window_full(e.s))
			continue;
		if (drain(&e)) {
			ret = 1;
			break;
		}
		/* The next window's end, before a write whose ticks drain a
		 * window due (set after it, the write's first tick drained one
		 * ~20 ms long); late by a busy step: the next ones keep their
		 * length. */
		if (e.next_drain <= now)
			e.next_drain = now + e.drain_step;
		if (now >= next_write) {
			if (write_profiles(&e)) {
				ret = 1;
				break;
			}
			next_write += write_step;
			if (next_write <= now)
				next_write = now + write_step;
		}
		if (e.next_drain > next_write)
			e.next_drain = next_write;
	}
	if (end == SESSION_ERROR) {
		fprintf(stderr, "pmubpf: %s\n", session__error(e.s));
		ret = 1;
	}
	session__stop(e.s);
	e.next_drain = INT64_MAX; /* sampling is over: the last window is this one */
	if (drain(&e) || write_profiles(&e)) /* the last, shorter one */
		ret = 1;
	session__say_totals(e.s, e.profiles);
	int st = session__end(e.s);
	if (!ret)
		ret = st;
	if (cfg->verbose && e.late_drains)
		fprintf(stderr, "pmubpf: %d windows drained while profiles were written\n", e.late_drains);
out:
	for (int i = 0; i < 2; i++)
		if (e.acc[i].have)
			report_data__free(&e.acc[i].d);
	session__free(e.s);
	for (int i = 0; i < 2; i++) /* what is queued, sent first */
		push__close(e.push[i], PUSH_EXIT_WAIT_S, NULL);
	return ret;
}
