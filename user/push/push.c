/* push.c — the queue and its sender thread (push.h). */
#include "push.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/errmsg.h"
#include "curl.h"
#include "push_int.h"
#include "service.h"

/* --- the queue (the recording thread adds, the sender takes) ----------- */

static void item_free(struct push_item *it)
{
	if (!it)
		return;
	free(it->url);
	free(it->body);
	free(it);
}

/* Drop what is loudest in memory first: the oldest. Under ps->mu. */
static void make_room(struct push *ps, size_t len)
{
	while (ps->head && ps->bytes + len > ps->o.queue_bytes) {
		struct push_item *old = ps->head;

		ps->head = old->next;
		if (!ps->head)
			ps->tail = NULL;
		ps->bytes -= old->len;
		ps->items--;
		ps->st.dropped_full++;
		ps->quiet_full++;
		item_free(old);
	}
}

void push__enqueue(struct push *ps, struct push_item *it)
{
	pthread_mutex_lock(&ps->mu);
	if (it->len > ps->o.queue_bytes) { /* could never be sent whole */
		ps->st.dropped_full++;
		ps->quiet_full++;
		pthread_mutex_unlock(&ps->mu);
		item_free(it);
		return;
	}
	make_room(ps, it->len);
	it->next = NULL;
	if (ps->tail)
		ps->tail->next = it;
	else
		ps->head = it;
	ps->tail = it;
	ps->bytes += it->len;
	ps->items++;
	ps->st.profiles_queued++;
	pthread_cond_signal(&ps->cv);
	pthread_mutex_unlock(&ps->mu);
}

/* The first item due, taken off the queue; NULL when stopping and the
 * queue is empty, or the deadline passed. Under ps->mu. */
static struct push_item *take(struct push *ps)
{
	for (;;) {
		int64_t now = mono_ns();

		if (ps->stop && (!ps->head || now >= ps->deadline))
			return NULL;
		if (ps->head && ps->head->not_before <= now) {
			struct push_item *it = ps->head;

			ps->head = it->next;
			if (!ps->head)
				ps->tail = NULL;
			ps->bytes -= it->len;
			ps->items--;
			return it;
		}
		int64_t until = ps->head ? ps->head->not_before : now + 1000000000LL;
		if (ps->stop && ps->deadline < until)
			until = ps->deadline;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		int64_t at = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + (until - now);
		ts.tv_sec = at / 1000000000LL;
		ts.tv_nsec = at % 1000000000LL;
		pthread_cond_timedwait(&ps->cv, &ps->mu, &ts);
	}
}

/* Back on the queue's head after a failure: tried again first, once its
 * wait is over (a later profile does not overtake it: a server sees a
 * series' windows in order). Under ps->mu. */
static void requeue(struct push *ps, struct push_item *it)
{
	make_room(ps, it->len);
	it->next = ps->head;
	ps->head = it;
	if (!ps->tail)
		ps->tail = it;
	ps->bytes += it->len;
	ps->items++;
}

/* --- the lines on stderr ------------------------------------------------ */

/* At most one line per PUSH_LOG_EVERY_S, with the losses since the last
 * one. Under ps->mu. */
static void say(struct push *ps, const char *what, bool force)
{
	int64_t now = mono_ns();

	if (!force && ps->said && now - ps->said < PUSH_LOG_EVERY_S * 1000000000LL) {
		ps->quiet_lines++;
		return;
	}
	fprintf(stderr, "pmubpf: push: %s", what);
	if (ps->quiet_lines)
		fprintf(stderr, " (%llu more lines unsaid since the last, one per %d s)",
			(unsigned long long)ps->quiet_lines, PUSH_LOG_EVERY_S);
	if (ps->quiet_full)
		fprintf(stderr, "; %llu profiles dropped from the full queue since",
			(unsigned long long)ps->quiet_full);
	fputc('\n', stderr);
	ps->said = now;
	ps->quiet_lines = 0;
	ps->quiet_full = 0;
}

/* --- the sender ---------------------------------------------------------- */

static size_t discard(char *ptr, size_t size, size_t n, void *ctx)
{
	(void)ptr;
	(void)ctx;
	return size * n;
}

/* A POST under way is cut off when the recording's last wait is over. */
static int progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct push *ps = ctx;

	(void)dt, (void)dn, (void)ut, (void)un;
	return __atomic_load_n(&ps->abort, __ATOMIC_RELAXED);
}

/* Post one item: 0 sent, 1 retry, -1 drop (the reason in why). */
static int post(struct push *ps, CURL *c, struct push_item *it, long *retry_after,
		char *why, size_t whylen)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURLcode rc;

	char ctype[96];
	struct curl_slist *h = NULL;

	snprintf(ctype, sizeof(ctype), "Content-Type: %s", it->ctype);
	for (int i = 0; i < ps->nhdrs; i++)
		h = ps->cu->slist_append(h, ps->hdrs[i]);
	h = ps->cu->slist_append(h, ctype);
	ps->cu->easy_setopt(c, CURLOPT_HTTPHEADER, h);
	ps->cu->easy_setopt(c, CURLOPT_URL, it->url);
	ps->cu->easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)it->body);
	ps->cu->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)it->len);
	ps->cu->easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	rc = ps->cu->easy_perform(c);
	ps->cu->easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	ps->cu->slist_free_all(h);
	*retry_after = 0;
	if (rc != CURLE_OK) {
		snprintf(why, whylen, "%s: %s", it->what, *errbuf ? errbuf : ps->cu->easy_strerror(rc));
		return rc == CURLE_ABORTED_BY_CALLBACK ? -1 : 1;
	}
	ps->cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return 0;
	curl_off_t ra = 0;
	if (ps->cu->easy_getinfo(c, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
		*retry_after = ra > 300 ? 300 : (long)ra;
	snprintf(why, whylen, "%s: the server answered %ld", it->what, status);
	return status == 429 || (status >= 500 && status != 501) ? 1 : -1;
}

static void *sender(void *arg)
{
	struct push *ps = arg;
	CURL *c = ps->cu->easy_init();
	char why[512];

	if (c) {
		ps->cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
		ps->cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		ps->cu->easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(ps->o.timeout_s * 1000));
		ps->cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(ps->o.timeout_s * 1000));
		ps->cu->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		ps->cu->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress);
		ps->cu->easy_setopt(c, CURLOPT_XFERINFODATA, ps);
		ps->cu->easy_setopt(c, CURLOPT_USERAGENT, "pmubpf");
		ps->cu->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
		if (ps->o.ca)
			ps->cu->easy_setopt(c, CURLOPT_CAINFO, ps->o.ca);
	}
	pthread_mutex_lock(&ps->mu);
	for (struct push_item *it; (it = take(ps)); ) {
		long retry_after = 0;
		int r;

		pthread_mutex_unlock(&ps->mu);
		if (c) {
			r = post(ps, c, it, &retry_after, why, sizeof(why));
		} else {
			r = -1;
			snprintf(why, sizeof(why), "%s: libcurl could not start", it->what);
		}
		pthread_mutex_lock(&ps->mu);
		if (r == 0) {
			ps->st.profiles_sent++;
			ps->st.bytes_sent += it->len;
			ps->failing = false;
			item_free(it);
			continue;
		}
		if (r > 0 && ++it->attempts < PUSH_ATTEMPTS && !ps->abort) {
			double wait = retry_after ? (double)retry_after
				    : ps->o.backoff_s * (double)(1u << (it->attempts - 1));
			ps->st.retries++;
			it->not_before = mono_ns() + (int64_t)(wait * 1e9);
			if (ps->stop && it->not_before > ps->deadline)
				it->not_before = ps->deadline;
			if (!ps->failing) {
				char line[700];
				snprintf(line, sizeof(line), "%s; trying again in %.0f s", why, wait);
				say(ps, line, false);
			}
			ps->failing = true;
			requeue(ps, it);
			continue;
		}
		if (r > 0)
			ps->st.dropped_failed++;
		else if (ps->abort)
			ps->st.dropped_exit++;
		else
			ps->st.dropped_refused++;
		char line[700];
		snprintf(line, sizeof(line), "%s; profile dropped%s", why,
			 r > 0 ? " after " PUSH_ATTEMPTS_S " tries" : "");
		say(ps, line, false);
		item_free(it);
	}
	pthread_mutex_unlock(&ps->mu);
	if (c)
		ps->cu->easy_cleanup(c);
	return NULL;
}

/* --- life ---------------------------------------------------------------- */

struct push *push__new(const struct push_opts *o, char *err, size_t errlen)
{
	struct push *ps;

	if (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8)) {
		errmsg(err, errlen, "bad %s '%s': want the server's address, http://HOST:PORT or https://...",
		       o->kind == PUSH_OTLP ? "--otlp" : "--push", o->url);
		return NULL;
	}
	if (service__check(o->service ? o->service : PUSH_DEFAULT_SERVICE, err, errlen))
		return NULL;
	const struct curl_fns *cu = curl_fns__get(err, errlen);
	if (!cu)
		return NULL;
	if (cu->global_init(CURL_GLOBAL_DEFAULT)) {
		errmsg(err, errlen, "--push: libcurl could not start");
		return NULL;
	}
	if (!(ps = calloc(1, sizeof(*ps)))) {
		errmsg(err, errlen, "out of memory");
		cu->global_cleanup();
		return NULL;
	}
	ps->cu = cu;
	ps->o = *o;
	if (!ps->o.service)
		ps->o.service = PUSH_DEFAULT_SERVICE;
	if (!ps->o.queue_bytes)
		ps->o.queue_bytes = 64u << 20;
	if (ps->o.timeout_s <= 0)
		ps->o.timeout_s = 10;
	if (ps->o.backoff_s <= 0)
		ps->o.backoff_s = 1;
	ps->base = strdup(o->url);
	if (ps->base) /* the base address, without its last '/' */
		for (size_t n = strlen(ps->base); n > 0 && ps->base[n - 1] == '/'; )
			ps->base[--n] = '\0';
	for (int i = 0; i < o->nheaders && i < PUSH_MAX_HEADERS; i++)
		ps->hdrs[ps->nhdrs++] = strdup(o->headers[i]);
	if (o->token && asprintf(&ps->hdrs[ps->nhdrs++], "Authorization: Bearer %s", o->token) < 0)
		ps->hdrs[ps->nhdrs - 1] = NULL;
	ps->hdrs[ps->nhdrs++] = strdup("Expect:"); /* no 100-continue round trip */
	bool ok = ps->base != NULL;
	for (int i = 0; i < ps->nhdrs; i++)
		ok = ok && ps->hdrs[i];
	pthread_mutex_init(&ps->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ps->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (!ok || pthread_create(&ps->thread, NULL, sender, ps)) {
		errmsg(err, errlen, "--push: %s", ok ? "cannot start its thread" : "out of memory");
		for (int i = 0; i < ps->nhdrs; i++)
			free(ps->hdrs[i]);
		free(ps->base);
		free(ps);
		cu->global_cleanup();
		return NULL;
	}
	return ps;
}

void push__stats(struct push *ps, struct push_stats *out)
{
	pthread_mutex_lock(&ps->mu);
	*out = ps->st;
	out->queue_bytes = ps->bytes;
	out->queue_items = ps->items;
	pthread_mutex_unlock(&ps->mu);
}

void push__close(struct push *ps, double wait_s, struct push_stats *final)
{
	struct push_stats st;

	if (!ps)
		return;
	pthread_mutex_lock(&ps->mu);
	ps->stop = true;
	ps->deadline = mono_ns() + (int64_t)(wait_s * 1e9);
	/* Retries wait no longer than the deadline. */
	for (struct push_item *it = ps->head; it; it = it->next)
		if (it->not_before > ps->deadline)
			it->not_before = ps->deadline;
	pthread_cond_signal(&ps->cv);
	pthread_mutex_unlock(&ps->mu);
	/* The deadline also cuts off the POST under way. */
	for (;;) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		if (pthread_timedjoin_np(ps->thread, NULL, &ts) == 0)
			break;
		if (mono_ns() >= ps->deadline)
			__atomic_store_n(&ps->abort, 1, __ATOMIC_RELAXED);
	}
	for (struct push_item *it = ps->head, *next; it; it = next) {
		next = it->next;
		ps->st.dropped_exit++;
		item_free(it);
	}
	ps->head = ps->tail = NULL;
	st = ps->st;
	if (final)
		*final = st;
	uint64_t lost = st.dropped_full + st.dropped_refused + st.dropped_failed +
			st.dropped_exit + st.dropped_encode;
	fprintf(stderr, "pmubpf: push: %llu profiles sent (%llu bytes), %llu retries",
		(unsigned long long)st.profiles_sent, (unsigned long long)st.bytes_sent,
		(unsigned long long)st.retries);
	if (lost)
		fprintf(stderr, "; %llu dropped: %llu from a full queue, %llu refused, %llu after %d tries, %llu unsent at exit, %llu not made (memory)",
			(unsigned long long)lost, (unsigned long long)st.dropped_full,
			(unsigned long long)st.dropped_refused, (unsigned long long)st.dropped_failed,
			PUSH_ATTEMPTS, (unsigned long long)st.dropped_exit,
			(unsigned long long)st.dropped_encode);
	fputc('\n', stderr);
	for (int i = 0; i < ps->nhdrs; i++)
		free(ps->hdrs[i]);
	pthread_mutex_destroy(&ps->mu);
	pthread_cond_destroy(&ps->cv);
	const struct curl_fns *cu = ps->cu;
	free(ps->base);
	free(ps);
	cu->global_cleanup();
}

void push__lost_profile(struct push *ps)
{
	pthread_mutex_lock(&ps->mu);
	ps->st.dropped_encode++;
	pthread_mutex_unlock(&ps->mu);
}

int push__check_template(const char *tmpl, char *err, size_t errlen)
{
	return service__check(tmpl, err, errlen);
}
