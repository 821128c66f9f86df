/* service.h — a push's series: the service name a template makes from a
 * sample's labels. "{container_id|comm}" is the sample's container id,
 * or its process name where it has none; text outside braces is kept
 * ("web/{pod_uid}"); a part with none of its labels is "".
 */
#ifndef PMUBPF_PUSH_SERVICE_H
#define PMUBPF_PUSH_SERVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "pprof/pprof.h"

/* 0, or -1 with one line in err. */
int service__check(const char *tmpl, char *err, size_t errlen);

/* The name for labels l[0..n) into out: 0, -ENOSPC (too long) or
 * -EINVAL (a template service__check refuses). */
int service__name(const char *tmpl, const struct pprof_label *l, size_t n, char *out,
		  size_t len);

#define SERVICE_MAX 256
#define SERVICE_UNKNOWN "unknown_service" /* a template that names nothing */

/* service__name, SERVICE_UNKNOWN where it is "" or too long. */
int service__of(const char *tmpl, const struct pprof_label *l, size_t n, char *out, size_t len);

/* The distinct services of p's label sets (service__of), malloc'd (free
 * with service__free_list), and each set's index among them
 * (*set_group, pprof__group_sets: free()). Each set's name is made once.
 * 0 or -ENOMEM. */
int service__groups(const struct pprof *p, const char *tmpl, char ***names, size_t *n,
		    int **set_group);
void service__free_list(char **names, size_t n);

#endif
