/* top.h — the --top table: flat and cumulative weight per function name,
 * built alongside a profile and printed with pprof's units (7.93s, 12ms,
 * 1.20M).
 */
#ifndef PMUBPF_REPORT_TOP_H
#define PMUBPF_REPORT_TOP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "pprof/pprof.h"

struct top;

struct top *top__new(void);
void top__free(struct top *t);
/* One sample: locs[0] is the leaf; names are borrowed from p, which must
 * outlive the table. 0 or -ENOMEM. */
int top__add(struct top *t, struct pprof *p, const uint64_t *locs, size_t n, int64_t w);
/* The `rows` heaviest functions by flat weight; values are of `type`
 * ("cpu", "cycles") in `unit` ("nanoseconds", "count"). */
void top__print(struct top *t, FILE *f, const char *event, const char *type, const char *unit,
		int rows);

/* value in unit as pprof writes it: time units scaled to the largest of
 * ns, us, ms, s, hrs that keeps it >= 1 ("7.93s", "350us"); counts
 * scaled by k, M, G, T ("1.20M"); two decimals, ".00" dropped. */
void top__scaled(int64_t value, const char *unit, char *buf, size_t len);

#endif
