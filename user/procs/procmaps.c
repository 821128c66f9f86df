/* procmaps.c — parse /proc/PID/maps into a sorted table of mappings.
 *
 * Symbolization input, first stage: when the BPF side reports a process it
 * has not seen, the loader snapshots its maps here, so that user frames can
 * still be turned into (object, file offset) after the process has exited.
 * The elfsym cache then maps each object's file offsets to symbols.
 * Parsing is by hand (no sscanf) so that every field is checked and a path
 * may contain spaces; malformed lines are skipped, never trusted.
 */
#include "procmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/sorted.h"
#include "lib/grow.h"

#define DELETED_SUFFIX " (deleted)"

/* Parse hex digits at *p (at least one, no overflow) into *v. */
static bool parse_hex(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0;

	for (;; s++, n++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (x >> 60)
			return false; /* would overflow */
		x = x << 4 | d;
	}
	if (!n)
		return false;
	*p = s;
	*v = x;
	return true;
}

static bool parse_dec(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0;

	for (; *s >= '0' && *s <= '9'; s++, n++) {
		unsigned d = (unsigned)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	if (!n)
		return false;
	*p = s;
	*v = x;
	return true;
}

static bool expect(const char **p, char c)
{
	if (**p != c)
		return false;
	(*p)++;
	return true;
}

/* Parse one line [s, e) (no newline) into *m; m->path is allocated.
 * Returns 0, -EINVAL (malformed) or -ENOMEM. */
static int parse_line(const char *s, const char *e, struct procmap *m)
{
	const char *p = s;
	uint64_t maj, min;
	const char *perms;

	memset(m, 0, sizeof(*m));
	if (!parse_hex(&p, &m->start) || !expect(&p, '-') ||
	    !parse_hex(&p, &m->end) || !expect(&p, ' '))
		return -EINVAL;
	if (m->end <= m->start)
		return -EINVAL;
	perms = p;
	for (int i = 0; i < 4; i++, p++)
		if (p >= e || *p == ' ')
			return -EINVAL;
	if (!strchr("r-", perms[0]) || !strchr("w-", perms[1]) ||
	    !strchr("x-", perms[2]) || !strchr("ps", perms[3]))
		return -EINVAL;
	m->exec = perms[2] == 'x';
	if (!expect(&p, ' ') || !parse_hex(&p, &m->pgoff) || !expect(&p, ' ') ||
	    !parse_hex(&p, &maj) || !expect(&p, ':') || !parse_hex(&p, &min) ||
	    !expect(&p, ' ') || !parse_dec(&p, &m->inode))
		return -EINVAL;
	if (maj > UINT32_MAX || min > UINT32_MAX)
		return -EINVAL;
	m->dev_major = (uint32_t)maj;
	m->dev_minor = (uint32_t)min;
	if (p < e && *p != ' ' && *p != '\t')
		return -EINVAL; /* junk glued to the inode */
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;

	/* The path runs to the end of the line and may hold spaces. */
	size_t len = (size_t)(e - p);
	size_t sl = sizeof(DELETED_SUFFIX) - 1;
	if (len >= sl && !memcmp(e - sl, DELETED_SUFFIX, sl)) {
		m->deleted = true;
		len -= sl;
	}
	m->path = strndup(p, len);
	return m->path ? 0 : -ENOMEM;
}

static int cmp_start(const void *a, const void *b)
{
	const struct procmap *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

int procmaps__parse(const char *text, bool exec_only, struct procmaps *out)
{
	struct procmap *maps = NULL;
	size_t n = 0, cap = 0;
	int last_err = 0, parsed = 0;
	bool sorted = true;

	out->maps = NULL;
	out->n = 0;
	if (!text)
		return -EINVAL;

	for (const char *s = text; *s;) {
		const char *e = strchr(s, '\n');
		const char *next = e ? e + 1 : s + strlen(s);
		struct procmap m;
		int err;

		if (!e)
			e = next;
		if (e == s) { /* blank line */
			s = next;
			continue;
		}
		err = parse_line(s, e, &m);
		s = next;
		if (err == -ENOMEM)
			goto oom;
		if (err) {
			last_err = err;
			continue;
		}
		parsed++;
		if (exec_only && !m.exec) {
			free(m.path);
			continue;
		}
		if (GROW(maps, cap, n, 1)) {
			free(m.path);
			goto oom;
		}
		if (n && maps[n - 1].start > m.start)
			sorted = false;
		maps[n++] = m;
	}
	if (!sorted)
		qsort(maps, n, sizeof(*maps), cmp_start);
	/* Snapshots are kept for the whole recording, one per process: the
	 * growth room (64 entries, 3.5 KiB) was most of a short-lived
	 * process's memory under churn. */
	if (n < cap) {
		struct procmap *fit = realloc(maps, (n ? n : 1) * sizeof(*maps));

		if (fit)
			maps = fit;
	}
	out->maps = maps;
	out->n = n;
	return parsed || !last_err ? 0 : last_err;
oom:
	out->maps = maps;
	out->n = n;
	procmaps__free(out);
	return -ENOMEM;
}

/* Read all of fd into a NUL-terminated malloc'd buffer. */
static int read_all(int fd, char **bufp)
{
	size_t cap = 16384, len = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (GROW(buf, cap, len, 4096)) {
			free(buf);
			return -ENOMEM;
		}
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int err = -errno;
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	*bufp = buf;
	return 0;
}

int procmaps__read(pid_t pid, bool exec_only, struct procmaps *out)
{
	char path[64], *text = NULL;
	int fd, err;

	out->maps = NULL;
	out->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = read_all(fd, &text);
	close(fd);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	err = procmaps__parse(text, exec_only, out);
	free(text);
	return err;
}

/* Open path and fstat it; if want_ino, only as that inode. fd or -errno. */
static int open_checked(const char *path, uint64_t want_ino, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st))
		err = -errno;
	else if (want_ino && st->st_ino != want_ino)
		err = -ESTALE;
	else
		return fd;
	close(fd);
	return err;
}

int procmaps__open(uint32_t tgid, const struct procmap *m, struct stat *st)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", tgid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open_checked(path, 0, st);
	if (fd >= 0 || m->path[0] != '/')
		return fd;
	snprintf(path, sizeof(path), "/proc/%u/root%s", tgid, m->path);
	fd = open_checked(path, m->inode, st);
	if (fd < 0 && m->inode)
		fd = open_checked(m->path, m->inode, st);
	return fd;
}

const struct procmap *procmaps__find(const struct procmaps *m, uint64_t addr)
{
	size_t i;

	if (!m)
		return NULL;
	/* The last mapping with start <= addr. */
	i = UPPER_BOUND(m->maps, m->n, start, addr);
	if (!i)
		return NULL;
	const struct procmap *p = &m->maps[i - 1];
	return addr < p->end ? p : NULL;
}

void procmaps__free(struct procmaps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->maps[i].path);
	free(m->maps);
	m->maps = NULL;
	m->n = 0;
}
