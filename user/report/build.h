/* build.h — one event's profile from a recording's plain data.
 *
 * Every counts entry of the event becomes a pprof sample: kernel frames,
 * then user frames, leaf first (symbolize.h), labels pid, tid, comm and
 * the thread's label set, value[1] its summed periods scaled by
 * enabled/running where the kernel multiplexed the counter. Lost
 * samples become [lost: ...] samples with their weight; the comments say
 * how the profile was taken and every loss (losses.h). No BPF, no file
 * descriptors: the unit tests feed it made-up entries.
 */
#ifndef PMUBPF_REPORT_BUILD_H
#define PMUBPF_REPORT_BUILD_H

#include <stddef.h>
#include <stdint.h>
#include "pprof/pprof.h"
#include "entries.h"
#include "losses.h"
#include "report.h"
#include "top.h"

struct report_built {
	struct pprof *p;
	uint64_t nsamples;          /* samples kept (not the lost ones) */
	size_t distinct;            /* counts entries */
	struct report_notes notes;  /* losses, also among p's comments */
};

/* Build event ev's profile from d into out (out->p freed by the caller
 * with pprof__free). top: NULL, or --top's table to fill. Returns 0, or
 * -errno with a one-line reason in err. */
int report__build(const struct report_in *in, const struct report_data *d, int ev,
		  struct top *top, struct report_built *out, char *err, size_t errlen);
/* in->kname's table of the kernel symbols d's profiles look up (each
 * kernel stack's leaf, each caller's return address - 1), for
 * report_in.ksyms: NULL if it could not be made (frames unnamed,
 * counted). report__build asks for it itself when given in->kname; a
 * caller building several profiles of d asks once and passes it. */
struct ksyms *report__kernel_names(const struct report_in *in, const struct report_data *d);

#endif
