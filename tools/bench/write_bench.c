/* write_bench.c — time and memory to turn a recording's aggregated samples
 * into a gzipped pprof file, on SYNTHETIC data.
 *
 *   write_bench [--samples N] [--stacks N] [--raw] [--seed N] -o PATH
 *
 * Drives the same calls report.c makes at the end of a recording (one
 * pprof__add_sample per counts entry, its frames symbolized through
 * symb__kernel / symb__user, labels pid, tid and comm), then pprof__write.
 * The data are made up, the symbol tables are real:
 *   - stacks: --stacks distinct ones (default 100000), each with 4-32 user
 *     frames and, for half of them, 1-16 kernel frames; every frame is
 *     drawn from a pool of 50000 user and 20000 kernel addresses with a
 *     power-law skew (a few hot frames, a long tail), as in real profiles
 *     (the constants below);
 *   - user addresses lie in this process's own executable mappings
 *     (write_bench, libc, libelf, libdw, libbpf, libz, libprotobuf-c, ...)
 *     and are symbolized against those files' symbol tables through a
 *     snapshot of this process (procs__get), as pmubpf does for a target;
 *   - kernel addresses lie in [_stext, _etext) and are symbolized with
 *     /proc/kallsyms;
 *   - --samples (default 1000000) are spread over the stacks with a
 *     power-law skew, every stack getting at least one; each entry has one
 *     of 8 pids and 64 tids.
 * --raw skips symbolization (locations keep only their address): the
 * difference is what naming the frames costs.
 *
 * Prints one JSON object: the phases' times (ms), the process's resident
 * memory before building (input data, kernel symbols, process snapshot)
 * and at its peak (kB), the file size and the profile's location count.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbols/elfsym.h"
#include "symbols/ksyms.h"
#include "pprof/pprof.h"
#include "procs/procs.h"
#include "report/symbolize.h"

#define USER_POOL 50000
#define KERNEL_POOL 20000
#define MIN_USER_DEPTH 4
#define MAX_USER_DEPTH 32
#define MAX_KERNEL_DEPTH 16

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void) /* xorshift64* */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static double rnd01(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

/* Index in [0, n) with a power-law skew: u^3 puts ~46% of the draws in
 * the first tenth. */
static size_t skewed(size_t n)
{
	double u = rnd01();
	size_t i = (size_t)(u * u * u * (double)n);

	return i < n ? i : n - 1;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* CPU time of this process (ms): the phases' cost without the time other
 * processes on a busy machine took from it. */
static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* A /proc/self/status field in kB: VmRSS (now) or VmHWM (peak). Not
 * getrusage's ru_maxrss: that one starts from the parent's peak. */
static long status_kb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	size_t n = strlen(field);
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':' && sscanf(line + n + 1, "%ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* Executable file-backed mappings of this process. */
struct range {
	uint64_t start, end;
};

static size_t exec_ranges(struct range *out, size_t max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096], perms[8], path[4096];
	size_t n = 0;

	while (f && n < max && fgets(line, sizeof(line), f)) {
		unsigned long long s, e;

		path[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %4095s", &s, &e, perms, path) < 3)
			continue;
		if (perms[2] == 'x' && path[0] == '/')
			out[n++] = (struct range){ s, e };
	}
	if (f)
		fclose(f);
	return n;
}

/* --raw: the mapping of a user address, without symbolizing. */
static uint64_t range_mapping(struct pprof *p, const struct range *r, size_t n, uint64_t ip)
{
	for (size_t i = 0; i < n; i++)
		if (ip >= r[i].start && ip < r[i].end)
			return pprof__add_mapping(p, r[i].start, r[i].end, 0, "[user]", NULL, false);
	return 0;
}

/* The kernel's text range from kallsyms. */
static int kernel_text(uint64_t *lo, uint64_t *hi)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	unsigned long long a;

	*lo = *hi = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		if (!strcmp(name, "_stext"))
			*lo = a;
		else if (!strcmp(name, "_etext"))
			*hi = a;
	}
	if (f)
		fclose(f);
	return *lo && *hi > *lo ? 0 : -1;
}

int main(int argc, char **argv)
{
	size_t nsamples = 1000000, nstacks = 100000;
	const char *out = NULL;
	int raw = 0, c;
	static const struct option opts[] = {
		{ "samples", required_argument, NULL, 'n' },
		{ "stacks", required_argument, NULL, 's' },
		{ "raw", no_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 'S' },
		{ "output", required_argument, NULL, 'o' },
		{ 0 },
	};

	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'n': nsamples = strtoull(optarg, NULL, 0); break;
		case 's': nstacks = strtoull(optarg, NULL, 0); break;
		case 'r': raw = 1; break;
		case 'S': rng_state += strtoull(optarg, NULL, 0) * 0xbf58476d1ce4e5b9ULL; break;
		case 'o': out = optarg; break;
		default: goto usage;
		}
	}
	if (!out || nstacks == 0 || nsamples < nstacks) {
usage:
		fprintf(stderr, "usage: write_bench [--samples N] [--stacks N] [--raw] [--seed N] -o PATH\n");
		return 2;
	}

	/* --- setup, untimed: symbol sources and synthetic input --- */
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct ksyms *ks = raw ? NULL : ksyms__load("/proc/kallsyms");
	struct symcache *sc = symcache__new();
	struct procs *procs = sc ? procs__new(sc, -1, -1) : NULL;
	struct proc *pr = procs ? procs__get(procs, (uint32_t)getpid(), 1) : NULL;
	struct range ranges[256];
	size_t nranges = exec_ranges(ranges, 256);
	uint64_t klo, khi, total_exec = 0;

	if ((!raw && !ks) || !pr || !nranges || kernel_text(&klo, &khi)) {
		fprintf(stderr, "write_bench: setup failed (needs root for /proc/kallsyms): %s\n",
			strerror(errno));
		return 1;
	}
	double setup_ms = ms_since(&t0);

	uint64_t *upool = malloc(USER_POOL * sizeof(*upool));
	uint64_t *kpool = malloc(KERNEL_POOL * sizeof(*kpool));
	for (size_t i = 0; i < nranges; i++)
		total_exec += ranges[i].end - ranges[i].start;
	for (size_t i = 0; i < USER_POOL; i++) {
		uint64_t off = rnd() % total_exec;
		size_t r = 0;

		while (off >= ranges[r].end - ranges[r].start)
			off -= ranges[r].end - ranges[r].start, r++;
		upool[i] = ranges[r].start + off;
	}
	for (size_t i = 0; i < KERNEL_POOL; i++)
		kpool[i] = klo + rnd() % (khi - klo);

	/* Stacks: frames of stack i at frames[first[i] .. first[i+1]), the
	 * first nk[i] of them kernel (leaf first), then user. */
	size_t *first = malloc((nstacks + 1) * sizeof(*first));
	uint8_t *nk = malloc(nstacks);
	int64_t *counts = malloc(nstacks * sizeof(*counts));
	size_t cap = nstacks * 24, used = 0;
	uint64_t *frames = malloc(cap * sizeof(*frames));
	if (!upool || !kpool || !first || !nk || !counts || !frames)
		return 1;
	for (size_t i = 0; i < nstacks; i++) {
		size_t k = (rnd() & 1) ? 1 + rnd() % MAX_KERNEL_DEPTH : 0;
		size_t u = MIN_USER_DEPTH + rnd() % (MAX_USER_DEPTH - MIN_USER_DEPTH + 1);

		if (used + k + u > cap) {
			cap *= 2;
			if (!(frames = realloc(frames, cap * sizeof(*frames))))
				return 1;
		}
		first[i] = used;
		nk[i] = (uint8_t)k;
		for (size_t j = 0; j < k; j++)
			frames[used++] = kpool[skewed(KERNEL_POOL)];
		for (size_t j = 0; j < u; j++)
			frames[used++] = upool[skewed(USER_POOL)];
		counts[i] = 1;
	}
	first[nstacks] = used;
	for (size_t i = nstacks; i < nsamples; i++)
		counts[skewed(nstacks)]++;
	long rss_before = status_kb("VmRSS");

	/* --- build: what report.c's write_event does per counts entry --- */
	struct pprof *p = pprof__new("cpu", "nanoseconds", 1001001);
	struct symb_stats st = { 0 };
	uint64_t locs[64], maxloc = 0;
	static const char *comms[8] = { "api", "db", "worker", "cache", "proxy", "batch", "cron", "shell" };

	if (!p)
		return 1;
	double c0 = cpu_ms();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint64_t kmap = raw ? pprof__add_mapping(p, klo, UINT64_MAX, 0, "[kernel.kallsyms]", NULL, false) : 0;
	pprof__set_time(p, (int64_t)time(NULL) * 1000000000LL, 10000000000LL);
	pprof__add_comment(p, "write_bench: synthetic profile, %zu samples over %zu stacks", nsamples, nstacks);
	for (size_t i = 0; i < nstacks; i++) {
		size_t n = 0;

		for (size_t j = first[i]; j < first[i + 1]; j++) {
			bool kernel = j - first[i] < nk[i];
			bool leaf = j == first[i] || j - first[i] == nk[i];
			uint64_t ip = frames[j], l;

			if (raw) {
				uint64_t mid = kernel ? kmap : range_mapping(p, ranges, nranges, ip);

				l = pprof__find_location(p, mid, ip);
				if (!l)
					l = pprof__add_location(p, mid, ip, NULL, 0);
			} else {
				l = kernel ? symb__kernel(p, ks, ip, leaf, &st)
					   : symb__user(p, pr, ip, leaf, &st);
			}
			if (!l) {
				fprintf(stderr, "write_bench: out of memory\n");
				return 1;
			}
			locs[n++] = l;
			if (l > maxloc)
				maxloc = l;
		}
		size_t who = (size_t)(rnd() % 64);
		struct pprof_label labels[3] = {
			{ .key = "pid", .num = 1000 + (int64_t)(who % 8) },
			{ .key = "tid", .num = 1000 + (int64_t)who },
			{ .key = "comm", .str = comms[who % 8] },
		};
		if (pprof__add_sample(p, locs, n, counts[i], counts[i] * 1001001, labels, 3)) {
			fprintf(stderr, "write_bench: out of memory\n");
			return 1;
		}
	}
	double build_ms = ms_since(&t0), build_cpu = cpu_ms() - c0;
	long rss_built = status_kb("VmRSS"), peak_built = status_kb("VmHWM");

	c0 = cpu_ms();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int err = pprof__write(p, out);
	double write_ms = ms_since(&t0), write_cpu = cpu_ms() - c0;
	if (err) {
		fprintf(stderr, "write_bench: writing %s: %s\n", out, strerror(-err));
		return 1;
	}
	struct stat sb;
	stat(out, &sb);
	printf("{\"mode\": \"%s\", \"samples\": %zu, \"stacks\": %zu, \"frames\": %zu, "
	       "\"user_pool\": %d, \"kernel_pool\": %d, \"user_depth\": [%d, %d], \"kernel_depth\": [1, %d], "
	       "\"locations\": %" PRIu64 ", \"user_unknown\": %" PRIu64 ", \"kernel_unknown\": %" PRIu64 ", "
	       "\"setup_ms\": %.1f, \"build_ms\": %.1f, \"write_ms\": %.1f, "
	       "\"build_cpu_ms\": %.1f, \"write_cpu_ms\": %.1f, "
	       "\"rss_before_kb\": %ld, \"rss_built_kb\": %ld, \"peak_built_kb\": %ld, \"peak_rss_kb\": %ld, \"file_bytes\": %lld}\n",
	       raw ? "raw" : "symbolized", nsamples, nstacks, used,
	       USER_POOL, KERNEL_POOL, MIN_USER_DEPTH, MAX_USER_DEPTH, MAX_KERNEL_DEPTH, maxloc,
	       st.user_unknown, st.kernel_unknown, setup_ms, build_ms, write_ms, build_cpu, write_cpu,
	       rss_before, rss_built, peak_built, status_kb("VmHWM"), (long long)sb.st_size);
	pprof__free(p);
	procs__free(procs);
	symcache__free(sc);
	ksyms__free(ks);
	free(upool);
	free(kpool);
	free(first);
	free(nk);
	free(counts);
	free(frames);
	return 0;
}
