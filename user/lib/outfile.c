/* outfile.c — see outfile.h. */
#include "outfile.h"
#include "errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_TAG ".tmp."
#define TMP_RAND 6
#define TMP_TRIES 100

static int failf(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int failf(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errmsg_v(err, errlen, fmt, ap); /* the one formatter, its own return */
	va_end(ap);
	return ret;
}

/* The directory part of path ("." if none, "/" for "/x"); malloc'ed. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* A new file can be made in path's directory. */
static int check_dir(const char *path, char *err, size_t errlen)
{
	char *dir = dir_of(path);
	struct stat st;
	int ret = 0;

	if (!dir)
		return failf(err, errlen, -ENOMEM, "out of memory");
	if (stat(dir, &st))
		ret = errno == ENOENT
			? failf(err, errlen, -ENOENT, "cannot write '%s': no directory '%s'", path, dir)
			: failf(err, errlen, -errno, "cannot write '%s': directory '%s': %s", path, dir,
				strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		ret = failf(err, errlen, -ENOTDIR, "cannot write '%s': '%s' is not a directory", path, dir);
	else if (access(dir, W_OK | X_OK))
		ret = failf(err, errlen, -errno, "cannot write '%s': directory '%s': %s", path, dir,
			    strerror(errno));
	free(dir);
	return ret;
}

int outfile__check_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (!*dir)
		return failf(err, errlen, -EINVAL, "empty output directory name");
	if (stat(dir, &st))
		return failf(err, errlen, -errno, "cannot write into directory '%s': %s", dir,
			     errno == ENOENT ? "no such directory" : strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return failf(err, errlen, -ENOTDIR, "cannot write into directory '%s': not a directory", dir);
	if (access(dir, W_OK | X_OK))
		return failf(err, errlen, -errno, "cannot write into directory '%s': %s", dir, strerror(errno));
	return 0;
}

/* A file that is not replaced but written where it is. */
static int check_in_place(const char *path, const struct stat *st, char *err, size_t errlen)
{
	if (S_ISDIR(st->st_mode))
		return failf(err, errlen, -EISDIR, "cannot write '%s': it is a directory (give a file name)", path);
	if (S_ISBLK(st->st_mode))
		return failf(err, errlen, -EINVAL, "cannot write '%s': it is a block device (refused)", path);
	if (!S_ISCHR(st->st_mode) && !S_ISFIFO(st->st_mode))
		return failf(err, errlen, -EINVAL, "cannot write '%s': it is a socket or another special file (refused)", path);
	if (access(path, W_OK))
		return failf(err, errlen, -errno, "cannot write '%s': %s", path, strerror(errno));
	return OUTFILE_IN_PLACE;
}

int outfile__check(const char *path, char *err, size_t errlen)
{
	struct stat st, target;
	size_t len = path ? strlen(path) : 0;

	if (!len)
		return failf(err, errlen, -EINVAL, "empty output file name");
	if (path[len - 1] == '/')
		return failf(err, errlen, -EISDIR, "cannot write '%s': it names a directory (give a file name)", path);
	if (strlen(base_of(path)) > NAME_MAX || len >= PATH_MAX)
		return failf(err, errlen, -ENAMETOOLONG, "cannot write '%s': %s", path, strerror(ENAMETOOLONG));
	if (lstat(path, &st)) {
		int e = errno;

		if (e == ENOENT || e == ENOTDIR) /* the directory says what */
			return check_dir(path, err, errlen) ?: OUTFILE_REPLACE;
		return failf(err, errlen, -e, "cannot write '%s': %s", path, strerror(e));
	}
	if (S_ISREG(st.st_mode))
		return check_dir(path, err, errlen) ?: OUTFILE_REPLACE;
	if (!S_ISLNK(st.st_mode))
		return check_in_place(path, &st, err, errlen);
	/* A symlink: /dev/stdout is one. Replacing it by rename would put
	 * a file where the link was; following it to replace its target
	 * would let whoever owns the link pick what root overwrites. */
	if (stat(path, &target))
		return failf(err, errlen, -ELOOP, "cannot write '%s': it is a symbolic link to nothing (%s)",
			     path, strerror(errno));
	if (S_ISREG(target.st_mode))
		return failf(err, errlen, -ELOOP, "cannot write '%s': it is a symbolic link to a regular file (give the file's own path)",
			     path);
	return check_in_place(path, &target, err, errlen);
}

/* name (relative to dirfd) for a temp file next to base: base cut to fit
 * NAME_MAX, ".tmp.", random letters. */
static void tmp_name(char *name, size_t size, const char *base)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[TMP_RAND];
	size_t keep = strlen(base), room = NAME_MAX - strlen(TMP_TAG) - TMP_RAND;
	char *p;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		unsigned v = (unsigned)getpid() * 2654435761u ^ (unsigned)(uintptr_t)&r;

		for (size_t i = 0; i < sizeof(r); i++)
			r[i] = (unsigned char)(v >> (i * 5));
	}
	snprintf(name, size, "%.*s" TMP_TAG, (int)(keep < room ? keep : room), base);
	p = name + strlen(name);
	for (size_t i = 0; i < sizeof(r); i++)
		*p++ = abc[r[i] % (sizeof(abc) - 1)];
	*p = '\0';
}

static int open_as(struct outfile *o, const char *path, bool nowait)
{
	char name[NAME_MAX + 1];
	int kind = outfile__check(path, NULL, 0);

	*o = (struct outfile){ .fd = -1, .dirfd = -1, .kind = kind };
	if (kind < 0)
		return kind;
	if (!(o->path = strdup(path)))
		return -ENOMEM;
	if (kind == OUTFILE_IN_PLACE) {
		/* O_NONBLOCK: a FIFO with no reader is ENXIO, not a wait; the
		 * writes then block as usual. */
		o->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (nowait ? O_NONBLOCK : 0));
		if (o->fd >= 0 && nowait) {
			int fl = fcntl(o->fd, F_GETFL);

			if (fl < 0 || fcntl(o->fd, F_SETFL, fl & ~O_NONBLOCK)) {
				close(o->fd);
				o->fd = -1;
			}
		}
		if (o->fd < 0) {
			int e = errno;

			outfile__abort(o);
			return -e;
		}
		return 0;
	}
	char *dir = dir_of(path);

	o->dirfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dir && o->dirfd < 0 && errno == EACCES) /* writable, not readable */
		o->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (o->dirfd < 0)
		goto fail;
	o->fd = openat(o->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	/* No O_TMPFILE here (EOPNOTSUPP, EISDIR on old kernels, ...): a
	 * named temp file, removed on every error but a SIGKILL. */
	for (int i = 0; o->fd < 0 && i < TMP_TRIES; i++) {
		tmp_name(name, sizeof(name), base_of(path));
		o->fd = openat(o->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (o->fd < 0 && errno != EEXIST)
			goto fail;
		if (o->fd >= 0 && !(o->tmp = strdup(name))) {
			unlinkat(o->dirfd, name, 0);
			errno = ENOMEM;
			goto fail;
		}
	}
	if (o->fd < 0)
		goto fail;
	o->named = o->tmp != NULL;
	/* Readable by all like any profile, whatever the umask. */
	if (fchmod(o->fd, 0644))
		goto fail;
	return 0;
fail:;
	int e = errno;

	outfile__abort(o);
	return -e;
}

/* Give the unnamed file o->fd the name `name` in o->dirfd. */
static int link_tmpfile(struct outfile *o, const char *name)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	if (!linkat(AT_FDCWD, proc, o->dirfd, name, AT_SYMLINK_FOLLOW))
		return 0;
	if (errno == EEXIST)
		return -EEXIST;
	/* No /proc: AT_EMPTY_PATH (needs CAP_DAC_READ_SEARCH). */
	return linkat(o->fd, "", o->dirfd, name, AT_EMPTY_PATH) ? -errno : 0;
}

static int put_in_place(struct outfile *o)
{
	const char *base = base_of(o->path);
	char name[NAME_MAX + 1];
	int err;

	if (o->named)
		return renameat(o->dirfd, o->tmp, o->dirfd, base) ? -errno : 0;
	/* A new path: linked straight in, no name ever but the final one. */
	err = link_tmpfile(o, base);
	if (err != -EEXIST)
		return err;
	/* Replacing: a temporary name for the moment between linkat and
	 * rename (the only window in which a SIGKILL leaves a file). */
	for (int i = 0; i < TMP_TRIES; i++) {
		tmp_name(name, sizeof(name), base);
		err = link_tmpfile(o, name);
		if (err == -EEXIST)
			continue;
		if (err)
			return err;
		if (renameat(o->dirfd, name, o->dirfd, base)) {
			err = -errno;
			unlinkat(o->dirfd, name, 0);
		}
		return err;
	}
	return -EEXIST;
}

int outfile__open(struct outfile *o, const char *path)
{
	return open_as(o, path, false);
}

int outfile__open_nowait(struct outfile *o, const char *path)
{
	return open_as(o, path, true);
}

int outfile__commit(struct outfile *o)
{
	int err = 0;

	if (o->kind == OUTFILE_REPLACE) {
		if (fsync(o->fd))
			err = -errno;
		if (!err)
			err = put_in_place(o);
		if (!err) {
			free(o->tmp); /* renamed: nothing to remove */
			o->tmp = NULL;
			fsync(o->dirfd); /* best effort: the rename itself durable */
		}
	}
	if (close(o->fd) && !err && errno != EINTR)
		err = -errno;
	o->fd = -1;
	if (err) {
		outfile__abort(o);
		return err;
	}
	outfile__abort(o); /* frees what is left; nothing to remove */
	return 0;
}

void outfile__abort(struct outfile *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->tmp && o->dirfd >= 0)
		unlinkat(o->dirfd, o->tmp, 0);
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->tmp);
	free(o->path);
	*o = (struct outfile){ .fd = -1, .dirfd = -1 };
}
