/* vmlinux.h — the minimal CO-RE kernel header pmubpf's BPF code needs.
 *
 * Not generated: it declares only the types and constants bpf/ touches,
 * with preserve_access_index so libbpf relocates every field access
 * against the running kernel's BTF (/sys/kernel/btf/vmlinux). That is what
 * lets one object serve every kernel, and one header serve every arch (the
 * arch-specific parts are under __TARGET_ARCH_*). See vmlinux/README.md.
 */
#ifndef PMUBPF_VMLINUX_H
#define PMUBPF_VMLINUX_H

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef __u8 u8;
typedef __u32 u32;
typedef __u64 u64;
typedef int pid_t;
typedef _Bool bool;
enum { false = 0, true = 1 };

/* uapi/linux/bpf.h: the values are ABI and never change. */
enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERF_EVENT_ARRAY = 4,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_STACK_TRACE = 7,
	BPF_MAP_TYPE_CGROUP_ARRAY = 8,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_ARRAY_OF_MAPS = 12,
	BPF_MAP_TYPE_RINGBUF = 27,
};
enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};
enum {
	BPF_F_NO_PREALLOC = (1U << 0), /* map_flags: entries allocated on insert */
	BPF_F_MMAPABLE = (1U << 10), /* map_flags: userspace may mmap it */
};
enum {
	BPF_F_SKIP_FIELD_MASK = 0xffULL,
	BPF_F_USER_STACK = (1ULL << 8),
	BPF_F_FAST_STACK_CMP = (1ULL << 9),
	BPF_F_REUSE_STACKID = (1ULL << 10),
};

/* Types bpf_helper_defs.h names in prototypes: declared, never used. */
struct __sk_buff; struct bpf_dynptr; struct bpf_fib_lookup; struct bpf_map;
struct bpf_pidns_info; struct bpf_redir_neigh;
struct bpf_sk_lookup; struct bpf_sock; struct bpf_sock_addr; struct bpf_sock_ops;
struct bpf_sock_tuple; struct bpf_spin_lock; struct bpf_sysctl; struct bpf_tcp_sock;
struct bpf_timer; struct bpf_tunnel_key; struct bpf_xfrm_state; struct btf_ptr;
struct cgroup; struct file; struct in6_addr; struct inode; struct iphdr;
struct ipv6_sr_hdr; struct ipv6hdr; struct linux_binprm; struct mptcp_sock;
struct path; struct perf_branch_entry; struct seq_file; struct sk_buff;
struct sk_msg_md; struct sk_reuseport_md; struct sock; struct sockaddr;
struct socket; struct tcp6_sock; struct tcp_request_sock; struct tcp_sock;
struct tcp_timewait_sock; struct tcphdr; struct udp6_sock; struct unix_sock;
struct vm_area_struct; struct xdp_buff; struct xdp_md;

/* The perf_event program's context (uapi/linux/bpf_perf_event.h). Its
 * layout is uapi, rewritten by the verifier: regs is the arch's
 * bpf_user_pt_regs_t, so sample_period's offset differs per arch. */
#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};
typedef struct pt_regs bpf_user_pt_regs_t;
struct thread_struct {
	unsigned long fsbase; /* the user thread pointer (TLS base) */
} __attribute__((preserve_access_index));
#elif defined(__TARGET_ARCH_arm64)
struct pt_regs;
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
};
typedef struct user_pt_regs bpf_user_pt_regs_t;
struct thread_struct {
	struct {
		unsigned long tp_value; /* TPIDR_EL0: the user thread pointer */
		unsigned long tp2_value;
	} uw;
} __attribute__((preserve_access_index));
#else
#error "pmubpf: unsupported __TARGET_ARCH (x86 and arm64 are supported)"
#endif

struct bpf_perf_event_data {
	bpf_user_pt_regs_t regs;
	__u64 sample_period; /* the period of this sample, in event units */
	__u64 addr;
};

/* bpf_perf_event_read_value's output (uapi/linux/bpf.h). */
struct bpf_perf_event_value {
	__u64 counter;
	__u64 enabled;
	__u64 running;
};

#ifndef BPF_NO_PRESERVE_ACCESS_INDEX
#pragma clang attribute push (__attribute__((preserve_access_index)), apply_to = record)
#endif

/* The arch's mm_context_t: where the vDSO is mapped (x86-64, arm64). */
struct pmubpf_mm_context {
	void *vdso;
};
struct file;

/* An address space's VMAs by address (bpf/vma.bpf.h vma_find): the maple
 * tree since 6.1, a red-black tree before. A node's pointer in the tree
 * is encoded (its type in bits 3-6); leaves and range nodes share the
 * range_64 layout, internal nodes of an allocation tree (mm_mt) are
 * arange_64. */
struct rb_node {
	unsigned long __rb_parent_color;
	struct rb_node *rb_right;
	struct rb_node *rb_left;
};
struct rb_root {
	struct rb_node *rb_node;
};
struct maple_tree {
	unsigned int ma_flags;
	void *ma_root;
};
struct maple_range_64 {
	void *parent;
	unsigned long pivot[15];
	void *slot[16]; /* the last one's room holds the metadata (end) */
};
struct maple_arange_64 {
	void *parent;
	unsigned long pivot[9];
	void *slot[10];
	unsigned long gap[10];
	struct {
		unsigned char end, gap;
	} meta;
};

struct mm_struct {
	struct pmubpf_mm_context context;
	struct file *exe_file;
	int map_count; /* its VMAs */
	struct maple_tree mm_mt; /* 6.1+ */
	struct rb_root mm_rb;    /* before 6.1 */
};

/* Files and mappings: bpf/images.bpf.h walks an address space's VMAs
 * and names their files from the dentry chain. */
struct qstr {
	union {
		struct {
			__u32 hash;
			__u32 len;
		};
		__u64 hash_len;
	};
	const unsigned char *name;
};
struct super_block {
	__u32 s_dev; /* dev_t: major << 20 | minor */
};
struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
};
struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;
};
struct vfsmount {
	struct dentry *mnt_root;
};
struct mount { /* fs/mount.h: a vfsmount's container */
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
};
struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
};
struct file {
	struct path f_path;
	struct inode *f_inode;
};
struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
	struct mm_struct *vm_mm;
	unsigned long vm_pgoff;
	struct file *vm_file;
	unsigned long vm_flags; /* a union member since 6.3: found by name */
	struct rb_node vm_rb;   /* before 6.1 */
};

struct ns_common {
	unsigned int inum; /* the namespace's inode in nsfs (/proc/PID/ns/X) */
};

struct mnt_namespace {
	struct ns_common ns;
};

struct nsproxy {
	struct mnt_namespace *mnt_ns;
};

typedef struct {
	int counter;
} atomic_t;

struct signal_struct {
	atomic_t live; /* the group's threads not yet past do_exit's count */
};

struct fs_struct {
	struct path root; /* the task's root: its chroot */
};

struct task_struct {
	pid_t pid;  /* thread id */
	pid_t tgid; /* process id */
	unsigned int __state; /* TASK_* run state (5.14+) */
	__u64 start_time;     /* creation, CLOCK_MONOTONIC ns */
	struct mm_struct *mm; /* NULL for kernel threads */
	struct task_struct *group_leader;
	struct task_struct *real_parent;
	char comm[16];
	struct nsproxy *nsproxy; /* NULL once the task has exited */
	struct fs_struct *fs;    /* NULL once the task has exited */
	struct signal_struct *signal;
	struct thread_struct thread;
	void *stack; /* the kernel stack: its top holds the user registers */
};

#ifndef BPF_NO_PRESERVE_ACCESS_INDEX
#pragma clang attribute pop
#endif

#endif
