/* otel_work — a C program publishing OpenTelemetry thread context (OTEP
 * 4947) with its process context (OTEP 4719), for pmubpf's tests (issue
 * 12). Each round: phase=a for 2 ms, phase=b for 6 ms, phase=c for 2 ms
 * of this thread's CPU time (the truth: its task-clock, ../taskclock.h), each
 * under its own record:
 *   a: a span (trace and span ids) and http.route twice, "/stale" then
 *      "/a": the last entry of a key wins (the OTEP's rule); user.id;
 *   b: another span, http.route=/b; once the process context's key map
 *      has grown (0.3 s in: the updating protocol) also late=yes, an index
 *      the first map did not have, so the reader must read it again;
 *   c: no span (zero ids), http.route=/c: attributes only.
 * Records are switched by the TLS pointer, or with "inplace" one record
 * per thread is rewritten under its valid flag (the OTEP's two writer
 * protocols). With "union" the thread also has a set of our own header
 * (http.route=ours, src=header): ours must win the clash.
 *
 * With "requests", a server labelling each request with its span: for
 * SECONDS of this thread's CPU time, a new span every ~25 us (trace and
 * span ids counting up, http.route=/req), the one record rewritten in
 * place: ~40000 distinct contexts a second (issue 40: label sets kept
 * per window); prints "requests N". OTEL_WORK_BURN_NS: the work per
 * request in ns of CPU instead of 25000 (tools/soak.sh's labels load).
 *
 * OTEL_TEST_HOSTILE=valid|huge|unmapped|version|schema|badkey makes a
 * writer pmubpf must refuse and count: valid flag 2, attrs-data-size
 * 60000, the TLS word pointing at an unmapped page, process context
 * version 3, an unknown schema, the phase under a key index the map
 * lacks.
 *
 * Usage: [OTEL_WORK_DELAY=SECONDS] otel_work SECONDS [inplace|union|requests];
 * prints "truth phase=X NS".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <pmubpf/labels.h>
#include "writer.h"
#include "../taskclock.h"

static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile unsigned long sink;

__attribute__((noinline)) static void burn(long long ns)
{
	long long end = cpu_ns() + ns;
	unsigned long x = sink;

	while (cpu_ns() < end)
		for (int i = 0; i < 200; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

/* A record no reader may take: valid flag 2, or a size past any record. */
static void corrupt(struct otel_record *rec, const char *hostile)
{
	if (hostile && !strcmp(hostile, "valid"))
		rec->valid = 2;
	if (hostile && !strcmp(hostile, "huge"))
		rec->attrs_data_size = 60000;
}

struct phase {
	const char *name, *trace, *span;
	long long ns;
	int n;
	uint8_t idx[5];
	const char *vals[5];
};

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	const char *mode = argc > 2 ? argv[2] : "";
	const char *hostile = getenv("OTEL_TEST_HOSTILE");
	static const char *const keys[] = { "http.route", "phase", "user.id", "late" };
	int bad_key = hostile && !strcmp(hostile, "badkey");
	struct phase ph[3] = {
		{ "a", "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", 2000000, 4,
		  { 0, 1, 0, 2 }, { "/stale", "a", "/a", "alice" } },
		{ "b", "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", 6000000, 2,
		  { 1, 0 }, { "b", "/b" } },
		{ "c", NULL, NULL, 2000000, 2, { 1, 0 }, { "c", "/c" } },
	};
	static struct otel_record rec[3], mine;
	long long truth[3] = { 0 }, start, stop;
	int inplace = !strcmp(mode, "inplace"), grown = 0;

	if (bad_key)
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < ph[i].n; j++)
				if (ph[i].idx[j] == 1)
					ph[i].idx[j] = 9; /* phase, under an index the map lacks */
	if (otelw_publish(hostile && !strcmp(hostile, "version") ? 3 : 2,
			  hostile && !strcmp(hostile, "schema") ? "go_pprof_labels_v1" : "tlsdesc_v1_dev",
			  keys, 3)) {
		perror("otel_work: publishing the process context");
		return 1;
	}
	for (int i = 0; i < 3; i++) {
		otelw_fill(&rec[i], ph[i].trace, ph[i].span, ph[i].n, ph[i].idx, ph[i].vals);
		corrupt(&rec[i], hostile);
	}
	void *hole = NULL;
	if (hostile && !strcmp(hostile, "unmapped")) {
		hole = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(hole, 4096);
	}
	if (!strcmp(mode, "union"))
		pmubpf_labels_set(pmubpf_labels_new(NULL, "http.route", "ours", "src", "header", NULL));
	if (inplace)
		otelw_attach(&mine);
	/* OTEL_WORK_DELAY: seconds asleep before the work (pmubpf -a reads
	 * every running process first: the phases start after that). */
	if (getenv("OTEL_WORK_DELAY")) {
		double d = atof(getenv("OTEL_WORK_DELAY"));
		struct timespec ts = { (time_t)d, (long)((d - (time_t)d) * 1e9) };
		nanosleep(&ts, NULL);
	}
	if (!strcmp(mode, "requests")) {
		static struct otel_record req;
		static const uint8_t idx[1] = { 0 };
		const char *vals[1] = { "/req" };
		char trace[33], span[17];
		long long end = thread_clock_ns() + (long long)(secs * 1e9), n = 0;
		long burn_ns = getenv("OTEL_WORK_BURN_NS") ? atol(getenv("OTEL_WORK_BURN_NS")) : 25000;

		otelw_attach(&req);
		while (thread_clock_ns() < end) {
			n++;
			snprintf(trace, sizeof(trace), "%016llx%016llx", (unsigned long long)n * 0x9e3779b97f4a7c15ULL,
				 (unsigned long long)n);
			snprintf(span, sizeof(span), "%016llx", (unsigned long long)n);
			otelw_rewrite(&req, trace, span, 1, idx, vals);
			burn(burn_ns);
		}
		otelw_attach(NULL);
		printf("requests %lld\n", n);
		return 0;
	}
	start = mono_ns();
	stop = start + (long long)(secs * 1e9);
	for (;;) {
		long long now = mono_ns();

		if (now >= stop)
			break;
		if (!grown && now - start > 300000000LL && !bad_key) {
			/* The key map grows (append-only); b's record names the
			 * new key from now on. */
			otelw_update("tlsdesc_v1_dev", keys, 4);
			ph[1].idx[2] = 3;
			ph[1].vals[2] = "yes";
			ph[1].n = 3;
			otelw_fill(&rec[1], ph[1].trace, ph[1].span, ph[1].n, ph[1].idx, ph[1].vals);
			corrupt(&rec[1], hostile);
			grown = 1;
		}
		for (int i = 0; i < 3; i++) {
			if (hole)
				otelw_set_raw(hole);
			else if (inplace)
				otelw_rewrite(&mine, ph[i].trace, ph[i].span, ph[i].n, ph[i].idx, ph[i].vals);
			else
				otelw_attach(&rec[i]);
			long long t0 = thread_clock_ns();
			burn(ph[i].ns);
			truth[i] += thread_clock_ns() - t0;
		}
	}
	otelw_attach(NULL);
	for (int i = 0; i < 3; i++)
		printf("truth phase=%s %lld\n", ph[i].name, truth[i]);
	return 0;
}
