/* live.c — see live.h. */
#include "live.h"
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>
#include "lib/clock.h"
#include "report/build.h"
#include "report/entries.h"
#include "report/report.h"
#include "report/top.h"
#include "record/session.h"

#define PIPE_ROWS 20 /* -n's default when stdout is no terminal */

struct live {
	const struct config *cfg;
	struct session *s;
	bool tty;               /* stdout is a terminal: redraw in place */
	bool keys;              /* stdin is a terminal switched to raw keys */
	struct termios saved;   /* stdin's settings, put back at the end */
	char target[128];       /* what is watched, for the header */
};

/* "pid 42,43", "CPUs 0,1" or "all CPUs", for the header. */
static void describe_target(const struct config *cfg, char *buf, size_t len)
{
	const pid_t *ids = cfg->npids ? cfg->pids : cfg->tids;
	int n = cfg->npids ? cfg->npids : cfg->ntids;
	size_t off;

	if (n) {
		off = (size_t)snprintf(buf, len, "%s", cfg->npids ? "pid " : "tid ");
		for (int i = 0; i < n && off < len; i++)
			off += (size_t)snprintf(buf + off, len - off, "%s%d", i ? "," : "", ids[i]);
	} else if (cfg->cpus_given) {
		off = (size_t)snprintf(buf, len, "CPU%s ", cfg->ncpus > 1 ? "s" : "");
		for (int i = 0; i < cfg->ncpus && off < len; i++)
			off += (size_t)snprintf(buf + off, len - off, "%s%d", i ? "," : "", cfg->cpus[i]);
	} else {
		snprintf(buf, len, "all CPUs");
	}
}

/* Keys one at a time, unechoed; Ctrl-C still signals (ISIG stays), and
 * the session turns that signal into the loop's end, after which
 * keys_off puts the terminal back. */
static void keys_on(struct live *l)
{
	struct termios raw;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &l->saved))
		return;
	raw = l->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	l->keys = !tcsetattr(STDIN_FILENO, TCSANOW, &raw);
}

static void keys_off(struct live *l)
{
	if (l->keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &l->saved);
	l->keys = false;
}

/* Was 'q' typed? Reads whatever is pending, never waits. */
static bool quit_typed(struct live *l)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	char c[64];
	ssize_t n;

	if (!l->keys || poll(&p, 1, 0) <= 0)
		return false;
	n = read(STDIN_FILENO, c, sizeof(c));
	return n > 0 && (memchr(c, 'q', (size_t)n) || memchr(c, 'Q', (size_t)n));
}

/* Rows per table: -n, else what fits the terminal with every event's
 * four lines of header (and, in show_event, its loss lines). */
static int table_rows(const struct live *l)
{
	const struct config *cfg = l->cfg;
	struct winsize ws;
	int rows;

	if (cfg->top)
		return cfg->top;
	if (!l->tty || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_row)
		return PIPE_ROWS;
	rows = (ws.ws_row - 1) / cfg->nevents - 4;
	return rows < 1 ? 1 : rows;
}

/* One event's header and table from the drained window d. */
static int show_event(struct live *l, const struct report_in *in, const struct report_data *d,
		      int ev, const struct session_span *span, int rows)
{
	const struct pmubpf_event *e = &l->cfg->events[ev];
	struct report_built b;
	struct top *t = top__new();
	char err[512];

	if (!t) {
		fprintf(stderr, "pmubpf: out of memory\n");
		return -1;
	}
	if (report__build(in, d, ev, t, &b, err, sizeof(err))) {
		fprintf(stderr, "pmubpf: %s\n", err);
		top__free(t);
		return -1;
	}
	/* On a terminal the loss lines below come out of the table's rows,
	 * so that the header never scrolls off the screen. */
	for (int i = 0; i < b.notes.n && l->tty && !l->cfg->top; i++)
		rows -= b.notes.v[i].on_stderr && rows > 1;
	printf("pmubpf top — %s, %s, window %.1f s, %llu samples, %llu lost\n", e->name,
	       l->target, (double)span->duration / 1e9, (unsigned long long)b.nsamples,
	       (unsigned long long)d->ev[ev].drops[PMUBPF_DROP_COUNTS_FULL].count);
	top__print(t, stdout, e->name, e->value_type, e->value_unit, rows);
	/* Every loss is said: under the table on a terminal (stderr would
	 * scribble over the screen), on stderr otherwise. */
	for (int i = 0; i < b.notes.n; i++)
		if (b.notes.v[i].on_stderr)
			fprintf(l->tty ? stdout : stderr, "pmubpf: %s: %s\n", e->name, b.notes.v[i].text);
	top__free(t);
	pprof__free(b.p);
	return 0;
}

/* Close the window under way and show its tables. */
static int refresh(struct live *l)
{
	struct report_data d;
	struct session_span span;
	struct report_in in;
	int ret = 0, rows = table_rows(l);

	if (report_data__init(&d)) {
		fprintf(stderr, "pmubpf: out of memory\n");
		return -1;
	}
	if (session__drain_window(l->s, &d, &span)) {
		fprintf(stderr, "pmubpf: %s\n", session__error(l->s));
		report_data__free(&d);
		return -1;
	}
	session__report_in(l->s, &span, &in);
	in.quiet = true;
	fputs(l->tty ? "\033[H\033[2J" : "\n", stdout);
	for (int ev = 0; ev < l->cfg->nevents && !ret; ev++)
		ret = show_event(l, &in, &d, ev, &span, rows);
	fflush(stdout);
	report_data__free(&d);
	/* Shown: the processes found dead before this window can go, and
	 * the building's peak heap back to the system (see every.c). */
	session__gc(l->s, span.end, NULL);
	malloc_trim(0);
	return ret;
}

int live__run(const struct config *cfg)
{
	struct live l = { .cfg = cfg, .tty = isatty(STDOUT_FILENO) };
	int64_t step = (int64_t)(cfg->every * 1e9), next;
	enum session_end end;
	int ret = 0, st;

	describe_target(cfg, l.target, sizeof(l.target));
	l.s = session__new(cfg, true);
	if (!l.s) {
		fprintf(stderr, "pmubpf: out of memory\n");
		return 1;
	}
	if (session__open(l.s) || session__build(l.s) || session__start(l.s)) {
		fprintf(stderr, "pmubpf: %s\n", session__error(l.s));
		ret = session__status(l.s);
		goto out;
	}
	keys_on(&l);
	if (l.tty)
		printf("\033[H\033[2Jpmubpf top — %s: first table in %.1f s (q quits)\n",
		       l.target, cfg->every);
	fflush(stdout);
	next = mono_ns() + step;
	while ((end = session__step(l.s)) == SESSION_GOING) {
		int64_t now = mono_ns();

		if (quit_typed(&l)) {
			end = SESSION_GONE;
			break;
		}
		if (now < next)
			continue;
		if (refresh(&l)) {
			ret = 1;
			break;
		}
		/* Late by a busy refresh: the next window keeps its length. */
		next += step;
		if (next <= now)
			next = now + step;
	}
	keys_off(&l);
	if (end == SESSION_ERROR) {
		fprintf(stderr, "pmubpf: %s\n", session__error(l.s));
		ret = 1;
	}
	session__stop(l.s);
	st = session__end(l.s);
	if (!ret)
		ret = st;
out:
	keys_off(&l);
	session__free(l.s);
	return ret;
}
