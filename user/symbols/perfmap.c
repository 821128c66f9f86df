/* perfmap.c — see perfmap.h. The table is sorted by start address (line
 * order breaking ties, so the later line of a reused address wins) and
 * searched by binary search. The file is untrusted: size-capped, read
 * with O_NOFOLLOW, lines parsed strictly. */
#include "perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/sorted.h"
#include "lib/grow.h"

#define MAX_NAME 4096
#define OVERLAP_WALK 8

struct perfmap {
	struct perfmap_sym *v;
	size_t n;
	char *names;
};

struct ent {
	uint64_t start, size;
	size_t name_off, name_len, seq;
};

/* Strict hex field with optional 0x; advances *p past it. */
static bool hex_field(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end; s++, digits++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' :
			*s >= 'a' && *s <= 'f' ? *s - 'a' + 10 :
			*s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;
		if (d < 0)
			break;
		if (digits == 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || (s < end && *s != ' ' && *s != '\t'))
		return false;
	*out = v;
	*p = s;
	return true;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int perfmap__parse(const char *text, size_t len, struct perfmap **out)
{
	struct perfmap *m = calloc(1, sizeof(*m));
	struct ent *e = NULL;
	size_t n = 0, cap = 0, nbytes = 0;
	const char *p = text, *end = text + len;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	while (p < end && n < PERFMAP_MAX_SYMS) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p;
		uint64_t start, size;

		if (!eol)
			eol = end;
		if (hex_field(&q, eol, &start) && q < eol && (q++, hex_field(&q, eol, &size)) &&
		    q < eol && size && start + size > start) {
			while (q < eol && (*q == ' ' || *q == '\t'))
				q++;
			size_t nl = (size_t)(eol - q);
			while (nl && (q[nl - 1] == '\r' || q[nl - 1] == ' '))
				nl--;
			if (nl > MAX_NAME)
				nl = MAX_NAME;
			if (nl && !memchr(q, '\0', nl)) {
				if (GROW(e, cap, n, 1))
					goto nomem;
				e[n] = (struct ent){ start, size, (size_t)(q - text), nl, n };
				n++;
				nbytes += nl + 1;
			}
		}
		p = eol + 1;
	}
	if (n > 1)
		qsort(e, n, sizeof(*e), cmp_ent);
	m->v = malloc((n ? n : 1) * sizeof(*m->v));
	m->names = malloc(nbytes ? nbytes : 1);
	if (!m->v || !m->names)
		goto nomem;
	char *np = m->names;
	for (size_t i = 0; i < n; i++) {
		memcpy(np, text + e[i].name_off, e[i].name_len);
		np[e[i].name_len] = '\0';
		m->v[i] = (struct perfmap_sym){ e[i].start, e[i].size, np };
		np += e[i].name_len + 1;
	}
	m->n = n;
	free(e);
	*out = m;
	return 0;
nomem:
	free(e);
	perfmap__free(m);
	return -ENOMEM;
}

const struct perfmap_sym *perfmap__lookup(const struct perfmap *m, uint64_t addr)
{
	size_t lo;

	if (!m)
		return NULL;
	lo = UPPER_BOUND(m->v, m->n, start, addr);
	/* The latest entry at the closest start wins; older overlapping ones
	 * (a few back) cover what it does not. */
	for (size_t i = lo, k = 0; i-- > 0 && k <= OVERLAP_WALK; k++)
		if (addr - m->v[i].start < m->v[i].size)
			return &m->v[i];
	return NULL;
}

size_t perfmap__count(const struct perfmap *m)
{
	return m ? m->n : 0;
}

void perfmap__free(struct perfmap *m)
{
	if (!m)
		return;
	free(m->v);
	free(m->names);
	free(m);
}

int perfmap__source(uint32_t tgid, bool other_ns, struct perfmap_src *src)
{
	char path[64], line[256];
	FILE *f;

	memset(src, 0, sizeof(*src));
	src->tgid = src->nspid = tgid;
	src->same_mntns = !other_ns;
	snprintf(path, sizeof(path), "/proc/%u/status", tgid);
	if (!(f = fopen(path, "re")))
		return -errno;
	bool uid_seen = false;
	while (fgets(line, sizeof(line), f)) {
		unsigned a, b;

		if (sscanf(line, "Uid: %u %u", &a, &b) == 2) {
			src->uid = a;
			src->euid = b;
			uid_seen = true;
		} else if (!strncmp(line, "NStgid:", 7)) {
			/* Last field: the process's id in the innermost
			 * namespace (a thread's status says its process's). */
			char *last = strrchr(line, '\t');
			unsigned long v = last ? strtoul(last + 1, NULL, 10) : 0;
			if (v && v <= UINT32_MAX)
				src->nspid = (uint32_t)v;
		}
	}
	fclose(f);
	src->known = uid_seen;
	return uid_seen ? 0 : -EINVAL;
}

static int read_fd(struct perfmap_src *src, int fd, bool if_changed, struct perfmap **out)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t got = 0;
	int err;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_uid != 0 && st.st_uid != src->uid && st.st_uid != src->euid)
		return -EPERM; /* perf's rule: root's or the process owner's */
	if ((uint64_t)st.st_size > PERFMAP_MAX_BYTES)
		return -EFBIG;
	int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (if_changed && (uint64_t)st.st_size == src->size && mtime == src->mtime_ns)
		return -EALREADY;
	src->size = (uint64_t)st.st_size;
	src->mtime_ns = mtime;
	if (!(buf = malloc((size_t)st.st_size + 1)))
		return -ENOMEM;
	while (got < (size_t)st.st_size &&
	       (n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got)) > 0)
		got += (size_t)n;
	err = perfmap__parse(buf, got, out);
	free(buf);
	return err;
}

int perfmap__read(struct perfmap_src *src, bool if_changed, struct perfmap **out)
{
	char path[96];
	int fd, err;

	*out = NULL;
	if (!src->known)
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%u/root/tmp/perf-%u.map", src->tgid, src->nspid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	err = fd < 0 ? errno : 0;
	snprintf(path, sizeof(path), "/proc/%u", src->tgid);
	if (fd < 0 && src->same_mntns && access(path, F_OK)) {
		/* The process is gone (its /proc/PID/root with it). */
		snprintf(path, sizeof(path), "/tmp/perf-%u.map", src->nspid);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		err = fd < 0 ? errno : 0;
	}
	if (fd < 0)
		return err == ELOOP ? -EPERM : -err;
	err = read_fd(src, fd, if_changed, out);
	close(fd);
	return err;
}
