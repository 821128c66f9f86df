/* procsyms.c — see procsyms.h. */
#include "procsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "procs.h"

#define VDSO_MAX (1u << 20)

bool procsyms__other_mntns(uint32_t tgid, uint32_t mntns)
{
	/* Ours, looked up once: pmubpf never changes namespace, and this
	 * runs at every new process (a path walk per stat under churn). */
	static struct stat self;
	static int have_self; /* 0 unknown, 1 known, -1 unreadable */
	char path[64];
	struct stat other;
	int h = __atomic_load_n(&have_self, __ATOMIC_ACQUIRE);

	if (!h) {
		h = stat("/proc/self/ns/mnt", &self) ? -1 : 1;
		__atomic_store_n(&have_self, h, __ATOMIC_RELEASE);
	}
	if (h > 0 && mntns)
		return self.st_ino != mntns;
	snprintf(path, sizeof(path), "/proc/%u/ns/mnt", tgid);
	if (h < 0 || stat(path, &other))
		return false;
	return self.st_ino != other.st_ino || self.st_dev != other.st_dev;
}

/* Our own vDSO's length, from our maps, once (0: none found). */
static size_t own_vdso_len(const void **start)
{
	static size_t len;
	static const void *at;
	static int done;

	if (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		struct procmaps m = { 0 };

		if (procmaps__read_text(getpid(), true, &m) == 0)
			for (size_t i = 0; i < m.n; i++)
				if (!strcmp(m.maps[i].path, "[vdso]")) {
					at = (const void *)(uintptr_t)m.maps[i].start;
					len = m.maps[i].end - m.maps[i].start;
				}
		procmaps__free(&m);
		__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	}
	*start = at;
	return len;
}

/* Our own vDSO as an object of sc: hashed once, not at every call. */
static struct elfobj *own_vdso(struct symcache *sc, size_t len, struct vdso_memo *memo)
{
	struct symcache_stats st;
	const void *own;

	if (own_vdso_len(&own) != len)
		return NULL; /* another ABI's: left unnamed */
	if (!memo)
		return symcache__get_mem(sc, own, len);
	symcache__stats(sc, &st);
	if (!memo->obj || memo->sc != sc || memo->evicted != st.evicted) {
		memo->obj = symcache__get_mem(sc, own, len);
		memo->sc = sc;
		memo->evicted = st.evicted;
	}
	return memo->obj;
}

struct elfobj *procsyms__vdso(struct symcache *sc, uint32_t tgid,
			      const struct procmap *m, struct vdso_memo *memo)
{
	size_t len = m->end - m->start;

	if (!len || len > VDSO_MAX)
		return NULL;
	/* The kernel maps one image into every process of an ABI, ours
	 * too: one of our length is ours, not read and hashed again at
	 * every new process (4.5% of the loop's CPU under churn). Another
	 * ABI's image (i386's: another length) is read. An x32 process,
	 * whose image could have our length, would be named with ours:
	 * distributions build without x32 syscalls. */
	struct elfobj *own = own_vdso(sc, len, memo);

	if (own)
		return own;
	if (tgid) {
		void *buf = malloc(len);
		struct elfobj *o = NULL;

		if (!buf)
			return NULL;
		struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)m->start, len };
		ssize_t n = process_vm_readv((pid_t)tgid, &local, 1, &remote, 1, 0);
		if (n == (ssize_t)len)
			o = symcache__get_mem(sc, buf, len);
		free(buf);
		return o;
	}
	return NULL;
}

static void jit_read(struct proc *pr, bool if_changed)
{
	struct perfmap *m = NULL;

	int err;

	pr->jit_read_ms = mono_ms();
	err = perfmap__read(&pr->jit_src, if_changed, &m);
	if (err == 0) {
		perfmap__free(pr->jit);
		pr->jit = m;
	} else if (err == -EPERM || err == -EINVAL || err == -EFBIG) {
		pr->jit_refused = err; /* procs.c counts it */
	}
}

/* Might pr run JIT code: an anonymous (or memfd, as double-mapping JITs
 * use) executable mapping, or a map seen? */
static bool jit_candidate(const struct proc *pr)
{
	if (pr->jit)
		return true;
	for (size_t i = 0; i < pr->maps.n; i++) {
		const char *path = pr->maps.maps[i].path;

		if (!path[0] || !strncmp(path, "[anon", 5) || !strncmp(path, "/memfd:", 7))
			return true;
	}
	return false;
}

/* Where pr's perf map is (its uid, pid namespace: /proc/PID/status, which
 * is costly to generate), found only once pr may run JIT code: most
 * processes never do, and under process churn reading every process's
 * status was a tenth of pmubpf's CPU. */
static void jit_source(struct proc *pr)
{
	if (!pr->jit_src.known && jit_candidate(pr) &&
	    perfmap__source(pr->via, pr->other_mntns, &pr->jit_src) == 0)
		jit_read(pr, false);
}

void procsyms__jit_snapshot(struct proc *pr)
{
	jit_source(pr);
}

void procsyms__jit_refresh(struct proc *pr)
{
	if (pr->jit_src.known)
		jit_read(pr, true);
	else
		jit_source(pr); /* new anonymous executable memory, maybe */
}

void procsyms__jit_poll(struct proc *pr, int64_t now)
{
	char path[32];

	if (pr->jit_src.gone || now - pr->jit_read_ms < PROCSYMS_JIT_POLL_MS)
		return;
	if (!pr->jit_src.known) {
		pr->jit_read_ms = now;
		jit_source(pr);
		return;
	}
	if (!jit_candidate(pr)) {
		pr->jit_read_ms = now; /* look again in a while */
		return;
	}
	snprintf(path, sizeof(path), "/proc/%u", pr->via);
	if (access(path, F_OK)) {
		pr->jit_src.gone = true;
		return;
	}
	jit_read(pr, true);
}

const struct perfmap_sym *procsyms__jit_lookup(struct proc *pr, uint64_t ip)
{
	const struct perfmap_sym *s = perfmap__lookup(pr->jit, ip);

	if (s || pr->jit_reads >= PROCSYMS_JIT_MAX_READS ||
	    mono_ms() - pr->jit_read_ms < PROCSYMS_JIT_REREAD_MS)
		return s;
	pr->jit_reads++;
	if (pr->jit_src.known)
		jit_read(pr, true);
	else
		jit_source(pr);
	return perfmap__lookup(pr->jit, ip);
}

void procsyms__release(struct proc *pr)
{
	perfmap__free(pr->jit);
	pr->jit = NULL;
}
