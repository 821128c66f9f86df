/* offcpu.c — see offcpu.h. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include "offcpu.h"
#include "pmubpf.skel.h"

/* bpf/offcpu.bpf.h's struct offcpu_flush_args. */
struct flush_args {
	uint64_t end;
	uint64_t restart;
};

bool offcpu__configure(struct pmubpf_bpf *skel, const struct config *cfg)
{
	bool on = false;

	for (int e = 0; e < cfg->nevents; e++)
		if (cfg->events[e].offcpu) {
			skel->rodata->offcpu_event = (__u32)e;
			on = true;
		}
	bpf_program__set_autoload(skel->progs.on_switch, on);
	bpf_program__set_autoload(skel->progs.offcpu_flush, on);
	return on;
}

void offcpu__start(struct pmubpf_bpf *skel, int64_t t0)
{
	__atomic_store_n(&skel->bss->offcpu_t0, (__u64)t0, __ATOMIC_RELEASE);
}

int offcpu__flush(struct pmubpf_bpf *skel, int64_t end, bool restart)
{
	struct flush_args a = { .end = (uint64_t)end, .restart = restart };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &a, .ctx_size_in = sizeof(a));
	int fd = bpf_program__fd(skel->progs.offcpu_flush);

	if (fd < 0)
		return 0; /* not loaded: no off-cpu event */
	return bpf_prog_test_run_opts(fd, &opts) ? -errno : 0;
}
