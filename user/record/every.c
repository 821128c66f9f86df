/* every.c — see every.h. */
#include "every.h"
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/clock.h"
#include "lib/grow.h"
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

/* One --every run: what was drained since the last profiles. */
struct every {
	struct session *s;
	const struct config *cfg;
	struct report_data d;   /* the drained windows, not written yet */
	bool have;              /* d holds at least one drained window */
	int64_t start_wall;     /* the first one's start (wall ns) */
	int64_t duration;       /* their length together (ns) */
	int64_t end;            /* the last one's end (CLOCK_MONOTONIC ns) */
	int profiles;           /* sets of profiles written */
};

/* Close the window under way and add it to what the next profiles hold:
 * the maps are emptied every --window seconds, however long --every is. */
static int drain(struct every *e)
{
	struct session_span span;

	if (!e->have && report_data__init(&e->d)) {
		fprintf(stderr, "pmubpf: out of memory\n");
		return -1;
	}
	if (!e->have) {
		e->have = true;
		e->duration = 0;
		e->start_wall = 0;
	}
	if (session__drain_window(e->s, &e->d, &span)) {
		fprintf(stderr, "pmubpf: %s\n", session__error(e->s));
		return -1;
	}
	if (!e->start_wall)
		e->start_wall = span.start_wall;
	e->duration += span.duration;
	e->end = span.end;
	return 0;
}

/* Write the drained windows' profiles (one per event), then forget what
 * they needed. */
static int write_profiles(struct every *e)
{
	const struct config *cfg = e->cfg;
	struct session_span span = { e->start_wall, e->duration, e->end };
	struct report_in in;
	char err[512], prefix[4096], path[4096];
	int ret;

	if (!e->have)
		return 0;
	session__report_in(e->s, &span, &in);
	in.file_stamp = span.start_wall;
	ret = report__write_data(&in, &e->d, stderr, stdout, err, sizeof(err));
	report_data__free(&e->d);
	e->have = false;
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
		fprintf(stderr, "pmubpf: window: %zu processes tracked, %zu forgotten; symbol cache: %zu objects, %zu symbols, %zu KiB\n",
			tracked, forgotten, ss.objects, ss.syms, ss.bytes >> 10);
	}
	for (int ev = 0; cfg->keep && ev < cfg->nevents; ev++) {
		report__window_path(cfg, ev, span.start_wall, path, sizeof(path), prefix, sizeof(prefix));
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
	int64_t next_write, next_drain, now;
	int64_t write_step = (int64_t)(cfg->every * 1e9);
	int64_t drain_step = (int64_t)(session__window(cfg) * 1e9);
	int ret;

	e.s = session__new(cfg, false);
	if (!e.s) {
		fprintf(stderr, "pmubpf: out of memory\n");
		return 1;
	}
	if (session__open(e.s) || session__build(e.s) || session__start(e.s)) {
		fprintf(stderr, "pmubpf: %s\n", session__error(e.s));
		ret = session__status(e.s);
		goto out;
	}
	now = mono_ns();
	next_write = now + write_step;
	next_drain = now + drain_step;
	ret = 0;
	while ((end = session__step(e.s)) == SESSION_GOING) {
		now = mono_ns();
		if (now < next_drain && now < next_write)
			continue;
		if (drain(&e) || (now >= next_write && write_profiles(&e))) {
			ret = 1;
			break;
		}
		/* Late by a busy step: the next ones keep their length. */
		next_drain = now + drain_step;
		if (now >= next_write) {
			next_write += write_step;
			if (next_write <= now)
				next_write = now + write_step;
		}
		if (next_drain > next_write)
			next_drain = next_write;
	}
	if (end == SESSION_ERROR) {
		fprintf(stderr, "pmubpf: %s\n", session__error(e.s));
		ret = 1;
	}
	session__stop(e.s);
	if (drain(&e) || write_profiles(&e)) /* the last, shorter one */
		ret = 1;
	/* What the windows add up to: each sample is in exactly one of them
	 * (as a sample, a lost one, or an idle one left out). */
	for (int ev = 0; ev < cfg->nevents; ev++) {
		uint64_t n, period;

		if (!session__totals(e.s, ev, &n, &period))
			fprintf(stderr, "pmubpf: %s: %llu samples taken in all windows (%d windows)\n",
				cfg->events[ev].name, (unsigned long long)n, e.profiles);
	}
	int st = session__end(e.s);
	if (!ret)
		ret = st;
out:
	if (e.have)
		report_data__free(&e.d);
	session__free(e.s);
	return ret;
}
