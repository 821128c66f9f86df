/* pfm.c — named model-specific PMU events through libpfm4 (pfm.h).
 *
 * libpfm4 owns the event tables (one per CPU model, from the vendors'
 * published lists) and the encoding rules (unit masks, counter mask,
 * edge, invert, offcore and load-latency registers in config1); this
 * file only asks it, keeps to the PMUs pmubpf can sample from (the CPU
 * core's), and refuses what it would otherwise drop silently: a sampling
 * period or CPU given inside the event string, which -c/-F/-C own here.
 */
#include "pfm.h"

#include <dlfcn.h>
#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "lib/errmsg.h"

/* libpfm4 is opened at the first named event, not linked: its event
 * tables are ~2 MiB of pointers the dynamic linker relocates at load,
 * private memory every recording carried, named events or not. The
 * functions used, typed by libpfm4's own declarations. */
#define PFM_SONAME "libpfm.so.4"
static struct {
	__typeof__(pfm_initialize) *initialize;
	__typeof__(pfm_find_event) *find_event;
	__typeof__(pfm_get_event_info) *get_event_info;
	__typeof__(pfm_get_event_next) *get_event_next;
	__typeof__(pfm_get_event_attr_info) *get_event_attr_info;
	__typeof__(pfm_get_os_event_encoding) *get_os_event_encoding;
	__typeof__(pfm_get_pmu_info) *get_pmu_info;
	__typeof__(pfm_strerror) *strerror;
} lib;
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status = PFM_ERR_NOINIT;
static char pfm_why[160] = "";

static void pfm_init(void)
{
	void *h = dlopen(PFM_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(pfm_why, sizeof(pfm_why), "%s", dlerror());
		return;
	}
	*(void **)&lib.initialize = dlsym(h, "pfm_initialize");
	*(void **)&lib.find_event = dlsym(h, "pfm_find_event");
	*(void **)&lib.get_event_info = dlsym(h, "pfm_get_event_info");
	*(void **)&lib.get_event_next = dlsym(h, "pfm_get_event_next");
	*(void **)&lib.get_event_attr_info = dlsym(h, "pfm_get_event_attr_info");
	*(void **)&lib.get_os_event_encoding = dlsym(h, "pfm_get_os_event_encoding");
	*(void **)&lib.get_pmu_info = dlsym(h, "pfm_get_pmu_info");
	*(void **)&lib.strerror = dlsym(h, "pfm_strerror");
	if (!lib.initialize || !lib.find_event || !lib.get_event_info || !lib.get_event_next ||
	    !lib.get_event_attr_info || !lib.get_os_event_encoding || !lib.get_pmu_info ||
	    !lib.strerror) {
		snprintf(pfm_why, sizeof(pfm_why), "%s lacks a function pmubpf uses", PFM_SONAME);
		return;
	}
	pfm_status = lib.initialize();
}

/* libpfm4 set up (at the first call, reading LIBPFM_FORCE_PMU). */
static bool pfm_ready(void)
{
	pthread_once(&pfm_once, pfm_init);
	return pfm_status == PFM_SUCCESS;
}

static bool pmu_info(pfm_pmu_t pmu, pfm_pmu_info_t *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->size = sizeof(*pi);
	return lib.get_pmu_info(pmu, pi) == PFM_SUCCESS;
}

/* The core PMU an event index belongs to, or false. */
static bool event_pmu(int idx, pfm_pmu_info_t *pi)
{
	pfm_event_info_t ei;

	memset(&ei, 0, sizeof(ei));
	ei.size = sizeof(ei);
	if (lib.get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &ei) != PFM_SUCCESS)
		return false;
	return pmu_info(ei.pmu, pi);
}

/* The event's name alone, "[PMU::]EVENT", without the unit masks and
 * attributes that follow its first '.' or (single) ':'. */
static const char *event_part(const char *name, char *buf, size_t len)
{
	const char *p = strstr(name, "::");
	size_t from = p ? (size_t)(p - name) + 2 : 0;

	snprintf(buf, len, "%.*s", (int)(from + strcspn(name + from, ".:")), name);
	return buf;
}

int pfm__encode(const char *spec, const char *name, struct perf_event_attr *attr,
		char *err, size_t errlen)
{
	struct perf_event_attr a;
	pfm_perf_encode_arg_t arg;
	pfm_pmu_info_t pi;
	char host[256], ev[256];
	int idx, r;

	if (!name || !*name || !pfm_ready())
		return 0;
	/* Whether libpfm4 names the event at all (its unit masks and
	 * attributes aside): only then is a failure below its to explain;
	 * otherwise the caller's "unknown event" is the answer. */
	idx = lib.find_event(event_part(name, ev, sizeof(ev)));
	if (idx < 0 || !event_pmu(idx, &pi))
		return 0;
	/* libpfm4's copy of perf's generic events (PERF_COUNT_HW_*): the
	 * names pmubpf knows itself already say all of them. */
	if (pi.type == PFM_PMU_TYPE_OS_GENERIC)
		return 0;
	if (pi.type != PFM_PMU_TYPE_CORE)
		return errmsg(err, errlen, "event '%s': an event of libpfm4's %s PMU (%s), which counts but cannot sample: pmubpf samples the CPU core's events",
			      spec, pi.name, pi.desc ? pi.desc : "uncore");
	memset(&a, 0, sizeof(a));
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.attr = &a;
	arg.cpu = -1;
	/* Default privilege levels: user and kernel, as perf counts. */
	r = lib.get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3,
				      PFM_OS_PERF_EVENT_EXT, &arg);
	if (r != PFM_SUCCESS) {
		pfm__host(host, sizeof(host));
		return errmsg(err, errlen, "event '%s': %s (libpfm4, %s; 'pmubpf list %.*s' shows its unit masks)",
			      spec, lib.strerror(r), host, (int)strcspn(name, ".:"), name);
	}
	if (a.sample_period || a.freq)
		return errmsg(err, errlen, "event '%s': give the sampling period with -c or -F, not in the event (period=/freq=)", spec);
	if (arg.cpu >= 0)
		return errmsg(err, errlen, "event '%s': give CPUs with -C, not in the event (cpu=)", spec);
	if (a.sample_type)
		return errmsg(err, errlen, "event '%s': pmubpf sets what a sample carries itself (hw_smpl= is not taken)", spec);
	attr->type = a.type;
	attr->config = a.config;
	attr->config1 = a.config1;
	attr->config2 = a.config2;
	attr->exclude_user = a.exclude_user;
	attr->exclude_kernel = a.exclude_kernel;
	attr->exclude_hv = a.exclude_hv;
	attr->exclude_guest = a.exclude_guest;
	attr->exclude_host = a.exclude_host;
	attr->precise_ip = a.precise_ip;
	attr->exclusive = a.exclusive;
	attr->pinned = a.pinned;
	return 1;
}

/* Calls fn(pi, arg) for every present core PMU; returns how many. */
static int foreach_core(void (*fn)(const pfm_pmu_info_t *pi, void *arg), void *arg)
{
	pfm_pmu_info_t pi;
	int n = 0;
	pfm_pmu_t p;

	if (!pfm_ready())
		return 0;
	pfm_for_all_pmus(p) {
		if (!pmu_info(p, &pi) || !pi.is_present || pi.type != PFM_PMU_TYPE_CORE)
			continue;
		n++;
		if (fn)
			fn(&pi, arg);
	}
	return n;
}

struct hostbuf { char *buf; size_t len, off; };

static void host_one(const pfm_pmu_info_t *pi, void *arg)
{
	struct hostbuf *h = arg;

	if (h->off < h->len)
		h->off += (size_t)snprintf(h->buf + h->off, h->len - h->off, "%s%s (%s)",
					   h->off ? ", " : "", pi->desc ? pi->desc : pi->name,
					   pi->name);
}

int pfm__host(char *buf, size_t len)
{
	struct hostbuf h = { buf, len, 0 };
	int n;

	if (!len)
		return foreach_core(NULL, NULL);
	buf[0] = '\0';
	n = foreach_core(host_one, &h);
	if (!n)
		snprintf(buf, len, "libpfm4 has no event tables for this CPU%s%s%s",
			 pfm_ready() ? "" : " (it did not start",
			 pfm_ready() || !pfm_why[0] ? "" : ": ", pfm_ready() ? "" : pfm_why[0] ? pfm_why : "");
	if (!n && !pfm_ready())
		strncat(buf, ")", len - strlen(buf) - 1);
	return n;
}

struct walk {
	void (*fn)(const struct pfm_named *n, void *arg);
	void *arg;
	int count;
};

static void walk_pmu(const pfm_pmu_info_t *pi, void *arg)
{
	struct walk *w = arg;
	struct pfm_named n = { .pmu = pi->name, .pmu_desc = pi->desc };
	char name[256];

	for (int e = pi->first_event; e != -1; e = lib.get_event_next(e)) {
		pfm_event_info_t ei;
		int umasks = 0;

		memset(&ei, 0, sizeof(ei));
		ei.size = sizeof(ei);
		if (lib.get_event_info(e, PFM_OS_PERF_EVENT_EXT, &ei) != PFM_SUCCESS)
			continue;
		for (int i = 0; i < ei.nattrs; i++) {
			pfm_event_attr_info_t ai;

			memset(&ai, 0, sizeof(ai));
			ai.size = sizeof(ai);
			if (lib.get_event_attr_info(e, i, PFM_OS_PERF_EVENT_EXT, &ai) != PFM_SUCCESS ||
			    ai.type != PFM_ATTR_UMASK)
				continue;
			umasks++;
			/* perf's spelling, EVENT.UMASK: the one Intel's and
			 * AMD's tables print. */
			snprintf(name, sizeof(name), "%s.%s", ei.name, ai.name);
			n.name = name;
			n.desc = ai.desc ? ai.desc : ei.desc;
			w->fn(&n, w->arg);
			w->count++;
		}
		if (!umasks) {
			n.name = ei.name;
			n.desc = ei.desc;
			w->fn(&n, w->arg);
			w->count++;
		}
	}
}

int pfm__foreach(void (*fn)(const struct pfm_named *n, void *arg), void *arg)
{
	struct walk w = { fn, arg, 0 };

	if (fn)
		foreach_core(walk_pmu, &w);
	return w.count;
}
