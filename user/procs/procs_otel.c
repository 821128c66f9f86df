/* procs_otel.c — OpenTelemetry thread context (OTEP 4947) in the process
 * registry: finding a writer (its otel_thread_ctx_v1 and its process
 * context, OTEP 4719), publishing its otel_slots entry to BPF, and
 * turning the records BPF copied into pairs with the process context's
 * key names (otelctx.c), so flabels.c decodes them like every other
 * writer's sets.
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "golabels.h"
#include "otelctx.h"
#include "procmaps.h"
#include "tlsvar.h"
#include "symbols/elfsym.h"
#include "procs_int.h"

/* Read pr's process context into c: 0, -ENOENT (no OTEL_CTX mapping),
 * -EAGAIN (not published or being updated), -EPROTO (*why), or a read
 * error. */
static int read_pctx(struct proc *pr, struct otelctx *c, const char **why)
{
	struct procmaps all = { 0 };
	pid_t pid = (pid_t)pr->via;
	int err = procmaps__read(pid, false, &all);

	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < all.n; i++)
		if (otelctx__is_mapping(all.maps[i].path)) {
			err = otelctx__read(golabels__read_pid, &pid, all.maps[i].start, c, why);
			break;
		}
	procmaps__free(&all);
	return err;
}

static void refuse(struct procs *p, struct proc *pr, const char *where, const char *why)
{
	pr->otel_done = true;
	p->st.otel_refused++;
	if (p->verbose)
		fprintf(stderr, "pmubpf: pid %u: OpenTelemetry thread context in %s not read: %s\n",
			pr->tgid, where, why ? why : "unreadable");
}

void procs_otel_find(struct procs *p, struct proc *pr)
{
	for (size_t i = 0; i < pr->maps.n && !pr->otel_done; i++) {
		const struct procmap *m = &pr->maps.maps[i];
		struct elfobj *o = pr->objs[i];
		bool main = pr->exe_ino && m->inode == pr->exe_ino;
		const struct elfsym *sym;
		const char *why = NULL;
		uint64_t map_vaddr;
		struct stat st;
		int64_t off;
		int fd, err;

		if (!o || (i && o == pr->objs[i - 1]))
			continue;
		sym = elfobj__find(o, OTELCTX_TLS_SYMBOL);
		if (!sym || elfobj__mapping_vaddr(o, m->pgoff, m->end - m->start, &map_vaddr))
			continue;
		/* "a pointer to the active Thread-Local Context Record" */
		if (sym->type != STT_TLS || sym->size != 8) {
			refuse(p, pr, m->path, "otel_thread_ctx_v1 is not an 8-byte TLS variable");
			return;
		}
		/* The OTEP's order: the process context first; without its
		 * threadlocal keys, wait for its next update (our re-reads). */
		if (!pr->otel && !(pr->otel = calloc(1, sizeof(*pr->otel))))
			return;
		err = read_pctx(pr, pr->otel, &why);
		if (err == -EPROTO) {
			refuse(p, pr, "the process context", why);
			return;
		}
		if (err || !pr->otel->schema[0])
			return; /* not published yet, or gone: next re-read */
		if (!otelctx__schema_ok(pr->otel->schema)) {
			refuse(p, pr, "the process context", "threadlocal.schema_version unknown");
			return;
		}
		fd = procmaps__open(pr->via, m, &st);
		if (fd < 0)
			return;
		err = tlsvar__offset(fd, (pid_t)pr->via, m->start - map_vaddr, main,
				     OTELCTX_TLS_SYMBOL, sym->addr, &off, &why);
		close(fd);
		if (err == -EAGAIN)
			return;
		if (err) {
			refuse(p, pr, m->path, why);
			return;
		}
		struct pmubpf_otel_slot slot = { .tls_offset = off, .pgen = pr->pgen };
		pr->otel_done = true;
		if (procs_publish_slot(p, pr, p->otel_fd, &slot))
			p->st.otel_processes++;
		return;
	}
}

int procs_otel_pairs(struct procs *p, struct proc *pr, const struct pmubpf_flabel_notice *n,
		     struct pmubpf_flabel_notice *out, const char **why)
{
	uint32_t unknown = 0;
	int err = otelctx__pairs(n, pr->otel, out, &unknown, why);

	/* A key index the map lacks: "it MUST refresh the cached map before
	 * continuing" (the map only grows). */
	if (!err && unknown && pr->otel) {
		struct otelctx *fresh = calloc(1, sizeof(*fresh));

		if (fresh && read_pctx(pr, fresh, why) == 0) {
			otelctx__clear(pr->otel);
			free(pr->otel);
			pr->otel = fresh;
			fresh = NULL;
			err = otelctx__pairs(n, pr->otel, out, &unknown, why);
		}
		if (fresh) {
			otelctx__clear(fresh);
			free(fresh);
		}
	}
	if (!err && unknown) {
		p->st.otel_keys_unknown += unknown;
		if (p->verbose)
			fprintf(stderr, "pmubpf: pid %u: %u OpenTelemetry attributes left out: key index not in threadlocal.attribute_key_map\n",
				pr->tgid, unknown);
	}
	return err;
}
