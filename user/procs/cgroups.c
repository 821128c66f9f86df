/* cgroups.c — cgroups named by id or by pid, kept while used (cgroups.h).
 *
 * An id is named without a walk of the hierarchy: the v2 id is the
 * cgroup's kernfs node id, and a file handle of type FILEID_KERNFS
 * (0xfe) holding it opens that directory on the v2 mount
 * (open_by_handle_at: CAP_DAC_READ_SEARCH, which root has); its path
 * is the link of the descriptor, less the mount's. A cgroup removed
 * before its first process was noticed is not named (ESTALE): counted.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/hashtab.h"
#include "cgroups.h"

#define FILEID_KERNFS 0xfe

struct cgroups {
	int mnt_fd;           /* the v2 mount's root, -1 if none */
	char mnt[PATH_MAX];   /* its path, as links of descriptors show it */
	uint64_t root_id;     /* its root cgroup's id */
	bool v1;              /* v1 hierarchies mounted */
	struct hashtab *by_id, *by_path;
	struct cgroups_stats st;
};

static bool id_eq(const void *key, uint64_t v, void *ctx)
{
	(void)ctx;
	return ((const struct cgroup_info *)(uintptr_t)v)->id == *(const uint64_t *)key;
}

static bool path_eq(const void *key, uint64_t v, void *ctx)
{
	(void)ctx;
	return !strcmp(((const struct cgroup_info *)(uintptr_t)v)->path, key);
}

/* mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... - FSTYPE SRC SUPER" */
int cgroups__mounts(char *v2, size_t len, bool *v1)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	v2[0] = '\0';
	if (v1)
		*v1 = false;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *sep = strstr(line, " - ");
		char fstype[32];

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep + 3, "%31s", fstype) != 1)
			continue;
		if (!strcmp(fstype, "cgroup") && v1)
			*v1 = true;
		else if (!strcmp(fstype, "cgroup2") && !v2[0] && !strchr(mnt, '\\')) /* no escapes */
			snprintf(v2, len, "%s", mnt);
	}
	fclose(f);
	return v2[0] ? 0 : -ENOENT;
}

static void find_mounts(struct cgroups *cg)
{
	struct stat st;

	if (cgroups__mounts(cg->mnt, sizeof(cg->mnt), &cg->v1))
		return;
	cg->mnt_fd = open(cg->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->mnt_fd >= 0 && !fstat(cg->mnt_fd, &st)) {
		cg->root_id = st.st_ino;
	} else if (cg->mnt_fd >= 0) {
		close(cg->mnt_fd);
		cg->mnt_fd = -1;
	}
}

struct cgroups *cgroups__new(void)
{
	struct cgroups *cg = calloc(1, sizeof(*cg));

	if (!cg)
		return NULL;
	cg->mnt_fd = -1;
	cg->by_id = hashtab__new(id_eq, cg);
	cg->by_path = hashtab__new(path_eq, cg);
	if (!cg->by_id || !cg->by_path) {
		cgroups__free(cg);
		return NULL;
	}
	find_mounts(cg);
	return cg;
}

void cgroups__free(struct cgroups *cg)
{
	if (!cg)
		return;
	if (cg->mnt_fd >= 0)
		close(cg->mnt_fd);
	/* Entries still referenced belong to process records freed first
	 * (procs__free): none is left by then. */
	hashtab__free(cg->by_id);
	hashtab__free(cg->by_path);
	free(cg);
}

bool cgroups__id_says_nothing(const struct cgroups *cg, uint64_t id)
{
	return !id || (cg->v1 && id == cg->root_id);
}

static struct cgroup_info *info_new(uint64_t id, const char *path)
{
	struct cgroup_info *ci = calloc(1, sizeof(*ci));

	if (!ci || !(ci->path = strdup(path))) {
		free(ci);
		return NULL;
	}
	ci->id = id;
	ci->refs = 1;
	cgroupname__parse(path, &ci->names);
	return ci;
}

/* The record kept in table under hash, a reference taken; else a new
 * one of (id, path) put there (counted); NULL on ENOMEM. */
static struct cgroup_info *keep(struct cgroups *cg, struct hashtab *table, uint64_t hash, const void *key,
				uint64_t id, const char *path)
{
	struct cgroup_info *ci;
	uint64_t v;

	if (hashtab__find(table, hash, key, &v)) {
		ci = (struct cgroup_info *)(uintptr_t)v;
		ci->refs++;
		return ci;
	}
	if (!path)
		return NULL;
	ci = info_new(id, path);
	if (ci && hashtab__insert(table, hash, (uintptr_t)ci)) {
		free(ci->path);
		free(ci);
		return NULL;
	}
	cg->st.resolved += ci != NULL;
	return ci;
}

/* The path of v2 cgroup id under the mount, into out: 0, or -errno. */
static int id_path(const struct cgroups *cg, uint64_t id, char *out, size_t len)
{
	union {
		struct file_handle fh;
		char room[sizeof(struct file_handle) + sizeof(uint64_t)];
	} h;
	char link[64], target[PATH_MAX];
	size_t ml = strlen(cg->mnt);
	ssize_t n;
	int fd;

	if (id == cg->root_id) {
		snprintf(out, len, "/");
		return 0;
	}
	h.fh.handle_bytes = sizeof(uint64_t);
	h.fh.handle_type = FILEID_KERNFS;
	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(cg->mnt_fd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	if (strncmp(target, cg->mnt, ml) || (target[ml] && target[ml] != '/'))
		return -EXDEV; /* not under the mount as we know it */
	snprintf(out, len, "%s", target[ml] ? target + ml : "/");
	return 0;
}

struct cgroup_info *cgroups__of_id(struct cgroups *cg, uint64_t id)
{
	struct cgroup_info *ci;
	char path[PATH_MAX];
	uint64_t hash = hashtab__hash_u64(id);

	if (!cg || cgroups__id_says_nothing(cg, id))
		return NULL;
	if ((ci = keep(cg, cg->by_id, hash, &id, id, NULL)))
		return ci;
	if (cg->mnt_fd < 0 || id_path(cg, id, path, sizeof(path))) {
		cg->st.unresolved++;
		return NULL;
	}
	return keep(cg, cg->by_id, hash, &id, id, path);
}

void cgroups__pick_path(const char *text, char *out, size_t len)
{
	char systemd[PATH_MAX] = "", v2[PATH_MAX] = "", any[PATH_MAX] = "";
	const char *l = text;

	snprintf(out, len, "%s", "");
	while (l && *l) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		const char *c1 = memchr(l, ':', n), *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - l)) : NULL;

		if (c2) {
			char path[PATH_MAX];
			struct cgroup_names nm;
			size_t pl = n - (size_t)(c2 + 1 - l);

			snprintf(path, sizeof(path), "%.*s", (int)pl, c2 + 1);
			cgroupname__parse(path, &nm);
			if (nm.container_id[0]) {
				snprintf(out, len, "%s", path);
				return;
			}
			if (c2 == c1 + 1 && !strncmp(l, "0:", 2))
				snprintf(v2, sizeof(v2), "%s", path);
			else if ((size_t)(c2 - c1 - 1) == strlen("name=systemd") && !memcmp(c1 + 1, "name=systemd", 12))
				snprintf(systemd, sizeof(systemd), "%s", path);
			else if (!any[0] && strcmp(path, "/"))
				snprintf(any, sizeof(any), "%s", path);
		}
		l = nl ? nl + 1 : NULL;
	}
	snprintf(out, len, "%s", systemd[0] && strcmp(systemd, "/") ? systemd
				 : v2[0] && strcmp(v2, "/")       ? v2
				 : any[0]                         ? any
				 : systemd[0]                     ? systemd
								  : v2);
}

struct cgroup_info *cgroups__of_pid(struct cgroups *cg, pid_t pid)
{
	char fn[64], text[8192], path[PATH_MAX];
	ssize_t n;
	int fd;

	if (!cg)
		return NULL;
	snprintf(fn, sizeof(fn), "/proc/%d/cgroup", (int)pid);
	fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	cg->st.proc_reads++;
	if (n <= 0)
		return NULL;
	text[n] = '\0';
	cgroups__pick_path(text, path, sizeof(path));
	if (!path[0])
		return NULL;
	return keep(cg, cg->by_path, hashtab__hash_str(path), path, 0, path);
}

void cgroups__put(struct cgroups *cg, struct cgroup_info *ci)
{
	uint64_t v;

	if (!ci || --ci->refs)
		return;
	if (ci->id)
		hashtab__remove(cg->by_id, hashtab__hash_u64(ci->id), &ci->id, &v);
	else
		hashtab__remove(cg->by_path, hashtab__hash_str(ci->path), ci->path, &v);
	free(ci->path);
	free(ci);
}

const struct cgroups_stats *cgroups__stats(const struct cgroups *cg)
{
	return &cg->st;
}
