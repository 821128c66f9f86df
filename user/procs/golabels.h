/* golabels.h — a Go label set read in userspace, laid out as BPF copies
 * it (struct pmubpf_flabel_notice; bpf/labels_go.bpf.h reads the same
 * structures at sample time).
 *
 * Used when BPF's copy failed (a page of the set not resident at the
 * sample): the set is read again from the process, and its id computed
 * again, so a set freed and its memory reused since is not taken for it
 * (-ESTALE). The memory is read through a callback, so the unit tests can
 * lay out memory images as each Go version does.
 *
 * Layouts (enum pmubpf_go_layout): go1.18-1.23 g.labels -> a word holding
 * *hmap of map[string]string (count at 0, B at 9, hash0 at 12, buckets
 * at 16; a bucket is tophash[8], keys[8], values[8] as {ptr, len}); only
 * one bucket (B = 0, up to 8 labels) is read. go1.24: g.labels -> {list
 * ptr, len, cap} of {key, value} strings.
 */
#ifndef PMUBPF_GOLABELS_H
#define PMUBPF_GOLABELS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "pmubpf_abi.h"

/* Read len bytes at addr into buf: 0 or a negative errno. */
typedef int (*golabels_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The set's id as BPF computes it (0: no labels). */
int golabels__id(golabels_read_fn rd, void *ctx, uint32_t layout, uint64_t labels, uint64_t *id);

/* Copy set `labels` (a g.labels value) into n->nslots/total/status/pairs
 * as BPF would, and also a go1.18-1.23 map past one bucket (9 to 16
 * labels: BPF reads one bucket and leaves the rest to this), checking
 * that its id is still `id`. Returns 0 (n->status
 * says whether the pairs could be read), -ESTALE (another set now), or
 * the reader's error. */
int golabels__copy(golabels_read_fn rd, void *ctx, uint32_t layout, uint64_t labels, uint64_t id,
		   struct pmubpf_flabel_notice *n);

/* A golabels_read_fn over process *(pid_t *)ctx (process_vm_readv). */
int golabels__read_pid(void *ctx, uint64_t addr, void *buf, size_t len);

#endif
