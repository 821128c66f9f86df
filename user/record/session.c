/* session.c — see session.h. */
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
#include "symbols/debuginfo.h"
#include "symbols/elfsym.h"
#include "symbols/ksyms.h"
#include "procs/mmapwatch.h"
#include "perf/perfev.h"
#include "pmubpf.skel.h"
#include "procs/procmaps.h"
#include "procs/procs.h"
#include "report/drain.h"
#include "report/entries.h"
#include "report/report.h"
#include "session.h"
#include "ksymnames.h"
#include "session_int.h"
#include "report/symbolize.h"
#include "status.h"
#include "targets.h"
#include "offcpu.h"
#include "windows.h"
#include "perf/timekeeper.h"
#include "unwind/unwind.h"

#define POLL_MS 100
#define THROTTLE_POLL_NS 50000000LL /* 50 ms: a ring holds 128 stops */
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



const char *session__error(const struct session *s)
{
	return s->err;
}

int session__status(const struct session *s)
{
	return s->status;
}


struct session *session__new(const struct config *cfg, bool quiet)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cfg = cfg;
	s->quiet = quiet;
	s->status = 1;
	s->epfd = -1;
	s->cmd.go_fd = s->cmd.err_fd = -1;
	loadlog__install(cfg->verbose);
	return s;
}

/* The held command may exec now; its exec error, if any, comes back on
 * err_fd (EOF: it ran). */
static int release_command(struct session *s)
{
	const char *name = s->cfg->command[0];
	int en = 0;

	if (write(s->cmd.go_fd, "g", 1) != 1)
		return session_fail(s, "cannot start '%s': %s", name, strerror(errno));
	close(s->cmd.go_fd);
	s->cmd.go_fd = -1;
	if (read(s->cmd.err_fd, &en, sizeof(en)) == (ssize_t)sizeof(en)) {
		waitpid(s->cmd.pid, NULL, 0);
		s->cmd.pid = 0;
		s->status = 127;
		return session_fail(s, "cannot run '%s': %s", name, strerror(en));
	}
	return 0;
}

int session__start(struct session *s)
{
	const struct config *cfg = s->cfg;

	if (cfg->command) {
		s->cmd.pid = targets__start_command(cfg->command, &s->cmd.go_fd, &s->cmd.err_fd);
		if (s->cmd.pid < 0) {
			s->cmd.pid = 0;
			return session_fail(s, "cannot start '%s': %s", cfg->command[0], strerror(errno));
		}
		if (session_add_target(s, s->cmd.pid, PMUBPF_TARGET_TGID, PMUBPF_TARGET_AT_EXEC))
			return -1;
	}
	struct perfev_progs progs = {
		.sample = s->skel->progs.on_sample, .tracepoint = s->skel->progs.on_tracepoint,
		.members_fd = bpf_map__fd(s->skel->maps.group_members),
		.nr_cpus = libbpf_num_possible_cpus(),
	};
	s->pev = perfev__open_all(cfg, s->cpus, s->ncpus, &progs, s->err, sizeof(s->err));
	if (!s->pev)
		return -1;

	session__catch_signals();
	s->t0_wall = s->win_start_wall = clock_ns(CLOCK_REALTIME);
	s->t0 = s->win_start = mono_ns();
	s->cadence_ns = (int64_t)PMUBPF_NOTICE_WAKE_NS;
	/* -d is enforced by a thread that disables the events on time: the
	 * notice loop may be busy for a while (a new process's unwind tables,
	 * symbols) and must not stretch the recording. The same thread
	 * dithers the timer periods (timekeeper.h). */
	s->deadline = cfg->duration > 0 ? s->t0 + (int64_t)(cfg->duration * 1e9) : 0;
	offcpu__start(s->skel, s->t0);
	__atomic_store_n(&s->skel->bss->recording, 1, __ATOMIC_RELEASE); /* the window opens */
	s->tk = timekeeper__start(s->pev, cfg, s->deadline, &s->skel->bss->recording);
	/* A one-shot recording longer than a window drains each as it ends
	 * (--every, --http and top drain their own). */
	if (s->windowed && cfg->every <= 0)
		s->next_drain = s->t0 + (int64_t)(s->window * 1e9);
	if (s->cmd.pid && release_command(s))
		return -1;
	/* Kernel symbols: asked of the kernel as profiles are built, else
	 * all of kallsyms, read while sampling goes on. */
	if (!cfg->no_kernel && !(s->kn = ksymnames__open()))
		s->kload = ksyms__load_async("/proc/kallsyms");
	if (cfg->verbose)
		fprintf(stderr, "pmubpf: recording %d event(s) on %d CPU(s); maps: %u stacks, %u counts%s; "
			"process maps read by %s\n",
			cfg->nevents, s->ncpus, s->stack_entries, s->count_entries,
			s->next_drain ? ", drained each window" : "", procmaps__reader());
	if (cfg->verbose && !cfg->no_kernel)
		fprintf(stderr, "pmubpf: kernel symbols %s\n",
			s->kn ? "asked of the kernel as profiles are built" : "from /proc/kallsyms");
	return 0;
}

/* The loop's cadence: how long BPF's process notices may wait
 * unannounced, and a new process for its image before it is read
 * (procs.h, PROCS_IMAGE_WAIT_NS). Each look is a wakeup that takes a CPU
 * from the load. 10 ms; while PMUBPF_CHURN_RATE new process images a
 * second or more are noticed (the last second's notices; an exec makes
 * a new one), 20 ms: under the churn
 * bench's load that halved the loader's wakeups (1423 -> 841 voluntary
 * switches in 10 s) and took 16% off its CPU (0.673 -> 0.567 s), while a
 * long-lived process started then is read 10 ms later. */
static void session_cadence(struct session *s, int64_t now)
{
	uint64_t n = procs__stats(s->procs)->notices;
	int64_t ns;

	if (!s->cadence_t0 || now < s->cadence_t0) {
		s->cadence_t0 = now;
		s->cadence_n0 = n;
		return;
	}
	if (now - s->cadence_t0 < 1000000000LL)
		return;
	ns = (n - s->cadence_n0) * 1000000000ULL >= (uint64_t)PMUBPF_CHURN_RATE * (uint64_t)(now - s->cadence_t0)
		? (int64_t)PMUBPF_NOTICE_WAKE_CHURN_NS : (int64_t)PMUBPF_NOTICE_WAKE_NS;
	s->cadence_churn += ns != (int64_t)PMUBPF_NOTICE_WAKE_NS;
	s->cadence_t0 = now;
	s->cadence_n0 = n;
	if (ns != s->cadence_ns) {
		s->cadence_ns = ns;
		__atomic_store_n(&s->skel->bss->notice_wake_ns, (__u64)ns, __ATOMIC_RELAXED);
		procs__set_image_wait(s->procs, ns);
	}
}

enum session_end session__step(struct session *s)
{
	const struct config *cfg = s->cfg;
	struct epoll_event evs[2];
	int err;

	if (stop_signal)
		return SESSION_SIGNAL;
	int timeout = s->pending ? POLL_PENDING_MS : POLL_MS;

	/* Look again when BPF's next notices may wait unannounced, or when
	 * a process's wait for its image (procs__wait_due) ends. */
	int64_t due = s->notice_recheck, wait_due = procs__wait_due(s->procs);

	if (wait_due && (!due || wait_due < due))
		due = wait_due;
	if (due) {
		int64_t left = due - mono_ns();
		int ms = left > 0 ? (int)((left + 999999) / 1000000) : 0;

		timeout = ms < timeout ? ms : timeout;
	}
	if (epoll_wait(s->epfd, evs, 2, timeout) < 0 && errno != EINTR) {
		session_fail(s, "waiting for notices: %s", strerror(errno));
		return SESSION_ERROR;
	}
	if (s->notice_recheck && mono_ns() >= s->notice_recheck)
		s->notice_recheck = 0;
	err = session__take_notices(s);
	if (err < 0 && err != -EINTR) {
		session_fail(s, "reading notices: %s", strerror(-err));
		return SESSION_ERROR;
	}
	/* BPF woke us for the first of these; the ones it sends within
	 * the cadence of that wake nobody: look again by then.
	 * And tell BPF so (its wake time is ours now): while notices keep
	 * coming, these looks alone read them, where BPF's wakes came on
	 * top of them (two wakeups per 10 ms under churn, not one). */
	int64_t now = mono_ns();

	session_cadence(s, now);
	/* The kernel's throttle records, before a ring of them fills. */
	if (now >= s->next_throttle_poll) {
		perfev__poll(s->pev);
		s->next_throttle_poll = now + THROTTLE_POLL_NS;
	}
	if (err > 0) {
		s->notice_recheck = now + s->cadence_ns;
		__atomic_store_n(&s->skel->bss->last_notice_wake, (__u64)now, __ATOMIC_RELAXED);
	}
	s->pending = procs__tick(s->procs);
	/* The timekeeper closes the window at the deadline itself: the loop
	 * ends once it has, so that the profile's duration is -d exactly
	 * (ending on the clock here, a busy loop could close the window
	 * later, and say so). Without a timekeeper thread, the clock. */
	if (s->deadline && (s->tk ? timekeeper__fired(s->tk) : mono_ns() >= s->deadline))
		return SESSION_DEADLINE;
	if (s->cmd.pid && waitpid(s->cmd.pid, &s->cmd.status, WNOHANG) == s->cmd.pid) {
		s->cmd.done = true;
		return SESSION_COMMAND_EXITED;
	}
	if (!cfg->all && !s->cmd.pid && !targets__alive(cfg))
		return SESSION_TARGETS_EXITED;
	return stop_signal ? SESSION_SIGNAL : SESSION_GOING;
}

/* Said once the recording ends on a signal, so that a SIGHUP'ed or
 * SIGQUIT'ed run does not end in silence. */
static void say_stop_signal(const struct session *s)
{
	int sig = stop_signal;

	if (sig && !s->quiet)
		fprintf(stderr, "pmubpf: SIG%s: ending the recording, writing the profile\n",
			sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
}

void session__stop(struct session *s)
{
	int64_t t_end;
	bool fired;

	if (s->stopped)
		return;
	s->stopped = true;
	__atomic_store_n(&s->skel->bss->recording, 0, __ATOMIC_RELEASE); /* and closes */
	say_stop_signal(s);
	t_end = mono_ns();
	fired = timekeeper__fired(s->tk);
	timekeeper__stop(s->tk, &s->tk_st);
	s->tk = NULL;
	perfev__stop(s->pev);
	s->duration = (fired ? s->deadline : t_end) - s->t0;
	/* Waits under way, counted up to the end (before the last drain). */
	if (offcpu__flush(s->skel, s->t0 + s->duration, false) && !s->quiet)
		fprintf(stderr, "pmubpf: warning: off-cpu: waits under way at the end not counted: %s\n",
			strerror(errno));
	/* No sample comes any more: processes first read from here on (the
	 * last notices, the waits for BPF's images) need no unwind tables. */
	if (s->uw)
		unwind__stop(s->uw);
	session__take_notices(s); /* of the last samples */
	procs__read_waiting(s->procs);
	procs__rescan_all(s->procs);  /* libraries mapped since the last read */
}

static void print_debuginfo_stats(const struct debuginfo *dbg)
{
	struct debuginfo_stats ds;

	debuginfo__stats(dbg, &ds);
	fprintf(stderr, "pmubpf: debug info: %zu objects, %zu with their own DWARF; debug files: %zu by build-id, %zu by debuglink (%zu CRC mismatches), %zu from debuginfod, %zu inside a process's namespace; %zu MiniDebugInfo; %zu over the fd budget\n",
		ds.objects, ds.own_dwarf, ds.by_build_id, ds.by_debuglink, ds.crc_mismatch,
		ds.by_debuginfod, ds.in_namespace, ds.minidebuginfo, ds.fd_budget);
	if (ds.cache.off)
		fprintf(stderr, "pmubpf: debug info: uncompressed copies: off\n");
	else if (ds.cache.refused)
		fprintf(stderr, "pmubpf: debug info: uncompressed copies not kept: the cache directory: %s\n",
			strerror(ds.cache.refused));
	else
		fprintf(stderr, "pmubpf: debug info: uncompressed copies: %zu reused, %zu made, %zu failed, %zu evicted\n",
			ds.cache.reused, ds.cache.made, ds.cache.failed, ds.cache.evicted);
}

/* The command's exit status; stopped by -d or a signal, the stop is
 * passed on to it first. */
static int command_status(struct session *s)
{
	const char *cmd = s->cfg->command[0];

	if (!s->cmd.done) {
		kill(s->cmd.pid, stop_signal ? stop_signal : SIGTERM);
		waitpid(s->cmd.pid, &s->cmd.status, 0);
	}
	s->cmd.pid = 0;
	if (WIFEXITED(s->cmd.status))
		return WEXITSTATUS(s->cmd.status);
	if (!WIFSIGNALED(s->cmd.status))
		return 0;
	/* pmubpf exits with the command's status: when that is a signal's,
	 * say whose doing it was. */
	if (!s->quiet) {
		const char *name = sigabbrev_np(WTERMSIG(s->cmd.status));
		char why[128];

		if (s->cmd.done)
			snprintf(why, sizeof(why), "'%s' was killed", cmd);
		else if (stop_signal)
			snprintf(why, sizeof(why), "SIG%s received: passed on to '%s', which ended",
				 sigabbrev_np(stop_signal), cmd);
		else
			snprintf(why, sizeof(why), "-d %g elapsed: stopped '%s'", s->cfg->duration, cmd);
		fprintf(stderr, "pmubpf: %s by SIG%s; exit status %d (128 + signal)\n", why,
			name ? name : "?", 128 + WTERMSIG(s->cmd.status));
	}
	return 128 + WTERMSIG(s->cmd.status);
}

/* The command's exit status (0 without one). */
int session__end(struct session *s)
{
	if (s->dbg && s->cfg->verbose)
		print_debuginfo_stats(s->dbg);
	return s->cmd.pid ? command_status(s) : 0;
}

double session__window_secs(const struct session *s)
{
	return s->window;
}

/* Close the window under way and add it to s->acc: straight in for the
 * first, merged into it after (an entry or stack already there is added
 * to, not repeated, so acc stays as large as the distinct keys). */
static int drain_into_acc(struct session *s)
{
	struct report_data chunk, *d = &chunk;
	struct session_span span;
	int ret;

	if (!s->acc) {
		s->acc = malloc(sizeof(*s->acc));
		if (!s->acc || report_data__init(s->acc)) {
			free(s->acc);
			s->acc = NULL;
			return session_fail(s, "out of memory");
		}
		d = s->acc;
	} else if (report_data__init(&chunk)) {
		return session_fail(s, "out of memory");
	}
	ret = session__drain_window(s, d, &span);
	if (!ret && d == &chunk && report_data__merge(s->acc, &chunk))
		ret = session_fail(s, "out of memory adding a window to the recording");
	if (d == &chunk)
		report_data__free(&chunk);
	if (!ret)
		s->nwindows++;
	return ret;
}

/* One-shot: drain the window that came due. 0 or -1. */
static int drain_due(struct session *s)
{
	int64_t now = mono_ns();

	if (!s->next_drain || (now < s->next_drain && !s->full))
		return 0;
	s->next_drain = now + (int64_t)(s->window * 1e9);
	return drain_into_acc(s);
}

int session__finish(struct session *s, enum session_end end, uint64_t *samples)
{
	const struct config *cfg = s->cfg;
	struct session_span span;
	struct report_in in;
	char msg[512];
	int ret, st;

	session__stop(s);
	/* A loop that ended on an error still writes what was recorded,
	 * then fails with that error. */
	ret = end == SESSION_ERROR ? 1 : 0;
	/* The last window (the only one of a recording that never flipped)
	 * joins those drained before: the profiles are built from them all. */
	if (drain_into_acc(s))
		return 1;
	/* Every notice is in (session__stop, the drain): the ring buffer's
	 * pages (2 MB, all resident) need not be mapped while the profile is
	 * built. */
	ring_buffer__free(s->rb);
	s->rb = NULL;
	span = (struct session_span){ s->t0_wall, s->duration, s->t0 + s->duration };
	session__report_in(s, &span, &in);
	in.samples = samples;
	in.last = true; /* nothing is symbolized after: sources go once used */
	if (in.unwind && cfg->verbose) {
		unwind__summary(in.unwind, msg, sizeof(msg));
		fprintf(stderr, "pmubpf: %s\n", msg);
	}
	if (s->nwindows > 1 && cfg->verbose)
		session__say_totals(s, s->nwindows);
	if (cfg->verbose)
		fprintf(stderr, "pmubpf: loop: %llu s at the churn cadence (%llu ms: %d+ new process images/s), "
			"the rest at %llu ms\n", (unsigned long long)s->cadence_churn,
			PMUBPF_NOTICE_WAKE_CHURN_NS / 1000000, PMUBPF_CHURN_RATE,
			PMUBPF_NOTICE_WAKE_NS / 1000000);
	if (report__write_data(&in, s->acc, s->quiet ? NULL : stderr, s->quiet ? NULL : stdout,
			       msg, sizeof(msg))) {
		session_fail(s, "%s", msg);
		ret = 1;
	}
	report_data__free(s->acc);
	free(s->acc);
	s->acc = NULL;
	st = session__end(s);
	return ret ? ret : st;
}

void session__free(struct session *s)
{
	if (!s)
		return;
	timekeeper__stop(s->tk, NULL); /* before perfev__free: it uses the events */
	if (s->cmd.pid > 0) {
		kill(s->cmd.pid, SIGKILL);
		waitpid(s->cmd.pid, NULL, 0);
	}
	if (s->cmd.go_fd >= 0)
		close(s->cmd.go_fd);
	if (s->cmd.err_fd >= 0)
		close(s->cmd.err_fd);
	perfev__free(s->pev);
	mmapwatch__free(s->mw);
	if (s->epfd >= 0)
		close(s->epfd);
	ring_buffer__free(s->rb);
	procs__free(s->procs);
	unwind__free(s->uw);
	symcache__free(s->sc);
	debuginfo__free(s->dbg); /* after the objects it noted */
	ksymnames__close(s->kn);
	if (s->kload) /* a failed start's */
		ksyms__free(ksyms__join(s->kload));
	ksyms__free(s->ks);
	if (s->acc) {
		report_data__free(s->acc);
		free(s->acc);
	}
	pmubpf_bpf__destroy(s->skel);
	cgfilter__close(&s->cgf);
	free(s->cpus);
	free(s);
}

int session__record(const struct config *cfg, struct session_result *res,
		    bool (*gone)(void *arg), void *arg)
{
	struct session *s = session__new(cfg, res != NULL);
	enum session_end end;
	int ret;

	if (res)
		*res = (struct session_result){ 0 };
	if (!s) {
		if (res)
			snprintf(res->err, sizeof(res->err), "out of memory");
		else
			fprintf(stderr, "pmubpf: out of memory\n");
		return 1;
	}
	if (session__open(s) || session__build(s) || session__start(s)) {
		ret = session__status(s);
	} else {
		/* On a terminal, a live status line (status.h). */
		struct status *st = res ? NULL : status__new(stderr, bpf_map__fd(s->skel->maps.totals),
							    bpf_map__fd(s->skel->maps.drops),
							    cfg->nevents, libbpf_num_possible_cpus());

		while ((end = session__step(s)) == SESSION_GOING) {
			if (gone && gone(arg)) {
				end = SESSION_GONE;
				break;
			}
			if (drain_due(s)) {
				end = SESSION_ERROR;
				break;
			}
			status__tick(st, s->t0, mono_ns());
		}
		status__end(st);
		if (end == SESSION_TARGETS_EXITED && !res)
			fprintf(stderr, "pmubpf: every target has exited: recording ended after %.1f s\n",
				(double)(mono_ns() - s->t0) / 1e9);
		ret = session__finish(s, end, res ? &res->samples : NULL);
	}
	if (s->err[0]) {
		if (res)
			snprintf(res->err, sizeof(res->err), "%s", s->err);
		else
			fprintf(stderr, "pmubpf: %s\n", s->err);
	}
	session__free(s);
	return ret;
}

int session__run(const struct config *cfg)
{
	return session__record(cfg, NULL, NULL, NULL);
}
