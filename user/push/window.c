/* window.c — a window's profile to the cut its server takes (push.h,
 * push__profile): Pyroscope's per-service pprofs (pyroscope.c) or one
 * OTLP request (otlp.c), both queued on push.c's queue.
 */
#include "push_int.h"

int push__profile(struct push *ps, const char *event, const struct pprof *p,
		  int64_t start_wall, int64_t duration)
{
	int err = ps->o.kind == PUSH_OTLP ? push__otlp(ps, event, p)
					  : push__pyroscope(ps, event, p, start_wall, duration);

	if (err)
		push__lost_profile(ps);
	return err;
}
