/* timekeeper.c — the -d deadline and timer-period dither (timekeeper.h).
 *
 * Why the arithmetic below keeps the profile unbiased: between two
 * re-draws (a segment of T ns) a timer restarted with period P' fires
 * about T/P' - 1/2 times on average (the part of its last interval that
 * the next restart cuts off is lost). The weight of every sample stays
 * the nominal period P (the kernel reports the period the event was
 * opened with), so the expected count must stay T/P: P' = P / (r (1 +
 * P/2T)) with the rate factor r = 1 + dev gives T r/P + 1/2 - 1/2, and
 * pairs of segments with dev and -dev give exactly 2T/P. The segment
 * length T is itself random so that re-draws cannot fall on the same
 * phase of a workload that repeats every few ms.
 *
 * Why |dev| is kept between 5% and 15% rather than anywhere in +-15%: a
 * segment whose period is within ~1/(its sample count) of a workload's
 * round locks onto it for that segment. With |dev| >= 5% a workload in
 * step with the nominal period (the case dithering is for: loops paced
 * by a 1 ms clock) sweeps its whole round at least twice per segment.
 * Simulated over 1500 loops with rounds log-uniform in 0.2..10 periods,
 * 3 s at 1 kHz, the error in sigmas has rms 0.77 (binomial: 1), against
 * 0.86 for dev uniform in +-10%; fixed periods score 0.27 on such loops
 * (periodic sampling of an incommensurate loop is very even) but 34 on
 * a loop whose round is the period (tests/workloads/alias.c).
 */
/* sched_setaffinity: _GNU_SOURCE, from the build flags */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "perfev.h"
#include "timekeeper.h"

#define MIN_INTERVAL_NS 100000000ULL /* 100 ms */
#define INTERVAL_PERIODS 20          /* and at least 20 periods */
#define DITHER_MIN 0.05              /* rate 5% to 15% off nominal, */
#define DITHER_MAX 0.15              /* either way */
#define KERNEL_MIN_PERIOD 10000ULL   /* the hrtimer events' floor, ns */

struct timekeeper {
	struct perfev *pev;
	const struct config *cfg;
	int64_t deadline;
	uint32_t *recording;
	uint64_t period[PMUBPF_MAX_EVENTS]; /* nominal ns; 0: not dithered */
	bool *failed;                       /* [ev * ncpus + ci] */
	double *dev;                        /* same: last rate deviation */
	uint64_t round, iv;                 /* re-draws so far, last segment */
	int ncpus;
	cpu_set_t allowed;                  /* the thread's CPUs, restored */
	bool allowed_ok;                    /* after each re-draw */
	uint64_t rng;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool quit;
	int fired;
	struct timekeeper_stats st;
};

static uint64_t next_rand(uint64_t *s)
{
	/* splitmix64: statistically fine for choosing periods */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double unit(uint64_t *rng)
{
	return (double)(next_rand(rng) >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t timekeeper__timer_period(const struct config *cfg, const struct pmubpf_event *ev)
{
	if (!ev->is_timer || ev->member) /* a member counts: no period */
		return 0;
	if (cfg->period)
		return cfg->period;
	return cfg->freq ? 1000000000ULL / cfg->freq : 0;
}

uint64_t timekeeper__interval(uint64_t period, uint64_t *rng)
{
	uint64_t base = period * INTERVAL_PERIODS;

	if (base < MIN_INTERVAL_NS)
		base = MIN_INTERVAL_NS;
	return (uint64_t)((double)base * (0.5 + unit(rng)));
}

double timekeeper__deviation(uint64_t *rng)
{
	double mag = DITHER_MIN + (DITHER_MAX - DITHER_MIN) * unit(rng);

	return next_rand(rng) & 1 ? mag : -mag;
}

uint64_t timekeeper__draw(uint64_t period, uint64_t interval, double dev)
{
	double r = 1.0 + dev;
	double p = (double)period / (r * (1.0 + (double)period / (2.0 * (double)interval)));

	return p < KERNEL_MIN_PERIOD ? KERNEL_MIN_PERIOD : (uint64_t)(p + 0.5);
}

/* One re-draw on every dithered (event, CPU), all for the same segment
 * length (every timer event has the same nominal period); returns it, or
 * 0 when nothing is left to dither. Re-draws come in antithetic pairs:
 * the second segment repeats the first one's length with the opposite
 * rate deviation, so the pair's expected count is exactly its nominal
 * one and the dither adds next to no variance to the totals. */
static uint64_t redraw(struct timekeeper *tk)
{
	bool second = tk->round++ & 1, any = false;
	uint64_t iv = second ? tk->iv : 0;

	for (int e = 0; !iv && e < tk->cfg->nevents; e++)
		if (tk->period[e])
			iv = timekeeper__interval(tk->period[e], &tk->rng);
	/* CPU by CPU, this thread on that CPU first: the kernel changes an
	 * event's period on its own CPU, and asked from another one waits
	 * for it in a cross-CPU call, spinning. On a VM whose other vCPU the
	 * host was slow to run, that spinning was a third of pmubpf's CPU
	 * under process churn (docs/benchmarks.md). Moving costs a sleep, not
	 * a spin; where it is refused (cpuset), the call is made from here. */
	for (int c = 0; iv && c < tk->ncpus; c++) {
		int cpu = perfev__cpu(tk->pev, c);
		bool here = false;

		if (cpu >= 0 && cpu < CPU_SETSIZE) {
			cpu_set_t one;

			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			here = sched_setaffinity(0, sizeof(one), &one) == 0;
		}
		for (int e = 0; e < tk->cfg->nevents; e++) {
			uint64_t p = tk->period[e];
			int i = e * tk->ncpus + c, err;

			if (!p || tk->failed[i])
				continue;
			tk->dev[i] = second ? -tk->dev[i] : timekeeper__deviation(&tk->rng);
			err = perfev__set_period(tk->pev, e, c, timekeeper__draw(p, iv, tk->dev[i]));
			if (err == -ENOENT)
				continue; /* no event on that CPU */
			if (err) {
				tk->failed[i] = true;
				__atomic_fetch_add(&tk->st.failures, 1, __ATOMIC_RELAXED);
				continue;
			}
			__atomic_fetch_add(&tk->st.redraws, 1, __ATOMIC_RELAXED);
			if (here)
				__atomic_fetch_add(&tk->st.local, 1, __ATOMIC_RELAXED);
			any = true;
		}
	}
	if (tk->ncpus > 1 && tk->allowed_ok) /* sleep anywhere it may */
		sched_setaffinity(0, sizeof(tk->allowed), &tk->allowed);
	tk->iv = iv;
	return any ? iv : 0;
}

static void *tk_thread(void *arg)
{
	struct timekeeper *tk = arg;
	tk->allowed_ok = sched_getaffinity(0, sizeof(tk->allowed), &tk->allowed) == 0;
	int64_t next = tk->st.dithering ? mono_ns() + (int64_t)redraw(tk) : 0;

	pthread_mutex_lock(&tk->mu);
	while (!tk->quit) {
		int64_t now = mono_ns(), wake;

		if (tk->deadline && now >= tk->deadline) {
			if (tk->recording)
				__atomic_store_n(tk->recording, 0, __ATOMIC_RELEASE);
			perfev__stop(tk->pev);
			__atomic_store_n(&tk->fired, 1, __ATOMIC_RELEASE);
			break;
		}
		if (next && now >= next) {
			uint64_t iv;

			pthread_mutex_unlock(&tk->mu);
			iv = redraw(tk);
			pthread_mutex_lock(&tk->mu);
			next = iv ? mono_ns() + (int64_t)iv : 0;
			continue;
		}
		wake = next;
		if (tk->deadline && (!wake || tk->deadline < wake))
			wake = tk->deadline;
		if (!wake) {
			pthread_cond_wait(&tk->cv, &tk->mu);
		} else {
			struct timespec ts = { .tv_sec = wake / 1000000000LL,
					       .tv_nsec = wake % 1000000000LL };

			pthread_cond_timedwait(&tk->cv, &tk->mu, &ts);
		}
	}
	pthread_mutex_unlock(&tk->mu);
	return NULL;
}

struct timekeeper *timekeeper__start(struct perfev *pev, const struct config *cfg,
				     int64_t deadline, uint32_t *recording)
{
	struct timekeeper *tk = calloc(1, sizeof(*tk));
	pthread_condattr_t ca;
	bool dither = false;

	if (!tk)
		return NULL;
	tk->pev = pev;
	tk->cfg = cfg;
	tk->deadline = deadline;
	tk->recording = recording;
	tk->ncpus = perfev__ncpus(pev);
	for (int e = 0; e < cfg->nevents && !cfg->no_dither; e++) {
		tk->period[e] = timekeeper__timer_period(cfg, &cfg->events[e]);
		dither |= tk->period[e] != 0;
	}
	tk->st.dithering = dither;
	size_t n = (size_t)cfg->nevents * (tk->ncpus ? tk->ncpus : 1);
	if ((!dither && !deadline) || !(tk->failed = calloc(n, sizeof(bool))) ||
	    !(tk->dev = calloc(n, sizeof(double)))) {
		free(tk->failed);
		free(tk);
		return NULL;
	}
	tk->rng = (uint64_t)mono_ns() ^ ((uint64_t)getpid() << 32);
	pthread_mutex_init(&tk->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&tk->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&tk->th, NULL, tk_thread, tk)) {
		pthread_cond_destroy(&tk->cv);
		pthread_mutex_destroy(&tk->mu);
		free(tk->failed);
		free(tk->dev);
		free(tk);
		return NULL;
	}
	return tk;
}

bool timekeeper__fired(struct timekeeper *tk)
{
	return tk && __atomic_load_n(&tk->fired, __ATOMIC_ACQUIRE);
}

void timekeeper__stats(struct timekeeper *tk, struct timekeeper_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!tk)
		return;
	st->dithering = tk->st.dithering; /* set before the thread starts */
	st->redraws = __atomic_load_n(&tk->st.redraws, __ATOMIC_RELAXED);
	st->local = __atomic_load_n(&tk->st.local, __ATOMIC_RELAXED);
	st->failures = __atomic_load_n(&tk->st.failures, __ATOMIC_RELAXED);
}

void timekeeper__stop(struct timekeeper *tk, struct timekeeper_stats *st)
{
	if (!tk) {
		if (st)
			memset(st, 0, sizeof(*st));
		return;
	}
	pthread_mutex_lock(&tk->mu);
	tk->quit = true;
	pthread_cond_signal(&tk->cv);
	pthread_mutex_unlock(&tk->mu);
	pthread_join(tk->th, NULL);
	if (st)
		*st = tk->st;
	pthread_cond_destroy(&tk->cv);
	pthread_mutex_destroy(&tk->mu);
	free(tk->failed);
	free(tk->dev);
	free(tk);
}
