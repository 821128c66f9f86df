/* session_int.h — what the session's two files share: the session
 * record, and the one-line failure and target helpers (in
 * session_open.c, which calls nothing in session.c). session_open.c holds
 * the phases before sampling (checks, map sizing, loading the BPF object,
 * the pipeline behind the notices); session.c the recording itself
 * (start, steps, windows, stop, finish). Not a public interface:
 * see session.h.
 */
#ifndef PMUBPF_SESSION_INT_H
#define PMUBPF_SESSION_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/clock.h"
#include "perf/timekeeper.h"
#include "session.h"
#include "unwind/unwind.h"
#include "features.h"
#include "loadlog.h"
#include "windows.h"
#include "cgfilter.h"

/* At most this often the window's stacks map's fill is read
 * (session__take_notices). */
#define SESSION_FULL_ASK_NS 50000000LL

struct command {               /* `-- command` */
	pid_t pid;             /* 0: none, or reaped */
	int go_fd, err_fd;     /* held before exec (targets__start_command) */
	int status;            /* waitpid's, once done */
	bool done;
};

struct session {
	const struct config *cfg;
	struct cgfilter cgf;         /* --cgroup, --container: open */
	bool quiet;
	int status;                  /* exit status of a failed phase */
	char err[512];
	int *cpus, ncpus;
	uint32_t stack_entries, count_entries;
	bool dwarf;
	bool uw_files;               /* BPF unwinds a process with no slot
	                              * by its files' tables (FEAT_FILE_TABLES) */
	bool images;                 /* images of processes gone from BPF, not
	                              * the kernel's mmap reports (images.h) */
	bool has_tp;                 /* a tracepoint event: on_tracepoint loaded */
	bool offcpu;                 /* -e off-cpu: on_switch loaded (offcpu.h) */
	struct features feat;        /* what this kernel's BPF can do */
	struct pmubpf_bpf *skel;
	/* the pipeline behind the notices */
	struct symcache *sc;
	struct debuginfo *dbg;
	struct procs *procs;
	struct unwind *uw;
	struct ring_buffer *rb;
	struct mmapwatch *mw;
	int epfd;
	/* the recording */
	struct command cmd;
	struct perfev *pev;
	struct timekeeper *tk;
	struct timekeeper_stats tk_st;
	struct ksymnames *kn;        /* kernel names asked as profiles are
	                              * built; NULL: kallsyms (kload) */
	struct ksyms_loader *kload;
	struct ksyms *ks;            /* joined from kload when first needed */
	int64_t ks_loaded;           /* when (mono ns) */
	int64_t t0_wall, t0, deadline;
	int pending;                 /* procs__tick: work waits (poll short) */
	int64_t notice_recheck;      /* read notices again by then (mono ns; 0:
	                              * none due): sent after a wakeup, BPF's
	                              * next ones wake nobody for a cadence */
	int64_t cadence_ns;          /* the loop's cadence (session_cadence) */
	int64_t cadence_t0;          /* its rate's second began (mono ns) */
	uint64_t cadence_n0;         /* process notices handled by then */
	uint64_t cadence_churn;      /* seconds spent at the churn cadence */
	/* windows (session__windowed): --every, --http, and a one-shot
	 * recording longer than a window, whose windows are drained as they
	 * end (next_drain) into acc, the data its profiles are built from */
	struct windows win;
	double window;               /* seconds (session__window) */
	bool windowed;
	int64_t win_start, win_start_wall;
	bool full;                   /* the window's stacks map is half full:
	                              * drain it now (session__window_full) */
	int64_t full_asked;          /* when the stacks map's fill was last read */
	int64_t next_drain;          /* one-shot: mono ns, 0: never */
	int64_t next_throttle_poll;  /* mono ns of the next perfev__poll */
	struct report_data *acc;     /* one-shot: the windows drained so far */
	int nwindows;                /* one-shot: how many */
	bool stopped;
	int64_t duration;            /* set by session__stop */
	struct unwind_stats uw_st;
};

/* Set s->err to the formatted one-line reason; returns -1. */
int session_fail(struct session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* targets[{id, kind}] = state (a failure is the session's error). */
int session_add_target(struct session *s, uint32_t id, uint32_t kind, uint32_t state);

#endif
