/* events.c — event strings (perf's spelling) to perf_event_attr.
 *
 * Resolves the symbolic hardware/software names, the generic cache events
 * ("LLC-load-misses"), raw "rNNNN" configs and, through pmu_sysfs.c, the
 * sysfs "PMU/term=value,.../" syntax and, through pfm.c (libpfm4), the
 * CPU model's named events ("MEM_LOAD_RETIRED.L3_MISS") for names none of
 * the others knows, then applies the :u/:k/:p modifiers and fills the
 * display/file names the rest of pmubpf uses. Also suggests near names for
 * typos. Opening an event is events_open.c's, `pmubpf list` is
 * events_list.c's.
 */
#include "events.h"
#include "events_int.h"
#include "pfm.h"
#include "pmu_sysfs.h"
#include "tracefs.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "lib/errmsg.h"

#define HW(n, c, cfg) { n, c, PERF_TYPE_HARDWARE, PERF_COUNT_HW_##cfg }
#define SW(n, c, cfg) { n, c, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##cfg }

const struct sym_event event_syms[] = {
	SW("cpu-clock", NULL, CPU_CLOCK),
	SW("task-clock", NULL, TASK_CLOCK),
	HW("cycles", NULL, CPU_CYCLES),
	HW("cpu-cycles", "cycles", CPU_CYCLES),
	HW("instructions", NULL, INSTRUCTIONS),
	HW("cache-references", NULL, CACHE_REFERENCES),
	HW("cache-misses", NULL, CACHE_MISSES),
	HW("branches", NULL, BRANCH_INSTRUCTIONS),
	HW("branch-instructions", "branches", BRANCH_INSTRUCTIONS),
	HW("branch-misses", NULL, BRANCH_MISSES),
	HW("bus-cycles", NULL, BUS_CYCLES),
	HW("ref-cycles", NULL, REF_CPU_CYCLES),
	HW("stalled-cycles-frontend", NULL, STALLED_CYCLES_FRONTEND),
	HW("idle-cycles-frontend", "stalled-cycles-frontend", STALLED_CYCLES_FRONTEND),
	HW("stalled-cycles-backend", NULL, STALLED_CYCLES_BACKEND),
	HW("idle-cycles-backend", "stalled-cycles-backend", STALLED_CYCLES_BACKEND),
	SW("page-faults", NULL, PAGE_FAULTS),
	SW("faults", "page-faults", PAGE_FAULTS),
	SW("minor-faults", NULL, PAGE_FAULTS_MIN),
	SW("major-faults", NULL, PAGE_FAULTS_MAJ),
	SW("context-switches", NULL, CONTEXT_SWITCHES),
	SW("cs", "context-switches", CONTEXT_SWITCHES),
	SW("cpu-migrations", NULL, CPU_MIGRATIONS),
	SW("migrations", "cpu-migrations", CPU_MIGRATIONS),
	SW("alignment-faults", NULL, ALIGNMENT_FAULTS),
	SW("emulation-faults", NULL, EMULATION_FAULTS),
	SW("cgroup-switches", NULL, CGROUP_SWITCHES),
};

const int event_nsym = (int)(sizeof(event_syms) / sizeof(event_syms[0]));

/* Generic cache events: index i is cache i/6, op (i%6)/2, result i%2, in
 * the order of the perf_hw_cache_{id,op_id,op_result_id} enums. */
#define CACHE_OPS(c) c "-loads", c "-load-misses", c "-stores", \
	c "-store-misses", c "-prefetches", c "-prefetch-misses"

const char *const event_caches[] = {
	CACHE_OPS("L1-dcache"), CACHE_OPS("L1-icache"), CACHE_OPS("LLC"),
	CACHE_OPS("dTLB"), CACHE_OPS("iTLB"), CACHE_OPS("branch"),
	CACHE_OPS("node"),
};

const int event_ncache = (int)(sizeof(event_caches) / sizeof(event_caches[0]));

static __u64 cache_config(int i)
{
	return (__u64)(i / 6) | ((__u64)((i % 6) / 2) << 8) |
	       ((__u64)(i % 2) << 16);
}

/* ---- "did you mean" ---------------------------------------------------- */

/* Case-insensitive Levenshtein distance (a is at most EVENT_NAME_MAX). */
static int edit_distance(const char *a, const char *b)
{
	int prev[EVENT_NAME_MAX + 1], cur[EVENT_NAME_MAX + 1];
	int la = (int)strlen(a), lb = (int)strlen(b);

	if (la > EVENT_NAME_MAX || lb > EVENT_NAME_MAX)
		return INT_MAX;
	for (int j = 0; j <= lb; j++)
		prev[j] = j;
	for (int i = 1; i <= la; i++) {
		cur[0] = i;
		for (int j = 1; j <= lb; j++) {
			int sub = prev[j - 1] +
				  (tolower((unsigned char)a[i - 1]) !=
				   tolower((unsigned char)b[j - 1]));
			int del = prev[j] + 1, ins = cur[j - 1] + 1;
			int m = sub < del ? sub : del;
			cur[j] = m < ins ? m : ins;
		}
		memcpy(prev, cur, sizeof(int) * (size_t)(lb + 1));
	}
	return prev[lb];
}

int event__suggest(const char *bad, const char **out, int max)
{
	const char *best[3 + 1];
	int dist[3 + 1], n = 0, limit = max < 3 ? max : 3;
	size_t blen;

	if (!bad || !out || max <= 0)
		return 0;
	blen = strlen(bad);
	for (int i = 0; i < event_nsym + event_ncache + 1; i++) {
		const char *cand = i < event_nsym ? event_syms[i].name
				 : i < event_nsym + event_ncache ? event_caches[i - event_nsym]
				 : OFFCPU_NAME;
		int d = edit_distance(bad, cand), k;

		/* <= 3 edits, and no more than half the word: "xyz" is not
		 * a typo of "cs". */
		if (d > 3 || (size_t)d * 2 > blen)
			continue;
		for (k = n; k > 0 && dist[k - 1] > d; k--) {
			best[k] = best[k - 1];
			dist[k] = dist[k - 1];
		}
		best[k] = cand;
		dist[k] = d;
		if (n < limit)
			n++;
	}
	for (int i = 0; i < n; i++)
		out[i] = best[i];
	return n;
}

/* ---- parsing ----------------------------------------------------------- */

static int parse_raw(const char *s, __u64 *config)
{
	const char *hex = s + 1;
	char *end;

	if (s[0] != 'r' && s[0] != 'R')
		return -EINVAL;
	if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
		hex += 2;
	if (!*hex || strlen(hex) > 16)
		return -EINVAL;
	for (const char *p = hex; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return -EINVAL;
	*config = strtoull(hex, &end, 16);
	return *end ? -EINVAL : 0;
}

/* "r" followed only by letters/digits: meant as a raw event. */
static bool looks_raw(const char *s)
{
	if (s[0] != 'r' && s[0] != 'R')
		return false;
	for (s++; *s; s++)
		if (!isalnum((unsigned char)*s))
			return false;
	return true;
}

static void unknown_event(const char *body, char *err, size_t errlen)
{
	const char *sug[3];
	int n = event__suggest(body, sug, 3);
	char list[256] = "";
	size_t off = 0;

	if (!n) {
		char host[160];

		/* Spelt like a model's named event: say which model's tables
		 * were searched, so that a name from another CPU's manual
		 * reads as that and not as a typo. */
		if (strpbrk(body, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")) {
			if (pfm__host(host, sizeof(host)))
				errmsg(err, errlen, "unknown event '%s' (not a named event of %s either; see 'pmubpf list')",
					body, host);
			else
				errmsg(err, errlen, "unknown event '%s' (%s; see 'pmubpf list')",
					body, host);
			return;
		}
		errmsg(err, errlen, "unknown event '%s' (see 'pmubpf list')",
			body);
		return;
	}
	for (int i = 0; i < n && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off,
					"%s'%s'", i ? ", " : "", sug[i]);
	errmsg(err, errlen, "unknown event '%s' (did you mean %s?)", body,
		list);
}

/* Resolve the modifier-free part. Sets attr type/config and ev->base. */
static int parse_body(const char *spec, const char *body,
		      const char *sysfs_root, struct pmubpf_event *ev,
		      char *err, size_t errlen)
{
	if (strchr(body, '/')) {
		int r = pmu_sysfs__parse(sysfs_root, spec, body, &ev->attr,
					 err, errlen);
		if (r)
			return r;
		size_t plen = strcspn(body, "/");
		ev->hardware = !((plen == 8 && !strncmp(body, "software", 8)) ||
				 (plen == 10 && !strncmp(body, "tracepoint", 10)));
		snprintf(ev->base, sizeof(ev->base), "%s", body);
		return 0;
	}
	for (int i = 0; i < event_nsym; i++) {
		const struct sym_event *s = &event_syms[i];

		if (strcasecmp(body, s->name))
			continue;
		ev->attr.type = s->type;
		ev->attr.config = s->config;
		ev->hardware = s->type == PERF_TYPE_HARDWARE;
		snprintf(ev->base, sizeof(ev->base), "%s",
			 s->canon ? s->canon : s->name);
		return 0;
	}
	for (int i = 0; i < event_ncache; i++) {
		if (strcasecmp(body, event_caches[i]))
			continue;
		ev->attr.type = PERF_TYPE_HW_CACHE;
		ev->attr.config = cache_config(i);
		ev->hardware = true;
		snprintf(ev->base, sizeof(ev->base), "%s", event_caches[i]);
		return 0;
	}
	if (looks_raw(body)) {
		if (parse_raw(body, &ev->attr.config)) {
			errmsg(err, errlen,
				"event '%s': bad raw event '%s': want r followed by up to 16 hex digits, e.g. r01c2",
				spec, body);
			return -EINVAL;
		}
		ev->attr.type = PERF_TYPE_RAW;
		ev->hardware = true;
		snprintf(ev->base, sizeof(ev->base), "r%s", body + 1);
		return 0;
	}
	unknown_event(body, err, errlen);
	return -EINVAL;
}

static int parse_mods(const char *spec, const char *mods,
		      struct pmubpf_event *ev, char *err, size_t errlen)
{
	bool u = false, k = false;
	int p = 0;

	if (!*mods) {
		errmsg(err, errlen, "event '%s': empty modifier (use u, k, p)",
			spec);
		return -EINVAL;
	}
	for (const char *m = mods; *m; m++) {
		switch (*m) {
		case 'u': u = true; break;
		case 'k': k = true; break;
		case 'p': p++; break;
		default:
			errmsg(err, errlen,
				"event '%s': unknown modifier '%c' (use u, k, p)",
				spec, *m);
			return -EINVAL;
		}
	}
	if (p > 3) {
		errmsg(err, errlen,
			"event '%s': at most 3 p modifiers (:ppp)", spec);
		return -EINVAL;
	}
	if (p && !ev->hardware) {
		errmsg(err, errlen,
			"event '%s': precise modifier :p needs a hardware event",
			spec);
		return -EINVAL;
	}
	/* perf's rule: naming some privilege levels excludes the others. */
	if (u || k) {
		ev->attr.exclude_user = !u;
		ev->attr.exclude_kernel = !k;
		ev->attr.exclude_hv = 1;
	}
	/* Only when given: a named event may carry libpfm4's precise=N. */
	if (p)
		ev->attr.precise_ip = (unsigned)p;
	return 0;
}

/* Every char outside [A-Za-z0-9._-] becomes '_', runs collapsed, no
 * leading or trailing '_' from replacements. */
static void make_file_tag(const char *name, char *out, size_t len)
{
	size_t o = 0;
	bool pending = false;

	for (const char *c = name; *c && o + 2 < len; c++) {
		if (isalnum((unsigned char)*c) || strchr("._-", *c)) {
			if (pending && o)
				out[o++] = '_';
			pending = false;
			out[o++] = *c;
		} else {
			pending = true;
		}
	}
	out[o] = '\0';
	if (!o)
		snprintf(out, len, "event");
}

/* ---- tracepoints ------------------------------------------------------- */

static bool known_body(const char *body)
{
	for (int i = 0; i < event_nsym; i++)
		if (!strcasecmp(body, event_syms[i].name))
			return true;
	for (int i = 0; i < event_ncache; i++)
		if (!strcasecmp(body, event_caches[i]))
			return true;
	return looks_raw(body);
}

static bool only_mods(const char *s)
{
	return *s && strspn(s, "ukp") == strlen(s);
}

/* "SYS:NAME": 1 and ev filled if spec is a tracepoint, 0 if it is not one
 * (an event with :modifiers), -EINVAL with the reason. */
static int parse_tracepoint(const char *spec, struct pmubpf_event *ev,
			    char *err, size_t errlen)
{
	const char *colon = strchr(spec, ':'), *name;
	char sys[EVENT_NAME_MAX];
	unsigned long long id;
	size_t nlen;
	int r;

	if (!colon || strchr(spec, '/'))
		return 0;
	snprintf(sys, sizeof(sys), "%.*s", (int)(colon - spec), spec);
	name = colon + 1;
	nlen = strcspn(name, ":");
	if (!*name || (known_body(sys) && only_mods(name)))
		return 0; /* cycles:pp, or cycles: (an empty modifier, said there) */
	if (!tracefs__word(sys, strlen(sys)) || !tracefs__word(name, nlen)) {
		if (only_mods(name))
			return 0; /* a misspelt event with modifiers: said there */
		errmsg(err, errlen, "event '%s': bad tracepoint: want SYSTEM:NAME, e.g. sched:sched_switch", spec);
		return -EINVAL;
	}
	if (name[nlen]) {
		errmsg(err, errlen, "event '%s': tracepoints take no modifiers", spec);
		return -EINVAL;
	}
	r = tracefs__id(sys, name, &id);
	if (r && (known_body(sys) || (r == -ENODEV && only_mods(name))))
		return 0; /* cycles:x: a bad modifier, said there */
	if (r == -ENOSYS) {
		errmsg(err, errlen, "event '%s': no tracefs (mount -t tracefs nodev /sys/kernel/tracing)", spec);
		return -EINVAL;
	}
	if (r) {
		errmsg(err, errlen, "unknown tracepoint '%s' (see 'pmubpf list %s' or 'pmubpf list tracepoints')",
			spec, sys);
		return -EINVAL;
	}
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = id;
	ev->tracepoint = true;
	snprintf(ev->base, sizeof(ev->base), "%s", spec);
	return 1;
}

/* ---- named events (libpfm4) -------------------------------------------- */

/* A named event of the CPU model, "MEM_LOAD_RETIRED.L3_MISS:pp" or in
 * libpfm4's own syntax "INST_RETIRED:ANY_P:c=2:u=1": 1 and ev filled, 0
 * if it is none (the other parsers then say what they say today), or
 * -EINVAL with the reason. Asked only after the tracepoints and never for
 * a name pmubpf knows itself ("cycles:pp", "r01c2"), so no existing event
 * changes meaning. A last group of lowercase u, k, p letters is perf's
 * modifier group and is applied by parse_mods, after libpfm4's
 * attributes; everything before it goes to libpfm4 (no unit mask or
 * libpfm4 attribute is spelt that way). */
static int parse_named(const char *spec, struct pmubpf_event *ev, char *err,
		       size_t errlen)
{
	char name[EVENT_NAME_MAX], first[EVENT_NAME_MAX];
	char *last;
	const char *mods = NULL;
	__u64 raw;
	int r;

	if (strchr(spec, '/'))
		return 0;
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(spec, ":"), spec);
	/* Only a raw code that parses is pmubpf's: Zen 4's RESYNCS or
	 * Sapphire Rapids' RS look raw and are libpfm4's. */
	if (!*first || (known_body(first) && (!looks_raw(first) || !parse_raw(first, &raw))))
		return 0;
	snprintf(name, sizeof(name), "%s", spec);
	last = strrchr(name, ':');
	if (last && only_mods(last + 1)) {
		*last = '\0';
		mods = last + 1;
	}
	r = pfm__encode(spec, name, &ev->attr, err, errlen);
	if (r <= 0)
		return r;
	ev->hardware = true;
	snprintf(ev->base, sizeof(ev->base), "%s", name);
	if (mods && (r = parse_mods(spec, mods, ev, err, errlen)))
		return r;
	return 1;
}

/* "off-cpu": a pseudo-event, no perf_event behind it (the BPF switch
 * program measures waits). 1 and ev filled, 0 if spec is another event,
 * -EINVAL with the reason. */
static int parse_offcpu(const char *spec, struct pmubpf_event *ev,
			char *err, size_t errlen)
{
	size_t n = strlen(OFFCPU_NAME);

	if (strncasecmp(spec, OFFCPU_NAME, n) || (spec[n] && spec[n] != ':'))
		return 0;
	if (spec[n]) {
		errmsg(err, errlen, "event '%s': off-cpu takes no modifiers (--no-user, --no-kernel choose the stacks)", spec);
		memset(ev, 0, sizeof(*ev));
		return -EINVAL;
	}
	ev->attr.type = PERF_TYPE_SOFTWARE;
	ev->attr.config = PERF_COUNT_SW_DUMMY; /* never opened */
	ev->offcpu = true;
	snprintf(ev->base, sizeof(ev->base), "%s", OFFCPU_NAME);
	return 1;
}

int event__parse(const char *spec, const char *sysfs_root,
		 struct pmubpf_event *ev, char *err, size_t errlen)
{
	char body[EVENT_NAME_MAX];
	const char *mods = NULL, *cut;
	size_t len;
	int r;

	if (err && errlen)
		err[0] = '\0';
	if (!ev)
		return -EINVAL;
	memset(ev, 0, sizeof(*ev));
	if (!spec || !*spec) {
		errmsg(err, errlen, "empty event name (see 'pmubpf list')");
		return -EINVAL;
	}
	len = strlen(spec);
	if (len >= EVENT_NAME_MAX) {
		errmsg(err, errlen, "event '%.40s...': name too long (max %d characters)",
			spec, EVENT_NAME_MAX - 1);
		return -EINVAL;
	}
	if (!sysfs_root)
		sysfs_root = "/sys/bus/event_source/devices";
	ev->attr.size = sizeof(ev->attr);
	r = parse_offcpu(spec, ev, err, errlen);
	if (r < 0)
		return r;
	if (r > 0)
		goto names;
	r = parse_tracepoint(spec, ev, err, errlen);
	if (r <= 0) {
		/* Not a tracepoint here: "MEM_LOAD_RETIRED:L3_MISS" has the
		 * shape of one, so a named event is asked before its error. */
		char named_err[256];
		int n = parse_named(spec, ev, named_err, sizeof(named_err));

		if (n > 0)
			goto names;
		if (n < 0) {
			if (err && errlen)
				snprintf(err, errlen, "%s", named_err);
			r = n;
		}
	}
	if (r < 0) {
		memset(ev, 0, sizeof(*ev));
		return r;
	}
	if (r > 0)
		goto names;

	/* PMU syntax: modifiers follow the closing slash ("cpu/.../pp" or
	 * "cpu/.../:pp"); otherwise they follow the last ':'. */
	if (strchr(spec, '/')) {
		cut = strrchr(spec, '/') + 1;
		if (*cut)
			mods = *cut == ':' ? cut + 1 : cut;
	} else {
		cut = strrchr(spec, ':');
		if (cut)
			mods = cut + 1;
		else
			cut = spec + len;
	}
	memcpy(body, spec, (size_t)(cut - spec));
	body[cut - spec] = '\0';
	if (!*body) {
		errmsg(err, errlen, "event '%s': missing event name", spec);
		return -EINVAL;
	}

	r = parse_body(spec, body, sysfs_root, ev, err, errlen);
	if (!r && mods)
		r = parse_mods(spec, mods, ev, err, errlen);
	if (r) {
		memset(ev, 0, sizeof(*ev));
		return r;
	}
names:
	if (err && errlen)
		err[0] = '\0'; /* a tracepoint's error, when a named event won */
	snprintf(ev->name, sizeof(ev->name), "%s", spec);
	ev->is_timer = ev->attr.type == PERF_TYPE_SOFTWARE &&
		       (ev->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
			ev->attr.config == PERF_COUNT_SW_TASK_CLOCK);
	snprintf(ev->value_type, sizeof(ev->value_type), "%s",
		 ev->is_timer ? "cpu" : ev->base);
	snprintf(ev->value_unit, sizeof(ev->value_unit), "%s",
		 ev->is_timer || ev->offcpu ? "nanoseconds" : "count");
	make_file_tag(spec, ev->file_tag, sizeof(ev->file_tag));
	return 0;
}
