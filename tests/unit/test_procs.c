/* test_procs.c — the process registry (user/procs/procs.c,
 * procs_labels.c) on the test process itself and on children it starts.
 *
 * A snapshot of our own pid: comm, executable mappings with their ELF
 * objects, the main executable; a process gone before its snapshot; maps
 * re-read after a dlopen (a real, unattached BPF "seen" map says we are
 * still the same generation); the labels record this binary carries
 * (<pmubpf/labels.h>) found and published to a real slots map, and a
 * label set read out of our memory from a notice.
 */
#include <bpf/bpf.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pmubpf/labels.h>

#include "procs/procs.h"
#include "procs/procs_int.h"
#include "symbols/elfsym.h"
#include "testing.h"

/* libc's own qsort: under ASan the name qsort binds to the sanitizer's
 * interceptor, which lives elsewhere. */
static uint64_t libc_qsort(void)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *f = h ? dlsym(h, "qsort") : NULL;

	return (uint64_t)(uintptr_t)(f ? f : (void *)qsort);
}

/* The mapping of pr whose path ends in `tail`, or NULL. */
static const struct procmap *find_map(const struct proc *pr, const char *tail, size_t *idx)
{
	for (size_t i = 0; i < pr->maps.n; i++) {
		const char *p = pr->maps.maps[i].path;
		size_t lp = strlen(p), lt = strlen(tail);

		if (lp >= lt && !strcmp(p + lp - lt, tail)) {
			if (idx)
				*idx = i;
			return &pr->maps.maps[i];
		}
	}
	return NULL;
}

/* A child that has exited and been reaped: a pid of a process gone. */
static pid_t dead_child(void)
{
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	if (child > 0)
		waitpid(child, NULL, 0);
	return child;
}

static bool own_snapshot(void)
{
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	struct proc *pr = ps ? procs__get(ps, (uint32_t)getpid(), 3) : NULL;
	const struct procmap *m;
	struct stat st;
	size_t i;

	CHECK(pr);
	CHECK(pr->snapshotted && !pr->dead);
	CHECK_EQ_INT(pr->tgid, getpid());
	CHECK_EQ_INT(pr->pgen, 3);
	CHECK_STR(pr->comm, "test_procs");
	CHECK(procs__get(ps, (uint32_t)getpid(), 3) == pr); /* one record */
	/* Executable mappings only, sorted, each with its object. */
	for (i = 0; i < pr->maps.n; i++) {
		CHECK(pr->maps.maps[i].exec);
		CHECK(!i || pr->maps.maps[i - 1].start < pr->maps.maps[i].start);
	}
	CHECK((m = find_map(pr, "/test_procs", &i)));
	CHECK(pr->objs[i] != NULL);
	CHECK(m->start <= (uint64_t)(uintptr_t)own_snapshot && (uint64_t)(uintptr_t)own_snapshot < m->end);
	CHECK(procmaps__find(&pr->maps, (uint64_t)(uintptr_t)own_snapshot) == m);
	CHECK((m = procmaps__find(&pr->maps, libc_qsort())));
	CHECK(strstr(m->path, "libc"));
	CHECK(pr->objs[m - pr->maps.maps] != NULL);
	/* The main executable, for the report's first mapping. */
	CHECK(stat("/proc/self/exe", &st) == 0);
	CHECK_EQ_INT(pr->exe_ino, st.st_ino);
	CHECK(procs__stats(ps)->gone == 0);
	procs__free(ps);
	symcache__free(sc);
	return true;
}

/* A process that exited before we looked: a record all the same, marked
 * not snapshotted, and counted. */
static bool gone_before_snapshot(void)
{
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	pid_t child = dead_child();
	struct proc *pr;

	CHECK(child > 0 && ps);
	pr = procs__get(ps, (uint32_t)child, 1);
	CHECK(pr);
	CHECK(!pr->snapshotted);
	CHECK_EQ_INT(pr->maps.n, 0);
	CHECK_EQ_INT(pr->exe_ino, 0);
	CHECK_EQ_INT(procs__stats(ps)->gone, 1);
	procs__free(ps);
	symcache__free(sc);
	return true;
}

/* Gone before its maps were read, then named from the kernel's reports
 * (maplog.h) once the reports written meanwhile are read (procs__settle):
 * a child that exec'd /usr/bin/true (as the reports say) and exited. A
 * sample before the exec is in the parent's image (the fork); one whose
 * reports come after its notice is named all the same. */
static bool gone_named_from_reports(void)
{
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	uint32_t me = (uint32_t)getpid();
	struct stat st;
	pid_t child = dead_child(), late;
	struct proc *pr, *before, *parent;
	struct pmubpf_notice n = { .kind = PMUBPF_NOTICE_PROC, .pgen = 1, .comm = "true" };
	const int64_t ms = 1000000;

	CHECK(child > 0 && ps);
	CHECK(stat("/usr/bin/true", &st) == 0);
	struct procmap m = { .start = 0x400000, .end = 0x401000, .inode = st.st_ino, .exec = true,
			     .path = "/usr/bin/true" };
	CHECK((parent = procs__get(ps, me, 1)) && parent->snapshotted);
	procs__forked(ps, (uint32_t)child, me, 10 * ms);
	procs__exec(ps, (uint32_t)child, 20 * ms);
	procs__mapped(ps, (uint32_t)child, &m, 21 * ms);
	n.tgid = n.tid = (uint32_t)child;
	n.ts = 22 * ms;
	CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	CHECK((pr = procs__get(ps, (uint32_t)child, 1)));
	CHECK(!pr->snapshotted && pr->log_wait); /* gone: after the reports come */
	procs__settle(ps);
	CHECK(pr->snapshotted && pr->dead);
	CHECK_EQ_INT(pr->maps.n, 1);
	CHECK(pr->objs[0]); /* opened by its path: the same inode */
	CHECK(pr->exe_ino == st.st_ino);
	CHECK_STR(pr->comm, "true");
	/* Sampled between the fork and the exec: our own image. */
	n.pgen = 2;
	n.ts = 15 * ms;
	CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	procs__settle(ps);
	CHECK((before = procs__get(ps, (uint32_t)child, 2)) && before->snapshotted);
	CHECK_EQ_INT(before->maps.n, parent->maps.n);
	CHECK_EQ_INT(procs__stats(ps)->from_log, 2);
	CHECK_EQ_INT(procs__stats(ps)->gone, 0);
	/* Its notice first, its reports after. */
	late = dead_child();
	CHECK(late > 0);
	n.tgid = n.tid = (uint32_t)late;
	n.pgen = 1;
	n.ts = 32 * ms;
	CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	CHECK((pr = procs__get(ps, (uint32_t)late, 1)) && !pr->snapshotted && !pr->dead);
	procs__exec(ps, (uint32_t)late, 30 * ms);
	procs__mapped(ps, (uint32_t)late, &m, 31 * ms);
	procs__settle(ps);
	CHECK(pr->snapshotted && pr->dead);
	CHECK_EQ_INT(procs__stats(ps)->from_log, 3);
	/* Nothing in the log at all: gone, counted, after the one retry. */
	n.tgid = n.tid = 1u << 30; /* no such process */
	CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	CHECK_EQ_INT(procs__stats(ps)->gone, 0);
	procs__settle(ps);
	CHECK_EQ_INT(procs__stats(ps)->gone, 1);
	CHECK((pr = procs__get(ps, 1u << 30, 1)) && !pr->snapshotted && pr->dead);
	procs__free(ps);
	symcache__free(sc);
	return true;
}

/* A NOTICE_MAP of (tgid, pgen): the file at path (its names leaf first
 * when with_path), page offset 0, executable exe. */
static void map_notice(struct pmubpf_map_notice *m, uint32_t tgid, uint32_t pgen, const struct stat *st,
		       const char *path, bool with_path)
{
	memset(m, 0, sizeof(*m));
	m->hdr.kind = PMUBPF_NOTICE_MAP;
	m->hdr.tgid = m->hdr.tid = tgid;
	m->hdr.pgen = pgen;
	m->start = 0x400000;
	m->end = 0x401000;
	m->ino = st->st_ino;
	m->exe_ino = st->st_ino;
	m->dev = major(st->st_dev) << 20 | minor(st->st_dev);
	if (!with_path)
		return;
	m->flags = PMUBPF_MAP_F_PATH;
	char copy[256], *names[PMUBPF_MAP_COMPS];
	int k = 0;

	snprintf(copy, sizeof(copy), "%s", path);
	for (char *tok = strtok(copy, "/"); tok && k < PMUBPF_MAP_COMPS; tok = strtok(NULL, "/"))
		names[k++] = tok;
	for (int i = 0; i < k; i++) /* leaf first */
		snprintf(m->names[i], PMUBPF_MAP_NAME, "%s", names[k - 1 - i]);
	m->ncomp = (uint16_t)k;
}

/* Gone before its maps were read, named from the image BPF sent as it
 * ended (bpf/images.bpf.h): the path comes with the file's first notice
 * and is kept for the next ones (which carry none); a notice without a
 * path for a file whose path was never sent names nothing (counted); a
 * process first sampled with no address space left is counted apart,
 * not as gone. */
static bool gone_named_from_images(void)
{
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	struct pmubpf_notice n = { .kind = PMUBPF_NOTICE_PROC, .pgen = 1, .comm = "true", .ts = 1000 };
	struct pmubpf_map_notice *m = calloc(1, sizeof(*m));
	pid_t a = dead_child(), b = dead_child(), c = dead_child(), d = dead_child();
	struct proc *pr;
	struct stat st;

	CHECK(ps && m && a > 0 && b > 0 && c > 0 && d > 0);
	CHECK(stat("/usr/bin/true", &st) == 0);
	procs__set_image_files(ps, -1);
	/* a: its path with it. */
	n.tgid = n.tid = (uint32_t)a;
	CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	map_notice(m, (uint32_t)a, 1, &st, "/usr/bin/true", true);
	CHECK(procs__notice(ps, &m->hdr, sizeof(*m)) == 0);
	/* b: the same file, its path not sent again. */
	n.tgid = n.tid = (uint32_t)b;
	CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	map_notice(m, (uint32_t)b, 1, &st, NULL, false);
	CHECK(procs__notice(ps, &m->hdr, PMUBPF_MAP_NOTICE_SHORT) == 0);
	/* c: a file whose path the loader never had. */
	n.tgid = n.tid = (uint32_t)c;
	CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	map_notice(m, (uint32_t)c, 1, &st, NULL, false);
	m->ino = st.st_ino + 1000003;
	CHECK(procs__notice(ps, &m->hdr, PMUBPF_MAP_NOTICE_SHORT) == 0);
	/* d: first sampled late in its exit, no address space. */
	n.tgid = n.tid = (uint32_t)d;
	n.flags = PMUBPF_NOTICE_F_NOMM | PMUBPF_NOTICE_F_MOVING;
	CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	/* Their waits for BPF's image are over (sampled at 1 us): a and b
	 * have theirs; c and d are read, found gone, and decided on at the
	 * next settle, once notices written meanwhile are in. */
	procs__settle(ps);
	procs__settle(ps);
	pid_t named[] = { a, b };
	for (int i = 0; i < 2; i++) {
		CHECK((pr = procs__get(ps, (uint32_t)named[i], 1)) && pr->snapshotted && pr->dead);
		CHECK_EQ_INT(pr->maps.n, 1);
		CHECK_STR(pr->maps.maps[0].path, "/usr/bin/true");
		CHECK(pr->objs[0]); /* opened by its path: the same inode */
		CHECK(pr->exe_ino == st.st_ino);
	}
	CHECK((pr = procs__get(ps, (uint32_t)c, 1)) && !pr->snapshotted && pr->dead);
	const struct procs_stats *s = procs__stats(ps);
	CHECK_EQ_INT(s->from_images, 2);
	CHECK_EQ_INT(s->image_maps, 3);
	CHECK_EQ_INT(s->image_maps_unnamed, 1);
	CHECK_EQ_INT(s->gone, 1);      /* c */
	CHECK_EQ_INT(s->gone_nomm, 1); /* d */
	CHECK(s->images);
	free(m);
	procs__free(ps);
	symcache__free(sc);
	return true;
}

/* An image as BPF sends it now (bpf/images.bpf.h): the path of a file
 * new to the loader alone first (a NOTICE_MAP of generation 0, which
 * names no process), then one NOTICE_IMAGE of the image's mappings. An
 * entry of a file whose path never came names nothing (counted), and a
 * notice cut short gives only the entries it holds. */
static bool gone_named_from_image_notices(void)
{
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	struct pmubpf_notice n = { .kind = PMUBPF_NOTICE_PROC, .pgen = 1, .comm = "true", .ts = 1000 };
	struct pmubpf_map_notice *m = calloc(1, sizeof(*m));
	struct pmubpf_image_notice im = { 0 };
	pid_t a = dead_child(), b = dead_child();
	struct proc *pr;
	struct stat st;

	CHECK(ps && m && a > 0 && b > 0);
	CHECK(stat("/usr/bin/true", &st) == 0);
	procs__set_image_files(ps, -1);
	for (int i = 0; i < 2; i++) {
		n.tgid = n.tid = (uint32_t)(i ? b : a);
		CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	}
	map_notice(m, (uint32_t)a, 0, &st, "/usr/bin/true", true); /* the path alone */
	CHECK(procs__notice(ps, &m->hdr, sizeof(*m)) == 0);
	/* a: the file and the vDSO. */
	im.hdr.kind = PMUBPF_NOTICE_IMAGE;
	im.hdr.tgid = im.hdr.tid = (uint32_t)a;
	im.hdr.pgen = 1;
	im.exe_ino = st.st_ino;
	im.n = 2;
	im.m[0] = (struct pmubpf_image_map){ .start = 0x400000, .end = 0x401000, .ino = st.st_ino,
					     .dev = major(st.st_dev) << 20 | minor(st.st_dev) };
	im.m[1] = (struct pmubpf_image_map){ .start = 0x7fff0000, .end = 0x7fff2000,
					     .flags = PMUBPF_MAP_F_VDSO };
	CHECK(procs__notice(ps, &im.hdr, PMUBPF_IMAGE_NOTICE_SIZE(2)) == 0);
	/* b: a file never named, then the same notice as a's cut short
	 * after its first entry (n says 2). */
	im.hdr.tgid = im.hdr.tid = (uint32_t)b;
	im.m[1] = im.m[0];
	im.m[1].ino = st.st_ino + 1000003;
	CHECK(procs__notice(ps, &im.hdr, PMUBPF_IMAGE_NOTICE_SIZE(2)) == 0);
	im.m[1] = (struct pmubpf_image_map){ .start = 0x7fff0000, .end = 0x7fff2000,
					     .flags = PMUBPF_MAP_F_VDSO };
	CHECK(procs__notice(ps, &im.hdr, PMUBPF_IMAGE_NOTICE_SIZE(1) + 8) == 0);
	procs__settle(ps);
	procs__settle(ps);
	CHECK((pr = procs__get(ps, (uint32_t)a, 1)) && pr->snapshotted && pr->dead);
	CHECK_EQ_INT(pr->maps.n, 2);
	CHECK_STR(pr->maps.maps[0].path, "/usr/bin/true");
	CHECK_STR(pr->maps.maps[1].path, "[vdso]");
	CHECK(pr->exe_ino == st.st_ino);
	CHECK((pr = procs__get(ps, (uint32_t)b, 1)) && pr->snapshotted && pr->dead);
	CHECK_EQ_INT(pr->maps.n, 2); /* its true, twice: not the unnamed, not the vDSO cut off */
	CHECK_STR(pr->maps.maps[0].path, "/usr/bin/true");
	CHECK_STR(pr->maps.maps[1].path, "/usr/bin/true");
	const struct procs_stats *s = procs__stats(ps);
	CHECK_EQ_INT(s->from_images, 2);
	CHECK_EQ_INT(s->image_maps, 5); /* not the path alone */
	CHECK_EQ_INT(s->image_maps_unnamed, 1);
	free(m);
	procs__free(ps);
	symcache__free(sc);
	return true;
}

/* The path a gone process's mapping got from a NOTICE_MAP whose names
 * are ns_path's (leaf first), the first rootk of them its own root's
 * view (F_ROOT; -1: none), ns_path too deep to send (long). */
static char *chroot_named(const char *ns_path, int rootk, bool long_path, const struct stat *st)
{
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	struct pmubpf_notice n = { .kind = PMUBPF_NOTICE_PROC, .pgen = 1, .comm = "true", .ts = 1000 };
	struct pmubpf_map_notice *m = calloc(1, sizeof(*m));
	pid_t a = dead_child();
	struct proc *pr;
	char *got = NULL;

	if (ps && m && a > 0) {
		procs__set_image_files(ps, -1);
		n.tgid = n.tid = (uint32_t)a;
		procs__notice(ps, &n, sizeof(n));
		map_notice(m, (uint32_t)a, 1, st, ns_path, true);
		if (rootk >= 0) {
			m->flags |= PMUBPF_MAP_F_ROOT;
			m->rootk = (uint16_t)rootk;
		}
		if (long_path)
			m->flags |= PMUBPF_MAP_F_LONG;
		procs__notice(ps, &m->hdr, sizeof(*m));
		procs__settle(ps);
		procs__settle(ps);
		if ((pr = procs__get(ps, (uint32_t)a, 1)) && pr->maps.n == 1)
			got = strdup(pr->maps.maps[0].path);
	}
	free(m);
	procs__free(ps);
	symcache__free(sc);
	return got ? got : strdup("(none)");
}

/* A process in a chroot: BPF sends the path from the namespace's root
 * and marks where the process's own root was met (bpf/images.bpf.h).
 * The namespace's path where it is the file here (a loader outside the
 * chroot); the process's own where only that is (a loader inside it,
 * as the kernels' matrix runs); the process's own where the
 * namespace's was too deep to send. */
static bool gone_named_in_chroot(void)
{
	struct stat st;
	char *p;

	CHECK(stat("/usr/bin/true", &st) == 0);
	/* Inside: /outside/jail/usr/bin/true is no file here. */
	p = chroot_named("/outside/jail/usr/bin/true", 3, false, &st);
	CHECK_STR(p, "/usr/bin/true");
	free(p);
	/* Outside: the namespace's path is the file, its root's is not. */
	p = chroot_named("/usr/bin/true", 1, false, &st);
	CHECK_STR(p, "/usr/bin/true");
	free(p);
	/* Too deep from the namespace's root: the process's own view. */
	p = chroot_named("/x/y/usr/bin/true", 3, true, &st);
	CHECK_STR(p, "/usr/bin/true");
	free(p);
	/* Too deep, and no root met: nothing. */
	p = chroot_named("/x/y/usr/bin/true", -1, true, &st);
	CHECK_STR(p, "(none)");
	free(p);
	return true;
}

/* n children that wait (pause) until paused_stop kills them; false if
 * any fork failed (the ones made are still stopped by paused_stop). */
static bool paused_start(pid_t *kids, int n)
{
	bool ok = true;

	for (int i = 0; i < n; i++) {
		if ((kids[i] = fork()) == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed check returns early */
			pause();
			_exit(0);
		}
		ok = ok && kids[i] > 0;
	}
	return ok;
}

static void paused_stop(const pid_t *kids, int n)
{
	for (int i = 0; i < n; i++)
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
}

/* Images from BPF: a process's first read waits PROCS_IMAGE_WAIT_NS
 * after its first sample for BPF's image at its end. One whose image
 * comes is never read (nor one whose image is its parent's); one that
 * lives on is read once its wait is over, or at procs__read_waiting. */
static bool image_wait(void)
{
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	struct pmubpf_notice n = { .kind = PMUBPF_NOTICE_PROC, .pgen = 1, .comm = "test_procs" };
	struct pmubpf_map_notice *m = calloc(1, sizeof(*m));
	pid_t kids[3] = { 0 };
	struct proc *pr;
	struct stat st;

	CHECK(ps && m && stat("/usr/bin/true", &st) == 0);
	CHECK(paused_start(kids, 3));
	procs__set_image_files(ps, -1);
	/* Sample times 300 ms ahead of the clock: no wait can end before
	 * the settle that checks it is still under way, however slow the
	 * machine (ASan on a loaded VM once took more than the 10 ms wait
	 * between a notice and its settle, and read kids[1] early). */
	const int64_t ahead = 300000000;

	n.ts = (uint64_t)(mono_ns() + ahead);
	for (int i = 0; i < 2; i++) {
		n.tgid = n.tid = (uint32_t)kids[i];
		CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	}
	/* kids[0]'s image comes (it exec'd or exited, as far as procs knows). */
	map_notice(m, (uint32_t)kids[0], 1, &st, "/usr/bin/true", true);
	CHECK(procs__notice(ps, &m->hdr, sizeof(*m)) == 0);
	procs__settle(ps);
	const struct procs_stats *s = procs__stats(ps);
	CHECK((pr = procs__get(ps, (uint32_t)kids[0], 1)) && pr->snapshotted && pr->dead);
	CHECK_EQ_INT(s->from_images, 1);
	CHECK_EQ_INT(s->maps_reads, 0);
	CHECK((pr = procs__get(ps, (uint32_t)kids[1], 1)) && !pr->snapshotted && pr->image_wait);
	CHECK(procs__wait_due(ps) == (int64_t)n.ts + PROCS_IMAGE_WAIT_NS);
	/* kids[1]: its wait ends at a settle after it. */
	while (mono_ns() < (int64_t)n.ts + PROCS_IMAGE_WAIT_NS)
		usleep(1000);
	n.tgid = n.tid = (uint32_t)kids[2]; /* kids[2]: sampled now, waits */
	n.ts = (uint64_t)(mono_ns() + ahead);
	CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	procs__settle(ps);
	CHECK((pr = procs__get(ps, (uint32_t)kids[1], 1)) && pr->snapshotted && !pr->dead && !pr->image_wait);
	CHECK((pr = procs__get(ps, (uint32_t)kids[2], 1)) && !pr->snapshotted && pr->image_wait);
	CHECK_EQ_INT(s->live_read, 1);
	CHECK(procs__wait_due(ps) == (int64_t)n.ts + PROCS_IMAGE_WAIT_NS);
	/* A profile is about to be built: every wait ends now. */
	procs__read_waiting(ps);
	CHECK(pr->snapshotted && !pr->image_wait);
	CHECK_EQ_INT(s->live_read, 2);
	CHECK_EQ_INT(s->maps_reads, 2);
	CHECK(procs__wait_due(ps) == 0);
	/* A fork child of kids[1] sampled inside its execve, gone since:
	 * its image was its parent's (NOTICE_LIKE), not read. */
	struct pmubpf_like_notice ln = { .hdr = n };
	pid_t child = dead_child();
	const struct proc *par = procs__get(ps, (uint32_t)kids[1], 1);

	CHECK(child > 0 && par && par->maps.n > 0);
	ln.hdr.tgid = ln.hdr.tid = (uint32_t)child;
	ln.hdr.ts = (uint64_t)mono_ns();
	CHECK(procs__notice(ps, &ln.hdr, sizeof(ln.hdr)) == 0);
	ln.hdr.kind = PMUBPF_NOTICE_LIKE;
	ln.like_tgid = (uint32_t)kids[1];
	ln.like_pgen = 1;
	CHECK(procs__notice(ps, &ln.hdr, sizeof(ln)) == 0);
	procs__settle(ps);
	CHECK((pr = procs__get(ps, (uint32_t)child, 1)) && pr->snapshotted && pr->dead);
	CHECK_EQ_INT(pr->maps.n, par->maps.n);
	CHECK_STR(pr->maps.maps[0].path, par->maps.maps[0].path);
	CHECK(pr->exe_ino == par->exe_ino);
	CHECK_EQ_INT(s->from_parent, 1);
	CHECK_EQ_INT(s->maps_reads, 2);
	paused_stop(kids, 3);
	free(m);
	procs__free(ps);
	symcache__free(sc);
	return true;
}


/* Our own name, as /proc shows it (and our forked children's). */
static bool own_comm(char *comm, size_t len)
{
	FILE *f = fopen("/proc/self/comm", "r");
	bool named = f && fgets(comm, (int)len, f);

	if (f)
		fclose(f);
	if (named)
		comm[strcspn(comm, "\n")] = '\0';
	return named;
}

/* The kernel's reports of kid exec'ing, then mapping m, and BPF's
 * notice n of its sample 1 ms later: its record (pgen 1), or NULL. */
static struct proc *noticed_after_exec(struct procs *ps, struct pmubpf_notice *n, pid_t kid,
				       const struct procmap *m, int64_t exec_ns)
{
	const int64_t ms = 1000000;

	procs__exec(ps, (uint32_t)kid, exec_ns);
	procs__mapped(ps, (uint32_t)kid, m, exec_ns + ms);
	n->tgid = n->tid = (uint32_t)kid;
	n->ts = (uint64_t)(exec_ns + 2 * ms);
	if (procs__notice(ps, n, sizeof(*n)))
		return NULL;
	return procs__get(ps, (uint32_t)kid, 1);
}

/* Alive, and begun while recording (its exec is in the log): the image
 * is the log's, no maps read from /proc. The child here is a fork of
 * this test, so /proc would show this test's binary; the log says it
 * exec'd /usr/bin/true, and that is what its record holds: the log's
 * mapping, its file found by path, the executable and name the log and
 * notice gave. Once reports were lost after its exec began, the log may
 * be short: that one is read from /proc. */
static bool live_from_log(void)
{
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	struct pmubpf_notice n = { .kind = PMUBPF_NOTICE_PROC, .pgen = 1, .comm = "true" };
	const int64_t ms = 1000000;
	pid_t kids[3] = { -1, -1, -1 };
	struct stat st;
	struct proc *pr;
	bool ok = false;

	if (!paused_start(kids, 3) || !ps || stat("/usr/bin/true", &st))
		goto out;
	struct procmap m = { .start = 0x400000, .end = 0x401000, .inode = st.st_ino, .exec = true,
			     .path = "/usr/bin/true" };
	int64_t now = mono_ns();

	if (!(pr = noticed_after_exec(ps, &n, kids[0], &m, now - 3 * ms)))
		goto out;
	if (!pr->snapshotted || pr->dead || pr->log_wait || pr->maps.n != 1 ||
	    pr->maps.maps[0].start != 0x400000 || strcmp(pr->maps.maps[0].path, "/usr/bin/true") ||
	    !pr->objs[0] || pr->exe_ino != st.st_ino || strcmp(pr->comm, "true") ||
	    procs__stats(ps)->live_from_log != 1) {
		fprintf(stderr, "  live_from_log: first child not from the log (maps %zu, live_from_log %llu)\n",
			pr->maps.n, (unsigned long long)procs__stats(ps)->live_from_log);
		goto out;
	}
	/* Reports lost after its exec: read from /proc (this test's image). */
	procs__reports_lost(ps, 1);
	/* its real name: else /proc's maps look like an exec under way */
	if (!own_comm(n.comm, sizeof(n.comm)))
		goto out;
	if (!(pr = noticed_after_exec(ps, &n, kids[1], &m, now - 3 * ms)))
		goto out;
	ok = pr->snapshotted && !pr->dead && pr->maps.n > 0 && !procmaps__find(&pr->maps, 0x400000) &&
	     procs__stats(ps)->live_from_log == 1;
	/* Sampled inside execve or an exit (BPF's flag): read, not the log's. */
	usleep(3000); /* its exec after the loss */
	n.flags = PMUBPF_NOTICE_F_MOVING;
	ok = ok && (pr = noticed_after_exec(ps, &n, kids[2], &m, mono_ns() - 2 * ms)) && pr->snapshotted && !procmaps__find(&pr->maps, 0x400000) && procs__stats(ps)->live_from_log == 1;
	if (!ok)
		fprintf(stderr, "  live_from_log: a child read from the log though reports were lost or it "
			"was moving (live_from_log %llu)\n", (unsigned long long)procs__stats(ps)->live_from_log);
out:
	paused_stop(kids, 3);
	procs__free(ps);
	symcache__free(sc);
	return ok;
}

/* Alive at its notice, sampled after the kernel's reports were last
 * read (a long batch of notices under churn: new ones keep coming while
 * it is read): its read waits for the reports (procs__settle). Not in
 * the log at all, it would have been read from /proc; in the log with
 * an earlier image only (`nice PROGRAM`: nice's exec read, PROGRAM's
 * not yet), it would have been given that image. After the reports,
 * both are the log's images. A process the log never has (older than
 * it) is read from /proc then. */
static bool log_behind(void)
{
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	struct pmubpf_notice n = { .kind = PMUBPF_NOTICE_PROC, .pgen = 1 };
	const int64_t ms = 1000000;
	pid_t kids[3] = { -1, -1, -1 };
	struct stat st, st_env;
	struct proc *pr, *old, *nice;
	bool ok = false;

	/* the old one's name: /proc's */
	if (!paused_start(kids, 3) || !ps || !own_comm(n.comm, sizeof(n.comm)) ||
	    stat("/usr/bin/true", &st) || stat("/usr/bin/env", &st_env))
		goto out;
	struct procmap m = { .start = 0x400000, .end = 0x401000, .inode = st.st_ino, .exec = true,
			     .path = "/usr/bin/true" };
	struct procmap m_env = { .start = 0x500000, .end = 0x501000, .inode = st_env.st_ino,
				 .exec = true, .path = "/usr/bin/env" };
	int64_t now = mono_ns();

	procs__exec(ps, (uint32_t)kids[2], now - 10 * ms); /* its first image's, read */
	procs__mapped(ps, (uint32_t)kids[2], &m_env, now - 9 * ms);
	procs__reports_read(ps, now - 5 * ms);
	n.tgid = n.tid = (uint32_t)kids[0];
	n.ts = (uint64_t)(now - 2 * ms);
	if (procs__notice(ps, &n, sizeof(n)) || !(pr = procs__get(ps, (uint32_t)kids[0], 1)))
		goto out;
	n.tgid = n.tid = (uint32_t)kids[1];
	if (procs__notice(ps, &n, sizeof(n)) || !(old = procs__get(ps, (uint32_t)kids[1], 1)))
		goto out;
	n.tgid = n.tid = (uint32_t)kids[2];
	if (procs__notice(ps, &n, sizeof(n)) || !(nice = procs__get(ps, (uint32_t)kids[2], 1)))
		goto out;
	if (pr->snapshotted || !pr->log_wait || old->snapshotted || nice->snapshotted ||
	    procs__stats(ps)->live_read) {
		fprintf(stderr, "  log_behind: read before the reports were in (live_read %llu)\n",
			(unsigned long long)procs__stats(ps)->live_read);
		goto out;
	}
	/* The reports written meanwhile: the first child's exec, and the
	 * third's second one. */
	for (int i = 0; i < 3; i += 2) {
		procs__exec(ps, (uint32_t)kids[i], now - 4 * ms);
		procs__mapped(ps, (uint32_t)kids[i], &m, now - 3 * ms);
	}
	procs__reports_read(ps, mono_ns());
	procs__settle(ps);
	ok = pr->snapshotted && !pr->dead && !pr->log_wait && pr->maps.n == 1 &&
	     pr->maps.maps[0].start == 0x400000 && procs__stats(ps)->live_from_log == 2 &&
	     nice->snapshotted && nice->maps.n == 1 && nice->maps.maps[0].start == 0x400000 &&
	     old->snapshotted && !old->dead && !procmaps__find(&old->maps, 0x400000) &&
	     procs__stats(ps)->live_read == 1;
	if (!ok)
		fprintf(stderr, "  log_behind: after the reports: live_from_log %llu, live_read %llu, "
			"the third's image at %#llx\n",
			(unsigned long long)procs__stats(ps)->live_from_log,
			(unsigned long long)procs__stats(ps)->live_read,
			nice->maps.n ? (unsigned long long)nice->maps.maps[0].start : 0ULL);
out:
	paused_stop(kids, 3);
	procs__free(ps);
	symcache__free(sc);
	return ok;
}

/* BPF's generation of a live process moved on before its first read
 * (an exec done since the sample): its maps are not read, its image
 * waits for the log. While the generation is still the one sampled,
 * they are read. */
static bool bpf_moved_no_read(void)
{
	int seen = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, sizeof(uint32_t), sizeof(struct pmubpf_seen),
				  64, NULL);
	struct symcache *sc = symcache__new();
	struct procs *ps = seen >= 0 && sc ? procs__new(sc, -1, seen) : NULL;
	struct pmubpf_notice n = { .kind = PMUBPF_NOTICE_PROC, .pgen = 1 };
	pid_t kids[2] = { -1, -1 };
	struct proc *pr;
	bool ok = false;

	if (!paused_start(kids, 2) || !ps || !own_comm(n.comm, sizeof(n.comm))) {
		fprintf(stderr, "  bpf_moved_no_read: setup failed (seen map fd %d)\n", seen);
		goto out;
	}
	n.ts = (uint64_t)(mono_ns() - 20000000LL);
	for (int i = 0; i < 2; i++) {
		uint32_t tgid = (uint32_t)kids[i];
		struct pmubpf_seen v = { .pgen = i == 0 ? 2 : 1 }; /* the first moved on */

		if (bpf_map_update_elem(seen, &tgid, &v, BPF_ANY))
			goto out;
		n.tgid = n.tid = tgid;
		if (procs__notice(ps, &n, sizeof(n)) || !(pr = procs__get(ps, tgid, 1)))
			goto out;
		ok = i == 0 ? !pr->snapshotted && pr->log_wait && procs__stats(ps)->maps_reads == 0
			    : pr->snapshotted && !pr->dead && procs__stats(ps)->maps_reads == 1;
		if (!ok) {
			fprintf(stderr, "  bpf_moved_no_read: child %d: snapshotted %d, maps reads %llu\n", i,
				pr->snapshotted, (unsigned long long)procs__stats(ps)->maps_reads);
			goto out;
		}
	}
out:
	paused_stop(kids, 2);
	procs__free(ps);
	symcache__free(sc);
	if (seen >= 0)
		close(seen);
	return ok;
}

/* While a profile is built (procs__hold), an mmap report of a process
 * already gone waits: merged at once, it replaced the maps array the
 * builder was reading (a use after free, seen under ASan on a 16-CPU
 * machine's churn). At the release it goes in. */
static bool held_while_built(void)
{
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	struct pmubpf_notice n = { .kind = PMUBPF_NOTICE_PROC, .pgen = 1, .comm = "true" };
	const int64_t ms = 1000000;
	struct stat st;
	pid_t child = dead_child();
	struct proc *pr;

	CHECK(child > 0 && ps);
	CHECK(stat("/usr/bin/true", &st) == 0);
	struct procmap m = { .start = 0x400000, .end = 0x401000, .inode = st.st_ino, .exec = true,
			     .path = "/usr/bin/true" };
	procs__exec(ps, (uint32_t)child, 10 * ms);
	procs__mapped(ps, (uint32_t)child, &m, 11 * ms);
	n.tgid = n.tid = (uint32_t)child;
	n.ts = 12 * ms;
	CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	procs__settle(ps);
	CHECK((pr = procs__get(ps, (uint32_t)child, 1)) && pr->snapshotted && pr->dead);
	CHECK_EQ_INT(pr->maps.n, 1);
	const struct procmap *held = pr->maps.maps;

	m.start = 0x500000, m.end = 0x501000; /* reported late: its libc, say */
	procs__hold(ps, true);
	procs__hold(ps, true); /* nested */
	procs__mapped(ps, (uint32_t)child, &m, 20 * ms);
	CHECK(pr->maps.maps == held && pr->maps.n == 1);
	CHECK_EQ_INT(pr->reported.n, 1);
	procs__hold(ps, false);
	CHECK(pr->maps.maps == held && pr->maps.n == 1);
	procs__hold(ps, false);
	CHECK_EQ_INT(pr->maps.n, 2);
	CHECK_EQ_INT(pr->reported.n, 0);
	/* Not held: in at once, as before. */
	m.start = 0x600000, m.end = 0x601000;
	procs__mapped(ps, (uint32_t)child, &m, 21 * ms);
	CHECK_EQ_INT(pr->maps.n, 3);
	procs__free(ps);
	symcache__free(sc);
	return true;
}

/* mmap reports read late, after the process exec'd again: each goes to
 * the generation whose image it was made in. A program's ld.so maps libc
 * after the program's first sample, and the process execs /bin/true
 * before the report is read: libc is the first image's (it went to the
 * second's, and the first's samples in libc were unnamed), and a report
 * whose generation BPF has but no notice brought yet goes to the last
 * generation noticed, if no exec came between (it was dropped). */
static bool late_report_earlier_image(void)
{
	int seen = bpf_map_create(BPF_MAP_TYPE_HASH, "t_seen", 4, sizeof(struct pmubpf_seen), 8, NULL);
	struct symcache *sc = symcache__new();
	struct procs *ps = sc && seen >= 0 ? procs__new(sc, -1, seen) : NULL;
	struct pmubpf_notice n = { .kind = PMUBPF_NOTICE_PROC, .comm = "true" };
	const int64_t ms = 1000000;
	struct pmubpf_seen v = { .pgen = 3 }; /* BPF's newest: not noticed yet */
	struct stat st;
	pid_t child = dead_child();
	struct proc *first, *second;

	CHECK(child > 0 && ps);
	CHECK(stat("/usr/bin/true", &st) == 0);
	struct procmap m = { .start = 0x400000, .end = 0x401000, .inode = st.st_ino, .exec = true,
			     .path = "/usr/bin/true" };
	n.tgid = n.tid = (uint32_t)child;
	procs__exec(ps, (uint32_t)child, 10 * ms);
	procs__mapped(ps, (uint32_t)child, &m, 11 * ms);
	n.pgen = 1, n.ts = 12 * ms;
	CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	procs__exec(ps, (uint32_t)child, 20 * ms);
	m.start = 0x800000, m.end = 0x801000;
	procs__mapped(ps, (uint32_t)child, &m, 21 * ms);
	n.pgen = 2, n.ts = 22 * ms;
	CHECK(procs__notice(ps, &n, sizeof(n)) == 0);
	procs__settle(ps);
	CHECK((first = procs__get(ps, (uint32_t)child, 1)) && first->snapshotted && first->dead);
	CHECK((second = procs__get(ps, (uint32_t)child, 2)) && second->snapshotted && second->dead);
	CHECK_EQ_INT(first->maps.n, 1);
	CHECK_EQ_INT(second->maps.n, 1);
	CHECK(bpf_map_update_elem(seen, &(uint32_t){ (uint32_t)child }, &v, BPF_ANY) == 0);
	m.start = 0x500000, m.end = 0x501000; /* the first image's libc, at 15 ms */
	procs__mapped(ps, (uint32_t)child, &m, 15 * ms);
	CHECK_EQ_INT(first->maps.n, 2);
	CHECK_EQ_INT(second->maps.n, 1);
	m.start = 0x900000, m.end = 0x901000; /* the second's, at 25 ms */
	procs__mapped(ps, (uint32_t)child, &m, 25 * ms);
	CHECK_EQ_INT(first->maps.n, 2);
	CHECK_EQ_INT(second->maps.n, 2);
	procs__free(ps);
	symcache__free(sc);
	close(seen);
	return true;
}

/* A library dlopen()ed after the snapshot is in after the final re-read
 * (while the seen map still has our generation). */
static bool rescan_after_dlopen(void)
{
	int seen = bpf_map_create(BPF_MAP_TYPE_HASH, "t_seen", 4, sizeof(struct pmubpf_seen), 8, NULL);
	uint32_t tgid = (uint32_t)getpid();
	struct pmubpf_seen v = { .pgen = 5 };
	struct symcache *sc = symcache__new();
	struct procs *ps;
	struct proc *pr;
	void *h;

	CHECK(seen >= 0 && sc);
	CHECK(bpf_map_update_elem(seen, &tgid, &v, BPF_ANY) == 0);
	ps = procs__new(sc, -1, seen);
	CHECK(ps && (pr = procs__get(ps, tgid, 5)));
	/* A library of glibc's that this test has not loaded yet (what the
	 * binary links pulls some in: libcurl brings libresolv). */
	static const char *const libs[] = { "libanl.so.1", "libBrokenLocale.so.1", "libresolv.so.2",
					    "libnss_dns.so.2" };
	const char *lib = NULL;
	char slash[64];
	for (size_t i = 0; !lib && i < sizeof(libs) / sizeof(libs[0]); i++) {
		snprintf(slash, sizeof(slash), "/%s", libs[i]);
		if (!find_map(pr, slash, NULL))
			lib = libs[i];
	}
	CHECK(lib);
	CHECK((h = dlopen(lib, RTLD_NOW)));
	procs__rescan_all(ps);
	CHECK(find_map(pr, slash, NULL));
	CHECK_EQ_INT(procs__stats(ps)->rescans, 1);
	CHECK(!pr->dead);
	/* A new generation (exec): the snapshot is final, never re-read. */
	v.pgen = 6;
	CHECK(bpf_map_update_elem(seen, &tgid, &v, BPF_ANY) == 0);
	procs__rescan_all(ps);
	CHECK(pr->dead);
	CHECK_EQ_INT(procs__stats(ps)->rescans, 1);
	dlclose(h);
	procs__free(ps);
	symcache__free(sc);
	close(seen);
	return true;
}

/* This binary carries the labels record: the snapshot finds it and
 * publishes the TLS slot to BPF; a label notice with no copy makes
 * procs read the set out of our memory. */
static bool labels_record_and_set(void)
{
	int slots = bpf_map_create(BPF_MAP_TYPE_HASH, "t_slots", 4, sizeof(struct pmubpf_label_slot), 8, NULL);
	const pmubpf_labels *set = pmubpf_labels_new(NULL, "phase", "parse", "tenant", "acme", NULL);
	uint32_t tgid = (uint32_t)getpid();
	struct symcache *sc = symcache__new();
	struct procs *ps = slots >= 0 && sc ? procs__new(sc, slots, -1) : NULL;
	struct pmubpf_label_slot slot;
	static struct pmubpf_label_notice n; /* 5 KiB */
	const struct proc_label_set *ls;
	struct proc *pr;

	CHECK(set && ps);
	CHECK((pr = procs__get(ps, tgid, 1)));
	CHECK_EQ_INT(procs__stats(ps)->label_records, 1);
	CHECK(bpf_map_lookup_elem(slots, &tgid, &slot) == 0);
	CHECK_EQ_INT(slot.version, PMUBPF_LABELS_ABI_VERSION);
	n.hdr = (struct pmubpf_notice){ .kind = PMUBPF_NOTICE_LABEL, .tgid = tgid, .pgen = 1,
					.tid = tgid, .label = set->id,
					.label_ptr = (uint64_t)(uintptr_t)set };
	n.len = 0; /* BPF's copy failed: read it from the process */
	CHECK(procs__notice(ps, &n.hdr, sizeof(n)) == 0);
	CHECK((ls = procs__label_set(ps, pr, set->id)));
	CHECK_EQ_INT(ls->n, 2);
	CHECK_STR(ls->pairs[0].key, "phase");
	CHECK_STR(ls->pairs[0].value, "parse");
	CHECK_STR(ls->pairs[1].key, "tenant");
	CHECK_STR(ls->pairs[1].value, "acme");
	CHECK(!procs__label_set(ps, pr, set->id + 1));
	CHECK_EQ_INT(procs__stats(ps)->label_sets, 1);
	pmubpf_labels_free(set);
	procs__free(ps);
	symcache__free(sc);
	close(slots);
	return true;
}

/* A label set's notice as BPF sends it, and BPF's seen_labels entry. */
static bool notice_set(struct procs *ps, int seen, uint32_t tgid, const pmubpf_labels *set)
{
	static struct pmubpf_label_notice n; /* 5 KiB */
	struct pmubpf_label_seen_key k = { .tgid = tgid, .pgen = 1, .label = set->id,
					   .src = PMUBPF_LSRC_OURS };
	uint8_t one = 1;

	n.hdr = (struct pmubpf_notice){ .kind = PMUBPF_NOTICE_LABEL, .tgid = tgid, .pgen = 1,
					.tid = tgid, .label = set->id,
					.label_ptr = (uint64_t)(uintptr_t)set };
	n.len = 0;
	return bpf_map_update_elem(seen, &k, &one, BPF_ANY) == 0 &&
	       procs__notice(ps, &n.hdr, sizeof(n)) == 0;
}

static bool seen_has(int seen, uint32_t tgid, const pmubpf_labels *set)
{
	struct pmubpf_label_seen_key k = { .tgid = tgid, .pgen = 1, .label = set->id,
					   .src = PMUBPF_LSRC_OURS };
	uint8_t v;

	return bpf_map_lookup_elem(seen, &k, &v) == 0;
}

/* Label sets live as long as windows use them (procs.h,
 * procs__labels_gc): one no drained window used is retired at the next
 * gc (BPF's seen_labels entry deleted, the set still named), freed at
 * the one after if no window drained meanwhile used it, and read again
 * when its notice comes again; one used again while retired stays. */
static bool labels_kept_per_window(void)
{
	int seen = bpf_map_create(BPF_MAP_TYPE_HASH, "t_seen_labels", sizeof(struct pmubpf_label_seen_key), 1, 64, NULL);
	const pmubpf_labels *a = pmubpf_labels_new(NULL, "req", "a", NULL);
	const pmubpf_labels *b = pmubpf_labels_new(NULL, "req", "b", NULL);
	const pmubpf_labels *c = pmubpf_labels_new(NULL, "req", "c", NULL);
	uint32_t tgid = (uint32_t)getpid();
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	struct proc *pr;
	int64_t t;

	CHECK(seen >= 0 && a && b && c && ps);
	procs__set_seen_labels(ps, seen);
	CHECK((pr = procs__get(ps, tgid, 1)));
	CHECK(notice_set(ps, seen, tgid, a) && notice_set(ps, seen, tgid, b) && notice_set(ps, seen, tgid, c));
	CHECK(procs__label_set(ps, pr, a->id) && procs__label_set(ps, pr, b->id) && procs__label_set(ps, pr, c->id));
	/* Window 1 (ends at t) has samples of a only. */
	t = mono_ns() + 1000;
	procs__labels_used(ps, tgid, 1, a->id, t);
	CHECK_EQ_INT(procs__labels_gc(ps, t, t + 1), 0);
	CHECK(seen_has(seen, tgid, a));
	CHECK(!seen_has(seen, tgid, b) && !seen_has(seen, tgid, c)); /* retired: sent again if sampled */
	CHECK(procs__label_set(ps, pr, b->id));                       /* still named meanwhile */
	/* Window 2 (ends at t + 10) has a and c: c was sampled again. */
	procs__labels_used(ps, tgid, 1, a->id, t + 10);
	procs__labels_used(ps, tgid, 1, c->id, t + 10);
	CHECK_EQ_INT(procs__labels_gc(ps, t + 10, t + 11), 1); /* b */
	CHECK(!procs__label_set(ps, pr, b->id));
	CHECK(procs__label_set(ps, pr, a->id) && procs__label_set(ps, pr, c->id));
	CHECK_EQ_INT(procs__stats(ps)->label_sets_forgotten, 1);
	/* b sampled again: its notice comes again, and it is read again. */
	CHECK(notice_set(ps, seen, tgid, b));
	CHECK(procs__label_set(ps, pr, b->id));
	CHECK_EQ_INT(procs__stats(ps)->label_sets, 4);
	pmubpf_labels_free(a);
	pmubpf_labels_free(b);
	pmubpf_labels_free(c);
	procs__free(ps);
	symcache__free(sc);
	close(seen);
	return true;
}

/* A set a window's cap refused keeps BPF's seen_labels entry until the
 * window ends (not a notice at every sample), and is sent again after
 * it, when procs__labels_gc has reset the window's caps: then kept. */
static bool labels_refused_sent_after_window(void)
{
	int seen = bpf_map_create(BPF_MAP_TYPE_HASH, "t_seen_labels", sizeof(struct pmubpf_label_seen_key), 1,
				  LABEL_SETS_PER_PROC + 8, NULL);
	const pmubpf_labels **sets = calloc(LABEL_SETS_PER_PROC + 1, sizeof(*sets));
	uint32_t tgid = (uint32_t)getpid();
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	const pmubpf_labels *last;
	struct proc *pr;
	char v[16];
	int64_t t;

	CHECK(seen >= 0 && sets && ps);
	procs__set_seen_labels(ps, seen);
	CHECK((pr = procs__get(ps, tgid, 1)));
	for (int i = 0; i <= LABEL_SETS_PER_PROC; i++) {
		snprintf(v, sizeof(v), "%d", i);
		CHECK((sets[i] = pmubpf_labels_new(NULL, "req", v, NULL)));
		CHECK(notice_set(ps, seen, tgid, sets[i]));
	}
	last = sets[LABEL_SETS_PER_PROC];
	CHECK_EQ_INT(procs__stats(ps)->label_sets_over, 1);
	CHECK(!procs__label_set(ps, pr, last->id) || procs__label_set(ps, pr, last->id)->ours); /* [too many sets] */
	CHECK(seen_has(seen, tgid, last)); /* no notice at its every sample */
	/* The window ends, every set used in it: the refused one may come again. */
	t = mono_ns() + 1000;
	for (int i = 0; i < LABEL_SETS_PER_PROC; i++)
		procs__labels_used(ps, tgid, 1, sets[i]->id, t);
	procs__labels_gc(ps, t, t + 1);
	CHECK(!seen_has(seen, tgid, last));
	CHECK(notice_set(ps, seen, tgid, last));
	CHECK(procs__label_set(ps, pr, last->id) && !procs__label_set(ps, pr, last->id)->ours);
	for (int i = 0; i <= LABEL_SETS_PER_PROC; i++)
		pmubpf_labels_free(sets[i]);
	free(sets);
	procs__free(ps);
	symcache__free(sc);
	close(seen);
	return true;
}

/* procs__gc forgets exactly the processes found dead before its bound:
 * a child killed after its snapshot and one gone before it, never a live
 * process, whose record stays findable through the rebuilt index. */
/* The stats of gone processes' files: kept STAT_MEMO_NS by path and
 * inode, so a file unlinked meanwhile still answers; another inode at the
 * path is never answered for the first, and an expired entry is stat'ed
 * again. */
static bool stat_memo_by_path_and_inode(void)
{
	char dir[] = "/tmp/pmubpf-statmemo.XXXXXX", f[128], keep[128], tmp[128];
	struct symcache *sc = symcache__new();
	struct procs *ps = sc ? procs__new(sc, -1, -1) : NULL;
	const int64_t t0 = 1000000000LL;
	struct stat st, s0, s1;
	int fd;

	CHECK(ps && mkdtemp(dir));
	snprintf(f, sizeof(f), "%s/lib.so", dir);
	snprintf(keep, sizeof(keep), "%s/keep", dir);
	snprintf(tmp, sizeof(tmp), "%s/new", dir);
	CHECK((fd = open(f, O_CREAT | O_WRONLY, 0600)) >= 0);
	close(fd);
	CHECK(!stat(f, &s0) && !link(f, keep)); /* keep holds the first inode */
	CHECK(procs_stat_path(ps, f, s0.st_ino, t0, &st) && st.st_ino == s0.st_ino);
	/* Replaced by rename: the path is another inode now. */
	CHECK((fd = open(tmp, O_CREAT | O_WRONLY, 0600)) >= 0);
	CHECK(write(fd, "x", 1) == 1);
	close(fd);
	CHECK(!rename(tmp, f) && !stat(f, &s1) && s1.st_ino != s0.st_ino);
	/* Within the memo's time: the first inode as it was stat'ed. */
	CHECK(procs_stat_path(ps, f, s0.st_ino, t0 + 1, &st) && st.st_ino == s0.st_ino &&
	      st.st_size == 0);
	/* The new inode is not the memo's: stat'ed, and found. */
	CHECK(procs_stat_path(ps, f, s1.st_ino, t0 + 2, &st) && st.st_ino == s1.st_ino &&
	      st.st_size == 1);
	/* Expired: stat'ed again, and the path is not the first inode. */
	CHECK(!procs_stat_path(ps, f, s0.st_ino, t0 + STAT_MEMO_NS, &st));
	/* The second is memoized: answered after its file is gone. */
	CHECK(!unlink(f) && procs_stat_path(ps, f, s1.st_ino, t0 + 3, &st) && st.st_ino == s1.st_ino);
	CHECK(!procs_stat_path(ps, f, s1.st_ino, t0 + 2 + STAT_MEMO_NS, &st));
	unlink(keep);
	rmdir(dir);
	procs__free(ps);
	symcache__free(sc);
	return true;
}

static bool gc_forgets_the_dead(void)
{
	int seen = bpf_map_create(BPF_MAP_TYPE_HASH, "t_seen", 4, sizeof(struct pmubpf_seen), 8, NULL);
	uint32_t tgid = (uint32_t)getpid();
	struct pmubpf_seen v = { .pgen = 2 };
	struct symcache *sc = symcache__new();
	struct procs *ps;
	struct proc *live, *pr, *early;
	pid_t child, quick;

	CHECK(seen >= 0 && sc);
	CHECK(bpf_map_update_elem(seen, &tgid, &v, BPF_ANY) == 0);
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	quick = fork();
	if (quick == 0)
		_exit(0);
	CHECK(child > 0 && quick > 0);
	waitpid(quick, NULL, 0);
	ps = procs__new(sc, -1, seen);
	CHECK(ps);
	CHECK((live = procs__get(ps, tgid, 2)) && live->snapshotted);
	CHECK((pr = procs__get(ps, (uint32_t)child, 1)) && pr->snapshotted);
	CHECK((early = procs__get(ps, (uint32_t)quick, 1)) && !early->snapshotted);
	CHECK(early->dead); /* gone before its snapshot: dead from the start */
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	procs__rescan_all(ps); /* the child is not in `seen`: found gone */
	CHECK(pr->dead && !live->dead);
	int64_t last = pr->dead_ns > early->dead_ns ? pr->dead_ns : early->dead_ns;
	CHECK_EQ_INT(procs__gc(ps, early->dead_ns), 0); /* not before it: kept */
	CHECK_EQ_INT(procs__gc(ps, last + 1), 2);
	CHECK_EQ_INT(procs__stats(ps)->collected, 2);
	CHECK(procs__get(ps, tgid, 2) == live);
	CHECK_EQ_INT(procs__gc(ps, last + 1), 0);
	procs__free(ps);
	symcache__free(sc);
	close(seen);
	return true;
}

TEST_MAIN("procs",
	TEST(gc_forgets_the_dead),
	TEST(stat_memo_by_path_and_inode),
	TEST(own_snapshot),
	TEST(gone_before_snapshot),
	TEST(gone_named_from_reports),
	TEST(gone_named_from_images),
	TEST(gone_named_from_image_notices),
	TEST(gone_named_in_chroot),
	TEST(image_wait),
	TEST(live_from_log),
	TEST(log_behind),
	TEST(bpf_moved_no_read),
	TEST(held_while_built),
	TEST(late_report_earlier_image),
	TEST(rescan_after_dlopen),
	TEST(labels_record_and_set),
	TEST(labels_kept_per_window),
	TEST(labels_refused_sent_after_window),
)
