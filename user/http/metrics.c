/* metrics.c — see metrics.h. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "metrics.h"

/* Each drop reason of bpf/pmubpf_abi.h, by the metric it goes to: a loss
 * (the sample, or a part of it: its stack, its labels), the idle task's
 * samples left out (not a loss), or how a DWARF walk ended early (the
 * sample is kept). The table is indexed by reason, so a reason added to
 * the ABI without a name here shows up as "reason_N", never vanishes. */
enum kind { LOST, IDLE, DWARF };
static const struct {
	const char *name;
	enum kind kind;
} reasons[PMUBPF_DROP__MAX] = {
	[PMUBPF_DROP_COUNTS_FULL] = { "counts_map_full", LOST },
	[PMUBPF_DROP_USTACK] = { "user_stack", LOST },
	[PMUBPF_DROP_KSTACK] = { "kernel_stack", LOST },
	[PMUBPF_DROP_NOTICE] = { "notice", LOST },
	[PMUBPF_DROP_LABEL_READ] = { "label_read", LOST },
	[PMUBPF_DROP_IDLE] = { "idle", IDLE },
	[PMUBPF_DROP_DWARF_NO_TABLE] = { "no_table", DWARF },
	[PMUBPF_DROP_DWARF_TRUNCATED] = { "truncated", DWARF },
	[PMUBPF_DROP_DWARF_READ_FAIL] = { "read_fail", DWARF },
	[PMUBPF_DROP_DWARF_UNMAPPED] = { "unmapped", DWARF },
	[PMUBPF_DROP_DWARF_BAD_FRAME] = { "bad_frame", DWARF },
	[PMUBPF_DROP_DWARF_BAD_RULE] = { "bad_rule", DWARF },
	[PMUBPF_DROP_DWARF_NO_CFI] = { "no_cfi", DWARF },
	[PMUBPF_DROP_DWARF_BY_FILE] = { "by_file", DWARF },
	[PMUBPF_DROP_GROUP_READ] = { "group_read", LOST },
	[PMUBPF_DROP_DATA_FULL] = { "data_map_full", LOST },
	[PMUBPF_DROP_OFFCPU_FULL] = { "offcpu_map_full", LOST },
	[PMUBPF_DROP_OFFCPU_UNSEEN] = { "offcpu_unseen", LOST },
	[PMUBPF_DROP_LABEL_FOREIGN] = { "label_foreign", LOST },
	[PMUBPF_DROP_LABEL_INVALID] = { "label_invalid", LOST },
	[PMUBPF_DROP_OFFCPU_END_UNSEEN] = { "offcpu_end_unseen", LOST },
};

void metrics__self(struct metrics *m)
{
	struct rusage ru;
	long page = sysconf(_SC_PAGESIZE), ticks = sysconf(_SC_CLK_TCK);
	unsigned long long vsize = 0, rss = 0, start = 0;
	char buf[1024], *p;
	FILE *f;

	if (!getrusage(RUSAGE_SELF, &ru))
		m->cpu_seconds = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				 (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	f = fopen("/proc/self/statm", "re");
	if (f && fscanf(f, "%llu %llu", &vsize, &rss) == 2) {
		m->vsize_bytes = vsize * (uint64_t)page;
		m->rss_bytes = rss * (uint64_t)page;
	}
	if (f)
		fclose(f);
	/* Field 22 of /proc/self/stat: start time in ticks after boot; the
	 * comm (field 2) may hold spaces, so count from its ')'. */
	f = fopen("/proc/self/stat", "re");
	if (f && fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %d %*d %llu",
		   &m->threads, &start) == 2) {
		struct timespec rt, bt;

		clock_gettime(CLOCK_REALTIME, &rt);
		clock_gettime(CLOCK_BOOTTIME, &bt);
		m->start_time_seconds = (double)rt.tv_sec + rt.tv_nsec / 1e9 -
					((double)bt.tv_sec + bt.tv_nsec / 1e9) + (double)start / (double)ticks;
	}
	if (f)
		fclose(f);
}

/* A label value: backslash, double quote and newline escaped. */
static void label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A metric of one value: its HELP and TYPE, then the value. */
static void scalar(FILE *f, const char *name, const char *type, const char *help, unsigned long long v)
{
	head(f, name, type, help);
	fprintf(f, "%s %llu\n", name, v);
}

/* One line per event (and reason, for the drop metrics of kind k). */
static void per_event(FILE *f, const struct metrics *m, const char *name, const uint64_t *v)
{
	for (int e = 0; e < m->nevents; e++) {
		fprintf(f, "%s{event=\"", name);
		label(f, m->event[e]);
		fprintf(f, "\"} %llu\n", (unsigned long long)v[e]);
	}
}

static void per_reason(FILE *f, const struct metrics *m, const char *name, enum kind k)
{
	for (int e = 0; e < m->nevents; e++)
		for (int r = 0; r < PMUBPF_DROP__MAX; r++) {
			if ((reasons[r].name ? reasons[r].kind : LOST) != k)
				continue;
			fprintf(f, "%s{event=\"", name);
			label(f, m->event[e]);
			if (reasons[r].name)
				fprintf(f, "\",reason=\"%s\"} %llu\n", reasons[r].name,
					(unsigned long long)m->drops[e][r]);
			else
				fprintf(f, "\",reason=\"reason_%d\"} %llu\n", r,
					(unsigned long long)m->drops[e][r]);
		}
}

static const char *const push_dest[2] = { "pyroscope", "otlp" };

/* One uint64_t field of struct push_stats, per sender. */
static void per_dest(FILE *f, const struct metrics *m, const char *name, const char *type,
		     const char *help, size_t off)
{
	head(f, name, type, help);
	for (int i = 0; i < 2; i++)
		if (m->pushing[i])
			fprintf(f, "%s{dest=\"%s\"} %llu\n", name, push_dest[i],
				(unsigned long long)*(const uint64_t *)((const char *)&m->push[i] + off));
}

/* --push's and --otlp's senders: each profile sent or dropped by why,
 * their bytes and retries, the queue now. */
static void push_metrics(FILE *f, const struct metrics *m)
{
	if (!m->pushing[0] && !m->pushing[1])
		return;
	head(f, "pmubpf_push_profiles_total", "counter",
	     "Profiles pushed (result=\"sent\") or dropped, by why.");
	for (int i = 0; i < 2; i++) {
		const struct push_stats *p = &m->push[i];
		const struct { const char *result; uint64_t n; } rows[] = {
			{ "sent", p->profiles_sent }, { "dropped_queue_full", p->dropped_full },
			{ "dropped_refused", p->dropped_refused }, { "dropped_failed", p->dropped_failed },
			{ "dropped_exit", p->dropped_exit }, { "dropped_not_made", p->dropped_encode },
		};
		for (size_t k = 0; m->pushing[i] && k < sizeof(rows) / sizeof(rows[0]); k++)
			fprintf(f, "pmubpf_push_profiles_total{dest=\"%s\",result=\"%s\"} %llu\n", push_dest[i],
				rows[k].result, (unsigned long long)rows[k].n);
	}
	per_dest(f, m, "pmubpf_push_bytes_total", "counter", "Bytes of the profiles pushed.",
		 offsetof(struct push_stats, bytes_sent));
	per_dest(f, m, "pmubpf_push_retries_total", "counter",
		 "POSTs tried again (no connection, a timeout, 429, 5xx).", offsetof(struct push_stats, retries));
	per_dest(f, m, "pmubpf_push_queue_bytes", "gauge", "Bytes of profiles waiting to be pushed.",
		 offsetof(struct push_stats, queue_bytes));
}

int metrics__format(const struct metrics *m, FILE *f)
{
	uint64_t idle[PMUBPF_MAX_EVENTS];

	head(f, "pmubpf_samples_total", "counter",
	     "Samples BPF counted (passed the target filters), per event, since the start.");
	per_event(f, m, "pmubpf_samples_total", m->samples);
	head(f, "pmubpf_sampled_weight_total", "counter",
	     "Sum of the samples' periods in event units (ns for cpu-clock/task-clock), per event.");
	per_event(f, m, "pmubpf_sampled_weight_total", m->weight);
	head(f, "pmubpf_lost_samples_total", "counter",
	     "Samples lost whole (counts_map_full) or in part (a stack, a notice, labels, a group member's count), per event and reason, in the windows drained so far.");
	per_reason(f, m, "pmubpf_lost_samples_total", LOST);
	for (int e = 0; e < m->nevents; e++)
		idle[e] = m->drops[e][PMUBPF_DROP_IDLE];
	head(f, "pmubpf_idle_samples_total", "counter",
	     "Samples of the idle task left out (not a loss: --include-idle keeps them), per event.");
	per_event(f, m, "pmubpf_idle_samples_total", idle);
	head(f, "pmubpf_dwarf_incomplete_total", "counter",
	     "User stacks unwound in BPF that ended early or fell back to frame pointers (the sample is kept), per event and reason.");
	per_reason(f, m, "pmubpf_dwarf_incomplete_total", DWARF);

	scalar(f, "pmubpf_windows_total", "counter", "Windows drained out of the BPF maps.", m->windows);
	scalar(f, "pmubpf_windows_during_builds_total", "counter",
	       "Windows drained while a profile was being built (a build longer than a window).", m->windows_in_builds);
	head(f, "pmubpf_window_seconds", "gauge", "Longest time the BPF maps go undrained (--window).");
	fprintf(f, "pmubpf_window_seconds %g\n", m->window_seconds);
	head(f, "pmubpf_map_entries", "gauge", "Entries of each window's BPF maps.");
	fprintf(f, "pmubpf_map_entries{map=\"counts\"} %u\npmubpf_map_entries{map=\"stacks\"} %u\n",
		m->count_entries, m->stack_entries);
	scalar(f, "pmubpf_processes_tracked", "gauge",
	       "Process records held (maps, symbols, labels).", m->procs);
	scalar(f, "pmubpf_label_sets", "gauge",
	       "Label sets held (those the windows not yet written name).", m->label_sets);
	scalar(f, "pmubpf_label_set_bytes", "gauge", "Memory the label sets held take.", m->label_bytes);
	scalar(f, "pmubpf_label_sets_read_total", "counter",
	       "Label sets read from programs (every writer).", m->label_sets_read);
	scalar(f, "pmubpf_label_sets_over_cap_total", "counter",
	       "Label sets not kept: a window's cap reached (their samples [too many sets]).", m->label_sets_over);
	scalar(f, "pmubpf_label_sets_forgotten_total", "counter",
	       "Label sets freed once no window named them.", m->label_sets_forgotten);
	scalar(f, "pmubpf_cgroups_named_total", "counter",
	       "Cgroups named (container, pod, unit), each once while used.", m->cgroups_named);
	scalar(f, "pmubpf_cgroups_unnamed_total", "counter",
	       "Processes whose cgroup could not be named (removed before their first sample was read).", m->cgroups_unnamed);
	scalar(f, "pmubpf_symbol_cache_objects", "gauge",
	       "ELF objects in the symbol cache.", m->symcache_objects);
	scalar(f, "pmubpf_symbol_cache_bytes", "gauge", "Memory the symbol cache holds.", m->symcache_bytes);
	scalar(f, "pmubpf_symbol_cache_hits_total", "counter",
	       "Object lookups the symbol cache answered.", m->symcache_hits);
	scalar(f, "pmubpf_symbol_cache_evictions_total", "counter",
	       "Objects freed from the symbol cache (unused).", m->symcache_evicted);
	scalar(f, "pmubpf_processes_seen_total", "counter",
	       "Processes BPF announced (first sample, exec, fork).", m->proc_notices);
	scalar(f, "pmubpf_process_maps_reads_total", "counter",
	       "First reads of a process's /proc/PID/maps.", m->proc_maps_reads);
	scalar(f, "pmubpf_processes_gone_total", "counter",
	       "Processes gone before their maps were read (named from the kernel's reports instead).", m->proc_gone);
	scalar(f, "pmubpf_processes_over_cap_total", "counter",
	       "Processes not recorded: the process table was full.", m->proc_over_cap);
	head(f, "pmubpf_process_reports_lost_total", "counter",
	     "Process reports lost because a ring buffer was full (kind: mmap reports, image maps).");
	fprintf(f, "pmubpf_process_reports_lost_total{kind=\"mmap\"} %llu\n"
		   "pmubpf_process_reports_lost_total{kind=\"image_maps\"} %llu\n",
		(unsigned long long)m->reports_lost, (unsigned long long)m->image_maps_lost);
	scalar(f, "pmubpf_objects_unreadable_total", "counter",
	       "Mapped files that could not be opened (their frames unnamed).", m->objs_unreadable);
	scalar(f, "pmubpf_unwind_objects", "gauge",
	       "Objects with an unwind table in BPF (--call-graph dwarf).", m->unwind_objects);
	scalar(f, "pmubpf_unwind_objects_full_total", "counter",
	       "Objects left without an unwind table: the tables were full.", m->unwind_objects_full);
	head(f, "pmubpf_unwind_parse_seconds_total", "counter", "CPU time spent parsing unwind tables.");
	fprintf(f, "pmubpf_unwind_parse_seconds_total %.6f\n", (double)m->unwind_build_ns / 1e9);
	scalar(f, "pmubpf_profile_requests_active", "gauge",
	       "Profile requests waiting for their window to end.", m->requests_active);
	scalar(f, "pmubpf_profile_requests_served_total", "counter",
	       "Profiles sent (status 200).", m->requests_served);
	push_metrics(f, m);

	scalar(f, "pmubpf_bpf_stats_enabled", "gauge",
	       "1 if the kernel measures BPF run time (BPF_ENABLE_STATS, held while pmubpf runs).", m->bpf_stats);
	if (m->bpf_stats && m->nprogs) {
		head(f, "pmubpf_bpf_run_seconds_total", "counter", "Time spent in pmubpf's sampling BPF programs.");
		for (int i = 0; i < m->nprogs; i++)
			fprintf(f, "pmubpf_bpf_run_seconds_total{program=\"%s\"} %.9f\n", m->prog_name[i],
				(double)m->run_time_ns[i] / 1e9);
		head(f, "pmubpf_bpf_runs_total", "counter", "Runs of pmubpf's sampling BPF programs (one per sample).");
		for (int i = 0; i < m->nprogs; i++)
			fprintf(f, "pmubpf_bpf_runs_total{program=\"%s\"} %llu\n", m->prog_name[i],
				(unsigned long long)m->run_cnt[i]);
		head(f, "pmubpf_bpf_seconds_per_run", "gauge", "Mean BPF run time per sample since the start.");
		for (int i = 0; i < m->nprogs; i++)
			fprintf(f, "pmubpf_bpf_seconds_per_run{program=\"%s\"} %.9f\n", m->prog_name[i],
				m->run_cnt[i] ? (double)m->run_time_ns[i] / 1e9 / (double)m->run_cnt[i] : 0.0);
	}

	/* The standard process metrics, as client libraries name them. */
	head(f, "process_cpu_seconds_total", "counter", "User and system CPU time of pmubpf, all threads.");
	fprintf(f, "process_cpu_seconds_total %.6f\n", m->cpu_seconds);
	head(f, "process_resident_memory_bytes", "gauge", "Resident memory of pmubpf.");
	fprintf(f, "process_resident_memory_bytes %llu\n", (unsigned long long)m->rss_bytes);
	head(f, "process_virtual_memory_bytes", "gauge", "Virtual memory of pmubpf.");
	fprintf(f, "process_virtual_memory_bytes %llu\n", (unsigned long long)m->vsize_bytes);
	head(f, "process_start_time_seconds", "gauge", "Start time of pmubpf since the epoch.");
	fprintf(f, "process_start_time_seconds %.3f\n", m->start_time_seconds);
	head(f, "process_threads", "gauge", "Threads of pmubpf.");
	fprintf(f, "process_threads %d\n", m->threads);
	return ferror(f) ? -EIO : 0;
}
