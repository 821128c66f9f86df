/* pprof_int.h — what the profile builder (pprof.c) and the encoder and
 * writer (pprof_write.c) share: the in-memory profile. Not a public
 * interface: see pprof.h.
 *
 * Elements are, where possible, the protobuf-c message structs themselves
 * (Mapping, Function, Line, Label hold no pointers), so encoding only has
 * to build the pointer arrays that protobuf-c's repeated-message fields
 * need. Variable-length parts of locations and samples (lines, location
 * ids, labels) live in shared pools addressed by offset, so appends never
 * invalidate anything. Ids are array index + 1.
 */
#ifndef PMUBPF_PPROF_INT_H
#define PMUBPF_PPROF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pprof.h"
#include "profile.pb-c.h"

struct hashtab;

typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;

struct pprof_loc {
	uint64_t mapping_id, address;
	size_t line_off, nlines; /* range in pprof.lines */
};

struct pprof_sample {
	size_t loc_off, nlocs;     /* range in pprof.locids */
	size_t label_off, nlabels; /* range in pprof.labels */
	int64_t value[2];          /* count, weight */
};

struct pprof {
	pb_value_type sample_type[2], period_type;
	int64_t period, time_nanos, duration_nanos;

	char **strs;               /* the string table; strs[0] = "" */
	size_t nstrs, cap_strs;
	struct hashtab *str_ht;    /* content -> index */

	pb_mapping *maps;          /* maps[id - 1] */
	size_t nmaps, cap_maps;
	struct hashtab *map_ht;
	uint64_t main_map;         /* id written first (file id 1), 0: none */

	pb_function *funcs;        /* funcs[id - 1] */
	size_t nfuncs, cap_funcs;
	struct hashtab *func_ht;

	struct pprof_loc *locs;    /* locs[id - 1] */
	size_t nlocs, cap_locs;
	struct hashtab *loc_ht;
	pb_line *lines;
	size_t nlines, cap_lines;

	struct pprof_sample *samples;
	size_t nsamples, cap_samples;
	uint64_t *locids;
	size_t nlocids, cap_locids;
	pb_label *labels;
	size_t nlabels, cap_labels;

	int64_t *comments;
	size_t ncomments, cap_comments;
};

/* Write len bytes of buf to path (gzipped if gzip) via path.tmp.XXXXXX +
 * fsync + rename: every output format's writer ends here, so each gets
 * the same no-partial-file guarantee. 0 or -errno; on failure no file is
 * left at path or tmp. */
int pprof__write_atomic(const char *path, const uint8_t *buf, size_t len, bool gzip);

#endif
