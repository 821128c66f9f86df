/* pprof_int.h — what the profile builder (pprof.c) and the encoder and
 * writer (pprof_write.c) share: the in-memory profile. Not a public
 * interface: see pprof.h.
 *
 * The records hold only numbers (string table indices, ids), in compact
 * structs of our own: pprof_encode.c writes profile.proto straight from
 * them, so no protobuf-c message tree is ever built. Variable-length
 * parts of locations and samples (lines, location ids, labels) live in
 * shared pools addressed by offset, so appends never invalidate
 * anything. Samples with the same labels share one label set in the pool
 * (a recording has few distinct label sets and many samples). Ids are
 * array index + 1.
 */
#ifndef PMUBPF_PPROF_INT_H
#define PMUBPF_PPROF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pprof.h"

struct hashtab;

/* The fields of profile.proto's messages of the same names. */
struct pprof_value_type {
	int64_t type, unit;
};

struct pprof_mapping {
	uint64_t memory_start, memory_limit, file_offset;
	int64_t filename, build_id;
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct pprof_function {
	int64_t name, system_name, filename, start_line;
};

struct pprof_lineref {
	uint64_t function_id;
	int64_t line;
};

struct pprof_labelrec {
	int64_t key, str, num, num_unit;
};

struct pprof_loc {
	uint64_t mapping_id, address;
	size_t line_off, nlines; /* range in pprof.lines */
};

/* Location ids are stored in 32 bits: 4G locations would need far more
 * memory than any profile has, and half the bytes per frame is most of
 * what a deep profile holds. */
typedef uint32_t pprof_locid;

/* A slot of the location index (pprof.c). */
struct pprof_locslot {
	uint64_t address;
	uint32_t mapping_id;
	pprof_locid id;            /* 0: free */
};

struct pprof_sample {
	size_t loc_off;            /* range in pprof.locids */
	uint32_t nlocs;
	uint32_t lset;             /* its labels: pprof.lsets[lset] */
	int64_t value[2];          /* count, weight */
};

/* A distinct label set: its range in pprof.labels. lsets[0] is the empty
 * set. */
struct pprof_labelset {
	size_t off;
	uint32_t n;
};

struct pprof {
	struct pprof_value_type sample_type[2], period_type;
	int64_t period, time_nanos, duration_nanos;
	bool weight_only;          /* one sample type, the weight (pushes:
	                            * pprof_subset.c) */

	char **strs;               /* the string table; strs[0] = "" */
	size_t nstrs, cap_strs;
	struct hashtab *str_ht;    /* content -> index */

	struct pprof_mapping *maps; /* maps[id - 1] */
	size_t nmaps, cap_maps;
	struct hashtab *map_ht;
	uint64_t last_map;         /* the id pprof__add_mapping last gave, 0: none */
	uint64_t main_map;         /* id written first (file id 1), 0: none */

	struct pprof_function *funcs; /* funcs[id - 1] */
	size_t nfuncs, cap_funcs;
	struct hashtab *func_ht;

	struct pprof_loc *locs;    /* locs[id - 1] */
	size_t nlocs, cap_locs;
	struct pprof_locslot *loc_slots; /* index: (mapping, address) -> id */
	size_t loc_cap;
	struct pprof_lineref *lines;
	size_t nlines, cap_lines;

	struct pprof_sample *samples;
	size_t nsamples, cap_samples;
	pprof_locid *locids;
	size_t nlocids, cap_locids;
	struct pprof_labelrec *labels;
	size_t nlabels, cap_labels;
	struct pprof_labelset *lsets;
	size_t nlsets, cap_lsets;
	struct hashtab *lset_ht;

	int64_t *comments;
	size_t ncomments, cap_comments;
};

/* Where pprof__encode hands the encoded profile, piece by piece (the
 * gzip streams of pprof_write.c): 0 or -errno, which stops the encoding. */
typedef int (*pprof_put_fn)(void *ctx, const void *buf, size_t len);

/* Letters, digits and '_' only, in place: what every server takes as a
 * name (pprof_subset.c; pprof_otlp.c too). */
void pprof__sanitize(char *s);

/* Encode p as profile.proto through put (pprof_encode.c). 0 or -errno. */
int pprof__encode(const struct pprof *p, pprof_put_fn put, void *ctx);

/* Write len bytes of buf to path (gzipped if gzip) via path.tmp.XXXXXX +
 * fsync + rename: every output format's writer ends here, so each gets
 * the same no-partial-file guarantee. 0 or -errno; on failure no file is
 * left at path or tmp. */
int pprof__write_atomic(const char *path, const uint8_t *buf, size_t len, bool gzip);

#endif
