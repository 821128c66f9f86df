/* procmaps.c — read /proc/PID/maps into a sorted table of mappings.
 *
 * Symbolization input, first stage: when the BPF side reports a process it
 * has not seen, the loader snapshots its maps here, so that user frames can
 * still be turned into (object, file offset) after the process has exited.
 * The elfsym cache then maps each object's file offsets to symbols.
 *
 * Two readers. The PROCMAP_QUERY ioctl (Linux 6.11+) asks the kernel for
 * the executable VMAs only, one call each, already as numbers, with each
 * file's build-id: the text prints every VMA to be parsed here (for
 * bash, 23-29 µs of CPU against 6.5 µs, read at each new process under
 * churn), and the build-id finds a cached object without opening its
 * file (docs/architecture.md, "Cost under process churn"). The text
 * stays as the fallback for older kernels, parsed by hand (no sscanf)
 * so that every field is checked and a path may contain spaces;
 * malformed lines are skipped, never trusted.
 */
#include "procmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/sorted.h"
#include "lib/grow.h"
#include "lib/hex.h"
#include "lib/envflag.h"

#define DELETED_SUFFIX " (deleted)"

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

/* m->path = a copy of name[0, len), less a " (deleted)" suffix (then
 * m->deleted). Both readers get the name from the same kernel function
 * (d_path, or "[vdso]" and the like), suffix included. 0 or -ENOMEM. */
static int set_path(struct procmap *m, const char *name, size_t len)
{
	size_t sl = sizeof(DELETED_SUFFIX) - 1;

	if (len >= sl && !memcmp(name + len - sl, DELETED_SUFFIX, sl)) {
		m->deleted = true;
		len -= sl;
	}
	m->path = strndup(name, len);
	return m->path ? 0 : -ENOMEM;
}

/* Parse one line [s, e) (no newline) into *m; m->path is allocated.
 * Returns 0, -EINVAL (malformed) or -ENOMEM. */
static int parse_line(const char *s, const char *e, struct procmap *m)
{
	const char *p = s;
	uint64_t maj, min;
	const char *perms;

	memset(m, 0, sizeof(*m));
	if (!hex_parse(&p, &m->start) || !expect(&p, '-') ||
	    !hex_parse(&p, &m->end) || !expect(&p, ' '))
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
	if (!expect(&p, ' ') || !hex_parse(&p, &m->pgoff) || !expect(&p, ' ') ||
	    !hex_parse(&p, &maj) || !expect(&p, ':') || !hex_parse(&p, &min) ||
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
	return set_path(m, p, (size_t)(e - p));
}

/* Snapshots are kept for the whole recording, one per process: the
 * growth room (64 entries, 3.5 KiB) was most of a short-lived process's
 * memory under churn. maps, shrunk to n entries if it can be. */
static struct procmap *fit(struct procmap *maps, size_t n, size_t cap)
{
	if (n < cap) {
		struct procmap *f = realloc(maps, (n ? n : 1) * sizeof(*maps));

		if (f)
			return f;
	}
	return maps;
}

void procmaps__fit(struct procmaps *m)
{
	m->maps = fit(m->maps, m->n, m->n + 1);
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
	out->maps = fit(maps, n, cap);
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

static int open_maps(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : errno == ENOENT ? -ESRCH : -errno;
}

int procmaps__read_text(pid_t pid, bool exec_only, struct procmaps *out)
{
	char *text = NULL;
	int fd, err;

	out->maps = NULL;
	out->n = 0;
	fd = open_maps(pid);
	if (fd < 0)
		return fd;
	err = read_all(fd, &text);
	close(fd);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	err = procmaps__parse(text, exec_only, out);
	free(text);
	return err;
}

/* The PROCMAP_QUERY ioctl on /proc/PID/maps, Linux 6.11's
 * include/uapi/linux/fs.h: Debian bookworm's headers (Linux 6.1) lack
 * it, so the ABI is spelled out here under our own names. One call
 * returns the first VMA at or after query_addr that has the asked
 * properties: the kernel skips the others, and nothing is printed or
 * parsed. */
struct pmubpf_procmap_query {
	uint64_t size;        /* sizeof this struct: the ABI's version */
	uint64_t query_flags; /* in: QF_* */
	uint64_t query_addr;  /* in */
	uint64_t vma_start, vma_end; /* out */
	uint64_t vma_flags;   /* out: QF_READ..QF_SHARED */
	uint64_t vma_page_size;
	uint64_t vma_offset;  /* file offset of vma_start (0: no file) */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t vma_name_size; /* in: buffer size; out: name length + 1, or 0 */
	uint32_t build_id_size; /* in/out; 0: not asked */
	uint64_t vma_name_addr; /* in: user buffer */
	uint64_t build_id_addr; /* in */
};
_Static_assert(sizeof(struct pmubpf_procmap_query) == 104, "PROCMAP_QUERY ABI is 104 bytes");
#define PMUBPF_PROCMAP_QUERY _IOWR('f', 17, struct pmubpf_procmap_query)
#define QF_EXEC 0x04
#define QF_COVERING_OR_NEXT 0x10

/* Every VMA (exec_only: executable ones) of the process behind maps fd,
 * in address order. The name is d_path's, as in the text: " (deleted)"
 * included, no "\012" escaping of a newline in a path (the text has it,
 * and that path opens nothing anyway). The one VMA the text shows that
 * this does not is x86's [vsyscall]: a gate page outside the process's
 * VMA tree, which the kernel emulates, so no sample's user IP is there. */
static int query_all(int fd, bool exec_only, struct procmaps *out)
{
	struct procmap *maps = NULL;
	size_t n = 0, cap = 0;
	char name[PATH_MAX];
	uint8_t bid[64]; /* room past the 20 bytes: a longer one is dropped, not an error */
	uint64_t addr = 0;
	int err = 0;

	for (;;) {
		struct pmubpf_procmap_query q = {
			.size = sizeof(q),
			.query_flags = QF_COVERING_OR_NEXT | (exec_only ? QF_EXEC : 0),
			.query_addr = addr,
			.vma_name_size = sizeof(name),
			.vma_name_addr = (uint64_t)(uintptr_t)name,
			/* Only for code: what the object cache is asked by. */
			.build_id_size = exec_only ? sizeof(bid) : 0,
			.build_id_addr = exec_only ? (uint64_t)(uintptr_t)bid : 0,
		};
		struct procmap m = { 0 };

		if (ioctl(fd, PMUBPF_PROCMAP_QUERY, &q)) {
			err = errno == ENOENT ? 0 : -errno; /* ENOENT: no more */
			break;
		}
		if (q.vma_end <= q.vma_start || q.vma_start < addr) {
			err = -EINVAL; /* never seen: it would loop */
			break;
		}
		m.start = q.vma_start;
		m.end = q.vma_end;
		m.pgoff = q.vma_offset;
		m.inode = q.inode;
		m.dev_major = q.dev_major;
		m.dev_minor = q.dev_minor;
		m.exec = q.vma_flags & QF_EXEC;
		if (q.build_id_size && q.build_id_size <= sizeof(m.build_id)) {
			m.build_id_len = (uint8_t)q.build_id_size;
			memcpy(m.build_id, bid, q.build_id_size);
		}
		if (set_path(&m, name, q.vma_name_size ? strnlen(name, q.vma_name_size - 1) : 0) ||
		    GROW(maps, cap, n, 1)) {
			free(m.path);
			err = -ENOMEM;
			break;
		}
		maps[n++] = m;
		addr = q.vma_end;
	}
	out->maps = maps;
	out->n = n;
	if (err) {
		procmaps__free(out);
		return err;
	}
	out->maps = fit(maps, n, cap);
	return 0;
}

int procmaps__query(pid_t pid, bool exec_only, struct procmaps *out)
{
	int fd, err;

	out->maps = NULL;
	out->n = 0;
	fd = open_maps(pid);
	if (fd < 0)
		return fd;
	err = query_all(fd, exec_only, out);
	close(fd);
	/* ENOTTY: a kernel before 6.11; EINVAL: one that knows no such
	 * flags. ESRCH: no address space (a kernel thread, or a process
	 * exiting): no mappings, as the text of such a process reads empty;
	 * a kernel thread is sampled too, and is not "gone". */
	if (err == -ESRCH)
		return 0;
	return err == -ENOTTY || err == -EINVAL ? -EOPNOTSUPP : err;
}

/* Which reader procmaps__read uses: the ioctl if this kernel answers it
 * for our own maps (asked once per run, remembered), unless the test and
 * debug switch PMUBPF_NO_PROCMAP_QUERY (set, not "0") asks for the text
 * (looked at each time: a few string compares, next to the syscalls). */
enum { READER_UNKNOWN, READER_QUERY, READER_TEXT };
static int kernel_reader;

static int pick_reader(void)
{
	int r;

	if (envflag_on(getenv("PMUBPF_NO_PROCMAP_QUERY")))
		return READER_TEXT;
	r = __atomic_load_n(&kernel_reader, __ATOMIC_RELAXED);
	if (r == READER_UNKNOWN) {
		struct procmaps self = { 0 };

		r = procmaps__query(getpid(), true, &self) == -EOPNOTSUPP ? READER_TEXT
									  : READER_QUERY;
		procmaps__free(&self);
		__atomic_store_n(&kernel_reader, r, __ATOMIC_RELAXED);
	}
	return r;
}

const char *procmaps__reader(void)
{
	return pick_reader() == READER_QUERY ? "PROCMAP_QUERY" : "text";
}

int procmaps__read(pid_t pid, bool exec_only, struct procmaps *out)
{
	if (pick_reader() == READER_QUERY) {
		int err = procmaps__query(pid, exec_only, out);

		/* -ESRCH (no such process), -ENOMEM, no permission: the
		 * text would fare no better. A name longer than PATH_MAX
		 * (ENAMETOOLONG) and the like: the text has it. */
		if (!err || err == -ESRCH || err == -ENOMEM || err == -EACCES || err == -EPERM)
			return err;
	}
	return procmaps__read_text(pid, exec_only, out);
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

	if (!tgid) /* gone: its path, as that inode */
		return m->path[0] == '/' && m->inode ? open_checked(m->path, m->inode, st) : -ENOENT;
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
