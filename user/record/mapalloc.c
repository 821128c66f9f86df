/* mapalloc.c — see mapalloc.h. */
#include <sched.h> /* sched_setaffinity: _GNU_SOURCE, from the build flags */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "mapalloc.h"
#include "lib/envflag.h"

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
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	int map, prog;

	if (envflag_on(getenv("PMUBPF_MAP_PREALLOC")))
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

int mapalloc__warm(int fd, const void *key, size_t value_size, const int *cpus, int ncpus)
{
	cpu_set_t allowed;
	void *zero = calloc(1, value_size);
	int warmed = 0;

	if (!zero || sched_getaffinity(0, sizeof(allowed), &allowed)) {
		free(zero);
		return 0;
	}
	for (int i = 0; i < ncpus; i++) {
		cpu_set_t one;

		if (cpus[i] < 0 || cpus[i] >= CPU_SETSIZE)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpus[i], &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		/* the syscall allocates on this CPU; the refill it asks for
		 * runs as interrupts come back on, before the delete */
		if (!bpf_map_update_elem(fd, key, zero, BPF_NOEXIST)) {
			bpf_map_delete_elem(fd, key);
			warmed++;
		}
	}
	sched_setaffinity(0, sizeof(allowed), &allowed);
	free(zero);
	return warmed;
}
