/* procs_flabels.c — labels from other writers in the process registry
 * (docs/architecture.md, "Labels from other writers"): publishing a Go
 * program's go_slots entry at its snapshot, keeping the sets BPF copied
 * (flabels.c decodes them as hostile bytes), and making the union sets
 * of samples on which several writers had labels: our header's pairs
 * first (they win a clash), then each other writer's in source order.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "flabels.h"
#include "goversion.h"
#include "procs_int.h"
#include "lib/grow.h"

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

void procs_flabels_notice(struct procs *p, struct proc *pr, const struct pmubpf_flabel_notice *n)
{
	struct label_set set;
	const char *why = NULL;

	if (n->source == PMUBPF_LSRC_OURS || n->source >= PMUBPF_LSRC__MAX ||
	    procs_labels_kept(p, pr, n->source, n->hdr.label))
		return;
	if (flabels__decode(n, &set, &why)) {
		p->st.flabel_sets_bad++;
		if (p->verbose)
			fprintf(stderr, "pmubpf: pid %u: labels of source %u refused: %s\n", pr->tgid,
				n->source, why);
		return;
	}
	procs_labels_keep(p, pr, n->source, &set);
}

/* Make union u's set if all of its parts are read: true if made (or
 * never to be made: no memory). */
static bool make_union(struct procs *p, const struct union_rec *u)
{
	struct label_set merged; /* 5 KiB of fixed buffers, only here */

	memset(&merged, 0, offsetof(struct label_set, pairs));
	merged.id = u->key;
	for (uint32_t src = 0; src < PMUBPF_LSRC__MAX; src++) {
		const struct proc_label_set *s;
		struct label_set part;

		if (!u->ids[src])
			continue;
		s = procs_labels_kept(p, u->pr, src, u->ids[src]);
		if (!s)
			return false;
		part.n = 0;
		part.truncated = s->truncated;
		for (uint32_t i = 0; i < s->n && part.n < LABELS_MAX; i++) {
			snprintf(part.pairs[part.n].key, LABELS_KEY_MAX, "%s", s->pairs[i].key);
			snprintf(part.pairs[part.n].value, LABELS_VALUE_MAX, "%s", s->pairs[i].value);
			part.n++;
		}
		flabels__union(&merged, &part);
	}
	procs_labels_keep(p, (struct proc *)u->pr, PMUBPF_LSRC_UNION, &merged);
	return true;
}

void procs_flabels_union(struct procs *p, struct proc *pr, const struct pmubpf_lunion_notice *n)
{
	struct union_rec u = { .pr = pr, .key = n->hdr.label };

	if (procs_labels_kept(p, pr, PMUBPF_LSRC_UNION, u.key))
		return;
	for (size_t i = 0; i < p->nunions; i++)
		if (p->unions[i].pr == pr && p->unions[i].key == u.key)
			return;
	memcpy(u.ids, n->ids, sizeof(u.ids));
	if (make_union(p, &u))
		return;
	if (GROW(p->unions, p->capunions, p->nunions, 1))
		return;
	p->unions[p->nunions++] = u;
}

void procs_flabels_complete(struct procs *p, const struct proc *pr)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nunions; i++) {
		struct union_rec u = p->unions[i];

		if (u.pr == pr && make_union(p, &u))
			continue;
		p->unions[k++] = u;
	}
	p->nunions = k;
}

void procs_flabels_forget(struct procs *p, int64_t before)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nunions; i++) {
		const struct proc *pr = p->unions[i].pr;

		if (pr->dead && pr->dead_ns < before)
			continue;
		p->unions[k++] = p->unions[i];
	}
	p->nunions = k;
}
