/* tracefs.c — see tracefs.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tracefs.h"

static const char *root_override;

void tracefs__set_root(const char *root)
{
	root_override = root;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool has_events(const char *root)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/events", root);
	return is_dir(path);
}

const char *tracefs__root(void)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

	if (root_override)
		return has_events(root_override) ? root_override : NULL;
	for (size_t i = 0; i < 2; i++)
		if (has_events(roots[i]))
			return roots[i];
	if (is_dir(roots[0]) && !mount("nodev", roots[0], "tracefs", 0, NULL) && has_events(roots[0]))
		return roots[0];
	return NULL;
}

bool tracefs__word(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

int tracefs__id(const char *sys, const char *name, unsigned long long *id)
{
	const char *root = tracefs__root();
	char path[PATH_MAX], buf[32];
	FILE *f;
	bool ok;

	if (!root)
		return -ENOSYS;
	if (!tracefs__word(sys, strlen(sys)) || !tracefs__word(name, strlen(name)))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/events/%s", root, sys);
	if (!is_dir(path))
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, sys, name);
	f = fopen(path, "re");
	ok = f && fgets(buf, sizeof(buf), f) && isdigit((unsigned char)buf[0]) &&
	     sscanf(buf, "%llu", id) == 1;
	if (f)
		fclose(f);
	return ok ? 0 : -ENOENT;
}

static int only_dirs(const struct dirent *d)
{
	return d->d_name[0] != '.' && tracefs__word(d->d_name, strlen(d->d_name));
}

int tracefs__foreach(void (*fn)(const char *sys, const char *name, void *arg), void *arg)
{
	const char *root = tracefs__root();
	char path[PATH_MAX];
	struct dirent **sys, **tps;
	int ns, nt;

	if (!root)
		return -ENOSYS;
	snprintf(path, sizeof(path), "%s/events", root);
	ns = scandir(path, &sys, only_dirs, alphasort);
	if (ns < 0)
		return -errno;
	for (int i = 0; i < ns; i++) {
		snprintf(path, sizeof(path), "%s/events/%s", root, sys[i]->d_name);
		nt = is_dir(path) ? scandir(path, &tps, only_dirs, alphasort) : -1;
		for (int j = 0; j < nt; j++) {
			char idp[PATH_MAX + 300];

			snprintf(idp, sizeof(idp), "%s/%s/id", path, tps[j]->d_name);
			if (!access(idp, R_OK))
				fn(sys[i]->d_name, tps[j]->d_name, arg);
			free(tps[j]);
		}
		if (nt >= 0)
			free(tps);
		free(sys[i]);
	}
	free(sys);
	return 0;
}
