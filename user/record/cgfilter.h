/* cgfilter.h — --cgroup PATH and --container ID: record only the tasks
 * of those cgroups (v2) and of the cgroups under them. Each is resolved
 * to a cgroup v2 directory before anything loads (a container by the id
 * its cgroup's name holds, user/procs/cgroupname.h), opened, and given
 * to BPF's cgroup_targets once the object is loaded (the kernel's
 * bpf_current_task_under_cgroup decides, per sample).
 */
#ifndef PMUBPF_CGFILTER_H
#define PMUBPF_CGFILTER_H

#include <stddef.h>
#include "config/config.h"

struct cgfilter {
	int fds[PMUBPF_MAX_CGROUPS]; /* the cgroups' directories, open */
	int n;
};

/* Resolve and open cfg's --cgroup and --container arguments: 0, or
 * -errno with one line in err (not a cgroup v2 directory; no container,
 * or several, with that id). f->n is 0 without such options. */
int cgfilter__open(const struct config *cfg, struct cgfilter *f, char *err, size_t errlen);
/* Give them to BPF's cgroup_targets (map_fd): 0 or -errno. */
int cgfilter__fill(const struct cgfilter *f, int map_fd);
void cgfilter__close(struct cgfilter *f);

#endif
