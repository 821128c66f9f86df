/* customlabels.h — a minimal writer of the custom-labels ABI v1 (Polar
 * Signals; the ABI's text: docs/labels-abi.md, "custom-labels"), written
 * for pmubpf's tests: the exported abi version and thread-local current
 * set, and a label set changed in place, as the ABI allows. */
#ifndef TESTS_CUSTOMLABELS_H
#define TESTS_CUSTOMLABELS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	size_t len;
	const unsigned char *buf; /* NULL: absent */
} custom_labels_string_t;

typedef struct {
	custom_labels_string_t key;
	custom_labels_string_t value;
} custom_labels_label_t;

typedef struct {
	custom_labels_label_t *storage;
	size_t count;
	size_t capacity;
} custom_labels_labelset_t;

extern uint32_t custom_labels_abi_version;
extern __thread custom_labels_labelset_t *custom_labels_current_set;

custom_labels_labelset_t *cl_new(size_t capacity);
/* Set key to value in s: the first label with that key gets a new value
 * (the old one freed), else a label is appended. */
void cl_set(custom_labels_labelset_t *s, const char *key, const char *value);
/* Append a label as it is (key NULL: an absent key), duplicates too. */
void cl_append(custom_labels_labelset_t *s, const char *key, const char *value);
/* Make s the calling thread's current set; returns the previous one. */
custom_labels_labelset_t *cl_use(custom_labels_labelset_t *s);

#endif
