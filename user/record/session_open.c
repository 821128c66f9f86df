/* session_open.c — the session before sampling: checks, the BPF
 * object sized, configured and loaded, and the pipeline behind the
 * notices (see session.h, session_int.h). */
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "lib/errmsg.h"
#include "lib/proctask.h"
#include "symbols/debuginfo.h"
#include "symbols/elfsym.h"
#include "symbols/ksyms.h"
#include "procs/mmapwatch.h"
#include "perf/perfev.h"
#include "pmubpf.skel.h"
#include "procs/procs.h"
#include "report/drain.h"
#include "report/report.h"
#include "session.h"
#include "report/symbolize.h"
#include "status.h"
#include "targets.h"
#include "offcpu.h"
#include "windows.h"
#include "perf/timekeeper.h"
#include "unwind/unwind.h"
#include "images.h"
#include "preload.h"
#include "mapalloc.h"
#include "session_int.h"

int session_fail(struct session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errmsg_v(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return -1;
}

int session_add_target(struct session *s, uint32_t id, uint32_t kind, uint32_t state)
{
	struct pmubpf_target t = { .id = id, .kind = kind };

	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.targets), &t, &state, BPF_ANY))
		return session_fail(s, "adding %s %u to the targets map: %s",
			    kind == PMUBPF_TARGET_TID ? "thread" : "process", id, strerror(errno));
	return 0;
}


/* The cap on process records: each recorded process has a counts entry
 * in a window not yet built into a profile. A one-shot recording: all of
 * its windows (one if it is no longer than a window; the most there is
 * for one with no -d). --every SEC: the SEC/window windows drained
 * before a write, plus one drained while it is written (a 30 min soak
 * under churn, ~500 new processes a second on a quiet machine, hit a cap
 * of one window's entries inside every 60 s profile: tens of thousands
 * of processes a minute unsymbolized). --http: a request's windows,
 * however long it asks: the most there is (PROCS_MAX). */
size_t session__procs_max(const struct config *cfg, int ncpus, uint32_t count_entries)
{
	double windows = 1, w = session__window(cfg, ncpus);

	if (cfg->http || (cfg->every <= 0 && cfg->duration <= 0))
		return PROCS_MAX;
	if (cfg->every > 0)
		windows = (double)(uint64_t)(cfg->every / w + 0.999) + 1;
	else if (cfg->duration > w)
		windows = (double)(uint64_t)(cfg->duration / w + 0.999);
	double max = windows * count_entries;
	return max > PROCS_MAX ? PROCS_MAX : (size_t)max;
}

static uint32_t next_pow2(uint64_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1u << 31))
		p <<= 1;
	return p;
}

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Samples a second, every event, every CPU: a period gives no rate,
 * 1000/s per CPU is assumed. */
static double sample_rate(const struct config *cfg, int ncpus)
{
	double rate = cfg->period ? 1000 : (double)cfg->freq;

	return rate * (ncpus > 0 ? ncpus : 1) * (cfg->nevents > 0 ? cfg->nevents : 1);
}

double session__window(const struct config *cfg, int ncpus)
{
	double w = cfg->window > 0 ? cfg->window : SESSION_WINDOW;

	if (cfg->every > 0 && cfg->every < w)
		w = cfg->every;
	if (cfg->window > 0)
		return w; /* the user's, as asked */
	/* No longer than the stacks map holds if every sample brings new
	 * stacks, a user and a kernel one (process churn: each short-lived
	 * process's user stacks are new). A 16-CPU machine at 999 Hz under
	 * churn filled 65536 entries within a 10 s recording and lost 24% of
	 * its user stacks. Windows also end early once their stacks map is
	 * half full (session__window_full); this makes a recording that
	 * could fill one a windowed one. */
	int sides = (cfg->no_user ? 0 : 1) + (cfg->no_kernel ? 0 : 1);
	double cap = (double)(cfg->stack_map_size ? cfg->stack_map_size : STACK_ENTRIES_MAX) /
		     (sample_rate(cfg, ncpus) * (sides ? sides : 1));

	if (cap < w)
		w = cap > SESSION_WINDOW_MIN ? cap : SESSION_WINDOW_MIN;
	return w;
}

bool session__windowed(const struct config *cfg, int ncpus)
{
	return cfg->every > 0 || cfg->http || cfg->duration <= 0 ||
	       cfg->duration > session__window(cfg, ncpus);
}

void session__map_sizes(const struct config *cfg, int ncpus,
			uint32_t *stack_entries, uint32_t *count_entries)
{
	/* Expected samples of a window: rate x CPUs x seconds x events (a
	 * recording no longer than a window is one window of -d). Distinct
	 * keys are a fraction of samples for long-lived processes, but not
	 * under process churn: with ASLR every short-lived process's user
	 * stacks are new (a fork-heavy 10 s on 2 CPUs: 10k distinct of 13k
	 * samples, which overflowed samples/4; `make bench-churn` lost 6% of
	 * its samples to a counts map of samples/2). Counts entries are ~100
	 * bytes, so there is one per expected sample, the worst case; stack
	 * map entries cost ~1 KiB each (127 frames): one per expected sample
	 * too, at most STACK_ENTRIES_MAX, and the window is cut to what that
	 * many hold (session__window). Half was the rule until the churn
	 * bench, once new processes no longer slowed its load, sampled 16k
	 * processes in 10 s and lost 22% of its stacks to samples/2 (a
	 * churned sample has a new user stack and often a new kernel one); a
	 * 30 min soak under churn had lost up to 4748 user stacks a 10 s
	 * window the same way. The price is kernel memory: 10 s on 2 CPUs,
	 * 32768 entries, 32 MiB, twice in a windowed recording. */
	double secs = session__windowed(cfg, ncpus) ? session__window(cfg, ncpus) : cfg->duration;
	uint64_t samples = (uint64_t)(sample_rate(cfg, ncpus) * secs);

	*stack_entries = cfg->stack_map_size ? cfg->stack_map_size
		: next_pow2(clamp_u64(samples, 16384, STACK_ENTRIES_MAX));
	*count_entries = cfg->counts_map_size ? cfg->counts_map_size
		: next_pow2(clamp_u64(samples, 16384, 262144));
}


static int watch_fd(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* The notices ring's callback (ctx: the session): a file BPF asked for
 * goes to the unwinder, every other notice to the process registry. */
static int handle_notice(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	const struct pmubpf_ufile_notice *f = data;

	if (size >= sizeof(*f) && f->kind == PMUBPF_NOTICE_UFILE) {
		if (s->uw)
			unwind__file_notice(s->uw, s->procs, f);
	} else if (size >= sizeof(struct pmubpf_notice)) {
		procs__notice(s->procs, data, size);
	}
	return 0;
}


int session__check(const struct config *cfg, int **cpus, int *ncpus,
		   char *err, size_t errlen)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(err, errlen, "this kernel has no BTF (/sys/kernel/btf/vmlinux): pmubpf needs CONFIG_DEBUG_INFO_BTF=y");
		return -ENOENT;
	}
	return targets__check(cfg, cpus, ncpus, err, errlen);
}


static struct unwind_bpf unwind_maps_of(struct pmubpf_bpf *skel)
{
	return (struct unwind_bpf){ skel->maps.unwind_rows, skel->maps.unwind_tables,
				    skel->maps.unwind_slots, skel->maps.unwind_pids,
				    skel->maps.unwind_files, skel->maps.unwind_asked,
				    skel->progs.uw_file_key };
}

/* Groups and tracepoints (perfev.h): members are read through
 * group_members, tracepoints need their own program type (loaded only
 * when asked for: it costs a second verification). 0 or -1 + errno. */
static int set_groups_and_tracepoints(struct session *s)
{
	const struct config *cfg = s->cfg;
	int nr_possible = libbpf_num_possible_cpus();

	if (nr_possible <= 0) {
		errno = -nr_possible;
		return -1;
	}
	s->skel->rodata->nr_cpus = (__u32)nr_possible;
	s->skel->rodata->tp_period = cfg->period ? cfg->period : 1;
	for (int e = 0; e < cfg->nevents; e++) {
		if (cfg->events[e].member) {
			s->skel->rodata->leader_of[e] = (__u32)cfg->events[e].leader + 1;
			s->skel->rodata->has_members = true;
		}
		s->has_tp |= cfg->events[e].tracepoint;
	}
	s->offcpu = offcpu__configure(s->skel, cfg);
	/* -C: tracepoint hits and off-CPU waits on those CPUs (tp_cpus). */
	s->skel->rodata->tp_filter_cpus = (s->has_tp || s->offcpu) && cfg->cpus_given;
	if (bpf_program__set_autoload(s->skel->progs.on_tracepoint, s->has_tp) ||
	    bpf_map__set_max_entries(s->skel->maps.group_members, (__u32)(cfg->nevents * nr_possible)) ||
	    bpf_map__set_max_entries(s->skel->maps.tp_cpus, (__u32)nr_possible))
		return -1;
	return 0;
}

/* --data-addr: which events key their samples by data address too, and
 * the data maps, one entry per expected sample as the counts maps (one
 * sample of a page-fault or memory event is mostly one new address). */
static int size_data_maps(struct session *s, bool windowed)
{
	const struct config *cfg = s->cfg;
	__u32 mask = 0;

	for (int e = 0; cfg->data_addr && e < cfg->nevents; e++)
		if (!cfg->events[e].member)
			mask |= 1u << e;
	s->skel->rodata->data_events = mask;
	if (bpf_map__set_max_entries(s->skel->maps.data0, mask ? s->count_entries : 1) ||
	    bpf_map__set_max_entries(s->skel->maps.data1, mask && windowed ? s->count_entries : 1))
		return -1;
	return 0;
}

/* Maps this recording's programs never touch, one entry each: a hash
 * map's entries are allocated when it is made (kernel memory that
 * cannot be swapped: 6-10 MB for these, 2-3 ms of start-up). targets:
 * a whole machine's recording filters nothing; offcpu_waits: no
 * off-cpu event; the images maps: images not taken from BPF. */
static int size_unused_maps(struct session *s)
{
	const struct config *cfg = s->cfg;

	if (cfg->all && bpf_map__set_max_entries(s->skel->maps.targets, 1))
		return -1;
	if (!s->offcpu && bpf_map__set_max_entries(s->skel->maps.offcpu_waits, 1))
		return -1;
	if (!s->images && (bpf_map__set_max_entries(s->skel->maps.image_files, 1) ||
			   bpf_map__set_max_entries(s->skel->maps.image_stashes, 1) ||
			   bpf_map__set_max_entries(s->skel->maps.image_likes, 1)))
		return -1;
	return 0;
}

/* The LRU maps of first sightings, seen (a process's generation) and
 * seen_labels (a label set's notice), are made whole at start-up (an LRU
 * map cannot allocate as it fills): 65536 entries each were 12.6 MB and
 * ~25 ms of start-up on the PVM machine (strace -T: 14 and 12.5 ms), most
 * of a 2-CPU recording's map-making. An entry is added only by a sample
 * that finds none, and an ended process's goes when it is freed, so a
 * recording whose rate is known (timers and PMU events by frequency)
 * holds every sighting of its last LRU_SECONDS in rate x LRU_SECONDS
 * entries: 16384 for 999 Hz on 2 CPUs. An older sighting evicted costs a
 * repeated notice at its next sample, not a sample. Tracepoints, off-CPU
 * waits and -c periods have no known rate: all 65536. */
#define LRU_SECONDS 8
#define LRU_MIN     16384u
#define LRU_MAX     65536u
static uint32_t lru_entries(const struct session *s)
{
	const struct config *cfg = s->cfg;

	if (s->has_tp || s->offcpu || cfg->period)
		return LRU_MAX;
	return (uint32_t)next_pow2(clamp_u64((uint64_t)(sample_rate(cfg, s->ncpus) * LRU_SECONDS),
					     LRU_MIN, LRU_MAX));
}

/* The images maps of execs under way, image_stashes (720-byte entries)
 * and image_likes: an entry lives from sched_prepare_exec to the exec's
 * end, so only the execs in flight at once need one, a few per CPU. The
 * LRU keeps up to 128 free entries on each CPU's own list before it
 * evicts, hence 256 per possible CPU, 512..4096 (4096 each were 3 MB of
 * kernel memory and 6-7 ms of start-up on 2 CPUs, strace -T). */
#define EXEC_LRU_PER_CPU 256u
#define EXEC_LRU_MIN     512u
#define EXEC_LRU_MAX     4096u
static uint32_t exec_lru_entries(void)
{
	int n = libbpf_num_possible_cpus();

	return (uint32_t)next_pow2(clamp_u64((uint64_t)(n > 0 ? n : 1) * EXEC_LRU_PER_CPU,
					     EXEC_LRU_MIN, EXEC_LRU_MAX));
}

static int size_lru_maps(struct session *s)
{
	uint32_t n = lru_entries(s), x = exec_lru_entries();

	if (bpf_map__set_max_entries(s->skel->maps.seen, n) ||
	    bpf_map__set_max_entries(s->skel->maps.seen_labels, n))
		return -1;
	if (s->images && (bpf_map__set_max_entries(s->skel->maps.image_stashes, x) ||
			  bpf_map__set_max_entries(s->skel->maps.image_likes, x)))
		return -1;
	return 0;
}

/* Hash maps allocate their entries as they fill where the kernel allows
 * it (mapalloc.h). The slot and target maps BPF only reads: 8-12 MB less
 * kernel memory held from start-up, most of it never used (label slots
 * for 65536 processes that publish labels, 16384 of each other writer,
 * 65536 targets). The counts and stacks maps the sample fills: sized for
 * the samples expected, most of them are never used by a steady load,
 * and making them whole was the biggest part of start-up (75 ms for a
 * 10 s recording on 2 CPUs, docs/benchmarks.md); the sample's allocation
 * comes from a per-CPU cache the kernel refills after each interrupt,
 * warmed before sampling (session_warm_maps). The LRU maps (seen,
 * seen_labels, the images maps) are always whole: an LRU map cannot
 * allocate as it fills. */
static int lazy_maps(struct session *s)
{
	struct bpf_map *m[] = { s->skel->maps.label_slots, s->skel->maps.go_slots,
				s->skel->maps.custom_slots, s->skel->maps.otel_slots,
				s->skel->maps.targets, s->skel->maps.unwind_files,
				s->skel->maps.stacks0, s->skel->maps.stacks1,
				s->skel->maps.counts0, s->skel->maps.counts1 };

	if (!s->feat.have[FEAT_LAZY_MAPS])
		return 0;
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (bpf_map__set_map_flags(m[i], bpf_map__map_flags(m[i]) | BPF_F_NO_PREALLOC))
			return -1;
	return 0;
}

/* Each sampled CPU's free stacks entries, before the first sample
 * (mapalloc__warm), where lazy_maps made them allocate as they fill:
 * key 0 is PMUBPF_STACK_NONE, never stored. The counts entries are small
 * enough that the kernel starts each CPU with four. */
static void session_warm_maps(struct session *s)
{
	const __u64 none = PMUBPF_STACK_NONE;

	if (!(bpf_map__map_flags(s->skel->maps.stacks0) & BPF_F_NO_PREALLOC))
		return;
	for (int w = 0; w < (s->windowed ? 2 : 1); w++)
		mapalloc__warm(s->win.stacks_fd[w], &none, sizeof(struct pmubpf_stack), s->cpus, s->ncpus);
}

static void say_lacking(const char *text, void *arg)
{
	(void)arg;
	fprintf(stderr, "pmubpf: this kernel lacks %s\n", text);
}

/* What this kernel's BPF lacks (features.h) stood in for in BPF
 * (compat.bpf.h), or refused where the recording needs it. */
static int use_features(struct session *s)
{
	const struct config *cfg = s->cfg;
	int sampled = 0;

	features__probe(&s->feat, FEAT_ALL & ~(1u << FEAT_BPF_KSYMS) &
					  ~(cfg->all && !cfg->data_addr ? 0 : 1u << FEAT_EXIT_IMAGES));
	if (cfg->verbose)
		features__describe(&s->feat, say_lacking, NULL);
	s->skel->rodata->has_attach_cookie = s->feat.have[FEAT_ATTACH_COOKIE];
	s->skel->rodata->has_task_pt_regs = s->feat.have[FEAT_TASK_PT_REGS];
	for (int e = 0; e < cfg->nevents && e < PMUBPF_MAX_EVENTS; e++)
		sampled += !s->skel->rodata->leader_of[e];
	if (sampled > 1 && !s->feat.have[FEAT_ATTACH_COOKIE])
		return session_fail(s, "%d events sampled in one recording need BPF cookies "
				       "(bpf_get_attach_cookie, Linux 5.15), which this kernel lacks: "
				       "record one event at a time", sampled);
	if (s->offcpu && !s->feat.have[FEAT_OFFCPU])
		return session_fail(s, "-e off-cpu needs BPF syscall programs with bpf_for_each_map_elem "
				       "(Linux 5.14), which this kernel lacks");
	return 0;
}

int session__open(struct session *s)
{
	const struct config *cfg = s->cfg;
	struct unwind_bpf uwb;
	int err;

	if (session__check(cfg, &s->cpus, &s->ncpus, s->err, sizeof(s->err)))
		return -1;
	if (cgfilter__open(cfg, &s->cgf, s->err, sizeof(s->err)))
		return -1;
	session__map_sizes(cfg, s->ncpus, &s->stack_entries, &s->count_entries);
	s->window = session__window(cfg, s->ncpus);
	s->windowed = session__windowed(cfg, s->ncpus);

	/* Locked memory limits only matter before 5.11 (memcg accounting). */
	setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ RLIM_INFINITY, RLIM_INFINITY });

	s->skel = pmubpf_bpf__open();
	if (!s->skel)
		return session_fail(s, "opening the BPF object: %s", strerror(errno));
	s->skel->rodata->filter_targets = !cfg->all;
	s->skel->rodata->filter_cgroups = (__u32)s->cgf.n;
	s->skel->rodata->include_idle = cfg->include_idle;
	s->skel->rodata->want_user = !cfg->no_user;
	s->skel->rodata->want_kernel = !cfg->no_kernel;
	s->skel->rodata->follow_forks = cfg->command != NULL;
	s->skel->rodata->nr_events = (__u32)cfg->nevents;
	if (set_groups_and_tracepoints(s))
		return session_fail(s, "sizing the BPF maps: %s", strerror(errno));
	if (use_features(s))
		return -1;
	s->dwarf = cfg->call_graph == CALL_GRAPH_DWARF && !cfg->no_user;
	s->skel->rodata->call_graph_dwarf = s->dwarf;
	s->uw_files = s->dwarf && s->feat.have[FEAT_FILE_TABLES];
	s->skel->rodata->uw_files_on = s->uw_files;
	/* A syscall program (5.14: what -e off-cpu's flush needs too). */
	if (bpf_program__set_autoload(s->skel->progs.uw_file_key, s->uw_files && s->feat.have[FEAT_OFFCPU]))
		return session_fail(s, "choosing the BPF programs: %s", strerror(errno));
	/* A whole machine's recording: the kernel's mmap reports cost every
	 * process that maps code (issue 11); targets keep them, for they
	 * name a library the moment a target maps it (images.h). */
	s->images = cfg->all && !cfg->data_addr && s->feat.have[FEAT_EXIT_IMAGES];
	s->skel->rodata->images_on = s->images;
	if (bpf_program__set_autoload(s->skel->progs.on_prepare_exec, s->images) ||
	    bpf_program__set_autoload(s->skel->progs.on_exit_images, s->images) ||
	    bpf_program__set_autoload(s->skel->progs.on_exit, !s->images))
		return session_fail(s, "choosing the BPF programs: %s", strerror(errno));
	if (size_unused_maps(s) || size_lru_maps(s) || lazy_maps(s))
		return session_fail(s, "sizing the BPF maps: %s", strerror(errno));
	uwb = unwind_maps_of(s->skel);
	/* Window 1's maps are used only by a recording that flips windows
	 * (and each window's are sized for one window, not the recording). */
	bool windowed = s->windowed;
	if (bpf_map__set_max_entries(s->skel->maps.stacks0, s->stack_entries) ||
	    bpf_map__set_max_entries(s->skel->maps.counts0, s->count_entries) ||
	    bpf_map__set_max_entries(s->skel->maps.stacks1, windowed ? s->stack_entries : 1) ||
	    bpf_map__set_max_entries(s->skel->maps.counts1, windowed ? s->count_entries : 1) ||
	    size_data_maps(s, windowed) ||
	    unwind__size_maps(&uwb, s->dwarf, cfg->all, s->uw_files))
		return session_fail(s, "sizing the BPF maps: %s", strerror(errno));
	loadlog__reset(loadlog__process());
	err = pmubpf_bpf__load(s->skel);
	if (err && loadlog__refused(loadlog__process())) {
		/* EACCES from the verifier, not from a missing capability
		 * (that one is refused before any log is written). */
		char why[384];

		loadlog__describe(loadlog__process(), why, sizeof(why));
		return session_fail(s, "%s (-v prints the verifier's log)", why);
	}
	if (err == -EPERM || err == -EACCES)
		return session_fail(s, "loading BPF programs: permission denied: run as root (or grant CAP_BPF and CAP_PERFMON)");
	if (err)
		return session_fail(s, "loading BPF programs: %s (run with -v for the verifier log)", strerror(-err));
	if (cgfilter__fill(&s->cgf, bpf_map__fd(s->skel->maps.cgroup_targets)))
		return session_fail(s, "giving BPF the --cgroup/--container cgroups: %s", strerror(errno));
	err = pmubpf_bpf__attach(s->skel); /* the exec/fork/exit tracepoints */
	if (err)
		return session_fail(s, "attaching BPF tracepoints: %s", strerror(-err));
	s->win = (struct windows){
		.window = &s->skel->bss->window,
		.grace_fd = bpf_map__fd(s->skel->maps.grace),
		.grace_inner_fd = bpf_map__fd(s->skel->maps.grace_inner),
		.counts_fd = { bpf_map__fd(s->skel->maps.counts0), bpf_map__fd(s->skel->maps.counts1) },
		.stacks_fd = { bpf_map__fd(s->skel->maps.stacks0), bpf_map__fd(s->skel->maps.stacks1) },
		.drops_fd = bpf_map__fd(s->skel->maps.drops),
		.stacks_new_fd = bpf_map__fd(s->skel->maps.stacks_new),
		.data = cfg->data_addr,
		.data_fd = { bpf_map__fd(s->skel->maps.data0), bpf_map__fd(s->skel->maps.data1) },
		.nr_cpus = libbpf_num_possible_cpus(),
	};
	session_warm_maps(s);
	for (int i = 0; (s->has_tp || s->offcpu) && cfg->cpus_given && i < s->ncpus; i++) {
		__u32 c = (__u32)s->cpus[i];
		__u8 one = 1;

		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.tp_cpus), &c, &one, BPF_ANY))
			return session_fail(s, "tracepoints on CPU %d (-C): %s", s->cpus[i], strerror(errno));
	}
	for (int i = 0; i < cfg->npids; i++)
		if (session_add_target(s, cfg->pids[i], PMUBPF_TARGET_TGID, PMUBPF_TARGET_ACTIVE))
			return -1;
	for (int i = 0; i < cfg->ntids; i++)
		if (session_add_target(s, cfg->tids[i], PMUBPF_TARGET_TID, PMUBPF_TARGET_ACTIVE))
			return -1;
	return 0;
}

/* -p: each target process read before sampling begins, its generation
 * made here (a seen entry, noticed; BPF takes it at the first sample and
 * stamps its start there), so that its first samples carry its labels
 * and are walked by its unwind tables: read after the first sample, as
 * a process -a finds is, a target's first ~15 ms went unlabelled and by
 * frame pointer, and under qemu its first seconds (a -p recording of
 * labels_work: 28.7% unlabelled for a truth of 25.3%). A process BPF or
 * a second -p has a generation for already, or that cannot be read now
 * (mid-exec, a zombie leader: no maps), is left to the first sample. */
static void preread_targets(struct session *s)
{
	int seen_fd = bpf_map__fd(s->skel->maps.seen);

	for (int i = 0; i < s->cfg->npids; i++) {
		uint32_t tgid = (uint32_t)s->cfg->pids[i];
		struct pmubpf_seen v = { .pgen = (uint32_t)(i + 1) * PGEN_MAKERS + PGEN_BY_LOADER, .noticed = 1 };
		struct proc *pr;

		if (!proctask__alive((pid_t)tgid) || bpf_map_update_elem(seen_fd, &tgid, &v, BPF_NOEXIST))
			continue;
		pr = procs__get(s->procs, tgid, v.pgen);
		if (!pr || !pr->snapshotted || !pr->maps.n)
			bpf_map_delete_elem(seen_fd, &tgid);
	}
}

int session__build(struct session *s)
{
	const struct config *cfg = s->cfg;
	struct pmubpf_bpf *skel = s->skel;

	s->sc = symcache__new();
	if (!s->sc)
		return session_fail(s, "setting up the symbol cache: %s", strerror(errno));
	s->procs = procs__new(s->sc, bpf_map__fd(skel->maps.label_slots), bpf_map__fd(skel->maps.seen));
	if (s->procs) {
		procs__set_go_slots(s->procs, bpf_map__fd(skel->maps.go_slots));
		procs__set_custom_slots(s->procs, bpf_map__fd(skel->maps.custom_slots));
		procs__set_otel_slots(s->procs, bpf_map__fd(skel->maps.otel_slots));
	}
	if (!s->procs)
		return session_fail(s, "setting up the process registry: %s", strerror(errno));
	procs__set_seen_labels(s->procs, bpf_map__fd(skel->maps.seen_labels));
	procs__set_max(s->procs, session__procs_max(cfg, s->ncpus, s->count_entries));
	procs__set_verbose(s->procs, cfg->verbose);
	procs__set_data_maps(s->procs, cfg->data_addr);
	symb__set_options(&(struct symb_options){ .no_symbol = cfg->no_symbol });
	if (!cfg->no_symbol) {
		s->dbg = debuginfo__new((const char *const *)cfg->debuginfo_dirs, cfg->ndebuginfo_dirs);
		if (!s->dbg)
			fprintf(stderr, "pmubpf: warning: no debug info lookups: %s\n", strerror(errno));
		procs__set_debuginfo(s->procs, s->dbg);
	}
	if (s->dwarf) {
		struct unwind_bpf uwb = unwind_maps_of(skel);

		s->uw = unwind__open(&uwb, cfg->verbose, s->uw_files);
		if (!s->uw)
			return session_fail(s, "setting up --call-graph dwarf: %s (try --call-graph fp)", strerror(errno));
		procs__set_maps_hook(s->procs, unwind__proc, s->uw);
		preload__tables(s->uw, s->procs, s->cfg->command ? s->cfg->command[0] : NULL);
	}
	s->rb = ring_buffer__new(bpf_map__fd(skel->maps.notices), handle_notice, s, NULL);
	if (!s->rb)
		return session_fail(s, "setting up the notice ring buffer: %s", strerror(errno));
	/* Optional: without it, libraries mapped after a process's first
	 * sample are still found by procs' periodic re-reads. */
	if (s->images) {
		procs__set_image_files(s->procs, bpf_map__fd(skel->maps.image_files));
		if (cfg->verbose)
			fprintf(stderr, "pmubpf: images of processes gone: sent by BPF as they end (no mmap reports)\n");
	} else {
		s->mw = mmapwatch__new(bpf_map__fd(skel->maps.mmap_events), s->procs, cfg->data_addr);
		if (cfg->verbose && s->mw)
			fprintf(stderr, "pmubpf: images of processes gone: from the kernel's mmap reports%s%s%s\n",
				cfg->all ? " (" : "", cfg->all ? images__why_not() : "", cfg->all ? ")" : "");
	}
	if (!s->images && !s->mw && cfg->verbose)
		fprintf(stderr, "pmubpf: no mmap reports (%s): new libraries found by periodic re-reads only\n",
			strerror(errno));
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0 || watch_fd(s->epfd, ring_buffer__epoll_fd(s->rb)) ||
	    (s->mw && watch_fd(s->epfd, mmapwatch__fd(s->mw))))
		return session_fail(s, "setting up epoll: %s", strerror(errno));
	preread_targets(s);
	return 0;
}
