/* status.c — see status.h. */
#include <bpf/bpf.h>
#include <stdlib.h>
#include <unistd.h>
#include "pmubpf_abi.h"
#include "status.h"

#define REFRESH_NS 250000000LL

struct status {
	FILE *out;
	int tally_fd, drops_fd, nevents, nr_cpus;
	int64_t last;
	uint64_t *vals; /* one per CPU, for reading a per-CPU array slot */
	struct pmubpf_drop_val *dvals;
};

struct status *status__new(FILE *out, int tally_fd, int drops_fd, int nevents, int nr_cpus)
{
	struct status *s;

	if (!isatty(fileno(out)) || nr_cpus <= 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->vals = calloc((size_t)nr_cpus, sizeof(*s->vals));
	s->dvals = calloc((size_t)nr_cpus, sizeof(*s->dvals));
	if (!s->vals || !s->dvals) {
		status__end(s);
		return NULL;
	}
	*s = (struct status){ out, tally_fd, drops_fd, nevents, nr_cpus, 0, s->vals, s->dvals };
	return s;
}

void status__format(char *buf, size_t len, int64_t elapsed, uint64_t samples,
		    uint64_t lost, uint64_t stacks_lost)
{
	int n = snprintf(buf, len, "pmubpf: %.1f s, %llu samples, %llu lost", (double)elapsed / 1e9,
			 (unsigned long long)samples, (unsigned long long)lost);

	if (stacks_lost && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", %llu stacks lost", (unsigned long long)stacks_lost);
}

/* Sum over CPUs of a per-CPU array slot. */
static uint64_t sum_tally(struct status *s, uint32_t key)
{
	uint64_t t = 0;

	if (bpf_map_lookup_elem(s->tally_fd, &key, s->vals))
		return 0;
	for (int c = 0; c < s->nr_cpus; c++)
		t += s->vals[c];
	return t;
}

static uint64_t sum_drops(struct status *s, uint32_t reason)
{
	uint64_t t = 0;

	for (int e = 0; e < s->nevents; e++) {
		uint32_t key = (uint32_t)e * PMUBPF_DROP__MAX + reason;

		if (bpf_map_lookup_elem(s->drops_fd, &key, s->dvals))
			continue;
		for (int c = 0; c < s->nr_cpus; c++)
			t += s->dvals[c].count;
	}
	return t;
}

void status__tick(struct status *s, int64_t t0, int64_t now)
{
	uint64_t samples = 0;
	char line[160];

	if (!s || now - s->last < REFRESH_NS)
		return;
	s->last = now;
	for (int e = 0; e < s->nevents; e++)
		samples += sum_tally(s, (uint32_t)e);
	status__format(line, sizeof(line), now - t0, samples,
		       sum_drops(s, PMUBPF_DROP_COUNTS_FULL) + sum_drops(s, PMUBPF_DROP_GROUP_READ),
		       sum_drops(s, PMUBPF_DROP_USTACK) + sum_drops(s, PMUBPF_DROP_KSTACK));
	/* \r back to column 0, ESC[K erases what a longer line left. */
	fprintf(s->out, "\r%s\033[K", line);
	fflush(s->out);
}

void status__end(struct status *s)
{
	if (!s)
		return;
	if (s->last) {
		fputs("\r\033[K", s->out);
		fflush(s->out);
	}
	free(s->vals);
	free(s->dvals);
	free(s);
}
