/* procs_read.c — reading a process: its first snapshot (from /proc, or
 * put together from BPF's images or the kernel's reports, maplog.h, when
 * it is gone or in another image), the objects behind its mappings. Its
 * maps read again and merged are procs_rescan.c; the registry and its
 * per-tick work procs.c.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/clock.h"
#include "lib/hashtab.h"
#include "symbols/debuginfo.h"
#include "maplog.h"
#include "procs.h"
#include "procs_int.h"
#include "procsyms.h"

/* A perf map refused for its owner, type or size would otherwise make
 * JIT frames addresses in silence: count it once per process, say it
 * with -v. */
void procs_note_jit_refusal(struct procs *p, struct proc *pr)
{
	int e = -pr->jit_refused;

	if (!pr->jit_refused || pr->jit_refusal_noted)
		return;
	pr->jit_refusal_noted = true;
	p->st.jit_maps_refused++;
	if (p->verbose)
		fprintf(stderr, "pmubpf: pid %u (%s): perf map /tmp/perf-%u.map refused: %s\n",
			pr->tgid, pr->comm, pr->jit_src.nspid,
			e == EPERM ? "neither root's nor the process user's file, or a symbolic link" :
			e == EFBIG ? "larger than 64 MiB" : "not a regular file");
}

/* The object behind one mapping: its file (procmaps__open), or the
 * vDSO's image read out of the process. */
bool procs_stat_path(struct procs *p, const char *path, uint64_t ino, int64_t now,
		     struct stat *st)
{
	struct stat_memo *mm = &p->path_stats;
	size_t len = strlen(path);

	if (len >= STAT_MEMO_PATH)
		return !stat(path, st) && st->st_ino == ino;
	for (unsigned i = 0; i < STAT_MEMO_N; i++)
		if (mm->e[i].at_ns && mm->e[i].ino == ino && now - mm->e[i].at_ns < STAT_MEMO_NS &&
		    !strcmp(mm->e[i].path, path)) {
			*st = mm->e[i].st;
			return true;
		}
	if (stat(path, st) || st->st_ino != ino)
		return false;
	unsigned i = mm->next++ % STAT_MEMO_N;
	memcpy(mm->e[i].path, path, len + 1);
	mm->e[i].ino = ino;
	mm->e[i].at_ns = now;
	mm->e[i].st = *st;
	return true;
}

struct elfobj *procs__open_mapping(struct procs *p, uint32_t tgid, const struct procmap *m)
{
	/* In another mount namespace, its debug files are looked up in
	 * there (through /proc/PID/root): the object is noted once, by
	 * whoever opens it first, and kept so. */
	struct proc pr = { .tgid = tgid, .via = tgid,
			   .other_mntns = procsyms__other_mntns(tgid, 0) };

	return procs_open_obj(p, &pr, m);
}

struct elfobj *procs__open_path(struct procs *p, const char *path)
{
	struct proc pr = { .dead = true }; /* no process: by path */
	struct stat st;

	if (stat(path, &st))
		return NULL;
	return procs_open_obj(p, &pr, &(struct procmap){ .path = (char *)path, .inode = st.st_ino, .exec = true });
}

struct elfobj *procs_open_obj(struct procs *p, const struct proc *pr, const struct procmap *m)
{
	uint32_t tgid = pr->dead ? 0 : pr->via; /* gone: by path (procmaps__open) */
	struct stat st;
	int fd;

	if (!strcmp(m->path, "[vdso]"))
		return procsyms__vdso(p->sc, tgid, m, &p->own_vdso);
	if (!m->path[0] || m->path[0] == '[')
		return NULL; /* anonymous, [stack], ... */
	/* A file the cache has already, known by the build-id the kernel
	 * read: no open, no fstat (under churn every new process maps the
	 * same few files). Its debuginfo was noted when first opened. */
	struct elfobj *known = symcache__get_build_id(p->sc, m->build_id, m->build_id_len);
	if (known)
		return known;
	/* An image from the mmap reports (no build-id), of a process gone
	 * or of one that sees our files: a stat of the path, still that
	 * inode, finds what the cache has with no open, fstat, dup and
	 * close (under churn, most processes: env before its exec, and the
	 * new processes read from the log). */
	if ((!tgid || !pr->other_mntns) && m->path[0] == '/' && m->inode &&
	    procs_stat_path(p, m->path, m->inode, mono_ns(), &st) &&
	    (known = symcache__get_stat(p->sc, &st)))
		return known;
	fd = procmaps__open(tgid, m, &st);
	if (fd < 0) {
		p->st.objs_unreadable++;
		return NULL;
	}
	int keep = p->dbg ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	struct elfobj *o = symcache__get_fd(p->sc, fd, st.st_dev, st.st_ino);
	if (!o) {
		p->st.objs_unreadable++;
		if (keep >= 0)
			close(keep);
	} else if (p->dbg) {
		debuginfo__note(p->dbg, o, keep, tgid, m->path, pr->other_mntns);
	}
	return o;
}

static void read_comm(uint32_t tgid, char *comm, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, len - 1);
	close(fd);
	if (n > 0) {
		comm[n] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
	}
}

/* The main executable's inode: the report names its mapping first. */
static void read_exe(struct proc *pr)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u/exe", pr->via);
	if (!stat(path, &st))
		pr->exe_ino = st.st_ino;
}

/* The image's maps are known: open its objects, note what it is. */
static void snapshot_objects(struct procs *p, struct proc *pr)
{
	for (size_t i = 0; i < pr->maps.n; i++)
		pr->objs[i] = procs_open_obj(p, pr, &pr->maps.maps[i]);
}

/* pr's image put together from the kernel's reports (maplog.h): gone, or
 * exec'd, before its maps were read. A process forked without exec'ing
 * has its parent's image at the fork under its own mappings: from the
 * log, or from the parent's snapshot for a parent older than the log.
 * *whole: the image's start is in the log (an exec, or a fork from an
 * image whose start is known), so nothing of it is missing, unless the
 * kernel lost reports after *since (the earliest start in the chain).
 * 0 and maps, -ESRCH (nothing in the log) or -ENOMEM. */
static int log_image(struct procs *p, const struct proc *pr, int64_t t, struct procmaps *maps,
		     uint64_t *exe, bool *whole, int64_t *since)
{
	struct maplog_origin o;
	int n = maplog__image(p->log, pr->tgid, t, maps, &o);

	*exe = o.kind == MAPLOG_EXEC ? o.exe_inode : 0;
	*since = o.t;
	for (int depth = 0; n >= 0 && o.kind == MAPLOG_FORK && depth < 8; depth++) {
		struct procmaps under = { 0 };
		uint32_t parent = o.ptgid;
		uint64_t idx;

		n = maplog__image(p->log, parent, o.t, &under, &o);
		if (n >= 0 && o.kind != MAPLOG_UNKNOWN)
			*since = o.t;
		if (n >= 0 && o.kind == MAPLOG_EXEC)
			*exe = o.exe_inode;
		if (n >= 0 && o.kind == MAPLOG_UNKNOWN &&
		    hashtab__find(p->by_tgid, hashtab__hash_u64(parent), &parent, &idx) &&
		    p->v[idx]->snapshotted) { /* what the log lacks, the parent's snapshot has */
			n = maplog__layer(&under, &p->v[idx]->maps);
			*exe = p->v[idx]->exe_ino;
			o.kind = MAPLOG_EXEC; /* whole: the snapshot was read whole */
		}
		if (n >= 0)
			n = maplog__layer(maps, &under);
		procmaps__free(&under);
	}
	*whole = o.kind == MAPLOG_EXEC;
	if (n < 0 || !maps->n) {
		procmaps__free(maps);
		return n < 0 ? n : -ESRCH;
	}
	return 0;
}

/* The image a live process was sampled in (at t), from the log alone:
 * its start is there and no report was lost since. Under churn nearly
 * every process began while recording, and reading its maps (the ioctl
 * or the text), its name and its executable from /proc would only say
 * again what the kernel's reports said; a process older than the log,
 * or one whose reports may be short, is read. 0 and maps (its
 * executable's inode in *exe), else -ESRCH. */
static int log_image_whole(struct procs *p, const struct proc *pr, int64_t t, struct procmaps *maps,
			   uint64_t *exe)
{
	bool whole = false;
	int64_t since = 0;

	if (log_image(p, pr, t, maps, exe, &whole, &since))
		return -ESRCH;
	if (whole && (!p->lost_ns || since > p->lost_ns))
		return 0;
	procmaps__free(maps);
	return -ESRCH;
}

/* pr's snapshot from an image put together without reading it (taken
 * over): final, as the process is gone or in another image. *count: the
 * stat of where the image came from (the log, or BPF). */
static int snapshot_final(struct procs *p, struct proc *pr, struct procmaps *maps, uint64_t exe,
			  uint64_t *count)
{
	pr->objs = calloc(maps->n, sizeof(*pr->objs));
	if (!pr->objs) {
		procmaps__free(maps);
		return -ENOMEM;
	}
	procmaps__fit(maps);
	pr->maps = *maps;
	*maps = (struct procmaps){ 0 };
	pr->exe_ino = exe;
	procs_set_dead(pr); /* exited or exec'd: these maps are final */
	snapshot_objects(p, pr);
	pr->snapshotted = true;
	pr->next_rescan = INT64_MAX;
	(*count)++;
	if (p->maps_hook) /* gone: no slot, but its files' tables */
		p->maps_hook(p->maps_hook_ctx, pr);
	return 0;
}

/* pr had no image to be read: gone before it was, or first sampled with
 * no address space left (late in its exit: no user stack was taken). */
static void count_gone(struct procs *p, const struct proc *pr)
{
	if (pr->seen_nomm)
		p->st.gone_nomm++;
	else
		p->st.gone++;
}

/* pr's image as BPF sent it when it ended (procs_images.c): final. */
static int snapshot_from_left(struct procs *p, struct proc *pr)
{
	struct procmaps maps = pr->left;

	pr->left = (struct procmaps){ 0 };
	pr->left_cap = 0;
	return snapshot_final(p, pr, &maps, pr->left_exe, &p->st.from_images);
}

/* A report's stamp and its write into the buffer, apart: by far less. */
#define REPORTS_SLACK_NS 1000000LL

enum image_state {
	IMAGE_BEHIND, /* sampled after the reports were last read: asked
	               * again once they are (pr->log_behind) */
	IMAGE_SAME,   /* /proc shows the image pr was sampled in */
	IMAGE_MOVED,  /* it exec'd since (or is gone): the log has pr's */
	IMAGE_UNSURE, /* BPF forgot it: exited or exec'd, or LRU-evicted */
};

/* Is the process still in the image pr (sampled at t) was taken in? The
 * log says it exec'd since t, or BPF's generation has moved on to a later
 * image; an absent generation says it exited or exec'd (exec and exit
 * delete it) before the log has heard, or that the LRU evicted it. */
static enum image_state image_state(struct procs *p, const struct proc *pr, int64_t t)
{
	struct pmubpf_seen v;

	if (t && maplog__exec_between(p->log, pr->tgid, t, INT64_MAX))
		return IMAGE_MOVED;
	if (p->seen_fd < 0) /* no BPF (unit tests): the read is all there is */
		return IMAGE_SAME;
	if (bpf_map_lookup_elem(p->seen_fd, &pr->tgid, &v))
		return IMAGE_UNSURE;
	return v.pgen == pr->pgen && !v.ended ? IMAGE_SAME : IMAGE_MOVED;
}

/* What read_live learned besides the maps. */
struct live_read {
	char comm[PMUBPF_COMM_LEN + 1]; /* its name, where read to tell ("": not) */
	bool from_log;              /* the maps came from the log: the name is
	                             * the notice's, the executable the log's */
	uint64_t exe;               /* from_log: the executable's inode (0:
	                             * not in the log) */
};

/* A live process's snapshot from its maps just read (taken over). */
static int snapshot_live(struct procs *p, struct proc *pr, struct procmaps *maps,
			 const struct live_read *r)
{
	pr->maps = *maps;
	*maps = (struct procmaps){ 0 };
	pr->objs = calloc(pr->maps.n ? pr->maps.n : 1, sizeof(*pr->objs));
	if (!pr->objs)
		return -ENOMEM;
	if (p->data_maps)
		procs_datamaps_read(pr);
	pr->other_mntns = procsyms__other_mntns(pr->via, pr->mntns);
	snapshot_objects(p, pr);
	if (r->from_log) {
		p->st.live_from_log++;
	} else {
		p->st.live_read++;
		p->st.live_read_moving += pr->seen_moving;
		if (r->comm[0])
			snprintf(pr->comm, sizeof(pr->comm), "%s", r->comm);
		else
			read_comm(pr->via, pr->comm, sizeof(pr->comm));
	}
	pr->exe_ino = r->from_log ? r->exe : 0;
	if (!pr->exe_ino)
		read_exe(pr);
	/* BPF's cgroup id says nothing (v1 hierarchies, or no notice):
	 * /proc says, while it lives. */
	if (!pr->cg && cgroups__id_says_nothing(p->cg, pr->cgroup_id)) {
		pr->cg = cgroups__of_pid(p->cg, (pid_t)pr->via);
	}
	procsyms__jit_snapshot(pr);
	procs_note_jit_refusal(p, pr);
	pr->snapshotted = true;
	pr->next_rescan = mono_ns() + procs_rescan_delay(0);
	if (p->maps_hook)
		p->maps_hook(p->maps_hook_ctx, pr);
	procs_labels_find(p, pr);
	procs_flabels_find(p, pr, false);
	return 0;
}

/* Read maps of pr's process, and whether they are of the image pr was
 * sampled in (IMAGE_MOVED: the read failed, the process is gone); *r
 * what else was learned. */
static enum image_state read_live(struct procs *p, struct proc *pr, int64_t t, bool first,
				  struct procmaps *maps, struct live_read *r)
{
	enum image_state st;

	*r = (struct live_read){ 0 };
	/* Under churn most processes noticed are gone, or exec'd, by the
	 * time their notice is read (of 14000 maps reads in a 10 s churn
	 * recording, 12429 found no process): the log and a signal 0 say
	 * so for far less than an open of /proc/PID/maps. */
	if (t && maplog__exec_between(p->log, pr->tgid, t, INT64_MAX))
		return IMAGE_MOVED;
	if (kill((pid_t)pr->tgid, 0) && errno == ESRCH)
		return IMAGE_MOVED;
	/* Sampled after the reports were last read, or just before: the log
	 * may lack what the process did up to its sample (its exec, or the
	 * image it exec'd into: the log would give the one before). A long
	 * batch of notices under churn (new ones keep coming while it is
	 * read) had most of its live processes read from /proc for want of
	 * their exec in the log, and could give a process started by `nice
	 * PROGRAM` nice's image. Once, the first read waits for the reports
	 * (procs__settle, a loop step at most). */
	if (first && t && !pr->log_behind && p->reports_upto && t + REPORTS_SLACK_NS > p->reports_upto)
		return IMAGE_BEHIND;
	/* The log has the image sampled at t: no read, and no exec under
	 * way can show its new maps here. Not for a sample taken inside
	 * execve (past its point of no return the reports already tell of
	 * the new image while the generation is still the old one's) or in
	 * an exit (a new generation of an image already known, going): the
	 * read below tells those apart, or the process waits for the log. */
	if (t && !pr->seen_moving && log_image_whole(p, pr, t, maps, &r->exe) == 0) {
		procmaps__fit(maps); /* kept as long as the process record */
		r->from_log = true;
		return image_state(p, pr, t);
	}
	/* BPF's word first, at the first read: a generation moved on, or
	 * gone (an exec done, an exit: a zombie still takes signal 0), and
	 * the read would only be thrown away. Under churn 3 in 4 reads were,
	 * most of processes first sampled inside execve or an exit. Not at
	 * the second: an entry BPF's LRU evicted is only told apart there,
	 * by the read. */
	if (first && t && (st = image_state(p, pr, t)) != IMAGE_SAME)
		return st;
	p->st.maps_reads++;
	if (procs_read_maps(pr, true, maps))
		return IMAGE_MOVED;
	st = image_state(p, pr, t);
	/* In the middle of an exec (past its point of no return, before BPF
	 * hears it is done) the maps are the new image's, BPF's generation
	 * the old one's: no executable mapping yet, or the name already
	 * changed (the kernel renames before it maps the new program). */
	if (st == IMAGE_SAME && t) {
		read_comm(pr->via, r->comm, sizeof(r->comm));
		if (!maps->n || strncmp(r->comm, pr->comm, PMUBPF_COMM_LEN - 1))
			st = IMAGE_UNSURE;
	}
	return st;
}

/* The first read of pr, sampled at t (CLOCK_MONOTONIC; 0: unknown, now).
 * A process that is gone, or not in that image any more (or may not be),
 * waits for procs__settle: only after the reports written meanwhile are
 * read is the log whole up to now. */
int procs_snapshot(struct procs *p, struct proc *pr, int64_t t)
{
	struct procmaps maps = { 0 };
	struct live_read r;
	enum image_state st;
	uint64_t exe;
	int64_t since;
	bool whole;
	int err;

	if (pr->left.n) /* it ended already: BPF sent its image */
		return snapshot_from_left(p, pr);
	/* BPF sends its image as it ends: most short-lived processes do
	 * within the wait, and need no read (procs__read_waiting). */
	if (p->st.images && t && !pr->image_waited) {
		pr->image_waited = true;
		pr->image_wait = t + p->image_wait_ns;
		return -EAGAIN;
	}
	/* First sampled inside an exec past its point of no return: /proc
	 * shows the new image (on 7.x under the new name: the check in
	 * read_live cannot tell), the image it ran in is what BPF sends at
	 * the exec's end (its walk, or its parent's). Waited for while the
	 * exec goes on; once it is over, read at the next settle, after
	 * the notices (procs_log_retry takes BPF's image). */
	if (pr->seen_execing && p->st.images && t && !p->reading_all) {
		int64_t now = mono_ns();

		if (procs_same_generation(p, pr) && now < t + PROCS_EXEC_WAIT_NS) {
			pr->image_wait = now + p->image_wait_ns;
			return -EAGAIN;
		}
		if (!pr->log_wait && !pr->log_behind) {
			pr->log_behind = 2; /* once */
			pr->log_wait = true;
			return -EAGAIN;
		}
	}
	st = read_live(p, pr, t, true, &maps, &r);
	if (st == IMAGE_SAME || (st == IMAGE_UNSURE && !t))
		return snapshot_live(p, pr, &maps, &r);
	procmaps__free(&maps);
	if (t) {
		if (st == IMAGE_BEHIND)
			pr->log_behind = 1; /* never again once tried (2) */
		pr->log_wait = true;
		return -EAGAIN;
	}
	/* No sample time (procs__get after the fact): the latest image. */
	err = log_image(p, pr, mono_ns(), &maps, &exe, &whole, &since);
	if (!err)
		err = snapshot_final(p, pr, &maps, exe, &p->st.from_log);
	if (err)
		count_gone(p, pr);
	return err;
}

void procs_image_wait_end(struct procs *p, struct proc *pr)
{
	pr->image_wait = 0;
	if (procs_snapshot(p, pr, pr->seen_ns) != -EAGAIN && !pr->snapshotted) {
		count_gone(p, pr);
		procs_set_dead(pr);
	}
}

/* The second and last try for a process gone or moved at its first read
 * (procs__settle), the reports that came meanwhile read: a
 * whole image from the log; else, if it still lives in the image it was
 * sampled in (no exec since in the log: BPF's LRU forgot it), its maps;
 * else what the log has of it; else it is gone (counted). */
void procs_log_retry(struct procs *p, struct proc *pr)
{
	struct procmaps maps = { 0 }, live = { 0 };
	struct live_read r;
	uint64_t exe = 0;
	int64_t since = 0;
	bool whole = false;
	int err;

	pr->log_wait = false;
	if (pr->left.n) {
		if (snapshot_from_left(p, pr))
			count_gone(p, pr);
		if (!pr->snapshotted)
			procs_set_dead(pr);
		return;
	}
	if (pr->log_behind == 1) { /* alive at its notice: its first read, once more */
		pr->log_behind = 2;
		if (procs_snapshot(p, pr, pr->seen_ns) != -EAGAIN && !pr->snapshotted)
			procs_set_dead(pr);
		return;
	}
	err = log_image(p, pr, pr->seen_ns, &maps, &exe, &whole, &since);
	if (err || !whole) {
		enum image_state st = read_live(p, pr, pr->seen_ns, false, &live, &r);

		/* Not moved: no exec since in the log (image_state). */
		if (st != IMAGE_MOVED && live.n) {
			procmaps__free(&maps);
			snapshot_live(p, pr, &live, &r);
			return;
		}
		procmaps__free(&live);
	}
	if (!err)
		err = snapshot_final(p, pr, &maps, exe, &p->st.from_log);
	if (err)
		count_gone(p, pr);
	if (!pr->snapshotted)
		procs_set_dead(pr);
}

