/* events_list.c — `pmubpf list [FILTER]`: every event pmubpf knows (the
 * CPU model's named events from libpfm4 among them), each
 * with "available" only if it opened here the way pmubpf samples it
 * (event__probe), else the reason it did not. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "events.h"
#include "events_int.h"
#include "pfm.h"
#include "tracefs.h"

#define LIST_PMU_CAP 200	/* aliases listed per PMU without a filter */

struct lister {
	const char *sysfs_root;
	const char *filter;      /* NULL: all; else a substring of the name */
	const char *header;      /* printed before the first line under it */
	int shown;               /* lines printed */
	int in_section;
};

static void section(struct lister *l, const char *header)
{
	l->header = header;
	l->in_section = 0;
}

static bool wanted(const struct lister *l, const char *shown)
{
	return !l->filter || strcasestr(shown, l->filter);
}

static void line(struct lister *l, const char *shown, const char *kind, const char *what)
{
	if (l->header) {
		printf("%s%s\n", l->shown ? "\n" : "", l->header);
		l->header = NULL;
	}
	printf("  %-46s %-10s %s\n", shown, kind, what);
	l->shown++;
	l->in_section++;
}

static void list_one(struct lister *l, const char *spec, const char *shown, const char *kind)
{
	struct pmubpf_event ev;
	const char *reason;
	char err[256];

	if (!wanted(l, shown))
		return;
	if (event__parse(spec, l->sysfs_root, &ev, err, sizeof(err))) {
		line(l, shown, kind, err);
		return;
	}
	if (event__probe(&ev, err, sizeof(err)) == 0) {
		line(l, shown, kind, "available");
		return;
	}
	/* Drop the "event 'X': " prefix; the name is in the first column. */
	reason = strstr(err, "': ");
	line(l, shown, kind, reason ? reason + 3 : err);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void list_pmu(struct lister *l, const char *pmu)
{
	char path[PATH_MAX], spec[EVENT_NAME_MAX], header[PATH_MAX + 64];
	struct dirent **names;
	int n, listed = 0, more = 0;

	if (snprintf(path, sizeof(path), "%s/%s/events", l->sysfs_root, pmu) >=
	    (int)sizeof(path) || !is_dir(path))
		return;
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0)
		return;
	snprintf(header, sizeof(header), "PMU %s (%s/%s):", pmu, l->sysfs_root, pmu);
	section(l, header);
	for (int i = 0; i < n; i++) {
		const char *a = names[i]->d_name;

		/* "x.scale", "x.unit": attributes of alias x, not events. */
		if (a[0] != '.' && !strchr(a, '.') &&
		    snprintf(spec, sizeof(spec), "%s/%s/", pmu, a) < (int)sizeof(spec) &&
		    wanted(l, spec)) {
			if (l->filter || listed++ < LIST_PMU_CAP)
				list_one(l, spec, spec, "pmu");
			else
				more++;
		}
		free(names[i]);
	}
	free(names);
	if (more)
		printf("  ... and %d more (pmubpf list %s/ shows them)\n", more, pmu);
}

/* A named event (libpfm4) and, under it, its description. */
static void list_named(const struct pfm_named *n, void *arg)
{
	struct lister *l = arg;
	int before = l->shown;

	list_one(l, n->name, n->name, "named");
	if (l->shown > before && n->desc && *n->desc)
		printf("      %s\n", n->desc);
}

/* The CPU model's named events, or one line saying there are none. */
static void list_pfm(struct lister *l)
{
	char host[256], header[512];

	if (!pfm__host(host, sizeof(host))) {
		if (!l->filter)
			printf("\nNamed events: none here: %s (LIBPFM_FORCE_PMU=MODEL lists a model's, e.g. skl, icl, amd64_fam19h_zen3)\n",
			       host);
		return;
	}
	snprintf(header, sizeof(header),
		 "Named events of %s (libpfm4; -e EVENT.UMASK[:MODS]):",
		 host);
	section(l, header);
	pfm__foreach(list_named, l);
}

static void list_tp(const char *sys, const char *name, void *arg)
{
	struct lister *l = arg;
	char spec[EVENT_NAME_MAX];

	if (snprintf(spec, sizeof(spec), "%s:%s", sys, name) >= (int)sizeof(spec))
		return;
	/* Opening a tracepoint event costs an RCU grace period at its close
	 * (~40 ms here: all 2,300 take 90 s), so the full list shows what
	 * tracefs has and only a filtered one opens each. */
	if (l->filter)
		list_one(l, spec, spec, "tracepoint");
	else
		line(l, spec, "tracepoint", "-");
}

int event__list(const char *sysfs_root, const char *filter)
{
	struct lister l = { .sysfs_root = sysfs_root ? sysfs_root : "/sys/bus/event_source/devices" };
	bool only_tp = filter && !strcmp(filter, "tracepoints");
	char shown[EVENT_NAME_MAX * 2];
	struct dirent **pmus;
	int n;

	l.filter = only_tp ? NULL : filter;
	if (only_tp)
		goto tracepoints;
	section(&l, "Symbolic events:");
	for (int i = 0; i < event_nsym; i++) {
		const struct sym_event *s = &event_syms[i];
		size_t off;

		if (s->canon)
			continue;
		off = (size_t)snprintf(shown, sizeof(shown), "%s", s->name);
		for (int j = i + 1; j < event_nsym; j++)
			if (event_syms[j].canon && !strcmp(event_syms[j].canon, s->name) &&
			    off < sizeof(shown))
				off += (size_t)snprintf(shown + off, sizeof(shown) - off, " | %s",
							event_syms[j].name);
		list_one(&l, s->name, shown, s->type == PERF_TYPE_HARDWARE ? "hardware" : "software");
	}
	list_one(&l, OFFCPU_NAME, OFFCPU_NAME " (time switched out, ns)", "bpf");
	section(&l, "Generic cache events:");
	for (int i = 0; i < event_ncache; i++)
		list_one(&l, event_caches[i], event_caches[i], "cache");
	section(&l, "Raw events:");
	if (!l.filter)
		line(&l, "rNNNN", "raw", "hex config for the CPU's PMU, e.g. r01c2");

	n = scandir(l.sysfs_root, &pmus, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (pmus[i]->d_name[0] != '.')
			list_pmu(&l, pmus[i]->d_name);
		free(pmus[i]);
	}
	if (n >= 0)
		free(pmus);
	/* Last of the lists: hundreds of lines on a real CPU. */
	list_pfm(&l);
	if (!l.filter) {
		printf("\nTracepoints: SYSTEM:NAME (pmubpf list tracepoints, or pmubpf list WORD for those naming WORD)\n");
		printf("\nGroups: {EVENT,EVENT,...}: the first samples, the others are read at its samples\n");
		printf("\nModifiers: EVENT:u (user only), :k (kernel only), :p/:pp/:ppp (precise level, hardware events);\n"
		       "  named events also take libpfm4's :u=1 :k=0 :c=N (counter mask) :e (edge) :i (invert) :precise=N\n");
		return 0;
	}
tracepoints:
	section(&l, l.filter ? "Tracepoints (a sample at every hit; -c N: every Nth):"
			     : "Tracepoints (a sample at every hit; -c N: every Nth). Not opened one by one here: 'pmubpf list SYSTEM' (e.g. sched) says which are available:");
	if (tracefs__foreach(list_tp, &l) == -ENOSYS && (only_tp || !l.shown)) {
		fprintf(stderr, "pmubpf: no tracefs (mount -t tracefs nodev /sys/kernel/tracing): no tracepoints to list\n");
		return 1;
	}
	if (!l.shown) {
		fprintf(stderr, "pmubpf: no event matches '%s' (pmubpf list shows them all)\n", filter);
		return 1;
	}
	return 0;
}
