/* proctask.c — see proctask.h. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proctask.h"

/* The task whose stat file is at path lives (not a zombie): its state
 * letter after the ")" tells. */
static bool stat_alive(const char *path)
{
	char buf[512], *rp;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

bool proctask__alive(pid_t id)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", id);
	return stat_alive(path);
}

pid_t proctask__live_thread(pid_t tgid, pid_t skip)
{
	char path[96];
	struct dirent *de;
	pid_t found = 0;
	DIR *d;

	if (tgid != skip && proctask__alive(tgid))
		return tgid;
	snprintf(path, sizeof(path), "/proc/%d/task", tgid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0 || tid == tgid || tid == skip)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", tgid, tid);
		if (stat_alive(path))
			found = tid;
	}
	closedir(d);
	return found;
}
