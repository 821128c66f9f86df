/* symbolize.h — raw stack addresses to pprof locations.
 *
 * Between draining the maps and writing the profile: each user address is
 * resolved against the process snapshot taken at first sight (mapping ->
 * ELF object -> symbol), each kernel address against kallsyms, and turned
 * into a pprof Location (with its Mapping and Function) of one profile.
 * Return addresses (every frame but the leaf) are looked up at addr - 1,
 * so a call at the very end of a function is named by its caller.
 *
 * A user frame's names come, best first, from DWARF (one pprof Line per
 * inlined function, leaf first, with file:line; own or separate debug
 * info, debuginfo.h), the ELF symbol tables (debug file, MiniDebugInfo,
 * the binary's own), the vDSO image, or the process's JIT perf map.
 * C++ names are demangled into Function.name, the mangled name kept in
 * Function.system_name.
 */
#ifndef PMUBPF_SYMBOLIZE_H
#define PMUBPF_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>
#include "symbols/ksyms.h"
#include "pprof/pprof.h"
#include "procs/procs.h"

struct symb_stats {
	uint64_t user_frames, user_unknown; /* distinct locations */
	uint64_t kernel_frames, kernel_unknown;
	uint64_t user_lines;   /* of user_frames: with a source line (DWARF) */
	uint64_t user_inlined; /* of user_frames: with inlined functions */
	uint64_t user_jit;     /* of user_frames: named by a perf map */
	uint64_t user_same;    /* of user_frames: named as the same code in
	                        * another process was (no lookup again) */
	/* The names found per (object, address), for the frames of other
	 * processes that map the same object: under churn thousands of
	 * processes run the same few functions of libc at other addresses.
	 * Made at the first use, freed by symb__done. */
	struct symb_memo *memo;
};
/* Free what symbolizing into one profile kept (st->memo). */
void symb__done(struct symb_stats *st);

struct symb_options {
	bool no_symbol; /* addresses and mappings (with build-ids) only */
};
/* Options for every later call (default: all zero). */
void symb__set_options(const struct symb_options *o);

/* The pprof mapping of pr's mapping m (with its build-id), as user
 * frames in it get, and in *addr the address a frame at ip has there:
 * 0 + errno on ENOMEM. A file loaded away from its link address (a PIE,
 * a shared library: ASLR'd) that has a build-id gets one mapping for
 * every process that maps the same part of it, its addresses file
 * offsets (start = offset = m's file offset), so that the same code in
 * many processes is one location; anything else (a non-PIE executable,
 * already at the same addresses everywhere; no build-id; anonymous or
 * special mappings; --no-symbol, whose mappings offline symbolizers
 * read) keeps the process's own mapping and addresses. */
uint64_t symb__place(struct pprof *p, struct proc *pr, const struct procmap *m, uint64_t ip,
		     uint64_t *addr);
/* symb__place's mapping alone. */
uint64_t symb__mapping(struct pprof *p, struct proc *pr, const struct procmap *m);
/* The ELF object a user address of pr lies in (NULL: none, or no file
 * read), and its mapping in *m if m is not NULL (NULL: none). */
struct elfobj *symb__object(struct proc *pr, uint64_t ip, const struct procmap **m);
/* A location id in profile p for a user address of pr (0 on ENOMEM). A
 * frame no symbol names is named by its file and offset ("libc.so.6+0x2a3f0";
 * without a file, "[anon]+0xADDR" or "[unknown]+0xADDR"), the address
 * staying in the location; with --no-symbol, frames keep only addresses. */
uint64_t symb__user(struct pprof *p, struct proc *pr, uint64_t ip, bool leaf,
		    struct symb_stats *st);
/* A location id for a kernel address (ks may be NULL: unsymbolized). An
 * address kallsyms does not name is "[kernel.kallsyms]+0xADDR". */
uint64_t symb__kernel(struct pprof *p, const struct ksyms *ks, uint64_t ip,
		      bool leaf, struct symb_stats *st);
enum symb_synth {
	SYNTH_LOST_COUNTS_FULL,      /* "[lost: counts map full]" */
	SYNTH_LOST_USTACK_FULL,      /* user stack walked, stacks map full */
	SYNTH_LOST_USTACK_ERROR,     /* user stack walk failed */
	SYNTH_LOST_KSTACK_FULL,
	SYNTH_LOST_KSTACK_ERROR,
	SYNTH_NO_STACK,              /* neither stack exists nor was lost */
	SYNTH_LOST_DATA_FULL,        /* --data-addr: "[lost: data map full]" */
	SYNTH_DATA_NONE,             /* the sample carried no address */
	SYNTH_DATA_UNKNOWN,          /* an address in no known mapping */
	SYNTH__MAX,
};

/* A location for a synthetic frame such as "[lost: counts map full]". */
uint64_t symb__synthetic(struct pprof *p, enum symb_synth what);

#endif
