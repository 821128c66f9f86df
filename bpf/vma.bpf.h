// SPDX-License-Identifier: GPL-2.0
/* vma.bpf.h — a process's VMAs, read by BPF: all of them by the
 * open-coded VMA iterator (Linux 6.7), one by address on any kernel
 * (pmubpf_vma_find), and read-only views of kernel objects.
 *
 * Included by images.bpf.h (an image sent as a process ends: the
 * iterator) and unwind.bpf.h (a frame's mapping found by its file when
 * the process's slot lacks it: pmubpf_vma_find). The kfuncs are weak:
 * where the kernel lacks them every call must sit behind a load-time
 * constant or a program the loader leaves unloaded (a call the verifier
 * cannot prune is refused).
 */
#ifndef PMUBPF_VMA_BPF_H
#define PMUBPF_VMA_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct bpf_iter_task_vma {
	__u64 __opaque[1];
} __attribute__((aligned(8)));

extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym __weak;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym __weak;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym __weak;

/* A kernel object seen through an untrusted pointer: its fields are read
 * by plain loads that the kernel's fault handler guards (a cast the
 * verifier turns into a move). The trusted pointers these programs start
 * from (the current task, the iterator's VMAs) would give trusted ones
 * at each pointer field, and the verifier decides which by looking a
 * name up in the kernel's BTF, one by one over its ~100k types: 26 ms of
 * start-up for on_prepare_exec and on_exit (btf_find_by_name_kind
 * was 8% of pmubpf's start), where the reads themselves needed no trust.
 * BPF_CORE_READ would avoid it too, at a helper call per field. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
#define kview(p, type) ((type *)bpf_rdonly_cast((p), bpf_core_type_id_kernel(type)))

#define VM_EXEC 0x4UL

/* --- a VMA by address, from any context --------------------------------
 *
 * find_vma()'s walk, by plain reads: the sampling programs run with
 * interrupts off (NMI for hardware events), where the kernel's own ways
 * refuse or ration themselves (the VMA iterator returns -EBUSY there
 * since 6.18 and its stable backports; bpf_find_vma defers its unlock
 * to an irq_work, one per interrupt, and names a callback, which no
 * program before 5.13 may). No lock is taken: the maple tree is made to
 * be read under RCU (the sampling programs run inside rcu_read_lock),
 * each read is a probe that cannot fault, and the VMA found is checked
 * against the address and the mm; a tree changing under the walk gives
 * no VMA, or one the check refuses (the caller then counts the frame). */

#define VMA_MT_LEVELS 8      /* maple tree height: 16^8 VMAs */
#define VMA_RB_LEVELS 64     /* red-black tree height: 2^32 VMAs */
#define VMA_NODE_MASK 255UL  /* MAPLE_NODE_MASK */
#define VMA_MT_RANGE64 2     /* maple_range_64; below it: leaves */
#define VMA_MT_ARANGE64 3

/* The walk's reads land here, not on the stack: the sampling
 * program's whole call chain has 512 bytes of stack before 6.13. */
struct vma_scratch {
	__u64 piv[16];
	__u64 enode, parent, rb[3], v[3];
	__u8 meta;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct vma_scratch);
	__uint(max_entries, 1);
} vma_scratch SEC(".maps");

/* a < b for any two u64s, as 0 or 1, without a branch (the borrow of
 * a - b): a comparison would be a jump, and the verifier walks each. */
static __always_inline __u64 vma_lt(__u64 a, __u64 b)
{
	return ((~a & b) | ((~a | b) & (a - b))) >> 63;
}

/* The slot index falls in, of a node whose 15 pivots are in piv (unused
 * ones ~0) and whose data ends at slot end: the pivots before end below
 * index, counted without a branch. */
static __always_inline __u64 vma_mt_offset(const __u64 *piv, __u64 end, __u64 index)
{
	__u64 k = 0;

#pragma clang loop unroll(disable)
	for (int i = 0; i < 15; i++)
		k += vma_lt(i, end) & vma_lt(piv[i], index);
	return k;
}

/* The maple tree's entry at index (a VMA, or 0), sc the walk's reads. */
static __always_inline __u64 vma_mt_find(struct vma_scratch *sc, struct mm_struct *mm, __u64 index)
{
	__u64 r64_piv = bpf_core_field_offset(struct maple_range_64, pivot);
	__u64 r64_slot = bpf_core_field_offset(struct maple_range_64, slot);
	__u64 a64_piv = bpf_core_field_offset(struct maple_arange_64, pivot);
	__u64 a64_slot = bpf_core_field_offset(struct maple_arange_64, slot);
	__u64 a64_meta = bpf_core_field_offset(struct maple_arange_64, meta);

	/* The root, if a node, is marked so (xa_is_node: bit 1); the
	 * encoded nodes below it are not. */
	if (bpf_probe_read_kernel(&sc->enode, 8, (void *)((__u64)mm + bpf_core_field_offset(mm->mm_mt) +
							   bpf_core_field_offset(struct maple_tree, ma_root))) ||
	    (sc->enode & 3) != 2 || sc->enode <= 4096)
		return 0; /* not a node: the tree is one entry, or empty */
	sc->enode &= ~2ULL;
	for (int level = 0; level < VMA_MT_LEVELS; level++) {
		__u64 enode = sc->enode, node = enode & ~VMA_NODE_MASK, type = (enode >> 3) & 15, k, end, slot;
		bool arange = type == VMA_MT_ARANGE64;

		if (node <= 4096 || type > VMA_MT_ARANGE64)
			return 0; /* not a node we know */
		if (bpf_probe_read_kernel(&sc->parent, 8, (void *)node) ||
		    (sc->parent & ~VMA_NODE_MASK) == node)
			return 0; /* a dead node: replaced under us */
		if (arange) {
			if (bpf_probe_read_kernel(sc->piv, 9 * 8, (void *)(node + a64_piv)) ||
			    bpf_probe_read_kernel(&sc->meta, 1, (void *)(node + a64_meta)))
				return 0;
			for (int i = 9; i < 15; i++)
				sc->piv[i] = ~0ULL;
			end = sc->meta;
			slot = node + a64_slot;
		} else {
			if (bpf_probe_read_kernel(sc->piv, 15 * 8, (void *)(node + r64_piv)))
				return 0;
			/* ma_data_end: a node not full has a 0 last pivot and
			 * its end in the metadata, in the last slot's room. */
			end = 15;
			slot = node + r64_slot;
			if (!sc->piv[14]) {
				if (bpf_probe_read_kernel(&sc->meta, 1, (void *)(slot + 15 * 8)))
					return 0;
				end = sc->meta;
			}
		}
		k = vma_mt_offset(sc->piv, end, index);
		if (k > (arange ? 9 : 15))
			return 0;
		if (bpf_probe_read_kernel(&sc->enode, 8, (void *)(slot + k * 8)))
			return 0;
		if (type < VMA_MT_RANGE64)
			return sc->enode; /* a leaf's entry: the VMA, or 0 (a gap) */
	}
	return 0;
}

/* The red-black tree's VMA holding addr (before 6.1), or 0. */
static __always_inline __u64 vma_rb_find(struct vma_scratch *sc, struct mm_struct *mm, __u64 addr)
{
	__u64 off = bpf_core_field_offset(struct vm_area_struct, vm_rb);
	__u64 start_off = bpf_core_field_offset(struct vm_area_struct, vm_start);
	__u64 end_off = bpf_core_field_offset(struct vm_area_struct, vm_end);
	__u64 left = bpf_core_field_offset(struct rb_node, rb_left);
	__u64 right = bpf_core_field_offset(struct rb_node, rb_right);
	__u64 rb;

	if (bpf_probe_read_kernel(&sc->rb[0], 8, (void *)((__u64)mm + bpf_core_field_offset(mm->mm_rb) +
							  bpf_core_field_offset(struct rb_root, rb_node))))
		return 0;
	rb = sc->rb[0];
	for (int level = 0; level < VMA_RB_LEVELS && rb; level++) {
		__u64 v = rb - off;

		if (bpf_probe_read_kernel(&sc->rb[1], 8, (void *)(v + start_off)) ||
		    bpf_probe_read_kernel(&sc->rb[2], 8, (void *)(v + end_off)))
			return 0;
		if (sc->rb[2] > addr && sc->rb[1] <= addr)
			return v;
		if (bpf_probe_read_kernel(&sc->rb[0], 8, (void *)(rb + (sc->rb[2] > addr ? left : right))))
			return 0;
		rb = sc->rb[0];
	}
	return 0;
}

/* The VMA of address space mm (a kernel address, as a number: a global
 * function takes no kernel pointer) that holds addr, or 0. A global
 * function: verified once, by itself. */
__noinline __u64 pmubpf_vma_find(__u64 mmp, __u64 addr)
{
	struct mm_struct *mm = (struct mm_struct *)mmp;
	struct vma_scratch *sc;
	__u32 zero = 0;
	__u64 v = 0;

	sc = bpf_map_lookup_elem(&vma_scratch, &zero);
	if (!sc)
		return 0;
	if (bpf_core_field_exists(mm->mm_mt))
		v = vma_mt_find(sc, mm, addr);
	else if (bpf_core_field_exists(mm->mm_rb))
		v = vma_rb_find(sc, mm, addr);
	/* The VMA found, checked: it holds addr and is mm's. */
	if (!v || bpf_probe_read_kernel(&sc->v[0], 8, (void *)(v + bpf_core_field_offset(struct vm_area_struct, vm_start))) ||
	    bpf_probe_read_kernel(&sc->v[1], 8, (void *)(v + bpf_core_field_offset(struct vm_area_struct, vm_end))) ||
	    bpf_probe_read_kernel(&sc->v[2], 8, (void *)(v + bpf_core_field_offset(struct vm_area_struct, vm_mm))) ||
	    sc->v[0] > addr || sc->v[1] <= addr || sc->v[2] != mmp)
		return 0;
	return v;
}

#endif
