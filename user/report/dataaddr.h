/* dataaddr.h — --data-addr: a data address to the pprof frame that names
 * what it touched.
 *
 * The data profile's samples are the code profile's with one more frame
 * at the leaf: the data. So `go tool pprof -top NAME.data.pb.gz` ranks
 * the objects (flat = the data frame), and -peek/-traces show the code
 * that touched each. The data frame is, best first:
 *   a global or static variable: its ELF symbol (STT_OBJECT) in the
 *     executable or a library the process maps, e.g. "counter_a", the
 *     function's file the object's path;
 *   a mapped file: its path, e.g. "/srv/db/index.bin";
 *   [heap], [stack], [anon] (an anonymous mapping: large mallocs, thread
 *     stacks, .bss pages past the file), [vdso] ...: the mapping's name;
 *   [unknown] (in no mapping pmubpf saw), [no address] (the sample
 *     carried none).
 * The byte offset into the object (the file offset for a file, the
 * offset from the mapping's start otherwise) is the frame's line number
 * (`-lines`), and the exact address is the location's (`-addresses`).
 */
#ifndef PMUBPF_DATAADDR_H
#define PMUBPF_DATAADDR_H

#include <stdint.h>
#include "pprof/pprof.h"
#include "procs/procs.h"

/* What the data frames of a profile were, by samples. */
struct data_stats {
	uint64_t global, file, heap, stack, anon, other, unknown, none;
};

/* The data frame's location for addr touched by a sample of pr (NULL:
 * no process record) with n samples: 0 on ENOMEM. */
uint64_t dataaddr__location(struct pprof *p, struct proc *pr, uint64_t addr, uint64_t n,
			    struct data_stats *st);

/* One comment line for the profile saying how the samples split. */
void dataaddr__summary(const struct data_stats *st, char *buf, size_t len);

#endif
