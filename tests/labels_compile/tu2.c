/* tu2.c — second translation unit of the labels.h checks; valid C99 and
 * C++11, built as an object or as a shared library (libtu2.so). Includes
 * the header twice on purpose (include guard, no duplicate definitions). */
#include <pmubpf/labels.h>
#include "tu2.h"
#include <pmubpf/labels.h>

const void *tu2_tls_addr(void) { return (const void *)&pmubpf__tls_current; }
const void *tu2_record_addr(void) { return &pmubpf_labels_record; }
const void *tu2_counter_addr(void) { return &pmubpf__labels_next_id; }
const pmubpf_labels *tu2_new(void) { return pmubpf_labels_new(NULL, "tu", "2", NULL); }
const pmubpf_labels *tu2_set(const pmubpf_labels *l) { return pmubpf_labels_set(l); }
const pmubpf_labels *tu2_current(void) { return pmubpf_labels_current(); }
