/* check.h — the checks every labels.h link variant runs in main: one TLS
 * word, one record, one id counter across TUs/objects; a set made current
 * in one is current in the other; the record is ready and consistent.
 * Valid C99 and C++11. Returns 0, or prints why and returns 1. */
#ifndef LABELS_COMPILE_CHECK_H
#define LABELS_COMPILE_CHECK_H

#include <stdio.h>
#include "tu2.h"

#define LC_FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

struct lc_tu2 { /* tu2's functions, linked or from dlsym */
	const void *(*tls_addr)(void);
	const void *(*record_addr)(void);
	const void *(*counter_addr)(void);
	const pmubpf_labels *(*make)(void);
	const pmubpf_labels *(*set)(const pmubpf_labels *);
	const pmubpf_labels *(*current)(void);
};

static int lc_check(const struct lc_tu2 *t)
{
	const pmubpf_labels *mine, *theirs, *prev;
	if (t->tls_addr() != (const void *)&pmubpf__tls_current)
		LC_FAIL("two TLS words: %p here, %p in tu2", (const void *)&pmubpf__tls_current, t->tls_addr());
	if (t->record_addr() != (const void *)&pmubpf_labels_record)
		LC_FAIL("two records: %p here, %p in tu2", (const void *)&pmubpf_labels_record, t->record_addr());
	if (t->counter_addr() != (const void *)&pmubpf__labels_next_id)
		LC_FAIL("two id counters");
	if (pmubpf_labels_record.ready != 1)
		LC_FAIL("record not ready");
	if ((const char *)pmubpf__thread_pointer() + pmubpf_labels_record.tls_offset !=
	    (const char *)&pmubpf__tls_current)
		LC_FAIL("tls_offset does not lead to the TLS word");
	mine = pmubpf_labels_new(NULL, "tu", "main", NULL);
	theirs = t->make();
	if (!mine || !theirs || mine->id == theirs->id)
		LC_FAIL("ids not unique across objects");
	prev = t->set(mine);
	if (prev != NULL || pmubpf_labels_current() != mine)
		LC_FAIL("set in tu2 not seen here");
	prev = pmubpf_labels_set(theirs);
	if (prev != mine || t->current() != theirs)
		LC_FAIL("set here not seen in tu2");
	pmubpf_labels_set(NULL);
	pmubpf_labels_free(mine);
	pmubpf_labels_free(theirs);
	return 0;
}

#endif
