/* pmu_sysfs.c — resolve perf's "PMU/term=value,.../" syntax via sysfs.
 *
 * SYSFS/PMU/type gives attr.type. Each term's bits come from
 * SYSFS/PMU/format/TERM ("config:0-7", "config1:0-15", "config:0-7,32-35",
 * "config:23"): the value's bits are spread, lowest first, over the set
 * bits of that layout. A term without "=value" means 1, unless it names
 * an alias in SYSFS/PMU/events/, whose content is itself a term list
 * ("event=0x2e,umask=0x41") expanded in place. config=, config1= and
 * config2= set the whole word; period= is refused (the caller owns the
 * sampling fields).
 */
#include "pmu_sysfs.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/errmsg.h"

#define TERMS_MAX 512	/* longest term list, after alias expansion */

struct pmu_ctx {
	const char *root, *pmu, *spec;
	struct perf_event_attr *attr;
	char *err;
	size_t errlen;
};

/* errmsg, with the prefix every message here has: "event 'SPEC': ". */
static int fail(struct pmu_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct pmu_ctx *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return errmsg(c->err, c->errlen, "event '%s': %s", c->spec, msg);
}

/* Read a small sysfs file, trailing whitespace removed. */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	return 0;
}

/* PMU, term and alias names become path components: no '/', no leading
 * '.', nothing odd. */
static bool name_ok(const char *s)
{
	if (!*s || *s == '.')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
			return false;
	return true;
}

/* "0x1f" (hex) or "31" (decimal). */
static int parse_value(const char *s, __u64 *v)
{
	int base = 10;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!isxdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, base);
	return (*end || errno) ? -EINVAL : 0;
}

/* "config1:0-15,32-35" -> which word (0, 1, 2) and the bit mask. */
static int parse_format(const char *s, int *word, __u64 *mask)
{
	const char *p = strchr(s, ':');
	char *end;

	if (!p)
		return -EINVAL;
	if (p - s == 6 && !strncmp(s, "config", 6))
		*word = 0;
	else if (p - s == 7 && !strncmp(s, "config1", 7))
		*word = 1;
	else if (p - s == 7 && !strncmp(s, "config2", 7))
		*word = 2;
	else
		return -EINVAL;
	*mask = 0;
	for (p++;;) {
		unsigned long lo, hi;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		lo = hi = strtoul(p, &end, 10);
		p = end;
		if (*p == '-') {
			if (!isdigit((unsigned char)*++p))
				return -EINVAL;
			hi = strtoul(p, &end, 10);
			p = end;
		}
		if (lo > hi || hi > 63)
			return -EINVAL;
		for (unsigned long b = lo; b <= hi; b++)
			*mask |= 1ULL << b;
		if (*p == '\0')
			return 0;
		if (*p++ != ',')
			return -EINVAL;
	}
}

static __u64 *attr_word(struct perf_event_attr *attr, int word)
{
	return word == 0 ? &attr->config :
	       word == 1 ? &attr->config1 : &attr->config2;
}

/* Spread val over mask's set bits, lowest first; -ERANGE if too wide. */
static int put_bits(__u64 *dst, __u64 mask, __u64 val)
{
	int nbits = __builtin_popcountll(mask);

	if (nbits < 64 && (val >> nbits))
		return -ERANGE;
	for (int b = 0; b < 64; b++) {
		if (!(mask & (1ULL << b)))
			continue;
		if (val & 1)
			*dst |= 1ULL << b;
		else
			*dst &= ~(1ULL << b);
		val >>= 1;
	}
	return 0;
}

static int apply_terms(struct pmu_ctx *c, const char *terms,
		       const char *alias);

static int apply_term(struct pmu_ctx *c, char *term, const char *alias)
{
	char *eq = strchr(term, '='), path[PATH_MAX], buf[TERMS_MAX];
	char where[160] = "";
	__u64 val = 1, mask;
	int word, r;

	if (alias)
		snprintf(where, sizeof(where), " (in alias '%s')", alias);
	if (eq)
		*eq++ = '\0';
	if (!name_ok(term))
		return fail(c, "bad term '%s'%s", term, where);
	if (eq && parse_value(eq, &val))
		return fail(c, "bad value '%s' for term '%s'%s: want hex (0x..) or decimal",
			    eq, term, where);
	if (!strcmp(term, "period"))
		return fail(c, "period= is not accepted in the event: use -c to set the sample period");
	if (!strcmp(term, "config") || !strcmp(term, "config1") ||
	    !strcmp(term, "config2")) {
		*attr_word(c->attr, term[6] ? term[6] - '0' : 0) = val;
		return 0;
	}

	if (snprintf(path, sizeof(path), "%s/%s/format/%s", c->root, c->pmu,
		     term) >= (int)sizeof(path))
		return fail(c, "path too long");
	r = read_small(path, buf, sizeof(buf));
	if (r == 0) {
		if (parse_format(buf, &word, &mask))
			return fail(c, "can't parse %s ('%s')", path, buf);
		if (put_bits(attr_word(c->attr, word), mask, val))
			return fail(c, "value 0x%llx too big for term '%s' (%d bits)",
				    (unsigned long long)val, term,
				    __builtin_popcountll(mask));
		return 0;
	}
	if (r != -ENOENT)
		return fail(c, "%s: %s", path, strerror(-r));

	/* Not a format term: a bare alias from events/? */
	if (!eq && !alias) {
		if (snprintf(path, sizeof(path), "%s/%s/events/%s", c->root,
			     c->pmu, term) >= (int)sizeof(path))
			return fail(c, "path too long");
		r = read_small(path, buf, sizeof(buf));
		if (r == 0)
			return apply_terms(c, buf, term);
		if (r != -ENOENT)
			return fail(c, "%s: %s", path, strerror(-r));
	}
	if (eq || alias)
		return fail(c, "unknown term '%s'%s for PMU '%s' (not in %s/%s/format/)",
			    term, where, c->pmu, c->root, c->pmu);
	return fail(c, "unknown term or event '%s' for PMU '%s' (not in %s/%s/format/ or events/)",
		    term, c->pmu, c->root, c->pmu);
}

/* Comma-separated terms; alias names the events/ file they came from. */
static int apply_terms(struct pmu_ctx *c, const char *terms,
		       const char *alias)
{
	char buf[TERMS_MAX], *p, *next;
	int r;

	if (snprintf(buf, sizeof(buf), "%s", terms) >= (int)sizeof(buf))
		return fail(c, "term list too long");
	if (!buf[0])
		return 0;
	for (p = buf; p; p = next) {
		next = strchr(p, ',');
		if (next)
			*next++ = '\0';
		if (!*p)
			return fail(c, "empty term in '%s'", terms);
		r = apply_term(c, p, alias);
		if (r)
			return r;
	}
	return 0;
}

int pmu_sysfs__parse(const char *sysfs_root, const char *spec,
		     const char *body, struct perf_event_attr *attr,
		     char *err, size_t errlen)
{
	char pmu[128], terms[TERMS_MAX], path[PATH_MAX], buf[32], *end;
	const char *slash = strchr(body, '/'), *last = strrchr(body, '/');
	struct pmu_ctx c = { sysfs_root, pmu, spec, attr, err, errlen };
	unsigned long type;
	size_t plen = slash ? (size_t)(slash - body) : 0;
	int r;

	if (!slash || last == slash || last[1])
		return fail(&c, "want PMU/term=value,.../ (missing closing '/')");
	if (plen >= sizeof(pmu) ||
	    (size_t)(last - slash - 1) >= sizeof(terms))
		return fail(&c, "too long");
	memcpy(pmu, body, plen);
	pmu[plen] = '\0';
	memcpy(terms, slash + 1, (size_t)(last - slash - 1));
	terms[last - slash - 1] = '\0';
	if (strchr(terms, '/'))
		return fail(&c, "unexpected '/' inside the term list");
	if (!name_ok(pmu))
		return fail(&c, "bad PMU name '%s'", pmu);

	if (snprintf(path, sizeof(path), "%s/%s/type", sysfs_root, pmu) >=
	    (int)sizeof(path))
		return fail(&c, "path too long");
	r = read_small(path, buf, sizeof(buf));
	if (r == -ENOENT)
		return fail(&c, "unknown PMU '%s' (no %s/%s)", pmu,
			    sysfs_root, pmu);
	if (r)
		return fail(&c, "%s: %s", path, strerror(-r));
	errno = 0;
	type = strtoul(buf, &end, 10);
	if (!isdigit((unsigned char)buf[0]) || *end || errno ||
	    type > UINT32_MAX)
		return fail(&c, "bad PMU type '%s' in %s", buf, path);

	attr->type = (__u32)type;
	attr->config = attr->config1 = attr->config2 = 0;
	return apply_terms(&c, terms, NULL);
}
