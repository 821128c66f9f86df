/* features.h — what this kernel's BPF can do, probed at start-up.
 *
 * Each feature the BPF side may lack (bpf/compat.bpf.h lists them with
 * their stand-ins) is probed by asking the kernel, never by its version
 * number: distributions backport BPF features. A missing feature turns
 * off what needs it, and that alone. */
#ifndef PMUBPF_FEATURES_H
#define PMUBPF_FEATURES_H

#include <stdbool.h>
#include <stdio.h>

struct features {
	bool attach_cookie; /* bpf_get_attach_cookie in perf_event programs (5.15) */
	bool task_pt_regs;  /* bpf_task_pt_regs (5.15) */
	bool atomic_fetch;  /* BPF_ATOMIC with BPF_FETCH: fetch-add, xchg (5.12) */
	bool offcpu;        /* -e off-cpu: syscall programs with
	                     * bpf_for_each_map_elem (5.14), xchg */
};

/* Probe them all (a few tiny program loads, ~1 ms). */
void features__probe(struct features *f);

/* One line per feature missing, "NAME (what stands in)", into the
 * callback; the number of lines. */
int features__describe(const struct features *f, void (*line)(const char *text, void *arg),
		       void *arg);

/* `pmubpf features`: every feature pmubpf probes on this kernel, one a
 * line, tab-separated: name, "yes" or "no", what a recording does
 * without it (tools/kernels builds docs/kernels.md's table from this);
 * 0, or 1 if BPF could not be asked at all (not root). */
int features__print(FILE *out);

#endif
