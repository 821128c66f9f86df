/* cgfilter.c — --cgroup and --container resolved, opened, given to BPF
 * (cgfilter.h). */
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "lib/errmsg.h"
#include "procs/cgroupname.h"
#include "procs/cgroups.h"
#include "cgfilter.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#define WALK_DEPTH 16

static bool is_cgroup2(int fd)
{
	struct statfs sf;

	return !fstatfs(fd, &sf) && sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* The directories under dir whose names hold a container id starting
 * with id: counted into *n, the first into found. */
static void walk(const char *dir, const char *id, int depth, char *found, size_t len, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[PATH_MAX];
		struct cgroup_names nm;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		cgroupname__parse(e->d_name, &nm);
		if (nm.container_id[0] && !strncmp(nm.container_id, id, strlen(id))) {
			/* one container's cgroup, and its own below it (podman's
			 * "container"): the outer one counts */
			if (!(*n)++)
				snprintf(found, len, "%s", path);
			continue;
		}
		if (depth < WALK_DEPTH)
			walk(path, id, depth + 1, found, len, n);
	}
	closedir(d);
}

static bool hex_id(const char *s)
{
	size_t n = strlen(s);

	if (n < 12 || n > CGROUP_CONTAINER_ID_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* The directory of one argument, into path: 0 or -errno, err said. */
static int resolve(const char *arg, bool container, const char *mnt, char *path, size_t len, char *err,
		   size_t errlen)
{
	struct stat st;
	int n = 0;

	if (container) {
		if (!hex_id(arg))
			return errmsg(err, errlen, "bad container id '--container %s': want 12 to 64 hex digits (docker ps, crictl ps)", arg);
		if (!mnt[0])
			return errmsg(err, errlen, "--container %s: this machine has no cgroup v2 mount to find it in", arg);
		walk(mnt, arg, 0, path, len, &n);
		if (!n)
			return errmsg(err, errlen, "--container %s: no cgroup under %s names such a container", arg, mnt);
		if (n > 1)
			return errmsg(err, errlen, "--container %s: %d containers' ids start so: give more digits", arg, n);
		return 0;
	}
	/* A directory as given, else a cgroup's path as profiles show it
	 * (the label cgroup), under the mount. */
	snprintf(path, len, "%s", arg);
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		if (arg[0] != '/' || !mnt[0] ||
		    (size_t)snprintf(path, len, "%s%s", mnt, arg) >= len || stat(path, &st) || !S_ISDIR(st.st_mode))
			return errmsg(err, errlen, "--cgroup %s: no such cgroup directory%s%s%s", arg,
				      mnt[0] ? " (here or under " : "", mnt[0] ? mnt : "", mnt[0] ? ")" : "");
	}
	return 0;
}

int cgfilter__open(const struct config *cfg, struct cgfilter *f, char *err, size_t errlen)
{
	char mnt[PATH_MAX], path[PATH_MAX];

	f->n = 0;
	if (!cfg->ncgroup_args)
		return 0;
	cgroups__mounts(mnt, sizeof(mnt), NULL);
	for (int i = 0; i < cfg->ncgroup_args && i < PMUBPF_MAX_CGROUPS; i++) {
		const char *arg = cfg->cgroup_args[i];
		int ret = resolve(arg, cfg->cgroup_is_container[i], mnt, path, sizeof(path), err, errlen);
		int fd;

		if (ret) {
			cgfilter__close(f);
			return ret;
		}
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || !is_cgroup2(fd)) {
			ret = fd < 0 ? -errno : -ENOTDIR;
			if (fd >= 0)
				close(fd);
			cgfilter__close(f);
			return errmsg(err, errlen, "%s %s: %s is %s", cfg->cgroup_is_container[i] ? "--container" : "--cgroup",
				      arg, path, ret == -ENOTDIR ? "not a cgroup v2 directory (v1 hierarchies cannot be filtered: use -p)"
								 : strerror(-ret));
		}
		f->fds[f->n++] = fd;
	}
	return 0;
}

int cgfilter__fill(const struct cgfilter *f, int map_fd)
{
	for (int i = 0; i < f->n; i++) {
		__u32 k = (__u32)i, v = (__u32)f->fds[i];

		if (bpf_map_update_elem(map_fd, &k, &v, BPF_ANY))
			return -errno;
	}
	return 0;
}

void cgfilter__close(struct cgfilter *f)
{
	for (int i = 0; i < f->n; i++)
		close(f->fds[i]);
	f->n = 0;
}
