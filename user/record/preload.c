/* preload.c — see preload.h. */
#include "preload.h"

#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbols/elfutil.h"

/* The files built here: libc, the loader, the shell, the command and
 * the libraries it links, at most this many (a program linking more
 * has its first samples in the rest unwound once BPF asks for them). */
#define NEEDED_MAX 32

/* The files found so far (real paths). */
struct needed {
	char *path[NEEDED_MAX];
	int n;
	const char *origin;  /* the directory of the object being read */
	const char *runpath; /* its DT_RUNPATH or DT_RPATH */
	const char *libdir;  /* where our libc is */
};

/* path's index in nd, added if new; -1 if nd is full. */
static int add(struct needed *nd, const char *path)
{
	for (int i = 0; i < nd->n; i++)
		if (!strcmp(nd->path[i], path))
			return i;
	if (nd->n >= NEEDED_MAX || !(nd->path[nd->n] = strdup(path)))
		return -1;
	return nd->n++;
}

/* name in the directories of list (':'-separated; an empty one is the
 * current directory, as for execvp and the loader; $ORIGIN, with
 * origin, the object's own), the first with access(mode): its real
 * path into out (PATH_MAX). */
static bool search(const char *list, const char *name, const char *origin, int mode, char *out)
{
	while (list && *list) {
		const char *end = strchr(list, ':');
		size_t len = end ? (size_t)(end - list) : strlen(list);
		char dir[PATH_MAX], cand[PATH_MAX];

		if (origin && len >= 7 && !strncmp(list, "$ORIGIN", 7))
			snprintf(dir, sizeof(dir), "%s%.*s", origin, (int)(len - 7), list + 7);
		else if (origin && len >= 9 && !strncmp(list, "${ORIGIN}", 9))
			snprintf(dir, sizeof(dir), "%s%.*s", origin, (int)(len - 9), list + 9);
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)len, len ? list : ".");
		if (snprintf(cand, sizeof(cand), "%s/%s", dir, name) < (int)sizeof(cand) &&
		    !access(cand, mode) && realpath(cand, out))
			return true;
		list += len + (end != NULL);
	}
	return false;
}

/* Where execvp finds command: itself if it names a path, else the first
 * executable file of that name in $PATH (execvp's default without it). */
static bool command_path(const char *command, char *out)
{
	const char *path = getenv("PATH");

	if (strchr(command, '/'))
		return realpath(command, out) != NULL;
	return search(path ? path : "/bin:/usr/bin", command, NULL, X_OK, out);
}

/* One DT_NEEDED name: where the loader would look (the object's run
 * path, LD_LIBRARY_PATH, which the command inherits, the directory of
 * our libc, the usual directories; not ld.so.cache, whose extra
 * directories hold few libraries), added if new. */
static void need(const char *name, void *arg)
{
	struct needed *nd = arg;
	char path[PATH_MAX];

	if (!name[0])
		return;
	if (strchr(name, '/') ? !realpath(name, path) :
	    !search(nd->runpath, name, nd->origin, R_OK, path) &&
		    !search(getenv("LD_LIBRARY_PATH"), name, nd->origin, R_OK, path) &&
		    !search(nd->libdir, name, nd->origin, R_OK, path) &&
		    !search("/lib64:/usr/lib64:/lib:/usr/lib", name, nd->origin, R_OK, path))
		return;
	add(nd, path);
}

/* The libraries of nd->path[from..], and theirs (breadth first), added
 * to nd. */
static void needed_of(struct needed *nd, int from)
{
	elf_version(EV_CURRENT);
	for (int i = from; i < nd->n; i++) {
		char origin[PATH_MAX], runpath[PATH_MAX];
		int fd = open(nd->path[i], O_RDONLY | O_CLOEXEC);
		Elf *e;

		if (fd < 0)
			continue;
		if ((e = elf_begin(fd, ELF_C_READ_MMAP, NULL)) && elf_kind(e) == ELF_K_ELF) {
			const char *slash = strrchr(nd->path[i], '/');

			snprintf(origin, sizeof(origin), "%.*s", (int)(slash - nd->path[i]), nd->path[i]);
			nd->origin = origin;
			nd->runpath = runpath; /* filled before need() runs */
			elfutil__needed(e, need, nd, runpath, sizeof(runpath));
		}
		if (e)
			elf_end(e);
		close(fd);
	}
}

void preload__tables(struct unwind *uw, struct procs *procs, const char *command)
{
	char line[PATH_MAX + 128], path[PATH_MAX], last[PATH_MAX] = "", libdir[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/maps", "re");
	struct needed nd = { .libdir = libdir };

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/'), *nl, *base;

		if (!p || !strstr(line, " r-xp "))
			continue;
		if ((nl = strchr(p, '\n')))
			*nl = 0;
		base = strrchr(p, '/') + 1;
		if (strcmp(p, last) && (!strncmp(base, "libc.so", 7) || !strncmp(base, "ld-linux", 8) ||
					!strncmp(base, "ld-musl", 7))) {
			unwind__preload(uw, procs, p);
			if (!strncmp(base, "libc.so", 7))
				snprintf(libdir, sizeof(libdir), "%.*s", (int)(base - 1 - p), p);
			if (realpath(p, path))
				add(&nd, path); /* built: not again for the command */
		}
		snprintf(last, sizeof(last), "%s", p);
	}
	if (f)
		fclose(f);
	unwind__preload_vdso(uw);
	if (realpath("/bin/sh", path)) {
		unwind__preload(uw, procs, path);
		add(&nd, path);
	}
	/* The command and the libraries it links (those not built above). */
	int built = nd.n, at;

	if (command && command_path(command, path) && (at = add(&nd, path)) >= 0)
		needed_of(&nd, at); /* from the shell, if that is the command */
	for (int i = 0; i < nd.n; i++) {
		if (i >= built)
			unwind__preload(uw, procs, nd.path[i]);
		free(nd.path[i]);
	}
}

