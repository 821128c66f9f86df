/* fuzz_flabels.c — libFuzzer target: other writers' labels (issue 12).
 * First byte: 0 picks a .go.buildinfo section (user/procs/goversion.c:
 * the bytes as the section, then the version string it yields parsed as
 * a Go version and looked up in the offsets table); 2 an OpenTelemetry
 * Thread-Local Context Record as BPF copied it (the bytes as the notice's
 * raw record: user/procs/otelctx.c turns it into pairs, with a key map
 * of three names, then decoded as below); 3 an OpenTelemetry process
 * context payload (protobuf ProcessContext: otelctx.c's walker);
 * anything else picks a foreign label set as BPF copied it (struct
 * pmubpf_flabel_notice, the input laid over a zeroed notice:
 * user/procs/flabels.c), decoded and then joined with a set of ours.
 * Checks what callers rely on: strings terminated, keys non-empty and
 * unique, at most LABELS_MAX pairs, a refusal with its reason. */
#include "fuzz.h"
#include "procs/flabels.h"
#include "procs/goversion.h"
#include "procs/otelctx.h"

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

static void decode(struct pmubpf_flabel_notice *fn)
{
	struct label_set set, ours = { .id = 1, .n = 2 };
	const char *why = NULL;

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
}

static void notice(const uint8_t *b, size_t n)
{
	struct pmubpf_flabel_notice *fn = calloc(1, sizeof(*fn));

	if (!fn)
		abort();
	memcpy(fn, b, n < sizeof(*fn) ? n : sizeof(*fn));
	decode(fn);
	free(fn);
}

static void otel_record(const uint8_t *b, size_t n)
{
	static const char *const names[] = { "http.route", "phase", "user.id" };
	struct pmubpf_flabel_notice *fn = calloc(1, sizeof(*fn)), *out = calloc(1, sizeof(*out));
	struct otelctx c = { .nkeys = 3 };
	const char *why = NULL;
	uint32_t unknown = 0;

	if (!fn || !out)
		abort();
	fn->source = PMUBPF_LSRC_OTEL;
	fn->total = (uint32_t)n;
	memcpy(fn->raw, b, n < sizeof(fn->raw) ? n : sizeof(fn->raw));
	for (int i = 0; i < 3; i++) {
		c.keys[i] = (char *)names[i];
		c.key_len[i] = (uint32_t)strlen(names[i]);
	}
	if (otelctx__pairs(fn, &c, out, &unknown, &why) == 0) {
		if (out->nslots > PMUBPF_FLABEL_MAX || out->source != PMUBPF_LSRC_OTEL)
			abort();
		decode(out);
	} else if (!why || !*why) {
		abort();
	}
	free(fn);
	free(out);
}

static void otel_payload(const uint8_t *b, size_t n)
{
	/* Exactly n bytes: ASan sees any read past the payload. */
	uint8_t *copy = malloc(n ? n : 1);
	struct otelctx c = { 0 };
	const char *why = NULL;

	if (!copy)
		abort();
	memcpy(copy, b, n);
	int r = otelctx__decode(copy, n, &c, &why);
	if (r == 0) {
		if (c.nkeys > OTELCTX_KEYS_MAX || strnlen(c.schema, sizeof(c.schema)) == sizeof(c.schema))
			abort();
		for (uint32_t i = 0; i < c.nkeys; i++)
			if (c.keys[i] && (!c.keys[i][0] || c.key_len[i] < strlen(c.keys[i])))
				abort(); /* a name is non-empty, its length the writer's */
	} else if (r != -EPROTO || !why || !*why) {
		abort();
	}
	otelctx__clear(&c);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] == 0)
		buildinfo(data + 1, size - 1);
	else if (data[0] == 2)
		otel_record(data + 1, size - 1);
	else if (data[0] == 3)
		otel_payload(data + 1, size - 1);
	else
		notice(data + 1, size - 1);
	return 0;
}
