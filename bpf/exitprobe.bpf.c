/* exitprobe.bpf.c — does a process still have its memory at its exit?
 *
 * The images of exited processes (images.bpf.h) are walked at
 * sched_process_exit, from the exiting task's mm. Kernels before 6.16
 * release the mm (exit_mm) before that tracepoint: there the walk finds
 * nothing, and a recording must keep the kernel's mmap reports instead.
 * No BTF name tells the two apart, so the loader asks: it loads this
 * object on its own (before the recording's object is sized), forks a
 * child that exits at once, and reads whether the child's exit saw an
 * mm. A separate object, so that the recording's maps and programs are
 * chosen once, knowing the answer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

__u32 probe_tgid; /* set by the loader before the child exits */
__u32 exits;      /* the child's exits seen (its last thread's) */
__u32 with_mm;    /* of those, with its address space still there */

SEC("tp_btf/sched_process_exit")
int BPF_PROG(exit_has_mm, struct task_struct *p)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (!probe_tgid || p->tgid != probe_tgid)
		return 0;
	__sync_fetch_and_add(&exits, 1);
	if (task->mm)
		__sync_fetch_and_add(&with_mm, 1);
	return 0;
}
