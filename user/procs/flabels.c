/* flabels.c — see flabels.h. */
#include <errno.h>
#include <string.h>
#include "flabels.h"

static bool has_key(const struct label_set *s, const char *key)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (!strcmp(s->pairs[i].key, key))
			return true;
	return false;
}

/* Copy the first len bytes of a copied string (of the writer's length
 * wlen) into out (size outsz); false if they hold a NUL. */
static bool take(char *out, size_t outsz, const char *copied, size_t copysz, uint32_t wlen,
		 bool *cut)
{
	size_t len = wlen;

	if (len > copysz - 1)
		len = copysz - 1;
	if (len > outsz - 1)
		len = outsz - 1;
	if (memchr(copied, 0, len))
		return false;
	memcpy(out, copied, len);
	out[len] = 0;
	if (len < wlen)
		*cut = true;
	return true;
}

int flabels__decode(const struct pmubpf_flabel_notice *n, struct label_set *out, const char **why)
{
	const char *dummy;

	why = why ? why : &dummy;
	memset(out, 0, offsetof(struct label_set, pairs));
	out->id = n->hdr.label;
	if (n->status == PMUBPF_FLABEL_TOO_MANY) {
		*why = "more labels than pmubpf reads (16), or a Go map still growing";
		return -EPROTO;
	}
	if (n->status != PMUBPF_FLABEL_OK) {
		*why = "labels unreadable";
		return -EPROTO;
	}
	if (n->nslots > PMUBPF_FLABEL_MAX) {
		*why = "bad slot count";
		return -EPROTO;
	}
	uint32_t present = 0;
	for (uint32_t i = 0; i < n->nslots; i++) {
		const struct pmubpf_flabel *p = &n->pairs[i];
		struct label_pair pair;
		bool cut = false;

		if (!(p->flags & PMUBPF_FLABEL_PRESENT))
			continue;
		present++;
		if (p->flags & PMUBPF_FLABEL_FAULT) {
			*why = "a label string unreadable";
			return -EPROTO;
		}
		if (!take(pair.key, sizeof(pair.key), p->key, sizeof(p->key), p->klen, &cut) ||
		    !take(pair.value, sizeof(pair.value), p->val, sizeof(p->val), p->vlen, &cut)) {
			*why = "NUL inside a label";
			return -EPROTO;
		}
		out->truncated |= cut;
		if (!pair.key[0] || has_key(out, pair.key))
			continue;
		if (out->n == LABELS_MAX) {
			out->truncated = true;
			continue;
		}
		out->pairs[out->n++] = pair;
	}
	if (present != n->total)
		out->truncated = true; /* the writer's count and its slots disagree */
	return 0;
}

void flabels__union(struct label_set *dst, const struct label_set *src)
{
	dst->truncated |= src->truncated;
	for (uint32_t i = 0; i < src->n; i++) {
		if (has_key(dst, src->pairs[i].key))
			continue;
		if (dst->n == LABELS_MAX) {
			dst->truncated = true;
			return;
		}
		dst->pairs[dst->n++] = src->pairs[i];
	}
}
