/* procs_flabels.c — labels from other writers in the process registry
 * (docs/architecture.md, "Labels from other writers"): publishing a Go
 * program's go_slots entry at its snapshot, and keeping the sets BPF
 * copied (flabels.c decodes them as hostile bytes) through
 * procs_labels.c, which also makes the union sets.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "flabels.h"
#include "golabels.h"
#include "goversion.h"
#include "procs_int.h"

void procs__set_go_slots(struct procs *p, int go_slots_fd)
{
	p->go_fd = go_slots_fd;
}

/* A Go program: tell BPF where its goroutines keep their labels. */
void procs_flabels_find(struct procs *p, struct proc *pr)
{
	struct go_info gi;
	const char *why = NULL;
	char path[64];
	int err;

	if (p->go_fd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/%u/exe", pr->tgid);
	err = goversion__read(path, &gi, &why);
	if (err == -EPROTONOSUPPORT) {
		p->st.go_refused++;
		snprintf(p->st.go_refused_version, sizeof(p->st.go_refused_version), "%s",
			 gi.version[0] ? gi.version : "go<1.18");
		if (p->verbose)
			fprintf(stderr, "pmubpf: pid %u: Go labels not read: %s (%s)\n", pr->tgid,
				why, gi.version);
		return;
	}
	if (err)
		return; /* not Go (or gone: the exe link with it) */
	gi.slot.pgen = pr->pgen;
	if (p->seen_fd >= 0 && !procs_same_generation(p, pr))
		return;
	if (bpf_map_update_elem(p->go_fd, &pr->tgid, &gi.slot, BPF_ANY))
		return;
	p->st.go_processes++;
	/* Written after an exit or exec deleted it: delete it ourselves (the
	 * entry's pgen keeps BPF from using it meanwhile). */
	if (p->seen_fd >= 0 && !procs_same_generation(p, pr))
		bpf_map_delete_elem(p->go_fd, &pr->tgid);
}

/* Did BPF fail to read some of the set (a page not resident)? */
static bool copy_failed(const struct pmubpf_flabel_notice *n)
{
	if (n->status == PMUBPF_FLABEL_UNREADABLE)
		return true;
	for (uint32_t i = 0; i < n->nslots && i < PMUBPF_FLABEL_MAX; i++)
		if (n->pairs[i].flags & PMUBPF_FLABEL_FAULT)
			return true;
	return false;
}

void procs_flabels_notice(struct procs *p, struct proc *pr, const struct pmubpf_flabel_notice *n)
{
	struct pmubpf_flabel_notice again; /* 5 KiB, as the set */
	struct label_set set;
	const char *why = NULL;

	if (n->source == PMUBPF_LSRC_OURS || n->source >= PMUBPF_LSRC__MAX ||
	    procs_labels_kept(p, pr, n->source, n->hdr.label))
		return;
	/* Read it again from the process, checking that it is still the
	 * same set (a Go set is garbage-collected once unused). */
	if (n->source == PMUBPF_LSRC_GO && copy_failed(n) && p->go_fd >= 0) {
		struct pmubpf_go_slot slot;
		pid_t pid = (pid_t)pr->tgid;

		again.hdr = n->hdr;
		if (bpf_map_lookup_elem(p->go_fd, &pr->tgid, &slot) == 0 && slot.pgen == pr->pgen &&
		    golabels__copy(golabels__read_pid, &pid, slot.layout, n->hdr.label_ptr,
				   n->hdr.label, &again) == 0)
			n = &again;
	}
	if (flabels__decode(n, &set, &why)) {
		p->st.flabel_sets_bad++;
		if (p->verbose)
			fprintf(stderr, "pmubpf: pid %u: labels of source %u refused: %s\n", pr->tgid,
				n->source, why);
		return;
	}
	procs_labels_keep(p, pr, n->source, &set);
}
