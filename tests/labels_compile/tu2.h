/* tu2.h — the second translation unit (or shared library) of the
 * labels.h compile/link checks: it reports what it sees of the process-wide
 * label state, so main can check there is only one of each. */
#ifndef LABELS_COMPILE_TU2_H
#define LABELS_COMPILE_TU2_H

#include <pmubpf/labels.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TU2_API __attribute__((visibility("default")))

TU2_API const void *tu2_tls_addr(void);    /* &pmubpf__tls_current there */
TU2_API const void *tu2_record_addr(void); /* &pmubpf_labels_record there */
TU2_API const void *tu2_counter_addr(void); /* &pmubpf__labels_next_id */
TU2_API const pmubpf_labels *tu2_new(void); /* {tu=2} made there */
TU2_API const pmubpf_labels *tu2_set(const pmubpf_labels *l); /* set there */
TU2_API const pmubpf_labels *tu2_current(void); /* current there */

#ifdef __cplusplus
}
#endif

#endif
