/* debuginfo.c — see debuginfo.h. Per object: a note taken at snapshot,
 * then at first lookup a search in a fixed order (own DWARF; a debug
 * file found in the process's namespace; by build-id in each debug
 * directory; by debuglink; debuginfod), and MiniDebugInfo for symbols
 * when no debug file has them. Debug files' symbol tables live in a
 * second symcache: they share their binary's build-id, so the first
 * cache would take them for the binary itself.
 */
#include "debuginfo.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "debugcache.h"
#include "elfutil.h"
#include "lib/grow.h"

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"
#define MAX_DIRS        16
#define MAX_UNXZ        (256u << 20) /* MiniDebugInfo decompressed cap */
#define MAX_XZ_MEM      (64u << 20)  /* xz decoder memory cap */
#define MAX_DEBUGDATA   (64u << 20)  /* .gnu_debugdata section cap */
#define FD_RESERVE      256          /* fds left for everything else */
#define DEBUGINFOD_BUDGET_NS (60LL * 1000000000) /* all queries of a run */

struct debuginfo {
	char *dirs[MAX_DIRS + 1];    /* user dirs, then /usr/lib/debug */
	int ndirs;
	struct symcache *syms;       /* debug files' and MiniDebugInfo's tables */
	struct debugcache *cache;    /* uncompressed copies (NULL: off) */
	size_t fds_kept, fds_max;
	void *dl;                    /* libdebuginfod */
	debuginfod_client *client;
	int64_t debuginfod_ns;       /* time spent asking, against the budget */
	debuginfod_client *(*d_begin)(void);
	int (*d_find)(debuginfod_client *, const unsigned char *, int, char **);
	void (*d_end)(debuginfod_client *);
	struct debuginfo_stats st;
};

struct objdbg {
	struct debuginfo *ctx;
	struct elfobj *obj;
	int bin_fd;          /* binary with DWARF or MiniDebugInfo, until resolved */
	int ns_fd;           /* debug file inside the process's namespace */
	char *bindir;        /* binary's directory as its process sees it */
	char *debuglink;     /* .gnu_debuglink name, NULL if none */
	uint32_t crc;
	bool has_dwarf, has_debugdata, resolved;
	struct dwarfobj *dw;
	struct elfobj *dbgsyms;  /* debug file's symbols */
	struct elfobj *minisyms; /* MiniDebugInfo's symbols */
};

/* --- context ------------------------------------------------------------ */

static void load_debuginfod(struct debuginfo *dbg)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (!urls || !*urls)
		return;
	/* NODELETE: libdebuginfod starts libcurl (and its TLS library),
	 * whose global state lives until exit; unloading them under it at
	 * debuginfo__free leaked that state (LeakSanitizer, make SANITIZE=1)
	 * and is not safe with their exit handlers. */
	dbg->dl = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!dbg->dl)
		return;
	*(void **)&dbg->d_begin = dlsym(dbg->dl, "debuginfod_begin");
	*(void **)&dbg->d_find = dlsym(dbg->dl, "debuginfod_find_debuginfo");
	*(void **)&dbg->d_end = dlsym(dbg->dl, "debuginfod_end");
	/* A profile should not wait minutes on a slow server: 10 s per
	 * connection, 60 s per download, 60 s for the whole run. */
	setenv(DEBUGINFOD_TIMEOUT_ENV_VAR, "10", 0);
	setenv(DEBUGINFOD_MAXTIME_ENV_VAR, "60", 0);
	if (dbg->d_begin && dbg->d_find && dbg->d_end)
		dbg->client = dbg->d_begin();
}

struct debuginfo *debuginfo__new(const char *const *dirs, int ndirs)
{
	struct debuginfo *dbg = calloc(1, sizeof(*dbg));
	struct rlimit rl;

	if (!dbg)
		return NULL;
	for (int i = 0; i < ndirs && dbg->ndirs < MAX_DIRS; i++)
		if (!(dbg->dirs[dbg->ndirs++] = strdup(dirs[i])))
			goto nomem;
	if (!(dbg->dirs[dbg->ndirs++] = strdup(SYSTEM_DEBUG_DIR)))
		goto nomem;
	if (!(dbg->syms = symcache__new()))
		goto nomem;
	/* Kept fds: half of what the soft limit leaves after a reserve (the
	 * limit is not raised: a command we start would inherit it). */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		dbg->fds_max = rl.rlim_cur > 2 * FD_RESERVE ? (rl.rlim_cur - FD_RESERVE) / 2 : 0;
	dbg->cache = debugcache__new();
	load_debuginfod(dbg);
	return dbg;
nomem:
	debuginfo__free(dbg);
	errno = ENOMEM;
	return NULL;
}

void debuginfo__free(struct debuginfo *dbg)
{
	if (!dbg)
		return;
	for (int i = 0; i < dbg->ndirs; i++)
		free(dbg->dirs[i]);
	symcache__free(dbg->syms);
	debugcache__free(dbg->cache);
	if (dbg->client)
		dbg->d_end(dbg->client);
	if (dbg->dl)
		dlclose(dbg->dl);
	free(dbg);
}

void debuginfo__stats(const struct debuginfo *dbg, struct debuginfo_stats *st)
{
	*st = dbg->st;
	debugcache__stats(dbg->cache, &st->cache);
}

/* --- candidate files ---------------------------------------------------- */

static void objdbg_free(void *p)
{
	struct objdbg *od = p;

	if (!od)
		return;
	if (od->bin_fd >= 0)
		close(od->bin_fd), od->ctx->fds_kept--;
	if (od->ns_fd >= 0)
		close(od->ns_fd), od->ctx->fds_kept--;
	dwarf__free(od->dw);
	free(od->bindir);
	free(od->debuglink);
	free(od);
}

/* Open path if it is an ELF file whose build-id is bid (when bid is
 * non-empty). Returns an fd or -1. */
static int open_matching(const char *path, const char *bid)
{
	char got[2 * ELFUTIL_BUILD_ID_MAX + 1];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	Elf *e;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    !(e = elf_begin(fd, ELF_C_READ, NULL))) {
		close(fd);
		return -1;
	}
	elfutil__build_id(e, got);
	bool ok = elf_kind(e) == ELF_K_ELF && (!*bid || !strcmp(got, bid));
	elf_end(e);
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

int debuginfo__file_crc(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	if (n < 0)
		return -errno;
	*crc = (uint32_t)c;
	return 0;
}

/* A debuglink candidate: an ELF file whose CRC32 is the link's. */
static int open_debuglink(struct debuginfo *dbg, const char *path, uint32_t want)
{
	int fd = open_matching(path, "");
	uint32_t crc;

	if (fd < 0)
		return -1;
	if (debuginfo__file_crc(fd, &crc) || crc != want) {
		dbg->st.crc_mismatch++;
		close(fd);
		return -1;
	}
	return fd;
}

/* Search one root ("" for ours, "/proc/PID/root" for a process's): by
 * build-id in each dir, then by debuglink. Returns an fd or -1. */
static int search(struct debuginfo *dbg, const struct objdbg *od, const char *root,
		  bool *by_link)
{
	const char *bid = elfobj__build_id(od->obj);
	char path[PATH_MAX];
	int fd;

	*by_link = false;
	for (int i = 0; *bid && bid[1] && i < dbg->ndirs; i++) {
		snprintf(path, sizeof(path), "%s%s/.build-id/%.2s/%s.debug", root,
			 dbg->dirs[i], bid, bid + 2);
		if ((fd = open_matching(path, bid)) >= 0)
			return fd;
	}
	if (!od->debuglink)
		return -1;
	*by_link = true;
	const char *dir = od->bindir ? od->bindir : "";
	if (od->bindir) {
		snprintf(path, sizeof(path), "%s%s/%s", root, dir, od->debuglink);
		if ((fd = open_debuglink(dbg, path, od->crc)) >= 0)
			return fd;
		snprintf(path, sizeof(path), "%s%s/.debug/%s", root, dir, od->debuglink);
		if ((fd = open_debuglink(dbg, path, od->crc)) >= 0)
			return fd;
	}
	for (int i = 0; i < dbg->ndirs; i++) {
		snprintf(path, sizeof(path), "%s%s%s/%s", root, dbg->dirs[i], dir, od->debuglink);
		if ((fd = open_debuglink(dbg, path, od->crc)) >= 0)
			return fd;
		snprintf(path, sizeof(path), "%s%s/%s", root, dbg->dirs[i], od->debuglink);
		if ((fd = open_debuglink(dbg, path, od->crc)) >= 0)
			return fd;
	}
	return -1;
}

/* --- snapshot time ------------------------------------------------------ */

static bool keep_fd(struct debuginfo *dbg)
{
	if (dbg->fds_kept >= dbg->fds_max) {
		dbg->st.fd_budget++;
		return false;
	}
	dbg->fds_kept++;
	return true;
}

void debuginfo__note(struct debuginfo *dbg, struct elfobj *o, int bin_fd,
		     uint32_t tgid, const char *path, bool other_ns)
{
	struct objdbg *od;
	GElf_Shdr sh;
	GElf_Word crc = 0;
	Elf *e = NULL;

	if (!dbg || !o || elfobj__aux(o) || !(od = calloc(1, sizeof(*od)))) {
		if (bin_fd >= 0)
			close(bin_fd);
		return;
	}
	od->ctx = dbg;
	od->obj = o;
	od->bin_fd = od->ns_fd = -1;
	elfobj__set_aux(o, od, objdbg_free);
	dbg->st.objects++;
	if (path && path[0] == '/') {
		const char *slash = strrchr(path, '/');
		od->bindir = strndup(path, (size_t)(slash - path));
	}
	if (bin_fd >= 0 && (e = elf_begin(bin_fd, ELF_C_READ, NULL)) &&
	    elf_kind(e) == ELF_K_ELF) {
		const char *link = dwelf_elf_gnu_debuglink(e, &crc);

		if (link && *link && !strchr(link, '/') && strlen(link) < NAME_MAX) {
			od->debuglink = strdup(link);
			od->crc = crc;
		}
		od->has_dwarf = elfutil__has_dwarf(e);
		od->has_debugdata = elfutil__section(e, ".gnu_debugdata", &sh) &&
				    sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
	}
	if (e)
		elf_end(e);
	if (bin_fd >= 0 && (od->has_dwarf || od->has_debugdata) && keep_fd(dbg))
		od->bin_fd = bin_fd;
	else if (bin_fd >= 0)
		close(bin_fd);
	if (other_ns && !od->has_dwarf) {
		char root[64];
		bool by_link;
		int fd;

		snprintf(root, sizeof(root), "/proc/%u/root", tgid);
		fd = search(dbg, od, root, &by_link);
		if (fd >= 0 && keep_fd(dbg))
			od->ns_fd = fd;
		else if (fd >= 0)
			close(fd);
	}
}

/* --- lookup time -------------------------------------------------------- */

void *debuginfo__unxz(const void *in, size_t len, size_t *outlen)
{
	lzma_stream s = LZMA_STREAM_INIT;
	size_t cap = 0, n = 0;
	unsigned char *out = NULL;
	lzma_ret r;

	if (lzma_stream_decoder(&s, MAX_XZ_MEM, 0) != LZMA_OK) {
		errno = ENOMEM;
		return NULL;
	}
	s.next_in = in;
	s.avail_in = len;
	do {
		/* First a guess from the input size, then doubling, never
		 * past MAX_UNXZ (an xz bomb is refused, not allocated). */
		if (n == cap && GROW_UPTO(out, cap, n, out ? 1 : len * 4 + 4096, MAX_UNXZ)) {
			r = LZMA_MEMLIMIT_ERROR;
			break;
		}
		s.next_out = out + n;
		s.avail_out = cap - n;
		r = lzma_code(&s, LZMA_FINISH);
		n = cap - s.avail_out;
	} while (r == LZMA_OK);
	lzma_end(&s);
	if (r != LZMA_STREAM_END || !n) {
		free(out);
		errno = r == LZMA_MEMLIMIT_ERROR ? EFBIG : EINVAL;
		return NULL;
	}
	*outlen = n;
	return out;
}

static void load_minidebuginfo(struct objdbg *od)
{
	GElf_Shdr sh;
	Elf *e = elf_begin(od->bin_fd, ELF_C_READ, NULL);
	Elf_Scn *scn = e ? elfutil__section(e, ".gnu_debugdata", &sh) : NULL;
	Elf_Data *d = scn && sh.sh_size <= MAX_DEBUGDATA ? elf_rawdata(scn, NULL) : NULL;
	size_t n;
	void *img;

	if (d && d->d_buf && (img = debuginfo__unxz(d->d_buf, d->d_size, &n))) {
		od->minisyms = symcache__get_mem(od->ctx->syms, img, n);
		free(img);
		od->ctx->st.minidebuginfo += od->minisyms != NULL;
	}
	if (e)
		elf_end(e);
}

static int from_debuginfod(struct debuginfo *dbg, const char *bid)
{
	char *path = NULL;
	int fd;

	struct timespec t0, t1;

	if (!dbg->client || !*bid || dbg->debuginfod_ns >= DEBUGINFOD_BUDGET_NS)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = dbg->d_find(dbg->client, (const unsigned char *)bid, 0, &path);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	dbg->debuginfod_ns += (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	free(path);
	return fd >= 0 ? fd : -1;
}

static void resolve(struct objdbg *od)
{
	struct debuginfo *dbg = od->ctx;
	const char *bid = elfobj__build_id(od->obj);
	int fd = -1;
	bool by_link = false, ours = false;

	od->resolved = true;
	if (od->has_dwarf && od->bin_fd >= 0) {
		int dup_fd = fcntl(od->bin_fd, F_DUPFD_CLOEXEC, 0);

		od->dw = dup_fd >= 0 ? dwarf__open_fd(dup_fd) : NULL;
		dbg->st.own_dwarf += od->dw != NULL;
	}
	if (!od->dw) {
		if (od->ns_fd >= 0) {
			fd = od->ns_fd;
			od->ns_fd = -1;
			dbg->fds_kept--;
			dbg->st.in_namespace++;
		} else if ((fd = search(dbg, od, "", &by_link)) >= 0) {
			*(by_link ? &dbg->st.by_debuglink : &dbg->st.by_build_id) += 1;
			ours = true;
		} else if ((fd = from_debuginfod(dbg, bid)) >= 0) {
			dbg->st.by_debuginfod++;
			ours = true;
		}
	}
	/* Only debug files of our own file system go through the cache: a
	 * copy is kept for everyone by its build-id, and a binary or another
	 * namespace's file may claim any build-id it likes. */
	if (ours)
		fd = debugcache__swap(dbg->cache, fd, bid);
	if (fd >= 0) {
		int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);

		od->dbgsyms = dup_fd >= 0 ? symcache__get_fd(dbg->syms, dup_fd, 0, 0) : NULL;
		od->dw = dwarf__open_fd(fd);
	}
	if (!od->dbgsyms && od->has_debugdata && od->bin_fd >= 0)
		load_minidebuginfo(od);
	if (od->bin_fd >= 0) {
		close(od->bin_fd);
		od->bin_fd = -1;
		dbg->fds_kept--;
	}
}

static void mark_debug_objects(struct elfobj *o, void *ctx)
{
	struct objdbg *od = elfobj__aux(o);

	(void)ctx;
	if (od) {
		symcache__mark(od->dbgsyms);
		symcache__mark(od->minisyms);
	}
}

void debuginfo__sweep(struct debuginfo *dbg, struct symcache *main)
{
	if (!dbg)
		return;
	symcache__mark_begin(dbg->syms);
	symcache__for_each(main, mark_debug_objects, NULL);
	symcache__sweep(dbg->syms, 0);
}

static struct objdbg *get(struct elfobj *o)
{
	struct objdbg *od = o ? elfobj__aux(o) : NULL;

	/* Only our own records hang there: objdbg_free marks them. */
	if (!od || od->obj != o)
		return NULL;
	if (!od->resolved)
		resolve(od);
	return od;
}

struct dwarfobj *debuginfo__dwarf(struct elfobj *o)
{
	struct objdbg *od = get(o);

	return od ? od->dw : NULL;
}

void debuginfo__release(struct elfobj *o)
{
	struct objdbg *od = o ? elfobj__aux(o) : NULL;

	if (od && od->obj == o)
		dwarf__release(od->dw);
}

/* The better of two answers: the one starting closer below vaddr. */
static const struct elfsym *closer(const struct elfsym *a, const struct elfsym *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return b->addr > a->addr ? b : a;
}

const struct elfsym *debuginfo__symbol(struct elfobj *o, uint64_t vaddr)
{
	struct objdbg *od = get(o);
	const struct elfsym *s = NULL;

	if (od && od->dbgsyms && (s = elfobj__lookup(od->dbgsyms, vaddr)))
		return s; /* a debug file's table is complete */
	if (od && od->minisyms) /* MiniDebugInfo holds what .dynsym lacks */
		s = elfobj__lookup(od->minisyms, vaddr);
	return closer(s, elfobj__lookup(o, vaddr));
}
