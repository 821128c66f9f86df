/* customlabels.c — see customlabels.h. Built as libcustomlabels.so with
 * -ftls-model=global-dynamic -mtls-dialect=gnu2, so that the current set
 * is reached through a TLS descriptor (R_X86_64_TLSDESC), as the ABI
 * requires of a library. */
#include <stdlib.h>
#include <string.h>
#include "customlabels.h"

uint32_t custom_labels_abi_version = 1;
__thread custom_labels_labelset_t *custom_labels_current_set;

#define BARRIER() __asm__ __volatile__("" ::: "memory")

/* For the tests: a writer that claims another version of the ABI. */
__attribute__((constructor)) static void version_from_env(void)
{
	const char *v = getenv("CUSTOMLABELS_TEST_ABI_VERSION");

	if (v)
		custom_labels_abi_version = (uint32_t)atoi(v);
}

custom_labels_labelset_t *cl_new(size_t capacity)
{
	custom_labels_labelset_t *s = calloc(1, sizeof(*s));

	if (!s || !(s->storage = calloc(capacity, sizeof(*s->storage))))
		abort();
	s->capacity = capacity;
	return s;
}

static custom_labels_string_t str(const char *v)
{
	custom_labels_string_t r = { 0, NULL };

	if (v) {
		r.len = strlen(v);
		r.buf = (const unsigned char *)strdup(v);
		if (!r.buf)
			abort();
	}
	return r;
}

void cl_append(custom_labels_labelset_t *s, const char *key, const char *value)
{
	if (s->count == s->capacity)
		abort();
	s->storage[s->count].key = str(key);
	s->storage[s->count].value = str(value);
	BARRIER(); /* a sample of this thread sees the label whole or not */
	s->count++;
}

void cl_set(custom_labels_labelset_t *s, const char *key, const char *value)
{
	size_t n = strlen(key);

	for (size_t i = 0; i < s->count; i++) {
		custom_labels_label_t *l = &s->storage[i];

		if (!l->key.buf || l->key.len != n || memcmp(l->key.buf, key, n))
			continue;
		/* Hide the label while its value changes (absent key: not a
		 * label), then show it again. */
		const unsigned char *k = l->key.buf;
		void *old = (void *)l->value.buf;
		l->key.buf = NULL;
		BARRIER();
		free(old); /* its memory is what the next malloc gets */
		l->value = str(value);
		BARRIER();
		l->key.buf = k;
		return;
	}
	cl_append(s, key, value);
}

custom_labels_labelset_t *cl_use(custom_labels_labelset_t *s)
{
	custom_labels_labelset_t *prev = custom_labels_current_set;

	custom_labels_current_set = s;
	return prev;
}
