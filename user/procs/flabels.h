/* flabels.h — label sets of other writers (Go's pprof labels, ...) as BPF
 * copied them into a notice (struct pmubpf_flabel_notice), decoded into
 * the same struct label_set as our own header's (labels.h).
 *
 * The copy is hostile bytes: every slot's flags and lengths are checked,
 * strings are taken only up to what was copied and must hold no NUL.
 * Rules: pairs in slot order; an empty key is skipped; of two pairs with
 * the same key the first is kept; a key or value cut short, or pairs
 * beyond LABELS_MAX, mark the set truncated.
 */
#ifndef PMUBPF_FLABELS_H
#define PMUBPF_FLABELS_H

#include <stddef.h>
#include "labels.h"
#include "pmubpf_abi.h"

/* Returns 0, or -EPROTO (*why set: the writer's structure was refused or
 * unreadable, or the copy is malformed). why may be NULL. */
int flabels__decode(const struct pmubpf_flabel_notice *n, struct label_set *out, const char **why);

/* Add to dst the pairs of src whose keys dst does not have yet (dst's
 * win: the union rule), up to LABELS_MAX (then dst is truncated). */
void flabels__union(struct label_set *dst, const struct label_set *src);

#endif
