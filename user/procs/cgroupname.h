/* cgroupname.h — what a cgroup's path says about the processes in it:
 * the container (its 64-hex id, as docker, containerd, cri-o and podman
 * name their cgroups, with the systemd driver or the cgroupfs one), the
 * Kubernetes pod (its uid), the systemd service. Pure string work: the
 * path comes from the kernel (user/procs/cgroups.c), the names go on
 * every sample of those processes as labels (docs/user-guide.md,
 * "Containers and services").
 */
#ifndef PMUBPF_CGROUPNAME_H
#define PMUBPF_CGROUPNAME_H

#include <stddef.h>

#define CGROUP_CONTAINER_ID_LEN 64
#define CGROUP_POD_UID_LEN 36
#define CGROUP_UNIT_MAX 128

struct cgroup_names {
	char container_id[CGROUP_CONTAINER_ID_LEN + 1]; /* "" if none */
	char pod_uid[CGROUP_POD_UID_LEN + 1];           /* "" if none; dashes */
	char unit[CGROUP_UNIT_MAX];                     /* "" if none: NAME.service */
};

/* Fill out from path (a cgroup path: "/system.slice/docker-ID.scope",
 * "/kubepods/burstable/podUID/ID", ...). The deepest component that
 * names a container or a pod wins (a container's own cgroup under its
 * runtime's, nested containers); a conmon's scope (cri-o's and podman's
 * monitor process) names none. */
void cgroupname__parse(const char *path, struct cgroup_names *out);

#endif
