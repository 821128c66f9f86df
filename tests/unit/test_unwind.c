/* test_unwind.c — unit tests of user/unwind.c against real BPF maps of
 * the shapes bpf/unwind.bpf.h declares (created here, no program): the
 * test process's own mappings are loaded, then read back as BPF would
 * see them — every file mapping with its load bias and table, libc's rows
 * equal to ehf__build's, the vDSO's table; one table per object however
 * many processes use it; a new generation gets a new slot; slots and rows
 * running out degrade (counted) instead of failing; a dead process's slot
 * comes back, also when it died before the slot was published; tables
 * no process uses are given back when rows run short, never one in use.
 * Needs root (BPF).
 */
#include "unwind/ehframe.h"
#include "testing.h"
#include "unwind/unwind.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

struct fixture {
	struct unwind_maps m;
	struct symcache *sc;
	struct proc pr;
};

static bool maps_create(struct unwind_maps *m, uint32_t rows, uint32_t slots)
{
	m->max_rows = rows;
	m->max_tables = 64;
	m->max_slots = slots;
	LIBBPF_OPTS(bpf_map_create_opts, mm, .map_flags = BPF_F_MMAPABLE); /* as in BPF */

	m->rows_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "uw_rows", 4, sizeof(struct pmubpf_urow), rows, &mm);
	m->tables_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "uw_tables", 4, sizeof(struct pmubpf_utable), 64, NULL);
	m->slots_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "uw_slots", 4, sizeof(struct pmubpf_umap),
				     slots * PMUBPF_UW_MAX_MAPS, &mm);
	m->pids_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "uw_pids", 4, sizeof(struct pmubpf_upid), slots, NULL);
	m->asked_fd = -1;
	m->key_prog_fd = -1;
	m->files_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "uw_files", sizeof(struct pmubpf_ufile_key),
				     sizeof(struct pmubpf_ufile), 128, NULL);
	return m->rows_fd >= 0 && m->tables_fd >= 0 && m->slots_fd >= 0 && m->pids_fd >= 0 &&
	       m->files_fd >= 0;
}

static void maps_close(struct unwind_maps *m)
{
	close(m->rows_fd);
	close(m->tables_fd);
	close(m->slots_fd);
	close(m->pids_fd);
	close(m->files_fd);
}

/* Process pid as procs.c would have snapshotted it, as tgid. */
static bool pid_proc(struct symcache *sc, struct proc *pr, pid_t pid, uint32_t tgid, uint32_t pgen)
{
	memset(pr, 0, sizeof(*pr));
	pr->tgid = tgid;
	pr->pgen = pgen;
	if (procmaps__read(pid, true, &pr->maps))
		return false;
	pr->objs = calloc(pr->maps.n + 1, sizeof(*pr->objs));
	for (size_t i = 0; pr->objs && i < pr->maps.n; i++)
		if (pr->maps.maps[i].path[0] == '/')
			pr->objs[i] = symcache__get_path(sc, pr->maps.maps[i].path);
	pr->snapshotted = true;
	return pr->objs != NULL;
}

/* Our own process. */
static bool self_proc(struct symcache *sc, struct proc *pr, uint32_t tgid, uint32_t pgen)
{
	return pid_proc(sc, pr, getpid(), tgid, pgen);
}

static void proc_done(struct proc *pr)
{
	procmaps__free(&pr->maps);
	free(pr->objs);
}

/* 1: maps created; 0: not root (skip); -1: root, and creating them failed
 * (a failure: BPF works wherever the tests run as root). */
static int need_bpf(struct unwind_maps *m, uint32_t rows, uint32_t slots)
{
	if (geteuid() != 0)
		return 0;
	if (maps_create(m, rows, slots))
		return 1;
	fprintf(stdout, "  creating the unwind maps as root failed: %s\n", strerror(errno));
	return -1;
}

static bool loads_own_process(void)
{
#if !defined(__x86_64__)
	SKIP("x86-64 only (the unwinder is)");
#endif
	struct unwind_maps m;
	struct symcache *sc = symcache__new();
	struct proc pr;
	struct unwind_stats st;

	int have = need_bpf(&m, 1 << 20, 8);

	CHECK(have >= 0);
	if (!have)
		SKIP("needs root (BPF maps)");
	CHECK(sc && self_proc(sc, &pr, getpid(), 7));
	struct unwind *u = unwind__new(&m, 0);
	CHECK(u);
	unwind__proc(u, &pr);

	struct pmubpf_upid pid;
	CHECK_EQ_INT(bpf_map_lookup_elem(m.pids_fd, &pr.tgid, &pid), 0);
	CHECK_EQ_INT(pid.pgen, 7);
	CHECK(pid.nmaps > 0 && pid.nmaps <= PMUBPF_UW_MAX_MAPS);
	struct pmubpf_umap *up = calloc(pid.nmaps, sizeof(*up));
	CHECK(up);
	for (uint32_t i = 0; i < pid.nmaps; i++) {
		uint32_t idx = pid.slot * PMUBPF_UW_MAX_MAPS + i;

		CHECK_EQ_INT(bpf_map_lookup_elem(m.slots_fd, &idx, &up[i]), 0);
	}

	/* Every mapping: sorted, and libc's with a table whose rows are
	 * ehf__build's, at the right bias. */
	bool libc = false, vdso = false;
	for (uint32_t i = 0; i < pid.nmaps; i++) {
		const struct pmubpf_umap *um = &up[i];

		CHECK(!i || up[i - 1].start < um->start);
		const struct procmap *pm = procmaps__find(&pr.maps, um->start);
		CHECK(pm && pm->start == um->start && pm->end == um->end);
		if (!strcmp(pm->path, "[vdso]"))
			vdso = um->table != PMUBPF_UW_NO_TABLE;
		if (!strstr(pm->path, "/libc.so.6"))
			continue;
		CHECK(um->table != PMUBPF_UW_NO_TABLE);
		struct pmubpf_utable d;
		CHECK_EQ_INT(bpf_map_lookup_elem(m.tables_fd, &um->table, &d), 0);
		struct ehf_table t;
		int fd = open(pm->path, O_RDONLY);
		CHECK(fd >= 0 && ehf__build_fd(fd, &t) == 0);
		close(fd);
		CHECK_EQ_INT(d.len, t.n);
		for (uint32_t k = 0; k < d.len; k += 97) {
			struct pmubpf_urow r;
			uint32_t idx = d.off + k;

			CHECK_EQ_INT(bpf_map_lookup_elem(m.rows_fd, &idx, &r), 0);
			CHECK(r.pc == t.rows[k].pc && r.rule == t.rows[k].rule);
		}
		/* bias: the runtime address of qsort minus bias is its row pc */
		uint64_t mv;
		CHECK_EQ_INT(elfobj__mapping_vaddr(pr.objs[pm - pr.maps.maps], pm->pgoff,
						   pm->end - pm->start, &mv), 0);
		CHECK_EQ_INT(um->bias, pm->start - mv + t.base);
		uint64_t q = (uint64_t)(uintptr_t)&qsort;
		if (q >= um->start && q < um->end)
			CHECK(ehf__lookup(&t, q - um->bias + t.base) != NULL);
		ehf__free(&t);
		libc = true;
	}
	CHECK(libc);
	CHECK(vdso);
	unwind__stats(u, &st);
	CHECK(st.objects >= 2);
	CHECK_EQ_INT(st.procs, 1);
	CHECK_EQ_INT(st.slots_used, 1);

	/* A second process of the same objects: no new table. */
	uint64_t objects = st.objects, rows = st.rows;
	pr.tgid = getpid() + 100000;
	unwind__proc(u, &pr);
	unwind__stats(u, &st);
	CHECK_EQ_INT(st.objects, objects);
	CHECK_EQ_INT(st.rows, rows);
	CHECK_EQ_INT(st.slots_used, 2);

	/* The same again: nothing changes. A new generation: a new slot,
	 * the pid entry moved to it, the old slot retired (not in use). */
	unwind__proc(u, &pr);
	unwind__stats(u, &st);
	CHECK_EQ_INT(st.slots_used, 2);
	pr.pgen = 8;
	unwind__proc(u, &pr);
	CHECK_EQ_INT(bpf_map_lookup_elem(m.pids_fd, &pr.tgid, &pid), 0);
	CHECK_EQ_INT(pid.pgen, 8);
	unwind__stats(u, &st);
	CHECK_EQ_INT(st.slots_used, 2);

	char line[1024];
	unwind__summary(&st, line, sizeof(line));
	CHECK(strstr(line, "unwind tables: ") == line);
	free(up);
	unwind__free(u);
	proc_done(&pr);
	symcache__free(sc);
	maps_close(&m);
	return true;
}

static bool slots_and_rows_run_out(void)
{
#if !defined(__x86_64__)
	SKIP("x86-64 only (the unwinder is)");
#endif
	struct unwind_maps m;
	struct symcache *sc = symcache__new();
	struct proc pr;
	struct unwind_stats st;

	int have = need_bpf(&m, 4096, 2); /* too few rows for libc */

	CHECK(have >= 0);
	if (!have)
		SKIP("needs root (BPF maps)");
	CHECK(sc && self_proc(sc, &pr, getpid(), 1));
	struct unwind *u = unwind__new(&m, 0);
	CHECK(u);
	unwind__proc(u, &pr); /* builds the tables (map_files of a real pid) */
	for (uint32_t i = 0; i < 3; i++) {
		pr.tgid = 1000001 + i;
		unwind__proc(u, &pr);
	}
	unwind__stats(u, &st);
	CHECK(st.objects_full >= 1);       /* libc did not fit */
	CHECK(st.rows <= 4096);
	CHECK_EQ_INT(st.slots_used, 2);
	CHECK_EQ_INT(st.slots_full, 2);    /* two processes without a slot */
	/* A process that exited (BPF deleted its pid entry): its slot is
	 * swept and reused. */
	uint32_t gone = (uint32_t)getpid();
	CHECK_EQ_INT(bpf_map_delete_elem(m.pids_fd, &gone), 0);
	pr.tgid = 1000009;
	unwind__proc(u, &pr);
	unwind__stats(u, &st);
	CHECK_EQ_INT(st.slots_full, 2);
	CHECK_EQ_INT(st.slots_used, 2);
	struct pmubpf_upid pid;
	CHECK_EQ_INT(bpf_map_lookup_elem(m.pids_fd, &pr.tgid, &pid), 0);
	unwind__free(u);
	proc_done(&pr);
	symcache__free(sc);
	maps_close(&m);
	return true;
}

/* A process that exited before its slot was published (BPF's exit
 * tracepoint ran before the pid entry existed): when procs.c finds it
 * gone, the entry is deleted and the slot reused after the grace period.
 * Under process churn these used to hold every slot. */
static bool dead_before_publication(void)
{
#if !defined(__x86_64__)
	SKIP("x86-64 only (the unwinder is)");
#endif
	struct unwind_maps m;
	struct symcache *sc = symcache__new();
	struct proc pr;
	struct unwind_stats st;
	struct pmubpf_upid pid;

	if (!need_bpf(&m, 1 << 20, 2))
		SKIP("needs root and BPF");
	CHECK(sc && self_proc(sc, &pr, 2000001, 1));
	struct unwind *u = unwind__new(&m, 0);
	CHECK(u);
	/* Churn: each process published, then found dead. Two slots serve
	 * any number of them. */
	for (uint32_t i = 0; i < 6; i++) {
		pr.tgid = 2000001 + i;
		pr.dead = false;
		unwind__proc(u, &pr);
		CHECK_EQ_INT(bpf_map_lookup_elem(m.pids_fd, &pr.tgid, &pid), 0);
		pr.dead = true;
		unwind__proc(u, &pr);
		CHECK(bpf_map_lookup_elem(m.pids_fd, &pr.tgid, &pid) != 0);
		unwind__stats(u, &st);
		CHECK_EQ_INT(st.slots_used, 0);
		usleep(25000); /* past the grace period */
	}
	unwind__stats(u, &st);
	CHECK_EQ_INT(st.slots_full, 0);
	CHECK_EQ_INT(st.slots_orphaned, 6);
	CHECK_EQ_INT(st.procs, 6);
	/* A dead process whose entry BPF already deleted: nothing to
	 * delete, but its slot goes back too. */
	pr.tgid = 2000100;
	pr.dead = false;
	unwind__proc(u, &pr);
	CHECK_EQ_INT(bpf_map_delete_elem(m.pids_fd, &pr.tgid), 0);
	pr.dead = true;
	unwind__proc(u, &pr);
	unwind__stats(u, &st);
	CHECK_EQ_INT(st.slots_used, 0);
	CHECK_EQ_INT(st.slots_orphaned, 6);
	unwind__free(u);
	proc_done(&pr);
	symcache__free(sc);
	maps_close(&m);
	return true;
}

/* The BPF side's computation for a process with no slot: the file's
 * entry (by the kernel's dev and inode, as /proc/PID/maps prints them),
 * the executable segment the mapping's file range meets, and the bias
 * from it. false if the file has no entry. */
static bool file_bias(const struct unwind_maps *m, const struct procmap *pm, bool vdso,
		      uint32_t *table, uint64_t *bias)
{
	struct pmubpf_ufile_key key = { 0 };
	struct pmubpf_ufile f;
	uint64_t off = vdso ? 0 : pm->pgoff, len = pm->end - pm->start;

	if (!vdso) {
		key.ino = pm->inode;
		key.dev = (pm->dev_major << 20) | pm->dev_minor;
	}
	if (bpf_map_lookup_elem(m->files_fd, &key, &f))
		return false;
	for (uint32_t i = 0; i < f.nsegs && i < PMUBPF_UW_FILE_SEGS; i++)
		if (off < f.seg[i].end && off + len > f.seg[i].off) {
			*table = f.table;
			*bias = pm->start - off + f.seg[i].adj;
			return true;
		}
	return false;
}

/* Every table tgid's slot points at holds the rows ehf__build gives its
 * file now (every 61st row, and the last): no table was given back and
 * reused under a slot that still refers to it. */
static bool slot_tables_true(const struct unwind_maps *m, const struct proc *pr)
{
	struct pmubpf_upid pid;
	int tables = 0;

	CHECK_EQ_INT(bpf_map_lookup_elem(m->pids_fd, &pr->tgid, &pid), 0);
	for (uint32_t i = 0; i < pid.nmaps; i++) {
		uint32_t idx = pid.slot * PMUBPF_UW_MAX_MAPS + i;
		struct pmubpf_umap um;
		struct pmubpf_utable d;
		struct ehf_table t;

		CHECK_EQ_INT(bpf_map_lookup_elem(m->slots_fd, &idx, &um), 0);
		const struct procmap *pm = procmaps__find(&pr->maps, um.start);
		CHECK(pm);
		if (um.table == PMUBPF_UW_NO_TABLE || pm->path[0] != '/')
			continue;
		CHECK_EQ_INT(bpf_map_lookup_elem(m->tables_fd, &um.table, &d), 0);
		int fd = open(pm->path, O_RDONLY);
		CHECK(fd >= 0 && ehf__build_fd(fd, &t) == 0);
		close(fd);
		CHECK_EQ_INT(d.len, t.n);
		for (uint32_t k = 0; k < d.len; k = k + 61 < d.len || k == d.len - 1 ? k + 61 : d.len - 1) {
			struct pmubpf_urow r;
			uint32_t row = d.off + k;

			CHECK_EQ_INT(bpf_map_lookup_elem(m->rows_fd, &row, &r), 0);
			CHECK(r.pc == t.rows[k].pc && r.rule == t.rows[k].rule);
		}
		ehf__free(&t);
		tables++;
	}
	CHECK(tables > 0);
	return true;
}

/* A child running /bin/sleep, snapshotted as tgid (then killed: its
 * files are reached by path, as for any process gone). */
static bool sleep_proc(struct symcache *sc, struct proc *pr, uint32_t tgid)
{
	char exe[64], target[4096];
	pid_t c = fork();

	if (c == 0) {
		execl("/bin/sleep", "sleep", "10", (char *)NULL);
		_exit(127);
	}
	CHECK(c > 0);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)c);
	for (int i = 0; i < 200; i++) { /* until the exec is done */
		ssize_t n = readlink(exe, target, sizeof(target) - 1);

		if (n > 0 && (target[n] = '\0', strstr(target, "sleep")))
			break;
		usleep(5000);
	}
	usleep(20000); /* ld.so done mapping libc */
	bool ok = pid_proc(sc, pr, c, tgid, 1);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	return ok;
}

/* Rows are given back: a table no process uses any more makes room for
 * a new object's, never one a live slot still refers to. An always-on
 * recording sees new binaries for days; without this the rows fill once
 * and every later binary is walked by frame pointer. */
static bool unused_tables_reclaimed(void)
{
#if !defined(__x86_64__)
	SKIP("x86-64 only (the unwinder is)");
#endif
	struct unwind_maps m;
	struct symcache *sc = symcache__new();
	struct proc a, b;
	struct unwind_stats st;

	if (!need_bpf(&m, 1 << 20, 4))
		SKIP("needs root and BPF");
	CHECK(sc && self_proc(sc, &a, 3000001, 1) && sleep_proc(sc, &b, 3000002));
	/* The rows each needs alone, and both together. */
	struct unwind *u = unwind__new(&m, 0);
	CHECK(u);
	unwind__proc(u, &a);
	unwind__stats(u, &st);
	uint64_t rows_a = st.rows;
	unwind__proc(u, &b);
	unwind__stats(u, &st);
	uint64_t rows_ab = st.rows;
	unwind__free(u);
	maps_close(&m);
	CHECK(need_bpf(&m, 1 << 20, 4) == 1);
	u = unwind__new(&m, 0);
	CHECK(u);
	unwind__proc(u, &b);
	unwind__stats(u, &st);
	uint64_t rows_b = st.rows;
	unwind__free(u);
	maps_close(&m);

	/* Room for either, not both. */
	uint32_t room = (uint32_t)(rows_a > rows_b ? rows_a : rows_b) + 16;
	CHECK(rows_ab > room);
	CHECK(need_bpf(&m, room, 4) == 1);
	u = unwind__new(&m, 0);
	CHECK(u);
	unwind__proc(u, &a);
	unwind__stats(u, &st);
	CHECK_EQ_INT(st.objects_full, 0);
	/* a is alive: b's new object does not fit, a's tables stay. */
	unwind__proc(u, &b);
	unwind__stats(u, &st);
	CHECK(st.objects_full >= 1);
	CHECK_EQ_INT(st.tables_reclaimed, 0);
	CHECK(slot_tables_true(&m, &a));
	/* a's own binary (this test), a file BPF finds its table by. */
	char self[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const struct procmap *exe_pm = NULL;
	CHECK(sl > 0);
	self[sl] = '\0';
	for (size_t i = 0; i < a.maps.n && !exe_pm; i++)
		if (a.maps.maps[i].exec && !strcmp(a.maps.maps[i].path, self))
			exe_pm = &a.maps.maps[i];
	CHECK(exe_pm);
	uint32_t t_own;
	uint64_t b_own;
	CHECK(file_bias(&m, exe_pm, false, &t_own, &b_own));
	uint64_t full = st.objects_full;
	/* a is gone (past the slot's grace period, and past the second a
	 * table left out waits before it is tried again): b's next snapshot
	 * takes the room a's tables held, and all of b's tables are whole. */
	a.dead = true;
	unwind__proc(u, &a);
	usleep(1050000);
	b.pgen = 2;
	unwind__proc(u, &b);
	unwind__stats(u, &st);
	CHECK(st.tables_reclaimed >= 1);
	CHECK_EQ_INT(st.objects_full, full);
	/* Its file went with it: BPF finds no table of a's own binary. */
	struct pmubpf_ufile_key own = { .ino = exe_pm->inode,
					.dev = (exe_pm->dev_major << 20) | exe_pm->dev_minor };
	struct pmubpf_ufile fe;
	CHECK(bpf_map_lookup_elem(m.files_fd, &own, &fe) && errno == ENOENT);
	CHECK(st.rows <= room);
	CHECK(slot_tables_true(&m, &b));
	char line[1024];
	unwind__summary(&st, line, sizeof(line));
	CHECK(strstr(line, " reclaimed (unused)") != NULL);
	unwind__free(u);
	proc_done(&a);
	proc_done(&b);
	symcache__free(sc);
	maps_close(&m);
	return true;
}

/* Every mapping of our own process's slot that has a table: its file
 * names the same table at the same bias (what BPF unwinds a process
 * with no slot by), the vDSO's too; a file built before any process
 * maps it (unwind__preload) is named by the inode a mapping of it has
 * (here, off overlayfs, what stat() says). */
static bool files_name_tables(void)
{
#if !defined(__x86_64__)
	SKIP("x86-64 only (the unwinder is)");
#endif
	struct unwind_maps m;
	struct symcache *sc = symcache__new();
	struct proc pr;
	struct unwind_stats st;
	int have = need_bpf(&m, 1 << 20, 8);

	CHECK(have >= 0);
	if (!have)
		SKIP("needs root (BPF maps)");
	CHECK(sc && self_proc(sc, &pr, getpid(), 3));
	struct unwind *u = unwind__new(&m, 0);
	CHECK(u);
	unwind__proc(u, &pr);
	struct pmubpf_upid pid;
	CHECK_EQ_INT(bpf_map_lookup_elem(m.pids_fd, &pr.tgid, &pid), 0);
	int named = 0;
	bool vdso = false;
	for (uint32_t i = 0; i < pid.nmaps; i++) {
		uint32_t idx = pid.slot * PMUBPF_UW_MAX_MAPS + i, table;
		struct pmubpf_umap um;
		uint64_t bias;

		CHECK_EQ_INT(bpf_map_lookup_elem(m.slots_fd, &idx, &um), 0);
		const struct procmap *pm = procmaps__find(&pr.maps, um.start);
		CHECK(pm);
		bool is_vdso = !strcmp(pm->path, "[vdso]");
		if (um.table == PMUBPF_UW_NO_TABLE || (pm->path[0] != '/' && !is_vdso))
			continue;
		if (!file_bias(&m, pm, is_vdso, &table, &bias)) {
			printf("  %s: no file entry\n", pm->path);
			return false;
		}
		CHECK_EQ_INT(table, um.table);
		CHECK(bias == um.bias);
		named++;
		vdso |= is_vdso;
	}
	CHECK(named >= 3 && vdso);
	unwind__stats(u, &st);
	CHECK(st.files >= (uint64_t)named - 1);
	unwind__free(u);
	maps_close(&m);

	/* Before any process: the shell, by its path. */
	char sh[4096];
	struct stat sst;
	CHECK(realpath("/bin/sh", sh) && !stat(sh, &sst));
	CHECK(need_bpf(&m, 1 << 20, 8) == 1);
	u = unwind__new(&m, 0);
	CHECK(u);
	struct procs *ps = procs__new(sc, -1, -1);
	CHECK(ps);
	CHECK_EQ_INT(unwind__preload(u, ps, sh), 0);
	CHECK_EQ_INT(unwind__preload(u, ps, "/nonexistent/pmubpf"), -ENOENT);
	unwind__stats(u, &st);
	CHECK(st.preloaded == 1);
	struct pmubpf_ufile_key key = { .ino = sst.st_ino,
					.dev = (major(sst.st_dev) << 20) | minor(sst.st_dev) };
	struct pmubpf_ufile f;
	struct pmubpf_utable d;
	CHECK_EQ_INT(bpf_map_lookup_elem(m.files_fd, &key, &f), 0);
	CHECK(f.nsegs >= 1 && f.seg[0].end > f.seg[0].off);
	CHECK_EQ_INT(bpf_map_lookup_elem(m.tables_fd, &f.table, &d), 0);
	CHECK(d.len > 100);
	procs__free(ps);
	unwind__free(u);
	maps_close(&m);
	proc_done(&pr);
	symcache__free(sc);
	return true;
}

static bool sizes(void)
{
	uint32_t r1, t1, s1, r2, t2, s2;

	unwind__sizes(false, &r1, &t1, &s1);
	unwind__sizes(true, &r2, &t2, &s2);
	CHECK(r1 >= 100000 && r2 >= r1 && s2 >= s1 && t1 > 0);
	return true;
}

TEST_MAIN("unwind",
	  TEST(sizes),
	  TEST(loads_own_process),
	  TEST(files_name_tables),
	  TEST(slots_and_rows_run_out),
	  TEST(dead_before_publication),
	  TEST(unused_tables_reclaimed))
