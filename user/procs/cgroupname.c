/* cgroupname.c — container, pod and service names from a cgroup path
 * (cgroupname.h). The runtimes' names, as the kernel shows them:
 *
 *   docker (systemd driver)      /system.slice/docker-ID.scope
 *   docker (cgroupfs)            /docker/ID
 *   containerd (k8s, systemd)    /kubepods.slice/kubepods-burstable.slice/
 *                                kubepods-burstable-podUID_WITH_UNDERSCORES.slice/
 *                                cri-containerd-ID.scope
 *   cri-o (systemd)              .../crio-ID.scope (crio-conmon-ID.scope:
 *                                its monitor, no container)
 *   kubelet (cgroupfs)           /kubepods/burstable/podUID/ID
 *   podman (systemd)             /machine.slice/libpod-ID.scope[/container]
 *   podman (cgroupfs)            /libpod_parent/libpod-ID
 *   systemd services             /system.slice/NAME.service
 *
 * ID is 64 lower-case hex digits; UID a UUID (8-4-4-4-12 hex digits),
 * its dashes underscores in systemd's slice names.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "cgroupname.h"

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

/* A container id in component c (n bytes): the whole of it, or what
 * follows its last '-' before ".scope". */
static bool container_of(const char *c, size_t n, char *out)
{
	const char *id = c;

	if (ends_with(c, n, ".scope"))
		n -= strlen(".scope");
	for (size_t i = n; i > 0; i--)
		if (c[i - 1] == '-') {
			id = c + i;
			break;
		}
	size_t len = n - (size_t)(id - c);

	if (len != CGROUP_CONTAINER_ID_LEN || !is_hex(id, len))
		return false;
	/* cri-o's and podman's monitor: "crio-conmon-ID", "libpod-conmon-ID" */
	if (id - c >= 7 && !memcmp(id - 7, "conmon-", 7))
		return false;
	memcpy(out, id, len);
	out[len] = '\0';
	return true;
}

/* A pod uid in component c: "podUID" at its end, before ".slice", with
 * dashes or (systemd) underscores. */
static bool pod_of(const char *c, size_t n, char *out)
{
	static const int dash_at[] = { 8, 13, 18, 23 };

	if (ends_with(c, n, ".slice"))
		n -= strlen(".slice");
	if (n < 3 + CGROUP_POD_UID_LEN)
		return false;
	const char *u = c + n - CGROUP_POD_UID_LEN;

	if (memcmp(u - 3, "pod", 3))
		return false;
	for (int i = 0, d = 0; i < CGROUP_POD_UID_LEN; i++) {
		if (d < 4 && i == dash_at[d]) {
			if (u[i] != '-' && u[i] != '_')
				return false;
			out[i] = '-';
			d++;
		} else if (!is_hex(u + i, 1)) {
			return false;
		} else {
			out[i] = u[i];
		}
	}
	out[CGROUP_POD_UID_LEN] = '\0';
	return true;
}

void cgroupname__parse(const char *path, struct cgroup_names *out)
{
	const char *c = path;

	memset(out, 0, sizeof(*out));
	while (c && *c) {
		while (*c == '/')
			c++;
		const char *end = strchr(c, '/');
		size_t n = end ? (size_t)(end - c) : strlen(c);

		if (n) {
			char id[CGROUP_CONTAINER_ID_LEN + 1], uid[CGROUP_POD_UID_LEN + 1];

			if (container_of(c, n, id))
				memcpy(out->container_id, id, sizeof(id));
			else if (pod_of(c, n, uid))
				memcpy(out->pod_uid, uid, sizeof(uid));
			else if (ends_with(c, n, ".service") && n < CGROUP_UNIT_MAX)
				snprintf(out->unit, sizeof(out->unit), "%.*s", (int)n, c);
		}
		c = end;
	}
}
