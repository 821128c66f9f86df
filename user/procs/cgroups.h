/* cgroups.h — a sampled process's cgroup, named: by BPF's id (the
 * cgroup v2 id of the task at its first sample, bpf_get_current_cgroup_id)
 * resolved through a file handle on the v2 mount, or, where v2 says
 * nothing (a host whose controllers are on the v1 hierarchies: every
 * process in v2's root), from /proc/PID/cgroup while the process lives.
 * Each cgroup is resolved once and kept while a process record uses it;
 * its path gives the container, pod and service (cgroupname.h).
 */
#ifndef PMUBPF_CGROUPS_H
#define PMUBPF_CGROUPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cgroupname.h"

struct cgroup_info {
	char *path;                /* "/system.slice/docker-ID.scope"; "/" the root */
	struct cgroup_names names;
	uint64_t id;               /* the v2 id; 0: a path read from /proc (v1) */
	unsigned refs;
};

struct cgroups_stats {
	uint64_t resolved;   /* cgroups named (each once while in use) */
	uint64_t unresolved; /* ids not named: the cgroup gone first, or no v2 mount */
	uint64_t proc_reads; /* /proc/PID/cgroup reads (v2 said nothing) */
};

struct cgroups;

/* The first cgroup2 mount point into v2 (len bytes), and whether v1
 * hierarchies are mounted (v1 may be NULL): 0, or -ENOENT (no cgroup2
 * mount: v2 ""). */
int cgroups__mounts(char *v2, size_t len, bool *v1);

/* Finds the v2 mount (and whether v1 hierarchies are mounted) from
 * /proc/self/mountinfo; NULL on ENOMEM only (without a v2 mount no id
 * resolves: cgroups__of_pid still names v1 paths). */
struct cgroups *cgroups__new(void);
void cgroups__free(struct cgroups *cg);
/* Does id tell nothing: 0, or v2's root where v1 hierarchies hold the
 * controllers (the runtimes put containers there)? Then ask by pid. */
bool cgroups__id_says_nothing(const struct cgroups *cg, uint64_t id);
/* The cgroup of v2 id `id`, a reference taken; NULL if it says nothing
 * or cannot be named (gone already: counted). */
struct cgroup_info *cgroups__of_id(struct cgroups *cg, uint64_t id);
/* The cgroup /proc/PID/cgroup names (a container's, if a line names one;
 * else systemd's hierarchy's, else v2's), a reference taken; NULL if
 * unreadable (gone). */
struct cgroup_info *cgroups__of_pid(struct cgroups *cg, pid_t pid);
/* Parse /proc/PID/cgroup's text (for cgroups__of_pid and the tests):
 * the path chosen, as cgroups__of_pid chooses, into out. */
void cgroups__pick_path(const char *text, char *out, size_t len);
/* A reference given back; the last frees it. */
void cgroups__put(struct cgroups *cg, struct cgroup_info *ci);
const struct cgroups_stats *cgroups__stats(const struct cgroups *cg);

#endif
