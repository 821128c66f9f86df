/* test_cgroups.c — container, pod and service names from cgroup paths as
 * each runtime makes them (user/procs/cgroupname.c), the path chosen from
 * /proc/PID/cgroup's text, and a cgroup named by its v2 id through a file
 * handle (user/procs/cgroups.c), against a cgroup made here where the
 * machine lets root make one. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "procs/cgroupname.h"
#include "procs/cgroups.h"
#include "testing.h"

#define ID "4c2b1f0f3a9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c"
#define UID "0b6a7c3e-5d1f-4e2a-9b8c-7d6e5f4a3b2c"
#define UID_ "0b6a7c3e_5d1f_4e2a_9b8c_7d6e5f4a3b2c"

static bool names(const char *path, const char *id, const char *pod, const char *unit)
{
	struct cgroup_names n;

	cgroupname__parse(path, &n);
	if (strcmp(n.container_id, id) || strcmp(n.pod_uid, pod) || strcmp(n.unit, unit)) {
		printf("  %s: container_id \"%s\" pod_uid \"%s\" unit \"%s\"; want \"%s\" \"%s\" \"%s\"\n", path,
		       n.container_id, n.pod_uid, n.unit, id, pod, unit);
		return false;
	}
	return true;
}

static bool runtimes_named(void)
{
	CHECK(names("/system.slice/docker-" ID ".scope", ID, "", ""));
	CHECK(names("/docker/" ID, ID, "", ""));
	CHECK(names("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		    ".slice/cri-containerd-" ID ".scope", ID, UID, ""));
	CHECK(names("/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" ID ".scope", ID, UID, ""));
	CHECK(names("/kubepods/burstable/pod" UID "/" ID, ID, UID, ""));
	CHECK(names("/kubepods/besteffort/pod" UID, "", UID, ""));
	CHECK(names("/machine.slice/libpod-" ID ".scope/container", ID, "", ""));
	CHECK(names("/libpod_parent/libpod-" ID, ID, "", ""));
	CHECK(names("/system.slice/nginx.service", "", "", "nginx.service"));
	return true;
}

static bool others_not_named(void)
{
	/* Monitors, near misses, the root. */
	CHECK(names("/kubepods.slice/kubepods-pod" UID_ ".slice/crio-conmon-" ID ".scope", "", UID, ""));
	CHECK(names("/machine.slice/libpod-conmon-" ID ".scope", "", "", ""));
	CHECK(names("/docker/" ID "0", "", "", ""));               /* 65 digits */
	CHECK(names("/docker/4C2B1F0F3A9E8D7C6B5A4F3E2D1C0B9A8F7E6D5C4B3A2F1E0D9C8B7A6F5E4D3C", "", "", ""));
	CHECK(names("/kubepods/pod0b6a7c3e-5d1f-4e2a-9b8c-7d6e5f4a3b2", "", "", "")); /* short */
	CHECK(names("/user.slice/user-0.slice/session-3.scope", "", "", ""));
	CHECK(names("/", "", "", ""));
	CHECK(names("", "", "", ""));
	/* The deepest container wins (docker in docker). */
	CHECK(names("/docker/" ID "/docker/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "", ""));
	return true;
}

static bool proc_text_picked(void)
{
	char out[PATH_MAX];

	/* v1 with docker's cgroupfs driver: a controller's line names it. */
	cgroups__pick_path("12:pids:/docker/" ID "\n1:name=systemd:/docker/" ID "\n0::/\n", out, sizeof(out));
	CHECK_STR(out, "/docker/" ID);
	/* v2 only. */
	cgroups__pick_path("0::/system.slice/nginx.service\n", out, sizeof(out));
	CHECK_STR(out, "/system.slice/nginx.service");
	/* Hybrid: systemd's hierarchy first, then v2, then any controller's. */
	cgroups__pick_path("4:memory:/a/b\n1:name=systemd:/system.slice/x.service\n0::/\n", out, sizeof(out));
	CHECK_STR(out, "/system.slice/x.service");
	cgroups__pick_path("4:memory:/a/b\n1:name=systemd:/\n0::/\n", out, sizeof(out));
	CHECK_STR(out, "/a/b");
	cgroups__pick_path("1:name=systemd:/\n0::/\n", out, sizeof(out));
	CHECK_STR(out, "/");
	cgroups__pick_path("garbage\n", out, sizeof(out));
	CHECK_STR(out, "");
	return true;
}

/* A cgroup made under the v2 mount, named by its id (its inode): the
 * path below the mount, and the container its name holds. Then gone:
 * not named, counted. */
static bool id_named(void)
{
	char mnt[PATH_MAX], dir[PATH_MAX + 128];
	struct cgroups *cg;
	struct cgroup_info *ci, *again;
	struct stat st;

	cgroups__mounts(mnt, sizeof(mnt), NULL);
	if (!mnt[0])
		SKIP("no cgroup v2 mount on this machine");
	snprintf(dir, sizeof(dir), "%s/pmubpf-test-%d-docker-" ID ".scope", mnt, (int)getpid());
	if (mkdir(dir, 0755)) {
		if (errno == EACCES || errno == EPERM || errno == EROFS)
			SKIP("cannot make a cgroup here (not root, or the v2 mount is read-only)");
		CHECK(!"mkdir");
	}
	bool ok = false;

	cg = cgroups__new();
	if (!cg || stat(dir, &st))
		goto out;
	ci = cgroups__of_id(cg, st.st_ino);
	if (!ci) {
		printf("  id %llu of %s not named\n", (unsigned long long)st.st_ino, dir);
		goto out;
	}
	char want[PATH_MAX + 64];

	snprintf(want, sizeof(want), "/pmubpf-test-%d-docker-" ID ".scope", (int)getpid());
	if (strcmp(ci->path, want) || strcmp(ci->names.container_id, ID)) {
		printf("  path \"%s\" container \"%s\"\n", ci->path, ci->names.container_id);
		goto out;
	}
	again = cgroups__of_id(cg, st.st_ino); /* kept: the same record */
	if (again != ci || ci->refs != 2 || cgroups__stats(cg)->resolved != 1)
		goto out;
	cgroups__put(cg, again);
	cgroups__put(cg, ci);
	rmdir(dir);
	ci = cgroups__of_id(cg, st.st_ino);
	if (ci || cgroups__stats(cg)->unresolved != 1) {
		printf("  a removed cgroup was named: %s\n", ci ? ci->path : "(counted wrong)");
		goto out;
	}
	ok = true;
out:
	rmdir(dir);
	cgroups__free(cg);
	return ok;
}

TEST_MAIN("cgroups", TEST(runtimes_named), TEST(others_not_named), TEST(proc_text_picked), TEST(id_named))
