/* debugcache.c — see debugcache.h. */
#include "debugcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "elfutil.h"
#include "lib/grow.h"

#define SUFFIX         ".debug"
#define TMP_STALE_S    600         /* a temporary older than this was abandoned */
#define MAX_SECTIONS   4096
#define MAX_HOLES      64

struct debugcache {
	char *dir;
	uint64_t max_bytes, min_bytes;
	int dfd;          /* -1 until first needed */
	bool tried;       /* the directory was tried (dfd, or st.refused) */
	struct debugcache_stats st;
};

struct debugcache *debugcache__new_at(const char *dir, uint64_t max_bytes, uint64_t min_bytes)
{
	struct debugcache *c = calloc(1, sizeof(*c));

	if (!c || !(c->dir = strdup(dir))) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->max_bytes = max_bytes;
	c->min_bytes = min_bytes;
	c->dfd = -1;
	elf_version(EV_CURRENT);
	return c;
}

struct debugcache *debugcache__new(void)
{
	const char *v = getenv("PMUBPF_DEBUG_CACHE");

	if (v && !strcmp(v, "0"))
		return NULL;
	return debugcache__new_at(v && *v ? v : DEBUGCACHE_DEFAULT_DIR, DEBUGCACHE_MAX_BYTES,
				  DEBUGCACHE_MIN_BYTES);
}

void debugcache__free(struct debugcache *c)
{
	if (!c)
		return;
	if (c->dfd >= 0)
		close(c->dfd);
	free(c->dir);
	free(c);
}

void debugcache__stats(const struct debugcache *c, struct debugcache_stats *st)
{
	if (c)
		*st = c->st;
	else
		*st = (struct debugcache_stats){ .off = 1 };
}

/* --- the directory ------------------------------------------------------ */

/* mkdir -p of dir's missing components, each 0700. */
static void make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return;
	memcpy(path, dir, n + 1);
	for (char *p = path + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			(void)mkdir(path, 0700);
			*p = '/';
		}
	(void)mkdir(path, 0700);
}

/* The directory's fd, made and checked at the first need: ours alone
 * (owner our euid, no group or other write), reached without following a
 * link at its last component. -1 when refused (st.refused says why). */
static int dir_fd(struct debugcache *c)
{
	struct stat st;
	int fd;

	if (c->tried)
		return c->dfd;
	c->tried = true;
	make_dirs(c->dir);
	fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		c->st.refused = errno ? errno : EACCES;
		return -1;
	}
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		c->st.refused = EPERM;
		return -1;
	}
	return c->dfd = fd;
}

/* --- what a file holds -------------------------------------------------- */

struct shape {
	char bid[2 * ELFUTIL_BUILD_ID_MAX + 1];
	uint64_t compressed;  /* bytes of compressed sections on disk */
	uint64_t inflated;    /* the same sections inflated */
	bool bad;             /* a section lies outside the file */
};

static bool read_shape(Elf *e, uint64_t file_size, struct shape *sh)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shnum;

	memset(sh, 0, sizeof(*sh));
	/* A section header table cut off reads as none (libelf). */
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || elf_getshdrnum(e, &shnum) ||
	    shnum < 2 || shnum >= SHN_LORESERVE || shnum > MAX_SECTIONS)
		return false;
	elfutil__build_id(e, sh->bid);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr s;
		GElf_Chdr ch;

		if (!gelf_getshdr(scn, &s))
			return false;
		if (s.sh_type == SHT_NOBITS)
			continue;
		if (s.sh_offset > file_size || s.sh_size > file_size - s.sh_offset)
			sh->bad = true;
		if (!(s.sh_flags & SHF_COMPRESSED))
			continue;
		sh->compressed += s.sh_size;
		if (gelf_getchdr(scn, &ch))
			sh->inflated += ch.ch_size;
		else
			sh->bad = true;
	}
	return true;
}

/* fd's shape, from its headers alone. */
static bool shape_of(int fd, struct shape *sh)
{
	struct stat st;
	Elf *e;
	bool ok;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(e = elf_begin(fd, ELF_C_READ, NULL)))
		return false;
	ok = read_shape(e, (uint64_t)st.st_size, sh);
	elf_end(e);
	return ok;
}

/* --- a copy ------------------------------------------------------------- */

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

/* Where compressed sections lay: libelf fills those bytes of the copy
 * with zeros; their whole pages go back to the file system (the copy's
 * disk space, not its size). */
struct holes { size_t n; uint64_t off[MAX_HOLES], len[MAX_HOLES]; };

static void punch_holes(int fd, const struct holes *h)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < h->n; i++) {
		uint64_t lo = align_up(h->off[i], pg), hi = (h->off[i] + h->len[i]) / pg * pg;

		if (hi > lo)
			(void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo,
					(off_t)(hi - lo));
	}
}

/* Write in's ELF to out_fd with every compressed section inflated. The
 * other sections keep their offsets (the program headers, a PT_NOTE's
 * included, stay true); inflated ones follow the file's old end, then
 * the section headers. 0 or -1. */
static int write_inflated(Elf *in, int out_fd)
{
	GElf_Ehdr eh;
	Elf *out = NULL;
	Elf_Scn *scn = NULL;
	struct holes holes = { 0 };
	size_t phnum = 0;
	uint64_t end;
	int ret = -1;

	if (!gelf_getehdr(in, &eh) || elf_getphdrnum(in, &phnum) ||
	    !(out = elf_begin(out_fd, ELF_C_WRITE, NULL)) || !gelf_newehdr(out, gelf_getclass(in)))
		goto out;
	elf_flagelf(out, ELF_C_SET, ELF_F_LAYOUT);
	if (phnum && !gelf_newphdr(out, phnum))
		goto out;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(in, (int)i, &ph) || !gelf_update_phdr(out, (int)i, &ph))
			goto out;
	}
	end = eh.e_phoff + (uint64_t)phnum * eh.e_phentsize;
	if (end < eh.e_ehsize)
		end = eh.e_ehsize;
	while ((scn = elf_nextscn(in, scn))) {
		GElf_Shdr s;

		if (!gelf_getshdr(scn, &s))
			goto out;
		if (s.sh_type != SHT_NOBITS && !(s.sh_flags & SHF_COMPRESSED) &&
		    s.sh_offset + s.sh_size > end)
			end = s.sh_offset + s.sh_size;
	}
	while ((scn = elf_nextscn(in, scn))) {
		Elf_Scn *o = elf_newscn(out);
		Elf_Data *d, *od;
		GElf_Shdr s;

		if (!o || !gelf_getshdr(scn, &s))
			goto out;
		if (s.sh_type != SHT_NOBITS) {
			if (s.sh_flags & SHF_COMPRESSED) {
				if (holes.n < MAX_HOLES) {
					holes.off[holes.n] = s.sh_offset;
					holes.len[holes.n++] = s.sh_size;
				}
				if (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &s) ||
				    !(d = elf_getdata(scn, NULL)))
					goto out;
				end = align_up(end, s.sh_addralign);
				s.sh_offset = end;
				end += s.sh_size;
			} else if (!(d = elf_rawdata(scn, NULL))) {
				goto out;
			}
			if (!(od = elf_newdata(o)))
				goto out;
			od->d_buf = d->d_buf;
			od->d_size = d->d_size;
			od->d_type = d->d_type;
			od->d_version = d->d_version;
			od->d_off = 0;
			od->d_align = s.sh_addralign ? s.sh_addralign : 1;
		}
		if (!gelf_update_shdr(o, &s))
			goto out;
	}
	eh.e_shoff = align_up(end, gelf_getclass(in) == ELFCLASS64 ? 8 : 4);
	if (!gelf_update_ehdr(out, &eh) || elf_update(out, ELF_C_WRITE) < 0)
		goto out;
	punch_holes(out_fd, &holes);
	ret = 0;
out:
	if (out)
		elf_end(out);
	return ret;
}

/* fd is a usable copy of bid: a regular file of ours, its build-id bid,
 * every section inside it, none compressed. */
static bool copy_ok(int fd, const char *bid)
{
	struct shape sh;
	struct stat st;

	return !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	       shape_of(fd, &sh) && !sh.bad && !sh.compressed && !strcmp(sh.bid, bid);
}

/* A copy of bid in the directory that is what it says, else -1 (an
 * unusable one is removed). Its time is set to now: the eviction order. */
static int find_copy(struct debugcache *c, const char *name, const char *bid)
{
	int fd = openat(c->dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		return -1;
	if (fd >= 0 && copy_ok(fd, bid)) {
		(void)futimens(fd, NULL);
		return fd;
	}
	if (fd >= 0)
		close(fd);
	(void)unlinkat(c->dfd, name, 0);
	c->st.failed++;
	return -1;
}

static void evict(struct debugcache *c, const char *keep);

/* Write the copy of fd (whose build-id is bid) as name; its fd or -1. */
static int make_copy(struct debugcache *c, int fd, const char *name)
{
	char tmp[NAME_MAX + 1];
	Elf *in;
	int out, ret = -1;

	if (snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid()) >= (int)sizeof(tmp))
		return -1;
	out = openat(c->dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -1;
	if ((in = elf_begin(fd, ELF_C_READ, NULL))) {
		if (!write_inflated(in, out) && !fsync(out) && !renameat(c->dfd, tmp, c->dfd, name))
			ret = out;
		elf_end(in);
	}
	if (ret < 0) {
		close(out);
		(void)unlinkat(c->dfd, tmp, 0);
		return -1;
	}
	c->st.made++;
	evict(c, name);
	return ret;
}

int debugcache__swap(struct debugcache *c, int fd, const char *bid)
{
	char name[NAME_MAX + 1];
	struct shape sh;
	struct stat st;
	int copy;

	/* Trusted files only: what is kept is used for every file of bid. */
	if (!c || fd < 0 || !bid || !*bid || fstat(fd, &st) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022))
		return fd;
	if (!shape_of(fd, &sh) || sh.bad ||
	    !sh.compressed || sh.compressed < c->min_bytes || strcmp(sh.bid, bid))
		return fd;
	/* What the copy adds: nothing bigger than half the bound. */
	if (sh.inflated > c->max_bytes / 2 || dir_fd(c) < 0)
		return fd;
	snprintf(name, sizeof(name), "%s%s", bid, SUFFIX);
	if ((copy = find_copy(c, name, bid)) >= 0) {
		c->st.reused++;
		close(fd);
		return copy;
	}
	if ((copy = make_copy(c, fd, name)) < 0) {
		c->st.failed++;
		return fd;
	}
	/* A fresh read of what was written, checked like any copy. */
	if (lseek(copy, 0, SEEK_SET) || !copy_ok(copy, bid)) {
		close(copy);
		(void)unlinkat(c->dfd, name, 0);
		c->st.failed++;
		return fd;
	}
	close(fd);
	return copy;
}

/* --- the bound ---------------------------------------------------------- */

struct entry {
	char name[NAME_MAX + 1];
	uint64_t bytes;
	int64_t mtime;
};

static int by_age(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

/* Over the bound: remove the least recently used copies (never keep)
 * until a quarter of it is free. Abandoned temporaries go too. */
static void evict(struct debugcache *c, const char *keep)
{
	int fd = openat(c->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct entry *es = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;

		if (de->d_name[0] == '.' && len > 4 && !strcmp(de->d_name + len - 4, ".tmp")) {
			if (!fstatat(c->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
			    time(NULL) - st.st_mtime > TMP_STALE_S)
				(void)unlinkat(c->dfd, de->d_name, 0);
			continue;
		}
		if (len <= strlen(SUFFIX) || strcmp(de->d_name + len - strlen(SUFFIX), SUFFIX) ||
		    len > NAME_MAX || fstatat(c->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		total += (uint64_t)st.st_blocks * 512;
		if (GROW(es, cap, n, 1))
			break;
		memcpy(es[n].name, de->d_name, len + 1);
		es[n].bytes = (uint64_t)st.st_blocks * 512;
		es[n].mtime = (int64_t)st.st_mtime;
		n++;
	}
	closedir(d);
	if (total > c->max_bytes) {
		qsort(es, n, sizeof(*es), by_age);
		for (size_t i = 0; i < n && total > c->max_bytes / 4 * 3; i++) {
			if (!strcmp(es[i].name, keep) || unlinkat(c->dfd, es[i].name, 0))
				continue;
			total -= es[i].bytes;
			c->st.evicted++;
		}
	}
	free(es);
}
