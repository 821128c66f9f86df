/* procs_labels.c — the labels half of the process registry: finding a
 * process's labels record (at its snapshot, and at maps re-reads while
 * none is found, for libraries dlopen()ed later), publishing its TLS slot
 * to BPF, and the label sets named by BPF's notices (docs/labels-abi.md).
 * Everything read from the process is parsed by labels.c as hostile.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/elfsym.h"
#include "lib/hashtab.h"
#include "procs_int.h"
#include "lib/grow.h"
#include "flabels.h"
#include "lib/clock.h"
#include <stdio.h>

static uint64_t set_hash(const struct proc *pr, uint32_t src, uint64_t id)
{
	return hashtab__hash_mix(hashtab__hash_u64((uintptr_t)pr + src), id);
}

bool procs_labels_set_eq(const void *key, uint64_t idx, void *ctx)
{
	const struct set_key *k = key;
	struct procs *p = ctx;

	return p->sets[idx].pr == k->pr && p->sets[idx].set->id == k->id &&
	       p->sets[idx].set->source == k->src;
}

/* Runtime address of a link-time vaddr in the object mapped by m (the
 * load bias is the same for every segment of an object). */
static int runtime_addr(const struct procmap *m, struct elfobj *o, uint64_t vaddr, uint64_t *addr)
{
	uint64_t map_vaddr;
	int err = elfobj__mapping_vaddr(o, m->pgoff, m->end - m->start, &map_vaddr);

	if (err)
		return err;
	*addr = vaddr - map_vaddr + m->start;
	return 0;
}

/* Publish the label word's place to BPF. */
void procs_labels_retry(struct procs *p, struct proc *pr)
{
	struct labels_record_info info;
	const char *why = NULL;
	int err;

	err = labels__read_record(pr->via, pr->record_addr, &info, &why);
	if (err == -EAGAIN && ++pr->label_tries < LABEL_MAX_TRIES) {
		pr->label_state = LABELS_PENDING;
		return;
	}
	if (err) {
		pr->label_state = LABELS_BAD;
		p->st.label_bad_records++;
		return;
	}
	struct pmubpf_label_slot slot = { .tls_offset = info.tls_offset, .version = info.version };
	/* A generation already gone (exec'd: its retries read the new
	 * image's record) must not write the tgid's entry: the new
	 * generation owns it now. */
	if (p->seen_fd >= 0 && !procs_same_generation(p, pr)) {
		pr->label_state = LABELS_NONE;
		return;
	}
	if (p->slots_fd >= 0 && bpf_map_update_elem(p->slots_fd, &pr->tgid, &slot, BPF_ANY) == 0) {
		pr->label_state = LABELS_READY;
		p->st.label_records++;
		/* BPF's exit and exec tracepoints delete the entry, but not
		 * one written after they ran: a process gone meanwhile would
		 * hold it for ever (the map has a fixed size). Only this thread
		 * writes entries, so the one written here is still ours. */
		if (p->seen_fd >= 0 && !procs_same_generation(p, pr))
			bpf_map_delete_elem(p->slots_fd, &pr->tgid);
	} else {
		pr->label_state = LABELS_BAD;
		p->st.label_bad_records++;
	}
}

void procs_labels_find(struct procs *p, struct proc *pr)
{
	for (size_t i = 0; i < pr->maps.n; i++) {
		struct elfobj *o = pr->objs[i];
		const struct elfsym *s;

		if (!o || (i && o == pr->objs[i - 1]))
			continue;
		s = elfobj__find(o, LABEL_RECORD_SYMBOL);
		if (!s || runtime_addr(&pr->maps.maps[i], o, s->addr, &pr->record_addr))
			continue;
		procs_labels_retry(p, pr);
		return;
	}
	pr->label_state = LABELS_NONE;
}

struct proc_label_set *procs_labels_kept(const struct procs *p, const struct proc *pr,
					 uint32_t src, uint64_t id)
{
	struct set_key k = { pr, id, src };
	uint64_t idx;

	if (hashtab__find(p->set_index, set_hash(pr, src, id), &k, &idx))
		return p->sets[idx].set;
	return NULL;
}

/* Mark (pr, src, id)'s set used up to ns, if kept: false if not. */
static bool mark_used(struct procs *p, const struct proc *pr, uint32_t src, uint64_t id, int64_t ns)
{
	struct set_key k = { pr, id, src };
	uint64_t idx;

	if (!hashtab__find(p->set_index, set_hash(pr, src, id), &k, &idx))
		return false;
	if (p->sets[idx].used_ns < ns)
		p->sets[idx].used_ns = ns;
	p->sets[idx].retired_ns = 0; /* its BPF entry, if gone, comes back at its next sample */
	return true;
}

bool procs_labels_touch(struct procs *p, const struct proc *pr, uint32_t src, uint64_t id)
{
	return mark_used(p, pr, src, id, mono_ns());
}

/* Copy set into one allocation sized to its strings. */
static struct proc_label_set *pack(const struct label_set *set, uint32_t src, size_t *bytes)
{
	size_t size = sizeof(struct proc_label_set) + set->n * sizeof(struct label_kv);
	struct proc_label_set *ps;
	char *s;

	for (uint32_t i = 0; i < set->n; i++)
		size += strlen(set->pairs[i].key) + strlen(set->pairs[i].value) + 2;
	ps = malloc(size);
	if (!ps)
		return NULL;
	ps->id = set->id;
	ps->n = set->n;
	ps->truncated = set->truncated;
	ps->ours = false;
	ps->source = (uint8_t)src;
	s = (char *)&ps->pairs[set->n];
	for (uint32_t i = 0; i < set->n; i++) {
		size_t k = strlen(set->pairs[i].key) + 1, v = strlen(set->pairs[i].value) + 1;

		ps->pairs[i].key = memcpy(s, set->pairs[i].key, k);
		ps->pairs[i].value = memcpy(s + k, set->pairs[i].value, v);
		s += k + v;
	}
	*bytes = size;
	return ps;
}

/* Decode the copy BPF made of label set `id`; read it from the process
 * if the copy failed (e.g. a page not resident at sample time). */
void procs_labels_notice(struct procs *p, struct proc *pr, const struct pmubpf_label_notice *n)
{
	uint64_t id = n->hdr.label;
	struct label_set set; /* 5 KiB of fixed buffers: only while decoding */
	const char *why = NULL;
	int err;

	if (procs_labels_touch(p, pr, PMUBPF_LSRC_OURS, id))
		return;
	if (n->len && n->len <= sizeof(n->data))
		err = labels__parse_set(n->data, n->len, id, &set, &why);
	else
		err = labels__read_set(pr->via, n->hdr.label_ptr, id, &set, &why);
	if (err == -ESTALE || err == -EFAULT || err == -ESRCH) {
		p->st.label_sets_stale++;
		return;
	}
	if (err) {
		p->st.label_sets_bad++;
		return;
	}
	procs_labels_keep(p, pr, PMUBPF_LSRC_OURS, &set);
}

/* BPF forgets that it sent (pr, src, id): the set's next sample sends
 * it again. */
static void unsee(const struct procs *p, const struct proc *pr, uint32_t src, uint64_t id)
{
	struct pmubpf_label_seen_key k = { .tgid = pr->tgid, .pgen = pr->pgen, .label = id, .src = src };

	if (p->seen_labels_fd >= 0)
		bpf_map_delete_elem(p->seen_labels_fd, &k);
}

/* A set not kept (a cap): counted, its samples "[too many sets]".
 * Noted, so that the window's end (procs__labels_gc), which makes room,
 * has BPF send it again at its next sample; not at once: until then
 * every sample of it would send its copy again (a one-shot recording,
 * which never ends a window, at every sample past the cap). At most
 * LABEL_SETS_MAX noted a window: the rest stay [too many sets]. */
static void refuse(struct procs *p, struct proc *pr, uint32_t src, uint64_t id)
{
	p->st.label_sets_over++;
	pr->label_sets_over = true;
	if (p->seen_labels_fd >= 0 && p->nrefused < LABEL_SETS_MAX &&
	    !GROW(p->refused, p->caprefused, p->nrefused, 1))
		p->refused[p->nrefused++] = (struct pmubpf_label_seen_key){
			.tgid = pr->tgid, .pgen = pr->pgen, .label = id, .src = src };
}

void procs_labels_keep(struct procs *p, struct proc *pr, uint32_t src, const struct label_set *set)
{
	uint64_t id = set->id;
	size_t bytes;

	if (procs_labels_kept(p, pr, src, id))
		return;
	/* A union is its parts' merge, made for the samples that name them:
	 * the window's count is of the sets read (a program whose only
	 * writer is OpenTelemetry's has a union per span beside its part,
	 * and counted both had half the cap). Its bytes count. */
	bool counted = src != PMUBPF_LSRC_UNION;

	if ((counted && (pr->label_sets_win >= LABEL_SETS_PER_PROC || p->nsets_win >= LABEL_SETS_MAX)) ||
	    pr->label_sets >= 2 * LABEL_ALIVE * LABEL_SETS_PER_PROC || p->nsets >= 2 * LABEL_ALIVE * LABEL_SETS_MAX) {
		refuse(p, pr, src, id);
		return;
	}
	struct proc_label_set *ps = pack(set, src, &bytes);
	if (!ps)
		return;
	if (pr->label_bytes_win + bytes > LABEL_BYTES_PER_PROC || p->set_bytes_win + bytes > LABEL_BYTES_MAX ||
	    pr->label_bytes + bytes > LABEL_ALIVE * LABEL_BYTES_PER_PROC ||
	    p->set_bytes + bytes > (size_t)LABEL_ALIVE * LABEL_BYTES_MAX) {
		free(ps);
		refuse(p, pr, src, id);
		return;
	}
	if (GROW(p->sets, p->capsets, p->nsets, 1)) {
		free(ps);
		return;
	}
	if (hashtab__insert(p->set_index, set_hash(pr, src, id), p->nsets)) {
		free(ps);
		return;
	}
	p->sets[p->nsets] = (struct set_rec){ .pr = pr, .set = ps, .bytes = bytes, .used_ns = mono_ns() };
	p->nsets++;
	pr->label_sets++;
	pr->label_bytes += (uint32_t)bytes;
	pr->label_sets_win += counted;
	pr->label_bytes_win += (uint32_t)bytes;
	p->set_bytes += bytes;
	p->nsets_win += counted;
	p->set_bytes_win += bytes;
	p->st.label_bytes = p->set_bytes;
	if (src == PMUBPF_LSRC_OURS)
		p->st.label_sets++;
	else if (src == PMUBPF_LSRC_UNION)
		p->st.label_unions++;
	else
		p->st.flabel_sets++;
	if (src != PMUBPF_LSRC_UNION)
		procs_labels_complete(p, pr);
}

/* What the samples of a set not kept (over a cap) are labelled with. */
static const struct proc_label_set *too_many(void)
{
	/* A set of one pair, in storage sized for it (a flexible array
	 * member cannot be initialized statically in ISO C). */
	static union {
		struct proc_label_set s;
		char room[sizeof(struct proc_label_set) + sizeof(struct label_kv)];
	} over;

	if (!over.s.n) { /* idempotent: the same values every time */
		over.s.pairs[0] = (struct label_kv){ PROCS_LABELS_KEY, "[too many sets]" };
		over.s.ours = true;
		over.s.n = 1;
	}
	return &over.s;
}

const struct proc_label_set *procs__label_set(const struct procs *p,
					      const struct proc *pr, uint64_t id)
{
	/* A union key first: an id of our header equal to one would have
	 * to collide in 64 bits. */
	const struct proc_label_set *s = procs_labels_kept(p, pr, PMUBPF_LSRC_UNION, id);

	if (!s)
		s = procs_labels_kept(p, pr, PMUBPF_LSRC_OURS, id);
	return s ? s : pr->label_sets_over ? too_many() : NULL;
}

void procs_labels_forget(struct procs *p, int64_t before, struct hashtab *index)
{
	size_t k = 0;

	hashtab__free(p->set_index);
	p->set_index = index;
	for (size_t i = 0; i < p->nsets; i++) {
		const struct proc *pr = p->sets[i].pr;

		if (pr->dead && pr->dead_ns < before) {
			p->set_bytes -= p->sets[i].bytes;
			free(p->sets[i].set);
			continue;
		}
		p->sets[k] = p->sets[i];
		hashtab__insert(index, set_hash(pr, p->sets[k].set->source, p->sets[k].set->id),
				k); /* reserved */
		k++;
	}
	p->nsets = k;
	p->st.label_bytes = p->set_bytes;
	procs_labels_forget_unions(p, before);
}

/* Union sets: a sample on which several writers had labels is keyed by
 * a union key (bpf/labels.bpf.h); its set is our header's pairs first
 * (they win a clash), then each other writer's in source order. */

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

void procs_labels_union(struct procs *p, struct proc *pr, const struct pmubpf_lunion_notice *n)
{
	struct union_rec u = { .pr = pr, .key = n->hdr.label };

	if (procs_labels_touch(p, pr, PMUBPF_LSRC_UNION, u.key))
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

void procs_labels_complete(struct procs *p, const struct proc *pr)
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

void procs_labels_forget_unions(struct procs *p, int64_t before)
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

void procs__set_seen_labels(struct procs *p, int seen_labels_fd)
{
	p->seen_labels_fd = seen_labels_fd;
}

void procs_labels_used(struct procs *p, const struct proc *pr, uint64_t label, int64_t ns)
{
	/* As procs__label_set looks it up: a union key, else our header's. */
	mark_used(p, pr, PMUBPF_LSRC_UNION, label, ns);
	mark_used(p, pr, PMUBPF_LSRC_OURS, label, ns);
}

/* Retired, and no window drained since (all before `before`) used it. */
static bool set_gone(const struct set_rec *r, int64_t before)
{
	return r->retired_ns && r->used_ns < r->retired_ns && before > r->retired_ns;
}

size_t procs__labels_gc(struct procs *p, int64_t before, int64_t now)
{
	size_t freeing = 0, k = 0;

	/* A new window's reads: its caps start again. */
	for (size_t i = 0; i < p->n; i++) {
		p->v[i]->label_sets_win = 0;
		p->v[i]->label_bytes_win = 0;
	}
	p->nsets_win = p->set_bytes_win = 0;
	for (size_t i = 0; i < p->nrefused; i++)
		bpf_map_delete_elem(p->seen_labels_fd, &p->refused[i]);
	p->nrefused = 0;
	for (size_t i = 0; i < p->nsets; i++) {
		struct set_rec *r = &p->sets[i];

		if (set_gone(r, before)) {
			freeing++;
		} else if (!r->retired_ns && r->used_ns < before) {
			r->retired_ns = now;
			unsee(p, r->pr, r->set->source, r->set->id);
		}
	}
	if (!freeing)
		return 0;
	struct hashtab *index = hashtab__new(procs_labels_set_eq, p);

	if (!index || hashtab__reserve(index, p->nsets - freeing)) {
		hashtab__free(index);
		return 0; /* out of memory: kept, tried again next time */
	}
	for (size_t i = 0; i < p->nsets; i++) {
		struct set_rec *r = &p->sets[i];

		if (set_gone(r, before)) {
			struct proc *pr = (struct proc *)r->pr;

			pr->label_sets--;
			pr->label_bytes -= (uint32_t)r->bytes;
			p->set_bytes -= r->bytes;
			free(r->set);
			continue;
		}
		p->sets[k] = *r;
		hashtab__insert(index, set_hash(p->sets[k].pr, p->sets[k].set->source, p->sets[k].set->id),
				k); /* reserved */
		k++;
	}
	hashtab__free(p->set_index);
	p->set_index = index;
	p->nsets = k;
	p->st.label_bytes = p->set_bytes;
	p->st.label_sets_forgotten += freeing;
	return freeing;
}
