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
 *
 * Cheap on purpose: a classic tracepoint and no CO-RE, so libbpf loads
 * no kernel BTF for it (its parse is ~85 ms of CPU, as much again as
 * the recording's own start). The mm is asked of the kernel's user
 * stack walk: bpf_get_stack(BPF_F_USER_STACK) from a tracepoint walks
 * the task's saved user registers only while it has an mm, and stores
 * at least the user pc then (get_perf_callchain); with none, nothing.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

__u32 probe_tgid; /* set by the loader before the child exits */
__u32 exits;      /* the child's exits seen (its last thread's) */
__u32 with_mm;    /* of those, with its address space still there */

SEC("tracepoint/sched/sched_process_exit")
int exit_has_mm(void *ctx)
{
	__u64 pc[1];

	if (!probe_tgid || (__u32)(bpf_get_current_pid_tgid() >> 32) != probe_tgid)
		return 0;
	__sync_fetch_and_add(&exits, 1);
	if (bpf_get_stack(ctx, pc, sizeof(pc), BPF_F_USER_STACK) > 0)
		__sync_fetch_and_add(&with_mm, 1);
	return 0;
}
