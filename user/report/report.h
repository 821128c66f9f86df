/* report.h — a stopped recording's BPF maps to one pprof profile per event.
 *
 * The last stage of a recording, in three steps: drain.c reads the maps
 * into plain entries (entries.h), build.c turns each event's entries into
 * a profile (kernel frames, then user frames, leaf first; labels pid,
 * tid, comm and the thread's label set; lost samples as [lost: ...]
 * samples; every loss in the comments, losses.h), and this file writes
 * each profile atomically, says what it wrote and lost on stderr (the
 * same words as the comments) and prints the --top table on stdout.
 */
#ifndef PMUBPF_REPORT_H
#define PMUBPF_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "config/config.h"
#include "symbols/ksyms.h"
#include "procs/procs.h"
#include "perf/timekeeper.h"
#include "unwind/unwind.h"

struct report_data;
struct pprof;

struct report_in {
	const struct config *cfg;
	bool data;                    /* --data-addr: data profiles too */
	struct procs *procs;
	struct ksyms *ksyms;          /* NULL: kernel frames unsymbolized */
	/* if set, in place of ksyms: the table of the kernel symbols of
	 * addrs (each looked up as given), asked as each profile is built
	 * and freed after it; NULL + errno if it could not be made
	 * (kernel frames unnamed, counted) */
	struct ksyms *(*kname)(void *ctx, const uint64_t *addrs, size_t n);
	void *kname_ctx;
	int64_t time_nanos;           /* wall clock at start */
	int64_t duration_nanos;
	uint64_t enabled[PMUBPF_MAX_EVENTS], running[PMUBPF_MAX_EVENTS];
	/* The kernel's throttle (user/perf/throttle.h): stops, their ns, and
	 * records lost to a full ring, per event; its rate limit now. */
	uint64_t throttles[PMUBPF_MAX_EVENTS], throttled_ns[PMUBPF_MAX_EVENTS],
		 throttles_unseen[PMUBPF_MAX_EVENTS];
	int throttle_unwatched[PMUBPF_MAX_EVENTS]; /* CPUs not watched */
	unsigned long max_sample_rate;
	uint32_t stack_map_size, counts_map_size;
	const struct unwind_stats *unwind; /* --call-graph dwarf, else NULL */
	const struct timekeeper_stats *timer; /* period dither, NULL: none */
	pid_t command_pid;            /* the -- command's process, 0: none */
	int64_t file_stamp;           /* --every: the window's start (wall ns)
	                               * names the files; 0: cfg->output */
	bool quiet;                   /* no summary on stderr, no --top table */
	bool data_profile;            /* report__build: the --data-addr profile
	                               * (report_data's data entries), not the
	                               * code one */
	bool last;                    /* no profile is built after these (a
	                               * one-shot recording's): each source of
	                               * names, the kernel symbols and each
	                               * object's debug info, is given back
	                               * once the last profile's frames in it
	                               * are named (build.c) */
	uint64_t *samples;            /* if set: += each profile's samples */
	/* if set: called every few hundred samples, and after each object's
	 * frames are named, while profiles are built (a windowed recording
	 * drains a window that is due meanwhile) */
	void (*tick)(void *ctx);
	void *tick_ctx;
	/* if set: called with each event's code profile once it is written
	 * (--every's pushes), before it is freed */
	void (*built)(void *ctx, int ev, const struct pprof *p);
	void *built_ctx;
};

/* Where event ev's profile goes: cfg->output with one event; with
 * several, "DIR/NAME.TAG.pb.gz" from "DIR/NAME.pb.gz" (or NAME.TAG;
 * NAME.TAG.folded from NAME.folded for --format folded). */
void report__output_path(const struct config *cfg, int ev, char *buf, size_t len);

/* --every's name for event ev's profile of the window that started at
 * stamp (wall-clock ns): "NAME.TAG.YYYYMMDDTHHMMSSZ.pb.gz" from -o
 * NAME.pb.gz (or NAME), "DIR/pmubpf.TAG.STAMP.pb.gz" from -o DIR/ (or an
 * existing directory). prefix, if not NULL, gets the part before STAMP
 * ("DIR/NAME.TAG."), which every window of the event shares. */
#define REPORT_STAMP_LEN 16 /* YYYYMMDDTHHMMSSZ */
void report__window_path(const struct config *cfg, int ev, int64_t stamp, char *buf, size_t len,
			 char *prefix, size_t prefix_len);

/* --data-addr: where event ev's data profile goes: the code profile's
 * name with ".data" before its suffix (NAME.data.pb.gz, NAME.EVENT.data.pb.gz,
 * NAME.data.folded); for --every's window at stamp (0: none)
 * NAME.EVENT.data.STAMP.pb.gz, so that the prefix "NAME.EVENT.data." keeps
 * the two kinds apart for --keep. */
void report__data_path(const struct config *cfg, int ev, int64_t stamp, char *buf, size_t len);

/* Write every event's profile from drained data d (report__drain, or
 * made up by the unit tests). The summary and the losses go to say
 * (NULL: none), --top tables to top_out. Returns 0, or -errno with a
 * one-line reason in err; profiles already written stay (each is
 * complete). */
int report__write_data(const struct report_in *in, const struct report_data *d,
		       FILE *say, FILE *top_out, char *err, size_t errlen);

#endif
