/* features.c — see features.h. */
#include "features.h"

#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "btfnames.h"
#include "images.h"
#include "lib/envflag.h"
#include "ksymnames.h"
#include "loadlog.h"
#include "mapalloc.h"

/* Does the kernel take a fetching atomic add (BPF_ATOMIC | BPF_FETCH)?
 * r1 = 1; *(u64 *)(fp - 8) = 0; r1 = atomic_fetch_add(fp - 8, r1). */
static bool probe_atomic_fetch(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_1,
		  .imm = BPF_ADD | BPF_FETCH },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static bool helper(enum bpf_prog_type type, enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(type, id, NULL) == 1;
}

static bool probe_attach_cookie(void)
{
	return helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_get_attach_cookie);
}

static bool probe_task_pt_regs(void)
{
	return helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_task_pt_regs);
}

static bool probe_offcpu(void)
{
	return probe_atomic_fetch() && libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) == 1 &&
	       helper(BPF_PROG_TYPE_SYSCALL, BPF_FUNC_for_each_map_elem);
}

static bool probe_bpf_ksyms(void)
{
	struct ksymnames *kn = ksymnames__open();

	ksymnames__close(kn);
	return kn != NULL;
}

/* The kernel's tree of VMAs, which BPF reads (bpf/vma.bpf.h
 * pmubpf_vma_find): the maple tree (6.1+) or the red-black tree before
 * it, found by its names in the kernel's BTF. PMUBPF_NO_FILE_TABLES=1
 * says no (a comparison's "before"). */
static bool probe_file_tables(void)
{
	static const char *const maple[] = { "mm_mt", "maple_range_64", "maple_arange_64" };
	static const char *const rb[] = { "mm_rb", "vm_rb" };

	if (envflag_on(getenv("PMUBPF_NO_FILE_TABLES")))
		return false;
	return btfnames__all(maple, 3) || btfnames__all(rb, 2);
}

/* Every feature, in enum feature's order: its name, how it is asked,
 * and what a recording does without it. */
static const struct {
	const char *name;
	bool (*probe)(void);
	const char *without;
} features_all[FEAT_N] = {
	[FEAT_ATTACH_COOKIE] = { "bpf_get_attach_cookie", probe_attach_cookie,
				 "one sampled event per recording (Linux 5.15 has it)" },
	[FEAT_TASK_PT_REGS] = { "bpf_task_pt_regs", probe_task_pt_regs,
				"user registers from the top of the kernel stack (same stacks; Linux 5.15 has it)" },
	[FEAT_OFFCPU] = { "off-cpu", probe_offcpu,
			  "no -e off-cpu (needs syscall programs, bpf_for_each_map_elem, fetching atomics: Linux 5.14)" },
	[FEAT_LAZY_MAPS] = { "lazy-maps", mapalloc__lazy_ok,
			     "hash maps preallocated whole (more kernel memory from start-up)" },
	[FEAT_EXIT_IMAGES] = { "exit-images", images__supported,
			       "images of exited processes from the kernel's mmap reports (BPF walks them with the VMA iterator, "
			       "sched_prepare_exec and an exit that keeps the address space: Linux 6.16)" },
	[FEAT_BPF_KSYMS] = { "bpf-ksyms", probe_bpf_ksyms, "kernel symbols from /proc/kallsyms" },
	[FEAT_FILE_TABLES] = { "file-tables", probe_file_tables,
			       "a process's first samples (before its unwind slot) walked by frame pointer "
			       "(BPF finds their files' tables through the kernel's maple or red-black tree of VMAs)" },
};

void features__probe(struct features *f, unsigned want)
{
	for (int i = 0; i < FEAT_N; i++) {
		f->probed[i] = want & (1u << i);
		f->have[i] = f->probed[i] && features_all[i].probe();
	}
}

int features__describe(const struct features *f, void (*line)(const char *text, void *arg), void *arg)
{
	char text[256];
	int n = 0;

	for (int i = 0; i < FEAT_N; i++)
		if (f->probed[i] && !f->have[i]) {
			snprintf(text, sizeof(text), "%s: %s", features_all[i].name, features_all[i].without);
			line(text, arg);
			n++;
		}
	return n;
}

int features__print(FILE *out)
{
	struct features f;

	loadlog__install(0); /* a probe's refusal is its answer, not a warning */
	/* Not root (or no CAP_BPF): every probe would say no. */
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SOCKET_FILTER, NULL) != 1) {
		fprintf(stderr, "pmubpf: features: cannot load BPF programs: run as root\n");
		return 1;
	}
	features__probe(&f, FEAT_ALL);
	fprintf(out, "feature\tthis kernel\twithout it\n");
	for (int i = 0; i < FEAT_N; i++)
		fprintf(out, "%s\t%s\t%s\n", features_all[i].name, f.have[i] ? "yes" : "no", features_all[i].without);
	return 0;
}
