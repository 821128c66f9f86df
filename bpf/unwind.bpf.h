/* unwind.bpf.h — user stacks unwound in BPF from .eh_frame-derived tables
 * (--call-graph dwarf), included by pmubpf.bpf.c, offcpu.bpf.h and
 * lifecycle.bpf.h.
 *
 * Userspace (user/unwind.c) loads, per object, a sorted run of compact
 * rows {pc, rule} into unwind_rows (pmubpf_abi.h describes the rule), and
 * per process a slot listing its executable mappings with their tables.
 * Per sample, ustack_key() starts from the user registers (the
 * sample's own if it interrupted user mode, else the task's saved user
 * pt_regs) and, in a loop of up to PMUBPF_MAX_DEPTH steps: records
 * the pc, finds its mapping (cached while frames stay in one object),
 * binary-searches the row, computes the CFA, reads the return address
 * (and rbp when the row says where it was saved) with
 * bpf_probe_read_user. A pc no row covers, or a rule we cannot evaluate,
 * is unwound by frame pointer instead (mixed stacks); a signal trampoline
 * continues from the saved ucontext. The frames then go through
 * store_stack() exactly like bpf_get_stack's: same scratch, same hash,
 * same stacks map. How each walk ended, when not at the outermost frame,
 * is counted in drops (PMUBPF_DROP_DWARF_*).
 *
 * --call-graph fp, and a process with no tables yet, walk by frame
 * pointer here too (fp_ustack_walk: the same steps as the kernel's walk,
 * bpf_get_stack's BPF_F_USER_STACK, without its faulting read of the
 * chain's end; a 32-bit task is left to the kernel's).
 *
 * Only x86-64 is implemented; elsewhere ustack_key() is the kernel's frame
 * pointer walk (userspace does not offer --call-graph dwarf there).
 */
#ifndef PMUBPF_UNWIND_BPF_H
#define PMUBPF_UNWIND_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "pmubpf_abi.h"
#include "base.bpf.h"
#include "compat.bpf.h"
#include "stacks.bpf.h"
#include "vma.bpf.h"

const volatile bool call_graph_dwarf = false; /* --call-graph dwarf */
/* A process with no slot yet is unwound by its files' tables (the VMA
 * iterator, Linux 6.7: the loader sets this where the kernel has it). */
const volatile bool uw_files_on = false;

/* Rows of every table (userspace writes tables through a passing mmap
 * of their pages: BPF_F_MMAPABLE). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct pmubpf_urow);
	__uint(max_entries, 1); /* sized by the loader */
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct pmubpf_utable);
	__uint(max_entries, 1); /* sized by the loader */
} unwind_tables SEC(".maps");

/* Every slot's mappings, PMUBPF_UW_MAX_MAPS per slot. One
 * entry per lookup: a search in an inline array would give the verifier
 * variable-offset pointers to track, and it explored them per value. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct pmubpf_umap);
	__uint(max_entries, 1); /* sized by the loader: slots * MAX_MAPS */
	__uint(map_flags, BPF_F_MMAPABLE); /* written like unwind_rows */
} unwind_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32); /* tgid */
	__type(value, struct pmubpf_upid);
	__uint(max_entries, 1); /* sized by the loader (= slots) */
} unwind_pids SEC(".maps");

/* Files' tables (struct pmubpf_ufile), by the kernel's identity of the
 * file: written by userspace for every object it built a table for. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct pmubpf_ufile_key);
	__type(value, struct pmubpf_ufile);
	__uint(max_entries, 1); /* sized by the loader */
} unwind_files SEC(".maps");

/* Files BPF asked the loader for (NOTICE_UFILE): once each, until the
 * loader forgets the file or the LRU does. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct pmubpf_ufile_key);
	__type(value, __u8);
	__uint(max_entries, 1024);
} unwind_asked SEC(".maps");

/* The identity BPF reads of the file mapped at a->addr in the calling
 * process (the loader's own mapping of a file it builds ahead): what a
 * VMA of that file will give the walk. /proc/PID/maps and stat() may say
 * another (overlayfs: the overlay's, where the VMA has the file
 * underneath). Loaded where syscall programs are (5.14+). */
SEC("syscall")
int uw_file_key(struct pmubpf_file_key_args *a)
{
	struct mm_struct *mm = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), mm);
	struct vm_area_struct *v = (struct vm_area_struct *)pmubpf_vma_find((__u64)mm, a->addr);
	struct file *file;

	a->found = 0;
	if (!v || !(file = BPF_CORE_READ(v, vm_file)))
		return 0;
	a->key.ino = BPF_CORE_READ(file, f_inode, i_ino);
	a->key.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	a->key.pad = 0;
	a->found = 1;
	return 0;
}

#if defined(__TARGET_ARCH_x86)

#define UW_MAP_STEPS 8   /* log2(PMUBPF_UW_MAX_MAPS) + 1 */
#define UW_ROW_STEPS 25  /* tables of up to 2^24 rows */

/* rt_sigframe: ucontext at rsp; rbp, rsp, rip of the interrupted code. */
#define UW_SIG_RBP 120
#define UW_SIG_RSP 160
#define UW_SIG_RIP 168

enum uw_stop {
	UW_RUNNING = 0,
	UW_CLEAN,     /* outermost frame reached */
	UW_STOP_DROP, /* stopped early: reason in c->reason */
};

struct uw_regs_tail {
	__u64 ip, cs, flags, sp; /* pt_regs from ip on */
};

struct uw_ctx {
	__u64 pc, sp, bp;
	__u64 m_start, m_end, m_bias; /* the mapping of the last pc */
	__u32 m_off, m_len;           /* its rows (m_len 0: none) */
	__u32 slot, nmaps;            /* the process's mappings */
	__u32 n;                      /* frames recorded */
	__u32 stop, reason;
	__u32 no_cfi, bad_rule;       /* frames unwound by frame pointer */
	__u32 is_ra;                  /* pc is a return address */
	__u32 fp_only;                /* no tables: every step by frame pointer */
	__u32 by_file;                /* a table found by a VMA's file (uw_vma_map) */
	__u64 mm;                     /* the task's mm (uw_vma_map) */
	struct uw_regs_tail regs;     /* uw_start's read of the saved user registers */
};

/* The walk's state lives in a per-CPU map value, not on the stack: the
 * verifier then knows none of it, so it checks the loop callback once
 * instead of once per distinct constant (n = 0, 1, 2...). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct uw_ctx);
	__uint(max_entries, 1);
} unwind_state SEC(".maps");

/* The i-th mapping of the walk's process's slot. */
static __always_inline struct pmubpf_umap *uw_map_at(struct uw_ctx *c, __u32 i)
{
	__u32 idx = c->slot * PMUBPF_UW_MAX_MAPS + i;

	return bpf_map_lookup_elem(&unwind_slots, &idx);
}

/* Find the mapping of c->pc in the process's slot; cache it in c. */
static __always_inline int uw_find_map(struct uw_ctx *c)
{
	/* hi is not clamped: userspace writes nmaps <= PMUBPF_UW_MAX_MAPS,
	 * the lookups bound-check, and an unknown range keeps the verifier
	 * from exploring the search once per possible (lo, hi). */
	__u32 lo = 0, hi = c->nmaps, tid;
	struct pmubpf_umap *m;

	for (int i = 0; i < UW_MAP_STEPS; i++) {
		__u32 mid;

		if (lo >= hi)
			break;
		mid = (lo + hi) / 2;
		m = uw_map_at(c, mid);
		if (!m)
			return -1;
		if (m->start <= c->pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	m = uw_map_at(c, lo - 1);
	if (!m || c->pc >= m->end)
		return -1;
	c->m_start = m->start;
	c->m_end = m->end;
	c->m_bias = m->bias;
	c->m_off = 0;
	c->m_len = 0;
	tid = m->table;
	if (tid != PMUBPF_UW_NO_TABLE) {
		struct pmubpf_utable *t = bpf_map_lookup_elem(&unwind_tables, &tid);

		if (t) {
			c->m_off = t->off;
			c->m_len = t->len;
		}
	}
	return 0;
}

/* The rule of the last row at or below lpc in the cached mapping. */
static __always_inline __u32 uw_find_rule(struct uw_ctx *c, __u64 lpc)
{
	__u64 rel = lpc - c->m_bias;
	__u32 lo = 0, hi = c->m_len, idx;
	struct pmubpf_urow *r;

	if (!hi || rel > 0xffffffffULL)
		return PMUBPF_UW_NONE;
	for (int i = 0; i < UW_ROW_STEPS; i++) {
		__u32 mid;

		if (lo >= hi)
			break;
		mid = lo + (hi - lo) / 2;
		idx = c->m_off + mid;
		r = bpf_map_lookup_elem(&unwind_rows, &idx);
		if (!r)
			return PMUBPF_UW_NONE;
		if (r->pc <= (__u32)rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return PMUBPF_UW_NONE;
	idx = c->m_off + lo - 1;
	r = bpf_map_lookup_elem(&unwind_rows, &idx);
	return r ? r->rule : PMUBPF_UW_NONE;
}

static __always_inline long uw_stop(struct uw_ctx *c, __u32 reason)
{
	c->stop = UW_STOP_DROP;
	c->reason = reason;
	return 1;
}

/* Nothing is mapped below vm.mmap_min_addr (64 KiB by default, never
 * below 4 KiB): no frame record is there. */
#define UW_MIN_ADDR 4096

/* One step by frame pointer: the frame record at c->bp holds the
 * caller's rbp and the return address. 0: go on, 1: stopped (c->stop
 * says how). No read is made that could only fault: not of rbp 0, the
 * chain's end (_start clears it), nor of an rbp in the first page or
 * not 8-aligned (no frame record; code built without frame pointers
 * leaves such numbers in rbp). The kernel's own walk (bpf_get_stack's
 * BPF_F_USER_STACK) reads the record at 0 and takes a page fault at
 * the end of every stack: two thirds of a sample's BPF time in a PVM
 * guest. upward: also stop at an rbp below the stack pointer (the DWARF
 * walker's steps; the walk by frame pointer alone follows a chain
 * across stacks, as the kernel's does: Go's systemstack, sigaltstack). */
static __always_inline int uw_fp_step(struct uw_ctx *c, bool upward)
{
	__u64 pair[2];

	if (!c->bp) { /* the end of a frame-pointer chain */
		c->stop = UW_CLEAN;
		return 1;
	}
	if (upward ? c->bp < c->sp : c->bp < UW_MIN_ADDR || (c->bp & 7))
		return uw_stop(c, PMUBPF_DROP_DWARF_BAD_FRAME);
	if (bpf_probe_read_user(pair, sizeof(pair), (void *)c->bp))
		return uw_stop(c, PMUBPF_DROP_DWARF_READ_FAIL);
	c->sp = c->bp + 16;
	c->bp = pair[0];
	c->pc = pair[1];
	c->is_ra = 1;
	if (!c->pc) {
		c->stop = UW_CLEAN;
		return 1;
	}
	return 0;
}

#define UW_PAGE_SHIFT 12 /* x86-64's pages: vm_pgoff's unit */

/* A file without an entry: the loader is asked for it once (the process
 * it is read for may not be read yet, or its maps name the file by
 * another identity: overlayfs), with a pc in it to find the mapping by. */
static __always_inline void uw_ask_file(struct pmubpf_ufile_key *key, __u64 pc)
{
	struct pmubpf_ufile_notice n = {
		.kind = PMUBPF_NOTICE_UFILE,
		.tgid = bpf_get_current_pid_tgid() >> 32,
		.addr = pc,
	};
	__u8 one = 1;

	if (bpf_map_lookup_elem(&unwind_asked, key))
		return;
	n.key = *key;
	/* Woken at once: the loader may have handled the process's own
	 * notice already, and the file's next process may start any time
	 * (without, a second process of an overlay binary came before the
	 * answer in 1 of 3 runs). Rare: once a file, but for a process
	 * gone before it was read, whose file is asked again. */
	if (!bpf_ringbuf_output(&notices, &n, sizeof(n), 0))
		bpf_map_update_elem(&unwind_asked, key, &one, BPF_ANY);
}

/* c->pc is in none of the slot's mappings, or the process has no slot
 * yet (its first samples, before userspace read its maps; a library
 * mapped since: ld.so maps them after the first sample, dlopen any
 * time). Its VMA, found in the kernel's tree, names the file, and the
 * file its table (unwind_files): cached in c as the slot's would be. An
 * executable VMA without a table (anonymous code, a JIT's; a file
 * userspace has no table for yet) is cached without one: its frames go
 * by frame pointer (counted NO_CFI). 0, or -1: no executable VMA there. */
static __always_inline int uw_vma_map(struct uw_ctx *c)
{
	struct pmubpf_ufile_key key = {};
	struct vm_area_struct *v;
	struct pmubpf_ufile *f;
	struct file *file;
	/* A local: a CO-RE read through c->mm would relocate c's field. */
	struct mm_struct *mm = (struct mm_struct *)c->mm;
	__u64 off = 0, start, end;

	if (!uw_files_on)
		return -1;
	v = (struct vm_area_struct *)pmubpf_vma_find((__u64)mm, c->pc);
	if (!v || !(BPF_CORE_READ(v, vm_flags) & VM_EXEC))
		return -1;
	start = BPF_CORE_READ(v, vm_start);
	end = BPF_CORE_READ(v, vm_end);
	c->m_start = start;
	c->m_end = end;
	c->m_bias = 0;
	c->m_off = 0;
	c->m_len = 0;
	file = BPF_CORE_READ(v, vm_file);
	if (file) {
		key.ino = BPF_CORE_READ(file, f_inode, i_ino);
		key.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
		off = BPF_CORE_READ(v, vm_pgoff) << UW_PAGE_SHIFT;
	} else if (start != (__u64)BPF_CORE_READ(mm, context.vdso)) {
		return 0; /* anonymous code: by frame pointer */
	} /* the vDSO: key 0, 0 */
	f = bpf_map_lookup_elem(&unwind_files, &key);
	if (!f) {
		uw_ask_file(&key, c->pc);
		return 0;
	}
	for (int i = 0; i < PMUBPF_UW_FILE_SEGS; i++) {
		if (i >= f->nsegs)
			break;
		if (off < f->seg[i].end && off + (end - start) > f->seg[i].off) {
			struct pmubpf_utable *t;
			__u32 tid = f->table;

			t = bpf_map_lookup_elem(&unwind_tables, &tid);
			if (!t)
				return 0;
			c->m_bias = start - off + f->seg[i].adj;
			c->m_off = t->off;
			c->m_len = t->len;
			c->by_file = 1;
			break;
		}
	}
	return 0;
}

/* One frame: record c->pc, then step to its caller. 0: go on, 1: stop. */
__noinline int pmubpf_uw_step(void)
{
	struct uw_ctx *c;
	struct pmubpf_stack *st;
	__u32 zero = 0, n, rule, kind;
	__u64 cfa, pair[2];

	c = bpf_map_lookup_elem(&unwind_state, &zero);
	st = bpf_map_lookup_elem(&scratch, &zero);
	if (!c || !st)
		return 1;
	n = c->n;
	if (n >= PMUBPF_MAX_DEPTH)
		return uw_stop(c, PMUBPF_DROP_DWARF_TRUNCATED);
	/* Symbolization looks every frame but the leaf up at address - 1
	 * (a return address): a frame that is not one (the code a signal
	 * interrupted) is recorded + 1 so that the lookup lands on it. */
	st->ips[n] = c->is_ra || !n ? c->pc : c->pc + 1;
	c->n = n + 1;
	if (c->fp_only)
		return uw_fp_step(c, false);

	if (c->pc < c->m_start || c->pc >= c->m_end) {
		if (uw_find_map(c) && uw_vma_map(c))
			return uw_stop(c, PMUBPF_DROP_DWARF_UNMAPPED);
	}
	/* A return address may be one past its call's function. */
	rule = uw_find_rule(c, c->is_ra ? c->pc - 1 : c->pc);
	kind = PMUBPF_UW_KIND(rule);

	switch (kind) {
	case PMUBPF_UW_END:
		c->stop = UW_CLEAN;
		return 1;
	case PMUBPF_UW_SIGNAL: {
		__u64 regs[2];

		/* The trampoline: its "return address" is its first byte
		 * (the FDE starts one byte early for the - 1). Recorded + 1
		 * so that it is named. */
		st->ips[n] = c->pc + 1;
		/* Registers of the interrupted code, from the ucontext. Its
		 * stack may be anywhere (sigaltstack): no ordering check. */
		if (bpf_probe_read_user(&c->bp, sizeof(c->bp), (void *)(c->sp + UW_SIG_RBP)) ||
		    bpf_probe_read_user(regs, sizeof(regs), (void *)(c->sp + UW_SIG_RSP)))
			return uw_stop(c, PMUBPF_DROP_DWARF_READ_FAIL);
		c->sp = regs[0];
		c->pc = regs[1];
		c->is_ra = 0; /* the interrupted instruction itself */
		if (!c->pc) {
			c->stop = UW_CLEAN;
			return 1;
		}
		return 0;
	}
	case PMUBPF_UW_CFA_RSP:
		cfa = c->sp + PMUBPF_UW_CFA_OFF(rule);
		break;
	case PMUBPF_UW_CFA_RBP:
		cfa = c->bp + PMUBPF_UW_CFA_OFF(rule);
		break;
	case PMUBPF_UW_PLT:
		cfa = c->sp + PMUBPF_UW_CFA_OFF(rule) +
		      ((c->pc & 15) >= (__u64)(rule >> 4 & 0xff) ? 8 : 0);
		break;
	default: /* NONE (no CFI here), UNSUPPORTED: frame pointer */
		/* rbp 0: the chain's end, as the walk by frame pointer
		 * takes it (an entry point without CFI: ld.so's _start, in
		 * every new process's first milliseconds), not a frame
		 * unwound so. */
		if (!c->bp) {
			c->stop = UW_CLEAN;
			return 1;
		}
		if (kind == PMUBPF_UW_UNSUPPORTED)
			c->bad_rule++;
		else
			c->no_cfi++;
		return uw_fp_step(c, true);
	}

	int rbp8 = PMUBPF_UW_RBP(rule);
	if (kind == PMUBPF_UW_PLT)
		rbp8 = 0;
	if (cfa <= c->sp)
		return uw_stop(c, PMUBPF_DROP_DWARF_BAD_FRAME);
	if (rbp8 == -2) { /* push %rbp right after the call: one read */
		if (bpf_probe_read_user(pair, sizeof(pair), (void *)(cfa - 16)))
			return uw_stop(c, PMUBPF_DROP_DWARF_READ_FAIL);
		c->bp = pair[0];
		c->pc = pair[1];
	} else {
		if (bpf_probe_read_user(&c->pc, sizeof(c->pc), (void *)(cfa - 8)))
			return uw_stop(c, PMUBPF_DROP_DWARF_READ_FAIL);
		if (rbp8 && bpf_probe_read_user(&c->bp, sizeof(c->bp), (void *)(cfa + (__s64)rbp8 * 8)))
			return uw_stop(c, PMUBPF_DROP_DWARF_READ_FAIL);
	}
	c->sp = cfa;
	c->is_ra = 1;
	if (!c->pc) {
		c->stop = UW_CLEAN;
		return 1;
	}
	return 0;
}

/* Up to n steps of the walk: a bounded loop around pmubpf_uw_step (a
 * function, verified once; the loop's turns differ only in i, a few
 * instructions each), not bpf_loop: a program that names a bpf_loop
 * callback does not load before 5.13 (compat.bpf.h). */
static __always_inline void uw_walk(__u32 n)
{
	for (__u32 i = 0; i < n; i++)
		if (pmubpf_uw_step())
			break;
}

/* A field of the sample's registers (the perf_event context): one load
 * at its constant offset from the context pointer. Plain C let clang
 * add the offset to the pointer first and load from there, which
 * verifiers before 6.13 refuse ("dereference of modified ctx ptr"). */
#define UW_REG(regs, field)                                                            \
	({                                                                             \
		__u64 v_;                                                              \
		asm volatile("%0 = *(u64 *)(%1 + %2)"                                  \
			     : "=r"(v_)                                                \
			     : "r"(regs), "i"(__builtin_offsetof(struct pt_regs, field))); \
		v_;                                                                    \
	})

/* The user registers a walk starts from, into a cleared c: those of the
 * user-mode code a sample interrupted (regs), else those saved at the
 * task's entry into the kernel. The task's code segment, or 0: no user
 * context (a kernel thread; a task with no user pc). */
static __always_inline __u64 uw_start(struct task_struct *task, bpf_user_pt_regs_t *regs,
				      struct uw_ctx *c)
{
	__u64 cs;

	__builtin_memset(c, 0, sizeof(*c));
	c->mm = (__u64)BPF_CORE_READ(task, mm);
	if (!c->mm)
		return 0; /* kernel thread: no user stack */
	if (regs && (UW_REG(regs, cs) & 3) == 3) { /* the sample interrupted user mode */
		c->pc = UW_REG(regs, ip);
		c->sp = UW_REG(regs, sp);
		c->bp = UW_REG(regs, bp);
		cs = UW_REG(regs, cs);
	} else { /* in the kernel: the registers saved at kernel entry */
		struct pt_regs *ur = current_user_regs();
		/* ip, cs, flags, sp: the tail of pt_regs, read into the walk's
		 * state (a whole pt_regs on the stack was 168 of the 512 bytes
		 * older verifiers allow all frames of a call chain together). */
		struct uw_regs_tail *t = &c->regs;

		if (!ur || bpf_probe_read_kernel(t, sizeof(*t), &ur->ip) || !t->ip ||
		    bpf_probe_read_kernel(&c->bp, sizeof(c->bp), &ur->bp))
			return 0;
		c->pc = t->ip;
		c->sp = t->sp;
		cs = t->cs;
	}
	return cs ? cs : 3;
}

#define UW_USER32_CS 0x23 /* x86's __USER32_CS: a 32-bit task */

/* The current task's user stack by frame pointer into scratch: the pc,
 * then each frame record's return address, as bpf_get_stack's
 * BPF_F_USER_STACK gives them, without the read that faults at the end
 * of the chain (uw_fp_step). A 32-bit task (4-byte records) is left to
 * the kernel's walk. PMUBPF_STACK_WALKED, else the status to record. */
static __always_inline __u64 fp_ustack_walk(void *ctx, bpf_user_pt_regs_t *regs,
					    struct pmubpf_stack *st, __u32 es, __u64 period)
{
	struct task_struct *task = current_task();
	struct uw_ctx *c;
	__u32 zero = 0;
	__u64 cs;

	c = bpf_map_lookup_elem(&unwind_state, &zero);
	if (!c)
		return PMUBPF_STACK_ERROR;
	cs = uw_start(task, regs, c);
	if (!cs)
		return PMUBPF_STACK_NONE;
	if (cs == UW_USER32_CS)
		return walk_stack(ctx, st, es, BPF_F_USER_STACK, PMUBPF_DROP_USTACK, period);
	c->fp_only = 1;
	uw_walk(PMUBPF_MAX_DEPTH); /* at the depth: kept, as the kernel keeps it */
	st->nr = c->n;
	return st->nr ? PMUBPF_STACK_WALKED : PMUBPF_STACK_NONE;
}

/* Unwind the current task's user stack into scratch by DWARF CFI: each
 * frame's mapping from its process's slot, else from its VMA and that
 * file's table (uw_vma_map: the slot not published yet, or a library
 * mapped since), or by frame pointer (counted) while there is neither.
 * PMUBPF_STACK_WALKED with the frames there, else the status to record. */
static __always_inline __u64 dwarf_ustack_walk(void *ctx, bpf_user_pt_regs_t *regs, __u32 es,
					       __u32 tgid, __u32 pgen, __u64 period)
{
	struct task_struct *task = current_task();
	struct pmubpf_upid *up;
	struct pmubpf_stack *st;
	struct uw_ctx *c;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&scratch, &zero);
	if (!st)
		return PMUBPF_STACK_ERROR;
	up = bpf_map_lookup_elem(&unwind_pids, &tgid);
	if (up && up->pgen != pgen)
		up = NULL;
	if (!up && !uw_files_on) {
		if (BPF_CORE_READ(task, mm))
			count_drop(es, PMUBPF_DROP_DWARF_NO_TABLE, period);
		return fp_ustack_walk(ctx, regs, st, es, period);
	}
	c = bpf_map_lookup_elem(&unwind_state, &zero);
	if (!c)
		return PMUBPF_STACK_ERROR;
	if (!uw_start(task, regs, c))
		return PMUBPF_STACK_NONE;
	if (up) {
		c->slot = up->slot;
		c->nmaps = up->nmaps;
	} /* else nmaps 0: every mapping by its VMA */
	uw_walk(PMUBPF_MAX_DEPTH + 1);
	if (c->stop == UW_RUNNING) /* cannot happen: n reaches the depth */
		c->stop = UW_STOP_DROP, c->reason = PMUBPF_DROP_DWARF_TRUNCATED;
	if (c->stop == UW_STOP_DROP)
		count_drop(es, c->reason, period);
	if (c->bad_rule)
		count_drop(es, PMUBPF_DROP_DWARF_BAD_RULE, period);
	if (c->no_cfi)
		count_drop(es, PMUBPF_DROP_DWARF_NO_CFI, period);
	if (c->by_file)
		count_drop(es, PMUBPF_DROP_DWARF_BY_FILE, period);
	st->nr = c->n;
	return PMUBPF_STACK_WALKED;
}

/* The current task's user stack into scratch, as --call-graph asks:
 * PMUBPF_STACK_WALKED with the frames there, else the status to record. */
static __always_inline __u64 ustack_walk(void *ctx, bpf_user_pt_regs_t *regs, __u32 es,
					 __u32 tgid, __u32 pgen, __u64 period)
{
	__u32 zero = 0;
	struct pmubpf_stack *st;

	if (call_graph_dwarf && tgid)
		return dwarf_ustack_walk(ctx, regs, es, tgid, pgen, period);
	st = bpf_map_lookup_elem(&scratch, &zero);
	return st ? fp_ustack_walk(ctx, regs, st, es, period) : PMUBPF_STACK_ERROR;
}

#else /* !__TARGET_ARCH_x86 */

static __always_inline __u64 ustack_walk(void *ctx, bpf_user_pt_regs_t *regs, __u32 es,
					 __u32 tgid, __u32 pgen, __u64 period)
{
	__u32 zero = 0;
	struct pmubpf_stack *st = bpf_map_lookup_elem(&scratch, &zero);

	if (!st)
		return PMUBPF_STACK_ERROR;
	return walk_stack(ctx, st, es, BPF_F_USER_STACK, PMUBPF_DROP_USTACK, period);
}

#endif

/* The user stack walked (ustack_walk) and stored by content hash. */
static __always_inline __u64 ustack_key(void *ctx, bpf_user_pt_regs_t *regs, __u32 es,
					__u32 tgid, __u32 pgen, __u64 period)
{
	__u64 r = ustack_walk(ctx, regs, es, tgid, pgen, period);

	return r == PMUBPF_STACK_WALKED ? pmubpf_store_scratch(es, PMUBPF_DROP_USTACK, period) : r;
}
#endif
