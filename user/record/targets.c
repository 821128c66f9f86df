/* targets.c — see targets.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config/values.h"
#include "lib/clock.h"
#include "lib/outfile.h"
#include "lib/proctask.h"
#include "report/report.h"
#include "targets.h"

int targets__online_cpus(int **cpus, int *n)
{
	char buf[4096];
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -EIO;
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return values__parse_list(buf, cpus, n, 65535);
}

/* -p/-t: like perf, stop once every target is gone. */
bool targets__alive(const struct config *cfg)
{
	for (int i = 0; i < cfg->npids; i++)
		if (proctask__live_thread(cfg->pids[i], 0))
			return true;
	for (int i = 0; i < cfg->ntids; i++)
		if (proctask__alive(cfg->tids[i]))
			return true;
	return false;
}

/* --every: the directory its windows' files go into, checked and named
 * as such before anything loads (-o DIR/ or an existing DIR: the files
 * DIR/pmubpf.EVENT.STAMP.pb.gz; else NAME.EVENT.STAMP.pb.gz beside -o's
 * NAME). The error names the directory, not a window's file: no window
 * has a name yet (the first one's was dated 1970). */
static int check_windows_dir(const char *out, char *err, size_t errlen)
{
	const char *slash = strrchr(out, '/');
	struct stat st;
	char *dir;
	int ret;

	if ((slash && !slash[1]) || (stat(out, &st) == 0 && S_ISDIR(st.st_mode)))
		return outfile__check_dir(out, err, errlen);
	dir = slash ? strndup(out, slash == out ? 1 : (size_t)(slash - out)) : strdup(".");
	if (!dir)
		return -ENOMEM;
	ret = outfile__check_dir(dir, err, errlen);
	free(dir);
	return ret;
}

/* Every file the recording will write, checked before anything loads:
 * a bad path found after the recording would cost the recording. */
int targets__check_outputs(const struct config *cfg, char *err, size_t errlen)
{
	char path[PATH_MAX + 64];
	int ret;

	/* Several events write NAME.EVENT.pb.gz next to -o: next to a device
	 * or FIFO (/dev/null) those would be new files in its directory. */
	if ((cfg->nevents > 1 || cfg->every > 0) &&
	    outfile__check(cfg->output, NULL, 0) == OUTFILE_IN_PLACE) {
		snprintf(err, errlen, "cannot write '%s': it is not a regular file, and %s (NAME.EVENT...pb.gz): give a file name",
			 cfg->output, cfg->every > 0 ? "--every writes a file per window" : "several events write one file each");
		return -EINVAL;
	}
	if (cfg->every > 0 && (ret = check_windows_dir(cfg->output, err, errlen)) < 0)
		return ret;
	for (int ev = 0; ev < cfg->nevents; ev++) {
		/* --every: the names its windows will have (a directory -o
		 * is theirs to fill), stamped now as the first would be. */
		if (cfg->every > 0)
			report__window_path(cfg, ev, clock_ns(CLOCK_REALTIME), path, sizeof(path), NULL, 0);
		else
			report__output_path(cfg, ev, path, sizeof(path));
		if (strlen(path) >= PATH_MAX) {
			snprintf(err, errlen, "cannot write '%s': %s", cfg->output, strerror(ENAMETOOLONG));
			return -ENAMETOOLONG;
		}
		ret = outfile__check(path, err, errlen);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The directory the output would go to is writable (the HTTP server's
 * check at start: each request writes into a new private directory). */
static int check_output_dir(const char *out, char *err, size_t errlen)
{
	char *copy, *dir;
	int ret = 0;

	if (!strcmp(out, "-")) { /* stdout: binary, so never a terminal */
		if (!isatty(STDOUT_FILENO))
			return 0;
		snprintf(err, errlen, "-o -: stdout is a terminal; redirect it (e.g. -o - > p.pb.gz, or into a pipe)");
		return -ENOTTY;
	}
	copy = strdup(out);
	if (!copy)
		return -ENOMEM;
	dir = dirname(copy);
	if (access(dir, W_OK))
		ret = -errno;
	if (ret)
		snprintf(err, errlen, "cannot write the profile into '%s': %s", dir, strerror(-ret));
	free(copy);
	return ret;
}

int targets__check(const struct config *cfg, int **cpus, int *ncpus,
		   char *err, size_t errlen)
{
	int *online = NULL, n = 0, ret;

	for (int i = 0; i < cfg->npids; i++)
		if (!proctask__live_thread(cfg->pids[i], 0)) {
			snprintf(err, errlen, "no such process: %d (-p)", cfg->pids[i]);
			return -ESRCH;
		}
	for (int i = 0; i < cfg->ntids; i++)
		if (!proctask__alive(cfg->tids[i])) {
			snprintf(err, errlen, "no such thread: %d (-t)", cfg->tids[i]);
			return -ESRCH;
		}
	ret = cfg->live ? 0 /* pmubpf top writes no file */
		: cfg->http ? check_output_dir(cfg->output, err, errlen)
			: targets__check_outputs(cfg, err, errlen);
	if (ret)
		return ret;
	ret = targets__online_cpus(&online, &n);
	if (ret) {
		snprintf(err, errlen, "cannot read the online CPUs: %s", strerror(-ret));
		return ret;
	}
	for (int i = 0; cfg->cpus_given && i < cfg->ncpus; i++) {
		bool up = false;

		for (int j = 0; j < n; j++)
			up |= online[j] == cfg->cpus[i];
		if (!up) {
			free(online);
			snprintf(err, errlen, "CPU %d is not online (-C)", cfg->cpus[i]);
			return -ENODEV;
		}
	}
	if (cfg->cpus_given) {
		free(online);
		n = cfg->ncpus;
		online = malloc(n * sizeof(int));
		if (!online) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		memcpy(online, cfg->cpus, n * sizeof(int));
	}
	if (cpus) {
		*cpus = online;
		*ncpus = n;
	} else {
		free(online);
	}
	return 0;
}

/* Fork the command held before exec until `go` is written; exec errors
 * come back on err_fd (CLOEXEC: EOF means the exec succeeded). */
pid_t targets__start_command(char **argv, int *go_fd, int *err_fd)
{
	int go[2], errp[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(errp, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;
		int en;

		close(go[1]);
		close(errp[0]);
		/* pmubpf's handlers and ignored SIGPIPE are not the command's. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* pmubpf gave up before starting us */
		execvp(argv[0], argv);
		en = errno;
		if (write(errp[1], &en, sizeof(en)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(errp[1]);
	*go_fd = go[1];
	*err_fd = errp[0];
	return pid;
}

