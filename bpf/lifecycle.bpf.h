// SPDX-License-Identifier: GPL-2.0
/* lifecycle.bpf.h — exec, fork and exit: the process bookkeeping.
 *
 * Included at the end of pmubpf.bpf.c. exec gives a process a new
 * generation (its mappings changed) and arms `-- command` targets; fork
 * adds children of followed targets; the last thread's exit ends the
 * process's generation, so a reused pid is never symbolized with a dead
 * process's snapshot.
 */
#ifndef PMUBPF_LIFECYCLE_BPF_H
#define PMUBPF_LIFECYCLE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"
#include "labels_ours.bpf.h"
#include "labels_go.bpf.h"
#include "labels_custom.bpf.h"
#include "labels_otel.bpf.h"
#include "unwind.bpf.h"
#include "images.bpf.h"

/* Delete key from map if there. Most execs and exits are of processes
 * never sampled, never labeled: a lookup (lock-free) finds nothing
 * where a delete would take the bucket's lock to find nothing. */
#define forget(map, key)                                  \
	do {                                              \
		if (bpf_map_lookup_elem(map, key))        \
			bpf_map_delete_elem(map, key);    \
	} while (0)

/* A process's per-image slots (labels of each writer, the unwinder's
 * tables), at its exec (they belong to the old image) and its end (its
 * pid may be reused by another process, which must get a new generation
 * and no inherited slot). */
static __always_inline void forget_process(__u32 tgid)
{
	forget(&label_slots, &tgid);
	forget(&go_slots, &tgid);
	forget(&custom_slots, &tgid);
	forget(&otel_slots, &tgid);
	forget(&unwind_pids, &tgid);
}

/* exec: new address space. Forget the snapshot generation and the label
 * slot (both belong to the old image); arm a `-- command` target. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct pmubpf_target t = { .id = tgid, .kind = PMUBPF_TARGET_TGID };
	__u32 *state, active = PMUBPF_TARGET_ACTIVE;

	image_unstash(tgid); /* before its generation goes */
	forget(&seen, &tgid);
	forget_process(tgid); /* the old image's slots and tables */
	state = bpf_map_lookup_elem(&targets, &t);
	if (state && *state == PMUBPF_TARGET_AT_EXEC)
		bpf_map_update_elem(&targets, &t, &active, BPF_EXIST);
	return 0;
}

/* fork: a followed target's new process is a target too; it shares the
 * parent's image (until it execs), hence its label slot. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct pmubpf_target t = { .id = ptgid, .kind = PMUBPF_TARGET_TGID };
	struct pmubpf_label_slot *slot;
	__u32 *state;

	if (ptgid == ctgid) /* a new thread, already covered by its tgid */
		return 0;
	slot = bpf_map_lookup_elem(&label_slots, &ptgid);
	if (slot)
		bpf_map_update_elem(&label_slots, &ctgid, slot, BPF_ANY);
	if (!follow_forks)
		return 0;
	state = bpf_map_lookup_elem(&targets, &t);
	if (state && *state == PMUBPF_TARGET_ACTIVE) {
		t.id = ctgid;
		bpf_map_update_elem(&targets, &t, state, BPF_ANY);
	}
	return 0;
}

/* The process's end: its last thread's exit (the kernel counts the
 * group's live threads down before this tracepoint; a leader that
 * leaves first, by pthread_exit, does not end it). Its generation stays,
 * marked ended, for the samples the exit still takes: a sample finding
 * no entry would open a second generation of the same image, read and
 * counted again as another process (a Go program's version refused
 * twice). process_gen replaces the entry once another process has the
 * pid; on_free deletes it. Its per-image slots go (the threads left
 * after a leader's pthread_exit kept their labels and unwind tables).
 * Where the loader asked for images (images.bpf.h), the image is sent
 * first, while the exit still has it. */
static __always_inline int process_exit(struct task_struct *p, bool images)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct pmubpf_seen *s;

	if (BPF_CORE_READ(p, signal, live.counter) > 0) /* threads live on */
		return 0;
	s = own_generation(tgid);
	if (s) {
		if (images)
			image_send(tgid, s->pgen);
		s->ended = 1;
	}
	forget_process(tgid);
	return 0;
}

/* Two programs, one loaded: image_send walks a path with bpf_loop and
 * the VMA iterator (6.x), and a program that only names those does not
 * load on an older kernel, so the recordings without images load the
 * one without it. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	return process_exit(p, false);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit_images, struct task_struct *p)
{
	return process_exit(p, images_on);
}

/* The leader's task is freed: no sample can come from it any more, and
 * its ended generation goes (unless a process that has the pid since
 * took the entry), so that the LRU holds live processes, not the churn's
 * dead: a live one evicted would be read again as a new generation. */
SEC("tp_btf/sched_process_free")
int BPF_PROG(on_free, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct pmubpf_seen *s;

	if (BPF_CORE_READ(p, pid) != tgid)
		return 0;
	s = bpf_map_lookup_elem(&seen, &tgid);
	if (s && s->ended && s->start == BPF_CORE_READ(p, start_time))
		bpf_map_delete_elem(&seen, &tgid);
	return 0;
}

#endif
