/* recorder_metrics.c — the recording's side of /metrics (recorder.h,
 * recorder__metrics): BPF's totals, the session's sizes, the BPF
 * programs' run time, the pushes' counters, refreshed by the recorder's
 * thread and read by the server's.
 */
#include <bpf/bpf.h>
#include <string.h>

#include "recorder_int.h"

void recorder__refresh_metrics(struct recorder *r)
{
	struct session_sizes z;
	struct metrics m;

	pthread_mutex_lock(&r->lock);
	m = r->m;
	pthread_mutex_unlock(&r->lock);
	for (int e = 0; e < r->cfg.nevents; e++)
		session__totals(r->s, e, &m.samples[e], &m.weight[e]);
	session__sizes(r->s, &z);
	m.procs = z.procs;
	m.symcache_objects = z.symcache_objects;
	m.symcache_bytes = z.symcache_bytes;
	m.label_sets = z.label_sets;
	m.label_bytes = z.label_bytes;
	m.label_sets_read = z.label_sets_read;
	m.label_sets_over = z.label_sets_over;
	m.label_sets_forgotten = z.label_sets_forgotten;
	m.cgroups_named = z.cgroups_named;
	m.cgroups_unnamed = z.cgroups_unnamed;
#define COPY(f) m.f = z.f
	COPY(proc_notices); COPY(proc_maps_reads); COPY(proc_gone); COPY(proc_over_cap);
	COPY(reports_lost); COPY(image_maps_lost); COPY(objs_unreadable);
	COPY(symcache_hits); COPY(symcache_evicted);
	COPY(unwind_objects); COPY(unwind_objects_full); COPY(unwind_build_ns);
#undef COPY
	m.stack_entries = z.stack_entries;
	m.count_entries = z.count_entries;
	m.bpf_stats = r->stats_fd >= 0;
	for (int i = 0; i < 2; i++)
		if ((m.pushing[i] = r->push[i] != NULL))
			push__stats(r->push[i], &m.push[i]);
	m.nprogs = z.nprogs;
	for (int i = 0; i < z.nprogs; i++) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		m.prog_name[i] = z.prog_name[i];
		if (!bpf_obj_get_info_by_fd(z.prog_fd[i], &info, &len)) {
			m.run_time_ns[i] = info.run_time_ns;
			m.run_cnt[i] = info.run_cnt;
		}
	}
	pthread_mutex_lock(&r->lock);
	/* Only what this function reads: windows, drops and the request
	 * counts are kept current by the others. */
	memcpy(r->m.samples, m.samples, sizeof(m.samples));
	memcpy(r->m.weight, m.weight, sizeof(m.weight));
	r->m.procs = m.procs;
	r->m.symcache_objects = m.symcache_objects;
	r->m.symcache_bytes = m.symcache_bytes;
	r->m.label_sets = m.label_sets;
	r->m.label_bytes = m.label_bytes;
	r->m.label_sets_read = m.label_sets_read;
	r->m.label_sets_over = m.label_sets_over;
	r->m.label_sets_forgotten = m.label_sets_forgotten;
	r->m.cgroups_named = m.cgroups_named;
	r->m.cgroups_unnamed = m.cgroups_unnamed;
#define COPY(f) r->m.f = m.f
	COPY(proc_notices); COPY(proc_maps_reads); COPY(proc_gone); COPY(proc_over_cap);
	COPY(reports_lost); COPY(image_maps_lost); COPY(objs_unreadable);
	COPY(symcache_hits); COPY(symcache_evicted);
	COPY(unwind_objects); COPY(unwind_objects_full); COPY(unwind_build_ns);
#undef COPY
	r->m.stack_entries = m.stack_entries;
	r->m.count_entries = m.count_entries;
	r->m.bpf_stats = m.bpf_stats;
	memcpy(r->m.pushing, m.pushing, sizeof(m.pushing));
	memcpy(r->m.push, m.push, sizeof(m.push));
	r->m.nprogs = m.nprogs;
	memcpy(r->m.prog_name, m.prog_name, sizeof(m.prog_name));
	memcpy(r->m.run_time_ns, m.run_time_ns, sizeof(m.run_time_ns));
	memcpy(r->m.run_cnt, m.run_cnt, sizeof(m.run_cnt));
	pthread_mutex_unlock(&r->lock);
}

void recorder__metrics(struct recorder *r, struct metrics *m)
{
	pthread_mutex_lock(&r->lock);
	*m = r->m;
	pthread_mutex_unlock(&r->lock);
}
