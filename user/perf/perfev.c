/* perfev.c — open, attach, stop and read the session's perf_events.
 *
 * One perf_event per (event, CPU), pid -1 (every task on that CPU); the
 * BPF program filters targets. That one mechanism serves -a, -C, -p, -t
 * and `-- command` alike: no per-thread events to chase as threads are
 * created, and no inherit bookkeeping. See docs/architecture.md.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "perfev.h"
#include "config/values.h"
#include "lib/clock.h"
#include "throttle.h"

struct perfev {
	int nevents, ncpus;
	int *cpu;                 /* [cpu_index]: the CPU's number */
	int *fds;                 /* [ev * ncpus + cpu_index], -1 if unused */
	struct bpf_link **links;  /* same indexing */
	int leader[PMUBPF_MAX_EVENTS]; /* a member's leader, else itself */
	struct throttle *th;      /* the sampled events' throttle records */
	int64_t stopped_at;       /* CLOCK_MONOTONIC ns of perfev__stop, 0 */
};


void perfev__sampling_attr(const struct config *cfg, const struct pmubpf_event *ev,
			   struct perf_event_attr *attr)
{
	*attr = ev->attr;
	attr->size = sizeof(*attr);
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	/* Throttle records (throttle.h) timed on the clock the session
	 * keeps; a group's members on their leader's clock, or the kernel
	 * refuses them (EINVAL). */
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	if (ev->member) {
		/* Counts only, scheduled with its leader and enabled with it;
		 * BPF reads it at the leader's samples. */
		attr->sample_period = 0;
		attr->freq = 0;
		attr->sample_type = 0;
		attr->disabled = 0;
		return;
	}
	if (ev->tracepoint) {
		/* The program runs at every hit and counts -c N itself
		 * (on_tracepoint); the event only carries it. */
		attr->sample_period = 1;
		attr->freq = 0;
	} else if (cfg->period) {
		attr->sample_period = cfg->period;
		attr->freq = 0;
	} else {
		attr->sample_freq = cfg->freq;
		attr->freq = 1;
	}
	attr->sample_type = 0;
	/* With precise_ip the kernel hands BPF the sample's own callchain and
	 * refuses bpf_get_stackid unless the event collects it. */
	if (attr->precise_ip)
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
	/* --data-addr: PEBS and IBS fill the sample's address only when
	 * asked (software page faults always pass it): BPF reads it as
	 * bpf_perf_event_data.addr. */
	if (cfg->data_addr && perfev__carries_addr(ev))
		attr->sample_type |= PERF_SAMPLE_ADDR;
	attr->disabled = 1; /* the attach enables it */
	attr->wakeup_events = 0;
}

bool perfev__carries_addr(const struct pmubpf_event *ev)
{
	const struct perf_event_attr *a = &ev->attr;

	if (ev->tracepoint || ev->member)
		return false;
	if (a->type == PERF_TYPE_SOFTWARE)
		return a->config == PERF_COUNT_SW_PAGE_FAULTS || a->config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
		       a->config == PERF_COUNT_SW_PAGE_FAULTS_MAJ;
	return ev->hardware && (a->precise_ip || !strncmp(ev->base, "ibs_op/", 7));
}

void perfev__describe(const struct config *cfg, const struct pmubpf_event *ev,
		      char *buf, size_t len)
{
	if (ev->offcpu)
		snprintf(buf, len, "not sampled: every wait of a target thread, from its switch out to its switch in (sched_switch), weighs its nanoseconds; preempted time included; waits begun before the recording are left out");
	else if (ev->member)
		snprintf(buf, len, "sampling: read at each sample of its group leader '%s' (weights: this event's count since the leader's previous sample on that CPU)",
			 cfg->events[ev->leader].name);
	else if (ev->tracepoint && cfg->period > 1)
		snprintf(buf, len, "sampling: every %llu hits of the tracepoint (each weighs %llu)",
			 (unsigned long long)cfg->period, (unsigned long long)cfg->period);
	else if (ev->tracepoint)
		snprintf(buf, len, "sampling: every hit of the tracepoint");
	else if (cfg->period)
		snprintf(buf, len, "sampling: every %llu %s", (unsigned long long)cfg->period,
			 ev->is_timer ? "ns" : "events");
	else
		snprintf(buf, len, "sampling: %llu Hz per CPU (weights are each sample's own period)",
			 (unsigned long long)cfg->freq);
}

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
	return (int)syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

/* A group member on CPU index c: opened into its leader's group, and
 * its fd put where BPF reads it (group_members[e * nr_cpus + cpu]). */
static int open_member(struct perfev *p, const struct config *cfg, const struct perfev_progs *pp,
		       int e, const int *cpus, int c, struct perf_event_attr *attr,
		       char *err, size_t errlen)
{
	const struct pmubpf_event *ev = &cfg->events[e];
	int lfd = p->fds[ev->leader * p->ncpus + c], fd;
	__u32 key = (__u32)(e * pp->nr_cpus + cpus[c]);

	if (lfd < 0)
		return 0; /* the leader's CPU went offline */
	fd = perf_event_open(attr, -1, cpus[c], lfd);
	if (fd < 0) {
		event__open_error(ev, errno, err, errlen);
		return -1;
	}
	p->fds[e * p->ncpus + c] = fd;
	if (bpf_map_update_elem(pp->members_fd, &key, &fd, BPF_ANY)) {
		snprintf(err, errlen, "event '%s': giving BPF the group member on CPU %d: %s",
			 ev->name, cpus[c], strerror(errno));
		return -1;
	}
	return 0;
}

struct perfev *perfev__open_all(const struct config *cfg, const int *cpus,
				int ncpus, const struct perfev_progs *pp,
				char *err, size_t errlen)
{
	struct perfev *p = calloc(1, sizeof(*p));
	size_t n = (size_t)cfg->nevents * ncpus;

	if (!p || !(p->fds = malloc(n * sizeof(int))) || !(p->links = calloc(n, sizeof(*p->links))) ||
	    !(p->cpu = malloc((ncpus ? ncpus : 1) * sizeof(int)))) {
		snprintf(err, errlen, "out of memory");
		perfev__free(p);
		return NULL;
	}
	p->nevents = cfg->nevents;
	p->ncpus = ncpus;
	memcpy(p->cpu, cpus, ncpus * sizeof(int));
	for (int e = 0; e < cfg->nevents; e++)
		p->leader[e] = cfg->events[e].member ? cfg->events[e].leader : e;
	for (size_t i = 0; i < n; i++)
		p->fds[i] = -1;

	/* Every event is opened (disabled) before any is attached: the
	 * attach enables a leader, and a member added to a group that is
	 * already running is not scheduled until something reschedules the
	 * CPU's events (it then counted nothing in about 1 run in 4). */
	for (int e = 0; e < cfg->nevents; e++) {
		const struct pmubpf_event *ev = &cfg->events[e];
		struct perf_event_attr attr;

		perfev__sampling_attr(cfg, ev, &attr);
		for (int c = 0; c < ncpus; c++) {
			int fd;

			if (ev->offcpu) /* no perf_event: BPF's on_switch */
				break;
			if (ev->member) {
				if (open_member(p, cfg, pp, e, cpus, c, &attr, err, errlen))
					goto fail;
				continue;
			}
			/* A tracepoint's program runs at every hit on every
			 * CPU (and can be attached to it once): one event. */
			if (ev->tracepoint && p->fds[e * ncpus] >= 0)
				break;
			fd = perf_event_open(&attr, -1, cpus[c], -1);
			if (fd < 0) {
				int en = errno;

				if (en == ENODEV) /* CPU went offline since we listed it */
					continue;
				event__open_error(ev, en, err, errlen);
				goto fail;
			}
			p->fds[e * ncpus + c] = fd;
		}
	}
	/* Each sampled event's ring of throttle records, mapped before
	 * the attach enables it. Tracepoints are never throttled here (their
	 * program returns before perf's sampling), members never sample. */
	int *ev_of = malloc((n ? n : 1) * sizeof(int));

	if (!ev_of) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		const struct pmubpf_event *ev = &cfg->events[i / ncpus];

		ev_of[i] = ev->tracepoint || ev->member || ev->offcpu ? -1 : (int)(i / ncpus);
	}
	p->th = throttle__watch(p->fds, ev_of, (int)n, cfg->nevents);
	free(ev_of);
	for (int e = 0; e < cfg->nevents; e++) {
		const struct pmubpf_event *ev = &cfg->events[e];
		struct bpf_program *prog = ev->tracepoint ? pp->tracepoint : pp->sample;

		for (int c = 0; !ev->member && c < ncpus; c++) {
			int idx = e * ncpus + c;
			LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = (__u64)e);

			if (p->fds[idx] < 0)
				continue;
			p->links[idx] = bpf_program__attach_perf_event_opts(prog, p->fds[idx], &opts);
			if (!p->links[idx]) {
				int en = errno;

				snprintf(err, errlen, "event '%s': attaching the BPF program on CPU %d: %s",
					 ev->name, cpus[c], strerror(en));
				goto fail;
			}
		}
	}
	return p;
fail:
	perfev__free(p);
	return NULL;
}

void perfev__stop(struct perfev *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nevents * p->ncpus; i++)
		if (p->fds[i] >= 0)
			ioctl(p->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	p->stopped_at = mono_ns(); /* a stop still open ends here */
}

int perfev__times(struct perfev *p, int ev, uint64_t *enabled, uint64_t *running)
{
	*enabled = *running = 0;
	if (!p || ev < 0 || ev >= p->nevents)
		return -EINVAL;
	/* A member's counts are read at its leader's samples, which come
	 * only while the group runs: the leader's times scale them. */
	ev = p->leader[ev];
	for (int c = 0; c < p->ncpus; c++) {
		/* read_format: { value, time_enabled, time_running } */
		uint64_t buf[3];
		int fd = p->fds[ev * p->ncpus + c];

		if (fd < 0)
			continue;
		if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return -errno ? -errno : -EIO;
		*enabled += buf[1];
		*running += buf[2];
	}
	return 0;
}

void perfev__poll(struct perfev *p)
{
	if (p)
		throttle__poll(p->th);
}

void perfev__throttled(struct perfev *p, int ev, uint64_t *episodes, uint64_t *ns, uint64_t *unseen)
{
	struct throttle_stats st;

	*episodes = *ns = *unseen = 0;
	if (!p || ev < 0 || ev >= p->nevents)
		return;
	throttle__poll(p->th);
	/* A member's samples are its leader's. */
	throttle__stats(p->th, p->leader[ev], p->stopped_at ? p->stopped_at : mono_ns(), &st);
	*episodes = st.episodes;
	*ns = st.stopped_ns;
	*unseen = st.unseen;
}

int perfev__throttle_unwatched(struct perfev *p, int ev)
{
	struct throttle_stats st;

	if (!p || ev < 0 || ev >= p->nevents)
		return 0;
	if (!p->th) /* out of memory at the start: nothing watched */
		return p->ncpus;
	throttle__stats(p->th, p->leader[ev], 0, &st);
	return st.unwatched;
}

unsigned long perfev__max_sample_rate(void)
{
	uint64_t r = 0;

	return values__kernel_max_rate(&r) ? 0 : (unsigned long)r;
}

int perfev__ncpus(const struct perfev *p)
{
	return p ? p->ncpus : 0;
}

int perfev__set_period(struct perfev *p, int ev, int ci, uint64_t period)
{
	int fd;

	if (!p || ev < 0 || ev >= p->nevents || ci < 0 || ci >= p->ncpus)
		return -ENOENT;
	fd = p->fds[ev * p->ncpus + ci];
	if (fd < 0)
		return -ENOENT;
	return ioctl(fd, PERF_EVENT_IOC_PERIOD, &period) ? -errno : 0;
}

void perfev__free(struct perfev *p)
{
	if (!p)
		return;
	throttle__free(p->th);
	for (int i = 0; p->fds && i < p->nevents * p->ncpus; i++) {
		/* An attached link owns its perf fd and closes it. */
		if (p->links && p->links[i])
			bpf_link__destroy(p->links[i]);
		else if (p->fds[i] >= 0)
			close(p->fds[i]);
	}
	free(p->links);
	free(p->fds);
	free(p->cpu);
	free(p);
}

int perfev__cpu(const struct perfev *p, int ci)
{
	return p && ci >= 0 && ci < p->ncpus ? p->cpu[ci] : -1;
}
