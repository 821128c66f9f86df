/* procs_flabels.c — labels from other writers in the process registry
 * (docs/architecture.md, "Labels from other writers"): publishing a Go
 * program's go_slots entry at its snapshot and a custom-labels v1
 * writer's custom_slots entry (at the snapshot or a maps re-read, once
 * ld.so relocated it), an OpenTelemetry writer's through procs_otel.c,
 * and keeping the sets BPF copied (flabels.c decodes them as hostile
 * bytes; an OpenTelemetry record is first turned into pairs by
 * procs_otel.c) through procs_labels.c, which also makes the union sets.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "flabels.h"
#include <gelf.h>
#include <unistd.h>
#include "customlabels.h"
#include "tlsvar.h"
#include "golabels.h"
#include "goversion.h"
#include "otelctx.h"
#include "symbols/elfsym.h"
#include "procs_int.h"

void procs__set_go_slots(struct procs *p, int go_slots_fd)
{
	p->go_fd = go_slots_fd;
}

void procs__set_custom_slots(struct procs *p, int custom_slots_fd)
{
	p->custom_fd = custom_slots_fd;
}

void procs__set_otel_slots(struct procs *p, int otel_slots_fd)
{
	p->otel_fd = otel_slots_fd;
}

void procs_flabels_free(struct proc *pr)
{
	if (pr->otel) {
		otelctx__clear(pr->otel);
		free(pr->otel);
		pr->otel = NULL;
	}
}

static void find_go(struct procs *p, struct proc *pr);

/* A writer of the custom-labels ABI v1 among pr's objects. */
static void find_custom(struct procs *p, struct proc *pr)
{
	for (size_t i = 0; i < pr->maps.n && !pr->custom_done; i++) {
		const struct procmap *m = &pr->maps.maps[i];
		struct elfobj *o = pr->objs[i];
		const struct elfsym *set, *ver;
		bool main = pr->exe_ino && m->inode == pr->exe_ino;
		uint64_t map_vaddr;
		uint32_t version = 0;
		const char *why = NULL;
		struct stat st;
		int64_t off;
		int fd, err;

		if (!o || (i && o == pr->objs[i - 1]))
			continue;
		set = elfobj__find(o, CUSTOMLABELS_SET_SYMBOL);
		ver = elfobj__find(o, CUSTOMLABELS_VERSION_SYMBOL);
		if (!set || !ver || set->type != STT_TLS || !customlabels__name_ok(m->path, main) ||
		    elfobj__mapping_vaddr(o, m->pgoff, m->end - m->start, &map_vaddr))
			continue;
		uint64_t bias = m->start - map_vaddr;
		pid_t pid = (pid_t)pr->via;
		err = golabels__read_pid(&pid, ver->addr + bias, &version, sizeof(version));
		if (err == -EFAULT || version == 0)
			return; /* not initialised yet, or not readable: next re-read */
		if (err || version != 1) {
			why = err ? "unreadable" : "custom_labels_abi_version is not 1";
			goto refused;
		}
		fd = procmaps__open(pr->via, m, &st);
		if (fd < 0)
			return;
		err = tlsvar__offset(fd, pid, bias, main, CUSTOMLABELS_SET_SYMBOL, set->addr, &off, &why);
		close(fd);
		if (err == -EAGAIN)
			return;
		if (err)
			goto refused;
		struct pmubpf_custom_slot slot = { .tls_offset = off, .pgen = pr->pgen };
		pr->custom_done = true;
		if (procs_publish_slot(p, pr, p->custom_fd, &slot))
			p->st.custom_processes++;
		return;
refused:
		pr->custom_done = true;
		p->st.custom_refused++;
		if (p->verbose)
			fprintf(stderr, "pmubpf: pid %u: custom labels in %s not read: %s\n", pr->tgid,
				m->path, why);
		return;
	}
}

void procs_flabels_find(struct procs *p, struct proc *pr, bool rescan)
{
	if (p->custom_fd >= 0 && !pr->custom_done)
		find_custom(p, pr);
	if (p->otel_fd >= 0 && !pr->otel_done)
		procs_otel_find(p, pr);
	if (!rescan)
		find_go(p, pr);
}

/* Is pr's executable Go, and which (goversion__read's answer)? Once per
 * program: kept by its object's key, when the file read was that
 * object's (an exec since shows another at /proc/PID/exe). */
static int go_version(struct procs *p, const struct proc *pr, struct go_info *gi, const char **why)
{
	const struct procmap *mm = procs__main_map(pr);
	const struct elfobj *mo = mm && pr->objs ? pr->objs[mm - pr->maps.maps] : NULL;
	uint64_t key = mo ? elfobj__key(mo) : 0;
	struct go_memo *me = key ? &p->go_memo[key % GO_MEMO_N] : NULL;
	char path[64];
	struct stat st;
	int err;

	if (me && me->key == key) {
		*gi = me->gi;
		*why = me->why;
		return me->err;
	}
	snprintf(path, sizeof(path), "/proc/%u/exe", pr->via);
	err = goversion__read(path, gi, why, &st);
	if (me && st.st_ino && st.st_ino == pr->exe_ino)
		*me = (struct go_memo){ .key = key, .err = err, .why = *why, .gi = *gi };
	return err;
}

/* A Go program: tell BPF where its goroutines keep their labels. */
static void find_go(struct procs *p, struct proc *pr)
{
	struct go_info gi;
	const char *why = NULL;
	int err;

	if (p->go_fd < 0)
		return;
	err = go_version(p, pr, &gi, &why);
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
	if (procs_publish_slot(p, pr, p->go_fd, &gi.slot))
		p->st.go_processes++;
}

/* Did BPF fail to read some of the set (a page not resident), or leave
 * it to us (a Go map past one bucket: more than 8 labels)? */
static bool copy_failed(const struct pmubpf_flabel_notice *n)
{
	if (n->status == PMUBPF_FLABEL_UNREADABLE || n->status == PMUBPF_FLABEL_TOO_MANY)
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
	    procs_labels_touch(p, pr, n->source, n->hdr.label))
		return;
	/* Read it again from the process, checking that it is still the
	 * same set (a Go set is garbage-collected once unused). */
	if (n->source == PMUBPF_LSRC_GO && copy_failed(n) && p->go_fd >= 0) {
		struct pmubpf_go_slot slot;
		pid_t pid = (pid_t)pr->via;

		again.hdr = n->hdr;
		if (bpf_map_lookup_elem(p->go_fd, &pr->tgid, &slot) == 0 && slot.pgen == pr->pgen &&
		    golabels__copy(golabels__read_pid, &pid, slot.layout, n->hdr.label_ptr,
				   n->hdr.label, &again) == 0)
			n = &again;
	}
	/* An OpenTelemetry record: its bytes into pairs, keys named by the
	 * process context. */
	if (n->source == PMUBPF_LSRC_OTEL) {
		if (procs_otel_pairs(p, pr, n, &again, &why))
			goto bad;
		n = &again;
	}
	if (flabels__decode(n, &set, &why)) {
bad:
		p->st.flabel_sets_bad++;
		if (p->verbose)
			fprintf(stderr, "pmubpf: pid %u: labels of source %u refused: %s\n", pr->tgid,
				n->source, why);
		return;
	}
	procs_labels_keep(p, pr, n->source, &set);
}
