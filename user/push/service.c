/* service.c — the service name a sample belongs to: a template of text
 * and {a|b|...} parts, each the first of those labels the sample has
 * (service.h).
 */
#include "service.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/errmsg.h"

int service__check(const char *t, char *err, size_t errlen)
{
	if (!*t)
		return errmsg(err, errlen, "bad service template '': want text and {label|label...} parts, e.g. {container_id|comm}");
	for (const char *p = t; *p; p++) {
		if (*p == '}')
			return errmsg(err, errlen, "bad service template '%s': '}' without '{'", t);
		if (*p != '{')
			continue;
		const char *end = strchr(p, '}');
		if (!end)
			return errmsg(err, errlen, "bad service template '%s': '{' without '}'", t);
		for (const char *q = p + 1; q <= end; q++) {
			bool sep = *q == '|' || *q == '}';
			if (sep && (q[-1] == '{' || q[-1] == '|'))
				return errmsg(err, errlen, "bad service template '%s': an empty label name", t);
			if (*q == '{')
				return errmsg(err, errlen, "bad service template '%s': '{' inside {...}", t);
		}
		p = end;
	}
	return 0;
}

/* The value of label key[0..klen) among labels, NULL if none. Numeric
 * labels give their number (into num). */
static const char *label(const struct pprof_label *l, size_t n, const char *key, size_t klen,
			 char *num, size_t numlen)
{
	for (size_t i = 0; i < n; i++) {
		if (strncmp(l[i].key, key, klen) || l[i].key[klen])
			continue;
		if (l[i].str)
			return *l[i].str ? l[i].str : NULL;
		snprintf(num, numlen, "%lld", (long long)l[i].num);
		return num;
	}
	return NULL;
}

int service__name(const char *t, const struct pprof_label *l, size_t n, char *out, size_t len)
{
	size_t at = 0;
	char num[32];

	if (!len)
		return -ENOSPC;
	out[0] = '\0';
	for (const char *p = t; *p; ) {
		const char *piece = p, *v = NULL;
		size_t plen;

		if (*p == '{') {
			const char *end = strchr(p, '}');
			if (!end)
				return -EINVAL;
			for (const char *k = p + 1; k < end && !v; ) {
				const char *bar = memchr(k, '|', (size_t)(end - k));
				size_t klen = (size_t)((bar ? bar : end) - k);

				v = label(l, n, k, klen, num, sizeof(num));
				k += klen + 1;
			}
			piece = v ? v : "";
			plen = strlen(piece);
			p = end + 1;
		} else {
			const char *brace = strchr(p, '{');
			plen = brace ? (size_t)(brace - p) : strlen(p);
			p += plen;
		}
		if (at + plen >= len)
			return -ENOSPC;
		memcpy(out + at, piece, plen);
		at += plen;
		out[at] = '\0';
	}
	return 0;
}

int service__of(const char *t, const struct pprof_label *l, size_t n, char *out, size_t len)
{
	if (service__name(t, l, n, out, len) || !*out)
		snprintf(out, len, "%s", SERVICE_UNKNOWN);
	return 0;
}

struct list {
	const char *tmpl;
	char **v;
	size_t n, cap;
};

/* pprof__group_sets's question: the index of the set's service in the
 * list, added if new. */
static int index_of(void *ctx, const struct pprof_label *l, size_t n)
{
	struct list *s = ctx;
	char name[SERVICE_MAX];

	service__of(s->tmpl, l, n, name, sizeof(name));
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return (int)i;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		char **v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	if (!(s->v[s->n] = strdup(name)))
		return -ENOMEM;
	return (int)s->n++;
}

int service__groups(const struct pprof *p, const char *tmpl, char ***names, size_t *n,
		    int **set_group)
{
	struct list s = { .tmpl = tmpl };

	if (!(*set_group = pprof__group_sets(p, index_of, &s))) {
		service__free_list(s.v, s.n);
		return -errno;
	}
	*names = s.v;
	*n = s.n;
	return 0;
}

void service__free_list(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
