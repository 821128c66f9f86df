/* pprof.h — builds a profile.proto message and writes it gzipped.
 *
 * Last stage of the pipeline: the session adds mappings, locations (with
 * their functions and lines) and samples; pprof__write encodes them
 * (pprof_encode.c, streaming: the encoded profile is never whole in
 * memory), compresses with zlib (level 1) and writes it through
 * lib/outfile.h, so a crash never leaves a partial profile.
 *
 * Ids are 1-based and unique; string 0 is "". Locations are deduplicated
 * by (mapping_id, address), functions by (name, system_name, filename),
 * strings by content.
 */
#ifndef PMUBPF_PPROF_H
#define PMUBPF_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pprof;

struct pprof_line {
	const char *function;    /* demangled/plain name */
	const char *system_name; /* mangled name, or NULL = same as function */
	const char *filename;    /* source file, or NULL */
	int64_t line;            /* 0 = unknown */
	int64_t start_line;      /* function's first line, 0 = unknown */
};

struct pprof_label {
	const char *key;
	const char *str; /* string label if non-NULL ... */
	int64_t num;     /* ... else numeric label */
	const char *num_unit; /* optional, e.g. "bytes"; NULL = none */
};

/* New empty profile. sample_type = {samples/count, value_type/value_unit};
 * period_type = value_type/value_unit; period = nominal period (e.g. ns
 * per sample for cpu-clock at -F). Returns NULL + errno on failure. */
struct pprof *pprof__new(const char *value_type, const char *value_unit,
			 int64_t period);
void pprof__free(struct pprof *p);

void pprof__set_time(struct pprof *p, int64_t time_nanos, int64_t duration_nanos);
/* Append a comment (each a separate entry of Profile.comment). */
int pprof__add_comment(struct pprof *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Mapping: returns its id (>0), or 0 + errno. Deduplicated by
 * (start, limit, offset, filename). build_id may be NULL (hex string). */
uint64_t pprof__add_mapping(struct pprof *p, uint64_t start, uint64_t limit,
			    uint64_t offset, const char *filename,
			    const char *build_id, bool has_functions);

/* Write mapping `id` first (ids renumbered in the file to keep them
 * 1..n in order): readers take the first mapping for the main binary
 * (`go tool pprof`'s "File:"). 0, or -EINVAL if no such mapping. */
int pprof__set_main_mapping(struct pprof *p, uint64_t id);

/* Location for (mapping_id, address): returns its id (>0) or 0 + errno.
 * If the location already exists it is returned unchanged and lines are
 * ignored. lines[0] is the leaf (innermost inlined function); nlines may be
 * 0 (unsymbolized). mapping_id 0 = no mapping (e.g. synthetic frames). */
uint64_t pprof__add_location(struct pprof *p, uint64_t mapping_id,
			     uint64_t address, const struct pprof_line *lines,
			     size_t nlines);
/* A new location for (mapping_id, address) with the lines of location
 * `like` (the same code mapped by another process: its names, found
 * once). Returns the existing location if there is one; 0 + errno
 * (EINVAL: no such `like`). */
uint64_t pprof__add_location_like(struct pprof *p, uint64_t mapping_id,
				  uint64_t address, uint64_t like);
/* Look up an existing location without adding: id or 0. */
uint64_t pprof__find_location(struct pprof *p, uint64_t mapping_id,
			      uint64_t address);

/* Sample: locs[0] is the leaf. values[0] = samples, values[1] = weight.
 * Labels copied (strings interned). Returns 0 or -errno. */
int pprof__add_sample(struct pprof *p, const uint64_t *locs, size_t nlocs,
		      int64_t count, int64_t weight,
		      const struct pprof_label *labels, size_t nlabels);

/* Lookups for reports built alongside the profile. Strings returned are
 * owned by p and stay valid until pprof__free. */
/* Intern s in the string table (adding it if new): NULL + errno on ENOMEM. */
const char *pprof__intern(struct pprof *p, const char *s);
/* Function name of location loc's leaf (innermost inlined) line; NULL if
 * loc does not exist, has no lines, or its function has no name. */
const char *pprof__location_name(struct pprof *p, uint64_t loc);
/* Address of location loc, or 0 if it does not exist. */
uint64_t pprof__location_address(struct pprof *p, uint64_t loc);
/* File name of location loc's mapping; NULL if none or no name. */
const char *pprof__location_mapping_file(struct pprof *p, uint64_t loc);

/* Encode, gzip, write to path as lib/outfile.h says: a new or regular
 * file is replaced whole (unnamed temp file, fsync, link/rename), a
 * character device or FIFO written in place, anything else refused.
 * Returns 0 or -errno; on failure no file is left and an old one is
 * intact. A FIFO with no reader is waited for, said on stderr; a signal
 * meanwhile puts the profile in PATH PPROF_UNREAD instead, and -EINTR
 * says so (the profile is there). */
#define PPROF_UNREAD ".unread"
int pprof__write(struct pprof *p, const char *path);

/* The same profile as folded stacks (pprof_folded.c), the input of
 * FlameGraph's flamegraph.pl and inferno: one line per distinct stack,
 * "ROOT;outer;...;leaf WEIGHT", frames root first with inlined functions
 * expanded, WEIGHT the summed value[1] (the event's weight), lines sorted.
 * ROOT is the sample's label root_key (e.g. "comm", so that a whole-system
 * graph is rooted by process); samples without it, and every sample when
 * root_key is NULL, start at their outermost frame. ';' and control
 * characters in names become '_'. Written like pprof__write (atomic, no
 * partial file); 0 or -errno. */
int pprof__write_folded(struct pprof *p, const char *path, const char *root_key);

/* Encode and gzip (the same bytes as pprof__write's file) into memory
 * (the HTTP server's answers): *out is malloc'd, *len its size. 0 or
 * -errno (nothing allocated then). */
int pprof__encode_gz(struct pprof *p, uint8_t **out, size_t *len);

/* The group of each of p's label sets (those of its samples, and the
 * empty one), asked of group_of once per set: >= 0 a group, -1 none,
 * < -1 an error (-errno) that stops it. malloc'd, indexed by the sets'
 * own numbers: what pprof_subset_opts and pprof_otlp_opts take as
 * set_group. NULL + errno. */
int *pprof__group_sets(const struct pprof *p,
		       int (*group_of)(void *ctx, const struct pprof_label *l, size_t n), void *ctx);

/* A new profile of some of p's samples (pprof_subset.c): those whose
 * label set is in group `group` of set_group (pprof__group_sets; all if
 * set_group is NULL), from sample *cursor on, at most max_samples of
 * them (0: no bound); *cursor is left at the first sample not looked at,
 * so that a caller can cut a profile into parts a server takes
 * (Pyroscope refuses more than 16,000 samples). Only what those samples
 * use is copied: mappings, locations, functions, strings; times, period
 * and comments as p's. NULL + errno. */
struct pprof_subset_opts {
	const int *set_group;
	int group;
	size_t max_samples;
	const char *value_type; /* the event's sample type; NULL: p's */
	bool weight_only;       /* one sample type, the weight (no samples/count) */
	bool sanitize_names;    /* label keys and the type: [A-Za-z0-9_] only */
	bool drop_numeric;      /* numeric labels (pid, tid) left out */
};
struct pprof *pprof__subset(const struct pprof *p, const struct pprof_subset_opts *o,
			    size_t *cursor);
size_t pprof__nsamples(const struct pprof *p);

/* p as an OTLP profiles export request (opentelemetry-proto v1.11.0,
 * profiles/v1development; pprof_otlp.c), uncompressed, into *out
 * (malloc'd). One ResourceProfiles per group (service.name = groups[g]),
 * each with one scope and one Profile of the samples whose label set
 * set_group puts in it (pprof__group_sets; -1: none; NULL set_group:
 * all in group 0, and groups may be NULL). 0 or -errno. */
struct pprof_otlp_opts {
	const char *const *groups;
	size_t ngroups;
	const int *set_group;
	const char *scope_name, *scope_version;
	const char *value_type;  /* NULL: p's */
	bool sanitize_names;     /* the type: [A-Za-z0-9_] only */
};
int pprof__encode_otlp(const struct pprof *p, const struct pprof_otlp_opts *o, uint8_t **out,
		       size_t *len);

#endif
