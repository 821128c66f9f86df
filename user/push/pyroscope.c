/* pyroscope.c — a window's profile as Pyroscope's /ingest takes it
 * (push.h, push__profile): one POST per service (the template over each
 * sample's labels), each at most PUSH_MAX_SAMPLES samples (more are cut
 * into several POSTs of the same series and window: the server adds
 * them up), with one sample type named for the event, '-' made '_'
 * (Pyroscope refuses '-' in a type: cache_misses), and the string labels
 * only (Pyroscope makes series of them and ignores numbers; pid and tid
 * would only multiply the samples).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "push_int.h"
#include "service.h"

/* Percent-encoding of a query value; '{' and '}' (Pyroscope reads
 * labels from them in `name`) made '_'. */
static void url_value(const char *s, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t at = 0;

	for (; *s && at + 4 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '{' || c == '}')
			c = '_';
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-_.~", c)) {
			out[at++] = (char)c;
		} else {
			out[at++] = '%';
			out[at++] = hex[c >> 4];
			out[at++] = hex[c & 15];
		}
	}
	out[at] = '\0';
}

static int queue_part(struct push *ps, const char *event, const char *service,
		      struct pprof *part, int64_t start_wall, int64_t duration)
{
	struct push_item *it = calloc(1, sizeof(*it));
	char name[3 * SERVICE_MAX + 1];
	int err;

	if (!it)
		return -ENOMEM;
	if ((err = pprof__encode_gz(part, &it->body, &it->len))) {
		free(it);
		return err;
	}
	url_value(service, name, sizeof(name));
	long long from = start_wall / 1000000000LL;
	long long until = (start_wall + duration + 999999999LL) / 1000000000LL;
	if (until <= from)
		until = from + 1;
	if (asprintf(&it->url, "%s/ingest?name=%s&from=%lld&until=%lld&format=pprof&spyName=pmubpf",
		     ps->base, name, from, until) < 0) {
		free(it->body);
		free(it);
		return -ENOMEM;
	}
	it->ctype = "application/octet-stream";
	snprintf(it->what, sizeof(it->what), "%s of %s", event, service);
	push__enqueue(ps, it);
	return 0;
}

int push__pyroscope(struct push *ps, const char *event, const struct pprof *p,
		    int64_t start_wall, int64_t duration)
{
	struct { char **v; size_t n; } s = { 0 };
	int *set_group = NULL;
	int err = service__groups(p, ps->o.service, &s.v, &s.n, &set_group);

	for (size_t i = 0; !err && i < s.n; i++) {
		struct pprof_subset_opts o = {
			.set_group = set_group, .group = (int)i,
			.max_samples = PUSH_MAX_SAMPLES,
			.weight_only = true, .sanitize_names = true, .drop_numeric = true,
		};
		size_t cursor = 0, total = pprof__nsamples(p);

		while (!err && cursor < total) {
			struct pprof *part = pprof__subset(p, &o, &cursor);

			if (!part) {
				err = -errno;
				break;
			}
			if (pprof__nsamples(part))
				err = queue_part(ps, event, s.v[i], part, start_wall, duration);
			pprof__free(part);
		}
	}
	service__free_list(s.v, s.n);
	free(set_group);
	return err;
}
