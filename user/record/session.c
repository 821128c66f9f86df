/* session.c — see session.h. */
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "lib/clock.h"
#include "symbols/debuginfo.h"
#include "symbols/elfsym.h"
#include "symbols/ksyms.h"
#include "procs/mmapwatch.h"
#include "perf/perfev.h"
#include "pmubpf.skel.h"
#include "procs/procs.h"
#include "report/report.h"
#include "session.h"
#include "report/symbolize.h"
#include "targets.h"
#include "perf/timekeeper.h"
#include "unwind/unwind.h"

#define POLL_MS 100
#define POLL_PENDING_MS 2 /* while a label record awaits its constructor */

/* Process-wide: a signal ends the recording under way and, in the HTTP
 * server, the server too. Never cleared: a stopped process stays stopping. */
static volatile sig_atomic_t stop_signal;

/* The signals that end a recording and still write its profile: Ctrl-C,
 * kill, a hung-up terminal (a dropped ssh session), Ctrl-\. */
const int session__stop_signals[SESSION_NSTOP_SIGNALS] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void on_signal(int sig)
{
	stop_signal = sig;
}

void session__catch_signals(void)
{
	/* No SA_RESTART: a blocking poll or accept returns EINTR and its
	 * loop sees stop_signal. */
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction ign = { .sa_handler = SIG_IGN };

	sigemptyset(&sa.sa_mask);
	sigemptyset(&ign.sa_mask);
	for (size_t i = 0; i < sizeof(session__stop_signals) / sizeof(int); i++)
		sigaction(session__stop_signals[i], &sa, NULL);
	/* A dropped ssh session can take stderr's reader with it: a message
	 * must fail (EPIPE), not kill us before the profile is written. */
	sigaction(SIGPIPE, &ign, NULL);
}

int session__stop_signal(void)
{
	return stop_signal;
}

/* The current recording's result, if its caller wants errors back rather
 * than on stderr (one recording at a time per process). */
static struct session_result *result;

static int errorf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (result) {
		vsnprintf(result->err, sizeof(result->err), fmt, ap);
	} else {
		fputs("pmubpf: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
	return 1;
}

/* Said once the recording ends on a signal, so that a SIGHUP'ed or
 * SIGQUIT'ed run does not end in silence. */
static void say_stop_signal(void)
{
	int sig = stop_signal;

	if (sig && !result)
		fprintf(stderr, "pmubpf: SIG%s: ending the recording, writing the profile\n",
			sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
}

static int verbosity;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && verbosity < 2)
		return 0;
	if (!verbosity)
		return 0;
	return vfprintf(stderr, fmt, ap);
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

void session__map_sizes(const struct config *cfg, int ncpus,
			uint32_t *stack_entries, uint32_t *count_entries)
{
	/* Expected samples: rate x CPUs x seconds x events. A period gives
	 * no rate; assume 1000/s per CPU. No -d: size for a minute. Distinct
	 * keys are a fraction of samples for long-lived processes, but not
	 * under process churn: with ASLR every short-lived process's user
	 * stacks are new (a fork-heavy 10 s on 2 CPUs: 10k distinct of 13k
	 * samples, which overflowed samples/4; `make bench-churn` lost 6% of
	 * its samples to a counts map of samples/2). Counts entries are ~100
	 * bytes, so there is one per expected sample, the worst case; stack
	 * map entries cost ~1 KiB each (127 frames), so they get half and
	 * are capped lower. */
	double secs = cfg->duration > 0 ? cfg->duration : 60;
	double rate = cfg->period ? 1000 : (double)cfg->freq;
	uint64_t samples = (uint64_t)(rate * ncpus * secs * cfg->nevents);

	*stack_entries = cfg->stack_map_size ? cfg->stack_map_size
		: next_pow2(clamp_u64(samples / 2, 16384, 65536));
	*count_entries = cfg->counts_map_size ? cfg->counts_map_size
		: next_pow2(clamp_u64(samples, 16384, 262144));
}

static int watch_fd(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int handle_notice(void *ctx, void *data, size_t size)
{
	if (size >= sizeof(struct pmubpf_notice))
		procs__notice(ctx, data, size);
	return 0;
}

struct ksyms_job {
	pthread_t th;
	bool started;
	struct ksyms *ks;
	int err;
};

static void *ksyms_thread(void *arg)
{
	struct ksyms_job *j = arg;

	j->ks = ksyms__load("/proc/kallsyms");
	j->err = errno;
	return NULL;
}

static int add_target(int fd, uint32_t id, uint32_t kind, uint32_t state)
{
	struct pmubpf_target t = { .id = id, .kind = kind };

	return bpf_map_update_elem(fd, &t, &state, BPF_ANY) ? -errno : 0;
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

int session__run(const struct config *cfg)
{
	return session__record(cfg, NULL, NULL, NULL);
}

int session__record(const struct config *cfg, struct session_result *res,
		    bool (*gone)(void *arg), void *arg)
{
	struct pmubpf_bpf *skel = NULL;
	struct perfev *pev = NULL;
	struct ring_buffer *rb = NULL;
	struct mmapwatch *mw = NULL;
	struct timekeeper *tk = NULL;
	struct timekeeper_stats tk_st = { 0 };
	int epfd = -1;
	struct symcache *sc = NULL;
	struct debuginfo *dbg = NULL;
	struct procs *procs = NULL;
	struct unwind *uw = NULL;
	struct unwind_stats uw_st;
	struct ksyms *ks = NULL;
	int *cpus = NULL, ncpus = 0, ret = 1, err, go_fd = -1, err_fd = -1;
	int child_status = 0;
	bool child_done = false;
	pid_t child = 0;
	uint32_t stack_entries, count_entries;
	char msg[512];

	verbosity = cfg->verbose;
	libbpf_set_print(libbpf_print);
	result = res;
	if (res)
		*res = (struct session_result){ 0 };

	if (session__check(cfg, &cpus, &ncpus, msg, sizeof(msg))) {
		errorf("%s", msg);
		goto out;
	}
	session__map_sizes(cfg, ncpus, &stack_entries, &count_entries);

	/* Locked memory limits only matter before 5.11 (memcg accounting). */
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	setrlimit(RLIMIT_MEMLOCK, &rl);

	skel = pmubpf_bpf__open();
	if (!skel) {
		errorf("opening the BPF object: %s", strerror(errno));
		goto out;
	}
	skel->rodata->filter_targets = !cfg->all;
	skel->rodata->include_idle = cfg->include_idle;
	skel->rodata->want_user = !cfg->no_user;
	skel->rodata->want_kernel = !cfg->no_kernel;
	skel->rodata->follow_forks = cfg->command != NULL;
	skel->rodata->nr_events = (__u32)cfg->nevents;
	bpf_map__set_max_entries(skel->maps.stacks, stack_entries);
	bpf_map__set_max_entries(skel->maps.counts, count_entries);
	bool dwarf = cfg->call_graph == CALL_GRAPH_DWARF && !cfg->no_user;
	if (dwarf && (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) != 1 ||
		      libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_task_pt_regs, NULL) != 1)) {
		fprintf(stderr, "pmubpf: warning: this kernel lacks bpf_loop/bpf_task_pt_regs (5.17+): --call-graph fp\n");
		dwarf = false;
	}
	struct unwind_maps uwm = { .max_rows = 1, .max_tables = 1, .max_slots = 1 };
	if (dwarf)
		unwind__sizes(cfg->all, &uwm.max_rows, &uwm.max_tables, &uwm.max_slots);
	skel->rodata->call_graph_dwarf = dwarf;
	bpf_map__set_max_entries(skel->maps.unwind_rows, uwm.max_rows);
	bpf_map__set_max_entries(skel->maps.unwind_tables, uwm.max_tables);
	bpf_map__set_max_entries(skel->maps.unwind_slots, uwm.max_slots * PMUBPF_UW_MAX_MAPS);
	bpf_map__set_max_entries(skel->maps.unwind_pids, uwm.max_slots);
	err = pmubpf_bpf__load(skel);
	if (err) {
		if (err == -EPERM || err == -EACCES)
			errorf("loading BPF programs: permission denied: run as root (or grant CAP_BPF and CAP_PERFMON)");
		else
			errorf("loading BPF programs: %s (run with -v for the verifier log)", strerror(-err));
		goto out;
	}
	err = pmubpf_bpf__attach(skel); /* the exec/fork/exit tracepoints */
	if (err) {
		errorf("attaching BPF tracepoints: %s", strerror(-err));
		goto out;
	}


	for (int i = 0; i < cfg->npids; i++)
		add_target(bpf_map__fd(skel->maps.targets), cfg->pids[i], PMUBPF_TARGET_TGID,
			   PMUBPF_TARGET_ACTIVE);
	for (int i = 0; i < cfg->ntids; i++)
		add_target(bpf_map__fd(skel->maps.targets), cfg->tids[i], PMUBPF_TARGET_TID,
			   PMUBPF_TARGET_ACTIVE);

	sc = symcache__new();
	procs = sc ? procs__new(sc, bpf_map__fd(skel->maps.label_slots),
				bpf_map__fd(skel->maps.seen)) : NULL;
	symb__set_options(&(struct symb_options){ .no_symbol = cfg->no_symbol });
	if (procs && !cfg->no_symbol) {
		dbg = debuginfo__new((const char *const *)cfg->debuginfo_dirs, cfg->ndebuginfo_dirs);
		if (!dbg)
			fprintf(stderr, "pmubpf: warning: no debug info lookups: %s\n", strerror(errno));
		procs__set_debuginfo(procs, dbg);
	}
	if (procs)
		procs__set_verbose(procs, cfg->verbose);
	if (procs && dwarf) {
		uwm.rows_fd = bpf_map__fd(skel->maps.unwind_rows);
		uwm.tables_fd = bpf_map__fd(skel->maps.unwind_tables);
		uwm.slots_fd = bpf_map__fd(skel->maps.unwind_slots);
		uwm.pids_fd = bpf_map__fd(skel->maps.unwind_pids);
		uw = unwind__new(&uwm, cfg->verbose);
		if (!uw) {
			errorf("setting up --call-graph dwarf: %s (try --call-graph fp)", strerror(errno));
			goto out;
		}
		procs__set_maps_hook(procs, unwind__proc, uw);
	}
	rb = procs ? ring_buffer__new(bpf_map__fd(skel->maps.notices), handle_notice, procs, NULL) : NULL;
	if (!rb) {
		errorf("setting up: %s", strerror(errno));
		goto out;
	}
	/* Optional: without it, libraries mapped after a process's first
	 * sample are still found by procs' periodic re-reads. */
	mw = mmapwatch__new(bpf_map__fd(skel->maps.mmap_events), procs);
	if (!mw && cfg->verbose)
		fprintf(stderr, "pmubpf: no mmap reports (%s): new libraries found by periodic re-reads only\n",
			strerror(errno));
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0 || watch_fd(epfd, ring_buffer__epoll_fd(rb)) ||
	    (mw && watch_fd(epfd, mmapwatch__fd(mw)))) {
		errorf("setting up epoll: %s", strerror(errno));
		goto out;
	}

	if (cfg->command) {
		child = targets__start_command(cfg->command, &go_fd, &err_fd);
		if (child < 0) {
			errorf("cannot start '%s': %s", cfg->command[0], strerror(errno));
			goto out;
		}
		add_target(bpf_map__fd(skel->maps.targets), child, PMUBPF_TARGET_TGID,
			   PMUBPF_TARGET_AT_EXEC);
	}

	pev = perfev__open_all(cfg, cpus, ncpus, skel->progs.on_sample, msg, sizeof(msg));
	if (!pev) {
		errorf("%s", msg);
		goto out;
	}

	session__catch_signals();

	int64_t t0_wall = clock_ns(CLOCK_REALTIME), t0 = mono_ns();
	/* -d is enforced by a thread that disables the events on time: the
	 * notice loop may be busy for a while (a new process's unwind tables,
	 * symbols) and must not stretch the recording. The same thread
	 * dithers the timer periods (timekeeper.h). */
	int64_t deadline = cfg->duration > 0 ? t0 + (int64_t)(cfg->duration * 1e9) : 0;
	__atomic_store_n(&skel->bss->recording, 1, __ATOMIC_RELEASE); /* the window opens */
	tk = timekeeper__start(pev, cfg, deadline, &skel->bss->recording);
	if (child) {
		int en = 0;

		if (write(go_fd, "g", 1) != 1) {
			errorf("cannot start '%s': %s", cfg->command[0], strerror(errno));
			goto out;
		}
		close(go_fd);
		go_fd = -1;
		if (read(err_fd, &en, sizeof(en)) == (ssize_t)sizeof(en)) {
			waitpid(child, NULL, 0);
			child = 0;
			errorf("cannot run '%s': %s", cfg->command[0], strerror(en));
			ret = 127;
			goto out;
		}
	}
	/* Kernel symbols while sampling goes on (reading kallsyms takes tens
	 * of ms that neither the command nor the first notices, hence the
	 * first processes' unwind tables, should wait for). */
	struct ksyms_job kjob = { 0 };
	if (!cfg->no_kernel)
		kjob.started = pthread_create(&kjob.th, NULL, ksyms_thread, &kjob) == 0;
	if (cfg->verbose)
		fprintf(stderr, "pmubpf: recording %d event(s) on %d CPU(s); maps: %u stacks, %u counts\n",
			cfg->nevents, ncpus, stack_entries, count_entries);

	int pending = 0;
	while (!stop_signal) {
		struct epoll_event evs[2];

		if (epoll_wait(epfd, evs, 2, pending ? POLL_PENDING_MS : POLL_MS) < 0 && errno != EINTR) {
			errorf("waiting for notices: %s", strerror(errno));
			break;
		}
		/* mmap reports first: a notice may name a process whose
		 * library the report says to read. */
		if (mw)
			mmapwatch__consume(mw);
		err = ring_buffer__consume(rb);
		if (err < 0 && err != -EINTR) {
			errorf("reading notices: %s", strerror(-err));
			break;
		}
		pending = procs__tick(procs);
		if (deadline && (timekeeper__fired(tk) || mono_ns() >= deadline))
			break;
		if (gone && gone(arg))
			break;
		if (child && waitpid(child, &child_status, WNOHANG) == child) {
			child_done = true;
			break;
		}
		if (!cfg->all && !child && !targets__alive(cfg)) {
			if (cfg->verbose)
				fprintf(stderr, "pmubpf: every target has exited\n");
			break;
		}
	}
	__atomic_store_n(&skel->bss->recording, 0, __ATOMIC_RELEASE); /* and closes */
	say_stop_signal();
	int64_t t_end = mono_ns();
	bool fired = timekeeper__fired(tk);
	timekeeper__stop(tk, &tk_st);
	tk = NULL;
	perfev__stop(pev);
	int64_t duration = (fired ? deadline : t_end) - t0;
	if (kjob.started) {
		pthread_join(kjob.th, NULL);
		ks = kjob.ks;
	} else if (!cfg->no_kernel) {
		kjob.ks = ks = ksyms__load("/proc/kallsyms");
		kjob.err = errno;
	}
	if (!ks && !cfg->no_kernel)
		fprintf(stderr, "pmubpf: warning: kernel symbols unavailable (%s): kernel frames stay addresses\n",
			strerror(kjob.err));
	ring_buffer__consume(rb); /* notices of the last samples */
	if (mw)
		mmapwatch__consume(mw);
	if (uw)
		unwind__stop(uw);  /* no tables needed any more */
	procs__rescan_all(procs);  /* libraries mapped since the last read */

	struct report_in in = {
		.cfg = cfg,
		.counts_fd = bpf_map__fd(skel->maps.counts),
		.stacks_fd = bpf_map__fd(skel->maps.stacks),
		.drops_fd = bpf_map__fd(skel->maps.drops),
		.nr_cpus = libbpf_num_possible_cpus(),
		.procs = procs,
		.ksyms = ks,
		.time_nanos = t0_wall,
		.duration_nanos = duration,
		.stack_map_size = stack_entries,
		.counts_map_size = count_entries,
		.timer = &tk_st,
		.quiet = res != NULL,
		.samples = res ? &res->samples : NULL,
	};
	if (uw) {
		unwind__stats(uw, &uw_st);
		in.unwind = &uw_st;
		if (cfg->verbose) {
			unwind__summary(&uw_st, msg, sizeof(msg));
			fprintf(stderr, "pmubpf: %s\n", msg);
		}
	}
	for (int e = 0; e < cfg->nevents; e++)
		perfev__times(pev, e, &in.enabled[e], &in.running[e]);
	if (report__write_all(&in, msg, sizeof(msg))) {
		errorf("%s", msg);
		goto out;
	}
	if (dbg && cfg->verbose) {
		struct debuginfo_stats ds;

		debuginfo__stats(dbg, &ds);
		fprintf(stderr, "pmubpf: debug info: %zu objects, %zu with their own DWARF; debug files: %zu by build-id, %zu by debuglink (%zu CRC mismatches), %zu from debuginfod, %zu inside a process's namespace; %zu MiniDebugInfo; %zu over the fd budget\n",
			ds.objects, ds.own_dwarf, ds.by_build_id, ds.by_debuglink, ds.crc_mismatch,
			ds.by_debuginfod, ds.in_namespace, ds.minidebuginfo, ds.fd_budget);
	}
	ret = 0;
	if (child) {
		if (!child_done) {
			/* Stopped by -d or a signal: pass the stop on. */
			kill(child, stop_signal ? stop_signal : SIGTERM);
			waitpid(child, &child_status, 0);
		}
		child = 0;
		if (WIFEXITED(child_status))
			ret = WEXITSTATUS(child_status);
		else if (WIFSIGNALED(child_status))
			ret = 128 + WTERMSIG(child_status);
	}
out:
	timekeeper__stop(tk, NULL); /* before perfev__free: it uses the events */
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (go_fd >= 0)
		close(go_fd);
	if (err_fd >= 0)
		close(err_fd);
	perfev__free(pev);
	mmapwatch__free(mw);
	if (epfd >= 0)
		close(epfd);
	ring_buffer__free(rb);
	procs__free(procs);
	unwind__free(uw);
	symcache__free(sc);
	debuginfo__free(dbg); /* after the objects it noted */
	ksyms__free(ks);
	pmubpf_bpf__destroy(skel);
	free(cpus);
	result = NULL;
	return ret;
}
