/* features.c — see features.h. */
#include "features.h"

#include <linux/bpf.h>
#include <stdio.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "images.h"
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

void features__probe(struct features *f)
{
	f->attach_cookie = helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_get_attach_cookie);
	f->task_pt_regs = helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_task_pt_regs);
	f->atomic_fetch = probe_atomic_fetch();
	f->offcpu = f->atomic_fetch && libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) == 1 &&
		    helper(BPF_PROG_TYPE_SYSCALL, BPF_FUNC_for_each_map_elem);
}

int features__describe(const struct features *f, void (*line)(const char *text, void *arg), void *arg)
{
	const struct {
		bool have;
		const char *text;
	} all[] = {
		{ f->attach_cookie, "bpf_get_attach_cookie (5.15): one sampled event per recording" },
		{ f->task_pt_regs, "bpf_task_pt_regs (5.15): user registers found at the top of the kernel stack" },
		{ f->atomic_fetch, "fetching atomics (5.12): no -e off-cpu" },
		{ f->offcpu, "syscall programs with bpf_for_each_map_elem (5.14): no -e off-cpu" },
	};
	int n = 0;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!all[i].have) {
			line(all[i].text, arg);
			n++;
		}
	return n;
}

int features__print(FILE *out)
{
	struct features f;
	struct ksymnames *kn;
	bool kbpf;

	loadlog__install(0); /* a probe's refusal is its answer, not a warning */
	/* Not root (or no CAP_BPF): every probe would say no. */
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SOCKET_FILTER, NULL) != 1) {
		fprintf(stderr, "pmubpf: features: cannot load BPF programs: run as root\n");
		return 1;
	}
	features__probe(&f);
	kn = ksymnames__open();
	kbpf = kn != NULL;
	ksymnames__close(kn);
	const struct {
		const char *name;
		bool have;
		const char *without;
	} all[] = {
		{ "bpf_get_attach_cookie", f.attach_cookie, "one sampled event per recording" },
		{ "bpf_task_pt_regs", f.task_pt_regs, "user registers from the top of the kernel stack (same stacks)" },
		{ "off-cpu", f.offcpu, "no -e off-cpu (needs syscall programs, bpf_for_each_map_elem, fetching atomics)" },
		{ "lazy-maps", mapalloc__lazy_ok(), "hash maps preallocated whole (more kernel memory from start-up)" },
		{ "exit-images", images__supported(), "images of exited processes from the kernel's mmap reports" },
		{ "bpf-ksyms", kbpf, "kernel symbols from /proc/kallsyms" },
	};
	fprintf(out, "feature\tthis kernel\twithout it\n");
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		fprintf(out, "%s\t%s\t%s\n", all[i].name, all[i].have ? "yes" : "no", all[i].without);
	return 0;
}
