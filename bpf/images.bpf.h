// SPDX-License-Identifier: GPL-2.0
/* images.bpf.h — the image a sampled process leaves behind.
 *
 * Included by pmubpf.bpf.c (at its end) and lifecycle.bpf.h. When a
 * process that was sampled (it has a `seen` generation) exits, or execs
 * into another image, BPF walks its VMAs (the open-coded VMA iterator,
 * which tracing programs may use) and sends its executable mappings in a
 * PMUBPF_NOTICE_IMAGE notice tagged with that generation. A process gone
 * before the loader read its maps is then named from these, and the
 * kernel's mmap reports, which every mmap on the machine paid for, are
 * not needed (docs/architecture.md, "Images of processes gone").
 *
 * Paths are rebuilt from the dentry chain (bpf_d_path is not offered to
 * tracepoints), once per file: `image_files` remembers which (dev, ino)
 * the loader was given a path for. Used only where the kernel has all it
 * needs (user/record/images.c checks): the iterator (6.7), the
 * sched_prepare_exec tracepoint (6.10), and an exit tracepoint that runs
 * before the address space is released (6.16).
 */
#ifndef PMUBPF_IMAGES_BPF_H
#define PMUBPF_IMAGES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"
#include "procgen.bpf.h"
#include "vma.bpf.h"
#include "execwin.bpf.h"

/* Set by the loader with on_prepare_exec: on_exit sends images too. */
const volatile bool images_on = false;

struct image_file {
	__u64 ino;
	__u32 dev, pad;
};

/* Files whose path the loader has (it deletes one it lost). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct image_file);
	__type(value, __u8);
	__uint(max_entries, 16384);
} image_files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, PMUBPF_IMAGE_NSTATS);
} image_stats SEC(".maps");

static __always_inline void image_count(__u32 k, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&image_stats, &k);

	if (v)
		*v += n;
}

/* One notice sent (err 0) or lost (the ring buffer's error), counted. */
static __always_inline void image_count_sent(long err)
{
	image_count(err ? PMUBPF_IMAGE_LOST : PMUBPF_IMAGE_SENT, 1);
}

/* A path being sent, per CPU (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct pmubpf_map_notice);
	__uint(max_entries, 1);
} image_scratch SEC(".maps");

/* An image's mappings being put together, per CPU: image_send's notice,
 * or image_stash's stash before it is kept. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct pmubpf_image_notice);
	__uint(max_entries, 1);
} image_batch SEC(".maps");

/* Where a path walk is (image_path): kernel addresses, as numbers. */
struct path_walk {
	__u64 d, vm, mnt;
	__u64 root_d, root_vm; /* the process's root (its chroot) */
	__u32 k, done, rootk, root_met;
};

/* One step up from w->d: a name, or a mount point crossed. 1 to stop. */
static long path_step(__u64 i, struct path_walk *w)
{
	__u32 zero = 0;
	struct pmubpf_map_notice *n = bpf_map_lookup_elem(&image_scratch, &zero);
	/* Locals: a CO-RE read of w->x would relocate w's own fields. */
	struct dentry *d = (struct dentry *)w->d, *parent;
	struct vfsmount *vm = (struct vfsmount *)w->vm;
	struct mount *mnt = (struct mount *)w->mnt, *up;
	__u32 k = w->k;

	if (!n)
		return 1;
	/* The process's root: the path it sees ends here (d_path's); the
	 * walk goes on to the namespace's, which a loader outside the
	 * chroot opens. */
	if (!w->root_met && w->d == w->root_d && w->vm == w->root_vm) {
		w->root_met = 1;
		w->rootk = k;
	}
	if (d == BPF_CORE_READ(vm, mnt_root)) {
		up = BPF_CORE_READ(mnt, mnt_parent);

		if (up == mnt) { /* the namespace's root */
			w->done = 1;
			return 1;
		}
		w->d = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
		w->mnt = (__u64)up;
		w->vm = (__u64)up + bpf_core_field_offset(struct mount, mnt);
		return 0;
	}
	parent = BPF_CORE_READ(d, d_parent);
	if (parent == d) { /* a root not of this namespace's tree */
		w->done = 1;
		return 1;
	}
	if (k >= PMUBPF_MAP_COMPS)
		return 1;
	if (bpf_probe_read_kernel_str(n->names[k], PMUBPF_MAP_NAME, BPF_CORE_READ(d, d_name.name)) < 0)
		return 1;
	w->k = k + 1;
	w->d = (__u64)parent;
	return 0;
}

/* The path of file (a struct file *), leaf first, up to the root of its
 * mount namespace (mount points crossed), into image_scratch's names[];
 * PMUBPF_MAP_F_LONG if it has more names than names[] holds; and
 * PMUBPF_MAP_F_ROOT with rootk if the current process's root (a chroot)
 * was met on the way. A global function, and bpf_loop: verified once,
 * not at every turn of a loop. */
__noinline int image_path(__u64 file)
{
	__u32 zero = 0;
	struct pmubpf_map_notice *n = bpf_map_lookup_elem(&image_scratch, &zero);
	struct file *f = (struct file *)file;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct path_walk w = {};

	if (!n)
		return 0;
	w.d = (__u64)BPF_CORE_READ(f, f_path.dentry);
	w.vm = (__u64)BPF_CORE_READ(f, f_path.mnt);
	w.mnt = w.vm - bpf_core_field_offset(struct mount, mnt);
	w.root_d = (__u64)BPF_CORE_READ(task, fs, root.dentry);
	w.root_vm = (__u64)BPF_CORE_READ(task, fs, root.mnt);
	bpf_loop(PMUBPF_MAP_COMPS + 16, path_step, &w, 0);
	n->ncomp = (__u16)w.k;
	n->rootk = (__u16)w.rootk;
	if (w.root_met)
		n->flags |= PMUBPF_MAP_F_ROOT;
	if (!w.done)
		n->flags |= PMUBPF_MAP_F_LONG;
	return 0;
}

/* What a VMA (seen through kview) is to an image: -1 nothing (not
 * executable; anonymous code, a JIT's, which perf maps name),
 * PMUBPF_MAP_F_VDSO, or a file's mapping (*key), PMUBPF_MAP_F_PATH if
 * the loader lacks its path. */
static __always_inline int image_vma(struct vm_area_struct *v, void *vdso, struct image_file *key)
{
	struct file *f;

	if (!(v->vm_flags & VM_EXEC))
		return -1;
	f = v->vm_file;
	if (!f)
		return (void *)v->vm_start == vdso ? PMUBPF_MAP_F_VDSO : -1;
	key->ino = f->f_inode->i_ino;
	key->dev = f->f_inode->i_sb->s_dev;
	return bpf_map_lookup_elem(&image_files, key) ? 0 : PMUBPF_MAP_F_PATH;
}

/* The notice header of (tgid, pgen)'s mappings. */
static __always_inline void image_header(struct pmubpf_notice *h, __u32 tgid, __u32 pgen, __u32 mntns)
{
	h->kind = PMUBPF_NOTICE_MAP;
	h->tgid = tgid;
	h->pgen = pgen;
	h->tid = tgid;
	h->flags = 0;
	h->mntns = mntns;
	h->label = 0;
	h->label_ptr = 0;
	h->ts = bpf_ktime_get_ns();
	h->comm[0] = 0;
}

/* Send file's path alone (n, a notice of generation 0, which no process
 * has), and note the file (key) in image_files once it went whole. */
static __always_inline void image_send_path(struct pmubpf_map_notice *n, struct vm_area_struct *vma,
					    struct image_file *key)
{
	__u64 fa = 0; /* a global function takes no kernel pointer */
	__u8 one = 1;
	long err;

	n->start = n->end = n->pgoff = 0;
	n->ino = key->ino;
	n->dev = key->dev;
	n->flags = PMUBPF_MAP_F_PATH;
	n->ncomp = n->rootk = 0;
	bpf_probe_read_kernel(&fa, sizeof(fa), &vma->vm_file);
	image_path(fa);
	/* No wakeup: the process notices' (at most every 10 ms) bring
	 * these in; one per notice would cost the ending process. */
	err = bpf_ringbuf_output(&notices, n, sizeof(*n), 1 /* BPF_RB_NO_WAKEUP */);
	if (!err && (!(n->flags & PMUBPF_MAP_F_LONG) || (n->flags & PMUBPF_MAP_F_ROOT)))
		bpf_map_update_elem(&image_files, key, &one, BPF_ANY);
}

/* The headers of an image's notices: b's, of (tgid, pgen), and n's, of
 * the paths sent alone. */
static __always_inline void image_begin(struct pmubpf_image_notice *b, struct pmubpf_map_notice *n,
					__u32 tgid, __u32 pgen, struct task_struct *t, struct mm_struct *mm)
{
	struct file *exe = mm->exe_file;
	__u32 mntns = t->nsproxy->mnt_ns->ns.inum;

	image_header(&b->hdr, tgid, pgen, mntns);
	b->hdr.kind = PMUBPF_NOTICE_IMAGE;
	b->exe_ino = exe ? exe->f_inode->i_ino : 0;
	b->n = 0;
	image_header(&n->hdr, tgid, 0, mntns);
	n->exe_ino = 0;
}

/* Add v, a mapping of file key (image_vma's flags, its path sent), to
 * b if it has room. */
static __always_inline void image_put(struct pmubpf_image_notice *b, struct vm_area_struct *v,
				      const struct image_file *key, int flags)
{
	__u32 k = b->n; /* from memory: not carried round the loop */

	if (k >= PMUBPF_IMAGE_MAPS)
		return;
	b->m[k].start = v->vm_start;
	b->m[k].end = v->vm_end;
	b->m[k].pgoff = v->vm_pgoff;
	b->m[k].ino = key->ino;
	b->m[k].dev = key->dev;
	b->m[k].flags = (__u16)(flags & PMUBPF_MAP_F_VDSO);
	b->m[k].pad = 0;
	b->n = k + 1;
}

/* Send b's mappings as one notice (counted), and empty it. */
static __always_inline void image_flush(struct pmubpf_image_notice *b)
{
	__u32 k = b->n;
	long err;

	if (!k)
		return;
	if (k > PMUBPF_IMAGE_MAPS)
		k = PMUBPF_IMAGE_MAPS;
	err = bpf_ringbuf_output(&notices, b, PMUBPF_IMAGE_NOTICE_SIZE(k), 1 /* BPF_RB_NO_WAKEUP */);
	image_count(err ? PMUBPF_IMAGE_LOST : PMUBPF_IMAGE_SENT, k);
	b->n = 0;
}

/* Walk task's VMAs into b: each executable one's path sent first, alone
 * (n), if the loader lacks it; b sent whenever full if send, else kept
 * to its first PMUBPF_IMAGE_MAPS. */
static __always_inline void image_walk(struct task_struct *task, void *vdso,
				       struct pmubpf_image_notice *b, struct pmubpf_map_notice *n,
				       bool send)
{
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;

	bpf_iter_task_vma_new(&it, task, 0);
	while ((vma = bpf_iter_task_vma_next(&it))) {
		struct vm_area_struct *v = kview(vma, struct vm_area_struct);
		struct image_file key = {};
		int flags = image_vma(v, vdso, &key);

		if (flags < 0)
			continue;
		if (flags & PMUBPF_MAP_F_PATH)
			image_send_path(n, vma, &key);
		if (send && b->n >= PMUBPF_IMAGE_MAPS) /* more than a notice holds */
			image_flush(b);
		image_put(b, v, &key, flags);
	}
	bpf_iter_task_vma_destroy(&it);
}

/* Send the current process's executable mappings as (tgid, pgen)'s.
 * 0 if it has no address space left to walk. */
static __noinline int image_send(__u32 tgid, __u32 pgen)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct task_struct *t = kview(task, struct task_struct);
	__u32 zero = 0;
	struct pmubpf_map_notice *n = bpf_map_lookup_elem(&image_scratch, &zero);
	struct pmubpf_image_notice *b = bpf_map_lookup_elem(&image_batch, &zero);
	struct mm_struct *mm = t->mm;

	if (!n || !b)
		return 0;
	if (!mm) {
		image_count(PMUBPF_IMAGE_NOMM, 1);
		return 0;
	}
	image_begin(b, n, tgid, pgen, t, mm);
	image_walk(task, mm->context.vdso, b, n, true);
	image_flush(b);
	image_count(PMUBPF_IMAGE_WALKS, 1);
	return 1;
}

/* tgid's generation in `seen` if it is that of the process started at
 * start (not one left by a process that had the pid before) and its
 * image has not ended, else NULL. */
static __always_inline struct pmubpf_seen *generation_of(__u32 tgid, __u64 start)
{
	struct pmubpf_seen *s = bpf_map_lookup_elem(&seen, &tgid);

	if (!s || s->ended || (s->start && s->start != start))
		return NULL;
	return s;
}

/* The current process's own generation (generation_of). */
static __always_inline struct pmubpf_seen *own_generation(__u32 tgid)
{
	return generation_of(tgid, process_start());
}

/* The image of tgid that ends now (its exec), if it was sampled (by
 * this process: an entry left by one that had the pid before is not
 * its): sent. false if nothing was sent (not sampled; or nothing left to
 * walk). */
static __always_inline bool image_ends(__u32 tgid)
{
	struct pmubpf_seen *s = own_generation(tgid);

	return s && image_send(tgid, s->pgen);
}

/* An exec of a process not sampled yet: its image is kept here (no
 * paths; those of files new to the loader are sent at once, under
 * generation 0, which no process has), for a sample taken inside the
 * execve, after the old image's end: the exec's end (on_exec) sends it
 * as that sample's generation's, and forgets it. Kept as the notice it
 * becomes (its first PMUBPF_IMAGE_MAPS mappings). */
/* (image_stashes: execwin.bpf.h) */

static __noinline int image_stash(__u32 tgid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct task_struct *t = kview(task, struct task_struct);
	__u32 zero = 0;
	struct pmubpf_image_notice *st = bpf_map_lookup_elem(&image_batch, &zero);
	struct pmubpf_map_notice *n = bpf_map_lookup_elem(&image_scratch, &zero);
	struct mm_struct *mm = t->mm;

	if (!st || !n || !mm)
		return 0;
	image_begin(st, n, tgid, 0, t, mm); /* its generation at the exec's end */
	image_walk(task, mm->context.vdso, st, n, false); /* its first PMUBPF_IMAGE_MAPS */
	bpf_map_update_elem(&image_stashes, &tgid, st, BPF_ANY);
	return 0;
}

/* An exec of a fork child not sampled yet, still in a copy of its
 * parent's address space: the parent's generation, in place of a stash.
 * Under churn most execs are such children's (a shell's, make's), and
 * walking each copy for the few sampled inside the execve cost the load
 * more than all its samples (6.3 us an exec, against 1.9 without the
 * stash). The same executable and as many mappings: a copy, not an
 * image changed since the fork (a rare child that maps and unmaps as
 * much before its exec is named by the parent's image). */
/* (image_likes, struct image_like: execwin.bpf.h) */

/* tgid's image is its parent's (see image_likes): noted, true. */
static __always_inline bool image_like_parent(__u32 tgid)
{
	struct task_struct *task = kview(bpf_get_current_task_btf(), struct task_struct);
	struct task_struct *parent = task->real_parent;
	struct mm_struct *mm = task->mm, *pmm = parent->mm;
	__u32 ptgid = parent->tgid;
	struct pmubpf_seen *ps;
	struct image_like v;

	if (!mm || !pmm || mm->exe_file != pmm->exe_file || mm->map_count != pmm->map_count)
		return false;
	ps = generation_of(ptgid, parent->group_leader->start_time);
	if (!ps)
		return false;
	v.tgid = ptgid;
	v.pgen = ps->pgen;
	return bpf_map_update_elem(&image_likes, &tgid, &v, BPF_ANY) == 0;
}

/* At an exec's end: a sample taken inside it, of a process not sampled
 * before, has its generation; the image it ran in is the stash's, or
 * its parent's. */
static __always_inline void image_unstash(__u32 tgid)
{
	struct pmubpf_image_notice *st;
	struct image_like *like;
	struct pmubpf_seen *s;

	if (!images_on)
		return;
	like = bpf_map_lookup_elem(&image_likes, &tgid);
	if (like) {
		struct pmubpf_like_notice ln = {};

		s = own_generation(tgid);
		if (s) {
			image_header(&ln.hdr, tgid, s->pgen, 0);
			ln.hdr.kind = PMUBPF_NOTICE_LIKE;
			ln.like_tgid = like->tgid;
			ln.like_pgen = like->pgen;
			long err = bpf_ringbuf_output(&notices, &ln, sizeof(ln), 1 /* BPF_RB_NO_WAKEUP */);

			image_count_sent(err);
			if (!err)
				image_count(PMUBPF_IMAGE_LIKES, 1);
		}
		bpf_map_delete_elem(&image_likes, &tgid);
		return;
	}
	st = bpf_map_lookup_elem(&image_stashes, &tgid);
	if (!st)
		return;
	s = own_generation(tgid);
	if (s) {
		st->hdr.pgen = s->pgen;
		st->hdr.ts = bpf_ktime_get_ns();
		image_flush(st);
		image_count(PMUBPF_IMAGE_WALKS, 1);
	}
	bpf_map_delete_elem(&image_stashes, &tgid);
}

/* Before an exec replaces the image (past its point of no return the old
 * address space is still the task's): loaded only with the above. */
SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(on_prepare_exec, struct task_struct *p, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	/* Not sampled yet: kept for the execve's samples. */
	if (!image_ends(tgid) && !image_like_parent(tgid))
		image_stash(tgid);
	return 0;
}

#endif
