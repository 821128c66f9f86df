/* ksymnames.bpf.c — kernel symbols named by the kernel itself.
 *
 * Userspace needs a name for each kernel address in a profile's stacks:
 * a few thousand under a busy recording. Reading /proc/kallsyms for them
 * makes the kernel format every symbol it has (120k+ lines, ~40 ms of
 * system time on 2 CPUs, and a 5 MB table kept), and is a snapshot: a
 * module or BPF program loaded since is unnamed. Here the kernel formats
 * only the addresses asked, at the moment they are asked, with the %pS
 * of bpf_snprintf (sprint_symbol: a binary search of its own tables,
 * modules and BPF programs included).
 *
 * A BPF_PROG_TYPE_SYSCALL program, run by BPF_PROG_TEST_RUN: userspace
 * writes up to PMUBPF_KSYM_BATCH addresses and their count into .bss
 * (mmapped), runs it, and reads each address's "name+0xoff/0xsize
 * [module]" back from .bss (an address the kernel has no symbol for
 * comes back as itself, "0xffff..."). A separate object, loaded on its
 * own: a kernel without syscall programs or this helper (5.14) keeps
 * /proc/kallsyms, and the recording's own object does not depend on it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pmubpf_abi.h"

char LICENSE[] SEC("license") = "GPL"; /* bpf_snprintf is GPL-only */

__u64 ksym_addrs[PMUBPF_KSYM_BATCH];
__u32 ksym_n;
char ksym_text[PMUBPF_KSYM_BATCH][PMUBPF_KSYM_LEN];

static const char sym_fmt[] = "%pS";

static long name_one(__u32 i, void *ctx)
{
	if (i >= PMUBPF_KSYM_BATCH)
		return 1;
	bpf_snprintf(ksym_text[i], PMUBPF_KSYM_LEN, sym_fmt, &ksym_addrs[i], sizeof(__u64));
	return 0;
}

SEC("syscall")
int ksym_names(void *ctx)
{
	__u32 n = ksym_n;

	if (n > PMUBPF_KSYM_BATCH)
		n = PMUBPF_KSYM_BATCH;
	bpf_loop(n, name_one, NULL, 0);
	return 0;
}
