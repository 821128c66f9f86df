/* pmubpf_abi.h — every structure that crosses the BPF/userspace boundary.
 *
 * Included by bpf/'s files (through vmlinux.h types) and by user/
 * (through <linux/types.h>). Fixed-width types only, no pointers, no long:
 * both sides must agree on every offset. Units are in the comments.
 */
#ifndef PMUBPF_ABI_H
#define PMUBPF_ABI_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define PMUBPF_MAX_EVENTS 16 /* -e may be given this many times */
#define PMUBPF_MAX_CGROUPS 8 /* --cgroup and --container, in all */
#define PMUBPF_COMM_LEN 16   /* TASK_COMM_LEN */

/* Kernel symbol names asked of the kernel (bpf/ksymnames.bpf.c): the
 * addresses one run of its program names, and the room for each name as
 * %pS writes it ("name+0xoff/0xsize [module]"; KSYM_NAME_LEN is 512, but
 * a name that long is a Rust symbol, and a cut one is left unnamed). */
#define PMUBPF_KSYM_BATCH 256
#define PMUBPF_KSYM_LEN 256

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

/* --data-addr: key of the data map (bpf/dataaddr.bpf.h), the counts key
 * plus the data address the sample touched (PERF_SAMPLE_ADDR: 0 when the
 * kernel had none for it). Exact, not rounded: a field's offset is the
 * answer wanted; the map has its own size bound and drop reason. */
struct pmubpf_data_key {
	struct pmubpf_key k;
	__u64 addr;
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
#define PMUBPF_MAX_DEPTH_STR "127"

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
 * per CPU in the drops map, per window (the two sets of maps samples are
 * counted in alternately, bpf/pmubpf.bpf.c `window`), at
 * PMUBPF_DROP_INDEX(window, event, reason). */
#define PMUBPF_DROP_INDEX(w, ev, reason) \
	(((w) * PMUBPF_MAX_EVENTS + (ev)) * PMUBPF_DROP__MAX + (reason))
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
	/* --call-graph dwarf: how user stacks unwound in BPF ended, when not
	 * at their outermost frame. The sample is always kept, with the
	 * frames unwound so far (each reason counted once per sample). */
	PMUBPF_DROP_DWARF_NO_TABLE,  /* process has no unwind tables (yet, or
	                              * no slot): frame-pointer stack instead */
	PMUBPF_DROP_DWARF_TRUNCATED, /* PMUBPF_MAX_DEPTH frames, not at the end */
	PMUBPF_DROP_DWARF_READ_FAIL, /* stack memory unreadable (not resident,
	                              * or a bad CFA) */
	PMUBPF_DROP_DWARF_UNMAPPED,  /* pc in no known executable mapping (or
	                              * one mapped after the snapshot):
	                              * recorded as the last frame */
	PMUBPF_DROP_DWARF_BAD_FRAME, /* unwound frame not above the last one
	                              * (corrupt stack or wrong rule) */
	PMUBPF_DROP_DWARF_BAD_RULE,  /* a CFI rule BPF cannot evaluate: that
	                              * frame unwound by frame pointer (not a
	                              * stop) */
	PMUBPF_DROP_DWARF_NO_CFI,    /* a pc no CFI covers (JIT code in an
	                              * anonymous mapping, object without
	                              * .eh_frame, tables full): that frame
	                              * by frame pointer */
	PMUBPF_DROP_GROUP_READ,      /* a group member's count unreadable at
	                              * its leader's sample (counted for the
	                              * member: that interval's count is lost) */
	PMUBPF_DROP_DATA_FULL,       /* --data-addr: data map full: the sample
	                              * is in the code profile, not the data
	                              * one ([lost] frame there) */
	PMUBPF_DROP_OFFCPU_FULL,     /* -e off-cpu: a wait not recorded at its
	                              * start, the waits map was full (period 0:
	                              * its length is never known) */
	PMUBPF_DROP_OFFCPU_UNSEEN,   /* -e off-cpu: a wait ended that was not
	                              * recorded at its start (begun before the
	                              * recording, or the map was full): period
	                              * = its time since the recording began */
	PMUBPF_DROP_LABEL_FOREIGN,   /* another writer's labels (Go's, ...)
	                              * unreadable at the sample: kept, without
	                              * that writer's labels */
	PMUBPF_DROP_LABEL_INVALID,   /* another writer's record refused at the
	                              * sample as invalid (an OpenTelemetry
	                              * record's valid flag neither 0 nor 1, or
	                              * its attributes over the size read): kept,
	                              * without that writer's labels */
	PMUBPF_DROP_OFFCPU_END_UNSEEN, /* -e off-cpu: a thread began a wait while
	                              * its last one was still recorded: the
	                              * switch that ended it never reached
	                              * on_switch. period = at most the time
	                              * lost (from its start, or the last
	                              * window's flush, to the new wait) */
	PMUBPF_DROP_DWARF_BY_FILE,   /* --call-graph dwarf: a process with no
	                              * slot yet unwound by the tables of the
	                              * files its VMAs map (not a loss) */
	PMUBPF_DROP__MAX,
};

/* -e off-cpu: threads that can be off CPU at once with a wait recorded
 * (bpf/offcpu.bpf.h offcpu_waits; 2 KiB each, allocated as used). */
#define PMUBPF_OFFCPU_WAITS 65536

struct pmubpf_drop_val {
	__u64 count;  /* samples */
	__u64 period; /* their summed period (event units) */
};

/* Who made a process generation (the seen map's pgen): each maker's
 * numbers are its own (pgen % PGEN_MAKERS), so none collide. BPF counts
 * per CPU and per kind of program (bpf/compat.bpf.h new_pgen); the
 * loader makes the generations of -p targets it reads before sampling
 * begins (session_open.c). */
enum pgen_maker {
	PGEN_BY_SAMPLE,     /* on_sample: perf_event, in NMI or IRQ */
	PGEN_BY_TRACEPOINT, /* on_tracepoint */
	PGEN_BY_TP_BTF,     /* on_switch (off-CPU) */
	PGEN_BY_LOADER,     /* the loader, for -p targets */
	PGEN_MAKERS,
};

/* Value of the seen map (key: tgid): the process's generation. Userspace
 * reads it to tell whether a process is still in the address space a
 * snapshot was taken of (exec deletes the entry; the process's end
 * marks it ended, and the leader task's free deletes it). */
struct pmubpf_seen {
	__u32 pgen;
	__u32 noticed; /* 1 once the first-sight notice went out */
	__u64 start;   /* the leader's start_time (0: an entry the loader
	                * made, stamped at its first sample): a process that
	                * has the pid since has another, and gets a
	                * generation of its own */
	__u32 ended;   /* 1 once its last thread exited (images.bpf.h
	                * sent the image first, where asked): the
	                * samples its exit still takes are of it */
	__u32 pad;
};

/* --call-graph dwarf: unwind tables, built by user/unwind.c from
 * .eh_frame/.debug_frame, evaluated by bpf/unwind.bpf.h (x86-64).
 *
 * One compact row per pc range of an object: {pc, rule}. A table is a
 * sorted run of rows in the unwind_rows ARRAY; a process's slot lists its
 * executable mappings, each naming its table. The rule is packed in 32
 * bits:
 *   bits 0-3   kind (enum pmubpf_uw_kind)
 *   bits 4-11  rbp: 0 = unchanged, else saved at CFA + 8 * (signed) value
 *              (PLT rows: the threshold of the (pc & 15) >= T test)
 *   bits 12-31 CFA offset in bytes (0 .. 1 MiB - 1)
 * The return address is always at CFA - 8 (x86-64 ABI). */
enum pmubpf_uw_kind {
	PMUBPF_UW_NONE = 0,   /* no CFI covers this pc: frame pointer */
	PMUBPF_UW_CFA_RSP,    /* CFA = rsp + off */
	PMUBPF_UW_CFA_RBP,    /* CFA = rbp + off */
	PMUBPF_UW_PLT,        /* CFA = rsp + off + ((pc & 15) >= T ? 8 : 0) */
	PMUBPF_UW_END,        /* return address undefined: outermost frame */
	PMUBPF_UW_SIGNAL,     /* sigreturn trampoline: registers saved in the
	                       * ucontext at rsp (x86-64 rt_sigframe layout) */
	PMUBPF_UW_UNSUPPORTED,/* a rule BPF cannot evaluate: frame pointer */
};
#define PMUBPF_UW_KIND(r)     ((r) & 0xf)
#define PMUBPF_UW_RBP(r)      ((__s8)(((r) >> 4) & 0xff))
#define PMUBPF_UW_CFA_OFF(r)  ((r) >> 12)
#define PMUBPF_UW_RULE(kind, rbp8, off) \
	((__u32)(kind) | ((__u32)(__u8)(rbp8) << 4) | ((__u32)(off) << 12))
#define PMUBPF_UW_CFA_OFF_MAX ((1u << 20) - 1)

struct pmubpf_urow {
	__u32 pc;   /* start of the range, relative to the table's base */
	__u32 rule; /* PMUBPF_UW_RULE */
};

/* unwind_tables[id]: where table id's rows lie in unwind_rows. */
struct pmubpf_utable {
	__u32 off, len;
};
#define PMUBPF_UW_NO_TABLE 0xffffffffu

/* One executable mapping of a process. pc - bias is the row pc. */
struct pmubpf_umap {
	__u64 start, end; /* [start, end) runtime addresses */
	__u64 bias;       /* load bias + table base */
	__u32 table;      /* unwind_tables index, or PMUBPF_UW_NO_TABLE */
	__u32 pad;
};

#define PMUBPF_UW_MAX_MAPS 128 /* per process; more are left out (counted) */

/* A file's table, for a process with no slot yet: BPF walks its VMAs
 * (the VMA iterator) and finds each executable one's file here by the
 * kernel's identity of it (the VMA's inode: i_sb->s_dev, i_ino; what
 * /proc/PID/maps prints). dev 0 and ino 0: the vDSO. */
struct pmubpf_ufile_key {
	__u64 ino;
	__u32 dev; /* the kernel's dev_t: major << 20 | minor */
	__u32 pad;
};

/* NOTICE_UFILE: a frame's VMA maps a file unwind_files has no entry
 * for, under the identity BPF reads (the VMA's inode: on overlayfs the
 * file underneath, which /proc/PID/maps may not print): the loader finds
 * the mapping at addr in tgid, builds its table, and writes the entry
 * under key. Asked once per file (unwind_asked). */
struct pmubpf_ufile_notice {
	__u32 kind; /* PMUBPF_NOTICE_UFILE */
	__u32 tgid;
	struct pmubpf_ufile_key key;
	__u64 addr;
};

/* uw_file_key (a syscall program the loader runs): the identity BPF
 * reads of the file mapped at addr in the loader's own process, for the
 * files it builds ahead; found 0 if no file is mapped there. */
struct pmubpf_file_key_args {
	__u64 addr;
	struct pmubpf_ufile_key key;
	__u32 found;
	__u32 pad;
};

#define PMUBPF_UW_FILE_SEGS 4
/* The file's executable PT_LOAD segments: a VMA whose file range
 * [pgoff * page, + its length) meets [off, end) has bias
 * vm_start - pgoff * page + adj (adj = p_offset - p_vaddr + table base). */
struct pmubpf_ufile {
	__u32 table; /* unwind_tables index */
	__u32 nsegs;
	struct {
		__u64 off, end, adj;
	} seg[PMUBPF_UW_FILE_SEGS];
};

/* unwind_pids[tgid]: the process's mappings are unwind_slots[slot *
 * PMUBPF_UW_MAX_MAPS + i] for i < nmaps (struct pmubpf_umap, sorted by
 * start), for generation pgen (a reused pid must not use a dead
 * process's slot). */
struct pmubpf_upid {
	__u32 slot;
	__u32 pgen;
	__u32 nmaps;
	__u32 pad;
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

/* Labels from other writers (docs/labels-abi.md, "Other writers"). Each
 * source gives a sample a 64-bit id of its current set (0 = none). When
 * only our header's id is non-zero it is the key's label as it always
 * was; when another source's is, the key's label is a hash of all of
 * them (the union key), whose first sight sends a
 * pmubpf_lunion_notice naming its components, and each foreign set's
 * first sight a pmubpf_flabel_notice with a copy of its pairs. */
enum pmubpf_label_source {
	PMUBPF_LSRC_OURS = 0, /* include/pmubpf/labels.h */
	PMUBPF_LSRC_GO = 1,   /* Go's runtime/pprof labels (pprof.Do) */
	PMUBPF_LSRC_CUSTOM = 2,/* custom-labels ABI v1 (Polar Signals) */
	PMUBPF_LSRC_OTEL = 3,  /* OpenTelemetry thread context (OTEP 4947) */
	PMUBPF_LSRC__MAX,
};
#define PMUBPF_LSRC_UNION PMUBPF_LSRC__MAX /* seen_labels: a union key */

/* seen_labels' key (bpf/labels_common.bpf.h): a set of a process
 * generation that userspace was told of. The loader deletes the entry of
 * a set it forgets (no window used it: user/procs/procs_labels.c) or
 * could not keep (a cap), so that the set's next sample sends it again. */
struct pmubpf_label_seen_key {
	__u32 tgid;
	__u32 pgen;
	__u64 label;
	__u32 src; /* enum pmubpf_label_source, or PMUBPF_LSRC_UNION */
	__u32 pad;
};

/* go_slots[tgid]: where a Go program keeps its current goroutine's
 * labels, from the binary's Go version (user/procs/goversion.c). */
enum pmubpf_go_layout {
	PMUBPF_GO_MAP = 1,   /* go1.18-1.23: g.labels -> *labelMap -> hmap
	                      * (map[string]string; up to 8 labels, one bucket) */
	PMUBPF_GO_SLICE = 2, /* go1.24: g.labels -> labelMap{list []label} */
};
struct pmubpf_go_slot {
	__s64 g_tls;    /* the g pointer's offset from the thread pointer */
	__u32 g_m;      /* offsetof(runtime.g, m) */
	__u32 m_curg;   /* offsetof(runtime.m, curg) */
	__u32 g_labels; /* offsetof(runtime.g, labels) */
	__u32 layout;   /* enum pmubpf_go_layout */
	__u32 pgen;     /* the generation it was read for */
	__u32 pad;
};

/* custom_slots[tgid]: where a process using the custom-labels ABI v1
 * keeps custom_labels_current_set (user/procs/customlabels.c). */
struct pmubpf_custom_slot {
	__s64 tls_offset; /* of custom_labels_current_set from the thread pointer */
	__u32 pgen;
	__u32 pad;
};

/* otel_slots[tgid]: where a process publishing OpenTelemetry thread
 * context (OTEP 4947) keeps otel_thread_ctx_v1 (user/procs/otelctx.c). */
struct pmubpf_otel_slot {
	__s64 tls_offset; /* of otel_thread_ctx_v1 from the thread pointer */
	__u32 pgen;
	__u32 pad;
};
/* A Thread-Local Context Record: a 28-byte header (trace-id[16],
 * span-id[8], valid, trace-flags, attrs-data-size u16), then
 * attrs-data-size bytes of attributes. BPF reads records up to the
 * size OTEP 4947 recommends writers keep to, and refuses larger ones. */
#define PMUBPF_OTEL_HDR 28
#define PMUBPF_OTEL_REC_MAX 640

/* Ring buffer notices, BPF -> userspace. Process notices wake the loader
 * at most once per its cadence (BPF's notice_wake_ns, which the loader
 * sets): PMUBPF_NOTICE_WAKE_NS, or PMUBPF_NOTICE_WAKE_CHURN_NS while
 * PMUBPF_CHURN_RATE new process images a second or more are noticed
 * (generations: an exec makes a new one); while notices
 * come, the loader polls again within that time itself
 * (user/record/session.c). */
#define PMUBPF_NOTICE_WAKE_NS 10000000ULL       /* 10 ms */
#define PMUBPF_NOTICE_WAKE_CHURN_NS 20000000ULL /* 20 ms */
#define PMUBPF_CHURN_RATE 200
enum pmubpf_notice_kind {
	PMUBPF_NOTICE_PROC = 1,  /* first sample of (tgid, pgen): snapshot it */
	PMUBPF_NOTICE_LABEL = 2, /* first sample of (tgid, label): read the set */
	PMUBPF_NOTICE_FLABEL = 3,/* first sample of a foreign set: its pairs */
	PMUBPF_NOTICE_LUNION = 4,/* first sample of a union key: its parts */
	PMUBPF_NOTICE_MAP = 5,   /* an executable mapping of an image that ends */
	PMUBPF_NOTICE_LIKE = 6,  /* an image that ended as its parent's */
	PMUBPF_NOTICE_IMAGE = 7, /* the executable mappings of an image that ends */
	PMUBPF_NOTICE_UFILE = 8, /* a file BPF met without its table (unwind_files) */
};
/* The sample was taken inside execve (task->in_execve, where the kernel
 * has it) or while the task exits (PF_EXITING): the reports may already
 * tell of the new image while the generation is still the old one's, or
 * the generation is a new one for the image already known, going away.
 * The loader reads such a process as it would one moving (not from the
 * log alone). */
#define PMUBPF_NOTICE_F_MOVING 1u
/* The task had no address space left (its exit released it): no user
 * stack was taken, and there is no image to read. */
#define PMUBPF_NOTICE_F_NOMM 2u
/* The sample was taken inside an exec past its point of no return, of a
 * process not sampled before (bpf/execwin.bpf.h): the image it ran in is
 * gone, and /proc shows the new one (on 7.x under the new name too)
 * while the generation is still the old one's. BPF sends that image, or
 * its parent's, as the exec ends: the loader waits for it. */
#define PMUBPF_NOTICE_F_EXECING 4u
struct pmubpf_notice {
	__u32 kind; /* enum pmubpf_notice_kind */
	__u32 tgid;
	__u32 pgen;
	__u32 tid;
	__u32 flags;     /* PMUBPF_NOTICE_F_* */
	__u32 mntns;     /* the task's mount namespace (its nsfs inode, as
	                  * /proc/PID/ns/mnt's st_ino), 0 if unknown */
	__u64 label;     /* NOTICE_LABEL: the set id */
	__u64 label_ptr; /* NOTICE_LABEL: the set's address in the process */
	__u64 ts;        /* the sample's time, bpf_ktime_get_ns() (CLOCK_MONOTONIC):
	                  * which image of the process it was (user/procs/maplog.h) */
	__u64 cgroup;    /* the task's cgroup v2 id (bpf_get_current_cgroup_id):
	                  * its container, pod, service (user/procs/cgroups.h) */
	char comm[PMUBPF_COMM_LEN]; /* the process's (leader's) comm */
};

/* NOTICE_MAP (bpf/images.bpf.h): as a sampled process's image ends (its
 * exit, or an exec that replaces it), BPF walks its VMAs and sends each
 * executable one, hdr.pgen the generation its samples carry: the image
 * of a process gone before the loader read its maps, without the
 * kernel's mmap reports. The path comes once per file (dev, ino): leaf
 * first, one component per name, up to the mount namespace's root. */
#define PMUBPF_MAP_COMPS 24
#define PMUBPF_MAP_NAME 256 /* NAME_MAX + 1 */
#define PMUBPF_MAP_F_PATH 1u  /* names[] hold the path (else the loader has it) */
#define PMUBPF_MAP_F_LONG 2u  /* from the namespace's root, deeper than names[]
			       * hold (only F_ROOT's path, if any) */
#define PMUBPF_MAP_F_VDSO 4u  /* the vDSO (no file) */
#define PMUBPF_MAP_F_ROOT 8u  /* names[0..rootk) are the path from the process's
			       * own root (chroot), met on the way up */
struct pmubpf_map_notice {
	struct pmubpf_notice hdr;
	__u64 start, end;
	__u64 pgoff;  /* in pages */
	__u64 ino;
	__u64 exe_ino;/* the process's executable (mm->exe_file), 0 if none */
	__u32 dev;    /* the kernel's dev_t: major << 20 | minor */
	__u16 flags;  /* PMUBPF_MAP_F_* */
	__u16 ncomp;  /* names[] used (F_PATH): the path from the mount
		       * namespace's root, unless F_LONG */
	__u16 rootk;  /* F_ROOT: the first rootk of them, from the process's root */
	__u16 pad[3];
	char names[PMUBPF_MAP_COMPS][PMUBPF_MAP_NAME];
};
/* A notice without names[] (the loader knows the file's path). */
#define PMUBPF_MAP_NOTICE_SHORT __builtin_offsetof(struct pmubpf_map_notice, names)

/* NOTICE_IMAGE (bpf/images.bpf.h): an image's executable mappings, up
 * to PMUBPF_IMAGE_MAPS in one notice (more come in more notices), each
 * of a file whose path the loader was sent before (a NOTICE_MAP of
 * generation 0, a path alone, comes first for a file new to it) or the
 * vDSO. One ring buffer record an image where a record a mapping cost
 * the ending process an output each and the ring twice the bytes. */
#define PMUBPF_IMAGE_MAPS 16
struct pmubpf_image_map {
	__u64 start, end;
	__u64 pgoff; /* in pages */
	__u64 ino;
	__u32 dev;   /* the kernel's dev_t: major << 20 | minor */
	__u16 flags; /* PMUBPF_MAP_F_VDSO, else 0 */
	__u16 pad;
};
struct pmubpf_image_notice {
	struct pmubpf_notice hdr;
	__u64 exe_ino; /* the process's executable (mm->exe_file), 0 if none */
	__u32 n, pad;  /* m[] used */
	struct pmubpf_image_map m[PMUBPF_IMAGE_MAPS];
};
/* The bytes of a notice holding n mappings. */
#define PMUBPF_IMAGE_NOTICE_SIZE(n) \
	(__builtin_offsetof(struct pmubpf_image_notice, m) + (n) * sizeof(struct pmubpf_image_map))

/* NOTICE_LIKE (bpf/images.bpf.h): the image (hdr.tgid, hdr.pgen) ended
 * (an exec) as the image of (like_tgid, like_pgen): a fork child, not
 * sampled before its execve, still in a copy of its sampled parent's
 * address space (the same executable and as many mappings). Sent in
 * place of a walk of the copy: under churn most execs are of such
 * children, and the walk of each (for the few sampled inside the
 * execve) cost more than all the samples. */
struct pmubpf_like_notice {
	struct pmubpf_notice hdr;
	__u32 like_tgid, like_pgen;
};

/* Per-CPU counts of bpf/images.bpf.h (map image_stats). */
enum pmubpf_image_stat {
	PMUBPF_IMAGE_WALKS,   /* images walked (exits and execs of sampled processes) */
	PMUBPF_IMAGE_SENT,    /* mappings sent */
	PMUBPF_IMAGE_LOST,    /* mappings not sent: the ring buffer was full */
	PMUBPF_IMAGE_NOMM,    /* exits with no address space left to walk (kernels
	                       * before 6.16 release it before the tracepoint) */
	PMUBPF_IMAGE_LIKES,   /* fork children named by their parent's image
	                       * (NOTICE_LIKE sent: images.bpf.h image_unstash) */
	PMUBPF_IMAGE_NSTATS,
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

/* A foreign set's pairs as BPF copied them (struct pmubpf_flabel_notice,
 * hdr.label = the source's id of the set). Each pair is one slot of the
 * writer's structure (a map bucket slot, a list element): flags say
 * whether it holds a pair, and whether it was cut or unreadable. */
#define PMUBPF_FLABEL_MAX 16
#define PMUBPF_FLABEL_KEY 64  /* bytes copied at most, with room for a NUL */
#define PMUBPF_FLABEL_VAL 256
enum pmubpf_flabel_flags {
	PMUBPF_FLABEL_PRESENT = 1, /* the slot holds a pair */
	PMUBPF_FLABEL_FAULT = 2,   /* a string was unreadable */
};
struct pmubpf_flabel {
	__u32 flags;
	__u32 klen, vlen; /* the writer's lengths (more than copied: cut) */
	__u32 pad;
	char key[PMUBPF_FLABEL_KEY];
	char val[PMUBPF_FLABEL_VAL];
};
enum pmubpf_flabel_status {
	PMUBPF_FLABEL_OK = 0,
	PMUBPF_FLABEL_TOO_MANY = 1, /* more pairs than BPF reads (a Go map
	                             * past one bucket): none copied, userspace
	                             * reads the set from the process */
	PMUBPF_FLABEL_UNREADABLE = 2,/* the structure itself was unreadable */
};
struct pmubpf_flabel_notice {
	struct pmubpf_notice hdr;
	__u32 source; /* enum pmubpf_label_source */
	__u32 nslots; /* pairs[] slots filled in */
	__u32 total;  /* pairs the writer said it had */
	__u32 status; /* enum pmubpf_flabel_status */
	union {
		struct pmubpf_flabel pairs[PMUBPF_FLABEL_MAX];
		/* PMUBPF_LSRC_OTEL: the record's bytes as BPF read (and
		 * hashed) them, `total` of them; its attribute keys are
		 * indexes that only the process context names, so userspace
		 * turns it into pairs (user/procs/otelctx.c). */
		__u8 raw[PMUBPF_OTEL_REC_MAX];
	};
};

/* A union key's components (hdr.label = the key). */
struct pmubpf_lunion_notice {
	struct pmubpf_notice hdr;
	__u64 ids[PMUBPF_LSRC__MAX];
};

#endif
