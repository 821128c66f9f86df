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

/* Close the window under way and write its profiles. */
static int write_window(struct session *s, const struct config *cfg)
{
	struct report_data d;
	struct session_span span;
	struct report_in in;
	char err[512], prefix[4096], path[4096];
	int ret;

	if (report_data__init(&d)) {
		fprintf(stderr, "pmubpf: out of memory\n");
		return -1;
	}
	ret = session__drain_window(s, &d, &span);
	if (ret) {
		fprintf(stderr, "pmubpf: %s\n", session__error(s));
		goto out;
	}
	session__report_in(s, &span, &in);
	in.file_stamp = span.start_wall;
	ret = report__write_data(&in, &d, stderr, stdout, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "pmubpf: %s\n", err);
		goto out;
	}
	/* Everything before the window now under way is written. */
	size_t tracked, forgotten = session__gc(s, span.end, &tracked);
	if (cfg->verbose) {
		struct symcache_stats ss;

		session__symcache_stats(s, &ss);
		fprintf(stderr, "pmubpf: window: %zu processes tracked, %zu forgotten; symbol cache: %zu objects, %zu symbols, %zu KiB\n",
			tracked, forgotten, ss.objects, ss.syms, ss.bytes >> 10);
	}
	for (int ev = 0; cfg->keep && ev < cfg->nevents; ev++) {
		report__window_path(cfg, ev, span.start_wall, path, sizeof(path), prefix, sizeof(prefix));
		int r = every__prune(prefix, cfg->keep);

		if (r < 0)
			fprintf(stderr, "pmubpf: warning: --keep: cannot remove old profiles %s*: %s\n",
				prefix, strerror(-r));
	}
out:
	report_data__free(&d);
	/* Building a window's profiles peaks at many times what the
	 * recording holds between windows (symbols, the stack table, the
	 * pprof tables): give the freed heap back, so that RSS between
	 * windows says what is kept, not the last report's high water. */
	malloc_trim(0);
	return ret;
}

int every__run(const struct config *cfg)
{
	struct session *s = session__new(cfg, false);
	enum session_end end;
	int64_t next, step = (int64_t)(cfg->every * 1e9);
	int ret, windows = 0;

	if (!s) {
		fprintf(stderr, "pmubpf: out of memory\n");
		return 1;
	}
	if (session__open(s) || session__build(s) || session__start(s)) {
		fprintf(stderr, "pmubpf: %s\n", session__error(s));
		ret = session__status(s);
		goto out;
	}
	next = mono_ns() + step;
	ret = 0;
	windows = 1; /* the last one */
	while ((end = session__step(s)) == SESSION_GOING) {
		int64_t now = mono_ns();

		if (now < next)
			continue;
		if (write_window(s, cfg)) {
			ret = 1;
			break;
		}
		windows++;
		/* A late window does not make the next ones short. */
		next += step;
		if (next <= now)
			next = now + step;
	}
	if (end == SESSION_ERROR) {
		fprintf(stderr, "pmubpf: %s\n", session__error(s));
		ret = 1;
	}
	session__stop(s);
	if (write_window(s, cfg)) /* the last, shorter one */
		ret = 1;
	/* What the windows add up to: each sample is in exactly one of them
	 * (as a sample, a lost one, or an idle one left out). */
	for (int ev = 0; ev < cfg->nevents; ev++) {
		uint64_t n, period;

		if (!session__totals(s, ev, &n, &period))
			fprintf(stderr, "pmubpf: %s: %llu samples taken in all windows (%d windows)\n",
				cfg->events[ev].name, (unsigned long long)n, windows);
	}
	int st = session__end(s);
	if (!ret)
		ret = st;
out:
	session__free(s);
	return ret;
}
