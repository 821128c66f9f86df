/* features.h — what this kernel's BPF can do, probed at start-up.
 *
 * Each feature the BPF side may lack (bpf/compat.bpf.h lists them with
 * their stand-ins) is probed by asking the kernel, never by its version
 * number: distributions backport BPF features. A missing feature turns
 * off what needs it, and that alone. One table in features.c names each
 * feature, what it needs and what a recording does without it: `-v`,
 * `pmubpf features` and docs/kernels.md all read it. */
#ifndef PMUBPF_FEATURES_H
#define PMUBPF_FEATURES_H

#include <stdbool.h>
#include <stdio.h>

enum feature {
	FEAT_ATTACH_COOKIE, /* bpf_get_attach_cookie in perf_event programs (5.15) */
	FEAT_TASK_PT_REGS,  /* bpf_task_pt_regs (5.15) */
	FEAT_OFFCPU,        /* -e off-cpu: syscall programs with
	                     * bpf_for_each_map_elem (5.14), fetching atomics (5.12) */
	FEAT_LAZY_MAPS,     /* hash maps allocated as they fill in perf_event programs */
	FEAT_EXIT_IMAGES,   /* VMA iterator (6.7) and sched_prepare_exec (6.10) */
	FEAT_BPF_KSYMS,     /* kernel symbols by a BPF iterator (5.x, ksymnames.c) */
	FEAT_FILE_TABLES,   /* the kernel's VMA tree, read by BPF: a process
	                     * with no unwind slot yet unwound by its files'
	                     * tables (every kernel; PMUBPF_NO_FILE_TABLES) */
	FEAT_N
};
#define FEAT_ALL ((1u << FEAT_N) - 1)

struct features {
	bool have[FEAT_N];
	bool probed[FEAT_N];
};

/* Probe the features in the mask `want` (bits 1 << enum feature): a
 * recording asks what it needs before it loads its BPF (a few tiny
 * program loads, ~1 ms; exit-images ~15 ms of CPU: a fork, a tiny
 * object loaded without the kernel's BTF). */
void features__probe(struct features *f, unsigned want);

/* One line per probed feature missing, "NAME: what a recording does
 * without it", into the callback; the number of lines. */
int features__describe(const struct features *f, void (*line)(const char *text, void *arg),
		       void *arg);

/* `pmubpf features`: every feature pmubpf probes on this kernel, one a
 * line, tab-separated: name, "yes" or "no", what a recording does
 * without it (tools/kernels builds docs/kernels.md's table from this);
 * 0, or 1 if BPF could not be asked at all (not root). */
int features__print(FILE *out);

#endif
