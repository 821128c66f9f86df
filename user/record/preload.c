/* preload.c — see preload.h. */
#include "preload.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where execvp finds command: itself if it names a path, else the first
 * executable file of that name in $PATH (execvp's default without it). */
static bool command_path(const char *command, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(command, '/'))
		return realpath(command, out) != NULL;
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t dlen = end ? (size_t)(end - path) : strlen(path);
		char cand[PATH_MAX];

		if (snprintf(cand, sizeof(cand), "%.*s/%s", (int)dlen, dlen ? path : ".", command) <
			    (int)sizeof(cand) &&
		    !access(cand, X_OK) && realpath(cand, out) && strlen(out) < len)
			return true;
		path += dlen + (end != NULL);
		if (!end)
			break;
	}
	return false;
}

void preload__tables(struct unwind *uw, struct procs *procs, const char *command)
{
	char line[PATH_MAX + 128], path[PATH_MAX], last[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/'), *nl, *base;

		if (!p || !strstr(line, " r-xp "))
			continue;
		if ((nl = strchr(p, '\n')))
			*nl = 0;
		base = strrchr(p, '/') + 1;
		if (strcmp(p, last) && (!strncmp(base, "libc.so", 7) || !strncmp(base, "ld-linux", 8) ||
					!strncmp(base, "ld-musl", 7)))
			unwind__preload(uw, procs, p);
		snprintf(last, sizeof(last), "%s", p);
	}
	if (f)
		fclose(f);
	unwind__preload_vdso(uw);
	if (realpath("/bin/sh", path))
		unwind__preload(uw, procs, path);
	if (command && command_path(command, path, sizeof(path)))
		unwind__preload(uw, procs, path);
}

