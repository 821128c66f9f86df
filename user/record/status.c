/* status.c — see status.h. */
#include <bpf/bpf.h>
#include <stdlib.h>
#include <unistd.h>
#include "pmubpf_abi.h"
#include "status.h"

#define REFRESH_NS 250000000LL

struct status {
	FILE *out;
	int totals_fd, drops_fd, nevents, nr_cpus;
	int64_t last;
	struct pmubpf_drop_val *dvals; /* one per CPU: a per-CPU array slot */
};

struct status *status__new(FILE *out, int totals_fd, int drops_fd, int nevents, int nr_cpus)
{
	struct status *s;

	if (!isatty(fileno(out)) || nr_cpus <= 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->dvals = calloc((size_t)nr_cpus, sizeof(*s->dvals));
	if (!s->dvals) {
		status__end(s);
		return NULL;
	}
	*s = (struct status){ out, totals_fd, drops_fd, nevents, nr_cpus, 0, s->dvals };
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

/* Sum over CPUs of the count in a per-CPU array slot of pmubpf_drop_val. */
static uint64_t sum_slot(struct status *s, int fd, uint32_t key)
{
	uint64_t t = 0;

	if (bpf_map_lookup_elem(fd, &key, s->dvals))
		return 0;
	for (int c = 0; c < s->nr_cpus; c++)
		t += s->dvals[c].count;
	return t;
}

/* A drop reason, every event, both windows. */
static uint64_t sum_drops(struct status *s, uint32_t reason)
{
	uint64_t t = 0;

	for (uint32_t w = 0; w < 2; w++)
		for (int e = 0; e < s->nevents; e++)
			t += sum_slot(s, s->drops_fd, PMUBPF_DROP_INDEX(w, (uint32_t)e, reason));
	return t;
}

void status__tick(struct status *s, int64_t t0, int64_t now)
{
	uint64_t samples = 0;
	char line[160];

	if (!s || now - s->last < REFRESH_NS)
		return;
	s->last = now;
	/* totals: every sample taken, idle ones (left out, not lost) too */
	for (int e = 0; e < s->nevents; e++)
		samples += sum_slot(s, s->totals_fd, (uint32_t)e);
	samples -= sum_drops(s, PMUBPF_DROP_IDLE);
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
	free(s->dvals);
	free(s);
}
