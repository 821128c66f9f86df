/* mapalloc.c — see mapalloc.h. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "mapalloc.h"

/* One lookup in map fd: r2 = &key (0, on the stack), r1 = the map. */
static int probe_prog(int fd)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = -4, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -4 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1, .src_reg = BPF_PSEUDO_MAP_FD, .imm = fd },
		{ 0 }, /* the upper half of the 64-bit immediate */
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "pmubpf_alloc", "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), NULL);
}

bool mapalloc__lazy_ok(void)
{
	static int known = -1;
	const char *env = getenv("PMUBPF_MAP_PREALLOC");
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	int map, prog;

	if (env && *env && strcmp(env, "0"))
		return false;
	if (known >= 0)
		return known;
	map = bpf_map_create(BPF_MAP_TYPE_HASH, "pmubpf_alloc", 4, 4, 1, &o);
	if (map < 0)
		return false; /* asked again next time: no answer yet */
	prog = probe_prog(map);
	known = prog >= 0;
	if (prog >= 0)
		close(prog);
	close(map);
	return known;
}
