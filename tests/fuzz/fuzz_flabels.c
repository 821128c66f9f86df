/* fuzz_flabels.c — libFuzzer target: other writers' labels (issue 12).
 * First byte: 0 picks a .go.buildinfo section (user/procs/goversion.c:
 * the bytes as the section, then the version string it yields parsed as
 * a Go version and looked up in the offsets table); anything else picks a
 * foreign label set as BPF copied it (struct pmubpf_flabel_notice, the
 * input laid over a zeroed notice: user/procs/flabels.c), decoded and
 * then joined with a set of ours. Checks what callers rely on: strings
 * terminated, keys non-empty and unique, at most LABELS_MAX pairs, a
 * refusal with its reason. */
#include "fuzz.h"
#include "procs/flabels.h"
#include "procs/goversion.h"

static void check_set(const struct label_set *s)
{
	if (s->n > LABELS_MAX)
		abort();
	for (uint32_t i = 0; i < s->n; i++) {
		const struct label_pair *p = &s->pairs[i];

		if (strnlen(p->key, LABELS_KEY_MAX) == LABELS_KEY_MAX || !p->key[0] ||
		    strnlen(p->value, LABELS_VALUE_MAX) == LABELS_VALUE_MAX)
			abort();
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(p->key, s->pairs[j].key))
				abort(); /* the first of two equal keys wins */
	}
}

static void buildinfo(const uint8_t *b, size_t n)
{
	/* Exactly n bytes: ASan sees any read past the section. */
	uint8_t *copy = malloc(n ? n : 1);
	char v[32];
	const char *why = NULL;
	unsigned major, minor;
	struct pmubpf_go_slot slot;

	if (!copy)
		abort();
	memcpy(copy, b, n);
	int r = goversion__buildinfo(copy, n, v, sizeof(v), &why);
	if (r == 0) {
		if (strnlen(v, sizeof(v)) == sizeof(v))
			abort();
		if (goversion__parse(v, &major, &minor) == 0)
			(void)goversion__offsets(major, minor, &slot);
	} else if (r != -EPROTONOSUPPORT && r != -EPROTO) {
		abort();
	} else if (!why || !*why) {
		abort(); /* a refusal says why */
	}
	free(copy);
}

static void notice(const uint8_t *b, size_t n)
{
	struct pmubpf_flabel_notice *fn = calloc(1, sizeof(*fn));
	struct label_set set, ours = { .id = 1, .n = 2 };
	const char *why = NULL;

	if (!fn)
		abort();
	memcpy(fn, b, n < sizeof(*fn) ? n : sizeof(*fn));
	snprintf(ours.pairs[0].key, LABELS_KEY_MAX, "tenant");
	snprintf(ours.pairs[0].value, LABELS_VALUE_MAX, "ours");
	snprintf(ours.pairs[1].key, LABELS_KEY_MAX, "a");
	if (flabels__decode(fn, &set, &why) == 0) {
		check_set(&set);
		flabels__union(&ours, &set);
		check_set(&ours);
		if (strcmp(ours.pairs[0].value, "ours"))
			abort(); /* ours win a clash */
	} else if (!why || !*why) {
		abort();
	}
	free(fn);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] == 0)
		buildinfo(data + 1, size - 1);
	else
		notice(data + 1, size - 1);
	return 0;
}
