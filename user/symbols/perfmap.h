/* perfmap.h — JIT symbol maps in perf's /tmp/perf-PID.map format.
 *
 * JIT compilers (V8, the JVM with an agent, LuaJIT, ...) write one line
 * per generated function into /tmp/perf-PID.map:
 *   START SIZE name of the function      (START and SIZE in hex)
 * Frames in anonymous executable memory are named from it. The file is
 * read through /proc/PID/root (it lives in the process's mount
 * namespace; PID is the process's own, namespaced pid) and, like perf,
 * only if it is a regular file owned by root or by the process's user.
 * Later lines win over earlier ones for the same address (code reused).
 */
#ifndef PMUBPF_PERFMAP_H
#define PMUBPF_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perfmap;

struct perfmap_sym {
	uint64_t start, size;
	const char *name;
};

#define PERFMAP_MAX_BYTES (64u << 20) /* file size read */
#define PERFMAP_MAX_SYMS  (1u << 21)

/* Parse a map's text (need not be NUL-terminated). Malformed lines are
 * skipped. Returns 0 or -errno (ENOMEM); *out is a (maybe empty) table. */
int perfmap__parse(const char *text, size_t len, struct perfmap **out);
/* The entry covering addr, or NULL. */
const struct perfmap_sym *perfmap__lookup(const struct perfmap *m, uint64_t addr);
size_t perfmap__count(const struct perfmap *m);
void perfmap__free(struct perfmap *m);

/* Where and whose a process's map is (taken at snapshot). */
struct perfmap_src {
	uint32_t tgid;      /* the id its /proc files are read through: its
	                     * pid, or a thread's where the leader left */
	uint32_t nspid;     /* pid inside the process's pid namespace */
	uid_t uid, euid;    /* the process's real and effective uid */
	bool same_mntns;    /* /tmp is ours: read it directly once it exits */
	bool known;         /* the fields above were read */
	bool gone;          /* the process has exited: stop polling */
	uint64_t size;      /* the file as last read, to skip unchanged ones */
	int64_t mtime_ns;
};

/* Fill src from /proc/ID/status (ID: the process's, or one of its
 * threads'; NStgid names the map) and the mount namespace. 0 or -errno. */
int perfmap__source(uint32_t tgid, bool other_ns, struct perfmap_src *src);
/* Read the process's map (through /proc/TGID/root, else /tmp when the
 * process is gone and shared our mount namespace). 0, -ENOENT if none,
 * -EPERM if owned by another user, -EALREADY if if_changed and the file
 * has the size and mtime of the last read, -errno. */
int perfmap__read(struct perfmap_src *src, bool if_changed, struct perfmap **out);

#endif
