/* recorder.c — see recorder.h. */
#include <bpf/bpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "pprof/pprof.h"
#include "record/session.h"
#include "report/build.h"
#include "report/entries.h"
#include "report/report.h"
#include "report/symbolize.h"
#include "recorder.h"
#include "recorder_int.h"
#include "push/push.h"

#define WAIT_POLL_MS 200          /* recorder__wait: how often gone() is asked */
#define METRICS_EVERY_NS 1000000000LL

struct recorder *recorder__new(const struct config *cfg)
{
	struct recorder *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->cfg = *cfg;
	r->push_every = cfg->every;
	r->cfg.every = cfg->window > 0 ? cfg->window : RECORDER_DEFAULT_WINDOW;
	r->stats_fd = -1;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->done, NULL);
	r->m.nevents = cfg->nevents;
	for (int e = 0; e < cfg->nevents; e++)
		r->m.event[e] = cfg->events[e].name;
	r->m.window_seconds = r->cfg.every;
	r->s = session__new(&r->cfg, true);
	if (!r->s) {
		free(r);
		return NULL;
	}
	return r;
}

/* A pushed job of event ev: pending (start: 0), or running from the
 * window that has just opened (start: its open). NULL: out of memory
 * (said and counted once, the pushes of that event end). */
static struct recorder_job *push_job(struct recorder *r, int ev, int64_t start);
static void start_job(struct recorder *r, struct recorder_job *j);

int recorder__start(struct recorder *r, char *err, size_t errlen, int *status)
{
	if (push__start_all(&r->cfg, r->push, err, errlen)) {
		*status = 1;
		return -1;
	}
	if (session__open(r->s) || session__build(r->s) || session__start(r->s)) {
		snprintf(err, errlen, "%s", session__error(r->s));
		*status = session__status(r->s);
		for (int i = 0; i < 2; i++)
			push__close(r->push[i], 0, NULL);
		r->push[0] = r->push[1] = NULL;
		return -1;
	}
	for (int ev = 0; (r->push[0] || r->push[1]) && ev < r->cfg.nevents; ev++)
		push_job(r, ev, 0);
	/* The kernel times BPF programs only while someone holds this fd
	 * (or kernel.bpf_stats_enabled is set): two clock reads per run. */
	r->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	/* The session's window: --window, or shorter than the default where
	 * the stacks map would fill sooner (many CPUs, a high -F). */
	r->cfg.every = session__window_secs(r->s);
	pthread_mutex_lock(&r->lock);
	r->m.window_seconds = r->cfg.every;
	pthread_mutex_unlock(&r->lock);
	r->next_drain = mono_ns() + (int64_t)(r->cfg.every * 1e9);
	return 0;
}

void recorder__free(struct recorder *r)
{
	if (!r)
		return;
	session__free(r->s);
	if (r->stats_fd >= 0)
		close(r->stats_fd);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->done);
	free(r);
}

static void job_finish(struct recorder *r, struct recorder_job *j)
{
	if (j->d_ok)
		report_data__free(&j->d);
	j->d_ok = false;
	if (j->pushed) { /* nobody waits for it */
		if (j->res.status != 200 && j->res.err[0])
			fprintf(stderr, "pmubpf: push: %s: %s\n", r->cfg.events[j->rq.event].name, j->res.err);
		free(j->comment);
		free(j);
		return;
	}
	pthread_mutex_lock(&r->lock);
	j->state = JOB_DONE;
	pthread_cond_broadcast(&r->done);
	pthread_mutex_unlock(&r->lock);
}

static struct recorder_job *push_job(struct recorder *r, int ev, int64_t start)
{
	struct recorder_job *j = calloc(1, sizeof(*j));

	if (!j || !(j->comment = strdup(r->cfg.cmdline ? r->cfg.cmdline : ""))) {
		free(j);
		fprintf(stderr, "pmubpf: push: out of memory: the pushes of %s end\n",
			r->cfg.events[ev].name);
		for (int i = 0; i < 2; i++)
			if (r->push[i])
				push__lost_profile(r->push[i]);
		return NULL;
	}
	j->rq = (struct recorder_request){ .seconds = r->push_every, .event = ev,
					   .comment = j->comment };
	j->pushed = true;
	if (start) {
		j->deadline = start + (int64_t)(r->push_every * 1e9);
		j->start = start;
		start_job(r, j);
		return j;
	}
	pthread_mutex_lock(&r->lock);
	j->next = r->pending;
	r->pending = j;
	pthread_mutex_unlock(&r->lock);
	return j;
}

static void job_fail(struct recorder *r, struct recorder_job *j, int status, const char *msg)
{
	j->res.status = status;
	snprintf(j->res.err, sizeof(j->res.err), "%s", msg);
	job_finish(r, j);
}

/* The profile of j's windows, gzipped, into j->res. */
static int drain(struct recorder *r, bool final);

/* report_in.tick while a job's profile is built: the notices taken in,
 * and a window that came due drained into the running jobs (the one
 * being built is off that list), so that a long build does not leave a
 * window open past its size. */
static void build_tick(void *ctx)
{
	struct recorder *r = ctx;

	session__take_notices(r->s);
	if ((mono_ns() < r->next_drain && !session__window_full(r->s)) || drain(r, false))
		return;
	pthread_mutex_lock(&r->lock);
	r->m.windows_in_builds++;
	pthread_mutex_unlock(&r->lock);
}

static void build(struct recorder *r, struct recorder_job *j)
{
	struct session_span span = { j->start_wall, j->duration, 0 };
	struct config jc = r->cfg;
	struct report_built b;
	struct report_in in;
	char err[512];
	int64_t t0 = mono_ns();
	int ret;

	session__report_in(r->s, &span, &in);
	jc.cmdline = j->comment;
	jc.no_symbol = r->cfg.no_symbol || j->rq.nosymbol; /* the comments say so */
	in.cfg = &jc;
	in.quiet = true;
	in.tick = build_tick;
	in.tick_ctx = r;
	/* Per request: this thread alone symbolizes, so the option can be
	 * switched for one build and back. */
	symb__set_options(&(struct symb_options){ .no_symbol = r->cfg.no_symbol || j->rq.nosymbol });
	ret = report__build(&in, &j->d, j->rq.event, NULL, &b, err, sizeof(err));
	symb__set_options(&(struct symb_options){ .no_symbol = r->cfg.no_symbol });
	if (ret) {
		job_fail(r, j, 500, err);
		return;
	}
	if (j->pushed) {
		for (int i = 0; i < 2; i++)
			if (r->push[i])
				push__profile(r->push[i], r->cfg.events[j->rq.event].name, b.p,
					      j->start_wall, j->duration);
		pprof__free(b.p);
		j->res.status = 200;
		job_finish(r, j);
		return;
	}
	ret = pprof__encode_gz(b.p, &j->res.body, &j->res.len);
	j->res.samples = b.nsamples;
	pprof__free(b.p);
	if (ret) {
		snprintf(err, sizeof(err), "encoding the profile: %s", strerror(-ret));
		job_fail(r, j, 500, err);
		return;
	}
	j->res.status = 200;
	if (r->cfg.verbose)
		fprintf(stderr, "pmubpf: profile of %.1f s built in %.3f s\n", (double)j->duration / 1e9,
			(double)(mono_ns() - t0) / 1e9);
	pthread_mutex_lock(&r->lock);
	r->m.requests_served++;
	pthread_mutex_unlock(&r->lock);
	job_finish(r, j);
}

/* Take the jobs that arrived, and those whose clients left. */
static struct recorder_job *take_arrivals(struct recorder *r)
{
	struct recorder_job *arr, **pp;

	pthread_mutex_lock(&r->lock);
	arr = r->pending;
	r->pending = NULL;
	for (pp = &r->running; *pp;) {
		struct recorder_job *j = *pp;

		if (!j->cancelled) {
			pp = &j->next;
			continue;
		}
		*pp = j->next;
		if (j->d_ok)
			report_data__free(&j->d);
		j->d_ok = false;
		j->res.gone = true;
		j->state = JOB_DONE;
		pthread_cond_broadcast(&r->done);
	}
	pthread_mutex_unlock(&r->lock);
	return arr;
}

/* Close the window under way and merge it into every running job; a
 * job whose deadline has come ends with it (final: every job). */
static int drain(struct recorder *r, bool final)
{
	struct session_span span;
	struct report_data chunk;
	int64_t now;

	/* The window closes now (the flip comes first in the drain; what
	 * follows, notices and map reads, may take a while). */
	r->flipped = mono_ns();
	if (report_data__init(&chunk)) {
		fprintf(stderr, "pmubpf: out of memory\n");
		return -1;
	}
	if (session__drain_window(r->s, &chunk, &span)) {
		fprintf(stderr, "pmubpf: %s\n", session__error(r->s));
		report_data__free(&chunk);
		return -1;
	}
	now = r->flipped;
	bool next_push[PMUBPF_MAX_EVENTS] = { false };
	for (struct recorder_job *j = r->running; j; j = j->next) {
		if (j->ended)
			continue;
		j->ended = final || j->deadline <= now;
		if (j->ended && j->pushed && !final)
			next_push[j->rq.event] = true;
		if (!j->d_ok)
			continue;
		if (!j->nwindows++)
			j->start_wall = span.start_wall;
		j->duration += span.duration;
		if (r->cfg.verbose > 1)
			fprintf(stderr, "pmubpf: %.3f job %p: window of %.3f s, %.3f s in all, deadline in %.3f s%s\n",
				mono_ns() / 1e9, (void *)j, span.duration / 1e9, j->duration / 1e9, (j->deadline - now) / 1e9,
				j->ended ? ", ended" : "");
		if (report_data__merge(&j->d, &chunk)) {
			report_data__free(&j->d);
			j->d_ok = false; /* answered 500 */
		}
	}
	pthread_mutex_lock(&r->lock);
	r->m.windows++;
	for (int e = 0; e < r->cfg.nevents; e++)
		for (int k = 0; k < PMUBPF_DROP__MAX; k++)
			r->m.drops[e][k] += chunk.ev[e].drops[k].count;
	pthread_mutex_unlock(&r->lock);
	report_data__free(&chunk);
	r->next_drain = r->flipped + (int64_t)(r->cfg.every * 1e9);
	/* Each pushed profile's successor starts with the window that has
	 * just opened: the pushes cover every window once. */
	for (int e = 0; e < r->cfg.nevents; e++)
		if (next_push[e])
			push_job(r, e, r->flipped);
	return 0;
}

static void start_job(struct recorder *r, struct recorder_job *j)
{
	if (r->cfg.verbose > 1)
		fprintf(stderr, "pmubpf: %.3f job %p: started, %.1f s\n", mono_ns() / 1e9, (void *)j, j->rq.seconds);
	j->d_ok = !report_data__init(&j->d);
	pthread_mutex_lock(&r->lock);
	j->state = JOB_RUNNING;
	j->next = r->running;
	r->running = j;
	pthread_mutex_unlock(&r->lock);
}

/* Close a window when a job arrived, one is due, or the window is full
 * (final: always), then start the arrivals with the window that just
 * opened. Cheap: called again between two builds, so that one slow
 * build does not stretch the others' windows. */
static int advance(struct recorder *r, bool final)
{
	struct recorder_job *arr = take_arrivals(r), *j;
	int64_t now = mono_ns();
	bool due = final || arr || now >= r->next_drain || session__window_full(r->s);

	for (j = r->running; j && !due; j = j->next)
		due = !j->ended && j->deadline <= now;
	/* Stopping: a request that has just come gets the window under way
	 * (what there is), not a refusal. */
	for (j = arr; final && j; j = arr) {
		arr = j->next;
		start_job(r, j);
	}
	if (due && drain(r, final)) {
		for (j = arr; j; j = arr) {
			arr = j->next;
			job_fail(r, j, 500, "the recording failed");
		}
		return -1;
	}
	for (j = arr; j; j = arr) {
		arr = j->next;
		j->deadline = r->flipped + (int64_t)(j->rq.seconds * 1e9);
		j->start = r->flipped;
		start_job(r, j);
	}
	return 0;
}

/* The first running job that has ended, taken off the list; NULL if none. */
static struct recorder_job *take_ended(struct recorder *r)
{
	struct recorder_job **pp, *j = NULL;

	pthread_mutex_lock(&r->lock);
	for (pp = &r->running; *pp; pp = &(*pp)->next)
		if ((*pp)->ended) {
			j = *pp;
			*pp = j->next;
			break;
		}
	pthread_mutex_unlock(&r->lock);
	return j;
}

/* One pass after each session step: windows closed as due, the jobs
 * that ended answered, one build at a time. */
static int tick(struct recorder *r, bool final)
{
	struct recorder_job *j;
	int ret = advance(r, final);

	while ((j = take_ended(r))) {
		if (!j->d_ok)
			job_fail(r, j, 500, "out of memory merging the windows");
		else
			build(r, j);
		if (!ret && !final)
			ret = advance(r, false);
	}
	/* Processes found dead before every running request's first window
	 * (and before the window under way) have no samples left to name:
	 * forgotten, so that a server of weeks holds the live ones. */
	int64_t before = r->flipped;
	pthread_mutex_lock(&r->lock);
	for (j = r->running; j; j = j->next)
		if (j->start < before)
			before = j->start;
	pthread_mutex_unlock(&r->lock);
	session__gc(r->s, before, NULL);
	if (final || mono_ns() >= r->next_metrics) {
		recorder__refresh_metrics(r);
		r->next_metrics = mono_ns() + METRICS_EVERY_NS;
	}
	return ret;
}

int recorder__run(struct recorder *r)
{
	struct recorder_job *j;
	enum session_end end;
	int ret = 0;

	while ((end = session__step(r->s)) == SESSION_GOING)
		if (tick(r, false)) {
			ret = 1;
			break;
		}
	pthread_mutex_lock(&r->lock);
	r->stopping = true;
	pthread_mutex_unlock(&r->lock);
	if (end == SESSION_ERROR) {
		fprintf(stderr, "pmubpf: %s\n", session__error(r->s));
		ret = 1;
	} else if (end == SESSION_TARGETS_EXITED) {
		fprintf(stderr, "pmubpf: every target has exited: serving ended\n");
	}
	/* Sampling ends; the last window goes to the jobs under way. */
	session__stop(r->s);
	if (tick(r, true)) {
		/* The last drain failed: the jobs left get what they have. */
		ret = 1;
		for (j = r->running; j; j = j->next)
			j->ended = true;
		while ((j = take_ended(r)))
			j->d_ok ? build(r, j) : job_fail(r, j, 500, "out of memory merging the windows");
	}
	session__end(r->s);
	for (int i = 0; i < 2; i++) { /* what is queued, sent first */
		push__close(r->push[i], PUSH_EXIT_WAIT_S, NULL);
		r->push[i] = NULL;
	}
	return ret;
}

struct recorder_job *recorder__submit(struct recorder *r, const struct recorder_request *rq,
				      struct recorder_result *res)
{
	struct recorder_job *j = calloc(1, sizeof(*j));

	*res = (struct recorder_result){ .status = 503 };
	if (!j || !(j->comment = strdup(rq->comment ? rq->comment : ""))) {
		free(j);
		snprintf(res->err, sizeof(res->err), "out of memory");
		return NULL;
	}
	j->rq = *rq;
	j->rq.comment = j->comment;
	pthread_mutex_lock(&r->lock);
	if (r->stopping || r->njobs >= RECORDER_MAX_JOBS) {
		snprintf(res->err, sizeof(res->err), r->stopping ? "the server is stopping"
			 : "too many profile requests at once (%d): retry later", RECORDER_MAX_JOBS);
		pthread_mutex_unlock(&r->lock);
		free(j->comment);
		free(j);
		return NULL;
	}
	r->njobs++;
	r->m.requests_active = r->njobs;
	j->next = r->pending;
	r->pending = j;
	pthread_mutex_unlock(&r->lock);
	return j;
}

void recorder__wait(struct recorder *r, struct recorder_job *j, bool (*gone)(void *arg),
		    void *arg, struct recorder_result *res)
{
	pthread_mutex_lock(&r->lock);
	while (j->state != JOB_DONE) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += WAIT_POLL_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&r->done, &r->lock, &ts);
		if (j->state != JOB_DONE && !j->cancelled && gone && gone(arg)) {
			j->cancelled = true;
			/* Not started yet: nothing of it is the recorder's. */
			if (j->state == JOB_PENDING) {
				struct recorder_job **pp = &r->pending;

				while (*pp && *pp != j)
					pp = &(*pp)->next;
				if (*pp)
					*pp = j->next;
				j->res.gone = true;
				j->state = JOB_DONE;
			}
		}
	}
	r->njobs--;
	r->m.requests_active = r->njobs;
	pthread_mutex_unlock(&r->lock);
	*res = j->res;
	free(j->comment);
	free(j);
}
