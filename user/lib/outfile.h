/* outfile.h — where an output file goes, checked before the work that
 * fills it, and written so that no reader ever sees half of it.
 *
 * A regular file (or a path that does not exist yet) is replaced whole:
 * the data goes to an unnamed O_TMPFILE in the same directory, is fsync'ed
 * and linked in (straight to the path when it does not exist, else under
 * a temporary name and renamed over it). A process killed while writing
 * leaves nothing; the temporary name exists only between linkat and
 * rename. Filesystems without O_TMPFILE get a named temporary file
 * (PATH.tmp.XXXXXX, its name cut to fit NAME_MAX), removed on every
 * error but left behind by a SIGKILL during the write.
 *
 * Anything else is never replaced by rename, which would turn
 * /dev/null into a regular file for the whole host: a character device
 * or a FIFO (also behind a symlink such as /dev/stdout) is written in
 * place; a directory, a block device, a socket, a symlink to a regular
 * file or to nothing are refused.
 */
#ifndef PMUBPF_OUTFILE_H
#define PMUBPF_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>

enum outfile_kind {
	OUTFILE_REPLACE = 0,  /* new or regular: temp file + rename */
	OUTFILE_IN_PLACE = 1, /* character device or FIFO: opened and written */
};

/* What writing path would do: OUTFILE_REPLACE or OUTFILE_IN_PLACE, or
 * -errno with a one-line reason naming path in err (no trailing newline):
 * a directory (or a name ending in '/'), no such directory, not a
 * directory on the way, no write permission to the directory or device,
 * a name too long, a refused kind of file. Creates and opens nothing. */
int outfile__check(const char *path, char *err, size_t errlen);
/* A new file can be made in the directory dir (where --every writes a
 * file per window): 0, or -errno with a one-line reason naming dir
 * itself in err, never a file in it: no such directory, not a
 * directory, no write permission. Creates nothing. */
int outfile__check_dir(const char *dir, char *err, size_t errlen);

struct outfile {
	int fd;           /* write the data here */
	int dirfd;        /* the directory (OUTFILE_REPLACE), else -1 */
	int kind;         /* enum outfile_kind */
	bool named;       /* the temp file has a name (no O_TMPFILE) */
	char *path;       /* the destination */
	char *tmp;        /* named temp file's path, or NULL */
};

/* Open path for writing as outfile__check says. 0 or -errno (nothing
 * created). For OUTFILE_IN_PLACE on a FIFO this waits for a reader
 * (-EINTR if a signal comes first). */
int outfile__open(struct outfile *o, const char *path);
/* The same, but a FIFO with no reader yet is -ENXIO at once (the
 * caller may say it waits, then outfile__open). */
int outfile__open_nowait(struct outfile *o, const char *path);
/* fsync and put the file in place (OUTFILE_REPLACE), close. 0 or -errno;
 * on failure nothing is left and the old file, if any, is intact. */
int outfile__commit(struct outfile *o);
/* Give up: close and remove whatever outfile__open made. */
void outfile__abort(struct outfile *o);

#endif
