/* unwind_ahead.c — a file's table for BPF before any process of it is
 * read: built by path before the recording starts (unwind__preload: the
 * files nearly every process maps, the command of `--`), and when BPF
 * asks for a file it met without an entry (unwind__file_notice: one the
 * loader knows by another identity, as on overlayfs, or one not read
 * yet). Calls into unwind.c (the table cache) and unwind_files.c (the
 * entries); neither calls here.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "symbols/elfsym.h"
#include "unwind_int.h"

/* The identity BPF sees a file by (the inode a VMA of it has): a page
 * of it mapped here and looked up by BPF itself (uw_file_key), else in
 * our own /proc/self/maps. On overlayfs the VMA has the file underneath,
 * which stat() of the overlay's path does not name, nor /proc/PID/maps
 * since 6.8 (the kernels' matrix runs in an overlay: the files built
 * ahead were never found there on 6.12 and 7.2). */
static void file_id(const struct unwind *u, int fd, const struct stat *st, dev_t *dev, ino_t *ino)
{
	void *p = mmap(NULL, 1, PROT_READ, MAP_PRIVATE, fd, 0);
	struct pmubpf_file_key_args a = { 0 };
	struct procmaps pm = { 0 };
	const struct procmap *m;

	*dev = st->st_dev;
	*ino = st->st_ino;
	if (p == MAP_FAILED)
		return;
	a.addr = (uintptr_t)p;
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &a, .ctx_size_in = sizeof(a));
	if (u->m.key_prog_fd >= 0 && !bpf_prog_test_run_opts(u->m.key_prog_fd, &o) && a.found) {
		*dev = makedev(a.key.dev >> 20, a.key.dev & 0xfffff);
		*ino = a.key.ino;
	} else if (!procmaps__read(getpid(), false, &pm) && (m = procmaps__find(&pm, (uintptr_t)p))) {
		*dev = makedev(m->dev_major, m->dev_minor);
		*ino = m->inode;
	}
	procmaps__free(&pm);
	munmap(p, 1);
}

int unwind__preload(struct unwind *u, struct procs *p, const char *path)
{
	struct elfseg seg;
	struct stat st;
	dev_t kdev;
	ino_t kino;
	const struct tab *t;
	struct elfobj *obj;
	int fd;

	if (u->m.files_fd < 0 || u->stopped)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	file_id(u, fd, &st, &kdev, &kino);
	close(fd);
	/* Through procs, as a mapping's object is: its debug info noted
	 * (an object the cache had without it would have none later). */
	obj = procs__open_path(p, path);
	if (!obj)
		return -ENOEXEC;
	if (!elfobj__exec_segments(obj, &seg, 1))
		return -ENOEXEC;
	/* As a process would map it: its first executable segment. */
	struct procmap m = {
		.start = seg.vaddr, .end = seg.vaddr + seg.filesz, .pgoff = seg.off,
		.inode = kino, .dev_major = major(kdev), .dev_minor = minor(kdev),
		.exec = true, .path = (char *)path,
	};
	u->epoch++;
	t = unwind_table_for(u, NULL, &m, obj);
	if (!t || t->id == PMUBPF_UW_NO_TABLE)
		return -ENOSPC;
	unwind_files__note(u, &m, obj, (uint32_t)(t - u->tabs));
	u->st.preloaded++;
	return 0;
}

void unwind__file_notice(struct unwind *u, struct procs *p, const struct pmubpf_ufile_notice *n)
{
	struct procmaps pm = { 0 };
	const struct procmap *m;
	struct proc pr = { .tgid = n->tgid };
	struct elfobj *obj;
	const struct tab *t;

	if (u->m.files_fd < 0 || u->stopped)
		return;
	u->st.asked++;
	if (!procmaps__read(n->tgid, true, &pm) && (m = procmaps__find(&pm, n->addr)) && m->path &&
	    m->path[0] == '/' && (obj = procs__open_mapping(p, n->tgid, m))) {
		u->epoch++;
		t = unwind_table_for(u, &pr, m, obj);
		if (t && t->id != PMUBPF_UW_NO_TABLE &&
		    !unwind_files__note_key(u, &n->key, obj, (uint32_t)(t - u->tabs)))
			u->st.answered++;
		/* else: no table (no CFI): not asked again */
	} else if (u->m.asked_fd >= 0) {
		/* Gone, or its mapping moved: the next process of the file
		 * asks again (a process gone first gives its files' tables
		 * from its image: unwind_files__of_gone). */
		bpf_map_delete_elem(u->m.asked_fd, &n->key);
	}
	procmaps__free(&pm);
}
