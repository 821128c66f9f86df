/* pmubpf_abi.h — every structure that crosses the BPF/userspace boundary.
 *
 * Included by bpf/pmubpf.bpf.c (through vmlinux.h types) and by user/
 * (through <linux/types.h>). Fixed-width types only, no pointers, no long:
 * both sides must agree on every offset. Units are in the comments.
 */
#ifndef PMUBPF_ABI_H
#define PMUBPF_ABI_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define PMUBPF_MAX_EVENTS 16 /* -e may be given this many times */
#define PMUBPF_COMM_LEN 16   /* TASK_COMM_LEN */

/* Aggregation key of the counts map: one entry per distinct
 * (event, thread, process generation, stacks, label set). */
struct pmubpf_key {
	__u32 event; /* index of the -e event (the perf_event's bpf_cookie) */
	__u32 tgid;  /* process id (kernel tgid); 0 = idle task */
	__u32 tid;   /* thread id (kernel pid) */
	__u32 pgen;  /* process generation from the seen map: bumps at exec
	              * and at pid reuse, so a snapshot of maps matches */
	__u64 ustack; /* key of the user stack in the stacks map (a 64-bit
	               * hash of its frames, top bit set), or a status below
	               * PMUBPF_STACK_KEY_MIN */
	__u64 kstack; /* same for the kernel stack */
	__u64 label;  /* label set id (see docs/labels-abi.md), 0 = none */
};

/* Stack statuses in place of a stacks-map key. */
enum pmubpf_stack_status {
	PMUBPF_STACK_NONE = 0, /* no such stack (kernel thread has no user
	                        * stack; a user-mode sample no kernel one),
	                        * or not requested (--no-user/--no-kernel) */
	PMUBPF_STACK_LOST = 1, /* walked, but the stacks map was full */
	PMUBPF_STACK_ERROR = 2,/* bpf_get_stack failed */
};
#define PMUBPF_STACK_KEY_MIN (1ULL << 63)

#define PMUBPF_MAX_DEPTH 127 /* kernel's default perf_event_max_stack */

/* Value of the stacks map: the frames, leaf first. */
struct pmubpf_stack {
	__u64 nr;                     /* frames used in ips */
	__u64 ips[PMUBPF_MAX_DEPTH];  /* instruction pointers (return
	                               * addresses except ips[0]) */
};

/* Value of the counts map. */
struct pmubpf_val {
	__u64 count;  /* samples */
	__u64 period; /* sum of the samples' periods, in event units
	               * (ns for cpu-clock/task-clock, else event counts) */
};

/* Why a sample (or part of it) was not recorded as it happened. Counted
 * per CPU in the drops map, index event * PMUBPF_DROP__MAX + reason. */
enum pmubpf_drop {
	PMUBPF_DROP_COUNTS_FULL = 0, /* counts map full: sample lost whole */
	PMUBPF_DROP_USTACK,          /* user stack not stored: stacks map full or
	                              * walk failed (sample kept, [lost] frame) */
	PMUBPF_DROP_KSTACK,          /* kernel stack, the same */
	PMUBPF_DROP_NOTICE,          /* ring buffer full: new-process/label notice
	                              * not sent (sample kept, retried next time) */
	PMUBPF_DROP_LABEL_READ,      /* label slot unreadable (kept, unlabelled) */
	PMUBPF_DROP_IDLE,            /* idle task sample left out (not a loss:
	                              * --include-idle keeps them) */
	PMUBPF_DROP__MAX,
};

struct pmubpf_drop_val {
	__u64 count;  /* samples */
	__u64 period; /* their summed period (event units) */
};

/* Target filter: key of the targets map. */
enum pmubpf_target_kind {
	PMUBPF_TARGET_TGID = 1, /* -p, -- command (and children it forks) */
	PMUBPF_TARGET_TID = 2,  /* -t */
};
struct pmubpf_target {
	__u32 id;
	__u32 kind; /* enum pmubpf_target_kind */
};
enum pmubpf_target_state {
	PMUBPF_TARGET_ACTIVE = 1,
	PMUBPF_TARGET_AT_EXEC = 2, /* -- command before its exec: becomes
	                            * ACTIVE in the exec tracepoint, so no
	                            * sample of pmubpf's own fork is taken */
};

/* Per-process label slot, filled by userspace once it has found the
 * process's registration record (docs/labels-abi.md). */
struct pmubpf_label_slot {
	__s64 tls_offset; /* offset of the label word from the thread pointer */
	__u32 version;    /* ABI version of the record it came from */
	__u32 pad;
};

/* Ring buffer notices, BPF -> userspace. */
enum pmubpf_notice_kind {
	PMUBPF_NOTICE_PROC = 1,  /* first sample of (tgid, pgen): snapshot it */
	PMUBPF_NOTICE_LABEL = 2, /* first sample of (tgid, label): read the set */
};
struct pmubpf_notice {
	__u32 kind; /* enum pmubpf_notice_kind */
	__u32 tgid;
	__u32 pgen;
	__u32 tid;
	__u64 label;     /* NOTICE_LABEL: the set id */
	__u64 label_ptr; /* NOTICE_LABEL: the set's address in the process */
	char comm[PMUBPF_COMM_LEN]; /* the process's (leader's) comm */
};

/* Largest label set of labels ABI v1 (docs/labels-abi.md: set_max_size). */
#define PMUBPF_LABEL_SET_MAX 5272

/* NOTICE_LABEL carries a copy of the set, read by BPF in the sampled
 * thread itself: that thread's current set cannot be freed under it (the
 * API forbids freeing a set a thread has current), so a set that lives
 * for a microsecond is still named. Userspace validates the copy as
 * hostile bytes (user/labels.c). */
struct pmubpf_label_notice {
	struct pmubpf_notice hdr;
	__u32 len;  /* bytes of data copied; 0 = the copy failed */
	__u32 pad;
	__u8 data[PMUBPF_LABEL_SET_MAX];
};

#endif
