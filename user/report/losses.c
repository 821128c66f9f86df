/* losses.c — see losses.h. */
#include <stdarg.h>
#include <stdio.h>
#include "procs/maplog.h"
#include "losses.h"

enum size_hint { HINT_NONE, HINT_COUNTS_MAP, HINT_STACK_MAP, HINT_OFFCPU_MAP };

/* Every drop reason that is a loss (or a leaving out) of whole samples,
 * stacks, notices or labels. The DWARF walk's reasons are not here: those
 * samples are kept (build.c describes how their stacks ended). */
static const struct loss_reason {
	int drop;           /* PMUBPF_DROP_* */
	const char *fmt;    /* %llu: how many; %u: the map size of the hint */
	enum size_hint hint;
} loss_reasons[] = {
	{ PMUBPF_DROP_COUNTS_FULL, "lost: %llu samples: counts map full (--counts-map-size %u too small)", HINT_COUNTS_MAP },
	{ PMUBPF_DROP_USTACK, "lost: %llu user stacks: stacks map full or walk failed (--stack-map-size %u)", HINT_STACK_MAP },
	{ PMUBPF_DROP_KSTACK, "lost: %llu kernel stacks: stacks map full or walk failed (--stack-map-size %u)", HINT_STACK_MAP },
	{ PMUBPF_DROP_NOTICE, "lost: %llu process/label notices: ring buffer full (retried on later samples)", HINT_NONE },
	{ PMUBPF_DROP_LABEL_READ, "lost: %llu label reads: label word unreadable (samples kept unlabelled)", HINT_NONE },
	{ PMUBPF_DROP_IDLE, "left out: %llu idle samples (--include-idle keeps them)", HINT_NONE },
	{ PMUBPF_DROP_LABEL_FOREIGN, "lost: %llu labels from other writers (Go, custom-labels, OpenTelemetry): their memory unreadable at the sample (samples kept without them)", HINT_NONE },
	{ PMUBPF_DROP_LABEL_INVALID, "lost: %llu labels from other writers: an OpenTelemetry record refused at the sample (valid flag neither 0 nor 1, or attributes over 612 bytes; samples kept without them)", HINT_NONE },
	{ PMUBPF_DROP_GROUP_READ, "lost: %llu intervals: the group member's counter was unreadable at its leader's sample", HINT_NONE },
	{ PMUBPF_DROP_DATA_FULL, "lost: %llu data addresses: data map full (--counts-map-size %u sizes it): those samples are in the code profile only", HINT_COUNTS_MAP },
	{ PMUBPF_DROP_OFFCPU_FULL, "lost: %llu off-CPU waits: the waits map was full when they began (%u threads off CPU at once)", HINT_OFFCPU_MAP },
	{ PMUBPF_DROP_OFFCPU_UNSEEN, "left out: %llu off-CPU waits not seen begin (begun before the recording, or lost above): their stacks are unknown", HINT_NONE },
	{ PMUBPF_DROP_OFFCPU_END_UNSEEN, "lost: %llu off-CPU waits not seen end (the kernel's sched_switch never ran the program for the thread's switch-in): their time since their start or the last window's close is missing", HINT_NONE },
};

static __attribute__((format(printf, 3, 4)))
void note(struct report_notes *out, bool on_stderr, const char *fmt, ...)
{
	va_list ap;

	if (out->n >= REPORT_NOTES_MAX)
		return; /* cannot happen: the table is shorter */
	va_start(ap, fmt);
	vsnprintf(out->v[out->n].text, REPORT_NOTE_LEN, fmt, ap);
	va_end(ap);
	out->v[out->n++].on_stderr = on_stderr;
}

double report__scale(const struct loss_scale *sc)
{
	if (!sc || !sc->running)
		return 1.0;
	return sc->enabled > sc->running ? (double)sc->enabled / (double)sc->running : 1.0;
}

void report__loss_notes(const struct pmubpf_drop_val *d, const struct loss_sizes *sz,
			const struct loss_scale *sc, const struct procs_stats *ps,
			struct report_notes *out)
{
	double scale = report__scale(sc);
	bool throttled = sc && sc->throttles;

	out->n = 0;
	for (size_t i = 0; i < sizeof(loss_reasons) / sizeof(loss_reasons[0]); i++) {
		const struct loss_reason *r = &loss_reasons[i];
		unsigned size = r->hint == HINT_COUNTS_MAP ? sz->counts_map_size
			      : r->hint == HINT_STACK_MAP ? sz->stack_map_size
			      : r->hint == HINT_OFFCPU_MAP ? PMUBPF_OFFCPU_WAITS : 0;

		if (!d[r->drop].count)
			continue;
		if (r->hint == HINT_NONE)
			note(out, true, r->fmt, (unsigned long long)d[r->drop].count);
		else
			note(out, true, r->fmt, (unsigned long long)d[r->drop].count, size);
	}
	if (scale > 1.0)
		note(out, true, "multiplexed: the counter ran %.1f%% of the time it was enabled; weights scaled by %.3f",
		     100.0 / scale, scale);
	if (sc && sc->unwatched)
		note(out, true, "throttling not watched on %d CPUs (no ring buffer for its records: the locked-memory limit; root or CAP_IPC_LOCK lifts it): samples the kernel's rate limit stopped there are not counted",
		     sc->unwatched);
	if (throttled) {
		char rate[64] = "", unseen[96] = "", how[96];

		if (sc->max_rate)
			snprintf(rate, sizeof(rate), "=%lu", sc->max_rate);
		if (sc->throttles_unseen)
			snprintf(unseen, sizeof(unseen), "; %llu more records lost, their stops untimed",
				 (unsigned long long)sc->throttles_unseen);
		if (sc->member)
			snprintf(how, sizeof(how), "its leader's samples then are missing");
		else
			snprintf(how, sizeof(how), "no samples then, weights not scaled up");
		/* On stderr from 1% of the time: a frequency-mode event starts at
		 * a period of 1 and is often stopped once in its first tick
		 * (10 ms of a 2 s recording here), which the profile keeps. */
		bool loud = sc->throttled_ns * 100 >= sc->running || sc->throttles_unseen;

		note(out, loud, "throttled: the kernel stopped the counter %llu times for %.1f ms of the %.1f ms it ran (more samples a second on a CPU than kernel.perf_event_max_sample_rate%s allows): %s%s",
		     (unsigned long long)sc->throttles, (double)sc->throttled_ns / 1e6, (double)sc->running / 1e6,
		     rate, how, unseen);
	}
	if (ps && (ps->label_records || ps->label_bad_records || ps->label_sets ||
		   ps->label_sets_stale || ps->label_sets_bad)) {
		char forgot[128] = "";

		if (ps->label_sets_forgotten) /* windowed recordings only */
			snprintf(forgot, sizeof(forgot), "; %llu forgotten (no window used them: read again at a later sample)",
				 (unsigned long long)ps->label_sets_forgotten);
		note(out, ps->label_bad_records || ps->label_sets_stale || ps->label_sets_bad,
		     "labels: %llu processes registered, %llu records rejected; %llu sets read, %llu gone before read, %llu malformed%s",
		     (unsigned long long)ps->label_records, (unsigned long long)ps->label_bad_records,
		     (unsigned long long)ps->label_sets, (unsigned long long)ps->label_sets_stale,
		     (unsigned long long)ps->label_sets_bad, forgot);
	}
	if (ps && (ps->go_processes || ps->go_refused || ps->custom_processes ||
		   ps->custom_refused || ps->flabel_sets || ps->flabel_sets_bad))
		note(out, ps->go_refused || ps->custom_refused || ps->flabel_sets_bad,
		     "labels from other writers: Go %llu read, %llu unknown version%s%s; custom-labels %llu read, %llu refused (-v says why); sets %llu read, %llu refused (too many labels, unreadable: kept without them); %llu unions",
		     (unsigned long long)ps->go_processes, (unsigned long long)ps->go_refused,
		     ps->go_refused ? ": " : "", ps->go_refused ? ps->go_refused_version : "",
		     (unsigned long long)ps->custom_processes, (unsigned long long)ps->custom_refused,
		     (unsigned long long)ps->flabel_sets, (unsigned long long)ps->flabel_sets_bad,
		     (unsigned long long)ps->label_unions);
	if (ps && (ps->otel_processes || ps->otel_refused || ps->otel_keys_unknown))
		note(out, ps->otel_refused || ps->otel_keys_unknown,
		     "labels from OpenTelemetry thread context: %llu processes read, %llu refused (process context, schema, TLS variable: -v says why); %llu attributes left out, their key index not in the process context's key map",
		     (unsigned long long)ps->otel_processes, (unsigned long long)ps->otel_refused,
		     (unsigned long long)ps->otel_keys_unknown);
	if (ps && ps->label_sets_over)
		note(out, true, "labels: %llu sets not kept, over a cap (%u sets or %u MiB per process, %u sets or %u MiB in all, read in one window; %u times that alive at once; %llu KiB kept): samples labelled %s=[too many sets]",
		     (unsigned long long)ps->label_sets_over, LABEL_SETS_PER_PROC,
		     LABEL_BYTES_PER_PROC >> 20, LABEL_SETS_MAX, LABEL_BYTES_MAX >> 20, LABEL_ALIVE,
		     (unsigned long long)(ps->label_bytes >> 10), PROCS_LABELS_KEY);
	if (ps && ps->jit_maps_refused)
		note(out, true, "symbols: %llu perf maps (/tmp/perf-PID.map) refused for their owner, type or size: those processes' JIT frames stay addresses (-v names them)",
		     (unsigned long long)ps->jit_maps_refused);
	if (ps && (ps->reports_lost || ps->log_dropped))
		note(out, true, "lost: %llu mmap/exec/fork reports: the kernel's buffer was full, and %llu pushed out of the log of reports (over %d entries): processes gone before their maps were read may be unnamed",
		     (unsigned long long)ps->reports_lost, (unsigned long long)ps->log_dropped,
		     MAPLOG_MAX);
	if (ps && ps->over_cap)
		note(out, true, "processes: %llu not recorded, over the cap of %zu process records (the counts map size times the windows held before a write): their samples are kept, comm [unknown], user frames unsymbolized",
		     (unsigned long long)ps->over_cap, ps->max_procs);
}
