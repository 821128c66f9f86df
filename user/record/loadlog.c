/* loadlog.c — see loadlog.h. */
#include "loadlog.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#define BEGIN_LOG "-- BEGIN PROG LOAD LOG --"
#define END_LOG   "-- END PROG LOAD LOG --"

void loadlog__reset(struct loadlog *l)
{
	l->prog[0] = l->last[0] = '\0';
}

/* The verifier's summary lines, after its reason: not the reason. */
static bool summary_line(const char *s, size_t n)
{
	static const char *const prefixes[] = { "processed ", "verification time", "stack depth",
						"max_states_per_insn", END_LOG };

	if (!n)
		return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (n >= strlen(prefixes[i]) && !strncmp(s, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* prog 'NAME': ... : NAME into l->prog. */
static void keep_prog(struct loadlog *l, const char *msg)
{
	const char *p = strstr(msg, "prog '"), *q;

	if (!p)
		return;
	p += 6;
	q = strchr(p, '\'');
	if (!q)
		return;
	snprintf(l->prog, sizeof(l->prog), "%.*s", (int)(q - p), p);
}

void loadlog__feed(struct loadlog *l, const char *msg)
{
	const char *log = strstr(msg, BEGIN_LOG), *end, *line, *best = NULL;
	size_t best_n = 0;

	if (!log) {
		if (strstr(msg, "BPF program load failed"))
			keep_prog(l, msg);
		return;
	}
	keep_prog(l, msg);
	log += strlen(BEGIN_LOG);
	end = strstr(log, END_LOG);
	if (!end)
		end = log + strlen(log);
	for (line = log; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);

		while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
			n--;
		if (!summary_line(line, n)) {
			best = line;
			best_n = n;
		}
		line = nl ? nl + 1 : end;
	}
	if (best)
		snprintf(l->last, sizeof(l->last), "%.*s", (int)best_n, best);
}

bool loadlog__refused(const struct loadlog *l)
{
	return l->last[0] != '\0';
}

void loadlog__describe(const struct loadlog *l, char *buf, size_t size)
{
	snprintf(buf, size, "the kernel refused BPF program '%s': %s", l->prog[0] ? l->prog : "?",
		 l->last[0] ? l->last : "no reason given");
}

static struct loadlog process_log;
static int verbosity;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_DEBUG) { /* a refusal's messages are warnings */
		char *msg = NULL;
		va_list aq;

		va_copy(aq, ap);
		if (vasprintf(&msg, fmt, aq) >= 0)
			loadlog__feed(&process_log, msg);
		va_end(aq);
		free(msg);
	}
	if (!verbosity || (level == LIBBPF_DEBUG && verbosity < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void loadlog__install(int v)
{
	verbosity = v;
	libbpf_set_print(print_libbpf);
}

struct loadlog *loadlog__process(void)
{
	return &process_log;
}
