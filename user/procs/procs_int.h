/* procs_int.h — what the process registry (procs.c) and its labels half
 * (procs_labels.c: record discovery, label sets) share. Not a public
 * interface: see procs.h.
 */
#ifndef PMUBPF_PROCS_INT_H
#define PMUBPF_PROCS_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "labels.h"
#include "procs.h"

#define LABEL_RECORD_SYMBOL "pmubpf_labels_record"
#define LABEL_MAX_TRIES 1000 /* procs__tick passes: >= 1 s (one per ms at most) */

enum proc_label_state {
	LABELS_NONE,    /* no record symbol in any mapped object */
	LABELS_PENDING, /* record found, not initialised yet: retry */
	LABELS_READY,   /* slot given to BPF */
	LABELS_BAD,     /* record rejected */
};

struct procs {
	struct symcache *sc;
	struct debuginfo *dbg;
	int slots_fd;
	int seen_fd;
	struct proc **v;
	size_t n, cap;
	struct proc **act;     /* the ones procs__tick still has work for */
	size_t nact, capact;
	struct hashtab *index; /* (tgid, pgen) -> index in v */
	struct set_rec *sets;  /* label sets read, all processes */
	size_t nsets, capsets;
	struct hashtab *set_index; /* (proc, id) -> index in sets */
	struct procs_stats st;
	int verbose;
	procs_maps_hook maps_hook; /* unwinding: after each (re-)read */
	void *maps_hook_ctx;
	int64_t last_tick;     /* procs__tick's last pass, and its result */
	int last_pending;
};

struct set_rec {
	const struct proc *pr;
	struct label_set set;
};

struct set_key {
	const struct proc *pr;
	uint64_t id;
};

/* Look for the labels record in pr's mapped objects and, if found, give
 * BPF its slot (procs_labels_retry); LABELS_NONE if no object has it. */
void procs_labels_find(struct procs *p, struct proc *pr);
/* Read the record at pr->record_addr and publish the TLS word's place to
 * BPF: LABELS_READY, LABELS_PENDING (not initialised yet: retry from
 * procs__tick) or LABELS_BAD. */
void procs_labels_retry(struct procs *p, struct proc *pr);
/* A label notice: decode BPF's copy of the set (or read it) and keep it. */
void procs_labels_notice(struct procs *p, struct proc *pr, const struct pmubpf_label_notice *n);
/* hashtab equality for p->set_index. */
bool procs_labels_set_eq(const void *key, uint64_t idx, void *ctx);

#endif
