/* otlp.c — a window's profile as an OpenTelemetry collector takes it
 * (push.h, --otlp URL): one OTLP profiles export request per event and
 * window, POST URL/v1development/profiles as application/x-protobuf
 * (opentelemetry-proto v1.11.0; pprof/pprof_otlp.c encodes it), one
 * resource per service (service.name from the --push-service template).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "push_int.h"
#include "service.h"

#define OTLP_PATH "/v1development/profiles"

int push__otlp(struct push *ps, const char *event, const struct pprof *p)
{
	struct { char **v; size_t n; } g = { 0 };
	int *set_group = NULL;
	struct push_item *it;
	int err;

	if (!pprof__nsamples(p)) /* a window without samples says nothing */
		return 0;
	if ((err = service__groups(p, ps->o.service, &g.v, &g.n, &set_group)))
		return err;
	if (!(it = calloc(1, sizeof(*it)))) {
		service__free_list(g.v, g.n);
		free(set_group);
		return -ENOMEM;
	}
	struct pprof_otlp_opts o = {
		.groups = (const char *const *)g.v, .ngroups = g.n, .set_group = set_group,
		.scope_name = "pmubpf", .scope_version = PUSH_VERSION,
		.sanitize_names = true,
	};
	err = pprof__encode_otlp(p, &o, &it->body, &it->len);
	service__free_list(g.v, g.n);
	free(set_group);
	if (!err && asprintf(&it->url, "%s" OTLP_PATH, ps->base) < 0)
		err = -ENOMEM;
	if (err) {
		free(it->body);
		free(it);
		return err;
	}
	it->ctype = "application/x-protobuf";
	snprintf(it->what, sizeof(it->what), "%s to the collector", event);
	push__enqueue(ps, it);
	return 0;
}
