/* values.c — see values.h. */
#include "values.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/errmsg.h"
#include "lib/grow.h"

int values__parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int values__parse_list(const char *s, int **out, int *n, int max_value)
{
	char *copy, *tok, *save = NULL;
	int *v = NULL, cnt = 0, cap = 0, ret = 0;

	if (!s || !*s)
		return -EINVAL;
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t lo, hi;
		char *dash = strchr(tok, '-');

		if (dash) {
			*dash = '\0';
			if (values__parse_u64(tok, 0, max_value, &lo) ||
			    values__parse_u64(dash + 1, 0, max_value, &hi) || hi < lo) {
				ret = -EINVAL;
				goto out;
			}
		} else if (values__parse_u64(tok, 0, max_value, &lo)) {
			ret = -EINVAL;
			goto out;
		} else {
			hi = lo;
		}
		/* Bounded as written (fuzz_cli: -p 1-66160063 took seconds
		 * and 256 MiB; 1-2000000000 would overflow the count). */
		if (hi - lo >= (uint64_t)(VALUES_LIST_MAX - cnt)) {
			ret = -EINVAL;
			goto out;
		}
		for (uint64_t i = lo; i <= hi; i++) {
			if ((ret = GROW(v, cap, cnt, 1)))
				goto out;
			v[cnt++] = (int)i;
		}
	}
	if (!cnt) {
		ret = -EINVAL;
		goto out;
	}
	qsort(v, cnt, sizeof(*v), cmp_int);
	int u = 0;
	for (int i = 0; i < cnt; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	*out = v;
	*n = u;
	v = NULL;
out:
	free(v);
	free(copy);
	return ret;
}

int values__parse_seconds(const char *s, double lo, double hi, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || *end || end == s || !isfinite(d) || d <= 0 || d < lo || d > hi)
		return -EINVAL;
	*out = d;
	return 0;
}

int values__kernel_max_rate(uint64_t *v)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	unsigned long long r = 0;
	int ok = f && fscanf(f, "%llu", &r) == 1 && r >= 1;

	if (f)
		fclose(f);
	if (!ok)
		return -EINVAL;
	*v = r;
	return 0;
}

/* "max": the kernel's perf_event_max_sample_rate, as perf reads it. */
static int read_max_rate(uint64_t *v)
{
	uint64_t r;

	if (values__kernel_max_rate(&r))
		return -EINVAL;
	*v = r < MAX_FREQ ? r : MAX_FREQ;
	return 0;
}

int values__parse_freq(const char *opt, const char *s, uint64_t *hz, char *err, size_t errlen)
{
	if (!strcmp(s, "max")) {
		if (read_max_rate(hz))
			return errmsg(err, errlen, "%smax: cannot read /proc/sys/kernel/perf_event_max_sample_rate", opt);
	} else if (values__parse_u64(s, 1, MAX_FREQ, hz)) {
		return errmsg(err, errlen, "bad frequency '%s%.64s': want 1..%d Hz or max", opt, s, MAX_FREQ);
	}
	return 0;
}

int values__parse_listen(const char *s, struct listen_addr *a)
{
	/* Two bytes short of a->host: an IPv6 host is announced as "[%s]".
	 * The longest literal (INET6_ADDRSTRLEN 46 with its NUL) still fits. */
	char host[sizeof(((struct listen_addr *)0)->host) - 2];
	const char *colon, *h = s;
	size_t hl;
	char *end;
	unsigned long port;

	memset(a, 0, sizeof(*a));
	if (*s == '[') { /* [IPv6]:PORT */
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':')
			return -EINVAL;
		h = s + 1;
		hl = rb - h;
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hl = colon - s;
	}
	if (hl >= sizeof(host) || colon[1] < '0' || colon[1] > '9')
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || port > 65535)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (!hl || !strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");

	struct sockaddr_in *in4 = (struct sockaddr_in *)&a->ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;

	if (*s != '[' && inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		a->len = sizeof(*in4);
		snprintf(a->host, sizeof(a->host), "%s", host);
	} else if (*s == '[' && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		a->len = sizeof(*in6);
		snprintf(a->host, sizeof(a->host), "[%s]", host);
	} else {
		return -EINVAL;
	}
	a->port = (uint16_t)port;
	return 0;
}
